"""Tests of query expansion (-g/-e), the domain and novelty gates, novelty rankers and compounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gensim.models.keyedvectors import KeyedVectors
from hypothesis import given, settings
from hypothesis import strategies as st

from statinterp.errors import UsageError
from statinterp.evaluation.metrics import rank_order
from statinterp.evaluation.ranking import rank
from statinterp.rankers.base import Expanded, Gated, Interpolated, gated_scores, similar_words_query
from statinterp.rankers.embedding import wmd
from statinterp.rankers.gates import DomainGate, NoveltyGate, domain_threshold, top_mean
from statinterp.rankers.grammar import (
    SECTIONS,
    build_method,
    list_methods,
    method_sections,
    paper_compounds,
)
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from statinterp.rankers.novelty import NewWordRatio, NewWords, WMDNovelty, new_words
from statinterp.text.analysis import TokenSeqs
from statinterp.vectors.embeddings import DomainVectors
from statinterp.workflow import evaluate_methods, open_corpus, prepare_corpus
from tests.support.paths import REAL_DATA, REPO_ROOT

REPO = REPO_ROOT
EXAMPLE = REPO / "data" / "example"
REAL = REAL_DATA


# ----------------------------------------------------------------------------- fixtures


class FakeProvider:
    """Stands in for statinterp.vectors.provider' provider: ``get(kind) -> DomainVectors``."""

    def __init__(self, vectors: DomainVectors):
        self.vectors = vectors
        self.asked: list[str] = []

    def get(self, kind: str) -> DomainVectors:
        self.asked.append(kind)
        return self.vectors


def make_kv(vectors: dict[str, np.ndarray]) -> KeyedVectors:
    dim = len(next(iter(vectors.values())))
    kv = KeyedVectors(dim)
    kv.add_vectors(list(vectors), np.asarray(list(vectors.values()), dtype=np.float32))
    return kv


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    cache = tmp_path_factory.mktemp("analysis-cache")
    return prepare_corpus(open_corpus(EXAMPLE), cache_dir=cache)


@pytest.fixture()
def ix(prepared):
    index = prepared["vehicle"]
    index.vectors = None
    yield index
    index.vectors = None


@pytest.fixture()
def random_vectors(ix):
    """Random 8-dimensional vectors for every corpus word (a fake domain word2vec)."""
    rng = np.random.default_rng(0)
    words = list(ix.vocab.words)
    return make_kv({w: rng.normal(size=8) for w in words})


# ----------------------------------------------------------------------------- novelty


def test_new_words_by_hand():
    # units: {1,2,3} (2 repeated), {4}, {}, {1,5,6,7}; provision ids {1, 2}
    units = TokenSeqs.from_list([np.array([1, 2, 2, 3]), np.array([4, 4]), np.array([], dtype=np.int32),
                                 np.array([1, 5, 6, 7])])
    nw, distinct = new_words(units, np.array([1, 2]))
    assert nw.tolist() == [1, 1, 0, 3]  # {3}, {4}, {}, {5, 6, 7}
    assert distinct.tolist() == [3, 1, 0, 4]


def test_nw_nwr_rankers_match_python_sets(ix):
    provision = set(ix.provision.tokens)
    nw = NewWords().score(ix)
    nwr = NewWordRatio().score(ix)
    for i in range(len(ix)):
        words = {ix.vocab.words[t] for t in ix.levels["sentence"].seqs.row(i)}
        new = words - provision
        assert nw[i] == len(new)
        assert nwr[i] == pytest.approx(len(new) / len(words) if words else 0.0)
    assert build_method("NW").name == "NW" and build_method("NWR").name == "NWR"
    e = NewWordRatio().explain(ix, 0)
    assert e["score"] == pytest.approx(e["new words"] / e["distinct words"])


def test_nwr_of_sentence_made_of_provision_words_is_zero(prepared):
    ix = prepared["vehicle"]
    # the first sentence quotes the provision: its new words are exactly those outside it
    words = [ix.vocab.words[t] for t in ix.levels["sentence"].seqs.row(0)]
    new = set(words) - set(ix.provision.tokens)
    assert NewWords().score(ix)[0] == len(new) < len(set(words))


def test_novelty_needs_a_provision(ix, monkeypatch):
    monkeypatch.setattr(ix, "provision", None)
    with pytest.raises(UsageError, match="no source provision"):
        NewWordRatio().score(ix)


