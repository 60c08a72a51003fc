"""Embedding-based scores: cosine of mean word vectors and Word Mover's Distance.

Pure functions over token strings and a gensim ``KeyedVectors`` (``kv``).  A token "has
a vector" when it is a key of ``kv`` or, for fastText vectors, when gensim can build one
from its character n-grams; tokens without a vector are skipped, and so are tokens with an
all-zero vector wherever a direction is needed (cosine, WMD with ``norm=True``).  Apply the
phrase model first (``DomainVectors.transform``) when the vectors were trained with phrases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import ot
from gensim.models.keyedvectors import KeyedVectors
from scipy.spatial.distance import cdist

from statinterp.rankers.cosine import Cosine, cosines
from statinterp.vectors.embeddings import lookup_vectors as _lookup
from statinterp.vectors.embeddings import mean_directions, query_direction

__all__ = ["Cosine", "WMDScorer", "cosine_scores", "wmd"]

#: Iteration cap for POT's network simplex (its default, 100 000, can be too low for long texts).
EMD_MAX_ITER = 1_000_000


def cosine_scores(query_tokens: Sequence[str], docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Cosine between the query's and each doc's
    :func:`~statinterp.vectors.embeddings.mean_unit_vector` (float64 array): the cosine of the
    ranker :class:`~statinterp.rankers.cosine.Cosine` (:func:`~statinterp.rankers.cosine.cosines`
    of :func:`~statinterp.vectors.embeddings.query_direction` and
    :func:`~statinterp.vectors.embeddings.mean_directions`), on plain token lists (no phrase
    model). A doc or query without any token that has a vector (or whose mean vector is zero)
    scores 0.
    """
    return cosines(query_direction(list(query_tokens), kv), mean_directions(list(docs), kv))


def _nbow(tokens: Sequence[str], rows: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the tokens that have a vector and their normalised frequencies."""
    counts = Counter(rows[token] for token in tokens if token in rows)
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    return ids, weights / weights.sum()


def _emd(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    if cost.shape[0] == 1:  # all mass leaves one word
        return float(cost[0] @ b)
    if cost.shape[1] == 1:  # all mass arrives at one word
        return float(a @ cost[:, 0])
    return float(ot.emd2(a, b, np.ascontiguousarray(cost), numItermax=EMD_MAX_ITER))


class WMDScorer:
    """Word Mover's Distance from many documents to one reference text (the provision).

    WMD (Kusner et al., 2015): each text is its normalised bag of words (nBOW) over the
    tokens that have a vector; the cost of moving mass from word i to word j is the
    Euclidean distance between their vectors; the distance is the optimal transport cost,
    solved exactly with POT's ``ot.emd2`` (network simplex).

    ``norm=False`` (default) uses the raw vectors, as the original WMD and gensim < 4.0
    (hence the 2019 paper) did; ``norm=True`` unit-normalises them first, as gensim 4's
    ``KeyedVectors.wmdistance`` does by default.  Either way the result equals gensim's
    ``wmdistance(doc, ref, norm=norm)``, except that two texts whose word vectors all
    coincide get 0.0 here where gensim returns ``inf``.

    A document (or a reference) without any token that has a vector is at distance
    ``float('inf')``: it sorts last in an ascending ranking; map it to a similarity of 0
    (e.g. with ``1 / (1 + d)``) if you need a finite score.

    The reference's words, vectors and nBOW are computed once; :meth:`distances` looks up
    the union vocabulary of all its docs once and computes the whole (doc words x
    reference words) distance matrix in one ``cdist`` call (memory: 8 bytes per entry), then
    slices it per document.
    """

    def __init__(self, ref_tokens: Sequence[str], kv: KeyedVectors, *, norm: bool = False):
        self.kv = kv
        self.norm = norm
        ref_rows, ref_matrix = _lookup(ref_tokens, kv, drop_zero=norm, unit=norm)
        ids, self._ref_weights = _nbow(ref_tokens, ref_rows)
        self._ref_vectors = ref_matrix[ids]

    def distances(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """WMD of each doc to the reference (float64 array; ``inf`` where undefined)."""
        docs = list(docs)
        out = np.full(len(docs), np.inf)
        if not len(self._ref_weights) or not docs:
            return out
        rows, matrix = _lookup((token for doc in docs for token in doc), self.kv, drop_zero=self.norm, unit=self.norm)
        if not rows:
            return out
        cost = cdist(matrix, self._ref_vectors)  # float64, (doc vocabulary x reference words)
        for i, doc in enumerate(docs):
            ids, weights = _nbow(doc, rows)
            if len(ids):
                out[i] = _emd(weights, self._ref_weights, cost[ids])
        return out


def wmd(doc_tokens: Sequence[str], ref_tokens: Sequence[str], kv: KeyedVectors, *, norm: bool = False) -> float:
    """Word Mover's Distance between two token lists; see :class:`WMDScorer`.

    ``float('inf')`` if either side has no token with a vector.
    """
    return float(WMDScorer(ref_tokens, kv, norm=norm).distances([doc_tokens])[0])
