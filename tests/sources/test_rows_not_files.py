"""One bad row costs that row, never its file; a join that fails says so; memory does not grow
with bad input (issue 35). Every test here failed before its fix."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from statinterp.collection.ingest import MAX_SKIPPED_KEPT, ingest
from statinterp.collection.store import Collection
from statinterp.corpus.dataset import load_corpus
from statinterp.errors import MAX_JSON_VALUES, InputError
from statinterp.sources import discover, read_partition
from statinterp.sources.courtlistener import read_records, write_bulk_csv
from statinterp.sources.records import CaseRecord, SkippedRecord
from tests.support.cli import run_main

OPINION_COLUMNS = ["id", "cluster_id", "type", "plain_text"]
CLUSTER_COLUMNS = ["id", "case_name", "date_filed", "docket_id"]


def _opinions(clusters: range) -> list[dict]:
    return [{"id": c * 10, "cluster_id": c, "type": "020lead",
             "plain_text": f"The text of cluster {c}. A vehicle is not a bicycle."} for c in clusters]


def _read(path: Path) -> tuple[list[CaseRecord], list[SkippedRecord]]:
    items = [i for p in discover([path]) for i in read_partition(p)]
    return [i for i in items if isinstance(i, CaseRecord)], [i for i in items if isinstance(i, SkippedRecord)]


def test_a_bad_byte_costs_its_row_named_with_its_offset_not_the_file(tmp_path):
    """Before: "cannot be read ('utf-8' codec can't decode byte 0xff ...)" and 0 cases."""
    path = tmp_path / "opinions-2026-01-01.csv"
    write_bulk_csv(path, OPINION_COLUMNS, _opinions(range(501, 505)))
    raw = path.read_bytes()
    at = raw.index(b"cluster 502")
    path.write_bytes(raw[:at] + b"\xff" + raw[at + 1:])
    cases, skipped = _read(path)
    assert [c.source_id for c in cases] == ["501", "503", "504"]
    assert [(s.record, s.reason) for s in skipped] == [("row 2", f"not UTF-8 text (bad byte at offset {at})")]


def test_a_bad_byte_in_a_compressed_file_costs_its_row(tmp_path):
    path = tmp_path / "opinions-2026-01-01.csv.gz"
    plain = tmp_path / "plain.csv"
    write_bulk_csv(plain, OPINION_COLUMNS, _opinions(range(501, 504)))
    raw = plain.read_bytes()
    at = raw.index(b"cluster 503")
    path.write_bytes(gzip.compress(raw[:at] + b"\xc3(" + raw[at + 2:]))
    cases, skipped = _read(path)
    assert [c.source_id for c in cases] == ["501", "502"]
    assert skipped[0].record == "row 3" and f"bad byte at offset {at} of the decompressed file" in skipped[0].reason


def test_an_unbalanced_quote_skips_its_row_and_the_next_row_is_read(tmp_path):
    """Before: cluster 502 was stored with the text of 503, 503 was lost and nothing was skipped."""
    path = tmp_path / "opinions-2026-01-01.csv"
    write_bulk_csv(path, ["id", "cluster_id", "plain_text", "type"], _opinions(range(501, 505)))
    raw = path.read_bytes()
    # a value ending in an escaped quote: its closing quote is taken as text, the quote stays open
    path.write_bytes(raw.replace(b'cluster 502. A vehicle is not a bicycle."', b'cluster 502. A vehicle \\"', 1))
    cases, skipped = _read(path)
    by_id = {c.source_id: c for c in cases}
    assert sorted(by_id) == ["501", "503", "504"]
    assert "cluster 503" in by_id["503"].text and "cluster 502" not in by_id["503"].text
    assert len(skipped) == 1 and skipped[0].record == "row 2"
    assert "fields, the header 4" in skipped[0].reason and "the row at byte" in skipped[0].reason


def test_a_quote_left_open_in_the_last_column_costs_its_row_only(tmp_path):
    path = tmp_path / "opinions-2026-01-01.csv"
    write_bulk_csv(path, OPINION_COLUMNS, _opinions(range(501, 505)))  # the text is the last column
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b'cluster 502. A vehicle is not a bicycle."', b'cluster 502 \\"', 1))
    cases, skipped = _read(path)
    assert [c.source_id for c in cases] == ["501", "503", "504"]
    assert "cluster 502" not in cases[1].text
    assert [s.record for s in skipped] == ["row 2"]


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_is_accepted_at_the_head_of_every_file(tmp_path):
    """Before: a BOM at the head of the clusters file made the join fail silently (no names)."""
    folder = tmp_path / "bulk"
    folder.mkdir()
    write_bulk_csv(folder / "opinions-2026-01-01.csv", OPINION_COLUMNS, _opinions(range(1, 4)))
    write_bulk_csv(folder / "opinion-clusters-2026-01-01.csv", CLUSTER_COLUMNS,
                   [{"id": c, "case_name": f"Case {c}", "date_filed": "2020-01-01"} for c in range(1, 4)])
    for f in folder.iterdir():
        f.write_bytes(BOM + f.read_bytes())
    cases, skipped = _read(folder)
    assert skipped == [] and [c.name for c in cases] == ["Case 1", "Case 2", "Case 3"]
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(BOM + b"\n".join(json.dumps({**o, "case_name": "L"}).encode() for o in _opinions(range(7, 9))))
    cases, skipped = _read(lines)
    assert skipped == [] and [c.source_id for c in cases] == ["7", "8"]
    one = tmp_path / "one.json"
    one.write_bytes(BOM + json.dumps({**_opinions(range(9, 10))[0], "resource_uri": "/x/"}).encode())
    assert [c.source_id for c in _read(one)[0]] == ["9"]
    text = tmp_path / "case.txt"
    text.write_bytes(BOM + b"Smith v. Jones\n\nA vehicle is not a bicycle.\n")
    assert _read(text)[0][0].name == "Smith v. Jones"


def _bulk(folder: Path, clusters: range, known: range) -> Path:
    folder.mkdir()
    write_bulk_csv(folder / "opinions-2026-01-01.csv", OPINION_COLUMNS, _opinions(clusters))
    write_bulk_csv(folder / "opinion-clusters-2026-01-01.csv", CLUSTER_COLUMNS,
                   [{"id": c, "case_name": f"Case {c}", "date_filed": "2020-01-01"} for c in known])
    return folder


@pytest.mark.slow
def test_a_join_that_leaves_cases_without_their_cluster_exits_2_naming_the_companion(tmp_path, capsys):
    """Before: 40 cases stored without name or date, exit 0, nothing said."""
    folder = _bulk(tmp_path / "bulk", range(1, 41), range(1000, 1040))  # the clusters of another export
    code, out, err = run_main(capsys, "ingest", str(folder), "--collection", str(tmp_path / "c"), "-q",
                              "--no-citations")
    line = err.splitlines()[-1]  # after the reading progress lines
    assert code == 2 and line.startswith("statinterp: error: ") and "Traceback" not in err
    assert "opinion-clusters-2026-01-01.csv: 40 of the 40 cases" in line and "--allow-skips" in line
    assert Collection.open(tmp_path / "c").info()["cases"] == 40  # stored, as with mostly-skipped files
    code, out, err = run_main(capsys, "ingest", str(folder), "--collection", str(tmp_path / "c2"), "-q",
                              "--no-citations", "--allow-skips")
    assert code == 0 and "unjoined: 40 of the 40 cases" in out


def test_a_few_cases_without_their_cluster_pass(tmp_path):
    folder = _bulk(tmp_path / "bulk", range(1, 41), range(1, 39))  # 2 of 40 not in the clusters file
    summary = ingest([folder], tmp_path / "c", citations=False, statistics=False)
    assert summary.broken_joins == []
    assert [(u["missing"], u["cases"]) for u in summary.as_dict()["unjoined"]] == [(2, 40)]


# --------------------------------------------------------------------------------------------
# Memory bounded by design


def test_skipped_records_are_counted_and_streamed_not_kept(tmp_path, capsys):
    """Before: every skipped record was kept (~430 B each): 8 M bad lines took 3.6 GB."""
    n = MAX_SKIPPED_KEPT + 2500
    path = tmp_path / "opinions.jsonl.gz"
    path.write_bytes(gzip.compress(b"not json\n" * n))
    summary = ingest([path], tmp_path / "c", citations=False, statistics=False)
    assert summary.skipped_count == n and len(summary.skipped) == MAX_SKIPPED_KEPT
    assert summary.as_dict()["skipped"] == n
    errors = tmp_path / "errors.jsonl"
    code, out, err = run_main(capsys, "ingest", str(path), "--collection", str(tmp_path / "c2"), "-q",
                              "--no-citations", "--errors-out", str(errors), "--allow-skips")
    assert code == 0, err
    lines = errors.read_text(encoding="utf-8").splitlines()
    assert len(lines) == n and json.loads(lines[-1])["record"] == f"line {n}"
    assert f"and {n - 20} more (all in {errors})" in out


def _empty_objects(n: int) -> bytes:
    return b"[" + b"{}," * (n - 1) + b"{}]"


def test_a_json_of_too_many_values_is_refused_before_it_is_parsed(tmp_path):
    """Before: a 240 MB JSON of empty objects took over 4 GB. Here just over the bound (12 MB)."""
    path = tmp_path / "many.json"
    path.write_bytes(_empty_objects(MAX_JSON_VALUES // 2 + 1))
    cases, skipped = _read(path)  # sniffed as a CAP case file: one skipped record
    assert cases == [] and len(skipped) == 1 and "more than 4,000,000 JSON values" in skipped[0].reason
    rows = list(read_records(path))  # CourtListener's reader too
    assert [r[2] for r in rows if r[1] is None][0].startswith("holds more than")
    line = tmp_path / "many.jsonl"
    line.write_bytes(_empty_objects(MAX_JSON_VALUES // 2 + 1) + b"\n")
    assert "more than" in (list(read_records(line))[0][2] or "")


def test_a_term_zip_of_too_many_records_is_one_line_not_a_memory_error(tmp_path):
    """Before: a sentence file of 15 M empty records ended rank and evaluate in MemoryError."""
    path = tmp_path / "vehicle.zip"
    n = MAX_JSON_VALUES // 2 + 1
    sentences = b"{" + b",".join(b'"%d":{}' % i for i in range(n)) + b"}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for kind in ("case", "opinion", "paragraph"):
            zf.writestr(f"vehicle-{kind}.json", "{}")
        zf.writestr("vehicle-sentence.json", sentences)
    with pytest.raises(InputError, match="vehicle-sentence.json: holds more than 4,000,000 JSON values"):
        load_corpus(path)


_UNDER_2GB = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from statinterp.app.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.slow
def test_the_issues_inputs_run_under_2_gb(tmp_path):
    """The issue's inputs at their sizes, each in a process limited to 2 GB of address space: an
    8 M-line .jsonl.gz of bad lines, a 240 MB JSON of empty objects, a term zip whose sentence
    file holds 15 M empty records: skips or one-line errors, never a MemoryError."""
    bad = tmp_path / "opinions.jsonl.gz"
    with gzip.open(bad, "wb", compresslevel=9) as fh:
        for _ in range(80):
            fh.write(b"x\n" * 100_000)
    empty = tmp_path / "empty" / "cases.json"
    empty.parent.mkdir()
    with open(empty, "wb") as fh:
        fh.write(b"[")
        for _ in range(80):
            fh.write(b"{}," * 1_000_000)
        fh.write(b"{}]")
    assert 230e6 < empty.stat().st_size < 256 * 2**20
    term = tmp_path / "vehicle.zip"
    with zipfile.ZipFile(term, "w", zipfile.ZIP_DEFLATED) as zf:
        for kind in ("case", "opinion", "paragraph"):
            zf.writestr(f"vehicle-{kind}.json", "{}")
        with zf.open("vehicle-sentence.json", "w", force_zip64=True) as fh:
            fh.write(b"{")
            for k in range(15):
                fh.write(b",".join(b'"%d":{}' % i for i in range(k * 1_000_000, (k + 1) * 1_000_000)))
                fh.write(b"," if k < 14 else b"}")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _UNDER_2GB, *args], capture_output=True, text=True,
                              timeout=1800, cwd=tmp_path)

    done = run("ingest", str(bad), "--collection", str(tmp_path / "c1"), "-q", "--no-citations",
               "--errors-out", str(tmp_path / "errors.jsonl"))
    assert done.returncode == 2 and "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert "8000000 of its 8000000 records were skipped" in done.stderr
    done = run("ingest", str(empty.parent), "--collection", str(tmp_path / "c2"), "-q", "--no-citations")
    assert "MemoryError" not in done.stderr and "more than 4,000,000 JSON values" in done.stdout, done.stderr[-2000:]
    done = run("rank", "vehicle", "--data", str(term), "-q", "--no-cache")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "vehicle-sentence.json: holds more than 4,000,000 JSON values" in done.stderr


def test_a_courts_file_of_another_export_is_named_too(tmp_path):
    folder = _bulk(tmp_path / "bulk", range(1, 21), range(1, 21))
    write_bulk_csv(folder / "opinion-clusters-2026-01-01.csv", CLUSTER_COLUMNS,
                   [{"id": c, "case_name": f"Case {c}", "date_filed": "2020-01-01", "docket_id": 100 + c}
                    for c in range(1, 21)])
    write_bulk_csv(folder / "dockets-2026-01-01.csv", ["id", "court_id", "docket_number"],
                   [{"id": 100 + c, "court_id": "mar", "docket_number": f"No. {c}"} for c in range(1, 21)])
    write_bulk_csv(folder / "courts-2026-01-01.csv", ["id", "full_name"], [{"id": "other", "full_name": "Other"}])
    summary = ingest([folder], tmp_path / "c", citations=False, statistics=False)
    assert [(Path(c).name, k, m, n) for _, c, k, m, n in summary.broken_joins] == [
        ("courts-2026-01-01.csv", "courts", 20, 20)]
