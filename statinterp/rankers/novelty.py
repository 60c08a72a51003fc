"""Novelty of a sentence against the source provision: does it say something the provision doesn't?

A sentence that merely restates the provision explains nothing about the term. Three measures,
each higher = more novel, each usable as a ranker (method names ``NW``, ``NWR``, ``WMD``) and as
a novelty gate (:class:`~statinterp.rankers.gates.NoveltyGate`):

* ``NW(s)``  = |{distinct tokens of s} \\ {tokens of the provision}| — the number of distinct
  sentence tokens that the provision does not contain;
* ``NWR(s)`` = NW(s) / |{distinct tokens of s}| — the share of new words (0 for a sentence
  without tokens);
* ``WMD(s)`` = Word Mover's Distance between the sentence and the provision in the domain word
  vectors (:class:`~statinterp.rankers.embedding.WMDScorer`, raw vectors as in the paper's gensim
  3). Both texts go through the vectors' phrase model first. A sentence none of whose tokens has
  a vector has no defined distance; it scores 0 (no evidence of novelty: it ranks last and fails
  any positive WMD threshold). The distances of a term's sentences are served by the vector
  provider (:meth:`statinterp.vectors.embeddings.UnitDirections.unit_values`), which keeps them
  in its cache: a warm run reads them without loading the vectors.

Tokens are the analysis tokens (lower-cased lemmas, :mod:`statinterp.text.analysis`) of the
candidate sentence and of the provision; the candidate's tokens are vocabulary ids, the
provision's ids are those of :attr:`TermIndex.provision <statinterp.index.term_index.TermIndex.provision>`
(provision tokens outside the vocabulary cannot occur in a sentence, so they do not matter).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import Ranker, Requirements, available_vectors, libraries_key, vector_provider

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex
    from statinterp.text.analysis import TokenSeqs

__all__ = ["NewWords", "NewWordRatio", "NoveltyMeasure", "WMDNovelty", "new_words"]








def new_words(units: TokenSeqs, reference_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unit: (number of distinct tokens not among ``reference_ids``, number of distinct tokens).

    Vectorised: (unit, token) pairs are deduplicated with one ``np.unique`` over
    ``unit * V + token`` and counted per unit with ``np.bincount``.
    """
    n = len(units)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    ids = np.asarray(units.ids, dtype=np.int64)
    if len(ids) == 0:
        return np.zeros(n), np.zeros(n)
    ref = np.asarray(reference_ids, dtype=np.int64)
    width = int(ids.max()) + 1
    rows = np.repeat(np.arange(n, dtype=np.int64), units.lengths)
    pairs = np.unique(rows * width + ids)
    unit, token = pairs // width, pairs % width
    distinct = np.bincount(unit, minlength=n).astype(np.float64)
    new = np.bincount(unit[~np.isin(token, ref)], minlength=n).astype(np.float64)
    return new, distinct


class NoveltyMeasure(Ranker):
    """A novelty measure of each candidate against the provision; as a ranker, its value.

    For its novelty gate (:class:`~statinterp.rankers.gates.NoveltyGate`) it declares the gate's
    default threshold (``None``: give one) and the keyword that sets the threshold in
    ``build_method`` and ``tune --grid`` (``nwr``); ``tuning_grid`` holds that keyword's values.
    """

    default_threshold: ClassVar[float | None] = None
    gate_keyword: ClassVar[str] = ""

    def values(self, index: TermIndex) -> np.ndarray:
        """The measure for every candidate (higher = more novel)."""
        raise NotImplementedError

    def score(self, index: TermIndex) -> np.ndarray:
        return self.values(index)

    def needs(self) -> Requirements:
        return Requirements(provision=True)

    def _counts(self, index: TermIndex) -> tuple[np.ndarray, np.ndarray]:
        provision = index.require_provision()
        units = index.levels["sentence"]
        new, distinct = new_words(units.seqs, provision.ids)
        return units.spread(new), units.spread(distinct)


