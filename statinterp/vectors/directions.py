"""Unit directions of texts under word vectors: what the cosine methods compare.

The direction of a text is the unit-length mean of the L2-normalised vectors of its tokens
(after the vectors' phrase model has joined them). The cosine scorer
(:class:`statinterp.rankers.cosine.Cosine`) only takes dot products; the directions are
served to it by whoever owns the vectors: :meth:`statinterp.vectors.provider.VectorProvider.directions`
hands out one :class:`UnitDirections` per kind and set of vectors, which computes the
directions of every set of units of a term index together on first use, keeps them in memory
for the run and on disk in the :class:`~statinterp.cache.namespaces.DirectionCache` (a warm run
reads them without loading the vectors). It serves other values computed under the vectors
the same way: per-unit values (:meth:`UnitDirections.unit_values`: the WMD novelty distances)
and word lists (:meth:`UnitDirections.words`: the words most similar to a query).

Pure functions over token strings and a gensim ``KeyedVectors`` (``kv``): a token "has a
vector" when it is a key of ``kv`` or, for fastText vectors, when gensim can build one from
its character n-grams; tokens without a vector are skipped, and so are tokens with an all-zero
vector wherever a direction is needed.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gensim.models.fasttext import FastTextKeyedVectors, ft_ngram_hashes
from gensim.models.keyedvectors import KeyedVectors
from scipy.sparse import csr_matrix

from statinterp.cache.namespaces import directions_key, query_key, unit_values_key, words_key
from statinterp.cache.store import code_fingerprint
from statinterp.text.phrasing import join_phrases, ragged_ids

if TYPE_CHECKING:
    from statinterp.cache.namespaces import DirectionCache
    from statinterp.text.units import TokenSeqs
    from statinterp.vectors.training import DomainVectors

__all__ = [
    "LOOKUP_BLOCK",
    "UnitDirections",
    "directions_for",
    "fasttext_oov_vectors",
    "lookup_vectors",
    "mean_directions",
    "mean_directions_of_ids",
    "mean_unit_vector",
    "query_direction",
    "unit_sets",
    "unit_vector_sums",
]


def lookup_vectors(
    words: Iterable[str], kv: KeyedVectors, *, drop_zero: bool = True, unit: bool = False
) -> tuple[dict[str, int], np.ndarray]:
    """Vectors (float64 rows) of the distinct ``words`` that have a vector.

    Returns ``(row_of_word, matrix)``; words without a vector (and, with ``drop_zero``,
    words whose vector is all zeros, which has no direction) are absent from the dict.
    ``unit`` (implies ``drop_zero``) scales every row to unit length, in place, with the
    norms computed once for both steps.
    """
    key_to_index = kv.key_to_index
    fasttext = isinstance(kv, FastTextKeyedVectors) and kv.bucket > 0
    known: list[str] = []
    indices: list[int] = []
    oov_words: list[str] = []
    for word in dict.fromkeys(words):
        index = key_to_index.get(word)
        if index is not None:
            known.append(word)
            indices.append(index)
        elif fasttext and word in kv:
            oov_words.append(word)
    # one float64 array, filled in place (the vectors of a whole vocabulary can be large)
    matrix = np.empty((len(known) + len(oov_words), kv.vector_size), dtype=np.float64)
    matrix[: len(known)] = kv.vectors[np.asarray(indices, dtype=np.int64)]
    if oov_words:
        matrix[len(known):] = fasttext_oov_vectors(kv, oov_words)
    words_in_order = known + oov_words
    if drop_zero or unit:
        norms = np.linalg.norm(matrix, axis=1)
        nonzero = norms > 0
        if not nonzero.all():
            matrix, norms = matrix[nonzero], norms[nonzero]
            words_in_order = [w for w, keep in zip(words_in_order, nonzero, strict=True) if keep]
        if unit:
            matrix /= norms[:, None]
    return {word: row for row, word in enumerate(words_in_order)}, matrix


def fasttext_oov_vectors(kv: FastTextKeyedVectors, words: Sequence[str]) -> np.ndarray:
    """``kv.get_vector(word)`` of each word that is not a key (float32 rows), for all at once.

    gensim adds the word's n-gram vectors one after the other in Python and divides by their
    number; here one sparse (words x buckets) times dense (buckets x dim) product in float32
    adds the same rows in the same order, so the vectors are bit for bit gensim's.  A word
    without n-grams gets the zero vector, as in gensim.
    """
    hashes = [ft_ngram_hashes(word, kv.min_n, kv.max_n, kv.bucket) for word in words]
    lengths = np.fromiter(map(len, hashes), dtype=np.int64, count=len(hashes))
    indptr = np.zeros(len(hashes) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    columns = np.fromiter((h for row in hashes for h in row), dtype=np.int64, count=int(indptr[-1]))
    ngrams = csr_matrix((np.ones(len(columns), dtype=np.float32), columns, indptr),
                        shape=(len(hashes), kv.vectors_ngrams.shape[0]))
    sums = np.asarray(ngrams @ kv.vectors_ngrams, dtype=np.float32)
    has = lengths > 0
    sums[has] /= lengths[has, None].astype(np.float32)
    return sums


def mean_unit_vector(tokens: Sequence[str], kv: KeyedVectors) -> np.ndarray | None:
    """Average of the L2-normalised vectors of the tokens that have one (float64).

    Every occurrence counts, so a repeated token weighs more.  ``None`` if no token has
    a vector.  The result is not itself unit length.
    """
    rows, unit = lookup_vectors(tokens, kv, unit=True)
    counts = Counter(token for token in tokens if token in rows)
    if not counts:
        return None
    weights = np.zeros(len(rows))
    for token, count in counts.items():
        weights[rows[token]] = count
    return weights @ unit / weights.sum()


def query_direction(tokens: Sequence[str], kv: KeyedVectors) -> np.ndarray | None:
    """Unit direction of the tokens' :func:`mean_unit_vector` (``None`` if it has none)."""
    mean = mean_unit_vector(tokens, kv)
    if mean is None:
        return None
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else None


