"""Continuous review of one term: re-rank the unread rest after every label, and estimate what is left.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from statinterp.errors import UsageError
from statinterp.learned.features import zscore

__all__ = ["ESTIMATORS", "STOP_P_NONE", "VALUABLE_GAIN", "ContinuousModel", "ContinuousSettings", "Remaining",
           "estimate_remaining", "rerank_rest"]

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


# ============================================================================ what is left


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
