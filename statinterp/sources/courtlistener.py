"""CourtListener case law: opinions joined with their clusters, dockets, courts and citations.

The files are read by :mod:`statinterp.sources.courtlistener` (bulk CSV in PostgreSQL's
dialect, JSON lines, REST API pages, per-opinion JSON files, tars of them). A case is a
*cluster*: its opinions (grouped by ``cluster_id``, or the cluster id in a ``cluster`` URL), its
name and date (``opinion-clusters-DATE.csv``), court and docket number (``dockets-DATE.csv``,
``courts-DATE.csv``) and reporter citations (``citations-DATE.csv``), the companion files found
beside the opinions file by CourtListener's file-name prefixes or given on the command line.

An opinion's text is CourtListener's best text (``OPINION_TEXT_SOURCE_FIELDS`` in its
``cl/search/models.py``): the first non-empty of ``html_with_citations``, ``xml_harvard``,
``html_columbia``, ``html_lawbox``, ``html_anon_2020``, ``html`` turned into paragraphs by
:func:`~statinterp.sources.cleaning.clean_markup`, else ``plain_text``
(:func:`~statinterp.sources.cleaning.clean_plain`): :func:`opinion_record`.

Memory stays flat however large the files: opinions are spilled to a temporary SQLite file,
the companions' rows are kept there only for the clusters (and their dockets) the opinions
name, and cases are read back cluster by cluster, in the order of their first opinion,
opinions in file order (or by ``ordering_key`` when given).

**The files CourtListener publishes**, read as a stream of records (dicts), whatever their shape
(:func:`read_records`):

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

**A bulk opinions file split into parts**, so ``ingest --engine dask`` spreads it.

One bulk file (``opinions-DATE.csv.bz2`` and its companions) is one partition, read by one
worker. :func:`split_bulk` reads it once, in one streaming pass per file, and writes ``parts``
ordinary CourtListener partitions, each with its own companions:

* every opinion row goes to the part of its cluster (CRC-32 of the cluster id, modulo
  ``parts``), so all opinions of a cluster are in one part, in file order; a row without a
  usable cluster id or ``ordering_key`` is skipped here, named as the join names it
  (:func:`opinion_key`: the bulk file, its record, the field);
* a cluster row goes to the part of its id when an opinion names it, and its docket id is noted
  with that part; a docket row goes to every part whose clusters name it (two clusters in two
  parts sharing one docket: both get it); a citation row to the part of its ``cluster_id``;
  the courts file (a few thousand rows) to every part.

Rows are written as JSON lines (gzip level 1 unless ``compresslevel=0``), holding what the
join keeps of them (:func:`compact_opinion`,
:data:`COMPANION_FIELDS`): a part is read by
:func:`read_courtlistener` unchanged and gives the same cases
as reading the file whole (only their order differs: by part, then by first opinion). A part's
:class:`~statinterp.sources.registry.Partition` names the bulk file as its ``origin``, which its
skipped records and the collection's list of sources name.

The parts are written under ``folder.incomplete`` and renamed to ``folder`` when every file is
closed: a folder is whole or absent (a stopped split leaves only ``*.incomplete``, which
nothing reads).
"""

from __future__ import annotations

import bz2
import csv
import errno
import gzip
import html
import json
import lzma
import re
import shutil
import sqlite3
import tarfile
import tempfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from statinterp import progress
from statinterp.corpus.dataset import MAX_MEMBER_BYTES
from statinterp.corpus.pin_cites import cite_name, parse_cite
from statinterp.errors import InputError, OutputError, json_type, json_values_problem, read_limited
from statinterp.progress import note
from statinterp.sources.cap import BadField, text_of
from statinterp.sources.cleaning import clean_markup, clean_plain
from statinterp.sources.records import (
    MAX_LINE_BYTES,
    CaseRecord,
    OpinionRecord,
    SkippedRecord,
    Unjoined,
    bounded_lines,
    id_problem,
    sqlite_integer,
)
from statinterp.sources.registry import Partition, SourceFormat, register
from statinterp.sqlite import transaction
from statinterp.text import MAX_TEXT_CHARS

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
    (:func:`~statinterp.sources.records.bounded_lines`): a line over ``max_line`` bytes is a
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


