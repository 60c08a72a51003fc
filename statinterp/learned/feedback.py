"""Learning from a reviewer's labels within one term: relevance feedback, continuous review and
its simulated reviewer.

**Relevance feedback**: re-rank a term's candidates with a reviewer's labels.

A reviewer labels a few of a term's sentences (gains 0..3: no / potential / certain / high
value). :func:`feedback_scores` fits a small learner on those labelled candidates alone (the
features of :mod:`.features`, the learners of :mod:`.model`) and blends its scores with a
*prior* -- the scores of the cross-term model or of whichever method ranked the term first --
both standardised over the term's candidates::

    score = prior_weight * z(prior) + (1 - prior_weight) * z(own)

where ``own`` is the within-term learner's score. With fewer than two different gains among
the labels nothing can be learned and the result is ``z(prior)``.

Which learner and which ``prior_weight`` are the defaults was measured, not guessed: a
simulated reviewer on the 14 shared terms (``python -m experiments.feedback_simulation``,
``reports/feedback.md``).

Features are computed once per term and kept in memory (keyed by the index object and the
feature settings), so a second re-rank of the same term only refits the learner: well under a
second for a term of ~600 candidates. Nothing here reads or writes files.

:class:`FeedbackRanker` wraps the same computation as a :class:`~statinterp.rankers.base.Ranker`
with labels given by sentence id, so ``rank``, ``evaluate`` and the CLI
(``statinterp rank TERM --feedback LABELS``) treat it like any method.

**Continuous review** of one term: re-rank the unread rest after every label, and estimate what is left.

A reviewer reads a term's sentences down a ranked list and labels each one (gains 0..3). In
*continuous* mode (continuous active learning, as in e-discovery: Cormack & Grossman, SIGIR
2014) every label refits a within-term learner and the sentences *below the reviewer's
position* are re-ranked; what is above stays where it was read.

**The learner** (:class:`ContinuousModel`) is ridge regression in closed form on the term's
feedback features (:data:`statinterp.learned.feedback.FEEDBACK_FEATURES`), standardised once over
the whole term. It keeps the sums ``Σz``, ``Σzzᵀ``, ``Σzy`` of the labelled rows, so a new label
is an O(d²) update and a refit one d×d solve (d = 125 features): about a millisecond for a term of
600 sentences (``benchmarks``), cheap enough to refit after every label. Its scores are blended
with the standardised *prior* (the method that ranked the term first)::

    score = w(n) * z(prior) + (1 - w(n)) * z(own),   w(n) = prior_weight * h / (h + n)

with ``n`` labels so far and ``h`` = ``prior_half_life`` (``None``: no decay, ``w = prior_weight``).
The target is the gain (``target="gain"``) or 1 for high/certain value, else 0 (``"valuable"``).

**What is left** (:func:`estimate_remaining`): how many high- or certain-value sentences the
unread rest still holds, with a 90 % interval. A logistic curve P(valuable | score) is fitted to
the read sentences and applied to the unread sentences' current scores. Which score of a read
sentence to fit on is the crux: its score *when it was read* (before its own label could move it)
overstates the rest in continuous mode -- the reader read what the learner ranked highest, and the
learner kept improving -- while its *current* score, from a learner fitted on its own label,
separates the read sentences too well and understates the rest. The estimate is the equal mixture
of the two curves (``estimator="mixture"``, the default; chosen held apart over terms,
``reports/feedback.md`` section 5): half the draws from each. Each curve's uncertainty comes from
a bootstrap of the read sentences (two pseudo-sentences, one valuable and one not, at the read
sentences' mean score keep the curve finite while the labels are few or all alike), the
outcome's from a Bernoulli draw per unread sentence; the interval is the 5th and 95th percentiles
of the simulated remainder. It suggests stopping when the rest holds none with probability >= 0.9
(the mean over the draws of the product of the unread sentences' 1 - p).
How often the interval holds the true remainder is measured by ``statinterp simulate-review``
(``reports/feedback.md``).

Nothing here reads or writes files.

**A simulated reviewer**: how much reading a review order costs (``statinterp simulate-review``).

The reviewer reads a term's labelled sentences in the order shown and labels each with the data
set's own label. Policies:

* ``static``: the prior's order, never changed;
* ``button-20``: the prior's order until 20 labels, then the unread rest is re-ranked once with
  those labels (the reviewer presses "Re-rank with my labels" once) and read in that order;
* ``continuous``: after each label the unread rest is re-ranked with every label so far
  (:class:`statinterp.learned.feedback.ContinuousModel`; what was read stays).

Measured per term (*valuable* = high or certain value, gain >= 2): sentences read to find 50 %,
80 % and 100 % of the term's valuable sentences (counts and shares of the term's labelled
sentences), valuable sentences found after reading 10, 20 and 50, and the stopping estimate
(:func:`statinterp.learned.feedback.estimate_remaining`) at checkpoints every
``checkpoint_every`` sentences read: how often its 90 % interval held the true remainder, and
where it first suggested stopping. Only the term's labelled sentences take part (unlabelled
candidates are neither read nor counted). The field names of :func:`simulate_term`'s result and
of :func:`macro` are documented in the README (``simulate-review``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.errors import UsageError
from statinterp.learned.features import (
    FAMILIES,
    FeatureMatrix,
    FeatureSettings,
    features_of_index,
    zscore,
)
from statinterp.rankers.base import Ranker

__all__ = ["DEFAULT_LEARNER", "DEFAULT_PRIOR_WEIGHT", "FEEDBACK_FEATURES", "FEEDBACK_LEARNERS",
           "FeedbackRanker", "feedback_scores", "fit_within_term", "ranker_scores", "term_features",
           "ESTIMATORS", "STOP_P_NONE", "VALUABLE_GAIN", "ContinuousModel", "ContinuousSettings", "Remaining",
           "estimate_remaining", "rerank_rest", "FOUND_AFTER", "POLICIES", "RECALLS", "TermRun", "against",
           "format_table", "macro", "simulate", "simulate_term", "term_runs"]

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

#: Within-term learners (all from :mod:`.model`).
FEEDBACK_LEARNERS = {
    "ridge": "pointwise ridge regression on the gains of the labelled candidates",
    "pairwise": "logistic regression on feature differences of labelled pairs with different gains",
    "hgb": "small gradient-boosted trees on the gains",
    "ensemble": "mean of the pairwise and hgb scores, each z-scored over the term",
}

#: The defaults, chosen by the reviewer simulation (``reports/feedback.md``).
DEFAULT_LEARNER = "ridge"

DEFAULT_PRIOR_WEIGHT = 0.5

#: Feature families used within a term: every default family but word vectors (no training needed).
FEEDBACK_FEATURES = FeatureSettings(families=tuple(f for f in FAMILIES if f != "vectors"), vectors="off")

#: Regularisation of the within-term linear learners (few labelled rows: stronger than across terms).
RIDGE_ALPHA = 30.0

PAIRWISE_C = 0.01


def term_features(index: TermIndex, settings: FeatureSettings | None = None) -> FeatureMatrix:
    """The feature matrix of ``index`` under ``settings`` (default :data:`FEEDBACK_FEATURES`),
    computed once per index object (:func:`statinterp.learned.features.features_of_index`)."""
    return features_of_index(index, settings or FEEDBACK_FEATURES)


def _check_labels(labels: Mapping[int, int], n: int) -> tuple[np.ndarray, np.ndarray]:
    rows, gains = [], []
    for pos, gain in labels.items():
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) or not 0 <= int(pos) < n:
            raise UsageError(f"feedback label for candidate {pos!r}: not a candidate position (0..{n - 1})")
        if isinstance(gain, bool) or not isinstance(gain, (int, np.integer, float)) or gain not in (0, 1, 2, 3):
            raise UsageError(f"feedback label for candidate {pos}: gain {gain!r} is not one of 0, 1, 2, 3")
        rows.append(int(pos))
        gains.append(float(gain))
    return np.asarray(rows, dtype=np.int64), np.asarray(gains, dtype=np.float64)


def fit_within_term(X: np.ndarray, rows: np.ndarray, gains: np.ndarray, learner: str = DEFAULT_LEARNER,
                    seed: int = 0) -> np.ndarray | None:
    """Scores of every row of ``X`` by ``learner`` fitted on rows ``rows`` with ``gains``;
    None when the labels do not differ (nothing to learn)."""
    from threadpoolctl import threadpool_limits

    from statinterp.learned.model import LearnerComponent, LinearComponent, TreesComponent

    if learner not in FEEDBACK_LEARNERS:
        raise UsageError(f"unknown feedback learner {learner!r}; valid: {', '.join(FEEDBACK_LEARNERS)}")
    if len(rows) < 2 or np.ptp(gains) == 0:
        return None
    Xl = X[rows]
    kinds = ("pairwise", "hgb") if learner == "ensemble" else (learner,)
    parts = []
    for kind in kinds:
        comp: LearnerComponent
        if kind == "ridge":
            comp = LinearComponent("linear", alpha=RIDGE_ALPHA)
        elif kind == "pairwise":
            comp = LinearComponent("pairwise", C=PAIRWISE_C, pairs_per_term=2000)
        else:
            comp = TreesComponent(max_iter=50, max_leaf_nodes=4, min_samples_leaf=3)
        with threadpool_limits(1):  # a few dozen rows: threads cost more than they save
            parts.append(np.asarray(comp.fit([Xl], [gains], seed).raw(X), dtype=np.float64))
    return parts[0] if len(parts) == 1 else np.mean([zscore(p) for p in parts], axis=0)


def feedback_scores(index: TermIndex, prior_scores: np.ndarray, labels: Mapping[int, int], *,
                    learner: str = DEFAULT_LEARNER, prior_weight: float = DEFAULT_PRIOR_WEIGHT,
                    settings: FeatureSettings | None = None, features: FeatureMatrix | None = None,
                    seed: int = 0) -> np.ndarray:
    """One score per candidate of ``index``: the within-term learner fitted on ``labels``
    (candidate position -> gain 0..3) blended with ``prior_scores`` (see the module docstring).

    ``prior_weight`` in [0, 1] is the weight of the standardised prior (1: the prior alone).
    ``features`` (a precomputed matrix of ``index``) or ``settings`` choose the features;
    by default those of :data:`FEEDBACK_FEATURES`, cached per term (:func:`term_features`).
    Labelled candidates are scored like the others.
    """
    n = len(index)
    prior = np.asarray(prior_scores, dtype=np.float64).reshape(-1)
    if prior.shape != (n,):
        raise UsageError(f"prior scores: {prior.shape[0]} values for {n} candidates of term {index.key!r}")
    if not np.all(np.isfinite(prior)):
        raise UsageError(f"prior scores of term {index.key!r} hold NaN or infinite values")
    if not 0.0 <= prior_weight <= 1.0:
        raise UsageError(f"prior_weight must be in [0, 1], not {prior_weight}")
    rows, gains = _check_labels(labels, n)
    if learner not in FEEDBACK_LEARNERS:
        raise UsageError(f"unknown feedback learner {learner!r}; valid: {', '.join(FEEDBACK_LEARNERS)}")
    z_prior = zscore(prior)
    if prior_weight == 1.0 or len(rows) < 2 or np.ptp(gains) == 0:
        return z_prior
    fm = features if features is not None else term_features(index, settings)
    if fm.X.shape[0] != n:
        raise UsageError(f"features: {fm.X.shape[0]} rows for {n} candidates of term {index.key!r}")
    own = fit_within_term(fm.X, rows, gains, learner, seed)
    if own is None:
        return z_prior
    return prior_weight * z_prior + (1.0 - prior_weight) * zscore(own)


def ranker_scores(ranker: Ranker, index: TermIndex) -> np.ndarray:
    """``ranker``'s scores of ``index``; a learned model reuses the features cached for the term."""
    from statinterp.learned.model import LearnedRanker

    if isinstance(ranker, LearnedRanker):
        fm = term_features(index, ranker.settings)
        return ranker.score_matrix(fm.select(ranker.feature_names).X)
    return ranker.score(index)


