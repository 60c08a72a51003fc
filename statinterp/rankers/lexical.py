"""Lexical similarities: TF-ISF, BM25 and the query-likelihood language model (QLLM); and the
random baseline.

Each formula is one kernel (:meth:`_Lexical.kernel`): the evidence of each query token given its
count tf in a unit and the unit's length, with the statistics (N, df, average length,
collection model) of the background collection of the granularity being scored
(:mod:`statinterp.index.term_index`). The same kernel gives the per-token evidence (on the dense
counts of the query tokens' columns of the sparse count matrix: what context interpolation mixes
and ``explain`` shows) and, for TF-ISF and BM25, whose kernel is 0 where tf is, the per-unit
scores (``score_units``) from those columns' entries alone, adding each unit's products with
``np.bincount``; the evidence is combined by :func:`weighted_sum`, which adds the same products
in the same order, so both give the same bits on every machine.

**The random baseline** (:class:`RandomOrder`, method ``Random``): every candidate scores the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import Ranker, Similarity

__all__ = ["query_term_counts", "weighted_sum", "TFISF", "BM25", "QLLM", "RandomOrder"]

if TYPE_CHECKING:
    from statinterp.index.term_index import CollectionStats, Query, TermIndex
    from statinterp.text.analysis import TokenSeqs


def query_term_counts(query: Query, units: TokenSeqs, index: TermIndex) -> np.ndarray:
    """tf of each query token in each unit: dense array (n_units, len(query))."""
    if len(query) == 0 or len(units) == 0:
        return np.zeros((len(units), len(query)))
    # C order, as the row-wise matrix gave: the summation order of later products is unchanged
    return units.columns(len(index.vocab))[:, query.ids].toarray(order="C")


def _nonzero_counts(query: Query, units: TokenSeqs, index: TermIndex) -> tuple[np.ndarray, ...]:
    """The entries of :func:`query_term_counts` that are not 0: ``rows, cols, tf``."""
    if len(query) == 0 or len(units) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    m = units.columns(len(index.vocab))[:, query.ids]
    return m.indices, np.repeat(np.arange(len(query)), np.diff(m.indptr)), m.data


def weighted_sum(evidence: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_j evidence[:, j] · weights[j] per row: each product rounded, then added to a sum that
    starts at 0, column after column. Unlike a BLAS product (whose kernel, and with it the last
    bits, depend on the machine), the result is the same everywhere, and the same as
    :func:`_sparse_weighted_sum` of the entries that are not 0 (adding ±0 changes no sum)."""
    out = np.zeros(evidence.shape[0])
    term = np.empty(evidence.shape[0])
    for j, w in enumerate(np.asarray(weights, dtype=np.float64).tolist()):
        np.multiply(evidence[:, j], w, out=term)
        out += term
    return out


def _sparse_weighted_sum(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, weights: np.ndarray,
                         n_units: int) -> np.ndarray:
    """:func:`weighted_sum` of evidence given by its entries (``rows``, ``cols``, ``values``,
    ordered by column, as :func:`_nonzero_counts` returns them), the evidence being ±0 elsewhere:
    ``np.bincount`` adds the products in entry order, so each row's sum is taken column by column
    from 0, as there. ``values`` is overwritten."""
    if not len(values):
        return np.zeros(n_units)  # (bincount would give integers)
    values *= weights[cols]
    return np.bincount(rows, weights=values, minlength=n_units)


def _sparse_applies(*arrays: np.ndarray) -> bool:
    """Whether the evidence where tf = 0, 0 · x, is ±0 for every x of ``arrays`` (not NaN)."""
    return all(bool(np.isfinite(a).all()) for a in arrays)


