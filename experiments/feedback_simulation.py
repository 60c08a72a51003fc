"""A simulated reviewer on the shared terms: which relevance-feedback learner and blend to ship.

Run from the project root::

    python -m experiments.feedback_simulation --data ../shared/data/statutory_interpretation

Writes ``reports/feedback.md`` and ``reports/feedback.json`` (the command, the library versions,
every per-term figure).

**The prior.** Each term is first ranked by a model that never saw it: the default learner
(``ensemble``) trained on the other 13 terms with the feature families that need no word
vectors (:data:`statinterp.learned.feedback.FEEDBACK_FEATURES`, the features of the shipped
default model) -- leave-one-term-out. Section 1 of the report compares that prior with TF-ISF-p
and Tp-Nr on the same folds (this is also the measurement of the shipped default model).

**The reviewer.** Starting from the prior's ranking, the reviewer reads the top ``--batch``
(default 10) sentences not yet labelled, reveals their labels from the data set, and the term is
re-ranked by :func:`statinterp.learned.feedback.feedback_scores` with every label so far; repeat
until 40 labels. After 10, 20 and 40 labels the ranking of the *unlabelled rest* is scored
(nDCG@10, nDCG@100) against the prior's ranking of the *same* rest (no feedback). Paired tests
across terms: :func:`statinterp.evaluation.metrics.paired_test` (Wilcoxon signed-rank and t).

**Choosing the default.** Every candidate (learner ridge / pairwise / hgb / ensemble x prior
weight) is simulated on every term. *Chosen on all terms*: the candidate with the best macro
gain in nDCG@10 at 20 labels over the 14 terms -- optimistic, since the same terms choose and
measure. *Nested leave-one-term-out*: for each term, the candidate that is best on the other 13
terms is applied to it; its macro figures are an honest estimate of the selection procedure.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import time
from pathlib import Path

import numpy as np

from experiments.common import DEFAULT_DATA, ROOT, log
from statinterp.provenance import provenance_lines, run_provenance

SIZES = (10, 20, 40)
LEARNERS = ("ridge", "pairwise", "hgb", "ensemble")
PRIOR_WEIGHTS = (0.25, 0.5, 0.75)
CHOICE_SIZE = 20
#: A term is scored at n labels only if at least this many labelled sentences are left.
MIN_REST = 10
CHOICE_METRIC = "nDCG@10"
BASELINES = ("TF-ISF-p", "Tp-Nr")


def load_terms(data: Path, cache_dir: Path | None):
    """The prepared labelled terms and their feedback features (computed once, in memory)."""
    from statinterp.learned.feedback import term_features
    from statinterp.workflow import open_corpus, prepare_corpus

    prepared = prepare_corpus(open_corpus(data), cache_dir=cache_dir, show_progress=True)
    indices = {ix.key: ix for ix in prepared if ix.term.labelled}
    features = {}
    for key, ix in indices.items():
        t = time.perf_counter()
        features[key] = term_features(ix)
        log(f"features of {key}: {len(ix)} candidates, {features[key].X.shape[1]} features, "
            f"{time.perf_counter() - t:.1f} s")
    return indices, features


def loo_priors(indices, features, seed: int = 0) -> dict[str, np.ndarray]:
    """Each term's scores by the ensemble trained on the other terms (same features)."""
    from statinterp.learned.feedback import FEEDBACK_FEATURES
    from statinterp.learned.model import fit_matrices

    out = {}
    for key in indices:
        others = [k for k in indices if k != key]
        t = time.perf_counter()
        model = fit_matrices([features[k] for k in others], [indices[k].gains for k in others], others,
                             FEEDBACK_FEATURES, "ensemble", seed)
        out[key] = model.score_matrix(features[key].select(model.feature_names).X)
        log(f"leave-one-term-out prior for {key}: {time.perf_counter() - t:.1f} s")
    return out