@dataclass(frozen=True)
class FeedbackRanker(Ranker):
    """``prior`` re-ranked with a reviewer's ``labels`` (sentence id -> gain 0..3) of one term.

    Sentence ids that are not candidates of the ranked term are ignored (a labels file may
    hold several terms); ``score`` of a term with fewer than two different labels is the
    standardised prior.
    """

    prior: Ranker
    labels: Mapping[str, int]
    learner: str = DEFAULT_LEARNER
    prior_weight: float = DEFAULT_PRIOR_WEIGHT

    def __post_init__(self):
        if self.learner not in FEEDBACK_LEARNERS:
            raise UsageError(f"unknown feedback learner {self.learner!r}; valid: {', '.join(FEEDBACK_LEARNERS)}")
        if not 0.0 <= self.prior_weight <= 1.0:
            raise UsageError(f"prior_weight must be in [0, 1], not {self.prior_weight}")

    @property
    def name(self) -> str:
        return f"{self.prior.name}+feedback"

    def positions(self, index: TermIndex) -> dict[int, int]:
        """The labels as candidate position -> gain for ``index``."""
        pos = {sid: i for i, sid in enumerate(index.sentence_ids)}
        return {pos[sid]: int(g) for sid, g in self.labels.items() if sid in pos}

    def prior_scores(self, index: TermIndex) -> np.ndarray:
        """The prior's scores; a learned prior reuses the features cached for the term."""
        return ranker_scores(self.prior, index)

    def score(self, index: TermIndex) -> np.ndarray:
        return feedback_scores(index, self.prior_scores(index), self.positions(index), learner=self.learner,
                               prior_weight=self.prior_weight)

    def explain(self, index: TermIndex, i: int) -> dict:
        labels = self.positions(index)
        return {"method": self.name, "score": float(self.score(index)[i]), "prior": self.prior.explain(index, i),
                "labels used": len(labels), "learner": self.learner, "prior_weight": self.prior_weight}

