"""Evaluation of sentence rankings by NDCG@k, per term and across terms.

Pure functions over NumPy arrays: nothing here reads files or knows how the
scores were made. Every formula used in this module is collected here; the
function docstrings repeat the one they implement.

Notation
--------
For one statutory term, ``n`` labelled sentences have gains ``g`` (see
:data:`statinterp.corpus.dataset.LABEL_GAINS`: high value 3, certain value 2,
potential value 1, no value 0). A ranking lists them as ``rel_1, ..., rel_n``
(``rel_i`` = gain of the sentence at rank ``i``, ranks start at 1).

* Discount of rank ``i``::

      d_i = 1 / log2(i + 1)            (d_1 = 1, d_2 = 0.6309..., d_3 = 0.5, ...)

* DCG at cutoff ``k`` (linear gains, no ``2**rel - 1``)::

      DCG@k = sum_{i=1..min(k, n)} rel_i * d_i

* Ideal DCG: DCG@k of *all* the term's labelled gains sorted descending::

      IDCG@k = DCG@k(sorted(g, descending))

* Normalised DCG::

      NDCG@k = DCG@k / IDCG@k          (defined as 0.0 when IDCG@k = 0,
                                        i.e. when no sentence has a gain > 0)

* Deterministic tie rule (:func:`rank_order`): sort by score descending, break
  ties by the ``tiebreak`` key ascending (e.g. the sentence id), then by input
  position.

* Expected NDCG under random tie-breaking (:func:`expected_ndcg_random_ties`):
  when sentences with equal scores are put in uniformly random order, a tie
  group ``G`` of ``m`` sentences occupies ranks ``p .. p+m-1`` and each of its
  members is equally likely to be at each of those ranks, so by linearity of
  expectation::

      E[DCG@k] = sum_G mean(g_G) * sum_{i=p_G..p_G+m_G-1, i<=k} d_i
      E[NDCG@k] = E[DCG@k] / IDCG@k     (IDCG does not depend on the order)

* Random baseline (:func:`random_baseline_ndcg`): a uniformly random
  permutation is the special case of a single tie group::

      E[NDCG@k] = mean(g) * sum_{i=1..min(k, n)} d_i / IDCG@k

* Unlabelled sentences (:func:`evaluate_scores`): they are dropped from both
  the ranking and the ideal ranking before anything is computed, i.e. the
  ranking is *condensed* to the labelled sentences (the labelled sentences
  keep their relative order and move up into the freed ranks).

* Across terms (:func:`macro_average`, :func:`paired_test`): every term counts
  once; the unit of the significance tests is the term, not the sentence.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from statinterp.errors import UsageError

__all__ = [
    "Metric",
    "DEFAULT_METRICS",
    "parse_metric",
    "dcg",
    "idcg",
    "ndcg",
    "rank_order",
    "expected_ndcg_random_ties",
    "random_baseline_ndcg",
    "evaluate_scores",
    "RANDOM_TIES_SUFFIX",
    "macro_average",
    "PairedTest",
    "paired_test",
]

# --------------------------------------------------------------------------- metrics

_METRIC_FORM = "nDCG@k with k a positive integer, e.g. nDCG@10 or nDCG@100"
_METRIC_RE = re.compile(r"ndcg@([1-9][0-9]*)", re.IGNORECASE | re.ASCII)

#: Suffix of the key under which :func:`evaluate_scores` reports the expected
#: value of a metric under random tie-breaking, e.g. ``"nDCG@10 (random ties)"``.
RANDOM_TIES_SUFFIX = " (random ties)"


@dataclass(frozen=True)
class Metric:
    """An evaluation measure, named in ir_measures style: ``nDCG@k``.

    ``name`` is the canonical spelling (``"nDCG@10"``), ``k`` the rank cutoff.
    Build one with :func:`parse_metric`; ``str(metric)`` gives ``name``.
    """

    name: str
    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"Metric cutoff k must be a positive int, got {self.k!r}")
        if self.name != f"nDCG@{self.k}":
            raise ValueError(f"Metric name must be 'nDCG@{self.k}', got {self.name!r}")

    def __str__(self) -> str:
        return self.name


def parse_metric(name: str) -> Metric:
    """Parse a metric name of the form ``nDCG@k`` (ir_measures style).

    ``"ndcg"`` is matched case-insensitively, ``k`` must be a positive integer
    written in decimal without leading zeros; surrounding whitespace is ignored.
    The returned :class:`Metric` carries the canonical name, e.g.
    ``parse_metric("NDCG@10").name == "nDCG@10"``.

    Raises :class:`~statinterp.errors.UsageError` for anything else.
    """
    match = _METRIC_RE.fullmatch(name.strip()) if isinstance(name, str) else None
    if match is None:
        raise UsageError(f"unknown metric {name!r}: expected {_METRIC_FORM}")
    k = int(match.group(1))
    return Metric(name=f"nDCG@{k}", k=k)


#: Metrics reported when none are asked for.
DEFAULT_METRICS: tuple[Metric, ...] = (parse_metric("nDCG@10"), parse_metric("nDCG@100"))


# --------------------------------------------------------------------------- helpers


def _check_k(k: int) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"cutoff k must be a positive int, got {k!r}")
    return int(k)


def _as_1d_float(values: object, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    return arr


def _as_gains(gains: object, what: str = "gains") -> np.ndarray:
    """Gains as a float array; they must be finite and non-negative."""
    arr = _as_1d_float(gains, what)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite (drop unlabelled sentences first)")
    if np.any(arr < 0):
        raise ValueError(f"{what} must be non-negative")
    return arr


def _as_scores(scores: object) -> np.ndarray:
    arr = _as_1d_float(scores, "scores")
    if np.any(np.isnan(arr)):
        raise ValueError("scores contain NaN; a scorer must give every sentence a number")
    return arr


def _discounts(n: int, k: int) -> np.ndarray:
    """``d_i = 1 / log2(i + 1)`` for ranks ``i = 1..n``, set to 0 for ranks ``i > k``."""
    ranks = np.arange(1, n + 1, dtype=float)
    d = 1.0 / np.log2(ranks + 1.0)
    d[k:] = 0.0
    return d


# --------------------------------------------------------------------------- NDCG


def dcg(gains_in_rank_order: Sequence[float] | np.ndarray, k: int) -> float:
    """Discounted cumulative gain at cutoff ``k``.

    ``DCG@k = sum_{i=1..min(k, n)} rel_i / log2(i + 1)``

    where ``rel_i`` is ``gains_in_rank_order[i - 1]`` (linear gain). An empty
    ranking has DCG 0.0.
    """
    k = _check_k(k)
    rel = _as_1d_float(gains_in_rank_order, "gains_in_rank_order")
    if not np.all(np.isfinite(rel)):
        raise ValueError("gains_in_rank_order must be finite")
    m = min(k, rel.size)
    return float(np.dot(rel[:m], _discounts(m, m)))


def idcg(all_gains: Sequence[float] | np.ndarray, k: int) -> float:
    """Ideal DCG at cutoff ``k``: ``IDCG@k = DCG@k(all_gains sorted descending)``."""
    g = _as_gains(all_gains, "all_gains")
    return dcg(np.sort(g)[::-1], k)


def ndcg(
    gains_in_rank_order: Sequence[float] | np.ndarray,
    all_gains: Sequence[float] | np.ndarray,
    k: int,
) -> float:
    """Normalised DCG at cutoff ``k``.

    ``NDCG@k = DCG@k(gains_in_rank_order) / IDCG@k``, where
    ``IDCG@k = DCG@k(all_gains sorted descending)`` and
    ``DCG@k = sum_{i=1..min(k, n)} rel_i / log2(i + 1)``.

    ``all_gains`` are the gains of *all* the term's labelled sentences, so a
    ranking that leaves relevant sentences out (e.g. a truncated list) is
    penalised. ``gains_in_rank_order`` should be drawn from ``all_gains``; then
    the result lies in ``[0, 1]``. If ``IDCG@k == 0`` (no gain above 0) the
    result is 0.0. Gains must be finite and non-negative.
    """
    rel = _as_gains(gains_in_rank_order, "gains_in_rank_order")
    ideal = idcg(all_gains, k)
    if ideal == 0.0:
        return 0.0
    return dcg(rel, k) / ideal


# --------------------------------------------------------------------------- ties


def rank_order(scores: Sequence[float] | np.ndarray, tiebreak: Sequence[object] | np.ndarray) -> np.ndarray:
    """Indices of the sentences in rank order under the deterministic tie rule.

    Rule: sort by score descending; sentences with equal scores are ordered by
    ``tiebreak`` ascending (any mutually comparable keys, e.g. sentence ids as
    strings — note that strings compare lexicographically, so ``"s10" < "s2"``);
    if keys are equal too, by input position (the sort is stable). Scores are
    compared as float64 values, so ``-0.0`` ties with ``0.0`` and scores that
    differ in the last bit do not tie. Implemented as
    ``np.lexsort((tiebreak, -scores))``.

    Raises ``ValueError`` if a score is NaN (a programming error: every
    sentence must be scored) or if the lengths differ.
    """
    s = _as_scores(scores)
    keys = np.asarray(tiebreak)  # str, bytes, numeric or object arrays of comparable keys
    if keys.ndim != 1 or keys.shape[0] != s.shape[0]:
        raise ValueError(
            f"tiebreak must be one key per score: {keys.shape} keys for {s.shape[0]} scores"
        )
    if s.size == 0:
        return np.zeros(0, dtype=np.intp)
    return np.lexsort((keys, -s)).astype(np.intp, copy=False)


def expected_ndcg_random_ties(
    scores: Sequence[float] | np.ndarray,
    gains: Sequence[float] | np.ndarray,
    k: int,
) -> float:
    """Exact expected NDCG@k when tied scores are ordered uniformly at random.

    Sentences are sorted by score descending; each group ``G`` of ``m_G``
    sentences with equal scores occupies ranks ``p_G .. p_G + m_G - 1`` in some
    uniformly random order. Each member is at each of those ranks with
    probability ``1 / m_G``, so by linearity of expectation::

        E[DCG@k]  = sum_G mean(g_G) * sum_{i=p_G..p_G+m_G-1, i<=k} 1 / log2(i + 1)
        E[NDCG@k] = E[DCG@k] / IDCG@k

    (``IDCG@k`` is the same for every order; 0.0 is returned if it is 0).
    Computed in closed form, not sampled. Without ties this equals
    ``ndcg(gains[rank_order(scores, ...)], gains, k)``.

    Gains must be finite and non-negative (drop unlabelled sentences first);
    NaN scores raise ``ValueError``.
    """
    k = _check_k(k)
    s = _as_scores(scores)
    g = _as_gains(gains)
    if s.shape != g.shape:
        raise ValueError(f"{s.size} scores for {g.size} gains")
    ideal = idcg(g, k)
    if ideal == 0.0:
        return 0.0
    # Tie groups in descending score order: np.unique sorts -s ascending.
    _, group, sizes = np.unique(-s, return_inverse=True, return_counts=True)
    group_gain_sums = np.bincount(group, weights=g, minlength=sizes.size)
    # Cumulative discounts C[j] = sum of d_i over ranks 1..j (d_i = 0 beyond k).
    cum = np.concatenate(([0.0], np.cumsum(_discounts(s.size, k))))
    ends = np.cumsum(sizes)
    starts = ends - sizes
    expected_dcg = float(np.sum(group_gain_sums / sizes * (cum[ends] - cum[starts])))
    return expected_dcg / ideal


def random_baseline_ndcg(gains: Sequence[float] | np.ndarray, k: int) -> float:
    """Exact expected NDCG@k of a uniformly random permutation of the sentences.

    ``E[NDCG@k] = mean(g) * sum_{i=1..min(k, n)} 1 / log2(i + 1) / IDCG@k``

    (every sentence is at each rank with probability ``1 / n``). This is
    :func:`expected_ndcg_random_ties` with all scores tied. Returns 0.0 if
    ``IDCG@k`` is 0, including for an empty ``gains``.
    """
    k = _check_k(k)
    g = _as_gains(gains)
    ideal = idcg(g, k)
    if ideal == 0.0:
        return 0.0
    m = min(k, g.size)
    return float(g.mean() * _discounts(m, m).sum() / ideal)


# --------------------------------------------------------------------------- one term


def _labelled_mask(gains: object) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(mask, float_gains)``; ``mask`` is False where a gain is None or NaN."""
    raw = np.asarray(gains, dtype=object)
    if raw.ndim != 1:
        raise ValueError(f"gains must be one-dimensional, got shape {raw.shape}")
    values = np.array([np.nan if x is None else x for x in raw], dtype=float)
    return ~np.isnan(values), values


