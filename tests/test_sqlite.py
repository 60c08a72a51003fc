"""SQLite in one style (statinterp.sqlite): the transaction helper, versioned schemas whose
migration steps bring a file of every older version to the current schema (the collection's
formats, the label store's versions), foreign keys enforced by the collection's writer."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from statinterp.collection.ingest import analysis_settings
from statinterp.collection.prepare import prepare_cases
from statinterp.collection.store import (
    COLLECTION_SCHEMA,
    FILENAME,
    FORMAT_VERSION,
    READABLE_FORMATS,
    Collection,
    CollectionWriter,
    canonical_dump,
)
from statinterp.corpus.label_store import LABEL_SCHEMA, SCHEMA_VERSION, LabelStore
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.sqlite import Schema, select, select_as, transaction
from statinterp.text.term_match import fts_pairs_text

# --------------------------------------------------------------------------------------------
# transaction()


def _autocommit(tmp_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    db.execute("CREATE TABLE t (x INTEGER)")
    return db


def _values(db: sqlite3.Connection) -> list[int]:
    return [row["x"] for row in select(db, "SELECT x FROM t ORDER BY x")]


def test_a_transaction_commits_at_the_end_of_its_block(tmp_path):
    db = _autocommit(tmp_path)
    with transaction(db):
        db.execute("INSERT INTO t VALUES (1)")
        assert db.in_transaction
    assert not db.in_transaction and _values(db) == [1]
    other = sqlite3.connect(tmp_path / "t.sqlite")  # on disk: another connection sees it
    assert other.execute("SELECT x FROM t").fetchall() == [(1,)]


@pytest.mark.parametrize("error", [ValueError("bad"), KeyboardInterrupt()])
def test_a_transaction_rolls_back_on_any_exception_and_raises_it_again(tmp_path, error):
    db = _autocommit(tmp_path)
    with pytest.raises(type(error)), transaction(db):
        db.execute("INSERT INTO t VALUES (1)")
        raise error
    assert not db.in_transaction and _values(db) == []


def test_a_failing_commit_rolls_back(tmp_path):
    db = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    db.execute("CREATE TABLE child (parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), transaction(db):
        db.execute("INSERT INTO child VALUES (7)")  # checked at COMMIT
    assert not db.in_transaction and db.execute("SELECT count(*) FROM child").fetchone()[0] == 0


def test_a_transaction_needs_an_autocommit_connection(tmp_path):
    db = sqlite3.connect(tmp_path / "t.sqlite")  # Python's implicit transactions
    with pytest.raises(ValueError, match="isolation_level=None"), transaction(db):
        pass


def test_select_reads_rows_by_name_and_leaves_the_connection_alone(tmp_path):
    db = _autocommit(tmp_path)
    db.execute("INSERT INTO t VALUES (3)")
    assert dict(select(db, "SELECT x, x + 1 AS y FROM t").fetchone()) == {"x": 3, "y": 4}
    assert db.execute("SELECT x FROM t").fetchone() == (3,)


def test_select_as_builds_records_by_column_name_and_refuses_other_columns(tmp_path):
    from statinterp.collection.store import ParagraphRow

    db = _autocommit(tmp_path)
    sql = "SELECT 1 AS case_id, 2 AS opinion_id, 3 AS paragraph_id, 0 AS position, 'Text.' AS text"
    assert list(select_as(db, ParagraphRow, sql)) == [ParagraphRow(1, 2, 3, 0, "Text.")]
    with pytest.raises(ValueError, match="not the first fields of ParagraphRow"):
        select_as(db, ParagraphRow, "SELECT 1 AS case_id, 3 AS paragraph_id, 2 AS opinion_id")


# --------------------------------------------------------------------------------------------
# Schema


def _toy_schema(steps) -> Schema:
    def record(db: sqlite3.Connection, version: int) -> None:
        db.execute(f"PRAGMA user_version = {version}")

    return Schema(3, "CREATE TABLE a (x); CREATE TABLE b (y); CREATE TABLE c (z)", steps, record)


def _user_version(db: sqlite3.Connection) -> int:
    return db.execute("PRAGMA user_version").fetchone()[0]


def test_the_steps_must_lead_one_by_one_to_the_version():
    def step(db: sqlite3.Connection) -> None:
        pass

    assert _toy_schema({1: step, 2: step}).readable == (1, 2, 3)
    assert _toy_schema({}).readable == (3,)
    with pytest.raises(ValueError, match="one by one"):
        _toy_schema({1: step})  # no step from 2
    with pytest.raises(ValueError, match="one by one"):
        _toy_schema({0: step, 2: step})


def test_an_upgrade_applies_the_steps_in_order_and_a_failing_step_leaves_the_old_version(tmp_path):
    def add_b(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE b (y)")

    def add_c(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE c (z)")

    def broken(db: sqlite3.Connection) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C during the upgrade

    db = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    db.execute("CREATE TABLE a (x)")
    db.execute("PRAGMA user_version = 1")
    with pytest.raises(KeyboardInterrupt), transaction(db):
        _toy_schema({1: add_b, 2: broken}).upgrade(db, 1)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert tables == {"a"} and _user_version(db) == 1  # the old version, whole
    with transaction(db):
        _toy_schema({1: add_b, 2: add_c}).upgrade(db, 1)
    assert {r[0] for r in db.execute("SELECT name FROM sqlite_master")} == {"a", "b", "c"} and _user_version(db) == 3
    with pytest.raises(ValueError, match="no migration from schema version 0"):
        _toy_schema({1: add_b, 2: add_c}).upgrade(db, 0)


def _schema_of(path: Path) -> dict:
    """Every table's and index's columns (name, type, not null, default, key), as SQLite reports them."""
    db = sqlite3.connect(path)
    out = {}
    for kind, name in db.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall():
        if kind == "table":
            out[name] = ("table", db.execute(f"PRAGMA table_xinfo({name})").fetchall())
        elif kind == "index":
            out[name] = ("index", db.execute(f"PRAGMA index_xinfo({name})").fetchall())
    db.close()
    return out


# --------------------------------------------------------------------------------------------
# The collection's formats

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
#: The schema of every older format (add the one a new format replaces).
OLD_DDL = {1: FORMAT_1_DDL, 2: FORMAT_2_DDL}
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
        assert c.info()["format"] == version and not c.has_pages and c.has_pairs == (version >= 2)
        assert [c.record(i) for i in c.case_ids()] == records[:2]

    # the next write upgrades it, step by step: as a collection of the current format built at once
    assert _write(tmp_path / "old", records)["added"] == 1
    _write(tmp_path / "fresh", records)
    assert list(canonical_dump(tmp_path / "old")) == list(canonical_dump(tmp_path / "fresh"))
    assert _schema_of(tmp_path / "old" / FILENAME) == _schema_of(tmp_path / "fresh" / FILENAME)
    with Collection.open(tmp_path / "old") as c:
        assert c.info()["format"] == FORMAT_VERSION and c.has_pages and c.has_pairs
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


def test_collection_case_gives_the_data_sets_fields_by_name(tmp_path):
    _write(tmp_path / "col", [_case(4)])
    with Collection.open(tmp_path / "col") as c:
        (case_id,) = c.case_ids()
        case = c.case(case_id)
        assert c.opinions(case_id)[1] == {"id": 2, "type": "dissent", "author": "", "position": 1,
                                          "text": "A motor vehicle is not a boat."}
    assert case == {
        "original_id": "4", "source": "text", "name": "Doe 4 v. Roe", "short_name": "Doe 4 v. Roe",
        "date": "2001-03-04", "official_citation": "204 F.2d 34", "alternate_citations": ["204 F.2d 34"],
        "court": "cadc", "jurisdiction": "", "docket_number": "", "attorneys": [], "parties": [], "judges": [],
        "text": _case(4).text}


# --------------------------------------------------------------------------------------------
# The label store's versions


def test_every_older_label_store_version_migrates_to_the_schema_of_a_new_store(tmp_path):
    """Version 0 is the only older one: tests/fixtures/label_store/unversioned.sqlite (written
    by the code of that time; tests/test_review_app.py checks that its labels survive)."""
    assert LABEL_SCHEMA.readable == (0, SCHEMA_VERSION) == (0, 1)
    old = tmp_path / "old.sqlite"
    shutil.copyfile(Path(__file__).parent / "fixtures" / "label_store" / "unversioned.sqlite", old)
    with LabelStore(old) as store:
        assert store.schema_version == SCHEMA_VERSION
    with LabelStore(tmp_path / "new.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
    assert _schema_of(old) == _schema_of(tmp_path / "new.sqlite")
