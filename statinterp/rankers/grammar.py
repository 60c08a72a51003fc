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

Every ranker has one canonical name, ``str(ranker)`` (= ``ranker.name``), and
:func:`parse` reads it back: ``parse(str(r)) == r`` for every ranker a name can describe, and
``str(parse(name))`` is the canonical spelling of ``name``. Other spellings are aliases that
parse to an equal object: the paper's compounds print as the paper names them (``Tp-Tg-Nr``;
alias ``TF-ISF-p+Tg+Nr``), its gates as ``Tg`` and ``Nr`` (aliases ``TF-ISF-g>=0.5``,
``NWR>=0.2``, ``NWR``), ``Tp``/``Bp``/``Qc``/``Wr`` alone as the method they stand for
(``TF-ISF-p``), ``gate(BM25-g,0.4)`` and ``BM25-g`` as ``BM25-g>=0.4`` / ``BM25-g>=0.5``.
A name holds only what the grammar can say (a method, its context or expansion, gate
thresholds); parameters beyond it (λ1, BM25's k1, ...) live on the objects.

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
    (``BM25-r+Tg+Nr``); paper compounds print as their paper name.

Parameters of compounds (keyword arguments to :func:`build_method`): ``lam2`` (λ2 of every
domain gate), ``nwr`` / ``nw`` / ``wmd`` (thresholds of the novelty gates of that measure),
``n_similar`` (size of -e expansions in domain gates); every other keyword goes to the base
method (e.g. ``lam`` = its λ1). A gate parameter that matches no gate of the method is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statinterp.errors import UsageError
from statinterp.rankers.base import Ranker, Similarity
from statinterp.rankers.context import LEVEL_SUFFIX, Interpolated, Recursive
from statinterp.rankers.gates import EXPANSION_SUFFIX, PAPER_BASES, DomainGate, Expanded, Gate, Gated, NoveltyGate
from statinterp.rankers.lexical import BM25, QLLM, TFISF
from statinterp.rankers.novelty import NOVELTY_MEASURES
from statinterp.rankers.random import RandomOrder

__all__ = [
    "BASE_ABBREVIATIONS", "GATE_ABBREVIATIONS", "PAPER_COMPOUNDS", "RandomOrder", "SIMILARITIES", "build_method",
    "list_methods", "method_sections", "parse", "parse_method", "register_method", "register_similarity", "with_params",
]

SUFFIX_CONTEXT = {v: k for k, v in LEVEL_SUFFIX.items()}
SUFFIX_EXPANSION = {v: k for k, v in EXPANSION_SUFFIX.items()}


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
BASE_ABBREVIATIONS = PAPER_BASES
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


def _similarity(name: str) -> Similarity:
    if name not in SIMILARITIES:
        if name.startswith("w2vec"):
            raise UsageError(f"{name!r} needs word vectors: the embedding similarity {name!r} is not registered")
        raise UsageError(f"unknown similarity {name!r}; valid similarities: {', '.join(SIMILARITIES)}")
    return SIMILARITIES[name].factory()


def _parse_simple(name: str) -> Ranker:
    """A method that is not a compound: special, novelty, or similarity with an optional suffix."""
    name = BASE_ABBREVIATIONS.get(name, name)
    if name in SPECIAL_METHODS:
        return SPECIAL_METHODS[name][0]()
    if name in NOVELTY_MEASURES:
        return NOVELTY_MEASURES[name]()
    base, suffix = name, None
    if "-" in name:
        head, tail = name.rsplit("-", 1)
        suffixes = (*CONTEXT_DESCRIPTIONS, *EXPANSION_DESCRIPTIONS)
        if head in SIMILARITIES or (head.startswith("w2vec") and tail in suffixes):
            base, suffix = head, tail
    known_suffix = suffix is None or suffix in CONTEXT_DESCRIPTIONS or suffix in EXPANSION_DESCRIPTIONS
    if base.startswith("w2vec") and base not in SIMILARITIES and known_suffix:
        raise UsageError(f"method {name!r} needs word vectors: the embedding similarity {base!r} is not registered")
    if base not in SIMILARITIES or not known_suffix:
        raise UsageError(f"unknown method {name!r}; valid methods: {_valid_names()}")
    sim = _similarity(base)
    if suffix is None:
        return sim
    if suffix in EXPANSION_DESCRIPTIONS:
        return sim.expanded(SUFFIX_EXPANSION[suffix])
    if suffix == "r":
        return sim.recursive()
    return sim.in_context(SUFFIX_CONTEXT[suffix])


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


def _parse_gate(spec: str) -> Gate:
    """One gate of a compound name."""
    spec = spec.strip()
    if spec in GATE_ABBREVIATIONS:
        return GATE_ABBREVIATIONS[spec]()
    m = _GATE_FUNC.match(spec) or _GATE_GE.match(spec)
    measure, text = (m.group("m"), m.group("v")) if m else (spec, None)
    value = None if text is None else _number(text, f"gate {spec!r}")
    if measure in NOVELTY_MEASURES:
        return NoveltyGate(measure, value)
    head, _, tail = measure.rpartition("-")
    if tail in SUFFIX_EXPANSION and head:
        if head not in SIMILARITIES:
            if head.startswith("w2vec"):
                raise UsageError(f"gate {spec!r} needs word vectors: the similarity {head!r} is not registered")
            raise UsageError(f"gate {spec!r}: unknown similarity {head!r} (valid: {', '.join(SIMILARITIES)})")
        return DomainGate(SIMILARITIES[head].factory(), SUFFIX_EXPANSION[tail], 0.5 if value is None else value)
    raise UsageError(f"unknown gate {spec!r}; gates: {GATE_SYNTAX}")


def _compound_parts(name: str) -> tuple[str, list[str]] | None:
    """(base name, gate specs) of a compound name, or None for a simple name."""
    if "+" in name:
        parts = [p.strip() for p in name.split("+")]
        if not all(parts):
            raise UsageError(f"method {name!r}: empty part in BASE+GATE+... (gates: {GATE_SYNTAX})")
        return parts[0], parts[1:]
    parts = name.split("-")
    if len(parts) >= 2 and parts[0] in BASE_ABBREVIATIONS and all(p in GATE_ABBREVIATIONS for p in parts[1:]):
        return BASE_ABBREVIATIONS[parts[0]], parts[1:]
    return None


def _parse(name: str) -> Ranker:
    parts = _compound_parts(name)
    if parts is None:
        return _parse_simple(name)
    base_name, gate_specs = parts
    return _parse(base_name).gated(*(_parse_gate(spec) for spec in gate_specs))


def parse(name: str) -> Ranker:
    """The ranker object a method name stands for, with default parameters.

    The inverse of ``str(ranker)``: ``str(parse(name))`` is the canonical spelling of ``name``
    and ``parse(str(ranker)) == ranker`` for every ranker a name can describe.
    """
    name = name.strip()
    try:
        return _parse(name)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"method {name!r}: {exc}") from None


