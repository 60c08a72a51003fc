"""What every ranker, gate and similarity provides, and the rankers that compose them: context
(:class:`Interpolated`, :class:`Recursive`), query expansion (:class:`Expanded`) and gates
(:class:`Gated`), which the fluent methods (:meth:`Similarity.in_context`, ...) build.

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

**Context**: scoring a sentence together with its paragraph, opinion, case or neighbours.

* :class:`Interpolated` (suffixes ``-p``, ``-o``, ``-c``): per query token, the sentence's
  evidence is mixed with the evidence of the context unit, computed against the context
  granularity's own background statistics. For TF-ISF and BM25:
  Σ_t [(1 − λ1) TF_s·IDF_s + λ1 TF_i·IDF_i] · QTF; for QLLM the mixture is inside the log (see
  :class:`~statinterp.rankers.lexical.QLLM`); for cosine, (1 − λ1) COS_s + λ1 COS_i.
* :class:`Recursive` (suffix ``-r``): Sim-r(s) = (1 − λ1) Sim(s) + λ1 [R−(1) + R+(1)], where
  R±(d) = (1 − λ1) Sim(s ± d) + λ1 R±(d + 1) and R±(n) = Sim(s ± n); the neighbours are the
  spaCy sentences of the opinion around the candidate (missing ones contribute 0).

**Query expansion** (method suffixes ``-g`` and ``-e``)
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

**Compound** (:class:`Gated`)
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

import dataclasses
import functools
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from statinterp.errors import UsageError
from statinterp.index import LEVELS, MAX_NEIGHBOURS
from statinterp.provenance import library_versions
from statinterp.rankers import registry

__all__ = ["Component", "Gate", "Ranker", "Requirements", "Similarity", "EXPANSION_SUFFIX", "Expanded",
           "Gated", "available_vectors", "gated_scores", "libraries_key", "similar_words",
           "similar_words_query", "vector_provider", "expansion_needs", "Interpolated", "LEVELS",
           "LEVEL_SUFFIX", "Recursive"]

if TYPE_CHECKING:
    from statinterp.index.term_index import CollectionStats, Query, TermIndex
    from statinterp.text.analysis import TokenSeqs

C = TypeVar("C", bound="Component")

R = TypeVar("R", bound="type[Ranker]")


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
        return Gated(self, gates)


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
        ranker = Interpolated(self, context, lam)
        return ranker if lam is not None else ranker.set_params(lam=ranker.resolved_params()["lam"])

    def recursive(self, lam: float = 0.6, n: int = MAX_NEIGHBOURS) -> Ranker:
        """``Recursive`` interpolation with ``n`` neighbouring sentences on each side (``-r``)."""
        return Recursive(self, lam, n)

    def expanded(self, expansion: str = "provision", n_similar: int = 500, vectors: str = "word2vec") -> Ranker:
        """``Expanded``: the expanded query (``provision``: ``-g``; ``similar``: ``-e``) matched
        against whole cases."""
        return Expanded(self, expansion, n_similar, vectors)

if TYPE_CHECKING:
    from statinterp.index.term_index import TermIndex

LEVEL_SUFFIX = {"case": "c", "opinion": "o", "paragraph": "p"}

#: The context weight λ1 the default tuning grid tries.
LAMBDA_GRID = tuple(i / 10 for i in range(11))


@dataclass(frozen=True, eq=False, repr=False)
class Interpolated(Ranker):
    """Linear interpolation of a similarity with the candidate's context unit. λ1 (``lam``)
    defaults to the similarity's declared weight for the context
    (:attr:`~statinterp.rankers.base.Similarity.context_lambda`: the paper's tuned values)."""

    tuning_grid = {"lam": LAMBDA_GRID}

    similarity: Similarity
    context: str = "paragraph"
    lam: float | None = None

    def __post_init__(self):
        if self.context not in LEVEL_SUFFIX:
            raise ValueError(f"context must be one of {', '.join(LEVEL_SUFFIX)}, not {self.context!r}")
        if self.lam is not None and not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"interpolation weight must lie in [0, 1], not {self.lam}")

    @property
    def weight(self) -> float:
        """λ1: ``lam``, or when that is None the similarity's declared default for the context."""
        if self.lam is not None:
            return self.lam
        return self.similarity.default_context_weight(self.context)

    def resolved_params(self) -> dict:
        return {**self.get_params(), "lam": self.weight}

    @property
    def name(self) -> str:
        return f"{self.similarity.name}-{LEVEL_SUFFIX[self.context]}"

    def _parts(self, index: TermIndex):
        sim = self.similarity
        own_units = index.levels["sentence"]
        ctx_units = index.levels[self.context]
        own = sim.evidence(index.query, own_units.seqs, index.background["sentence"], index)[own_units.row]
        ctx = sim.evidence(index.query, ctx_units.seqs, index.background[self.context], index)[ctx_units.row]
        return own, ctx

    def score(self, index: TermIndex) -> np.ndarray:
        own, ctx = self._parts(index)
        mixed = self.similarity.mix(own, ctx, self.weight)
        return self.similarity.combine(mixed, index.query, index.background["sentence"])

    def explain(self, index: TermIndex, i: int) -> dict:
        own, ctx = self._parts(index)
        sim = self.similarity
        stats = index.background["sentence"]
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "sentence alone": float(sim.combine(sim.direct(own[i : i + 1]), index.query, stats)[0]),
            f"{self.context} alone": float(sim.combine(sim.direct(ctx[i : i + 1]), index.query, stats)[0]),
            "lambda": self.weight,
        }


