"""Output paths (statinterp.app.options.OutputPath): a trailing slash names a folder and is
refused before anything is written (issue 16, defect 4)."""

from __future__ import annotations

import pytest

from tests.support.cli import one_error_line, run_main


def test_out_with_a_trailing_slash_is_refused(tmp_path, capsys):
    target = str(tmp_path / "new") + "/"
    code, _, err = run_main(capsys, "rank", "vehicle", "-q", "--out", target)
    line = one_error_line(err)
    assert code == 2 and "slash" in line
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", [["evaluate"], ["train"]])
def test_trailing_slash_refused_for_every_file_output(tmp_path, capsys, command):
    code, _, err = run_main(capsys, *command, "-q", "--out", str(tmp_path / "x") + "/")
    assert code == 2 and "slash" in one_error_line(err)
    assert not (tmp_path / "x").exists()