#: Gains that count as valuable (certain value 2, high value 3).
VALUABLE_GAIN = 2

#: How :func:`estimate_remaining` scores the read sentences: at read time, now, or the mixture of both.
ESTIMATORS = ("mixture", "read-time", "current")

#: Stopping is suggested when the rest holds no valuable sentence with at least this probability.
STOP_P_NONE = 0.9


@dataclass(frozen=True)
class ContinuousSettings:
    """The learner of continuous review (defaults chosen by the held-apart study in reports/feedback.md)."""

    target: str = "valuable"  # "gain" (0..3) or "valuable" (1 if gain >= 2)
    alpha: float = 1000.0  # ridge penalty (features standardised over the term)
    prior_weight: float = 0.25
    prior_half_life: float | None = 30.0  # labels after which the prior's weight is halved; None: fixed
    refit_every: int = 1  # refit after every k-th label (the sums are updated with every label)

    def __post_init__(self):
        if self.target not in ("gain", "valuable"):
            raise UsageError(f"continuous target must be 'gain' or 'valuable', not {self.target!r}")
        if not 0.0 <= self.prior_weight <= 1.0:
            raise UsageError(f"prior_weight must be in [0, 1], not {self.prior_weight}")
        if self.alpha <= 0:
            raise UsageError(f"alpha must be positive, not {self.alpha}")
        if self.prior_half_life is not None and self.prior_half_life <= 0:
            raise UsageError(f"prior_half_life must be positive, not {self.prior_half_life}")
        if self.refit_every < 1:
            raise UsageError(f"refit_every must be at least 1, not {self.refit_every}")

    def weight(self, n: int) -> float:
        """The prior's weight after ``n`` labels."""
        if self.prior_half_life is None:
            return self.prior_weight
        return self.prior_weight * self.prior_half_life / (self.prior_half_life + n)

    def to_dict(self) -> dict:
        return asdict(self)


