"""Tests of statinterp.evaluation.metrics: NDCG@k, tie rules, exact baselines, tests across terms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from sklearn.metrics import ndcg_score

from statinterp.corpus.dataset import LABEL_GAINS
from statinterp.errors import UsageError
from statinterp.evaluation.metrics import (
    DEFAULT_METRICS,
    Metric,
    PairedTest,
    dcg,
    evaluate_scores,
    expected_ndcg_random_ties,
    macro_average,
    ndcg,
    paired_test,
    parse_metric,
    random_baseline_ndcg,
    rank_order,
)

# ----------------------------------------------------------------------------- hand-computed


def test_dcg_and_ndcg_hand_computed():
    # Ranking with gains (2, 3, 0, 1); the ideal order of the same gains is (3, 2, 1, 0).
    ranked = [2, 3, 0, 1]
    # DCG@3 = 2/log2(2) + 3/log2(3) + 0/log2(4)
    #       = 2/1 + 3/1.5849625 + 0/2 = 2 + 1.8927893 + 0 = 3.8927893
    assert dcg(ranked, 3) == pytest.approx(3.8927893, abs=1e-7)
    assert dcg(ranked, 3) == pytest.approx(2 / 1 + 3 / math.log2(3) + 0 / 2, rel=1e-12)
    # IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5 = 4.7618595
    # NDCG@3 = 3.8927893 / 4.7618595 = 0.8174935
    assert ndcg(ranked, ranked, 3) == pytest.approx(0.8174935, abs=1e-7)
    # k = 10 > n = 4: the sum stops at n.
    # DCG@10 = 3.8927893 + 1/log2(5) = 3.8927893 + 1/2.3219281 = 3.8927893 + 0.4306766 = 4.3234659
    # IDCG@10 = 4.7618595 + 0/log2(5) = 4.7618595;  NDCG@10 = 4.3234659 / 4.7618595 = 0.9079365
    assert dcg(ranked, 10) == pytest.approx(4.3234659, abs=1e-7)
    assert ndcg(ranked, ranked, 10) == pytest.approx(0.9079365, abs=1e-7)
    # k = 1: DCG@1 = 2/1, IDCG@1 = 3/1 -> 2/3
    assert ndcg(ranked, ranked, 1) == pytest.approx(2 / 3, rel=1e-12)


def test_ndcg_ideal_uses_all_gains_not_only_the_ranked_ones():
    # The ranked list holds only gains (1, 0); the term also has a gain-3 sentence.
    # DCG@2 = 1/1 + 0/log2(3) = 1;  IDCG@2 over ALL gains (3, 1, 0) = 3 + 1/1.5849625 = 3.6309298
    # NDCG@2 = 1 / 3.6309298 = 0.2754115  (ideal over the ranked gains alone would give 1.0)
    assert ndcg([1, 0], [1, 0, 3], 2) == pytest.approx(1 / (3 + 1 / math.log2(3)), rel=1e-12)
    assert ndcg([1, 0], [1, 0, 3], 2) == pytest.approx(0.2754115, abs=1e-7)


def test_ndcg_zero_when_ideal_is_zero():
    assert ndcg([0, 0, 0], [0, 0, 0], 10) == 0.0
    assert ndcg([], [], 10) == 0.0
    assert dcg([], 5) == 0.0
    assert random_baseline_ndcg([0, 0], 10) == 0.0
    assert expected_ndcg_random_ties([1.0, 1.0], [0, 0], 10) == 0.0


@pytest.mark.parametrize("bad_k", [0, -1, 2.0, True, "10"])
def test_bad_cutoff_rejected(bad_k):
    with pytest.raises(ValueError):
        dcg([1, 2], bad_k)
    with pytest.raises(ValueError):
        ndcg([1, 2], [1, 2], bad_k)


def test_ndcg_rejects_nan_and_negative_gains():
    with pytest.raises(ValueError):
        ndcg([1, float("nan")], [1, 2], 5)
    with pytest.raises(ValueError):
        ndcg([1, 2], [1, -2], 5)


# ----------------------------------------------------------------------------- sklearn cross-check


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 3, 5, 10, 100])
def test_ndcg_matches_sklearn_without_ties(seed, k):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    gains = rng.integers(0, 4, size=n).astype(float)
    if gains.max() == 0:
        gains[0] = 2.0
    scores = rng.random(n)  # continuous: no ties (almost surely; checked)
    assert np.unique(scores).size == n
    order = rank_order(scores, np.arange(n))
    ours = ndcg(gains[order], gains, k)
    theirs = ndcg_score(gains[None, :], scores[None, :], k=k)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
    # Without ties the random-ties expectation is the deterministic value.
    assert expected_ndcg_random_ties(scores, gains, k) == pytest.approx(ours, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 4, 7, 50])
def test_random_ties_matches_sklearn_tie_averaged_ndcg(seed, k):
    # sklearn's ndcg_score (ignore_ties=False) averages the gains of tied items, which is
    # the expected DCG under random tie-breaking: an independent implementation.
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 30))
    gains = rng.integers(0, 4, size=n).astype(float)
    if gains.max() == 0:
        gains[-1] = 3.0
    scores = rng.integers(0, 4, size=n).astype(float)  # many ties
    theirs = ndcg_score(gains[None, :], scores[None, :], k=k)
    assert expected_ndcg_random_ties(scores, gains, k) == pytest.approx(theirs, rel=1e-12, abs=1e-12)


# ----------------------------------------------------------------------------- random ties, exact


def _mean_ndcg_over_tie_orders(scores, gains, k):
    """Mean NDCG@k over every order consistent with the scores (score non-increasing)."""
    scores = np.asarray(scores, dtype=float)
    gains = np.asarray(gains, dtype=float)
    values = []
    for perm in itertools.permutations(range(len(scores))):
        perm = list(perm)
        if np.all(np.diff(scores[perm]) <= 0):
            values.append(ndcg(gains[perm], gains, k))
    return float(np.mean(values)), len(values)


def test_random_ties_hand_computed():
    # Scores (0.9, 0.5, 0.5), gains (0, 3, 1), k = 2. The gain-0 sentence is at rank 1;
    # the tie group {3, 1} fills ranks 2..3, only rank 2 is within the cutoff:
    # E[DCG@2] = 0/1 + mean(3, 1) * 1/log2(3) = 2 * 0.6309298 = 1.2618595
    # IDCG@2 = 3/1 + 1/log2(3) = 3.6309298;  E[NDCG@2] = 1.2618595 / 3.6309298 = 0.3475307
    value = expected_ndcg_random_ties([0.9, 0.5, 0.5], [0, 3, 1], 2)
    assert value == pytest.approx(0.3475307, abs=1e-7)
    # Same as averaging the two orders by hand: (3/log2(3) + 1/log2(3)) / 2 / IDCG@2.
    assert value == pytest.approx((3 + 1) / 2 / math.log2(3) / (3 + 1 / math.log2(3)), rel=1e-12)


@pytest.mark.parametrize(
    "scores, gains",
    [
        ([0.9, 0.5, 0.5, 0.5, 0.1, 0.1], [1, 3, 0, 2, 0, 1]),
        ([2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [0, 0, 3, 1, 2, 0]),
        ([0.1, 0.7, 0.1, 0.7, 0.3, 0.7, 0.1], [3, 0, 2, 1, 0, 2, 1]),
        ([1.0, -0.0, 0.0, 1.0], [0, 3, 1, 2]),  # -0.0 ties with 0.0
    ],
)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 10])
def test_random_ties_equals_mean_over_all_tie_orders(scores, gains, k):
    expected, n_orders = _mean_ndcg_over_tie_orders(scores, gains, k)
    assert n_orders > 1  # the example does have ties
    assert expected_ndcg_random_ties(scores, gains, k) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_random_baseline_equals_mean_over_all_permutations(n, k):
    rng = np.random.default_rng(10 * n + k)
    gains = rng.integers(0, 4, size=n).astype(float)
    gains[0] = 3.0  # IDCG > 0
    rng.shuffle(gains)
    mean_over_perms = np.mean(
        [ndcg(gains[list(p)], gains, k) for p in itertools.permutations(range(n))]
    )
    assert random_baseline_ndcg(gains, k) == pytest.approx(mean_over_perms, rel=1e-12)
    # ... and it is the random-ties value when every score is tied.
    assert expected_ndcg_random_ties(np.zeros(n), gains, k) == pytest.approx(mean_over_perms, rel=1e-12)


def test_random_baseline_hand_computed():
    # gains (3, 0, 0, 1), k = 2: mean gain = 1, sum of discounts = 1 + 1/log2(3) = 1.6309298,
    # IDCG@2 = 3 + 1/log2(3) = 3.6309298  ->  1.6309298 / 3.6309298 = 0.4491769
    assert random_baseline_ndcg([3, 0, 0, 1], 2) == pytest.approx(0.4491769, abs=1e-7)


# ----------------------------------------------------------------------------- deterministic ties


def test_rank_order_sorts_by_score_then_tiebreak():
    scores = [1.0, 2.0, 2.0, 0.0, 2.0]
    ids = ["s3", "s1", "s10", "s0", "s2"]
    # Score 2: ids s1 < s10 < s2 (string order) -> indices 1, 2, 4; then score 1, then score 0.
    assert rank_order(scores, ids).tolist() == [1, 2, 4, 0, 3]
    assert rank_order(scores, np.array(ids, dtype=object)).tolist() == [1, 2, 4, 0, 3]
    # The tiebreak decides: reversed keys reverse the tie group.
    assert rank_order(scores, ["a", "c", "b", "d", "a"]).tolist() == [4, 2, 1, 0, 3]
    # Numeric keys work too.
    assert rank_order(scores, [0, 9, 5, 0, 7]).tolist() == [2, 4, 1, 0, 3]


def test_rank_order_is_deterministic_under_input_shuffles():
    rng = np.random.default_rng(7)
    n = 50
    scores = rng.integers(0, 5, size=n).astype(float)  # many ties
    ids = np.array([f"sent-{i:03d}" for i in range(n)], dtype=object)
    reference = ids[rank_order(scores, ids)].tolist()
    for _ in range(10):
        p = rng.permutation(n)
        assert ids[p][rank_order(scores[p], ids[p])].tolist() == reference
    # Scores are non-increasing along the ranking and ids increase within each tie.
    ranked_scores = scores[rank_order(scores, ids)]
    assert np.all(np.diff(ranked_scores) <= 0)
    for score in np.unique(scores):
        in_group = [i for i in reference if scores[int(i[5:])] == score]
        assert in_group == sorted(in_group)


def test_rank_order_stable_for_equal_keys():
    assert rank_order([1.0, 1.0, 1.0], ["x", "x", "x"]).tolist() == [0, 1, 2]
    assert rank_order([1.0, 5.0, 1.0, 1.0], ["b", "z", "a", "b"]).tolist() == [1, 2, 0, 3]


def test_rank_order_rejects_nan_and_length_mismatch():
    with pytest.raises(ValueError, match="NaN"):
        rank_order([1.0, float("nan")], ["a", "b"])
    with pytest.raises(ValueError):
        rank_order([1.0, 2.0], ["a"])
    assert rank_order([], []).tolist() == []


def test_rank_order_handles_infinite_scores():
    assert rank_order([0.0, -np.inf, np.inf], ["a", "b", "c"]).tolist() == [2, 0, 1]


# ----------------------------------------------------------------------------- evaluate_scores


def test_evaluate_scores_keys_and_values():
    scores = [0.2, 0.9, 0.5, 0.5]
    gains = [3, 0, 2, 1]
    ids = ["d", "a", "c", "b"]
    result = evaluate_scores(scores, gains, ids)
    assert list(result) == [
        "nDCG@10",
        "nDCG@10 (random ties)",
        "nDCG@100",
        "nDCG@100 (random ties)",
    ]
    # Deterministic order: a (0), then the tie b (1) before c (2), then d (3).
    # DCG = 0/1 + 1/log2(3) + 2/log2(4) + 3/log2(5); IDCG = 3/1 + 2/log2(3) + 1/log2(4) + 0
    det = (1 / math.log2(3) + 2 / 2 + 3 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / 2)
    # Random ties: ranks 2..3 hold mean(1, 2) = 1.5 each.
    rnd = (1.5 / math.log2(3) + 1.5 / 2 + 3 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / 2)
    assert result["nDCG@10"] == pytest.approx(det, rel=1e-12)
    assert result["nDCG@100"] == pytest.approx(det, rel=1e-12)
    assert result["nDCG@10 (random ties)"] == pytest.approx(rnd, rel=1e-12)
    assert result["nDCG@10"] < result["nDCG@10 (random ties)"]
    # Swapping the tiebreak keys of the tied pair changes the deterministic value only.
    swapped = evaluate_scores(scores, gains, ["d", "a", "b", "c"])
    assert swapped["nDCG@10"] > result["nDCG@10"]
    assert swapped["nDCG@10 (random ties)"] == result["nDCG@10 (random ties)"]


def test_evaluate_scores_metric_names_and_objects():
    result = evaluate_scores([1.0, 0.0], [0, 1], ["a", "b"], metrics=["ndcg@1", Metric("nDCG@2", 2)])
    assert set(result) == {"nDCG@1", "nDCG@1 (random ties)", "nDCG@2", "nDCG@2 (random ties)"}
    assert result["nDCG@1"] == 0.0
    assert result["nDCG@2"] == pytest.approx(1 / math.log2(3), rel=1e-12)
    with pytest.raises(UsageError):
        evaluate_scores([1.0], [1], ["a"], metrics=["P@10"])


def test_evaluate_scores_all_tied_random_is_baseline():
    gains = [3, 0, 1, 2, 0, 0, 1]
    result = evaluate_scores(np.ones(7), gains, [str(i) for i in range(7)], metrics=["nDCG@3"])
    assert result["nDCG@3 (random ties)"] == pytest.approx(random_baseline_ndcg(gains, 3), rel=1e-12)
    # Deterministic: the id order 0..6, gains (3, 0, 1).
    assert result["nDCG@3"] == pytest.approx(ndcg([3, 0, 1], gains, 3), rel=1e-12)


def test_evaluate_scores_drops_unlabelled_from_ranking_and_ideal():
    scores = np.array([0.95, 0.8, 0.7, 0.6, 0.5, 0.4, 0.4])
    gains = [None, 1, float("nan"), 3, 0, 2, None]
    ids = ["u1", "a", "u2", "b", "c", "d", "u3"]
    with_unlabelled = evaluate_scores(scores, gains, ids)
    labelled = [1, 3, 4, 5]
    only_labelled = evaluate_scores(scores[labelled], [1, 3, 0, 2], [ids[i] for i in labelled])
    assert with_unlabelled == only_labelled
    # Condensed ranking: gains (1, 3, 0, 2) at ranks 1..4, ideal over the labelled gains only.
    assert with_unlabelled["nDCG@10"] == pytest.approx(ndcg([1, 3, 0, 2], [3, 2, 1, 0], 10), rel=1e-12)
    # NaN in a float array is also "unlabelled".
    as_array = evaluate_scores(scores, np.array([np.nan, 1, np.nan, 3, 0, 2, np.nan]), ids)
    assert as_array == only_labelled


def test_evaluate_scores_no_labelled_sentences():
    with pytest.raises(UsageError, match="cannot be evaluated: no labelled sentences"):
        evaluate_scores([0.1, 0.2], [None, float("nan")], ["a", "b"])
    with pytest.raises(UsageError, match="term 'vehicle' cannot be evaluated"):
        evaluate_scores([0.1], [None], ["a"], term="vehicle")


def test_evaluate_scores_rejects_programming_errors():
    with pytest.raises(ValueError, match="NaN"):
        evaluate_scores([0.1, float("nan")], [1, None], ["a", "b"])  # even if unlabelled
    with pytest.raises(ValueError):
        evaluate_scores([0.1, 0.2], [1, 2, 3], ["a", "b"])
    with pytest.raises(ValueError):
        evaluate_scores([0.1, 0.2], [1, 2], ["a"])
    with pytest.raises(ValueError):
        evaluate_scores([0.1, 0.2], [1, -1], ["a", "b"])


def test_evaluate_scores_with_label_gains():
    gains = [LABEL_GAINS[label] for label in ("no value", "high value", "potential value")]
    result = evaluate_scores([3.0, 2.0, 1.0], gains, ["a", "b", "c"], metrics=["nDCG@2"])
    # DCG@2 = 0/1 + 3/log2(3); IDCG@2 = 3/1 + 1/log2(3)
    assert result["nDCG@2"] == pytest.approx((3 / math.log2(3)) / (3 + 1 / math.log2(3)), rel=1e-12)


# ----------------------------------------------------------------------------- parse_metric


@pytest.mark.parametrize(
    "text, name, k",
    [
        ("nDCG@10", "nDCG@10", 10),
        ("nDCG@100", "nDCG@100", 100),
        ("ndcg@10", "nDCG@10", 10),
        ("NDCG@5", "nDCG@5", 5),
        ("NdCg@1", "nDCG@1", 1),
        (" nDCG@20 ", "nDCG@20", 20),
    ],
)
def test_parse_metric_accepts(text, name, k):
    metric = parse_metric(text)
    assert metric == Metric(name, k)
    assert metric.name == name and metric.k == k
    assert str(metric) == name


@pytest.mark.parametrize(
    "text",
    ["", "nDCG", "nDCG@", "nDCG@0", "nDCG@-1", "nDCG@01", "nDCG@10.5", "nDCG@ten",
     "nDCG@10x", "nDCG 10", "nDCG@1 0", "P@10", "NDCG_10", "MAP", "nDCG@١٠", 10, None],
)
def test_parse_metric_rejects(text):
    with pytest.raises(UsageError, match=r"nDCG@k with k a positive integer"):
        parse_metric(text)


def test_metric_is_frozen_and_default_metrics():
    assert DEFAULT_METRICS == (parse_metric("nDCG@10"), parse_metric("nDCG@100"))
    assert [str(m) for m in DEFAULT_METRICS] == ["nDCG@10", "nDCG@100"]
    with pytest.raises(AttributeError):
        DEFAULT_METRICS[0].k = 5  # type: ignore[misc]
    with pytest.raises(ValueError):
        Metric("nDCG@10", 11)


# ----------------------------------------------------------------------------- across terms


def test_macro_average():
    per_term = {
        "t1": {"nDCG@10": 0.2, "nDCG@10 (random ties)": 0.4},
        "t2": {"nDCG@10": 1.0, "nDCG@10 (random ties)": 0.1},
        "t3": {"nDCG@10": 0.0, "nDCG@10 (random ties)": 0.1},
    }
    avg = macro_average(per_term)
    assert list(avg) == ["nDCG@10", "nDCG@10 (random ties)"]
    # (0.2 + 1.0 + 0.0) / 3 = 0.4;  (0.4 + 0.1 + 0.1) / 3 = 0.2  (each term counts once)
    assert avg["nDCG@10"] == pytest.approx(0.4)
    assert avg["nDCG@10 (random ties)"] == pytest.approx(0.2)
    with pytest.raises(UsageError):
        macro_average({})
    with pytest.raises(ValueError):
        macro_average({"t1": {"nDCG@10": 0.5}, "t2": {"nDCG@100": 0.5}})


def test_paired_test_identical_inputs():
    a = {"t1": 0.3, "t2": 0.7, "t3": 0.5, "t4": 0.9}
    result = paired_test(a, dict(a))
    assert result == PairedTest(n=4, mean_diff=0.0, wilcoxon_p=1.0, ttest_p=1.0)


def test_paired_test_clearly_better():
    rng = np.random.default_rng(3)
    terms = [f"t{i}" for i in range(20)]
    b = {t: float(v) for t, v in zip(terms, rng.uniform(0.2, 0.6, size=20), strict=False)}
    a = {t: b[t] + 0.1 + float(rng.uniform(0.0, 0.05)) for t in terms}
    result = paired_test(a, b)
    assert result.n == 20
    assert 0.1 <= result.mean_diff <= 0.15
    assert result.wilcoxon_p < 1e-4
    assert result.ttest_p < 1e-4
    # Swapping the systems flips the sign, not the p-values.
    flipped = paired_test(b, a)
    assert flipped.mean_diff == pytest.approx(-result.mean_diff)
    assert flipped.wilcoxon_p == pytest.approx(result.wilcoxon_p)
    assert flipped.ttest_p == pytest.approx(result.ttest_p)


def test_paired_test_known_values_and_common_terms_only():
    # Differences 1..5 (all positive, no ties): exact two-sided Wilcoxon p = 2 / 2**5 = 0.0625.
    # Paired t: mean 3, sd sqrt(2.5), t = 3 / (sqrt(2.5) / sqrt(5)) = 4.2426407, df 4.
    a = {f"t{i}": float(i) for i in range(1, 6)}
    b = {f"t{i}": 0.0 for i in range(1, 6)}
    a["only_in_a"] = 100.0
    b["only_in_b"] = -100.0
    result = paired_test(a, b)
    assert result.n == 5
    assert result.mean_diff == pytest.approx(3.0)
    assert result.wilcoxon_p == pytest.approx(0.0625)
    t = 3 / (math.sqrt(2.5) / math.sqrt(5))
    assert result.ttest_p == pytest.approx(2 * (1 - _student_t_cdf(t, 4)), rel=1e-9)
    assert result.ttest_p == pytest.approx(0.0132356, abs=1e-6)


@pytest.mark.slow
def test_paired_test_keeps_zero_differences():
    # Terms where the systems tie still count: n = 8 and they pull the mean difference down.
    # Dropping the zeros (zero_method="wilcox") would give a different p-value here.
    d = np.array([0, 0, 0, 0.1, 0.2, 0.3, -0.05, 0.4, 0.5, 0.15, -0.25, 0.35])
    a = {f"t{i}": 0.5 + x for i, x in enumerate(d)}
    b = {f"t{i}": 0.5 for i in range(len(d))}
    result = paired_test(a, b)
    assert result.n == 12
    assert result.mean_diff == pytest.approx(d.sum() / 12)
    diffs = np.array([a[t] - b[t] for t in a])
    zsplit_p = float(scipy_stats.wilcoxon(diffs, zero_method="zsplit").pvalue)
    wilcox_p = float(scipy_stats.wilcoxon(diffs, zero_method="wilcox").pvalue)
    assert zsplit_p != pytest.approx(wilcox_p)
    assert result.wilcoxon_p == pytest.approx(zsplit_p)


def _student_t_cdf(t: float, df: int) -> float:
    """Student t CDF for df = 4 in closed form (independent of scipy)."""
    assert df == 4
    x = t / math.sqrt(t * t + 4)
    return 0.5 + 0.75 * x - 0.25 * x**3


def test_paired_test_degenerate_cases():
    with pytest.raises(UsageError):
        paired_test({"t1": 0.5}, {"t2": 0.5})
    single = paired_test({"t1": 0.9}, {"t1": 0.4})
    assert single.n == 1 and single.mean_diff == pytest.approx(0.5)
    assert single.wilcoxon_p == 1.0
    assert math.isnan(single.ttest_p)
    constant = paired_test({"t1": 1.0, "t2": 2.0}, {"t1": 0.5, "t2": 1.5})
    assert constant.ttest_p == 0.0


# ----------------------------------------------------------------------------- properties


@st.composite
def _gains_and_permutation(draw):
    gains = draw(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=30))
    perm = draw(st.permutations(range(len(gains))))
    k = draw(st.integers(min_value=1, max_value=40))
    return np.array(gains, dtype=float), np.array(perm), k


@settings(max_examples=300, deadline=None)
@given(_gains_and_permutation())
def test_ndcg_in_unit_interval_and_one_for_ideal_order(case):
    gains, perm, k = case
    value = ndcg(gains[perm], gains, k)
    assert 0.0 <= value <= 1.0 + 1e-12
    ideal = ndcg(np.sort(gains)[::-1], gains, k)
    if gains.max() > 0:
        assert ideal == pytest.approx(1.0, rel=1e-12)
        assert value <= ideal + 1e-12
    else:
        assert ideal == 0.0 and value == 0.0
    baseline = random_baseline_ndcg(gains, k)
    assert 0.0 <= baseline <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3)),
        min_size=1,
        max_size=25,
    ),
    st.integers(min_value=1, max_value=30),
)
def test_random_ties_between_worst_and_best_tie_orders(pairs, k):
    scores = np.array([s for s, _ in pairs], dtype=float)
    gains = np.array([g for _, g in pairs], dtype=float)
    n = len(pairs)
    # Best / worst deterministic orders: within ties put high / low gains first.
    best = rank_order(scores, -gains)
    worst = rank_order(scores, gains)
    lo = ndcg(gains[worst], gains, k)
    hi = ndcg(gains[best], gains, k)
    value = expected_ndcg_random_ties(scores, gains, k)
    assert lo - 1e-12 <= value <= hi + 1e-12
    assert 0.0 <= value <= 1.0 + 1e-12
    det = evaluate_scores(scores, gains, np.arange(n), metrics=[f"nDCG@{k}"])
    assert lo - 1e-12 <= det[f"nDCG@{k}"] <= hi + 1e-12
