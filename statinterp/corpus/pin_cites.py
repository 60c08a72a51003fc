"""Ready-to-paste case citations with the pin page: one home for formatting legal citations.

:func:`format_cite` writes a citation in the form courts use (The Bluebook's rule 10, simplified)::

    Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 310 (2013)
    Brown v. Smith, 203 F.2d 34, 36 (D.C. Cir. 1953)
    State v. Jones, 435 P.3d 1219, 1224 (N.M. 2019)
    State v. Jones, 2019-NMSC-005, ¶ 22

How it decides:

- **The citation** is the case's first citation (the official one, as the stored case gives it),
  parsed by eyecite (``VOLUME REPORTER PAGE``, the reporter's kind from reporters-db); a
  citation eyecite does not know (an unknown reporter) is parsed as ``VOLUME WORDS PAGE``. A
  case with no citation but a docket number, read from a court's PDF or a text (whose pages are
  the court's own paper's: :data:`SLIP_OPINION_SOURCES`), is cited as a slip opinion (The
  Bluebook's rule 10.8.1): ``Name, No. DOCKET, slip op. at PAGE (COURT Mon. D, YYYY)``; any other
  gets ``Name (COURT YEAR)`` and no pin.
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

- **The name** (:func:`cite_name`, The Bluebook's rule 10.2 simplified): the short name the
  source gives (CAP's, the data set's), else the full name (CourtListener's ``case_name``, a
  caption), written as cited: designations dropped, the first party of each side (in a caption
  that sets it in capitals, a party in mixed case after it is the next one), capitals in title
  case (small words in lower case), individuals named
  in full in a caption by surname, "State of Indiana" -> "State" in Indiana's courts, the
  words of reporters-db's tables of case-name (T6) and state (T10) abbreviations abbreviated.
- **Public-domain citations** are written as their courts write them (``2022-NCSC-1``,
  ``2011-NMSC-012``, ``2019-Ohio-1234``; ``2019 WI 12``): :data:`HYPHENATED_NEUTRAL`.
  **Star-paged citations** are pinned by star page: a New York slip opinion ``, *2``, Westlaw
  and Lexis ``, at *2`` (:data:`STAR_PAGED`).

Not covered: subsequent history, parallel citations, names whose individuals are not marked as
such (a mixed-case "Merrill Lynch" is kept whole), courts courts-db does not know (written in
full), unofficial reporters named by a state and a court (``Ohio Law Abs.``: the court is
dropped where the Bluebook keeps it), and page labels from another reporter than the
citation's (labels are taken to be pages of the case's first citation).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statinterp.corpus.dataset import Case, Sentence, TermData

__all__ = ["ParsedCite", "case_cite", "cite_name", "court_abbreviation", "courts_db_court", "first_page",
           "format_cite", "page_at", "paragraph_number", "parse_cite", "sentence_pin_cite"]

#: The Supreme Court's reporters: the court is never written after them.
SUPREME_COURT_REPORTERS = ("U.S.", "S. Ct.", "L. Ed.", "L. Ed. 2d")
#: courts-db's id of the Supreme Court of the United States.
SUPREME_COURT = "scotus"

_PLAIN_CITE = re.compile(r"^\s*(\d+)\s+(\S.*?)\s+(\d+)\s*$")

#: Public-domain citations courts write with hyphens, and the digits of their number (zero-padded):
#: New Mexico (Rule 23-112 NMRA: "2011-NMSC-012", "2021-NMCA-003"), North Carolina (the Supreme
#: Court's order of 2020 adopting public-domain citations: "2022-NCSC-1", "2022-NCCOA-5") and Ohio
#: (Ohio Rep. R. 3.2: "2019-Ohio-1234"). Others are written with spaces ("2019 WI 12", "2020 ND 45",
#: "2019 OK 3", "2013 IL 114196").
HYPHENATED_NEUTRAL = {"NMSC": 3, "NMCA": 3, "NMCERT": 3, "NCSC": 0, "NCCOA": 0, "Ohio": 0}
_NEUTRAL = re.compile(r"^(\d{4})(?:-(%s)-|\s+(%s)\s+)(\d{1,7})$" % (("|".join(HYPHENATED_NEUTRAL),) * 2))
#: Citations pinned by star page, and how: New York's slip opinions ("2020 NY Slip Op 50753(U), *2",
#: as New York's courts write them), Westlaw and Lexis ("2019 WL 123456, at *2", Bluebook 18.3.1).
STAR_PAGED = {"NY Slip Op": ", *{}", "specialty_west": ", at *{}", "specialty_lexis": ", at *{}"}
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

    @property
    def star_pin(self) -> str | None:
        """How a pin to a star page is written (``", *{}"``), or None: pinned by page."""
        return STAR_PAGED.get(self.root) or STAR_PAGED.get(self.kind)

    def written(self) -> str:
        """The citation as courts write it: a public-domain citation with hyphens where its court
        writes them (``2022 NCSC 1`` -> ``2022-NCSC-1``, ``2011 NMSC 12`` -> ``2011-NMSC-012``), else
        the text given, its spaces normalised."""
        reporter = self.root or self.reporter
        if self.neutral and reporter in HYPHENATED_NEUTRAL and self.page.isdigit():
            return f"{self.volume}-{reporter}-{self.page.zfill(HYPHENATED_NEUTRAL[reporter])}"
        return " ".join(self.text.split())


@functools.lru_cache(maxsize=4096)
def parse_cite(text: str) -> ParsedCite | None:
    """``570 U.S. 297`` -> its volume, reporter and first page (eyecite, else ``VOLUME WORDS PAGE``);
    ``None`` for a text that is neither."""
    text = " ".join(text.split())
    if not text:
        return None
    m = _NEUTRAL.match(text)  # public-domain citations reporters-db lacks (NCSC) or reads only with spaces
    if m:
        reporter = m.group(2) or m.group(3)
        return ParsedCite(text, m.group(1), reporter, m.group(4), reporter, "neutral")
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
    """The first page of a reporter citation (``570 U.S. 297`` -> ``297``; ``1`` for a citation
    pinned by star page, a slip opinion's); ``None`` for a public-domain citation (its last number
    is no page) or a text that is no citation."""
    parsed = parse_cite(citation)
    if parsed is not None and parsed.star_pin is not None:
        return "1"
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
    """courts-db's answers for court names, kept between processes (:mod:`statinterp.cache.namespaces`):
    finding a name takes courts-db about 1.6 s to compile its patterns in a process, then about
    20 ms a name; a ``find`` meets a few dozen courts."""
    from importlib.metadata import PackageNotFoundError, version

    from statinterp.cache.namespaces import StoredAnswers

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
                page: str | None = None, footnote: int | None = None, paragraph: int | None = None,
                docket: str = "") -> str:
    """The citation of a case (``name``, its first ``citation``, ``court``, decision ``date``),
    pinned to ``page`` (and ``footnote``: its number), or to ``paragraph`` (a paragraph's number,
    ``¶ 17``) for a public-domain citation; without a pin, the case's citation alone. A case with no
    citation but a ``docket`` number is cited as a slip opinion, pinned to the page of its own
    paper (``Name, No. 3:24-cv-00839, slip op. at 6 (D. Or. Sept. 3, 2025)``). The name is written as
    cited (:func:`cite_name`). See the module docstring."""
    name = cite_name(name, court)
    parsed = parse_cite(citation) if citation.strip() else None
    cite = parsed.written() if parsed is not None else " ".join(citation.split())
    if parsed is not None and parsed.neutral:
        pin = f", ¶ {paragraph}" if paragraph is not None else ""
        return ", ".join(p for p in (name, cite) if p) + pin
    head = ", ".join(p for p in (name, cite) if p)
    when = _year(date)
    if cite and page:
        star = parsed.star_pin if parsed is not None else None
        head += star.format(page.lstrip("*")) if star else f", {page}"
        head += f" n.{footnote}" if footnote is not None else ""
    elif not cite and docket.strip():
        number = " ".join(docket.split())
        head += f", {number}" if re.match(r"(?i)nos?\.", number) else f", No. {number}"
        if page:
            head += f", slip op. at {page.lstrip('*')}" + (f" n.{footnote}" if footnote is not None else "")
        when = _full_date(date) or when
    paren = " ".join(p for p in (_court_in_parenthetical(parsed, court, short_court), when) if p)
    return f"{head} ({paren})" if paren else head


#: The sources whose page labels are the pages of the court's own paper (a PDF's printed numbers, a
#: text's page breaks): a case of theirs with a docket number and no citation is cited as a slip
#: opinion. A CourtListener record's labels may be a reporter's star pages ("*Page 758"): not these.
SLIP_OPINION_SOURCES = frozenset({"pdf", "text"})

#: The Bluebook's abbreviations of months (table T12).
_MONTH_ABBREVIATIONS = ("Jan.", "Feb.", "Mar.", "Apr.", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")


def _full_date(date: str) -> str:
    """A slip opinion's date as cited ("Sept. 3, 2025") from YYYY-MM-DD, or ""."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", date.strip())
    if m is None or not 1 <= int(m.group(2)) <= 12:
        return ""
    return f"{_MONTH_ABBREVIATIONS[int(m.group(2)) - 1]} {int(m.group(3))}, {m.group(1)}"


