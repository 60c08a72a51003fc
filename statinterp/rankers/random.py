"""The random baseline: every candidate scores the same."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.rankers import registry
from statinterp.rankers.base import Ranker

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

__all__ = ["RandomOrder"]


@dataclass(frozen=True, eq=False, repr=False)
class RandomOrder(Ranker):
    """All candidates score 0: its deterministic order is by sentence id, and its
    "random ties" evaluation is the exact expected NDCG of a uniformly random ranking."""

    name = "Random"

    def score(self, index: TermIndex) -> np.ndarray:
        return np.zeros(len(index))


registry.register("method", "Random", RandomOrder,
                  description="uniformly random order (exact expectation under random ties)", section="Direct")
