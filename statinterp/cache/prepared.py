"""The ``prepared`` namespace of the cache store: what :func:`statinterp.index.term_index.prepare`
builds, one array entry per prepared corpus.

The index module computes the key parts and turns a prepared corpus into named arrays and
back; :class:`~statinterp.cache.store.CacheStore` keeps the files (checksums, the damaged-entry
rule, atomic writes, keeping the most recently used entries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from statinterp.cache.store import CacheStore, Stale

__all__ = ["PreparedCache", "Stale"]

T = TypeVar("T")

NAMESPACE = "prepared"


class PreparedCache:
    """The entry of one prepared corpus, keyed by ``parts`` (what its contents depend on)."""

    def __init__(self, root: str | Path | None, *parts: str):
        self.store = CacheStore(root)
        self.key = self.store.key(NAMESPACE, *parts)
        self.path = self.store.path(NAMESPACE, self.key)

    def load(self, decode: Callable[[dict[str, Any], Callable[[str], np.ndarray]], T]) -> T | None:
        """``decode(meta, array)`` of the entry, ``None`` if there is none, if ``decode`` raises
        :class:`Stale`, or if it is damaged (discarded with a warning)."""
        return self.store.read_arrays(NAMESPACE, self.key, decode)

    def save(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Write the entry (best effort)."""
        self.store.write_arrays(NAMESPACE, self.key, meta, arrays)
