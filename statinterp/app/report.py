"""Reports: the reproduction table (Markdown, JSON, PNG chart) and tuning tables.

Pure functions: they take results (:class:`statinterp.evaluation.tuning.Reproduction`,
:class:`~statinterp.evaluation.tuning.TuneResult`, :class:`~statinterp.evaluation.tuning.LooResult`) and return
text or bytes; writing files is the caller's business (:mod:`statinterp.cache.files`).

Numbers reported: NDCG@k of each method's deterministic ranking (score descending, ties by
sentence id, as ``statinterp rank`` shows it), except for Random, whose row is the exact
expected NDCG@k of a uniformly random order. The JSON also carries the random-tie
expectations of every method.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence

from statinterp.evaluation.metrics import RANDOM_TIES_SUFFIX
from statinterp.evaluation.tuning import LooResult, Reproduction, TuneResult, format_params
from statinterp.provenance import provenance_lines, report_json
from statinterp.rankers import grammar as registry
from statinterp.rankers.registry import names as registered

#: Row groups of the paper's Table 2, in order ("Baseline" holds Random, "Other" anything unknown).
SECTIONS = ("Baseline", "Direct", "Context", "Query expansion", "Novelty", "Compound", "Other")
REPORT_METRICS = ("nDCG@10", "nDCG@100")
CONTEXT_SUFFIXES = ("c", "o", "p", "r")


def _registry_sections() -> dict[str, str]:
    """Method name -> section, from :func:`statinterp.rankers.grammar.method_sections` if it exists."""
    fn = getattr(registry, "method_sections", None)
    if not callable(fn):
        return {}
    try:
        return {name: section for section, entries in fn() for name, _ in entries}
    except Exception:  # noqa: BLE001 - sections are decoration; fall back to the names
        return {}


def section_of(name: str, description: str = "") -> str:
    """The Table 2 section of a method: Random is the Baseline; others as the registry's
    :func:`~statinterp.rankers.grammar.method_sections` lists them, else derived from the name."""
    if name == "Random":
        return "Baseline"
    known = _registry_sections().get(name)
    if known:
        return known if known in SECTIONS else "Other"
    sims = set(registered("scorer"))
    if name in sims:
        return "Direct"
    base, _, suffix = name.rpartition("-")
    desc = description.lower()
    if base in sims:
        if suffix in CONTEXT_SUFFIXES:
            return "Context"
        if "novel" in desc:
            return "Novelty"
        if "expan" in desc or "domain" in desc or "gate" in desc:
            return "Query expansion"
        return "Other"
    if "-" in name:
        return "Compound"
    return "Other"


def background_note(record: dict | None) -> str:
    """`` (collection: X, by the rule ...)`` for a report's background line, from the CLI's record."""
    if not record or not record.get("collection"):
        return ""
    return f" (collection: `{record['collection']}`, chosen by {record.get('rule', '?')})"


def reported(method: str, values: dict[str, float], metric: str) -> float:
    """The number shown for ``metric``: Random's is the expectation over random orders."""
    if method == "Random" and metric + RANDOM_TIES_SUFFIX in values:
        return values[metric + RANDOM_TIES_SUFFIX]
    return values[metric]


def term_codes(terms: Sequence[str]) -> dict[str, str]:
    """Short column headers from the initials of each term (``accommodation_trade`` -> ``AT``)."""
    codes: dict[str, str] = {}
    for t in terms:
        base = "".join(w[0] for w in re.split(r"[_\s]+", t) if w).upper() or t[:2].upper()
        code, n = base, 2
        while code in codes.values():
            code, n = f"{base}{n}", n + 1
        codes[t] = code
    return codes


def _descriptions() -> dict[str, str]:
    try:
        return dict(registry.list_methods())
    except Exception:  # noqa: BLE001 - descriptions are decoration only
        return {}


def _rows(rep: Reproduction) -> list[dict]:
    desc = _descriptions()
    rows = []
    for r in rep.results:
        rows.append({
            "method": r.method,
            "section": section_of(r.method, desc.get(r.method, "")),
            "description": desc.get(r.method, ""),
            "macro": {m: reported(r.method, r.macro, m) for m in REPORT_METRICS},
            "per_term": {t: {m: reported(r.method, v, m) for m in REPORT_METRICS} for t, v in r.per_term.items()},
            "result": r,
        })
    return rows


# --------------------------------------------------------------------------- reproduction


