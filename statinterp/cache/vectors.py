"""The ``vectors`` and ``dense`` namespaces of the cache store: trained word vectors (gensim
``KeyedVectors`` + phrase model) and the sentence embeddings of the dense features.

An entry is keyed (:meth:`~statinterp.cache.store.CacheStore.key`) by the caller's hash of what
the vectors were made from, ``settings.key()``, the gensim and NumPy versions and
:attr:`VectorCache.FORMAT`, and stored as ``NAMESPACE/KK/KEY.vectors``: a magic line, a pickle
of the vectors and phrase model (with the key, checked on reading), and a trailer with the
SHA-256 of the pickle. Writes are atomic (:mod:`statinterp.cache.files`). Only a regular file
is read (:mod:`statinterp.cache.files`), the checksum is verified in bounded chunks before
anything is unpickled, and an entry that is truncated, altered, foreign, not a regular file
or written by an older statinterp whose classes have moved is discarded by the store's rule
(one :class:`~statinterp.cache.store.CacheWarning`) and :meth:`VectorCache.get` returns
``None`` (the caller retrains).

Entries are pickles: only use a cache folder you trust.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statinterp.cache import files as atomic
from statinterp.cache.files import open_regular
from statinterp.cache.store import CacheStore, CacheWarning, one_line
from statinterp.errors import OutputError

__all__ = ["CacheWarning", "CachedVectors", "VectorCache"]


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


class VectorCache:
    """Trained vectors stored in ``directory`` (see the module's description)."""

    MAGIC = b"STATINTERP-VECTOR-CACHE 1\n"
    _TRAILER_PREFIX = b"\nSHA256:"
    _TRAILER_LEN = len(_TRAILER_PREFIX) + 64
    FORMAT = 1

    def __init__(self, root: str | os.PathLike[str] | None, namespace: str = "vectors"):
        self.store = CacheStore(root)
        self.namespace = namespace
        self.directory = self.store.folder(namespace)

    def _ident(self, corpus_hash: str, settings: _Settings) -> str:
        import gensim
        import numpy as np

        return self.store.key(self.namespace, {
            "format": self.FORMAT, "corpus": corpus_hash, "settings": settings.key(),
            "gensim": gensim.__version__, "numpy": np.__version__.split(".")[0]})

    def path_for(self, corpus_hash: str, settings: _Settings) -> Path:
        """The file that holds (or would hold) the entry."""
        return self.store.path(self.namespace, self._ident(corpus_hash, settings), ".vectors")

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
            self.store.unreadable(path, exc, stacklevel=3)
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
            self._discard(path, f"written by another version of statinterp or gensim: {one_line(exc)}")
            return None
        except OSError as exc:  # an I/O problem, not necessarily a bad entry: keep the file
            self.store.unreadable(path, exc, stacklevel=3)
            return None
        except Exception as exc:  # noqa: BLE001 - any read/unpickling failure means a bad entry
            self._discard(path, str(exc) if isinstance(exc, _DamagedEntry) else one_line(exc))
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
            path.parent.mkdir(parents=True, exist_ok=True)
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
        self.store.discard(self.namespace, path, reason, stacklevel=4)
