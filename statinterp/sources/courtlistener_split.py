"""A CourtListener bulk opinions file split into parts, so ``ingest --engine dask`` spreads it.

One bulk file (``opinions-DATE.csv.bz2`` and its companions) is one partition, read by one
worker. :func:`split_bulk` reads it once, in one streaming pass per file, and writes ``parts``
ordinary CourtListener partitions, each with its own companions:

* every opinion row goes to the part of its cluster (CRC-32 of the cluster id, modulo
  ``parts``), so all opinions of a cluster are in one part, in file order; a row without a
  usable cluster id or ``ordering_key`` is skipped here, named as the join names it
  (:func:`~statinterp.sources.courtlistener.opinion_key`: the bulk file, its record, the field);
* a cluster row goes to the part of its id when an opinion names it, and its docket id is noted
  with that part; a docket row goes to every part whose clusters name it (two clusters in two
  parts sharing one docket: both get it); a citation row to the part of its ``cluster_id``;
  the courts file (a few thousand rows) to every part.

Rows are written as JSON lines (gzip level 1 unless ``compresslevel=0``), holding what the
join keeps of them (:func:`~statinterp.sources.courtlistener.compact_opinion`,
:data:`~statinterp.sources.courtlistener.COMPANION_FIELDS`): a part is read by
:func:`~statinterp.sources.courtlistener.read_courtlistener` unchanged and gives the same cases
as reading the file whole (only their order differs: by part, then by first opinion). A part's
:class:`~statinterp.sources.registry.Partition` names the bulk file as its ``origin``, which its
skipped records and the collection's list of sources name.

The parts are written under ``folder.incomplete`` and renamed to ``folder`` when every file is
closed: a folder is whole or absent (a stopped split leaves only ``*.incomplete``, which
nothing reads).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from statinterp.sources.courtlistener import COMPANION_FIELDS, compact_opinion, companion_kind, opinion_key
from statinterp.sources.courtlistener_files import is_tar, read_records, strip_compression
from statinterp.sources.records import SkippedRecord
from statinterp.sources.registry import Partition

#: ``ingest --engine dask`` splits a CourtListener opinions file at least this large (bytes as
#: stored) unless ``--split-parts`` says otherwise: the pass over such a file takes about 10 CPU
#: seconds (benchmarks/RESULTS.md, "CourtListener bulk files"), its cases minutes on one worker.
SPLIT_MIN_BYTES = 16 << 20

#: The companion kinds in the order they are routed (clusters first: they give the dockets' parts).
_ORDER = ("clusters", "dockets", "courts", "citations")
_FLUSH = 1 << 18


def splittable(partition: Partition) -> bool:
    """Is this a CourtListener opinions file (bulk CSV or JSON lines) that can be split?"""
    name = Path(partition.path).name.lower()
    return (partition.format == "courtlistener" and partition.origin is None and Path(partition.path).is_file()
            and not is_tar(name) and strip_compression(name).endswith((".csv", ".jsonl", ".ndjson")))


def part_of(cluster: str, parts: int) -> int:
    """The part of a cluster id (the same in every process: CRC-32, not Python's ``hash``)."""
    return zlib.crc32(cluster.encode("utf-8", "surrogatepass")) % parts


@dataclass
class Split:
    """A split bulk file: its parts (those holding opinions, in part order) and the opinion rows
    skipped while routing them (the first :data:`KEPT` kept, all counted in ``skipped_count`` and
    passed to ``on_skip`` when given)."""

    parts: list[Partition] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    skipped_count: int = 0
    on_skip: Callable[[SkippedRecord], object] | None = field(default=None, repr=False)

    def skip(self, record: SkippedRecord) -> None:
        self.skipped_count += 1
        if self.on_skip is not None:
            self.on_skip(record)
        elif len(self.skipped) < KEPT:
            self.skipped.append(record)


#: The skipped records a split keeps in memory without ``on_skip`` (the rest are counted).
KEPT = 1000


class _Out:
    """One part file of JSON lines, written in buffered pieces."""

    def __init__(self, path: Path, compresslevel: int):
        self.path = path
        self.fh: BinaryIO = (gzip.open(path, "wb", compresslevel=compresslevel) if compresslevel  # type: ignore[assignment]
                             else open(path, "wb"))  # noqa: SIM115 - closed in close()
        self.buf = bytearray()
        self.rows = 0

    def write(self, row: dict) -> None:
        self.buf += json.dumps(row).encode("ascii")  # ASCII: any string (a lone surrogate too) round-trips
        self.buf += b"\n"
        self.rows += 1
        if len(self.buf) >= _FLUSH:
            self.fh.write(self.buf)
            self.buf.clear()

    def close(self) -> None:
        self.fh.write(self.buf)
        self.fh.close()


def split_bulk(partition: Partition, folder: Path, parts: int, compresslevel: int = 1,
               on_skip: Callable[[SkippedRecord], object] | None = None) -> Split:
    """Split one CourtListener opinions partition (:func:`splittable`) into at most ``parts``
    parts under ``folder`` (which must not exist); see the module's description. ``on_skip``:
    called with each opinion row skipped (else the first :data:`KEPT` are kept in the result)."""
    where = partition.source_path
    work = folder.with_name(folder.name + ".incomplete")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    suffix = ".jsonl.gz" if compresslevel else ".jsonl"
    companions = sorted(((kind, Path(c)) for c in partition.companions if (kind := companion_kind(Path(c)))),
                        key=lambda kc: _ORDER.index(kc[0]))  # stable: files of one kind in their given order
    kinds = [k for k in _ORDER if any(kind == k for kind, _ in companions)]
    prefix = {"opinions": "opinions", "clusters": "opinion-clusters", "dockets": "dockets", "courts": "courts",
              "citations": "citations"}
    outs: dict[str, list[_Out]] = {}
    out = Split(on_skip=on_skip)
    try:
        for kind in ("opinions", *kinds):
            outs[kind] = []
            for k in range(parts):
                (work / f"{k:04d}").mkdir(exist_ok=True)
                outs[kind].append(_Out(work / f"{k:04d}" / f"{prefix[kind]}-{k:04d}{suffix}", compresslevel))
        with tempfile.TemporaryDirectory(prefix="statinterp-split-") as tmp:
            db = sqlite3.connect(Path(tmp) / "routes.sqlite", isolation_level=None)
            try:
                db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
                                 "CREATE TABLE cl (cluster TEXT PRIMARY KEY, part INTEGER) WITHOUT ROWID;"
                                 "CREATE TABLE dk (docket TEXT, part INTEGER, PRIMARY KEY (docket, part)) "
                                 "WITHOUT ROWID;")
                _route_opinions(Path(partition.path), where, parts, outs["opinions"], db, out.skip)
                for kind, path in companions:
                    _route_companion(path, kind, outs[kind], db)
                db.execute("COMMIT")
            finally:
                db.close()
        for files in outs.values():
            for f in files:
                f.close()
        shutil.rmtree(folder, ignore_errors=True)
        work.rename(folder)
    except BaseException:
        for files in outs.values():
            for f in files:
                f.fh.close()
        shutil.rmtree(work, ignore_errors=True)
        raise
    for k, f in enumerate(outs["opinions"]):
        if f.rows:
            out.parts.append(Partition(
                str(folder / f.path.parent.name / f.path.name), partition.format,
                tuple(str(folder / f.path.parent.name / outs[kind][k].path.name) for kind in kinds),
                partition.encoding, partition))
    return out


