"""One fingerprint of source code, for cache keys: editing the code that computes a cached
value invalidates what was cached (the old files are simply never found again)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
from pathlib import Path

__all__ = ["code_fingerprint"]


def _source_file(module: str) -> Path:
    loaded = sys.modules.get(module)
    origin = getattr(loaded, "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec(module)  # found, not imported: no import order to mind
        origin = spec.origin if spec is not None else None
    if origin is None:
        raise ValueError(f"no source file for module {module!r}")
    return Path(origin)


@functools.cache
def code_fingerprint(*modules: str) -> str:
    """SHA-256 over the source files of the named modules (dotted names), in the given order."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(_source_file(module).read_bytes())
    return digest.hexdigest()
