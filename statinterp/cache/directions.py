"""On-disk cache of the unit directions of the embedding methods (mean word-vector directions)
and of other values computed under word vectors (WMD novelty distances, similar words).

The cosine methods (``w2vec*``, ``fastt*``, pretrained vectors, with every context) need,
for each term, the direction of the mean unit word vector of every sentence, paragraph,
opinion, case and recursive neighbour, after the vectors' phrase model has joined their
tokens: millions of tokens per run.  :class:`DirectionCache` keeps them, one file per term and
vectors, and the directions of the queries (one small file each), so a warm run reads them
instead and need not even load the vectors.

The directions are computed by :mod:`statinterp.vectors.directions`; this module keeps the
files. A file is named by the SHA-256 of everything the directions depend on: the source of the
code that computes them (its fingerprint, :mod:`statinterp.cache.fingerprint`, of
``text/phrasing.py`` and ``vectors/directions.py``), the identity of the vectors
(``DomainVectors.source``: the corpus hash and training settings of domain vectors, or the
path, size and modification time of a vectors file), the vocabulary (id -> word) and the token
ids and offsets of every set of units.  Vectors without a ``source`` (built in memory) are never
cached.  Files use the checksummed array format of :mod:`statinterp.cache.arrayfile` (float64, so a
warm run gives bit-identical scores); a damaged file is discarded with a warning and
recomputed; the :attr:`DirectionCache.KEEP` most recently used files are kept.

Per-unit values (``v-KEY.bin``, one float64 value per unit: the Word Mover's Distance of every
sentence of a term to its provision) are keyed the same way (:func:`unit_values_key`), plus the
name of the measure, everything its result depends on beyond the units (the reference tokens,
its parameters, the versions of the libraries that compute it) and the fingerprint of the code
that computes it; a warm run reads them instead of loading the vectors and solving the
transport problems again.

Word lists computed from the vectors (``w-KEY.bin``: the words most similar to a term's query,
the query expansion ``-e``) are keyed by the code, the vectors and ``measure`` alone
(:func:`words_key`).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from statinterp.cache.arrayfile import evict_oldest, read_array_file, touch, write_array_file
from statinterp.errors import StatinterpError, StatinterpWarning

__all__ = ["DirectionCache", "directions_key", "query_key", "unit_values_key", "words_key"]

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
    """Unit directions (one file per term and vectors, ``d-KEY.bin``), query directions
    (``q-KEY.bin``), per-unit values (``v-KEY.bin``) and word lists (``w-KEY.bin``) under
    ``directory`` (``CACHE/directions``)."""

    MAGIC = b"statinterp-unit-directions\n"
    QUERY_MAGIC = b"statinterp-query-direction\n"
    VALUES_MAGIC = b"statinterp-unit-values\n"
    WORDS_MAGIC = b"statinterp-word-list\n"
    KEEP = 256
    KEEP_QUERIES = 4096
    KEEP_VALUES = 1024
    KEEP_WORDS = 4096

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"d-{key}.bin"

    def query_path(self, key: str) -> Path:
        return self.directory / f"q-{key}.bin"

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

        return self._read(self.path(key), self.MAGIC, key, decode)

    def put(self, key: str, directions: Mapping[str, np.ndarray]) -> None:
        """Store ``directions`` (best effort: a folder that cannot be written is skipped)."""
        arrays = {name: np.asarray(values, dtype=np.float64) for name, values in directions.items()}
        dims = {a.shape[1] for a in arrays.values()}
        if len(dims) != 1:
            return
        self._write(self.path(key), self.MAGIC, key, {"format": DIRECTIONS_FORMAT, "names": list(arrays),
                                                     "dim": dims.pop()}, arrays, "d-*.bin", self.KEEP)

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

        return self._read(self.query_path(key), self.QUERY_MAGIC, key, decode)

    def put_query(self, key: str, direction: np.ndarray | None) -> None:
        arrays = {} if direction is None else {"direction": np.asarray(direction, dtype=np.float64)}
        self._write(self.query_path(key), self.QUERY_MAGIC, key,
                    {"format": DIRECTIONS_FORMAT, "none": direction is None}, arrays, "q-*.bin", self.KEEP_QUERIES)

    def values_path(self, key: str) -> Path:
        return self.directory / f"v-{key}.bin"

    def get_values(self, key: str, n: int) -> np.ndarray | None:
        """The stored per-unit values (a float64 array of length ``n``), or ``None``."""

        def decode(meta, array):
            values = array("values")
            if values.shape != (n,) or values.dtype != np.float64:
                raise ValueError("inconsistent array")
            return values

        return self._read(self.values_path(key), self.VALUES_MAGIC, key, decode)

    def put_values(self, key: str, values: np.ndarray) -> None:
        """Store per-unit ``values`` (best effort, as :meth:`put`)."""
        self._write(self.values_path(key), self.VALUES_MAGIC, key, {"format": DIRECTIONS_FORMAT},
                    {"values": np.asarray(values, dtype=np.float64)}, "v-*.bin", self.KEEP_VALUES)

    def words_path(self, key: str) -> Path:
        return self.directory / f"w-{key}.bin"

    def get_words(self, key: str) -> list[str] | None:
        """The stored word list, or ``None``."""

        def decode(meta, array):
            words = meta["words"]
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise ValueError("inconsistent word list")
            return words

        return self._read(self.words_path(key), self.WORDS_MAGIC, key, decode)

    def put_words(self, key: str, words: Sequence[str]) -> None:
        """Store a word list (best effort, as :meth:`put`)."""
        self._write(self.words_path(key), self.WORDS_MAGIC, key, {"format": DIRECTIONS_FORMAT, "words": list(words)},
                    {}, "w-*.bin", self.KEEP_WORDS)

    def _read(self, path: Path, magic: bytes, key: str, decode: Callable[[dict, Callable], Any]) -> Any:
        """``decode(meta, array)`` of the file at ``path`` (used: its time is touched), ``None`` if
        there is none; a damaged or inconsistent file is discarded with a warning (``None``)."""
        try:
            meta, array = read_array_file(path, magic, key)
        except OSError:
            return None
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the file is not used
            return self._discard(path, exc)
        try:
            if meta.get("format") != DIRECTIONS_FORMAT:
                raise ValueError("another format")
            value = decode(meta, array)
        except Exception as exc:  # noqa: BLE001
            return self._discard(path, exc)
        touch(path)
        return value

    def _write(self, path: Path, magic: bytes, key: str, meta: dict, arrays: Mapping[str, np.ndarray],
               pattern: str, keep: int) -> None:
        try:
            write_array_file(path, magic, key, meta, arrays)
            evict_oldest(self.directory, pattern, keep)
        except (OSError, StatinterpError):
            pass

    def _discard(self, path: Path, exc: Exception) -> None:
        warnings.warn(f"discarding damaged unit-direction cache file {path} ({exc}); it will be recomputed",
                      StatinterpWarning, stacklevel=4)
        try:
            path.unlink()
        except OSError:
            pass