class ContinuousModel:
    """The within-term learner of one term, updated label by label.

    ``X``: the term's feature matrix (rows = candidates); ``prior``: one prior score per
    candidate. :meth:`add` records labels; :meth:`scores` returns the blended scores (refitting
    when needed). Not thread-safe: callers serialise access.
    """

    def __init__(self, X: np.ndarray, prior: np.ndarray, settings: ContinuousSettings | None = None):
        X = np.asarray(X, dtype=np.float64)
        prior = np.asarray(prior, dtype=np.float64).reshape(-1)
        if X.ndim != 2 or X.shape[0] != prior.shape[0]:
            raise UsageError(f"continuous model: {X.shape[0]} feature rows for {prior.shape[0]} prior scores")
        if not np.all(np.isfinite(prior)):
            raise UsageError("continuous model: prior scores hold NaN or infinite values")
        self.settings = settings or ContinuousSettings()
        X = np.where(np.isfinite(X), X, 0.0)
        sd = X.std(axis=0)
        keep = sd > 1e-12
        self.Z = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
        self.z_prior = zscore(prior)
        d = self.Z.shape[1]
        self._sz = np.zeros(d)
        self._szz = np.zeros((d, d))
        self._szy = np.zeros(d)
        self._sy = 0.0
        self._syy = 0.0
        self.labels: dict[int, float] = {}
        self._fitted_at = -1
        self._own: np.ndarray | None = None

    def __len__(self) -> int:
        return self.Z.shape[0]

    def _y(self, gain: float) -> float:
        return float(gain >= VALUABLE_GAIN) if self.settings.target == "valuable" else float(gain)

    def _update(self, row: int, y: float, sign: float) -> None:
        z = self.Z[row]
        self._sz += sign * z
        self._szz += sign * np.outer(z, z)
        self._szy += sign * y * z
        self._sy += sign * y
        self._syy += sign * y * y

    def add(self, labels: Mapping[int, int | float]) -> None:
        """Record ``labels`` (candidate position -> gain 0..3); a relabelled candidate replaces its old label."""
        n = len(self)
        for row, gain in labels.items():
            if isinstance(row, bool) or not 0 <= int(row) < n:
                raise UsageError(f"continuous label for candidate {row!r}: not a candidate position (0..{n - 1})")
            if gain not in (0, 1, 2, 3):
                raise UsageError(f"continuous label for candidate {row}: gain {gain!r} is not one of 0, 1, 2, 3")
            row = int(row)
            if row in self.labels:
                self._update(row, self._y(self.labels[row]), -1.0)
            self.labels[row] = float(gain)
            self._update(row, self._y(float(gain)), 1.0)

    def remove(self, rows) -> None:
        """Forget the labels of ``rows`` (a label taken back)."""
        for row in rows:
            if row in self.labels:
                self._update(row, self._y(self.labels.pop(row)), -1.0)

    def set_labels(self, labels: Mapping[int, int | float]) -> None:
        """Make the recorded labels exactly ``labels`` (adds, replaces and forgets as needed)."""
        self.remove([r for r in list(self.labels) if r not in labels])
        changed = {r: g for r, g in labels.items() if self.labels.get(int(r)) != float(g)}
        if changed:
            self.add(changed)

    def _fit(self) -> np.ndarray | None:
        n = len(self.labels)
        if n < 2:
            return None
        mean_y = self._sy / n
        if self._syy / n - mean_y * mean_y <= 1e-12:  # every label the same: nothing to learn
            return None
        mz = self._sz / n
        A = self._szz - n * np.outer(mz, mz)
        b = self._szy - n * mz * mean_y
        A[np.diag_indices_from(A)] += self.settings.alpha
        from statinterp.learned.model import one_blas_thread

        with one_blas_thread():  # a 125 x 125 solve: threads on a loaded machine cost 30x more than they save
            coef = np.linalg.solve(A, b)
            return (self.Z - mz) @ coef

    def own_scores(self) -> np.ndarray | None:
        """The learner's scores (None while the labels do not differ); refitted when ``refit_every``
        labels were added since the last fit."""
        n = len(self.labels)
        if self._own is None or n - self._fitted_at >= self.settings.refit_every or n < self._fitted_at:
            self._own = self._fit()
            self._fitted_at = n
        return self._own

    def scores(self) -> np.ndarray:
        """One blended score per candidate (the standardised prior while nothing can be learned)."""
        own = self.own_scores()
        if own is None:
            return self.z_prior
        w = self.settings.weight(len(self.labels))
        return w * self.z_prior + (1.0 - w) * zscore(own)


