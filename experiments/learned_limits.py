"""What limits the learned ranker, measured on the shared terms (issue 6).

Writes ``experiment-results/learned_limits.md`` (and ``.json``; the committed
``reports/learned_limits.md`` with ``--out reports/ --force``). Run from the project root::

    python -m experiments.learned_limits --data ../shared/data/statutory_interpretation   # ~35 min on 2 cores

Every measurement uses the default learner (``ensemble``) on the default feature families, fitted
as in ``experiments/learned_alternatives.py`` (:func:`experiments.learned_alternatives.fit_ensemble`),
and scores each held-out term's sentences; nDCG is that of the whole held-out term's ranking.

1. *Learning curve*: for each held-out term, the model is fitted on ``k`` training terms drawn at
   random from the other 13 (``--repeats`` draws per ``k``; each fold draws its own). The macro nDCG as a
   function of ``k`` shows how much more terms would buy; a straight line in ``ln k`` fitted to
   the larger half of the curve is extrapolated to the 41 training terms the full 42-term data set
   would give (an extrapolation, marked as such).
2. *Labels of the held-out term itself*: 5-fold cross-fitting inside each term: each fifth of the
   term's sentences is scored by a model that saw the labels of the other four fifths (folds keep
   each group of near-duplicates together, so no sentence's own copy is in training), either
   alone (``in-term``) or together with all the other terms (``others + in-term``). The gap
   between leave-one-term-out and these rows is what term-specific supervision adds, i.e. how
   much of the error comes from transferring across terms rather than from what the features can
   express at all.
3. *A few labels of the new term* (relevance feedback): ``n`` of the held-out term's sentences,
   drawn at random, are labelled and a model is fitted on those alone; the other sentences are
   ranked by the leave-one-term-out ensemble, by that in-term model, and by the mean of the two
   (per-term z-scores). nDCG is over the sentences *not* drawn, the same for the three rankings;
   terms with fewer than ``n`` + 10 labelled sentences are left out at that ``n``. A drawn
   sentence may have near-copies among the rest (as when a researcher labels a sentence quoted in
   many cases).
4. *Label consistency*: near-duplicate candidate pairs of each term (token-set Jaccard >= 0.9,
   :func:`statinterp.evaluation.ranking.similar_pairs`, the ``rank --dedupe`` index) and whether the
   annotators gave both copies the same label: a direct check of annotation noise.
"""

from __future__ import annotations

import argparse
import copy as _copy
import datetime as _dt
import math
import sys
from pathlib import Path

import numpy as np

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a file from any folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.common import (  # noqa: E402
    DEFAULT_DATA,
    Term,
    add_output_options,
    fit_ensemble,
    load_terms,
    log,
    out_options,
    output_path,
    shown_data,
)
from statinterp.provenance import provenance_lines, report_json, run_provenance  # noqa: E402

SIZES = (1, 3, 5, 7, 9, 11, 13)
FULL_DATA_SET_TRAINING_TERMS = 41
IN_TERM_FOLDS = 5
FEEDBACK_SIZES = (10, 20, 40)
FEEDBACK_MIN_REST = 10


def masked(term: Term, hidden: np.ndarray) -> Term:
    """A shallow copy of ``term`` whose rows ``hidden`` are unlabelled (their gains NaN), for training."""
    copy = _copy.copy(term)
    copy.gains = term.gains.copy()
    copy.gains[hidden] = np.nan
    copy.labelled = ~np.isnan(copy.gains)
    return copy


def cross_fitted(term: Term, groups: np.ndarray, others: list[Term], fit) -> np.ndarray:
    """Scores of ``term``'s rows, each fold by a model trained on the other folds' labels (+ ``others``).

    Folds never split a group (``groups[i]``: the near-duplicate group of row ``i``), so no test
    sentence has a copy of itself, with its label, in training.
    """
    from sklearn.model_selection import GroupKFold

    rows = np.flatnonzero(term.labelled)
    scores = np.full(len(term.gains), np.nan)
    for _, test in GroupKFold(IN_TERM_FOLDS).split(rows, groups=groups[rows]):
        hidden = rows[test]
        scores[hidden] = fit(others + [masked(term, hidden)], term)[hidden]
    return scores


