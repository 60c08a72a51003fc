"""A collection in shards: one SQLite collection per shard of the sources, under one folder.

This module holds what is a set's own: its keys, manifest, ids and writer; each shard's word
list; and the set read as one collection (:class:`ShardSet`, :func:`open_collection`).

``statinterp ingest ... --collection DIR --shard-by KEY`` puts each case in the shard named by
its value of ``KEY`` (:data:`SHARD_KEYS`, :func:`shard_key`) and writes one ordinary collection
folder per shard (``DIR/shards/<name>/collection.sqlite``, :func:`shard_folder_name`), listed in
``DIR/manifest.json`` (:class:`Manifest`, docs/collection.md "Shards"). A folder with a manifest
is a shard set; a folder with ``collection.sqlite`` is a single-file collection; never both.

**Ids.** Case and opinion ids are unique over the whole set: the writer allocates them from one
counter per kind (:class:`IdCounter`), in the order a single-file ingest of the same sources
would insert the cases (partition order, record order), so a shard set and a single-file
collection of the same sources give each case and opinion the same id (paragraph ids are each
shard's own: nothing outside a shard names them). Background statistics add up: every level's
N and token total, and every token's df and cf, are sums over cases, so the set's statistics
are the sums over its shards.

:class:`ShardedWriter` writes a set from one process (``--engine local``); on Dask the workers
write the shards side by side, one writer per shard (:func:`~statinterp.collection.ingest.write_shards_on_dask`).
Either way one ingest at a time writes a set (:data:`LOCK`).

A case belongs to the shard of its key when it is first stored; ingesting it again (changed or
not) is looked up in the shard of its current key. A case whose key value changes between two
ingests (a court renamed at the source) is therefore stored again in its new shard and stays in
its old one as well: re-ingest into a new folder after such a change.

**The word list.** Each shard's word list: which tokens its text index holds, kept beside the shard's database,
so that a lookup over a set of shards passes over a shard lacking a word of the term without
opening it (docs/collection.md, "Shards": "The word list").

At the end of an ingest, each shard it wrote is *finished* (:func:`finish_shard`): its two
full-text indexes are merged into one segment each (FTS5 ``optimize``: a lookup then reads one
segment instead of a dozen), it is left in SQLite's rollback-journal mode (a reader opens it in
half the time of a WAL database: no shared-memory file), and the tokens of its text index (``paragraphs_fts``, as FTS5
tokenized them: ``fts5vocab``) and of its pair index (``paragraph_pairs``: each two adjacent
tokens, ``first|second``; a pair token never equals a word token) are written to ``words.bin``
beside ``collection.sqlite``: a header line, then the sorted 8-byte hashes of the tokens
(BLAKE2b; two tokens sharing a hash only keep a shard that could have been passed over, never
the reverse). With the pairs, a shard that holds every word of a term of several words but
never two of them side by side is passed over too (:func:`~statinterp.text.term_match.may_match`).

The header records the database file's size and modification time when the list was made. A
list whose database has changed since (a later write by anything that did not finish the shard,
a copy that did not keep modification times), or whose database has a write-ahead log with
unmerged writes beside it, is not used: the shard is then asked, as without a list. A list can
only make a lookup skip work, never change what it finds.

**Reading a set.** A set of shards read as one collection (docs/collection.md, "Reading a set of shards").

:func:`open_collection` opens a collection folder for reading, whichever kind it is: a
single-file collection (:class:`~statinterp.collection.store.Collection`) or a shard set
(:class:`ShardSet`: a folder with ``manifest.json``).
``find``, ``rank --collection``, ``review --collection``, ``collection info`` and the Python
API open collections with it.

A :class:`ShardSet` and a single-file collection answer one read interface, written once in
:class:`~statinterp.collection.store.Reader` over their parts (a single file is one part, a set
one part per shard): lookups run over the *selected* shards (all, unless ``shards=`` names some:
``--shard court=...``), ``find``'s side by side (:func:`each_part`: a thread pool; SQLite
releases the GIL while it searches), merged in case id order (a case lies in one shard, and case
and opinion ids are those of a single-file collection of the same sources), so its tables, zip
and ranking are those of the single file; reads by id go to the shard holding the case or
opinion; statistics are sums over the shards (or the selected ones, ``statistics="selected"``);
``meta`` and ``info`` give the set's totals, with one entry per shard. What the set adds is
what is its own: the manifest, the selection, the word lists, and the checks that a shard
lies inside the set and holds the shard it is listed as.

A shard the manifest lists but that is missing, or whose database is damaged, is one
:class:`~statinterp.errors.InputError` naming the shard's file (exit status 2).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import mmap
import os
import re
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from statinterp.cache import files as atomic
from statinterp.cache.files import NotRegularFile, TooLarge, read_regular
from statinterp.collection.store import FILENAME, SHARD_KEY, Collection, Reader, damage_named, database_path
from statinterp.corpus.authority import CaseFilter
from statinterp.errors import InputError, StatinterpWarning, UsageError, closest_names, did_you_mean, parse_json
from statinterp.sources.records import CaseRecord
from statinterp.text.term_match import holders_of_term, list_questions, may_match

__all__ = ["IdCounter", "LOCK", "MANIFEST", "MANIFEST_KIND", "MANIFEST_VERSION", "Manifest",
           "SET_WORDS_FILE", "SHARD_KEYS", "STATISTICS_CHOICES", "SetWords", "ShardEntry", "ShardSet",
           "ShardWords", "ShardedWriter", "WORDS_FILE", "each_part", "finish_shard", "finish_stale",
           "is_shard_set", "open_collection", "parse_shard_selection", "refresh_list", "reporter_of",
           "shard_folder_name", "shard_key", "token_hash", "write_set_words", "write_words"]


# Keys, manifest, ids and the writer of a set of shards

#: The manifest's file name inside a shard set's folder.
MANIFEST = "manifest.json"
#: The file a shard set's folder holds while an ingest into it has not finished (the meta row
#: ``ingest_in_progress`` of a single-file collection).
INGEST_MARKER = "ingest-in-progress.json"
#: A manifest larger than this is refused before it is read (one entry takes about 100 bytes).
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
MANIFEST_KIND = "statinterp-shard-set"
MANIFEST_VERSION = 1
#: What a case's shard can be chosen by (``ingest --shard-by``).
SHARD_KEYS = ("court", "jurisdiction", "reporter", "source")
#: The key value of a case that has none (no court, no citation, ...).
UNKNOWN = "unknown"

_VOLUME_REPORTER_PAGE = re.compile(r"^\s*\d+\s+(.+?)\s+\d+\s*$")


def reporter_of(record: CaseRecord) -> str:
    """The reporter of a case's first citation (official first: ``"212 Marl. App. 341"`` ->
    ``"Marl. App."``); a citation that is not ``VOLUME REPORTER PAGE`` gives its words without
    numbers; no citation gives :data:`UNKNOWN`."""
    if not record.citations:
        return UNKNOWN
    cite = record.official_citation or record.citations[0][1]
    match = _VOLUME_REPORTER_PAGE.match(cite)
    if match:
        return match.group(1)
    words = " ".join(w for w in cite.split() if not any(ch.isdigit() for ch in w))
    return words or UNKNOWN


def shard_key(record: CaseRecord, by: str) -> str:
    """The shard a case belongs to when shards are chosen by ``by`` (one of :data:`SHARD_KEYS`)."""
    if by == "reporter":
        value = reporter_of(record)
    elif by in ("court", "jurisdiction", "source"):
        value = getattr(record, by)
    else:
        raise UsageError(f"cannot shard by {by!r}; use one of {', '.join(SHARD_KEYS)}")
    value = " ".join(str(value).split())
    return value or UNKNOWN


def shard_folder_name(key: str) -> str:
    """A shard's folder name (relative to the set's folder): readable, safe on every file
    system, and distinct for distinct keys (a hash of the key ends it)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", key).strip("-.")[:48] or "shard"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"shards/{slug}-{digest}"