@dataclass(frozen=True, eq=False, repr=False)
class Recursive(Ranker):
    """Recursive interpolation with the n neighbouring sentences on each side."""

    tuning_grid = {"lam": LAMBDA_GRID}

    similarity: Similarity
    lam: float = 0.6
    n: int = MAX_NEIGHBOURS

    def __post_init__(self):
        if not 1 <= self.n <= MAX_NEIGHBOURS:
            raise ValueError(f"n must lie in 1..{MAX_NEIGHBOURS}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"interpolation weight must lie in [0, 1], not {self.lam}")

    @property
    def name(self) -> str:
        return f"{self.similarity.name}-r"

    def needs(self) -> Requirements:
        return Requirements(neighbours=True)

    def neighbour_scores(self, index: TermIndex) -> dict[int, np.ndarray]:
        stats = index.background["sentence"]
        out = {}
        for d in range(-self.n, self.n + 1):
            if d == 0:
                continue
            units = index.neighbours[d]
            out[d] = units.spread(self.similarity.score_units(index.query, units.seqs, stats, index), missing=0.0)
        return out

    def score(self, index: TermIndex) -> np.ndarray:
        lam = self.lam
        own = self.similarity.score(index)
        near = self.neighbour_scores(index)
        total = (1.0 - lam) * own
        for sign in (-1, 1):
            r = near[sign * self.n]
            for d in range(self.n - 1, 0, -1):
                r = (1.0 - lam) * near[sign * d] + lam * r
            total = total + lam * r
        return total

    def explain(self, index: TermIndex, i: int) -> dict:
        near = self.neighbour_scores(index)
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "sentence alone": float(self.similarity.score(index)[i]),
            "neighbours": {d: float(v[i]) for d, v in sorted(near.items())},
            "lambda": self.lam,
        }

_LEVEL_TEXT = {"case": "the whole case", "opinion": "the opinion", "paragraph": "the paragraph"}

for _level, _suffix in LEVEL_SUFFIX.items():
    registry.register("context", _suffix, Interpolated, (lambda level: lambda sim: sim.in_context(level))(_level),
                      f"interpolated with {_LEVEL_TEXT[_level]}")

registry.register("context", "r", Recursive, lambda sim: sim.recursive(),
                  f"recursive interpolation with {MAX_NEIGHBOURS} neighbouring sentences on each side")


# ----------------------------------------------------------------------------- word vectors of a term


def vector_provider(index: TermIndex, kind: str, purpose: str) -> Any:
    """``index.vectors``: a provider with ``get(kind) -> DomainVectors`` (set by the workflow);
    without one, :class:`UsageError` says that ``purpose`` needs word vectors (of ``kind``)."""
    provider = getattr(index, "vectors", None)
    if provider is None:
        raise UsageError(f"{purpose} needs word vectors ({kind}), but none are attached to term {index.key!r}")
    return provider


def available_vectors(vectors: Any, kind: str, purpose: str) -> Any:
    """``vectors`` (what a provider gave for ``kind``); :class:`UsageError` if there are none."""
    if vectors is None:
        raise UsageError(f"{purpose} needs {kind} word vectors, which are not available")
    return vectors


@functools.cache
def libraries_key(libraries: tuple[str, ...]) -> str:
    """The versions of Python, statinterp and ``libraries`` (distribution names), for the cache
    key of values those libraries compute under word vectors."""
    return json.dumps(library_versions(libraries), sort_keys=True)


#: Expansion -> method-name suffix.
EXPANSION_SUFFIX = {"provision": "g", "similar": "e"}


# ----------------------------------------------------------------------------- query expansion


#: The modules whose code finds the similar words (their fingerprint is part of the cache key).
SIMILAR_WORDS_CODE = (__name__, "statinterp.vectors.embeddings")


def similar_words(index: TermIndex, n_similar: int = 500, vectors: str = "word2vec") -> list[str]:
    """The ``n_similar`` words nearest the term's query in the word vectors (gensim's
    ``most_similar`` of the query tokens that have a vector, phrases joined), nearest first; served
    by the vector provider, which keeps them in its cache (a warm run does not load the vectors)."""
    from statinterp.vectors.embeddings import directions_for  # gensim: only when a term is scored

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
