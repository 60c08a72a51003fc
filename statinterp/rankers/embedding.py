"""Embedding-based scores: cosine of mean word vectors and Word Mover's Distance.

Pure functions over token strings and a gensim ``KeyedVectors`` (``kv``).  A token "has
a vector" when it is a key of ``kv`` or, for fastText vectors, when gensim can build one
from its character n-grams; tokens without a vector are skipped, and so are tokens with an
all-zero vector wherever a direction is needed (cosine, WMD with ``norm=True``).  Apply the phrase model first (``DomainVectors.transform``) when the vectors were
trained with phrases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Callable

import numpy as np
import ot
from gensim.models.fasttext import FastTextKeyedVectors, ft_ngram_hashes
from gensim.models.keyedvectors import KeyedVectors
from scipy.sparse import csr_matrix
from scipy.spatial.distance import cdist

from statinterp.cache.directions import directions_key, query_key
from statinterp.errors import UsageError
from statinterp.text.phrasing import join_phrases, ragged_ids
from statinterp.rankers.base import Requirements, Similarity

if TYPE_CHECKING:
    from statinterp.cache.directions import DirectionCache
    from statinterp.vectors.training import DomainVectors
    from statinterp.index.term_index import Query, TermIndex
    from statinterp.index.statistics import CollectionStats
    from statinterp.text.units import TokenSeqs

__all__ = ["Cosine", "WMDScorer", "cosine_scores", "mean_directions", "mean_unit_vector", "wmd"]

#: Iteration cap for POT's network simplex (its default, 100 000, can be too low for long texts).
EMD_MAX_ITER = 1_000_000


def _lookup(
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
            words_in_order = [w for w, keep in zip(words_in_order, nonzero) if keep]
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
    rows, unit = _lookup(tokens, kv, unit=True)
    counts = Counter(token for token in tokens if token in rows)
    if not counts:
        return None
    weights = np.zeros(len(rows))
    for token, count in counts.items():
        weights[rows[token]] = count
    return weights @ unit / weights.sum()


def cosine_scores(query_tokens: Sequence[str], docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Cosine between the query's and each doc's :func:`mean_unit_vector` (float64 array).

    Vectorised: the distinct words of query and docs are looked up once, the docs' vector
    sums are one sparse (docs x words) times dense (words x dim) product and the cosines
    one matrix-vector product.  A doc or query without any token that has a vector (or
    whose mean vector is zero) scores 0.
    """
    docs = list(docs)
    scores = np.zeros(len(docs))
    rows, unit = _lookup([t for t in query_tokens] + [t for doc in docs for t in doc], kv, unit=True)
    if not rows:
        return scores
    query = np.zeros(len(rows))
    for token in query_tokens:
        row = rows.get(token)
        if row is not None:
            query[row] += 1.0
    q = query @ unit
    q_norm = np.linalg.norm(q)
    if q_norm == 0:
        return scores
    data: list[float] = []
    cols: list[int] = []
    indptr = [0]
    for doc in docs:
        for token in doc:
            row = rows.get(token)
            if row is not None:
                cols.append(row)
                data.append(1.0)
        indptr.append(len(cols))
    counts = csr_matrix((data, cols, indptr), shape=(len(docs), len(rows)))  # duplicates are summed
    sums = counts @ unit  # proportional to the docs' mean unit vectors; cosine ignores the scale
    norms = np.linalg.norm(sums, axis=1)
    dots = sums @ (q / q_norm)
    nonzero = norms > 0
    scores[nonzero] = dots[nonzero] / norms[nonzero]
    return np.clip(scores, -1.0, 1.0)