def reproduction_markdown(rep: Reproduction, title: str | None = None, chart: str | None = None) -> str:
    """The paper's Table 2 as Markdown: a macro table, then per-section per-term tables."""
    meta = rep.metadata
    rows = _rows(rep)
    codes = term_codes(rep.terms)
    title = title or "Reproduction of Savelka, Xu & Ashley (ICAIL 2019), Table 2"
    out = [f"# {title}", ""]
    if meta.get("command"):
        out += ["Produced by:", "", "```", str(meta["command"]), "```", ""]
    facts = []
    if meta.get("date"):
        facts.append(f"- Date: {meta['date']}" + (f" (statinterp {meta['version']})" if meta.get("version") else ""))
    if meta.get("data"):
        facts.append(f"- Data: `{meta['data']}`: {len(rep.terms)} terms, "
                     f"{sum(rep.sentences.values())} labelled sentences")
    else:
        facts.append(f"- Data: {len(rep.terms)} terms, {sum(rep.sentences.values())} labelled sentences")
    facts += provenance_lines(meta)
    facts.append(f"- Background statistics: {rep.statistics}" + background_note(meta.get("background")))
    short = [t for t in rep.terms if rep.sentences.get(t, 0) <= 100]
    if short:
        facts.append(f"- {len(short)} of {len(rep.terms)} terms have at most 100 labelled sentences: for them "
                     "NDCG@100 scores the whole ranking, so even a random order gets a high NDCG@100.")
    facts.append("- Numbers: NDCG@10 / NDCG@100 (linear gains 3/2/1/0) of each method's ranking, ties "
                 "broken by sentence id; the Random row is the exact expected NDCG of a uniformly random "
                 "order. Macro = mean over terms (each term counts once).")
    out += facts + [""]
    if rep.skipped:
        by_reason: dict[str, list[str]] = {}
        for name, reason in rep.skipped:
            by_reason.setdefault(reason, []).append(name)
        out += [f"Skipped methods ({len(rep.skipped)}; they cannot run with the given inputs):", ""]
        out += [f"- {', '.join(f'`{n}`' for n in names)}: {reason}" for reason, names in by_reason.items()]
        out.append("")

    best = {m: max((r["macro"][m] for r in rows), default=None) for m in REPORT_METRICS}

    def fmt_macro(r, m):
        v = r["macro"][m]
        text = f"{v:.4f}"
        return f"**{text}**" if best[m] is not None and abs(v - best[m]) < 5e-13 else text

    out += ["## Macro averages", "", "Best value per column in bold.", "",
            "| Section | Method | NDCG@10 | NDCG@100 |", "|---|---|---:|---:|"]
    for section in SECTIONS:
        for r in rows:
            if r["section"] == section:
                out.append(f"| {section} | {r['method']} | {fmt_macro(r, 'nDCG@10')} | {fmt_macro(r, 'nDCG@100')} |")
    out.append("")
    if chart:
        out += [f"![Macro NDCG@10 and NDCG@100 per method]({chart})", ""]

    out += ["## Per term", "", "Each cell: NDCG@10 / NDCG@100. Term codes:", "",
            "| Code | Term | Labelled sentences |", "|---|---|---:|"]
    out += [f"| {codes[t]} | {t.replace('_', ' ')} | {rep.sentences.get(t, '')} |" for t in rep.terms]
    out.append("")
    header = "| Method | Macro | " + " | ".join(codes[t] for t in rep.terms) + " |"
    rule = "|---|---:|" + "---:|" * len(rep.terms)
    for section in SECTIONS:
        members = [r for r in rows if r["section"] == section]
        if section == "Other" and not members:
            continue
        out += [f"### {section}", ""]
        if not members:
            out += ["_No method of this section was run._", ""]
            continue
        out += [header, rule]
        for r in members:
            cells = [f"{r['macro']['nDCG@10']:.3f} / {r['macro']['nDCG@100']:.3f}"]
            for t in rep.terms:
                v = r["per_term"].get(t)
                cells.append(f"{v['nDCG@10']:.3f} / {v['nDCG@100']:.3f}" if v else "–")
            out.append(f"| {r['method']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def reproduction_json(rep: Reproduction) -> str:
    """Everything measured: per method its section, every metric per term and macro, and the
    reported values; plus the terms, the skipped methods and the run's metadata."""
    rows = _rows(rep)
    doc = {
        **rep.metadata,
        "statistics": rep.statistics,
        "reported_metrics": list(REPORT_METRICS),
        "terms": [{"term": t, "labelled_sentences": rep.sentences.get(t)} for t in rep.terms],
        "methods": [
            {"method": r["method"], "section": r["section"], "description": r["description"],
             "reported_macro": r["macro"], "reported_per_term": r["per_term"],
             "macro": r["result"].macro, "per_term": r["result"].per_term}
            for r in rows
        ],
        "skipped": [{"method": n, "reason": why} for n, why in rep.skipped],
    }
    return report_json(doc, indent=2, ensure_ascii=False)


def reproduction_chart(rep: Reproduction, title: str | None = None) -> bytes:
    """A PNG bar chart of the macro NDCG@10 and NDCG@100 of every method (Agg backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = [r for s in SECTIONS for r in _rows(rep) if r["section"] == s]
    n = max(len(rows), 1)
    fig = Figure(figsize=(8.0, 0.26 * n + 1.6), dpi=110)
    FigureCanvasAgg(fig)  # the Agg backend, without touching pyplot's global state
    ax = fig.subplots()
    height = 0.4
    ys = list(range(len(rows)))
    colours = {"nDCG@10": "#4c72b0", "nDCG@100": "#dd8452"}
    for offset, metric in ((-height / 2, "nDCG@10"), (height / 2, "nDCG@100")):
        ax.barh([y + offset for y in ys], [r["macro"][metric] for r in rows], height, label=f"macro {metric}",
                color=colours[metric])
    rand = next((r for r in rows if r["method"] == "Random"), None)
    if rand is not None:
        for metric, colour in colours.items():
            ax.axvline(rand["macro"][metric], color=colour, linestyle=":", linewidth=1)
    for y in range(1, len(rows)):  # a rule and a label where a new section starts
        if rows[y]["section"] != rows[y - 1]["section"]:
            ax.axhline(y - 0.5, color="grey", linewidth=0.6)
    for y, r in enumerate(rows):
        if y == 0 or r["section"] != rows[y - 1]["section"]:
            ax.text(0.995, y - 0.45, r["section"], transform=ax.get_yaxis_transform(), ha="right", va="top",
                    fontsize=7, color="grey", style="italic")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["method"] for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # first method at the top
    ax.set_xlim(0, 1)
    ax.set_xlabel("NDCG (macro over terms)")
    fig.suptitle(title or f"Macro NDCG per method ({len(rep.terms)} terms; dotted lines: Random)", fontsize=10)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


# --------------------------------------------------------------------------- tuning


def _grid_text(grid) -> str:
    parts = []
    for name, values in grid.items():
        shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
        parts.append(f"{name} in {{{shown}}}")
    return "; ".join(parts)


def format_tune(result: TuneResult | LooResult, fmt: str = "table") -> str:
    """A tuning result as a text table or JSON."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2) + "\n"
    if fmt != "table":
        raise ValueError(fmt)
    metric = result.metric
    n_points = len(result.points)
    lines = [f"Tuning {result.method}: {_grid_text(result.grid)} ({n_points} point(s)); "
             f"maximising macro {metric}", ""]
    if isinstance(result, LooResult):
        w = max([len("term")] + [len(f.term) for f in result.folds] + [len("MACRO")])
        pw = max([len("best parameters")] + [len(format_params(f.best_params)) for f in result.folds])
        lines.append("Leave one term out: each term's parameters are tuned on the other terms only.")
        lines.append(f"{'held-out term':<{w}}  {'best parameters':<{pw}}  {'tuning ' + metric:>16}  "
                     f"{'nDCG@10':>9}  {'nDCG@100':>9}  {'default @10':>11}  {'default @100':>12}")
        for f in result.folds:
            lines.append(f"{f.term:<{w}}  {format_params(f.best_params):<{pw}}  {f.tune_score:>16.4f}  "
                         f"{f.held_out['nDCG@10']:>9.4f}  {f.held_out['nDCG@100']:>9.4f}  "
                         f"{f.default['nDCG@10']:>11.4f}  {f.default['nDCG@100']:>12.4f}")
        m, d = result.macro, result.default_macro
        lines.append(f"{'MACRO':<{w}}  {'':<{pw}}  {'':>16}  {m['nDCG@10']:>9.4f}  {m['nDCG@100']:>9.4f}  "
                     f"{d['nDCG@10']:>11.4f}  {d['nDCG@100']:>12.4f}")
        lines.append("")
        lines.append("default = the method with its built-in parameters (not tuned).")
    else:
        lines.append(f"Tuning terms ({len(result.tune_terms)}): {', '.join(result.tune_terms)}")
        lines.append(f"Best parameters: {format_params(result.best_params)}  "
                     f"(macro {metric} on the tuning terms: {result.tune_score:.4f})")
        lines.append("")
        if result.test_terms:
            w = max([len("held-out term"), len("MACRO (default parameters)")] + [len(t) for t in result.test_terms])
            lines.append(f"{'held-out term':<{w}}  {'nDCG@10':>9}  {'nDCG@100':>9}")
            for t in result.test_terms:
                v = result.test_per_term[t]
                lines.append(f"{t:<{w}}  {v['nDCG@10']:>9.4f}  {v['nDCG@100']:>9.4f}")
            m, d = result.test_macro, result.default_test_macro
            lines.append(f"{'MACRO':<{w}}  {m['nDCG@10']:>9.4f}  {m['nDCG@100']:>9.4f}")
            lines.append(f"{'MACRO (default parameters)':<{w}}  {d['nDCG@10']:>9.4f}  {d['nDCG@100']:>9.4f}")
            lines.append("")
        pw = max([len("parameters")] + [len(format_params(p.params)) for p in result.points])
        lines.append("Grid (macro " + metric + "):")
        lines.append(f"{'parameters':<{pw}}  {'tuning terms':>12}  {'held-out':>9}")
        for p in result.points:
            if not p.ok:
                lines.append(f"{format_params(p.params):<{pw}}  cannot run: {p.error}")
                continue
            test = f"{p.macro(metric, result.test_terms):>9.4f}" if result.test_terms else f"{'-':>9}"
            mark = "  <- best" if p.params == result.best_params else ""
            lines.append(f"{format_params(p.params):<{pw}}  {p.macro(metric, result.tune_terms):>12.4f}  {test}{mark}")
    if result.notes:
        lines.append("")
        lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines) + "\n"


__all__ = ["SECTIONS", "format_tune", "reported", "reproduction_chart", "reproduction_json",
           "reproduction_markdown", "section_of", "term_codes"]