#: CourtListener's text fields in its order of preference (``OPINION_TEXT_SOURCE_FIELDS``), then
#: ``plain_text`` (its fallback).
MARKUP_FIELDS = ("html_with_citations", "xml_harvard", "html_columbia", "html_lawbox", "html_anon_2020", "html")
TEXT_FIELDS = (*MARKUP_FIELDS, "plain_text")

#: CourtListener opinion types -> the data set's names (others keep their own name, digits removed).
OPINION_TYPES = {
    "010combined": "majority", "015unamimous": "majority", "015unanimous": "majority", "020lead": "majority",
    "025plurality": "plurality", "030concurrence": "concurrence", "035concurrenceinpart": "concurrence",
    "040dissent": "dissent",
}

def opinion_text(row: dict) -> tuple[str, str]:
    """(field, value) of an opinion's best text: the first of :data:`TEXT_FIELDS` with text
    (``("", "")`` when none has any). A value that is not a string raises :class:`BadField`."""
    for name in TEXT_FIELDS:
        value = text_of(row, name, numbers=False)
        if value.strip():
            return name, value
    return "", ""


def opinion_record(row: dict, kind: str, author: str | None, head: list[str] | None = None) -> OpinionRecord:
    """An opinion with its best text (:func:`opinion_text`) through the cleaning step
    (:mod:`statinterp.sources.cleaning`: page labels, footnotes, PDF-born plain text). With
    ``head``, the head matter of PDF-born text (its caption, an order's title) goes there."""
    name, value = opinion_text(row)
    if not name:
        return OpinionRecord(kind, author, ())
    if name == "plain_text":
        return clean_plain(value, kind=kind, author=author, head=head)
    if value.lstrip().startswith("&lt;"):  # markup stored escaped (seen in bulk xml_harvard): unescape it first
        value = html.unescape(value)
    return clean_markup(value, kind=kind, author=author, head=head)


# --------------------------------------------------------------------------------------------
# Files and companions

#: CourtListener's bulk file-name prefixes of the companion files -> what they hold.
COMPANIONS = {"opinion-clusters-": "clusters", "dockets-": "dockets", "courts-": "courts", "citations-": "citations"}
_DESCRIBED = {"clusters": "a CourtListener clusters file (case names and dates)",
              "dockets": "a CourtListener dockets file (courts and docket numbers)",
              "courts": "a CourtListener courts file (court names)",
              "citations": "a CourtListener citations file (reporter citations)"}
_SUFFIXES = (".csv", ".jsonl", ".ndjson")


def companion_kind(path: Path) -> str | None:
    """``clusters``, ``dockets``, ``courts`` or ``citations`` for a companion bulk file (or a JSON
    file of the API's records of that kind: ``opinion-clusters-2001.json``), else None."""
    name = path.name.lower()
    if not strip_compression(name).endswith((*_SUFFIXES, ".json")):
        return None
    return next((kind for prefix, kind in COMPANIONS.items() if name.startswith(prefix)), None)


def _date_of(name: str) -> str:
    """The ``DATE`` of ``PREFIX-DATE.csv.bz2`` ('' when the name has none)."""
    m = re.search(r"(\d{4}-\d{2}-\d{2})", name)
    return m.group(1) if m else ""


def companions_of(path: str, given: list[str]) -> tuple[str, ...]:
    """The companion files an opinions file is joined with: those given, and for each kind none is
    given of, those beside it by CourtListener's prefixes (of the opinions file's date when there
    are several, else the newest)."""
    here = Path(path)
    folder = here if here.is_dir() else here.parent
    beside = sorted(f for f in folder.iterdir() if f.is_file() and companion_kind(f))
    date = _date_of(here.name)
    given_kinds = {companion_kind(Path(g)) for g in given}
    picked: list[Path] = []
    for kind in (k for k in COMPANIONS.values() if k not in given_kinds):
        of_kind = [f for f in beside if companion_kind(f) == kind]
        same_date = [f for f in of_kind if date and _date_of(f.name) == date]
        picked.extend(same_date or of_kind[-1:])  # else the newest (names sort by date)
    out = [str(Path(g)) for g in given]
    return tuple(out + [str(f) for f in picked if str(f) not in out])


