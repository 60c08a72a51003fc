"""Citations in a text, found by eyecite (the Free Law Project's citation extractor).

One home for what eyecite finds, used by ingesting (the case, statute and journal citations a
collection stores per paragraph: :func:`statinterp.collection.prepare.citations_of`) and by the
learned features' case-citation columns (:mod:`statinterp.learned.features` with
``case_citations="eyecite"``).

:func:`find_citations` turns a text into its citations, each a :class:`FoundCitation` with a
kind (:data:`KINDS`): ``case`` (eyecite's ``FullCaseCitation`` and ``ShortCaseCitation``),
``statute`` (``FullLawCitation``), ``journal`` (``FullJournalCitation``), and the references
back to an earlier case, ``id`` (``Id.``, ``Id. at 5``) and ``supra`` (``Smith, supra``).
Anything else eyecite reports (unknown citations, bare section marks) is left out.

eyecite is slow (a few milliseconds per paragraph), and the features ask for the same
paragraph once for each of its sentences: :func:`cached_citations` memoises the result per
text (a bounded cache in this process). Ingest calls :func:`find_citations` directly (each
paragraph once; a cache would only hold memory).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

__all__ = ["CASE_KINDS", "KINDS", "FoundCitation", "cached_citations", "case_citation_share", "cites_case",
           "find_citations"]

#: eyecite citation classes -> kind.
KINDS = {"FullCaseCitation": "case", "ShortCaseCitation": "case", "FullLawCitation": "statute",
         "FullJournalCitation": "journal", "IdCitation": "id", "SupraCitation": "supra"}
#: The kinds that cite a case: full and short case citations, ``Id.`` and ``supra``.
CASE_KINDS = ("case", "id", "supra")


@dataclass(frozen=True)
class FoundCitation:
    """One citation eyecite found in a text (character offsets into that text)."""

    kind: str  # case | statute | journal | id | supra
    start: int  # the citation itself ("500 U.S. 100", "Id.", "supra,")
    end: int
    full_start: int  # with what eyecite attaches to it: the case name, pin cite, court and year
    full_end: int
    text: str  # as written (eyecite's matched text)
    normalized: str  # eyecite's corrected citation
    section: str  # a statute's section as eyecite parsed it ("" otherwise)


def find_citations(text: str) -> tuple[FoundCitation, ...]:
    """Every case, statute and journal citation, ``Id.`` and ``supra`` in ``text``, in order."""
    if not text.strip():
        return ()  # (eyecite refuses an empty text)
    from eyecite import get_citations

    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs every overlap it resolves
    out = []
    for cite in get_citations(text):
        kind = KINDS.get(type(cite).__name__)
        if kind is None:
            continue
        start, end = cite.span()
        full_start, full_end = cite.full_span()
        section = cite.groups.get("section") if kind == "statute" else None
        out.append(FoundCitation(kind, int(start), int(end), int(full_start), int(full_end), cite.matched_text(),
                                 cite.corrected_citation(), str(section or "")))
    return tuple(out)


@functools.lru_cache(maxsize=16384)
def cached_citations(text: str) -> tuple[FoundCitation, ...]:
    """:func:`find_citations`, memoised per text (the features ask for each paragraph per sentence)."""
    return find_citations(text)


def cites_case(text: str) -> bool:
    """Whether ``text`` cites a case: a full or short case citation, ``Id.`` or ``supra``."""
    return any(c.kind in CASE_KINDS for c in cached_citations(text))


def case_citation_share(text: str) -> float:
    """Share of ``text``'s characters inside case citations (their full spans: case name, reporter,
    pin cite, court and year; ``Id.``/``supra`` with what follows), overlaps counted once."""
    spans = sorted((c.full_start, c.full_end) for c in cached_citations(text) if c.kind in CASE_KINDS)
    covered, reach = 0, 0
    for a, b in spans:
        a = max(a, reach)
        if b > a:
            covered += b - a
            reach = b
    return min(1.0, covered / max(1, len(text)))
