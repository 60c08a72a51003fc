"""The CLI on bad usage (statinterp.app.cli): one line per error, ``--debug`` for the traceback,
an internal error reported as one line, the installed console script (issue 5), and a lone
surrogate in an option's value (issue 16, defect 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.bad_input import RECORDS, dumps_pairs, write_term
from tests.support.cli import assert_one_line_error, capture_main, one_error_line, run_main

STATINTERP = Path(sys.executable).with_name("statinterp")


@pytest.mark.parametrize("argv,needle", [
    (["rank", "vehicle", "--bogus"], "No such option"),
    (["rank"], "Missing argument 'TERM'"),
    (["nonsense"], "No such command"),
    (["evaluate", "--k", "0"], "--k"),
    (["rank", "vehicle", "-m", "NO-SUCH-METHOD"], "unknown method 'NO-SUCH-METHOD'"),
    (["rank", "bicycle", "-q", "--no-cache"], "'bicycle'"),
    (["evaluate", "-q", "--no-cache", "-t", "bicycle"], "bicycle"),
    (["rank", "vehicle", "--provision", "  "], "--provision is empty"),
    (["rank", "vehicle", "--provision-file", "/no/such/file"], "/no/such/file"),
    (["rank", "vehicle", "--data", "/no/such/data"], "/no/such/data: does not exist"),
])
def test_usage_errors_are_one_line(argv, needle):
    code, out, err = capture_main(argv)
    assert_one_line_error(code, err, needle)


def test_debug_shows_the_traceback(tmp_path):
    folder = write_term(tmp_path, RECORDS, {"case": b"{"})
    code, out, err = capture_main(["--debug", "rank", "vehicle", "--no-cache", "--data", str(folder)])
    assert code == 2
    assert "Traceback" in err and "InputError" in err
    assert err.splitlines()[-1].startswith("statinterp: error: ")
    assert "vehicle-case.json" in err.splitlines()[-1]


def test_unexpected_exception_is_one_line_without_debug_and_a_traceback_with_it(monkeypatch):
    import statinterp.workflow as workflow

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(workflow, "open_corpus", boom)  # the CLI imports it when a command runs
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache"])
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("statinterp: error: internal error (RuntimeError: simulated bug)")
    assert "--debug" in err
    code, out, err = capture_main(["--debug", "rank", "vehicle", "-q", "--no-cache"])
    assert code == 1 and "Traceback" in err and "simulated bug" in err


@pytest.mark.slow
def test_installed_console_script_reports_bad_input_in_one_line(tmp_path):
    if not STATINTERP.exists():
        pytest.skip("console script not installed next to the interpreter")
    folder = write_term(tmp_path, RECORDS, {"sentence": dumps_pairs([("s1", {}), ("s1", {})])})
    proc = subprocess.run([str(STATINTERP), "rank", "vehicle", "--data", str(folder)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "STATINTERP_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("statinterp: error: ")
    assert "vehicle-sentence.json" in proc.stderr and "record 's1'" in proc.stderr


def test_lone_surrogate_in_provision_option_is_refused(capsys):
    # what Python makes of a non-UTF-8 byte in argv (surrogateescape)
    code, out, err = run_main(capsys, "rank", "vehicle", "--provision", "No vehicles \udcff in the park", "-q")
    line = one_error_line(err)
    assert code == 2 and out == "" and "--provision" in line
