"""What one source record may hold, checked before it is analysed and stored; bounded line reads.

Every limit is checked before the work it protects, and a record over one is skipped and listed
(:class:`~statinterp.sources.records.SkippedRecord`) like any other malformed record, so that
no record can stop a source:

==========================  ==================================================================
limit                       protects
==========================  ==================================================================
:data:`MAX_CASE_CHARS`      the analysis (spaCy's ``max_length``): all the text of one case
:data:`MAX_LINE_CHARS`      one stored line (paragraph or footnote): ``find`` segments windows
                            of lines around a match
:data:`MAX_ID_CHARS`        the id stored and shown for a case
lone surrogates             SQLite and every output file need valid Unicode (``\\ud800`` alone
                            is none)
:data:`MAX_LINE_BYTES`      one input line of a JSON-lines or CSV file
                            (:func:`bounded_lines` never holds more of it)
==========================  ==================================================================

A FIFO, a device or a socket among the sources is refused before anything is read
(:func:`refuse_special`). Integers a later step stores (CourtListener's ``ordering_key``) are checked against SQLite's
range by their reader (:func:`sqlite_integer`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from statinterp.cache.files import special_kind
from statinterp.errors import InputError
from statinterp.sources.records import CaseRecord, SkippedRecord, SourceItem
from statinterp.text.limits import MAX_TEXT_CHARS

#: All the text of one case (head matter and opinions): what the analysis accepts.
MAX_CASE_CHARS = MAX_TEXT_CHARS
#: One stored line (a paragraph or footnote): spaCy's default ``max_length``.
MAX_LINE_CHARS = 1_000_000
#: A case's id in its source (CAP ids and CourtListener cluster ids have at most ~10 digits).
MAX_ID_CHARS = 256
#: One line of a JSON-lines (or CSV) input file; a case is far smaller.
MAX_LINE_BYTES = 64 * 1024 * 1024
#: SQLite's INTEGER range.
SQLITE_MIN, SQLITE_MAX = -(1 << 63), (1 << 63) - 1

_SURROGATE = re.compile("[\ud800-\udfff]")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a stored case id (None if it can)."""
    if len(value) > MAX_ID_CHARS:
        return f"is {len(value)} characters long, over the limit of {MAX_ID_CHARS}"
    if _SURROGATE.search(value):
        return _SURROGATE_REASON
    return None


_SURROGATE_REASON = "contains a lone surrogate (e.g. \\ud800 without its pair): not valid Unicode text"


def sqlite_integer(value: object) -> int | None:
    """``value`` (an int, or a string of digits) as an int SQLite can store; None when absent
    or not an integer. Raises ``ValueError`` for an integer out of SQLite's range."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not (value.isascii() and value.lstrip("-").isdigit()):
            return None
        if len(value) > 20:
            raise ValueError(f"is {len(value)} digits long, outside SQLite's integer range")
        value = int(value)
    if not isinstance(value, int):
        return None
    if not SQLITE_MIN <= value <= SQLITE_MAX:
        raise ValueError("is outside SQLite's integer range (-2**63 .. 2**63-1)")
    return value


def _strings(record: CaseRecord) -> Iterator[tuple[str, str]]:
    """(field, value) of every text a record stores."""
    for name in ("name", "name_abbreviation", "decision_date", "docket_number", "court", "jurisdiction",
                 "head_matter", "judges", "parties", "attorneys"):
        yield name, getattr(record, name)
    for i, (kind, cite) in enumerate(record.citations):
        yield f"citations[{i}].type", kind
        yield f"citations[{i}].cite", cite
    for i, op in enumerate(record.opinions):
        yield f"opinions[{i}].type", op.type
        yield f"opinions[{i}].author", op.author or ""
        for j, line in enumerate(op.lines):
            yield f"opinions[{i}].lines[{j}]", line
        for j, starts in enumerate(op.page_starts):
            for _, label in starts:
                yield f"opinions[{i}].page_starts[{j}]", label


def case_chars(record: CaseRecord) -> int:
    """``len(record.text)``, without building the text."""
    parts = [len(record.head_matter)] if record.head_matter.strip() else []
    for op in record.opinions:
        lines = op.lines
        parts.append(sum(map(len, lines)) + max(len(lines) - 1, 0))
    return sum(parts) + max(len(parts) - 1, 0)


def record_problem(record: CaseRecord) -> tuple[str, str] | None:
    """(field, reason) of the first limit ``record`` breaks, or None: checked before any work on it."""
    problem = id_problem(record.source_id)
    if problem is not None:
        return "id", problem
    total = case_chars(record)
    if total > MAX_CASE_CHARS:
        return "(case)", f"all its text is {total} characters long, over the limit of {MAX_CASE_CHARS} for one case"
    for i, op in enumerate(record.opinions):
        for j, line in enumerate(op.lines):
            if len(line) > MAX_LINE_CHARS:
                return (f"opinions[{i}].lines[{j}]",
                        f"is one line of {len(line)} characters, over the limit of {MAX_LINE_CHARS} for a line")
    for field, value in _strings(record):
        if _SURROGATE.search(value):
            return field, _SURROGATE_REASON
    return None


def check_record(item: SourceItem, where: str) -> SourceItem:
    """``item``, or the :class:`SkippedRecord` saying which limit the record breaks."""
    if not isinstance(item, CaseRecord):
        return item
    problem = record_problem(item)
    if problem is None:
        return item
    return SkippedRecord(where, item.source_id[:MAX_ID_CHARS], *problem)


def bounded_lines(fh, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of a binary file object, reading at most ``limit + 1`` bytes at a time.

    A line longer than ``limit`` bytes (its line break not counted) comes as ``(number, None)``
    after the rest of it has been read past in reads of the same size: memory never holds more
    than ``limit + 1`` bytes of a line, however long it is (an endless line included)."""
    n = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        n += 1
        if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
            while line and not line.endswith(b"\n"):
                line = fh.readline(limit + 1)
            yield n, None
            continue
        yield n, line


def refuse_special(path: Path) -> None:
    """Refuse a FIFO, a device or a socket (reading one would block forever or never end)."""
    try:
        kind = special_kind(path)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if kind is not None:
        raise InputError(path, f"is {kind}, not a case-law file; only regular files and folders are read")
