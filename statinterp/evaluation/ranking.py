"""Rankings: a ranker's scores put in order, their evaluation, methods evaluated on a prepared
corpus, near-duplicates collapsed, and rankings as pandas DataFrames.

Ties are broken by the documented deterministic rule of
:func:`statinterp.evaluation.metrics.rank_order`: score descending, then sentence id ascending.

**Methods evaluated** on a prepared corpus: per-term and macro figures of each (``statinterp evaluate``).

:func:`evaluate_methods` ranks every labelled term of a prepared corpus with each method
(:func:`statinterp.evaluation.ranking.rank`) and measures the rankings
(:mod:`statinterp.evaluation.metrics`); it is what :mod:`statinterp.workflow` offers its users,
and what the reproduction run (:func:`statinterp.evaluation.tuning.reproduce`) repeats method
by method.


**DataFrames**: rankings (:meth:`statinterp.evaluation.ranking.Ranking.to_frame`) and evaluation results
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

**Near-duplicate sentences**: find them, and collapse a ranking to one copy of each.

Court opinions quote each other, so a term's candidates often hold the same sentence several
times (a holding repeated in later cases, a provision quoted in many). Two candidates are
*near-duplicates* when the Jaccard similarity of their token sets (the analysis tokens: lower-
cased lemmas) is at least ``threshold`` (0.9):  J(a, b) = |a ∩ b| / |a ∪ b|.

Candidate pairs come from a sorted-shingle (prefix-filter) index, which is exact: each set's
tokens are sorted rarest first (by how many of the term's candidates contain them, ties by id);
two sets with J ≥ t must share a token among the first ``|s| − ⌈t·|s|⌉ + 1`` tokens of each,
so only sets sharing such a prefix token are compared, and then only when their sizes allow
J ≥ t (t·|a| ≤ |b| ≤ |a| / t). Every candidate pair is verified with the exact Jaccard value.

Collapsing (:func:`collapse`) walks the ranking from the top: each sentence not yet absorbed
becomes a representative and absorbs every lower-ranked, not yet absorbed sentence that is a
near-duplicate *of it* (no chaining through intermediate copies). A representative is thus the
best-ranked copy of its group; it is shown with the number of copies it stands for.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from statinterp.corpus.authority import court_authority
from statinterp.corpus.pin_cites import sentence_pin_cite
from statinterp.errors import UsageError
from statinterp.evaluation.metrics import (
    DEFAULT_METRICS,
    Metric,
    evaluate_scores,
    macro_average,
    parse_metric,
    rank_order,
)
from statinterp.index.term_index import PreparedCorpus, TermIndex
from statinterp.progress import iterate
from statinterp.rankers.base import Ranker
from statinterp.rankers.grammar import as_ranker
from statinterp.vectors.provider import vector_kinds

__all__ = ["PANDAS_HINT", "RANKING_COLUMNS", "require_pandas", "results_frame", "RankedSentence", "Ranking",
           "by_authority", "rank", "MethodResult", "evaluate_methods", "prefetch_vectors",
           "DEFAULT_THRESHOLD", "jaccard", "token_sets", "similar_pairs", "near_duplicate_counts", "collapse",
           "Collapsed", "collapse_ranking"]

if TYPE_CHECKING:
    import pandas as pd

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
    """:func:`statinterp.evaluation.ranking.evaluate_methods`'s results as ``pt.Experiment`` gives them:
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


@dataclass
class RankedSentence:
    rank: int
    score: float
    sentence_id: str
    text: str
    label: str | None
    case_name: str
    citation: str
    pin_page: str | None = None  # the reporter page the sentence starts on (None: unknown)
    pin_cite: str = ""  # the case's citation pinned to it (statinterp.corpus.pin_cites.sentence_pin_cite)
    court: str = ""  # the case's court, as stored
    level: str = ""  # its level: supreme, appellate, trial, "" (statinterp.corpus.authority.court_authority)
    jurisdiction: str = ""  # federal, a state's name, or "" (unknown)
    date: str = ""  # the case's decision date


@dataclass
class Ranking:
    """One term's candidates in rank order under one method."""

    term: str
    method: str
    scores: np.ndarray  # per candidate, in the index's order
    order: np.ndarray  # candidate indices in rank order
    index: TermIndex

    def __len__(self) -> int:
        return len(self.order)

    def rows(self, top: int | None = None) -> list[RankedSentence]:
        out = []
        for r, i in enumerate(self.order[:top] if top else self.order, start=1):
            s = self.index.sentences[i]
            case = self.index.term.cases[s.case_id]
            authority = court_authority(case.court, case.jurisdiction)
            out.append(RankedSentence(r, float(self.scores[i]), s.id, s.text, s.label,
                                      case.short_name or case.name, case.citation, s.pin_page or None,
                                      sentence_pin_cite(self.index.term, s), case.court, authority.level,
                                      authority.jurisdiction, case.date))
        return out

    def to_frame(self, top: int | None = None) -> pd.DataFrame:
        """The ranking (its first ``top`` rows, default all) as a pandas DataFrame with PyTerrier's
        columns ``qid`` (the term's key), ``query``, ``docno`` (the sentence id), ``text``, ``score``,
        ``rank`` (0-based, as in PyTerrier: ``rank + 1`` is :meth:`rows`' rank), then ``label``,
        ``case_name``, ``citation``, ``pin_page``, ``pin_cite`` (:mod:`statinterp.evaluation.ranking`).
        Needs the pandas extra."""
        pandas = require_pandas()
        query = self.index.term.query
        records = [(self.term, query, r.sentence_id, r.text, r.score, r.rank - 1,
                    r.label, r.case_name, r.citation, r.pin_page, r.pin_cite) for r in self.rows(top)]
        frame = pandas.DataFrame.from_records(records, columns=list(RANKING_COLUMNS))
        return frame.astype({"qid": str, "query": str, "docno": str, "text": str, "score": "float64",
                             "rank": "int64"})

    def evaluate(self, metrics: Iterable[Metric | str] = DEFAULT_METRICS) -> dict[str, float]:
        return evaluate_scores(self.scores, self.index.gains, self.index.sentence_ids.astype(str), metrics,
                               term=self.term)