def test_wmd_ranker_uses_embedding_wmd(ix, random_vectors):
    with pytest.raises(UsageError, match="needs word vectors"):
        WMDNovelty().score(ix)
    provider = FakeProvider(DomainVectors(random_vectors))
    ix.vectors = provider
    scores = build_method("WMD").score(ix)
    assert provider.asked[-1] == "word2vec"
    for i in (0, 5, 17):
        words = [ix.vocab.words[t] for t in ix.levels["sentence"].seqs.row(i)]
        assert scores[i] == pytest.approx(wmd(words, ix.provision.tokens, random_vectors))
    assert (scores >= 0).all()


def test_wmd_sentence_without_vectors_scores_zero(ix):
    kv = make_kv({w: np.ones(3) * (k + 1) for k, w in enumerate(ix.provision.tokens[:5])})
    ix.vectors = FakeProvider(DomainVectors(kv))
    scores = WMDNovelty().score(ix)
    assert np.isfinite(scores).all()
    known = set(ix.provision.tokens[:5])
    for i in range(len(ix)):
        words = {ix.vocab.words[t] for t in ix.levels["sentence"].seqs.row(i)}
        if not words & known:
            assert scores[i] == 0.0


def test_novelty_gate(ix):
    nwr = NewWordRatio().score(ix)
    gate = NoveltyGate("NWR", 0.45)
    assert (gate.passes(ix) == (nwr >= 0.45)).all()
    assert NoveltyGate().name == "Nr" and gate.name == "NWR>=0.45"
    nw = NewWords().score(ix)
    assert (NoveltyGate("NW", 7).passes(ix) == (nw >= 7)).all()
    assert NoveltyGate("NW").threshold_value == 3.0
    with pytest.raises(ValueError, match="needs a threshold"):
        NoveltyGate("WMD")
    with pytest.raises(ValueError, match="novelty measure"):
        NoveltyGate("XYZ", 1)


# ----------------------------------------------------------------------------- domain gate


def test_avg10_and_threshold_one_case():
    assert top_mean([3.0]) == 3.0
    assert domain_threshold(np.array([3.0]), 0.5) == 1.5  # one case: Avg10 is its score


def test_avg10_and_threshold_many_cases():
    scores = np.arange(1.0, 26.0)  # 25 cases: top 10% = ceil(2.5) = 3 cases: 25, 24, 23
    assert top_mean(scores) == 24.0
    assert domain_threshold(scores, 0.5) == 12.0
    assert top_mean(np.arange(1.0, 21.0)) == 19.5  # 20 cases: the top 2
    assert top_mean(np.arange(1.0, 31.0)) == 29.0  # 30 cases: the top 3 (not 4: 0.1 * 30 rounds)
    assert top_mean(np.arange(1.0, 10.0)) == 9.0  # 9 cases: at least one
    passes = scores >= domain_threshold(scores, 0.5)
    assert scores[passes].min() == 12.0 and passes.sum() == 14


def test_threshold_with_negative_scores_shifts_by_the_minimum():
    # all negative (QLLM): origin = worst case -10, Avg10 = -2 (4 cases -> top 1)
    s = np.array([-10.0, -6.0, -2.0, -4.0])
    t = domain_threshold(s, 0.5)
    assert t == -6.0  # -10 + 0.5 * (-2 - -10)
    assert ((s >= t) == np.array([False, True, True, True])).all()
    assert domain_threshold(s, 0.0) == -10.0  # lambda2 = 0 lets every case pass
    assert domain_threshold(s, 1.0) == -2.0  # lambda2 = 1: only Avg10 or better
    # mixed signs: origin -2, Avg10 10 -> -2 + 0.5 * 12 = 4
    assert domain_threshold(np.array([-2.0, 0.0, 6.0, 10.0]), 0.5) == 4.0
    # non-negative scores: the paper's rule lambda2 * Avg10 exactly
    assert domain_threshold(np.array([0.0, 1.0, 8.0]), 0.5) == 4.0


