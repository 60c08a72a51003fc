"""Context (statinterp.rankers.base): Interpolated (-c/-o/-p) and Recursive (-r) against the formulas,
recomputed with the plain-Python reference (tests.support.reference_scorers.Reference) on the tiny corpus."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from statinterp.errors import UsageError
from statinterp.index.term_index import Query
from statinterp.rankers.base import Interpolated, Recursive
from statinterp.rankers.grammar import build_method
from statinterp.rankers.lexical import BM25, QLLM, TFISF

KEY = "red_car"
QUERY = ["red", "car"]


def _with_query(ix, tokens):
    return dataclasses.replace(ix, query=Query.from_tokens(tokens, ix.vocab))


def _own_and_context(reference, level):
    own = [reference.tokens(t) for t in reference.candidate_texts(KEY, "sentence")]
    ctx = [reference.tokens(t) for t in reference.candidate_texts(KEY, level)]
    return own, ctx


# --------------------------------------------------------------------------------------------
# Interpolated


@pytest.mark.parametrize("query", [QUERY, ["red", "red", "car", "green", "park"]], ids=["term", "other"])
@pytest.mark.parametrize("lam", [0.0, 0.35, 1.0])
@pytest.mark.parametrize("level", ["paragraph", "opinion", "case"])
@pytest.mark.parametrize("name", ["TF-ISF", "BM25"])
def test_interpolated_is_a_linear_mix_of_sentence_and_context(tiny_prepared, reference, name, level, lam, query):
    sim, ref = (TFISF(), reference.tfisf) if name == "TF-ISF" else (BM25(), reference.bm25)
    ix = _with_query(tiny_prepared[KEY], query)
    stats = reference.background()
    own, ctx = _own_and_context(reference, level)
    want = np.array([(1 - lam) * ref(query, s, stats["sentence"]) + lam * ref(query, c, stats[level])
                     for s, c in zip(own, ctx, strict=False)])
    got = Interpolated(sim, level, lam).score(ix)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("query", [QUERY, ["red", "red", "car", "green", "park"]], ids=["term", "other"])
@pytest.mark.parametrize("lam1", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("level", ["paragraph", "opinion", "case"])
def test_interpolated_qllm_mixes_inside_the_log(tiny_prepared, reference, level, lam1, query):
    ix = _with_query(tiny_prepared[KEY], query)
    stats = reference.background()
    own, ctx = _own_and_context(reference, level)
    # Σ_t qtf · log((1 − λ) P(t|C) + (λ − λ1) P(t|s) + λ1 P(t|context)), collection weight 1 − λ = 0.1
    want = np.array([reference.qllm(query, s, stats["sentence"], context=c, lam1=lam1)
                     for s, c in zip(own, ctx, strict=False)])
    got = Interpolated(QLLM(), level, lam1).score(ix)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("level", ["paragraph", "opinion", "case"])
@pytest.mark.parametrize("sim", [TFISF, BM25, QLLM])
def test_lambda_zero_gives_the_sentence_only_score(tiny_prepared, sim, level):
    ix = tiny_prepared[KEY]
    np.testing.assert_allclose(Interpolated(sim(), level, 0.0).score(ix), sim().score(ix), rtol=1e-12)


@pytest.mark.parametrize("sim", [TFISF, BM25])
def test_lambda_one_gives_the_context_only_score(tiny_prepared, sim):
    ix = tiny_prepared[KEY]
    units = ix.levels["opinion"]
    alone = units.spread(sim().score_units(ix.query, units.seqs, ix.background["opinion"], ix))
    np.testing.assert_allclose(Interpolated(sim(), "opinion", 1.0).score(ix), alone, rtol=1e-12)
    # candidates of the same opinion then tie: s1, s2, s3 share c1-o1
    scores = Interpolated(sim(), "opinion", 1.0).score(ix)
    assert scores[0] == scores[1] == scores[2]


def test_qllm_context_weight_cannot_exceed_its_document_weight(tiny_prepared):
    # λ1 above QLLM's λ would give the collection model a weight below 1 − λ (or a negative
    # sentence weight): refused when scoring (tuning grids rely on building such points)
    with pytest.raises(UsageError, match="exceeds"):
        Interpolated(QLLM(0.5), "case", 0.6).score(tiny_prepared[KEY])
    with pytest.raises(UsageError, match="exceeds"):
        build_method("QLLM-c", lam=0.95).score(tiny_prepared[KEY])
    Interpolated(QLLM(0.5), "case", 0.5).score(tiny_prepared[KEY])  # equal weights are fine
    with pytest.raises(ValueError):
        Interpolated(TFISF(), "case", 1.5)
    with pytest.raises(ValueError):
        Interpolated(TFISF(), "sentence", 0.5)


def test_method_names_build_the_paper_defaults():
    for base, cls in (("TF-ISF", TFISF), ("BM25", BM25), ("QLLM", QLLM)):
        for suffix, level in (("c", "case"), ("o", "opinion"), ("p", "paragraph")):
            ranker = build_method(f"{base}-{suffix}")
            assert isinstance(ranker, Interpolated) and isinstance(ranker.similarity, cls)
            assert ranker.context == level
            assert ranker.lam == cls.context_lambda[level]
            assert ranker.name == f"{base}-{suffix}"
        rec = build_method(f"{base}-r")
        assert isinstance(rec, Recursive) and rec.n == 4 and rec.name == f"{base}-r"
    # the paper's tuned values (Savelka et al. 2019)
    assert QLLM.context_lambda == {"case": 0.6, "opinion": 0.7, "paragraph": 0.1}
    assert TFISF.context_lambda == {"case": 1.0, "opinion": 1.0, "paragraph": 0.9}
    assert BM25.context_lambda == {"case": 1.0, "opinion": 1.0, "paragraph": 1.0}
    assert build_method("BM25-p", lam=0.25).lam == 0.25


def test_interpolated_explain_reports_both_parts(tiny_prepared, reference):
    ix = tiny_prepared[KEY]
    stats = reference.background()
    info = Interpolated(TFISF(), "paragraph", 0.9).explain(ix, 2)
    own, ctx = _own_and_context(reference, "paragraph")
    assert info["sentence alone"] == pytest.approx(reference.tfisf(QUERY, own[2], stats["sentence"]))
    assert info["paragraph alone"] == pytest.approx(reference.tfisf(QUERY, ctx[2], stats["paragraph"]))
    assert info["score"] == pytest.approx(0.1 * info["sentence alone"] + 0.9 * info["paragraph alone"])


# --------------------------------------------------------------------------------------------
# Recursive


@pytest.mark.parametrize("d", [-4, -3, -2, -1, 1, 2, 3, 4])
def test_neighbours_are_the_adjacent_sentences_of_the_opinion(tiny_prepared, reference, d):
    ix = tiny_prepared[KEY]
    units = ix.neighbours[d]
    for i, want in enumerate(reference.neighbours(KEY, d)):
        if want is None:
            assert units.row[i] == -1
        else:
            assert units.row[i] >= 0
            assert [ix.vocab.words[t] for t in units.seqs.row(units.row[i])] == want, (i, d)


def test_neighbours_by_hand(tiny_prepared):
    # s1 = first sentence of c1-o1: nothing before it, "A dog in the park." after it
    ix = tiny_prepared[KEY]
    words = lambda d, i: [ix.vocab.words[t] for t in ix.neighbours[d].seqs.row(ix.neighbours[d].row[i])]  # noqa: E731
    assert ix.neighbours[-1].row[0] == -1
    assert words(1, 0) == ["a", "dog", "in", "the", "park"]
    assert words(4, 0) == ["the", "red", "car", "and", "the", "red", "car"]
    # s4 = "A red car.", last sentence of c1-o2 (the next opinion is not a neighbour)
    assert words(-1, 3) == ["the", "old", "dog", "near", "the", "tree"]
    assert ix.neighbours[1].row[3] == -1 and ix.neighbours[-2].row[3] == -1


def _sims(reference, fn, stats):
    """Sim of each candidate and of its neighbour at each offset (0 where missing)."""
    own = [fn(QUERY, reference.tokens(t), stats) for t in reference.candidate_texts(KEY, "sentence")]
    near = {}
    for d in (-4, -3, -2, -1, 1, 2, 3, 4):
        near[d] = [0.0 if toks is None else fn(QUERY, toks, stats) for toks in reference.neighbours(KEY, d)]
    return own, near


SIM_REFS = {"TF-ISF": (TFISF, "tfisf"), "BM25": (BM25, "bm25"), "QLLM": (QLLM, "qllm")}


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
@pytest.mark.parametrize("name", list(SIM_REFS))
def test_recursive_n1_and_n2_written_out(tiny_prepared, reference, name, lam):
    cls, attr = SIM_REFS[name]
    own, near = _sims(reference, getattr(reference, attr), reference.background()["sentence"])
    ix = tiny_prepared[KEY]
    # n = 1: Sim-r(s) = (1 − λ) Sim(s) + λ [Sim(s−1) + Sim(s+1)]
    want1 = [(1 - lam) * own[i] + lam * (near[-1][i] + near[1][i]) for i in range(5)]
    np.testing.assert_allclose(Recursive(cls(), lam, n=1).score(ix), want1, rtol=1e-12, atol=1e-12)
    # n = 2: R±(1) = (1 − λ) Sim(s±1) + λ Sim(s±2);  Sim-r(s) = (1 − λ) Sim(s) + λ [R−(1) + R+(1)]
    want2 = []
    for i in range(5):
        r_minus = (1 - lam) * near[-1][i] + lam * near[-2][i]
        r_plus = (1 - lam) * near[1][i] + lam * near[2][i]
        want2.append((1 - lam) * own[i] + lam * (r_minus + r_plus))
    np.testing.assert_allclose(Recursive(cls(), lam, n=2).score(ix), want2, rtol=1e-12, atol=1e-12)


def _recursive_reference(own, near, lam, n):
    def r(sign, d):
        if d == n:
            return near[sign * n]
        return [(1 - lam) * a + lam * b for a, b in zip(near[sign * d], r(sign, d + 1), strict=False)]

    minus, plus = r(-1, 1), r(1, 1)
    return [(1 - lam) * own[i] + lam * (minus[i] + plus[i]) for i in range(len(own))]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("name", list(SIM_REFS))
def test_recursive_general_n(tiny_prepared, reference, name, n):
    cls, attr = SIM_REFS[name]
    own, near = _sims(reference, getattr(reference, attr), reference.background()["sentence"])
    want = _recursive_reference(own, near, 0.6, n)
    np.testing.assert_allclose(Recursive(cls(), 0.6, n=n).score(tiny_prepared[KEY]), want, rtol=1e-12, atol=1e-12)


def test_recursive_by_hand_for_one_candidate(tiny_prepared, reference):
    # s2 = C in c1-o1 (A B C D E): neighbours B (−1), A (−2), D (+1), E (+2); n = 2, λ = 0.5
    st = reference.background()["sentence"]
    sim = lambda text: reference.tfisf(QUERY, reference.tokens(text), st)  # noqa: E731
    a, b, c, d, e = (sim(t) for t in reference.opinion_sentences["c1-o1"])
    want = 0.5 * c + 0.5 * ((0.5 * b + 0.5 * a) + (0.5 * d + 0.5 * e))
    assert Recursive(TFISF(), 0.5, n=2).score(tiny_prepared[KEY])[1] == pytest.approx(want, rel=1e-12)


def test_recursive_rejects_bad_parameters():
    with pytest.raises(ValueError):
        Recursive(TFISF(), 0.5, n=0)
    with pytest.raises(ValueError):
        Recursive(TFISF(), 0.5, n=5)
    with pytest.raises(ValueError):
        Recursive(TFISF(), -0.1)
