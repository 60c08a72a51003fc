"""Context: scoring a sentence together with its paragraph, opinion, case or neighbours.

* :class:`Interpolated` (suffixes ``-p``, ``-o``, ``-c``): per query token, the sentence's
  evidence is mixed with the evidence of the context unit, computed against the context
  granularity's own background statistics. For TF-ISF and BM25:
  Σ_t [(1 − λ1) TF_s·IDF_s + λ1 TF_i·IDF_i] · QTF; for QLLM the mixture is inside the log (see
  :class:`~statinterp.rankers.lexical.QLLM`); for cosine, (1 − λ1) COS_s + λ1 COS_i.
* :class:`Recursive` (suffix ``-r``): Sim-r(s) = (1 − λ1) Sim(s) + λ1 [R−(1) + R+(1)], where
  R±(d) = (1 − λ1) Sim(s ± d) + λ1 R±(d + 1) and R±(n) = Sim(s ± n); the neighbours are the
  spaCy sentences of the opinion around the candidate (missing ones contribute 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.index import MAX_NEIGHBOURS
from statinterp.index.statistics import LEVELS
from statinterp.rankers import registry
from statinterp.rankers.base import Ranker, Requirements, Similarity, register_composite

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

LEVEL_SUFFIX = {"case": "c", "opinion": "o", "paragraph": "p"}
#: The context weight λ1 the default tuning grid tries.
LAMBDA_GRID = tuple(i / 10 for i in range(11))


@register_composite
@dataclass(frozen=True, eq=False, repr=False)
class Interpolated(Ranker):
    """Linear interpolation of a similarity with the candidate's context unit. λ1 (``lam``)
    defaults to the similarity's declared weight for the context
    (:attr:`~statinterp.rankers.base.Similarity.context_lambda`: the paper's tuned values)."""

    tuning_grid = {"lam": LAMBDA_GRID}

    similarity: Similarity
    context: str = "paragraph"
    lam: float | None = None

    def __post_init__(self):
        if self.context not in LEVEL_SUFFIX:
            raise ValueError(f"context must be one of {', '.join(LEVEL_SUFFIX)}, not {self.context!r}")
        if self.lam is not None and not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"interpolation weight must lie in [0, 1], not {self.lam}")

    @property
    def weight(self) -> float:
        """λ1: ``lam``, or when that is None the similarity's declared default for the context."""
        if self.lam is not None:
            return self.lam
        return self.similarity.default_context_weight(self.context)

    def resolved_params(self) -> dict:
        return {**self.get_params(), "lam": self.weight}

    @property
    def name(self) -> str:
        return f"{self.similarity.name}-{LEVEL_SUFFIX[self.context]}"

    def _parts(self, index: TermIndex):
        sim = self.similarity
        own_units = index.levels["sentence"]
        ctx_units = index.levels[self.context]
        own = sim.evidence(index.query, own_units.seqs, index.background["sentence"], index)[own_units.row]
        ctx = sim.evidence(index.query, ctx_units.seqs, index.background[self.context], index)[ctx_units.row]
        return own, ctx

    def score(self, index: TermIndex) -> np.ndarray:
        own, ctx = self._parts(index)
        mixed = self.similarity.mix(own, ctx, self.weight)
        return self.similarity.combine(mixed, index.query, index.background["sentence"])

    def explain(self, index: TermIndex, i: int) -> dict:
        own, ctx = self._parts(index)
        sim = self.similarity
        stats = index.background["sentence"]
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "sentence alone": float(sim.combine(sim.direct(own[i : i + 1]), index.query, stats)[0]),
            f"{self.context} alone": float(sim.combine(sim.direct(ctx[i : i + 1]), index.query, stats)[0]),
            "lambda": self.weight,
        }


@register_composite
@dataclass(frozen=True, eq=False, repr=False)
class Recursive(Ranker):
    """Recursive interpolation with the n neighbouring sentences on each side."""

    tuning_grid = {"lam": LAMBDA_GRID}

    similarity: Similarity
    lam: float = 0.6
    n: int = MAX_NEIGHBOURS

    def __post_init__(self):
        if not 1 <= self.n <= MAX_NEIGHBOURS:
            raise ValueError(f"n must lie in 1..{MAX_NEIGHBOURS}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"interpolation weight must lie in [0, 1], not {self.lam}")

    @property
    def name(self) -> str:
        return f"{self.similarity.name}-r"

    def needs(self) -> Requirements:
        return Requirements(neighbours=True)

    def neighbour_scores(self, index: TermIndex) -> dict[int, np.ndarray]:
        stats = index.background["sentence"]
        out = {}
        for d in range(-self.n, self.n + 1):
            if d == 0:
                continue
            units = index.neighbours[d]
            out[d] = units.spread(self.similarity.score_units(index.query, units.seqs, stats, index), missing=0.0)
        return out

    def score(self, index: TermIndex) -> np.ndarray:
        lam = self.lam
        own = self.similarity.score(index)
        near = self.neighbour_scores(index)
        total = (1.0 - lam) * own
        for sign in (-1, 1):
            r = near[sign * self.n]
            for d in range(self.n - 1, 0, -1):
                r = (1.0 - lam) * near[sign * d] + lam * r
            total = total + lam * r
        return total

    def explain(self, index: TermIndex, i: int) -> dict:
        near = self.neighbour_scores(index)
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "sentence alone": float(self.similarity.score(index)[i]),
            "neighbours": {d: float(v[i]) for d, v in sorted(near.items())},
            "lambda": self.lam,
        }


_LEVEL_TEXT = {"case": "the whole case", "opinion": "the opinion", "paragraph": "the paragraph"}
for _level, _suffix in LEVEL_SUFFIX.items():
    registry.register("context", _suffix, Interpolated, (lambda level: lambda sim: sim.in_context(level))(_level),
                      f"interpolated with {_LEVEL_TEXT[_level]}")
registry.register("context", "r", Recursive, lambda sim: sim.recursive(),
                  f"recursive interpolation with {MAX_NEIGHBOURS} neighbouring sentences on each side")

__all__ = ["Interpolated", "LEVELS", "LEVEL_SUFFIX", "Recursive"]
