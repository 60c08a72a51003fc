"""Sources, the collection store, `statinterp ingest` and `statinterp collection info`."""

from __future__ import annotations

import dataclasses
import json
import lzma
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from statinterp.app.cli import main
from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection, canonical_dump
from statinterp.corpus.dataset import load_corpus
from statinterp.errors import InputError
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources.cap import to_cap_json, write_cap_volume
from statinterp.sources.cleaning import clean_markup, clean_opinion
from statinterp.sources.records import CaseRecord, SkippedRecord
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
EXAMPLE = REPO / "data" / "example"
SOURCES = EXAMPLE / "sources"


def example_records() -> list[CaseRecord]:
    """The seven invented vehicle cases, read back from the data-set files."""
    return [r for r in read_partition(Partition(str(EXAMPLE), "dataset")) if isinstance(r, CaseRecord)]


def cleaned(record: CaseRecord) -> CaseRecord:
    """A data-set record as a CAP reader gives it: every opinion through the cleaning step."""
    return dataclasses.replace(record, opinions=tuple(clean_opinion(o.paragraphs, kind=o.type, author=o.author)
                                                      for o in record.opinions))


def copies(n: int) -> list[CaseRecord]:
    """``n`` distinct cases made from the example cases (new ids, one sentence added to each)."""
    base = example_records()
    out = []
    for i in range(n):
        r = base[i % len(base)]
        ops = list(r.opinions)
        ops[0] = dataclasses.replace(ops[0], paragraphs=ops[0].paragraphs + (f"This is copy number {i}.",))
        out.append(dataclasses.replace(r, source_id=str(100000 + i), opinions=tuple(ops)))
    return out


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# Sources


def test_example_sources_hold_every_format_and_reproduce_the_vehicle_cases():
    parts = discover([SOURCES])
    assert sorted({p.format for p in parts}) == ["cap", "cap-bulk", "courtlistener", "text"]
    want = {r.name_abbreviation: r for r in example_records()}
    seen = {}
    for p in parts:
        for rec in read_partition(p):
            assert isinstance(rec, CaseRecord), rec
            seen[(p.format, rec.name_abbreviation or rec.name)] = rec
    cap = {k[1]: r for k, r in seen.items() if k[0] in ("cap", "cap-bulk")}
    assert len(cap) == 6
    for name, rec in cap.items():  # CAP layouts give back the data set's case text, cleaned
        assert rec.head_matter == want[name].head_matter
        assert [o.lines for o in rec.opinions] == [clean_opinion(o.paragraphs, kind=o.type, author=o.author).lines
                                                   for o in want[name].opinions]
        assert not re.search(r"^(\*\d+|\d)$", rec.text, re.M)  # no page label or footnote mark of its own
    labelled = [o for r in cap.values() for o in r.opinions if o.page_starts]  # the "*345" lines became page starts
    assert len(labelled) >= 6 and all(o.lines[i][off:].split()[0] for o in labelled
                                      for i, starts in enumerate(o.page_starts) for off, _ in starts)
    cl = [r for k, r in seen.items() if k[0] == "courtlistener"]
    assert len(cl) == 1 and cl[0].source_id == "9007"
    # HTML paragraphs: the same paragraphs (whitespace collapsed) as the original opinion lines
    original = next(r for r in example_records() if r.name_abbreviation == cl[0].name)
    assert [o.lines for o in cl[0].opinions] == [
        clean_opinion(o.paragraphs, kind=o.type, author=o.author).lines for o in original.opinions]
    texts = [r for k, r in seen.items() if k[0] == "text"]
    assert len(texts) == 2 and all("vehicle" in r.text for r in texts)


def test_format_option_takes_only_that_format_and_unknown_files_are_refused(tmp_path):
    assert [p.format for p in discover([SOURCES], "text")] == ["text"]
    assert {p.format for p in discover([SOURCES], "cap")} == {"cap"} and len(discover([SOURCES], "cap")) == 2
    with pytest.raises(InputError, match="holds no dataset case files"):
        discover([SOURCES], "dataset")
    odd = tmp_path / "notes.md"
    odd.write_text("hello")
    with pytest.raises(InputError, match="give --format"):
        discover([odd])


