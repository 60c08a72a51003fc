"""Experiments over a prepared corpus: hyperparameter tuning, the full reproduction run and its
check against a committed report.

Tuning is a grid search. A method is a ranker object (or a method name, parsed once with
:func:`statinterp.rankers.grammar.parse`); every grid point is a set of keyword parameters
applied to it with :func:`statinterp.rankers.grammar.with_params` (``lam`` = λ1, ``lam2`` = λ2,
``nwr``, ``qllm_lam``, ..., whichever the method accepts, or ``part__param`` names such as
``similarity__k1``). The default grid is made of the grids the parts declare
(:func:`statinterp.rankers.registry.candidate_grid`). The corpus is analysed once by the caller; each grid point is
then scored and evaluated on *every* labelled term of the prepared corpus, once
(:func:`evaluate_grid`). Choosing the best point for a set of tuning terms is then pure
bookkeeping, so leave-one-term-out tuning costs no more than one grid evaluation.

* :func:`tune`: best point by the macro average of a metric over the tuning terms (ties: the
  first point in grid order); the best point's scores on the remaining (held-out) terms.
* :func:`tune_loo`: for each term, the best point by the macro over the *other* terms, and its
  score on the term itself; the macro over terms of those held-out scores.
* :func:`reproduce`: every runnable method on every term (methods that cannot run, e.g. ones
  needing pretrained vectors that were not given, are skipped with the reason).

**Rule choice**: choosing switchable rules on some terms and measuring them on terms held apart.

Rules chosen on the terms they are measured on flatter themselves: a rule written for a layout
that only one term shows helps that term in-sample and nothing else. :func:`held_apart`
measures the rule choice itself: the terms are cut into folds (:func:`folds`), the rules are
chosen on the other folds' terms (:func:`choose_rules`) and measured on the fold's own, and the
held-apart scores are summed over the folds: what the procedure gives on terms it never saw,
which is what it predicts for new terms.

A *score* is a tuple of counts (say, sentences found exactly and sentences found), summed
element-wise over terms and compared lexicographically (the first count decides, the next ones
break its ties). Everything is deterministic: the folds follow the terms' sorted order, the rules
are tried in the order given, ties go to the rule tried first.

**Checking a committed report** (``reproduce --check``): the figures it states against the figures a re-run gives now.

:func:`recorded_run` reads what a report JSON (``statinterp reproduce`` or ``statinterp cv``)
says was run; :func:`compare_figures` lines up every figure it states (per term and macro) with
the same figure now and says whether they agree within a tolerance; :func:`format_check`
prints them. The CLI (``statinterp reproduce --check REPORT.json``) re-runs and exits 1 when a
figure disagrees. Pure functions: no file is read or written here.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from statinterp.errors import StatinterpError, UsageError
from statinterp.evaluation.metrics import DEFAULT_METRICS, Metric, macro_average, parse_metric
from statinterp.evaluation.ranking import MethodResult, evaluate_methods, rank
from statinterp.index.term_index import PreparedCorpus
from statinterp.progress import iterate
from statinterp.provenance import version_differences
from statinterp.rankers.base import Gated, Ranker
from statinterp.rankers.grammar import as_ranker, list_methods, parse, with_params
from statinterp.rankers.registry import candidate_grid

__all__ = ["Score", "choose_rules", "folds", "held_apart", "total_score", "GridPoint", "LooFold", "LooResult",
           "Reproduction", "TuneResult", "all_methods", "best_point", "core_methods", "default_grid",
           "evaluate_grid", "format_params", "grid_points", "inert_parameters", "parse_grid",
           "parse_grid_values", "reproduce", "tune", "tune_loo", "DEFAULT_TOLERANCE", "CheckResult", "Figure",
           "compare_figures", "figures_of", "format_check", "recorded_run"]

Score = tuple[int, ...]

#: ``score(rules, term)``: the score of ``term`` with the set of rules ``rules`` switched on.
Scorer = Callable[[frozenset[str], str], Score]


def total_score(score: Scorer, rules: frozenset[str], terms: Iterable[str]) -> Score:
    """``score(rules, term)`` summed element-wise over ``terms`` (``()`` for no terms)."""
    parts = [score(rules, term) for term in terms]
    return tuple(sum(values) for values in zip(*parts, strict=True)) if parts else ()


def choose_rules(rules: Sequence[str], score: Scorer, terms: Sequence[str]) -> tuple[frozenset[str], list[dict]]:
    """The rules that ablation keeps on ``terms``, and the ablation's steps.

    Each rule is taken out of the full set of ``rules`` alone; it is kept when that lowers the total
    score on ``terms`` (:func:`total_score`): a rule is kept only when it earns its place on these
    terms, given all the others. A rule whose work another rule also does (taking either out alone
    changes nothing) is dropped with its twin: the chosen set is scored as a whole, so such a loss
    shows. Each step is ``{"rule": name, "score": total without it}``; the first is ``{"rule": None,
    "score": total with every rule}``. The rule sets scored are the same whatever ``terms`` are (the
    full set and the full set less one rule), so choices on many term subsets share their scores.
    """
    every = frozenset(rules)
    full = total_score(score, every, terms)
    steps: list[dict] = [{"rule": None, "score": full}]
    steps += [{"rule": rule, "score": total_score(score, every - {rule}, terms)} for rule in rules]
    return frozenset(step["rule"] for step in steps[1:] if step["score"] < full), steps


def folds(terms: Iterable[str], k: int) -> list[list[str]]:
    """``terms`` in sorted order dealt into ``k`` folds: the i-th term goes to fold ``i % k``."""
    ordered = sorted(terms)
    if not 1 < k <= len(ordered):
        raise ValueError(f"cannot deal {len(ordered)} terms into {k} folds (2 to {len(ordered)} folds)")
    return [ordered[i::k] for i in range(k)]


def held_apart(rules: Sequence[str], score: Scorer, terms: Sequence[str], k: int) -> dict:
    """The rule choice (:func:`choose_rules`) measured on terms held apart from it.

    For each of the ``k`` folds (:func:`folds`): the rules chosen on the other folds' terms and
    their score on the fold's terms. Returns ``{"folds": [{"held_apart": terms, "chosen": sorted
    rules, "steps": ..., "score": per held-apart term}], "score": summed over every term (each
    scored once, by the rules chosen without it)}``.
    """
    out = []
    per_term: dict[str, Score] = {}
    for fold in folds(terms, k):
        training = [t for t in sorted(terms) if t not in fold]
        chosen, steps = choose_rules(rules, score, training)
        scores = {t: score(chosen, t) for t in fold}
        per_term.update(scores)
        out.append({"held_apart": fold, "chosen": [r for r in rules if r in chosen], "steps": steps,
                    "score": scores})
    return {"folds": out, "score": total_score(lambda _, t: per_term[t], frozenset(), sorted(terms))}

Grid = dict[str, list[Any]]

Params = dict[str, Any]


def _number(text: str) -> Any:
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):  # nan/inf: a threshold that never (or always) fires, silently
        raise UsageError(f"grid value {text!r} is not a finite number")
    return value


def parse_grid_values(text: str) -> list[Any]:
    """``"0,0.1,...,1"`` -> [0, 0.1, ..., 1.0]; ``"1,2,4"`` -> [1, 2, 4].

    ``...`` continues the arithmetic progression of the two values before it up to the value
    after it (exact decimal arithmetic, so 0.1 steps give 0.3, not 0.30000000000000004).
    """
    parts = [p.strip() for p in text.split(",")]
    if not parts or any(p == "" for p in parts):
        raise UsageError(f"grid values {text!r}: expected comma-separated values, e.g. 0,0.1,...,1")
    if "..." not in parts:
        return [_number(p) for p in parts]
    at = parts.index("...")
    if parts.count("...") > 1 or at < 2 or at != len(parts) - 2:
        raise UsageError(f"grid values {text!r}: write a progression as a,b,...,z (e.g. 0,0.1,...,1)")
    try:
        a, b, z = Decimal(parts[at - 2]), Decimal(parts[at - 1]), Decimal(parts[at + 1])
    except InvalidOperation:
        raise UsageError(f"grid values {text!r}: a progression needs numbers") from None
    step = b - a
    if step == 0 or (z - b) * step < 0:
        raise UsageError(f"grid values {text!r}: the progression {a}, {b}, ... never reaches {z}")
    n = (z - a) / step
    if n != n.to_integral_value():
        raise UsageError(f"grid values {text!r}: {z} is not a whole number of steps of {step} from {a}")
    ints = all(re.fullmatch(r"[+-]?\d+", p) for p in (parts[at - 2], parts[at - 1], parts[at + 1]))
    seq = [a + step * i for i in range(int(n) + 1)]
    head = [_number(p) for p in parts[: at - 2]]
    return head + [int(v) if ints else float(v) for v in seq]


def parse_grid(specs: Iterable[str]) -> Grid:
    """``["lam=0,0.1,...,1", "qllm_lam=0.5,0.9"]`` -> ``{"lam": [...], "qllm_lam": [...]}``."""
    grid: Grid = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UsageError(f"--grid {spec!r}: expected NAME=VALUES, e.g. lam=0,0.1,...,1")
        if name in grid:
            raise UsageError(f"--grid: parameter {name!r} given twice")
        vals = parse_grid_values(values)
        if len(set(map(repr, vals))) != len(vals):
            raise UsageError(f"--grid {spec!r}: repeated values")
        grid[name] = vals
    return grid


def grid_points(grid: Grid) -> list[Params]:
    """Every combination of the grid's values, the last parameter varying fastest."""
    names = list(grid)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(grid[n] for n in names))]

