"""The ``answers`` namespace of the cache store: a slow lookup's answers kept between processes.

:class:`StoredAnswers` is a key -> answer map (strings to JSON values) read from its entry (an
array entry without arrays, keyed by the lookup's name and version) when first asked, and
written back (atomically, whole) when the process ends if it learnt something new. A missing
entry counts as empty; a damaged one too, after the store's one warning
(:mod:`statinterp.cache.store`); a cache folder that cannot be written is not an error (the
answers are found again next time). Two processes learning at once: the last to end writes its
answers and those it read.
"""

from __future__ import annotations

import atexit
import threading
import warnings
from pathlib import Path
from typing import Any

from statinterp.cache.store import CacheStore, CacheWarning

__all__ = ["StoredAnswers"]

NAMESPACE = "answers"


class StoredAnswers:
    """The stored answers of one lookup (``name``) for one version of what answers it."""

    def __init__(self, name: str, version: str):
        self.name = name
        self.version = version
        self.key = CacheStore.key(NAMESPACE, name, version)
        self._answers: dict[str, Any] | None = None
        self._new = False
        self._lock = threading.Lock()

    @staticmethod
    def _store() -> CacheStore:
        return CacheStore()  # the cache folder as it is now (it follows $STATINTERP_CACHE)

    @property
    def path(self) -> Path:
        return self._store().path(NAMESPACE, self.key)

    def _loaded(self) -> dict[str, Any]:
        if self._answers is None:
            def decode(meta, array):
                if meta.get("lookup") != [self.name, self.version] or not isinstance(meta.get("answers"), dict):
                    raise ValueError("not the answers of this lookup")
                return meta["answers"]

            self._answers = self._store().read_arrays(NAMESPACE, self.key, decode) or {}
        return self._answers

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._loaded().get(key, default)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._loaded()

    def put(self, key: str, answer: Any) -> None:
        """Keep ``answer`` for ``key`` (written when the process ends, or by :meth:`save`)."""
        with self._lock:
            self._loaded()[key] = answer
            if not self._new:
                self._new = True
                atexit.register(self.save)

    def save(self) -> None:
        """Write the answers if some are new (nothing happens when the folder cannot be written)."""
        with self._lock:
            if not self._new or self._answers is None:
                return
            with warnings.catch_warnings():  # often at exit, after the command line has said all
                warnings.simplefilter("ignore", CacheWarning)
                meta = {"lookup": [self.name, self.version], "answers": self._answers}
                written = self._store().write_arrays(NAMESPACE, self.key, meta, {})
            if written:
                self._new = False

    def forget(self) -> None:
        """Drop what this process holds (the next question reads the file again)."""
        with self._lock:
            self._answers = None
            self._new = False
