"""Where statinterp's cache folder is."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_cache_dir"]


def default_cache_dir() -> Path:
    """``$STATINTERP_CACHE``, else ``$XDG_CACHE_HOME/statinterp``, else ``~/.cache/statinterp``."""
    env = os.environ.get("STATINTERP_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "statinterp"
