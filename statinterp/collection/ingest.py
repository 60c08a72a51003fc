"""Ingesting sources into a collection, in the calling process or on a Dask cluster.

Both engines read the same partitions (:func:`statinterp.sources.discover`: one per source
file), compute the same :class:`PreparedCase` values and hand
them to **one writer** (this process) in partition order, record order, so case, opinion and
paragraph ids, and every statistic, are the same whichever engine ran (docs/collection.md says
why a single writer rather than shards merged at the end). A collection in shards
(``shard_by``) has one writer per shard: on Dask the workers write the shards side by side
(:func:`write_shards_on_dask`), with the same result as the local engine.

A malformed record is skipped and reported (:class:`~statinterp.sources.records.SkippedRecord`);
a source that cannot be read at all raises :class:`~statinterp.errors.InputError` before any
case of its current batch is stored (earlier batches stay: the collection is consistent, and
running the same ingest again completes it).

A source file most of whose records are skipped (:func:`mostly_skipped`: more than half, and at
least :data:`MOSTLY_SKIPPED_MIN`) is probably not of the format it was read as: the summary
lists it (:attr:`IngestSummary.mostly_skipped`) and the command ends with exit status 2 unless
``--allow-skips`` (what was stored stays). So does a join that left more than a few cases without
their row in a companion file (:func:`badly_joined`; :attr:`IngestSummary.broken_joins`).

**Preparing a case.** Everything computed for one case before it is stored: its background statistics and citations.

This is the pure, picklable part of ingesting (it never touches the collection), so the same
function runs in the calling process (``--engine local``) or on Dask workers (``--engine
dask``), and both give the same values.

Statistics use the project's own analysis (:class:`~statinterp.text.analysis.Analyzer`) and the
same units as the background statistics of a prepared corpus
(:func:`statinterp.index.term_index.background_units`): the whole case text, each opinion,
each line of an opinion (a paragraph) and each spaCy sentence of an opinion. For each unit level
the case contributes ``n_units`` (units holding a token), ``total_tokens`` and, per token (a
lower-cased lemma), ``df`` (units containing it) and ``cf`` (occurrences).

**The Dask engine.** ``--engine dask``: ingest's partitions and find's runs of cases on ``dask.distributed`` workers.

Ingest: each task prepares one partition (one source file) and returns its prepared cases and
skipped records; the calling process is the single writer and stores the results in partition
order, so ids and statistics equal those of ``--engine local``. A task whose worker dies is run
again by the scheduler (up to its ``allowed-failures``); since only the writer stores results,
and it takes each partition's result once, a retried partition adds nothing twice. A collection
in shards is written by the workers instead, one writer per shard
(below).

find (:func:`statinterp.collection.find.find_on_dask`) runs its runs of whole cases through
:func:`dask_client` and :func:`results_in_order` as well.

**Shards on Dask.** ``ingest --engine dask --shard-by KEY``: the shards of a set written in parallel by the workers.

Per partition (one source file), in three steps, then a last step per shard (docs/collection.md,
"Shards"):

1. **Prepare** (a worker, :func:`prepare_to_spool`): the partition's cases are parsed and
   analysed as for ``--engine local`` (a case its shard already holds unchanged is not analysed
   again: the worker looks it up, read-only, in the shard of its key), and its prepared cases go,
   shard by shard and batch by batch, to files in the set's hidden spool folder
   (``DIR/.spool/<partition>/``). Only
   light identities return to the coordinator: per case its shard key, source, source id,
   content hash, numbers of opinions and lines, and the hash its shard held (:class:`Identity`).
2. **Allocate** (the coordinator, this process, in partition order, record order): a case whose
   shard holds it unchanged is counted and skipped; every other case gets its case and opinion
   ids from the set's :class:`~statinterp.collection.shards.IdCounter`, exactly as
   :class:`~statinterp.collection.shards.ShardedWriter` gives them, so the set equals the local
   engine's row for row. What a shard holds is the hash the worker saw, unless an earlier record
   of this run had the same identity (then that record's hash: :class:`_Seen`).
3. **Write** (a worker, :func:`write_from_spool`): one task per partition and shard stores that
   shard's cases of the partition with the ids given, in batches of
   :data:`BATCH_CASES` (one transaction each), and records the
   source. A shard's tasks are chained in partition order (each waits for the one before), so a
   shard has one writer at a time; different shards are written side by side.
4. **Finish** (a worker, :func:`finish_on_worker`, once every write is done): each shard the run
   wrote gets its full-text indexes merged and a new word list
   (:func:`~statinterp.collection.shards.finish_shard`), shards side by side.

A worker that dies inside a task: the scheduler runs the task again. A prepare task has stored
nothing (its spool files are replaced whole); a write task's committed batches hold its cases
unchanged, so the second try stores only the rest, with the same ids. A run stopped as a whole
(the coordinator killed) leaves every shard as after its last committed batch; running the same
command again completes whichever shards are incomplete (ids stay unique over the set; cases
stored by the second run get ids after the largest stored, as after a stopped local ingest).

Every worker must see the set's folder at the same path (a shared file system); a worker that
cannot raises one line saying so.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import socket
import sqlite3
import time
import uuid
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from statinterp.collection.shards import ShardedWriter, shard_folder_name, shard_key
from statinterp.collection.store import CollectionWriter, damage_named
from statinterp.errors import UsageError
from statinterp.index.term_index import LEVELS, TextSpan, background_units
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, Unjoined
from statinterp.text.analysis import Analyzer, TokenSeqs, Vocabulary
from statinterp.text.citations import cached_stored_citations

# Preparing a case: everything computed before it is stored (pure, picklable)

#: Cases analysed and committed together (one spaCy batch, one transaction).
BATCH_CASES = 32


@dataclass(frozen=True)
class LevelCounts:
    """One case's contribution to the statistics of one unit level."""

    n_units: int
    total_tokens: int
    words: tuple[str, ...]
    df: np.ndarray  # int64, per word
    cf: np.ndarray  # int64, per word


