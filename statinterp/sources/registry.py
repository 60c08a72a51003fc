"""The source-format registry: each bulk format is one module that registers itself here.

A :class:`SourceFormat` says what the format is called, how a file or folder of it is
recognised (sniffed), how a partition of it is read, and its one-line description (shown by
``statinterp ingest --help`` and listed in docs/data-format.md). :func:`statinterp.sources.discover`
and :func:`~statinterp.sources.read_partition` and the command line take the list of formats
from here, so a new format is one module calling :func:`register`.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from statinterp.errors import InputError

if TYPE_CHECKING:
    from statinterp.sources.records import SourceItem


@dataclass(frozen=True, order=True)
class Partition:
    """One unit of reading (and of work on a cluster): a format and a path.

    ``companions`` are files read with the partition (CourtListener's clusters, dockets, courts
    and citations files for an opinions file). ``origin``: the partition this one is a part of
    (a CourtListener bulk file split for Dask, :mod:`statinterp.sources.courtlistener`):
    skipped records and the collection's list of sources name the origin's path."""

    path: str
    format: str
    companions: tuple[str, ...] = ()
    encoding: str | None = None  # forced text encoding (``ingest --encoding``) of a ``text`` partition
    origin: Partition | None = None

    @property
    def source_path(self) -> str:
        """The path reported and recorded: the origin's for a part, else this partition's."""
        return self.origin.path if self.origin is not None else self.path

    @property
    def size(self) -> int:
        """Bytes of input (for throughput figures), companions included."""
        total = sum(Path(c).stat().st_size for c in self.companions)
        p = Path(self.path)
        if p.is_file():
            return total + p.stat().st_size
        fmt = _FORMATS.get(self.format)
        files = fmt.files(p) if fmt is not None and fmt.files is not None else [
            f for f in p.rglob("*") if f.is_file()]
        return total + sum(f.stat().st_size for f in files)


@dataclass(frozen=True)
class SourceFormat:
    """One bulk case-law format.

    * ``sniff_file(path)``: is this file (zips included) of the format?
    * ``sniff_folder(path, names)``: the partition (a bag, a volume folder) this folder, with these
      file names, makes whole, or None; its subfolders are then not walked.
    * ``group(path)``: this file is read with the other such files of its folder, as one partition
      (the folder), and ``files(folder)`` lists them; other files are one partition each.
    * ``companion(path)``: a description when the file is not a source but is read beside one
      of this format (e.g. CourtListener's clusters file); ``companions(partition_path, given)``
      the companion files a partition reads (``given``: those named on the command line).
    * ``order``: sniffing order (lower first): a format recognised by content goes before one
      recognised by name alone.
    """

    name: str
    description: str
    read: Callable[[Partition], Iterator[SourceItem]]
    sniff_file: Callable[[Path], bool]
    sniff_folder: Callable[[Path, list[str]], Path | None] | None = None
    group: Callable[[Path], bool] | None = None
    files: Callable[[Path], list[Path]] | None = None
    companion: Callable[[Path], str | None] | None = None
    companions: Callable[[str, list[str]], tuple[str, ...]] | None = None
    order: int = 50


_FORMATS: dict[str, SourceFormat] = {}


def register(fmt: SourceFormat) -> SourceFormat:
    """Add (or replace, by name) a source format."""
    _FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Remove a format (tests that register their own)."""
    _FORMATS.pop(name, None)


def registered() -> list[SourceFormat]:
    """The formats in sniffing order (then by name)."""
    return sorted(_FORMATS.values(), key=lambda f: (f.order, f.name))


def format_names() -> tuple[str, ...]:
    """The names of the formats, in the order they are listed (registration order)."""
    return tuple(_FORMATS)


def get(name: str) -> SourceFormat | None:
    return _FORMATS.get(name)



def format_help() -> str:
    """``name (description), ...``: the formats for ``--help`` and messages."""
    return "; ".join(f"{f.name} ({f.description})" for f in (get(n) for n in format_names()) if f)


@functools.lru_cache(maxsize=64)
def _zip_names(path: str, mtime: float) -> tuple[str, ...]:
    try:
        with zipfile.ZipFile(path) as zf:
            return tuple(zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(path, f"is not a readable zip file ({exc})") from None


def zip_names(path: Path) -> tuple[str, ...]:
    """The member names of a zip (cached: every format's sniffer asks)."""
    return _zip_names(str(path), path.stat().st_mtime)