def cached_priors(path: Path | None, indices, features) -> dict[str, np.ndarray]:
    """:func:`loo_priors`, read from ``path`` (an .npz) when it holds the same terms, candidate
    counts and statinterp version; written there otherwise."""
    from statinterp import __version__

    stamp = json.dumps({"version": __version__, "terms": {k: len(ix) for k, ix in indices.items()}}, sort_keys=True)
    if path is not None and path.is_file():
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["stamp"]) == stamp:
                log(f"leave-one-term-out priors read from {path}")
                return {k: saved[k] for k in indices}
    priors = loo_priors(indices, features)
    if path is not None:
        import io

        from statinterp.cache import atomic

        buf = io.BytesIO()
        np.savez(buf, stamp=np.array(stamp), **priors)
        atomic.write_bytes(path, buf.getvalue(), force=True)
    return priors


def simulate(index, fm, prior: np.ndarray, learner: str, prior_weight: float, batch: int, sizes, metrics):
    """The reviewer loop on one term: per size n, metrics of the rest with and without feedback."""
    from statinterp.evaluation.metrics import evaluate_scores, rank_order
    from statinterp.learned.feedback import feedback_scores

    gains = index.gains
    ids = index.sentence_ids.astype(str)
    known = ~np.isnan(gains)
    shown: list[int] = []
    seen = np.zeros(len(gains), dtype=bool)
    scores = prior
    out = {}
    while len(shown) < max(sizes):
        order = rank_order(scores, ids)
        fresh = [int(i) for i in order if known[i] and not seen[i]][:batch]
        if not fresh:
            break
        shown += fresh
        seen[fresh] = True
        labels = {i: int(gains[i]) for i in shown}
        scores = feedback_scores(index, prior, labels, learner=learner, prior_weight=prior_weight, features=fm)
        n = len(shown)
        if n in sizes:
            rest = known & ~seen
            if rest.sum() < MIN_REST:
                break
            if not np.nanmax(gains[rest]) > 0:  # no relevant sentence left: nDCG undefined
                continue
            out[n] = {
                "feedback": evaluate_scores(scores[rest], gains[rest], ids[rest], metrics, term=index.key),
                "prior": evaluate_scores(prior[rest], gains[rest], ids[rest], metrics, term=index.key),
                "rest": int(rest.sum()),
            }
    return out


def button_click_timing(indices, features, priors) -> dict:
    """Seconds of one re-rank with 20 labels on the term with the most candidates: features already
    cached (the button in the browser), and the feature extraction of a fresh index of the term."""
    from statinterp.learned.feedback import DEFAULT_LEARNER, DEFAULT_PRIOR_WEIGHT, feedback_scores, term_features

    key = max(indices, key=lambda k: len(indices[k]))
    ix = indices[key]
    known = np.flatnonzero(~np.isnan(ix.gains))[:20]
    labels = {int(i): int(ix.gains[i]) for i in known}
    t = time.perf_counter()
    feedback_scores(ix, priors[key], labels, learner=DEFAULT_LEARNER, prior_weight=DEFAULT_PRIOR_WEIGHT,
                    features=term_features(ix))
    cached = time.perf_counter() - t
    import copy

    fresh = copy.copy(ix)  # a new object: nothing cached for it
    t = time.perf_counter()
    term_features(fresh)
    extraction = time.perf_counter() - t
    return {"term": key, "candidates": len(ix), "labels": len(labels), "rerank_s": cached,
            "feature_extraction_s": extraction}


def _delta(run: dict, n: int, metric: str) -> float:
    return run[n]["feedback"][metric] - run[n]["prior"][metric]


