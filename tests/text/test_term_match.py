"""term_pattern / fts_query: the variants of a term that case law writes, and the FTS5 superset."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.text.term_match import fts_query, stem, term_parts, term_pattern


def matches(term: str, text: str) -> bool:
    return term_pattern(term).search(text) is not None


@pytest.mark.parametrize("text", [
    "a technological measure that",
    "TECHNOLOGICAL MEASURES",
    "the technological measure's purpose",
    "these technological measures’ effect",
    "technological\nmeasure",
    "technological  \n   measure",
    "technological-measure",
    "“technological” measure",
])
def test_technological_measure_variants(text):
    assert matches("technological measure", text)


@pytest.mark.parametrize("text", [
    "pre-employment testing", "preemployment testing", "pre employment testing", "Pre-Employment Testing",
    "pre-\nemployment testing", "preemployment tests", "pre‐employment testing",  # U+2010 hyphen
])
@pytest.mark.parametrize("term", ["preemployment testing", "pre-employment testing", "pre employment testing"])
def test_hyphen_space_closed_variants(term, text):
    assert matches(term, text)


@pytest.mark.parametrize("term,text", [
    ("viticultural", "nonviticultural areas"),  # inside a longer word
    ("viticultural", "viticulturalist"),
    ("technological measure", "technological progress measures"),  # another word in between
    ("technological measure", "technological. Measures"),  # across a sentence end
    ("hybrid instrument", "hybrid; instrument"),
    ("cybercrime", "cyberspace crime"),
])
def test_non_matches(term, text):
    assert not matches(term, text)


def test_plural_of_y_and_other_inflections():
    assert matches("significant property damage", "significant properties damages")
    assert matches("accommodation trade", "accommodation trading")
    assert matches("distributive share of the income", "their distributive shares of the income")
    assert matches("navigation equipment", "Bureaus of Navigation, Equipment")  # punctuation between words


def test_term_parts_and_stem():
    assert term_parts("Pre-Employment testing") == [["pre", "employment"], ["testing"]]
    assert term_parts("cybercrime") == [["cyber", "crime"]]
    assert stem("testing") == "test" and stem("trade") == "trad" and stem("property") == "propert"
    assert stem("of") == "of"
    with pytest.raises(ValueError):
        term_parts(" -- ")


def _fts(paragraphs: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    # the collection's FTS5 table (statinterp/collection/store.py)
    db.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO f(rowid, text) VALUES (?, ?)", list(enumerate(paragraphs)))
    return db


def test_fts_query_finds_every_variant():
    texts = ["the pre-employment testing rule", "preemployment tests were", "pre employment testing",
             "no employment testing here", "testing before employment"]
    db = _fts(texts)
    hits = {r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_query("preemployment testing"),))}
    assert {0, 1, 2} <= hits
    assert hits.isdisjoint({3, 4})


_WORD = st.text(alphabet="abcdefghijklmnoprstuvw", min_size=4, max_size=9)
_GAP = st.sampled_from([" ", "  ", "\n", " \n  ", "-", " - ", "\u2010", ", ", "” “"])
_ENDING = st.sampled_from(["", "s", "'s", "’s", "es"])


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=4), gaps=st.lists(_GAP, min_size=3, max_size=3),
       ending=_ENDING, upper=st.booleans(), before=st.sampled_from(["", "The ", "(", "“"]),
       after=st.sampled_from(["", " is", ".", ")", "”,"]))
def test_property_variants_match_and_fts_is_a_superset(words, gaps, ending, upper, before, after):
    term = " ".join(words)
    written = words[0]
    for w, gap in zip(words[1:], gaps, strict=False):
        written += gap + w
    written += ending
    if upper:
        written = written.upper()
    text = before + written + after
    assert term_pattern(term).search(text), (term, text)
    db = _fts([text, "unrelated words only"])
    hits = {r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_query(term),))}
    assert 0 in hits


@settings(max_examples=150, deadline=None)
@given(term=st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
       text=st.text(alphabet="abcdefghijklmnoprstuvw -,.\n'’", max_size=80))
def test_property_pattern_matches_imply_fts_hit(term, text):
    """Whatever the text, a paragraph the pattern matches is one FTS5 returns (the superset rule)."""
    if term_pattern(term).search(text) is None:
        return
    db = _fts([text])
    assert db.execute("SELECT count(*) FROM f WHERE f MATCH ?", (fts_query(term),)).fetchone()[0] == 1


@pytest.mark.parametrize("text", ["pre - employment testing", "pre -employment testing", "the multi - aaaa rule"])
def test_spaced_hyphen_after_a_prefix_still_matches(text):
    """A hyphen with a space before it after a joinable prefix ("pre - employment") is the same
    variant as "pre-employment" (hypothesis found "aaaa multi - aaaa" unmatched)."""
    term = "preemployment testing" if "employment" in text else "multiaaaa"
    match = term_pattern(term).search(text)
    assert match is not None
    db = _fts([text, "unrelated words only"])
    assert {r for (r,) in db.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_query(term),))} == {1 - 1}


# --------------------------------------------------------------------------------------------
# Every content word is inflected whatever its length; function words stay as written


@pytest.mark.parametrize("term,text", [
    ("nonindustrial use", "nonindustrial uses"),
    ("nonindustrial use", "the nonindustrial use's scope"),
    ("motor car", "motor cars"),
    ("motor car", "MOTOR CARS’"),
    ("excise tax", "excise taxes"),
    ("filing fee", "filing fees"),
    ("gun", "guns"),
    ("law enforcement", "laws enforcement"),  # a possessive or plural before the last word, as for long words
    ("use of force", "uses of force"),
    ("tax", "tax's"),
])
def test_three_letter_content_words_are_inflected(term, text):
    assert matches(term, text)


@pytest.mark.parametrize("term,text", [
    ("use of force", "use ofs force"),  # "of" is a function word: as written
    ("distributive share of the income", "distributive share of thes income"),
    ("leadership role in an organization", "leadership role ins an organization"),
    ("dependent on hours worked", "dependent on's hours worked"),
    ("motor car", "motor cartel"),  # never inside a longer word
    ("tax", "taxi"),
])
def test_function_words_stay_literal_and_words_stay_whole(term, text):
    assert not matches(term, text)


def test_function_word_list_is_closed_and_lower_case():
    from statinterp.text.term_match import FUNCTION_WORDS

    assert {"a", "an", "the", "of", "in", "on", "and", "or", "it", "their"} <= FUNCTION_WORDS
    assert not {"use", "act", "tax", "fee", "car", "gun", "law"} & FUNCTION_WORDS
    assert all(w == w.lower() and w.isalpha() for w in FUNCTION_WORDS)