def near_duplicate_groups(n: int, pairs) -> np.ndarray:
    """Connected components of the near-duplicate pairs (i, j, J) over rows 0..n-1: one group id per row."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    i = np.array([p[0] for p in pairs], dtype=np.int64)
    j = np.array([p[1] for p in pairs], dtype=np.int64)
    graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def feedback_scores(term: Term, shown: np.ndarray, fit) -> np.ndarray:
    """Scores of ``term``'s rows by a model fitted on the labels of rows ``shown`` only (all zero if they agree)."""
    rest = np.setdiff1d(np.flatnonzero(term.labelled), shown)
    train = masked(term, rest)
    if np.ptp(train.gains[train.labelled]) == 0:
        return np.zeros(len(term.gains))
    return fit([train], term)


def log_linear_fit(sizes, values) -> tuple[float, float]:
    """(a, b) of the least-squares line value = a + b ln(size)."""
    b, a = np.polyfit(np.log(np.asarray(sizes, dtype=np.float64)), np.asarray(values, dtype=np.float64), 1)
    return float(a), float(b)


def label_consistency(gains: np.ndarray, pairs) -> dict[str, int]:
    """Labelled near-duplicate pairs, how many share their label, and the exact copies among them."""
    pairs = [(i, j, jac) for i, j, jac in pairs if not (math.isnan(gains[i]) or math.isnan(gains[j]))]
    return {
        "pairs": len(pairs),
        "same_label": sum(int(gains[i] == gains[j]) for i, j, _ in pairs),
        "gain_differs_by_2_or_more": sum(int(abs(gains[i] - gains[j]) >= 2) for i, j, _ in pairs),
        "identical_token_sets": sum(int(jac == 1.0) for *_, jac in pairs),
    }


def _mean(runs: list[dict[str, float]], metrics, reduce=np.mean) -> dict[str, float]:
    return {m: float(reduce([r[m] for r in runs])) for m in metrics}


def learning_curve(terms: dict[str, Term], folds, sizes, repeats: int, fit, macro, rng):
    """Macro metrics per training-term count k (one dict per draw), and the full leave-one-term-out scores."""
    n_others = len(terms) - 1
    curve: dict[int, list[dict[str, float]]] = {}
    loo_scores: dict[str, np.ndarray] = {}
    for k in sizes:
        curve[k] = []
        for rep in range(1 if k == n_others else repeats):
            scores = {}
            for fold in folds:
                (test_key,) = fold.test
                pool = list(fold.train)
                chosen = pool if k == n_others else [pool[i] for i in sorted(rng.choice(len(pool), k, replace=False))]
                scores[test_key] = fit([terms[c] for c in chosen], terms[test_key])
            curve[k].append(macro(scores))
            if k == n_others:
                loo_scores = scores
            log(f"learning curve k={k} draw {rep + 1}: " + ", ".join(f"{m} {v:.4f}" for m, v in curve[k][-1].items()))
    return curve, loo_scores


def in_term_rows(terms: dict[str, Term], folds, duplicates, fit, macro) -> dict[str, dict[str, float]]:
    """Macro metrics of in-term cross-fitting, without and with the other terms in training."""
    rows: dict[str, dict[str, float]] = {}
    for label, with_others in (("in-term", False), ("others + in-term", True)):
        scores = {}
        for fold in folds:
            (test_key,) = fold.test
            others = [terms[c] for c in fold.train] if with_others else []
            groups = near_duplicate_groups(len(terms[test_key].gains), duplicates[test_key])
            scores[test_key] = cross_fitted(terms[test_key], groups, others, fit)
        rows[label] = macro(scores)
        log(f"{label}: " + ", ".join(f"{m} {v:.4f}" for m, v in rows[label].items()))
    return rows


