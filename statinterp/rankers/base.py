"""What every ranker, gate and similarity provides.

A :class:`Ranker` scores the candidate sentences of one term (a :class:`~statinterp.index.term_index.TermIndex`)
and returns one score per candidate; higher ranks first. Rankers, gates and similarities are
**values** (:class:`Component`): each is a frozen dataclass whose fields are its parameters and
nothing else (scikit-learn's rule; defaults that depend on other parameters are resolved when
scoring), so an object cannot be changed after construction, :meth:`~Component.set_params`
returns a changed copy (``dataclasses.replace``), and two objects with the same parameters are
equal. They compose one way, as a fluent
chain (PyTerrier's operators are the model)::

    TFISF().in_context("paragraph", 0.9).gated(DomainGate(TFISF(), "provision", 0.5), NoveltyGate("NWR", 0.2))

is the paper's ``Tp-Tg-Nr``. A composed ranker lists its :meth:`~Component.parts`, and what it
needs from the index (word vectors of which kind, a provision, neighbouring sentences) is
declared by each part (:meth:`~Component.needs`) and collected by :meth:`~Component.requires`.
``str(ranker)`` is its canonical method name (:mod:`statinterp.rankers.grammar` parses it back).

A :class:`Similarity` is a ranker built from a query-to-unit similarity. It splits its formula
into per-query-token *evidence* and a *combination* over query tokens, so that context
interpolation can mix evidence from two granularities before the combination (needed by the
query-likelihood model, where the mixing happens inside the logarithm).
"""

from __future__ import annotations

import dataclasses
import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from statinterp.index import MAX_NEIGHBOURS
from statinterp.rankers import registry

if TYPE_CHECKING:
    from statinterp.index.statistics import CollectionStats
    from statinterp.index.term_index import Query, TermIndex
    from statinterp.text.units import TokenSeqs

__all__ = ["Component", "Gate", "Ranker", "Requirements", "Similarity", "register_composite"]

C = TypeVar("C", bound="Component")
R = TypeVar("R", bound="type[Ranker]")


def register_composite(cls: R) -> R:
    """Class decorator: register ``cls`` as a ``composite`` part
    (:mod:`statinterp.rankers.registry`), which the fluent methods of :class:`Ranker` build
    without this module importing the module that defines it."""
    registry.register("composite", cls.__name__, cls)
    return cls