#: :func:`parse` as exported from :mod:`statinterp` (where a bare ``parse`` would not say what it parses).
parse_method = parse


# ----------------------------------------------------------------------------- keyword parameters


def _similarity_with(sim: Similarity, params: dict[str, Any]) -> Similarity:
    params = dict(params)
    if "qllm_lam" in params:  # QLLM's own smoothing weight (``lam`` is the context weight)
        if not isinstance(sim, QLLM):
            raise UsageError(f"qllm_lam applies to QLLM methods, not to {sim.name!r}")
        params["lam"] = params.pop("qllm_lam")
    return sim.set_params(**params) if params else sim


def _ranker_with(ranker: Ranker, params: dict[str, Any]) -> Ranker:
    """``params`` applied to a ranker that is not gated: ``lam`` (and ``n``) to its context,
    ``n_similar`` to its expansion, the rest to its similarity."""
    if not params:
        return ranker
    if isinstance(ranker, Expanded):
        sim_params = {k: v for k, v in params.items() if k != "n_similar"}
        own = {"n_similar": params["n_similar"]} if "n_similar" in params else {}
        return ranker.set_params(similarity=_similarity_with(ranker.similarity, sim_params), **own)
    if isinstance(ranker, (Interpolated, Recursive)):
        names = ("lam",) if isinstance(ranker, Interpolated) else ("lam", "n")
        own = {k: params[k] for k in names if k in params}
        sim_params = {k: v for k, v in params.items() if k not in ("lam", "n")}
        return ranker.set_params(similarity=_similarity_with(ranker.similarity, sim_params), **own)
    if isinstance(ranker, Similarity):  # a context weight means nothing without a context
        return _similarity_with(ranker, {k: v for k, v in params.items() if k not in ("lam", "n")})
    return ranker.set_params(**params)


