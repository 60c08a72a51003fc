"""Where a statutory term occurs in text: a regular expression and an FTS5 query.

:func:`term_pattern` matches the ways case law writes a term (say *pre-employment
testing*):

* any letter case ("Pre-Employment Testing");
* the inflections (plural, "-ing", "-ed") and the possessive of every word but a function word
  ("technological measures", "measure's", "measures’", "properties", "nonindustrial uses",
  "motor cars"); function words (:data:`FUNCTION_WORDS`: "of", "the", "in" ...) are matched as
  written;
* hyphen, space and closed variants where the term joins parts: at a hyphen of the
  term ("pre-employment" ~ "pre employment" ~ "preemployment") and after a common
  prefix written closed ("preemployment" ~ "pre-employment", "cybercrime" ~
  "cyber-crime"; :data:`JOINABLE_PREFIXES`);
* between the words of the term, any run of whitespace including line breaks, or a
  hyphen ("hybrid-instrument");
* a hyphenated line break inside the term ("pre-\\nemployment").

The match never starts or ends inside a longer word ("nonviticultural" is not
"viticultural").

:func:`fts_query` is an SQLite FTS5 query (``unicode61`` tokenizer, the default) that
finds every paragraph the pattern can match (a superset: FTS5 sees tokens, the pattern
then checks the exact text): an ``OR`` of the term's token-level variants as phrases,
the last token as a prefix (plurals, possessives).

:func:`fts_exact_query` is the same superset without prefixes, for an index that can say which
token sequences occur (``find`` asks the collection): every spelling the pattern allows, token
by token (:func:`fts_word_options`), keeping only those that occur. A prefix such
as ``"co" *`` (the first part of "compensation") or ``"the" *`` makes FTS5 merge the postings
of every word it begins, which grows with the collection; exact tokens are looked up directly.

:func:`fts_pair_query` is the same superset for an index of adjacent token pairs (the collection's
``paragraph_pairs`` table, one token per pair, :func:`fts_pair`, no positions): the ``AND`` over the
term's word boundaries of the ``OR`` of the pairs its spellings allow there. A phrase query must
walk the position lists of every token of every phrase, and those of "of", "the" or "on" grow with
the collection; a pair such as ``on|hours`` is as rare as the words together are.

The pair index has no positions, so the pair query also returns paragraphs holding each pair apart
("distributive share" in one place, "of the income" in another). :func:`fts_near_query` asks the
positions of the text index for the term's content words only: each run of content words a phrase,
the runs within the number of tokens the function words between them take (``NEAR``); the postings
of "of" or "the", which a phrase of the whole term walks, are never read.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet

__all__ = ["FUNCTION_WORDS", "JOINABLE_PREFIXES", "term_pattern", "fts_query", "fts_word_options", "fts_exact_query",
           "term_parts", "fts_pair", "fts_pairs", "fts_pairs_text", "fts_pair_query", "fts_near_query",
           "fts_word_prefixes"]

# Prefixes that case law writes closed, hyphenated or spaced ("preemployment",
# "pre-employment", "pre employment").  Only split off when at least three letters follow.
JOINABLE_PREFIXES = (
    "anti", "co", "counter", "cyber", "inter", "intra", "micro", "mid", "multi", "non", "over",
    "post", "pre", "pro", "re", "self", "semi", "sub", "super", "trans", "un", "under",
)
_MIN_REST = 3

#: Words of a term matched as written, never inflected: a closed list of articles, prepositions,
#: conjunctions, pronouns, determiners and auxiliaries ("distributive share *of the* income",
#: "dependent *on* hours worked"). Every other word takes its inflections whatever its length
#: ("nonindustrial use" finds "nonindustrial uses", "motor car" "motor cars", "excise tax" "excise taxes").
FUNCTION_WORDS = frozenset("""
a an the
of in on at by for to from with without within into onto upon about above across after against along among
around as before behind below beneath beside besides between beyond but despite down during except inside
like near off out outside over past per since than through throughout till toward towards under underneath
until unto up via
and or nor yet so if whether because although though while unless either neither both
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
this that these those which who whom whose what such each every any all some no not
is are was were be been being am do does did has have had shall will would should may might must can could
""".split())
_HYPHENS = "-\u2010\u2011\u2012\u2013"  # hyphen-minus, hyphen, non-breaking hyphen, figure dash, en dash
_APOSTROPHES = "'\u2019"
# Between two words of the term: any run of whitespace (line breaks too), hyphens,
# quotes, commas, brackets - whatever is neither a letter/digit nor ends a clause
# ("hybrid” instrument", "Navigation, Equipment", "dependent on, hours worked").
_WORD_GAP = r"[^\w.!?;:]+"
# Inside a word, where the term may be written closed: nothing, or any gap a word gap allows
# (a hyphen, a hyphenated line break, "pre - employment", whitespace, "post, office": a prefix
# written as a word of its own is a word like any other).
_PART_GAP = rf"(?:{_WORD_GAP})?"


def term_parts(term: str) -> list[list[str]]:
    """The term's words, each as its parts.

    ``"pre-employment testing"`` -> ``[["pre", "employment"], ["testing"]]``.

    A word is split at its hyphens, and a closed word after one of
    :data:`JOINABLE_PREFIXES` ("preemployment" -> "pre" + "employment"); a prefix written
    as a word of its own joins the next word ("pre employment").  Letter case is folded.
    Raises ``ValueError`` for a term with no letters or digits.
    """
    words = []
    for raw in term.lower().split():
        pieces = [p for p in re.split(rf"[{_HYPHENS}]+", raw) if p]
        parts: list[str] = []
        for piece in pieces:
            piece = piece.strip(_APOSTROPHES + "\"“”‘’.,;:()[]")
            if not piece:
                continue
            for prefix in sorted(JOINABLE_PREFIXES, key=len, reverse=True):
                rest = piece[len(prefix):]
                if piece.startswith(prefix) and len(rest) >= _MIN_REST and rest.isalpha():
                    parts.extend([prefix, rest])
                    break
            else:
                parts.append(piece)
        if parts:
            words.append(parts)
    # A prefix written as a word of its own ("pre employment") joins the next word's parts.
    merged: list[list[str]] = []
    for parts in words:
        if merged and len(merged[-1]) == 1 and merged[-1][0] in JOINABLE_PREFIXES:
            merged[-1] = merged[-1] + parts
        else:
            merged.append(parts)
    words = merged
    if not any(any(ch.isalnum() for ch in part) for word in words for part in word):
        raise ValueError(f"term {term!r} has no letters or digits")
    return words


_SUFFIXES = ("ing", "ies", "ied", "ed", "es", "s", "e", "y")
_INFLECTIONS = r"(?:ing|ies|ied|ed|es|e|s|y)?"


def stem(word: str) -> str:
    """The word without one inflectional ending ("testing" -> "test", "trade" -> "trad",
    "property" -> "propert"); words of three letters or fewer are kept whole."""
    if len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _literal(word: str, whole: bool) -> bool:
    """Whether a term's word (``whole``) or the last part of a split word is matched as written:
    a whole function word (:data:`FUNCTION_WORDS`); every other word is inflected whatever its length."""
    return whole and word in FUNCTION_WORDS


def _word_forms(word: str, whole: bool = True) -> str:
    """Regex of a word with its inflections and possessive ("measure", "measures",
    "measure's", "measures’", "trading", "properties", "uses", "taxes"). A whole function word
    ("of", "the"; :func:`_literal`) is matched as written."""
    if _literal(word, whole):
        return re.escape(word)
    return (rf"(?:{re.escape(word)}(?:e?s)?|{re.escape(stem(word))}{_INFLECTIONS})"
            rf"(?:[{_APOSTROPHES}]s?)?")


@functools.lru_cache(maxsize=256)
def term_pattern(term: str) -> re.Pattern[str]:
    """Compiled, case-insensitive pattern matching ``term`` and its variants (module docstring)."""
    words = term_parts(term)
    word_regexes = []
    for parts in words:
        pieces = [re.escape(part) for part in parts[:-1]] + [_word_forms(parts[-1], whole=len(parts) == 1)]
        word_regexes.append(_PART_GAP.join(pieces))
    body = _WORD_GAP.join(word_regexes)
    return re.compile(rf"(?<![\w])(?:{body})(?![\w])", re.IGNORECASE)


def _gap_spellings(pieces: list[str]) -> list[list[str]]:
    """``pieces`` written with each gap between them either closed (one token) or open (two)."""
    out = []
    for closed in itertools.product((False, True), repeat=len(pieces) - 1):
        tokens = [pieces[0]]
        for piece, join in zip(pieces[1:], closed, strict=True):
            if join:
                tokens[-1] += piece
            else:
                tokens.append(piece)
        out.append(tokens)
    return out


def _fts_token_variants(words: list[list[str]]) -> list[list[str]]:
    """Token sequences (as FTS5 ``unicode61`` sees them) of every spelling the pattern allows."""
    per_word = [_gap_spellings(parts) for parts in words]
    variants = []
    for combo in itertools.product(*per_word):
        variants.append([tok for tokens in combo for tok in tokens])
    return variants


def _fts_tokens(text: str) -> list[str]:
    """Tokens of ``text`` as FTS5's ``unicode61`` tokenizer makes them (letters and digits)."""
    return re.findall(r"\w+", text.lower())


