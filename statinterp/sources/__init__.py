"""Readers of bulk case law: one streaming reader per format, all yielding the same records.

Each format is a module that registers itself in :mod:`statinterp.sources.registry` (its name,
how it is sniffed, its reader, its one-line description); the shipped ones:

======================  =====================================================================
format                  what it reads
======================  =====================================================================
``cap``                 CAP per-case JSON: ``REPORTER/VOLUME/cases/*.json``, or one zip per volume
``cap-bulk``            CAP legacy bulk: BagIt folder or zip with ``data/data.jsonl.xz``
``courtlistener``       CourtListener: bulk CSV files (opinions joined with clusters, dockets,
                        courts, citations), JSON lines, REST API pages, per-opinion JSON (tar)
``text``                plain text: ``.txt`` files, one case per file
``pdf``                 PDF opinions: ``.pdf`` files, one case per file, read by layout
``dataset``             the annotated data set's term zips (or folders of ``TERM-*.json``)
======================  =====================================================================

:func:`discover` turns each path given by the user into :class:`Partition` values (one per
source file: a volume folder, a zip, a bag, a JSON-lines file, a folder of ``.txt`` files), in a
deterministic order; :func:`read_partition` streams one partition's records. Without a format,
each file or folder is sniffed; with one, only files of that format are taken.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from statinterp.errors import InputError, UsageError

# The shipped formats register themselves on import (the registry never imports them).
from statinterp.sources import cap, courtlistener, pdf, plaintext  # noqa: F401
from statinterp.sources.records import CaseRecord, DecodedFile, OpinionRecord, SkippedRecord, SourceItem, refuse_special
from statinterp.sources.registry import Partition, SourceFormat, format_names, get, register, registered

__all__ = ["FORMATS", "CaseRecord", "DecodedFile", "OpinionRecord", "Partition", "SkippedRecord", "SourceFormat",
           "SourceItem", "discover", "read_partition", "register"]


def __getattr__(name: str) -> object:
    if name == "FORMATS":  # derived from the registry, so a format registered later is listed too
        return format_names()
    raise AttributeError(name)


def _sniff_file(path: Path) -> str | None:
    """The format of one file, or None (a zip of no known format is an error)."""
    for fmt in registered():
        if fmt.sniff_file(path):
            return fmt.name
    if path.name.lower().endswith(".zip"):
        raise InputError(path, f"is a zip of no known case-law format ({', '.join(format_names())})")
    return None


def _companion(path: Path, fmt: str | None) -> tuple[SourceFormat, str] | None:
    """(format, description) when the file is a companion of a format's sources (e.g. a
    CourtListener clusters file), not a source itself."""
    for f in registered():
        if f.companion is not None and (fmt is None or fmt == f.name):
            what = f.companion(path)
            if what:
                return f, what
    return None


def _walk(root: Path, fmt: str | None) -> list[Partition]:
    """Partitions under a folder: folders a format takes whole (bags, volume folders); loose files
    of a grouped format one partition per folder; any other file one partition each."""
    out: list[Partition] = []
    folder_sniffers = [(f, f.sniff_folder) for f in registered() if f.sniff_folder is not None]

    def want(f: str) -> bool:
        return fmt is None or fmt == f

    for folder, dirs, files in os.walk(root, onerror=_raise_walk_error):
        dirs.sort()
        here = Path(folder)
        for name in files:
            if not name.startswith("."):
                refuse_special(here / name)
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        whole = next(((f, p) for f, sniff in folder_sniffers if (p := sniff(here, files)) is not None), None)
        if whole is not None:
            if want(whole[0].name):
                out.append(Partition(str(whole[1]), whole[0].name))
            dirs[:] = []
            continue
        grouped: set[str] = set()
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = here / name
            if _companion(path, fmt) is not None:
                continue
            kind = _sniff_file(path)
            if kind is None or not want(kind):
                continue
            spec = get(kind)
            if spec is not None and spec.group is not None and spec.group(path):
                grouped.add(kind)
            else:
                out.append(Partition(str(path), kind))
        out.extend(Partition(str(here), kind) for kind in sorted(grouped))
    return sorted(set(out), key=lambda p: (Path(p.path).parts, p.format))  # path order, whatever the walk's


def _raise_walk_error(exc: OSError) -> None:
    raise InputError(exc.filename or "?", f"cannot be read ({exc.strerror or exc})")


def discover(paths: list[str | Path], fmt: str | None = None, encoding: str | None = None) -> list[Partition]:
    """The partitions of every source path, in argument order then path order.

    ``encoding`` forces the text encoding of plain-text partitions (else UTF-8, or a guess for a
    file that is not UTF-8). Companion files (CourtListener's clusters, dockets, courts, citations
    files) given as paths are attached to the partitions of their format. Raises
    :class:`InputError` for a path that does not exist, cannot be read, or holds no case file of a
    known format (of ``fmt`` when given), and for companions given without any source they
    describe; :class:`UsageError` for an unknown format or encoding."""
    names = format_names()
    if fmt is not None and fmt not in names:
        raise UsageError(f"unknown source format {fmt!r}; use one of {', '.join(names)}")
    if encoding is not None:
        from statinterp.sources.cleaning import check_encoding

        try:
            encoding = check_encoding(encoding)
        except LookupError:
            raise UsageError(f"unknown text encoding {encoding!r} (--encoding); use a Python codec name such as "
                             "utf-8, latin-1 or cp1252") from None
        except ValueError:
            raise UsageError(f"{encoding!r} is not a text encoding (--encoding): it does not turn bytes into text; "
                             "use one such as utf-8, latin-1 or cp1252") from None
    out: list[Partition] = []
    given: dict[str, list[tuple[str, str]]] = {}
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputError(path, "does not exist")
        if not os.access(path, os.R_OK):
            raise InputError(path, "cannot be read (permission denied)")
        refuse_special(path)
        if path.is_dir():
            found = _walk(path, fmt)
        else:
            companion = _companion(path, fmt)
            if companion is not None:
                given.setdefault(companion[0].name, []).append((str(path), companion[1]))
                continue
            kind = fmt or _sniff_file(path)
            if kind is None:
                raise InputError(path, f"is not a case-law file of a known format; give --format ({', '.join(names)})")
            found = [Partition(str(path), kind)]
        if not found:
            companion = next((c for f in sorted(path.rglob("*")) if (c := _companion(f, fmt))), None)
            if companion is not None:
                raise InputError(path, f"holds {companion[1]} but no {companion[0].name} source it describes "
                                 "(see docs/data-format.md)")
            what = f"{fmt} " if fmt else ""
            raise InputError(path, f"holds no {what}case files (formats: {', '.join(names)}; "
                             "see docs/data-format.md)")
        if encoding is not None:
            found = [replace(p, encoding=encoding) if p.format == "text" else p for p in found]
        out.extend(p for p in found if p not in out)
    for name, companions in given.items():
        if not any(p.format == name for p in out):
            first, what = companions[0]
            raise InputError(first, f"is {what}: it describes the cases of a {name} source, it holds none itself; "
                             "give it together with that source (see docs/data-format.md)")
    return [_with_companions(p, [c for c, _ in given.get(p.format, [])]) for p in out]


def _with_companions(partition: Partition, given: list[str]) -> Partition:
    spec = get(partition.format)
    if spec is None or spec.companions is None:
        return partition
    return replace(partition, companions=spec.companions(partition.path, given))


#: Formats whose files can hold one case id twice (two case files or lines with the same ``id``).
_REPEATABLE_IDS = ("cap", "cap-bulk")


def read_partition(partition: Partition) -> Iterator[SourceItem]:
    """Stream the records of one partition (raises :class:`InputError` if it cannot be read).

    Each record is checked against the limits of :mod:`statinterp.sources.records` (one over a
    limit comes as a :class:`SkippedRecord`; a file read in a guessed encoding is announced by a
    :class:`DecodedFile` before its case). A case id that occurs twice in the partition: the
    last record with that id is kept, the earlier ones come as skipped records, whatever is
    stored already (so re-runs find the kept one unchanged). For that, CAP partitions are read
    twice: once for the ids, once for the records."""
    from statinterp.sources.records import check_record

    def checked() -> Iterator[SourceItem]:
        return (check_record(item, partition.source_path) for item in _read(partition))

    if partition.format not in _REPEATABLE_IDS:
        return checked()
    last: dict[str, int] = {}
    for i, item in enumerate(checked()):
        if isinstance(item, CaseRecord):
            last[item.source_id] = i
    return _last_wins(checked(), last, partition.path)


def _last_wins(items: Iterator[SourceItem], last: dict[str, int], where: str) -> Iterator[SourceItem]:
    for i, item in enumerate(items):
        if isinstance(item, CaseRecord) and last.get(item.source_id, i) != i:
            yield SkippedRecord(where, item.source_id, "id", "occurs again later in this source: the last record "
                                "with this id is the one stored")
            continue
        yield item


def _read(partition: Partition) -> Iterator[SourceItem]:
    spec = get(partition.format)
    if spec is None:
        raise UsageError(f"unknown source format {partition.format!r}")
    return spec.read(partition)
