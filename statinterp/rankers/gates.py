"""Query expansion over whole cases, the domain and novelty gates, and gated compound rankers.

Query expansion (method suffixes ``-g`` and ``-e``)
    :class:`Expanded` replaces the term query by an *expanded query* and matches it, alone,
    against the **whole cases** of the term (``index.levels["case"]``, every case of the term,
    with the case-level background statistics ``index.background["case"]``). Each candidate
    sentence gets the score of its case:  Sim-g(s) = Sim(Q_g, case(s)).

    * ``expansion="provision"`` (``-g``): Q_g is the source provision's tokens with their
      counts (``index.provision``).
    * ``expansion="similar"`` (``-e``): Q_e is built from the ``n_similar`` (500) words most
      similar to the term in the domain word vectors: ``kv.most_similar(positive=P,
      topn=n_similar)`` where P are the term's tokens after the vectors' phrase model that have
      a vector (falling back to the term's plain tokens when no phrase-joined token has one).
      A similar word that is itself a corpus token is used as is; otherwise a phrase-joined
      word ``a_b_c`` contributes its parts ``a``, ``b``, ``c``, each counted once per word it
      occurs in (so a part shared by several similar phrases gets a higher query count). Words
      (or parts) outside the corpus vocabulary are dropped. The term's own tokens are not added
      (gensim leaves the positive words out of the neighbours). A term without any vector is a
      :class:`~statinterp.errors.UsageError` suggesting ``-g``.

    Any base similarity works (``TF-ISF-g``, ``BM25-e``, ``QLLM-g``, a cosine ``w2vec*-g``): the
    expansion only changes the query and the units.

Domain gate  (:class:`DomainGate`, the paper's DDI)
    DDI(s) = 1 if Sim-g(case(s)) ≥ λ2 · Avg10 else 0, where Avg10 is the mean case score of the
    top 10 % of the term's cases: the ``k = max(1, ⌈0.1·n_cases⌉)`` best cases.

    *Negative scores.* λ2·Avg10 only means "λ2 of the way from nothing to the best cases" when
    0 is the lowest possible score. For bases whose scores can be negative (QLLM
    log-likelihoods, BM25 with negative IDF) scores are measured from the origin
    o = min(0, min_c Sim-g(c)), i.e. shifted by the minimum case score whenever that is
    negative:  DDI(s) = 1  iff  Sim-g(case(s)) − o ≥ λ2 · (Avg10 − o).
    For non-negative scores o = 0 and this is exactly the paper's rule; for all-negative QLLM
    scores a case passes if it closes at least λ2 of the gap between the worst case of the term
    and the average of the top 10 %. λ2 = 0 lets every case pass, λ2 = 1 only cases at least as
    good as Avg10.

Novelty gate  (:class:`NoveltyGate`, the paper's NI)
    NI(s) = 1 if N(s) ≥ threshold else 0 for a novelty measure N of
    :mod:`statinterp.rankers.novelty`: ``NWR`` (default threshold 0.2), ``NW`` (default 3) or
    ``WMD`` (no default: distances depend on the vectors' scale; give one).

Compound  (:class:`Gated`)
    CMP-rank(q, s) = Sim-i(q, s) · DDI(s) · NI(s). Multiplying by 0 only demotes a sentence if
    every score is positive (a negative QLLM score times 0 would *rise* to 0), so the product
    is realised as an ordering: every sentence that passes every gate ranks above every
    sentence that fails at least one, and each group is ordered by the base score. Concretely
    (:func:`gated_scores`): passing sentences keep their base score; failing ones get their
    base score minus shift = max(0, max_fail − min_pass + margin), margin = max(1, 10⁻⁶ ·
    max|score|), which puts the failing group strictly below the passing group. (Should the
    shift wipe out differences between failing scores in floating point, the failing group gets
    evenly spaced scores below the passing group in base-score order instead.) Unlike the paper's
    literal product, the failing sentences are not all tied at 0 but keep their base order.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import Gate, Ranker, Requirements, Similarity, register_composite
from statinterp.rankers.lexical import TFISF
from statinterp.rankers.novelty import NoveltyMeasure, available_vectors, libraries_key, vector_provider

if TYPE_CHECKING:
    from statinterp.index.term_index import Query, TermIndex

__all__ = [
    "DomainGate", "EXPANSION_SUFFIX", "Expanded", "Gate", "Gated", "NoveltyGate", "domain_threshold",
    "gated_scores", "similar_words", "similar_words_query", "top_mean",
]

#: Expansion -> method-name suffix.
EXPANSION_SUFFIX = {"provision": "g", "similar": "e"}


def _fmt(x: float) -> str:
    return f"{float(x):.12g}"


# ----------------------------------------------------------------------------- query expansion


#: The modules whose code finds the similar words (their fingerprint is part of the cache key).
SIMILAR_WORDS_CODE = (__name__, "statinterp.vectors.training")


def similar_words(index: TermIndex, n_similar: int = 500, vectors: str = "word2vec") -> list[str]:
    """The ``n_similar`` words nearest the term's query in the word vectors (gensim's
    ``most_similar`` of the query tokens that have a vector, phrases joined), nearest first; served
    by the vector provider, which keeps them in its cache (a warm run does not load the vectors)."""
    from statinterp.vectors.directions import directions_for  # gensim: only when a term is scored

    purpose = "query expansion by similar words (-e)"
    plain = list(index.query.tokens)

    def nearest(dv) -> list[str]:
        kv = available_vectors(dv, vectors, purpose).kv
        positive = [w for w in dv.transform(plain) if w in kv] or [w for w in plain if w in kv]
        if not positive:
            raise UsageError(f"term {index.term.query!r} has no {vectors} word vector, so similar words (-e) "
                             "cannot be found; use provision expansion (-g) instead")
        return [word for word, _ in kv.most_similar(positive=list(dict.fromkeys(positive)), topn=int(n_similar))]

    served = directions_for(vector_provider(index, vectors, purpose), vectors)
    measure = json.dumps(["most similar", plain, int(n_similar), libraries_key(("numpy", "gensim"))])
    return served.words(measure, SIMILAR_WORDS_CODE, nearest)


def similar_words_query(index: TermIndex, n_similar: int = 500, vectors: str = "word2vec") -> Query:
    """Q_e: the ``n_similar`` words nearest the term in the word vectors (:func:`similar_words`), as
    a query bag (a joined phrase that is no word of the corpus counts as its parts)."""
    tokens: list[str] = []
    for word in similar_words(index, n_similar, vectors):
        if index.vocab.get(word) is not None or "_" not in word:
            tokens.append(word)
        else:
            tokens.extend(part for part in word.split("_") if part)
    from statinterp.index.term_index import Query  # (imports the analysis: only when a term is scored)

    return Query.from_tokens(tokens, index.vocab)


def expansion_needs(expansion: str, vectors: str) -> Requirements:
    """What a query expansion needs: the provision (``provision``) or word vectors (``similar``)."""
    return Requirements(provision=True) if expansion == "provision" else Requirements(vectors=(vectors,))


@register_composite
@dataclass(frozen=True, eq=False, repr=False)
class Expanded(Ranker):
    """Sim-g / Sim-e: the expanded query matched against whole cases; a sentence gets its case's score."""

    similarity: Similarity
    expansion: str = "provision"
    n_similar: int = 500
    vectors: str = "word2vec"

    def __post_init__(self):
        if self.expansion not in EXPANSION_SUFFIX:
            raise ValueError(f"expansion must be one of {', '.join(EXPANSION_SUFFIX)}, not {self.expansion!r}")
        if int(self.n_similar) < 1:
            raise ValueError(f"n_similar must be a positive integer, not {self.n_similar!r}")
        object.__setattr__(self, "n_similar", int(self.n_similar))

    @property
    def name(self) -> str:
        return f"{self.similarity.name}-{EXPANSION_SUFFIX[self.expansion]}"

    def needs(self) -> Requirements:
        return expansion_needs(self.expansion, self.vectors)

    def expanded_query(self, index: TermIndex) -> Query:
        if self.expansion == "provision":
            return index.require_provision()
        return similar_words_query(index, self.n_similar, self.vectors)

    def case_scores(self, index: TermIndex) -> np.ndarray:
        """Sim(Q, c) for every case ``c`` of the term (rows of ``index.levels["case"]``)."""
        cases = index.levels["case"]
        query = self.expanded_query(index)
        return np.asarray(self.similarity.score_units(query, cases.seqs, index.background["case"], index),
                          dtype=np.float64)

    def score(self, index: TermIndex) -> np.ndarray:
        return index.levels["case"].spread(self.case_scores(index), missing=0.0)

    def explain(self, index: TermIndex, i: int) -> dict:
        cases = index.levels["case"]
        scores = self.case_scores(index)
        row = int(cases.row[i])
        return {"method": self.name, "score": float(scores[row]) if row >= 0 else 0.0,
                "case": cases.labels[row] if row >= 0 else None,
                "query tokens": len(self.expanded_query(index))}