def fts_query(term: str) -> str:
    """FTS5 query finding every paragraph in which :func:`term_pattern` can match (a superset).

    The variants' token sequences, each token searched by its stem as a prefix
    (``"technolog" * + "measur" *``), joined by ``OR``.  FTS5's ``unicode61`` tokenizer
    drops punctuation, hyphens and apostrophes, so the gaps the pattern allows between
    words vanish.
    """
    phrases = []
    seen = set()
    for tokens in _fts_token_variants(term_parts(term)):
        flat = [t for tok in tokens for t in _fts_tokens(tok)]
        if not flat:
            continue
        key = tuple(stem(t) for t in flat)
        if key in seen:
            continue
        seen.add(key)
        phrases.append(" + ".join(f'"{t}" *' for t in key))
    return " OR ".join(f"({p})" for p in phrases)


def _form_strings(word: str, whole: bool) -> list[str]:
    """Every string :func:`_word_forms` matches, without the possessive ending (distinct, in order)."""
    if _literal(word, whole):
        return [word]
    base = stem(word)
    return list(dict.fromkeys([word, word + "s", word + "es", base, *(base + suffix for suffix in _SUFFIXES)]))


def fts_word_options(term: str) -> list[tuple[list[tuple[str, ...]], bool]]:
    """Per word of ``term``: every token sequence (as FTS5's ``unicode61`` makes them) that the
    word's part of :func:`term_pattern` can match, and whether a possessive ending may follow it
    (which adds an ``s`` token when written "'s").

    ``"final average compensation"`` -> ``[([("final",), ("finals",), ...], True), ...,
    ([("compensation",), ("co", "mpensation"), ...], True)]``: each inflection of the word's last
    part, each of its parts' gaps closed (one token) or open (two tokens).
    """
    return [(list(options), possessive) for options, possessive in _word_options(term)]