Method = str | Ranker


def _build(method: Method, params: Params) -> Ranker:
    return with_params(as_ranker(method), **params)


def default_grid(method: Method) -> Grid:
    """The parameters of :func:`candidate_grid` that ``method`` accepts and that matter."""
    ranker = as_ranker(method)
    # A gated compound tunes its gates (λ2, thresholds); its base keeps its own tuned λ1.
    skip = {"lam"} if isinstance(ranker, Gated) else set()
    grid: Grid = {}
    candidates = candidate_grid()
    for name, values in candidates.items():
        if name in skip:
            continue
        try:
            first, last = _build(ranker, {name: values[0]}), _build(ranker, {name: values[-1]})
        except (StatinterpError, TypeError, ValueError):
            continue
        if first != last:
            grid[name] = list(values)
    if not grid:
        raise UsageError(
            f"method {ranker.name!r} has no tunable parameter among {', '.join(candidates)}; "
            f"give one with --grid NAME=VALUES"
        )
    return grid


def inert_parameters(method: Method, grid: Grid) -> list[str]:
    """Grid parameters whose values all build the same ranker (tuning them does nothing)."""
    method = as_ranker(method)
    base = {n: v[0] for n, v in grid.items()}
    inert = []
    for name, values in grid.items():
        if len(values) < 2:
            continue
        built: set[object] = set()
        for v in values:
            try:
                built.add(_build(method, {**base, name: v}))
            except (StatinterpError, TypeError, ValueError):
                built.add(f"error {v!r}")
        if len(built) == 1:
            inert.append(name)
    return inert


