"""The records every source reader yields, one case at a time, and the limits a record must keep.

A reader yields :class:`CaseRecord` for each case it could read and :class:`SkippedRecord` for
each malformed record it skipped (which file, which record, which field, why); it never
aborts on a bad record. A file that cannot be read at all raises
:class:`~statinterp.errors.InputError`.

**What one record may hold**, checked before it is analysed and stored; bounded line reads.

Every limit is checked before the work it protects, and a record over one is skipped and listed
(:class:`SkippedRecord`) like any other malformed record, so that
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

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from statinterp.cache.files import special_kind
from statinterp.errors import InputError, printable
from statinterp.text import MAX_TEXT_CHARS

#: Where a reporter page starts: (character offset inside a paragraph, page label such as "583").
PageStart = tuple[int, str]


@dataclass(frozen=True)
class OpinionRecord:
    """One opinion: its type (majority, concurrence, dissent, ...), author and paragraphs.

    ``footnotes`` are the opinion's footnotes (their text, without the mark), kept apart from the
    paragraphs so that no sentence mixes a footnote with the text it annotates; they follow the
    paragraphs in :attr:`text`. ``page_starts`` is empty when the source has no page labels;
    otherwise it has one entry per paragraph of ``paragraphs`` then of ``footnotes``: the pages
    that start inside that paragraph, as ``(offset, label)`` in order (offset 0: the paragraph
    opens the page). A paragraph with no entry continues the page the text before it was on.
    ``numbers`` is empty when the opinion does not number its paragraphs; otherwise it has one
    entry per paragraph of ``paragraphs``: the number the court gave it ("17" for "¶ 17", "{17}",
    "[¶17]"; :func:`statinterp.sources.cleaning.paragraph_numbers`), taken off its text, or ""
    for a paragraph without one (a heading, a block quotation). Pin cites use it: "¶ 17".
    ``note_numbers`` is empty when each footnote is one line of ``footnotes`` (footnote k is the
    k-th line); otherwise it has one entry per line of ``footnotes``: the number of the footnote
    the line belongs to, so a footnote of several paragraphs keeps them apart ("n.4" pins use it).
    """

    type: str
    author: str | None
    paragraphs: tuple[str, ...]
    footnotes: tuple[str, ...] = ()
    page_starts: tuple[tuple[PageStart, ...], ...] = ()
    numbers: tuple[str, ...] = ()
    note_numbers: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """The footnotes, one text each: the lines of a footnote of several paragraphs joined."""
        if not self.note_numbers:
            return self.footnotes
        joined: dict[str, list[str]] = {}
        for number, line in zip(self.note_numbers, self.footnotes, strict=True):
            joined.setdefault(number, []).append(line)
        return tuple(" ".join(lines) for lines in joined.values())

    @property
    def lines(self) -> tuple[str, ...]:
        """The paragraphs, then the footnotes: what is stored, one line each."""
        return self.paragraphs + self.footnotes

    @property
    def text(self) -> str:
        """The opinion's text: its paragraphs, then its footnotes, one per line."""
        return "\n".join(self.lines)


@dataclass(frozen=True)
class CaseRecord:
    """One case as a source describes it (CAP's fields; other sources fill what they have)."""

    source: str  # the format's name: cap, cap-bulk, courtlistener, text, pdf, dataset
    source_id: str  # the case's id inside its source (CAP id, CourtListener cluster id, file name, ...)
    name: str
    name_abbreviation: str
    decision_date: str
    docket_number: str
    citations: tuple[tuple[str, str], ...]  # (type, cite), e.g. ("official", "212 Marl. App. 341")
    court: str
    jurisdiction: str
    head_matter: str
    judges: str
    parties: str
    attorneys: str
    opinions: tuple[OpinionRecord, ...]

    @property
    def content_hash(self) -> str:
        """SHA-256 of the record's canonical JSON (sorted keys, no spaces, UTF-8)."""
        fields = asdict(self)
        for opinion in fields["opinions"]:  # fields added later hash as before while empty
            for key in ("footnotes", "page_starts", "numbers", "note_numbers"):
                if not opinion[key]:
                    del opinion[key]
        raw = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def text(self) -> str:
        """The whole case, as the data set gives it: the head matter's lines, then each opinion."""
        parts = [self.head_matter] if self.head_matter.strip() else []
        parts.extend(o.text for o in self.opinions)
        return "\n".join(parts)

    @property
    def official_citation(self) -> str:
        for kind, cite in self.citations:
            if kind == "official":
                return cite
        return self.citations[0][1] if self.citations else ""


@dataclass(frozen=True)
class SkippedRecord:
    """A malformed record a reader skipped: where it was and what is wrong with it."""

    file: str
    record: str
    field: str
    reason: str

    def __post_init__(self) -> None:  # a lone surrogate in an id or a message is shown escaped: always writable
        for name in ("file", "record", "field", "reason"):
            object.__setattr__(self, name, printable(str(getattr(self, name))))

    def line(self) -> str:
        return f"{self.file}: record {self.record!r}: field {self.field!r}: {self.reason}"


@dataclass(frozen=True)
class DecodedFile:
    """A source file that was not UTF-8 and was read in a guessed ``encoding`` (a reader yields it
    before the file's case; ``ingest`` lists it in its summary: ``decoded``)."""

    file: str
    encoding: str


@dataclass(frozen=True)
class Unjoined:
    """Cases of a joined source that found no row in one of its companion files (a reader yields it
    after the cases): ``missing`` of ``cases`` cases of ``file`` lack their ``kind`` (cluster,
    docket, court) in ``companion``. ``ingest`` adds these up per companion and stops with exit
    status 2 when more than a few are missing (a companion of another export, or one read wrong)."""

    file: str
    companion: str
    kind: str
    missing: int
    cases: int


#: What a reader yields.
SourceItem = CaseRecord | SkippedRecord | DecodedFile | Unjoined


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