@dataclass(frozen=True, eq=False, repr=False)
class NewWords(NoveltyMeasure):
    """NW(s) = number of distinct tokens of s that do not occur in the provision."""

    name = "NW"
    default_threshold = 3.0
    gate_keyword = "nw"

    def values(self, index):
        return self._counts(index)[0]

    def explain(self, index, i):
        new, distinct = self._counts(index)
        return {"method": self.name, "score": float(new[i]), "new words": int(new[i]),
                "distinct words": int(distinct[i])}


@dataclass(frozen=True, eq=False, repr=False)
class NewWordRatio(NoveltyMeasure):
    """NWR(s) = NW(s) / number of distinct tokens of s (0 for a sentence without tokens)."""

    name = "NWR"
    default_threshold = 0.2
    gate_keyword = "nwr"
    tuning_grid = {"nwr": tuple(i / 10 for i in range(11))}  # the threshold of its gate

    def values(self, index):
        new, distinct = self._counts(index)
        return np.divide(new, distinct, out=np.zeros_like(new), where=distinct > 0)

    def explain(self, index, i):
        new, distinct = self._counts(index)
        return {"method": self.name, "score": float(self.values(index)[i]), "new words": int(new[i]),
                "distinct words": int(distinct[i])}


@dataclass(frozen=True, eq=False, repr=False)
class WMDNovelty(NoveltyMeasure):
    """WMD(s, provision) in word vectors ``vectors`` (default: the domain word2vec vectors).

    ``norm=False`` uses the raw vectors (as gensim 3, hence the paper); ``norm=True``
    unit-normalises them (gensim 4's default). Undefined distances (no token of s has a
    vector) score 0.
    """

    name = "WMD"
    gate_keyword = "wmd"
    purpose = "the WMD novelty measure"
    #: The modules whose code computes the distances (their fingerprint is part of the cache key).
    code_modules = ("statinterp.rankers.embedding", __name__, "statinterp.vectors.embeddings")
    #: The libraries that compute them (their versions are part of the cache key).
    libraries = ("POT", "numpy", "scipy", "gensim")

    vectors: str = "word2vec"
    norm: bool = False

    def needs(self) -> Requirements:
        return Requirements(vectors=(self.vectors,), provision=True)

    def values(self, index):
        from statinterp.vectors.embeddings import directions_for  # gensim: only when WMD is used

        provision = index.require_provision()
        served = directions_for(vector_provider(index, self.vectors, self.purpose), self.vectors)
        units = index.levels["sentence"]
        measure = json.dumps(["WMD", self.norm, list(provision.tokens), libraries_key(self.libraries)])
        dist = served.unit_values(units.seqs, index, measure, self.code_modules,
                                  lambda dv: self.distances(dv, provision.tokens, units.seqs, index))
        return units.spread(np.where(np.isfinite(dist), dist, 0.0))

    def distances(self, dv: Any, reference_tokens: list[str], seqs: TokenSeqs, index: TermIndex) -> np.ndarray:
        """WMD of every unit of ``seqs`` to the reference tokens (both phrase-joined) in the
        vectors ``dv`` (``inf`` where undefined); :class:`UsageError` if no reference token has
        a vector."""
        from statinterp.rankers.embedding import WMDScorer  # POT is imported only when WMD is computed

        dv = available_vectors(dv, self.vectors, self.purpose)
        words = index.vocab.words
        reference = dv.transform(reference_tokens)
        if not any(t in dv.kv for t in reference):
            raise UsageError(f"no token of the provision of term {index.key!r} has a {self.vectors} vector: "
                             "WMD novelty is undefined")
        scorer = WMDScorer(reference, dv.kv, norm=self.norm)
        return scorer.distances([dv.transform([words[t] for t in seqs.row(r)]) for r in range(len(seqs))])


registry.register("novelty", "NW", NewWords,
                  description="novelty: number of distinct sentence words not in the provision", features=("",))
registry.register("novelty", "NWR", NewWordRatio,
                  description="novelty: share of distinct sentence words not in the provision", features=("",))
registry.register("novelty", "WMD", WMDNovelty,
                  description="novelty: Word Mover's Distance to the provision (domain word2vec)", features=("",))
