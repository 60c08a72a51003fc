"""Answers of a slow lookup kept between processes: a JSON object in the cache folder.

:class:`StoredAnswers` is a key -> answer map (strings to JSON values) read from
``CACHE/<name>-<version>.json`` when first asked, and written back (atomically, whole) when the
process ends if it learnt something new. A missing, damaged or foreign file counts as empty; a
cache folder that cannot be written is not an error (the answers are found again next time).
Two processes learning at once: the last to end writes its answers and those it read.
"""

from __future__ import annotations

import atexit
import json
import re
import threading
from typing import Any

from statinterp.cache import atomic
from statinterp.cache.files import NotRegularFile, TooLarge, read_regular
from statinterp.cache.location import default_cache_dir
from statinterp.errors import OutputError

__all__ = ["StoredAnswers"]

#: A stored answers file larger than this is not read (it counts as empty).
MAX_BYTES = 64 << 20


class StoredAnswers:
    """The stored answers of one lookup (``name``) for one version of what answers it."""

    def __init__(self, name: str, version: str):
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"{name}-{version}")
        self.name = name
        self._file = f"{safe}.json"
        self._answers: dict[str, Any] | None = None
        self._new = False
        self._lock = threading.Lock()

    @property
    def path(self):
        return default_cache_dir() / self._file

    def _loaded(self) -> dict[str, Any]:
        if self._answers is None:
            try:
                data = json.loads(read_regular(self.path, MAX_BYTES))
            except (OSError, ValueError, NotRegularFile, TooLarge):
                data = {}
            self._answers = data if isinstance(data, dict) else {}
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
            try:
                atomic.write_text(self.path, json.dumps(self._answers, sort_keys=True, ensure_ascii=False),
                                  force=True)
            except OutputError:
                return
            self._new = False

    def forget(self) -> None:
        """Drop what this process holds (the next question reads the file again)."""
        with self._lock:
            self._answers = None
            self._new = False