def mean_directions(docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Unit-length direction of each doc's :func:`mean_unit_vector` (rows of a float64 array).

    A row is all zeros where the doc has no token with a vector (or its mean is zero), so a
    dot product with a unit query direction is the doc's cosine, 0 for such docs, exactly
    as in :func:`statinterp.rankers.embedding.cosine_scores`.
    """
    return mean_directions_of_ids(*ragged_ids(list(docs)), kv)


#: Words whose vectors are looked up at a time by :func:`unit_vector_sums` (bounds its memory).
LOOKUP_BLOCK = 16384


def unit_vector_sums(
    parts: Sequence[tuple[np.ndarray, np.ndarray]], words: Sequence[str], kv: KeyedVectors
) -> list[np.ndarray]:
    """For each ``(ids, offsets)`` of ``parts`` (ragged docs ``ids[offsets[i]:offsets[i + 1]]``,
    ``words[id]`` a token's string): per doc, the sum of the unit vectors of its tokens that
    have a (non-zero) vector, as a float64 array (docs x dim).

    The distinct words of all parts are looked up once, :data:`LOOKUP_BLOCK` at a time; each
    block adds one sparse (docs x block words) times dense (block words x dim) product to
    every part, so memory stays bounded however large the vocabulary (fastText gives every
    word a vector).
    """
    sums = [np.zeros((len(offsets) - 1, kv.vector_size)) for _, offsets in parts]
    if not parts:
        return sums
    used = np.unique(np.concatenate([np.asarray(ids, dtype=np.int64) for ids, _ in parts]))
    col_of_id = np.full(len(words), -1, dtype=np.int64)
    for start in range(0, len(used), LOOKUP_BLOCK):
        block = used[start : start + LOOKUP_BLOCK]
        found, matrix = lookup_vectors((words[i] for i in block.tolist()), kv, unit=True)
        if not found:
            continue
        col_of_id[block] = [found.get(words[i], -1) for i in block.tolist()]
        for (ids, offsets), acc in zip(parts, sums, strict=True):
            cols = col_of_id[ids]
            hit = cols >= 0
            indptr = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))[offsets]  # block tokens per doc
            counts = csr_matrix((np.ones(int(indptr[-1])), cols[hit], indptr), shape=(len(acc), len(found)))
            acc += counts @ matrix
        col_of_id[block] = -1
    return sums


def unit_rows(sums: np.ndarray) -> np.ndarray:
    """Rows of ``sums`` scaled to unit length (in place; all-zero rows stay zero)."""
    norms = np.linalg.norm(sums, axis=1)
    nonzero = norms > 0
    sums[nonzero] /= norms[nonzero, None]
    return sums


def mean_directions_of_ids(ids: np.ndarray, offsets: np.ndarray, words: Sequence[str], kv: KeyedVectors) -> np.ndarray:
    """:func:`mean_directions` of the ragged docs ``ids[offsets[i]:offsets[i + 1]]`` (``words[id]``
    is a token's string), from :func:`unit_vector_sums`."""
    return unit_rows(unit_vector_sums([(np.asarray(ids, dtype=np.int64), offsets)], words, kv)[0])


# ----------------------------------------------------------------------------------------
# Serving directions: one UnitDirections per kind and set of vectors


def _code() -> str:
    """Fingerprint of the code the directions come from (part of their cache keys)."""
    return code_fingerprint("statinterp.text.phrasing", __name__)


def unit_sets(index: Any) -> dict[str, TokenSeqs]:
    """Every set of units of a term index by a stable name: the levels, then the neighbours."""
    sets = {f"level:{name}": units.seqs for name, units in getattr(index, "levels", {}).items()}
    sets.update((f"neighbour:{d}", units.seqs) for d, units in sorted(getattr(index, "neighbours", {}).items()))
    return sets


class UnitDirections:
    """The directions of queries and units under one set of vectors of one kind.

    Memoised for the life of this object (the provider keeps one per kind and vectors), and
    kept in ``cache`` (a :class:`~statinterp.cache.namespaces.DirectionCache`) when the vectors
    are known by their ``source`` (their file): the vectors are loaded (``load()``) only when
    something is not cached.
    """

    def __init__(self, load: Callable[[], DomainVectors], source: str | None = None,
                 cache: DirectionCache | None = None, loaded: DomainVectors | None = None):
        self._load = load
        self.source = source
        self.cache = cache if source else None
        self._loaded = loaded  # also keeps the id of in-memory vectors unique while this lives
        self._units: dict[int, tuple[TokenSeqs, np.ndarray]] = {}
        self._queries: dict[tuple[str, ...], np.ndarray | None] = {}
        self._values: dict[tuple[int, str], tuple[TokenSeqs, np.ndarray]] = {}
        self._words: dict[str, list[str]] = {}

    def vectors(self) -> DomainVectors:
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded

    def query(self, tokens: Sequence[str]) -> np.ndarray | None:
        """Unit direction of the query's mean unit vector after phrase joining (``None`` if no
        query token has a vector)."""
        key_tokens = tuple(tokens)
        if key_tokens in self._queries:
            return self._queries[key_tokens]
        key = query_key(_code(), self.source, key_tokens) if self.cache is not None and self.source else None
        found = self.cache.get_query(key) if key is not None and self.cache is not None else None
        if found is None:
            vectors = self.vectors()
            direction = query_direction(vectors.transform(list(key_tokens)), vectors.kv)
            if key is not None and self.cache is not None:
                self.cache.put_query(key, direction)
        else:
            direction = found[0]
        self._queries[key_tokens] = direction
        return direction

    def units(self, units: TokenSeqs, index: Any) -> np.ndarray:
        """:func:`mean_directions` of the units' tokens (phrases joined; ``index.vocab.words``
        names the ids). For the term's own unit sets (every level and neighbour offset) the
        directions of all of them are computed together on first use, or read from the cache,
        and stored there."""
        hit = self._units.get(id(units))
        if hit is not None and hit[0] is units:
            return hit[1]
        sets = unit_sets(index)
        if any(seqs is units for seqs in sets.values()):
            for name, directions in self._term_directions(index, sets).items():
                self._units[id(sets[name])] = (sets[name], directions)  # holding the units keeps the id unique
            return self._units[id(units)][1]
        vectors = self.vectors()
        ids, offsets, words = join_phrases(vectors.phrasers, units.ids, units.offsets, index.vocab.words)
        directions = mean_directions_of_ids(ids, offsets, words, vectors.kv)
        self._units[id(units)] = (units, directions)
        return directions

    def unit_values(self, units: TokenSeqs, index: Any, measure: str, code_modules: Sequence[str],
                    compute: Callable[[DomainVectors], np.ndarray]) -> np.ndarray:
        """Per-unit values of a measure under these vectors: ``compute(vectors)`` (a float64 array,
        one value per unit of ``units``), memoised for the life of this object and kept in the
        cache, so that a warm run neither loads the vectors nor computes the values again.

        ``measure`` names the measure and everything its values depend on besides the units, their
        words (``index.vocab.words``) and the vectors (reference tokens, parameters, library
        versions); ``code_modules`` are the modules whose source computes them (their
        fingerprint, with this module's and the phrase joining's, is part of the cache key)."""
        memo = (id(units), measure)
        hit = self._values.get(memo)
        if hit is not None and hit[0] is units:
            return hit[1]
        key = None
        if self.cache is not None and self.source:
            code = code_fingerprint(*code_modules, "statinterp.text.phrasing", __name__)
            key = unit_values_key(code, self.source, index.vocab.words, {"units": units}, measure)
            found = self.cache.get_values(key, len(units))
        else:
            found = None
        if found is None:
            found = np.asarray(compute(self.vectors()), dtype=np.float64)
            if found.shape != (len(units),):
                raise ValueError(f"{measure}: {found.shape} values for {len(units)} units")
            if key is not None and self.cache is not None:
                self.cache.put_values(key, found)
        self._values[memo] = (units, found)  # holding the units keeps the id unique
        return found

    def words(self, measure: str, code_modules: Sequence[str], compute: Callable[[DomainVectors], list[str]]
              ) -> list[str]:
        """A word list computed from these vectors, ``compute(vectors)``, memoised and kept in the
        cache like :meth:`unit_values` (``measure`` names it and everything it depends on besides
        the vectors: the query, parameters, library versions)."""
        found = self._words.get(measure)
        if found is not None:
            return found
        key = None
        if self.cache is not None and self.source:
            key = words_key(code_fingerprint(*code_modules, "statinterp.text.phrasing", __name__), self.source, measure)
            found = self.cache.get_words(key)
        if found is None:
            found = [str(word) for word in compute(self.vectors())]
            if key is not None and self.cache is not None:
                self.cache.put_words(key, found)
        self._words[measure] = found
        return found

    def _term_directions(self, index: Any, sets: dict[str, TokenSeqs]) -> dict[str, np.ndarray]:
        """:func:`mean_directions_of_ids` of every set of ``sets`` (phrases joined), read from or
        written to the cache when there is one (the vectors are loaded only on a miss)."""
        words = index.vocab.words
        cache_key = (directions_key(_code(), self.source, words, sets)
                     if self.cache is not None and self.source else None)
        if cache_key is not None and self.cache is not None:
            found = self.cache.get(cache_key, {name: len(seqs) for name, seqs in sets.items()})
            if found is not None:
                return found
        vectors = self.vectors()
        joined = {name: join_phrases(vectors.phrasers, seqs.ids, seqs.offsets, words) for name, seqs in sets.items()}
        all_words = next(iter(joined.values()))[2] if joined else words  # the same words for every set
        sums = unit_vector_sums([(ids, offsets) for ids, offsets, _ in joined.values()], all_words, vectors.kv)
        out = {name: unit_rows(values) for name, values in zip(joined, sums, strict=True)}
        if cache_key is not None and self.cache is not None:
            self.cache.put(cache_key, out)
        return out


def memoised_directions(memo: dict, provider: Any, kind: str, cache: DirectionCache | None) -> UnitDirections:
    """The :class:`UnitDirections` of ``provider``'s current vectors of ``kind``, from ``memo``.

    The vectors are named by their ``source`` (``provider.source(kind)``: their file) when the
    provider knows it without loading them, so that directions read from the cache never need
    the vectors themselves; vectors without a source are named by the object (not cached on disk).
    """
    source_of = getattr(provider, "source", None)
    source = source_of(kind) if callable(source_of) else None
    loaded = None
    if source is None:
        loaded = provider.get(kind)
        source = getattr(loaded, "source", None)
    ident = ("source", source) if source else ("object", id(loaded))
    found = memo.get((kind, ident))
    if found is None:
        found = UnitDirections(lambda: provider.get(kind), source, cache if source else None, loaded)
        memo[(kind, ident)] = found
    return found


_OTHER_PROVIDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def directions_for(provider: Any, kind: str) -> UnitDirections:
    """The :class:`UnitDirections` of ``kind`` that ``provider`` serves (``provider.directions``);
    for any other object with ``get(kind) -> DomainVectors`` (a stand-in provider), a memoised
    one without a disk cache."""
    own = getattr(provider, "directions", None)
    if callable(own):
        return own(kind)
    try:
        memo = _OTHER_PROVIDERS.setdefault(provider, {})
    except TypeError:  # neither hashable nor weakly referable: nothing is memoised
        memo = {}
    return memoised_directions(memo, provider, kind, None)