def test_domain_gate_on_example(ix):
    cases = ix.levels["case"]
    case_scores = TFISF().score_units(ix.provision, cases.seqs, ix.background["case"], ix)
    k = max(1, math.ceil(0.1 * len(case_scores)))
    avg10 = np.sort(case_scores)[::-1][:k].mean()
    expected = case_scores[cases.row] >= 0.5 * avg10
    gate = DomainGate()
    assert gate.name == "Tg"
    assert (gate.passes(ix) == expected).all()
    assert 0 < expected.sum() < len(ix)
    e = gate.explain(ix, 0)
    assert e["threshold"] == pytest.approx(0.5 * avg10) and e["avg_top"] == pytest.approx(avg10)
    assert e["value"] == int(expected[0])


def test_domain_gate_qllm_negative_scores(ix):
    gate = DomainGate(QLLM(), "provision", 0.5)
    case_scores = gate.case_scores(ix)
    assert (case_scores < 0).all()
    lo, avg = case_scores.min(), top_mean(case_scores)
    thr = gate.cutoff(ix)
    assert thr == pytest.approx(lo + 0.5 * (avg - lo))
    assert lo < thr < avg
    assert (gate.passes(ix) == (case_scores[ix.levels["case"].row] >= thr)).all()
    assert gate.name == "QLLM-g>=0.5"


# ----------------------------------------------------------------------------- query expansion


@pytest.mark.parametrize("sim", [TFISF(), BM25(), QLLM()])
def test_expanded_g_gives_each_sentence_its_case_score(ix, sim):
    ranker = Expanded(sim, "provision")
    scores = ranker.score(ix)
    cases = ix.levels["case"]
    for i in range(len(ix)):
        one = cases.seqs.take([cases.row[i]])
        own = sim.score_units(ix.provision, one, ix.background["case"], ix)[0]
        assert scores[i] == pytest.approx(own)
    for c in np.unique(cases.row):
        assert len(set(scores[cases.row == c])) == 1
    assert ranker.name == f"{sim.short_name}-g"
    assert build_method(f"{sim.short_name}-g").score(ix) == pytest.approx(scores)
    assert ranker.explain(ix, 0)["case"] == ix.sentences[0].case_id


def test_expanded_e_with_fake_vectors(ix):
    base = np.eye(6)
    vectors = {
        "vehicle": base[0],
        "car": base[0] + 0.1 * base[1],
        "motor_vehicle": base[0] + 0.2 * base[1],  # not a corpus token: split into motor + vehicle
        "truck": base[0] + 0.3 * base[2],
        "bicycle": base[0] + 0.5 * base[3],
        "zzznotacorpusword": base[0] + 0.9 * base[4],
        "park": base[5],
    }
    ix.vectors = FakeProvider(DomainVectors(make_kv(vectors)))
    query = similar_words_query(ix, n_similar=3)
    assert query.tokens == ["car", "motor", "vehicle", "truck"]
    known = sorted(w for w in query.tokens if ix.vocab.get(w) is not None)
    assert sorted(ix.vocab.words[i] for i in query.ids) == known
    ranker = build_method("TF-ISF-e", n_similar=3)
    assert ranker.name == "TF-ISF-e"
    cases = ix.levels["case"]
    expected = TFISF().score_units(query, cases.seqs, ix.background["case"], ix)[cases.row]
    assert ranker.score(ix) == pytest.approx(expected)
    gate = DomainGate(TFISF(), "similar", 0.5, n_similar=3)
    assert gate.name == "TF-ISF-e>=0.5"
    case_scores = gate.case_scores(ix)
    assert case_scores[cases.row] == pytest.approx(expected)
    assert (gate.passes(ix) == (case_scores[cases.row] >= domain_threshold(case_scores, 0.5))).all()


def test_expanded_e_errors(ix):
    with pytest.raises(UsageError, match="needs word vectors"):
        build_method("BM25-e").score(ix)
    ix.vectors = FakeProvider(DomainVectors(make_kv({"car": np.ones(3), "truck": np.arange(3.0)})))
    with pytest.raises(UsageError, match=r"'vehicle'.*-g"):
        build_method("BM25-e").score(ix)


# ----------------------------------------------------------------------------- compound


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False), st.booleans()),
                min_size=1, max_size=40))
@pytest.mark.slow
def test_gated_scores_order_property(rows):
    base = np.array([r[0] for r in rows])
    passing = np.array([r[1] for r in rows])
    ids = np.array([f"s{i:03d}" for i in range(len(rows))])
    out = gated_scores(base, passing)
    order = rank_order(out, ids)
    expected = sorted(range(len(rows)), key=lambda i: (not passing[i], -base[i], ids[i]))
    assert order.tolist() == expected
    assert (out[passing] == base[passing]).all()  # passing sentences keep their base score
    if passing.any() and (~passing).any():
        assert out[~passing].max() < out[passing].min()