def format_params(params: Params) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()) or "(defaults)"


@dataclass
class GridPoint:
    """One grid point evaluated on every labelled term (``error`` if it cannot run)."""

    params: Params
    per_term: dict[str, dict[str, float]] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def macro(self, key: str, terms: Sequence[str]) -> float:
        return float(sum(self.per_term[t][key] for t in terms) / len(terms))


def _labelled_keys(prepared: PreparedCorpus) -> list[str]:
    return [ix.key for ix in prepared if ix.term.labelled]


def _metrics(metric: Metric | str) -> tuple[Metric, list[Metric]]:
    target = metric if isinstance(metric, Metric) else parse_metric(metric)
    all_metrics = list(DEFAULT_METRICS)
    if target not in all_metrics:
        all_metrics.append(target)
    return target, all_metrics


def evaluate_grid(
    prepared: PreparedCorpus,
    method: Method,
    grid: Grid,
    metrics: Sequence[Metric | str] = DEFAULT_METRICS,
    show_progress: bool = False,
) -> list[GridPoint]:
    """Score and evaluate every grid point on every labelled term of ``prepared``, once.

    A point whose ranker cannot be built or cannot score (e.g. a QLLM context weight above
    QLLM's λ) is kept with its ``error`` and no scores.
    """
    parsed = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]
    indices = [ix for ix in prepared if ix.term.labelled]
    if not indices:
        raise UsageError("no loaded term has labelled sentences: nothing to tune on")
    method = as_ranker(method)
    points = [GridPoint(p) for p in grid_points(grid)]
    for point in iterate(points, f"Evaluating {method.name} grid", show_progress and len(points) > 1):
        try:
            ranker = _build(method, point.params)
            point.per_term = {ix.key: rank(ranker, ix).evaluate(parsed) for ix in indices}
        except (StatinterpError, ValueError) as exc:
            point.per_term, point.error = {}, str(exc)
    if not any(p.ok for p in points):
        raise UsageError(f"no grid point of {method.name} could be evaluated; first error: {points[0].error}")
    return points