@functools.lru_cache(maxsize=256)
def _word_options(term: str) -> tuple[tuple[tuple[tuple[str, ...], ...], bool], ...]:
    """:func:`fts_word_options`, computed once per term (a shard set asks for it once per shard)."""
    out = []
    for parts in term_parts(term):
        options: dict[tuple[str, ...], None] = {}
        for form in _form_strings(parts[-1], whole=len(parts) == 1):
            for tokens in _gap_spellings([*parts[:-1], form]):
                flat = tuple(t for tok in tokens for t in _fts_tokens(tok))
                if flat:
                    options[flat] = None
        if options:
            out.append((tuple(options), not _literal(parts[-1], whole=len(parts) == 1)))
    return tuple(out)


#: :func:`fts_word_prefixes` gives no prefix shorter than this (a short prefix starts many tokens).
MIN_WORD_PREFIX = 4


@functools.lru_cache(maxsize=256)
def fts_word_prefixes(term: str) -> tuple[str, ...]:
    """FTS5 prefix queries (``"technolog" *``), one per word of ``term`` that has one: the longest
    prefix shared by the first tokens of all the word's spellings (:func:`fts_word_options`), when
    it has at least :data:`MIN_WORD_PREFIX` ASCII letters or digits. An index with no token
    starting with a word's prefix holds no spelling of the word, so no paragraph can match there
    (the question is one seek, where asking for each spelling is one per token)."""
    out = []
    for options, _ in _word_options(term):
        prefix = os.path.commonprefix([o[0] for o in options])
        if len(prefix) >= MIN_WORD_PREFIX and prefix.isascii() and prefix.isalnum():
            out.append(f'"{prefix}" *')
    return tuple(out)


