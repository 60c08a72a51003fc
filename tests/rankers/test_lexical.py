"""The lexical similarities TF-ISF, BM25 and QLLM (statinterp.rankers.lexical) against the
formulas recomputed with plain Python (tests.support.reference_scorers.Reference) and by hand on
the tiny hand-written corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from statinterp.index.term_index import Query
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from tests.support.corpora import TINY_QUERY


def _ref_scores(reference, fn, query, texts, stats, **kw):
    return np.array([fn(query, reference.tokens(t), stats, **kw) for t in texts])


SIMS = {
    "TF-ISF": (TFISF, lambda r: r.tfisf),
    "BM25": (BM25, lambda r: r.bm25),
    "QLLM": (QLLM, lambda r: r.qllm),
}


@pytest.mark.parametrize("name", list(SIMS))
@pytest.mark.parametrize("statistics", ["background", "candidates"])
def test_sentence_scores_equal_the_reference(tiny_prepared, tiny_prepared_candidates, reference, name, statistics):
    prepared = tiny_prepared if statistics == "background" else tiny_prepared_candidates
    ref_stats = reference.background() if statistics == "background" else reference.candidates("red_car")
    cls, ref_fn = SIMS[name]
    ix = prepared["red_car"]
    got = cls().score(ix)
    want = _ref_scores(reference, ref_fn(reference), TINY_QUERY, reference.candidate_texts("red_car", "sentence"),
                       ref_stats["sentence"])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.all(np.isfinite(got))
    if name == "BM25" and statistics == "candidates":
        assert np.all(got < 0)  # the degenerate statistics punish the term itself


QUERIES = [
    ["red", "red", "car"],  # a repeated query token (qtf = 2)
    ["red", "car", "green", "zebra"],  # 'green' only in a case header, 'zebra' nowhere
    ["the", "bird"],
]


@pytest.mark.parametrize("query", QUERIES, ids=["repeat", "unknown", "other"])
@pytest.mark.parametrize("level", ["sentence", "paragraph", "case"])
@pytest.mark.parametrize("name", list(SIMS))
def test_unit_scores_equal_the_reference_for_other_queries_and_levels(tiny_prepared, reference, name, level,
                                                                      query):
    cls, ref_fn = SIMS[name]
    ix = tiny_prepared["red_car"]
    q = Query.from_tokens(query, ix.vocab)
    units = ix.levels[level]
    got = cls().score_units(q, units.seqs, ix.background[level], ix)
    texts_by_row = {}
    for i, text in enumerate(reference.candidate_texts("red_car", level)):
        texts_by_row[int(units.row[i])] = text
    if level == "case":  # every case of the term is a unit
        texts_by_row = {j: ix.term.cases[c].text for j, c in enumerate(units.labels)}
    texts = [texts_by_row[j] for j in range(len(units.seqs))]
    want = _ref_scores(reference, ref_fn(reference), query, texts, reference.background()[level])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("params", [dict(k1=2.0, b=0.3, k3=0.5), dict(k1=0.8, b=0.0, k3=100.0),
                                    dict(k1=1.2, b=1.0, k3=1.2)])
def test_bm25_parameters(tiny_prepared, reference, params):
    ix = tiny_prepared["red_car"]
    q = Query.from_tokens(["red", "red", "car"], ix.vocab)
    units = ix.levels["sentence"]
    got = BM25(**params).score_units(q, units.seqs, ix.background["sentence"], ix)
    want = _ref_scores(reference, reference.bm25, ["red", "red", "car"],
                       reference.candidate_texts("red_car", "sentence"), reference.background()["sentence"], **params)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.99])
def test_qllm_smoothing_weight(tiny_prepared, reference, lam):
    ix = tiny_prepared["red_car"]
    got = QLLM(lam).score(ix)
    want = _ref_scores(reference, reference.qllm, TINY_QUERY, reference.candidate_texts("red_car", "sentence"),
                       reference.background()["sentence"], lam=lam)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError):
        QLLM(1.0)
    with pytest.raises(ValueError):
        QLLM(0.0)


def test_tfisf_by_hand_for_one_sentence(tiny_prepared):
    # s3 "The red car and the red car.": tf(red) = tf(car) = 2; sentence N = 12, df(red) = 4, df(car) = 5
    want = math.log(3) * math.log(13 / 4.5) * math.log(2) + math.log(3) * math.log(13 / 5.5) * math.log(2)
    assert TFISF().score(tiny_prepared["red_car"])[2] == pytest.approx(want, rel=1e-12)


def test_qllm_by_hand_for_one_sentence(tiny_prepared):
    # s4 "A red car.": L = 3, tf(red) = tf(car) = 1; |C| = 64, cf(red) = 5, cf(car) = 6
    want = math.log(0.1 * 5 / 64 + 0.9 / 3) + math.log(0.1 * 6 / 64 + 0.9 / 3)
    assert QLLM().score(tiny_prepared["red_car"])[3] == pytest.approx(want, rel=1e-12)
