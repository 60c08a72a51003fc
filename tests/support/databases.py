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


def fts_tokens(folder: Path, index: str = "paragraphs_fts") -> set[str]:
    """Every token of the text index (or of ``index``: ``paragraph_pairs``, the pair index) of the
    collection in ``folder``, as FTS5 holds them (``fts5vocab``)."""
    db = sqlite3.connect(folder / "collection.sqlite")
    db.execute(f"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {index}, row)")
    tokens = {t for (t,) in db.execute("SELECT term FROM temp.v")}
    db.close()
    return tokens


def paragraph_collection(paragraphs: list[str]):
    """An in-memory collection (the store's schema) holding ``paragraphs`` as one opinion's lines,
    indexed as the writer indexes them (text index and pair index)."""
    from statinterp.collection.store import SCHEMA, Collection
    from statinterp.text.term_match import fts_pairs_text

    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO opinions (id, case_id, position, type) VALUES (1, 1, 0, 'majority')")
    for pid, text in enumerate(paragraphs):
        db.execute("INSERT INTO paragraphs (id, case_id, opinion_id, position, text) VALUES (?, 1, 1, ?, ?)",
                   (pid, pid, text))
        db.execute("INSERT INTO paragraphs_fts (rowid, text) VALUES (?, ?)", (pid, text))
        db.execute("INSERT INTO paragraph_pairs (rowid, pairs) VALUES (?, ?)", (pid, fts_pairs_text(text)))
    return Collection(Path(":memory:"), db)
