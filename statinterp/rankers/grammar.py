"""The method-name grammar: paper-style names <-> ranker objects, read from the registry of parts.

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

Every part of a name is registered where it is defined (:mod:`statinterp.rankers.registry`): this
module reads the registry, so a new scorer, context, gate or novelty measure is parsed, printed
and listed without a change here. ``-c``/``-o``/``-p`` take the similarity's declared λ1 by
default (:attr:`~statinterp.rankers.base.Similarity.context_lambda`: the paper's tuned values).
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

Parameters (keyword arguments to :func:`build_method`, ``tune --grid``), scikit-learn's way:
``part__param`` sets a parameter of a part, as :meth:`~statinterp.rankers.base.Component.set_params`
does (``similarity__k1`` of ``BM25-p``; ``base__lam`` and ``gates__0__lam`` of ``Tp-Tg-Nr``). The
flat keywords are the spellings the parts declare (:meth:`~statinterp.rankers.base.Component.keywords`)
and set every part of the method that declares them (not the similarities inside gates): ``lam``
(λ1 of -c/-o/-p/-r), ``n`` (neighbours of -r), ``qllm_lam`` (QLLM's own λ), ``k1``/``b``/``k3``
(BM25), ``n_similar`` (size of -e expansions), ``lam2`` (λ2 of every domain gate), ``nwr`` /
``nw`` / ``wmd`` (thresholds of the novelty gates of that measure). A parameter that no part of
the method takes is an error.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from statinterp.errors import UsageError
from statinterp.rankers import registry
from statinterp.rankers.base import EXPANSION_SUFFIX, Component, Gate, Ranker, Similarity
from statinterp.rankers.gates import DomainGate, NoveltyGate

__all__ = ["COMPOUND_EXAMPLE", "SECTIONS", "as_ranker", "build_method", "list_methods", "method_sections",
           "paper_compounds", "parse", "parse_method", "with_params"]

SUFFIX_EXPANSION = {v: k for k, v in EXPANSION_SUFFIX.items()}
#: A user compound listed by :func:`list_methods` as an example of the syntax.
COMPOUND_EXAMPLE = "BM25-r+Tg+Nr"
SECTIONS = ("Direct", "Context", "Query expansion", "Novelty", "Compound", "Other")
GATE_SYNTAX = "Tg, Nr, SIM-g>=lambda2, SIM-e>=lambda2, gate(SIM-g,lambda2), NWR>=x, NW>=x, WMD>=x"


def paper_compounds() -> list[str]:
    """The paper's compound names: each registered base (``Tp``, ...) with each non-empty
    combination of the registered gates, in order (``Tp-Tg``, ``Tp-Nr``, ``Tp-Tg-Nr``, ...)."""
    gates = registry.names("gate")
    combos = [c for k in range(1, len(gates) + 1) for c in itertools.combinations(gates, k)]
    return [f"{b}-{'-'.join(c)}" for b in registry.names("base") for c in combos]


def _valid_names() -> str:
    return ", ".join(n for n, _ in list_methods())


def _scorer(name: str) -> Similarity:
    part = registry.get("scorer", name)
    if part is None:
        raise UsageError(f"unknown similarity {name!r}; valid similarities: {', '.join(registry.names('scorer'))}")
    return part.build()


def _stands_for(name: str) -> str:
    part = registry.get("base", name)
    return part.stands_for if part is not None else name


def _parse_simple(name: str) -> Ranker:
    """A method that is not a compound: a whole method, a novelty measure, or a scorer with an
    optional context or expansion suffix."""
    name = _stands_for(name)
    for kind in ("method", "novelty", "scorer"):
        part = registry.get(kind, name)
        if part is not None:
            return part.build()
    head, _, tail = name.rpartition("-")
    wrap = registry.get("context", tail) or registry.get("expansion", tail)
    if not head or wrap is None or registry.get("scorer", head) is None:
        raise UsageError(f"unknown method {name!r}; valid methods: {_valid_names()}")
    return wrap.build(_scorer(head))


_GATE_GE = re.compile(r"^(?P<m>[^<>=]+?)\s*>=\s*(?P<v>[^<>=\s]+)$")
_GATE_FUNC = re.compile(r"^gate\(\s*(?P<m>[^,;()]+?)\s*(?:[,;]\s*(?P<v>[^,;()]+?)\s*)?\)$")


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
    paper = registry.get("gate", spec)
    if paper is not None:
        return paper.build()
    m = _GATE_FUNC.match(spec) or _GATE_GE.match(spec)
    measure, text = (m.group("m"), m.group("v")) if m else (spec, None)
    value = None if text is None else _number(text, f"gate {spec!r}")
    if registry.get("novelty", measure) is not None:
        return NoveltyGate(measure, value)
    head, _, tail = measure.rpartition("-")
    if tail in SUFFIX_EXPANSION and head:
        if registry.get("scorer", head) is None:
            raise UsageError(f"gate {spec!r}: unknown similarity {head!r} "
                             f"(valid: {', '.join(registry.names('scorer'))})")
        return DomainGate(_scorer(head), SUFFIX_EXPANSION[tail], 0.5 if value is None else value)
    raise UsageError(f"unknown gate {spec!r}; gates: {GATE_SYNTAX}")


def _compound_parts(name: str) -> tuple[str, list[str]] | None:
    """(base name, gate specs) of a compound name, or None for a simple name."""
    if "+" in name:
        parts = [p.strip() for p in name.split("+")]
        if not all(parts):
            raise UsageError(f"method {name!r}: empty part in BASE+GATE+... (gates: {GATE_SYNTAX})")
        return parts[0], parts[1:]
    parts = name.split("-")
    if (len(parts) >= 2 and registry.get("base", parts[0]) is not None
            and all(registry.get("gate", p) is not None for p in parts[1:])):
        return _stands_for(parts[0]), parts[1:]
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


def as_ranker(method: str | Ranker) -> Ranker:
    """The ranker object of ``method``: a name is parsed (:func:`parse`: an unknown one is a
    UsageError listing the valid ones), a ranker is itself."""
    return parse(method) if isinstance(method, str) else method


# ----------------------------------------------------------------------------- keyword parameters


def keyword_targets(component: Component, path: str = "") -> list[tuple[str, Component]]:
    """``(path, part)`` of every part that flat keywords reach: the component and, depth first,
    its parts, but not the parts of a gate (a gate's similarity keeps its own parameters)."""
    out = [(path, component)]
    if isinstance(component, Gate):
        return out
    for name, value in component.get_params().items():
        prefix = f"{path}{name}__"
        if isinstance(value, Component):
            out.extend(keyword_targets(value, prefix))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, Component):
                    out.extend(keyword_targets(item, f"{prefix}{i}__"))
    return out


