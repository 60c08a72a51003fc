"""The cosine similarity of mean word vectors as a :class:`~statinterp.rankers.base.Similarity`
(methods ``w2vec*``, ``fastt*``, ``w2vec``, ``GloVe``, ``fastt``).

This module stays light (no gensim): the vectors and the unit directions are served by the
vector provider attached to a term index (:mod:`statinterp.vectors.embeddings`, imported on
use), so that naming and building a cosine method costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import Requirements, Similarity

if TYPE_CHECKING:
    from statinterp.index.term_index import CollectionStats, Query, TermIndex
    from statinterp.text.analysis import TokenSeqs
    from statinterp.vectors.embeddings import DomainVectors, UnitDirections

__all__ = ["Cosine"]

#: Method names of the domain vector kinds (kept in step with :data:`statinterp.vectors.provider.DOMAIN_KINDS`).
_KIND_NAMES = {"word2vec": "w2vec*", "fasttext": "fastt*"}


@dataclass(frozen=True, eq=False, repr=False)
class Cosine(Similarity):
    """Cosine between the mean unit word vectors of the query and of a text.

    q and d are the averages of the L2-normalised vectors of their tokens (tokens without a
    vector are skipped; a text with none scores 0) and the score is cos(q, d): the dot product
    of their unit directions (:func:`statinterp.vectors.embeddings.query_direction` and
    :func:`~statinterp.vectors.embeddings.mean_directions`; :func:`statinterp.rankers.embedding.cosine_scores`
    is the same on plain token lists). Both sides go through the vectors' phrase model first.
    The vectors come from ``index.vectors.get(kind)`` (a
    :class:`statinterp.vectors.provider.VectorProvider`): ``kind`` is ``"word2vec"`` (method
    ``w2vec*``), ``"fasttext"`` (``fastt*``) or the name of pretrained vectors (``w2vec``,
    ``GloVe``, ``fastt``).

    As a :class:`Similarity` the evidence is one column, the cosine, and :meth:`combine` sums
    it, so context interpolation gives (1 - λ1) COS_s + λ1 COS_i and the recursive variant
    works unchanged.  The scorer only takes dot products: the unit directions of the query and
    of each set of units (sentences, paragraphs, ..., neighbours) are served by the vector
    provider (:mod:`statinterp.vectors.embeddings`), which computes them once per term and
    vectors, however many methods use them, and keeps them in its cache.
    """

    #: The paper tuned no context weight for the cosine methods: an even mix.
    context_lambda = {"case": 0.5, "opinion": 0.5, "paragraph": 0.5}

    kind: str = "word2vec"

    def __post_init__(self):
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError(f"vector kind must be a non-empty string, not {self.kind!r}")

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
        from statinterp.vectors.embeddings import directions_for  # gensim: only when a term is scored

        return directions_for(self.provider(index), self.kind)

    def query_direction(self, query: Query, index: TermIndex) -> np.ndarray | None:
        """Unit direction of the query's mean unit vector after phrase joining (``None`` if no query
        token has a vector), as served by the vector provider."""
        return self.directions(index).query(query.tokens)

    def unit_directions(self, units: TokenSeqs, index: TermIndex) -> np.ndarray:
        """:func:`~statinterp.vectors.embeddings.mean_directions` of the units' tokens (phrases
        joined), as served by the vector provider (computed once per term and vectors, and kept
        in its directions cache)."""
        return self.directions(index).units(units, index)

    def evidence(self, query: Query, units: TokenSeqs, stats: CollectionStats, index: TermIndex) -> np.ndarray:
        out = np.zeros((len(units), 1))
        q = self.query_direction(query, index)
        if q is not None and len(units):
            out[:, 0] = cosines(q, self.unit_directions(units, index))
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


def cosines(query: np.ndarray | None, directions: np.ndarray) -> np.ndarray:
    """The cosine of a unit query direction with each row of unit ``directions`` (all-zero rows,
    texts without a vector, score 0; so does every text when the query has no direction): the
    one cosine of the rankers and of :func:`statinterp.rankers.embedding.cosine_scores`."""
    if query is None or len(directions) == 0:
        return np.zeros(len(directions))
    return np.clip(directions @ query, -1.0, 1.0)


_DOMAIN = "cosine of mean word vectors: {} trained on the loaded case law (skip-gram, 300 dim)"
_PRETRAINED = "cosine of mean word vectors: pretrained {} (needs --vectors {}=PATH)"
registry.register("scorer", "w2vec*", Cosine, lambda: Cosine("word2vec"), _DOMAIN.format("word2vec"),
                  features=("", "-p", "-o", "-c", "-r", "-g"))
registry.register("scorer", "fastt*", Cosine, lambda: Cosine("fasttext"), _DOMAIN.format("fastText"))
registry.register("scorer", "w2vec", Cosine, lambda: Cosine("w2vec"), _PRETRAINED.format("word2vec", "w2vec"))
registry.register("scorer", "GloVe", Cosine, lambda: Cosine("GloVe"), _PRETRAINED.format("GloVe", "GloVe"))
registry.register("scorer", "fastt", Cosine, lambda: Cosine("fastt"), _PRETRAINED.format("fastText", "fastt"))
registry.register("base", "Wr", None, stands_for="w2vec*-r")