def _sniff(path: Path) -> bool:
    name = path.name.lower()
    if companion_kind(path):
        return False
    if is_tar(name):
        return True
    base = strip_compression(name)
    if base.endswith(_SUFFIXES):
        return True
    return base == name and name.endswith(".json") and looks_like_courtlistener_json(path)


# --------------------------------------------------------------------------------------------
# The join

#: Fields of a cluster a row may carry itself (JSON lines made from the API often do).
_CASE_FIELDS = ("case_name", "case_name_short", "case_name_full", "date_filed", "docket_number", "court",
                "court_id", "citation", "judges", "jurisdiction", "attorneys")
_OPINION_FIELDS = ("id", "type", "author_str", "ordering_key", "absolute_url", "cluster")
_CLUSTER_URL = re.compile(r"/clusters/(\d+)/?\s*$")


def cluster_of(row: dict) -> tuple[str | None, str]:
    """(cluster id, problem): from ``cluster_id``, else ``cluster`` (an id, an API URL such as
    ``.../api/rest/v3/clusters/12345/``, or a nested object with an ``id``)."""
    value = row.get("cluster_id")
    if value is None or value == "":
        value = row.get("cluster")
        if isinstance(value, dict):
            value = value.get("id")
        elif isinstance(value, str) and not value.strip().isdigit():
            m = _CLUSTER_URL.search(value)
            if not m:
                return None, f"is {value[:80]!r}, not a cluster id or URL" if value.strip() else "missing"
            value = m.group(1)
    if value is None or value == "":
        return None, "missing (no cluster_id or cluster)"
    if isinstance(value, (dict, list, bool, float)):
        return None, f"expected an id, found {json_type(value)}"
    return str(value).strip(), ""


def compact_opinion(row: dict) -> dict:
    """What the join keeps of an opinion row: its own fields, its best text, any case fields (a row
    read back from it is read as the row itself)."""
    out = {k: row[k] for k in (*_OPINION_FIELDS, *_CASE_FIELDS) if row.get(k) not in (None, "")}
    for name in TEXT_FIELDS:  # the first with text (a non-string too: it is reported when the case is built)
        value = row.get(name)
        if value is not None and (not isinstance(value, str) or value.strip()):
            out[name] = value
            break
    cluster = row.get("cluster")
    if isinstance(cluster, dict):  # a nested cluster object: its case fields and citations (API v4)
        out.update({k: cluster[k] for k in _CASE_FIELDS if cluster.get(k) not in (None, "") and k not in out})
        out["cluster"] = cluster.get("resource_uri") or cluster.get("id") or ""
        if isinstance(cluster.get("citations"), list):
            out["citations"] = cluster["citations"]
    if isinstance(row.get("citations"), list):  # a record that is itself a cluster's (API v4)
        out["citations"] = row["citations"]
    return out


def _schema(db: sqlite3.Connection) -> None:
    db.executescript("""
        CREATE TABLE op (seq INTEGER PRIMARY KEY, cluster TEXT, ordering INTEGER, row TEXT);
        CREATE TABLE cl (cluster TEXT PRIMARY KEY, first INTEGER);
        CREATE TABLE clu (id TEXT PRIMARY KEY, docket TEXT, row TEXT);
        CREATE TABLE need_dk (id TEXT PRIMARY KEY);
        CREATE TABLE dk (id TEXT PRIMARY KEY, row TEXT);
        CREATE TABLE ct (id TEXT PRIMARY KEY, row TEXT);
        CREATE TABLE cit (cluster TEXT, row TEXT);
    """)


#: The fields the join keeps of each companion's rows (besides ``id``, and a citation's ``cluster_id``).
COMPANION_FIELDS = {
    "clusters": ("case_name", "case_name_short", "case_name_full", "date_filed", "judges", "attorneys",
                 "precedential_status", "docket_id"),
    "dockets": ("court_id", "docket_number", "case_name"),
    "courts": ("full_name", "short_name", "jurisdiction", "citation_string"),
    "citations": ("volume", "reporter", "page", "type"),
}


