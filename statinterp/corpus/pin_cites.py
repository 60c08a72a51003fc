"""Ready-to-paste case citations with the pin page: one home for formatting legal citations.

:func:`format_cite` writes a citation in the form courts use (The Bluebook's rule 10, simplified)::

    Fisher v. University of Tex. at Austin, 570 U.S. 297, 310 (2013)
    Brown v. Smith, 203 F.2d 34, 36 (D.C. Cir. 1953)
    State v. Jones, 435 P.3d 1219, 1224 (N.M. 2019)
    State v. Jones, 2019-NMSC-005, ¶ 22

How it decides:

- **The citation** is the case's first citation (the official one, as the stored case gives it),
  parsed by eyecite (``VOLUME REPORTER PAGE``, the reporter's kind from reporters-db); a
  citation eyecite does not know (an unknown reporter) is parsed as ``VOLUME WORDS PAGE``. A
  case with no citation gets ``Name (COURT YEAR)`` and no pin.
- **The pin**: ``, PAGE`` after the first page (``, PAGE n.N`` for a sentence in the opinion's
  N-th footnote: N is the footnote's position in the opinion, which is its number when the
  source numbers footnotes per opinion). When the case's citation is a public-domain
  (vendor-neutral) one, such as ``2019-NMSC-005`` or ``2019 ND 12`` (reporters-db kind
  ``neutral``), the pin is the paragraph number, ``, ¶ N``, taken from the numbered paragraph
  the sentence is in (:func:`paragraph_number`: ``{22}``, ``[¶22]``, ``¶ 22`` or ``[22]`` at
  the start of a paragraph); without one there is no pin. Such a citation carries its year
  and court: no parenthetical.
- **The court** in the parenthetical (:func:`court_abbreviation`): the abbreviation the source
  gives (the data set's ``short_court``, CAP's court abbreviation), else courts-db's
  ``citation_string`` of the court named by the stored court (a CourtListener court id such
  as ``cadc``, or a court name courts-db's patterns recognise); ambiguous or unknown courts
  are written as stored, in full. The court is left out where the reporter says it: the
  Supreme Court's reporters (U.S., S. Ct., L. Ed.); a state's own reporter (reporters-db kind
  ``state``) whose name starts with the court's state: a reporter named by the state alone
  (N.M., Cal., Mass.) drops the state's part of the court (``N.M.`` -> nothing, ``N.M. Ct. App.``
  -> ``Ct. App.``), a reporter named by the state and a court (Cal. App., Conn. App., Ohio St.)
  drops the whole court. Regional and federal reporters (P.3d, F.3d, F. Supp.) and state
  reporters named otherwise (A.D., Misc., N.Y.S.) keep the whole court.
- **The year** is the first four digits of the decision date.

Not covered: subsequent history, parallel citations, the Bluebook's abbreviation of words in
case names (the stored short name is used as given: CAP's and CourtListener's short names are
already abbreviated), courts courts-db does not know (written in full), unofficial reporters
named by a state and a court (``Ohio Law Abs.``: the court is dropped where the Bluebook keeps
it), and page labels from another reporter than the citation's (labels are taken to be pages
of the case's first citation).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statinterp.corpus.dataset import Case, Sentence, TermData

__all__ = ["ParsedCite", "case_cite", "court_abbreviation", "courts_db_court", "first_page", "format_cite", "page_at",
           "paragraph_number", "parse_cite", "sentence_pin_cite"]

#: The Supreme Court's reporters: the court is never written after them.
SUPREME_COURT_REPORTERS = ("U.S.", "S. Ct.", "L. Ed.", "L. Ed. 2d")
#: courts-db's id of the Supreme Court of the United States.
SUPREME_COURT = "scotus"

_PLAIN_CITE = re.compile(r"^\s*(\d+)\s+(\S.*?)\s+(\d+)\s*$")
_PARAGRAPH_NUMBER = re.compile(r"^\s*(?:\{(\d{1,4})\}|\[¶\s*(\d{1,4})\]|¶\s*(\d{1,4})\b|\[(\d{1,4})\])")


@dataclass(frozen=True)
class ParsedCite:
    """A citation read: ``volume``, ``reporter`` (as written), ``page`` (the first page), the
    reporter's edition root (reporters-db, e.g. ``Cal. App.`` for ``Cal. App. 4th``) and kind
    (reporters-db's ``cite_type``: ``federal``, ``state``, ``state_regional``, ``neutral``, ...;
    ``""`` for a reporter eyecite does not know)."""

    text: str
    volume: str
    reporter: str
    page: str
    root: str = ""
    kind: str = ""

    @property
    def neutral(self) -> bool:
        """A public-domain (vendor-neutral) citation: pinned by paragraph, not page."""
        return self.kind == "neutral"


@functools.lru_cache(maxsize=4096)
def parse_cite(text: str) -> ParsedCite | None:
    """``570 U.S. 297`` -> its volume, reporter and first page (eyecite, else ``VOLUME WORDS PAGE``);
    ``None`` for a text that is neither."""
    text = " ".join(text.split())
    if not text:
        return None
    from eyecite import get_citations
    from eyecite.models import FullCaseCitation

    for cite in get_citations(text):
        if isinstance(cite, FullCaseCitation) and cite.groups.get("page"):
            guess = cite.edition_guess
            root = guess.reporter.short_name if guess is not None else ""
            kind = guess.reporter.cite_type if guess is not None else ""
            return ParsedCite(text, cite.groups.get("volume", ""), cite.corrected_reporter(), cite.groups["page"],
                              root, kind)
    m = _PLAIN_CITE.match(text)
    return ParsedCite(text, m.group(1), m.group(2), m.group(3)) if m else None


def first_page(citation: str) -> str | None:
    """The first page of a reporter citation (``570 U.S. 297`` -> ``297``); ``None`` for a
    public-domain citation (its last number is no page) or a text that is no citation."""
    parsed = parse_cite(citation)
    return None if parsed is None or parsed.neutral else parsed.page


def page_at(page: str | None, page_starts: Sequence[tuple[int, str]], offset: int) -> str | None:
    """The page at character ``offset`` of a paragraph that starts on ``page`` and has pages
    starting inside it at ``page_starts`` ((offset, label), in order): the last page starting
    at or before ``offset``."""
    for at, label in page_starts:
        if at > offset:
            break
        page = label
    return page


def paragraph_number(text: str) -> int | None:
    """The number of a numbered paragraph (``{22}``, ``[¶22]``, ``¶ 22`` or ``[22]`` at its start)."""
    m = _PARAGRAPH_NUMBER.match(text)
    return None if m is None else int(next(g for g in m.groups() if g))


@functools.lru_cache(maxsize=1)
def _courts() -> tuple[dict[str, dict], dict[str, dict]]:
    """courts-db's courts by id and by name / citation string (lower-cased)."""
    from courts_db import courts

    by_id = {c["id"]: c for c in courts}
    by_name: dict[str, dict] = {}
    for c in courts:
        for key in (c.get("name"), c.get("citation_string")):
            if key:
                by_name.setdefault(key.lower(), c)
    return by_id, by_name


