"""The collection's formats (statinterp.collection.store.COLLECTION_SCHEMA, issue #27): a collection
of every older format, made with the DDL statinterp then ran, is read and upgraded by the
migration steps to one equal to a new collection; the writer enforces the foreign keys; stored
cases are read by column name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from statinterp.collection.ingest import analysis_settings, prepare_cases
from statinterp.collection.store import (
    COLLECTION_SCHEMA,
    FILENAME,
    FORMAT_VERSION,
    READABLE_FORMATS,
    Collection,
    CollectionWriter,
    canonical_dump,
)
from statinterp.corpus.dataset import Case
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.sqlite import transaction
from statinterp.text.term_match import fts_pairs_text
from tests.support.databases import schema_of

#: The schema of format 1, as statinterp created it (statinterp/collection/store.py at d836744^).
FORMAT_1_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (path TEXT NOT NULL, format TEXT NOT NULL, cases INTEGER NOT NULL,
    skipped INTEGER NOT NULL, ingested_at TEXT NOT NULL, PRIMARY KEY (path, format));
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, source_id TEXT NOT NULL, content_hash TEXT NOT NULL,
    name TEXT NOT NULL, name_abbreviation TEXT NOT NULL, decision_date TEXT NOT NULL,
    docket_number TEXT NOT NULL, citations TEXT NOT NULL, court TEXT NOT NULL, jurisdiction TEXT NOT NULL,
    head_matter TEXT NOT NULL, judges TEXT NOT NULL, parties TEXT NOT NULL, attorneys TEXT NOT NULL,
    UNIQUE (source, source_id));
CREATE TABLE IF NOT EXISTS opinions (
    id INTEGER PRIMARY KEY, case_id INTEGER NOT NULL REFERENCES cases(id), position INTEGER NOT NULL,
    type TEXT NOT NULL, author TEXT, UNIQUE (case_id, position));
CREATE TABLE IF NOT EXISTS paragraphs (
    id INTEGER PRIMARY KEY, case_id INTEGER NOT NULL REFERENCES cases(id),
    opinion_id INTEGER NOT NULL REFERENCES opinions(id), position INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS paragraphs_by_opinion ON paragraphs (opinion_id, position);
CREATE INDEX IF NOT EXISTS paragraphs_by_case ON paragraphs (case_id);
CREATE VIRTUAL TABLE IF NOT EXISTS paragraphs_fts USING fts5(
    text, content='paragraphs', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS citations (
    paragraph_id INTEGER NOT NULL REFERENCES paragraphs(id), start INTEGER NOT NULL, end INTEGER NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, normalized TEXT NOT NULL, PRIMARY KEY (paragraph_id, start, end, kind))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS token_stats (
    level TEXT NOT NULL, token TEXT NOT NULL, df INTEGER NOT NULL, cf INTEGER NOT NULL,
    PRIMARY KEY (level, token)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS level_totals (
    level TEXT PRIMARY KEY, n_units INTEGER NOT NULL, total_tokens INTEGER NOT NULL);
"""
#: Format 2 added the pair index (statinterp/collection/store.py at 3393954^).
FORMAT_2_DDL = FORMAT_1_DDL + """
CREATE VIRTUAL TABLE IF NOT EXISTS paragraph_pairs USING fts5(pairs, content='', detail=none,
    tokenize="ascii tokenchars '_|'");
"""
#: Format 3 added the pages of paragraphs (statinterp/collection/store.py at 0455837).
FORMAT_3_DDL = FORMAT_2_DDL.replace(
    "type TEXT NOT NULL, author TEXT, UNIQUE",
    "type TEXT NOT NULL, author TEXT, paged INTEGER NOT NULL DEFAULT 0, UNIQUE",
).replace("position INTEGER NOT NULL, text TEXT NOT NULL);",
          "position INTEGER NOT NULL, text TEXT NOT NULL,\n"
          "    page TEXT, page_starts TEXT NOT NULL DEFAULT '[]', footnote INTEGER NOT NULL DEFAULT 0);")
#: The schema of every older format (add the one a new format replaces).
OLD_DDL = {1: FORMAT_1_DDL, 2: FORMAT_2_DDL, 3: FORMAT_3_DDL}
OLDER_FORMATS = [v for v in READABLE_FORMATS if v != FORMAT_VERSION]


def _case(n: int) -> CaseRecord:
    """A case without page labels (what an older format holds whole)."""
    return CaseRecord(
        source="text", source_id=str(n), name=f"Doe {n} v. Roe", name_abbreviation=f"Doe {n} v. Roe",
        decision_date="2001-03-04", docket_number="", citations=(("official", f"{200 + n} F.2d 34"),), court="cadc",
        jurisdiction="", head_matter=f"Doe {n} v. Roe\nHeard.", judges="", parties="", attorneys="",
        opinions=(OpinionRecord("majority", "Smith", (f"A motor vehicle, case {n}.", "The statute applies.")),
                  OpinionRecord("dissent", None, ("A motor vehicle is not a boat.",))))


