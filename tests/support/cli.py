"""Running the CLI in-process and reading its one-line errors."""

from __future__ import annotations


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

