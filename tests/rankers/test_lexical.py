"""Background statistics (statinterp.index.statistics, index.py) and the lexical similarities
(statinterp.rankers.lexical) against hand counts and a plain-Python reference
(tests.support.reference_scorers.Reference) on the tiny hand-written corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from statinterp.corpus.dataset import load_corpus
from statinterp.evaluation.ranking import rank
from statinterp.index.term_index import Query, prepare
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from statinterp.text.analysis import Analyzer

LEVELS = ("sentence", "paragraph", "opinion", "case")
QUERY = ["red", "car"]


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
    assert tiny_prepared["red_car"].query.tokens == QUERY
    assert words(tiny_prepared["red_car"], tiny_prepared["red_car"].query.ids) == sorted(
        QUERY, key=an.vocab.get)
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


# --------------------------------------------------------------------------------------------
# Scores against the reference


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
    want = _ref_scores(reference, ref_fn(reference), QUERY, reference.candidate_texts("red_car", "sentence"),
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
    want = _ref_scores(reference, reference.qllm, QUERY, reference.candidate_texts("red_car", "sentence"),
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


# --------------------------------------------------------------------------------------------
# Rankings: order and ties


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
    from statinterp.rankers.context import Interpolated
    from statinterp.workflow import evaluate_methods

    a, b = Interpolated(BM25(), "paragraph", 0.0), Interpolated(BM25(), "paragraph", 1.0)
    assert a.name == b.name == "BM25-p"
    results = evaluate_methods(tiny_prepared, [a, b], ["nDCG@3"])
    assert [r.method for r in results] == ["BM25-p", "BM25-p"]
    for ranker, res in zip((a, b), results, strict=False):
        assert res.per_term["red_car"] == rank(ranker, tiny_prepared["red_car"]).evaluate(["nDCG@3"])
    assert results[0].per_term != results[1].per_term  # λ = 0 and λ = 1 rank differently here