def _keep(row: dict, names: tuple[str, ...]) -> str:
    return json.dumps({k: row[k] for k in names if row.get(k) not in (None, "")})


def _load_companion(db: sqlite3.Connection, path: Path, kind: str) -> None:
    """The rows of a companion file that the opinions need (all courts: there are a few thousand)."""
    batch: list[tuple] = []
    sql = {
        "clusters": "INSERT OR REPLACE INTO clu SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM cl WHERE cluster = ?)",
        "dockets": "INSERT OR REPLACE INTO dk SELECT ?, ? WHERE EXISTS (SELECT 1 FROM need_dk WHERE id = ?)",
        "courts": "INSERT OR REPLACE INTO ct VALUES (?, ?)",
        "citations": "INSERT INTO cit SELECT ?, ? WHERE EXISTS (SELECT 1 FROM cl WHERE cluster = ?)",
    }[kind]
    kept = COMPANION_FIELDS[kind]
    for _label, row, _problem in read_records(path, f"read {path.name}"):
        if row is None:
            continue
        rid = str(row.get("id") or "").strip()
        if kind == "clusters":
            docket = row.get("docket_id") or _id_in_url(row.get("docket"), "dockets")
            batch.append((rid, str(docket or ""), _keep(row, kept), rid))
            for cite in nested_citations(row):  # API v4 clusters carry their citations
                db.execute("INSERT INTO cit SELECT ?, ? WHERE EXISTS (SELECT 1 FROM cl WHERE cluster = ?)",
                           (rid, _keep(cite, COMPANION_FIELDS["citations"]), rid))
        elif kind == "citations":
            cluster = str(row.get("cluster_id") or "").strip()
            batch.append((cluster, _keep(row, kept), cluster))
        elif kind == "dockets":
            batch.append((rid, _keep(row, kept), rid))
        else:
            batch.append((rid, _keep(row, kept)))
        if len(batch) >= 5000:
            db.executemany(sql, batch)
            batch.clear()
    if batch:
        db.executemany(sql, batch)
    if kind == "clusters":
        db.execute("INSERT OR IGNORE INTO need_dk SELECT docket FROM clu WHERE docket != ''")


def _id_in_url(value: object, kind: str) -> str:
    """The id in an API URL (``.../api/rest/v4/dockets/123/`` -> ``123``), '' for anything else."""
    m = re.search(rf"/{kind}/(\d+)/?\s*$", value) if isinstance(value, str) else None
    return m.group(1) if m else ""


def nested_citations(row: dict) -> list[dict]:
    """The citations a record carries itself: API v4's ``citations`` (a list of ``{"volume",
    "reporter", "page", "type"}``); a list of strings (the search API's ``citation``) as
    ``VOLUME REPORTER PAGE`` rows of unknown type."""
    out: list[dict] = []
    for key in ("citations", "citation"):
        value = row.get(key)
        if not isinstance(value, list):
            continue
        for item in value:
            if isinstance(item, dict):
                out.append(item)
            elif isinstance(item, str) and item.strip():
                m = re.match(r"^\s*(\d+)\s+(.+?)\s+(\S+)\s*$", item)
                out.append({"volume": m.group(1), "reporter": m.group(2), "page": m.group(3)} if m else
                           {"reporter": item.strip()})
    return out


def opinion_key(where: str, label: str, row: dict) -> tuple[str, int | None] | SkippedRecord:
    """(cluster id, ordering) of an opinion row, or the :class:`SkippedRecord` saying why it has none
    (``label``: where the row is in ``where``)."""
    cluster, why = cluster_of(row)
    bad_id = id_problem(cluster) if cluster is not None else None
    if bad_id is not None:
        cluster, why = None, bad_id
    if cluster is None:
        return SkippedRecord(where, str(row.get("id") or label), "cluster_id", why)
    try:
        return cluster, sqlite_integer(row.get("ordering_key"))
    except ValueError as exc:
        return SkippedRecord(where, str(row.get("id") or label), "ordering_key", str(exc))


