"""Citations in a text, found by eyecite (the Free Law Project's citation extractor).

One home for what eyecite finds, used by ingesting (the case, statute and journal citations a
collection stores per paragraph: :func:`statinterp.collection.ingest.citations_of`) and by the
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

eyecite picks the regular expressions worth running on a text (its Aho-Corasick tokenizer) as a
``set`` of extractors hashed by their ``repr`` (about a fifth of its time), and the order of that
set decides which of two patterns matching the same span with different groups wins: the
answer then changes with ``PYTHONHASHSEED`` ("N.Y. Corr. Law § 168" is normalised as either
"N.Y. Corr. Law § 168" or "N.Y. Law § 168": 9 of the data set's 63,660 paragraphs with a digit;
6 of the 14,796 rows stored for the ingest benchmark's 300 cases). :func:`_tokenizer` picks the
same extractors by identity and runs them in eyecite's own order
(``eyecite.tokenizers.EXTRACTORS``): faster, and the same answer in every process.

eyecite is slow (a few milliseconds per paragraph), and the features ask for the same
paragraph once for each of its sentences: :func:`cached_citations` memoises the result per
text (a bounded cache in this process).

Ingest stores only the case, statute and journal citations, with their span, text and
normalised form (:func:`stored_citations`), and spends on them only the work that can change
those: see its docstring (no back references, no case names unless an edition is ambiguous;
a text without a match of a citation pattern is done after those patterns, which, where they
need a digit, are tried only where one can start).
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

__all__ = ["CASE_KINDS", "KINDS", "STORED_KINDS", "FoundCitation", "StoredCitation", "cached_citations",
           "cached_stored_citations", "case_citation_share", "cites_case", "find_citations", "stored_citations"]

#: eyecite citation classes -> kind.
KINDS = {"FullCaseCitation": "case", "ShortCaseCitation": "case", "FullLawCitation": "statute",
         "FullJournalCitation": "journal", "IdCitation": "id", "SupraCitation": "supra"}
#: The kinds that cite a case: full and short case citations, ``Id.`` and ``supra``.
CASE_KINDS = ("case", "id", "supra")
#: The kinds a collection stores (:func:`stored_citations`): full and short case citations, statutes
#: and journals (not ``Id.`` / ``supra``, which only point back).
STORED_KINDS = ("case", "statute", "journal")
#: A text without a match of this holds no match of a pattern that needs a digit (:func:`_needs_digit`).
_DIGIT = re.compile(r"\d")
#: How most of eyecite's reporter patterns begin (``eyecite.regexes.nonalphanum_boundaries_re``
#: around a first group that can only start with a digit): a match starts at the text's start or
#: at a character that is no ASCII letter or digit, followed by a digit (:func:`_digit_starts`).
_DIGIT_FIRST = tuple("(?:^|[^a-zA-Z0-9])(" + group for group in (
    r"(?P<volume>[1-9]\d*)", r"(?P<year>1\d{3}|20\d{2})", r"(?P<volume>1[789]\d{2}|20\d{2})",
    r"(?P<issue>\d+)", r"(?P<volume>\d{1,3})", r"(?P<title>\d+)", r"(?P<volume>\d{2,4})"))
#: Where a digit follows the text's start or a character that is no ASCII letter or digit.
_AFTER_BOUNDARY = re.compile(r"(?<![a-zA-Z0-9])(?=\d)")


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


@dataclass(frozen=True)
class StoredCitation:
    """A citation as a collection stores it (:func:`stored_citations`): offsets into the text."""

    kind: str  # case | statute | journal
    start: int
    end: int
    text: str  # as written (eyecite's matched text)
    normalized: str  # eyecite's corrected citation


@functools.cache
def _tokenizer():  # noqa: ANN202 - an eyecite Tokenizer (eyecite is imported on first use)
    """eyecite's Aho-Corasick tokenizer, choosing the same extractors as eyecite's own (those whose
    strings occur in the text, whitespace aside, and those without strings) by their position in
    ``eyecite.tokenizers.EXTRACTORS``, and running them in that order (module docstring).

    None if this eyecite lacks a private name the fast path builds on (those of eyecite 2.7): then
    eyecite's own tokenizer and ``get_citations`` are used, as before (slower; hash-ordered)."""
    try:
        import ahocorasick
        from eyecite.find import _extract_full_citation, _extract_shortform_citation  # noqa: F401
        from eyecite.models import CitationToken
        from eyecite.tokenizers import AhocorasickTokenizer, Tokenizer, _strip_ws
    except ImportError:
        return None

    def renumber(automaton, position: dict[int, int]):  # noqa: ANN001, ANN202
        out = ahocorasick.Automaton()
        for string, extractors in automaton.items():
            out.add_word(string, tuple(sorted({position[id(e)] for e in extractors})))
        out.make_automaton()
        return out

    class Found(Tokenizer):
        """``Tokenizer.tokenize`` over matches already found: (extractor, its matches), in order."""

        def __init__(self, found: list) -> None:  # (no dataclass fields: extract_tokens is given)
            self.found = found

        def extract_tokens(self, text: str):  # noqa: ANN202
            for extractor, matches in self.found:
                for m in matches:
                    yield extractor.get_token(m)

    class OrderedTokenizer(AhocorasickTokenizer):
        def __post_init__(self) -> None:
            super().__post_init__()
            position = {id(e): i for i, e in enumerate(self.extractors)}
            self.always = tuple(sorted(position[id(e)] for e in self.unfiltered_extractors))
            self.by_case = renumber(self.case_sensitive_filter, position)
            self.by_lower = renumber(self.case_insensitive_filter, position)
            #: per extractor, whether its tokens are citation tokens (reporters, laws, journals)
            self.citation = tuple(e.constructor == CitationToken.from_match for e in self.extractors)
            #: per extractor, whether its matches can only start where :func:`_digit_starts` says
            self.digit_first = tuple(e.regex.startswith(_DIGIT_FIRST) and not e.flags & (re.M | re.X)
                                     for e in self.extractors)
            self.needs: dict[int, bool] = {}

        def needs_digit(self, i: int) -> bool:
            """Whether every match of extractor ``i`` holds a digit (parsed on first use)."""
            known = self.needs.get(i)
            if known is None:
                e = self.extractors[i]
                known = self.needs[i] = self.digit_first[i] or _needs_digit(sre_parse.parse(e.regex, e.flags))
            return known

        def get_extractors(self, text: str) -> list:  # type: ignore[override]  # (a list: in order)
            return [self.extractors[i] for i in self.chosen(text)]

        def chosen(self, text: str) -> list[int]:
            """The positions of the extractors eyecite would run on ``text``, in order."""
            stripped = _strip_ws(text)
            chosen = set(self.always)
            for _, found in self.by_case.iter(stripped):
                chosen.update(found)
            for _, found in self.by_lower.iter(stripped.lower()):
                chosen.update(found)
            return sorted(chosen)

        @staticmethod
        def tokenize_found(text: str, found: list):  # noqa: ANN205 - eyecite's (words, citation tokens)
            return Found(found).tokenize(text)

    return OrderedTokenizer()


