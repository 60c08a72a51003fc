"""fts_exact_query and the collection's exact-token lookup (find.candidate_paragraphs): the same
paragraphs matched as with the prefix query (a superset of the pattern's matches), fewer others."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection
from statinterp.errors import UsageError
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.text.term_match import (
    FUNCTION_WORDS,
    JOINABLE_PREFIXES,
    fts_exact_query,
    fts_query,
    fts_word_options,
    term_parts,
    term_pattern,
)
from tests.support.databases import paragraph_collection

#: A word of a term. Not a joinable prefix ("post", "over"): written as a word of its own, such a
#: prefix joins the next word ("post office" is one word, inflected at its end), which the
#: properties below, one ending per word, do not model (test_term_match.py tests the prefixes).
_WORD = st.text(alphabet="abcdefghijklmnoprstuvw", min_size=4, max_size=9).filter(
    lambda w: w not in JOINABLE_PREFIXES)
_GAP = st.sampled_from([" ", "  ", "\n", " \n  ", "-", "\u2010", ", ", "” “"])
_ENDING = st.sampled_from(["", "s", "'s", "’s", "es"])


def matches(term: str, text: str) -> bool:
    return term_pattern(term).search(text) is not None


def _fts(paragraphs: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")  # as the store
    db.executemany("INSERT INTO f(rowid, text) VALUES (?, ?)", list(enumerate(paragraphs)))
    return db


@pytest.fixture(scope="module")
def handmade_collection(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("exact")
    paragraphs = [("The district court held otherwise.", "A pre-employment testing program was adopted.",
                   "The employer's Pre-Employment Testing's scope was narrow.", "Preemployment tests of drivers.",
                   "Employment testing before hiring is a different matter.", "Pre-employment testimony was heard."),
                  ("Nothing here mentions the term at all.",)]
    records = [CaseRecord("cap", str(i), "A v. B", "A v. B", "2001-01-01", "1", (("official", f"{i} F.3d 1"),),
                          "Court", "Marl.", "", "", "", "", (OpinionRecord("majority", "Judge", p),))
               for i, p in enumerate(paragraphs)]
    ingest([write_cap_volume(records, root / "volume")], root / "collection", statistics=False, citations=False)
    return root / "collection"


# --------------------------------------------------------------------------------------------
# fts_exact_query: exact tokens, only those the index holds


def _known(db: sqlite3.Connection):
    def known(phrases: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
        return {p for p in phrases if db.execute("SELECT 1 FROM f WHERE f MATCH ? LIMIT 1",
                                                 (" + ".join(f'"{t}"' for t in p),)).fetchone()}
    return known


def _exact_hits(term: str, texts: list[str]) -> set[int]:
    db = _fts(texts)
    query = fts_exact_query(term, _known(db))
    return {r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (query,))} if query else set()


def test_fts_exact_query_finds_every_variant_and_no_prefix_words():
    texts = ["the pre-employment testing rule", "preemployment tests were", "pre employment testing",
             "no employment testing here", "testing before employment", "preemployment testimony was heard",
             "the pre-employment's testing"]
    assert _exact_hits("preemployment testing", texts) == {0, 1, 2, 6}  # the prefix query also returned 5
    texts = ["final average compensation", "the final average co-mpensation", "final averages compensations'",
             "final average court compensation", "final average counsel", "Final Average Compensation's"]
    assert _exact_hits("final average compensation", texts) == {0, 1, 2, 5}


def test_fts_exact_query_possessive_inside_the_term():
    """ "leadership's role": the 's' token between words (the prefix query's phrases missed it)."""
    texts = ["his leadership's role in an organization", "leadership role in an organization",
             "a role in an organization of leadership"]
    for i in (0, 1):
        assert matches("leadership role in an organization", texts[i])
    assert _exact_hits("leadership role in an organization", texts) >= {0, 1}
    assert 0 not in {r for (r,) in _fts(texts).execute(
        "SELECT rowid FROM f WHERE f MATCH ?", (fts_query("leadership role in an organization"),))}
    assert 2 not in _exact_hits("leadership role in an organization", texts)


def test_fts_exact_query_none_when_a_word_never_occurs_and_fallback():
    assert fts_exact_query("viticultural", lambda tokens: set()) is None
    assert fts_exact_query("hybrid instrument", lambda phrases: phrases & {("hybrid",)}) is None  # no "instrument"
    db = _fts(["hybrid instrument"])
    assert fts_exact_query("hybrid instrument", _known(db)) == '("hybrid" + "instrument")'
    db = _fts(["hybrid instrument", "the hybrid's instruments"])
    assert fts_exact_query("hybrid instrument", _known(db)) == (
        '("hybrid" + "instrument") OR ("hybrid" + "instruments") OR ("hybrid" + "s" + "instrument") OR '
        '("hybrid" + "s" + "instruments")')
    import statinterp.text.term_match as tm
    old = tm.MAX_EXACT_SPELLINGS
    try:
        tm.MAX_EXACT_SPELLINGS = 0
        assert fts_exact_query("hybrid instrument", _known(db)) == fts_query("hybrid instrument")
    finally:
        tm.MAX_EXACT_SPELLINGS = old


def test_fts_word_options_are_matched_by_the_pattern():
    for term in ("final average compensation", "leadership role in an organization", "preemployment testing",
                 "cybercrime", "significant property damage"):
        words = fts_word_options(term)
        assert len(words) == len(term_parts(term))
        for options, _possessive in words:
            assert all(" ".join(o).isascii() for o in options)
        # each word's spellings, one at a time with the other words as written, are matched
        written = term.split() if len(words) == len(term.split()) else None
        if written:
            for i, (options, _) in enumerate(words):
                for option in options:
                    word = "-".join(option)
                    text = " ".join([*written[:i], word, *written[i + 1:]])
                    assert matches(term, text), (term, text)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=4), gaps=st.lists(_GAP, min_size=3, max_size=3),
       endings=st.lists(_ENDING, min_size=4, max_size=4), upper=st.booleans(),
       before=st.sampled_from(["", "The ", "(", "“"]), after=st.sampled_from(["", " is", ".", ")", "”,"]))
