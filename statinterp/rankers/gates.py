"""The domain and novelty gates.

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

The gated compound ranker (:class:`~statinterp.rankers.base.Gated`) and query expansion
(:class:`~statinterp.rankers.base.Expanded`) live with the other compositions in
:mod:`statinterp.rankers.base`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from statinterp.rankers import registry
from statinterp.rankers.base import EXPANSION_SUFFIX, Expanded, Gate, Requirements, Similarity, expansion_needs
from statinterp.rankers.lexical import TFISF
from statinterp.rankers.novelty import NoveltyMeasure

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

__all__ = ["DomainGate", "NoveltyGate", "domain_threshold", "top_mean"]



def _fmt(x: float) -> str:
    return f"{float(x):.12g}"


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


registry.register("gate", "Tg", DomainGate, lambda: DomainGate(TFISF(), "provision", 0.5),
                  "the TF-ISF-g domain gate (lambda2 0.5)")
registry.register("gate", "Nr", NoveltyGate, lambda: NoveltyGate("NWR", 0.2), "the NWR >= 0.2 novelty gate")
