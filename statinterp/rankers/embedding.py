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
from typing import TYPE_CHECKING

import numpy as np
import ot
from gensim.models.keyedvectors import KeyedVectors
from scipy.sparse import csr_matrix
from scipy.spatial.distance import cdist

from statinterp.errors import UsageError
from statinterp.rankers.base import Requirements, Similarity
from statinterp.vectors.directions import directions_for
from statinterp.vectors.directions import lookup_vectors as _lookup

if TYPE_CHECKING:
    from statinterp.index.statistics import CollectionStats
    from statinterp.index.term_index import Query, TermIndex
    from statinterp.text.units import TokenSeqs
    from statinterp.vectors.directions import UnitDirections
    from statinterp.vectors.training import DomainVectors

__all__ = ["Cosine", "WMDScorer", "cosine_scores", "wmd"]

#: Iteration cap for POT's network simplex (its default, 100 000, can be too low for long texts).
EMD_MAX_ITER = 1_000_000


def cosine_scores(query_tokens: Sequence[str], docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Cosine between the query's and each doc's
    :func:`~statinterp.vectors.directions.mean_unit_vector` (float64 array).

    Vectorised: the distinct words of query and docs are looked up once, the docs' vector
    sums are one sparse (docs x words) times dense (words x dim) product and the cosines
    one matrix-vector product.  A doc or query without any token that has a vector (or
    whose mean vector is zero) scores 0.
    """
    docs = list(docs)
    scores = np.zeros(len(docs))
    rows, unit = _lookup([t for t in query_tokens] + [t for doc in docs for t in doc], kv, unit=True)
    if not rows:
        return scores
    query = np.zeros(len(rows))
    for token in query_tokens:
        row = rows.get(token)
        if row is not None:
            query[row] += 1.0
    q = query @ unit
    q_norm = np.linalg.norm(q)
    if q_norm == 0:
        return scores
    data: list[float] = []
    cols: list[int] = []
    indptr = [0]
    for doc in docs:
        for token in doc:
            row = rows.get(token)
            if row is not None:
                cols.append(row)
                data.append(1.0)
        indptr.append(len(cols))
    counts = csr_matrix((data, cols, indptr), shape=(len(docs), len(rows)))  # duplicates are summed
    sums = counts @ unit  # proportional to the docs' mean unit vectors; cosine ignores the scale
    norms = np.linalg.norm(sums, axis=1)
    dots = sums @ (q / q_norm)
    nonzero = norms > 0
    scores[nonzero] = dots[nonzero] / norms[nonzero]
    return np.clip(scores, -1.0, 1.0)


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


# ----------------------------------------------------------------------------------------
# Cosine as a Similarity (methods w2vec*, fastt*, w2vec, GloVe, fastt)


#: Method names of the domain vector kinds (kept in step with :data:`statinterp.vectors.provider.DOMAIN_KINDS`).
_KIND_NAMES = {"word2vec": "w2vec*", "fasttext": "fastt*"}


class Cosine(Similarity):
    """Cosine between the mean unit word vectors of the query and of a text.

    q and d are the averages of the L2-normalised vectors of their tokens (tokens without a
    vector are skipped; a text with none scores 0) and the score is cos(q, d), i.e.
    :func:`cosine_scores`.  Both sides go through the vectors' phrase model first.  The
    vectors come from ``index.vectors.get(kind)`` (a :class:`statinterp.vectors.provider.VectorProvider`):
    ``kind`` is ``"word2vec"`` (method ``w2vec*``), ``"fasttext"`` (``fastt*``) or the name of
    pretrained vectors (``w2vec``, ``GloVe``, ``fastt``).

    As a :class:`Similarity` the evidence is one column, the cosine, and :meth:`combine` sums
    it, so context interpolation gives (1 - λ1) COS_s + λ1 COS_i and the recursive variant
    works unchanged.  The scorer only takes dot products: the unit directions of the query and
    of each set of units (sentences, paragraphs, ..., neighbours) are served by the vector
    provider (:mod:`statinterp.vectors.directions`), which computes them once per term and
    vectors, however many methods use them, and keeps them in its cache.
    """

    def __init__(self, kind: str = "word2vec"):
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"vector kind must be a non-empty string, not {kind!r}")
        self.kind = kind

    @property
    def short_name(self) -> str:  # the method name of the kind: w2vec*, fastt*, or the pretrained name
        return _KIND_NAMES.get(self.kind, self.kind)

    def needs(self) -> Requirements:
        return Requirements(vectors=(self.kind,))

    def provider(self, index: TermIndex):
        """The vector provider attached to ``index`` (:class:`statinterp.vectors.provider.VectorProvider`)."""
        provider = getattr(index, "vectors", None)
        if provider is None:
            raise UsageError(
                f"method {self.short_name} needs word vectors, but none are attached to term {index.key!r} "
                "(prepare the corpus with statinterp.prepare_corpus)"
            )
        return provider

    def vectors(self, index: TermIndex) -> DomainVectors:
        """The vectors themselves (loaded, or trained, on first use)."""
        return self.provider(index).get(self.kind)

    def directions(self, index: TermIndex) -> UnitDirections:
        """The unit directions of this kind that ``index``'s vector provider serves
        (:meth:`statinterp.vectors.provider.VectorProvider.directions`)."""
        return directions_for(self.provider(index), self.kind)

    def query_direction(self, query: Query, index: TermIndex) -> np.ndarray | None:
        """Unit direction of the query's mean unit vector after phrase joining (``None`` if no query
        token has a vector), as served by the vector provider."""
        return self.directions(index).query(query.tokens)

    def unit_directions(self, units: TokenSeqs, index: TermIndex) -> np.ndarray:
        """:func:`~statinterp.vectors.directions.mean_directions` of the units' tokens (phrases
        joined), as served by the vector provider (computed once per term and vectors, and kept
        in its directions cache)."""
        return self.directions(index).units(units, index)

    def evidence(self, query: Query, units: TokenSeqs, stats: CollectionStats, index: TermIndex) -> np.ndarray:
        out = np.zeros((len(units), 1))
        q = self.query_direction(query, index)
        if q is None or len(units) == 0:
            return out
        out[:, 0] = np.clip(self.unit_directions(units, index) @ q, -1.0, 1.0)
        return out

    def combine(self, evidence: np.ndarray, query: Query, stats: CollectionStats) -> np.ndarray:
        return evidence.sum(axis=1)

    def explain(self, index: TermIndex, i: int) -> dict:
        vectors = self.vectors(index)
        tokens = vectors.transform(index.query.tokens)
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "query tokens (phrases joined)": tokens,
            "query tokens with a vector": [t for t in tokens if t in vectors.kv],
        }