def rerank_rest(order: np.ndarray, position: int, scores: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """``order`` with its first ``position`` entries kept and the rest sorted by ``scores``
    (descending; ties by ``tiebreak`` ascending)."""
    order = np.asarray(order)
    rest = order[position:]
    rest = rest[np.lexsort((np.asarray(tiebreak)[rest], -np.asarray(scores, dtype=np.float64)[rest]))]
    return np.concatenate([order[:position], rest])


@dataclass(frozen=True)
class Remaining:
    """An estimate of how many valuable (high- or certain-value) sentences the unread rest holds."""

    expected: float
    low: int  # 5th percentile
    high: int  # 95th percentile
    unread: int
    labelled: int
    level: float = 0.9
    p_none: float = 0.0  # the probability that the rest holds none

    @property
    def stop(self) -> bool:
        """True when the rest very likely holds no valuable sentence (probability of none >= 0.9)."""
        return self.p_none >= STOP_P_NONE

    def to_dict(self) -> dict:
        return {"expected": round(self.expected, 2), "low": self.low, "high": self.high, "unread": self.unread,
                "labelled": self.labelled, "level": self.level, "p_none": round(self.p_none, 3), "stop": self.stop}


def _logistic_fits(x: np.ndarray, y: np.ndarray, ridge: float = 1.0, iters: int = 30) -> np.ndarray:
    """Intercept and slope of a 1-D logistic regression per row of ``x``/``y`` (shape draws x n):
    Newton steps for all rows at once, a small ridge on the slope. Returns shape (draws, 2)."""
    k = y.sum(axis=1)
    a = np.log((k + 0.5) / (y.shape[1] - k + 0.5))
    b = np.zeros_like(a)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(a[:, None] + b[:, None] * x, -40, 40)))
        w = p * (1 - p)
        ga, gb = (y - p).sum(axis=1), ((y - p) * x).sum(axis=1) - ridge * b
        haa, hab, hbb = w.sum(axis=1) + 1e-9, (w * x).sum(axis=1), (w * x * x).sum(axis=1) + ridge
        det = haa * hbb - hab * hab
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a + da, b + db
        if np.max(np.abs(da) + np.abs(db)) < 1e-8:
            break
    return np.stack([a, b], axis=1)


