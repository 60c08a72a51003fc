"""Cross-validation of the learned ranker on terms it was not trained on.

Its report (text, JSON, Markdown, importance chart) is written by :mod:`statinterp.app.report`.

Folds (:func:`make_folds`) split the labelled *terms*, never sentences: in leave-one-term-out
(``loo``) each term is held out once and the model is fitted on all the others; in the
fixed-fold mode (``folds``) the terms are shuffled with a seed and dealt into ``k`` groups,
each held out once. The held-out term's labels are used only to evaluate.

Features are extracted once per term (:func:`~statinterp.learned.features.extract_features`
reads no labels and standardises each term with its own candidates only), so this costs no
more than one extraction per term plus one fit per fold. Every learner asked for is fitted on
the same folds; their scikit-learn components are shared (the ensemble reuses the pairwise
and hgb fits of its fold).

Compared on the same terms: Random (its exact expected NDCG over random orders), TF-ISF-p and
the best compound ranker: every paper compound (``Tp-Tg``, ..., ``Wr-Tg-Nr``; those needing
word vectors when available) is evaluated and the one with the best macro NDCG@10 *on these
very terms* is kept, a choice that favours the baseline. Paired tests across terms
(:func:`~statinterp.evaluation.metrics.paired_test`: Wilcoxon signed-rank and paired t) compare the
learned ranker with each.

Feature importance: permutation importance on the held-out terms: the mean drop in NDCG@k
when one feature (or a whole family, rows shuffled together) is shuffled among the held-out
term's candidates, averaged over terms and ``repeats`` shuffles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from statinterp.errors import StatinterpError, UsageError
from statinterp.evaluation.metrics import (
    DEFAULT_METRICS,
    RANDOM_TIES_SUFFIX,
    Metric,
    evaluate_scores,
    macro_average,
    paired_test,
)
from statinterp.learned.features import FeatureMatrix, FeatureSettings, extract_features
from statinterp.learned.model import LEARNERS, LearnedRanker, common_feature_names, fit_matrices
from statinterp.progress import iterate

if TYPE_CHECKING:
    from statinterp.index.term_index import PreparedCorpus

__all__ = ["Fold", "CVResult", "make_folds", "cross_validate"]

BASELINES = ("Random", "TF-ISF-p")
TARGET_MARGIN = 0.15  # the target: macro NDCG@10 this much above the best compound
TARGET_NDCG100 = 0.90


@dataclass
class Fold:
    """One split: the model is fitted on ``train`` and evaluated on ``test`` (disjoint term sets)."""

    test: list[str]
    train: list[str]
    #: The terms the fitted model reports it was trained on (filled by :func:`cross_validate`).
    trained_on: list[str] = field(default_factory=list)


def make_folds(terms: Sequence[str], mode: str = "loo", n_folds: int = 5, seed: int = 0) -> list[Fold]:
    """Term folds: ``loo`` (each term alone) or ``folds`` (``n_folds`` shuffled groups)."""
    terms = list(terms)
    if len(terms) < 2:
        raise UsageError(f"cross-validation needs at least two labelled terms, not {len(terms)}")
    if mode == "loo":
        return [Fold([t], [u for u in terms if u != t]) for t in terms]
    if mode != "folds":
        raise UsageError(f"unknown cross-validation mode {mode!r}; use 'loo' or 'folds'")
    if not 2 <= n_folds <= len(terms):
        raise UsageError(f"--folds must lie between 2 and the number of labelled terms ({len(terms)}), not {n_folds}")
    order = list(np.random.default_rng(seed).permutation(len(terms)))
    groups = [[terms[i] for i in order[k::n_folds]] for k in range(n_folds)]
    return [Fold(sorted(g), [t for t in terms if t not in g]) for g in groups]


@dataclass
class CVResult:
    mode: str
    learners: list[str]
    settings: FeatureSettings
    folds: list[Fold]
    terms: list[str]
    sentences: dict[str, int]
    metrics: list[str]
    #: system -> term -> metric -> value (Random: its expectation over random orders).
    per_term: dict[str, dict[str, dict[str, float]]]
    macro: dict[str, dict[str, float]]
    best_compound: str | None
    compounds: dict[str, dict[str, float]]  # every compound evaluated: macro values
    #: (learned system, other system, metric) -> test
    tests: dict[tuple[str, str, str], Any]
    #: feature or family -> metric -> mean drop on held-out terms
    importance: dict[str, dict[str, float]] = field(default_factory=dict)
    family_importance: dict[str, dict[str, float]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    n_features: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def primary(self) -> str:
        return f"learned:{self.learners[0]}"

    def to_dict(self) -> dict:
        return {
            "mode": self.mode, "learners": self.learners, "features": self.settings.to_dict(),
            "n_features": self.n_features, "folds": [f.__dict__ for f in self.folds], "terms": self.terms,
            "sentences": self.sentences, "metrics": self.metrics, "macro": self.macro, "per_term": self.per_term,
            "best_compound": self.best_compound, "compounds": self.compounds,
            "tests": [{"learned": a, "other": b, "metric": m, "n": t.n, "mean_diff": t.mean_diff,
                       "wilcoxon_p": t.wilcoxon_p, "ttest_p": t.ttest_p} for (a, b, m), t in self.tests.items()],
            "importance": self.importance, "family_importance": self.family_importance,
            "skipped": self.skipped, "metadata": self.metadata,
        }


def _values(result: dict[str, float], method: str, metrics: Sequence[str]) -> dict[str, float]:
    if method == "Random":
        return {m: result[m + RANDOM_TIES_SUFFIX] for m in metrics}
    return {m: result[m] for m in metrics}


def _evaluate(scores: np.ndarray, index, metrics: Sequence[Metric]) -> dict[str, float]:
    return evaluate_scores(scores, index.gains, index.sentence_ids.astype(str), metrics, term=index.key)


def cross_validate(
    prepared: PreparedCorpus,
    settings: FeatureSettings | None = None,
    learners: Sequence[str] = ("ensemble",),
    mode: str = "loo",
    n_folds: int = 5,
    seed: int = 0,
    metrics: Sequence[Metric] = DEFAULT_METRICS,
    compounds: Sequence[str] | None = None,
    importance: bool = True,
    repeats: int = 3,
    show_progress: bool = False,
    features: dict[str, FeatureMatrix] | None = None,
) -> CVResult:
    """Cross-validate ``learners`` over the labelled terms of ``prepared`` (see the module docstring).

    ``features`` may hold precomputed matrices by term key (they are computed otherwise).
    """
    from statinterp.evaluation.ranking import rank
    from statinterp.rankers.grammar import build_method, paper_compounds

    settings = settings or FeatureSettings()
    learners = list(dict.fromkeys(learners))
    for ln in learners:
        if ln not in LEARNERS:
            raise UsageError(f"unknown learner {ln!r}; valid: {', '.join(LEARNERS)}")
    indices = {ix.key: ix for ix in prepared if ix.term.labelled}
    terms = sorted(indices)  # in name order: the folds and models do not depend on the loading order
    folds = make_folds(terms, mode, n_folds, seed)
    metric_names = [m.name for m in metrics]

    feats = dict(features or {})
    for key in iterate([t for t in terms if t not in feats], "Extracting features", show_progress):
        feats[key] = extract_features(indices[key], settings)
    names = common_feature_names([feats[t] for t in terms])
    feats = {t: feats[t].select(names) for t in terms}
    skipped: dict[str, str] = {}
    for t in terms:
        for k, v in feats[t].skipped.items():
            skipped.setdefault(k, v)

    per_term: dict[str, dict[str, dict[str, float]]] = {f"learned:{ln}": {} for ln in learners}
    fitted: list[tuple[Fold, dict[str, LearnedRanker]]] = []
    for fold in iterate(folds, "Fitting folds", show_progress):
        shared: dict[str, Any] = {}
        models = {}
        for ln in learners:
            model = fit_matrices([feats[t] for t in fold.train], [indices[t].gains for t in fold.train], fold.train,
                                 settings, ln, seed, shared=shared)
            models[ln] = model
            fold.trained_on = list(model.trained_on)
            leaked = set(model.trained_on) & set(fold.test)
            if leaked:  # cannot happen; a guard for the evaluation's validity
                raise RuntimeError(f"fold trained on its held-out term(s) {sorted(leaked)}")
            for t in fold.test:
                scores = model.score_matrix(feats[t].X)
                per_term[f"learned:{ln}"][t] = _values(_evaluate(scores, indices[t], metrics), "", metric_names)
        fitted.append((fold, models))

    # baselines and compounds on the same terms
    compound_names = list(compounds) if compounds is not None else paper_compounds()
    compound_macro: dict[str, dict[str, float]] = {}
    compound_terms: dict[str, dict[str, dict[str, float]]] = {}
    for name in iterate(list(BASELINES) + compound_names, "Evaluating baselines", show_progress):
        try:
            ranker = build_method(name)
            res = {t: _values(rank(ranker, indices[t]).evaluate(metrics), name, metric_names) for t in terms}
        except StatinterpError as exc:
            skipped[f"baseline {name}"] = str(exc)
            continue
        if name in BASELINES:
            per_term[name] = res
        else:
            compound_terms[name] = res
            compound_macro[name] = macro_average(res)
    best = None
    if compound_macro:
        best = max(compound_macro, key=lambda n: (compound_macro[n][metric_names[0]], n))
        per_term[best] = compound_terms[best]
    macro = {s: macro_average(v) for s, v in per_term.items()}

    tests = {}
    for ln in learners:
        a = f"learned:{ln}"
        for other in [s for s in per_term if not s.startswith("learned:")]:
            for m in metric_names:
                tests[(a, other, m)] = paired_test({t: per_term[a][t][m] for t in terms},
                                                   {t: per_term[other][t][m] for t in terms})
    result = CVResult(mode, learners, settings, folds, terms,
                      {t: int(np.sum(~np.isnan(indices[t].gains))) for t in terms}, metric_names, per_term, macro,
                      best, compound_macro, tests, skipped=skipped, n_features=len(names))
    if importance:
        result.importance, result.family_importance = _permutation_importance(
            fitted, feats, indices, learners[0], names, metrics, repeats, seed, show_progress)
    return result


def _permutation_importance(fitted, feats, indices, learner, names, metrics, repeats, seed, show_progress):
    """Mean drop of each metric on the held-out terms when a feature (family) is shuffled."""
    rng = np.random.default_rng(seed)
    families = [feats[next(iter(feats))].families[j] for j in range(len(names))]
    groups = {n: [j] for j, n in enumerate(names)}
    fam_groups = {f: [j for j, g in enumerate(families) if g == f] for f in dict.fromkeys(families)}
    drops: dict[str, list[np.ndarray]] = {k: [] for k in list(groups) + [f"family:{f}" for f in fam_groups]}
    jobs = [(fold, models[learner], t) for fold, models in fitted for t in fold.test]
    for _fold, model, t in iterate(jobs, "Permutation importance", show_progress):
        X = feats[t].X
        ix = indices[t]
        base = np.asarray([_evaluate(model.score_matrix(X), ix, metrics)[m.name] for m in metrics])
        for key, cols in list(groups.items()) + [(f"family:{f}", c) for f, c in fam_groups.items()]:
            total = np.zeros(len(metrics))
            for _ in range(repeats):
                Xp = X.copy()
                perm = rng.permutation(len(X))
                Xp[:, cols] = X[perm][:, cols]
                ev = _evaluate(model.score_matrix(Xp), ix, metrics)
                total += base - np.asarray([ev[m.name] for m in metrics])
            drops[key].append(total / repeats)
    names = [m.name for m in metrics]
    out = {k: dict(zip(names, np.mean(v, axis=0).tolist(), strict=False)) for k, v in drops.items() if v}
    feat = {k: v for k, v in out.items() if not k.startswith("family:")}
    fam = {k[len("family:"):]: v for k, v in out.items() if k.startswith("family:")}
    return feat, fam
