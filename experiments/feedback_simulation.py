"""A simulated reviewer on the shared terms: how much reading continuous re-ranking saves.

Run from the project root::

    python -m experiments.feedback_simulation --data ../shared/data/statutory_interpretation

Writes ``experiment-results/feedback.md`` and ``.json`` (the command, the library versions, every
per-term figure); the committed ``reports/feedback.md`` with ``--out reports/ --force``.

**The reviewer** is the library's (:mod:`statinterp.learned.feedback`, the same as
``statinterp simulate-review``): it reads a term's labelled sentences in the order shown and
labels each with the data set's label. Policies: *static* (the prior's order), *button-20* (the
rest re-ranked once after 20 labels), *continuous* (the unread rest re-ranked after every label,
:class:`statinterp.learned.feedback.ContinuousModel`). The figure of merit: sentences read to
find 80 % of a term's high- and certain-value sentences.

**The prior.** (a) *Held-out*: each term ranked by the ``ensemble`` learner trained on the other 13
terms with the no-vector features (the recipe of ``learned:default``, leave-one-term-out) -- what
``learned:default`` is for a term it has not seen. (b) ``learned:default`` itself, which was trained
on these 14 terms: its static order is in-sample, so it is reported beside, not as the measure.

**Choosing the learner held apart.** The terms are split in two halves (alternately in
alphabetical order). Every candidate setting (target x ridge penalty x prior weight x prior decay)
is simulated on every term; for the terms of one half, the setting with the smallest mean share of
sentences read to 80 % on the *other* half is applied, and vice versa. The figures reported are
those of the held-apart choices. The stopping estimator (which score of a read sentence the
curve P(valuable | score) is fitted on: :data:`statinterp.learned.feedback.ESTIMATORS`) is chosen
the same way, on the halves, by its coverage in every policy (a checkpoint every 10 sentences
read), and reported on the half it was not chosen on.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import time
from pathlib import Path

import numpy as np

from experiments.common import DEFAULT_DATA, add_output_options, log, out_options, output_path
from statinterp.provenance import provenance_lines, report_json, run_provenance

TARGETS = ("gain", "valuable")
ALPHAS = (30.0, 100.0, 300.0, 1000.0)
PRIOR_WEIGHTS = (0.0, 0.25, 0.5)
HALF_LIVES = (None, 30.0)
CHECKPOINT_EVERY = 10
POLICIES = ("static", "button-20", "continuous")
#: The stopping estimator is chosen among those covering at least this share of checkpoints in every policy.
ESTIMATOR_MIN_COVERAGE = 0.85


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

        from statinterp.cache import files as atomic

        buf = io.BytesIO()
        np.savez(buf, stamp=np.array(stamp), **priors)
        atomic.write_bytes(path, buf.getvalue(), force=True)
    return priors


def candidates():
    """Every setting of the continuous learner that the study tries."""
    from statinterp.learned.feedback import ContinuousSettings

    return [ContinuousSettings(target=t, alpha=a, prior_weight=w, prior_half_life=h)
            for t, a, w, h in itertools.product(TARGETS, ALPHAS, PRIOR_WEIGHTS, HALF_LIVES)]


def setting_name(s) -> str:
    decay = "fixed" if s.prior_half_life is None else f"half-life {s.prior_half_life:g}"
    return f"{s.target}, alpha {s.alpha:g}, prior weight {s.prior_weight:g} ({decay})"


def halves(terms: list[str]) -> tuple[list[str], list[str]]:
    ordered = sorted(terms)
    return ordered[0::2], ordered[1::2]


#: How a setting is scored on the choosing half: ``per-term`` = the mean over the half of (sentences
#: read to 80 % under continuous) / (under static), every term weighing the same (the study's
#: criterion, fixed before its figures were seen); ``total`` = those reads summed over the half /
#: static's (the measure the 30 % target is stated in), reported beside.
CRITERIA = ("per-term", "total")
CRITERION_TEXT = {
    "per-term": "the mean over the choosing half of (sentences read to 80 % under continuous) / (under static), "
                "every term weighing the same",
    "total": "(sentences read to 80 % under continuous, summed over the choosing half) / (the same under static), "
             "the measure the 30 % target is stated in",
}


def held_apart(runs, static, grid, criterion: str = "per-term") -> tuple[dict, dict]:
    """The setting chosen on the other half (by ``criterion``), per term, and the per-half picks."""
    terms = [r.key for r in runs]
    a, b = halves(terms)
    picks = {}
    for chooser, applied in ((a, b), (b, a)):
        def cost(name, chooser=chooser):
            if criterion == "total":
                return float(sum(grid[name][k] for k in chooser) / sum(static[k] for k in chooser))
            return float(np.mean([grid[name][k] / static[k] for k in chooser if static[k]]))
        best = min(grid, key=cost)
        picks[best if best not in picks else best + " "] = {"chosen_on": chooser, "applied_to": applied,
                                                          "choice_cost": cost(best)}
    per_term = {k: name.strip() for name, v in picks.items() for k in v["applied_to"]}
    return per_term, picks


def per_label_seconds(run, settings, repeats: int = 3) -> dict:
    """Mean and worst seconds of one label + re-rank of the rest, over a whole continuous review of ``run``."""
    from statinterp.learned.feedback import ContinuousModel, rerank_rest

    best = None
    for _ in range(repeats):
        model = ContinuousModel(run.X, run.prior, settings)
        order = rerank_rest(np.arange(len(run.gains)), 0, model.z_prior, run.ids)
        times = []
        for pos in range(len(order) - 1):
            t = time.perf_counter()
            row = int(order[pos])
            model.add({row: int(run.gains[row])})
            order = rerank_rest(order, pos + 1, model.scores(), run.ids)
            times.append(time.perf_counter() - t)
        stats = {"mean_s": float(np.mean(times)), "p95_s": float(np.quantile(times, 0.95)), "max_s": float(max(times))}
        best = stats if best is None or stats["mean_s"] < best["mean_s"] else best
    return {"term": run.key, "sentences": len(run.gains), **best}


def estimator_stats(per_term: list[dict], terms) -> dict:
    """Pooled coverage, misses and mean interval width of the stopping estimates of ``terms``."""
    est = [e for r in per_term if r["term"] in terms for e in r["estimates"]]
    if not est:
        return {"checkpoints": 0, "coverage": None, "too_high": 0, "too_low": 0, "width": None}
    return {"checkpoints": len(est), "coverage": float(np.mean([e["covered"] for e in est])),
            "too_high": sum(e["true"] < e["low"] for e in est), "too_low": sum(e["true"] > e["high"] for e in est),
            "width": float(np.mean([e["high"] - e["low"] for e in est]))}


def choose_estimator(runs_by_estimator: dict, terms) -> str:
    """The stopping estimator for terms other than ``terms``, chosen on ``terms``: of those whose
    interval held the truth at >= 85 % of the checkpoints in every policy, the narrowest (mean
    width over the policies); if none, the one with the best worst-policy coverage."""
    stats = {e: [estimator_stats(per_policy[p], terms) for p in POLICIES]
             for e, per_policy in runs_by_estimator.items()}
    ok = [e for e, ss in stats.items() if min(s["coverage"] or 0.0 for s in ss) >= ESTIMATOR_MIN_COVERAGE]
    if ok:
        return min(ok, key=lambda e: float(np.mean([s["width"] or 0.0 for s in stats[e]])))
    return max(stats, key=lambda e: min(s["coverage"] or 0.0 for s in stats[e]))


def study(runs, grid_settings) -> dict:
    """Static, the grid, the held-apart choice of the learner (continuous and button-20) and of the
    stopping estimator (every policy) for one prior."""
    from statinterp.learned.feedback import ESTIMATORS, against, macro, simulate_term

    by_key = {r.key: r for r in runs}
    static_reads = {r.key: simulate_term(r, "static", checkpoint_every=0)["read_to_80"] for r in runs}
    grid = {}
    for s in grid_settings:
        grid[setting_name(s)] = {r.key: simulate_term(r, "continuous", s, checkpoint_every=0)["read_to_80"]
                                 for r in runs}
    settings = {setting_name(s): s for s in grid_settings}
    choice, picks = held_apart(runs, static_reads, grid, CRITERIA[0])
    other = {}  # the other criterion's held-apart figure (reported beside: both were looked at)
    for criterion in CRITERIA[1:]:
        alt, alt_picks = held_apart(runs, static_reads, grid, criterion)
        alt_runs = [simulate_term(by_key[k], "continuous", settings[alt[k]], checkpoint_every=0) for k in by_key]
        base_alt = {k: {"term": k, "read_to_80": v} for k, v in static_reads.items()}
        other[criterion] = {"picks": alt_picks, "against_static": against(base_alt, alt_runs)}
    by_estimator = {e: {p: [simulate_term(by_key[k], p, settings[choice[k]], checkpoint_every=CHECKPOINT_EVERY,
                                          estimator=e) for k in by_key] for p in POLICIES}
                    for e in ESTIMATORS}
    a, b = halves(list(by_key))
    est_choice, est_picks = {}, []
    for chooser, applied in ((a, b), (b, a)):
        pick = choose_estimator(by_estimator, chooser)
        est_choice.update({k: pick for k in applied})
        est_picks.append({"estimator": pick, "chosen_on": chooser, "applied_to": applied})
    out = {"choice": choice, "picks": picks, "other_criteria": other, "estimator_choice": est_choice,
           "estimator_picks": est_picks,
           "estimators": {e: {p: {"all": estimator_stats(v[p], by_key), **{f"half_{i}": estimator_stats(v[p], h)
                                                                            for i, h in enumerate((a, b))}}
                              for p in POLICIES} for e, v in by_estimator.items()}}
    for policy in POLICIES:
        out[policy] = [next(r for r in by_estimator[est_choice[k]][policy] if r["term"] == k) for k in by_key]
    base = {r["term"]: r for r in out["static"]}
    out["macro"] = {p: macro(out[p]) for p in POLICIES}
    out["against_static"] = {p: against(base, out[p]) for p in ("button-20", "continuous")}
    out["grid"] = {name: {"per_term": v, "reduction": round(1 - np.mean(list(v.values())) /
                                                             np.mean(list(static_reads.values())), 4)}
                   for name, v in grid.items()}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="the folder of term zips (default: ../shared/data/statutory_interpretation)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="statinterp cache folder (default: statinterp's)")
    add_output_options(ap, "feedback")
    ap.add_argument("--priors", type=Path, default=None,
                    help="keep the leave-one-term-out priors in this .npz file and reuse them (same terms, same "
                         "statinterp) on the next run")
    args = ap.parse_args(argv)
    out = output_path(args, "feedback")
    started = time.perf_counter()

    from statinterp.cache import files as atomic
    from statinterp.learned.feedback import ContinuousSettings, TermRun, ranker_scores
    from statinterp.learned.model import default_ranker

    indices, features = load_terms(args.data, args.cache_dir)
    terms = list(indices)
    priors = cached_priors(args.priors, indices, features)
    default = default_ranker()
    runs = {"held-out": [TermRun.from_index(indices[k], features[k].X, priors[k]) for k in terms],
            "learned:default": [TermRun.from_index(indices[k], features[k].X, ranker_scores(default, indices[k]))
                                for k in terms]}
    grid_settings = candidates()
    results = {}
    for name, rs in runs.items():
        t = time.perf_counter()
        results[name] = study(rs, grid_settings)
        log(f"prior {name}: {len(grid_settings)} settings x {len(rs)} terms in {time.perf_counter() - t:.0f} s")
    big = max(runs["held-out"], key=lambda r: len(r.gains))
    timing = per_label_seconds(big, ContinuousSettings())
    elapsed = time.perf_counter() - started

    data_arg = str(args.data)
    if args.data.resolve() == DEFAULT_DATA.resolve() or args.data.resolve().parts[-3:] == (
            "shared", "data", "statutory_interpretation"):
        data_arg = "../shared/data/statutory_interpretation"
    command = f"python -m experiments.feedback_simulation --data {data_arg}" + out_options(args, out)
    provenance = run_provenance(command)
    main_res = results["held-out"]
    lines = ["# Continuous review: a simulated reviewer on the 14 shared terms (issue 26)", "",
             "Produced by:", "", "```", command, "```", "",
             f"- Date: {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M UTC}; run time {elapsed / 60:.1f} min; "
             f"{len(terms)} labelled terms, {sum(len(r.gains) for r in runs['held-out'])} labelled sentences, "
             f"{sum(int((r.gains >= 2).sum()) for r in runs['held-out'])} of high or certain value.",
             *provenance_lines(provenance),
             "- What is measured and how: `experiments/feedback_simulation.py` (module docstring); the reviewer is "
             "`statinterp.learned.feedback` (`statinterp simulate-review`), the learner "
             "`statinterp.learned.feedback`.", ""]

    def policy_table(res) -> list[str]:
        out = ["| policy | sentences read to 50 % | to 80 % | to 100 % | share read to 80 % | found after 10 / 20 / 50 "
               "| estimate coverage (pooled) | recall when stop suggested |",
               "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for p in ("static", "button-20", "continuous"):
            m = res["macro"][p]
            ras = "-" if m["recall_at_stop"] is None else f"{m['recall_at_stop']:.2f}"
            out.append(f"| {p} | {m['read_to_50']:.1f} | {m['read_to_80']:.1f} | {m['read_to_100']:.1f} "
                       f"| {m['share_to_80']:.3f} | {m['found_after_10']:.1f} / {m['found_after_20']:.1f} / "
                       f"{m['found_after_50']:.1f} | {m['coverage_pooled']:.3f} ({m['checkpoints']} checkpoints) "
                       f"| {ras} |")
        out.append("")
        for p, c in res["against_static"].items():
            out.append(f"- **{p}** against static, sentences read to find 80 %: {c['read']:.1f} vs "
                       f"{c['static_read']:.1f} (mean over {c['terms']} terms): **{c['reduction']:+.1%}** fewer "
                       f"(mean of per-term reductions {c['mean_term_reduction']:+.1%}); better on {c['better']} "
                       f"terms, worse on {c['worse']}, the same on {c['same']}.")
        return out

    lines += ["## 1. Held-out prior (the default model's recipe, trained without the term)", "",
              "Macro over the 14 terms; the continuous and button-20 settings of each term were chosen on the other "
              "half of the terms (section 3).", ""]
    lines += policy_table(main_res)
    lines += ["", "Per term (sentences read to find 80 % of the valuable sentences; the share of the term's "
              "sentences in brackets):", "",
              "| term | sentences | valuable | static | button-20 | continuous | estimate coverage (continuous) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for s, b, c in zip(main_res["static"], main_res["button-20"], main_res["continuous"], strict=True):
        cov = "-" if c["coverage"] is None else f"{c['coverage']:.2f}"
        lines.append(f"| {s['term']} | {s['sentences']} | {s['valuable']} | {s['read_to_80']} ({s['share_to_80']:.2f}) "
                     f"| {b['read_to_80']} ({b['share_to_80']:.2f}) | {c['read_to_80']} ({c['share_to_80']:.2f}) "
                     f"| {cov} |")
    lines += ["", "## 2. learned:default as the prior (in-sample: it was trained on these terms)", "",
              "Its static order has seen every label of these terms, so this is a ceiling for static rather than a "
              "measure; settings chosen held apart as in section 1.", ""]
    lines += policy_table(results["learned:default"])
    lines += ["", "## 3. The held-apart choice", "",
              f"Halves: {', '.join(halves(terms)[0])} | {', '.join(halves(terms)[1])}. "
              f"Criterion: {CRITERION_TEXT[CRITERIA[0]]}. "
              f"{len(grid_settings)} settings (targets {', '.join(TARGETS)}; ridge penalty "
              f"{', '.join(f'{a:g}' for a in ALPHAS)}; prior weight {', '.join(f'{w:g}' for w in PRIOR_WEIGHTS)}; "
              "fixed or halved after 30 labels).", ""]
    for name, res in results.items():
        for pick, v in res["picks"].items():
            lines.append(f"- prior {name}: `{pick.strip()}` chosen on {len(v['chosen_on'])} terms (cost "
                         f"{v['choice_cost']:.3f}), applied to {', '.join(v['applied_to'])}")
    for criterion, v in main_res["other_criteria"].items():
        c = v["against_static"]
        lines.append(f"- held-out prior, criterion `{criterion}` instead ({CRITERION_TEXT[criterion]}): continuous "
                     f"reads {c['reduction']:+.1%} fewer sentences than static to 80 % (worse on {c['worse']} of "
                     f"{c['terms']} terms). Tried as a principled alternative (choose on the target's own measure); "
                     "it does not reach the target either, and the study's criterion stays.")
    ranked = sorted(main_res["grid"].items(), key=lambda kv: -kv[1]["reduction"])
    lines += ["", "The best and worst settings on all 14 terms (held-out prior; reduction in mean sentences read "
              "to 80 % against static, chosen on the same terms, so optimistic):", "",
              "| setting | reduction |", "|---|---:|"]
    for name, v in ranked[:5] + ranked[-3:]:
        lines.append(f"| {name} | {v['reduction']:+.1%} |")
    shipped = setting_name(ContinuousSettings())
    if shipped in main_res["grid"]:
        lines += ["", f"Shipped default (`statinterp.learned.feedback.ContinuousSettings()`): `{shipped}`, "
                  f"{main_res['grid'][shipped]['reduction']:+.1%} on all 14 terms -- chosen on them, so optimistic; "
                  "the held-apart figures of section 1 are the honest estimate of choosing this way."]
    lines += ["", "## 4. Cost of a label", "",
              f"One label and the re-rank of the rest in continuous mode ({timing['term']}, {timing['sentences']} "
              f"sentences, shipped settings, a whole review replayed, best of 3): "
              f"mean {timing['mean_s'] * 1000:.1f} ms, "
              f"95th percentile {timing['p95_s'] * 1000:.1f} ms, worst {timing['max_s'] * 1000:.1f} ms, on the shared "
              "machine under load. The learner keeps the sums of the labelled rows, so a label is an O(d²) update "
              "and a refit one 125×125 solve; refitting after every label needs no batching."]
    lines += ["", "## 5. The stopping estimate", "",
              "At every 10th sentence read: a logistic curve P(high or certain value | score) fitted to the sentences "
              "read so far and applied to the unread sentences' current scores; a bootstrap of the read sentences "
              "(300 draws per curve, plus one valuable and one non-valuable pseudo-sentence at their mean score) with "
              "a Bernoulli draw per unread sentence gives the 90 % interval (5th-95th percentile of the simulated "
              "remainder). Stop is suggested when the rest holds none with probability >= 0.9 "
              "(`statinterp.learned.feedback`). Coverage: the share of checkpoints at which the true remainder lay "
              "inside the interval, pooled over terms. Three estimators differ in the score a read sentence is "
              "fitted with: `read-time` (its score when it was read), `current` (its score now, from a learner that "
              "has seen its label) and `mixture` (half the draws from each curve).",
              "",
              "**Held-apart choice** (same halves as section 3): on the choosing half, of the estimators whose "
              f"interval held the truth at >= {ESTIMATOR_MIN_COVERAGE:.0%} of checkpoints in every policy, the "
              "narrowest; applied to the other half. The figures of sections 1-2 use these choices.", ""]
    for name, res in results.items():
        for pick in res["estimator_picks"]:
            applied = pick["applied_to"]
            held = ", ".join(f"{p} {estimator_stats(res[p], applied)['coverage']:.3f}" for p in POLICIES)
            lines.append(f"- prior {name}: `{pick['estimator']}` chosen on {', '.join(pick['chosen_on'])}; its "
                         f"coverage on the other {len(applied)} terms: {held}")
    lines += ["", "Every estimator on all 14 terms (held-out prior; coverage pooled over checkpoints, misses too "
              "high / too low, mean interval width):", "",
              "| estimator | static | button-20 | continuous |", "|---|---:|---:|---:|"]
    for est, per_policy in main_res["estimators"].items():
        cells = [f"{v['all']['coverage']:.3f} ({v['all']['too_high']} / {v['all']['too_low']}, width "
                 f"{v['all']['width']:.1f})" for v in (per_policy[p] for p in POLICIES)]
        lines.append(f"| {est} | {' | '.join(cells)} |")
    misses = {}
    for p in ("static", "continuous"):
        est = [e for r in main_res[p] for e in r["estimates"]]
        misses[p] = (sum(e["true"] < e["low"] for e in est), sum(e["true"] > e["high"] for e in est), len(est))
    cmp = main_res["against_static"]["continuous"]
    big = sorted(main_res["static"], key=lambda r: -r["sentences"])
    by_term = {r["term"]: r for r in main_res["continuous"]}
    small_terms = {r["term"] for r in main_res["static"] if r["sentences"] <= 30}
    small_reads = [r["read_to_80"] for p in ("static", "button-20", "continuous") for r in main_res[p]
                   if r["term"] in small_terms]
    lines += ["", "## 6. What limits it", "",
              f"- Continuous review reads {cmp['reduction']:.1%} fewer sentences than static to reach 80 % (held-out "
              "prior, held-apart settings; target 30 %), worse than static on "
              f"{cmp['worse']} of {cmp['terms']} terms. The saving is where there is much to read: "
              + "; ".join(f"{r['term']} {r['read_to_80']} -> {by_term[r['term']]['read_to_80']}" for r in big[:3])
              + f". The {len(small_terms)} terms of 30 sentences or fewer reach 80 % after "
              f"{min(small_reads)}-{max(small_reads)} sentences under every policy: "
              "there is little to save, and they weigh as much as the large terms in the mean of the per-term "
              f"reductions ({cmp['mean_term_reduction']:.1%}).",
              f"- Choosing on 7 terms costs about what the target misses by: the best single setting on all 14 terms "
              f"saves {ranked[0][1]['reduction']:.1%} (chosen on them, so optimistic), the setting chosen on the "
              f"other half {cmp['reduction']:.1%}; the two halves choose different settings (section 3). Choosing "
              "on the target's own measure instead (criterion `total`, section 3) saves "
              + ", ".join(f"{v['against_static']['reduction']:.1%}" for v in main_res["other_criteria"].values())
              + ". No held-apart choice in this grid reaches 30 %.",
              "- A prior that has seen the term (learned:default on its own training terms, section 2) already finds "
              "80 % within a third of the term; a learner fitted on a few dozen of the term's labels adds noise to "
              "it, not information. On a new term the prior is the held-out one of section 1.",
              f"- The stopping estimate (held-apart choice) missed the true remainder at {misses['continuous'][0]} "
              f"of {misses['continuous'][2]} continuous checkpoints by being too high and at {misses['continuous'][1]} "
              f"by being too low (static: {misses['static'][0]} / {misses['static'][1]} of {misses['static'][2]}). "
              "Fitted with the scores at reading time alone it overstates the rest in continuous mode (the "
              "sentences read were chosen by a learner that kept improving); with the current scores alone it "
              "understates it (the learner has seen the read sentences' labels). The mixture brackets both; it is "
              "a model-based estimate, not a sample of the rest, so its coverage is measured, not guaranteed. "
              "On learned:default's own training terms (section 2) the prior has seen every label and the "
              "static order's estimate is too high, as the table there shows."]
    atomic.write_text(out, "\n".join(lines) + "\n", force=True)
    payload = {"command": command, "provenance": provenance, "run_time_s": elapsed, "per_label": timing,
               "halves": halves(terms), "results": results}
    atomic.write_text(out.with_suffix(".json"), report_json(payload, indent=1, default=str), force=True)
    log(f"wrote {out} and {out.with_suffix('.json')} in {elapsed / 60:.1f} min")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