def case_cite(case: Case, page: str | None = None, footnote: int | None = None,
              paragraph: int | None = None) -> str:
    """:func:`format_cite` of a loaded case (its short name, official citation, court, date; its docket
    number when it is a slip opinion: :data:`SLIP_OPINION_SOURCES`)."""
    return format_cite(case.short_name or case.name, case.citation, case.court, case.date,
                       short_court=case.short_court, page=page, footnote=footnote, paragraph=paragraph,
                       docket=slip_docket(case))


def slip_docket(case: Case) -> str:
    """The docket number a case is cited by as a slip opinion ("" unless its source's pages are its own
    paper's: :data:`SLIP_OPINION_SOURCES`)."""
    return case.docket_number if case.source in SLIP_OPINION_SOURCES else ""


def sentence_pin_cite(term: TermData, sentence: Sentence) -> str:
    """The citation to paste for a sentence: the pin cite its record carries (``find --out``
    writes one), else its case's citation pinned to the sentence's ``pin_page`` if it has one,
    else without a pin."""
    return sentence.pin_cite or case_cite(term.cases[sentence.case_id], page=sentence.pin_page or None)


# --------------------------------------------------------------------------------------------
# Case names as courts cite them

#: Words of a party's procedural designation ("Appellant-Defendant", "Plaintiffs/Appellees",
#: "Defendant and Respondent", "Cross-Petitioner"): dropped from a case name (Bluebook 10.2.1).
_ROLE_WORD = (r"(?:(?:Cross|Counter|Third[- ]Party)[- ]?)?(?:Plaintiff|Defendant|Appellant|Appellee|Petitioner|"
              r"Respondent|Intervenor|Intervener|Movant|Claimant|Complainant|Relator|Garnishee|Objector|Libellant|"
              r"Libelant|Employee|Employer|Cross[- ]Appellant|Cross[- ]Appellee|Real Party in Interest|"
              r"Real Parties in Interest)s?")