def _curve_draws(x: np.ndarray, y: np.ndarray, xu: np.ndarray, draws: int,
                 rng: np.random.Generator) -> np.ndarray:
    """P(valuable) of each unread sentence (scores ``xu``) under ``draws`` bootstrapped logistic
    curves fitted to the read sentences' scores ``x`` and outcomes ``y``: shape (draws, len(xu))."""
    pick = rng.integers(0, len(x), (draws, len(x)))
    # two pseudo-sentences at the read sentences' mean score, one valuable and one not: with few
    # (or uniform) labels the curve stays finite instead of running to 0 or 1
    pseudo_x = np.full((draws, 2), x.mean())
    pseudo_y = np.tile([1.0, 0.0], (draws, 1))
    ab = _logistic_fits(np.hstack([x[pick], pseudo_x]), np.hstack([y[pick], pseudo_y]))
    return 1.0 / (1.0 + np.exp(-np.clip(ab[:, :1] + ab[:, 1:] * xu[None, :], -40, 40)))


def estimate_remaining(score: np.ndarray, labelled: np.ndarray, gains: np.ndarray, *,
                       score_when_read: np.ndarray | None = None, estimator: str = "mixture", draws: int = 300,
                       level: float = 0.9, seed: int = 0) -> Remaining:
    """How many valuable sentences the unread candidates hold (see the module docstring).

    ``score``: one current score per candidate; ``score_when_read``: for a read candidate, its score
    when it was read (None: the same as ``score``, as in a fixed order); ``labelled``: boolean mask
    of the read candidates; ``gains``: their gains (values elsewhere are ignored); ``estimator``:
    one of :data:`ESTIMATORS`; ``draws`` per curve.
    """
    if estimator not in ESTIMATORS:
        raise UsageError(f"unknown estimator {estimator!r}; valid: {', '.join(ESTIMATORS)}")
    score = np.asarray(score, dtype=np.float64)
    when_read = score if score_when_read is None else np.asarray(score_when_read, dtype=np.float64)
    labelled = np.asarray(labelled, dtype=bool)
    unread = ~labelled
    n_unread = int(unread.sum())
    n_lab = int(labelled.sum())
    if n_unread == 0:
        return Remaining(0.0, 0, 0, 0, n_lab, level, 1.0)
    y = (np.asarray(gains, dtype=np.float64)[labelled] >= VALUABLE_GAIN).astype(float)
    xu = score[unread]
    rng = np.random.default_rng(seed)
    if n_lab == 0:
        p = np.full((draws, n_unread), 0.5)
    else:
        fits = {"read-time": [when_read], "current": [score], "mixture": [when_read, score]}[estimator]
        p = np.vstack([_curve_draws(x[labelled], y, xu, draws, rng) for x in fits])
    totals = (rng.random(p.shape) < p).sum(axis=1)
    tail = (1.0 - level) / 2
    return Remaining(float(p.sum(axis=1).mean()), int(np.quantile(totals, tail)),
                     int(np.ceil(np.quantile(totals, 1.0 - tail))), n_unread, n_lab, level,
                     float(np.mean(np.exp(np.log1p(-np.minimum(p, 1 - 1e-12)).sum(axis=1)))))

POLICIES = ("static", "button-20", "continuous")

RECALLS = (0.5, 0.8, 1.0)

FOUND_AFTER = (10, 20, 50)

BUTTON_AT = 20


@dataclass(frozen=True)
class TermRun:
    """One term's inputs: its labelled candidates' features, prior scores, gains and ids."""

    key: str
    X: np.ndarray
    prior: np.ndarray
    gains: np.ndarray
    ids: np.ndarray

    @classmethod
    def from_index(cls, index, X: np.ndarray, prior: np.ndarray) -> TermRun:
        """The labelled candidates of ``index`` (features ``X``, prior scores ``prior``, one row per candidate)."""
        gains = index.gains
        known = ~np.isnan(gains)
        if not known.any():
            raise UsageError(f"term {index.key!r} has no labelled sentence: nothing to simulate")
        return cls(index.key, np.asarray(X)[known], np.asarray(prior, dtype=np.float64)[known], gains[known],
                   index.sentence_ids.astype(str)[known])