class _Lexical(Similarity):
    """A lexical similarity Σ_t kernel(tf_t, L) · weight_t: one :meth:`kernel` per formula gives
    both the per-token evidence (:meth:`evidence`, on the dense tf matrix: what context
    interpolation mixes and ``explain`` shows) and the per-unit fast path (:meth:`score_units`, on
    the entries where tf > 0 only, when the kernel is ±0 where tf = 0: the others add nothing)."""

    #: The kernel is ±0 where tf = 0 whatever the unit's length, wherever it is finite: the
    #: per-unit scores can be added up from the entries where tf > 0 alone.
    sparse: ClassVar[bool] = False

    def kernel(self, tf: np.ndarray, lengths: np.ndarray, query: Query, stats: CollectionStats,
               cols: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The evidence of query tokens ``cols`` with counts ``tf`` in units of ``lengths``
        (arrays that broadcast: a dense (units, tokens) matrix with a column of lengths, or the
        entries where tf > 0 with their units' lengths and their tokens' columns)."""
        raise NotImplementedError

    def weights(self, query: Query) -> np.ndarray:
        """The query-side weight of each query token (what :meth:`combine` multiplies by)."""
        raise NotImplementedError

    def _zero_where_absent(self, query: Query, stats: CollectionStats) -> bool:
        """Whether the evidence where tf = 0 is ±0 and ±0 · weight adds nothing (not NaN)."""
        return self.sparse and _sparse_applies(self.kernel(np.zeros(len(query)), np.ones(len(query)), query, stats),
                                               self.weights(query))

    def evidence(self, query, units, stats, index):
        tf = query_term_counts(query, units, index)
        return self.kernel(tf, units.lengths.astype(np.float64)[:, None], query, stats)

    def combine(self, evidence, query, stats):
        return weighted_sum(evidence, self.weights(query))

    def score_units(self, query, units, stats, index):
        """``combine(evidence)`` from the entries where tf > 0 only (the others add ±0), when
        :meth:`kernel` is ±0 where tf = 0; else from the dense evidence."""
        if not self._zero_where_absent(query, stats):
            return super().score_units(query, units, stats, index)
        rows, cols, tf = _nonzero_counts(query, units, index)
        lengths = (units.offsets[rows + 1] - units.offsets[rows]).astype(np.float64)
        values = self.kernel(tf, lengths, query, stats, cols)
        return _sparse_weighted_sum(rows, cols, values, self.weights(query), len(units))

    def explain(self, index: TermIndex, i: int) -> dict:
        """The score and each query token's evidence and weight in the sentence's unit."""
        units = index.levels["sentence"]
        row = int(units.row[i])
        one = units.seqs.take(np.array([row]))
        evidence = self.evidence(index.query, one, index.background["sentence"], index)[0]
        weights = self.weights(index.query)
        words = index.vocab.words
        return {"method": self.name, "score": float(self.score(index)[i]),
                "query tokens": {words[t]: {"evidence": float(e), "weight": float(w)}
                                 for t, e, w in zip(index.query.ids.tolist(), evidence, weights, strict=True)}}


@dataclass(frozen=True, eq=False, repr=False)
class TFISF(_Lexical):
    """TF-ISF(q, s) = Σ_{t∈q} log(tf_ts + 1) · log((N + 1) / (0.5 + df_t)) · log(tf_tq + 1)."""

    short_name = "TF-ISF"
    context_lambda = {"case": 1.0, "opinion": 1.0, "paragraph": 0.9}
    sparse = True  # log(0 + 1) = 0

    def kernel(self, tf, lengths, query, stats, cols=slice(None)):
        idf = np.log((stats.n_units + 1.0) / (0.5 + stats.df_of(query.ids)))
        return np.log1p(tf) * idf[cols]

    def weights(self, query):
        return np.log1p(query.counts)


@dataclass(frozen=True, eq=False, repr=False)
class BM25(_Lexical):
    """BM25 = Σ_t TF · IDF · QTF with
    TF = (k1 + 1) tf / (k1 (1 − b + b L / Lavg) + tf), IDF = log((N − df + 0.5) / (df + 0.5)),
    QTF = (k3 + 1) tf_q / (k3 + tf_q). A TF of 0 / 0 (an empty unit with k1 (1 − b) = 0) is 0."""

    short_name = "BM25"
    context_lambda = {"case": 1.0, "opinion": 1.0, "paragraph": 1.0}
    sparse = True  # TF = 0 / x (0 / 0 made 0)

    k1: float = 1.2
    b: float = 0.75
    k3: float = 1.2

    def kernel(self, tf, lengths, query, stats, cols=slice(None)):
        avg = stats.avg_length or 1.0
        df = stats.df_of(query.ids)
        idf = np.log((stats.n_units - df + 0.5) / (df + 0.5))
        with np.errstate(divide="ignore", invalid="ignore"):
            tf_part = np.nan_to_num((self.k1 + 1.0) * tf / (self.k1 * (1.0 - self.b + self.b * lengths / avg) + tf))
        return tf_part * idf[cols]

    def weights(self, query):
        return (self.k3 + 1.0) * query.counts / (self.k3 + query.counts)


@dataclass(frozen=True, eq=False, repr=False)
class QLLM(_Lexical):
    """Query likelihood with Jelinek-Mercer smoothing:
    Σ_{t∈q} tf_tq · log((1 − λ) P(t|Mc) + λ P(t|Md)), P(t|Md) = tf_td / L_d, P(t|Mc) = cf_t / |C|.

    With context (see :class:`~statinterp.rankers.base.Interpolated`), the document model is mixed
    with the context unit's: log((1 − λ1 − λ2) P(t|Mc) + λ1 P(t|Mi) + λ2 P(t|Md)), where the
    collection weight stays 1 − λ (so λ2 = λ − λ1). Query tokens absent from the background
    collection are left out (they would give log 0 for every unit).
    """

    short_name = "QLLM"
    context_lambda = {"case": 0.6, "opinion": 0.7, "paragraph": 0.1}
    keyword_spellings = {"lam": "qllm_lam"}  # ``lam`` is the context weight
    tuning_grid = {"qllm_lam": tuple(i / 10 for i in range(1, 10))}  # strictly inside (0, 1)

    lam: float = 0.9

    def __post_init__(self):
        if not 0.0 < self.lam < 1.0:
            raise ValueError("QLLM's lam must lie strictly between 0 and 1")

    def kernel(self, tf, lengths, query, stats, cols=slice(None)):
        """P(t|Md) = tf / L (0 in an empty unit)."""
        tf, lengths = np.broadcast_arrays(np.asarray(tf, dtype=np.float64), lengths)
        return np.divide(tf, lengths, out=np.zeros_like(tf), where=lengths > 0)

    def weights(self, query):
        return query.counts

    def direct(self, evidence):
        return self.lam * evidence

    def mix(self, own, context, lam):
        if lam > self.lam + 1e-12:
            raise UsageError(
                f"QLLM context weight {lam} exceeds the document weight lam={self.lam}; "
                "the collection keeps 1 - lam, so the context weight must not exceed lam"
            )
        return (self.lam - lam) * own + lam * context

    def combine(self, evidence, query, stats):
        pc = stats.collection_probability(query.ids)
        known = pc > 0
        if not known.any():
            return np.zeros(evidence.shape[0])
        mixed = (1.0 - self.lam) * pc[known] + evidence[:, known]
        return np.log(mixed) @ self.weights(query)[known]

#: The learned features of each lexical similarity: alone, with every context, and the provision expansion.
_FEATURES = ("", "-p", "-o", "-c", "-r", "-g")

registry.register("scorer", "TF-ISF", TFISF, description="term frequency x inverse sentence frequency",
                  features=(*_FEATURES, "-e"))

registry.register("scorer", "BM25", BM25, description="Okapi BM25 (k1 = k3 = 1.2, b = 0.75)", features=_FEATURES)

registry.register("scorer", "QLLM", QLLM, description="query likelihood, Jelinek-Mercer smoothing (lambda 0.9)",
                  features=_FEATURES)

registry.register("base", "Tp", None, stands_for="TF-ISF-p")

registry.register("base", "Bp", None, stands_for="BM25-p")

registry.register("base", "Qc", None, stands_for="QLLM-c")

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex


@dataclass(frozen=True, eq=False, repr=False)
class RandomOrder(Ranker):
    """All candidates score 0: its deterministic order is by sentence id, and its
    "random ties" evaluation is the exact expected NDCG of a uniformly random ranking."""

    name = "Random"

    def score(self, index: TermIndex) -> np.ndarray:
        return np.zeros(len(index))

registry.register("method", "Random", RandomOrder,
                  description="uniformly random order (exact expectation under random ties)", section="Direct")
