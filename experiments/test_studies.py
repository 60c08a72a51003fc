"""Tests of the research studies' helpers (experiments/): masking, near-duplicate groups,
cross-fitting, feedback fits, the alternatives' reference system."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from statinterp.corpus.dataset import Corpus
from statinterp.evaluation.ranking import similar_pairs, token_sets
from statinterp.learned.crossval import cross_validate
from statinterp.learned.features import FeatureSettings, extract_features
from statinterp.learned.sentence_patterns import term_pattern
from statinterp.workflow import open_corpus

#: Fast settings: no word vectors (training them is the slow part).
FAST = FeatureSettings(vectors="off")


@pytest.fixture(scope="module")
def two_terms(tmp_path_factory):
    """The example term twice, under two keys (so term-level folds can be formed quickly)."""
    from statinterp.index.term_index import prepare
    from statinterp.text.analysis import Analyzer

    term = open_corpus().term("vehicle")
    half = dataclasses.replace(term, key="vehicle_b", sentences=term.sentences[: len(term.sentences) // 2])
    corpus = Corpus({"vehicle": term, "vehicle_b": half})
    return prepare(corpus, Analyzer(cache_dir=tmp_path_factory.mktemp("analysis")))


# ------------------------------------------------------------------------------ experiments/learned_alternatives.py


def test_alternatives_cross_encoder_folds_are_cached_by_what_they_depend_on(two_terms, tmp_path, monkeypatch):
    """The cross-encoder's fold scores come back from the cache bit for bit (with the seconds they
    took), are fitted again when the training data changes, and a damaged entry is refitted."""
    import experiments.learned_alternatives as alt
    from experiments.common import Term

    feats = {ix.key: extract_features(ix, FeatureSettings(families=("structure",), vectors="off")) for ix in two_terms}
    terms = {k: Term(two_terms[k], fm) for k, fm in feats.items()}
    calls: list[str] = []

    def fake_fit(train, test):
        calls.append(test.key)
        return np.linspace(0.0, 1.0, len(test.texts)) + 0.1 * len(calls)

    monkeypatch.setattr(alt, "fit_cross_encoder", fake_fit)
    train, test = [terms["vehicle_b"]], terms["vehicle"]
    first, took = alt.cached_cross_encoder(train, test, tmp_path)
    again, took_again = alt.cached_cross_encoder(train, test, tmp_path)
    assert calls == ["vehicle"] and np.array_equal(first, again) and took_again == took
    assert len(list((tmp_path / "alternatives").iterdir())) == 1

    changed = Term.__new__(Term)
    changed.__dict__.update(terms["vehicle_b"].__dict__, gains=terms["vehicle_b"].gains[::-1].copy())
    other, _ = alt.cached_cross_encoder([changed], test, tmp_path)
    assert calls == ["vehicle", "vehicle"] and not np.array_equal(first, other)

    for entry in (tmp_path / "alternatives").iterdir():
        entry.write_bytes(entry.read_bytes()[:-3])  # truncated: unreadable, so fitted again
    alt.cached_cross_encoder(train, test, tmp_path)
    assert calls == ["vehicle", "vehicle", "vehicle"]


@pytest.mark.slow  # fits the learned ensemble: 6-80 s on 2 cores
def test_alternatives_reference_is_the_cv_ensemble(two_terms):
    """The alternatives benchmark's reference system scores exactly as `statinterp cv`'s ensemble."""
    from experiments.common import MASK, Term, fit_ensemble
    from experiments.learned_alternatives import fit_lexical
    from statinterp.evaluation.metrics import evaluate_scores

    feats = {ix.key: extract_features(ix, FAST) for ix in two_terms}
    terms = {k: Term(two_terms[k], fm) for k, fm in feats.items()}
    fm = next(iter(feats.values()))
    result = cross_validate(two_terms, FAST, learners=("ensemble",), compounds=[], importance=False)
    for fold in result.folds:
        (key,) = fold.test
        train = [terms[k] for k in fold.train]
        scores = fit_ensemble(train, terms[key], FAST, fm.names, fm.families)
        ev = evaluate_scores(scores, terms[key].gains, terms[key].ids)
        for m in ("nDCG@10", "nDCG@100"):
            assert ev[m] == pytest.approx(result.per_term["learned:ensemble"][key][m], abs=1e-12)
        lexical = fit_lexical(train, terms[key])
        assert lexical.shape == (len(terms[key].gains),) and np.isfinite(lexical).all()
    masked = terms["vehicle"].masked
    assert any(MASK in m for m in masked)
    assert not any(term_pattern("vehicle").search(m) for m in masked)


@pytest.mark.slow  # fits the learned ensemble: 6-80 s on 2 cores
def test_alternatives_ordinal_and_prf(two_terms):
    """The ordinal system scores an expected gain in [0, 3]; PRF ranks near-copies of the reference's
    top sentences above an unrelated sentence, without looking at the held-out labels."""
    from types import SimpleNamespace

    from experiments.common import Term
    from experiments.learned_alternatives import PRF_TOP, fit_ordinal, fit_prf

    feats = {ix.key: extract_features(ix, FAST) for ix in two_terms}
    terms = {k: Term(two_terms[k], fm) for k, fm in feats.items()}
    ordinal = fit_ordinal([terms["vehicle_b"]], terms["vehicle"])
    assert ordinal.shape == (len(terms["vehicle"].gains),)
    assert (ordinal >= 0).all() and (ordinal <= 3).all() and ordinal.std() > 0

    texts = ["the motor car is a self propelled engine on wheels"] * PRF_TOP + [
        "a motor car with an engine on four wheels", "the court denied the motion for costs"] + [
        f"filler sentence number {i} about procedure" for i in range(3 * PRF_TOP)]
    test = SimpleNamespace(masked=texts)
    reference = np.r_[np.full(PRF_TOP, 10.0), np.zeros(len(texts) - PRF_TOP)]
    prf = fit_prf(test, reference)
    assert prf[PRF_TOP] > prf[PRF_TOP + 1]
    assert prf[PRF_TOP] > prf[PRF_TOP + 2:].max()
    ranked_again = fit_prf(test, -reference)  # top 10 now: this sentence, the costs one and 8 fillers
    assert ranked_again[PRF_TOP] < prf[PRF_TOP]


# ------------------------------------------------------------------------------ experiments/learned_limits.py


def _bare_term(gains) -> object:
    from experiments.common import Term

    term = object.__new__(Term)
    term.key, term.gains = "t", np.asarray(gains, dtype=np.float64)
    term.labelled = ~np.isnan(term.gains)
    return term


def test_limits_masked_copy_hides_rows_without_touching_the_original():
    from experiments.learned_limits import masked

    term = _bare_term([3, 0, np.nan, 1])
    copy = masked(term, np.array([0, 3]))
    assert np.isnan(copy.gains[[0, 2, 3]]).all() and copy.gains[1] == 0
    assert copy.labelled.tolist() == [False, True, False, False]
    assert term.gains[0] == 3 and term.labelled.tolist() == [True, True, False, True]


def test_limits_near_duplicate_groups_are_connected_components():
    from experiments.learned_limits import near_duplicate_groups

    groups = near_duplicate_groups(6, [(0, 1, 0.95), (1, 4, 0.9), (2, 5, 1.0)])
    assert groups[0] == groups[1] == groups[4]
    assert groups[2] == groups[5] != groups[0]
    assert len({groups[3], groups[0], groups[2]}) == 3
    assert len(set(near_duplicate_groups(3, []))) == 3


def test_limits_cross_fitting_hides_each_row_and_keeps_copies_together():
    """Every labelled row is scored by a fit that did not see its label, nor that of any copy of it."""
    from experiments.learned_limits import IN_TERM_FOLDS, cross_fitted

    gains = np.r_[np.arange(20) % 4, np.nan].astype(np.float64)
    term = _bare_term(gains)
    groups = np.arange(21)
    groups[[3, 7, 11]] = 3  # one group of three near-copies
    hidden_sets = []

    def fit(train, test):
        assert test is term and train[-1] is not term
        hidden = ~train[-1].labelled & term.labelled
        hidden_sets.append(set(np.flatnonzero(hidden)))
        return np.where(hidden, 1.0, -1.0)

    scores = cross_fitted(term, groups, [], fit)
    assert len(hidden_sets) == IN_TERM_FOLDS
    assert (scores[:20] == 1.0).all() and np.isnan(scores[20])
    assert sorted(i for s in hidden_sets for i in s) == list(range(20))
    assert any({3, 7, 11} <= s for s in hidden_sets)


def test_limits_feedback_fits_on_the_shown_labels_only():
    from experiments.learned_limits import feedback_scores

    term = _bare_term([3, 0, 1, 2, 0, np.nan])
    seen = []

    def fit(train, test):
        (only,) = train
        seen.append(np.flatnonzero(only.labelled).tolist())
        return np.arange(6, dtype=np.float64)

    assert feedback_scores(term, np.array([0, 2]), fit).tolist() == list(range(6))
    assert seen == [[0, 2]]
    assert not feedback_scores(term, np.array([1, 4]), fit).any()  # both shown labels 0: nothing to learn
    assert len(seen) == 1


@pytest.mark.slow  # fits the learned ensemble: 6-80 s on 2 cores
def test_limits_cross_fitting_runs_the_real_ensemble(two_terms):
    from experiments.common import Term, fit_ensemble
    from experiments.learned_limits import cross_fitted, near_duplicate_groups

    feats = {ix.key: extract_features(ix, FAST) for ix in two_terms}
    terms = {k: Term(two_terms[k], fm) for k, fm in feats.items()}
    fm = feats["vehicle"]
    term = terms["vehicle"]
    groups = near_duplicate_groups(len(term.gains), similar_pairs(token_sets(two_terms["vehicle"]), 0.9))
    scores = cross_fitted(term, groups, [terms["vehicle_b"]],
                          lambda tr, te: fit_ensemble(tr, te, FAST, fm.names, fm.families))
    assert np.isfinite(scores[term.labelled]).all() and scores[term.labelled].std() > 0


def test_limits_label_consistency_and_log_fit():
    from experiments.learned_limits import label_consistency, log_linear_fit

    gains = np.array([3, 3, 0, 1, np.nan])
    counts = label_consistency(gains, [(0, 1, 1.0), (1, 2, 0.92), (2, 3, 0.9), (3, 4, 1.0)])
    assert counts == {"pairs": 3, "same_label": 1, "gain_differs_by_2_or_more": 1, "identical_token_sets": 1}
    a, b = log_linear_fit([2, 4, 8], [0.5 + 0.1 * np.log(k) for k in (2, 4, 8)])
    assert a == pytest.approx(0.5) and b == pytest.approx(0.1)


# --------------------------------------------------------------------------------------------
# experiments/feedback_simulation.py: the simulated reviewer


def test_held_apart_choice_uses_the_other_half():
    from experiments.feedback_simulation import halves, held_apart

    class R:
        def __init__(self, key):
            self.key = key

    runs = [R(k) for k in "abcd"]
    static = {"a": 10, "b": 10, "c": 10, "d": 10}
    # setting x is best on a and c, setting y on b and d: each half gets the other half's pick
    grid = {"x": {"a": 5, "b": 20, "c": 5, "d": 20}, "y": {"a": 20, "b": 5, "c": 20, "d": 5}}
    assert halves(["d", "c", "b", "a"]) == (["a", "c"], ["b", "d"])
    choice, picks = held_apart(runs, static, grid)
    assert choice == {"b": "x", "d": "x", "a": "y", "c": "y"}
    assert {v["choice_cost"] for v in picks.values()} == {0.5}
    # the criteria differ: per-term weighs every term the same, total weighs the long terms more
    static = {"a": 100, "b": 10, "c": 10, "d": 10}
    grid = {"x": {"a": 60, "b": 10, "c": 10, "d": 10}, "y": {"a": 90, "b": 10, "c": 5, "d": 10}}
    assert held_apart(runs, static, grid, "per-term")[0]["b"] == "y"  # mean(0.9, 0.5) < mean(0.6, 1.0)
    assert held_apart(runs, static, grid, "total")[0]["b"] == "x"  # 70/110 < 95/110


def test_stopping_estimator_is_chosen_on_one_half_by_its_worst_policy():
    from experiments.feedback_simulation import POLICIES, choose_estimator, estimator_stats

    def runs(covered: dict[str, list[bool]], width: int) -> dict:
        return {p: [{"term": t, "estimates": [{"covered": c, "true": 1, "low": 0 if c else 2, "high": width}
                                              for c in cs]} for t, cs in covered.items()] for p in POLICIES}

    # "narrow" covers a but misses b; "wide" covers both at a cost in width
    by = {"narrow": runs({"a": [True] * 9 + [False], "b": [False] * 10}, 3),
          "wide": runs({"a": [True] * 10, "b": [True] * 9 + [False]}, 9)}
    stats = estimator_stats(by["narrow"]["static"], ["a"])
    assert stats["coverage"] == 0.9 and stats["too_high"] == 1 and stats["checkpoints"] == 10
    assert choose_estimator(by, ["a"]) == "narrow"  # both >= 85 % on a: the narrower
    assert choose_estimator(by, ["b"]) == "wide"  # only wide covers b
    assert estimator_stats(by["wide"]["static"], [])["coverage"] is None


def test_find_segmentation_memory_collection_and_gap_classes():
    from experiments.find_segmentation import MemoryCollection, boundary_category, gap_class, layout_ceiling
    from statinterp.collection.find import find_term
    from statinterp.sources.records import CaseRecord, OpinionRecord

    paragraphs = ("The court held that a wash sale is barred; or", "(3) Wash sale rules apply here.", "It ends.")
    record = CaseRecord(source="cap", source_id="1", name="A v. B", name_abbreviation="A v. B",
                        decision_date="2001-01-01", docket_number="1", citations=(("official", "1 F.3d 1"),),
                        court="Court", jurisdiction="X", head_matter="A v. B", judges="", parties="", attorneys="",
                        opinions=(OpinionRecord("majority", "J", paragraphs),))
    memory = MemoryCollection([record])
    found = find_term(memory, "wash sale")
    assert sorted(r["text"] for r in found.tables["sentence"].values()) == [
        "The court held that a wash sale is barred; or\n(3)", "Wash sale rules apply here."]
    assert found.tables["case"]["c1"].text == "A v. B\n" + "\n".join(paragraphs)

    text = "\n".join(paragraphs)
    at = text.index("(3)")
    assert gap_class(text, at - 1, at) == "line break: lower | label+Cap"
    inside = text.index("Wash")
    assert gap_class(text, inside - 1, inside) == "in line: label | Cap"
    assert boundary_category("It held: (1) Those facts.", 12, 13) == "list label before"
    assert boundary_category("See id. (Bus. Code, § 2.)", 7, 8) == "citation after"
    # a class the data set decides both ways: the sentence missed at its minority decision is "against"
    gaps = [("c", "join", "s1"), ("c", "join", "s2"), ("c", "split", "s3")]
    ceiling = layout_ceiling(gaps, {"s1": "exact", "s2": "exact", "s3": "contained"}, {"s3": [("c", "split")]})
    assert (ceiling["against"], ceiling["fixable"], ceiling["in_inconsistent_classes"]) == (1, 0, 1)
    assert ceiling["ceiling_rate"] == 2 / 3
