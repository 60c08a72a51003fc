"""A set of shards read as one collection (docs/collection.md, "Reading a set of shards").

:func:`open_collection` opens a collection folder for reading, whichever kind it is: a
single-file collection (:class:`~statinterp.collection.store.Collection`) or a shard set
(:class:`ShardSet`: a folder with ``manifest.json``, :mod:`statinterp.collection.shards`).
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
``meta`` and ``info`` give the set's totals, with one entry per shard. What this module adds is
what is a set's own: the manifest, the selection, the word lists, and the checks that a shard
lies inside the set and holds the shard it is listed as.

A shard the manifest lists but that is missing, or whose database is damaged, is one
:class:`~statinterp.errors.InputError` naming the shard's file (exit status 2).
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from statinterp.cache.files import read_regular
from statinterp.collection.shard_words import SetWords, ShardWords
from statinterp.collection.shards import INGEST_MARKER, MANIFEST, Manifest, is_shard_set
from statinterp.collection.store import FILENAME, SHARD_KEY, Collection, Reader, damage_named, database_path
from statinterp.corpus.authority import CaseFilter
from statinterp.errors import InputError, StatinterpWarning, UsageError, closest_names, did_you_mean

__all__ = ["STATISTICS_CHOICES", "ShardSet", "each_part", "open_collection", "parse_shard_selection"]

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
        (:mod:`statinterp.collection.shard_words`) never opens it."""
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
        words (:meth:`~statinterp.collection.shard_words.ShardWords.may_match`; their databases are
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
        from the set's word index (:class:`~statinterp.collection.shard_words.SetWords`, one file
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

