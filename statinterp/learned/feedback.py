"""Relevance feedback within one term: re-rank its candidates with a reviewer's labels.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

__all__ = ["DEFAULT_LEARNER", "DEFAULT_PRIOR_WEIGHT", "FEEDBACK_FEATURES", "FEEDBACK_LEARNERS", "FeedbackRanker",
           "feedback_scores", "fit_within_term", "ranker_scores", "term_features"]

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


# ============================================================================ features, cached per term


def term_features(index: TermIndex, settings: FeatureSettings | None = None) -> FeatureMatrix:
    """The feature matrix of ``index`` under ``settings`` (default :data:`FEEDBACK_FEATURES`),
    computed once per index object (:func:`statinterp.learned.features.features_of_index`)."""
    return features_of_index(index, settings or FEEDBACK_FEATURES)


# ============================================================================ the learner


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


# ============================================================================ as a ranker


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
