"""The reviewer's labels: a durable SQLite store, one row per (term, sentence), plus a journal.

Labels given in the browser (``statinterp review``) or imported (``statinterp labels import``)
live here, never in the browser. Every write is one SQLite transaction in WAL mode with
``synchronous=FULL``: when :meth:`LabelStore.set_labels` returns, the label is on disk, so a
killed server (SIGKILL), a closed tab or a power cut after the response loses nothing.

* ``labels`` holds the current label (or none) and note of each sentence, with the time of the
  last write. Conflicting writes (two tabs, two servers on one file) keep the last one; SQLite
  serialises them, so the file is never corrupted.
* ``journal`` keeps every write (append-only), so nothing a reviewer did is ever lost, even a
  label later overwritten or cleared.

Where the store lives by default (:func:`default_store_path`): never in the data (an annotated
data set or a collection is not written to), but in the user's data folder
(``$XDG_DATA_HOME/statinterp/labels/``, default ``~/.local/share/statinterp/labels/``) under a
name made from the data's name and a hash of its absolute path. A store that an earlier version
left beside the data (``statinterp-labels.sqlite`` in a data folder, ``NAME.labels.sqlite`` beside
a term zip) is still used, so old labels are not lost. ``--labels FILE`` overrides it.

**Schema versions.** The store's schema version is SQLite's ``user_version``
(:data:`SCHEMA_VERSION`). Opening an older store migrates it in one transaction, step by step
(:data:`_MIGRATIONS`: the statements taking version ``v - 1`` to ``v``); the first versioned
schema is 1, and a store written before versions existed (``user_version`` 0, with the tables)
is version 0. A store from a newer statinterp is refused (an older program would not know its
tables), never changed. To change the schema: add the statements to ``_SCHEMA`` (new stores) and
as a new step to ``_MIGRATIONS`` (old stores), and raise :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statinterp.corpus.labels import LABEL_GAINS, normalise_label
from statinterp.errors import InputError, UsageError

__all__ = ["MAX_NOTE_CHARS", "SCHEMA_VERSION", "LabelRecord", "LabelStore", "default_store_path", "parse_label"]

#: The longest note a reviewer may attach to a sentence.
MAX_NOTE_CHARS = 2000
#: Identifies a statinterp label store (SQLite ``application_id``; "SIlb").
_APPLICATION_ID = 0x53496C62
_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    term TEXT NOT NULL,
    sentence_id TEXT NOT NULL,
    label TEXT,
    note TEXT NOT NULL DEFAULT '',
    updated REAL NOT NULL,
    PRIMARY KEY (term, sentence_id)
);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    term TEXT NOT NULL,
    sentence_id TEXT NOT NULL,
    label TEXT,
    note TEXT,
    source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS journal_term ON journal (term, seq);
"""
#: The schema version of stores this code writes (SQLite ``user_version``).
SCHEMA_VERSION = 1
#: Step ``v`` takes a store of version ``v - 1`` to version ``v``.
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 0: the unversioned store; 1 adds the index that reading one term's journal uses
    1: ("CREATE INDEX IF NOT EXISTS journal_term ON journal (term, seq)",),
}


class _NewerStore(Exception):
    """A store whose schema is newer than this code's."""


@dataclass(frozen=True)
class LabelRecord:
    """A sentence's current label (``None`` once cleared), note and time of the last write."""

    label: str | None
    note: str
    updated: float

    @property
    def gain(self) -> int | None:
        return None if self.label is None else LABEL_GAINS[self.label]