_ROLE = re.compile(rf"^(?:{_ROLE_WORD})(?:\s*(?:[-/&]|and|,)\s*(?:{_ROLE_WORD}))*\.?$", re.IGNORECASE)
#: A designation inside a piece of a caption ("Employer-Appellant", "Additional Party-Respondent",
#: "Defendants/Cross-Claim Plaintiffs-Respondents"): the party's name ended before it.
_ROLE_IN = re.compile(rf"(?:^|[\s\-/(])(?:{_ROLE_WORD})(?=$|[\s\-/).,;])", re.IGNORECASE)
#: A parenthetical that is no part of a name: designations, a judge's note, other names.
_NOT_NAME_PARENS = re.compile(rf"\s*\((?:[^()]*(?:{_ROLE_WORD}|\bJudge\b|\bJustice\b|dissent|concurr|"
                              r"\b[AFN]/?K/?A\b|\bD/?B/?A\b|known as|\bcases?\b)[^()]*)\)", re.IGNORECASE)
#: An alias after a party's name ("COBB HOSPITAL, INC. D/B/A WELLSTAR ..."): dropped with what follows.
_ALIAS_TAIL = re.compile(r",?\s+(?:[adfn]/k/a|d/b/a|[adfn]\.k\.a\.|d\.b\.a\.|dba|aka|fka|formerly known as|"
                         r"now known as)\s.*$",
                         re.IGNORECASE)
#: A service member's rank before the name ("Staff Sergeant DYLAN GRIFFIN"): not part of a case name.
_RANKS = ("Private", "Private First Class", "Specialist", "Corporal", "Lance Corporal", "Sergeant", "Staff Sergeant",
          "Sergeant First Class", "Master Sergeant", "First Sergeant", "Sergeant Major", "Gunnery Sergeant",
          "Technical Sergeant", "Senior Airman", "Airman", "Airman First Class", "Airman Basic", "Seaman",
          "Seaman Apprentice", "Seaman Recruit", "Petty Officer First Class", "Petty Officer Second Class",
          "Petty Officer Third Class", "Second Lieutenant", "First Lieutenant", "Lieutenant", "Captain", "Major",
          "Lieutenant Colonel", "Colonel", "Warrant Officer", "Chief Warrant Officer", "Cadet", "Midshipman")