@dataclass(frozen=True)
class Citation:
    opinion: int  # index of the opinion in the record
    paragraph: int  # index of the paragraph in the opinion
    kind: str  # case | statute | journal
    start: int  # character offsets in the paragraph
    end: int
    text: str  # as written
    normalized: str  # eyecite's corrected citation


@dataclass(frozen=True)
class PreparedCase:
    record: CaseRecord
    content_hash: str
    counts: dict[str, LevelCounts]
    citations: tuple[Citation, ...]


def opinion_offsets(record: CaseRecord) -> list[tuple[int, int]]:
    """Character spans of the record's opinions inside :attr:`CaseRecord.text`."""
    pos = len(record.head_matter) + 1 if record.head_matter.strip() else 0
    spans = []
    for op in record.opinions:
        text = op.text
        spans.append((pos, pos + len(text)))
        pos += len(text) + 1
    return spans


def level_counts(seqs: TokenSeqs, words: list[str]) -> LevelCounts:
    lengths = seqs.lengths
    ids = seqs.ids.astype(np.int64)
    if not len(ids):
        return LevelCounts(int((lengths > 0).sum()), 0, (), np.zeros(0, np.int64), np.zeros(0, np.int64))
    uniq, cf = np.unique(ids, return_counts=True)
    size = int(uniq[-1]) + 1
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = np.unique(rows * size + ids) % size
    df = np.bincount(np.searchsorted(uniq, pairs), minlength=len(uniq))
    return LevelCounts(int((lengths > 0).sum()), int(lengths.sum()), tuple(words[i] for i in uniq.tolist()),
                       df.astype(np.int64), cf.astype(np.int64))


def citations_of(record: CaseRecord) -> tuple[Citation, ...]:
    """Case, statute and journal citations (:data:`~statinterp.text.citations.STORED_KINDS`) found by
    eyecite (:func:`statinterp.text.citations.stored_citations`), paragraph by paragraph (memoised: the
    segmenter has asked for a few of them already)."""
    return tuple(Citation(i, j, c.kind, c.start, c.end, c.text, c.normalized)
                 for i, op in enumerate(record.opinions) for j, para in enumerate(op.lines)
                 for c in cached_stored_citations(para))


def prepare_cases(records: list[CaseRecord], analyzer: Analyzer | None, citations: bool = True) -> list[PreparedCase]:
    """Statistics (and, with ``citations``, citations) of each record; one spaCy pass for all.

    Without an analyzer no statistics are computed (a collection without statistics: the
    benchmarks' "parse and store only" pass)."""
    if analyzer is None:
        return [PreparedCase(r, r.content_hash, {}, citations_of(r) if citations else ()) for r in records]
    texts = [r.text for r in records]
    analysed = analyzer.analyse(texts)
    words = analyzer.vocab.words
    out = []
    for record, text, at in zip(records, texts, analysed, strict=True):
        spans = [TextSpan(at, s, e) for s, e in opinion_offsets(record)]
        units = background_units(at, text, spans, [o.text for o in record.opinions])
        counts = {lvl: level_counts(units[lvl], words) for lvl in LEVELS}
        out.append(PreparedCase(record, record.content_hash, counts, citations_of(record) if citations else ()))
    analyzer.forget()
    analyzer.vocab = Vocabulary()  # words were turned into strings: memory stays flat over a long ingest
    return out


def new_analyzer() -> Analyzer:
    """The analyzer ingesting uses: no on-disk cache (a collection is analysed once), one process."""
    return Analyzer(cache_dir=False, n_process=1)


def prepare_partition(partition: Partition, citations: bool = True,
                      known: Callable[[CaseRecord], str | None] | None = None,
                      analyzer=None, statistics: bool = True
                      ) -> Iterator[list[PreparedCase] | SkippedRecord | DecodedFile | Unjoined]:
    """Batches of prepared cases (and skipped records) of one partition, in record order.

    ``known(record)`` gives the content hash stored for the record's case (None: not stored;
    a shard set looks in the shard of the record's key): such unchanged cases are not analysed
    again (the writer would leave them alone anyway)."""
    if statistics and analyzer is None:
        analyzer = new_analyzer()
    batch: list[CaseRecord] = []
    for item in read_partition(partition):
        if not isinstance(item, CaseRecord):  # a skipped record, a file's guessed encoding
            yield item
            continue
        batch.append(item)
        if len(batch) >= BATCH_CASES:
            yield _prepare_batch(batch, analyzer, citations, known)
            batch = []
    if batch:
        yield _prepare_batch(batch, analyzer, citations, known)


