"""Checking a committed report: the figures it states against the figures a re-run gives now.

:func:`recorded_run` reads what a report JSON (``statinterp reproduce`` or ``statinterp cv``)
says was run; :func:`compare_figures` lines up every figure it states (per term and macro) with
the same figure now and says whether they agree within a tolerance; :func:`format_check`
prints them. The CLI (``statinterp reproduce --check REPORT.json``) re-runs and exits 1 when a
figure disagrees. Pure functions: no file is read or written here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statinterp.errors import UsageError
from statinterp.provenance import version_differences

__all__ = ["DEFAULT_TOLERANCE", "CheckResult", "Figure", "compare_figures", "figures_of", "format_check",
           "recorded_run"]

#: Largest absolute difference between a committed and a re-computed NDCG that still counts as
#: agreement. Figures are deterministic, so with the pinned versions (constraints.txt) they agree
#: to the last bit; the tolerance only absorbs the rounding of a JSON round trip and of the fixed
#: precision reports are written at (``provenance.FIGURE_DIGITS``, 10 significant digits: <= 5e-11
#: for an NDCG), so it holds for older full-precision reports and newer rounded ones alike.
DEFAULT_TOLERANCE = 1e-9
MACRO = "MACRO"


@dataclass(frozen=True)
class Figure:
    system: str
    term: str  # a term key or MACRO
    metric: str
    committed: float | None
    now: float | None
    agrees: bool

    @property
    def difference(self) -> float | None:
        if self.committed is None or self.now is None:
            return None
        return self.now - self.committed


@dataclass
class CheckResult:
    report: str
    kind: str  # "reproduce" or "cv"
    tolerance: float
    figures: list[Figure]
    version_changes: list[tuple[str, str | None, str | None]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.agrees for f in self.figures)

    @property
    def disagreements(self) -> list[Figure]:
        return [f for f in self.figures if not f.agrees]


def recorded_run(doc: Mapping[str, Any], where: str = "report") -> dict[str, Any]:
    """What a report JSON says was run: ``kind`` (``reproduce`` or ``cv``), ``command`` and the
    recorded ``versions`` (empty for reports made before versions were recorded)."""
    if not isinstance(doc, Mapping):
        raise UsageError(f"{where} is not a statinterp report (a JSON object was expected)")
    metadata = doc.get("metadata")
    meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else doc
    command = meta.get("command")
    if not isinstance(command, str) or not command.strip():
        raise UsageError(f"{where} records no command, so it cannot be re-run")
    if "learners" in doc and "per_term" in doc:
        kind = "cv"
    elif isinstance(doc.get("methods"), list):
        kind = "reproduce"
    else:
        raise UsageError(f"{where} is neither a `statinterp reproduce` nor a `statinterp cv` report")
    return {"kind": kind, "command": command, "versions": dict(meta.get("versions") or {})}


def figures_of(doc: Mapping[str, Any]) -> dict[tuple[str, str, str], float]:
    """Every figure a report states: ``(system, term or MACRO, metric) -> value``.

    A reproduction report states its ``reported_per_term`` / ``reported_macro`` values (Random:
    the exact expectation over random orders); a cv report its ``per_term`` / ``macro``.
    """
    out: dict[tuple[str, str, str], float] = {}
    if isinstance(doc.get("methods"), list):
        for m in doc["methods"]:
            name = m["method"]
            for term, values in m.get("reported_per_term", {}).items():
                for metric, v in values.items():
                    out[(name, term, metric)] = v
            for metric, v in m.get("reported_macro", {}).items():
                out[(name, MACRO, metric)] = v
        return out
    for system, by_term in doc.get("per_term", {}).items():
        for term, values in by_term.items():
            for metric, v in values.items():
                out[(system, term, metric)] = v
    for system, values in doc.get("macro", {}).items():
        for metric, v in values.items():
            out[(system, MACRO, metric)] = v
    return out


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= tolerance


def compare_figures(committed: Mapping[str, Any], now: Mapping[str, Any], tolerance: float = DEFAULT_TOLERANCE,
                    report: str = "report") -> CheckResult:
    """Every figure of the ``committed`` report JSON beside the same figure in ``now`` (the JSON
    document a re-run produced). A figure missing now counts as a disagreement."""
    run = recorded_run(committed, report)
    old, new = figures_of(committed), figures_of(now)
    figures = [Figure(system, term, metric, value, new.get((system, term, metric)),
                      _close(value, new.get((system, term, metric)), tolerance))
               for (system, term, metric), value in old.items()]
    return CheckResult(report, run["kind"], tolerance, figures, version_differences(run["versions"]))


def _num(v: float | None) -> str:
    return "missing" if v is None else f"{v:.6f}"


def format_check(result: CheckResult, all_figures: bool = True) -> str:
    """A table of the figures (every one, or only those that disagree) and a verdict line."""
    rows = result.figures if all_figures else result.disagreements
    lines = []
    if rows:
        ws = max(len("system"), *(len(f.system) for f in rows))
        wt = max(len("term"), *(len(f.term) for f in rows))
        wm = max(len("metric"), *(len(f.metric) for f in rows))
        lines.append(f"{'system':<{ws}}  {'term':<{wt}}  {'metric':<{wm}}  {'committed':>10}  {'now':>10}  "
                     f"{'difference':>11}  agrees")
        for f in rows:
            diff = "" if f.difference is None else f"{f.difference:+.2e}"
            lines.append(f"{f.system:<{ws}}  {f.term:<{wt}}  {f.metric:<{wm}}  {_num(f.committed):>10}  "
                         f"{_num(f.now):>10}  {diff:>11}  {'yes' if f.agrees else 'NO'}")
        lines.append("")
    for name, was, now in result.version_changes:
        lines.append(f"version differs: {name} {was or 'not installed'} in the report, {now or 'not installed'} now")
    n, bad = len(result.figures), len(result.disagreements)
    if bad:
        lines.append(f"{result.report}: {bad} of {n} figures disagree (tolerance {result.tolerance:g})"
                     + ("; the library versions above differ from the report's: install with "
                        "`pip install -c constraints.txt -e .` to reproduce it, or regenerate the report"
                        if result.version_changes else ""))
    else:
        lines.append(f"{result.report}: all {n} figures agree within {result.tolerance:g}")
    return "\n".join(lines) + "\n"