def test_content_hash_changes_with_any_field():
    r = example_records()[0]
    assert r.content_hash == dataclasses.replace(r).content_hash
    assert r.content_hash != dataclasses.replace(r, name=r.name + " ").content_hash
    ops = (dataclasses.replace(r.opinions[0], author="X"),) + r.opinions[1:]
    assert r.content_hash != dataclasses.replace(r, opinions=ops).content_hash


def test_markup_becomes_paragraphs_at_block_elements():
    html = ("<div><p>First <i>para</i>\n graph.</p><blockquote>Quoted <b>text</b>.</blockquote>"
            "loose tail<pre>one\n\ntwo</pre><!-- note --></div>")
    assert clean_markup(html).paragraphs == ("First para graph.", "Quoted text.", "loose tail", "one", "two")


def test_courtlistener_csv_groups_opinions_by_cluster(tmp_path):
    import csv

    path = tmp_path / "opinions.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["id", "cluster_id", "type", "author_str", "plain_text", "html"])
        w.writeheader()
        rows = [(1, 7, "020lead", "A", "Line one.\n\nA vehicle here.", ""),
                (2, 8, "010combined", "", "", "<p>Other.</p>"),
                (3, 7, "040dissent", "B", "", "<p>I dissent.</p>"), (4, "", "010combined", "", "orphan", "")]
        for row in rows:
            w.writerow(dict(zip(["id", "cluster_id", "type", "author_str", "plain_text", "html"], row, strict=True)))
    items = list(read_partition(Partition(str(path), "courtlistener")))
    cases = [i for i in items if isinstance(i, CaseRecord)]
    skipped = [i for i in items if isinstance(i, SkippedRecord)]
    assert [c.source_id for c in cases] == ["7", "8"]
    assert [(o.type, o.author, o.paragraphs) for o in cases[0].opinions] == [
        ("majority", "A", ("Line one.", "A vehicle here.")), ("dissent", "B", ("I dissent.",))]
    assert [(s.record, s.field) for s in skipped] == [("4", "cluster_id")]


def test_cap_bag_zip_and_bad_records_are_skipped_and_listed(tmp_path):
    good = copies(3)
    objs = []
    for r in good:
        obj = to_cap_json(r)
        obj["casebody"] = {"status": "ok", "data": obj["casebody"]}
        objs.append(json.dumps(obj))
    bad_status = json.loads(objs[0])
    bad_status["id"] = 1
    bad_status["casebody"]["status"] = "error"
    no_text = json.loads(objs[0])
    no_text["id"] = 2
    no_text["casebody"]["data"]["opinions"] = [{"type": "majority", "text": 5}]
    lines = [objs[0], "{not json", json.dumps(bad_status), objs[1], json.dumps(no_text), "[1, 2]", objs[2]]
    raw = lzma.compress(("\n".join(lines) + "\n").encode())
    bag = tmp_path / "bag.zip"
    with zipfile.ZipFile(bag, "w") as zf:
        zf.writestr("bag/bagit.txt", "BagIt-Version: 0.97\n")
        zf.writestr("bag/data/data.jsonl.xz", raw)
    assert discover([bag]) == [Partition(str(bag), "cap-bulk")]
    items = list(read_partition(discover([bag])[0]))
    assert [i.source_id for i in items if isinstance(i, CaseRecord)] == [r.source_id for r in good]
    skipped = [(s.record, s.field) for s in items if isinstance(s, SkippedRecord)]
    assert skipped == [("line 2", "(record)"), ("1", "casebody.status"), ("2", "casebody.data.opinions[0].text"),
                       ("line 6", "(record)")]
    assert all(str(bag) in s.file for s in items if isinstance(s, SkippedRecord))


def test_ingest_skips_bad_records_reports_them_and_keeps_the_good_ones(tmp_path, capsys):
    vol = write_cap_volume(copies(2), tmp_path / "src" / "vol1")
    (vol / "cases" / "0003-01.json").write_text('{"id": 5, "casebody": {"opinions": "none"}}')
    (vol / "cases" / "0004-01.json").write_bytes(b"\xff\xfe broken")
    errors = tmp_path / "errors.jsonl"
    code, out, err = run_cli(["ingest", str(tmp_path / "src"), "--collection", str(tmp_path / "col"), "-q",
                              "--errors-out", str(errors), "--no-citations"], capsys)
    assert code == 0, err
    assert "2 added" in out and "2 records skipped" in out
    assert "record '5': field 'casebody.opinions': expected an array" in out
    listed = [json.loads(line) for line in errors.read_text().splitlines()]
    assert [(e["record"], e["field"]) for e in listed] == [("5", "casebody.opinions"), ("0004-01", "(record)")]
    assert all(e["file"].endswith(".json") and e["reason"] for e in listed)
    with Collection.open(tmp_path / "col") as c:
        assert len(c.case_ids()) == 2


