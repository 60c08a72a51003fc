"""The method registry: paper-style names -> ranker objects.

A name reads as the composition it builds:

=================  ==========================================================
``TF-ISF``         :class:`~statinterp.scorers.lexical.TFISF` on the sentence
``BM25-p``         ``Interpolated(BM25(), context="paragraph", lam=1.0)``
``QLLM-c``         ``Interpolated(QLLM(0.9), context="case", lam=0.6)``
``TF-ISF-r``       ``Recursive(TFISF(), lam=0.6)``
``Random``         every candidate scores the same (evaluate with random ties)
=================  ==========================================================

``-c``/``-o``/``-p`` take the paper's tuned λ1 by default (:data:`~statinterp.context.DEFAULT_LAMBDA`).
Parameters can be overridden with keyword arguments to :func:`build_method`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .context import LEVEL_SUFFIX, Interpolated, Recursive
from .errors import UsageError
from .scorers.base import Ranker, Similarity
from .scorers.lexical import BM25, QLLM, TFISF

SUFFIX_CONTEXT = {v: k for k, v in LEVEL_SUFFIX.items()}


class RandomOrder(Ranker):
    """All candidates score 0: its deterministic order is by sentence id, and its
    "random ties" evaluation is the exact expected NDCG of a uniformly random ranking."""

    name = "Random"  # type: ignore[assignment]

    def score(self, index) -> np.ndarray:
        return np.zeros(len(index))


@dataclass(frozen=True)
class SimilarityEntry:
    factory: Callable[[], Similarity]
    description: str


#: Base similarities by name. Other modules register theirs with :func:`register_similarity`.
SIMILARITIES: dict[str, SimilarityEntry] = {
    "TF-ISF": SimilarityEntry(TFISF, "term frequency x inverse sentence frequency"),
    "BM25": SimilarityEntry(BM25, "Okapi BM25 (k1 = k3 = 1.2, b = 0.75)"),
    "QLLM": SimilarityEntry(QLLM, "query likelihood, Jelinek-Mercer smoothing (lambda 0.9)"),
}


def _cosine_factory(kind: str) -> Callable[..., Similarity]:
    """Factory of :class:`~statinterp.scorers.embedding.Cosine` (gensim is imported only on use)."""

    def factory(**params) -> Similarity:
        from .scorers.embedding import Cosine

        return Cosine(kind, **params)

    return factory


#: Embedding similarities (cosine of mean unit word vectors): name -> (vector kind, description).
#: ``*`` marks vectors trained on the loaded case law (:mod:`statinterp.vectors`).
EMBEDDING_SIMILARITIES = {
    "w2vec*": ("word2vec", "cosine of mean word vectors: word2vec trained on the loaded case law (skip-gram, 300 dim)"),
    "fastt*": ("fasttext", "cosine of mean word vectors: fastText trained on the loaded case law (skip-gram, 300 dim)"),
    "w2vec": ("w2vec", "cosine of mean word vectors: pretrained word2vec (needs --vectors w2vec=PATH)"),
    "GloVe": ("GloVe", "cosine of mean word vectors: pretrained GloVe (needs --vectors GloVe=PATH)"),
    "fastt": ("fastt", "cosine of mean word vectors: pretrained fastText (needs --vectors fastt=PATH)"),
}
for _name, (_kind, _description) in EMBEDDING_SIMILARITIES.items():
    SIMILARITIES[_name] = SimilarityEntry(_cosine_factory(_kind), _description)

CONTEXT_DESCRIPTIONS = {
    "c": "interpolated with the whole case",
    "o": "interpolated with the opinion",
    "p": "interpolated with the paragraph",
    "r": "recursive interpolation with 4 neighbouring sentences on each side",
}

#: Whole-method names (not similarity + suffix) -> (factory, description).
SPECIAL_METHODS: dict[str, tuple[Callable[[], Ranker], str]] = {
    "Random": (RandomOrder, "uniformly random order (exact expectation under random ties)"),
}


def register_similarity(name: str, factory: Callable[[], Similarity], description: str) -> None:
    SIMILARITIES[name] = SimilarityEntry(factory, description)


def register_method(name: str, factory: Callable[[], Ranker], description: str) -> None:
    SPECIAL_METHODS[name] = (factory, description)


def build_method(name: str, **params) -> Ranker:
    """The ranker a method name stands for. ``params`` (e.g. ``lam=0.5``) override defaults."""
    name = name.strip()
    if name in SPECIAL_METHODS:
        return SPECIAL_METHODS[name][0](**params)
    base, suffix = name, None
    if "-" in name and name.rsplit("-", 1)[0] in SIMILARITIES:
        base, suffix = name.rsplit("-", 1)
    if base not in SIMILARITIES or (suffix is not None and suffix not in CONTEXT_DESCRIPTIONS):
        raise UsageError(f"unknown method {name!r}; valid methods: {', '.join(n for n, _ in list_methods())}")
    sim_params = {k: v for k, v in params.items() if k not in ("lam", "n")}
    try:
        sim = SIMILARITIES[base].factory(**sim_params)
        if suffix is None:
            return sim
        if suffix == "r":
            return Recursive(sim, **{k: v for k, v in params.items() if k in ("lam", "n")})
        return Interpolated(sim, SUFFIX_CONTEXT[suffix], params.get("lam"))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"method {name!r}: {exc}") from None


def list_methods() -> list[tuple[str, str]]:
    """Every method name with a one-line description, in the paper's order."""
    out: list[tuple[str, str]] = [(n, d) for n, (_, d) in SPECIAL_METHODS.items() if n == "Random"]
    for base, entry in SIMILARITIES.items():
        out.append((base, entry.description))
        for suffix, text in CONTEXT_DESCRIPTIONS.items():
            out.append((f"{base}-{suffix}", f"{base} {text}"))
    out.extend((n, d) for n, (_, d) in SPECIAL_METHODS.items() if n != "Random")
    return out
