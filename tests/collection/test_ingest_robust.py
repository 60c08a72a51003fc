"""No record can block a source: limits, unstorable values, special files, repeated ids, bulk
mis-parses, read-only and damaged collections (issue 25). Every test here failed before."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.ingest import MOSTLY_SKIPPED_MIN, ingest
from statinterp.collection.store import Collection
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources.cap import to_cap_json, write_cap_volume
from statinterp.sources.courtlistener import read_records
from statinterp.sources.records import (
    MAX_CASE_CHARS,
    MAX_LINE_CHARS,
    CaseRecord,
    OpinionRecord,
    SkippedRecord,
    bounded_lines,
)
from tests.collection.test_ingest import copies
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def cap_line(record: CaseRecord, **changes) -> dict:
    """A legacy bulk (cap-bulk) case object."""
    obj = to_cap_json(record)
    obj["casebody"] = {"status": "ok", "data": obj["casebody"]}
    obj.update(changes)
    return obj


def write_bag(path: Path, lines: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bag/bagit.txt", "BagIt-Version: 0.97\n")
        zf.writestr("bag/data/data.jsonl.xz", lzma.compress(("\n".join(lines) + "\n").encode()))
    return path


def cl_line(cluster, text: str, **extra) -> str:
    return json.dumps({"id": extra.pop("id", 1), "cluster_id": cluster, "type": "020lead", "plain_text": text,
                       "case_name": f"Case {cluster}", **extra})


def stored_ids(col: Path) -> list[str]:
    with Collection.open(col) as c:
        return [r[0] for r in c.db.execute("SELECT source_id FROM cases ORDER BY id")]


# --------------------------------------------------------------------------------------------
# Records that a later step could not store are skipped, the records after them stored


SURROGATE = "\\ud800"  # as written in JSON: a lone surrogate escape
HUGE_NUMBER = "9" * 5000  # more digits than Python converts (and than any id)


def _sources(fmt: str, folder: Path) -> Path:
    """A source of ``fmt`` holding, in order: a good case, four unstorable records, a good case."""
    a, b = copies(2)
    folder.mkdir(exist_ok=True)
    if fmt == "cap":
        vol = write_cap_volume([a], folder / "vol")
        cases = vol / "cases"
        (cases / "0002-01.json").write_text(json.dumps(to_cap_json(a, 2)).replace('"name": "', f'"name": "{SURROGATE}',
                                                                                  1))
        (cases / "0003-01.json").write_text(f'{{"id": {HUGE_NUMBER}, "casebody": {{}}}}')
        (cases / "0004-01.json").write_text(json.dumps(to_cap_json(a, "7" * 300)))
        text = json.dumps(to_cap_json(a, 5))
        (cases / "0005-01.json").write_text(text.replace("This is copy", f"{SURROGATE} This is copy"))
        (cases / "0006-01.json").write_text(json.dumps(to_cap_json(b)))
        return folder
    if fmt == "cap-bulk":
        lines = [json.dumps(cap_line(a)),
                 json.dumps(cap_line(a, id=2)).replace('"name": "', f'"name": "{SURROGATE}', 1),
                 f'{{"id": {HUGE_NUMBER}}}',
                 json.dumps(cap_line(a, id="7" * 300)),
                 json.dumps(cap_line(a, id=5)).replace("This is copy", f"{SURROGATE} This is copy"),
                 json.dumps(cap_line(b))]
        return write_bag(folder / "bag.zip", lines)
    lines = [cl_line(1, "First case text about a vehicle."),
             cl_line(2, "Text").replace('"Text"', f'"{SURROGATE} text"'),
             cl_line(3, "x").replace('"cluster_id": 3', f'"cluster_id": {HUGE_NUMBER}'),
             cl_line("3" * 300, "Long id."),
             cl_line(4, "Ordering key too large.", ordering_key=2 ** 70),
             cl_line(5, "Last case text about a vehicle.")]
    path = folder / "opinions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["cap", "cap-bulk", "courtlistener"])
def test_unstorable_records_are_skipped_and_the_records_after_them_are_stored(tmp_path, capsys, fmt):
    src = _sources(fmt, tmp_path / "src")
    col, errors = tmp_path / "col", tmp_path / "errors.jsonl"
    args = ["ingest", str(src), "--collection", str(col), "-q", "--no-citations", "--errors-out", str(errors)]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "2 added" in out and "4 records skipped" in out, out
    listed = [json.loads(line) for line in errors.read_text(encoding="utf-8").splitlines()]
    assert len(listed) == 4 and all(e["reason"] for e in listed)
    assert any("surrogate" in e["reason"] for e in listed)
    assert any("300 characters long" in e["reason"] for e in listed)
    want = {"cap": ["100000", "100001"], "cap-bulk": ["100000", "100001"], "courtlistener": ["1", "5"]}[fmt]
    assert stored_ids(col) == want
    code, out, err = run_cli(args + ["--force"], capsys)  # the same every time
    assert code == 0 and "2 unchanged" in out and "4 records skipped" in out, (out, err)


def test_an_ordering_key_out_of_range_names_its_field(tmp_path):
    path = _sources("courtlistener", tmp_path)
    skipped = [s for s in read_partition(Partition(str(path), "courtlistener")) if isinstance(s, SkippedRecord)]
    by_field = {s.field: s for s in skipped}
    assert "SQLite's integer range" in by_field["ordering_key"].reason
    assert by_field["ordering_key"].record == "1" and "over the limit of 256" in by_field["cluster_id"].reason


def _huge_case(record: CaseRecord, n_opinions: int, chars: int) -> CaseRecord:
    words = ("The vehicle was parked. " * (chars // 24 + 1))[:chars]
    ops = tuple(OpinionRecord("majority", None, (words,)) for _ in range(n_opinions))
    return dataclasses.replace(record, source_id="999", opinions=ops)


@pytest.mark.slow
def test_a_case_over_the_case_limit_is_skipped_before_its_analysis(tmp_path, capsys):
    a, b = copies(2)
    huge = _huge_case(a, 2, MAX_CASE_CHARS // 2 + 100_000)  # each opinion under the field limit, not the case
    lines = [json.dumps(cap_line(a)), json.dumps(cap_line(huge)), json.dumps(cap_line(b))]
    bag = write_bag(tmp_path / "bag.zip", lines)
    code, out, err = run_cli(["ingest", str(bag), "--collection", str(tmp_path / "col"), "-q", "--no-citations"],
                             capsys)
    assert code == 0, err
    assert "2 added" in out and "field '(case)'" in out and f"limit of {MAX_CASE_CHARS}" in out


@pytest.mark.slow
def test_a_line_over_the_stored_line_limit_is_skipped_and_find_can_segment_long_windows(tmp_path, capsys):
    from statinterp.collection.find import _joining_pipeline

    a, b = copies(2)
    long_line = _huge_case(a, 1, MAX_LINE_CHARS + 200_000)
    bag = write_bag(tmp_path / "bag.zip", [json.dumps(cap_line(x)) for x in (a, long_line, b)])
    code, out, err = run_cli(["ingest", str(bag), "--collection", str(tmp_path / "col"), "-q", "--no-citations"],
                             capsys)
    assert code == 0, err
    assert "2 added" in out and "field 'opinions[0].lines[0]'" in out
    # a window of lines (inside one case) may be as long as a case: find's segmenter accepts it
    assert _joining_pipeline().max_length > MAX_CASE_CHARS


# --------------------------------------------------------------------------------------------
# Bounded reads


class Stream(io.RawIOBase):
    """An endless-looking binary stream (like /dev/zero or a FIFO): ``size`` bytes of ``fill``
    with no line break, then ``tail``; records the largest single read."""

    def __init__(self, size: int, tail: bytes, fill: bytes = b"\0"):
        self.left, self.tail, self.fill, self.largest = size, tail, fill, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = len(buf)
        self.largest = max(self.largest, n)
        if self.left > 0:
            k = min(n, self.left)
            buf[:k] = self.fill * k
            self.left -= k
            return k
        k = min(n, len(self.tail))
        buf[:k] = self.tail[:k]
        self.tail = self.tail[k:]
        return k


def test_bounded_lines_never_hold_more_than_the_limit_of_a_line():
    raw = Stream(5_000_000, b'\n{"ok": 1}\nlast')
    fh = io.BufferedReader(raw, buffer_size=4096)
    tracemalloc.start()
    got = list(bounded_lines(fh, limit=10_000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got == [(1, None), (2, b'{"ok": 1}\n'), (3, b"last")]
    assert peak < 200_000  # the 5 MB line was never held
    assert list(bounded_lines(io.BytesIO(b"x" * 10 + b"\n"), limit=10)) == [(1, b"x" * 10 + b"\n")]
    assert list(bounded_lines(io.BytesIO(b"x" * 11 + b"\n"), limit=10)) == [(1, None)]


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".csv.gz"])
def test_courtlistener_reads_a_huge_compressed_line_in_bounded_pieces(tmp_path, suffix):
    path = tmp_path / f"opinions{suffix}"
    if suffix == ".csv.gz":
        good = b'id,cluster_id,plain_text\n1,7,"A good opinion."\n'
        body = good + b'2,8,"' + b"z" * 3_000_000 + b'"\n3,9,"Another good one."\n'
    else:
        body = b"z" * 3_000_000 + b"\n" + cl_line(7, "A good opinion.").encode() + b"\n"
    path.write_bytes(gzip.compress(body))
    tracemalloc.start()
    rows = list(read_records(path, max_line=100_000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000, peak  # the 3 MB line was never held whole
    problems = [(label, p) for label, row, p in rows if row is None]
    assert len(problems) == 1 and "longer than 100000 bytes" in problems[0][1]
    assert [row["cluster_id"] for _, row, _ in rows if row is not None] == (["7", "9"] if suffix == ".csv.gz"
                                                                            else [7])


def test_a_text_file_is_read_no_further_than_its_limit(tmp_path, monkeypatch):
    from statinterp.sources import plaintext

    monkeypatch.setattr(plaintext, "MAX_TEXT_CHARS", 1000)
    big = tmp_path / "big.txt"
    with open(big, "wb") as fh:
        fh.truncate(20_000_000)  # sparse: no disk used
    tracemalloc.start()
    items = list(plaintext.read_text(big))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert isinstance(items[0], SkippedRecord) and "limit of 1000" in items[0].reason
    assert peak < 1_000_000, peak


# --------------------------------------------------------------------------------------------
# Special files


@pytest.mark.parametrize("fmt", ["courtlistener", "text", "cap"])
def test_a_device_is_refused_before_anything_is_read(tmp_path, capsys, fmt):
    code, _, err = run_cli(["ingest", "/dev/zero", "--format", fmt, "--collection", str(tmp_path / "col")], capsys)
    assert code == 2 and err.count("\n") == 1 and "/dev/zero: is a character device" in err, err
    assert not (tmp_path / "col").exists()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
@pytest.mark.parametrize("name", ["stuck.json", "stuck.txt", "stuck.jsonl"])
def test_a_fifo_among_the_sources_is_refused_without_hanging(tmp_path, name):
    src = tmp_path / "src"
    write_cap_volume(copies(1), src / "vol")
    os.mkfifo(src / name)
    proc = subprocess.run([sys.executable, "-m", "statinterp.app.cli", "ingest", str(src), "--collection",
                           str(tmp_path / "col"), "-q"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and f"{name}: is a FIFO" in proc.stderr
    code = main(["ingest", str(src / name), "--collection", str(tmp_path / "col")])  # named directly: the same
    assert code == 2


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_a_fifo_as_the_data_of_a_bag_folder_is_refused_without_hanging(tmp_path):
    bag = tmp_path / "bag"
    (bag / "data").mkdir(parents=True)
    (bag / "bagit.txt").write_text("BagIt-Version: 0.97\n")
    os.mkfifo(bag / "data" / "data.jsonl")
    proc = subprocess.run([sys.executable, "-m", "statinterp.app.cli", "ingest", str(bag), "--collection",
                           str(tmp_path / "col"), "-q"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2 and "data.jsonl: is a FIFO" in proc.stderr, proc.stderr


# --------------------------------------------------------------------------------------------
# Repeated ids, bulk mis-parses


def test_a_repeated_id_keeps_the_last_record_every_run(tmp_path, capsys):
    a, b = copies(2)
    first = cap_line(a)
    last = cap_line(a)
    last["casebody"]["data"]["opinions"][0]["text"] += "\nA later version of the case."
    bag = write_bag(tmp_path / "bag.zip", [json.dumps(first), json.dumps(cap_line(b)), json.dumps(last)])
    args = ["ingest", str(bag), "--collection", str(tmp_path / "col"), "-q", "--no-citations"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "2 added" in out and "0 replaced" in out and "occurs again later" in out, out
    for _ in range(2):
        code, out, _ = run_cli(args, capsys)
        assert code == 0 and "0 replaced, 2 unchanged" in out, out
    with Collection.open(tmp_path / "col") as c:
        stored = next(r for r in map(c.record, c.case_ids()) if r.source_id == a.source_id)
    assert "A later version of the case." in stored.opinions[0].paragraphs


def test_a_mostly_skipped_file_ends_with_exit_2_and_allow_skips_accepts_it(tmp_path, capsys):
    a = copies(1)[0]
    bag = write_bag(tmp_path / "bag.zip", [json.dumps(cap_line(a))] + ["{not json"] * MOSTLY_SKIPPED_MIN)
    args = ["ingest", str(bag), "--collection", str(tmp_path / "col"), "-q", "--no-citations"]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{bag}: {MOSTLY_SKIPPED_MIN} of its {MOSTLY_SKIPPED_MIN + 1} records were skipped" in err
    assert "1 added" in out  # the summary is shown, and what was read stays stored
    assert stored_ids(tmp_path / "col") == [a.source_id]
    code, out, err = run_cli(args + ["--allow-skips", "--format-summary", "json"], capsys)
    assert code == 0 and json.loads(out)["mostly_skipped"][0]["skipped"] == MOSTLY_SKIPPED_MIN, err
    few = write_bag(tmp_path / "few.zip", [json.dumps(cap_line(a))] + ["{not json"] * (MOSTLY_SKIPPED_MIN - 1))
    code, _, err = run_cli(["ingest", str(few), "--collection", str(tmp_path / "col"), "-q"], capsys)
    assert code == 0, err  # fewer than the minimum: listed, not an error


def test_cap_volumes_metadata_is_not_a_record(tmp_path):
    top = tmp_path / "static"
    write_cap_volume(copies(1), top / "reporter" / "1")
    for folder in (top, top / "reporter"):
        (folder / "VolumesMetadata.json").write_text('[{"volume_number": "1"}]')
    items = [i for p in discover([top]) for i in read_partition(p)]
    assert [type(i) for i in items] == [CaseRecord]


# --------------------------------------------------------------------------------------------
# --errors-out, find's term


def test_errors_out_is_checked_before_the_ingest_and_follows_force(tmp_path, capsys):
    src = write_cap_volume(copies(1), tmp_path / "vol")
    errors = tmp_path / "errors.jsonl"
    errors.write_text("keep me\n")
    col = tmp_path / "col"
    code, _, err = run_cli(["ingest", str(src), "--collection", str(col), "--errors-out", str(errors)], capsys)
    assert code == 2 and "already exists" in err and not col.exists()
    assert errors.read_text() == "keep me\n"
    code, _, err = run_cli(["ingest", str(src), "--collection", str(col), "--errors-out",
                            str(tmp_path / "vol" / "CasesMetadata.json" / "e.jsonl")], capsys)
    assert code == 2 and "is a file, not a folder" in err and not col.exists()
    code, _, err = run_cli(["ingest", str(src), "--collection", str(col), "-q", "--no-citations", "--errors-out",
                            str(errors), "--force"], capsys)
    assert code == 0 and errors.read_text() == "", err


@pytest.mark.parametrize("term", ["*", "§ ?", "'\""])
def test_a_term_without_letters_or_digits_is_a_usage_error(tmp_path, capsys, term):
    col = tmp_path / "col"
    ingest([write_cap_volume(copies(1), tmp_path / "vol")], col, citations=False, statistics=False)
    code, _, err = run_cli(["find", "--collection", str(col), "--out", str(tmp_path / "x.zip"), "--", term], capsys)
    assert code == 2 and "no letter or digit" in err, err
    code, _, err = run_cli(["rank", "--collection", str(col), "--", term], capsys)
    assert code == 2 and "no letter or digit" in err, err


# --------------------------------------------------------------------------------------------
# Read-only and damaged collections


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.slow
def test_a_collection_on_a_read_only_mount_is_read(tmp_path, capsys):
    """Tests run as root, for whom file permissions stop nothing: the collection is bind-mounted
    read-only in a user and mount namespace (``unshare -rm``), where even root cannot write."""
    if not _unshare_works():
        pytest.skip("unshare -rm (user and mount namespaces) is not available: cannot make a read-only mount")
    col = tmp_path / "col"
    ingest([write_cap_volume(copies(3), tmp_path / "vol")], col, citations=False)
    assert sorted(p.name for p in col.iterdir()) == ["collection.sqlite"]  # clean: no -wal, no -shm
    python = f"{sys.executable} -m statinterp.app.cli"
    script = (f"mount --bind {col} {col} && mount -o remount,ro,bind {col} {col} && "
              f"! touch {col}/probe 2>/dev/null && "  # really read-only, for root too
              f"{python} collection info {col} --format json && "
              f"{python} find vehicle --collection {col} --out {tmp_path}/vehicle.zip && "
              f"! {python} ingest {tmp_path}/vol --collection {tmp_path}/col2 -q --errors-out {col}/e.jsonl")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[:proc.stdout.rindex("}") + 1])["cases"] == 3
    assert (tmp_path / "vehicle.zip").exists()
    assert f"cannot write {col}/e.jsonl: {col} is not writable" in proc.stderr  # before the ingest:
    assert not (tmp_path / "col2").exists()
    # a write-ahead log beside it (writes not merged): reading it immutable would miss them, so it says so
    (col / "collection.sqlite-wal").write_bytes(b"\0" * 4096)
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind {col} {col} && mount -o remount,ro,bind "
                           f"{col} {col} && {python} collection info {col}"], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert proc.returncode == 2 and "writes not yet merged" in proc.stderr, proc.stderr


def _damage(col: Path, table: str) -> None:
    """Overwrite the root page of ``table`` with garbage."""
    db = sqlite3.connect(col / "collection.sqlite")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    db.close()
    with open(col / "collection.sqlite", "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xa5" * page_size)


@pytest.mark.parametrize("table", ["paragraphs", "paragraphs_fts_data"])
@pytest.mark.slow
def test_a_damaged_collection_is_one_line_and_exit_2(tmp_path, capsys, table):
    col = tmp_path / "col"
    src = write_cap_volume(copies(40), tmp_path / "vol")
    ingest([src], col, citations=False)
    _damage(col, table)
    commands = [["collection", "info", str(col)],
                ["find", "vehicle", "--collection", str(col), "--out", str(tmp_path / "v.zip")],
                ["rank", "vehicle", "--collection", str(col)],
                ["ingest", str(src), "--collection", str(col), "-q", "--no-citations"]]
    for args in commands:
        code, _, err = run_cli(args, capsys)
        assert code == 2 and err.count("\n") == 1, (args, err)
        assert "collection.sqlite: is damaged" in err or "not a usable collection database" in err, (args, err)


# --------------------------------------------------------------------------------------------
# Dask


@pytest.mark.slow
def test_a_dask_task_failure_is_one_line(tmp_path):
    bag = tmp_path / "bag.zip"
    with zipfile.ZipFile(bag, "w") as zf:
        zf.writestr("bag/bagit.txt", "BagIt-Version: 0.97\n")
        zf.writestr("bag/data/data.jsonl.xz", b"\xfd7zXZ\x00\x00 not xz data")
    proc = subprocess.run([sys.executable, "-m", "statinterp.app.cli", "ingest", str(bag), "--collection",
                           str(tmp_path / "col"), "-q", "--engine", "dask", "--workers", "1"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot be decompressed" in proc.stderr, proc.stderr


def test_source_names_that_are_not_utf8_are_stored_escaped(tmp_path, capsys):
    folder = os.fsencode(tmp_path) + b"/caf\xe9"
    os.makedirs(folder)
    text = "Smith v. Jones\n\nThe vehicle was parked.\n"
    for name in (b"/good.txt", b"/b\xe9d.txt"):
        with open(folder + name, "w") as fh:
            fh.write(text)
    code, out, err = run_cli(["ingest", str(tmp_path), "--collection", str(tmp_path / "col"), "-q",
                              "--no-citations"], capsys)
    assert code == 0 and "1 added" in out and "field 'id': contains a lone surrogate" in out, (out, err)
    assert "caf\\xe9: record" in out  # the bad byte, escaped as in the store
    with Collection.open(tmp_path / "col") as c:
        assert c.info()["sources"][0]["path"].endswith("caf\\xe9")
