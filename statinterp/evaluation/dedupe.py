"""Near-duplicate sentences: find them, and collapse a ranking to one copy of each.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from statinterp.evaluation.ranking import Ranking
    from statinterp.index.term_index import TermIndex

__all__ = ["DEFAULT_THRESHOLD", "jaccard", "token_sets", "similar_pairs", "near_duplicate_counts", "collapse",
           "Collapsed", "collapse_ranking"]

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