def _write(folder: Path, records: list[CaseRecord]) -> dict[str, int]:
    with CollectionWriter(folder, analysis_settings(statistics=False)) as writer:
        return writer.write(prepare_cases(records, None, citations=False))


def _old_collection(rows_from: Path, folder: Path, version: int) -> None:
    """A collection of format ``version``, made with that format's DDL, holding the rows of the
    collection ``rows_from`` (of cases without pages) in that format's columns."""
    folder.mkdir()
    db = sqlite3.connect(folder / FILENAME, isolation_level=None)
    db.executescript(OLD_DDL[version])
    db.execute("ATTACH ? AS new", (str(rows_from / FILENAME),))
    for table in ("meta", "sources", "cases", "opinions", "paragraphs", "citations", "token_stats", "level_totals"):
        columns = ", ".join(r[1] for r in db.execute(f"PRAGMA main.table_info({table})"))
        db.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM new.{table}")
    db.execute("DETACH new")
    db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(version),))
    db.execute("INSERT INTO paragraphs_fts (paragraphs_fts) VALUES ('rebuild')")
    if version >= 2:
        for pid, text in db.execute("SELECT id, text FROM paragraphs").fetchall():
            db.execute("INSERT INTO paragraph_pairs (rowid, pairs) VALUES (?, ?)", (pid, fts_pairs_text(text)))
    db.close()


def test_every_older_format_has_its_ddl_here():
    assert sorted(OLD_DDL) == OLDER_FORMATS == list(range(COLLECTION_SCHEMA.oldest, FORMAT_VERSION))


@pytest.mark.parametrize("version", OLDER_FORMATS)
def test_a_collection_of_every_older_format_is_read_and_upgraded_to_a_new_one(tmp_path, version):
    records = [_case(n) for n in range(3)]
    _write(tmp_path / "rows", records[:2])
    _old_collection(tmp_path / "rows", tmp_path / "old", version)
    with Collection.open(tmp_path / "old") as c:
        assert c.info()["format"] == version and c.has_pages == (version >= 3) and c.has_pairs == (version >= 2)
        assert not c.has_numbers
        assert [c.record(i) for i in c.case_ids()] == records[:2]

    # the next write upgrades it, step by step: as a collection of the current format built at once
    assert _write(tmp_path / "old", records)["added"] == 1
    _write(tmp_path / "fresh", records)
    assert list(canonical_dump(tmp_path / "old")) == list(canonical_dump(tmp_path / "fresh"))
    assert schema_of(tmp_path / "old" / FILENAME) == schema_of(tmp_path / "fresh" / FILENAME)
    with Collection.open(tmp_path / "old") as c:
        assert c.info()["format"] == FORMAT_VERSION and c.has_pages and c.has_pairs and c.has_numbers
        assert c.db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_writer_enforces_the_foreign_keys_and_replacing_a_case_keeps_them(tmp_path):
    _write(tmp_path / "col", [_case(0), _case(1)])
    changed = CaseRecord(**{**_case(0).__dict__, "opinions": _case(0).opinions[:1]})
    with CollectionWriter(tmp_path / "col", analysis_settings(statistics=False)) as writer:
        assert writer.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        again = writer.write(prepare_cases([changed], None, citations=False),
                             lambda old: prepare_cases([old], None, citations=False)[0])
        assert again["replaced"] == 1
        assert writer.db.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), transaction(writer.db):
            writer.db.execute("INSERT INTO opinions (case_id, position, type) VALUES (999, 0, 'majority')")
    with Collection.open(tmp_path / "col") as c:
        assert [c.record(i) for i in c.case_ids()] == [_case(1), changed]


def test_collection_case_gives_the_data_sets_case(tmp_path):
    _write(tmp_path / "col", [_case(4)])
    with Collection.open(tmp_path / "col") as c:
        (case_id,) = c.case_ids()
        case = c.case(case_id)
        assert c.opinions(case_id)[1] == {"id": 2, "type": "dissent", "author": "", "position": 1,
                                          "text": "A motor vehicle is not a boat."}
    assert case == Case(
        id=f"c{case_id}", original_id="4", source="text", name="Doe 4 v. Roe", short_name="Doe 4 v. Roe",
        date="2001-03-04", citation="204 F.2d 34", alternate_citations=("204 F.2d 34",), court="cadc",
        text=_case(4).text)
