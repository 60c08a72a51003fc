"""Machine- and human-readable output of rankings and evaluation tables.

Tables are for terminals: every text from the data in them (sentences, case names, ids, cites,
method and term names) has its control characters shown as ``\\xNN``
(:func:`terminal_safe`), so a sentence carrying an escape sequence cannot write to
the clipboard, retitle the window or plant a link. JSON escapes them itself; CSV and TREC are
data and keep the text as it is."""

from __future__ import annotations

import csv
import io
import json
import shutil
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from statinterp.errors import printable

if TYPE_CHECKING:  # annotations only: the CLI reads RANK_FORMATS at start-up, so this module stays light
    from statinterp.evaluation.ranking import Collapsed, Ranking
    from statinterp.workflow import MethodResult


#: C0 controls, DEL and C1 controls: what a terminal may act on (escape sequences: OSC 52
#: clipboard writes, OSC 8 links, title changes, cursor moves), each mapped to its ``\xNN`` text.
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)]}
_CONTROLS_KEEP_LINES = {c: v for c, v in _CONTROLS.items() if c not in (0x09, 0x0A)}


def terminal_safe(text: str, keep_newlines: bool = False) -> str:
    """``text`` safe to print to a terminal: :func:`~statinterp.errors.printable` (lone surrogates escaped), and
    every C0 and C1 control character (ESC, BEL, CSI, OSC, CR, ...) and DEL shown as ``\\xNN``
    instead of being sent; with ``keep_newlines``, a newline and a tab stay as they are (layout)."""
    return printable(text).translate(_CONTROLS_KEEP_LINES if keep_newlines else _CONTROLS)


RANK_FORMATS = ("table", "json", "csv", "trec")
TABLE_FORMATS = ("table", "json", "csv")


def format_ranking(ranking: Ranking, fmt: str = "table", top: int | None = 10, shown_term: str | None = None,
                   order: str = "score", json_extra: dict | None = None) -> str:
    """``shown_term`` (e.g. the term as the user typed it) replaces the term key in the table's heading.
    ``order="authority"``: the top ``top`` sentences by score, shown by court level then date
    (:func:`~statinterp.evaluation.ranking.by_authority`; each keeps its rank and score)."""
    from statinterp.evaluation.ranking import by_authority

    ranked = ranking.rows(top)
    if order == "authority":
        ranked = by_authority(ranked)
    rows = [r.__dict__ for r in ranked]
    heading = (f"{ranking.method} ranking of {len(ranking)} sentences for {(shown_term or ranking.term)!r} "
               f"(top {len(rows)}" + (", shown by authority: court level, then newest; rank = by score)"
                                      if order == "authority" else ")"))
    extra = {**({"order": order} if order != "score" else {}), **(json_extra or {})}
    return format_rows(ranking.term, ranking.method, len(ranking), rows, fmt, heading, json_extra=extra or None)


def format_rows(term: str, method: str, candidates: int, rows: Sequence[dict], fmt: str, heading: str,
                json_extra: dict | None = None, copies: bool = False) -> str:
    """Ranked rows (dicts with rank, score, sentence_id, text, label, case_name, citation, pin_page,
    pin_cite, and with ``copies`` the number of near-duplicates each stands for) as table, JSON,
    CSV or TREC. The table's citation line is the pin cite."""
    if fmt == "json":
        return json.dumps({"term": term, "method": method, "candidates": candidates, **(json_extra or {}),
                           "results": list(rows)}, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["rank", "score", "sentence_id"] + (["copies"] if copies else [])
                   + ["label", "case_name", "citation", "pin_page", "pin_cite", "court", "level", "jurisdiction",
                      "date", "text"])  # the JSON field names
        for x in rows:
            w.writerow([x["rank"], f"{x['score']:.6g}", x["sentence_id"]] + ([x["copies"]] if copies else [])
                       + [x["label"] or "", x["case_name"], x["citation"], x["pin_page"] or "", x["pin_cite"],
                          x.get("court", ""), x.get("level", ""), x.get("jurisdiction", ""), x.get("date", ""),
                          x["text"]])
        return buf.getvalue()
    if fmt == "trec":
        return trec_run(term, method, candidates, rows)
    if fmt != "table":
        raise ValueError(fmt)
    width = max(60, min(shutil.get_terminal_size((100, 20)).columns, 120))
    out = [terminal_safe(heading), ""]
    for x in rows:
        label = f"[{x['label']}]" if x["label"] else "[unlabelled]"
        extra = f"  x{x['copies']} copies" if copies and x["copies"] > 1 else ""
        where = authority_words(x.get("level", ""), x.get("jurisdiction", ""))
        line = (f"{x['rank']:>3}. {x['score']:>9.4f}  {label}{extra}  {x['sentence_id']}  {x['pin_cite']}"
                f"{f'  [{where}]' if where else ''}").rstrip()
        out.append(terminal_safe(line))
        out.extend(textwrap.wrap(terminal_safe(x["text"], keep_newlines=True), width - 6, initial_indent="      ",
                                 subsequent_indent="      "))
    return "\n".join(out) + "\n"


def authority_words(level: str, jurisdiction: str) -> str:
    """``federal appellate``, ``Pennsylvania supreme``, ``trial``: a court's authority in two words
    (``""``: unknown)."""
    return " ".join(p for p in (jurisdiction, level) if p)