class Unchanged:
    """A record already stored with the same content: nothing to compute."""

    def __init__(self, record: CaseRecord, content_hash: str):
        self.record = record
        self.content_hash = content_hash


def _prepare_batch(batch: list[CaseRecord], analyzer, citations: bool,
                   known: Callable[[CaseRecord], str | None] | None) -> list:
    if known is None:
        return prepare_cases(batch, analyzer, citations)
    stored = [known(r) == r.content_hash for r in batch]
    done = iter(prepare_cases([r for r, same in zip(batch, stored, strict=True) if not same], analyzer, citations)
                if not all(stored) else [])
    return [Unchanged(r, r.content_hash) if same else next(done) for r, same in zip(batch, stored, strict=True)]


# The Dask engine: client, workers, results in order

#: The engines of ``ingest`` and ``find``: everything in the calling process, or on Dask.
ENGINES = ("local", "dask")

#: Partitions submitted ahead of the one being written (bounds the results held in memory).
WINDOW = 8

_ANALYZER = None


def worker_analyzer():
    """The analyzer of this worker process (one spaCy pipeline per worker, made on first use)."""
    global _ANALYZER

    if _ANALYZER is None:
        _ANALYZER = new_analyzer()
    return _ANALYZER


def prepare_whole_partition(partition: Partition, citations: bool, statistics: bool = True) -> list:
    """All of one partition's items (batches of prepared cases, skipped records); runs on a worker."""

    return list(prepare_partition(partition, citations, None, worker_analyzer() if statistics else None, statistics))


def check_engine(engine: str, scheduler: str | None) -> None:
    """Fail with one line for an unknown engine, or a scheduler without ``engine="dask"``."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if scheduler is not None and engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    if scheduler is not None:
        check_scheduler(scheduler)


def check_scheduler(address: str) -> None:
    """Fail with one line for a scheduler address of a scheme Dask has no transport for (before
    anything is read or written)."""
    try:
        from distributed.comm import parse_address
        from distributed.comm.registry import get_backend
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'statinterp[dask]'") from None
    try:
        scheme, _ = parse_address(address)
        get_backend(scheme)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--scheduler {address!r} is not a Dask scheduler address ({exc}); give one such as "
                         "tcp://HOST:8786") from None


@contextmanager
def dask_client(scheduler: str | None, n_workers: int) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``scheduler``, else of a local cluster of
    ``n_workers`` single-threaded processes (closed, with its cluster, on leaving)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--engine dask needs dask.distributed: pip install 'statinterp[dask]'") from None
    cluster = None
    if scheduler is None:
        with warnings.catch_warnings():  # its HTTP server moves off a port in use: no news to the user
            warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.CRITICAL)  # a task's error is raised here, as one line
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def cluster_workers(scheduler: str) -> int:
    """The number of workers the scheduler at ``scheduler`` has now (at least 1)."""
    with dask_client(scheduler, 0) as client:
        return max(1, len(client.scheduler_info()["workers"]))


def results_in_order(client: Any, task: Callable, arguments: Sequence[tuple], name: str) -> Iterator[Any]:
    """``task(*args)`` for each of ``arguments``, run on the cluster, yielded in order; at most
    :data:`WINDOW` tasks are submitted ahead of the one yielded (bounds the results held)."""
    futures: list = []
    nxt = 0
    for i in range(len(arguments)):
        while nxt < len(arguments) and nxt < i + WINDOW:
            futures.append(client.submit(task, *arguments[nxt], pure=False, key=f"{name}-{nxt}"))
            nxt += 1
        result = futures[i].result()
        futures[i] = None  # release the result on the cluster
        yield result


def dask_streams(partitions: list[Partition], citations: bool, scheduler: str | None, n_workers: int,
                 task=prepare_whole_partition, statistics: bool = True) -> Iterator[tuple[Partition, list]]:
    """(partition, items) in partition order, computed on a cluster (``task`` runs one partition)."""
    arguments = [(p, citations) if statistics else (p, citations, False) for p in partitions]
    with dask_client(scheduler, n_workers) as client:
        yield from zip(partitions, results_in_order(client, task, arguments, "partition"), strict=True)


# The Dask engine writing a set of shards: prepare, allocate, write, finish

#: The set's spool folder (hidden; removed when the ingest ends, and at the start of the next).
SPOOL = ".spool"
#: Partitions whose shard writes may be outstanding: the coordinator waits for the oldest beyond
#: this (bounds the spool on disk when the writers lag behind the preparing).
SPOOL_WINDOW = 2 * WINDOW


@dataclass(frozen=True)
class Identity:
    """What the coordinator needs of a prepared case to give it its ids."""

    key: str  # its shard's key
    source: str
    source_id: str
    content_hash: str
    opinions: int
    lines: int  # paragraph rows it stores
    stored: str | None  # the content hash its shard held when the worker looked (None: none)


@dataclass
class Spooled:
    """A prepared partition: its items in record order (skipped records, guessed encodings, and
    per batch of cases a list of :class:`Identity`), its spool file per shard key, and the CPU
    seconds the task took."""

    items: list = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    cpu: float = 0.0


def _spool_of(root: str) -> Path:
    """The set's spool folder, or one line saying this worker cannot see the set."""
    spool = Path(root) / SPOOL
    if not spool.is_dir():
        raise UsageError(f"the Dask worker on {socket.gethostname()} cannot see the shard set's folder {root}: "
                         "with --shard-by every worker must see it at the same path (a shared file system; "
                         "docs/collection.md, \"Shards\")")
    return spool