@functools.lru_cache(maxsize=256)
def word_tokens(term: str) -> tuple[str, ...]:
    """Every token of every spelling (:func:`fts_word_options`) of ``term``'s words, sorted."""
    return tuple(sorted({t for options, _ in _word_options(term) for o in options for t in o}))


def lacks_a_word(term: str, has_token: Callable[[str], bool]) -> bool:
    """Whether some word of ``term`` has no spelling (:func:`fts_word_options`) all of whose
    tokens ``has_token`` admits: then no paragraph of a collection whose tokens ``has_token``
    describes can match the term (a shard's word list, :mod:`statinterp.collection.shards`;
    what :func:`fts_pair_query` would find out by asking the collection)."""
    return not all(any(all(map(has_token, o)) for o in options) for options, _ in _word_options(term))


#: :func:`fts_exact_query` falls back to :func:`fts_query` above this many spellings.
MAX_EXACT_SPELLINGS = 256

Phrase = tuple[str, ...]


@functools.lru_cache(maxsize=256)
def _spelling_questions(term: str) -> tuple[frozenset[Phrase], tuple[Phrase, ...], frozenset[str], frozenset[str]]:
    """What :func:`_kept_spellings` asks about ``term``, made once per term (a shard set asks it
    once per shard): every candidate spelling (with the possessive ``s`` where a word may take
    it), the spellings of the longest word (the likeliest to be missing), their tokens, and the
    other candidates' tokens."""
    words = _word_options(term)
    last = len(words) - 1
    candidates = {o for options, _ in words for o in options}
    candidates |= {o + ("s",) for i, (options, possessive) in enumerate(words) if possessive and i < last
                   for o in options}
    first = max(words, key=lambda word: sum(map(len, word[0][0])))[0]
    ask = frozenset(t for o in first for t in o)
    return frozenset(candidates), first, ask, frozenset(t for c in candidates for t in c) - ask


def _kept_spellings(term: str, occurring: Callable[[set[Phrase]], set[Phrase]]) -> list[list[Phrase]] | None:
    """Per word of ``term``, its spellings (:func:`fts_word_options`) that ``occurring`` keeps, and, for
    a word before the last that may take a possessive ("leadership's role"), each kept spelling
    followed by the ``s`` token when that is kept too; ``None`` when a word keeps none (then no
    paragraph can match).

    ``occurring`` is asked first for the single tokens of the longest word's spellings, then for
    those of the other words, and only then, if each word has a spelling of tokens that occur, for
    the spellings of several tokens whose tokens all occur: where the longest word has no spelling
    (most shards of a set, for most terms), one question of a few tokens.
    ``occurring`` answers a spelling of several tokens only if its tokens occur, so this keeps what
    asking for every spelling at once keeps."""
    words = _word_options(term)
    last = len(words) - 1
    candidates, first, ask, rest = _spelling_questions(term)

    def spelt(options: tuple[Phrase, ...]) -> bool:
        return any(all(t in known for t in o) for o in options)

    known = {p[0] for p in occurring({(t,) for t in ask})}
    if not spelt(first):
        return None
    if rest:
        known |= {p[0] for p in occurring({(t,) for t in rest})}
    if not all(spelt(options) for options, _ in words):
        return None
    longer = {c for c in candidates if len(c) > 1 and all(t in known for t in c)}
    found = {c for c in candidates if len(c) == 1 and c[0] in known} | (occurring(longer) if longer else set())
    kept = []
    for i, (options, possessive) in enumerate(words):
        here = [o for o in options if o in found]
        if possessive and i < last:
            here += [o + ("s",) for o in here if o + ("s",) in found]
        kept.append(here)
    return kept if all(kept) else None


def fts_exact_query(term: str, occurring: Callable[[set[Phrase]], set[Phrase]]) -> str | None:
    """FTS5 query finding every paragraph in which :func:`term_pattern` can match (a superset, as
    :func:`fts_query`) with exact tokens only; ``None`` when no paragraph can match.

    ``occurring(phrases)`` tells which of the token sequences occur in the index (it may keep more:
    a superset). Each word's spellings (:func:`fts_word_options`) that occur are kept, and, for a word
    before the last that may take a possessive ("leadership's role"), each kept spelling followed by
    the ``s`` token when that occurs; the query is the ``OR`` of the phrases of every combination of
    the kept spellings (a spelling that occurs nowhere cannot be part of a match). More than
    :data:`MAX_EXACT_SPELLINGS` combinations fall back to :func:`fts_query`.
    """
    kept = _kept_spellings(term, occurring)
    if kept is None:
        return None
    if math.prod(len(k) for k in kept) > MAX_EXACT_SPELLINGS:
        return fts_query(term)
    return " OR ".join("(" + " + ".join(f'"{t}"' for option in combo for t in option) + ")"
                       for combo in itertools.product(*kept))


