"""A label store that is newer, damaged or edited by another program (issue 35): refused before
anything is written, one line and exit 2, never exported."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from statinterp.corpus.labels import SCHEMA_VERSION, LabelStore
from statinterp.errors import InputError
from tests.support.cli import assert_one_line_error, run_main


def _store(path: Path, n: int = 400) -> Path:
    with LabelStore(path) as store:
        store.set_labels("vehicle", [f"s{i:04d}-{'x' * 40}" for i in range(n)], "high value")
        store.set_labels("vehicle", ["case-01-op1-p010-s4"], "certain value")
    return path


def test_a_newer_store_is_refused_before_anything_is_written(tmp_path):
    """Before: the store was switched to WAL (bytes 18-19 of its header rewritten) and only then refused."""
    path = _store(tmp_path / "labels.sqlite")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")  # as a newer statinterp might leave it
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    assert before[18:20] == b"\x01\x01"  # rollback journal, not WAL
    with pytest.raises(InputError, match="newer statinterp"):
        LabelStore(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-journal").exists()


def _corrupt_labels_table(path: Path) -> None:
    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'labels'").fetchone()[0]
    db.close()
    with open(path, "r+b") as fh:  # the labels table's root page: garbage
        fh.seek((root - 1) * page_size)
        fh.write(b"\xa5" * page_size)


def test_a_corrupt_page_is_one_line_exit_2(tmp_path, capsys):
    path = _store(tmp_path / "labels.sqlite")
    _corrupt_labels_table(path)
    with LabelStore(path) as store, pytest.raises(InputError, match="is damaged"):
        store.labels("vehicle")
    out = tmp_path / "vehicle.zip"
    code, _, err = run_main(capsys, "labels", "export", "vehicle", "--labels", str(path), "--out", str(out))
    assert_one_line_error(code, err, str(path), "damaged")
    assert not out.exists()


@pytest.mark.parametrize("label", ["HIGH VALUE", "bogus", ""])
def test_a_non_canonical_label_is_one_line_and_never_exported(tmp_path, capsys, label):
    path = _store(tmp_path / "labels.sqlite", n=2)
    db = sqlite3.connect(path)
    db.execute("UPDATE labels SET label = ? WHERE sentence_id = 'case-01-op1-p010-s4'", (label,))
    db.commit()
    db.close()
    with LabelStore(path) as store, pytest.raises(InputError, match="which is not one of"):
        store.records("vehicle")
    out = tmp_path / "vehicle.zip"
    code, _, err = run_main(capsys, "labels", "export", "vehicle", "--labels", str(path), "--out", str(out))
    assert_one_line_error(code, err, str(path), "case-01-op1-p010-s4", "label")
    assert not out.exists()  # before: the zip was written, and every command then refused it
