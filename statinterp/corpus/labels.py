"""A reviewer's labels: the store, and files of labels.

**The store**: a durable SQLite store, one row per (term, sentence), plus a journal.

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
(:data:`SCHEMA_VERSION`), its migrations those of the collection (:class:`statinterp.sqlite.Schema`,
:data:`LABEL_SCHEMA`: one step per older version, ``steps[v]`` taking version ``v`` to ``v + 1``).
Opening an older store applies the steps in one transaction; the first versioned schema is 1,
and a store written before versions existed (``user_version`` 0, with the tables) is version 0.
A store from a newer statinterp is refused (an older program would not know its tables), never
changed. To change the schema: change ``_SCHEMA`` (new stores), add the step from the last
version to :data:`LABEL_SCHEMA` (old stores), and raise :data:`SCHEMA_VERSION`.

**Files of labels**: reading a reviewer's labels from a file, for relevance feedback (``rank --feedback FILE``).

Two formats:

* JSON lines: one object per line, ``{"sentence_id": "...", "label": ...}`` where ``label`` is a
  label name of the data set (``"high value"``, ``"certain value"``, ``"potential value"``,
  ``"no value"``; any case) or its gain (0..3). Blank lines are skipped; a later line for the
  same sentence replaces an earlier one (a journal's last word wins).
* A data-set term zip (or folder) with labelled sentences (as ``statinterp labels export``
  writes): the labels of its sentences.

Every problem is an :class:`~statinterp.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from statinterp.cache.files import special_kind
from statinterp.corpus.dataset import LABEL_GAINS, normalise_label
from statinterp.errors import InputError, UsageError, check_no_lone_surrogates
from statinterp.sqlite import Schema, select, transaction

__all__ = ["MAX_NOTE_CHARS", "SCHEMA_VERSION", "JournalEntry", "LabelRecord", "LabelStore",
           "default_store_path", "parse_label", "label_gain", "read_label_file"]

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


def _index_journal(db: sqlite3.Connection) -> None:
    """Version 0 (the unversioned store) -> 1: the index that reading one term's journal uses."""
    db.execute("CREATE INDEX IF NOT EXISTS journal_term ON journal (term, seq)")


def _record_version(db: sqlite3.Connection, version: int) -> None:
    db.execute(f"PRAGMA user_version = {int(version)}")

#: The label store's schema: new stores get ``_SCHEMA``, older ones the steps from their version.
LABEL_SCHEMA = Schema(SCHEMA_VERSION, _SCHEMA, {0: _index_journal}, _record_version)


class _NewerStore(Exception):
    """A store whose schema is newer than this code's."""


@contextmanager
def _damage_is_input_error(path: Path) -> Iterator[None]:
    """SQLite errors of a store that opened (a corrupt page, a truncated file) as one-line InputErrors."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise InputError(path, f"is in use by another program and stayed locked ({exc}); try again") from None
        raise InputError(path, f"cannot be read or written ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise InputError(path, f"is damaged ({exc}): restore it from a backup or give another --labels FILE "
                               "(`sqlite3 FILE .recover` may save its labels)") from None


@dataclass(frozen=True)
class LabelRecord:
    """A sentence's current label (``None`` once cleared), note and time of the last write."""

    label: str | None
    note: str
    updated: float

    @property
    def gain(self) -> int | None:
        return None if self.label is None else LABEL_GAINS[self.label]