#: The reading orders of ``rank --order``: by score (the method's order), or by authority.
ORDERS = ("score", "authority")


def by_authority(rows: list[RankedSentence]) -> list[RankedSentence]:
    """``rows`` (the top of a ranking) for reading by authority: court level (supreme, appellate,
    trial, unknown), then the newest first, then the score's rank. Each row keeps its rank and
    score: the order shown changes, never the score."""
    from statinterp.corpus.authority import LEVEL_ORDER

    newest_first = sorted(rows, key=lambda r: r.date, reverse=True)
    return sorted(newest_first, key=lambda r: LEVEL_ORDER.get(r.level, len(LEVEL_ORDER)))


def rank(ranker: Ranker, index: TermIndex) -> Ranking:
    """Score ``index``'s candidates with ``ranker`` and order them."""
    scores = np.asarray(ranker.score(index), dtype=np.float64)
    if scores.shape != (len(index),):
        raise RuntimeError(f"{ranker.name} returned {scores.shape} scores for {len(index)} candidates")
    if np.isnan(scores).any():
        raise RuntimeError(f"{ranker.name} produced NaN scores for term {index.key!r}")
    order = rank_order(scores, index.sentence_ids.astype(str))
    return Ranking(index.key, ranker.name, scores, order, index)


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

DEFAULT_THRESHOLD = 0.9


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def token_sets(index: TermIndex) -> list[frozenset]:
    """The set of analysis token ids of each candidate sentence."""
    units = index.levels["sentence"]
    return [frozenset(units.seqs.row(int(r)).tolist()) if r >= 0 else frozenset() for r in units.row]


def similar_pairs(sets: Sequence[frozenset], threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, int, float]]:
    """Every pair (i, j, J), i < j, of non-empty sets with Jaccard J ≥ ``threshold`` (prefix filtering)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1], not {threshold}")
    freq: dict[int, int] = defaultdict(int)
    for s in sets:
        for t in s:
            freq[t] += 1
    postings: dict[int, list[int]] = defaultdict(list)
    pairs: list[tuple[int, int, float]] = []
    order = sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i))
    for i in order:  # by size: every earlier set is no larger, so only the lower size bound matters
        s = sets[i]
        ranked = sorted(s, key=lambda t: (freq[t], t))
        prefix = len(s) - math.ceil(threshold * len(s) - 1e-9) + 1
        seen: set[int] = set()
        for t in ranked[:prefix]:
            for j in postings[t]:
                if j in seen:
                    continue
                seen.add(j)
                if len(sets[j]) < threshold * len(s) - 1e-9:
                    continue
                jac = jaccard(s, sets[j])
                if jac >= threshold - 1e-12:
                    pairs.append((min(i, j), max(i, j), jac))
            postings[t].append(i)
    return sorted(pairs)


def near_duplicate_counts(index: TermIndex, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """For each candidate, how many other candidates of the term are its near-duplicates."""
    counts = np.zeros(len(index))
    for i, j, _ in similar_pairs(token_sets(index), threshold):
        counts[i] += 1
        counts[j] += 1
    return counts


def collapse(order: Sequence[int] | np.ndarray, sets: Sequence[frozenset],
             threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, list[int]]]:
    """(representative, [its copies, best first, the representative included]) in rank order."""
    neighbours: dict[int, set[int]] = defaultdict(set)
    for i, j, _ in similar_pairs(sets, threshold):
        neighbours[i].add(j)
        neighbours[j].add(i)
    rank_of = {int(c): r for r, c in enumerate(order)}
    taken: set[int] = set()
    groups = []
    for c in order:
        c = int(c)
        if c in taken:
            continue
        taken.add(c)
        members = [c] + sorted((j for j in neighbours[c] if j not in taken and j in rank_of),
                               key=lambda j: rank_of[j])
        taken.update(members)
        groups.append((c, members))
    return groups


@dataclass
class Collapsed:
    """A ranking with near-duplicates collapsed to their best-ranked copy."""

    ranking: Ranking
    groups: list[tuple[int, list[int]]]
    threshold: float

    def __len__(self) -> int:
        return len(self.groups)


def collapse_ranking(ranking: Ranking, threshold: float = DEFAULT_THRESHOLD) -> Collapsed:
    return Collapsed(ranking, collapse(ranking.order, token_sets(ranking.index), threshold), threshold)