def test_property_exact_query_is_a_superset(words, gaps, endings, upper, before, after):
    """Every word's ending (possessives before the last word too): the pattern matches, so must FTS5."""
    term = " ".join(words)
    written = ""
    for i, w in enumerate(words):
        written += (gaps[i - 1] if i else "") + w + endings[i]
    text = before + (written.upper() if upper else written) + after
    if not term_pattern(term).search(text):
        return  # an ending the pattern does not allow there (e.g. "es" after a word ending in "e")
    assert 0 in _exact_hits(term, [text, "unrelated words only"]), (term, text)


@settings(max_examples=150, deadline=None)
@given(term=st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
       text=st.text(alphabet="abcdefghijklmnoprstuvw -,.\n'’", max_size=80))
def test_property_exact_query_pattern_matches_imply_hit(term, text):
    if term_pattern(term).search(text) is None:
        return
    assert _exact_hits(term, [text]) == {0}


def test_occurring_and_candidate_paragraphs(handmade_collection):
    """The exact-token lookup returns every paragraph the pattern matches (those the prefix query
    found), fewer others, and nothing for a term one of whose words never occurs."""
    from statinterp.collection.find import candidate_paragraphs
    from statinterp.text.term_match import fts_query, term_pattern

    term = "preemployment testing"
    pattern = term_pattern(term)
    with Collection.open(handmade_collection) as collection:
        assert collection.occurring({("testing",), ("pre", "employment"), ("employment", "pre"), ("zeppelin",),
                                     ("employer", "s")}) == {("testing",), ("pre", "employment"), ("employer", "s")}
        with pytest.raises(UsageError):
            collection.occurring({('x" OR "y',)})
        new = [r for r in candidate_paragraphs(collection, term)]
        old = [r for r in collection.paragraphs_matching(fts_query(term))]
        assert [r for r in new if pattern.search(r.text)] == [r for r in old if pattern.search(r.text)]
        assert len([r for r in new if pattern.search(r.text)]) == 3 and len(new) < len(old)  # no testimony
        assert list(candidate_paragraphs(collection, "zeppelin testing")) == []


# --------------------------------------------------------------------------------------------
# fts_pair_query: the pair index (paragraph_pairs), a superset too




def _pair_hits(term: str, texts: list[str]) -> set[int]:
    """Rows the collection's lookup returns for ``term`` (the pair query for two words or more)."""
    from statinterp.collection.find import candidate_paragraphs

    collection = paragraph_collection(texts)
    assert collection.has_pairs
    return {r.paragraph_id for r in candidate_paragraphs(collection, term)}


def test_fts_pairs_text_and_pair_query():
    from statinterp.text.term_match import fts_pair_query, fts_pairs_text

    assert fts_pairs_text("Dependent on hours, on hours worked.") == (
        "dependent|on on|hours hours|on hours|worked")
    assert fts_pairs_text("a_b c") == "a_b|c" and fts_pairs_text("one") == ""
    with pytest.raises(ValueError, match="one word"):
        fts_pair_query("cybercrime", lambda phrases: phrases)
    assert fts_pair_query("hybrid instrument", lambda phrases: set()) is None
    db = _fts(["hybrid instrument", "the hybrid's instruments"])
    assert fts_pair_query("hybrid instrument", _known(db)) == (
        '("hybrid|instrument" OR "hybrid|instruments" OR ("hybrid|s" AND "s|instrument") OR '
        '("hybrid|s" AND "s|instruments"))')
    # one condition per boundary: sizes add up over the words (no product of phrases)
    query = fts_pair_query("dependent on hours worked", lambda phrases: phrases)
    assert query is not None and query.count(") AND (") == 2


