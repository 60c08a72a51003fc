"""On-disk cache of the unit directions of the embedding methods (mean word-vector directions).

The cosine methods (``w2vec*``, ``fastt*``, pretrained vectors, with every context) need,
for each term, the direction of the mean unit word vector of every sentence, paragraph,
opinion, case and recursive neighbour, after the vectors' phrase model has joined their
tokens: millions of tokens per run.  :class:`DirectionCache` keeps them, one file per term and
vectors, so a warm run reads them instead.

A file is named by the SHA-256 of everything the directions depend on: the source of the code
that computes them (``phrasing.py``, ``scorers/embedding.py``), the identity of the vectors
(``DomainVectors.source``: the corpus hash and training settings of domain vectors, or the
path, size and modification time of a vectors file), the vocabulary (id -> word) and the token
ids and offsets of every set of units.  Vectors without a ``source`` (built in memory) are never
cached.  Files use the checksummed array format of :mod:`statinterp.arrayfile` (float64, so a
warm run gives bit-identical scores); a damaged file is discarded with a warning and
recomputed; the :attr:`DirectionCache.KEEP` most recently used files are kept.
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .arrayfile import evict_oldest, read_array_file, touch, write_array_file
from .errors import StatinterpError, StatinterpWarning
from .units import TokenSeqs

__all__ = ["DirectionCache", "directions_key"]

#: Bump when the file layout or the meaning of the stored directions changes.
DIRECTIONS_FORMAT = 1


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    from . import phrasing
    from .scorers import embedding

    digest = hashlib.sha256()
    for module_file in (phrasing.__file__, embedding.__file__):
        digest.update(Path(module_file).read_bytes())
    return digest.hexdigest()


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


def directions_key(vectors_source: str, words: Sequence[str], unit_sets: Mapping[str, TokenSeqs]) -> str:
    """The cache key of the directions of ``unit_sets`` (name -> units) under some vectors."""
    digest = hashlib.sha256(
        f"statinterp-directions {DIRECTIONS_FORMAT}|{_code_fingerprint()}|{vectors_source}|"
        f"{_words_digest(words)}".encode("utf-8", "surrogatepass")
    )
    for name, seqs in unit_sets.items():
        digest.update(f"|{name}|{len(seqs.ids)}|{len(seqs.offsets)}|".encode())
        digest.update(np.ascontiguousarray(seqs.ids, dtype=np.int32).tobytes())
        digest.update(np.ascontiguousarray(seqs.offsets, dtype=np.int64).tobytes())
    return digest.hexdigest()


class DirectionCache:
    """Unit directions by key under ``directory`` (``CACHE/directions``)."""

    MAGIC = b"statinterp-unit-directions\n"
    KEEP = 256

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.bin"

    def get(self, key: str, shapes: Mapping[str, tuple[int, int]]) -> dict[str, np.ndarray] | None:
        """The stored directions (name -> array of the given shape), or ``None`` on a miss."""
        path = self.path(key)
        try:
            meta, array = read_array_file(path, self.MAGIC, key)
        except OSError:
            return None
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the file is not used
            return self._discard(path, exc)
        try:
            if meta.get("format") != DIRECTIONS_FORMAT or sorted(meta["names"]) != sorted(shapes):
                raise ValueError("written for other units")
            out = {}
            for name, shape in shapes.items():
                values = array(name)
                if values.shape != tuple(shape) or values.dtype != np.float64:
                    raise ValueError(f"inconsistent array {name}")
                out[name] = values
        except Exception as exc:  # noqa: BLE001
            return self._discard(path, exc)
        touch(path)
        return out

    def put(self, key: str, directions: Mapping[str, np.ndarray]) -> None:
        """Store ``directions`` (best effort: a folder that cannot be written is skipped)."""
        arrays = {name: np.asarray(values, dtype=np.float64) for name, values in directions.items()}
        try:
            write_array_file(self.path(key), self.MAGIC, key, {"format": DIRECTIONS_FORMAT, "names": list(arrays)},
                             arrays)
            evict_oldest(self.directory, "*.bin", self.KEEP)
        except (OSError, StatinterpError):
            pass

    def _discard(self, path: Path, exc: Exception) -> None:
        warnings.warn(f"discarding damaged unit-direction cache file {path} ({exc}); it will be recomputed",
                      StatinterpWarning, stacklevel=3)
        try:
            path.unlink()
        except OSError:
            pass
        return None