def _route_opinions(path: Path, where: str, parts: int, outs: list[_Out], db: sqlite3.Connection,
                    skip: Callable[[SkippedRecord], object]) -> None:
    for label, row, problem in read_records(path, f"split {path.name}"):
        if row is None:
            skip(SkippedRecord(where, label, "(record)", problem or "unreadable"))
            continue
        key = opinion_key(where, label, row)
        if isinstance(key, SkippedRecord):
            skip(key)
            continue
        cluster = key[0]
        k = part_of(cluster, parts)
        outs[k].write({**compact_opinion(row), "cluster_id": cluster})
        db.execute("INSERT OR IGNORE INTO cl VALUES (?, ?)", (cluster, k))


def _route_companion(path: Path, kind: str, outs: list[_Out], db: sqlite3.Connection) -> None:
    """The rows of a companion file to the parts whose opinions need them (as the join keeps them)."""
    names = ("id", "cluster_id", *COMPANION_FIELDS[kind]) if kind == "citations" else ("id", *COMPANION_FIELDS[kind])
    for _label, row, _problem in read_records(path, f"split {path.name}"):
        if row is None:  # the join passes over these too
            continue
        kept = {k: row[k] for k in names if k in row}
        if kind == "courts":
            for f in outs:
                f.write(kept)
            continue
        if kind == "dockets":
            found = db.execute("SELECT part FROM dk WHERE docket = ?", (str(row.get("id") or "").strip(),))
        else:
            key = str(row.get("cluster_id" if kind == "citations" else "id") or "").strip()
            found = db.execute("SELECT part FROM cl WHERE cluster = ?", (key,))
        for (k,) in found.fetchall():
            outs[k].write(kept)
            if kind == "clusters" and str(row.get("docket_id") or ""):
                db.execute("INSERT OR IGNORE INTO dk VALUES (?, ?)", (str(row.get("docket_id") or ""), k))