def parse_label(raw: object) -> str | None:
    """A canonical label from user input; ``""``/``None`` clear the label; anything else is a UsageError."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    label = normalise_label(raw)
    if label is None:
        valid = ", ".join(repr(x) for x in LABEL_GAINS)
        raise UsageError(f"unknown label {raw!r} (valid: {valid}, or empty to clear)")
    return label


def _user_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "statinterp" / "labels"


def default_store_path(data: str | Path | None) -> Path:
    """Where the labels of ``data`` (a folder, a term zip; ``None`` = the shipped example) go by default."""
    example = Path(str(resources.files("statinterp.data").joinpath("example"))).resolve()
    path = Path(data).resolve() if data is not None else example
    if path != example:  # a store left beside the data by an earlier version: keep using it
        legacy = path / "statinterp-labels.sqlite" if path.is_dir() else path.parent / f"{path.stem}.labels.sqlite"
        if legacy.is_file():
            return legacy
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return _user_data_dir() / f"{path.stem or 'data'}-{digest}.sqlite"


class LabelStore:
    """Labels and notes of sentences, by term, in one SQLite file (safe to share between threads)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(self.path.parent, f"cannot create the labels folder ({exc.strerror or exc})") from None
        if self.path.is_dir():
            raise UsageError(f"{self.path} is a directory; --labels expects a file")
        try:
            self._db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
            self._check_and_create()
        except _NewerStore as exc:
            raise InputError(self.path, str(exc)) from None
        except sqlite3.DatabaseError as exc:
            raise InputError(self.path, f"is not a statinterp label store ({exc}); "
                             "give another --labels FILE") from None

    def _check_and_create(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id not in (0, _APPLICATION_ID) or (app_id == 0 and tables):
            raise sqlite3.DatabaseError("an SQLite database of something else")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=10000")
        if app_id == _APPLICATION_ID and db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return  # up to date: nothing to write
        db.execute("BEGIN IMMEDIATE")  # a second process opening the store waits here, then sees it done
        try:
            if db.execute("PRAGMA application_id").fetchone()[0] == 0:  # new (another opener may have made it)
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        db.execute(stmt)
                db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            else:
                self._migrate()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _migrate(self) -> None:
        """Bring the store to :data:`SCHEMA_VERSION` (inside the caller's transaction)."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise _NewerStore(f"was written by a newer statinterp (label store schema {version}; this version "
                              f"reads up to {SCHEMA_VERSION}): upgrade statinterp, or give another --labels FILE")
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for stmt in _MIGRATIONS[step]:
                self._db.execute(stmt)
        if version != SCHEMA_VERSION:
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    # ----------------------------------------------------------------------------- writing

    def set_labels(self, term: str, sentence_ids: Iterable[str], label: str | None, *,
                   note: str | None = None, source: str = "", at: float | None = None) -> float:
        """Give every sentence of ``sentence_ids`` the canonical ``label`` (``None`` clears it);
        ``note`` replaces the note when given. Durable when this returns; returns the write time."""
        ids = list(dict.fromkeys(sentence_ids))
        if label is not None and label not in LABEL_GAINS:
            raise UsageError(f"unknown label {label!r}")
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise UsageError(f"a note may have at most {MAX_NOTE_CHARS} characters")
        when = time.time() if at is None else at
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for sid in ids:
                    db.execute(
                        "INSERT INTO labels (term, sentence_id, label, note, updated) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT (term, sentence_id) DO UPDATE SET label = excluded.label, "
                        "note = CASE WHEN ? IS NULL THEN labels.note ELSE excluded.note END, "
                        "updated = excluded.updated",
                        (term, sid, label, note or "", when, note))
                    db.execute("INSERT INTO journal (at, term, sentence_id, label, note, source) "
                               "VALUES (?, ?, ?, ?, ?, ?)", (when, term, sid, label, note, source))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return when

    def set_note(self, term: str, sentence_id: str, note: str, *, source: str = "") -> float:
        """Replace a sentence's note, keeping its label."""
        if len(note) > MAX_NOTE_CHARS:
            raise UsageError(f"a note may have at most {MAX_NOTE_CHARS} characters")
        when = time.time()
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO labels (term, sentence_id, label, note, updated) VALUES (?, ?, NULL, ?, ?) "
                    "ON CONFLICT (term, sentence_id) DO UPDATE SET note = excluded.note, updated = excluded.updated",
                    (term, sentence_id, note, when))
                db.execute("INSERT INTO journal (at, term, sentence_id, label, note, source) "
                           "SELECT ?, ?, ?, label, ?, ? FROM labels WHERE term = ? AND sentence_id = ?",
                           (when, term, sentence_id, note, source, term, sentence_id))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return when

    # ----------------------------------------------------------------------------- reading

    def records(self, term: str) -> dict[str, LabelRecord]:
        """Every sentence of ``term`` with a label or a note (cleared labels have ``label=None``)."""
        with self._lock:
            rows = self._db.execute("SELECT sentence_id, label, note, updated FROM labels WHERE term = ?",
                                    (term,)).fetchall()
        return {sid: LabelRecord(label, note, updated) for sid, label, note, updated in rows}

    def labels(self, term: str) -> dict[str, str]:
        """Sentence id -> canonical label, for the labelled sentences of ``term``."""
        return {sid: r.label for sid, r in self.records(term).items() if r.label is not None}

    def journal(self, term: str) -> list[tuple[float, str, str | None, str | None, str]]:
        """Every write for ``term`` in order: (time, sentence id, label, note, source)."""
        with self._lock:
            return self._db.execute("SELECT at, sentence_id, label, note, source FROM journal WHERE term = ? "
                                    "ORDER BY seq", (term,)).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