@functools.cache
def _use_fast_eyecite() -> None:
    import eyecite.helpers

    _eyecite_court_by_paren()
    eyecite.helpers.get_court_by_paren = court_by_paren
    logging.getLogger("eyecite").setLevel(logging.ERROR)  # it logs every overlap it resolves
    _tokenizer()


def find_citations(text: str) -> tuple[FoundCitation, ...]:
    """Every case, statute and journal citation, ``Id.`` and ``supra`` in ``text``, in order."""
    if not text.strip():
        return ()  # (eyecite refuses an empty text)
    from eyecite import get_citations

    _use_fast_eyecite()
    out = []
    tokenizer = _tokenizer()
    for cite in get_citations(text, **({"tokenizer": tokenizer} if tokenizer is not None else {})):
        kind = KINDS.get(type(cite).__name__)
        if kind is None:
            continue
        start, end = cite.span()
        full_start, full_end = cite.full_span()
        section = cite.groups.get("section") if kind == "statute" else None
        out.append(FoundCitation(kind, int(start), int(end), int(full_start), int(full_end), cite.matched_text(),
                                 cite.corrected_citation(), str(section or "")))
    return tuple(out)


def stored_citations(text: str) -> tuple[StoredCitation, ...]:
    """The citations of :data:`STORED_KINDS` in ``text``: those of :func:`find_citations` (kind,
    span, text and normalised form), each once, in the order of their spans.

    Only the work that can change them is done:

    * **No citation token, no citation.** Such a citation comes from a citation token (a match of
      one of eyecite's reporter, law or journal patterns). The patterns eyecite would run are
      chosen as eyecite chooses them (:func:`_tokenizer`), and the citation patterns run first:
      when none matches, the other tokens (stop words, ``Id.``, ``supra``, section marks) cannot
      add one, and the text is done. Otherwise the other patterns run too and the text is tokenized from all the
      matches, exactly as eyecite tokenizes it.
    * **Digits.** Most citation patterns need a digit (a volume, page or section; not all: a
      nominative reporter's volume is optional and its page may be Roman, "Abb. Adm. xiv", or a
      blank, "U.S. ___"): in a text without a digit only the others run (:func:`_needs_digit`,
      parsed once per pattern). Most patterns begin with eyecite's boundary and a group that
      starts with a digit (:data:`_DIGIT_FIRST`): they are tried only where a digit follows a
      boundary (:func:`_digit_starts`, :func:`_matches`), not at every character.
    * **Only what is stored.** eyecite's ``get_citations`` then builds every citation and looks
      for back references ("Smith, at 5", one regular expression compiled per case name: its
      largest cost). A stored citation's span is its token's (and, for a short citation, the pin
      cite after it: eyecite's own ``_extract_shortform_citation`` builds those), its kind
      follows from the token's reporter editions, and its normalised form from the one edition
      eyecite settles on; only where a full citation has more than one candidate edition does
      the year (after it, before it, or a parallel citation's) decide, so such a text is given
      to eyecite's own citation steps, back references aside. Back references, ``Id.`` and
      ``supra`` never remove a citation of a stored kind (``eyecite.helpers.filter_citations``
      drops only references and ``supra``; spans, the key it deduplicates on, start at distinct
      tokens), so leaving them out changes none. The test compares the result with
      eyecite's ``get_citations`` on every paragraph of the data set.
    """
    if not text.strip():
        return ()
    from eyecite import get_citations
    from eyecite.models import (
        CitationToken,
        Document,
        FullCaseCitation,
        FullJournalCitation,
        FullLawCitation,
        ResourceCitation,
    )

    _use_fast_eyecite()
    tokenizer = _tokenizer()
    if tokenizer is None:  # an eyecite without the names used here: its own get_citations
        return _as_stored(get_citations(text))
    from eyecite.find import _extract_full_citation, _extract_shortform_citation

    extractors = tokenizer.extractors
    chosen = tokenizer.chosen(text)
    if _DIGIT.search(text):
        starts = _digit_starts(text)
        matches = {i: _matches(extractors[i].compiled_regex, text, starts if tokenizer.digit_first[i] else None)
                   for i in chosen if tokenizer.citation[i]}
    else:  # only the few citation patterns that can match without a digit ("Abb. Adm. xiv", "U.S. ___")
        matches = {i: list(extractors[i].get_matches(text)) for i in chosen
                   if tokenizer.citation[i] and not tokenizer.needs_digit(i)}
    if not any(matches.values()):
        return ()
    for i in chosen:
        if i not in matches:
            matches[i] = list(extractors[i].get_matches(text))
    document = Document(plain_text=text)
    document.words, document.citation_tokens = tokenizer.tokenize_found(text, [(extractors[i], matches[i])
                                                                               for i in chosen])
    tokens = [(i, t) for i, t in document.citation_tokens if type(t) is CitationToken]
    cites: list[ResourceCitation] = []
    cite: ResourceCitation
    if any(not t.short and len(t.exact_editions or t.variation_editions) != 1 for _, t in tokens):
        previous = None
        for i, token in document.citation_tokens:  # eyecite's get_citations, citations of stored kinds only
            if type(token) is not CitationToken:
                previous = None if type(token).__name__ in _POINTING_BACK else previous
                continue
            if token.short:
                cite = _extract_shortform_citation(document, i)
            else:
                cite = _extract_full_citation(document, i)
                if isinstance(cite, FullCaseCitation) and isinstance(previous, FullCaseCitation):
                    cite.is_parallel_citation(previous)
            previous = cite
            cites.append(cite)
    else:
        kinds = (("reporters", FullCaseCitation), ("laws", FullLawCitation), ("journals", FullJournalCitation))
        for i, token in tokens:
            if token.short:
                cites.append(_extract_shortform_citation(document, i))
                continue
            source = (token.exact_editions or token.variation_editions)[0].reporter.source
            cite = next(k for s, k in kinds if s == source)(
                token, i, exact_editions=token.exact_editions, variation_editions=token.variation_editions)
            cite.guess_edition()
            cites.append(cite)
    return _as_stored(cites)


