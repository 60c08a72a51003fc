"""Atomic writes (statinterp.cache.files): an output whose parent is a file says so, and a set of
files (a report's .md, .json, .png) is written as a whole or not at all (issue 16, defect 5)."""

from __future__ import annotations

import pytest

from tests.support.cli import one_error_line, run_main
from tests.support.files import no_temporaries, old_report_set


def test_out_whose_parent_is_a_file_says_so(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub" / "ranking.txt"
    code, stdout, err = run_main(capsys, "rank", "vehicle", "-q", "--out", str(out))
    line = one_error_line(err)
    assert code == 2 and stdout == ""
    assert "is a file, not a folder" in line and str(tmp_path / "afile") in line
    assert "File exists" not in line


@pytest.mark.parametrize("force", [True, False])
def test_write_set_failure_between_files_keeps_every_old_file(tmp_path, monkeypatch, force):
    from statinterp.cache import files as atomic
    from statinterp.errors import OutputError

    folder = tmp_path / "reports"
    old = old_report_set(folder, "core") if force else {}
    if not force:
        folder.mkdir()
    real = atomic._create_temp
    calls = []

    def failing(path):
        calls.append(path)
        if len(calls) == 3:  # the png's temporary: the disk is full
            raise OSError(28, "No space left on device")
        return real(path)

    monkeypatch.setattr(atomic, "_create_temp", failing)
    new = {folder / "core.md": "new md\n", folder / "core.json": "new json\n", folder / "core.png": b"new png"}
    with pytest.raises(OutputError, match="core.png"):
        atomic.write_set(new, force=force)
    assert {p: p.read_bytes() for p in folder.iterdir()} == old
    assert no_temporaries(folder)


def test_write_set_interrupted_while_renaming_without_force_leaves_nothing_new(tmp_path, monkeypatch):
    from statinterp.cache import files as atomic

    folder = tmp_path / "reports"
    real = atomic._commit
    done = []

    def interrupted(tmp, path, force):
        if done:
            raise KeyboardInterrupt
        real(tmp, path, force)
        done.append(path)

    monkeypatch.setattr(atomic, "_commit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_set({folder / "a.md": "a", folder / "a.png": b"b"})
    assert list(folder.iterdir()) == []


def test_write_set_refuses_all_if_one_exists(tmp_path):
    from statinterp.cache import files as atomic
    from statinterp.errors import UsageError

    (tmp_path / "r.png").write_bytes(b"old")
    with pytest.raises(UsageError, match="already exists"):
        atomic.write_set({tmp_path / "r.md": "new", tmp_path / "r.png": b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.png"]
    written = atomic.write_set({tmp_path / "r.md": "new", tmp_path / "r.png": b"new"}, force=True)
    assert written == [tmp_path / "r.md", tmp_path / "r.png"]
    assert (tmp_path / "r.png").read_bytes() == b"new" and (tmp_path / "r.md").read_text() == "new"