def evaluate_scores(
    scores: Sequence[float] | np.ndarray,
    gains: Sequence[float | None] | np.ndarray,
    tiebreak: Sequence[object] | np.ndarray,
    metrics: Iterable[Metric | str] = DEFAULT_METRICS,
    *,
    term: str | None = None,
) -> dict[str, float]:
    """Evaluate one term's sentence scores against its gains.

    ``scores[i]``, ``gains[i]`` and ``tiebreak[i]`` describe sentence ``i``.
    A gain of ``None`` or NaN marks an unlabelled sentence: those sentences are
    dropped from both the ranking and the ideal ranking (the ranking is
    condensed to the labelled sentences). Then, for each metric ``nDCG@k``:

    * ``result["nDCG@k"]`` — ``NDCG@k`` of the deterministic order
      :func:`rank_order` (score descending, ``tiebreak`` ascending);
    * ``result["nDCG@k (random ties)"]`` — the exact expected ``NDCG@k`` when
      tied scores are ordered uniformly at random
      (:func:`expected_ndcg_random_ties`).

    ``NDCG@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} rel_i / log2(i + 1)``
    and ``IDCG@k`` the DCG@k of the labelled gains sorted descending.

    ``metrics`` may hold :class:`Metric` objects or names for
    :func:`parse_metric`. ``term`` is only used in error messages.
    Raises :class:`~statinterp.errors.UsageError` if no sentence is labelled,
    ``ValueError`` for NaN scores, negative gains or mismatched lengths.
    """
    s = _as_scores(scores)
    labelled, g = _labelled_mask(gains)
    keys = np.asarray(tiebreak)
    if keys.ndim != 1 or not (s.shape[0] == g.shape[0] == keys.shape[0]):
        raise ValueError(
            "scores, gains and tiebreak must have one entry per sentence: "
            f"got shapes {s.shape}, {g.shape} and {keys.shape}"
        )
    if not labelled.any():
        who = f"term {term!r}" if term is not None else "ranking"
        raise UsageError(f"{who} cannot be evaluated: no labelled sentences")
    s, g, keys = s[labelled], _as_gains(g[labelled]), keys[labelled]
    parsed = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]

    ranked_gains = g[rank_order(s, keys)]
    result: dict[str, float] = {}
    for metric in parsed:
        result[metric.name] = ndcg(ranked_gains, g, metric.k)
        result[metric.name + RANDOM_TIES_SUFFIX] = expected_ndcg_random_ties(s, g, metric.k)
    return result


