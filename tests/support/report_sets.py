"""An old set of report files (``STEM.md``, ``.json``, ``.png``) written before a test, to see
whether a failed write leaves it as it was and no temporary file behind."""

from __future__ import annotations

from pathlib import Path


def old_report_set(folder: Path, stem: str) -> dict[Path, bytes]:
    """Write ``STEM.md``, ``STEM.json`` and ``STEM.png`` into ``folder``; their paths and bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    old = {folder / f"{stem}.{ext}": f"old {ext}\n".encode() for ext in ("md", "json", "png")}
    for path, data in old.items():
        path.write_bytes(data)
    return old


def no_temporaries(folder: Path) -> bool:
    """Whether ``folder`` holds no ``*.tmp`` file (the atomic writer's temporaries)."""
    return not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
