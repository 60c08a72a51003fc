"""What every ranker and similarity provides.

A :class:`Ranker` scores the candidate sentences of one term (a :class:`~statinterp.index.term_index.TermIndex`)
and returns one score per candidate; higher ranks first. Rankers are small objects whose
constructor holds every parameter (as scikit-learn estimators do) and which compose
(as PyTerrier's operators do): ``Gated(Interpolated(TFISF(), "paragraph", 0.9), [NoveltyGate()])``.

A :class:`Similarity` is a ranker built from a query-to-unit similarity. It splits its formula
into per-query-token *evidence* and a *combination* over query tokens, so that context
interpolation can mix evidence from two granularities before the combination (needed by the
query-likelihood model, where the mixing happens inside the logarithm).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from statinterp.index.term_index import Query, TermIndex
    from statinterp.index.statistics import CollectionStats
    from statinterp.text.units import TokenSeqs


class Ranker(ABC):
    """Scores the candidate sentences of a term."""

    #: The paper-style method name, e.g. ``TF-ISF-p``.
    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    def score(self, index: "TermIndex") -> np.ndarray:
        """One score per candidate of ``index``, in the index's order."""

    def explain(self, index: "TermIndex", i: int) -> dict:
        """Components of candidate ``i``'s score (overridden by composite rankers)."""
        return {"method": self.name, "score": float(self.score(index)[i])}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


class Similarity(Ranker):
    """A query-to-text similarity; as a ranker it scores the candidate sentences themselves."""

    #: Short name used in method names (``TF-ISF``, ``BM25``, ``QLLM``, ``w2vec*``).
    short_name: str = ""

    @property
    def name(self) -> str:
        return self.short_name

    @abstractmethod
    def evidence(self, query: "Query", units: "TokenSeqs", stats: "CollectionStats", index: "TermIndex") -> np.ndarray:
        """Per unit and query token, the evidence the formula sums: array (n_units, len(query))."""

    @abstractmethod
    def combine(self, evidence: np.ndarray, query: "Query", stats: "CollectionStats") -> np.ndarray:
        """Combine (mixed) evidence over the query tokens into one score per unit."""

    def direct(self, evidence: np.ndarray) -> np.ndarray:
        """Evidence of a unit scored on its own (no context)."""
        return evidence

    def mix(self, own: np.ndarray, context: np.ndarray, lam: float) -> np.ndarray:
        """Linear interpolation ``(1 - lam) * own + lam * context`` (overridden by QLLM)."""
        return (1.0 - lam) * own + lam * context

    def score_units(self, query: "Query", units: "TokenSeqs", stats: "CollectionStats", index: "TermIndex") -> np.ndarray:
        return self.combine(self.direct(self.evidence(query, units, stats, index)), query, stats)

    def score(self, index: "TermIndex") -> np.ndarray:
        units = index.levels["sentence"]
        return units.spread(self.score_units(index.query, units.seqs, index.background["sentence"], index))