_RANK = re.compile(r"^(?:" + "|".join(sorted(_RANKS, key=len, reverse=True)) + r")\s+(?=[A-Z])")
#: A piece of a caption after a party's name that says in what capacity it is a party.
_CAPACITY = re.compile(r"^(?:as )?(?:Trustees?|Executor|Executrix|Administrat(?:or|rix)|Guardian|Conservator|"
                       r"Next Friend|Personal Representative|Receiver|Husband and Wife|Wife and Husband|"
                       r"Governor|Director|"
                       r"Superintendent|Secretary|Commissioner|Warden|Sheriff|Attorney General|Chairman|Chair|Mayor|"
                       r"President|Acting)\b|"
                       r"^an? (?:minor|(?:\w+ )+(?:corporation|company|partnership|political subdivision))\b",
                       re.IGNORECASE)
#: A piece that starts another party, or says in what capacity the party is one.
_MORE_PARTIES = re.compile(r"(?:and|&)\s|individually\b|in (?:his|her|their|its) |on behalf of", re.IGNORECASE)
_ALIAS = re.compile(r"^(?:[adfn]/k/a|d/b/a|a\.k\.a\.|f\.k\.a\.|d\.b\.a\.|aka|fka|dba)\b", re.IGNORECASE)
#: "et al.", "et ux.", "et vir", "etc." (Bluebook 10.2.1(a): omit all parties but the first).
_ET_AL = re.compile(r",?\s+(?:(?i:et\.?\s*al|et\.?\s*ux|et\.?\s*vir)\.?|etc\.|(?i:(?:&|and)\s+(?:others|another))\.?)"
                    r"(?=\s|,|$)")
_VERSUS_SPLIT = re.compile(r"\s+(?:v\.?|vs\.?|V\.|VS\.?|Vs\.|(?i:versus))\s+")
#: "v." in lower case: where a name has it, a "V." is a given name's initial ("Casey V. SINGLETON").
_VERSUS_LOWER = re.compile(r"\s+(?:v\.?|vs\.?|(?i:versus))\s+")
#: Words kept in lower case inside a name put in title case.
_SMALL_WORDS = frozenset("a an and as at by de del der for from in into of on or the to upon with ex rel. re".split())
#: Words in capitals that are acronyms, not surnames, in an all-capitals name (besides words
#: without a vowel, such as NLRB or LLC, and roman numerals).
_ACRONYMS = frozenset(("USA", "SEC", "FBI", "EPA", "IRS", "FCC", "FTC", "INS", "HUD", "EEOC", "FDIC", "NAACP",
                       "ACLU", "AFL-CIO", "CIO", "UAW", "NCAA", "NASA", "AT&T", "IBM", "GEICO", "USAA", "BNSF",
                       "ERISA", "OSHA", "CIA", "ICE", "DOE", "DOJ", "TSA", "USPS", "UPS", "AMTRAK", "NFL", "NBA",
                       "MLB", "NHL", "ABC", "CBS", "NBC", "CNN", "HBO", "AIG", "AOL", "EMI"))
_DOMAIN = re.compile(r"[A-Za-z][A-Za-z\-]+\.(?i:com|net|org)")
#: A surname in capitals after its "Mc" or "Mac" ("McCRIMMON").
_MC_CAPS = re.compile(r"(Mc|Mac)[A-Z][A-Z'’\-]+")
_ROMAN = re.compile(r"^(?:I{1,3}|IV|VI{0,3}|IX|XI{0,3})$")
_SUFFIX = re.compile(r"^(?:Jr\.?|Sr\.?|I{2,3}|IV|V)$", re.IGNORECASE)
_INITIAL = re.compile(r"^[A-Z]\.$")
#: A firm's name that already says it is one: ", Inc." and the like after it are dropped (Bluebook 10.2.1(h)).
_FIRM_WORD = re.compile(r"\b(?:Co\.|Corp\.|Ass'n|Bros\.|R\.R\.|Ry\.|Ins\.|Bank|Cos\.|Ltd\.)(?=\s|,|$)")
#: A firm's form closing its name, in any case ("TYSON FOODS, INC.", "QUICKEN LOANS, INCORPORATED").
_FIRM_SUFFIX = re.compile(r",?\s+(?:Inc\.?|Incorporated|Ltd\.|Limited|L\.L\.C\.|LLC|L\.P\.|LP|N\.A\.|P\.C\.|P\.A\.)$",
                          re.IGNORECASE)