def nested_params(ranker: Ranker, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` (flat keywords and ``part__param`` names) as :meth:`~statinterp.rankers.base.Component.set_params`
    takes them: each flat keyword becomes the nested name of every part that declares it
    (:meth:`~statinterp.rankers.base.Component.keywords`); ``part__param`` names pass through.
    A keyword that no part takes is a :class:`UsageError`."""
    out = {k: v for k, v in params.items() if "__" in k}
    flat = {k: v for k, v in params.items() if "__" not in k}
    used: set[str] = set()
    for path, part in keyword_targets(ranker):
        for keyword, own in part.keywords().items():
            if keyword in flat:
                out[f"{path}{own}"] = flat[keyword]
                used.add(keyword)
    unused = [k for k in flat if k not in used]
    if unused:
        raise UsageError(f"method {ranker.name!r} has no part that parameter(s) {', '.join(unused)} apply to")
    return out


def with_params(ranker: Ranker, **params: Any) -> Ranker:
    """``ranker`` with :func:`build_method`'s keyword parameters applied (a new object); a
    parameter that does not apply is a :class:`UsageError` naming the method.

    ``part__param`` names a parameter of a part (scikit-learn's way: ``base__similarity__k1``);
    a flat keyword sets every part that declares it (:func:`nested_params`): ``lam`` is the
    context weight λ1 (-c/-o/-p/-r), ``n`` the neighbours of -r, ``qllm_lam`` QLLM's own
    Jelinek-Mercer λ, ``n_similar`` the size of -e expansions; BM25 takes ``k1``, ``b``, ``k3``;
    gates take ``lam2`` (λ2 of every domain gate) and ``nwr`` / ``nw`` / ``wmd`` (thresholds of
    the novelty gates of that measure).
    """
    return _with_params(ranker, params, ranker.name)


def _with_params(ranker: Ranker, params: dict[str, Any], label: str) -> Ranker:
    if not params:
        return ranker
    try:
        return ranker.set_params(**nested_params(ranker, params))
    except UsageError as exc:
        raise UsageError(str(exc).replace(f"method {ranker.name!r}", f"method {label!r}", 1)) from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"method {label!r}: {exc}") from None


def build_method(name: str, **params: Any) -> Ranker:
    """The ranker a method name stands for (:func:`parse`), with ``params`` (e.g. ``lam=0.5``)
    overriding defaults (:func:`with_params`).

    ``lam`` is the context weight λ1 (-c/-o/-p/-r); ``qllm_lam`` is QLLM's own Jelinek-Mercer
    weight λ; BM25 takes ``k1``, ``b``, ``k3``; ``part__param`` names any parameter of a part.

    Compound names (``Tp-Tg-Nr``, ``BM25-r+Tg+Nr``) take ``lam2``, ``nwr``, ``nw``, ``wmd`` and
    ``n_similar`` for their gates; their other parameters go to the base method.
    """
    return _with_params(parse(name), params, name.strip())


# ----------------------------------------------------------------------------- the list of methods


def _compound_description(name: str) -> str:
    base, *gates = name.split("-")
    full = _stands_for(base)
    text = f"{full} gated by " + " and ".join(registry.get("gate", g).description for g in gates)  # type: ignore[union-attr]
    if parse(full).requires().vectors:
        text += " (needs word vectors)"
    return text


def method_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every method name with a one-line description, grouped by section (in :data:`SECTIONS` order):
    Direct, Context, Query expansion, Novelty, Compound, Other; read from the registry."""
    groups: dict[str, list[tuple[str, str]]] = {s: [] for s in SECTIONS}
    methods = registry.entries("method")
    groups["Direct"].extend((p.name, p.description) for p in methods if p.section == "Direct")
    for scorer in registry.entries("scorer"):
        base = scorer.name
        groups["Direct"].append((base, scorer.description))
        for kind, section in (("context", "Context"), ("expansion", "Query expansion")):
            groups[section].extend((f"{base}-{p.name}", f"{base} {p.description}") for p in registry.entries(kind))
    groups["Novelty"].extend((p.name, p.description) for p in registry.entries("novelty"))
    groups["Compound"].extend((n, _compound_description(n)) for n in paper_compounds())
    groups["Compound"].append((COMPOUND_EXAMPLE, f"user compound BASE+GATE+...: any method, then gates {GATE_SYNTAX}"))
    for p in methods:
        if p.section != "Direct":
            groups.setdefault(p.section or "Other", []).append((p.name, p.description))
    return [(s, entries) for s, entries in groups.items() if entries]


def list_methods() -> list[tuple[str, str]]:
    """Every method name with a one-line description, section by section (see :func:`method_sections`)."""
    return [entry for _, entries in method_sections() for entry in entries]
