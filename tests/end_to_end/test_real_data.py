"""The real annotated data (14 terms of the Statutory Interpretation Data Set), read from
../shared/data relative to the repository root. Skipped, with the reason shown, when that folder
is absent (e.g. on a user's machine); CI always has it.

The 14 terms are analysed once per session (conftest.real_prepared), without word vectors
(training full-size ones on the real data takes many minutes): methods that need vectors must
say so, and run on every term with small vectors (conftest.small_vectors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from statinterp.errors import UsageError
from statinterp.evaluation.metrics import random_baseline_ndcg
from statinterp.evaluation.ranking import rank
from statinterp.rankers.grammar import build_method, list_methods

#: The terms and sentence counts of shared/data/README.md.
README_TERMS = {
    "accommodation_trade": 69, "cybercrime": 71, "dependent_on_hours_worked": 27,
    "distributive_share_of_the_income": 172, "final_average_compensation": 210, "hybrid_instrument": 87,
    "leadership_role_in_an_organization": 30, "mechanical_recordation": 18, "navigation_equipment": 154,
    "preemployment_testing": 70, "semiconductor_chip_product": 25, "significant_property_damage": 223,
    "technological_measure": 616, "viticultural": 221,
}
CORE = ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p", "-r")]
GAIN = {"high value": 3, "certain value": 2, "potential value": 1, "no value": 0}
#: Function words that occur in most sentences of any English collection (classic BM25 IDF < 0).
FUNCTION_WORDS = {"the", "of", "a", "an", "in", "on", "to", "and"}


@pytest.fixture(scope="module")
def prepared(real_prepared):
    assert all(ix.vectors is None for ix in real_prepared)  # see the module docstring
    return real_prepared


@pytest.mark.slow
def test_all_fourteen_terms_load_as_documented(real_corpus, shared_data):
    assert sorted(p.stem for p in shared_data.glob("*.zip")) == sorted(README_TERMS)
    assert {t.key: len(t.sentences) for t in real_corpus} == README_TERMS
    for term in real_corpus:
        assert all(s.label is not None for s in term.sentences), term.key
        assert term.provision is not None, term.key  # the shipped provisions cover every term


@pytest.mark.slow
def test_every_text_is_found_inside_its_parent(prepared):
    # the data-set invariant that lets index.py slice every unit out of one case analysis
    assert prepared.fallbacks == 0
    assert len(prepared.indices) == 14


def test_core_methods_are_listed():
    names = [n for n, _ in list_methods()]
    assert set(CORE) <= set(names)


def needs_vectors(method: str) -> bool:
    """Methods that read word vectors (embedding similarities, -e expansion, WMD, Wr compounds)."""
    return any(part in method for part in ("w2vec", "fastt", "GloVe", "WMD", "Wr-")) or method.endswith("-e")


def check_ranking(method: str, ix, ranking) -> None:
    assert ranking.scores.shape == (len(ix),)
    assert np.all(np.isfinite(ranking.scores)), (method, ix.key)
    assert sorted(ranking.order.tolist()) == list(range(len(ix)))
    values = ranking.evaluate()
    assert set(values) == {"nDCG@10", "nDCG@100", "nDCG@10 (random ties)", "nDCG@100 (random ties)"}
    for key, value in values.items():
        assert 0.0 <= value <= 1.0 + 1e-12, (method, ix.key, key, value)


@pytest.mark.slow
@pytest.mark.parametrize("method", [n for n, _ in list_methods() if not needs_vectors(n)])
def test_every_method_runs_on_every_term(prepared, method):
    ranker = build_method(method)
    for ix in prepared:
        check_ranking(method, ix, rank(ranker, ix))


@pytest.mark.slow
@pytest.mark.parametrize("method", [n for n, _ in list_methods() if needs_vectors(n)])
def test_vector_methods_say_they_need_vectors_when_none_are_attached(prepared, method):
    ix = prepared["mechanical_recordation"]
    with pytest.raises(UsageError, match="vectors"):
        rank(build_method(method), ix)


@pytest.mark.slow
@pytest.mark.parametrize("method", [n for n, _ in list_methods() if needs_vectors(n)])
def test_vector_methods_run_on_every_term(prepared, small_vectors, method):
    """With small vectors (conftest.small_vectors: 16 dimensions, one epoch, no phrases) every
    embedding method runs on all 14 terms; full-size vectors are measured in
    reports/reproduction.md."""
    ranker = build_method(method)
    for ix in prepared:
        ix.vectors = small_vectors
        try:
            check_ranking(method, ix, rank(ranker, ix))
        finally:
            ix.vectors = None


@pytest.mark.slow
def test_ndcg_by_hand_on_one_real_term(prepared):
    ix = prepared["mechanical_recordation"]
    ranking = rank(build_method("BM25-p"), ix)
    top = [GAIN[r.label] for r in ranking.rows(5)]
    all_gains = sorted((GAIN[s.label] for s in ix.sentences), reverse=True)
    dcg5 = (top[0] / math.log2(2) + top[1] / math.log2(3) + top[2] / math.log2(4) + top[3] / math.log2(5)
            + top[4] / math.log2(6))
    idcg5 = (all_gains[0] / math.log2(2) + all_gains[1] / math.log2(3) + all_gains[2] / math.log2(4)
             + all_gains[3] / math.log2(5) + all_gains[4] / math.log2(6))
    assert idcg5 > 0
    assert ranking.evaluate(["nDCG@5"])["nDCG@5"] == pytest.approx(dcg5 / idcg5, rel=1e-12)
    # k = 100 > 18 sentences: every rank counts
    everything = [GAIN[r.label] for r in ranking.rows()]
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(everything, start=1))
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(all_gains, start=1))
    assert ranking.evaluate(["nDCG@100"])["nDCG@100"] == pytest.approx(dcg / idcg, rel=1e-12)


@pytest.mark.slow
def test_random_random_ties_equals_the_exact_random_baseline(prepared):
    for ix in prepared:
        values = rank(build_method("Random"), ix).evaluate(["nDCG@10", "nDCG@100"])
        gains = [GAIN[s.label] for s in ix.sentences]
        assert values["nDCG@10 (random ties)"] == pytest.approx(random_baseline_ndcg(gains, 10), rel=1e-12)
        assert values["nDCG@100 (random ties)"] == pytest.approx(random_baseline_ndcg(gains, 100), rel=1e-12)


def _bm25_idf(ix) -> dict[str, float]:
    st = ix.background["sentence"]
    out = {}
    for token in set(ix.query.tokens):
        i = ix.vocab.get(token)
        assert i is not None, (ix.key, token)  # every query token occurs in the loaded case law
        df = st.df[i]
        out[token] = math.log((st.n_units - df + 0.5) / (df + 0.5))
    return out


@pytest.mark.slow
def test_background_statistics_are_not_degenerate(prepared, real_prepared_candidates):
    n_candidates = sum(len(ix) for ix in prepared)
    for ix in prepared:
        st = ix.background["sentence"]
        assert st.n_units > 50 * n_candidates  # every sentence of every loaded case, not the candidates
        for token, idf in _bm25_idf(ix).items():
            if token in FUNCTION_WORDS:
                continue
            assert idf > 0, (ix.key, token, idf)
    # The only non-positive IDF comes from 'the' (in more than half of all sentences of case law),
    # not from the terms themselves.
    negative = {(ix.key, t) for ix in prepared for t, v in _bm25_idf(ix).items() if v <= 0}
    assert {t for _, t in negative} <= {"the"}


@pytest.mark.slow
def test_candidate_only_statistics_are_degenerate(prepared, real_prepared_candidates):
    """With the candidates as the collection, a term's own content words are in most units and
    BM25's IDF turns negative: this is why the background collection exists."""
    negative = []
    for ix in real_prepared_candidates:
        assert ix.background["sentence"].n_units == README_TERMS[ix.key]  # this term's candidates
        for token, idf in _bm25_idf(ix).items():
            if idf < 0 and token not in FUNCTION_WORDS:
                negative.append((ix.key, token))
    assert negative, "expected a negative IDF for some term's own query token"
    # and the same tokens are positive with the background collection
    background = {ix.key: _bm25_idf(ix) for ix in prepared}
    for key, token in negative:
        assert background[key][token] > 0, (key, token)