#: A firm's form written without its full stop or in capitals, as cited.
_FIRM_FORMS = {"ltd": "Ltd.", "inc": "Inc.", "corp": "Corp.", "incorporated": "Inc."}
#: Words of a government's or an institution's name, never an individual's.
_GOVERNMENT = frozenset("""State States United People Commonwealth County City Town Village Township Borough
    Parish Estate Trust Bank Inc Inc. Llc Commissioner Secretary Director Warden Sheriff Board Court Republic Nation
    Tribe Office Attorney General Governor Mayor Council School University College Hospital Church Union Company
    Corporation Partners Group""".split())
_MATTER = re.compile(r"^(?:In the Matter of(?: the)?|Matter of|In re):?\s+", re.IGNORECASE)
_SOVEREIGN = re.compile(r"^(State|Commonwealth|People|Territory)\s+of\s+(?:the\s+State\s+of\s+)?(.+)$", re.IGNORECASE)


def _letters(word: str) -> str:
    return "".join(ch for ch in word if ch.isalpha())


def _is_caps(word: str) -> bool:
    letters = _letters(word)
    return len(letters) >= 2 and (letters.isupper() or _MC_CAPS.fullmatch(letters) is not None)


def _is_acronym(word: str) -> bool:
    bare = word.strip(",;:()")
    letters = _letters(bare)
    if _DOMAIN.fullmatch(bare):  # a firm named by its web address: CONSUMERINFO.COM
        return False
    return (bare.upper() in _ACRONYMS or bare.rstrip(".").upper() in _ACRONYMS or "." in bare.rstrip(".")
            or bool(_ROMAN.match(bare)) or not any(ch in "AEIOUY" for ch in letters.upper()))


def _title(word: str, first: bool = False) -> str:
    """A word in capitals in title case ("O'BRIEN" -> "O'Brien", "SMITH-JONES" -> "Smith-Jones",
    "MCDONALD'S" -> "Mcdonald's"); a small word ("of", "the") in lower case unless ``first``."""
    if not first and word.lower() in _SMALL_WORDS:
        return word.lower()
    low = word.lower()

    def run(m: re.Match) -> str:
        at = m.start()
        if at >= 3 and low[at - 1] in "'’" and low[at - 2].isalpha() and low[at - 3].isalpha():
            return m.group(0)  # the letters after an apostrophe that follows a word: "'s", "'n"
        return m.group(0).capitalize()

    mc = _MC_CAPS.match(word)
    if mc:  # McCRIMMON -> McCrimmon
        return mc.group(1) + _title(word[mc.end(1):], True)
    if _DOMAIN.fullmatch(word.strip(",;:()")):
        return low[:1].upper() + low[1:]  # Consumerinfo.com
    return re.sub(r"[a-z]+", run, low)


def _surname(words: list[str]) -> str | None:
    """The surname of an individual named "Given [M.] SURNAME [Jr.]": a name ending in a word in
    capitals after given names in lower case, or a name with a middle initial; else None."""
    while words and _SUFFIX.match(words[-1].rstrip(",")):
        words = words[:-1]
    words = [w.rstrip(",") for w in words]
    if not 2 <= len(words) <= 5 or not all(w[:1].isupper() for w in words):
        return None
    head, last = words[:-1], words[-1]
    table, _ = _abbreviations()
    if not re.fullmatch(r"[A-Z][A-Za-z'’\-]+", last) or (_is_caps(last) and _is_acronym(last)) or any(
            _title(w.rstrip("."), True) in table or _title(w, True) in _GOVERNMENT for w in words):
        return None
    givens_lower = all(_INITIAL.match(w) or re.fullmatch(r"[A-Z][a-z'’\-]+\.?", w) for w in head)
    if _is_caps(last) and givens_lower and not _is_acronym(last):  # Chaunsey L. FOX
        return last
    if any(re.fullmatch(r"[A-Z]\.?", w) for w in head[1:]) and re.fullmatch(r"[A-Z][A-Za-z'’\-]+", head[0]) \
            and not _FIRM_WORD.search(" ".join(words)):  # John F. Bordelon, JOHN F. BORDELON
        return last
    return None