@functools.lru_cache(maxsize=4096)
def _courts_db_court(court: str) -> dict | None:
    by_id, by_name = _courts()
    key = court.strip()
    if not key:
        return None
    found = by_id.get(key) or by_name.get(key.lower())
    if found is not None:
        return found
    ids = _court_ids_by_name(key)
    strings = {by_id[i].get("citation_string") for i in ids if i in by_id}
    if len(strings) == 1:  # ambiguous names count only when their abbreviations agree
        return by_id[ids[0]]
    if "," in key:  # "Court of Appeals of Texas, Fourth District, San Antonio": the court before its district
        return _courts_db_court(key.split(",", 1)[0])
    return None


@functools.lru_cache(maxsize=1)
def _court_names():
    """courts-db's answers for court names, kept between processes (:mod:`statinterp.cache.answers`):
    finding a name takes courts-db about 1.6 s to compile its patterns in a process, then about
    20 ms a name; a ``find`` meets a few dozen courts."""
    from importlib.metadata import PackageNotFoundError, version

    from statinterp.cache.answers import StoredAnswers

    try:
        known = version("courts-db")
    except PackageNotFoundError:
        known = "unknown"
    return StoredAnswers("court-names", f"courts-db-{known}")


def _court_ids_by_name(key: str) -> list[str]:
    """courts-db's ``find_court(key)`` (not bankruptcy courts), from the stored answers when asked before."""
    names = _court_names()
    ids = names.get(key)
    if isinstance(ids, list) and all(isinstance(i, str) for i in ids):
        return ids
    from courts_db import find_court

    ids = list(find_court(key, bankruptcy=False))
    names.put(key, ids)
    return ids