def test_pair_query_finds_the_variants_and_not_the_words_apart():
    texts = ["the navigation's equipment", "navigation equipments were", "Navigation, Equipment",
             "his equipment", "navigation of ships; equipment", "the pre-employment testing rule",
             "preemployment tests", "pre employment testing", "employment testing before pre-trial"]
    assert _pair_hits("navigation equipment", texts) == {0, 1, 2}
    assert _pair_hits("preemployment testing", texts) == {5, 6, 7}
    assert _pair_hits("distributive share of the income", ["their distributive shares of the income",
                                                           "the distributive share of income"]) == {0}


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORD, min_size=2, max_size=4), gaps=st.lists(_GAP, min_size=3, max_size=3),
       endings=st.lists(_ENDING, min_size=4, max_size=4), upper=st.booleans(),
       before=st.sampled_from(["", "The ", "(", "“", "of the "]), after=st.sampled_from(["", " is", ".", ")", "”,"]),
       small=st.lists(st.sampled_from(["of", "the", "on", "an", "in"]), max_size=2))
def test_property_pair_query_is_a_superset(words, gaps, endings, upper, before, after, small):
    """As the phrase query's property, with short words ("of", "the": never inflected) in the term."""
    words = words[:1] + small + words[1:]
    term = " ".join(words)
    written = ""
    for i, w in enumerate(words):
        written += (gaps[(i - 1) % 3] if i else "") + w + (endings[i % 4] if len(w) > 3 else "")
    text = before + (written.upper() if upper else written) + after
    if not term_pattern(term).search(text):
        return
    assert 0 in _pair_hits(term, [text, "unrelated words only"]), (term, text)


_SHORT = st.text(alphabet="abcdefghijklmnoprstuvw", min_size=1, max_size=3).filter(
    lambda w: w not in FUNCTION_WORDS and w not in JOINABLE_PREFIXES)  # "pre", "co": as _WORD


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.one_of(_SHORT, _WORD), min_size=1, max_size=4), gaps=st.lists(_GAP, min_size=3, max_size=3),
       endings=st.lists(_ENDING, min_size=4, max_size=4), upper=st.booleans(),
       small=st.lists(st.sampled_from(["of", "the", "on", "an", "in", "and"]), max_size=2),
       before=st.sampled_from(["", "The ", "(", "“"]), after=st.sampled_from(["", " is", ".", ")", "”,"]))
def test_property_short_content_words_take_endings_and_every_query_follows(words, gaps, endings, upper, small,
                                                                        before, after):
    """Content words of one to three letters ("use", "car", "tax") take every ending (plural,
    possessive) as longer words do, function words none; the pattern matches, and the prefix
    query, the exact-token query and the pair query all return the paragraph."""
    words = words[:1] + small + words[1:]
    term = " ".join(words)
    written = ""
    inner_possessive = False
    for i, w in enumerate(words):
        ending = "" if w in FUNCTION_WORDS else endings[i % 4]
        if len(w) > 3 and ending == "es":
            ending = "s"  # "es" after a long word ending in "e" is not an inflection the pattern allows
        inner_possessive |= i < len(words) - 1 and "s" in ending and ending not in ("s", "es")
        written += (gaps[(i - 1) % 3] if i else "") + w + ending
    text = before + (written.upper() if upper else written) + after
    assert term_pattern(term).search(text), (term, text)
    texts = [text, "unrelated words only"]
    db = _fts(texts)
    if not inner_possessive:  # the prefix query's phrases miss "leadership's role" (the exact queries do not)
        assert 0 in {r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_query(term),))}, (term, text)
    assert 0 in _exact_hits(term, texts), (term, text)
    if len(fts_word_options(term)) > 1:
        assert 0 in _pair_hits(term, texts), (term, text)


@settings(max_examples=150, deadline=None)
@given(term=st.lists(_WORD, min_size=2, max_size=3).map(" ".join),
       text=st.text(alphabet="abcdefghijklmnoprstuvw -,.\n'’_", max_size=80))
def test_property_pair_query_pattern_matches_imply_hit(term, text):
    if term_pattern(term).search(text) is None:
        return
    assert _pair_hits(term, [text]) == {0}


def test_pair_lookup_returns_the_phrase_lookups_matches(handmade_collection):
    """In a collection of format 2 the pair query's matches are the phrase query's."""
    from statinterp.collection.find import candidate_paragraphs

    with Collection.open(handmade_collection) as collection:
        assert collection.has_pairs
        for term in ("preemployment testing", "district court", "employer testing", "the term at all"):
            pattern = term_pattern(term)
            query = fts_exact_query(term, collection.occurring)
            old = [r for r in collection.paragraphs_matching(query)] if query else []
            new = list(candidate_paragraphs(collection, term))
            assert [r for r in new if pattern.search(r.text)] == [r for r in old if pattern.search(r.text)], term


def test_three_letter_words_are_found_inflected_through_the_collection_lookups():
    """A term ending in a three-letter word finds its plurals through the pair index and the exact tokens
    (they were matched as written before: "nonindustrial uses" was missed)."""
    texts = ["the nonindustrial uses of land", "a nonindustrial user", "Nonindustrial use’s scope",
             "motor cars and trucks", "the motor carrier"]
    assert _pair_hits("nonindustrial use", texts) == {0, 2}
    assert _pair_hits("motor car", texts) == {3}
    assert _exact_hits("tax", ["excise taxes", "a taxi", "the tax's share"]) == {0, 2}
    assert _pair_hits("use of force", ["uses of force", "use ofs force", "the use of forces"]) == {0, 2}
