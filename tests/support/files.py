"""Files a test writes or inspects: the process's umask, leftover temporary files, and an old set
of report files (``STEM.md``, ``.json``, ``.png``) written before a test to see whether a failed
write leaves it as it was."""

from __future__ import annotations

import os
from pathlib import Path


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    old = os.umask(0)
    os.umask(old)
    return old


def temp_files(folder: Path) -> list[Path]:
    """Every ``*.tmp`` file under ``folder`` (the atomic writer's temporaries), sorted."""
    return sorted(folder.rglob("*.tmp"))


def no_temporaries(folder: Path) -> bool:
    """Whether ``folder`` itself holds no ``*.tmp`` file."""
    return not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def old_report_set(folder: Path, stem: str) -> dict[Path, bytes]:
    """Write ``STEM.md``, ``STEM.json`` and ``STEM.png`` into ``folder``; their paths and bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    old = {folder / f"{stem}.{ext}": f"old {ext}\n".encode() for ext in ("md", "json", "png")}
    for path, data in old.items():
        path.write_bytes(data)
    return old
