"""Rankings (statinterp.evaluation.ranking): score order with deterministic ties, and
evaluate_methods keeping rankers of the same name apart, on the tiny hand-written corpus."""

from __future__ import annotations

import math

import pytest

from statinterp.evaluation.ranking import rank
from statinterp.rankers.lexical import BM25, TFISF


def test_ranking_order_and_deterministic_ties(tiny_prepared):
    ix = tiny_prepared["red_car"]
    ranking = rank(TFISF(), ix)
    scores = ranking.scores
    # s1 "The red car near the road." and s4 "A red car." score the same under TF-ISF (no length
    # normalisation), as do s2 "blue car" and s5 "small car": ties go by sentence id.
    assert scores[0] == scores[3] and scores[1] == scores[4]
    expected = sorted(range(5), key=lambda i: (-scores[i], ix.sentences[i].id))
    assert list(ranking.order) == expected
    assert [r.sentence_id for r in ranking.rows()] == ["s3", "s1", "s4", "s2", "s5"]
    rows = ranking.rows(2)
    assert [r.rank for r in rows] == [1, 2]
    assert rows[0].label == "certain value" and rows[0].case_name == "Case c1" and rows[0].citation == "1 Tiny c1"
    # evaluation drops the unlabelled s5: gains in rank order 2, 3, 1, 0
    dcg = 2 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4) + 0 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ranking.evaluate(["nDCG@10"])["nDCG@10"] == pytest.approx(dcg / idcg, rel=1e-12)


def test_evaluate_methods_keeps_rankers_with_the_same_name_apart(tiny_prepared):
    from statinterp.rankers.base import Interpolated
    from statinterp.workflow import evaluate_methods

    a, b = Interpolated(BM25(), "paragraph", 0.0), Interpolated(BM25(), "paragraph", 1.0)
    assert a.name == b.name == "BM25-p"
    results = evaluate_methods(tiny_prepared, [a, b], ["nDCG@3"])
    assert [r.method for r in results] == ["BM25-p", "BM25-p"]
    for ranker, res in zip((a, b), results, strict=False):
        assert res.per_term["red_car"] == rank(ranker, tiny_prepared["red_car"]).evaluate(["nDCG@3"])
    assert results[0].per_term != results[1].per_term  # λ = 0 and λ = 1 rank differently here
