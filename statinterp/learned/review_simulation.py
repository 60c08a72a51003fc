"""A simulated reviewer: how much reading a review order costs (``statinterp simulate-review``).

The reviewer reads a term's labelled sentences in the order shown and labels each with the data
set's own label. Policies:

* ``static``: the prior's order, never changed;
* ``button-20``: the prior's order until 20 labels, then the unread rest is re-ranked once with
  those labels (the reviewer presses "Re-rank with my labels" once) and read in that order;
* ``continuous``: after each label the unread rest is re-ranked with every label so far
  (:class:`statinterp.learned.continuous.ContinuousModel`; what was read stays).

Measured per term (*valuable* = high or certain value, gain >= 2): sentences read to find 50 %,
80 % and 100 % of the term's valuable sentences (counts and shares of the term's labelled
sentences), valuable sentences found after reading 10, 20 and 50, and the stopping estimate
(:func:`statinterp.learned.continuous.estimate_remaining`) at checkpoints every
``checkpoint_every`` sentences read: how often its 90 % interval held the true remainder, and
where it first suggested stopping. Only the term's labelled sentences take part (unlabelled
candidates are neither read nor counted). The field names of :func:`simulate_term`'s result and
of :func:`macro` are documented in the README (``simulate-review``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from statinterp.errors import UsageError
from statinterp.learned.continuous import (
    VALUABLE_GAIN,
    ContinuousModel,
    ContinuousSettings,
    estimate_remaining,
    rerank_rest,
)

__all__ = ["FOUND_AFTER", "POLICIES", "RECALLS", "TermRun", "against", "format_table", "macro", "simulate",
           "simulate_term", "term_runs"]

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
    estimates (``estimator``: one of :data:`statinterp.learned.continuous.ESTIMATORS`) made every
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
    from statinterp.learned.feedback import ranker_scores, term_features
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