def read_courtlistener(path: Path, companions: tuple[str, ...] = (), where: str | None = None,
                       named: tuple[str, ...] = ()) -> Iterator[CaseRecord | SkippedRecord | Unjoined]:
    """Cases (clusters) of one CourtListener opinions file or folder of per-opinion JSON files,
    joined with the companion files. ``where``: the file named in skipped records (default
    ``path``; a part of a split bulk file names the bulk file); ``named``: the companion files
    named in an :class:`Unjoined` report (default ``companions``; a part names the bulk file's).
    After the cases, an :class:`Unjoined` for each companion kind (clusters, dockets, courts)
    given that some cases found no row in."""
    try:
        yield from _read_joined(path, companions, where or str(path), named)
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_FULL":
            raise
        raise OutputError(f"the temporary folder {tempfile.gettempdir()} is full ({exc}) while joining {path} "
                          "with its companion files: free space there, or set TMPDIR to a folder with room, and "
                          "run the same command again") from None
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise OutputError(f"the temporary folder {tempfile.gettempdir()} is full while joining {path} with its "
                          "companion files: free space there, or set TMPDIR to a folder with room, and run the "
                          "same command again") from None


def _read_joined(path: Path, companions: tuple[str, ...], where: str,
                 named: tuple[str, ...]) -> Iterator[CaseRecord | SkippedRecord | Unjoined]:
    given: dict[str, str] = {}
    for c in named or companions:
        kind = companion_kind(Path(c))
        if kind is not None:
            given.setdefault(kind, c)
    missing = dict.fromkeys(("clusters", "dockets", "courts"), 0)
    with tempfile.TemporaryDirectory(prefix="statinterp-cl-") as tmp:
        db = sqlite3.connect(Path(tmp) / "spill.sqlite", isolation_level=None)
        try:
            _schema(db)
            with transaction(db):
                seq = 0
                for label, row, problem in read_records(path):
                    if row is None:
                        yield SkippedRecord(where, label, "(record)", problem or "unreadable")
                        continue
                    key = opinion_key(where, label, row)
                    if isinstance(key, SkippedRecord):
                        yield key
                        continue
                    cluster, order = key
                    db.execute("INSERT OR IGNORE INTO cl VALUES (?, ?)", (cluster, seq))
                    db.execute("INSERT INTO op VALUES (?, ?, ?, ?)",
                               (seq, cluster, order, json.dumps(compact_opinion(row))))
                    seq += 1
                db.execute("CREATE INDEX op_cluster ON op (cluster)")
            kinds = {"clusters": 0, "dockets": 1, "courts": 2, "citations": 3}  # clusters before dockets
            for companion in sorted(map(Path, companions), key=lambda c: kinds[companion_kind(c) or "citations"]):
                kind = companion_kind(companion)
                if kind is not None:
                    with transaction(db):
                        _load_companion(db, companion, kind)
            db.execute("CREATE INDEX cit_cluster ON cit (cluster)")
            reader = db.cursor()
            nameless = [0]
            cases = 0
            for (cluster,) in reader.execute("SELECT cluster FROM cl ORDER BY first"):
                cases += 1
                yield _case(where, cluster, db, nameless, missing)
            if nameless[0] > NAMELESS_NOTES:
                note(f"{where}: {nameless[0]} clusters in all have no case name ({NAMELESS_NOTES} named above); "
                     "give their clusters file (opinion-clusters-DATE.csv.bz2) as another SOURCE")
            for kind, n in missing.items():
                if n and kind in given:
                    yield Unjoined(where, given[kind], kind, n, cases)
        finally:
            db.close()


def _one(db: sqlite3.Connection, sql: str, key: str) -> dict:
    found = db.execute(sql, (key,)).fetchone()
    return json.loads(found[0]) if found else {}


