"""The records every source reader yields, one case at a time, whatever the bulk format.

A reader yields :class:`CaseRecord` for each case it could read and :class:`SkippedRecord` for
each malformed record it skipped (which file, which record, which field, why); it never
aborts on a bad record. A file that cannot be read at all raises
:class:`~statinterp.errors.InputError`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from statinterp.errors import printable

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
    """

    type: str
    author: str | None
    paragraphs: tuple[str, ...]
    footnotes: tuple[str, ...] = ()
    page_starts: tuple[tuple[PageStart, ...], ...] = ()
    numbers: tuple[str, ...] = ()

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
            for key in ("footnotes", "page_starts", "numbers"):
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
