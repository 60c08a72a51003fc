"""Atomic file output: write to a temporary file beside the target, then rename.

An interrupted run leaves either the old file or the new one, never a truncated one.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UsageError


def check_writable(path: str | Path, force: bool = False) -> Path:
    """Refuse to overwrite an existing user file unless ``force``."""
    path = Path(path)
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    if path.exists() and path.is_dir():
        raise UsageError(f"{path} is a directory, expected a file path")
    return path


@contextmanager
def replace(path: str | Path, force: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; on success rename it onto ``path``."""
    path = check_writable(path, force)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def write_text(path: str | Path, text: str, force: bool = False) -> Path:
    with replace(path, force) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes(path: str | Path, data: bytes, force: bool = False) -> Path:
    with replace(path, force) as tmp:
        tmp.write_bytes(data)
    return Path(path)
