"""Ingesting sources into a collection, in the calling process or on a Dask cluster.

Both engines read the same partitions (:func:`statinterp.sources.discover`: one per source
file), compute the same :class:`~statinterp.collection.prepare.PreparedCase` values and hand
them to **one writer** (this process) in partition order, record order, so case, opinion and
paragraph ids, and every statistic, are the same whichever engine ran (docs/collection.md says
why a single writer rather than shards merged at the end). A collection in shards
(``shard_by``) has one writer per shard: on Dask the workers write the shards side by side
(:mod:`statinterp.collection.dask_shards`), with the same result as the local engine.

A malformed record is skipped and reported (:class:`~statinterp.sources.records.SkippedRecord`);
a source that cannot be read at all raises :class:`~statinterp.errors.InputError` before any
case of its current batch is stored (earlier batches stay: the collection is consistent, and
running the same ingest again completes it).

A source file most of whose records are skipped (:func:`mostly_skipped`: more than half, and at
least :data:`MOSTLY_SKIPPED_MIN`) is probably not of the format it was read as: the summary
lists it (:attr:`IngestSummary.mostly_skipped`) and the command ends with exit status 2 unless
``--allow-skips`` (what was stored stays). So does a join that left more than a few cases without
their row in a companion file (:func:`badly_joined`; :attr:`IngestSummary.broken_joins`).
"""

from __future__ import annotations

import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from statinterp.collection.dask_engine import check_engine
from statinterp.collection.prepare import PreparedCase, new_analyzer, prepare_cases, prepare_partition
from statinterp.collection.shards import ShardedWriter
from statinterp.collection.store import CollectionWriter, damage_named
from statinterp.sources import Partition, discover
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, Unjoined

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
            from statinterp.collection.dask_shards import write_shards_on_dask

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
            from statinterp.collection.dask_engine import dask_streams

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
        from statinterp.collection.dask_engine import cluster_workers

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
