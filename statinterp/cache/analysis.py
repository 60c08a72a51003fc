"""The ``analysis`` namespace of the cache store: the token arrays of every analysed text.

What an entry *means* (token offsets, local ids, words) is :mod:`statinterp.text.analysis`'s
business: it gives :meth:`AnalysisCache.put` named arrays and reads them back through a
``decode`` function that raises ``ValueError`` on anything inconsistent. The files, checksums,
atomic writes and the damaged-entry rule are :class:`~statinterp.cache.store.CacheStore`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import numpy as np

from statinterp.cache.store import CacheStore

__all__ = ["AnalysisCache"]

T = TypeVar("T")

#: An entry is never larger than this, whatever the text (texts are at most 10 million characters).
MAX_ENTRY_BYTES = 1 << 30

NAMESPACE = "analysis"


def _arrays(z: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return dict(z)


class AnalysisCache:
    """One array entry per analysed text, keyed by the analysis settings key and the SHA-256 of
    the text. A damaged, truncated, oversized, foreign or non-regular entry (a FIFO, a symlink
    to a device) is never used, but discarded with a warning and rebuilt; a folder that cannot
    be written warns once and the run continues without storing entries."""

    def __init__(self, directory: str | Path | None, settings_key: str):
        self.store = CacheStore(directory)
        self.settings_key = settings_key
        self.directory = self.store.folder(NAMESPACE)

    def key(self, digest: str) -> str:
        return self.store.key(NAMESPACE, self.settings_key, digest)

    def path(self, digest: str) -> Path:
        return self.store.path(NAMESPACE, self.key(digest))

    def get(self, digest: str, decode: Callable[[Mapping[str, np.ndarray]], T] = _arrays,  # type: ignore[assignment]
            max_bytes: int = MAX_ENTRY_BYTES) -> T | None:
        """``decode(arrays)`` of the entry of the text with SHA-256 ``digest``, ``None`` on a miss
        or a damaged entry. ``max_bytes`` is the most an entry of this text can hold (the caller
        knows the text); a larger file is damaged."""
        return self.store.read_arrays(NAMESPACE, self.key(digest),
                                      lambda meta, array: decode({name: array(name) for name in meta["arrays"]}),
                                      max_bytes=min(max_bytes, MAX_ENTRY_BYTES))

    def put(self, digest: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Store the named ``arrays`` of a text (best effort)."""
        self.store.write_arrays(NAMESPACE, self.key(digest), {}, arrays)