@functools.lru_cache(maxsize=1)
def _abbreviations() -> tuple[dict[str, str], dict[str, str]]:
    """Words of case names -> their abbreviations: reporters-db's ``CASE_NAME_ABBREVIATIONS``
    (The Bluebook's table T6) and ``STATE_ABBREVIATIONS`` (the states of table T10)."""
    from reporters_db import CASE_NAME_ABBREVIATIONS, STATE_ABBREVIATIONS

    words: dict[str, str] = {}
    for abbr, full in CASE_NAME_ABBREVIATIONS.items():
        if abbr not in ("&", "U.S."):  # "and" / "United States" are handled apart
            for word in full:
                words.setdefault(word, abbr)  # County: Cnty. (before Cty.)
    states = {full: abbr for abbr, full in STATE_ABBREVIATIONS.items() if abbr != full}
    return words, states


def _abbreviate(party: str) -> str:
    """A party's words abbreviated (T6; T10's states), unless the party is a state or the United
    States itself ("Indiana", "United States"); "and" -> "&" between names, "United States of
    America" -> "United States"."""
    words, states = _abbreviations()
    if " " not in party:  # a party of one word: "Commissioner" (of Internal Revenue), "Securities"
        return party
    head, rel, tail = party.partition(" ex rel. ")
    if head in states or head in ("United States", "District of Columbia"):
        return head + rel + (_abbreviate(tail) if tail else "")
    for full in sorted(states, key=len, reverse=True):
        party = re.sub(rf"\b{full}\b", states[full], party)
    party = re.sub(r"\bUnited States(?! of America)\b(?=\s+\S)", "U.S.", party)  # U.S. Bank, not a party

    def word(m: re.Match) -> str:
        w = m.group(0)
        if w in words:
            return words[w]
        if w.endswith("s") and w[:-1] in words:  # plural: Associations -> Ass'ns, Companies stays
            abbr = words[w[:-1]]
            return abbr[:-1] + "s." if abbr.endswith(".") else abbr + "s"
        return w

    last = party.split()[-1] if party.split() else ""
    party = re.sub(r"\b[A-Z][a-z]+\b", word, party)
    if last in ("North", "South", "East", "West", "Northern", "Southern", "Eastern", "Western"):
        party = party.rsplit(" ", 1)[0] + " " + last if " " in party else last  # a surname: Thomas Southern
    return re.sub(r"(?<=[\w.]) and (?=[A-Z])", " & ", party).replace("..", ".")


def _court_state(court: str) -> str | None:
    """The state whose court ``court`` is (courts-db's ``location`` of a state court); ``""`` for
    another court courts-db knows; None when it knows none."""
    found = _courts_db_court(court) if court.strip() else None
    if found is None:
        return None
    return found.get("location", "") if found.get("system") == "state" else ""


def _all_caps(party: str) -> bool:
    """Whether a party is written in capitals (its words of two letters or more, small words aside)."""
    words = [w for w in party.split() if len(_letters(w)) >= 2 and w.lower() not in _SMALL_WORDS
             and not _SUFFIX.match(w.strip(","))]
    return bool(words) and all(_is_caps(w) for w in words)


def _strip_designations(party: str) -> tuple[str, bool]:
    """A party without its designations ("Appellant-Defendant", "et al.", "individually"), nor the
    other parties and aliases set after them (Bluebook 10.2.1(a): the first party of each side);
    and whether it had a designation (a caption's party, named in full)."""
    had = _NOT_NAME_PARENS.search(party) is not None
    party = _NOT_NAME_PARENS.sub("", party)
    stripped = _ET_AL.sub("", party).strip(" ,;:")
    stripped = _ALIAS_TAIL.sub("", _RANK.sub("", stripped))
    pieces = [p.strip() for p in stripped.split(",")]
    kept: list[str] = []
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        if i > 0 and kept and _all_caps(kept[0]) and _another_party(piece):
            break  # "F & M MARQUETTE NATIONAL BANK, First Mid-America State Bank ...": the next party
        first, other = _first_in_capitals(piece) if not kept else (piece, False)
        if other:  # "COUNTY OF LUZERNE and Robert C. Lawton": the first party alone
            kept.append(first)
            had = True
            break
        if i > 0 and (_ROLE.match(piece) or _ROLE_IN.search(piece) or _ALIAS.match(piece)
                      or _CAPACITY.match(piece) or _MORE_PARTIES.match(piece)):
            had = had or not _ALIAS.match(piece)
            break
        if i > 0 and re.fullmatch(r"(?:[A-Z][a-z]?\.){2,}|Esq\.?|Ph\.D\.|J\.D\.", piece):  # M.D., D.O., Esq.
            continue
        kept.append(piece)
    while len(kept) > 1 and re.match(r"individually|as |in (?:his|her|their|its) |on behalf of", kept[-1], re.I):
        kept.pop()
    words = ", ".join(kept).split()
    while len(words) > 1 and _ROLE.match(words[-1].strip(".,")):  # "John Doe Petitioner"
        words.pop()
        had = True
    return " ".join(words).strip(" ,;:"), had


