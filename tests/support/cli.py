"""Running the CLI in-process and reading its one-line errors."""

from __future__ import annotations

import contextlib
import io


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process; its exit code, stdout and stderr."""
    from statinterp.app.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single `statinterp: error:` line of ``err`` (fails on a traceback or more lines)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("statinterp: error: "), err
    return lines[0]


def capture_main(argv: list[str]) -> tuple[int, str, str]:
    """Run the CLI in-process with stdout and stderr redirected; its exit code, stdout and stderr.
    For Hypothesis tests, whose many examples share one test call (capsys is not reset between
    them)."""
    from statinterp.app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int, err: str, *needles: str) -> str:
    """Exit status 2 and exactly one stderr line ``statinterp: error: ...`` holding every needle."""
    line = one_error_line(err)
    for needle in needles:
        assert needle in line, (needle, line)
    assert code == 2, (code, err)
    return line
