"""The one registry of the rankers' parts: each part registers itself where it is defined.

As an ir_measures measure's module ends by registering it, every module that defines a part of
a method name ends by calling :func:`register`:

=============  =====================================================================  ==============
kind           what it is                                                             registered in
=============  =====================================================================  ==============
``scorer``     a base similarity by its method name (``TF-ISF``, ``BM25``, ``QLLM``,  lexical.py,
               ``w2vec*``, ...)                                                       cosine.py
``context``    a context suffix (``c``, ``o``, ``p``: ``Interpolated``; ``r``:         base.py
               ``Recursive``)
``expansion``  a query-expansion suffix (``g``, ``e``: ``Expanded``)                  base.py
``novelty``    a novelty measure (``NW``, ``NWR``, ``WMD``), a method and a gate      novelty.py
``method``     a whole method that is none of the above (``Random``)                 lexical.py
``gate``       a gate of the paper's compound names (``Tg``, ``Nr``)                 gates.py
``base``       a base of the paper's compound names (``Tp`` = ``TF-ISF-p``, ...)      lexical.py,
                                                                                      cosine.py
=============  =====================================================================  ==============

Everything else derives from it: the grammar (:mod:`statinterp.rankers.grammar`: parsing,
canonical names, ``statinterp methods`` and the ``--help`` lists), the tuning grids
(:func:`candidate_grid`, :mod:`statinterp.evaluation.tuning`), the learned features' lists of
scores (:func:`feature_methods`, :mod:`statinterp.learned.features`) and the table in
docs/reference/ranker-parts.md. What a part declares about itself lives on its class
(:class:`~statinterp.rankers.base.Component`): its parameters and their defaults (the
constructor), the keyword parameters ``build_method`` and ``tune --grid`` spell them by
(:meth:`~statinterp.rankers.base.Component.keywords`), their tuning grids
(``tuning_grid``), a similarity's default context weights (``context_lambda``) and what it needs
(:meth:`~statinterp.rankers.base.Component.needs`).

Adding a scorer is one module that defines it and registers it (and its test): see
``tests/rankers/test_registry.py``. The built-in parts are imported, in a fixed order, the first time
the registry is read (:data:`BUILTIN_MODULES`), so the order of every list is the same
whichever module was imported first.
"""

from __future__ import annotations

import importlib
import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN_MODULES", "KINDS", "Part", "candidate_grid", "entries", "feature_methods", "get",
           "markdown_table", "register", "unregister"]

#: The kinds of parts, in the order :func:`candidate_grid` reads their grids.
KINDS = ("context", "expansion", "gate", "novelty", "scorer", "method", "base")

#: The modules that define the built-in parts (imported in this order on the first read).
BUILTIN_MODULES = (
    "statinterp.rankers.lexical",
    "statinterp.rankers.cosine",
    "statinterp.rankers.novelty",
    "statinterp.rankers.base",
    "statinterp.rankers.gates",
)


@dataclass(frozen=True)
class Part:
    """One registered part.

    ``name``: its spelling in method names (``TF-ISF``, ``p``, ``g``, ``NWR``, ``Random``, ``Tg``,
    ``Tp``). ``cls``: the class that implements it (its
    declared keywords, grids and defaults are read from there). ``build``: makes it: a scorer,
    novelty measure, method or gate from no arguments; a context or expansion from the
    similarity it wraps. ``description``: one
    line for ``statinterp methods``. ``section``: where a ``method`` is listed. ``stands_for``:
    the method name a ``base`` abbreviation means. ``features``: the suffixes (``""`` for the
    part alone) whose scores the learned ranker uses as features.
    """

    kind: str
    name: str
    cls: type | None
    build: Callable[..., Any]
    description: str = ""
    section: str = ""
    stands_for: str = ""
    features: tuple[str, ...] = ()
    #: The module that registered it and the registration's number: the part's place in every list.
    module: str = ""
    number: int = 0

    @property
    def order(self) -> tuple[int, int]:
        """Built-in parts in :data:`BUILTIN_MODULES` order, then the others as registered: the
        same order whichever module was imported first."""
        rank = BUILTIN_MODULES.index(self.module) if self.module in BUILTIN_MODULES else len(BUILTIN_MODULES)
        return rank, self.number

    def grid(self) -> dict[str, tuple]:
        """The tuning grid the part's class declares (keyword -> values)."""
        return dict(getattr(self.cls, "tuning_grid", {}) or {})


_PARTS: dict[str, dict[str, Part]] = {kind: {} for kind in KINDS}
_loaded = False
_numbers = itertools.count()