@functools.lru_cache(maxsize=4096)
def cached_stored_citations(text: str) -> tuple[StoredCitation, ...]:
    """:func:`stored_citations`, memoised per text: the segmenter asks for the citations of the few
    lines where a boundary may fall inside one (:func:`statinterp.text.segmentation._inside_citation`),
    and ingest then asks for every paragraph's, those lines among them, right after."""
    return stored_citations(text)


def _as_stored(cites: list) -> tuple[StoredCitation, ...]:
    """eyecite's citations of :data:`STORED_KINDS`, one per span (the last, as eyecite's
    ``filter_citations`` keeps it), in the order of their spans."""
    out = {}
    for cite in cites:
        kind = KINDS.get(type(cite).__name__)
        if kind in STORED_KINDS:
            start, end = cite.span()
            out[(int(start), int(end))] = StoredCitation(kind, int(start), int(end), cite.matched_text(),
                                                         cite.corrected_citation())
    return tuple(out[k] for k in sorted(out))


_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _digit_item(op, av) -> bool:  # noqa: ANN001 - an item of a parsed pattern
    """Whether a one-character item of a parsed pattern matches only what ``\\d`` matches."""
    if op is sre.LITERAL:
        return chr(av).isdecimal()
    if op is sre.IN:
        return bool(av) and all(
            (o is sre.LITERAL and chr(v).isdecimal())
            or (o is sre.RANGE and all(chr(c).isdecimal() for c in range(v[0], v[1] + 1)))
            or (o is sre.CATEGORY and v is sre.CATEGORY_DIGIT) for o, v in av)
    return False