def _nbow(tokens: Sequence[str], rows: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the tokens that have a vector and their normalised frequencies."""
    counts = Counter(rows[token] for token in tokens if token in rows)
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    return ids, weights / weights.sum()


def _emd(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    if cost.shape[0] == 1:  # all mass leaves one word
        return float(cost[0] @ b)
    if cost.shape[1] == 1:  # all mass arrives at one word
        return float(a @ cost[:, 0])
    return float(ot.emd2(a, b, np.ascontiguousarray(cost), numItermax=EMD_MAX_ITER))


class WMDScorer:
    """Word Mover's Distance from many documents to one reference text (the provision).

    WMD (Kusner et al., 2015): each text is its normalised bag of words (nBOW) over the
    tokens that have a vector; the cost of moving mass from word i to word j is the
    Euclidean distance between their vectors; the distance is the optimal transport cost,
    solved exactly with POT's ``ot.emd2`` (network simplex).

    ``norm=False`` (default) uses the raw vectors, as the original WMD and gensim < 4.0
    (hence the 2019 paper) did; ``norm=True`` unit-normalises them first, as gensim 4's
    ``KeyedVectors.wmdistance`` does by default.  Either way the result equals gensim's
    ``wmdistance(doc, ref, norm=norm)``, except that two texts whose word vectors all
    coincide get 0.0 here where gensim returns ``inf``.

    A document (or a reference) without any token that has a vector is at distance
    ``float('inf')``: it sorts last in an ascending ranking; map it to a similarity of 0
    (e.g. with ``1 / (1 + d)``) if you need a finite score.

    The reference's words, vectors and nBOW are computed once; :meth:`distances` looks up
    the union vocabulary of all its docs once and computes the whole (doc words x
    reference words) distance matrix in one ``cdist`` call (memory: 8 bytes per entry), then
    slices it per document.
    """

    def __init__(self, ref_tokens: Sequence[str], kv: KeyedVectors, *, norm: bool = False):
        self.kv = kv
        self.norm = norm
        ref_rows, ref_matrix = _lookup(ref_tokens, kv, drop_zero=norm, unit=norm)
        ids, self._ref_weights = _nbow(ref_tokens, ref_rows)
        self._ref_vectors = ref_matrix[ids]

    def distances(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """WMD of each doc to the reference (float64 array; ``inf`` where undefined)."""
        docs = list(docs)
        out = np.full(len(docs), np.inf)
        if not len(self._ref_weights) or not docs:
            return out
        rows, matrix = _lookup((token for doc in docs for token in doc), self.kv, drop_zero=self.norm, unit=self.norm)
        if not rows:
            return out
        cost = cdist(matrix, self._ref_vectors)  # float64, (doc vocabulary x reference words)
        for i, doc in enumerate(docs):
            ids, weights = _nbow(doc, rows)
            if len(ids):
                out[i] = _emd(weights, self._ref_weights, cost[ids])
        return out


def wmd(doc_tokens: Sequence[str], ref_tokens: Sequence[str], kv: KeyedVectors, *, norm: bool = False) -> float:
    """Word Mover's Distance between two token lists; see :class:`WMDScorer`.

    ``float('inf')`` if either side has no token with a vector.
    """
    return float(WMDScorer(ref_tokens, kv, norm=norm).distances([doc_tokens])[0])


# ----------------------------------------------------------------------------------------
# Cosine as a Similarity (methods w2vec*, fastt*, w2vec, GloVe, fastt)


def mean_directions(docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Unit-length direction of each doc's :func:`mean_unit_vector` (rows of a float64 array).

    A row is all zeros where the doc has no token with a vector (or its mean is zero), so a
    dot product with a unit query direction is the doc's cosine, 0 for such docs, exactly
    as in :func:`cosine_scores`.
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
        found, matrix = _lookup((words[i] for i in block.tolist()), kv, unit=True)
        if not found:
            continue
        col_of_id[block] = [found.get(words[i], -1) for i in block.tolist()]
        for (ids, offsets), acc in zip(parts, sums):
            cols = col_of_id[ids]
            hit = cols >= 0
            indptr = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))[offsets]  # block tokens per doc
            counts = csr_matrix((np.ones(int(indptr[-1])), cols[hit], indptr), shape=(len(acc), len(found)))
            acc += counts @ matrix
        col_of_id[block] = -1
    return sums


def _directions(sums: np.ndarray) -> np.ndarray:
    """Rows of ``sums`` scaled to unit length (in place; all-zero rows stay zero)."""
    norms = np.linalg.norm(sums, axis=1)
    nonzero = norms > 0
    sums[nonzero] /= norms[nonzero, None]
    return sums


def mean_directions_of_ids(ids: np.ndarray, offsets: np.ndarray, words: Sequence[str], kv: KeyedVectors) -> np.ndarray:
    """:func:`mean_directions` of the ragged docs ``ids[offsets[i]:offsets[i + 1]]`` (``words[id]``
    is a token's string), from :func:`unit_vector_sums`."""
    return _directions(unit_vector_sums([(np.asarray(ids, dtype=np.int64), offsets)], words, kv)[0])


def _query_direction(tokens: Sequence[str], kv: KeyedVectors) -> np.ndarray | None:
    mean = mean_unit_vector(tokens, kv)
    if mean is None:
        return None
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else None


#: Method names of the domain vector kinds (kept in step with :data:`statinterp.vectors.provider.DOMAIN_KINDS`).
_KIND_NAMES = {"word2vec": "w2vec*", "fasttext": "fastt*"}


class Cosine(Similarity):
    """Cosine between the mean unit word vectors of the query and of a text.

    q and d are the averages of the L2-normalised vectors of their tokens (tokens without a
    vector are skipped; a text with none scores 0) and the score is cos(q, d), i.e.
    :func:`cosine_scores`.  Both sides go through the vectors' phrase model first.  The
    vectors come from ``index.vectors.get(kind)`` (a :class:`statinterp.vectors.provider.VectorProvider`):
    ``kind`` is ``"word2vec"`` (method ``w2vec*``), ``"fasttext"`` (``fastt*``) or the name of
    pretrained vectors (``w2vec``, ``GloVe``, ``fastt``).

    As a :class:`Similarity` the evidence is one column, the cosine, and :meth:`combine` sums
    it, so context interpolation gives (1 - λ1) COS_s + λ1 COS_i and the recursive variant
    works unchanged.  The unit directions of each set of units (sentences, paragraphs, ...,
    neighbours) are memoised per term index and kind: phrase joining over whole cases is done
    once, however many methods use them.
    """

    def __init__(self, kind: str = "word2vec"):
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"vector kind must be a non-empty string, not {kind!r}")
        self.kind = kind

    @property
    def short_name(self) -> str:  # the method name of the kind: w2vec*, fastt*, or the pretrained name
        return _KIND_NAMES.get(self.kind, self.kind)

    def needs(self) -> Requirements:
        return Requirements(vectors=(self.kind,))

    def provider(self, index: "TermIndex"):
        """The vector provider attached to ``index`` (:class:`statinterp.vectors.provider.VectorProvider`)."""
        provider = getattr(index, "vectors", None)
        if provider is None:
            raise UsageError(
                f"method {self.short_name} needs word vectors, but none are attached to term {index.key!r} "
                "(prepare the corpus with statinterp.prepare_corpus)"
            )
        return provider

    def vectors(self, index: "TermIndex") -> "DomainVectors":
        """The vectors themselves (loaded, or trained, on first use)."""
        return self.provider(index).get(self.kind)

    def _state(self, index: "TermIndex") -> "_CosineState":
        """What has been computed for ``index`` under the current vectors of this kind.

        The vectors are named by their ``source`` (their file) when the provider knows it without
        loading them, so that directions read from the cache never need the vectors themselves."""
        provider = self.provider(index)
        source = provider.source(self.kind) if hasattr(provider, "source") else None
        loaded = None
        if source is None:
            loaded = provider.get(self.kind)
            source = getattr(loaded, "source", None)
        ident = ("source", source) if source else ("object", id(loaded))
        memo = _memo(index)
        state = memo.get((self.kind, ident)) if memo is not None else None
        if state is None:
            cache = getattr(provider, "directions_cache", None) if source else None
            state = _CosineState(lambda: provider.get(self.kind), source, cache, loaded)
            if memo is not None:
                memo[(self.kind, ident)] = state
        return state

    def query_direction(self, query: "Query", index: "TermIndex") -> np.ndarray | None:
        """Unit direction of the query's mean unit vector after phrase joining (``None`` if no query
        token has a vector); memoised per index and kept in the directions cache."""
        state = self._state(index)
        tokens = tuple(query.tokens)
        if tokens in state.queries:
            return state.queries[tokens]
        key = query_key(state.source, tokens) if state.cache is not None else None
        found = state.cache.get_query(key) if key is not None else None
        if found is None:
            vectors = state.vectors()
            direction = _query_direction(vectors.transform(list(tokens)), vectors.kv)
            if key is not None:
                state.cache.put_query(key, direction)
        else:
            direction = found[0]
        state.queries[tokens] = direction
        return direction

    def unit_directions(self, units: "TokenSeqs", index: "TermIndex") -> np.ndarray:
        """:func:`mean_directions` of the units' tokens (phrases joined), memoised per index and kind.

        For the term's own unit sets (every level and neighbour offset) the directions of all
        of them are computed together on first use, or read from the vector provider's
        :class:`~statinterp.cache.directions.DirectionCache`, and stored there.
        """
        state = self._state(index)
        hit = state.units.get(id(units))
        if hit is not None and hit[0] is units:
            return hit[1]
        sets = _unit_sets(index)
        if any(seqs is units for seqs in sets.values()):
            for name, directions in term_directions(index, sets, state).items():
                state.units[id(sets[name])] = (sets[name], directions)  # holding the units keeps the id unique
            return state.units[id(units)][1]
        vectors = state.vectors()
        ids, offsets, words = join_phrases(vectors.phrasers, units.ids, units.offsets, index.vocab.words)
        directions = mean_directions_of_ids(ids, offsets, words, vectors.kv)
        state.units[id(units)] = (units, directions)
        return directions

    def evidence(self, query: "Query", units: "TokenSeqs", stats: "CollectionStats", index: "TermIndex") -> np.ndarray:
        out = np.zeros((len(units), 1))
        q = self.query_direction(query, index)
        if q is None or len(units) == 0:
            return out
        out[:, 0] = np.clip(self.unit_directions(units, index) @ q, -1.0, 1.0)
        return out

    def combine(self, evidence: np.ndarray, query: "Query", stats: "CollectionStats") -> np.ndarray:
        return evidence.sum(axis=1)

    def explain(self, index: "TermIndex", i: int) -> dict:
        vectors = self.vectors(index)
        tokens = vectors.transform(index.query.tokens)
        return {
            "method": self.name,
            "score": float(self.score(index)[i]),
            "query tokens (phrases joined)": tokens,
            "query tokens with a vector": [t for t in tokens if t in vectors.kv],
        }


def _unit_sets(index: "TermIndex") -> dict[str, "TokenSeqs"]:
    """Every set of units of a term index by a stable name: the levels, then the neighbours."""
    sets = {f"level:{name}": units.seqs for name, units in getattr(index, "levels", {}).items()}
    sets.update((f"neighbour:{d}", units.seqs) for d, units in sorted(getattr(index, "neighbours", {}).items()))
    return sets


class _CosineState:
    """The directions computed for one term index under one set of vectors of one kind."""

    def __init__(self, load: Callable[[], "DomainVectors"], source: str | None,
                 cache: "DirectionCache | None", loaded: "DomainVectors | None"):
        self._load = load
        self.source = source
        self.cache = cache
        self._loaded = loaded  # also keeps the id of in-memory vectors unique while the state lives
        self.units: dict[int, tuple["TokenSeqs", np.ndarray]] = {}
        self.queries: dict[tuple[str, ...], np.ndarray | None] = {}

    def vectors(self) -> "DomainVectors":
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded


def term_directions(index: "TermIndex", sets: dict[str, "TokenSeqs"], state: _CosineState) -> dict[str, np.ndarray]:
    """:func:`mean_directions_of_ids` of every set of ``sets`` (phrases joined), read from or
    written to the directions cache when there is one (the vectors are loaded only on a miss)."""
    words = index.vocab.words
    cache_key = directions_key(state.source, words, sets) if state.cache is not None else None
    if cache_key is not None:
        found = state.cache.get(cache_key, {name: len(seqs) for name, seqs in sets.items()})
        if found is not None:
            return found
    vectors = state.vectors()
    joined = {name: join_phrases(vectors.phrasers, seqs.ids, seqs.offsets, words) for name, seqs in sets.items()}
    all_words = next(iter(joined.values()))[2] if joined else words  # the same words for every set
    sums = unit_vector_sums([(ids, offsets) for ids, offsets, _ in joined.values()], all_words, vectors.kv)
    out = {name: _directions(values) for name, values in zip(joined, sums)}
    if cache_key is not None:
        state.cache.put(cache_key, out)
    return out


def _memo(index: object) -> dict | None:
    """The per-index memo of :class:`Cosine` (``None`` if the index takes no attributes)."""
    try:
        memo = index.__dict__.get("_cosine_memo")
        if memo is None:
            memo = index.__dict__["_cosine_memo"] = {}
        return memo
    except AttributeError:
        return None
