"""On-disk cache of the unit directions of the embedding methods (mean word-vector directions)
and of other values computed under word vectors (WMD novelty distances, similar words).

The cosine methods (``w2vec*``, ``fastt*``, pretrained vectors, with every context) need,
for each term, the direction of the mean unit word vector of every sentence, paragraph,
opinion, case and recursive neighbour, after the vectors' phrase model has joined their
tokens: millions of tokens per run.  :class:`DirectionCache` keeps them, one entry per term and
vectors, and the directions of the queries (one small file each), so a warm run reads them
instead and need not even load the vectors.

The directions are computed by :mod:`statinterp.vectors.directions`; this module keeps the
files. A file is named by the SHA-256 of everything the directions depend on: the source of the
code that computes them (its fingerprint, :mod:`statinterp.cache.fingerprint`, of
``text/phrasing.py`` and ``vectors/directions.py``), the identity of the vectors
(``DomainVectors.source``: the corpus hash and training settings of domain vectors, or the
path, size and modification time of a vectors file), the vocabulary (id -> word) and the token
ids and offsets of every set of units.  Vectors without a ``source`` (built in memory) are never
cached.  Entries are array entries of the cache store's ``directions`` namespace
(:mod:`statinterp.cache.store`: float64, so a warm run gives bit-identical scores; a damaged
entry is discarded with a warning and recomputed; the most recently used entries are kept).

Per-unit values (``*.v.bin``, one float64 value per unit: the Word Mover's Distance of every
sentence of a term to its provision) are keyed the same way (:func:`unit_values_key`), plus the
name of the measure, everything its result depends on beyond the units (the reference tokens,
its parameters, the versions of the libraries that compute it) and the fingerprint of the code
that computes it; a warm run reads them instead of loading the vectors and solving the
transport problems again.

Word lists computed from the vectors (``*.w.bin``: the words most similar to a term's query,
the query expansion ``-e``) are keyed by the code, the vectors and ``measure`` alone
(:func:`words_key`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from statinterp.cache.store import CacheStore

__all__ = ["DirectionCache", "directions_key", "query_key", "unit_values_key", "words_key"]

NAMESPACE = "directions"

#: Bump when the file layout or the meaning of the stored directions changes.
DIRECTIONS_FORMAT = 1


_WORDS_DIGESTS: dict[tuple[int, int], tuple[object, str]] = {}


def _words_digest(words: Sequence[str]) -> str:
    """SHA-256 of a vocabulary (memoised while the same list keeps its length: it only grows)."""
    key = (id(words), len(words))
    hit = _WORDS_DIGESTS.get(key)
    if hit is not None and hit[0] is words:
        return hit[1]
    digest = hashlib.sha256("\n".join(words).encode("utf-8", "surrogatepass")).hexdigest()
    _WORDS_DIGESTS.clear()
    _WORDS_DIGESTS[key] = (words, digest)
    return digest


def directions_key(code: str, vectors_source: str, words: Sequence[str], unit_sets: Mapping[str, Any]) -> str:
    """The cache key of the directions of ``unit_sets`` (name -> ragged units with ``ids`` and
    ``offsets``, a :class:`~statinterp.text.units.TokenSeqs`) under some vectors, as computed by
    the code whose fingerprint is ``code``."""
    return _units_digest(f"statinterp-directions {DIRECTIONS_FORMAT}|{code}|{vectors_source}|", words, unit_sets)


def unit_values_key(code: str, vectors_source: str, words: Sequence[str], unit_sets: Mapping[str, Any],
                    measure: str) -> str:
    """The cache key of per-unit values of ``unit_sets`` (as in :func:`directions_key`) under some
    vectors: ``measure`` names the measure and everything else its values depend on (reference
    tokens, parameters, library versions); ``code`` is the fingerprint of the code computing it."""
    return _units_digest(f"statinterp-unit-values {DIRECTIONS_FORMAT}|{code}|{vectors_source}|{measure}|",
                         words, unit_sets)


def words_key(code: str, vectors_source: str, measure: str) -> str:
    """The cache key of a word list computed from some vectors: ``measure`` names what it is and
    everything it depends on besides the vectors; ``code`` as in :func:`unit_values_key`."""
    return hashlib.sha256(f"statinterp-words {DIRECTIONS_FORMAT}|{code}|{vectors_source}|{measure}".encode(
        "utf-8", "surrogatepass")).hexdigest()


def _units_digest(head: str, words: Sequence[str], unit_sets: Mapping[str, Any]) -> str:
    """SHA-256 of ``head``, the vocabulary and the token ids and offsets of every set of units."""
    digest = hashlib.sha256(f"{head}{_words_digest(words)}".encode("utf-8", "surrogatepass"))
    for name, seqs in unit_sets.items():
        digest.update(f"|{name}|{len(seqs.ids)}|{len(seqs.offsets)}|".encode())
        digest.update(np.ascontiguousarray(seqs.ids, dtype=np.int32).tobytes())
        digest.update(np.ascontiguousarray(seqs.offsets, dtype=np.int64).tobytes())
    return digest.hexdigest()


def query_key(code: str, vectors_source: str, tokens: Sequence[str]) -> str:
    """The cache key of the direction of a query (its tokens before phrase joining)."""
    digest = hashlib.sha256(
        f"statinterp-query-direction {DIRECTIONS_FORMAT}|{code}|{vectors_source}|".encode(
            "utf-8", "surrogatepass")
    )
    digest.update("\n".join(tokens).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class DirectionCache:
    """The ``directions`` namespace of the cache store under ``root``: unit directions (one entry
    per term and vectors, ``*.d.bin``), query directions (``*.q.bin``), per-unit values
    (``*.v.bin``) and word lists (``*.w.bin``); each kind keeps its most recently used entries
    (:data:`~statinterp.cache.store.KEEP`)."""

    def __init__(self, root: str | Path | None):
        self.store = CacheStore(root)
        self.directory = self.store.folder(NAMESPACE)

    def _entry(self, kind: str, key: str) -> tuple[str, str]:
        return self.store.key(NAMESPACE, kind, key), f".{kind}.bin"

    def _path(self, kind: str, key: str) -> Path:
        return self.store.path(NAMESPACE, *self._entry(kind, key))

    def path(self, key: str) -> Path:
        return self._path("d", key)

    def query_path(self, key: str) -> Path:
        return self._path("q", key)

    def values_path(self, key: str) -> Path:
        return self._path("v", key)

    def words_path(self, key: str) -> Path:
        return self._path("w", key)

    def get(self, key: str, rows: Mapping[str, int]) -> dict[str, np.ndarray] | None:
        """The stored directions (name -> float64 array with ``rows[name]`` rows), or ``None``."""

        def decode(meta, array):
            if sorted(meta["names"]) != sorted(rows):
                raise ValueError("written for other units")
            out = {}
            for name, n in rows.items():
                values = array(name)
                if values.ndim != 2 or values.shape[0] != n or values.shape[1] != meta["dim"] \
                        or values.dtype != np.float64:
                    raise ValueError(f"inconsistent array {name}")
                out[name] = values
            return out

        return self._read("d", key, decode)

    def put(self, key: str, directions: Mapping[str, np.ndarray]) -> None:
        """Store ``directions`` (best effort)."""
        arrays = {name: np.asarray(values, dtype=np.float64) for name, values in directions.items()}
        dims = {a.shape[1] for a in arrays.values()}
        if len(dims) != 1:
            return
        self._write("d", key, {"names": list(arrays), "dim": dims.pop()}, arrays)

    def get_query(self, key: str) -> tuple[np.ndarray | None] | None:
        """``(direction,)`` of a stored query (``(None,)`` for a query without any vector), or
        ``None`` on a miss."""

        def decode(meta, array):
            if meta["none"]:
                return (None,)
            direction = array("direction")
            if direction.ndim != 1 or direction.dtype != np.float64:
                raise ValueError("inconsistent array")
            return (direction,)

        return self._read("q", key, decode)

    def put_query(self, key: str, direction: np.ndarray | None) -> None:
        arrays = {} if direction is None else {"direction": np.asarray(direction, dtype=np.float64)}
        self._write("q", key, {"none": direction is None}, arrays)

    def get_values(self, key: str, n: int) -> np.ndarray | None:
        """The stored per-unit values (a float64 array of length ``n``), or ``None``."""

        def decode(meta, array):
            values = array("values")
            if values.shape != (n,) or values.dtype != np.float64:
                raise ValueError("inconsistent array")
            return values

        return self._read("v", key, decode)

    def put_values(self, key: str, values: np.ndarray) -> None:
        """Store per-unit ``values`` (best effort, as :meth:`put`)."""
        self._write("v", key, {}, {"values": np.asarray(values, dtype=np.float64)})

    def get_words(self, key: str) -> list[str] | None:
        """The stored word list, or ``None``."""

        def decode(meta, array):
            words = meta["words"]
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise ValueError("inconsistent word list")
            return words

        return self._read("w", key, decode)

    def put_words(self, key: str, words: Sequence[str]) -> None:
        """Store a word list (best effort, as :meth:`put`)."""
        self._write("w", key, {"words": list(words)}, {})

    def _read(self, kind: str, key: str, decode: Callable[[dict, Callable], Any]) -> Any:
        def checked(meta, array):
            if meta.get("format") != DIRECTIONS_FORMAT:
                raise ValueError("another format")
            return decode(meta, array)

        entry, suffix = self._entry(kind, key)
        return self.store.read_arrays(NAMESPACE, entry, checked, suffix)

    def _write(self, kind: str, key: str, meta: dict, arrays: Mapping[str, np.ndarray]) -> None:
        entry, suffix = self._entry(kind, key)
        self.store.write_arrays(NAMESPACE, entry, {"format": DIRECTIONS_FORMAT, **meta}, arrays, suffix)
