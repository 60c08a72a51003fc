"""Nothing lost, nothing half-written (issue 5): atomic output files (statinterp.cache.files),
refusal to overwrite without --force, and interrupted runs (SIGINT/SIGTERM while writing)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statinterp.cache import files as atomic
from statinterp.errors import OutputError, UsageError
from tests.support.bad_input import FUZZ
from tests.support.cli import capture_main
from tests.support.files import temp_files, umask

# --------------------------------------------------------------------------------------------
# atomic writes (cache/files.py)


def test_write_creates_file_with_normal_permissions_and_no_temp_files(tmp_path):
    target = tmp_path / "sub" / "out.json"
    atomic.write_text(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask()  # not mkstemp's 0600
    assert temp_files(tmp_path) == []


@FUZZ
@given(text=st.text(max_size=2000))
def test_written_text_reads_back_exactly(text):
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "out.txt"
        atomic.write_text(target, text)
        assert target.read_bytes() == text.encode("utf-8")  # no newline translation either
        assert temp_files(Path(tmp)) == []


def test_existing_file_is_never_overwritten_without_force(tmp_path):
    target = tmp_path / "mine.txt"
    target.write_text("precious")
    with pytest.raises(UsageError, match="already exists; pass --force"):
        atomic.write_text(target, "new")
    assert target.read_text() == "precious"
    atomic.write_text(target, "new", force=True)
    assert target.read_text() == "new"
    assert temp_files(tmp_path) == []


def test_force_keeps_the_permissions_of_the_replaced_file(tmp_path):
    target = tmp_path / "mine.txt"
    target.write_text("old")
    target.chmod(0o640)
    atomic.write_text(target, "new", force=True)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_file_appearing_while_writing_is_not_overwritten(tmp_path):
    target = tmp_path / "race.txt"
    with pytest.raises(UsageError, match="already exists"):
        with atomic.replace(target) as tmp:
            tmp.write_text("ours")
            target.write_text("someone else's")  # created after the up-front check
    assert target.read_text() == "someone else's"
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(143)])
def test_failure_while_writing_leaves_the_old_file_and_no_temp_file(tmp_path, exc):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(type(exc)):
        with atomic.replace(target, force=True) as tmp:
            tmp.write_text("half")
            raise exc
    assert target.read_text() == "old"
    assert temp_files(tmp_path) == []


def test_unwritable_target_is_an_output_error(tmp_path):
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        atomic.write_text(tmp_path / "a_file" / "out.txt", "data")
    with pytest.raises(UsageError, match="is a directory"):
        atomic.write_text(tmp_path, "data", force=True)


def test_cli_out_refuses_existing_file_then_force_replaces_it(tmp_path):
    target = tmp_path / "ranking.json"
    target.write_text("my notes")
    argv = ["rank", "vehicle", "-q", "--cache-dir", str(tmp_path / "cache"), "--format", "json", "-o", str(target)]
    code, out, err = capture_main(argv)
    assert code == 2 and err.startswith("statinterp: error: ") and err.count("\n") == 1
    assert "already exists; pass --force" in err
    assert target.read_text() == "my notes"
    code, out, err = capture_main(argv + ["--force"])
    assert code == 0, err
    assert json.loads(target.read_text())["term"] == "vehicle"
    code, stdout, err = capture_main(argv[:-2])
    assert target.read_text() == stdout
    assert temp_files(tmp_path) == []


def test_cli_out_in_an_impossible_place_is_one_line(tmp_path):
    (tmp_path / "a_file").write_text("x")
    code, out, err = capture_main(["rank", "vehicle", "-q", "--cache-dir", str(tmp_path / "cache"),
                                "-o", str(tmp_path / "a_file" / "out.txt")])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("statinterp: error: cannot write ") and "a_file" in err


# --------------------------------------------------------------------------------------------
# Interrupted runs: a subprocess is killed while it writes its output slowly

#: Runs the CLI with output writes slowed down: 512-byte chunks, 10 ms apart, and a pause of up to
#: a minute after the first chunk. MARKER is created once the temporary file holds that chunk.
SLOW_WRITER = textwrap.dedent("""
    import builtins, os, signal, sys, time
    from pathlib import Path
    import statinterp.cache.files as atomic

    # Ctrl-C as in a terminal: a run started in the background by a shell without job control
    # (a CI script's `cmd &`) inherits SIGINT ignored, and Python then installs no handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    marker = Path(os.environ["MARKER"])
    real_open = builtins.open

    class Slow:
        def __init__(self, fh):
            self.fh = fh
        def write(self, data):
            for i in range(0, len(data), 512):
                self.fh.write(data[i:i + 512])
                self.fh.flush()
                if i == 0:
                    marker.touch()
                    for _ in range(6000):  # the test interrupts us here
                        time.sleep(0.01)
                time.sleep(0.01)
            return len(data)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self.fh.close()
        def __getattr__(self, name):
            return getattr(self.fh, name)

    def slow_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        # only the output's temporary file (the cache entries, written by the same module, stay fast)
        slow = "w" in mode and str(file).endswith(".tmp") and Path(file).parent == marker.parent
        return Slow(fh) if slow else fh

    atomic.open = slow_open
    from statinterp.app.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.slow
def test_interrupted_write_leaves_old_or_no_file_and_no_temp_files(tmp_path):
    script = tmp_path / "slow_writer.py"
    script.write_text(SLOW_WRITER)
    cache = tmp_path / "cache"
    runs = {}
    for name, sig, existing in [("int-new", signal.SIGINT, False), ("term-old", signal.SIGTERM, True)]:
        folder = tmp_path / name
        folder.mkdir()
        target = folder / "ranking.json"
        if existing:
            target.write_text("OLD CONTENT")
        argv = [sys.executable, str(script), "rank", "vehicle", "-q", "--cache-dir", str(cache), "--format", "json",
                "--top", "0", "-o", str(target)] + (["--force"] if existing else [])
        env = {**os.environ, "MARKER": str(folder / "writing")}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        runs[name] = (proc, sig, folder, target, existing)

    deadline = time.monotonic() + 120
    for _name, (proc, sig, folder, _target, _existing) in runs.items():
        while not (folder / "writing").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never started writing"
            time.sleep(0.01)
        partial = temp_files(folder)
        assert len(partial) == 1 and partial[0].stat().st_size > 0  # really killed mid-write
        proc.send_signal(sig)

    for _name, (proc, sig, folder, _target, _existing) in runs.items():
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, (name, err)
        assert temp_files(folder) == [], name
        assert proc.returncode == (130 if sig == signal.SIGINT else 143), (name, err)
        assert err.splitlines()[-1] == ("statinterp: interrupted" if sig == signal.SIGINT else "statinterp: terminated")
        if existing:
            assert target.read_text() == "OLD CONTENT", name
        else:
            assert not target.exists(), name


def test_sigterm_handler_is_restored_after_main(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    capture_main(["methods"])
    assert signal.getsignal(signal.SIGTERM) == before
