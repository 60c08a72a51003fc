"""The files CourtListener publishes, read as a stream of records (dicts), whatever their shape.

* **Bulk CSV** (``opinions-DATE.csv.bz2``, ``opinion-clusters-...``, ``dockets-...``,
  ``courts-...``, ``citations-...``): written by PostgreSQL's ``COPY ... TO STDOUT WITH (FORMAT
  csv, ENCODING utf8, HEADER, ESCAPE '\\', FORCE_QUOTE *)`` (CourtListener's
  ``scripts/make_bulk_data.sh``), so a quote inside a value is ``\\"`` and a backslash ``\\\\``;
  columns are found by the header (any order; extra columns ignored).
* **JSON**: JSON lines (one record a line), a REST API page (``{"count", "next", "results"}``),
  a single record, or a list of records; the older per-opinion JSON files (pretty-printed, one
  per file) in a folder or a ``tar`` / ``tar.gz`` of them.

Compressed files (``.gz``, ``.bz2``, ``.xz``) are read as streams. Reading a file reports its
progress in bytes of the file (:mod:`statinterp.progress`).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import re
import tarfile
import zlib
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from statinterp import progress
from statinterp.corpus.dataset import MAX_MEMBER_BYTES
from statinterp.errors import InputError, json_type, json_values_problem, read_limited
from statinterp.sources.limits import MAX_LINE_BYTES, bounded_lines
from statinterp.text.limits import MAX_TEXT_CHARS

#: csv's limit on one field: bounded (a real opinion's markup exceeds csv's default of 131,072
#: characters); a field over the text limit is skipped with its cluster, one over this limit
#: (four times the text limit) stops the file with its row named.
CSV_FIELD_LIMIT = 4 * MAX_TEXT_CHARS

_COMPRESSED = ("", ".gz", ".bz2", ".xz")
_TAR = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")

#: A record, where it is ("row 12", "line 3", "12345.json"), or the problem that made it unreadable.
Item = tuple[str, dict | None, str | None]


def strip_compression(name: str) -> str:
    name = name.lower()
    for c in _COMPRESSED[1:]:
        if name.endswith(c):
            return name[: -len(c)]
    return name


def is_tar(name: str) -> bool:
    return name.lower().endswith(_TAR)


def _decompress(raw, name: str):
    name = name.lower()
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw)
    if name.endswith(".bz2"):
        return bz2.BZ2File(raw)
    if name.endswith(".xz"):
        return lzma.LZMAFile(raw)
    return raw


_ERRORS = (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError, zlib.error, tarfile.TarError, csv.Error)


def read_records(path: Path, label: str = "", max_line: int = MAX_LINE_BYTES) -> Iterator[Item]:
    """Every record of one CourtListener file (CSV, JSON lines, JSON, tar of JSON) or of a folder
    of per-opinion JSON files, with progress in bytes read. Lines are read in bounded pieces
    (:func:`~statinterp.sources.limits.bounded_lines`): a line over ``max_line`` bytes is a
    skipped record, never held whole."""
    files = folder_json_files(path) if path.is_dir() else [path]
    total = sum(f.stat().st_size for f in files)
    with progress.task(total, label or f"read {path.name}", unit="B") as advance:
        for file in files:
            try:
                with open(file, "rb") as raw:
                    yield from _file_records(file, raw, advance, max_line)
            except _ERRORS as exc:
                raise InputError(file, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None


def _file_records(path: Path, raw, advance, max_line: int = MAX_LINE_BYTES) -> Iterator[Item]:
    name = path.name.lower()
    size = path.stat().st_size
    done = 0

    def tick() -> None:
        nonlocal done
        now = raw.tell()
        if now - done >= 1 << 20:
            advance(now - done)
            done = now

    if is_tar(name):
        with tarfile.open(fileobj=raw, mode="r|*") as tar:
            for member in tar:
                if not member.isfile() or not member.name.lower().endswith(".json") or \
                        member.name.rsplit("/", 1)[-1].startswith("."):
                    continue
                fh = tar.extractfile(member)
                data = read_limited(fh, MAX_MEMBER_BYTES) if fh is not None else b""
                yield from _json_document(data, member.name)
                tick()
        advance(max(0, size - done))
        return
    stream = _decompress(raw, name)
    base = strip_compression(name)
    if base.endswith(".csv"):  # a line under the field limit: no one-line field can stop the file
        max_line = min(max_line, CSV_FIELD_LIMIT)
    too_long = f"holds a line longer than {max_line} bytes"
    if base.endswith(".csv"):
        yield from _csv_records(path, stream, max_line, too_long, tick, compressed=base != name)
    elif base.endswith(".json"):
        data = read_limited(stream, MAX_MEMBER_BYTES)
        yield from _json_document(data, path.name)
    else:  # JSON lines, read in bounded pieces
        for i, line in bounded_lines(stream, max_line):
            if line is None:
                yield f"line {i}", None, too_long
            elif line.strip():
                yield from _json_line(line[3:] if i == 1 and line.startswith(BOM) else line, i)
            if i % 256 == 0:
                tick()
    advance(max(0, size - done))


#: The UTF-8 byte-order mark some tools write at the head of a file: accepted, never part of a record.
BOM = b"\xef\xbb\xbf"


class _CsvLines:
    """The lines of a CSV stream as ``csv`` reads them, each decoded on its own (a byte that is not
    UTF-8 marks its record, not the file), with the byte offset of each; the lines after the first
    of a malformed record can be read again (:meth:`again`), so that a quote left open in one row
    costs that row, not the rows it swallowed. Per record: ``taken`` (its lines as ``(offset,
    text, offset of a bad byte or None, too long)``), ``bad`` (the first bad byte's offset or
    None), ``too_long``."""

    def __init__(self, stream, max_line: int):
        self._stream = stream
        self._lines = bounded_lines(stream, max_line)
        self._offset = 0  # bytes read so far
        self._pending: deque[tuple[int, str, int | None, bool]] = deque()
        self.taken: list[tuple[int, str, int | None, bool]] = []
        self.bad: int | None = None
        self.too_long = False

    def __iter__(self) -> _CsvLines:
        return self

    def __next__(self) -> str:
        if self._pending:
            item = self._pending.popleft()
            if item[2] is not None and self.bad is None:
                self.bad = item[2]
            self.too_long = self.too_long or item[3]
        else:
            offset = self._offset
            _, raw = next(self._lines)  # StopIteration ends the reader
            if raw is None:  # its length is not known: where the stream is now
                self._offset = self._stream.tell()
                self.too_long = True
                item = (offset, "line too long\n", None, True)
            else:
                self._offset += len(raw)
                if offset == 0 and raw.startswith(BOM):
                    raw, offset = raw[3:], 3
                try:
                    item = (offset, raw.decode("utf-8"), None, False)
                except UnicodeDecodeError as exc:
                    item = (offset, raw.decode("utf-8", "replace"), offset + exc.start, False)
                    if self.bad is None:
                        self.bad = offset + exc.start
        self.taken.append(item)
        return item[1]

    def take(self) -> list[tuple[int, str, int | None, bool]]:
        """The lines of the record just read (and forget them and its flags)."""
        taken, self.taken = self.taken, []
        self.bad, self.too_long = None, False
        return taken

    def again(self, lines: list[tuple[int, str, int | None, bool]]) -> None:
        """Read these lines again, before any other."""
        self._pending.extendleft(reversed(lines))


def _csv_records(path: Path, stream, max_line: int, too_long: str, tick, compressed: bool = False) -> Iterator[Item]:
    """The rows of a CSV file (PostgreSQL's dialect: ``\\"`` escapes), keyed by its header, each
    checked by its shape: a row with a byte that is not UTF-8, a line over ``max_line``, another
    number of fields than the header (a quote left open merges rows: the first is skipped and the
    lines after it read again), or a field over the csv field limit, is skipped and named with
    its byte offset. A byte-order mark at the head is passed over."""
    csv.field_size_limit(CSV_FIELD_LIMIT)
    lines = _CsvLines(stream, max_line)
    reader = csv.reader(lines, escapechar="\\", doublequote=True, strict=False)
    of = " of the decompressed file" if compressed else ""
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        return
    except csv.Error as exc:
        raise InputError(path, f"its header cannot be read ({exc})") from None
    if lines.bad is not None:
        raise InputError(path, f"its header is not UTF-8 text (bad byte at offset {lines.bad})")
    lines.take()
    width = len(header)
    i = 0
    while True:
        problem = None
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            values, problem = None, f"cannot be read ({exc})"
        bad, long = lines.bad, lines.too_long
        taken = lines.take()
        if not taken:
            break
        if values is not None and problem is None and not bad and not long:
            if len(values) == width:
                i += 1
                yield f"row {i}", dict(zip(header, values, strict=True)), None
                if i % 256 == 0:
                    tick()
                continue
            if not values:
                continue  # a blank line
        i += 1
        at = f"the row at byte {taken[0][0]}{of}"
        # its shape: a quote left open (or a stray one) merges rows, or makes a field over csv's limit
        misshapen = problem is not None or values is None or len(values) != width
        if long:
            yield f"row {i}", None, f"{too_long} ({at})"
        elif bad is not None and problem is None:
            yield f"row {i}", None, f"not UTF-8 text (bad byte at offset {bad}{of})"
        else:
            problem = problem or (f"has {len(values or ())} fields, the header {width}: a quote left open "
                                  "(or a stray one) merged it with the line after it")
            yield f"row {i}", None, f"{at} {problem}"
        if misshapen and len(taken) > 1:
            lines.again(taken[1:])  # the lines it swallowed are read again, as rows of their own


def _json_line(line: bytes, i: int) -> Iterator[Item]:
    too_many = json_values_problem(line)
    if too_many is not None:
        yield f"line {i}", None, too_many
        return
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        yield f"line {i}", None, f"not UTF-8 text (bad byte at offset {exc.start})"
        return
    except (ValueError, RecursionError) as exc:  # ValueError: also a number of over 4300 digits
        yield f"line {i}", None, f"malformed JSON ({exc})"
        return
    yield from _records_of(obj, f"line {i}")


def _json_document(data: bytes, name: str) -> Iterator[Item]:
    if len(data) > MAX_MEMBER_BYTES:
        yield name, None, f"larger than the limit of {MAX_MEMBER_BYTES} bytes"
        return
    too_many = json_values_problem(data)
    if too_many is not None:
        yield name, None, too_many
        return
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        yield name, None, f"not UTF-8 text (bad byte at offset {exc.start})"
        return
    except (ValueError, RecursionError) as exc:  # ValueError: also a number of over 4300 digits
        yield name, None, f"malformed JSON ({exc})"
        return
    yield from _records_of(obj, name)


def _records_of(obj: object, where: str) -> Iterator[Item]:
    """A record, an API page's ``results``, or a list of records."""
    if isinstance(obj, dict) and isinstance(obj.get("results"), list) and "id" not in obj:
        for k, item in enumerate(obj["results"]):
            yield from _records_of(item, f"{where} results[{k}]") if not isinstance(item, dict) else [
                (f"{where} results[{k}]", item, None)]
        return
    if isinstance(obj, list):
        for k, item in enumerate(obj):
            yield (f"{where}[{k}]", item, None) if isinstance(item, dict) else (
                f"{where}[{k}]", None, f"expected a JSON object, found {json_type(item)}")
        return
    if isinstance(obj, dict):
        yield where, obj, None
        return
    yield where, None, f"expected a JSON object, found {json_type(obj)}"


_CL_JSON = re.compile(rb'"(resource_uri|cluster_id|absolute_url)"\s*:|"cluster"\s*:\s*("http|\d|\{)|'
                      rb'^\s*\{\s*"(count|next|previous|results)"\s*:')


def looks_like_courtlistener_json(path: Path) -> bool:
    """Is this ``.json`` file CourtListener's (a per-opinion file or an API page), judged by its
    first 4 KB: a ``resource_uri``, ``cluster_id`` or ``absolute_url`` key, a ``cluster`` given as a
    URL, id or object, or a page's ``count`` / ``results`` first."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return _CL_JSON.search(head) is not None


def folder_json_files(folder: Path) -> list[Path]:
    """The CourtListener ``.json`` files of one folder, in name order."""
    return sorted(p for p in folder.glob("*.json") if p.is_file() and looks_like_courtlistener_json(p))


def _pg_field(value: object) -> str:
    """One field as PostgreSQL's ``COPY ... (FORMAT csv, ESCAPE '\\', FORCE_QUOTE *)`` writes it:
    NULL (None) unquoted and empty, anything else quoted with ``\\`` before ``"`` and ``\\``."""
    if value is None:
        return ""
    text = ("t" if value else "f") if isinstance(value, bool) else str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_bulk_csv(path: Path, columns: list[str], rows: Iterator[dict] | list[dict]) -> int:
    """Write rows as CourtListener's bulk files are written (header unquoted, every value quoted,
    backslash escapes; bz2/gz/xz by the name's suffix); returns the number of rows. For tests and
    benchmarks: the reader's dialect has one writer here."""
    name = path.name.lower()
    opener = bz2.open if name.endswith(".bz2") else gzip.open if name.endswith(".gz") else (
        lzma.open if name.endswith(".xz") else open)
    n = 0
    with opener(path, "wt", encoding="utf-8", newline="") as fh:
        fh.write(",".join(columns) + "\n")
        for row in rows:
            fh.write(",".join(_pg_field(row.get(c)) for c in columns) + "\n")
            n += 1
    return n