def test_unreadable_source_stops_with_one_line_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "vol.zip"
    bad.write_bytes(b"PK\x03\x04 this is not a zip")
    code, _out, err = run_cli(["ingest", str(bad), "--collection", str(tmp_path / "col")], capsys)
    assert code == 2
    assert err.strip().count("\n") == 0 and str(bad) in err and "not a readable zip" in err
    assert not (tmp_path / "col").exists()
    code, _, err = run_cli(["ingest", str(tmp_path / "missing"), "--collection", str(tmp_path / "col")], capsys)
    assert code == 2 and "does not exist" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(["ingest", str(tmp_path / "empty"), "--collection", str(tmp_path / "col")], capsys)
    assert code == 2 and "holds no case files" in err
    code, _, err = run_cli(["collection", "info", str(tmp_path)], capsys)
    assert code == 2 and "is not a statinterp collection" in err


@pytest.mark.slow
def test_a_source_that_breaks_mid_ingest_stops_cleanly_and_a_rerun_completes(tmp_path, capsys):
    import gzip

    write_cap_volume(copies(3), tmp_path / "src" / "a-vol")
    good = (SOURCES / "courtlistener" / "opinions.jsonl").read_bytes()
    broken = tmp_path / "src" / "b-opinions.jsonl.gz"
    broken.write_bytes(gzip.compress(good)[:-40])  # truncated: readable at first, then fails
    col = tmp_path / "col"
    code, out, err = run_cli(["ingest", str(tmp_path / "src"), "--collection", str(col), "-q", "--no-citations"],
                             capsys)
    assert code == 2 and err.count("\n") == 1 and str(broken) in err, err
    with Collection.open(col) as c:  # the volume read before is stored whole, with its statistics
        assert len(c.case_ids()) == 3 and _invariants_hold(c.db)
    broken.write_bytes(gzip.compress(good))
    code, out, err = run_cli(["ingest", str(tmp_path / "src"), "--collection", str(col), "-q", "--no-citations"],
                             capsys)
    assert code == 0 and "1 added" in out and "3 unchanged" in out, (out, err)


# --------------------------------------------------------------------------------------------
# The collection


def test_statistics_equal_the_background_statistics_of_a_prepared_corpus(tmp_path):
    """The collection's statistics of the example cases equal those the ranking code computes
    over the same cases (index/term_index.py: every unit of each level of all loaded cases)."""
    from statinterp.index.term_index import prepare
    from statinterp.text.analysis import Analyzer

    ingest([EXAMPLE], tmp_path / "col", fmt="dataset", citations=False)
    analyzer = Analyzer(cache_dir=False, n_process=1)
    prepared = prepare(load_corpus(EXAMPLE), analyzer)
    words = analyzer.vocab.words
    with Collection.open(tmp_path / "col") as c:
        for level in ("sentence", "paragraph", "opinion", "case"):
            stats = prepared.background[level]
            assert c.level_totals(level) == (stats.n_units, stats.total_tokens), level
            present = np.flatnonzero(stats.df)
            got = c.token_statistics(level, [words[i] for i in present])
            assert got == {words[i]: (int(stats.df[i]), int(stats.cf[i])) for i in present}, level
            n_stored = c.db.execute("SELECT count(*) FROM token_stats WHERE level = ?", (level,)).fetchone()[0]
            assert n_stored == len(present)


def test_read_api(tmp_path):
    ingest([SOURCES], tmp_path / "col")
    with Collection.open(tmp_path / "col") as c:
        rows = list(c.paragraphs_matching('"motor vehicle"'))
        assert rows and all("motor vehicle" in r.text.lower() for r in rows)
        keys = [(r.case_id, c.db.execute("SELECT position FROM opinions WHERE id = ?", (r.opinion_id,)).fetchone()[0],
                 r.position) for r in rows]
        assert keys == sorted(keys)
        case = c.case(rows[0].case_id)
        ops = c.opinions(rows[0].case_id)
        assert all(o["text"] in case.text for o in ops)
        assert any(rows[0].text in o["text"].split("\n") for o in ops)
        assert case.id == f"c{rows[0].case_id}" and case.name and case.court and case.jurisdiction
        # cases stored from CAP files give back the data set's case text, cleaned (page labels, footnotes)
        want = {r.name_abbreviation: cleaned(r).text for r in example_records()}
        cap_ids = [i for i in c.case_ids() if c.case(i).source == "cap"]
        assert cap_ids and all(c.case(i).text == want[c.case(i).short_name] for i in cap_ids)
        n_statutes = c.db.execute("SELECT count(*) FROM citations WHERE kind = 'statute'").fetchone()[0]
        assert n_statutes >= 1
        with pytest.raises(Exception, match="bad full-text query"):
            list(c.paragraphs_matching('"unbalanced'))


