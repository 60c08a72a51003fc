"""The vector cache: trained word vectors (gensim ``KeyedVectors`` + phrase model) on disk.

Used for the domain vectors (``CACHE/vectors``) and for the sentence embeddings of the dense
features (``CACHE/dense``). An entry is keyed by the caller's hash of what the vectors were
made from, ``settings.key()``, the gensim and NumPy versions and :attr:`VectorCache.FORMAT`.
Each entry is one file ``<sha256 of the key>.vectors``: a magic line, a pickle of the vectors
and phrase model, and a trailer with the SHA-256 of the pickle. Writes are atomic
(:mod:`statinterp.cache.atomic`: readers never see a partial entry, concurrent writers leave one
complete entry, new files follow the umask like every other cache file). Only a regular file
is read (:mod:`statinterp.cache.files`), the checksum is verified in bounded chunks before
anything is unpickled, and an entry that is truncated, altered, foreign, not a regular file
or written by an older statinterp whose classes have moved is removed with one
:class:`CacheWarning` and :meth:`VectorCache.get` returns ``None`` (the caller retrains).

Entries are pickles: only use a cache folder you trust.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statinterp.cache import atomic
from statinterp.cache.files import open_regular
from statinterp.errors import OutputError, StatinterpWarning

__all__ = ["CacheWarning", "CachedVectors", "VectorCache"]


class CacheWarning(StatinterpWarning):
    """A vector cache entry was unreadable or damaged and has been discarded (shown as one line)."""


class _Settings(Protocol):
    def key(self) -> str: ...


@dataclass(frozen=True)
class CachedVectors:
    """What an entry holds: gensim ``KeyedVectors`` and the phrase model (``None`` or two
    ``FrozenPhrases``)."""

    kv: Any
    phrasers: tuple | None


class _HashingWriter:
    def __init__(self, handle, digest):
        self.handle = handle
        self.digest = digest

    def write(self, data) -> int:
        self.digest.update(data)
        return self.handle.write(data)


class _DamagedEntry(Exception):
    pass


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "no details"
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}"


class VectorCache:
    """Trained vectors stored in ``directory`` (see the module's description)."""

    MAGIC = b"STATINTERP-VECTOR-CACHE 1\n"
    _TRAILER_PREFIX = b"\nSHA256:"
    _TRAILER_LEN = len(_TRAILER_PREFIX) + 64
    FORMAT = 1

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)

    def _ident(self, corpus_hash: str, settings: _Settings) -> str:
        import gensim
        import numpy as np

        numpy_major = np.__version__.split(".")[0]
        return (
            f"format={self.FORMAT}|corpus={corpus_hash}|settings={settings.key()}"
            f"|gensim={gensim.__version__}|numpy={numpy_major}"
        )

    def path_for(self, corpus_hash: str, settings: _Settings) -> Path:
        """The file that holds (or would hold) the entry."""
        ident = self._ident(corpus_hash, settings)
        return self.directory / (hashlib.sha256(ident.encode("utf-8")).hexdigest()[:40] + ".vectors")

    def get(self, corpus_hash: str, settings: _Settings) -> CachedVectors | None:
        """The cached vectors, or ``None`` if there is no (intact) entry."""
        from gensim.models.keyedvectors import KeyedVectors
        from gensim.models.phrases import FrozenPhrases

        path = self.path_for(corpus_hash, settings)
        ident = self._ident(corpus_hash, settings)
        try:
            handle = open_regular(path)
        except FileNotFoundError:
            return None
        except ValueError as exc:  # a FIFO, a device, a folder: never read, discarded
            self._discard(path, str(exc))
            return None
        except OSError as exc:
            warnings.warn(f"cannot read vector cache entry {path}: {_one_line(exc)}", CacheWarning, stacklevel=2)
            return None
        try:
            with handle:
                end = self._verify(handle)
                handle.seek(len(self.MAGIC))
                entry = pickle.load(handle)
                if handle.tell() != end:
                    raise _DamagedEntry("the pickle does not fill the entry")
            if not isinstance(entry, dict) or entry.get("ident") != ident:
                raise _DamagedEntry("the entry belongs to another key")
            kv, phrasers = entry["kv"], entry["phrasers"]
            if not isinstance(kv, KeyedVectors):
                raise _DamagedEntry("the entry holds no KeyedVectors")
            if phrasers is not None:
                phrasers = tuple(phrasers)
                if len(phrasers) != 2 or not all(isinstance(p, FrozenPhrases) for p in phrasers):
                    raise _DamagedEntry("the entry holds a bad phrase model")
        except (ModuleNotFoundError, AttributeError) as exc:  # a class that has moved or gone
            self._discard(path, f"written by another version of statinterp or gensim: {_one_line(exc)}")
            return None
        except OSError as exc:  # an I/O problem, not necessarily a bad entry: keep the file
            warnings.warn(f"cannot read vector cache entry {path}: {_one_line(exc)}", CacheWarning, stacklevel=2)
            return None
        except Exception as exc:  # noqa: BLE001 - any read/unpickling failure means a bad entry
            self._discard(path, str(exc) if isinstance(exc, _DamagedEntry) else _one_line(exc))
            return None
        return CachedVectors(kv, phrasers)

    def put(self, corpus_hash: str, settings: _Settings, vectors: Any) -> Path:
        """Store ``vectors`` (anything with ``kv`` and ``phrasers``) atomically; returns the
        entry's path. Raises ``OSError`` if the folder cannot be written."""
        path = self.path_for(corpus_hash, settings)
        entry = {
            "ident": self._ident(corpus_hash, settings),
            "kv": vectors.kv,
            "phrasers": None if vectors.phrasers is None else tuple(vectors.phrasers),
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with atomic.replace(path, force=True) as tmp, open(tmp, "wb") as handle:
                handle.write(self.MAGIC)
                digest = hashlib.sha256()
                pickle.dump(entry, _HashingWriter(handle, digest), protocol=pickle.HIGHEST_PROTOCOL)
                handle.write(self._TRAILER_PREFIX + digest.hexdigest().encode("ascii"))
        except OutputError as exc:
            cause = exc.__cause__
            raise cause if isinstance(cause, OSError) else OSError(str(exc)) from exc
        return path

    def _verify(self, handle) -> int:
        """Check magic line and checksum; return the offset where the pickle must end."""
        size = os.fstat(handle.fileno()).st_size
        if handle.read(len(self.MAGIC)) != self.MAGIC:
            raise _DamagedEntry("not a statinterp vector cache file")
        end = size - self._TRAILER_LEN
        if end <= len(self.MAGIC):
            raise _DamagedEntry("the entry is truncated")
        handle.seek(end)
        trailer = handle.read(self._TRAILER_LEN)
        if not trailer.startswith(self._TRAILER_PREFIX) or len(trailer) != self._TRAILER_LEN:
            raise _DamagedEntry("the entry is truncated (no checksum trailer)")
        expected = trailer[len(self._TRAILER_PREFIX) :].decode("ascii", errors="replace")
        digest = hashlib.sha256()
        handle.seek(len(self.MAGIC))
        remaining = end - len(self.MAGIC)
        while remaining:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                raise _DamagedEntry("the entry is truncated")
            digest.update(chunk)
            remaining -= len(chunk)
        if digest.hexdigest() != expected:
            raise _DamagedEntry("checksum mismatch")
        return end

    def _discard(self, path: Path, reason: str) -> None:
        warnings.warn(
            f"discarding corrupt vector cache entry {path} ({reason}); the vectors will be retrained",
            CacheWarning,
            stacklevel=3,
        )
        try:
            path.unlink()
        except OSError:
            pass
