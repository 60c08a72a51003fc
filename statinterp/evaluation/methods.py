"""Methods evaluated on a prepared corpus: per-term and macro figures of each (``statinterp evaluate``).

:func:`evaluate_methods` ranks every labelled term of a prepared corpus with each method
(:func:`statinterp.evaluation.ranking.rank`) and measures the rankings
(:mod:`statinterp.evaluation.metrics`); it is what :mod:`statinterp.workflow` offers its users,
and what the reproduction run (:func:`statinterp.evaluation.tuning.reproduce`) repeats method
by method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from statinterp.evaluation.metrics import DEFAULT_METRICS, Metric, macro_average, parse_metric
from statinterp.evaluation.ranking import rank
from statinterp.index.term_index import PreparedCorpus
from statinterp.progress import iterate
from statinterp.rankers.base import Ranker
from statinterp.rankers.grammar import as_ranker
from statinterp.vectors.provider import vector_kinds

__all__ = ["MethodResult", "evaluate_methods", "prefetch_vectors"]


def prefetch_vectors(prepared: PreparedCorpus, rankers: Sequence[str | Ranker]) -> None:
    """Train or load, now, the word vectors that ``rankers`` will use (so that training shows
    its own progress bar before any other is drawn)."""
    kinds: list[str] = []
    for ranker in rankers:
        for kind in vector_kinds(as_ranker(ranker)):
            if kind not in kinds:
                kinds.append(kind)
    provider = getattr(prepared, "vectors", None)
    if kinds and provider is not None:
        provider.prefetch(kinds)


@dataclass
class MethodResult:
    method: str
    per_term: dict[str, dict[str, float]]
    macro: dict[str, float] = field(default_factory=dict)


def evaluate_methods(
    prepared: PreparedCorpus,
    methods: Sequence[str | Ranker],
    metrics: Sequence[Metric | str] = DEFAULT_METRICS,
    show_progress: bool = False,
) -> list[MethodResult]:
    """Per-term and macro NDCG of each method on every labelled term of ``prepared``."""
    parsed = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]
    rankers = [as_ranker(m) for m in methods]
    indices = [ix for ix in prepared if ix.term.labelled]
    prefetch_vectors(prepared, rankers)
    results = []
    jobs = [(j, r, ix) for j, r in enumerate(rankers) for ix in indices]
    per: list[dict[str, dict[str, float]]] = [{} for _ in rankers]  # by position: names may repeat
    for j, ranker, ix in iterate(jobs, "Ranking and evaluating", show_progress and len(jobs) > 20):
        per[j][ix.key] = rank(ranker, ix).evaluate(parsed)
    for j, ranker in enumerate(rankers):
        res = MethodResult(ranker.name, per[j])
        if res.per_term:
            res.macro = macro_average(res.per_term)
        results.append(res)
    return results
