"""The analysis cache: the token arrays of every analysed text, one checksummed file each.

What an entry *means* (token offsets, local ids, words) is :mod:`statinterp.text.analysis`'s
business: it gives :meth:`AnalysisCache.put` named arrays and reads them back through a
``decode`` function that raises ``ValueError`` on anything inconsistent. This module keeps
the files: where they are, their checksum, atomic writes, the size limit, and what happens to
a damaged entry (discarded with one warning, rebuilt by the caller).
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from statinterp.cache import atomic
from statinterp.cache.files import read_regular
from statinterp.errors import StatinterpError, StatinterpWarning

__all__ = ["AnalysisCache"]

T = TypeVar("T")

#: An entry is never larger than this, whatever the text (texts are at most 10 million characters).
MAX_ENTRY_BYTES = 1 << 30


def _arrays(z: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: z[name] for name in z}


class AnalysisCache:
    """One ``.npz`` file per analysed text, under a folder named by the settings key.

    Files are written to a temporary file and atomically renamed, so a reader sees a whole
    entry or none, and concurrent runs sharing the folder cannot corrupt it (the last writer of
    an entry wins; every writer writes the same bytes). Each file starts with a magic string and
    the SHA-256 of the text's digest plus the payload, checked before anything is parsed: a
    damaged, truncated, oversized, foreign or non-regular entry (a FIFO, a symlink to a device)
    is never used, but discarded with a :class:`~statinterp.errors.StatinterpWarning` and
    rebuilt. If the folder cannot be written, one warning is given and the run continues without
    storing entries.
    """

    MAGIC = b"statinterp-analysis-cache\n"

    def __init__(self, directory: Path, settings_key: str):
        self.directory = Path(directory) / "analysis" / settings_key
        self.writable = True
        self.readable = True

    def path(self, digest: str) -> Path:
        return self.directory / digest[:2] / f"{digest}.npz"

    def get(self, digest: str, decode: Callable[[Mapping[str, np.ndarray]], T] = _arrays,  # type: ignore[assignment]
            max_bytes: int = MAX_ENTRY_BYTES) -> T | None:
        """``decode(arrays)`` of the entry of the text with SHA-256 ``digest``, ``None`` on a miss.

        ``max_bytes`` is the most an entry of this text can hold (the caller knows the text);
        a larger file is damaged. A damaged entry, or one ``decode`` refuses (``ValueError`` or
        any other exception), is discarded with a warning (``None``).
        """
        path = self.path(digest)
        inode = None
        try:
            inode = os.lstat(path).st_ino
            raw = read_regular(path, min(max_bytes, MAX_ENTRY_BYTES))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if self.readable:  # one warning per run, not one per text
                self.readable = False
                warnings.warn(f"cannot read the analysis cache ({path}: {exc.strerror or exc}); analysing again",
                              StatinterpWarning, stacklevel=2)
            return None
        except ValueError as exc:
            self._discard(path, inode, exc)
            return None
        try:
            return self._decode(digest, raw, decode)
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the entry is not used
            self._discard(path, inode, exc)
            return None

    def _discard(self, path: Path, inode: int | None, exc: Exception) -> None:
        warnings.warn(f"discarding damaged analysis cache entry {path} ({exc}); it will be rebuilt",
                      StatinterpWarning, stacklevel=3)
        try:
            if os.lstat(path).st_ino == inode:  # not a good entry another run has just written
                path.unlink()
        except OSError:
            pass

    def _decode(self, digest: str, raw: bytes, decode: Callable[[Mapping[str, np.ndarray]], Any]) -> Any:
        head = len(self.MAGIC)
        if len(raw) < head + 32 or not raw.startswith(self.MAGIC):
            raise ValueError("not a statinterp cache entry, or truncated" if raw else "empty file")
        payload = raw[head + 32:]
        if hashlib.sha256(digest.encode("ascii") + payload).digest() != raw[head:head + 32]:
            raise ValueError("checksum mismatch")
        with np.load(io.BytesIO(payload), allow_pickle=False) as z:
            return decode(z)

    def put(self, digest: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Store the named ``arrays`` of a text (best effort: an unwritable folder warns once)."""
        if not self.writable:
            return
        buf = io.BytesIO()
        np.savez(buf, **dict(arrays))  # type: ignore[arg-type]
        payload = buf.getvalue()
        check = hashlib.sha256(digest.encode("ascii") + payload).digest()
        try:
            atomic.write_bytes(self.path(digest), self.MAGIC + check + payload, force=True)
        except StatinterpError as exc:
            self.writable = False
            warnings.warn(f"cannot write the analysis cache ({exc}); continuing without storing analyses",
                          StatinterpWarning, stacklevel=2)