@pytest.mark.slow
def test_ingest_is_idempotent_and_a_changed_case_replaces_the_old(tmp_path):
    recs = copies(5)
    write_cap_volume(recs, tmp_path / "v1" / "vol")
    s1 = ingest([tmp_path / "v1"], tmp_path / "col", citations=False)
    before = list(canonical_dump(tmp_path / "col"))
    s2 = ingest([tmp_path / "v1"], tmp_path / "col", citations=False)
    assert (s1.added, s2.added, s2.unchanged) == (5, 0, 5)
    assert list(canonical_dump(tmp_path / "col")) == before

    changed = list(recs)
    ops = (dataclasses.replace(recs[2].opinions[0], paragraphs=("A wholly new opinion about a zeppelin.",)),)
    changed[2] = dataclasses.replace(recs[2], opinions=ops)
    write_cap_volume(changed, tmp_path / "v2" / "vol")
    s3 = ingest([tmp_path / "v2"], tmp_path / "col", citations=False)
    assert (s3.added, s3.replaced, s3.unchanged) == (0, 1, 4)
    ingest([tmp_path / "v2"], tmp_path / "fresh", citations=False)

    def stats(folder):
        return [line for line in canonical_dump(folder) if line.startswith(("token_stats", "level_totals"))]

    assert stats(tmp_path / "col") == stats(tmp_path / "fresh")
    with Collection.open(tmp_path / "col") as c:
        assert len(c.case_ids()) == 5
        assert [r.text for r in c.paragraphs_matching("zeppelin")] == ["A wholly new opinion about a zeppelin."]
        assert [r.text for r in c.paragraphs_matching('"about|a" AND "a|zeppelin"', pairs=True)] == [
            "A wholly new opinion about a zeppelin."]
        assert c.token_statistics("case", ["zeppelin"])["zeppelin"] == (1, 1)
        assert _pair_index_is_exact(c.db)  # the replaced case's pairs were deleted


def _pair_index_is_exact(db: sqlite3.Connection) -> bool:
    """The pair index holds exactly the stored paragraphs' pairs (no more: deleted cases are gone)."""
    from statinterp.text.term_match import fts_pairs_text

    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.pairs_check USING fts5vocab(main, paragraph_pairs, instance)")
    stored = set(db.execute("SELECT term, doc FROM temp.pairs_check"))
    return stored == {(pair, pid) for pid, text in db.execute("SELECT id, text FROM paragraphs")
                      for pair in fts_pairs_text(text).split()}


def unpaged(records: list[CaseRecord]) -> list[CaseRecord]:
    """The records without their page-label lines ("*345") and footnote lines ("1 . The record
    ..."): cases a format-1 collection (written before pages and footnotes were read) holds as
    they are (its paragraphs have no footnote flag to upgrade)."""
    return [dataclasses.replace(r, opinions=tuple(
        dataclasses.replace(o, paragraphs=tuple(p for p in o.paragraphs
                                                if not re.fullmatch(r"\*\d+", p) and not re.match(r"\d+ \. ", p)))
        for o in r.opinions)) for r in records]


def _make_format_1(folder: Path) -> None:
    """Turn a collection into one of format 1, as statinterp wrote before the pair index (and pages)."""
    from statinterp.collection.store import NUMBER_COLUMNS, PAGE_COLUMNS

    db = sqlite3.connect(folder / "collection.sqlite", isolation_level=None)
    db.execute("DROP TABLE paragraph_pairs")
    for table, column, _ in PAGE_COLUMNS + NUMBER_COLUMNS:
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    db.close()


