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

eyecite spends most of its time on one helper: ``eyecite.helpers.get_court_by_paren`` turns a
citation's parenthetical ("2d Cir. 2012") into a court id by normalising all of courts-db's ~3,000
court strings with a regular expression on every call (about 60 % of eyecite's time on the data
set's paragraphs). :func:`court_by_paren` gives the same answers (tested against eyecite's own
function) from strings normalised once and answers memoised; :func:`find_citations` puts it in
eyecite's place the first time it runs.

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


@functools.cache
def _court_strings() -> tuple[tuple[str, object], ...]:
    """courts-db's citation strings as ``get_court_by_paren`` compares them (word characters only,
    lower case), with each court's id, in courts-db's order."""
    import regex
    from courts_db import courts

    return tuple((regex.sub(r"[^\w]", "", court["citation_string"]).lower(), court["id"]) for court in courts)


@functools.lru_cache(maxsize=65536)
def court_by_paren(paren_string: str):  # noqa: ANN201 - eyecite's own contract: str, another id type or None
    """eyecite's ``get_court_by_paren``, answer for answer: the court whose citation string equals
    the parenthetical's word characters (lower case), else the last one that starts with them."""
    import regex

    court_str = regex.sub(r"[^\w]", "", paren_string).lower()
    court_code = None
    if court_str:
        for s, court_id in _court_strings():
            if s == court_str:
                return str(court_id)
            if s.startswith(court_str):
                court_code = court_id
    return court_code


@functools.cache
def _eyecite_court_by_paren():  # noqa: ANN202
    """eyecite's own ``get_court_by_paren`` (kept to test :func:`court_by_paren` against)."""
    import eyecite.helpers

    return eyecite.helpers.get_court_by_paren


@functools.cache
def _use_fast_court_lookup() -> None:
    import eyecite.helpers

    _eyecite_court_by_paren()
    eyecite.helpers.get_court_by_paren = court_by_paren
    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs every overlap it resolves


def find_citations(text: str) -> tuple[FoundCitation, ...]:
    """Every case, statute and journal citation, ``Id.`` and ``supra`` in ``text``, in order."""
    if not text.strip():
        return ()  # (eyecite refuses an empty text)
    from eyecite import get_citations

    _use_fast_court_lookup()
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