def reading_order(run: TermRun, policy: str, settings: ContinuousSettings | None = None, *,
                  estimate_every: int = 0, estimator: str = "mixture",
                  seed: int = 0) -> tuple[np.ndarray, list[dict]]:
    """The order in which the reviewer reads ``run``'s sentences under ``policy``, and the stopping
    estimates (``estimator``: one of :data:`statinterp.learned.feedback.ESTIMATORS`) made every
    ``estimate_every`` sentences read (0: none)."""
    if policy not in POLICIES:
        raise UsageError(f"unknown review policy {policy!r}; valid: {', '.join(POLICIES)}")
    settings = settings or ContinuousSettings()
    n = len(run.gains)
    model = ContinuousModel(run.X, run.prior, settings)
    scores = model.z_prior
    order = rerank_rest(np.arange(n), 0, scores, run.ids)
    read = np.zeros(n, dtype=bool)
    score_when_read = np.zeros(n)
    estimates: list[dict] = []
    valuable = run.gains >= VALUABLE_GAIN
    for pos in range(n):
        row = int(order[pos])
        read[row] = True
        score_when_read[row] = scores[row]
        model.add({row: int(run.gains[row])})
        done = pos + 1
        if done < n and (policy == "continuous" or (policy == "button-20" and done == BUTTON_AT)):
            scores = model.scores()
            order = rerank_rest(order, done, scores, run.ids)
        if estimate_every and done % estimate_every == 0 and done < n:
            est = estimate_remaining(scores, read, run.gains, score_when_read=np.where(read, score_when_read, scores),
                                     estimator=estimator, seed=seed + done)
            truth = int(valuable[~read].sum())
            estimates.append({"read": done, "true": truth, **est.to_dict(),
                              "covered": est.low <= truth <= est.high})
    return order, estimates


def simulate_term(run: TermRun, policy: str, settings: ContinuousSettings | None = None, *,
                  checkpoint_every: int = 10, estimator: str = "mixture", seed: int = 0) -> dict:
    """The reviewer's figures for one term under ``policy`` (see the module docstring)."""
    order, estimates = reading_order(run, policy, settings, estimate_every=checkpoint_every, estimator=estimator,
                                     seed=seed)
    n = len(order)
    valuable = (run.gains[order] >= VALUABLE_GAIN).astype(int)
    found = np.cumsum(valuable)
    total = int(found[-1])
    out: dict = {"term": run.key, "policy": policy, "sentences": n, "valuable": total}
    for r in RECALLS:
        tag = f"{round(r * 100)}"
        if total == 0:
            out[f"read_to_{tag}"] = None
            out[f"share_to_{tag}"] = None
            continue
        need = max(1, math.ceil(r * total - 1e-9))
        count = int(np.searchsorted(found, need) + 1)
        out[f"read_to_{tag}"] = count
        out[f"share_to_{tag}"] = round(count / n, 4)
    for k in FOUND_AFTER:
        out[f"found_after_{k}"] = int(found[min(k, n) - 1])
    out["checkpoints"] = len(estimates)
    out["coverage"] = round(float(np.mean([e["covered"] for e in estimates])), 4) if estimates else None
    first_stop = next((e for e in estimates if e["stop"]), None)
    out["stop_suggested_at"] = None if first_stop is None else first_stop["read"]
    out["recall_at_stop"] = (None if first_stop is None or total == 0
                             else round(int(found[first_stop["read"] - 1]) / total, 4))
    out["estimates"] = estimates
    return out


def macro(results: Sequence[Mapping]) -> dict:
    """Means over terms of each figure (terms without a value for a figure are left out of its mean)."""
    out: dict = {"terms": len(results)}
    keys = [f"{p}_to_{round(r * 100)}" for r in RECALLS for p in ("read", "share")]
    keys += [f"found_after_{k}" for k in FOUND_AFTER] + ["coverage", "recall_at_stop"]
    for key in keys:
        vals = [float(r[key]) for r in results if r.get(key) is not None]
        out[key] = round(float(np.mean(vals)), 4) if vals else None
    cps = sum(r["checkpoints"] for r in results)
    covered = sum(sum(e["covered"] for e in r["estimates"]) for r in results)
    out["checkpoints"] = cps
    out["coverage_pooled"] = round(covered / cps, 4) if cps else None
    return out


def term_runs(prepared, ranker) -> list[TermRun]:
    """One :class:`TermRun` per labelled term of ``prepared``, its prior ranked by ``ranker``."""
    from statinterp.progress import task

    indices = [ix for ix in prepared if ix.term.labelled]
    out = []
    with task(len(indices), "preparing terms for the simulation", unit="terms") as advance:
        for ix in indices:
            out.append(TermRun.from_index(ix, term_features(ix).X, ranker_scores(ranker, ix)))
            advance(1)
    return out