class JournalEntry(NamedTuple):
    """One write of the journal."""

    at: float
    sentence_id: str
    label: str | None
    note: str | None
    source: str


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
        app_id = self._application_id()
        tables = {row["name"] for row in select(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id not in (0, _APPLICATION_ID) or (app_id == 0 and tables):
            raise sqlite3.DatabaseError("an SQLite database of something else")
        if app_id == _APPLICATION_ID:
            self._refuse_newer()  # before anything is written (switching to WAL rewrites the header)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=10000")
        if app_id == _APPLICATION_ID and self._user_version() == SCHEMA_VERSION:
            return  # up to date: nothing to write
        with transaction(db):  # a second process opening the store waits here, then sees it done
            if self._application_id() == 0:  # new (another opener may have made it)
                LABEL_SCHEMA.create_in(db)
                db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
                return
            self._refuse_newer()
            LABEL_SCHEMA.upgrade(db, self._user_version())

    def _refuse_newer(self) -> None:
        version = self._user_version()
        if version > SCHEMA_VERSION:
            raise _NewerStore(f"was written by a newer statinterp (label store schema {version}; this version "
                              f"reads up to {SCHEMA_VERSION}): upgrade statinterp, or give another --labels FILE")

    def _application_id(self) -> int:
        return int(select(self._db, "PRAGMA application_id").fetchone()["application_id"])

    def _user_version(self) -> int:
        return int(select(self._db, "PRAGMA user_version").fetchone()["user_version"])

    @property
    def schema_version(self) -> int:
        with self._lock, _damage_is_input_error(self.path):
            return self._user_version()

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
        with self._lock, _damage_is_input_error(self.path), transaction(self._db) as db:
            for sid in ids:
                db.execute(
                    "INSERT INTO labels (term, sentence_id, label, note, updated) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (term, sentence_id) DO UPDATE SET label = excluded.label, "
                    "note = CASE WHEN ? IS NULL THEN labels.note ELSE excluded.note END, "
                    "updated = excluded.updated",
                    (term, sid, label, note or "", when, note))
                db.execute("INSERT INTO journal (at, term, sentence_id, label, note, source) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (when, term, sid, label, note, source))
        return when

    def set_note(self, term: str, sentence_id: str, note: str, *, source: str = "") -> float:
        """Replace a sentence's note, keeping its label."""
        if len(note) > MAX_NOTE_CHARS:
            raise UsageError(f"a note may have at most {MAX_NOTE_CHARS} characters")
        when = time.time()
        with self._lock, _damage_is_input_error(self.path), transaction(self._db) as db:
            db.execute(
                "INSERT INTO labels (term, sentence_id, label, note, updated) VALUES (?, ?, NULL, ?, ?) "
                "ON CONFLICT (term, sentence_id) DO UPDATE SET note = excluded.note, updated = excluded.updated",
                (term, sentence_id, note, when))
            db.execute("INSERT INTO journal (at, term, sentence_id, label, note, source) "
                       "SELECT ?, ?, ?, label, ?, ? FROM labels WHERE term = ? AND sentence_id = ?",
                       (when, term, sentence_id, note, source, term, sentence_id))
        return when

    # ----------------------------------------------------------------------------- reading

    def records(self, term: str) -> dict[str, LabelRecord]:
        """Every sentence of ``term`` with a label or a note (cleared labels have ``label=None``).

        Every row is checked: a label that is not one of the four canonical ones (this code only
        writes those), or a field of the wrong type, is an :class:`InputError` naming the sentence."""
        with self._lock, _damage_is_input_error(self.path):
            rows = select(self._db, "SELECT sentence_id, label, note, updated FROM labels WHERE term = ?",
                          (term,)).fetchall()
        out = {}
        for row in rows:
            sid, label, note, updated = row["sentence_id"], row["label"], row["note"], row["updated"]
            if not isinstance(sid, str):
                raise InputError(self.path, f"is damaged: term {term!r} has a sentence id that is not text ({sid!r})")
            if label is not None and label not in LABEL_GAINS:
                valid = ", ".join(repr(x) for x in LABEL_GAINS)
                raise InputError(self.path, f"holds the label {label!r}, which is not one of {valid} (the store "
                                            "was changed by another program); correct or clear it",
                                 record=f"{term}/{sid}", field="label")
            if not isinstance(note, str) or not isinstance(updated, int | float):
                raise InputError(self.path, "is damaged: a note that is not text or a time that is not a number",
                                 record=f"{term}/{sid}")
            out[sid] = LabelRecord(label=label, note=note, updated=float(updated))
        return out

    def labels(self, term: str) -> dict[str, str]:
        """Sentence id -> canonical label, for the labelled sentences of ``term``."""
        return {sid: r.label for sid, r in self.records(term).items() if r.label is not None}

    def journal(self, term: str) -> list[JournalEntry]:
        """Every write for ``term`` in order: (time, sentence id, label, note, source)."""
        with self._lock, _damage_is_input_error(self.path):
            return [JournalEntry(**row) for row in select(
                self._db, "SELECT at, sentence_id, label, note, source FROM journal WHERE term = ? ORDER BY seq",
                (term,))]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

#: Refuse label files larger than this (a labels file of the whole data set is well under 1 MB).
MAX_LABEL_FILE_BYTES = 64 * 1024 * 1024


def label_gain(value: object) -> int | None:
    """The gain (0..3) of a label name or gain value; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1, 2, 3):
        return value
    if isinstance(value, float) and value in (0.0, 1.0, 2.0, 3.0):
        return int(value)
    name = normalise_label(value)
    return None if name is None else LABEL_GAINS[name]


def read_label_file(path: str | Path) -> dict[str, int]:
    """Sentence id -> gain (0..3) from a JSON-lines labels file or a labelled data-set zip/folder."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "does not exist (give a JSON-lines labels file or a labelled term zip)")
    kind = special_kind(path)
    if kind is not None:  # a FIFO would block the read forever
        raise InputError(path, f"is {kind}, not a file; give a JSON-lines labels file or a labelled term zip")
    if path.is_dir() or zipfile.is_zipfile(path):
        return _from_dataset(path)
    if path.stat().st_size > MAX_LABEL_FILE_BYTES:
        raise InputError(path, f"is larger than {MAX_LABEL_FILE_BYTES // (1024 * 1024)} MB; not a labels file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark at its head is passed over
    except UnicodeDecodeError:
        raise InputError(path, "is not UTF-8 text (expected JSON lines or a term zip)") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    labels: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = f"line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"is not valid JSON ({exc.msg})", record=record) from None
        if not isinstance(obj, dict):
            raise InputError(path, 'expected an object {"sentence_id": ..., "label": ...}', record=record)
        check_no_lone_surrogates(obj, path, record=record)
        sid = obj.get("sentence_id")
        if not isinstance(sid, str) or not sid:
            raise InputError(path, "missing or not a non-empty string", record=record, field="sentence_id")
        if "label" not in obj:
            raise InputError(path, "missing", record=record, field="label")
        gain = label_gain(obj["label"])
        if gain is None:
            raise InputError(path, f"{obj['label']!r} is not a label ({', '.join(LABEL_GAINS)}) or a gain 0..3",
                             record=record, field="label")
        labels[sid] = gain
    if not labels:
        raise InputError(path, "holds no labels")
    return labels


def _from_dataset(path: Path) -> dict[str, int]:
    from statinterp.corpus.dataset import load_corpus

    corpus = load_corpus(path)
    labels = {s.id: s.gain for term in corpus for s in term.sentences if s.gain is not None}
    if not labels:
        raise InputError(path, "holds no labelled sentence")
    return labels
