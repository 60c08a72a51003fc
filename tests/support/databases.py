"""SQLite files a test inspects."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def schema_of(path: Path) -> dict:
    """Every table's and index's columns (name, type, not null, default, key), as SQLite reports them."""
    db = sqlite3.connect(path)
    out = {}
    for kind, name in db.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall():
        if kind == "table":
            out[name] = ("table", db.execute(f"PRAGMA table_xinfo({name})").fetchall())
        elif kind == "index":
            out[name] = ("index", db.execute(f"PRAGMA index_xinfo({name})").fetchall())
    db.close()
    return out
