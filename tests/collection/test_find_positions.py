"""The position check of find's lookup (find.candidate_paragraphs, term_match.fts_near_query): above
POSITION_CHECK_ROWS paragraphs from the pair query, only those whose content words lie together are
read; the paragraphs the exact pattern matches, and the tables found, are the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.collection import find as find_module
from statinterp.collection.store import Collection
from statinterp.text import term_match
from statinterp.text.term_match import fts_near_query, term_pattern
from tests.support.databases import paragraph_collection

_WORD = st.text(alphabet="abcdefghijklmnoprstuvw", min_size=4, max_size=9).filter(
    lambda w: w not in term_match.FUNCTION_WORDS)
_GAP = st.sampled_from([" ", "  ", "\n", " \n  ", "-", "\u2010", ", ", "” “"])
_ENDING = st.sampled_from(["", "s", "'s", "’s", "es"])




@pytest.fixture
def check_always(monkeypatch):
    """The position check on whatever the number of rows."""
    monkeypatch.setattr(find_module, "POSITION_CHECK_ROWS", 0)


def _read(collection: Collection, term: str) -> list[int]:
    return [r.paragraph_id for r in find_module.candidate_paragraphs(collection, term)]


# --------------------------------------------------------------------------------------------
# fts_near_query


def _as_written(term: str):
    """An ``occurring`` that keeps the term's words as written and every sequence of them."""
    words = set(term.split())
    return lambda phrases: {p for p in phrases if set(p) <= words}


def test_near_query_reads_the_content_words_only_within_the_function_words_tokens():
    query = fts_near_query("distributive share of the income", lambda phrases: {
        p for p in phrases if p in {("distributive",), ("share",), ("shares",), ("of",), ("the",), ("income",),
                                    ("distributive", "share"), ("distributive", "shares")}})
    assert query == ('NEAR("distributive share" "income", 2) OR NEAR("distributive shares" "income", 2)')
    assert '"of"' not in query and '"the"' not in query
    # between the first run and the last: "on" (one token); "in an old organization of" (five, an inner run)
    assert fts_near_query("dependent on hours worked", _as_written("dependent on hours worked")) == (
        'NEAR("dependent" "hours worked", 1)')
    term = "role in an old organization of men"
    assert fts_near_query(term, _as_written(term)) == 'NEAR("role" "old organization" "men", 5)'
    # one run: the phrases of its spellings; no content word: no query
    assert fts_near_query("hybrid instrument", _as_written("hybrid instruments instrument")) == (
        '"hybrid instrument" OR "hybrid instruments"')
    assert fts_near_query("of the", lambda phrases: phrases) is None
    assert fts_near_query("hybrid instrument", lambda phrases: set()) is None  # no spelling occurs


def test_near_query_bounded_and_lookup_falls_back_beyond(monkeypatch, check_always):
    texts = ["the distributive share of the income", "distributive share was set; of the income, the share of it"]
    collection = paragraph_collection(texts)
    assert fts_near_query("distributive share of the income", collection.occurring) is not None
    assert _read(collection, "distributive share of the income") == [0]
    monkeypatch.setattr(term_match, "MAX_NEAR_GROUPS", 0)  # too many groups: no query, every pair row is read
    assert fts_near_query("distributive share of the income", collection.occurring) is None
    assert _read(collection, "distributive share of the income") == [0, 1]


@pytest.mark.slow
def test_spellings_multiply_only_within_a_run():
    """Groups = the product over runs of each run's spellings; a term of many inflected content words
    in one run exceeds the bound, and then there is no query."""
    words = ["alpha", "bravo", "charlie", "delta", "echoing"]
    assert fts_near_query(" ".join(words), lambda phrases: phrases) is None  # > MAX_NEAR_GROUPS phrases
    query = fts_near_query("alpha of the bravo", _as_written("alpha alphas of the bravo bravos"))
    assert query is not None and query.count("NEAR(") == 2 * 2 and query.count(", 2)") == 4
    query = fts_near_query("alpha bravo of the charlie", _as_written("alpha alphas of the bravo bravos charlie"))
    assert query is not None and query.count("NEAR(") == 4 * 1  # "alpha(s) bravo(s)" x "charlie"


def test_pair_query_leaves_out_a_boundary_of_two_function_words():
    def every(phrases):
        return {p for p in phrases if len(p) == 1 and p[0] in {"distributive", "share", "of", "the", "income"}}

    assert term_match.fts_pair_query("distributive share of the income", every) == (
        '("distributive|share") AND ("share|of") AND ("the|income")')
    assert '"of|the"' in term_match.fts_pair_query("distributive share of the income", every, every_boundary=True)
    assert term_match.fts_pair_query("of the", lambda phrases: phrases) == '("of|the")'  # no content word: kept
    # still a superset: the row without "of the" anywhere comes back, and the pattern rules it out
    texts = ["the distributive share of a partner and the income", "the distributive share of the income"]
    assert _read(paragraph_collection(texts), "distributive share of the income") == [0, 1]


# --------------------------------------------------------------------------------------------
# candidate_paragraphs with the check