def feedback_rows(terms: dict[str, Term], loo_scores, repeats: int, fit, metrics, rng) -> dict[int, dict]:
    """Per n labels: the terms with enough sentences and the macro metrics of the three rankings."""
    from statinterp.evaluation.metrics import evaluate_scores, macro_average
    from statinterp.learned.features import zscore

    names = [m.name for m in metrics]
    feedback: dict[int, dict] = {}
    for n in FEEDBACK_SIZES:
        eligible = [k for k in terms if terms[k].labelled.sum() >= n + FEEDBACK_MIN_REST]
        if not eligible:
            continue
        runs: dict[str, list[dict[str, float]]] = {"ensemble (other terms)": [], "in-term (n labels)": [],
                                                    "ensemble + in-term": []}
        for _ in range(repeats):
            per_system: dict[str, dict] = {s: {} for s in runs}
            for k in eligible:
                term = terms[k]
                shown = rng.choice(np.flatnonzero(term.labelled), n, replace=False)
                rest = np.setdiff1d(np.flatnonzero(term.labelled), shown)
                own = feedback_scores(term, shown, fit)
                for system, scores in (("ensemble (other terms)", loo_scores[k]), ("in-term (n labels)", own),
                                       ("ensemble + in-term", zscore(loo_scores[k]) + zscore(own))):
                    per_system[system][k] = evaluate_scores(scores[rest], term.gains[rest], term.ids[rest],
                                                            metrics, term=k)
            for system in runs:
                runs[system].append(macro_average(per_system[system]))
        feedback[n] = {"terms": eligible, "macro": {s: _mean(v, names) for s, v in runs.items()}}
        log(f"feedback n={n}: " + "; ".join(f"{s} {v[names[0]]:.4f}" for s, v in feedback[n]["macro"].items()))
    return feedback


