"""``ingest --engine dask --shard-by KEY``: the shards of a set written in parallel by the workers.

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
   :data:`~statinterp.collection.prepare.BATCH_CASES` (one transaction each), and records the
   source. A shard's tasks are chained in partition order (each waits for the one before), so a
   shard has one writer at a time; different shards are written side by side.
4. **Finish** (a worker, :func:`finish_on_worker`, once every write is done): each shard the run
   wrote gets its full-text indexes merged and a new word list
   (:func:`~statinterp.collection.shard_words.finish_shard`), shards side by side.

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

import os
import pickle
import shutil
import socket
import sqlite3
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from statinterp.collection.dask_engine import WINDOW, dask_client, results_in_order, worker_analyzer
from statinterp.collection.prepare import BATCH_CASES, PreparedCase, prepare_cases, prepare_partition
from statinterp.collection.shards import ShardedWriter, shard_folder_name, shard_key
from statinterp.errors import UsageError
from statinterp.sources import Partition
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, Unjoined

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
    (:func:`~statinterp.collection.shard_words.finish_shard`). Returns the CPU seconds taken."""
    from statinterp.collection.shard_words import finish_shard

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