# ----------------------------------------------------------------------------- gates


def top_mean(scores: np.ndarray, fraction: float = 0.1) -> float:
    """Mean of the ``k = max(1, ⌈fraction · n⌉)`` largest scores (Avg10 for fraction 0.1)."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) == 0:
        raise ValueError("no scores to average")
    k = max(1, math.ceil(round(fraction * len(scores), 9)))
    return float(np.sort(scores)[::-1][:k].mean())


def domain_threshold(case_scores: np.ndarray, lam: float, fraction: float = 0.1) -> float:
    """The raw-score threshold of the domain gate: o + λ2 · (Avg10 − o), o = min(0, min score)."""
    case_scores = np.asarray(case_scores, dtype=np.float64)
    origin = min(0.0, float(case_scores.min()))
    return origin + lam * (top_mean(case_scores, fraction) - origin)


#: The domain gate's default similarity (a value: one object serves every gate).
_TFISF = TFISF()


@dataclass(frozen=True, eq=False, repr=False)
class DomainGate(Gate):
    """DDI(s) = 1 iff Sim-g(case(s)) − o ≥ λ2 · (Avg10 − o) (see the module docstring)."""

    keyword_spellings = {"lam": "lam2"}  # ``lam`` is the context weight λ1
    tuning_grid = {"lam2": tuple(i / 10 for i in range(11))}

    similarity: Similarity = _TFISF
    expansion: str = "provision"
    lam: float = 0.5
    n_similar: int = 500
    top: float = 0.1
    vectors: str = "word2vec"

    def __post_init__(self):
        if self.expansion not in EXPANSION_SUFFIX:
            raise ValueError(f"expansion must be one of {', '.join(EXPANSION_SUFFIX)}, not {self.expansion!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"the domain gate's lambda2 must lie in [0, 1], not {self.lam}")
        if not 0.0 < self.top <= 1.0:
            raise ValueError(f"the domain gate's top fraction must lie in (0, 1], not {self.top}")
        if int(self.n_similar) < 1:
            raise ValueError(f"n_similar must be a positive integer, not {self.n_similar!r}")
        object.__setattr__(self, "lam", float(self.lam))
        object.__setattr__(self, "n_similar", int(self.n_similar))
        object.__setattr__(self, "top", float(self.top))

    @property
    def expanded(self) -> Expanded:
        """The expanded ranker whose case scores the gate measures (built on use, never stale)."""
        return Expanded(self.similarity, self.expansion, self.n_similar, self.vectors)

    @property
    def name(self) -> str:
        ranker = self.expanded.name
        if (ranker == "TF-ISF-g" and self.lam == 0.5 and self.top == 0.1 and type(self.similarity) is TFISF):
            return "Tg"
        return f"{ranker}>={_fmt(self.lam)}"

    def needs(self) -> Requirements:
        return expansion_needs(self.expansion, self.vectors)

    def keywords(self) -> dict[str, str]:
        """``lam2`` (λ2), ``top``, ``vectors``, and ``n_similar`` when it expands by similar words."""
        out = super().keywords()
        if self.expansion != "similar":
            del out["n_similar"]
        return {k: v for k, v in out.items() if k != "expansion"}

    def case_scores(self, index: TermIndex) -> np.ndarray:
        return self.expanded.case_scores(index)

    def cutoff(self, index: TermIndex) -> float:
        return domain_threshold(self.case_scores(index), self.lam, self.top)

    def values(self, index: TermIndex) -> np.ndarray:
        return index.levels["case"].spread(self.case_scores(index), missing=-np.inf)

    def explain(self, index: TermIndex, i: int) -> dict:
        cases = self.case_scores(index)
        score = float(index.levels["case"].spread(cases, missing=-np.inf)[i])
        threshold = domain_threshold(cases, self.lam, self.top)
        return {"gate": self.name, "value": int(score >= threshold), "score": score, "threshold": threshold,
                "case": index.levels["case"].labels[index.levels["case"].row[i]],
                "avg_top": top_mean(cases, self.top), "origin": min(0.0, float(cases.min())), "lambda2": self.lam}


@dataclass(frozen=True, eq=False, repr=False)
class NoveltyGate(Gate):
    """NI(s) = 1 iff measure(s) ≥ threshold, measure one of NW, NWR, WMD (higher = more novel)."""

    measure: str = "NWR"
    threshold: float | None = None
    vectors: str = "word2vec"

    def __post_init__(self):
        part = registry.get("novelty", self.measure)
        if part is None:
            raise ValueError(f"novelty measure must be one of {', '.join(registry.names('novelty'))}, "
                             f"not {self.measure!r}")
        if self.threshold is None and part.cls.default_threshold is None:
            raise ValueError(f"the {self.measure} novelty gate needs a threshold (e.g. {self.measure}>=1.0)")
        if self.threshold is not None:
            object.__setattr__(self, "threshold", float(self.threshold))

    @property
    def measure_class(self) -> type[NoveltyMeasure]:
        """The class of the novelty measure (registered by its name, :mod:`statinterp.rankers.novelty`)."""
        return registry.get("novelty", self.measure).cls  # type: ignore[union-attr,return-value]

    @property
    def threshold_value(self) -> float:
        """The threshold: ``threshold``, or when that is None the measure's default."""
        if self.threshold is None:
            return float(self.measure_class.default_threshold)  # type: ignore[arg-type]
        return self.threshold

    def keywords(self) -> dict[str, str]:
        """The threshold by the measure's keyword (``nwr``, ``nw``, ``wmd``), and ``vectors``."""
        return {self.measure_class.gate_keyword: "threshold", "vectors": "vectors"}

    def resolved_params(self) -> dict:
        return {**self.get_params(), "threshold": self.threshold_value}

    @property
    def name(self) -> str:
        if self.measure == "NWR" and self.threshold_value == 0.2:
            return "Nr"
        return f"{self.measure}>={_fmt(self.threshold_value)}"

    def novelty(self) -> NoveltyMeasure:
        """The novelty measure the gate thresholds."""
        cls = self.measure_class
        return cls(vectors=self.vectors) if "vectors" in cls.param_names() else cls()  # type: ignore[call-arg]

    def needs(self) -> Requirements:
        return self.novelty().needs()

    def values(self, index: TermIndex) -> np.ndarray:
        return self.novelty().values(index)

    def cutoff(self, index: TermIndex) -> float:
        return self.threshold_value