def _case(where: str, cluster: str, db: sqlite3.Connection, nameless: list[int],
          missing: dict[str, int] | None = None) -> CaseRecord | SkippedRecord:
    """The case of one cluster; ``nameless`` counts the clusters without a case name, ``missing``
    the companion rows it lacks (by kind)."""
    rows = [json.loads(r) for (r,) in db.execute(
        "SELECT row FROM op WHERE cluster = ? ORDER BY coalesce(ordering, 1 << 62), seq", (cluster,))]
    meta = _one(db, "SELECT row FROM clu WHERE id = ?", cluster)
    docket = _one(db, "SELECT row FROM dk WHERE id = ?", str(meta.get("docket_id", "")))
    court_id = docket.get("court_id") or rows[0].get("court_id") or ""
    court = _one(db, "SELECT row FROM ct WHERE id = ?", str(court_id))
    if missing is not None:
        missing["clusters"] += not meta
        missing["dockets"] += bool(meta.get("docket_id")) and not docket
        missing["courts"] += bool(court_id) and not court
    cites = [json.loads(r) for (r,) in db.execute("SELECT row FROM cit WHERE cluster = ?", (cluster,))]
    first = rows[0]
    if not cites:
        cites = next((nested_citations(r) for r in rows if nested_citations(r)), [])

    def field(name: str, *sources: dict) -> str:
        for src in (*sources, first):
            value = text_of(src, name)
            if value:
                return value
        return ""

    try:
        opinions = []
        head: list[str] = []  # the head matter of PDF-born texts: the case's, as the PDF reader stores it
        for row in rows:
            kind = text_of(row, "type")
            kind = OPINION_TYPES.get(kind, re.sub(r"^\d+", "", kind) or "majority")
            opinions.append(opinion_record(row, kind, text_of(row, "author_str") or None, head))
        if not any(o.paragraphs for o in opinions):
            raise BadField("plain_text", f"no opinion of the cluster has any text ({', '.join(TEXT_FIELDS)})")
        citations = reporter_citations(cites) or tuple(
            ("official", c) for c in [text_of(first, "citation") if isinstance(first.get("citation"), str) else ""]
            if c)
        return CaseRecord(  # no short name: citations write the name as cited (pin_cites.cite_name)
            source="courtlistener", source_id=cluster, name=case_name(where, cluster, meta, docket, first, nameless),
            name_abbreviation="", decision_date=field("date_filed", meta),
            docket_number=field("docket_number", docket), citations=citations,
            court=field("full_name", court) or text_of(first, "court") or str(court_id),
            jurisdiction=field("jurisdiction", court), head_matter="\n".join(head), judges=field("judges", meta),
            parties="", attorneys=field("attorneys", meta), opinions=tuple(o for o in opinions if o.paragraphs),
        )
    except BadField as exc:
        return SkippedRecord(where, f"cluster {cluster}", exc.field, exc.reason)


#: How many clusters without a name are warned about one by one (then counted).
NAMELESS_NOTES = 10


def case_name(where: str, cluster: str, meta: dict, docket: dict, first: dict, nameless: list[int]) -> str:
    """A cluster's name: its ``case_name`` (never ``case_name_short``, one party's name), else its
    ``case_name_full`` as cited (:func:`~statinterp.corpus.pin_cites.cite_name`), else its
    docket's ``case_name``. A cluster known only by its URL (an API opinion record without its
    cluster) is named by its opinion's ``absolute_url`` (``/opinion/2001/cannon-v-state/`` ->
    "Cannon v. State") or, without one, "CourtListener cluster ID", with a warning naming the
    record and how to give the cluster (the first :data:`NAMELESS_NOTES` of a file; then one
    counting them, counted in ``nameless``)."""
    for src, key in ((meta, "case_name"), (first, "case_name"), (meta, "case_name_full"), (first, "case_name_full"),
                     (docket, "case_name")):
        value = " ".join(text_of(src, key).split())
        if value:
            return cite_name(value) if key == "case_name_full" else value
    slug = re.search(r"/opinion/\d+/([a-z0-9-]+)/?$", text_of(first, "absolute_url"))
    guess = _name_from_slug(slug.group(1)) if slug else ""
    url = first.get("cluster") if isinstance(first.get("cluster"), str) else ""
    nameless[0] += 1
    if nameless[0] > NAMELESS_NOTES:
        return guess or f"CourtListener cluster {cluster}"
    note(f"{where}: opinion {text_of(first, 'id') or '?'} (cluster {cluster}): no case name, the record gives only "
         f"its cluster{' ' + str(url) if url else ''}; named {guess or 'CourtListener cluster ' + cluster!r}"
         f"{' from its URL' if guess else ''}. To name it, save the cluster's JSON (the API's clusters/{cluster}/) "
         "beside it as opinion-clusters-NAME.json, or give a clusters file (opinion-clusters-DATE.csv.bz2) "
         "as another SOURCE")
    return guess or f"CourtListener cluster {cluster}"


