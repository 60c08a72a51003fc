"""Rankings (:meth:`statinterp.evaluation.ranking.Ranking.to_frame`) and evaluation results
(:func:`results_frame`) as pandas DataFrames, in PyTerrier's data model, so that they
drop into the tools IR researchers use (PyTerrier, ir_measures, ranx, pandas itself).

pandas is optional (``pip install 'statinterp[pandas]'``); without it these functions raise a
:class:`~statinterp.errors.UsageError` that names the extra.

A ranking is one row per candidate in rank order with PyTerrier's columns ``qid`` (the term's
key), ``query`` (the term as searched), ``docno`` (the sentence id), ``text``, ``score`` and
``rank`` -- **0-based**, as in PyTerrier (``rank + 1`` is statinterp's own rank) -- followed by
statinterp's own: ``label`` (the annotation, ``None`` when unlabelled), ``case_name``,
``citation``, ``pin_page`` and ``pin_cite``. Evaluation results follow ``pt.Experiment``: one row
per method (``name``) with one column per measure, or with ``perquery=True`` one row per method,
term and measure (``name``, ``qid``, ``measure``, ``value``).

``score`` is the ranker's raw score, and scores tie (TF-ISF of one-word queries often does):
``rank`` is statinterp's order (ties by sentence id ascending: ``metrics.rank_order``), while
trec_eval-style tools re-sort by score and break ties by docno descending. To evaluate a frame
elsewhere with statinterp's figures, score by ``-rank`` (as ``evaluate --run`` writes scores N..1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from statinterp.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PANDAS_HINT", "RANKING_COLUMNS", "require_pandas", "results_frame"]

PANDAS_HINT = "install the pandas extra: pip install 'statinterp[pandas]'"
#: PyTerrier's columns of a ranking, then statinterp's own.
RANKING_COLUMNS = ("qid", "query", "docno", "text", "score", "rank",
                   "label", "case_name", "citation", "pin_page", "pin_cite")


class _Result(Protocol):
    """What :func:`results_frame` reads of an evaluation result (``evaluation.methods.MethodResult``)."""

    method: str
    per_term: Mapping[str, Mapping[str, float]]
    macro: Mapping[str, float]


def require_pandas() -> Any:
    """The pandas module, or a one-line :class:`UsageError` naming the extra that installs it."""
    try:
        import pandas
    except ImportError:
        raise UsageError(f"DataFrames need pandas, which is not installed: {PANDAS_HINT}") from None
    return pandas


def results_frame(results: Iterable[_Result], perquery: bool = False) -> pd.DataFrame:
    """:func:`statinterp.evaluation.methods.evaluate_methods`'s results as ``pt.Experiment`` gives them:
    ``name`` and the macro average of each measure per method, or (``perquery=True``) ``name``,
    ``qid``, ``measure``, ``value`` per method, term and measure (terms and measures in the
    results' order)."""
    pd = require_pandas()
    results = list(results)
    if perquery:
        long = [(r.method, term, measure, float(value)) for r in results
                for term, values in r.per_term.items() for measure, value in values.items()]
        return pd.DataFrame.from_records(long, columns=["name", "qid", "measure", "value"])
    measures = list(dict.fromkeys(m for r in results for m in r.macro))
    wide = [(r.method, *(float(r.macro.get(m, float("nan"))) for m in measures)) for r in results]
    return pd.DataFrame.from_records(wide, columns=["name", *measures])