def courts_db_court(court: str) -> dict | None:
    """courts-db's record of a court named by its id, name, citation string or a name courts-db's
    patterns recognise (ambiguous names only when their abbreviations agree); ``None``: unknown."""
    return _courts_db_court(court)


def court_abbreviation(court: str, short_court: str = "") -> str:
    """The court's abbreviation for a parenthetical: ``short_court`` when the source gave one,
    else courts-db's ``citation_string`` of the court, else the court as stored."""
    if short_court.strip():
        return short_court.strip()
    found = _courts_db_court(court)
    if found is not None and found.get("citation_string"):
        return found["citation_string"]
    return court.strip()


def _is_supreme_court(court: str, abbr: str) -> bool:
    """Whether a court is the Supreme Court of the United States (or unknown: none stored)."""
    if not court.strip() or abbr in ("U.S.", "SCOTUS"):
        return True
    found = _courts_db_court(court)
    return found is not None and found["id"] == SUPREME_COURT


def _court_in_parenthetical(parsed: ParsedCite | None, court: str, short_court: str) -> str:
    abbr = court_abbreviation(court, short_court)
    if parsed is None:
        return abbr
    if parsed.reporter in SUPREME_COURT_REPORTERS or parsed.root in SUPREME_COURT_REPORTERS:
        return "" if _is_supreme_court(court, abbr) else abbr
    if parsed.kind == "state":  # a state's own reporter names the state, or the state and its court
        root = parsed.root or parsed.reporter
        state = _common_words(abbr, root)
        if not state:
            return abbr
        if state == abbr or len(root.split()) > 1:  # N.M. in N.M.; Conn. App. Ct. in Conn. App.
            return ""
        return abbr[len(state):].strip()  # N.M. Ct. App. in N.M. -> Ct. App.
    return abbr


def _common_words(a: str, b: str) -> str:
    """The leading words ``a`` and ``b`` share (``N.M. Ct. App.`` and ``N.M.`` -> ``N.M.``)."""
    shared = []
    for x, y in zip(a.split(), b.split()):  # noqa: B905
        if x != y:
            break
        shared.append(x)
    return " ".join(shared)


def _year(date: str) -> str:
    head = date.strip()[:4]
    return head if len(head) == 4 and head.isdigit() else ""


def format_cite(name: str, citation: str, court: str = "", date: str = "", *, short_court: str = "",
                page: str | None = None, footnote: int | None = None, paragraph: int | None = None) -> str:
    """The citation of a case (``name``, its first ``citation``, ``court``, decision ``date``),
    pinned to ``page`` (and ``footnote``: its number), or to ``paragraph`` for a public-domain
    citation; without a pin, the case's citation alone. See the module docstring."""
    name = " ".join(name.split()).rstrip(",")
    parsed = parse_cite(citation) if citation.strip() else None
    cite = " ".join(citation.split())
    if parsed is not None and parsed.neutral:
        pin = f", ¶ {paragraph}" if paragraph is not None else ""
        return ", ".join(p for p in (name, cite) if p) + pin
    head = ", ".join(p for p in (name, cite) if p)
    if cite and page:
        head += f", {page}" + (f" n.{footnote}" if footnote is not None else "")
    paren = " ".join(p for p in (_court_in_parenthetical(parsed, court, short_court), _year(date)) if p)
    return f"{head} ({paren})" if paren else head


def case_cite(case: Case, page: str | None = None, footnote: int | None = None,
              paragraph: int | None = None) -> str:
    """:func:`format_cite` of a loaded case (its short name, official citation, court, date)."""
    return format_cite(case.short_name or case.name, case.citation, case.court, case.date,
                       short_court=case.short_court, page=page, footnote=footnote, paragraph=paragraph)


def sentence_pin_cite(term: TermData, sentence: Sentence) -> str:
    """The citation to paste for a sentence: the pin cite its record carries (``find --out``
    writes one), else its case's citation pinned to the sentence's ``pin_page`` if it has one,
    else without a pin."""
    return sentence.pin_cite or case_cite(term.cases[sentence.case_id], page=sentence.pin_page or None)
