"""SQLite in one style: transactions, versioned schemas with migrations, rows read by name.

The collection (:mod:`statinterp.collection.store`) and the label store
(:mod:`statinterp.corpus.labels`) are SQLite files written the same way:

* the connection is in autocommit mode (``isolation_level=None``) and every write that must be
  whole is one :func:`transaction` (``BEGIN IMMEDIATE`` ... ``COMMIT``; any exception, a
  Ctrl-C too, rolls it back and is raised again);
* the schema has a version, and a :class:`Schema` holds the statements of its current version
  (new files) and one step per older version (``steps[v]`` takes version ``v`` to ``v + 1``):
  opening an older file applies the steps in order, in the transaction that opens it, so a
  crash leaves the old version whole;
* rows are read by column name: :func:`select` gives :class:`sqlite3.Row`\\ s, :func:`select_as`
  records (dataclasses) whose fields the query's columns must be.

This module imports nothing of statinterp: any layer may use it.
"""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Schema", "Step", "select", "select_as", "statements", "transaction"]

R = TypeVar("R")

#: A migration step: run in the caller's transaction, it takes a schema version ``v`` to ``v + 1``.
Step = Callable[[sqlite3.Connection], None]


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on ``db`` (a connection made with ``isolation_level=None``).

    ``BEGIN IMMEDIATE`` takes the write lock at once (a second writer waits for its
    ``busy_timeout`` here, never half-way through); the block's end commits; any exception
    inside (``KeyboardInterrupt`` included), or a failing ``COMMIT``, rolls back and is raised
    again."""
    if db.isolation_level is not None:
        raise ValueError("transaction() needs a connection made with isolation_level=None")
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def select(db: sqlite3.Connection, sql: str, params: Mapping | tuple | list = ()) -> sqlite3.Cursor:
    """The rows of a query as :class:`sqlite3.Row`\\ s: read by column name (``row["id"]``,
    ``Record(**row)`` when the query's column names are the record's fields). The connection's
    own row factory is left alone."""
    cursor = db.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params)


def select_as(db: sqlite3.Connection, record: type[R], sql: str, params: Mapping | tuple | list = ()) -> Iterator[R]:
    """The rows of a query as ``record``\\ s (a dataclass), built by column name: the query's
    column names must be the record's first fields, in order (the rest keep their defaults), or
    this raises at once; each row is then passed positionally, as fast as a tuple."""
    cursor = db.execute(sql, params)
    columns = tuple(d[0] for d in cursor.description)
    fields = tuple(f.name for f in dataclasses.fields(record))  # type: ignore[arg-type]
    if columns != fields[:len(columns)]:
        raise ValueError(f"the query's columns {columns} are not the first fields of {record.__name__} {fields}")
    factory: Any = record
    return itertools.starmap(factory, cursor)


def statements(script: str) -> list[str]:
    """The statements of a ``;``-separated script (no ``;`` inside a statement), for running one
    by one inside a transaction (``executescript`` would commit first)."""
    return [s.strip() for s in script.split(";") if s.strip()]


@dataclass(frozen=True)
class Schema:
    """A versioned schema: the statements that create its current ``version``, and the steps
    that bring a file of an older version to it (``steps[v]``: version ``v`` -> ``v + 1``;
    versions from the oldest step's up to ``version`` are readable).

    To change a schema: change ``create`` (new files), add the step from the last version
    (old files), raise ``version``; a test builds a file of every older version and checks that
    the steps make it equal to a new one."""

    version: int
    create: str
    steps: Mapping[int, Step]
    #: Records a version in the file (the collection's ``meta`` row, the label store's ``user_version``).
    record: Callable[[sqlite3.Connection, int], None]

    def __post_init__(self) -> None:
        if sorted(self.steps) != list(range(self.oldest, self.version)):
            raise ValueError(f"the steps {sorted(self.steps)} do not lead one by one to version {self.version}")

    @property
    def oldest(self) -> int:
        """The oldest version the steps start from (the current one when there are none)."""
        return min(self.steps, default=self.version)

    @property
    def readable(self) -> tuple[int, ...]:
        """Every version this code reads, oldest first."""
        return tuple(range(self.oldest, self.version + 1))

    def create_in(self, db: sqlite3.Connection) -> None:
        """Create the current schema and record its version (in the caller's transaction)."""
        for statement in statements(self.create):
            db.execute(statement)
        self.record(db, self.version)

    def upgrade(self, db: sqlite3.Connection, found: int) -> None:
        """Apply the steps from version ``found`` to :attr:`version`, in order, and record the
        new version, in the caller's transaction (nothing to do at the current version)."""
        if found not in self.readable:
            raise ValueError(f"no migration from schema version {found} (readable: {self.readable})")
        for version in range(found, self.version):
            self.steps[version](db)
        if found != self.version:
            self.record(db, self.version)
