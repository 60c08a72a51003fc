"""Background and candidate-only statistics (statinterp.index.term_index) and the units of each
candidate (statinterp.index.term_index) against hand counts and a plain-Python reference
(tests.support.reference_scorers.Reference) on the tiny hand-written corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from statinterp.corpus.dataset import load_corpus
from statinterp.index.term_index import LEVELS, prepare
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from statinterp.text.analysis import Analyzer
from tests.support.corpora import TINY_QUERY


def words(index, ids) -> list[str]:
    return [index.vocab.words[i] for i in ids]


# --------------------------------------------------------------------------------------------
# Premises of the hand counts


def test_tiny_corpus_tokens_and_sentences_are_what_the_hand_counts_assume(tiny_prepared, reference):
    ref_tokens = reference.tokens
    an = tiny_prepared.analyzer
    term = tiny_prepared["red_car"].term
    for case in term.cases.values():
        assert an.tokens(case.text) == ref_tokens(case.text)
        at = an.analyse([case.text])[0]
        spans = [case.text[s:e] for s, e in at.sentences.tolist()]
        ops = [o for o in term.opinions.values() if o.case_id == case.id]
        expected = [case.text.split("\n")[0]] + [s for o in ops for s in reference.opinion_sentences[o.id]]
        assert spans == expected
    assert tiny_prepared["red_car"].query.tokens == TINY_QUERY
    assert words(tiny_prepared["red_car"], tiny_prepared["red_car"].query.ids) == sorted(
        TINY_QUERY, key=an.vocab.get)
    assert tiny_prepared.fallbacks == 0


# --------------------------------------------------------------------------------------------
# Background statistics


def _stat(index, level, what, word):
    st = index.background[level]
    i = index.vocab.get(word)
    return float((st.df if what == "df" else st.cf)[i]) if i is not None else 0.0


def test_background_statistics_equal_a_hand_count(tiny_prepared):
    ix = tiny_prepared["red_car"]
    bg = ix.background
    # sentence: the 12 spaCy sentences of the 3 opinions (A..L in tests.support.corpora.TINY); headers excluded
    assert bg["sentence"].n_units == 12
    assert bg["sentence"].total_tokens == 6 + 5 + 6 + 6 + 7 + 6 + 3 + 6 + 3 + 5 + 5 + 6 == 64
    assert bg["sentence"].avg_length == pytest.approx(64 / 12)
    assert _stat(ix, "sentence", "df", "car") == 5  # A C E G H
    assert _stat(ix, "sentence", "cf", "car") == 6  # E has it twice
    assert _stat(ix, "sentence", "df", "red") == 4  # A D E G
    assert _stat(ix, "sentence", "cf", "red") == 5
    assert _stat(ix, "sentence", "df", "green") == 0  # only in a case header
    # paragraph: the 8 lines of the opinions
    assert bg["paragraph"].n_units == 8
    assert bg["paragraph"].avg_length == pytest.approx(64 / 8)
    assert _stat(ix, "paragraph", "df", "car") == 5
    assert _stat(ix, "paragraph", "df", "red") == 3
    # opinion: 3 opinions
    assert bg["opinion"].n_units == 3
    assert bg["opinion"].avg_length == pytest.approx(64 / 3)
    assert _stat(ix, "opinion", "df", "car") == 3
    assert _stat(ix, "opinion", "df", "red") == 2
    # case: 2 whole case texts, headers included (3 tokens each)
    assert bg["case"].n_units == 2
    assert bg["case"].avg_length == pytest.approx((64 + 6) / 2)
    assert _stat(ix, "case", "df", "car") == 2
    assert _stat(ix, "case", "df", "red") == 1
    assert _stat(ix, "case", "df", "green") == 1
    assert _stat(ix, "case", "df", "header") == 2
    assert _stat(ix, "case", "cf", "the") == 2 + 1 + 2 + 0 + 2 + 2 + 0 + 2 + 0 + 2 + 0 + 2  # A..L


def _compare_with_reference(index, ref_stats):
    vocab = index.vocab
    for level in LEVELS:
        st, ref = index.background[level], ref_stats[level]
        assert st.n_units == ref.N, level
        assert st.total_tokens == ref.total, level
        assert st.avg_length == pytest.approx(ref.avg), level
        assert len(st.df) == len(st.cf) == len(vocab)
        for word in vocab.words:
            i = vocab.get(word)
            assert st.df[i] == ref.df.get(word, 0), (level, word)
            assert st.cf[i] == ref.cf.get(word, 0), (level, word)


def test_background_statistics_equal_the_reference_count(tiny_prepared, reference):
    _compare_with_reference(tiny_prepared["red_car"], reference.background())


def test_candidate_only_statistics(tiny_prepared_candidates, reference):
    ix = tiny_prepared_candidates["red_car"]
    bg = ix.background
    assert bg["sentence"].n_units == 5
    assert bg["sentence"].total_tokens == 6 + 6 + 7 + 3 + 6
    assert _stat(ix, "sentence", "df", "car") == 5  # every candidate holds the term: degenerate
    assert _stat(ix, "sentence", "df", "red") == 3
    assert bg["paragraph"].n_units == 5 and bg["paragraph"].total_tokens == 6 + 11 + 13 + 3 + 9
    assert bg["opinion"].n_units == 3
    assert bg["case"].n_units == 2
    _compare_with_reference(ix, reference.candidates("red_car"))


def test_candidate_only_statistics_make_bm25_idf_negative(tiny_prepared, tiny_prepared_candidates):
    def idf(ix, word):
        st = ix.background["sentence"]
        df = _stat(ix, "sentence", "df", word)
        return math.log((st.n_units - df + 0.5) / (df + 0.5))

    assert idf(tiny_prepared["red_car"], "car") == pytest.approx(math.log(7.5 / 5.5))
    assert idf(tiny_prepared["red_car"], "car") > 0
    assert idf(tiny_prepared_candidates["red_car"], "car") == pytest.approx(math.log(0.5 / 5.5))
    assert idf(tiny_prepared_candidates["red_car"], "car") < 0


def test_candidate_statistics_are_each_terms_own(corpus_builder, tiny_prepared_candidates, reference):
    """Loading another term changes neither the candidate-only statistics nor the scores of a term."""
    spec = dict(reference.spec)
    spec["green_park"] = {
        "cases": {"g1": ("Header park", {"g1-o1": ["The green park near the city. A red car in the green park."]})},
        "sentences": [("g1", "g1-o1", 0, "The green park near the city.", "high value"),
                      ("g2", "g1-o1", 0, "A red car in the green park.", "no value")],
    }
    folder = corpus_builder.write(corpus_builder.records(spec), "two")
    prepared = prepare(load_corpus(folder), Analyzer(cache_dir=False), statistics="candidates")
    two = type(reference)(spec)
    _compare_with_reference(prepared["red_car"], two.candidates("red_car"))
    _compare_with_reference(prepared["green_park"], two.candidates("green_park"))
    assert prepared["green_park"].background["sentence"].n_units == 2
    for sim in (TFISF(), BM25(), QLLM()):
        np.testing.assert_allclose(sim.score(prepared["red_car"]), sim.score(tiny_prepared_candidates["red_car"]),
                                   rtol=1e-12)


def test_background_counts_a_case_shared_by_two_terms_once(corpus_builder, reference):
    header, ops = reference.spec["red_car"]["cases"]["c1"]
    spec = dict(reference.spec)
    spec["blue_bird"] = {
        "cases": {
            "x1": (header, ops),  # same text as red_car's c1
            "x2": ("Header blue", {"x2-o1": ["The blue bird in the park. A blue car."]}),
        },
        "sentences": [("b1", "x2-o1", 0, "The blue bird in the park.", "high value"),
                      ("b2", "c1-o1", 1, "The blue car in the city.", "no value")],
    }
    folder = corpus_builder.write(corpus_builder.records(spec), "two")
    prepared = prepare(load_corpus(folder), Analyzer(cache_dir=False))
    assert prepared["red_car"].background is prepared["blue_bird"].background
    bg = prepared["red_car"].background
    assert bg["case"].n_units == 3  # c1 (= x1), c2, x2
    assert bg["opinion"].n_units == 4
    assert bg["sentence"].n_units == 12 + 2
    _compare_with_reference(prepared["blue_bird"], type(reference)(spec).background())


# --------------------------------------------------------------------------------------------
# Units of each candidate, sliced out of the case analysis


@pytest.mark.parametrize("level", LEVELS)
def test_candidate_units_hold_the_tokens_of_their_texts(tiny_prepared, reference, level):
    ref_tokens = reference.tokens
    ix = tiny_prepared["red_car"]
    units = ix.levels[level]
    texts = reference.candidate_texts("red_car", level)
    assert len(units.row) == len(texts) == 5
    for i, text in enumerate(texts):
        assert words(ix, units.seqs.row(units.row[i])) == ref_tokens(text)
    if level == "case":
        assert units.labels == ["c1", "c2"]  # every case of the term