# ----------------------------------------------------------------------------- compound


def gated_scores(base: np.ndarray, passing: np.ndarray) -> np.ndarray:
    """Scores ranking every passing candidate above every failing one, each group in base order.

    Passing candidates keep their base score; failing ones are shifted below the passing
    group's minimum (see the module docstring). Equal base scores within a group stay equal.
    """
    base = np.asarray(base, dtype=np.float64)
    passing = np.asarray(passing, dtype=bool)
    out = base.copy()
    fail = ~passing
    if not fail.any() or not passing.any():
        return out
    lo = float(base[passing].min())
    hi = float(base[fail].max())
    margin = max(1.0, 1e-6 * float(np.abs(base).max()))
    shift = hi - lo + margin
    if shift <= 0:
        return out
    failing = base[fail]
    shifted = failing - shift
    order = np.argsort(-failing, kind="stable")
    same_before = np.diff(failing[order]) == 0
    same_after = np.diff(shifted[order]) == 0
    if np.array_equal(same_before, same_after) and shifted.max() < lo:
        out[fail] = shifted
    else:  # the shift rounded distinct scores together: keep the order with evenly spaced scores
        _, rank_from_top = np.unique(-failing, return_inverse=True)
        out[fail] = lo - margin * (1.0 + rank_from_top)
    return out


