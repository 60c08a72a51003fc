"""The method registry: paper-style names -> ranker objects.

A name reads as the composition it builds:

=================  ==========================================================
``TF-ISF``         :class:`~statinterp.rankers.lexical.TFISF` on the sentence
``BM25-p``         ``Interpolated(BM25(), context="paragraph", lam=1.0)``
``QLLM-c``         ``Interpolated(QLLM(0.9), context="case", lam=0.6)``
``TF-ISF-r``       ``Recursive(TFISF(), lam=0.6)``
``TF-ISF-g``       ``Expanded(TFISF(), "provision")``: the provision matched against whole cases
``BM25-e``         ``Expanded(BM25(), "similar", n_similar=500)``: the 500 words nearest the term
``NWR``            ``NewWordRatio()``: share of the sentence's words not in the provision
                   (also ``NW`` new-word count, ``WMD`` Word Mover's Distance to the provision)
``Tp-Tg-Nr``       ``Gated(Interpolated(TFISF(), "paragraph", 0.9),
                   [DomainGate(TFISF(), "provision", 0.5), NoveltyGate("NWR", 0.2)])``
``Random``         every candidate scores the same (evaluate with random ties)
=================  ==========================================================

``-c``/``-o``/``-p`` take the paper's tuned λ1 by default (:data:`~statinterp.rankers.context.DEFAULT_LAMBDA`).
Parameters can be overridden with keyword arguments to :func:`build_method`.

Paper compounds
    ``<base>-<gate>[-<gate>]`` with bases ``Tp`` (TF-ISF-p), ``Bp`` (BM25-p), ``Qc`` (QLLM-c),
    ``Wr`` (w2vec*-r, needs word vectors) and gates ``Tg`` (domain gate: TF-ISF-g with
    λ2 = 0.5) and ``Nr`` (novelty gate: NWR ≥ 0.2): ``Tp-Tg``, ``Tp-Nr``, ``Tp-Tg-Nr``, ...,
    ``Wr-Tg-Nr``. See :mod:`statinterp.rankers.gates` for the formulas.

User compounds
    ``BASE+GATE[+GATE...]``: any method name as the base (a paper abbreviation such as ``Tp``
    works too), followed by gates, each one of

    * ``Tg``, ``Nr`` — the paper's gates;
    * ``SIM-g>=λ2`` / ``SIM-e>=λ2`` — a domain gate with any base similarity and provision (-g)
      or similar-word (-e) expansion, e.g. ``BM25-g>=0.4`` (λ2 defaults to 0.5 when
      ``>=λ2`` is left out); ``gate(BM25-g,0.4)`` is the same gate in function form (its
      comma is read as a method separator by ``statinterp evaluate -m``, so prefer ``>=``
      there);
    * ``NWR>=x``, ``NW>=x``, ``WMD>=x`` — a novelty gate (``NWR`` alone: 0.2, ``NW`` alone: 3).

    Examples: ``BM25-r+Tg+Nr``, ``QLLM-p+BM25-g>=0.4+NWR>=0.3``. A gated base gets the extra
    gates added (``Tp-Tg+NW>=5``). The compound's name is its canonical spelling
    (``BM25-r+Tg+Nr``); paper compounds keep their paper name.

Parameters of compounds (keyword arguments to :func:`build_method`): ``lam2`` (λ2 of every
domain gate), ``nwr`` / ``nw`` / ``wmd`` (thresholds of the novelty gates of that measure),
``n_similar`` (size of -e expansions in domain gates); every other keyword goes to the base
method (e.g. ``lam`` = its λ1). A gate parameter that matches no gate of the method is an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from statinterp.rankers.context import LEVEL_SUFFIX, Interpolated, Recursive
from statinterp.errors import UsageError
from statinterp.rankers.gates import EXPANSION_SUFFIX, DomainGate, Expanded, Gate, Gated, NoveltyGate
from statinterp.rankers.base import Ranker, Similarity
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from statinterp.rankers.novelty import NOVELTY_MEASURES

SUFFIX_CONTEXT = {v: k for k, v in LEVEL_SUFFIX.items()}
SUFFIX_EXPANSION = {v: k for k, v in EXPANSION_SUFFIX.items()}


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
    """Factory of :class:`~statinterp.rankers.embedding.Cosine` (gensim is imported only on use)."""

    def factory(**params) -> Similarity:
        from statinterp.rankers.embedding import Cosine

        return Cosine(kind, **params)

    return factory


#: Embedding similarities (cosine of mean unit word vectors): name -> (vector kind, description).
#: ``*`` marks vectors trained on the loaded case law (:mod:`statinterp.vectors.provider`).
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

EXPANSION_DESCRIPTIONS = {
    "g": "of the provision (query expansion) against the whole case; a sentence gets its case's score",
    "e": "of the 500 words most similar to the term (domain word2vec) against the whole case",
}

#: Whole-method names (not similarity + suffix) -> (factory, description).
SPECIAL_METHODS: dict[str, tuple[Callable[[], Ranker], str]] = {
    "Random": (RandomOrder, "uniformly random order (exact expectation under random ties)"),
}
#: The section each special method is listed under (see :func:`method_sections`).
SPECIAL_SECTIONS: dict[str, str] = {"Random": "Direct"}

NOVELTY_DESCRIPTIONS = {
    "NW": "novelty: number of distinct sentence words not in the provision",
    "NWR": "novelty: share of distinct sentence words not in the provision",
    "WMD": "novelty: Word Mover's Distance to the provision (domain word2vec)",
}

#: Bases of the paper's compound names.
BASE_ABBREVIATIONS = {"Tp": "TF-ISF-p", "Bp": "BM25-p", "Qc": "QLLM-c", "Wr": "w2vec*-r"}
#: Gates of the paper's compound names (before parameter overrides).
GATE_ABBREVIATIONS: dict[str, Callable[[], Gate]] = {
    "Tg": lambda: DomainGate(TFISF(), "provision", 0.5),
    "Nr": lambda: NoveltyGate("NWR", 0.2),
}
GATE_DESCRIPTIONS = {"Tg": "the TF-ISF-g domain gate (lambda2 0.5)", "Nr": "the NWR >= 0.2 novelty gate"}
PAPER_COMPOUNDS = [f"{b}-{g}" for b in BASE_ABBREVIATIONS for g in ("Tg", "Nr", "Tg-Nr")]
#: A user compound listed by :func:`list_methods` as an example of the syntax.
COMPOUND_EXAMPLE = "BM25-r+Tg+Nr"
#: Keyword arguments of :func:`build_method` that go to the gates of a compound.
GATE_PARAMS = ("lam2", "nwr", "nw", "wmd", "n_similar")
SECTIONS = ("Direct", "Context", "Query expansion", "Novelty", "Compound", "Other")


def register_similarity(name: str, factory: Callable[[], Similarity], description: str) -> None:
    SIMILARITIES[name] = SimilarityEntry(factory, description)


def register_method(name: str, factory: Callable[[], Ranker], description: str, section: str = "Other") -> None:
    SPECIAL_METHODS[name] = (factory, description)
    SPECIAL_SECTIONS[name] = section


def _valid_names() -> str:
    return ", ".join(n for n, _ in list_methods())


def _similarity(name: str, params: dict) -> Similarity:
    if name not in SIMILARITIES:
        if name.startswith("w2vec"):
            raise UsageError(f"{name!r} needs word vectors: the embedding similarity {name!r} is not registered")
        raise UsageError(f"unknown similarity {name!r}; valid similarities: {', '.join(SIMILARITIES)}")
    params = dict(params)
    if "qllm_lam" in params:  # QLLM's own smoothing weight (``lam`` is the context weight)
        if name != "QLLM":
            raise UsageError(f"qllm_lam applies to QLLM methods, not to {name!r}")
        params["lam"] = params.pop("qllm_lam")
    return SIMILARITIES[name].factory(**params)


def _build_simple(name: str, params: dict) -> Ranker:
    """A method that is not a compound: special, novelty, or similarity with an optional suffix."""
    name = BASE_ABBREVIATIONS.get(name, name)
    if name in SPECIAL_METHODS:
        return SPECIAL_METHODS[name][0](**params)
    if name in NOVELTY_MEASURES:
        return NOVELTY_MEASURES[name](**params)
    base, suffix = name, None
    if "-" in name:
        head, tail = name.rsplit("-", 1)
        if head in SIMILARITIES or (head.startswith("w2vec") and (tail in CONTEXT_DESCRIPTIONS or tail in EXPANSION_DESCRIPTIONS)):
            base, suffix = head, tail
    known_suffix = suffix is None or suffix in CONTEXT_DESCRIPTIONS or suffix in EXPANSION_DESCRIPTIONS
    if base.startswith("w2vec") and base not in SIMILARITIES and known_suffix:
        raise UsageError(f"method {name!r} needs word vectors: the embedding similarity {base!r} is not registered")
    if base not in SIMILARITIES or not known_suffix:
        raise UsageError(f"unknown method {name!r}; valid methods: {_valid_names()}")
    if suffix in EXPANSION_DESCRIPTIONS:
        sim_params = {k: v for k, v in params.items() if k != "n_similar"}
        return Expanded(_similarity(base, sim_params), SUFFIX_EXPANSION[suffix], params.get("n_similar", 500))
    sim_params = {k: v for k, v in params.items() if k not in ("lam", "n")}
    sim = _similarity(base, sim_params)
    if suffix is None:
        return sim
    if suffix == "r":
        return Recursive(sim, **{k: v for k, v in params.items() if k in ("lam", "n")})
    return Interpolated(sim, SUFFIX_CONTEXT[suffix], params.get("lam"))


_GATE_GE = re.compile(r"^(?P<m>[^<>=]+?)\s*>=\s*(?P<v>[^<>=\s]+)$")
_GATE_FUNC = re.compile(r"^gate\(\s*(?P<m>[^,;()]+?)\s*(?:[,;]\s*(?P<v>[^,;()]+?)\s*)?\)$")
GATE_SYNTAX = "Tg, Nr, SIM-g>=lambda2, SIM-e>=lambda2, gate(SIM-g,lambda2), NWR>=x, NW>=x, WMD>=x"


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(value):  # a NaN threshold would compare false and silently never fire
        raise UsageError(f"{what}: the threshold must be a finite number, not {text!r}")
    return value


def _build_gate(spec: str, overrides: dict, used: set) -> Gate:
    """One gate of a compound name; ``overrides`` are the gate keyword arguments."""
    spec = spec.strip()
    if spec in GATE_ABBREVIATIONS:
        gate = GATE_ABBREVIATIONS[spec]()
        measure, value = (f"{gate.similarity.short_name}-g", gate.lam) if isinstance(gate, DomainGate) \
            else (gate.measure_name, gate.threshold_value)
    else:
        m = _GATE_FUNC.match(spec) or _GATE_GE.match(spec)
        measure, text = (m.group("m"), m.group("v")) if m else (spec, None)
        value = None if text is None else _number(text, f"gate {spec!r}")
    if measure in NOVELTY_MEASURES:
        key = measure.lower()
        if key in overrides:
            value = overrides[key]
            used.add(key)
        return NoveltyGate(measure, value)
    head, _, tail = measure.rpartition("-")
    if tail in SUFFIX_EXPANSION and head:
        if head not in SIMILARITIES:
            if head.startswith("w2vec"):
                raise UsageError(f"gate {spec!r} needs word vectors: the similarity {head!r} is not registered")
            raise UsageError(f"gate {spec!r}: unknown similarity {head!r} (valid: {', '.join(SIMILARITIES)})")
        kwargs = {}
        if "lam2" in overrides:
            value = overrides["lam2"]
            used.add("lam2")
        if "n_similar" in overrides and tail == "e":
            kwargs["n_similar"] = overrides["n_similar"]
            used.add("n_similar")
        return DomainGate(SIMILARITIES[head].factory(), SUFFIX_EXPANSION[tail], 0.5 if value is None else value,
                          **kwargs)
    raise UsageError(f"unknown gate {spec!r}; gates: {GATE_SYNTAX}")


def _compound_parts(name: str) -> tuple[str, list[str], str | None] | None:
    """(base name, gate specs, paper label) of a compound name, or None for a simple name."""
    if "+" in name:
        parts = [p.strip() for p in name.split("+")]
        if not all(parts):
            raise UsageError(f"method {name!r}: empty part in BASE+GATE+... (gates: {GATE_SYNTAX})")
        return parts[0], parts[1:], None
    parts = name.split("-")
    if len(parts) >= 2 and parts[0] in BASE_ABBREVIATIONS and all(p in GATE_ABBREVIATIONS for p in parts[1:]):
        return BASE_ABBREVIATIONS[parts[0]], parts[1:], name
    return None


def _build_compound(name: str, base_name: str, gate_specs: list[str], label: str | None, params: dict) -> Gated:
    overrides = {k: v for k, v in params.items() if k in GATE_PARAMS}
    base_params = {k: v for k, v in params.items() if k not in GATE_PARAMS}
    used: set[str] = set()
    gates = [_build_gate(spec, overrides, used) for spec in gate_specs]
    unused = sorted(set(overrides) - used)
    if unused:
        raise UsageError(f"method {name!r} has no gate that parameter(s) {', '.join(unused)} apply to")
    inner = _compound_parts(base_name)
    base = _build_simple(base_name, base_params) if inner is None else _build_compound(base_name, *inner, base_params)
    if isinstance(base, Gated):
        return Gated(base.base, base.gates + gates, label)
    return Gated(base, gates, label)


def build_method(name: str, **params) -> Ranker:
    """The ranker a method name stands for. ``params`` (e.g. ``lam=0.5``) override defaults.

    ``lam`` is the context weight λ1 (-c/-o/-p/-r); ``qllm_lam`` is QLLM's own Jelinek-Mercer
    weight λ; BM25 takes ``k1``, ``b``, ``k3``.

    Compound names (``Tp-Tg-Nr``, ``BM25-r+Tg+Nr``) take ``lam2``, ``nwr``, ``nw``, ``wmd`` and
    ``n_similar`` for their gates; their other parameters go to the base method.
    """
    name = name.strip()
    try:
        parts = _compound_parts(name)
        if parts is not None:
            return _build_compound(name, *parts, params)
        return _build_simple(name, params)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"method {name!r}: {exc}") from None


def _compound_description(name: str) -> str:
    base, *gates = name.split("-")
    full = BASE_ABBREVIATIONS[base]
    text = f"{full} gated by " + " and ".join(GATE_DESCRIPTIONS[g] for g in gates)
    if base == "Wr":
        text += " (needs word vectors)"
    return text


def method_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every method name with a one-line description, grouped by section (in :data:`SECTIONS` order):
    Direct, Context, Query expansion, Novelty, Compound, Other."""
    groups: dict[str, list[tuple[str, str]]] = {s: [] for s in SECTIONS}
    groups["Direct"].extend((n, d) for n, (_, d) in SPECIAL_METHODS.items() if SPECIAL_SECTIONS.get(n) == "Direct")
    for base, entry in SIMILARITIES.items():
        groups["Direct"].append((base, entry.description))
        for suffix, text in CONTEXT_DESCRIPTIONS.items():
            groups["Context"].append((f"{base}-{suffix}", f"{base} {text}"))
        for suffix, text in EXPANSION_DESCRIPTIONS.items():
            groups["Query expansion"].append((f"{base}-{suffix}", f"{base} {text}"))
    groups["Novelty"].extend(NOVELTY_DESCRIPTIONS.items())
    groups["Compound"].extend((n, _compound_description(n)) for n in PAPER_COMPOUNDS)
    groups["Compound"].append((COMPOUND_EXAMPLE, f"user compound BASE+GATE+...: any method, then gates {GATE_SYNTAX}"))
    for n, (_, d) in SPECIAL_METHODS.items():
        section = SPECIAL_SECTIONS.get(n, "Other")
        if section != "Direct":
            groups.setdefault(section, []).append((n, d))
    return [(s, entries) for s, entries in groups.items() if entries]


def list_methods() -> list[tuple[str, str]]:
    """Every method name with a one-line description, section by section (see :func:`method_sections`)."""
    return [entry for _, entries in method_sections() for entry in entries]