def _name_from_slug(slug: str) -> str:
    """CourtListener's URL slug of a case name in title case (``cannon-v-state`` -> ``Cannon v. State``)."""
    words = [w for w in slug.split("-") if w]
    if "v" not in words:
        return ""
    return " ".join("v." if w == "v" else w if w in ("of", "the", "and", "in", "at", "for") and i else w.capitalize()
                    for i, w in enumerate(words))


#: CourtListener's Citation types (``BaseCitation`` in ``cl/search/models.py``).
FEDERAL, STATE, STATE_REGIONAL, SPECIALTY, SCOTUS_EARLY, LEXIS, WEST, NEUTRAL, JOURNAL = range(1, 10)


def _official(kind: int, reporter: str) -> bool:
    """A citation of the court's own (official) report: a vendor-neutral (public-domain) citation,
    a state's own reporter, the United States Reports and its early nominative volumes. Regional
    (West), specialty, Lexis and WestLaw citations are parallel; lower federal courts have no
    official reporter (F., F. Supp. are West's), so their first citation is parallel too."""
    return kind in (NEUTRAL, STATE, SCOTUS_EARLY) or (kind == FEDERAL and reporter == "U.S.")


def _bluebook_rank(kind: int, reporter: str) -> float:
    """CourtListener's ``sort_cites`` order."""
    if kind == FEDERAL:
        return 1.1 if reporter == "U.S." else 1.2 if reporter == "S. Ct." else 1.3 if "L. Ed." in reporter else 1.4
    return {NEUTRAL: 0, SCOTUS_EARLY: 2, SPECIALTY: 3, STATE_REGIONAL: 4, STATE: 5, WEST: 6, LEXIS: 7}.get(kind, 8)


def reporter_citations(rows: list[dict]) -> tuple[tuple[str, str], ...]:
    """``(official|parallel, "VOLUME REPORTER PAGE")`` from citations rows: official ones first,
    each group in CourtListener's ``sort_cites`` order; a public-domain citation as its court
    writes it (``2022-NCSC-1``: :meth:`~statinterp.corpus.pin_cites.ParsedCite.written`)."""
    ranked = []
    for row in rows:
        volume, reporter, page = (text_of(row, k).strip() for k in ("volume", "reporter", "page"))
        if not reporter:
            continue
        raw = text_of(row, "type").strip()
        kind = int(raw) if raw.isdigit() else 0
        official = _official(kind, reporter)
        cite = " ".join(p for p in (volume, reporter, page) if p)
        if kind == NEUTRAL:  # as the court writes it: 2022 NCSC 1 -> 2022-NCSC-1
            parsed = parse_cite(cite)
            cite = parsed.written() if parsed is not None else cite
        ranked.append((not official, _bluebook_rank(kind, reporter), "official" if official else "parallel", cite))
    return tuple((label, cite) for _, _, label, cite in sorted(ranked))


register(SourceFormat(
    "courtlistener",
    "CourtListener bulk CSV opinions-DATE.csv[.bz2] joined with the opinion-clusters-, dockets-, courts-, "
    "citations- files beside it or given; JSON lines, REST API pages, per-opinion JSON files or tar.gz of them",
    lambda p: read_courtlistener(Path(p.path), p.companions, p.source_path,
                                 p.origin.companions if p.origin is not None else ()), _sniff,
    group=lambda path: path.name.lower().endswith(".json"),
    files=lambda folder: [f for f in folder_json_files(folder) if not companion_kind(f)],
    companion=lambda path: _DESCRIBED.get(companion_kind(path) or ""), companions=companions_of, order=30))


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