#: Joins the two tokens of a pair in the pair index: not a word character, so ``a|b`` is never
#: another pair (tokens hold letters, digits and ``_``); the index's tokenizer keeps it in the token.
PAIR_SEPARATOR = "|"
#: The FTS5 options of the pair index: one token per pair (``ascii`` splits at ASCII punctuation
#: and spaces only, and folds nothing the pairs hold: they are lower-cased already), rowids only.
PAIR_INDEX_OPTIONS = f"detail=none, tokenize=\"ascii tokenchars '_{PAIR_SEPARATOR}'\""


def fts_pair(first: str, second: str) -> str:
    """The pair index's token for the adjacent tokens ``first second`` (as :func:`_fts_tokens` makes them)."""
    return f"{first}{PAIR_SEPARATOR}{second}"


def fts_pairs(tokens: Sequence[str]) -> list[str]:
    """The pair index's tokens (:func:`fts_pair`) of each two adjacent tokens of ``tokens``, in order."""
    return [fts_pair(a, b) for a, b in itertools.pairwise(tokens)]


def fts_pairs_text(text: str) -> str:
    """What the pair index holds for a paragraph: its distinct adjacent token pairs (:func:`fts_pairs`
    of :func:`_fts_tokens`), space-separated, in order of first occurrence (the same text gives the
    same value, which is what deleting it from a contentless index needs)."""
    return " ".join(dict.fromkeys(fts_pairs(_fts_tokens(text))))


def fts_pair_query(term: str, occurring: Callable[[set[Phrase]], set[Phrase]], *,
                   every_boundary: bool = False) -> str | None:
    """FTS5 query over the pair index (:func:`fts_pairs_text`) finding every paragraph in which
    :func:`term_pattern` can match (a superset); ``None`` when no paragraph can match. For a term
    of two words or more (one word has no boundary: use :func:`fts_exact_query`).

    With each word's kept spellings (as :func:`fts_exact_query`, ``occurring`` alike), a match is
    a run of tokens made of one spelling per word, so its paragraph holds, for each boundary
    between two words, all the pairs of one spelling of the first word followed by one of the
    second ("navigation s equipment": ``navigation|s``, ``s|equipment``). The query is the ``AND``
    over the boundaries of the ``OR`` of those: its size adds up over the boundaries, where the
    phrases of :func:`fts_exact_query` multiply over the words. A boundary between two function
    words (:data:`FUNCTION_WORDS`: "of the", "in an") is left out when the term has a content word:
    such a pair is in most paragraphs, so it rules out few of them, and its postings are the largest
    to read (for *distributive share of the income*, ``of|the`` was 2.6 of the 3.4 MB the query read
    cold at 30 k cases, and ruled out 61 of 1209 paragraphs). ``every_boundary``: keep those too (the
    query before; benchmarks/find.py compares).
    """
    if len(_word_options(term)) < 2:
        raise ValueError(f"term {term!r} has one word: a pair query needs two or more")
    kept = _kept_spellings(term, occurring)
    if kept is None:
        return None
    content = [possessive for _, possessive in _word_options(term)]
    conditions = []
    for i, (before, after) in enumerate(itertools.pairwise(kept)):
        if not (every_boundary or content[i] or content[i + 1]) and any(content):
            continue  # "of|the": in most paragraphs, it rules out few and has the largest postings to read
        both = dict.fromkeys(" AND ".join(f'"{p}"' for p in fts_pairs(a + b)) for a in before for b in after)
        conditions.append(" OR ".join(f"({c})" if " " in c else c for c in both))
    return " AND ".join(f"({c})" for c in conditions)