@dataclass(frozen=True)
class Requirements:
    """What a ranker needs attached to a term index besides its text.

    ``vectors``: the kinds of word vectors it asks ``index.vectors`` for (``word2vec``,
    ``fasttext`` or a pretrained name), in order of first use; ``provision``: the term's source
    provision; ``neighbours``: the sentences around each candidate.
    """

    vectors: tuple[str, ...] = ()
    provision: bool = False
    neighbours: bool = False

    def __or__(self, other: Requirements) -> Requirements:
        return Requirements(tuple(dict.fromkeys(self.vectors + other.vectors)), self.provision or other.provision,
                            self.neighbours or other.neighbours)


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a parameter value (lists and tuples become tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


def _set_item(name: str, parts: tuple | list, params: dict[str, Any]) -> list:
    """``parts`` with ``{"2__lam": v}`` set on ``parts[2]``."""
    out = list(parts)
    by_item: dict[int, dict[str, Any]] = {}
    for key, value in params.items():
        index, sep, rest = key.partition("__")
        if not (sep and index.isdigit() and int(index) < len(out)):
            raise TypeError(f"{name}__{key}: give the position of one of the {len(out)} {name} "
                            f"({name}__0__PARAM ... {name}__{len(out) - 1}__PARAM)")
        by_item.setdefault(int(index), {})[rest] = value
    for position, values in by_item.items():
        out[position] = out[position].set_params(**values)
    return out


class Component(ABC):
    """A value that holds parameters only: the common ground of rankers, gates and similarities.

    * Each concrete component is ``@dataclass(frozen=True, eq=False, repr=False)``: its fields are
      its parameters (validated in ``__post_init__``, nothing derived from them is stored), and
      :meth:`get_params` returns them.
    * Immutable (frozen): setting an attribute is an error; :meth:`set_params` returns a copy with
      some parameters replaced (unlike scikit-learn, which changes the object).
    * Equality and hashing are by type and parameters (after :meth:`resolved_params`), which is
      why the dataclasses leave ``eq`` and ``repr`` to this class.
    * :meth:`parts` are the components among the parameters; :meth:`requires` collects what the
      component and its parts :meth:`need <needs>`.
    """

    #: Classes whose objects are fitted models rather than parameter values opt out (plain
    #: classes, not dataclasses): their objects can be changed and are equal only to themselves.
    _mutable: ClassVar[bool] = False
    #: Own parameter -> the keyword ``build_method`` and ``tune --grid`` spell it by, where its
    #: own name would say something else (QLLM's ``lam`` is ``qllm_lam``: ``lam`` is the context
    #: weight); see :meth:`keywords`.
    keyword_spellings: ClassVar[dict[str, str]] = {}
    #: Keyword -> the values the default tuning grid tries (:func:`statinterp.rankers.registry.candidate_grid`).
    tuning_grid: ClassVar[dict[str, tuple]] = {}

    #: The canonical name in the method-name grammar (:mod:`statinterp.rankers.grammar`), e.g.
    #: ``TF-ISF-p`` or ``Tp-Tg-Nr`` for a ranker, ``Tg`` or ``NWR>=0.3`` for a gate.
    @property
    @abstractmethod
    def name(self) -> str: ...

    def __str__(self) -> str:
        return self.name

    # -- parameters ------------------------------------------------------------------------
    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        """The constructor's parameter names, in order (a dataclass's fields)."""
        if dataclasses.is_dataclass(cls):
            return tuple(f.name for f in dataclasses.fields(cls) if f.init)
        init = cls.__init__
        if init is object.__init__:
            return ()
        return tuple(p.name for p in list(inspect.signature(init).parameters.values())[1:]
                     if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        """The parameters as given to the constructor. ``deep`` adds those of the parts as
        ``part__name`` (scikit-learn's convention)."""
        params = {name: getattr(self, name) for name in self.param_names()}
        if deep:
            for name, value in list(params.items()):
                if isinstance(value, Component):
                    params.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
                elif isinstance(value, (list, tuple)):
                    for i, item in enumerate(value):
                        if isinstance(item, Component):
                            params.update((f"{name}__{i}__{k}", v) for k, v in item.get_params(deep=True).items())
        return params

    def set_params(self: C, **params: Any) -> C:
        """A copy with ``params`` replaced; ``part__name=value`` replaces a parameter of a part
        and ``parts__2__name=value`` one of the third of a sequence of parts (``gates__0__lam``)."""
        own = self.get_params()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, rest = key.partition("__")
            if name not in own:
                raise TypeError(f"{type(self).__name__} has no parameter {name!r} "
                                f"(parameters: {', '.join(own) or 'none'})")
            if sep:
                nested.setdefault(name, {})[rest] = value
            else:
                own[name] = value
        for name, values in nested.items():
            part = own[name]
            if isinstance(part, (list, tuple)) and part and all(isinstance(p, Component) for p in part):
                own[name] = type(part)(_set_item(name, part, values))
                continue
            if not isinstance(part, Component):
                raise TypeError(f"{type(self).__name__}.{name} is not a component: cannot set {', '.join(values)}")
            own[name] = part.set_params(**values)
        if dataclasses.is_dataclass(self):
            return dataclasses.replace(self, **own)
        return type(self)(**own)

    def keywords(self) -> dict[str, str]:
        """Keyword parameter -> own parameter: the flat spellings of ``build_method`` and
        ``tune --grid`` (:func:`statinterp.rankers.grammar.with_params`) that set this part's
        parameters. By default every parameter that is not a part, under its own name or its
        :attr:`keyword_spellings`."""
        out = {}
        for name, value in self.get_params().items():
            values = value if isinstance(value, (list, tuple)) else (value,)
            if not any(isinstance(v, Component) for v in values):
                out[self.keyword_spellings.get(name, name)] = name
        return out

    def resolved_params(self) -> dict[str, Any]:
        """The parameters with defaults that depend on others filled in (compared by ``==``)."""
        return self.get_params()

    def _identity(self) -> tuple:
        return (type(self), tuple((k, _frozen(v)) for k, v in self.resolved_params().items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Component):
            return NotImplemented
        if self._mutable or other._mutable:
            return self is other
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return object.__hash__(self) if self._mutable else hash(self._identity())

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.resolved_params().items())
        return f"{type(self).__name__}({params})"

    # -- composition -----------------------------------------------------------------------
    def parts(self) -> tuple[Component, ...]:
        """The components this one is composed of (its parameters that are components)."""
        out: list[Component] = []
        for value in self.get_params().values():
            values = value if isinstance(value, (list, tuple)) else (value,)
            out.extend(v for v in values if isinstance(v, Component))
        return tuple(out)

    def walk(self) -> Iterator[Component]:
        """This component and, depth first, every part of it."""
        yield self
        for part in self.parts():
            yield from part.walk()

    def needs(self) -> Requirements:
        """What this component itself (not its parts) needs attached to the index."""
        return Requirements()

    def requires(self) -> Requirements:
        """What this component and all its parts need: word vectors, a provision, neighbours."""
        total = Requirements()
        for component in self.walk():
            total = total | component.needs()
        return total


class Ranker(Component):
    """Scores the candidate sentences of a term; its ``name`` is its canonical method name."""

    @abstractmethod
    def score(self, index: TermIndex) -> np.ndarray:
        """One score per candidate of ``index``, in the index's order."""

    def explain(self, index: TermIndex, i: int) -> dict:
        """Components of candidate ``i``'s score (overridden by composite rankers)."""
        return {"method": self.name, "score": float(self.score(index)[i])}

    def gated(self, *gates: Gate) -> Ranker:
        """This ranker with ``gates`` (a ``Gated``): every sentence all gates pass ranks above
        every other one."""
        return registry.composite("Gated")(self, gates)


class Gate(Component):
    """A per-candidate pass/fail test: passes(s) = values(s) ≥ cutoff. Its ``name`` is its
    canonical spelling in compound method names (``Tg``, ``BM25-g>=0.4``, ``NWR>=0.3``)."""

    @abstractmethod
    def values(self, index: TermIndex) -> np.ndarray:
        """The gated quantity for every candidate."""

    @abstractmethod
    def cutoff(self, index: TermIndex) -> float:
        """The (term-specific) threshold the quantity must reach."""

    def passes(self, index: TermIndex) -> np.ndarray:
        """Gate value per candidate: True (1) where the quantity reaches the cutoff."""
        return self.values(index) >= self.cutoff(index)

    def explain(self, index: TermIndex, i: int) -> dict:
        m = self.values(index)
        t = self.cutoff(index)
        return {"gate": self.name, "value": int(m[i] >= t), "score": float(m[i]), "threshold": float(t)}


class Similarity(Ranker):
    """A query-to-text similarity; as a ranker it scores the candidate sentences themselves."""

    #: The default context weight λ1 of ``Interpolated`` per context level (``paragraph``,
    #: ``opinion``, ``case``): the paper's tuned values for its similarities. A similarity that
    #: declares none for a level needs an explicit ``lam`` there.
    context_lambda: ClassVar[dict[str, float]] = {}

    @property
    def short_name(self) -> str:
        """Short name used in method names (``TF-ISF``, ``BM25``, ``QLLM``, ``w2vec*``);
        a class attribute in most similarities."""
        return ""

    def default_context_weight(self, level: str) -> float:
        """λ1 of ``Interpolated`` with ``level`` when none is given (:attr:`context_lambda`)."""
        if level not in self.context_lambda:
            raise ValueError(f"{self.name or type(self).__name__} declares no default context weight for "
                             f"{level!r}: give lam")
        return self.context_lambda[level]

    @property
    def name(self) -> str:
        return self.short_name

    @abstractmethod
    def evidence(self, query: Query, units: TokenSeqs, stats: CollectionStats, index: TermIndex) -> np.ndarray:
        """Per unit and query token, the evidence the formula sums: array (n_units, len(query))."""

    @abstractmethod
    def combine(self, evidence: np.ndarray, query: Query, stats: CollectionStats) -> np.ndarray:
        """Combine (mixed) evidence over the query tokens into one score per unit."""

    def direct(self, evidence: np.ndarray) -> np.ndarray:
        """Evidence of a unit scored on its own (no context)."""
        return evidence

    def mix(self, own: np.ndarray, context: np.ndarray, lam: float) -> np.ndarray:
        """Linear interpolation ``(1 - lam) * own + lam * context`` (overridden by QLLM)."""
        return (1.0 - lam) * own + lam * context

    def score_units(self, query: Query, units: TokenSeqs, stats: CollectionStats,
                    index: TermIndex) -> np.ndarray:
        """The similarity of ``query`` to each of ``units`` (one score per unit)."""
        return self.combine(self.direct(self.evidence(query, units, stats, index)), query, stats)

    def score(self, index: TermIndex) -> np.ndarray:
        units = index.levels["sentence"]
        return units.spread(self.score_units(index.query, units.seqs, index.background["sentence"], index))

    # -- fluent composition ----------------------------------------------------------------
    def in_context(self, context: str = "paragraph", lam: float | None = None) -> Ranker:
        """``Interpolated`` with the candidate's ``context`` unit (``-p``, ``-o``, ``-c``); ``lam``
        defaults to the paper's tuned λ1 for this similarity."""
        ranker = registry.composite("Interpolated")(self, context, lam)
        return ranker if lam is not None else ranker.set_params(lam=ranker.resolved_params()["lam"])

    def recursive(self, lam: float = 0.6, n: int = MAX_NEIGHBOURS) -> Ranker:
        """``Recursive`` interpolation with ``n`` neighbouring sentences on each side (``-r``)."""
        return registry.composite("Recursive")(self, lam, n)

    def expanded(self, expansion: str = "provision", n_similar: int = 500, vectors: str = "word2vec") -> Ranker:
        """``Expanded``: the expanded query (``provision``: ``-g``; ``similar``: ``-e``) matched
        against whole cases."""
        return registry.composite("Expanded")(self, expansion, n_similar, vectors)