def best_point(points: Sequence[GridPoint], key: str, terms: Sequence[str]) -> tuple[GridPoint, float]:
    """The point with the highest macro ``key`` over ``terms`` (first in grid order on ties)."""
    if not terms:
        raise UsageError("cannot tune on zero terms")
    best, best_score = None, float("-inf")
    for p in points:
        if p.ok:
            s = p.macro(key, terms)
            if s > best_score:
                best, best_score = p, s
    assert best is not None
    return best, best_score


@dataclass
class TuneResult:
    """Grid search on ``tune_terms``; the best point scored on ``test_terms`` (held out)."""

    method: str
    metric: str
    grid: Grid
    tune_terms: list[str]
    test_terms: list[str]
    best_params: Params
    tune_score: float  # macro ``metric`` of the best point over the tuning terms
    test_per_term: dict[str, dict[str, float]]  # the best point on each held-out term
    test_macro: dict[str, float]
    default_test_macro: dict[str, float]  # the method with its default parameters, same terms
    points: list[GridPoint]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["mode"] = "split"
        d["points"] = [
            {"params": p.params, "error": p.error,
             "tune": p.macro(self.metric, self.tune_terms) if p.ok else None,
             "test": p.macro(self.metric, self.test_terms) if p.ok and self.test_terms else None,
             "per_term": p.per_term}
            for p in self.points
        ]
        return d


@dataclass
class LooFold:
    """One leave-one-term-out fold: tuned on ``tuned_on``, evaluated on ``term`` only."""

    term: str
    tuned_on: list[str]
    best_params: Params
    tune_score: float
    held_out: dict[str, float]
    default: dict[str, float]  # the method with its default parameters on ``term``


@dataclass
class LooResult:
    method: str
    metric: str
    grid: Grid
    folds: list[LooFold]
    macro: dict[str, float]  # macro over terms of the held-out scores
    default_macro: dict[str, float]
    points: list[GridPoint]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["mode"] = "leave-one-term-out"
        d["points"] = [{"params": p.params, "error": p.error, "per_term": p.per_term} for p in self.points]
        return d


def _default_scores(prepared: PreparedCorpus, ranker: Ranker, metrics: Sequence[Metric]) -> dict[str, dict[str, float]]:
    return {ix.key: rank(ranker, ix).evaluate(metrics) for ix in prepared if ix.term.labelled}


def _setup(method: Method, grid: Grid | None, metric: Metric | str):
    ranker = as_ranker(method)
    target, metrics = _metrics(metric)
    grid = grid if grid else default_grid(ranker)
    for name, values in grid.items():
        if not values:
            raise UsageError(f"grid parameter {name!r} has no values")
    _build(ranker, {n: v[0] for n, v in grid.items()})  # a parameter that does not apply -> UsageError
    label = method if isinstance(method, str) else ranker.name
    notes = [f"parameter {n!r} does not change method {label!r}: every value builds the same ranker"
             for n in inert_parameters(ranker, grid)]
    return ranker, target, metrics, grid, notes


def _error_notes(points: Sequence[GridPoint]) -> list[str]:
    bad = [p for p in points if not p.ok]
    if not bad:
        return []
    return [f"{len(bad)} of {len(points)} grid points could not run and were skipped, e.g. "
            f"{format_params(bad[0].params)}: {bad[0].error}"]