@functools.lru_cache(maxsize=256)
def _pair_query_parts(term: str) -> tuple[tuple[tuple[Phrase, ...], ...], tuple[int, ...],
                                          dict[tuple[Phrase, Phrase], tuple[str, frozenset[str]]], frozenset[str],
                                          frozenset[str]]:
    """What :func:`fts_pair_query_from_tokens` assembles ``term``'s query from, made once per term:
    per word its candidate spellings (with the possessive ``s`` where the word may take it), the
    boundaries the query asks for (as :func:`fts_pair_query`), the condition of each two adjacent
    spellings (all their pairs: the query's text and the pair index's tokens), every token of
    every candidate, and every pair of every condition."""
    words = _word_options(term)
    last = len(words) - 1
    spellings = tuple(tuple(options) + (tuple(o + ("s",) for o in options) if possessive and i < last else ())
                      for i, (options, possessive) in enumerate(words))
    content = [possessive for _, possessive in words]
    boundaries = tuple(i for i in range(last) if content[i] or content[i + 1] or not any(content))
    conditions = {}
    for i in boundaries:
        for a in spellings[i]:
            for b in spellings[i + 1]:
                pairs = fts_pairs(a + b)
                conditions[a, b] = (" AND ".join(f'"{p}"' for p in pairs), frozenset(pairs))
    return (spellings, boundaries, conditions, frozenset(t for sp in spellings for s in sp for t in s),
            frozenset(p for _, pairs in conditions.values() for p in pairs))


@functools.lru_cache(maxsize=4096)
def _tokens_of(spelling: Phrase) -> frozenset[str]:
    return frozenset(spelling)


def pair_query_tokens(term: str) -> frozenset[str]:
    """Every token :func:`fts_pair_query_from_tokens` may ask about."""
    return _pair_query_parts(term)[3]


def pair_query_pairs(term: str) -> frozenset[str]:
    """Every pair index token (:func:`fts_pair`) of the conditions of :func:`fts_pair_query_from_tokens`
    (what it may ask about when it knows the pairs a collection holds)."""
    return _pair_query_parts(term)[4]


def fts_pair_query_from_tokens(term: str, held: set[str] | frozenset[str], *, pairs_known: bool = False) -> str | None:
    """:func:`fts_pair_query` made from the tokens a collection holds (``held``, of
    :func:`pair_query_tokens`: a shard's word list) instead of asking it: a spelling is kept when
    each of its tokens is held, where :func:`fts_pair_query` also asks whether the pairs of a
    spelling of several tokens lie in one paragraph. The query finds the same paragraphs: a kept
    spelling whose pairs lie in no paragraph together makes a condition that matches none, and
    every word is in a boundary the query asks for. ``None`` when a word has no spelling held.

    ``pairs_known``: ``held`` also says which pair index tokens the collection holds (of
    :func:`pair_query_pairs`; a word list that holds its pair index's tokens): a condition one
    of whose pairs is not held matches no paragraph and is left out, and ``None`` also when a
    boundary keeps no condition (no paragraph can match)."""
    spellings, boundaries, conditions, _, _ = _pair_query_parts(term)
    kept = [[s for s in options if _tokens_of(s) <= held] for options in spellings]
    if not all(kept):
        return None
    parts = []
    for i in boundaries:
        both = dict.fromkeys(query for a in kept[i] for b in kept[i + 1]
                             for query, pairs in (conditions[a, b],) if not pairs_known or pairs <= held)
        if not both:
            return None
        parts.append(" OR ".join(f"({c})" if " " in c else c for c in both))
    return " AND ".join(f"({c})" for c in parts)


@functools.lru_cache(maxsize=512)
def list_questions(term: str, pairs: bool) -> tuple[str, ...]:
    """Every token whose presence in a collection :func:`may_match` weighs for ``term`` (sorted):
    the tokens of its words' spellings and, for a term of several words when ``pairs`` (the list
    that answers also knows the pair index's tokens), the pairs of its pair query's conditions."""
    tokens = set(word_tokens(term))
    if len(_word_options(term)) > 1:
        tokens |= pair_query_tokens(term) | (pair_query_pairs(term) if pairs else frozenset())
    return tuple(sorted(tokens))