def register(kind: str, name: str, cls: type | None, build: Callable[..., Any] | None = None, description: str = "",
             *, section: str = "", stands_for: str = "", features: tuple[str, ...] = ()) -> Part:
    """Register a part (``build`` defaults to ``cls``); a name can be registered once per kind.
    Its place in the lists is its module's (``cls``'s, else the caller's): see :attr:`Part.order`."""
    if kind not in _PARTS:
        raise ValueError(f"unknown kind of part {kind!r} (kinds: {', '.join(KINDS)})")
    if not name:
        raise ValueError("a part needs a name")
    if name in _PARTS[kind]:
        raise ValueError(f"a {kind} named {name!r} is registered already")
    maker = build if build is not None else cls
    if maker is None and stands_for:
        def maker() -> str:
            return stands_for
    if maker is None:
        raise ValueError(f"{kind} {name!r}: give the class or a build function")
    module = cls.__module__ if cls is not None else sys._getframe(1).f_globals.get("__name__", "")
    part = Part(kind, name, cls, maker, description, section, stands_for, tuple(features), module, next(_numbers))
    _PARTS[kind][name] = part
    return part


def unregister(kind: str, name: str) -> None:
    """Remove a registered part (tests that register their own clean up with this)."""
    del _PARTS[kind][name]


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN_MODULES:
            importlib.import_module(module)


def entries(kind: str) -> list[Part]:
    """The registered parts of ``kind`` in their order (:attr:`Part.order`: built-in parts first)."""
    _load()
    return sorted(_PARTS[kind].values(), key=lambda p: p.order)


def names(kind: str) -> list[str]:
    return [p.name for p in entries(kind)]


def get(kind: str, name: str) -> Part | None:
    """The part of ``kind`` called ``name`` (``None`` if there is none)."""
    _load()
    return _PARTS[kind].get(name)


def candidate_grid() -> dict[str, list]:
    """Every keyword parameter with a declared tuning grid and its values, kind by kind in
    :data:`KINDS` order (``lam``, ``lam2``, ``nwr``, ``qllm_lam`` for the built-in parts)."""
    grid: dict[str, list] = {}
    for kind in KINDS:
        for part in entries(kind):
            for keyword, values in part.grid().items():
                grid.setdefault(keyword, list(values))
    return grid


def _feature_names(kind: str, suffix_kinds: tuple[str, ...]) -> Iterator[str]:
    """``name + suffix`` of every part of ``kind`` for each suffix it declares as a feature that
    is one of ``suffix_kinds`` (``""``, the part alone, when ``suffix_kinds`` is empty)."""
    suffixes = {f"-{p.name}" for k in suffix_kinds for p in entries(k)} if suffix_kinds else {""}
    for part in entries(kind):
        for suffix in part.features:
            if suffix in suffixes or (suffix == "" and "context" in suffix_kinds):
                yield f"{part.name}{suffix}"


def feature_methods() -> list[str]:
    """The methods whose scores are learned features, in column order: every scorer with its
    declared context suffixes (and alone), then every scorer with its declared expansions,
    then the novelty measures that declare themselves features."""
    return [*_feature_names("scorer", ("context",)), *_feature_names("scorer", ("expansion",)),
            *_feature_names("novelty", ())]


def _keywords(cls: type | None) -> str:
    """The keyword spellings and grids a class declares, for :func:`markdown_table`."""
    if cls is None:
        return ""
    lam = getattr(cls, "context_lambda", {})
    out = [f"λ1 {', '.join(f'{level} {value:g}' for level, value in lam.items())}"] if lam else []
    out += [f"`{own}` as `{kw}`" for own, kw in getattr(cls, "keyword_spellings", {}).items()]
    gate = getattr(cls, "gate_keyword", "")
    if gate:
        out.append(f"gate threshold `{gate}`")
    out += [f"grid `{kw}` {min(v):g}..{max(v):g}" for kw, v in getattr(cls, "tuning_grid", {}).items()]
    return "; ".join(out)


def markdown_table() -> str:
    """The registered parts as a Markdown table (docs/reference/ranker-parts.md holds it; a test keeps it current)."""
    rows = ["| kind | name | class | declares |", "|---|---|---|---|"]
    for kind in KINDS:
        for part in entries(kind):
            name = f"`{part.name}` = `{part.stands_for}`" if part.stands_for else f"`{part.name}`"
            cls = f"`{part.cls.__module__.rpartition('.')[2]}.{part.cls.__name__}`" if part.cls is not None else ""
            declares = [_keywords(part.cls)] if kind in ("context", "gate", "novelty", "scorer") else []
            if part.features:
                declares.append("features " + ", ".join(f"`{part.name}{s}`" for s in part.features))
            rows.append(f"| {kind} | {name} | {cls} | {'; '.join(d for d in declares if d)} |")
    return "\n".join(rows) + "\n"