def tune(
    prepared: PreparedCorpus,
    method: Method,
    grid: Grid | None = None,
    *,
    metric: Metric | str = "nDCG@100",
    tune_terms: Sequence[str] | None = None,
    show_progress: bool = False,
) -> TuneResult:
    """Grid search maximising the macro ``metric`` over ``tune_terms`` (default: every
    labelled term, leaving nothing held out); the best point is scored on the other terms."""
    ranker, target, metrics, grid, notes = _setup(method, grid, metric)
    labelled = _labelled_keys(prepared)
    if tune_terms:
        chosen = []
        for t in tune_terms:
            key = prepared[t].key  # UsageError for unknown terms
            if key not in labelled:
                raise UsageError(f"tuning term {t!r} has no labelled sentences")
            if key not in chosen:
                chosen.append(key)
    else:
        chosen = list(labelled)
        notes.append("tuned on every term: no held-out terms (give --tune-term or --loo)")
    test = [t for t in labelled if t not in chosen]
    points = evaluate_grid(prepared, ranker, grid, metrics, show_progress)
    notes += _error_notes(points)
    best, score = best_point(points, target.name, chosen)
    test_per_term = {t: best.per_term[t] for t in test}
    default = _default_scores(prepared, ranker, metrics)
    return TuneResult(
        method=ranker.name, metric=target.name, grid=grid, tune_terms=chosen, test_terms=test,
        best_params=dict(best.params), tune_score=score, test_per_term=test_per_term,
        test_macro=macro_average(test_per_term) if test else {},
        default_test_macro=macro_average({t: default[t] for t in test}) if test else {},
        points=points, notes=notes,
    )


def tune_loo(
    prepared: PreparedCorpus,
    method: Method,
    grid: Grid | None = None,
    *,
    metric: Metric | str = "nDCG@100",
    show_progress: bool = False,
) -> LooResult:
    """Leave-one-term-out: for each term, tune on the other terms and score on it."""
    ranker, target, metrics, grid, notes = _setup(method, grid, metric)
    labelled = _labelled_keys(prepared)
    if len(labelled) < 2:
        raise UsageError("leave-one-term-out tuning needs at least two labelled terms")
    points = evaluate_grid(prepared, ranker, grid, metrics, show_progress)
    notes += _error_notes(points)
    default = _default_scores(prepared, ranker, metrics)
    folds = []
    for term in labelled:
        others = [t for t in labelled if t != term]
        best, score = best_point(points, target.name, others)
        folds.append(LooFold(term, others, dict(best.params), score, best.per_term[term], default[term]))
    return LooResult(
        method=ranker.name, metric=target.name, grid=grid, folds=folds,
        macro=macro_average({f.term: f.held_out for f in folds}),
        default_macro=macro_average({f.term: f.default for f in folds}),
        points=points, notes=notes,
    )


@dataclass
class Reproduction:
    """Every runnable method evaluated on every labelled term, plus what was skipped."""

    results: list[MethodResult]  # in list_methods() order
    skipped: list[tuple[str, str]]  # (method, reason)
    terms: list[str]
    sentences: dict[str, int]  # labelled sentences per term
    statistics: str  # the background-statistics description
    metadata: dict[str, Any] = field(default_factory=dict)  # command, date, data, ...


def core_methods() -> list[str]:
    """Random, TF-ISF, BM25, QLLM and their -c/-o/-p variants (issue 2's core table)."""
    return ["Random"] + [f"{b}{s}" for b in ("TF-ISF", "BM25", "QLLM") for s in ("", "-c", "-o", "-p")]


def all_methods() -> list[str]:
    return [name for name, _ in list_methods()]


def reproduce(
    prepared: PreparedCorpus,
    methods: Sequence[str] | None = None,
    metrics: Sequence[Metric | str] = DEFAULT_METRICS,
    *,
    show_progress: bool = False,
    metadata: dict[str, Any] | None = None,
) -> Reproduction:
    """Evaluate ``methods`` (default: every registered method) on every labelled term.

    A method that cannot be built or cannot score this data (a
    :class:`~statinterp.errors.StatinterpError`, e.g. pretrained vectors not given) is skipped
    and reported with the reason; any other error propagates.
    """
    names = list(methods) if methods is not None else all_methods()
    labelled = [ix for ix in prepared if ix.term.labelled]
    if not labelled:
        raise UsageError("no loaded term has labelled sentences: nothing to evaluate")
    results, skipped = [], []
    for name in iterate(names, "Running methods", show_progress):
        try:
            ranker = parse(name)
            results.extend(evaluate_methods(prepared, [ranker], metrics))
        except StatinterpError as exc:
            skipped.append((name, str(exc)))
    return Reproduction(
        results=results, skipped=skipped, terms=[ix.key for ix in labelled],
        sentences={ix.key: int(sum(s.gain is not None for s in ix.sentences)) for ix in labelled},
        statistics=prepared.background.description, metadata=dict(metadata or {}),
    )

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