# --------------------------------------------------------------------------- across terms


def macro_average(per_term: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Macro average: for each metric key, the mean over terms of its value.

    ``result[key] = (1 / T) * sum_{t=1..T} per_term[t][key]``; every term
    counts once, however many sentences it has. All terms must report the same
    keys (``ValueError`` otherwise); keys keep the order of the first term.
    Raises :class:`~statinterp.errors.UsageError` if there are no terms.
    """
    if not per_term:
        raise UsageError("cannot average over terms: no terms were evaluated")
    terms = list(per_term)
    keys = list(per_term[terms[0]])
    for t in terms[1:]:
        if set(per_term[t]) != set(keys):
            raise ValueError(
                f"term {t!r} reports metrics {sorted(per_term[t])}, "
                f"term {terms[0]!r} reports {sorted(keys)}"
            )
    return {key: float(np.mean([per_term[t][key] for t in terms])) for key in keys}


@dataclass(frozen=True)
class PairedTest:
    """Result of :func:`paired_test` (a test across terms).

    ``n``: number of terms compared; ``mean_diff``: ``mean_t(a_t - b_t)``
    (positive when system A scores higher); ``wilcoxon_p``: two-sided
    Wilcoxon signed-rank p-value; ``ttest_p``: two-sided paired t-test p-value.
    """

    n: int
    mean_diff: float
    wilcoxon_p: float
    ttest_p: float


def paired_test(a: Mapping[str, float], b: Mapping[str, float]) -> PairedTest:
    """Compare two systems *across terms*: is A's per-term metric different from B's?

    ``a`` and ``b`` map term -> value of one metric (e.g. NDCG@10) for systems
    A and B. Only terms present in both are used; the sample is the ``n``
    per-term differences ``d_t = a_t - b_t`` (one number per term, so the test
    says nothing about sentences within a term).

    * ``mean_diff = (1 / n) * sum_t d_t``.
    * ``wilcoxon_p``: two-sided Wilcoxon signed-rank test of ``d``
      (``scipy.stats.wilcoxon(d, zero_method="zsplit")``: zero differences are
      ranked and their rank split between the signs). If every ``d_t`` is 0
      the systems are indistinguishable and ``wilcoxon_p = 1.0``.
    * ``ttest_p``: two-sided paired t-test,
      ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom
      (``scipy.stats.ttest_rel(a, b)``). ``1.0`` if every ``d_t`` is 0;
      NaN if ``n < 2`` (no variance estimate); ``0.0`` if all ``d_t`` are
      equal and non-zero (``t`` is infinite).

    Raises :class:`~statinterp.errors.UsageError` if no term is in both.
    """
    common = [t for t in a if t in b]
    if not common:
        raise UsageError("cannot compare systems: they have no evaluated terms in common")
    x = np.array([a[t] for t in common], dtype=float)
    y = np.array([b[t] for t in common], dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired_test needs finite metric values")
    d = x - y
    n = int(d.size)
    mean_diff = float(d.mean())
    if np.all(d == 0.0):
        return PairedTest(n=n, mean_diff=mean_diff, wilcoxon_p=1.0, ttest_p=1.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        wilcoxon_p = float(stats.wilcoxon(d, zero_method="zsplit").pvalue)
        if n < 2:
            ttest_p = math.nan
        elif np.all(d == d[0]):
            ttest_p = 0.0
        else:
            ttest_p = float(stats.ttest_rel(x, y).pvalue)
    return PairedTest(n=n, mean_diff=mean_diff, wilcoxon_p=wilcoxon_p, ttest_p=ttest_p)
