"""A set of shards read as one collection (docs/collection.md, "Reading a set of shards").

:func:`open_collection` opens a collection folder for reading, whichever kind it is: a
single-file collection (:class:`~statinterp.collection.store.Collection`) or a shard set
(:class:`ShardSet`: a folder with ``manifest.json``, :mod:`statinterp.collection.shards`).
``find``, ``rank --collection``, ``review --collection``, ``collection info`` and the Python
API open collections with it.

A :class:`ShardSet` has the read interface of a ``Collection``:

* **lookup** (``paragraphs_matching``, ``occurring``): over the *selected* shards (all, unless
  ``shards=`` names some: ``--shard court=...``); ``find`` runs its lookup per selected shard
  side by side (:func:`each_part`: a thread pool; SQLite releases the GIL while it searches) and
  merges the matching opinions in case id order (a case lies in one shard, and case and opinion
  ids are those of a single-file collection of the same sources), so its tables, zip and
  ranking are those of the single file;
* **reads by id** (``case``, ``opinions``, ``opinion_paragraphs``, ``record``): from the shard
  holding the case or opinion (case and opinion ids are unique over the set; paragraph ids are
  each shard's own, so ``citations(paragraph_id)`` needs ``shard=``);
* **statistics** (``token_statistics``, ``level_totals``): the sums over all shards (every
  level's N and token total and every token's df and cf are sums over cases), or over the
  selected shards alone with ``statistics="selected"``;
* ``meta`` and ``info``: the set's totals, with one entry per shard.

A shard the manifest lists but that is missing, or whose database is damaged, is one
:class:`~statinterp.errors.InputError` naming the shard's file (exit status 2).
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from statinterp.cache.files import read_regular
from statinterp.collection.shard_words import SetWords, ShardWords
from statinterp.collection.shards import INGEST_MARKER, MANIFEST, Manifest, is_shard_set
from statinterp.collection.store import FILENAME, SHARD_KEY, Collection, ParagraphRow, damage_named, database_path
from statinterp.corpus.authority import CaseFilter
from statinterp.corpus.dataset import Case
from statinterp.errors import InputError, StatinterpWarning, UsageError, closest_names, did_you_mean
from statinterp.index.statistics import LEVELS

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


def each_part(collection: Collection | ShardSet, func: Callable[..., T], *args: Any,
              located: Callable[[T], Iterable[tuple[int, int]]] | None = None, term: str | None = None) -> list[T]:
    """``func(part, *args)`` for each part of ``collection`` that lookups search: the collection
    itself, or a shard set's selected shards side by side (threads), in shard order.
    ``located(result)``: the (case id, opinion id) pairs a part's result names; a shard set
    remembers that they lie in that part, so that reading them later goes straight there.
    ``term``: ``func`` looks up this term; a shard whose word list lacks one of its words cannot
    hold a match and is passed over (:meth:`ShardSet.may_hold`)."""
    if isinstance(collection, ShardSet):
        return collection.map_selected(func, *args, located=located, term=term)
    return [func(collection, *args)]


class ShardSet:
    """A shard set opened for reading as one collection (read-only; a context manager)."""

    def __init__(self, folder: Path, manifest: Manifest, folders: dict[str, str],
                 selected: Sequence[str] | None = None, statistics: str = "all"):
        self.folder = folder
        self.manifest = manifest
        #: Every shard, by key (manifest order), opened when first used (:class:`_Shards`).
        self.shards = _Shards(folders, folder)
        #: The keys of the shards lookups search (all by default).
        self.selected = list(folders) if not selected else list(selected)
        self.statistics = statistics
        self._case_shard: dict[int, str] = {}
        self._opinion_shard: dict[int, str] = {}
        self._analysis_checked = False

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

    @functools.cached_property
    def has_pairs(self) -> bool:
        """Whether every shard has the pair index (opens every shard)."""
        return all(c.has_pairs for c in self.shards.values())

    @functools.cached_property
    def has_pages(self) -> bool:
        """Whether every shard's paragraphs have pages (opens every shard)."""
        return all(c.has_pages for c in self.shards.values())

    def _check_analysis(self) -> None:
        """Statistics add up only if every shard was analysed alike (checked once, when the
        statistics or the set's description are first read: it opens every shard)."""
        if self._analysis_checked:
            return
        first = None
        for key, shard in self.shards.items():
            with damage_named(shard.folder):
                analysis = json.loads(shard.meta().get("analysis", "{}"))
            if first is None:
                first = (key, analysis)
            elif analysis != first[1]:
                raise InputError(database_path(shard.folder), f"was analysed with other settings than the shard "
                                 f"{first[0]!r} of {self.folder} ({analysis} against {first[1]}): its statistics do "
                                 "not add up; ingest the sources again into a new folder")
        self._analysis_checked = True

    def restrict(self, case_filter: CaseFilter | None) -> None:
        """Restrict every shard's lookups to the cases ``case_filter`` keeps
        (:meth:`~statinterp.collection.store.Collection.restrict`; each shard when it is opened)."""
        self.shards.restrict(case_filter)

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

    def __enter__(self) -> ShardSet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- parts --------------------------------------------------------------------------------
    def _parts(self, keys: Iterable[str]) -> list[tuple[str, Collection]]:
        return [(k, self.shards[k]) for k in keys]

    def map_selected(self, func: Callable[..., T], *args: Any,
                     located: Callable[[T], Iterable[tuple[int, int]]] | None = None,
                     term: str | None = None) -> list[T]:
        """``func(shard, *args)`` on each selected shard side by side (a thread pool; each shard's
        connection is used by one thread at a time, and a shard not yet open is opened by the
        thread that first uses it), results in shard order (``located``, ``term``: as
        :func:`each_part`). A damaged shard's error names its file."""
        keys = self.selected if term is None else self.may_hold(term)

        def run(key: str) -> T:
            with damage_named(self.shards.folder(key)):
                return func(self.shards[key], *args)

        threads = lookup_threads(len(keys))
        if threads <= 1:
            results = [run(k) for k in keys]
        else:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="shard") as pool:
                results = list(pool.map(run, keys))
        if located is not None:
            for key, result in zip(keys, results, strict=True):
                for case_id, opinion_id in located(result):
                    self._case_shard[case_id] = self._opinion_shard[opinion_id] = key
        return results

    def _statistics_parts(self) -> list[tuple[str, Collection]]:
        self._check_analysis()
        return self._parts(self.selected if self.statistics == "selected" else self.shards)

    def _holder(self, table: str, item_id: int, cache: dict[int, str]) -> Collection:
        """The shard holding case or opinion ``item_id`` (case and opinion ids are unique over the set)."""
        key = cache.get(item_id)
        if key is None:
            for k, shard in self.shards.items():
                with damage_named(shard.folder):
                    if shard.db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (item_id,)).fetchone():
                        key = cache[item_id] = k
                        break
            else:
                raise UsageError(f"no {table[:-1]} {item_id} in the collection {self.folder}")
        return self.shards[key]

    def _case_holder(self, case_id: int) -> Collection:
        return self._holder("cases", case_id, self._case_shard)

    def _opinion_holder(self, opinion_id: int) -> Collection:
        return self._holder("opinions", opinion_id, self._opinion_shard)

    # -- lookup -------------------------------------------------------------------------------
    def paragraphs_matching(self, fts_query: str, pairs: bool = False) -> Iterator[ParagraphRow]:
        """The selected shards' :meth:`~statinterp.collection.store.Collection.paragraphs_matching`,
        merged in case order (a case lies in one shard, so each case's rows keep their order)."""
        if pairs and not self.has_pairs:
            raise UsageError(f"a shard of {self.folder} has no pair index (format 1); ingest into it to add one")

        def rows(shard: Collection) -> Iterator[ParagraphRow]:
            with damage_named(shard.folder):
                yield from shard.paragraphs_matching(fts_query, pairs=pairs)

        return heapq.merge(*(rows(s) for _, s in self._parts(self.selected)), key=lambda r: r.case_id)

    def occurring(self, phrases: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
        """Those of ``phrases`` that occur in a selected shard (the union of the shards')."""
        phrases = set(phrases)
        found: set[tuple[str, ...]] = set()
        for _, shard in self._parts(self.selected):
            with damage_named(shard.folder):
                found |= shard.occurring(phrases - found)
        return found

    # -- reads by id --------------------------------------------------------------------------
    def opinion_paragraphs(self, opinion_id: int) -> list[ParagraphRow]:
        shard = self._opinion_holder(opinion_id)
        with damage_named(shard.folder):
            return shard.opinion_paragraphs(opinion_id)

    def case_ids(self) -> list[int]:
        ids: list[int] = []
        for _, shard in self._parts(self.selected):
            with damage_named(shard.folder):
                ids.extend(shard.case_ids())
        return sorted(ids)

    def case(self, case_id: int, opinions: list[dict] | None = None) -> Case:
        shard = self._case_holder(case_id)
        with damage_named(shard.folder):
            return shard.case(case_id, opinions)

    def opinions(self, case_id: int) -> list[dict]:
        shard = self._case_holder(case_id)
        with damage_named(shard.folder):
            return shard.opinions(case_id)

    def record(self, case_id: int):
        shard = self._case_holder(case_id)
        with damage_named(shard.folder):
            return shard.record(case_id)

    def citations(self, paragraph_id: int, shard: str | None = None) -> list[dict]:
        """A paragraph's citations; paragraph ids are each shard's own, so ``shard`` (its key) is needed."""
        if shard is None or shard not in self.shards:
            raise UsageError(f"paragraph ids are each shard's own in {self.folder}: name the shard "
                             f"({self.manifest.shard_by}=...) of paragraph {paragraph_id}")
        part = self.shards[shard]
        with damage_named(part.folder):
            return part.citations(paragraph_id)

    # -- statistics ---------------------------------------------------------------------------
    def token_statistics(self, level: str, tokens: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(df, cf) of each token: the sums over the shards (all, or the selected ones with
        ``statistics="selected"``)."""
        out = {t: (0, 0) for t in tokens}
        for _, shard in self._statistics_parts():
            with damage_named(shard.folder):
                part = shard.token_statistics(level, tokens)
            for token, (df, cf) in part.items():
                if df or cf:
                    old = out[token]
                    out[token] = (old[0] + df, old[1] + cf)
        return out

    def level_totals(self, level: str) -> tuple[int, int]:
        """(N units holding a token, total tokens) of a level: the sums over the shards."""
        n = total = 0
        for _, shard in self._statistics_parts():
            with damage_named(shard.folder):
                units, tokens = shard.level_totals(level)
            n += units
            total += tokens
        return n, total

    def statistics_description(self) -> str:
        """Which shards the statistics come from, for reports."""
        if self.statistics == "selected" and len(self.selected) < len(self.shards):
            return (f"the shards {', '.join(repr(k) for k in self.selected)} of the shard set {self.folder} "
                    f"(by {self.manifest.shard_by})")
        return f"the shard set {self.folder} ({len(self.shards)} shards by {self.manifest.shard_by})"

    # -- description --------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The meta of the set: the first shard's, with the latest statistics date of any shard."""
        self._check_analysis()
        metas = []
        for _, shard in self._parts(self.shards):
            with damage_named(shard.folder):
                metas.append(shard.meta())
        if not metas:
            return {}
        out = dict(metas[0])
        out["statistics_date"] = max(m.get("statistics_date", "") for m in metas)
        out["format"] = str(min(int(m.get("format", 0)) for m in metas))
        return out

    def info(self) -> dict:
        """``collection info`` of the set: totals over the shards (each checked for damage, as
        :meth:`Collection.info` does) and, under ``shards``, one entry per shard."""
        parts = []
        for key, shard in self._parts(self.shards):
            with damage_named(shard.folder):
                parts.append((key, shard.info()))
        cases = sum(d["cases"] for _, d in parts)
        size = (self.folder / MANIFEST).stat().st_size + sum(d["size_bytes"] for _, d in parts)
        sources: dict[tuple[str, str], dict] = {}
        for _, d in parts:
            for s in d["sources"]:
                known = sources.setdefault((s["path"], s["format"]), {**s, "cases": 0})
                known["cases"] += s["cases"]
                known["skipped"] = max(known["skipped"], s["skipped"])  # each shard records the source's skips
                known["ingested_at"] = max(known["ingested_at"], s["ingested_at"])
        meta = self.meta()
        return {
            "collection": str(self.folder),
            "shard_by": self.manifest.shard_by,
            "format": int(meta.get("format", 0)),
            "cases": cases, "opinions": sum(d["opinions"] for _, d in parts),
            "paragraphs": sum(d["paragraphs"] for _, d in parts),
            "citations": _sum_counts(d["citations"] for _, d in parts),
            "by_source": _sum_counts(d["by_source"] for _, d in parts),
            "sources": sorted(sources.values(), key=lambda s: (s["ingested_at"], s["path"])),
            "statistics": {lvl: {"units": sum(d["statistics"][lvl]["units"] for _, d in parts),
                                 "tokens": sum(d["statistics"][lvl]["tokens"] for _, d in parts)} for lvl in LEVELS},
            "vocabulary": self._vocabulary(),
            "statistics_date": meta.get("statistics_date", ""),
            "analysis": json.loads(meta.get("analysis", "{}")),
            "size_bytes": size,
            "bytes_per_case": round(size / cases, 1) if cases else None,
            "shards": [{"key": key, "folder": str(self.shards[key].folder.relative_to(self.folder)),
                        "format": d["format"], "cases": d["cases"], "opinions": d["opinions"],
                        "paragraphs": d["paragraphs"], "size_bytes": d["size_bytes"]} for key, d in parts],
        }

    def _vocabulary(self) -> dict[str, int]:
        """Distinct tokens per level over the set: the shards' sorted token lists merged (tokens
        shared by shards counted once; memory does not grow with the vocabulary)."""
        out: dict[str, int] = {}
        for level in LEVELS:
            streams = [shard.db.execute("SELECT token FROM token_stats WHERE level = ? ORDER BY token", (level,))
                       for _, shard in self._parts(self.shards)]
            n, last = 0, None
            for (token,) in heapq.merge(*streams):
                if token != last:
                    n, last = n + 1, token
            if n:
                out[level] = n
        return dict(sorted(out.items()))


class _Shards(Mapping[str, Collection]):
    """A set's shards by key, each opened (and checked for damage) when first asked for; safe to
    ask from several threads."""

    def __init__(self, folders: dict[str, str], root: Path):
        self._folders = folders
        self._root = root
        self._opened: dict[str, Collection] = {}
        self._words: dict[str, ShardWords | None] = {}
        self._set_words: SetWords | None | bool = False  # False: not read yet
        self._lock = threading.Lock()
        self._real_root: str | None = None
        self._case_filter: CaseFilter | None = None

    def restrict(self, case_filter: CaseFilter | None) -> None:
        """Restrict the shards opened so far, and each shard opened later, to ``case_filter``."""
        self._case_filter = case_filter
        with self._lock:
            for shard in self._opened.values():
                shard.restrict(case_filter)

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
        if self._case_filter:
            with damage_named(folder):
                shard.restrict(self._case_filter)
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


def _sum_counts(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in parts:
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))