def holders_of_term(term: str, holders: Callable[[str], int], *, pairs_known: bool = False) -> int:
    """Of several collections (shards, numbered from 0), those in which :func:`term_pattern` may
    match, as a bit mask (bit ``i``: collection ``i``), from ``holders(token)``: the bit mask of the
    collections that hold a token of :func:`list_questions` (a set's word index). A collection is
    left out when a word of the term has no spelling all of whose tokens it holds
    (:func:`lacks_a_word`) and, with ``pairs_known`` (``holders`` also answers for the pair index's
    tokens), when a boundary the pair query asks for (:func:`fts_pair_query_from_tokens`) has no two
    spellings whose pairs it all holds. Being kept is no promise of a match: the tokens or pairs may
    lie in different paragraphs."""
    def any_of(groups: Iterable[frozenset[str]], alive: int) -> int:
        out = 0
        for tokens in groups:
            held = alive
            for token in tokens:
                held &= holders(token)
                if not held:
                    break
            out |= held
            if out == alive:  # every collection still in is kept: the rest cannot add one
                break
        return out

    found = -1  # every collection
    for options, _ in _word_options(term):
        found = any_of((_tokens_of(o) for o in options), found)
        if not found:
            return 0
    if pairs_known and len(_word_options(term)) > 1:
        # a collection holding a pair holds its two tokens: a condition's pairs are enough to ask for
        for conditions in _boundary_pairs(term):
            found = any_of(conditions, found)
            if not found:
                return 0
    return found


def may_match(term: str, held: AbstractSet[str], *, pairs_known: bool = False) -> bool:
    """Whether :func:`term_pattern` may match in a collection that holds the tokens ``held`` (of
    :func:`list_questions`; a shard's word list) and no other of them: :func:`holders_of_term` of
    that one collection."""
    return bool(holders_of_term(term, lambda token: 1 if token in held else 0, pairs_known=pairs_known))


@functools.lru_cache(maxsize=256)
def _boundary_pairs(term: str) -> tuple[tuple[frozenset[str], ...], ...]:
    """Per boundary the pair query asks for (:func:`fts_pair_query_from_tokens`), the distinct sets
    of pairs of its conditions."""
    spellings, boundaries, conditions, _, _ = _pair_query_parts(term)
    return tuple(tuple(dict.fromkeys(conditions[a, b][1] for a in spellings[i] for b in spellings[i + 1]))
                 for i in boundaries)


#: :func:`fts_near_query` gives no query above this many ``NEAR`` groups (combinations of the runs' spellings).
MAX_NEAR_GROUPS = 32


def fts_near_query(term: str, occurring: Callable[[set[Phrase]], set[Phrase]]) -> str | None:
    """FTS5 query over the text index (with positions) that every paragraph in which
    :func:`term_pattern` can match satisfies (a superset), reading the positions of the term's
    content words only; ``None`` when there is none to make: no content word, a run of content words
    with no spelling that ``occurring`` keeps, or more than :data:`MAX_NEAR_GROUPS` groups.

    The term's words (:func:`fts_word_options`, kept spellings as :func:`fts_exact_query`) make runs
    of consecutive content words, split by function words (:data:`FUNCTION_WORDS`, one spelling,
    matched as written). Each run is a phrase of one kept spelling per word (the run's spellings that
    ``occurring`` keeps), and the runs of a match lie in one clump: at most as many tokens apart, from
    the end of the first run to the start of the last, as the words between them can take. The query
    is the ``OR``, over the combinations of the runs' phrases, of ``NEAR(phrase ..., that many)`` (a
    term of one run: the ``OR`` of its phrases). Meant to be ``AND``-ed with the pair query
    (:func:`fts_pair_query`), which checks the function words' pairs: positions narrow the pairs
    found apart to those in one place.
    """
    kept = _kept_spellings(term, occurring)
    if kept is None:
        return None
    content = [possessive for _, possessive in _word_options(term)]
    runs: list[list[int]] = []
    for i, is_content in enumerate(content):
        if not is_content:
            continue
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    if not runs:
        return None
    phrases = []
    for run in runs:
        combos = {tuple(t for option in combo for t in option) for combo in itertools.product(*(kept[i] for i in run))}
        found = occurring(combos) if len(run) > 1 else combos
        phrases.append(sorted(c for c in combos if c in found))
    if not all(phrases) or math.prod(len(p) for p in phrases) > MAX_NEAR_GROUPS:
        return None
    between = sum(max(len(option) for option in kept[i]) for i in range(runs[0][-1] + 1, runs[-1][0]))

    def phrase(tokens: Phrase) -> str:
        return '"' + " ".join(tokens) + '"'

    if len(runs) == 1:
        return " OR ".join(phrase(p) for p in phrases[0])
    return " OR ".join(f"NEAR({' '.join(phrase(p) for p in combo)}, {between})"
                       for combo in itertools.product(*phrases))