@register_composite
@dataclass(frozen=True, eq=False, repr=False)
class Gated(Ranker):
    """CMP-rank(s) = base(s) · Π gate(s), realised as an ordering (see :func:`gated_scores`).

    Its name is the paper's when base and gates are the paper's (``Tp-Tg-Nr``), else
    ``base+gate+gate`` in the compound syntax of :mod:`statinterp.rankers.grammar`
    (``BM25-r+Tg+NWR>=0.3``).
    """

    base: Ranker
    gates: tuple[Gate, ...] = ()

    def __post_init__(self):
        gates = tuple(self.gates)
        if not gates:
            raise ValueError("a gated ranker needs at least one gate")
        for g in gates:
            if not isinstance(g, Gate):
                raise TypeError(f"gates must be Gate objects (DomainGate, NoveltyGate), not {g!r}")
        if not isinstance(self.base, Ranker):
            raise TypeError(f"the base of a gated ranker must be a Ranker, not {self.base!r}")
        object.__setattr__(self, "gates", gates)

    @property
    def name(self) -> str:
        gates = [g.name for g in self.gates]
        paper = {p.stands_for: p.name for p in registry.entries("base")}.get(self.base.name)
        if paper and gates and all(registry.get("gate", g) is not None for g in gates):
            return "-".join([paper] + gates)
        return "+".join([self.base.name] + gates)

    def gated(self, *gates: Gate) -> Gated:
        """The same base with ``gates`` added after this ranker's gates."""
        return Gated(self.base, self.gates + tuple(gates))

    def passes(self, index: TermIndex) -> np.ndarray:
        ok = np.ones(len(index), dtype=bool)
        for g in self.gates:
            ok &= g.passes(index)
        return ok

    def score(self, index: TermIndex) -> np.ndarray:
        return gated_scores(self.base.score(index), self.passes(index))

    def explain(self, index: TermIndex, i: int) -> dict:
        gates = [g.explain(index, i) for g in self.gates]
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "base": self.base.explain(index, i),
            "passes": all(g["value"] for g in gates),
            "gates": gates,
        }


registry.register("expansion", "g", Expanded, lambda sim: sim.expanded("provision"),
                  "of the provision (query expansion) against the whole case; a sentence gets its case's score")
registry.register("expansion", "e", Expanded, lambda sim: sim.expanded("similar"),
                  "of the 500 words most similar to the term (domain word2vec) against the whole case")
registry.register("gate", "Tg", DomainGate, lambda: DomainGate(TFISF(), "provision", 0.5),
                  "the TF-ISF-g domain gate (lambda2 0.5)")
registry.register("gate", "Nr", NoveltyGate, lambda: NoveltyGate("NWR", 0.2), "the NWR >= 0.2 novelty gate")