def test_the_check_keeps_the_matches_and_drops_the_pairs_found_apart(check_always):
    texts = ["Their distributive shares of the income were taxed.",                       # 0 match
             "The distributive share was fixed; of the income, the share of the rent.",    # 1 pairs apart
             "the distributive share of the rent and the income",                         # 2 pairs apart
             "The Distributive  Share\nof the\nIncome’s amount",                           # 3 match
             "income of the distributive share of the partnership"]                        # 4 no "the|income"
    collection = paragraph_collection(texts)
    pattern = term_pattern("distributive share of the income")
    assert [i for i, t in enumerate(texts) if pattern.search(t)] == [0, 3]
    assert _read(collection, "distributive share of the income") == [0, 3]
    with_pairs_only = collection.paragraph_ids_matching(
        term_match.fts_pair_query("distributive share of the income", collection.occurring), pairs=True)
    assert with_pairs_only == {0, 1, 2, 3}


def test_below_the_bound_every_pair_row_is_read():
    texts = ["The distributive share was fixed; of the income, the share of the rent.",
             "their distributive share of the income"]
    assert find_module.POSITION_CHECK_ROWS > len(texts)
    assert _read(paragraph_collection(texts), "distributive share of the income") == [0, 1]


def test_rows_come_in_case_opinion_position_order(check_always):
    collection = paragraph_collection([f"line {i}: a hybrid instrument" for i in range(5)])
    rows = list(find_module.candidate_paragraphs(collection, "hybrid instrument"))
    assert [r.position for r in rows] == [0, 1, 2, 3, 4] and rows[0].text == "line 0: a hybrid instrument"
    assert list(collection.paragraphs_with_ids(set())) == []


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORD, min_size=2, max_size=4), gaps=st.lists(_GAP, min_size=3, max_size=3),
       endings=st.lists(_ENDING, min_size=4, max_size=4), upper=st.booleans(),
       before=st.sampled_from(["", "The ", "(", "“", "of the "]), after=st.sampled_from(["", " is", ".", ")", "”,"]),
       small=st.lists(st.sampled_from(["of", "the", "on", "an", "in"]), max_size=2),
       at=st.integers(min_value=1, max_value=3))
def test_property_the_check_keeps_every_match(words, gaps, endings, upper, before, after, small, at):
    """Whatever the term (content words, function words between them) and however it is written, a
    paragraph the pattern matches passes the position check."""
    at = min(at, len(words) - 1)
    words = words[:at] + small + words[at:]
    term = " ".join(words)
    written = ""
    for i, w in enumerate(words):
        written += (gaps[(i - 1) % 3] if i else "") + w + (endings[i % 4] if w not in term_match.FUNCTION_WORDS else "")
    text = before + (written.upper() if upper else written) + after
    if not term_pattern(term).search(text):
        return
    collection = paragraph_collection([text, "unrelated words only", " ".join(reversed(words))])
    bound = term_match.MAX_NEAR_GROUPS
    term_match.MAX_NEAR_GROUPS = 10 ** 6  # every query made, however many groups
    try:
        query = fts_near_query(term, collection.occurring)
    finally:
        term_match.MAX_NEAR_GROUPS = bound
    assert query is not None, (term, text)
    assert 0 in collection.paragraph_ids_matching(query), (term, text, query)


# --------------------------------------------------------------------------------------------
# the 14 terms of the data set: the same tables with and without the check


@pytest.mark.slow
@pytest.mark.real_data
def test_data_set_terms_find_the_same_tables_with_the_check(shared_data, tmp_path_factory, monkeypatch):
    """The data set's own cases ingested (no statistics): each of the 14 terms finds the same four
    tables and matched paragraphs with the check on every lookup as with none, reading no more rows."""
    from statinterp.collection.ingest import ingest
    from statinterp.corpus.dataset import query_of
    from statinterp.sources.cap import write_cap_volume
    from statinterp.sources.plaintext import read_dataset
    from statinterp.sources.records import CaseRecord

    root = tmp_path_factory.mktemp("positions")
    records: dict[str, CaseRecord] = {}
    paths = sorted(Path(shared_data).glob("*.zip"))
    for path in paths:
        for record in read_dataset(path):
            if isinstance(record, CaseRecord):
                records.setdefault(record.source_id, record)
    ingest([write_cap_volume(list(records.values()), root / "cap")], root / "collection",
           statistics=False, citations=False)
    assert len(paths) == 14
    checked = 0
    with Collection.open(root / "collection") as collection:
        for path in paths:
            term = query_of(path.stem)
            found = {}
            for bound in (10 ** 9, 0):
                monkeypatch.setattr(find_module, "POSITION_CHECK_ROWS", bound)
                result = find_module.find_term(collection, term)
                found[bound] = result
            off, on = found[10 ** 9], found[0]
            assert on.tables == off.tables, term
            assert on.paragraphs_matched == off.paragraphs_matched > 0, term
            assert on.paragraphs_searched <= off.paragraphs_searched, term
            checked += on.paragraphs_searched < off.paragraphs_searched
    assert checked >= 2  # the check narrowed some terms' rows (distributive share of the income, ...)