#: Where a caption in CAP's style starts a second party after its first in capitals: " and " or
#: " & " followed by a word that is not in capitals ("COUNTY OF LUZERNE and Robert C. Lawton",
#: "FRIENDS OF EUGENE and Coalition for ...", "CITY OF EUGENE and PeaceHealth").
_AND_NEXT = re.compile(r"\s+(?:and|&|AND)\s+(?=\S)")


def _another_party(piece: str) -> bool:
    """Whether a piece of a caption after a party in capitals is another party: it holds a word
    with a lower-case letter and is no firm's form, suffix or degree ("Inc.", "Jr.", "M.D.")."""
    words = [w for w in piece.split() if w.lower() not in _SMALL_WORDS]
    return (bool(words) and any(re.search(r"[a-z]", w) for w in words) and not _FIRM_SUFFIX.match(" " + piece)
            and not _SUFFIX.match(piece) and not re.fullmatch(r"(?:[A-Z][a-z]?\.){2,}|Esq\.?|Ph\.D\.|J\.D\.", piece))


def _first_in_capitals(piece: str) -> tuple[str, bool]:
    """The first party of a piece whose first party is in capitals and another follows it after
    "and" in another case (Bluebook 10.2.1(a)), and whether one did; else the piece itself.
    "JOHNSON AND JOHNSON" and "PROCTER & GAMBLE" (capitals on both sides) stay whole."""
    for m in _AND_NEXT.finditer(piece):
        before, after = piece[:m.start()], piece[m.end():]
        if _all_caps(before) and _another_party(after.split(",")[0].split()[0]):
            return before, True
    return piece, False


def _looks_personal(words: list[str]) -> bool:
    """Whether a party of two to four words is an individual's name ("JOSE LUIS GARCIA", "Maryann
    Gray"): no small word, no word of the tables of abbreviations or of a government ("STATE",
    "UNITED", "COUNTY")."""
    table, states = _abbreviations()
    while words and _SUFFIX.match(words[-1].strip(",")):
        words = words[:-1]
    words = [w.rstrip(",") for w in words]
    if not 2 <= len(words) <= 4:
        return False
    for w in words:
        t = _title(w, True)
        if ("'" in w or "’" in w or w.lower() in _SMALL_WORDS or t in table
                or not re.fullmatch(r"[A-Z](?:[A-Z\-]+|[a-z]+(?:-[A-Z][a-z]+)*)|Ma?c[A-Z][A-Z\-]+", w)
                or (_is_caps(w) and _is_acronym(w))
                or t.rstrip("s") in table or t in _GOVERNMENT or any(t in s.split() for s in states)):
            return False
    return True