def report_lines(command: str, terms: dict[str, Term], sizes, repeats: int, curve, in_term, feedback,
                 consistency, threshold: float, metric_names) -> tuple[list[str], dict]:
    """The Markdown report and the learning curve's extrapolation."""
    n_others = len(terms) - 1
    m10, m100 = metric_names[:2]
    mean = {k: _mean(runs, metric_names) for k, runs in curve.items()}
    spread = {k: _mean(runs, metric_names, np.std) for k, runs in curve.items()}
    upper = sizes[len(sizes) // 2:] if len(sizes) >= 4 else sizes
    extrapolated = {}
    if len(upper) >= 2:
        for m in metric_names:
            a, b = log_linear_fit(upper, [mean[k][m] for k in upper])
            extrapolated[m] = {"a": a, "b": b, "at": a + b * math.log(FULL_DATA_SET_TRAINING_TERMS)}

    lines = ["# What limits the learned ranker (issue 6)", "", "Produced by:", "", "```", command, "```", "",
             f"- Date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M UTC}; {len(terms)} labelled terms, "
             f"{sum(int(t.labelled.sum()) for t in terms.values())} labelled sentences; default learner (`ensemble`) "
             "and feature families throughout. What each measurement is: `experiments/learned_limits.py` "
             "(module docstring).", *provenance_lines(run_provenance(command)), "",
             "## 1. More training terms", "",
             f"Each held-out term scored by a model fitted on k of the other {n_others} terms drawn at random "
             f"({repeats} draws per k; k = {n_others} is the leave-one-term-out result of `reports/learned.md`).",
             "", "| Training terms k | nDCG@10 | ± sd over draws | nDCG@100 | ± sd over draws |",
             "|---:|---:|---:|---:|---:|"]
    for k in sizes:
        lines.append(f"| {k} | " + " | ".join(f"{mean[k][m]:.4f} | {spread[k][m]:.4f}" for m in metric_names) + " |")
    if extrapolated:
        lines += ["", f"A line in ln k through k = {', '.join(map(str, upper))} reaches, extrapolated to the "
                  f"{FULL_DATA_SET_TRAINING_TERMS} training terms of the full 42-term data set: "
                  + ", ".join(f"{m} ≈ {extrapolated[m]['at']:.3f} (slope {extrapolated[m]['b']:+.3f} per unit of ln k)"
                              for m in metric_names)
                  + f". An extrapolation from {len(terms)} terms, not a measurement."]
    lines += ["",
              "## 2. Labels of the held-out term itself", "",
              f"{IN_TERM_FOLDS}-fold cross-fitting inside each term (each fifth of a term's sentences scored by a "
              "model that saw the labels of the other four fifths; near-duplicate groups never split across folds); "
              "nDCG over the whole term's ranking.", "",
              "| Training data | nDCG@10 | nDCG@100 |", "|---|---:|---:|",
              f"| other terms only (leave-one-term-out) | {mean[n_others][m10]:.4f} | {mean[n_others][m100]:.4f} |"]
    for label, values in in_term.items():
        lines.append(f"| {label} | {values[m10]:.4f} | {values[m100]:.4f} |")
    lines += ["", "## 3. A few labels of the new term", "",
              f"n sentences of the held-out term drawn at random and labelled ({repeats} draws); nDCG over "
              "the term's other sentences, the same for every row. *in-term*: the default learner fitted on the n "
              "labels alone; *ensemble + in-term*: mean of the two rankings' per-term z-scores.", "",
              "| n labels | terms | ranking | nDCG@10 | nDCG@100 |", "|---:|---:|---|---:|---:|"]
    for n, result in feedback.items():
        for system, values in result["macro"].items():
            lines.append(f"| {n} | {len(result['terms'])} | {system} | {values[m10]:.4f} | {values[m100]:.4f} |")
    total = {f: sum(v[f] for v in consistency.values()) for f in next(iter(consistency.values()))}
    lines += ["", "## 4. Do near-copies carry the same label?", "",
              f"Candidate pairs of the same term with token-set Jaccard ≥ {threshold} (the `rank --dedupe` "
              "test), both labelled.", "",
              "| Term | near-duplicate pairs | same label | gains 2+ apart | identical token sets |",
              "|---|---:|---:|---:|---:|"]
    for k, v in list(consistency.items()) + [("**all terms**", total)]:
        lines.append(f"| {k} | {v['pairs']} | {v['same_label']} | {v['gain_differs_by_2_or_more']} "
                     f"| {v['identical_token_sets']} |")
    return lines, extrapolated


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--cache-dir", type=Path, default=None, help="statinterp cache folder (default: statinterp's)")
    ap.add_argument("--repeats", type=int, default=3, help="random draws of the training terms per size (default 3)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="training-term counts of the learning curve")
    add_output_options(ap, "learned_limits")
    args = ap.parse_args(argv)
    out = output_path(args, "learned_limits")

    from statinterp.cache import files as atomic
    from statinterp.evaluation.metrics import DEFAULT_METRICS, evaluate_scores, macro_average
    from statinterp.evaluation.ranking import DEFAULT_THRESHOLD, similar_pairs, token_sets
    from statinterp.learned.crossval import make_folds
    from statinterp.learned.features import FeatureSettings

    settings = FeatureSettings()
    prepared, terms, (names, families) = load_terms(args.data, args.cache_dir, settings)
    duplicates = {index.key: similar_pairs(token_sets(index), DEFAULT_THRESHOLD)
                  for index in prepared if index.key in terms}
    folds = make_folds(list(terms), "loo")
    n_others = len(terms) - 1
    sizes = sorted({min(int(s), n_others) for s in args.sizes.split(",") if s.strip()} | {n_others})
    metric_names = [m.name for m in DEFAULT_METRICS]

    def fit(train, test):
        return fit_ensemble(train, test, settings, names, families)

    def macro(scores: dict[str, np.ndarray]) -> dict[str, float]:
        return macro_average({k: evaluate_scores(v, terms[k].gains, terms[k].ids, DEFAULT_METRICS, term=k)
                              for k, v in scores.items()})

    # Separate random streams, so that changing --sizes does not change the feedback draws.
    curve_rng, feedback_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(0).spawn(2))
    curve, loo_scores = learning_curve(terms, folds, sizes, args.repeats, fit, macro, curve_rng)
    in_term = in_term_rows(terms, folds, duplicates, fit, macro)
    feedback = feedback_rows(terms, loo_scores, args.repeats, fit, DEFAULT_METRICS, feedback_rng)
    consistency = {k: label_consistency(terms[k].gains, duplicates[k]) for k in terms}

    data = shown_data(args.data)
    command = f"python -m experiments.learned_limits --data {data}"
    if args.repeats != 3 or sizes != list(SIZES):
        command += f" --repeats {args.repeats} --sizes {','.join(map(str, sizes))}"
    command += out_options(args, out)
    lines, extrapolated = report_lines(command, terms, sizes, args.repeats, curve, in_term, feedback, consistency,
                                       DEFAULT_THRESHOLD, metric_names)
    atomic.write_text(out, "\n".join(lines) + "\n", force=True)
    atomic.write_text(out.with_suffix(".json"), report_json(
        {"learning_curve": {str(k): v for k, v in curve.items()}, "extrapolated": extrapolated,
         "in_term": in_term, "feedback": {str(n): v for n, v in feedback.items()},
         "label_consistency": consistency, "repeats": args.repeats, "provenance": run_provenance(command)},
        indent=2), force=True)
    log(f"wrote {out}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