@pytest.mark.slow
def test_a_collection_of_format_1_is_found_with_phrases_and_the_next_ingest_adds_the_pair_index(tmp_path,
                                                                                               monkeypatch):
    from statinterp.collection import store
    from statinterp.collection.find import find_term

    write_cap_volume(unpaged(copies(6)), tmp_path / "v1" / "vol")
    ingest([tmp_path / "v1"], tmp_path / "col", citations=False)
    with Collection.open(tmp_path / "col") as c:
        assert c.has_pairs and c.info()["format"] == store.FORMAT_VERSION
        new = find_term(c, "motor vehicle")
    _make_format_1(tmp_path / "col")
    with Collection.open(tmp_path / "col") as c:
        assert not c.has_pairs and c.info()["format"] == 1
        old = find_term(c, "motor vehicle")  # the phrase query
        with pytest.raises(Exception, match="no pair index"):
            list(c.paragraphs_matching('"motor|vehicle"', pairs=True))
    assert old.tables == new.tables and old.paragraphs_matched == new.paragraphs_matched > 0

    # an upgrade that fails half-way leaves format 1, whole
    real, calls = store.fts_pairs_text, []

    def failing(text: str) -> str:
        calls.append(text)
        if len(calls) > 3:
            raise KeyboardInterrupt  # as a Ctrl-C in the middle of the upgrade
        return real(text)

    monkeypatch.setattr(store, "fts_pairs_text", failing)
    with pytest.raises(KeyboardInterrupt):
        ingest([tmp_path / "v1"], tmp_path / "col", citations=False)
    monkeypatch.setattr(store, "fts_pairs_text", real)
    with Collection.open(tmp_path / "col") as c:
        assert not c.has_pairs and c.info()["format"] == 1

    # the next ingest adds the pair index (with the new cases): as a collection built at once
    write_cap_volume(unpaged(copies(8)[6:]), tmp_path / "v2" / "vol")
    summary = ingest([tmp_path / "v1", tmp_path / "v2"], tmp_path / "col", citations=False)
    assert (summary.added, summary.unchanged) == (2, 6)
    ingest([tmp_path / "v1", tmp_path / "v2"], tmp_path / "fresh", citations=False)
    assert list(canonical_dump(tmp_path / "col")) == list(canonical_dump(tmp_path / "fresh"))
    with Collection.open(tmp_path / "col") as c:
        assert c.has_pairs and c.info()["format"] == store.FORMAT_VERSION and _pair_index_is_exact(c.db)
        assert find_term(c, "motor vehicle").paragraphs_matched > new.paragraphs_matched


def _invariants_hold(db: sqlite3.Connection) -> bool:
    """In one snapshot: every case is whole and the statistics count exactly the stored cases."""
    db.execute("BEGIN")
    try:
        n_cases = db.execute("SELECT count(*) FROM cases").fetchone()[0]
        n_case_units = db.execute("SELECT n_units FROM level_totals WHERE level = 'case'").fetchone()[0]
        n_ops = db.execute("SELECT count(*) FROM opinions").fetchone()[0]
        n_op_units = db.execute("SELECT n_units FROM level_totals WHERE level = 'opinion'").fetchone()[0]
        n_paras = db.execute("SELECT count(*) FROM paragraphs").fetchone()[0]
        n_fts = db.execute("SELECT count(*) FROM paragraphs_fts WHERE paragraphs_fts MATCH 'copy'").fetchone()[0]
        n_pairs = db.execute("SELECT count(*) FROM paragraph_pairs WHERE paragraph_pairs MATCH "
                             "'\"copy|number\"'").fetchone()[0]
        orphans = db.execute("SELECT count(*) FROM cases c WHERE NOT EXISTS "
                             "(SELECT 1 FROM paragraphs p WHERE p.case_id = c.id)").fetchone()[0]
    finally:
        db.execute("COMMIT")
    return (n_cases == n_case_units and n_ops == n_op_units and n_fts == n_pairs == n_cases and orphans == 0
            and n_paras >= n_cases)