def simulate(runs: Sequence[TermRun], policies: Sequence[str] = POLICIES,
             settings: ContinuousSettings | None = None, *, checkpoint_every: int = 10,
             estimator: str = "mixture") -> dict:
    """Every policy on every term: ``{"settings", "policies": {policy: {"per_term", "macro"}},
    "against_static": {policy: {...}}}`` (field names: README, ``simulate-review``)."""
    from statinterp.progress import task

    settings = settings or ContinuousSettings()
    for p in policies:
        if p not in POLICIES:
            raise UsageError(f"unknown review policy {p!r}; valid: {', '.join(POLICIES)}")
    result: dict = {"settings": settings.to_dict(), "checkpoint_every": checkpoint_every, "estimator": estimator,
                    "policies": {}}
    with task(len(runs) * len(policies), "simulated reviews", unit="terms") as advance:
        for p in policies:
            per_term = []
            for run in runs:
                per_term.append(simulate_term(run, p, settings, checkpoint_every=checkpoint_every,
                                              estimator=estimator))
                advance(1)
            result["policies"][p] = {"per_term": per_term, "macro": macro(per_term)}
    if "static" in result["policies"]:
        base = {r["term"]: r for r in result["policies"]["static"]["per_term"]}
        result["against_static"] = {p: against(base, v["per_term"]) for p, v in result["policies"].items()
                                    if p != "static"}
    return result


def against(base: Mapping[str, Mapping], per_term: Sequence[Mapping], recall: int = 80) -> dict:
    """How many fewer sentences ``per_term`` reads than ``base`` (term -> static figures) to find
    ``recall`` % of the valuable sentences: ``reduction`` = 1 - mean(read) / mean(static read) over
    the terms with a valuable sentence, ``mean_term_reduction`` the mean of the per-term
    reductions, terms ``better`` / ``worse`` / ``same``."""
    key = f"read_to_{recall}"
    pairs = [(r[key], base[r["term"]][key]) for r in per_term if r[key] is not None]
    if not pairs:
        return {"terms": 0}
    mine, theirs = np.array([a for a, _ in pairs], float), np.array([b for _, b in pairs], float)
    return {"recall": recall, "terms": len(pairs), "read": round(float(mine.mean()), 2),
            "static_read": round(float(theirs.mean()), 2),
            "reduction": round(1.0 - float(mine.mean() / theirs.mean()), 4),
            "mean_term_reduction": round(float(np.mean(1.0 - mine / theirs)), 4),
            "better": int((mine < theirs).sum()), "worse": int((mine > theirs).sum()),
            "same": int((mine == theirs).sum())}


def format_table(result: Mapping) -> str:
    """``result`` of :func:`simulate` as plain-text tables (one per policy, then the comparison)."""
    cols = [("sentences", "n"), ("valuable", "valuable"), ("read_to_50", "50%"), ("read_to_80", "80%"),
            ("read_to_100", "100%"), ("share_to_80", "80% share"), ("found_after_10", "@10"),
            ("found_after_20", "@20"), ("found_after_50", "@50"), ("coverage", "coverage"),
            ("stop_suggested_at", "stop at")]

    def cell(v) -> str:
        if v is None:
            return "-"
        if isinstance(v, float) and not float(v).is_integer() or isinstance(v, float) and v < 1:
            return f"{v:.3f}"
        return str(int(v))

    lines = []
    for policy, res in result["policies"].items():
        rows = [[r["term"], *(cell(r.get(k)) for k, _ in cols)] for r in res["per_term"]]
        m = res["macro"]
        rows.append(["macro", "", "", *(cell(m.get(k)) for k, _ in cols[2:])])
        head = ["term", *(h for _, h in cols)]
        widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]
        lines.append(f"policy {policy}: sentences read to find 50/80/100 % of the high- and certain-value "
                     "sentences; valuable found after reading 10/20/50; stopping estimate coverage")
        for row in [head, *rows]:
            lines.append("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                                   for i, (x, w) in enumerate(zip(row, widths, strict=True))))
        lines.append("")
    for policy, cmp in result.get("against_static", {}).items():
        if cmp.get("terms"):
            lines.append(f"{policy} against static, to 80 %: {cmp['read']:.1f} vs {cmp['static_read']:.1f} sentences "
                         f"(mean over {cmp['terms']} terms), {cmp['reduction']:+.1%} fewer; per-term mean "
                         f"{cmp['mean_term_reduction']:+.1%}; better on {cmp['better']}, worse on {cmp['worse']}")
    return "\n".join(lines).rstrip() + "\n"
