"""statinterp.sqlite: one transaction helper (BEGIN IMMEDIATE / COMMIT / ROLLBACK on any
exception), rows read by name, versioned schemas whose steps run in order in one transaction
(issue #27; the collection's formats: tests/collection/test_store_formats.py, the label store's
versions: tests/corpus/test_label_store.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from statinterp.sqlite import Schema, select, select_as, transaction

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
