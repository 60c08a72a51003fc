"""Readers of bulk case law: one streaming reader per format, all yielding the same records.

======================  =====================================================================
format                  what it reads
======================  =====================================================================
``cap``                 CAP per-case JSON: ``REPORTER/VOLUME/cases/*.json``, or one zip per volume
``cap-bulk``            CAP legacy bulk: BagIt folder or zip with ``data/data.jsonl.xz``
``courtlistener``       CourtListener opinions: ``.jsonl`` or ``.csv`` (optionally .gz/.bz2/.xz)
``text``                plain text: ``.txt`` files, one case per file
``dataset``             the annotated data set's term zips (or folders of ``TERM-*.json``)
======================  =====================================================================

:func:`discover` turns each path given by the user into :class:`Partition` values (one per
source file: a volume folder, a zip, a bag, a JSON-lines file, a folder of ``.txt`` files), in a
deterministic order; :func:`read_partition` streams one partition's records. Without a format,
each file or folder is sniffed; with one, only files of that format are taken.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from statinterp.errors import InputError, UsageError
from statinterp.sources.records import CaseRecord, OpinionRecord, SkippedRecord

__all__ = ["FORMATS", "CaseRecord", "OpinionRecord", "Partition", "SkippedRecord", "discover", "read_partition"]

FORMATS = ("cap", "cap-bulk", "courtlistener", "text", "dataset")

_CL_SUFFIXES = (".jsonl", ".ndjson", ".csv")
_COMPRESSED = ("", ".gz", ".bz2", ".xz")


@dataclass(frozen=True, order=True)
class Partition:
    """One unit of reading (and of work on a cluster): a format and a path."""

    path: str
    format: str
    encoding: str | None = None  # forced text encoding (``ingest --encoding``) of a ``text`` partition

    @property
    def size(self) -> int:
        """Bytes of input (for throughput figures)."""
        p = Path(self.path)
        if p.is_file():
            return p.stat().st_size
        if self.format == "text":
            return sum(f.stat().st_size for f in p.glob("*.txt"))
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def _is_courtlistener(name: str) -> bool:
    name = name.lower()
    return any(name.endswith(s + c) for s in _CL_SUFFIXES for c in _COMPRESSED)


def _sniff_zip(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(path, f"is not a readable zip file ({exc})") from None
    from statinterp.sources.cap import bag_data_member

    if any(n.rsplit("/", 1)[-1] == "bagit.txt" for n in names) or bag_data_member(names):
        return "cap-bulk"
    if any(n.endswith(("-case.json",)) for n in names):
        return "dataset"
    if any(n.endswith(".json") for n in names):
        return "cap"
    raise InputError(path, "is a zip of no known case-law format (CAP volume, CAP bag or data-set term zip)")


def _sniff_file(path: Path) -> str | None:
    name = path.name
    if name.lower().endswith(".zip"):
        return _sniff_zip(path)
    if _is_courtlistener(name):
        return "courtlistener"
    if name.lower().endswith(".txt") and name != "bagit.txt":
        return "text"
    if name.endswith("-case.json"):
        return "dataset"
    if name.lower().endswith(".json"):
        from statinterp.sources.cap import CAP_METADATA

        if name in CAP_METADATA or any(name.endswith(f"-{k}.json") for k in ("opinion", "paragraph", "sentence")):
            return None
        return "cap"
    return None


def _walk(root: Path, fmt: str | None) -> list[Partition]:
    """Partitions under a folder: bags and volume folders whole; zips, JSON-lines and CSV one each;
    ``.txt`` files one partition per folder; data-set files one per folder."""
    out: list[Partition] = []

    def want(f: str) -> bool:
        return fmt is None or fmt == f

    for folder, dirs, files in os.walk(root, onerror=_raise_walk_error):
        dirs.sort()
        here = Path(folder)
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        if "bagit.txt" in files:
            if want("cap-bulk"):
                out.append(Partition(str(here), "cap-bulk"))
            dirs[:] = []
            continue
        if here.name == "cases" and any(f.endswith(".json") for f in files):
            if want("cap"):
                out.append(Partition(str(here.parent), "cap"))
            dirs[:] = []
            continue
        kinds: dict[str, list[str]] = {}
        for name in sorted(files):
            if name.startswith("."):
                continue
            kind = _sniff_file(here / name)
            if kind is not None:
                kinds.setdefault(kind, []).append(name)
        if "cases" in dirs:  # a volume folder: its cases/ subfolder is the partition
            kinds.pop("cap", None)
        for name in sorted(files):
            kind = _sniff_file(here / name) if not name.startswith(".") else None
            if kind is None or not want(kind):
                continue
            if kind in ("text", "cap", "dataset") and not name.lower().endswith(".zip"):
                continue  # grouped per folder below
            out.append(Partition(str(here / name), kind))
        if kinds.get("text") and want("text"):
            out.append(Partition(str(here), "text"))
        if kinds.get("cap") and want("cap"):
            loose = [n for n in kinds["cap"] if not n.lower().endswith(".zip")]
            if loose:
                out.append(Partition(str(here), "cap"))
        if kinds.get("dataset") and want("dataset") and any(n.endswith("-case.json") for n in kinds["dataset"]):
            out.append(Partition(str(here), "dataset"))
    return sorted(out, key=lambda p: (Path(p.path).parts, p.format))  # path order, whatever the walk's


def _raise_walk_error(exc: OSError) -> None:
    raise InputError(exc.filename or "?", f"cannot be read ({exc.strerror or exc})")


def discover(paths: list[str | Path], fmt: str | None = None, encoding: str | None = None) -> list[Partition]:
    """The partitions of every source path, in argument order then path order.

    ``encoding`` forces the text encoding of plain-text partitions (else UTF-8, or a guess for a
    file that is not UTF-8). Raises :class:`InputError` for a path that does not exist, cannot be
    read, or holds no case file of a known format (of ``fmt`` when given); :class:`UsageError`
    for an unknown format or encoding."""
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown source format {fmt!r}; use one of {', '.join(FORMATS)}")
    if encoding is not None:
        from statinterp.sources.cleaning import check_encoding

        try:
            encoding = check_encoding(encoding)
        except LookupError:
            raise UsageError(f"unknown text encoding {encoding!r} (--encoding); use a Python codec name such as "
                             "utf-8, latin-1 or cp1252") from None
    out: list[Partition] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError(path, "does not exist")
        if not os.access(path, os.R_OK):
            raise InputError(path, "cannot be read (permission denied)")
        if path.is_dir():
            if fmt == "cap-bulk" or (fmt is None and (path / "bagit.txt").exists()):
                found = [Partition(str(path), "cap-bulk")]
            else:
                found = _walk(path, fmt)
        else:
            kind = fmt or _sniff_file(path)
            if kind is None:
                raise InputError(path, "is not a case-law file of a known format; give --format "
                                 f"({', '.join(FORMATS)})")
            found = [Partition(str(path), kind)]
        if not found:
            what = f"{fmt} " if fmt else ""
            raise InputError(path, f"holds no {what}case files (formats: {', '.join(FORMATS)}; "
                             "see docs/data-format.md)")
        if encoding is not None:
            found = [replace(p, encoding=encoding) if p.format == "text" else p for p in found]
        out.extend(p for p in found if p not in out)
    return out


def read_partition(partition: Partition) -> Iterator[CaseRecord | SkippedRecord]:
    """Stream the records of one partition (raises :class:`InputError` if it cannot be read)."""
    path = Path(partition.path)
    fmt = partition.format
    if fmt == "cap":
        from statinterp.sources.cap import read_cap_folder, read_cap_zip

        return read_cap_zip(path) if path.is_file() and path.suffix.lower() == ".zip" else read_cap_folder(path)
    if fmt == "cap-bulk":
        from statinterp.sources.cap import read_cap_bag

        return read_cap_bag(path)
    if fmt == "courtlistener":
        from statinterp.sources.courtlistener import read_courtlistener

        return read_courtlistener(path)
    if fmt == "text":
        from statinterp.sources.plaintext import read_text

        return read_text(path, partition.encoding)
    if fmt == "dataset":
        from statinterp.sources.dataset import read_dataset

        return read_dataset(path)
    raise UsageError(f"unknown source format {fmt!r}")