def _clean_party(party: str, court: str, all_caps: bool, captioned: bool = False) -> str:
    """One party as cited; ``captioned``: the party came with a designation (a caption names
    individuals in full: the surname is kept)."""
    raw = party.split()
    for conj in ("and", "&", "AND"):  # several individuals: the first one's surname
        if conj in raw:
            first = raw[:raw.index(conj)]
            surname = _surname(first)
            if surname is None and (all_caps or captioned) and _looks_personal(first):
                surname = first[-1]
            if surname is not None:
                return _title(surname, True) if _is_caps(surname) else surname
    surname = _surname(raw)
    if surname is not None:
        return _title(surname, True) if _is_caps(surname) else surname
    first_piece = party.split(",")[0].split()
    firm_form = _FIRM_SUFFIX.search(party)  # GIFT SURPLUS, LLC: a firm, not an individual
    if "," in party and not firm_form:  # "David C. DECK, Traci M. Georgiadis, ...": the first party
        surname = _surname(first_piece)
        if surname is not None:
            return _title(surname, True) if _is_caps(surname) else surname
    if "," in party and (all_caps or captioned) and not firm_form and _looks_personal(first_piece):  # HERRIN, JR.
        return _title(first_piece[-1], True)
    if (all_caps or captioned) and not firm_form and _looks_personal(raw):  # JOSE LUIS GARCIA, Maryann Gray
        return _title(next(w.rstrip(",") for w in reversed(raw) if not _SUFFIX.match(w.strip(","))), True)
    if all_caps:
        words = [w if _is_acronym(w) or re.search(r"\d", w) else _title(w, i == 0) for i, w in enumerate(raw)]
    else:  # STATE of Indiana, John DOE; else a word in capitals is an acronym (VTCU Corp., NLRB)
        words = []
        for i, w in enumerate(raw):
            before_lower = i + 1 < len(raw) and raw[i + 1][:1].islower()
            if i > 0 and w.lower() in _SMALL_WORDS and _is_caps(w) and _is_caps(raw[i - 1]):
                words.append(w.lower())  # "CITY OF EUGENE and ...": "of" as courts write it
                continue
            words.append(_title(w, i == 0) if _is_caps(w) and not _is_acronym(w) and not re.search(r"\d", w) and (
                before_lower or _title(w) in _GOVERNMENT) else w)
    if words and words[-1].rstrip(".").lower() in _FIRM_FORMS:  # Bainbridge Fund LTD -> Ltd.
        words[-1] = _FIRM_FORMS[words[-1].rstrip(".").lower()]
    party = " ".join(words)
    if party[:4] in ("The ", "the ") and not party.startswith("The King"):  # Bluebook 10.2.1(d)
        party = party[4:]
    m = _SOVEREIGN.match(party)
    if m:
        kind, place = m.group(1).capitalize(), m.group(2).strip()
        rest = ""
        if " ex rel. " in place:
            place, rest = place.split(" ex rel. ", 1)
            rest = " ex rel. " + _clean_party(rest, court, _all_caps(rest), True)  # ex rel. Cooper
        state = _court_state(court)
        return (kind if state is None or state.lower() == place.lower() else place) + rest
    if party in ("United States of America", "United States Of America"):
        return "United States"
    if party in ("Commissioner of Internal Revenue", "Comm'r of Internal Revenue"):
        return "Commissioner"
    firm = _FIRM_SUFFIX.search(party)
    if firm and _FIRM_WORD.search(party[:firm.start()]):
        party = party[:firm.start()]
    return _abbreviate(party)


@functools.lru_cache(maxsize=8192)
def cite_name(name: str, court: str = "") -> str:
    """A case's name as it is cited (The Bluebook's rule 10.2, simplified): parties' designations
    ("Appellant-Defendant", "Petitioner", "et al.", "et ux.") dropped; a name in capitals, or
    surnames in capitals ("Chaunsey L. FOX"), in title case; an individual by surname; "State of
    Indiana" -> "State" in Indiana's courts (or a court ``court`` courts-db does not know), else
    "Indiana"; "United States of America" -> "United States"; "Commissioner of Internal Revenue"
    -> "Commissioner"; the words of reporters-db's table of case-name abbreviations (T6:
    "Association" -> "Ass'n") and states (T10) abbreviated, except in a party that is the state
    itself. Already cited names come back unchanged."""
    name = " ".join(html.unescape(name.replace("&039;", "'")).split()).strip(" ,;:")
    if not name:
        return ""
    last = re.search(r"\b([A-Z]{3,})\.$", name)
    if last and last.group(1) not in ("INC", "LTD", "CORP", "BROS", "ASSN", "CORR", "DEPT"):
        name = name[:-1]  # a caption's full stop: PEYTON v. DISTRICT OF COLUMBIA.
    if "; " in name and _VERSUS_SPLIT.search(name.split("; ")[0]):  # consolidated cases: the first
        name = name.split("; ")[0]
    split = _VERSUS_LOWER if _VERSUS_LOWER.search(name) else _VERSUS_SPLIT
    versus = split.search(name)
    if versus and " - " in name[versus.end():]:  # "X v. Y - Adversary Proceeding"
        name = name[:versus.end()] + name[versus.end():].split(" - ")[0]
    name = re.sub(r",?\s+(?i:ex rel\.)", " ex rel.", name)
    prefix = ""
    while (matter := _MATTER.match(name)) is not None:  # "Matter of X v. Y": adversaries, no procedural phrase
        prefix, name = ("" if _VERSUS_SPLIT.search(name) else "In re "), name[matter.end():]
    if prefix and name[:4] in ("the ", "The "):
        name = name[4:]
    sides = [_strip_designations(p.split("; ")[0]) for p in split.split(name)[:2]]
    # a name in long form (a designation, "State of Indiana"): individuals are named in full
    long_form = any(had or _SOVEREIGN.match(p) or p.startswith("United States of America")
                    or _surname(p.split()) is not None for p, had in sides)
    cleaned = [c for c in (_clean_party(p, court, _all_caps(p), long_form) for p, _ in sides if p) if c]
    return prefix + (" v. ".join(cleaned) if cleaned else name)