def _gate_with(gate: Gate, params: dict[str, Any], used: set[str]) -> Gate:
    if isinstance(gate, NoveltyGate):
        key = gate.measure.lower()
        if key in params:
            used.add(key)
            return gate.set_params(threshold=params[key])
        return gate
    if isinstance(gate, DomainGate):
        changes = {}
        if "lam2" in params:
            changes["lam"] = params["lam2"]
            used.add("lam2")
        if "n_similar" in params and gate.expansion == "similar":
            changes["n_similar"] = params["n_similar"]
            used.add("n_similar")
        return gate.set_params(**changes) if changes else gate
    return gate


def with_params(ranker: Ranker, **params: Any) -> Ranker:
    """``ranker`` with :func:`build_method`'s keyword parameters applied (a new object); a
    parameter that does not apply is a :class:`UsageError` naming the method.

    ``lam`` is the context weight λ1 (-c/-o/-p/-r; ignored by a ranker without context),
    ``n`` the neighbours of -r, ``qllm_lam`` QLLM's own Jelinek-Mercer λ, ``n_similar`` the size
    of -e expansions; BM25 takes ``k1``, ``b``, ``k3``. For a gated ranker ``lam2`` (λ2 of every
    domain gate), ``nwr`` / ``nw`` / ``wmd`` (thresholds of the novelty gates of that measure)
    and ``n_similar`` go to its gates, the others to its base; a gate parameter that matches no
    gate is an error.
    """
    return _with_params(ranker, params, ranker.name)


def _with_params(ranker: Ranker, params: dict[str, Any], label: str) -> Ranker:
    try:
        return _apply(ranker, params, label) if params else ranker
    except (TypeError, ValueError) as exc:
        raise UsageError(f"method {label!r}: {exc}") from None


def _apply(ranker: Ranker, params: dict[str, Any], label: str) -> Ranker:
    if not isinstance(ranker, Gated):
        return _ranker_with(ranker, params)
    gate_params = {k: v for k, v in params.items() if k in GATE_PARAMS}
    used: set[str] = set()
    gates = [_gate_with(g, gate_params, used) for g in ranker.gates]
    unused = sorted(set(gate_params) - used)
    if unused:
        raise UsageError(f"method {label!r} has no gate that parameter(s) {', '.join(unused)} apply to")
    base = _ranker_with(ranker.base, {k: v for k, v in params.items() if k not in GATE_PARAMS})
    return Gated(base, gates)


def build_method(name: str, **params: Any) -> Ranker:
    """The ranker a method name stands for (:func:`parse`), with ``params`` (e.g. ``lam=0.5``)
    overriding defaults (:func:`with_params`).

    ``lam`` is the context weight λ1 (-c/-o/-p/-r); ``qllm_lam`` is QLLM's own Jelinek-Mercer
    weight λ; BM25 takes ``k1``, ``b``, ``k3``.

    Compound names (``Tp-Tg-Nr``, ``BM25-r+Tg+Nr``) take ``lam2``, ``nwr``, ``nw``, ``wmd`` and
    ``n_similar`` for their gates; their other parameters go to the base method.
    """
    return _with_params(parse(name), params, name.strip())


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
