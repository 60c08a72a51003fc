"""The prepared-corpus cache: what :func:`statinterp.index.term_index.prepare` builds, on disk.

One file per prepared corpus (``CACHE/prepared/SETTINGS_KEY/KEY.bin``) in the checksummed
array format of :mod:`statinterp.cache.arrayfile`, named by the SHA-256 of everything its
contents depend on. The index module computes the key and turns a prepared corpus into named
arrays and back; this module keeps the files: reading (a damaged file is discarded with one
warning and rebuilt by the caller), atomic writing, and eviction of all but the :attr:`KEEP`
most recently used files.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from statinterp.cache.arrayfile import evict_oldest, read_array_file, touch, write_array_file
from statinterp.errors import StatinterpError, StatinterpWarning

__all__ = ["PreparedCache", "Stale"]

T = TypeVar("T")


class Stale(Exception):
    """Raised by a ``decode`` function: the file is intact but something it was derived from has
    changed (it is not used, and not reported as damaged)."""


class PreparedCache:
    """The file of one prepared corpus, ``directory / KEY.bin``."""

    MAGIC = b"statinterp-prepared-corpus\n"
    KEEP = 4

    def __init__(self, directory: Path, key: str):
        self.directory = Path(directory)
        self.key = key
        self.path = self.directory / f"{key}.bin"

    def load(self, decode: Callable[[dict[str, Any], Callable[[str], np.ndarray]], T]) -> T | None:
        """``decode(meta, array)`` of the file (then marked recently used), ``None`` if there is
        none or ``decode`` raises :class:`Stale`; a damaged file, or one ``decode`` refuses with
        any other exception, is discarded with a warning (``None``)."""
        try:
            meta, array = read_array_file(self.path, self.MAGIC, self.key)
        except FileNotFoundError:
            return None
        except OSError:
            return None
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the file is not used
            self._discard(exc)
            return None
        try:
            value = decode(meta, array)
        except Stale:
            return None
        except Exception as exc:  # noqa: BLE001
            self._discard(exc)
            return None
        touch(self.path)
        return value

    def save(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Write the file (best effort: it is only an accelerator, and the analysis cache has
        already said what is wrong with a folder that cannot be written)."""
        try:
            write_array_file(self.path, self.MAGIC, self.key, meta, arrays)
            evict_oldest(self.directory, "*.bin", self.KEEP)
        except (OSError, StatinterpError):
            pass

    def _discard(self, exc: Exception) -> None:
        warnings.warn(f"discarding damaged prepared-corpus cache file {self.path} ({exc}); it will be rebuilt",
                      StatinterpWarning, stacklevel=5)
        try:
            self.path.unlink()
        except OSError:
            pass