@dataclass(frozen=True)
class ShardEntry:
    """One shard of a set: its key value and its collection folder (relative to the set)."""

    key: str
    folder: str


@dataclass
class Manifest:
    """``manifest.json``: what a shard set holds.

    ``{"kind": "statinterp-shard-set", "version": 1, "shard_by": "court",
    "shards": [{"key": "...", "folder": "shards/..."}, ...]}``: shards in order of key (code
    point order), each folder an ordinary collection folder relative to the set's folder."""

    shard_by: str
    shards: list[ShardEntry] = field(default_factory=list)

    def folder_of(self, root: str | Path, key: str) -> Path:
        for entry in self.shards:
            if entry.key == key:
                return Path(root) / entry.folder
        raise KeyError(key)

    def add(self, key: str) -> ShardEntry:
        """The shard of ``key``, added (in key order) if new."""
        for entry in self.shards:
            if entry.key == key:
                return entry
        entry = ShardEntry(key, shard_folder_name(key))
        self.shards.append(entry)
        self.shards.sort(key=lambda e: e.key)
        return entry

    def as_dict(self) -> dict:
        return {"kind": MANIFEST_KIND, "version": MANIFEST_VERSION, "shard_by": self.shard_by,
                "shards": [{"key": e.key, "folder": e.folder} for e in self.shards]}

    def save(self, root: str | Path) -> None:
        """Write the manifest atomically (a reader sees the old one or the new one)."""
        text = json.dumps(self.as_dict(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        atomic.write_text(Path(root) / MANIFEST, text, force=True)

    @classmethod
    def load(cls, root: str | Path) -> Manifest:
        path = Path(root) / MANIFEST
        try:  # capped (never read whole whatever its size) and parsed with bounded depth and values
            raw = parse_json(read_regular(path, MAX_MANIFEST_BYTES), path)
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
        except (NotRegularFile, TooLarge) as exc:
            raise InputError(path, f"cannot be read: {exc}; a manifest is a small JSON file") from None
        except ValueError as exc:
            raise InputError(path, f"is not JSON ({exc})") from None
        if not isinstance(raw, dict) or raw.get("kind") != MANIFEST_KIND:
            raise InputError(path, f"is not a statinterp shard manifest (field 'kind' is not {MANIFEST_KIND!r})")
        if raw.get("version") != MANIFEST_VERSION:
            raise InputError(path, f"has manifest version {raw.get('version')!r}; this statinterp reads version "
                             f"{MANIFEST_VERSION}")
        if raw.get("shard_by") not in SHARD_KEYS:
            raise InputError(path, f"field 'shard_by' is {raw.get('shard_by')!r}, not one of {', '.join(SHARD_KEYS)}")
        shards = raw.get("shards")
        if not isinstance(shards, list):
            raise InputError(path, "field 'shards' is not a list")
        entries = []
        for i, item in enumerate(shards):
            if not (isinstance(item, dict) and isinstance(item.get("key"), str)
                    and isinstance(item.get("folder"), str)):
                raise InputError(path, f"shard {i}: needs string fields 'key' and 'folder'")
            folder = item["folder"]  # a string: a set may list thousands of shards
            if os.path.isabs(folder) or folder.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", folder):
                raise InputError(path, f"shard {i}: field 'folder' must be a path inside the set ({item['folder']!r})")
            entries.append(ShardEntry(item["key"], item["folder"]))
        return cls(raw["shard_by"], entries)

    def folders(self, root: str | Path) -> Iterator[tuple[str, Path]]:
        for entry in self.shards:
            yield entry.key, Path(root) / entry.folder


#: The lock file of a shard set (hidden; held by the process that ingests into the set).
LOCK = ".ingest.lock"


def _lock_set(root: Path):
    """Hold the set's lock (an ``flock`` on :data:`LOCK`) until the returned file is closed: one
    ingest at a time allocates the set's ids. Refuses with one line if another holds it."""
    import fcntl

    fh = open(root / LOCK, "a+b")  # noqa: SIM115 - held open: the lock lasts as long as the file
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise UsageError(f"{root}: another ingest is writing this shard set; wait for it to end") from None
    return fh


def finish_set(root: str | Path) -> tuple[int, list[Path]]:
    """Finish the shards of the set in ``root`` written since their word lists were made
    (:func:`~statinterp.collection.shards.finish_stale`; ``ingest`` does it itself at its
    end), holding the set's lock: (the number of shards, the folders finished)."""
    root = Path(root)
    manifest = Manifest.load(root)
    lock = _lock_set(root)
    try:
        return len(manifest.shards), finish_shards(root, manifest)
    finally:
        lock.close()


def finish_shards(root: Path, manifest: Manifest, finish=None, unwritten: set[Path] | None = None) -> list[Path]:
    """Finish the shards of the set in ``root`` written since their word lists were made
    (:func:`~statinterp.collection.shards.finish_stale`: ``finish``, ``unwritten`` as there),
    then write the set's word index from their lists
    (:func:`~statinterp.collection.shards.write_set_words`); the folders finished."""

    shards = list(manifest.folders(root))
    finished = finish_stale([folder for _, folder in shards], finish, unwritten)
    write_set_words(root, shards)
    return finished


def is_shard_set(folder: str | Path) -> bool:
    """Whether ``folder`` is a shard set (holds a manifest)."""
    return (Path(folder) / MANIFEST).is_file()


@dataclass
class IdCounter:
    """The next case and opinion ids of a shard set: one past the largest stored in any shard."""

    next_case: int = 1
    next_opinion: int = 1

    def allocate(self, n_opinions: int) -> tuple[int, int]:
        """Ids for a case with ``n_opinions`` opinions: (case id, its first opinion's id)."""
        ids = (self.next_case, self.next_opinion)
        self.next_case += 1
        self.next_opinion += n_opinions
        return ids


class ShardedWriter:
    """Writes prepared cases into the shards of a set (``ingest --shard-by``), one
    :class:`~statinterp.collection.store.CollectionWriter` per shard, with ids allocated over the
    whole set in record order (:class:`IdCounter`). The same interface as ``CollectionWriter``
    for :func:`statinterp.collection.ingest.ingest`: :meth:`write`, :meth:`record_source`."""

    def __init__(self, root: str | Path, shard_by: str, analysis: dict | None = None):
        from statinterp.collection.store import FILENAME

        if shard_by not in SHARD_KEYS:
            raise UsageError(f"cannot shard by {shard_by!r}; use one of {', '.join(SHARD_KEYS)}")
        self.root = Path(root)
        self.analysis = analysis
        if (self.root / FILENAME).exists():
            raise UsageError(f"{self.root} is a single-file collection; give a new folder for a collection in shards "
                             "(or leave out --shard-by)")
        if is_shard_set(self.root):
            self.manifest = Manifest.load(self.root)
            if self.manifest.shard_by != shard_by:
                raise UsageError(f"{self.root} holds shards by {self.manifest.shard_by}, not by {shard_by}: use "
                                 f"--shard-by {self.manifest.shard_by} or a new folder")
        else:
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                from statinterp.errors import OutputError

                raise OutputError(f"cannot create the collection folder {self.root}: {exc.strerror or exc}") from None
            if any(self.root.iterdir()):
                raise UsageError(f"{self.root} is a folder with other files and no {MANIFEST}; give an empty or new "
                                 "folder for a collection in shards")
            self.manifest = Manifest(shard_by)
            self.manifest.save(self.root)
        self._lock = _lock_set(self.root)

        #: The shards whose word list was up to date when this writer began (before it opened them).
        self.listed_at_start = {key for key, folder in self.manifest.folders(self.root)
                                if ShardWords.load(folder) is not None}
        #: The shards in which this writer stored (or replaced) cases.
        self.written: set[str] = set()
        self.writers: dict = {}
        self.counter = IdCounter()
        for key, _ in self.manifest.folders(self.root):
            case_max, opinion_max = self._writer(key).max_ids()
            self.counter.next_case = max(self.counter.next_case, case_max + 1)
            self.counter.next_opinion = max(self.counter.next_opinion, opinion_max + 1)
        self._source_cases: dict[str, int] = {}

    def mark_ingest(self, command: str | None = None) -> None:
        """Record in the set's folder (:data:`INGEST_MARKER`) that an ingest has begun;
        :meth:`unmark_ingest` removes it at a clean finish."""
        import datetime

        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        atomic.write_text(self.root / INGEST_MARKER, json.dumps({"command": command or "", "started_at": now},
                                                                ensure_ascii=False) + "\n", force=True)

    def unmark_ingest(self) -> None:
        (self.root / INGEST_MARKER).unlink(missing_ok=True)
        atomic.fsync_dir(self.root)

    def _writer(self, key: str):
        from statinterp.collection.store import CollectionWriter

        writer = self.writers.get(key)
        if writer is None:
            is_new = all(e.key != key for e in self.manifest.shards)
            entry = self.manifest.add(key)
            writer = CollectionWriter(self.root / entry.folder, self.analysis)
            writer.claim_shard(key)
            self.writers[key] = writer
            if is_new:  # listed once its folder holds a collection
                self.manifest.save(self.root)
        return writer

    def known_hash(self, record: CaseRecord) -> str | None:
        """The content hash stored for the record's case in the shard of its key (None: not stored)."""
        key = shard_key(record, self.manifest.shard_by)
        if key not in self.writers and all(e.key != key for e in self.manifest.shards):
            return None  # no such shard yet: not stored (and no shard made for a lookup)
        return self._writer(key).known_hash(record.source, record.source_id)

    def shard_folder(self, key: str) -> Path:
        """The folder of the shard of ``key``, its collection made and listed first if new (for
        writers in other processes: this one keeps no connection to it, :meth:`release`)."""
        if all(e.key != key for e in self.manifest.shards):
            self._writer(key)
            self.release()
        return self.manifest.folder_of(self.root, key)

    def release(self) -> None:
        """Close this process's connections to the shards (they reopen when next needed)."""
        for writer in self.writers.values():
            writer.close()
        self.writers = {}

    def close(self) -> None:
        self.release()
        self._lock.close()  # releases the lock

    def unwritten(self, written: set[str]) -> set[Path]:
        """The folders of the shards whose word list was up to date when this writer began and
        that are not in ``written`` (keys of shards in which cases were stored)."""
        return {folder for key, folder in self.manifest.folders(self.root)
                if key in self.listed_at_start and key not in written}

    def finish(self, finish=None, written: set[str] | None = None) -> list[Path]:
        """Finish every shard written since its word list was made (FTS5 ``optimize`` and a new
        word list: :func:`~statinterp.collection.shards.finish_stale`; a shard this writer
        only opened has its list refreshed); the folders finished. ``finish``, ``written``: the
        Dask engine's (its workers finish the shards; the cases it stored)."""
        self.release()
        written = self.written if written is None else written
        return finish_shards(self.root, self.manifest, finish, self.unwritten(written))

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        try:
            if exc_type is None:  # a stopped ingest leaves lists that no longer match: not used, redone next time
                self.finish()
        finally:
            self.close()

    def write(self, prepared, reprepare=None) -> dict[str, int]:
        """Store a batch: ids are allocated in the batch's order to the cases that will be stored
        (new or changed), then each shard stores its cases in one transaction. ``prepared`` may
        hold :class:`~statinterp.collection.ingest.Unchanged` records (counted, not stored)."""
        by_shard: dict[str, list] = {}
        allocated: dict[tuple[str, str], tuple[int, int]] = {}
        counts = {"added": 0, "replaced": 0, "unchanged": 0, "opinions": 0, "paragraphs": 0}
        for case in prepared:
            rec = case.record
            key = shard_key(rec, self.manifest.shard_by)
            writer = self._writer(key)
            self._source_cases[key] = self._source_cases.get(key, 0) + 1
            if writer.known_hash(rec.source, rec.source_id) == case.content_hash:
                counts["unchanged"] += 1
                continue
            by_shard.setdefault(key, []).append(case)
            allocated[(rec.source, rec.source_id)] = self.counter.allocate(len(rec.opinions))
        for key, cases in by_shard.items():
            self.written.add(key)
            part = self.writers[key].write(cases, reprepare, ids=lambda r: allocated[(r.source, r.source_id)])
            for name in counts:
                counts[name] += part[name]
        return counts

    def record_source(self, path: str, fmt: str, cases: int, skipped: int) -> None:
        """Record a source in each shard that received its cases (with the cases each received)."""
        for key, n in self._source_cases.items():
            self.writers[key].record_source(path, fmt, n, skipped)
        self._source_cases = {}


# Each shard's word list, and the set's word index

#: The word list's file name, beside the shard's ``collection.sqlite``.
WORDS_FILE = "words.bin"
#: The first bytes of a word list (its format's version; 2: the pair index's tokens too).
MAGIC = b"statinterp-words 2\n"
#: The set's word index's file name, beside the set's ``manifest.json``.
SET_WORDS_FILE = "set-words.bin"
#: The first bytes of a set's word index (its format's version; 2: made of lists of version 2).
SET_MAGIC = b"statinterp-set-words 2\n"
#: A word list larger than this is mapped from its file, a smaller one read whole.
MAPPED_ABOVE = 1 << 20


def _hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


#: A token's 8-byte hash in a word list (the same in every process and on every machine).
token_hash = functools.lru_cache(maxsize=1 << 14)(_hash)


def _fingerprint(database: str | Path) -> dict[str, int] | None:
    """The database file's size and modification time; ``None`` when a write-ahead log with
    unmerged writes lies beside it (the file alone then is not the collection's state)."""
    database = os.fspath(database)
    wal = database + "-wal"
    if os.access(wal, os.F_OK):  # no exception raised where there is none (a finished shard): a set asks each shard
        with contextlib.suppress(FileNotFoundError):
            if os.stat(wal).st_size > 0:
                return None
    stat = os.stat(database)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _index_tokens(db: sqlite3.Connection, table: str) -> Iterator[str]:
    """The tokens of a full-text index (``fts5vocab``)."""
    db.execute(f"CREATE VIRTUAL TABLE temp.shard_words USING fts5vocab(main, {table}, row)")
    try:
        for (token,) in db.execute("SELECT term FROM temp.shard_words"):
            yield token
    finally:
        db.execute("DROP TABLE temp.shard_words")


def write_words(folder: str | Path) -> int:
    """Write the word list of the collection in ``folder`` (a shard; nothing must be writing it)
    and return the number of its tokens. Written to a temporary file first, then renamed: a list
    is whole or absent."""
    folder = Path(folder)
    database = database_path(folder)
    db = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        pairs = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'paragraph_pairs'").fetchone() is not None
        tables = ("paragraphs_fts", "paragraph_pairs") if pairs else ("paragraphs_fts",)
        hashes = np.unique(np.fromiter((_hash(t) for table in tables for t in _index_tokens(db, table)), dtype="<u8"))
    finally:
        db.close()
    fingerprint = _fingerprint(database)
    if fingerprint is None:  # cannot happen once every writer has closed; then no list
        return 0
    _write_list(folder, {**fingerprint, "tokens": int(hashes.size), "pairs": pairs}, hashes.tobytes())
    return int(hashes.size)


def finish_shard(folder: str | Path) -> int:
    """After an ingest wrote the shard in ``folder``: merge each of its full-text indexes into one
    segment (FTS5 ``optimize``), leave it in SQLite's rollback-journal mode, then write its word
    list (:func:`write_words`). Returns the number of tokens in the list (words and pairs)."""
    from statinterp.sqlite import transaction

    database = database_path(Path(folder))
    db = sqlite3.connect(database, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 30000")
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE name IN ('paragraphs_fts', 'paragraph_pairs')")}
        with transaction(db):
            for table in sorted(tables):
                db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    _rollback_journal(database)
    return write_words(folder)


def _rollback_journal(database: Path) -> None:
    """Leave the database in rollback-journal mode: a reader opens it in about half the time of
    a WAL one (no shared-memory file), and a set's lookup opens many shards. The next writer
    sets WAL again. While a reader holds it open the switch cannot be made: it stays in WAL
    mode, which is only slower."""
    db = sqlite3.connect(database, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 2000")
        db.execute("PRAGMA journal_mode = DELETE")
    except sqlite3.OperationalError:
        pass
    finally:
        db.close()


def refresh_list(folder: str | Path) -> bool:
    """For a shard opened by a writer that stored nothing in it (its text index as its list says):
    leave it in rollback-journal mode again and record the database's new size and modification
    time in its list, whose tokens stay. False (nothing done) when it has no list to refresh."""
    folder = Path(folder)
    try:
        data = (folder / WORDS_FILE).read_bytes()
        header, offset = _header(data)
    except (OSError, ValueError):
        return False
    _rollback_journal(database_path(folder))
    fingerprint = _fingerprint(database_path(folder))
    if fingerprint is None:
        return False
    _write_list(folder, {**header, **fingerprint}, data[offset:])
    return True


def _header(data: bytes) -> tuple[dict, int]:
    """A list's header (fingerprint and number of tokens) and where its hashes start; ValueError
    when ``data`` does not start as a word list."""
    if not data.startswith(MAGIC):
        raise ValueError("not a word list")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):end])
    if not isinstance(header, dict):
        raise ValueError("not a word list")
    return header, end + 1


def _write_list(folder: Path, header: dict, hashes: bytes) -> None:
    """The list file written whole: to a temporary file first, then renamed."""
    partial = folder / (WORDS_FILE + ".partial")
    with open(partial, "wb") as fh:
        fh.write(MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n")
        fh.write(hashes)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, folder / WORDS_FILE)


def finish_stale(folders: list[Path], finish: Callable[[list[Path]], object] | None = None,
                 unwritten: set[Path] | None = None) -> list[Path]:
    """Finish (:func:`finish_shard`) each shard of ``folders`` whose word list is missing or no
    longer describes its database (it was written since); return those folders. ``unwritten``:
    shards whose list was up to date when the ingest began and in which it stored no case (a
    writer opened them, which changes the database file, not its text): their lists are only
    refreshed (:func:`refresh_list`). ``finish``: how to finish the rest (e.g. on a Dask
    cluster), else one after the other here."""
    stale = [f for f in folders if ShardWords.load(f) is None]
    todo = [f for f in stale if not (unwritten and f in unwritten and refresh_list(f))]
    if todo:
        if finish is None:
            for folder in todo:
                finish_shard(folder)
        else:
            finish(todo)
    return todo


class ShardWords:
    """A shard's word list, read for lookups (:meth:`load`)."""

    def __init__(self, hashes: np.ndarray, fingerprint: dict[str, int] | None = None, pairs: bool = False):
        self.hashes = hashes
        #: The database's size and modification time the list describes.
        self.fingerprint = fingerprint or {}
        #: Whether the list holds the pair index's tokens too (a shard without the pair index: not).
        self.pairs = pairs

    @classmethod
    def load(cls, folder: str | Path) -> ShardWords | None:
        """The word list of the shard in ``folder``; ``None`` when it has none, or one that does
        not describe its database as it is now (see the module's text): the shard is then asked.
        A large list is mapped from the file, not read (a lookup reads the few pages it needs)."""
        folder = os.fspath(folder)
        try:
            with open(os.path.join(folder, WORDS_FILE), "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                head = fh.read() if size <= MAPPED_ABOVE else fh.read(4096)
                header, offset = _header(head)
                fingerprint = _fingerprint(os.path.join(folder, FILENAME))
                if fingerprint is None or any(header.get(k) != v for k, v in fingerprint.items()):
                    return None
                n = int(header.get("tokens", 0))
                if offset + 8 * n <= len(head):
                    data: bytes | mmap.mmap = head
                else:
                    data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        if len(data) != offset + 8 * n:
            return None
        return cls(np.frombuffer(data, dtype="<u8", count=n, offset=offset), fingerprint, header.get("pairs") is True)

    def _held(self, hashes: np.ndarray) -> np.ndarray:
        """Per hash of ``hashes`` (:func:`token_hash`), whether the shard's full-text indexes may hold
        its token (false: the token is in no paragraph of the shard)."""
        if self.hashes.size == 0:
            return np.zeros(hashes.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
        return np.asarray(self.hashes[at] == hashes)

    def holds(self, tokens: Iterable[str]) -> frozenset[str]:
        """Those of ``tokens`` that the shard's full-text indexes may hold (those left out it holds
        in no paragraph)."""
        tokens = list(tokens)
        hashes = np.fromiter((token_hash(t) for t in tokens), dtype="<u8", count=len(tokens))
        return frozenset(t for t, h in zip(tokens, self._held(hashes), strict=True) if h)

    def may_match(self, term: str) -> bool:
        """Whether a paragraph of the shard may match ``term`` (:func:`~statinterp.text.term_match.may_match`
        of the tokens and, if the list has them, the pairs it holds): false when a word of the term
        has no spelling all of whose tokens the shard holds or, with pairs, when two adjacent words
        of the term never stand side by side in it; then the shard need not be asked."""
        return may_match(term, self.holds(list_questions(term, self.pairs)), pairs_known=self.pairs)


class SetWords:
    """A set's word index (:data:`SET_WORDS_FILE`): per token hash, the shards whose word list
    holds it, made from the shards' lists when the set is finished (:func:`write_set_words`). A
    lookup reads this one file instead of every shard's list; for a shard whose database has
    changed since (its fingerprint differs), :meth:`shard` gives ``None`` and the shard's own list
    (or the shard itself) is asked."""

    def __init__(self, fingerprints: dict[str, dict[str, int]], hashes: np.ndarray, offsets: np.ndarray,
                 postings: np.ndarray, keys: list[str], pairs: dict[str, bool] | None = None):
        self._fingerprints = fingerprints
        self._index = {key: i for i, key in enumerate(keys)}
        self._pairs = pairs or {}
        self.hashes, self.offsets, self.postings = hashes, offsets, postings
        self._masks: dict[bytes, list[int]] = {}
        self._token_masks: dict[tuple[str, ...], list[int]] = {}
        self._for_term: dict[tuple[str, bool], int] = {}

    @classmethod
    def load(cls, root: str | Path) -> SetWords | None:
        """The word index of the set in ``root``; ``None`` when it has none (or a damaged one)."""
        try:
            with open(os.path.join(os.fspath(root), SET_WORDS_FILE), "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                data: bytes | mmap.mmap = (fh.read() if size <= MAPPED_ABOVE else
                                           mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
            if data[:len(SET_MAGIC)] != SET_MAGIC:
                return None
            end = data.find(b"\n", len(SET_MAGIC))
            header = json.loads(data[len(SET_MAGIC):end])
            n, p = int(header["hashes"]), int(header["postings"])
            posting_type = np.dtype(header["posting_type"])
            start = end + 1
            if len(data) != start + 8 * n + 4 * (n + 1) + posting_type.itemsize * p:
                return None
            hashes = np.frombuffer(data, dtype="<u8", count=n, offset=start)
            offsets = np.frombuffer(data, dtype="<u4", count=n + 1, offset=start + 8 * n)
            postings = np.frombuffer(data, dtype=posting_type, count=p, offset=start + 12 * n + 4)
            keys = [entry["key"] for entry in header["shards"]]
            fingerprints = {entry["key"]: {"size": entry["size"], "mtime_ns": entry["mtime_ns"]}
                            for entry in header["shards"]}
            pairs = {entry["key"]: entry.get("pairs") is True for entry in header["shards"]}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return cls(fingerprints, hashes, offsets, postings, keys, pairs)

    def shard(self, key: str, folder: str | Path) -> ShardWords | None:
        """The word list of shard ``key`` (in ``folder``) as this index holds it; ``None`` when the
        index does not describe the shard's database as it is now."""
        known = self._fingerprints.get(key)
        if known is None:
            return None
        try:
            fingerprint = _fingerprint(os.path.join(os.fspath(folder), FILENAME))
        except OSError:
            return None
        if fingerprint != known:
            return None
        return _ShardInSet(self, self._index[key], fingerprint, self._pairs.get(key, False))

    def holder_masks(self, hashes: np.ndarray) -> list[int]:
        """Per hash of ``hashes``, the shards whose list holds it, as a bit mask of their indexes
        (bit ``i``: shard ``i``; remembered: every shard of a lookup asks the same)."""
        remembered = self._masks.get(hashes.tobytes())
        if remembered is not None:
            return remembered
        found = [0] * hashes.size
        if self.hashes.size:
            at = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
            bits = np.zeros(len(self._index) + 8, dtype=bool)
            for n, (i, h) in enumerate(zip(at.tolist(), hashes.tolist(), strict=True)):
                if self.hashes[i] == h:
                    bits[:] = False
                    bits[self.postings[self.offsets[i]:self.offsets[i + 1]]] = True
                    found[n] = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
        if len(self._masks) < 4096:
            self._masks[hashes.tobytes()] = found
        return found

    def token_masks(self, tokens: tuple[str, ...]) -> list[int]:
        """:meth:`holder_masks` of the tokens ``tokens`` (remembered)."""
        remembered = self._token_masks.get(tokens)
        if remembered is None:
            remembered = self.holder_masks(np.fromiter((token_hash(t) for t in tokens), dtype="<u8",
                                                       count=len(tokens)))
            if len(self._token_masks) < 4096:
                self._token_masks[tokens] = remembered
        return remembered

    def shards_for(self, term: str, pairs: bool) -> int:
        """The shards in which ``term`` may match by their lists as this index holds them, as a bit
        mask of their indexes (:func:`~statinterp.text.term_match.holders_of_term`; ``pairs``: the
        lists hold the pair index's tokens), found once for all shards (remembered per term)."""
        remembered = self._for_term.get((term, pairs))
        if remembered is None:
            tokens = list_questions(term, pairs)
            masks = dict(zip(tokens, self.token_masks(tokens), strict=True))
            remembered = holders_of_term(term, masks.__getitem__, pairs_known=pairs)
            if len(self._for_term) < 4096:
                self._for_term[term, pairs] = remembered
        return remembered


class _ShardInSet(ShardWords):
    """One shard's word list read from its set's word index (:class:`SetWords`)."""

    def __init__(self, words: SetWords, index: int, fingerprint: dict[str, int], pairs: bool):
        super().__init__(np.zeros(0, dtype="<u8"), fingerprint, pairs)
        self._set, self._i = words, index

    def holds(self, tokens: Iterable[str]) -> frozenset[str]:
        tokens = tuple(tokens)
        i = self._i
        return frozenset(t for t, mask in zip(tokens, self._set.token_masks(tokens), strict=True) if mask >> i & 1)

    def may_match(self, term: str) -> bool:
        return bool(self._set.shards_for(term, self.pairs) >> self._i & 1)


def write_set_words(root: str | Path, shards: Iterable[tuple[str, Path]]) -> int:
    """Write the word index of the set in ``root`` (:class:`SetWords`) from the word lists of
    ``shards`` (key, folder) that describe their databases (a shard without one is left out: it is
    asked); return the number of shards in it. Written whole, then renamed."""
    entries: list[dict] = []
    parts: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for key, folder in shards:
        words = ShardWords.load(folder)
        if words is None:
            continue
        owners.append(np.full(words.hashes.size, len(entries), dtype="<u4"))
        parts.append(np.asarray(words.hashes))
        entries.append({"key": key, **words.fingerprint, "pairs": words.pairs})
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype="<u8")
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype="<u4")
    order = np.lexsort((owner, hashes))
    hashes, owner = hashes[order], owner[order]
    distinct, first = np.unique(hashes, return_index=True)
    offsets = np.append(first, hashes.size).astype("<u4")
    posting_type = "<u2" if len(entries) <= 1 << 16 else "<u4"
    header = {"shards": entries, "hashes": int(distinct.size), "postings": int(owner.size),
              "posting_type": posting_type}
    root = Path(root)
    partial = root / (SET_WORDS_FILE + ".partial")
    with open(partial, "wb") as fh:
        fh.write(SET_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n")
        fh.write(distinct.astype("<u8").tobytes())
        fh.write(offsets.tobytes())
        fh.write(owner.astype(posting_type).tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, root / SET_WORDS_FILE)
    return len(entries)


# The set read as one collection

#: Where a selection of shards takes its background statistics: every shard, or the selected ones.
STATISTICS_CHOICES = ("all", "selected")
#: At most this many threads look up shards side by side.
MAX_THREADS = 8
#: The environment variable that sets how many threads look up shards side by side.
THREADS_VARIABLE = "STATINTERP_SHARD_THREADS"


def lookup_threads(shards: int) -> int:
    """How many threads look up ``shards`` shards side by side: ``STATINTERP_SHARD_THREADS`` if
    set (a whole number from 1), else one per CPU up to :data:`MAX_THREADS`; never more than the
    shards."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"{THREADS_VARIABLE}={value!r}: give a whole number of threads from 1, or unset it")
        wanted = int(value)
    else:
        wanted = min(os.cpu_count() or 1, MAX_THREADS)
    return max(1, min(shards, wanted))

T = TypeVar("T")


def parse_shard_selection(values: Iterable[str], manifest: Manifest, root: str | Path) -> list[str]:
    """The shard keys named by ``--shard KEY=VALUE`` options (``values``), in manifest order.

    ``KEY`` must be the set's ``shard_by``; everything after the first ``=`` is the value, so
    values may hold commas, spaces and ``=``. A value no shard has is a :class:`UsageError`
    naming close matches."""
    keys = [e.key for e in manifest.shards]
    chosen: set[str] = set()
    for value in values:
        name, sep, wanted = value.partition("=")
        if not sep or name.strip() != manifest.shard_by:
            some = ", ".join(repr(k) for k in keys[:5]) + (", ..." if len(keys) > 5 else "")
            raise UsageError(f"--shard {value!r}: {root} is sharded by {manifest.shard_by}; give --shard "
                             f"{manifest.shard_by}=VALUE (values: {some or 'none, the set is empty'})")
        if wanted not in keys:
            close = closest_names(wanted, keys)
            hint = did_you_mean(close) or f"its {len(keys)} shards are listed by `statinterp collection info {root}`"
            raise UsageError(f"--shard {value!r}: no shard of {root} has {manifest.shard_by} {wanted!r}; {hint}")
        chosen.add(wanted)
    return [k for k in keys if k in chosen]


def open_collection(folder: str | Path, shards: Sequence[str] | None = None,
                    statistics: str = "all", case_filter: CaseFilter | None = None) -> Collection | ShardSet:
    """Open a collection folder for reading: a :class:`ShardSet` if it holds a shard manifest,
    else a single-file :class:`~statinterp.collection.store.Collection`.

    ``shards``: ``KEY=VALUE`` selections (``--shard``) restricting the lookup to some shards;
    ``statistics``: ``"all"`` (the whole set's statistics, the default) or ``"selected"`` (the
    selected shards' alone). Both apply to shard sets only. ``case_filter``: lookups return only
    the cases it keeps (``restrict``: ``--court``, ``--since``, ...)."""
    if statistics not in STATISTICS_CHOICES:
        raise UsageError(f"statistics must be one of {', '.join(STATISTICS_CHOICES)}, not {statistics!r}")
    opened: Collection | ShardSet
    if is_shard_set(folder):
        opened = ShardSet.open(folder, shards, statistics)
    elif shards:
        raise UsageError(f"--shard selects shards of a set of shards; {folder} is a single-file collection")
    else:
        opened = Collection.open(folder)
    if case_filter:
        try:
            with damage_named(folder):
                opened.restrict(case_filter)
        except BaseException:
            opened.close()
            raise
    return opened


def unfinished_ingest(store: Collection | ShardSet) -> dict | None:
    """The ingest into ``store`` that began and did not finish (``command``, ``started_at``), or
    None: a single-file collection's meta row, a set's marker file (:data:`INGEST_MARKER`)."""
    from statinterp.collection.store import unfinished_ingest_of

    if isinstance(store, ShardSet):
        marker = store.folder / INGEST_MARKER
        if not marker.exists():
            return None
        try:
            value = json.loads(read_regular(marker, 1 << 20))
        except (OSError, ValueError):
            value = None
        return value if isinstance(value, dict) else {"command": "", "started_at": ""}
    return unfinished_ingest_of(store.meta())


def unfinished_note(folder: str | Path, ingest: dict) -> str:
    """One line: ``folder``'s ingest did not finish, and the command that completes it."""
    command = ingest.get("command") or "the same `statinterp ingest` command as before"
    when = f" (begun {ingest['started_at']})" if ingest.get("started_at") else ""
    return (f"{folder}: an ingest into it did not finish{when}: the collection is consistent but may lack cases; "
            f"complete it by running {command}")


def check_finished(store: Collection | ShardSet, strict: bool = False) -> None:
    """Warn (a :class:`StatinterpWarning`: one ``statinterp: warning:`` line) that an ingest into
    ``store`` did not finish, or with ``strict`` raise :class:`InputError` (exit 2)."""
    ingest = unfinished_ingest(store)
    if ingest is None:
        return
    note = unfinished_note(store.folder, ingest)
    if strict:
        raise InputError(store.folder, note.split(": ", 1)[1] + " (--strict)")
    warnings.warn(StatinterpWarning(note), stacklevel=2)


def each_part(collection: Reader | Any, func: Callable[..., T], *args: Any,
              located: Callable[[T], Iterable[tuple[int, int]]] | None = None, term: str | None = None) -> list[T]:
    """``func(part, *args)`` for each part of ``collection`` that lookups search
    (:meth:`~statinterp.collection.store.Reader.map_selected`: a single file itself, a shard
    set's selected shards side by side, in shard order; ``located``, ``term``: as there). Any
    other object with a collection's read methods (an in-memory collection of a study) is one
    part."""
    if isinstance(collection, Reader):
        return collection.map_selected(func, *args, located=located, term=term)
    return [func(collection, *args)]


class ShardSet(Reader):
    """A shard set opened for reading as one collection (read-only; a context manager): the
    :class:`~statinterp.collection.store.Reader` whose parts are the shards, opened when first
    used. What is its own: where the shards lie (the manifest, :class:`_Shards`: each shard
    inside the set's folder and holding the shard it is listed as), the selection
    (``--shard``), the word lists that pass over a shard unopened, and the description."""

    def __init__(self, folder: Path, manifest: Manifest, folders: dict[str, str],
                 selected: Sequence[str] | None = None, statistics: str = "all"):
        super().__init__(list(folders) if not selected else list(selected), statistics)
        self.folder = folder
        self.manifest = manifest
        self.shard_by = manifest.shard_by
        #: Every shard, by key (manifest order), opened when first used (:class:`_Shards`).
        self.shards = _Shards(folders, folder, self._prepare_part)

    @classmethod
    def open(cls, folder: str | Path, shards: Sequence[str] | None = None, statistics: str = "all") -> ShardSet:
        """The set in ``folder``. Every shard's database must be there; each is opened (and checked
        for damage) when first used, so a lookup that passes over a shard by its word list
        (:mod:`statinterp.collection.shards`) never opens it."""
        folder = Path(folder)
        manifest = Manifest.load(folder)
        selected = parse_shard_selection(shards or (), manifest, folder)
        root = os.fspath(folder)  # strings, not paths: a set may have thousands of shards
        folders = {entry.key: os.path.join(root, entry.folder) for entry in manifest.shards}
        for key, shard_folder in folders.items():
            if not os.path.isfile(os.path.join(shard_folder, FILENAME)):
                raise InputError(database_path(shard_folder), f"is missing: {folder / MANIFEST} lists it as the "
                                 f"shard {manifest.shard_by}={key!r}; restore it, or ingest the sources again "
                                 "into a new folder")
        return cls(folder, manifest, folders, selected, statistics)

    def may_hold(self, term: str) -> list[str]:
        """The selected shards in which ``term`` may match: all but those whose word list lacks a
        word of the term or, for a term of several words, holds no pair of two of its adjacent
        words (:meth:`~statinterp.collection.shards.ShardWords.may_match`; their databases are
        not opened)."""
        keep = []
        for key in self.selected:
            words = self.shards.words(key)
            if words is None or words.may_match(term):
                keep.append(key)
        return keep

    def close(self) -> None:
        self.shards.close()

    # -- the parts: the shards ----------------------------------------------------------------
    def _keys(self) -> Sequence[str]:
        return list(self.shards)

    def _part(self, key: str) -> Collection:
        return self.shards[key]

    def _part_folder(self, key: str) -> str:
        return self.shards.folder(key)

    def _opened_parts(self) -> list[Collection]:
        return [self.shards[key] for key in self.shards.opened()]

    def _lookup_keys(self, term: str | None) -> list[str]:
        return self.selected if term is None else self.may_hold(term)

    def _threads(self, parts: int) -> int:
        return lookup_threads(parts)

    def statistics_description(self) -> str:
        """Which shards the statistics come from, for reports."""
        if self.statistics == "selected" and len(self.selected) < len(self.shards):
            return (f"the shards {', '.join(repr(k) for k in self.selected)} of the shard set {self.folder} "
                    f"(by {self.manifest.shard_by})")
        return f"the shard set {self.folder} ({len(self.shards)} shards by {self.manifest.shard_by})"

    def _set_info(self, info: dict, parts: list[tuple[str, dict]]) -> dict:
        """``shard_by``, the manifest in the size, and one entry per shard under ``shards``."""
        size = (self.folder / MANIFEST).stat().st_size + info["size_bytes"]
        return {
            "collection": info["collection"], "shard_by": self.manifest.shard_by,
            **{k: v for k, v in info.items() if k != "collection"},
            "size_bytes": size,
            "bytes_per_case": round(size / info["cases"], 1) if info["cases"] else None,
            "shards": [{"key": key, "folder": str(self.shards[key].folder.relative_to(self.folder)),
                        "format": d["format"], "cases": d["cases"], "opinions": d["opinions"],
                        "paragraphs": d["paragraphs"], "size_bytes": d["size_bytes"]} for key, d in parts],
        }


class _Shards(Mapping[str, Collection]):
    """A set's shards by key, each opened (and checked for damage) when first asked for; safe to
    ask from several threads."""

    def __init__(self, folders: dict[str, str], root: Path, prepare: Callable[[Collection], None]):
        self._folders = folders
        self._root = root
        self._prepare = prepare  # applied to each shard as it opens (the set's case filter)
        self._opened: dict[str, Collection] = {}
        self._words: dict[str, ShardWords | None] = {}
        self._set_words: SetWords | None | bool = False  # False: not read yet
        self._lock = threading.Lock()
        self._real_root: str | None = None

    def folder(self, key: str) -> str:
        """The folder of shard ``key`` (a string: a lookup asks it of every shard)."""
        return self._folders[key]

    def words(self, key: str) -> ShardWords | None:
        """The word list of shard ``key`` (``None``: none that describes it as it is now), read once:
        from the set's word index (:class:`~statinterp.collection.shards.SetWords`, one file
        for every shard), else from the shard's own list."""
        if key not in self._words:
            if self._set_words is False:
                self._set_words = SetWords.load(self._root)
            words = None
            if isinstance(self._set_words, SetWords):
                words = self._set_words.shard(key, self._folders[key])
            self._words[key] = words if words is not None else ShardWords.load(self._folders[key])
        return self._words[key]

    def __getitem__(self, key: str) -> Collection:
        shard = self._opened.get(key)
        if shard is not None:
            return shard
        folder = self._folders[key]  # KeyError for an unknown key, as a dict
        self._check_inside(key, folder)
        with damage_named(folder):
            shard = Collection.open(folder)
        found = shard.meta().get(SHARD_KEY)
        if found is not None and found != key:  # a shard's database copied over another's
            shard.close()
            raise InputError(database_path(folder), f"holds the shard {found!r}, not {key!r} as the set's manifest "
                             "lists it (a shard's database copied over another's?); restore it, or ingest the "
                             "sources again into a new folder")
        shard.word_list = self.words(key)
        self._prepare(shard)
        with self._lock:
            if key in self._opened:  # another thread opened it meanwhile
                shard.close()
            else:
                self._opened[key] = shard
            return self._opened[key]

    def _check_inside(self, key: str, folder: str) -> None:
        """Refuse a shard whose folder or database lies outside the set's folder (a symbolic link
        out of the set): a set reads only what is inside it."""
        if self._real_root is None:
            self._real_root = os.path.realpath(self._root)
        inside = self._real_root.rstrip(os.sep) + os.sep
        for path in (folder, os.path.join(folder, FILENAME)):
            if not os.path.realpath(path).startswith(inside):
                raise InputError(path, f"is a symbolic link out of the set {self._root} (to "
                                 f"{os.path.realpath(path)}); a set's shards lie inside its folder: refusing to "
                                 "follow it")

    def __iter__(self) -> Iterator[str]:
        return iter(self._folders)

    def __len__(self) -> int:
        return len(self._folders)

    def __contains__(self, key: object) -> bool:
        return key in self._folders

    def opened(self) -> list[str]:
        """The keys of the shards opened so far."""
        return list(self._opened)

    def close(self) -> None:
        with self._lock:
            for shard in self._opened.values():
                shard.close()
            self._opened = {}