def test_gated_scores_negative_example():
    base = np.array([-3.0, -1.0, -10.0, -2.0])
    passing = np.array([False, False, True, True])
    out = gated_scores(base, passing)
    # the paper's product would give the failing sentences 0 > -2, -10: they must go below instead
    assert rank_order(out, np.array(["a", "b", "c", "d"])).tolist() == [3, 2, 1, 0]


def tp_tg_nr_explicit():
    return Gated(Interpolated(TFISF(), "paragraph", 0.9), [DomainGate(TFISF(), "provision", 0.5),
                                                           NoveltyGate("NWR", 0.2)])


def test_tp_tg_nr_equals_explicit_composition(ix):
    named = build_method("Tp-Tg-Nr")
    assert named.name == "Tp-Tg-Nr"
    assert named.score(ix) == pytest.approx(tp_tg_nr_explicit().score(ix))
    assert tp_tg_nr_explicit().name == "Tp-Tg-Nr"  # one canonical name (the paper's) ...
    assert tp_tg_nr_explicit() == named == build_method("TF-ISF-p+Tg+Nr")  # ... and one value per ranker
    assert build_method("TF-ISF-p+Tg+Nr").score(ix) == pytest.approx(named.score(ix))


def test_compound_ordering_with_qllm_base(ix):
    ranker = build_method("Qc-Tg-Nr")
    ok = ranker.passes(ix)
    base = ranker.base.score(ix)
    assert (base < 0).all() and 0 < ok.sum() < len(ix)
    order = rank(ranker, ix).order
    assert ok[order[: ok.sum()]].all()
    for group in (order[: ok.sum()], order[ok.sum():]):
        assert (np.diff(base[group]) <= 0).all()


def test_compound_explain(ix):
    e = build_method("Tp-Tg-Nr").explain(ix, 2)
    assert e["method"] == "Tp-Tg-Nr" and e["base"]["method"] == "TF-ISF-p"
    assert [g["gate"] for g in e["gates"]] == ["Tg", "Nr"]
    for g in e["gates"]:
        assert {"value", "score", "threshold"} <= set(g)
        assert g["value"] == int(g["score"] >= g["threshold"])
    assert e["passes"] == all(g["value"] for g in e["gates"])


def test_params_override_gate_thresholds(ix):
    ranker = build_method("Tp-Tg-Nr", lam2=0.3, nwr=0.5, lam=0.7)
    assert ranker.gates[0].lam == 0.3 and ranker.gates[1].threshold_value == 0.5 and ranker.base.lam == 0.7
    explicit = Gated(Interpolated(TFISF(), "paragraph", 0.7), [DomainGate(TFISF(), "provision", 0.3),
                                                               NoveltyGate("NWR", 0.5)])
    assert ranker.score(ix) == pytest.approx(explicit.score(ix))
    assert build_method("BM25-r+NW>=4", nw=6).gates[0].threshold_value == 6
    with pytest.raises(UsageError, match="lam2"):
        build_method("Tp-Nr", lam2=0.4)


def test_user_compound_syntax(ix):
    explicit = Gated(Interpolated(QLLM(), "paragraph"), [DomainGate(BM25(), "provision", 0.4),
                                                         NoveltyGate("NWR", 0.3)])
    for name in ("QLLM-p+gate(BM25-g,0.4)+NWR>=0.3", "QLLM-p + BM25-g>=0.4 + NWR>=0.3",
                 "QLLM-p+gate(BM25-g;0.4)+NWR>=0.3"):
        ranker = build_method(name)
        assert ranker.name == "QLLM-p+BM25-g>=0.4+NWR>=0.3"
        assert ranker.score(ix) == pytest.approx(explicit.score(ix))
    assert build_method(ranker.name).name == ranker.name  # the canonical name round-trips
    assert build_method("BM25-r+Tg+Nr").name == "BM25-r+Tg+Nr"
    more = build_method("Tp-Tg+NW>=5")
    assert [g.name for g in more.gates] == ["Tg", "NW>=5"] and more.base.name == "TF-ISF-p"
    assert build_method("Tp+gate(QLLM-g)").gates[0].lam == 0.5
    for bad, message in (("Tp+XYZ", "unknown gate"), ("Tp+NWR>=x", "not a number"), ("Tp++Nr", "empty part"),
                         ("Nope+Tg", "unknown method"), ("Tp+Nope-g>=0.3", "unknown similarity"),
                         ("Tp+WMD", "needs a threshold"), ("Tp+TF-ISF-g>=2", "lambda2")):
        with pytest.raises(UsageError, match=message):
            build_method(bad)


