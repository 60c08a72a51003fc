"""Analysis worker processes end when the process that started them is killed (issue 16, probe
defect 2): SIGKILL cannot be caught, so the workers must notice by themselves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)"),
              pytest.mark.slow]

CHILD = textwrap.dedent(
    """
    import sys, time
    from statinterp.text.analysis import Analyzer

    an = Analyzer(cache_dir=False, n_process=2)
    texts = [f"The vehicle number {i} was parked. It stayed there." for i in range(8)]
    with an.session():
        an.analyse(texts)  # starts the pool of two workers, kept alive by the session
        print(" ".join(str(p) for p in an._pool._processes), flush=True)
        time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (a dead worker nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_workers_exit_when_the_parent_is_killed():
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        workers = [int(p) for p in line.split()]
        assert len(workers) == 2, f"expected two worker pids, got {line!r}"
        assert all(_alive(p) for p in workers)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = [p for p in workers if _alive(p)]
        assert not survivors, f"analysis workers {survivors} outlived their killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in locals().get("workers", []):
            if _alive(p):
                os.kill(p, signal.SIGKILL)
