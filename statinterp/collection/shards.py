"""A collection in shards: one SQLite collection per shard of the sources, under one folder.

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
write the shards side by side, one writer per shard (:mod:`statinterp.collection.dask_shards`).
Either way one ingest at a time writes a set (:data:`LOCK`).

A case belongs to the shard of its key when it is first stored; ingesting it again (changed or
not) is looked up in the shard of its current key. A case whose key value changes between two
ingests (a court renamed at the source) is therefore stored again in its new shard and stays in
its old one as well: re-ingest into a new folder after such a change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from statinterp.cache import files as atomic
from statinterp.cache.files import NotRegularFile, TooLarge, read_regular
from statinterp.errors import InputError, UsageError, parse_json
from statinterp.sources.records import CaseRecord

__all__ = ["LOCK", "MANIFEST", "MANIFEST_KIND", "MANIFEST_VERSION", "SHARD_KEYS", "IdCounter", "Manifest",
           "ShardEntry", "ShardedWriter", "is_shard_set", "reporter_of", "shard_folder_name", "shard_key"]

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
    (:func:`~statinterp.collection.shard_words.finish_stale`; ``ingest`` does it itself at its
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
    (:func:`~statinterp.collection.shard_words.finish_stale`: ``finish``, ``unwritten`` as there),
    then write the set's word index from their lists
    (:func:`~statinterp.collection.shard_words.write_set_words`); the folders finished."""
    from statinterp.collection.shard_words import finish_stale, write_set_words

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
        from statinterp.collection.shard_words import ShardWords

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
        word list: :func:`~statinterp.collection.shard_words.finish_stale`; a shard this writer
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
        hold :class:`~statinterp.collection.prepare.Unchanged` records (counted, not stored)."""
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