def test_every_paper_compound_builds_and_runs(ix, random_vectors):
    assert len(paper_compounds()) == 12
    for name in paper_compounds():
        if name.startswith("Wr"):
            continue
        ranker = build_method(name)
        assert ranker.name == name
        scores = rank(ranker, ix).scores
        assert np.isfinite(scores).all()


def test_wr_compounds(ix, random_vectors):
    ix.vectors = FakeProvider(DomainVectors(random_vectors))
    for name in ("Wr-Tg", "Wr-Nr", "Wr-Tg-Nr"):
        ranker = build_method(name)
        assert ranker.name == name and ranker.base.name == "w2vec*-r"
        assert np.isfinite(rank(ranker, ix).scores).all()


def test_unknown_names_list_valid_ones():
    with pytest.raises(UsageError) as err:
        build_method("Tp-Xg")
    assert "Tp-Tg-Nr" in str(err.value) and "TF-ISF-g" in str(err.value) and "NWR" in str(err.value)


def test_method_sections():
    sections = method_sections()
    names = [s for s, _ in sections]
    assert names == [s for s in SECTIONS if s in names]
    assert names[:5] == ["Direct", "Context", "Query expansion", "Novelty", "Compound"]
    flat = [entry for _, entries in sections for entry in entries]
    assert flat == list_methods()
    listed = dict(list_methods())
    for name in ["TF-ISF-g", "QLLM-e", "NW", "NWR", "WMD", *paper_compounds(), "BM25-r+Tg+Nr"]:
        assert listed[name]
    by_section = dict(sections)
    assert ("NWR", listed["NWR"]) in by_section["Novelty"]
    assert ("Tp-Tg-Nr", listed["Tp-Tg-Nr"]) in by_section["Compound"]


def test_every_listed_method_builds_and_declares_what_it_needs():
    names = [name for name, _ in list_methods()]
    # the registry is not empty or cut short: every family is listed (else the loop checks nothing)
    assert {"TF-ISF-g", "BM25-c", "QLLM-e", "w2vec*-r", "WMD", "NWR", "Tp-Tg-Nr"} <= set(names)
    for name in names:
        ranker = build_method(name)
        assert ranker.name == name
        vectors = name.startswith(("w2vec", "fastt", "GloVe", "Wr")) or name.endswith("-e") or name == "WMD"
        assert bool(ranker.requires().vectors) == vectors, name


# ----------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def real(request):
    if not REAL.is_dir():
        pytest.skip(f"the shared data set is not available at {REAL}")
    try:  # the session-wide preparation of tests/conftest.py, when there is one
        return request.getfixturevalue("real_prepared")
    except pytest.FixtureLookupError:
        return prepare_corpus(open_corpus(REAL))


@pytest.mark.slow
def test_real_data_compounds(real):
    names = [n for n in paper_compounds() if not n.startswith("Wr")] + ["TF-ISF-g", "NWR"]
    results = evaluate_methods(real, names, ["nDCG@10", "nDCG@100"])
    assert len(real.indices) == 14
    for res in results:
        assert len(res.per_term) == 14
        for values in res.per_term.values():
            assert all(0.0 <= v <= 1.0 for v in values.values())
    explicit = tp_tg_nr_explicit()
    named = build_method("Tp-Tg-Nr")
    for index in real:
        assert named.score(index) == pytest.approx(explicit.score(index))


def test_cosine_similarity_with_provision_expansion(ix, random_vectors):
    ix.vectors = FakeProvider(DomainVectors(random_vectors))
    scores = build_method("w2vec*-g").score(ix)
    rows = ix.levels["case"].row
    for c in np.unique(rows):
        assert len(set(scores[rows == c])) == 1
    assert np.isfinite(scores).all() and len(set(scores)) > 1
    assert build_method("Tp+w2vec*-g>=0.5").gates[0].name == "w2vec*-g>=0.5"