def _needs_digit(pattern) -> bool:  # noqa: ANN001 - a parsed pattern (re._parser.SubPattern)
    """Whether every match of a parsed pattern holds (or, in a lookaround, sees) a ``\\d`` character:
    an item that is a digit, or a group, a repeat of at least one, every branch of an alternation,
    or a lookaround, that needs one. Anything else is taken as needing none (never wrongly yes)."""
    for op, av in pattern:
        if (_digit_item(op, av) or (op is sre.SUBPATTERN and _needs_digit(av[3]))
                or (op in _REPEATS and av[0] >= 1 and _needs_digit(av[2]))
                or (op is sre.BRANCH and all(_needs_digit(b) for b in av[1]))
                or (op is sre.ATOMIC_GROUP and _needs_digit(av)) or (op is sre.ASSERT and _needs_digit(av[1]))):
            return True
    return False


def _digit_starts(text: str) -> list[int]:
    """Every position where a pattern of :data:`_DIGIT_FIRST` can match: 0, and each character that
    is no ASCII letter or digit and is followed by a digit (the boundary, then the first group)."""
    return sorted({max(m.start() - 1, 0) for m in _AFTER_BOUNDARY.finditer(text)})


def _matches(pattern: re.Pattern, text: str, starts: list[int] | None) -> list[re.Match]:
    """``pattern.finditer(text)``, trying only ``starts`` (all the positions where a match can begin)
    when given: finditer tries each position from the end of its last match on, and so does this,
    skipping the positions where no match can begin (no match is empty: it holds a digit)."""
    if starts is None:
        return list(pattern.finditer(text))
    out = []
    end = 0
    for p in starts:
        if p >= end and (m := pattern.match(text, p)):
            out.append(m)
            end = m.end()
    return out


#: Tokens eyecite turns into citations that are not stored (``Id.``, ``supra``, a section mark): one
#: between two full case citations is ``citations[-1]`` in ``get_citations``, so the later citation
#: is not checked as parallel to the earlier.
_POINTING_BACK = ("IdToken", "SupraToken", "SectionToken")


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