class _SpoolFiles:
    """A partition's spool files, one per shard, each a sequence of pickled batches of cases
    (appended batch by batch: a worker holds one batch, not the partition). Each is written under
    a temporary name and renamed when the partition is done, so a file is whole or absent (a task
    run again replaces it)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.open: dict[str, tuple[Path, Path, BinaryIO]] = {}

    def add(self, key: str, cases: list) -> None:
        if key not in self.open:
            path = self.folder / (Path(shard_folder_name(key)).name + ".pickle")
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            self.open[key] = (path, tmp, open(tmp, "wb"))  # noqa: SIM115 - closed in done() / discard()
        pickle.dump(cases, self.open[key][2], protocol=pickle.HIGHEST_PROTOCOL)

    def done(self) -> dict[str, str]:
        out = {}
        for key, (path, tmp, fh) in self.open.items():
            fh.close()
            os.replace(tmp, path)
            out[key] = str(path)
        return out

    def discard(self) -> None:
        for _, tmp, fh in self.open.values():
            fh.close()
            tmp.unlink(missing_ok=True)


def read_spool(path: str | Path) -> Iterator:
    """The cases of a spool file, in record order."""
    with open(path, "rb") as fh:
        while True:
            try:
                yield from pickle.load(fh)
            except EOFError:
                return


def prepare_to_spool(partition: Partition, index: int, root: str, shard_by: str, existing: dict[str, str],
                     citations: bool, statistics: bool = True) -> Spooled:
    """Step 1 on a worker: prepare one partition, spool its cases per shard (``existing``: the
    folder of each shard the set held when the ingest started, where stored cases are looked up)."""
    from statinterp.collection.store import Collection

    cpu = time.process_time()
    folder = _spool_of(root) / f"{index:06d}"  # removed when the partition's writes are done
    folder.mkdir(exist_ok=True)
    readers: dict[str, Collection] = {}
    seen: dict[tuple[str, str, str], str | None] = {}

    def known(record: CaseRecord) -> str | None:
        key = shard_key(record, shard_by)
        ident = (key, record.source, record.source_id)
        if ident not in seen:
            if key not in existing:
                seen[ident] = None
            else:
                if key not in readers:
                    readers[key] = Collection.open(Path(root) / existing[key])
                row = readers[key].db.execute("SELECT content_hash FROM cases WHERE source = ? AND source_id = ?",
                                              (record.source, record.source_id)).fetchone()
                seen[ident] = row[0] if row else None
        return seen[ident]

    out = Spooled()
    files = _SpoolFiles(folder)
    try:
        for item in prepare_partition(partition, citations, known, worker_analyzer() if statistics else None,
                                      statistics):
            if isinstance(item, (SkippedRecord, DecodedFile, Unjoined)):
                out.items.append(item)
                continue
            batch: list[Identity] = []
            by_shard: dict[str, list] = {}
            for case in item:
                r = case.record
                key = shard_key(r, shard_by)
                by_shard.setdefault(key, []).append(case)
                batch.append(Identity(key, r.source, r.source_id, case.content_hash, len(r.opinions),
                                      sum(len(o.lines) for o in r.opinions), known(r)))
            for key, cases in by_shard.items():
                files.add(key, cases)
            out.items.append(batch)
        out.files = files.done()
    except BaseException:
        files.discard()
        raise
    finally:
        for reader in readers.values():
            reader.close()
    out.cpu = time.process_time() - cpu
    return out


def write_from_spool(root: str, folder: str, spool_file: str, ids: list[tuple[str, str, int, int]],
                     analysis: dict, citations: bool, statistics: bool, source: tuple[str, str, int, int],
                     after: object = None) -> float:
    """Step 3 on a worker: store a partition's cases of one shard (``ids``: (source, source_id,
    case id, first opinion id) of each case to store, in record order) and record the source
    (``source``: path, format, the shard's cases read from it, records skipped). ``after`` is
    the shard's previous write task (this one waits for it). Returns the CPU seconds taken."""
    from statinterp.collection.store import CollectionWriter

    cpu = time.process_time()
    _spool_of(root)
    given = {(s, i): (case_id, opinion_id) for s, i, case_id, opinion_id in ids}
    todo = [c for c in read_spool(spool_file) if (c.record.source, c.record.source_id) in given]
    analyzer = worker_analyzer() if statistics else None
    again = [c.record for c in todo if not isinstance(c, PreparedCase)]  # looked unchanged to the worker, not now
    if again:
        fresh = iter(prepare_cases(again, analyzer, citations))
        todo = [c if isinstance(c, PreparedCase) else next(fresh) for c in todo]

    def reprepare(record: CaseRecord) -> PreparedCase:
        return prepare_cases([record], analyzer, citations=False)[0]  # its statistics only

    with CollectionWriter(Path(root) / folder, analysis, check=False) as writer:  # checked by the coordinator
        for start in range(0, len(todo), BATCH_CASES):
            writer.write(todo[start:start + BATCH_CASES], reprepare, ids=lambda r: given[(r.source, r.source_id)])
        writer.record_source(*source)
    return time.process_time() - cpu


def finish_on_worker(folder: str) -> float:
    """Step 4 on a worker: finish a shard the run wrote
    (:func:`~statinterp.collection.shards.finish_shard`). Returns the CPU seconds taken."""
    from statinterp.collection.shards import finish_shard

    cpu = time.process_time()
    finish_shard(folder)
    return time.process_time() - cpu


class _Seen:
    """The content hash of each (shard key, source, source id) read so far in this run: what its
    shard holds once the writes before it are done. On disk (a private temporary SQLite
    database), not in memory: all of CAP is 6.7 M entries."""

    def __init__(self) -> None:
        self.db = sqlite3.connect("")
        self.db.execute("CREATE TABLE seen (shard TEXT, source TEXT, source_id TEXT, hash TEXT NOT NULL, "
                        "PRIMARY KEY (shard, source, source_id)) WITHOUT ROWID")

    def stored(self, i: Identity) -> str | None:
        """The hash ``i``'s shard holds (or will hold when the writes submitted so far are done)."""
        row = self.db.execute("SELECT hash FROM seen WHERE shard = ? AND source = ? AND source_id = ?",
                              (i.key, i.source, i.source_id)).fetchone()
        return row[0] if row else i.stored

    def read(self, i: Identity) -> None:
        self.db.execute("INSERT OR REPLACE INTO seen VALUES (?, ?, ?, ?)", (i.key, i.source, i.source_id,
                                                                          i.content_hash))

    def close(self) -> None:
        self.db.close()


def write_shards_on_dask(partitions: list[Partition], writer: ShardedWriter, summary, *, citations: bool,
                         statistics: bool, scheduler: str | None, n_workers: int,
                         progress: Callable[[int], None] | None = None, prepare_task=prepare_to_spool,
                         write_task=write_from_spool) -> None:
    """Ingest ``partitions`` into the set of ``writer`` (opened, checked and locked by it) on a
    Dask cluster, filling ``summary`` (an :class:`~statinterp.collection.ingest.IngestSummary`),
    its ``cpu_seconds`` per role included (``coordinator``: this process, the Dask client's
    threads and a local cluster's scheduler included; ``coordinator_thread``: the calling thread
    alone, allocating ids and submitting tasks). ``prepare_task`` / ``write_task``: steps 1 and 3."""
    root = str(writer.root.resolve())
    spool = Path(root) / SPOOL
    shutil.rmtree(spool, ignore_errors=True)  # a stopped run's: the set's lock says no other ingest runs
    spool.mkdir()
    existing = {e.key: e.folder for e in writer.manifest.shards}
    writer.release()  # this process keeps no shard open while the workers write
    coordinator_cpu, own_cpu = time.process_time(), time.thread_time()
    run_id = uuid.uuid4().hex[:12]  # task keys unique to this run (a scheduler outlives it)
    seen = _Seen()
    cpu = {"prepare": 0.0, "write": 0.0, "finish": 0.0}
    outstanding: deque[tuple[int, list]] = deque()  # (partition, its write tasks), in partition order

    def finish_oldest() -> None:
        index, writes = outstanding.popleft()
        cpu["write"] += sum(f.result() for f in writes)
        shutil.rmtree(spool / f"{index:06d}", ignore_errors=True)  # its writes are done: its spool goes

    def run_on(client) -> None:
        arguments = [(p, i, root, writer.manifest.shard_by, existing, citations, statistics)
                     for i, p in enumerate(partitions)]
        last: dict[str, object] = {}  # each shard's latest write task
        written: set[str] = set()  # the shards given cases to store
        source_cases: Counter[tuple[str, str]] = Counter()  # (source path, shard key) -> cases so far
        prepared = results_in_order(client, prepare_task, arguments, f"shard-prepare-{run_id}")
        for index, (partition, spooled) in enumerate(zip(partitions, prepared, strict=True)):
            cpu["prepare"] += spooled.cpu
            shard_cases: dict[str, int] = {}
            shard_ids: dict[str, list[tuple[str, str, int, int]]] = {}
            cases = skipped = 0
            for item in spooled.items:
                if summary.note(item):
                    skipped += isinstance(item, SkippedRecord)
                    continue
                for i in item:
                    shard_cases[i.key] = shard_cases.get(i.key, 0) + 1
                    stored = seen.stored(i)
                    seen.read(i)
                    if stored == i.content_hash:
                        summary.unchanged += 1
                        continue
                    shard_ids.setdefault(i.key, []).append((i.source, i.source_id,
                                                            *writer.counter.allocate(i.opinions)))
                    summary.added += stored is None
                    summary.replaced += stored is not None
                    summary.opinions += i.opinions
                    summary.paragraphs += i.lines
                summary.cases_read += len(item)
                cases += len(item)
                if progress:
                    progress(len(item))
            writes = []
            skipped = summary.end_partition(partition, cases, skipped)[1]  # of its source so far
            written.update(k for k, ids in shard_ids.items() if ids)
            for key in sorted(shard_cases):
                folder = writer.shard_folder(key).relative_to(writer.root)
                # a split file's parts add up (a shard's writes are chained: the last one records the sum)
                source_cases[(partition.source_path, key)] += shard_cases[key]
                source = (os.path.abspath(partition.source_path), partition.format,
                          source_cases[(partition.source_path, key)], skipped)
                last[key] = client.submit(write_task, root, str(folder), spooled.files[key],
                                          shard_ids.get(key, []), writer.analysis, citations, statistics, source,
                                          last.get(key), key=f"shard-write-{run_id}-{index}-{folder.name}",
                                          pure=False, priority=1)
                writes.append(last[key])
            outstanding.append((index, writes))
            while len(outstanding) > SPOOL_WINDOW:
                finish_oldest()
        while outstanding:
            finish_oldest()

        def on_workers(stale: list[Path]) -> None:
            futures = client.map(finish_on_worker, [str(f) for f in stale], pure=False,
                                 key=[f"shard-finish-{run_id}-{f.name}" for f in stale])
            cpu["finish"] += sum(client.gather(futures))

        writer.finish(on_workers, written)

    try:
        with dask_client(scheduler, n_workers) as client:
            try:
                run_on(client)
            except Exception:  # a task failed: every write task submitted ends before the set is unlocked
                from distributed import wait

                wait([f for _, writes in outstanding for f in writes])
                raise
    finally:
        seen.close()
        shutil.rmtree(spool, ignore_errors=True)
    summary.cpu_seconds = {"workers_preparing": round(cpu["prepare"], 3), "writers_storing": round(cpu["write"], 3),
                           "writers_finishing": round(cpu["finish"], 3),
                           "coordinator": round(time.process_time() - coordinator_cpu, 3),
                           "coordinator_thread": round(time.thread_time() - own_cpu, 3)}


# Ingest: discover, prepare, store (either engine)

#: The counts of cases and rows an ingest reports (:meth:`CollectionWriter.write`'s keys).
COUNTS = ("added", "replaced", "unchanged", "opinions", "paragraphs")

#: The skipped records an ingest keeps in memory as examples (the summary's first ones); the rest are
#: counted (and streamed to ``--errors-out`` when given): memory does not grow with bad input.
MAX_SKIPPED_KEPT = 1000

#: A file is "mostly skipped" when more than half of its records, and at least this many, are skipped.
MOSTLY_SKIPPED_MIN = 10


def mostly_skipped(cases: int, skipped: int) -> bool:
    """Whether a source file with ``cases`` records read and ``skipped`` skipped looks mis-parsed."""
    return skipped >= MOSTLY_SKIPPED_MIN and skipped > cases


#: A join is "broken" when at least this many of its cases, and more than 1 in 20, found no row in a
#: companion file (a companion of another export, or one read wrong: the cases lack names, dates, courts).
UNJOINED_MIN = 10


def badly_joined(cases: int, missing: int) -> bool:
    """Whether ``missing`` of ``cases`` cases without their row in a companion file is more than a few."""
    return missing >= UNJOINED_MIN and missing * 20 > cases


@dataclass
class IngestSummary:
    cases_read: int = 0
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    opinions: int = 0
    paragraphs: int = 0
    input_bytes: int = 0
    seconds: float = 0.0
    partitions: int = 0
    engine: str = "local"
    #: The first :data:`MAX_SKIPPED_KEPT` skipped records (all of them are counted in ``skipped_count``
    #: and passed to ``on_skip``).
    skipped: list[SkippedRecord] = field(default_factory=list)
    skipped_count: int = 0
    #: Called with every skipped record as it comes (``ingest --errors-out`` writes them out).
    on_skip: Callable[[SkippedRecord], None] | None = field(default=None, repr=False)
    #: (path, records skipped, records in all) of each source file most of whose records were skipped.
    mostly_skipped: list[tuple[str, int, int]] = field(default_factory=list)
    #: (file, encoding) of each text file that was not UTF-8 and was decoded by a guessed encoding.
    decoded: list[tuple[str, str]] = field(default_factory=list)
    #: (source, companion, kind) -> [cases without their row in that companion, cases] (:class:`Unjoined`).
    unjoined: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    #: CPU seconds per role of a shard set written on Dask (workers preparing, writers storing, the
    #: coordinator); empty otherwise.
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    #: Parts made of split CourtListener bulk files (``--engine dask``), and the CPU seconds of splitting.
    split_parts: int = 0
    split_seconds: float = 0.0
    #: [cases, records skipped] so far per source path (the parts of a split file add up).
    _tally: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def add(self, counts: dict[str, int]) -> None:
        for key in COUNTS:
            setattr(self, key, getattr(self, key) + counts[key])

    def note(self, item) -> bool:
        """Note a partition's item that is not a batch of cases (a skipped record, a file's guessed
        encoding); False for a batch of cases."""
        if isinstance(item, DecodedFile):
            self.decoded.append((item.file, item.encoding))
            return True
        if isinstance(item, Unjoined):
            tally = self.unjoined.setdefault((item.file, item.companion, item.kind), [0, 0])
            tally[0] += item.missing
            tally[1] += item.cases
            return True
        if isinstance(item, SkippedRecord):
            self.skipped_count += 1
            if len(self.skipped) < MAX_SKIPPED_KEPT:
                self.skipped.append(item)
            if self.on_skip is not None:
                self.on_skip(item)
            return True
        return False

    def end_partition(self, partition: Partition, cases: int, skipped: int) -> tuple[int, int]:
        """Note a partition read whole: ``cases`` read, ``skipped`` records skipped. Returns the
        cases and skipped records of its source so far (a split bulk file's parts add up; its
        bytes are counted once)."""
        path = partition.source_path
        if path not in self._tally:
            self.input_bytes += (partition.origin or partition).size
        tally = self._tally.setdefault(path, [0, 0])
        tally[0] += cases
        tally[1] += skipped
        self.mostly_skipped = [m for m in self.mostly_skipped if m[0] != path]
        if mostly_skipped(*tally):
            self.mostly_skipped.append((path, tally[1], sum(tally)))
        return tally[0], tally[1]

    @property
    def broken_joins(self) -> list[tuple[str, str, str, int, int]]:
        """(source, companion, kind, cases without their row, cases) of each join that left more
        than a few cases without their cluster, docket or court (:func:`badly_joined`)."""
        return [(f, c, k, m, n) for (f, c, k), (m, n) in self.unjoined.items() if badly_joined(n, m)]

    def as_dict(self) -> dict:
        return {"cases_read": self.cases_read, "added": self.added, "replaced": self.replaced,
                "unchanged": self.unchanged, "opinions": self.opinions, "paragraphs": self.paragraphs,
                "skipped": self.skipped_count,
                "mostly_skipped": [{"path": p, "skipped": s, "records": n} for p, s, n in self.mostly_skipped],
                "decoded": [{"file": f, "encoding": e} for f, e in self.decoded],
                "unjoined": [{"source": f, "companion": c, "kind": k, "missing": m, "cases": n}
                             for (f, c, k), (m, n) in self.unjoined.items()],
                "partitions": self.partitions, "input_bytes": self.input_bytes,
                "seconds": round(self.seconds, 3), "engine": self.engine,
                "cases_per_second": round(self.cases_read / self.seconds, 2) if self.seconds else None,
                **({"split_parts": self.split_parts, "split_cpu_seconds": round(self.split_seconds, 3)}
                   if self.split_parts else {}),
                **({"cpu_seconds": self.cpu_seconds} if self.cpu_seconds else {})}


def analysis_settings(statistics: bool = True) -> dict:
    """What the stored statistics depend on (recorded in the collection, checked on every ingest)."""
    from statinterp.provenance import package_version

    if not statistics:
        return {"statistics": False}
    analyzer = new_analyzer()
    return {"settings_key": analyzer.settings_key, "spacy": package_version("spacy") or "unknown",
            "spacy-lookups-data": package_version("spacy-lookups-data") or "unknown"}


def ingest(sources: Iterable[str | Path], collection: str | Path, *, fmt: str | None = None,
           engine: str = "local", scheduler: str | None = None, citations: bool = True,
           progress: Callable[[int], None] | None = None, n_workers: int = 2,
           statistics: bool = True, analyzer=None, encoding: str | None = None,
           shard_by: str | None = None, split_parts: int | None = None,
           on_skip: Callable[[SkippedRecord], None] | None = None, command: str | None = None) -> IngestSummary:
    """Read ``sources`` into the collection folder ``collection`` (created if new).

    ``progress`` is called with the number of cases read after each batch. ``engine="dask"``
    prepares partitions on ``dask.distributed`` (the scheduler at ``scheduler``, else a local
    cluster of ``n_workers`` processes); the collection is the same as with ``"local"``.
    ``statistics=False`` stores cases without analysing them (no statistics: for measuring the
    cost of parsing and storing alone; such a collection cannot later receive statistics).
    ``encoding`` forces the encoding of plain-text sources (``ingest --encoding``).
    ``shard_by`` (one of :data:`~statinterp.collection.shards.SHARD_KEYS`) writes a collection in
    shards: one collection per value of that field under ``collection``, with a manifest
    (:mod:`statinterp.collection.shards`). ``split_parts`` (Dask only): the parts each CourtListener
    opinions file is split into (:func:`split_for_dask`; None: :func:`default_split_parts` of the
    cluster's workers for a file of at least
    :data:`~statinterp.sources.courtlistener.SPLIT_MIN_BYTES`; 0 or 1: none). ``on_skip`` is
    called with each skipped record as it comes (the summary keeps the first
    :data:`MAX_SKIPPED_KEPT` and counts the rest). The collection records that an ingest is in
    progress from its start to its clean finish (``command``: the command line that completes it,
    shown by ``collection info``, ``find`` and ``rank --collection`` meanwhile or after a stop)."""
    check_engine(engine, scheduler)
    started = time.perf_counter()
    partitions = discover(list(sources), fmt, encoding)  # unreadable or unknown sources fail before anything is written
    summary = IngestSummary(partitions=len(partitions), engine=engine, on_skip=on_skip)
    settings = analysis_settings(statistics)
    with damage_named(collection), (ShardedWriter(collection, shard_by, settings) if shard_by is not None
                                    else CollectionWriter(collection, settings)) as writer, ExitStack() as spool:
        writer.mark_ingest(command)
        if engine == "dask":
            partitions = spool.enter_context(split_for_dask(
                partitions, Path(collection), split_parts, scheduler, n_workers, summary, writer))
        if isinstance(writer, ShardedWriter) and engine == "dask":  # the shards written by the workers

            write_shards_on_dask(partitions, writer, summary, citations=citations, statistics=statistics,
                                 scheduler=scheduler, n_workers=n_workers, progress=progress)
            writer.unmark_ingest()
            summary.seconds = time.perf_counter() - started
            return summary
        known = (writer.known_hash if isinstance(writer, ShardedWriter)  # in the shard of the record's key
                 else lambda r: writer.known_hash(r.source, r.source_id))
        analyzer = (analyzer or new_analyzer()) if statistics else None

        def reprepare(record: CaseRecord) -> PreparedCase:
            return prepare_cases([record], analyzer, citations=False)[0]  # its statistics only

        streams: Iterable[tuple[Partition, Iterable]]
        if engine == "local":
            streams = ((p, prepare_partition(p, citations, known, analyzer, statistics))
                       for p in partitions)
        else:

            streams = dask_streams(partitions, citations, scheduler, n_workers, statistics=statistics)
        for partition, stream in streams:
            cases = skipped = 0
            for item in stream:
                if summary.note(item):  # a skipped record, a guessed encoding
                    skipped += isinstance(item, SkippedRecord)
                    continue
                if isinstance(writer, ShardedWriter):  # it counts each shard's cases, unchanged ones too
                    counts = writer.write(item, reprepare)
                else:
                    fresh = [c for c in item if isinstance(c, PreparedCase)]
                    counts = writer.write(fresh, reprepare) if fresh else dict.fromkeys(COUNTS, 0)
                    counts["unchanged"] += len(item) - len(fresh)
                summary.add(counts)
                summary.cases_read += len(item)
                cases += len(item)
                if progress:
                    progress(len(item))
            writer.record_source(partition.source_path, partition.format,
                                 *summary.end_partition(partition, cases, skipped))
        writer.unmark_ingest()
    summary.seconds = time.perf_counter() - started
    return summary


#: The folder of split bulk files, in the collection's folder (the workers see it: docs/collection.md).
SPLIT_FOLDER = ".split"


def default_split_parts(n_workers: int) -> int:
    """The parts a large CourtListener file is split into by default: two per worker (a part per
    worker would leave workers idle behind the largest part; more parts cost each its share of
    the courts file and a task)."""
    return max(2, min(2 * n_workers, MAX_SPLIT_PARTS))


#: At most this many parts (a split holds five files of each part open).
MAX_SPLIT_PARTS = 128


@contextmanager
def split_for_dask(partitions: list[Partition], collection: Path, parts: int | None, scheduler: str | None,
                   n_workers: int, summary: IngestSummary, writer) -> Iterator[list[Partition]]:
    """``partitions`` with each CourtListener opinions file replaced by its ``parts`` parts
    (:mod:`statinterp.sources.courtlistener`; None: those of at least ``SPLIT_MIN_BYTES``
    into :func:`default_split_parts` of the workers of ``scheduler``, else ``n_workers``),
    written under ``COLLECTION/.split/RUN`` and removed on leaving. Records skipped while
    splitting go to ``summary`` (and the source's count). A stopped run's folder (its process
    gone) is removed; a run never reads another's."""
    from statinterp.sources.courtlistener import SPLIT_MIN_BYTES, split_bulk, splittable

    todo = [p for p in partitions if (parts is None or parts > 1) and splittable(p)
            and (parts is not None or Path(p.path).stat().st_size >= SPLIT_MIN_BYTES)]
    if not todo:
        yield partitions
        return
    if parts is None:

        parts = default_split_parts(n_workers if scheduler is None else cluster_workers(scheduler))
    root = collection.resolve() / SPLIT_FOLDER
    _remove_stopped_runs(root)
    run = root / f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        out: list[Partition] = []
        for p in partitions:
            if p not in todo:
                out.append(p)
                continue
            cpu = time.process_time()
            done = split_bulk(p, run / f"{len(out):06d}", min(parts, MAX_SPLIT_PARTS), on_skip=summary.note)
            summary.split_seconds += time.process_time() - cpu
            summary.split_parts += len(done.parts)
            totals = summary.end_partition(p, 0, done.skipped_count)
            if isinstance(writer, CollectionWriter):  # a shard set records a source in the shards it reached
                writer.record_source(p.path, p.format, *totals)
            out.extend(done.parts)
        yield out
    finally:
        shutil.rmtree(run, ignore_errors=True)
        with suppress(OSError):
            root.rmdir()  # when no other run's folder is there


def _remove_stopped_runs(root: Path) -> None:
    """Remove the split folders of stopped runs on this machine (named HOST-PID-ID; PID is gone)."""
    host = socket.gethostname()
    for run in root.glob("*-*-*") if root.is_dir() else ():
        name, pid, _ = run.name.rsplit("-", 2)
        if name == host and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(run, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
