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
from collections.abc import Iterator
from pathlib import Path

from statinterp import progress
from statinterp.corpus.dataset import MAX_MEMBER_BYTES
from statinterp.errors import InputError, json_type, read_limited
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
        dropped = [0]

        def text_lines() -> Iterator[str]:  # bounded lines: a longer one stands for its row, skipped below
            for _, line in bounded_lines(stream, max_line):
                if line is None:
                    dropped[0] += 1
                    yield "line too long\n"
                    continue
                yield line.decode("utf-8")

        i = seen = 0
        try:
            for i, row in enumerate(csv_rows(text_lines()), 1):
                if dropped[0] != seen:
                    seen = dropped[0]
                    yield f"row {i}", None, too_long
                else:
                    yield f"row {i}", row, None
                if i % 256 == 0:
                    tick()
        except csv.Error as exc:
            raise InputError(path, f"row {i + 1} cannot be read ({exc})") from None
    elif base.endswith(".json"):
        data = read_limited(stream, MAX_MEMBER_BYTES)
        yield from _json_document(data, path.name)
    else:  # JSON lines, read in bounded pieces
        for i, line in bounded_lines(stream, max_line):
            if line is None:
                yield f"line {i}", None, too_long
            elif line.strip():
                yield from _json_line(line, i)
            if i % 256 == 0:
                tick()
    advance(max(0, size - done))


def csv_rows(text) -> Iterator[dict]:
    """Rows of a CSV file in PostgreSQL's dialect (``\\"`` escapes), keyed by its header."""
    csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(text, escapechar="\\", doublequote=True, strict=False)
    header = next(reader, None)
    if header is None:
        return
    header = [h.strip() for h in header]
    for values in reader:
        if values:
            yield dict(zip(header, values, strict=False))


def _json_line(line: bytes, i: int) -> Iterator[Item]:
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