def config_name(learner: str, w: float) -> str:
    return f"{learner}, prior weight {w:g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="the folder of term zips (default: ../shared/data/statutory_interpretation)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="statinterp cache folder (default: statinterp's)")
    ap.add_argument("--batch", type=int, default=10, help="labels revealed per round (default 10)")
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "feedback.md")
    ap.add_argument("--priors", type=Path, default=None,
                    help="keep the leave-one-term-out priors in this .npz file and reuse them (same terms, same "
                         "statinterp) on the next run")
    args = ap.parse_args(argv)
    started = time.perf_counter()

    from statinterp.cache import atomic
    from statinterp.evaluation.metrics import (
        DEFAULT_METRICS,
        evaluate_scores,
        macro_average,
        paired_test,
    )
    from statinterp.learned.feedback import DEFAULT_LEARNER, DEFAULT_PRIOR_WEIGHT
    from statinterp.rankers.grammar import build_method

    metric_names = [m.name for m in DEFAULT_METRICS]
    indices, features = load_terms(args.data, args.cache_dir)
    terms = list(indices)
    priors = cached_priors(args.priors, indices, features)

    # ---- 1. the prior (= the shipped default model's recipe) against the paper's methods, same folds
    full: dict[str, dict[str, dict[str, float]]] = {"learned (no vectors), leave-one-term-out": {}}
    for key in terms:
        ix = indices[key]
        full["learned (no vectors), leave-one-term-out"][key] = evaluate_scores(
            priors[key], ix.gains, ix.sentence_ids.astype(str), DEFAULT_METRICS, term=key)
    for name in BASELINES:
        ranker = build_method(name)
        full[name] = {k: evaluate_scores(ranker.score(indices[k]), indices[k].gains,
                                         indices[k].sentence_ids.astype(str), DEFAULT_METRICS, term=k) for k in terms}
    full_macro = {s: macro_average(v) for s, v in full.items()}
    learned_key = "learned (no vectors), leave-one-term-out"
    full_tests = {b: {m: paired_test({k: full[learned_key][k][m] for k in terms},
                                     {k: full[b][k][m] for k in terms}).__dict__ for m in metric_names}
                  for b in BASELINES}

    # ---- 2. the reviewer simulation
    configs = [(lr, w) for lr in LEARNERS for w in PRIOR_WEIGHTS]
    runs: dict[str, dict[str, dict]] = {}
    for lr, w in configs:
        name = config_name(lr, w)
        t = time.perf_counter()
        runs[name] = {k: simulate(indices[k], features[k], priors[k], lr, w, args.batch, SIZES, DEFAULT_METRICS)
                      for k in terms}
        log(f"simulated {name}: {time.perf_counter() - t:.1f} s")
    # the default with a method as the prior (as with `rank -m TF-ISF-p --feedback`)
    tfisf = {k: build_method("TF-ISF-p").score(indices[k]) for k in terms}
    default_name = config_name(DEFAULT_LEARNER, DEFAULT_PRIOR_WEIGHT)
    method_prior_run = {k: simulate(indices[k], features[k], tfisf[k], DEFAULT_LEARNER, DEFAULT_PRIOR_WEIGHT,
                                    args.batch, SIZES, DEFAULT_METRICS) for k in terms}

    def summary(run: dict[str, dict], n: int) -> dict:
        have = [k for k in terms if n in run[k]]
        res = {"terms": len(have)}
        for m in metric_names:
            fbk = {k: run[k][n]["feedback"][m] for k in have}
            pri = {k: run[k][n]["prior"][m] for k in have}
            test = paired_test(fbk, pri)
            res[m] = {"feedback": float(np.mean(list(fbk.values()))), "prior": float(np.mean(list(pri.values()))),
                      "gain": test.mean_diff, "wilcoxon_p": test.wilcoxon_p, "ttest_p": test.ttest_p,
                      "terms_better": sum(fbk[k] > pri[k] for k in have),
                      "terms_worse": sum(fbk[k] < pri[k] for k in have)}
        return res

    table = {name: {n: summary(run, n) for n in SIZES} for name, run in runs.items()}

    def choice_score(name: str, among) -> float:
        return float(np.mean([_delta(runs[name][k], CHOICE_SIZE, CHOICE_METRIC) for k in among
                              if CHOICE_SIZE in runs[name][k]]))

    best_all = max(runs, key=lambda c: choice_score(c, terms))
    nested_pick = {k: max(runs, key=lambda c: choice_score(c, [u for u in terms if u != k])) for k in terms}
    nested_run = {k: runs[nested_pick[k]][k] for k in terms}
    nested = {n: summary(nested_run, n) for n in SIZES}
    default_summary = table[default_name]
    method_prior = {n: summary(method_prior_run, n) for n in SIZES}
    click = button_click_timing(indices, features, priors)
    elapsed = time.perf_counter() - started

    # ---- report
    data_arg = str(args.data)
    if args.data.resolve() == DEFAULT_DATA.resolve() or args.data.resolve().parts[-3:] == (
            "shared", "data", "statutory_interpretation"):
        data_arg = "../shared/data/statutory_interpretation"
    command = f"python -m experiments.feedback_simulation --data {data_arg}"
    if args.batch != 10:
        command += f" --batch {args.batch}"
    provenance = run_provenance(command)
    m10, m100 = metric_names[:2]
    lines = ["# Relevance feedback within a term: a simulated reviewer (issue 18)", "", "Produced by:", "", "```",
             command, "```", "",
             f"- Date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M UTC}; run time {elapsed / 60:.1f} min; "
             f"{len(terms)} labelled terms, {sum(int((~np.isnan(indices[k].gains)).sum()) for k in terms)} labelled "
             "sentences.",
             *provenance_lines(provenance),
             "- What is measured and how: `experiments/feedback_simulation.py` (module docstring). Features: every "
             "default family except word vectors (`statinterp.learned.feedback.FEEDBACK_FEATURES`), "
             f"{next(iter(features.values())).X.shape[1]} columns.", "",
             "## 1. The prior: the no-vector learned model, leave-one-term-out", "",
             "Each term ranked by the `ensemble` learner trained on the other 13 terms with the no-vector features "
             "(the recipe of the shipped default model, `data/models/default.statinterp-model`), against the "
             "paper's methods on the same terms; nDCG of the whole term.", "",
             f"| ranking | {m10} | {m100} |", "|---|---:|---:|"]
    for s, v in full_macro.items():
        lines.append(f"| {s} | {v[m10]:.4f} | {v[m100]:.4f} |")
    lines += ["", "Paired tests across the 14 terms (learned minus method):", "",
              "| against | metric | mean difference | Wilcoxon p | t-test p |", "|---|---|---:|---:|---:|"]
    for b, tests in full_tests.items():
        for m, t in tests.items():
            lines.append(f"| {b} | {m} | {t['mean_diff']:+.4f} | {t['wilcoxon_p']:.4f} | {t['ttest_p']:.4f} |")
    lines += ["", "## 2. The reviewer simulation", "",
              f"The reviewer labels the top {args.batch} unlabelled sentences of the current ranking, the term is "
              "re-ranked with all labels so far, and so on. *feedback*: nDCG of the unlabelled rest under the "
              "re-ranking; *prior*: the prior's ranking of the same rest; *gain* = feedback − prior (macro); "
              "better / worse: terms; p: Wilcoxon signed-rank across terms. A term counts at n labels if at least "
              f"{MIN_REST} labelled sentences are left and one of them has value (else nDCG is undefined).", "",
              f"### The default: {default_name}", "",
              "| labels | terms | metric | prior | feedback | gain | better / worse | Wilcoxon p | t-test p |",
              "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]

    def rows(summ):
        out = []
        for n, r in summ.items():
            for m in metric_names:
                v = r[m]
                out.append(f"| {n} | {r['terms']} | {m} | {v['prior']:.4f} | {v['feedback']:.4f} | {v['gain']:+.4f} "
                           f"| {v['terms_better']} / {v['terms_worse']} | {v['wilcoxon_p']:.4f} | {v['ttest_p']:.4f} |")
        return out

    lines += rows(default_summary)
    lines += ["", f"### Every candidate ({CHOICE_METRIC} gain over the prior, macro; better / worse terms)", "",
              "| learner, prior weight | " + " | ".join(f"{n} labels" for n in SIZES) + " |",
              "|---|" + "---:|" * len(SIZES)]
    for name, summ in table.items():
        mark = " **(chosen on all terms)**" if name == best_all else ""
        lines.append(f"| {name}{mark} | " + " | ".join(
            f"{summ[n][CHOICE_METRIC]['gain']:+.4f} ({summ[n][CHOICE_METRIC]['terms_better']} / "
            f"{summ[n][CHOICE_METRIC]['terms_worse']})" for n in SIZES) + " |")
    picks = {c: sum(1 for p in nested_pick.values() if p == c) for c in set(nested_pick.values())}
    lines += ["", "### Nested leave-one-term-out choice", "",
              f"For each term, the candidate with the best macro {CHOICE_METRIC} gain at {CHOICE_SIZE} labels on the "
              "other 13 terms. Picked: " + "; ".join(f"{c} ({n} term{'s' if n > 1 else ''})"
                                                     for c, n in sorted(picks.items(), key=lambda x: -x[1])) + ".", "",
              "| labels | terms | metric | prior | feedback | gain | better / worse | Wilcoxon p | t-test p |",
              "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines += rows(nested)
    lines += ["", "### The default with TF-ISF-p as the prior (`rank -m TF-ISF-p --feedback`)", "",
              "| labels | terms | metric | prior | feedback | gain | better / worse | Wilcoxon p | t-test p |",
              "|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines += rows(method_prior)
    lines += ["", f"### Per term: the default at {CHOICE_SIZE} labels", "",
              f"| term | rest | prior {m10} | feedback {m10} | prior {m100} | feedback {m100} |",
              "|---|---:|---:|---:|---:|---:|"]
    for k in terms:
        r = runs[default_name][k].get(CHOICE_SIZE)
        if r:
            lines.append(f"| {k} | {r['rest']} | {r['prior'][m10]:.4f} | {r['feedback'][m10]:.4f} "
                         f"| {r['prior'][m100]:.4f} | {r['feedback'][m100]:.4f} |")
    lines += ["", f"One re-rank ({click['labels']} labels, {click['term']}, {click['candidates']} candidates, "
              f"default learner, features cached): {click['rerank_s']:.2f} s; extracting the term's features "
              f"(once per term): {click['feature_extraction_s']:.1f} s, on the shared machine under load."]
    lines += ["", f"Default chosen: `{default_name}` (`statinterp.learned.feedback.DEFAULT_LEARNER` / "
              "`DEFAULT_PRIOR_WEIGHT`). " + (
                  "It is the candidate chosen on all terms." if best_all == default_name else
                  f"The candidate chosen on all terms is `{best_all}`.") +
              " A choice made on the same terms it is measured on is optimistic; the nested figures above are "
              "the honest estimate of choosing this way."]

    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(args.out, "\n".join(lines) + "\n", force=True)
    payload = {"command": command, "provenance": provenance, "run_time_s": elapsed, "batch": args.batch,
               "button_click": click,
               "features": next(iter(features.values())).names,
               "full_ranking": {"macro": full_macro, "per_term": full, "paired_tests": full_tests},
               "default": default_name, "chosen_on_all_terms": best_all,
               "candidates": {name: {str(n): s for n, s in summ.items()} for name, summ in table.items()},
               "nested": {"picks": nested_pick, "summary": {str(n): s for n, s in nested.items()}},
               "method_prior_TF-ISF-p": {str(n): s for n, s in method_prior.items()},
               "per_term": {name: {k: {str(n): r for n, r in run[k].items()} for k in terms}
                            for name, run in runs.items()}}
    atomic.write_text(args.out.with_suffix(".json"), json.dumps(payload, indent=1) + "\n", force=True)
    log(f"wrote {args.out} and {args.out.with_suffix('.json')} in {elapsed / 60:.1f} min")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