def trec_run(term: str, method: str, candidates: int, rows: Sequence[dict]) -> str:
    """TREC run lines ``TERM Q0 SENTENCE_ID RANK SCORE TAG`` in statinterp's rank order.

    SCORE is ``candidates - rank + 1``, not the method's score: trec_eval and the tools that
    follow it (ir_measures, pytrec_eval) re-sort a run by score and break ties by document id
    *descending*, whereas statinterp breaks them by sentence id ascending; strictly decreasing
    scores make every such tool see statinterp's order and compute its figures. The raw scores
    are in ``--format json`` and in the ``.scores.json`` file written beside a run file
    (:func:`trec_scores_json`).
    """
    tag = method.replace(" ", "_") or "statinterp"
    return "".join(f"{term} Q0 {x['sentence_id']} {x['rank']} {candidates - x['rank'] + 1} {tag}\n" for x in rows)


def trec_scores_json(method: str, scores: dict[str, dict[str, float]], provenance: dict | None = None) -> str:
    """The raw scores behind a TREC run: ``{"method", "scores": {term: {sentence_id: score}}}``."""
    return json.dumps({"method": method, "scores": scores, **({"provenance": provenance} if provenance else {})},
                      indent=1, ensure_ascii=False) + "\n"


def qrels_lines(term: str, judged: Sequence[tuple[str, float]]) -> str:
    """TREC qrels lines ``TERM 0 SENTENCE_ID GAIN`` (integer gains 0-3) of one term's labelled sentences."""
    return "".join(f"{term} 0 {sid} {int(gain)}\n" for sid, gain in judged)


def _metric_keys(results: Sequence[MethodResult]) -> list[str]:
    for res in results:
        if res.macro:
            return list(res.macro)
    return []


def format_evaluation(results: Sequence[MethodResult], fmt: str = "table", per_term: bool = True) -> str:
    from statinterp.evaluation.metrics import RANDOM_TIES_SUFFIX

    keys = _metric_keys(results)
    if fmt == "json":
        return json.dumps([{"method": r.method, "macro": r.macro, "per_term": r.per_term} for r in results],
                          indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["method", "term"] + keys)
        for r in results:
            for term, values in sorted(r.per_term.items()):
                w.writerow([r.method, term] + [f"{values[k]:.4f}" for k in keys])
            w.writerow([r.method, "MACRO"] + [f"{r.macro[k]:.4f}" for k in keys])
        return buf.getvalue()
    if fmt != "table":
        raise ValueError(fmt)
    ordered = [k for k in keys if not k.endswith(RANDOM_TIES_SUFFIX)]
    ordered += [k for k in keys if k.endswith(RANDOM_TIES_SUFFIX)]
    cols = [k.replace(RANDOM_TIES_SUFFIX, " rt") for k in ordered]
    terms = sorted({t for r in results for t in r.per_term})
    name_w = max([len("method")] + [len(r.method) for r in results])
    lines = []

    def table(title: str, pick) -> None:
        lines.append(title)
        lines.append(f"{'method':<{name_w}}  " + "  ".join(f"{c:>12}" for c in cols))
        for r in results:
            vals = pick(r)
            if vals is None:
                continue
            lines.append(f"{r.method:<{name_w}}  " + "  ".join(f"{vals[k]:>12.4f}" for k in ordered))
        lines.append("")

    table(f"Macro average over {len(terms)} term(s)  (rt = expected value under random tie-breaking)",
          lambda r: r.macro or None)
    if per_term and len(terms) > 1:
        for term in terms:
            table(f"Term {term}", lambda r, t=term: r.per_term.get(t))
    return terminal_safe("\n".join(lines), keep_newlines=True)


def format_collapsed(col: Collapsed, fmt: str = "table", top: int | None = 10, shown_term: str | None = None) -> str:
    """Like :func:`format_ranking`, one row per group (near-duplicates collapsed), with its number of copies."""
    from statinterp.corpus.authority import court_authority
    from statinterp.corpus.pin_cites import sentence_pin_cite

    r = col.ranking
    index = r.index
    groups = col.groups[:top] if top else col.groups
    rows = []
    for rank_no, (c, members) in enumerate(groups, start=1):
        s = index.sentences[c]
        case = index.term.cases[s.case_id]
        authority = court_authority(case.court, case.jurisdiction)
        rows.append({"rank": rank_no, "score": float(r.scores[c]), "sentence_id": s.id, "text": s.text,
                     "label": s.label, "case_name": case.short_name or case.name, "citation": case.citation,
                     "pin_page": s.pin_page or None, "pin_cite": sentence_pin_cite(index.term, s),
                     "court": case.court, "level": authority.level, "jurisdiction": authority.jurisdiction,
                     "date": case.date,
                     "copies": len(members), "copy_ids": [index.sentences[m].id for m in members[1:]]})
    heading = (f"{r.method} ranking of {len(r)} sentences for {(shown_term or r.term)!r}: {len(col)} after collapsing "
               f"near-duplicates (token Jaccard >= {col.threshold:g}; top {len(rows)})")
    return format_rows(r.term, r.method, len(r), rows, fmt, heading,
                       json_extra={"groups": len(col), "threshold": col.threshold}, copies=True)
