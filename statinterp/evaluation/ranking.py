"""Rankings: a ranker's scores put in order, and their evaluation.

Ties are broken by the documented deterministic rule of
:func:`statinterp.evaluation.metrics.rank_order`: score descending, then sentence id ascending.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.corpus.authority import court_authority
from statinterp.corpus.pin_cites import sentence_pin_cite
from statinterp.evaluation.frames import RANKING_COLUMNS, require_pandas
from statinterp.evaluation.metrics import DEFAULT_METRICS, Metric, evaluate_scores, rank_order
from statinterp.index.term_index import TermIndex
from statinterp.rankers.base import Ranker

if TYPE_CHECKING:
    import pandas as pd


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
        ``case_name``, ``citation``, ``pin_page``, ``pin_cite`` (:mod:`statinterp.evaluation.frames`).
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