def _start_ingest(src: Path, col: Path) -> subprocess.Popen:
    code = ("import sys; from statinterp.app.cli import main; "
            f"sys.exit(main(['ingest', {str(src)!r}, '--collection', {str(col)!r}, '-q', '--no-citations']))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_cases(col: Path, proc: subprocess.Popen, at_least: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (col / "collection.sqlite").exists():
            try:
                db = sqlite3.connect(col / "collection.sqlite", isolation_level=None)
                n = db.execute("SELECT count(*) FROM cases").fetchone()[0]
                db.close()
                if n >= at_least:
                    return n
            except sqlite3.OperationalError:
                pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("ingest made no progress")


#: Cases of the ingests killed or read while they run: enough that the ingest is still writing
#: after its first batch is visible (the example cases are short; 600 take ~2 s on one core).
LONG_INGEST_CASES = 600


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_ingest_leaves_a_consistent_collection_and_rerun_completes_it(tmp_path, sig):
    src = tmp_path / "src"
    write_cap_volume(copies(LONG_INGEST_CASES), src / "vol")
    col = tmp_path / "col"
    proc = _start_ingest(src, col)
    try:
        _wait_for_cases(col, proc, 1)
        time.sleep(0.3)  # kill at some moment inside a later batch
        assert proc.poll() is None, "the ingest finished before it could be killed"
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    db = sqlite3.connect(col / "collection.sqlite", isolation_level=None)
    assert _invariants_hold(db)
    partial = db.execute("SELECT count(*) FROM cases").fetchone()[0]
    db.close()
    assert 1 <= partial < LONG_INGEST_CASES
    if sig == signal.SIGTERM:
        assert proc.returncode == 143
    summary = ingest([src], col, citations=False)
    assert summary.added == LONG_INGEST_CASES - partial and summary.unchanged == partial
    ingest([src], tmp_path / "clean", citations=False)
    assert list(canonical_dump(col)) == list(canonical_dump(tmp_path / "clean"))


@pytest.mark.slow
def test_a_reader_sees_whole_batches_while_an_ingest_writes(tmp_path):
    src = tmp_path / "src"
    write_cap_volume(copies(LONG_INGEST_CASES), src / "vol")
    col = tmp_path / "col"
    proc = _start_ingest(src, col)
    try:
        _wait_for_cases(col, proc, 1)
        checks = 0
        with Collection.open(col) as c:
            while proc.poll() is None and checks < 200:
                assert _invariants_hold(c.db)
                checks += 1
                time.sleep(0.02)
        assert checks > 0
    finally:
        _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    with Collection.open(col) as c:
        assert _invariants_hold(c.db) and len(c.case_ids()) == LONG_INGEST_CASES


# --------------------------------------------------------------------------------------------
# Commands


def test_ingest_command_defaults_to_the_example_and_info_reports_it(tmp_path, capsys):
    col = tmp_path / "col"
    code, out, err = run_cli(["ingest", "--collection", str(col), "-q"], capsys)
    assert code == 0, err
    assert "ingesting the example sources" in err
    assert "9 cases read" in out and "9 added" in out and "0 records skipped" in out
    code, out, err = run_cli(["collection", "info", str(col), "--format", "json"], capsys)
    info = json.loads(out)
    assert info["cases"] == 9 and info["by_source"] == {"cap": 5, "cap-bulk": 1, "courtlistener": 1, "text": 2}
    assert info["statistics"]["case"]["units"] == 9 and info["size_bytes"] > 0
    assert len(info["sources"]) == 5 and info["statistics_date"]
    code, out, err = run_cli(["collection", "info", str(col)], capsys)
    assert code == 0 and "9 cases, 12 opinions" in out and "size on disk" in out


# --------------------------------------------------------------------------------------------
# Dask


def _dies_once(partition, citations, marker_dir=None):
    """A partition task whose worker process dies the first time it runs the second partition."""
    from statinterp.collection.ingest import prepare_whole_partition

    marker = Path(marker_dir) / "died"
    if partition.path.endswith("vol2") and not marker.exists():
        marker.write_text("x")
        os._exit(1)  # the worker dies mid-partition
    return prepare_whole_partition(partition, citations)


@pytest.mark.slow
def test_dask_engine_writes_the_same_collection_as_the_local_engine(tmp_path, dask_cluster):
    recs = copies(12)
    for i in range(3):
        write_cap_volume(recs[4 * i: 4 * i + 4], tmp_path / "src" / f"vol{i + 1}")
    (tmp_path / "src" / "vol3" / "cases" / "0009-01.json").write_text("{bad json")
    local = ingest([tmp_path / "src", SOURCES], tmp_path / "local")
    dask = ingest([tmp_path / "src", SOURCES], tmp_path / "dask", engine="dask",
                  scheduler=dask_cluster.scheduler_address)
    assert local.as_dict()["added"] == dask.as_dict()["added"] == 21
    assert [s.line() for s in local.skipped] == [s.line() for s in dask.skipped] and len(local.skipped) == 1
    assert list(canonical_dump(tmp_path / "local")) == list(canonical_dump(tmp_path / "dask"))


@pytest.mark.slow
def test_ingest_command_with_a_dask_scheduler(tmp_path, dask_cluster, capsys):
    code, out, err = run_cli(["ingest", str(SOURCES), "--collection", str(tmp_path / "dask"), "--engine", "dask",
                              "--scheduler", dask_cluster.scheduler_address, "-q", "--format-summary", "json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["engine"] == "dask" and summary["added"] == 9
    ingest([SOURCES], tmp_path / "local")
    assert list(canonical_dump(tmp_path / "local")) == list(canonical_dump(tmp_path / "dask"))


@pytest.mark.slow
def test_a_dask_worker_that_dies_mid_partition_is_retried_without_duplicates(tmp_path, dask_cluster):
    import functools

    import cloudpickle

    from statinterp.collection.ingest import analysis_settings, dask_streams, new_analyzer, prepare_cases
    from statinterp.collection.store import CollectionWriter

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    recs = copies(9)
    for i in range(3):
        write_cap_volume(recs[3 * i: 3 * i + 3], tmp_path / "src" / f"vol{i + 1}")
    parts = discover([tmp_path / "src"])
    task = functools.partial(_dies_once, marker_dir=str(tmp_path))
    analyzer = new_analyzer()
    with CollectionWriter(tmp_path / "dask", analysis_settings()) as writer:
        for partition, items in dask_streams(parts, False, dask_cluster.scheduler_address, 2, task=task):
            for item in items:
                writer.write(item, lambda r: prepare_cases([r], analyzer, False)[0])
            writer.record_source(partition.path, partition.format, len(items[0]) if items else 0, 0)
    assert (tmp_path / "died").exists()  # the worker really died once
    ingest([tmp_path / "src"], tmp_path / "local", citations=False)
    assert list(canonical_dump(tmp_path / "dask")) == list(canonical_dump(tmp_path / "local"))
    with Collection.open(tmp_path / "dask") as c:
        assert len(c.case_ids()) == 9


# --------------------------------------------------------------------------------------------
# Real data (skipped, saying so, when ../shared/data is absent)


def check_real_terms(zips: list[Path], tmp_path: Path) -> int:
    """The data set's cases survive both ways in: from its own zips and as CAP per-case files.
    Returns the number of labelled sentences checked."""
    from statinterp.corpus.dataset import load_corpus as load

    col = tmp_path / "real"
    ingest(zips, col, citations=False)
    recs = [r for z in zips for r in read_partition(Partition(str(z), "dataset"))]
    write_cap_volume(recs, tmp_path / "cap" / "vol")
    ingest([tmp_path / "cap"], tmp_path / "real-cap", citations=False)
    checked = 0
    with Collection.open(col) as c, Collection.open(tmp_path / "real-cap") as cap:
        stored = {c.case(i).original_id: c.case(i).text for i in c.case_ids()}
        from_cap = {cap.case(i).original_id: cap.case(i).text for i in cap.case_ids()}
        assert from_cap == {r.source_id: cleaned(r).text for r in recs}  # CAP text goes through the cleaning step
        assert sum(len(o.footnotes) for r in recs for o in cleaned(r).opinions) > 0
        paragraphs = {t for (t,) in c.db.execute("SELECT text FROM paragraphs")}
        for z in zips:
            for term in load(z):
                raw = json.loads(zipfile.ZipFile(z).read(f"{term.key}-case.json"))
                original = {cid: str(raw[cid].get("original_id", cid)) for cid in term.cases}
                for cid, case in term.cases.items():
                    assert stored[original[cid]] == case.text
                for s in term.sentences:
                    # a labelled sentence lies in one stored paragraph (a line), or, where the data
                    # set joined lines into one paragraph, in the stored case text
                    assert (any(s.text in p for p in paragraphs if len(p) >= len(s.text))
                            or s.text in stored[original[s.case_id]])
                    checked += 1
    return checked


@pytest.mark.slow
def test_real_terms_are_stored_with_their_case_texts_and_paragraphs(shared_data, tmp_path):
    zips = [shared_data / f"{t}.zip" for t in ("mechanical_recordation", "semiconductor_chip_product")]
    assert check_real_terms(zips, tmp_path) == 18 + 25
