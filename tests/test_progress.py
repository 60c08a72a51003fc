"""Progress reports (issue 16): the library reports through :mod:`statinterp.progress` and never
imports click; the CLI draws tqdm bars on a terminal and plain lines every few seconds otherwise;
the time left is sane from the first estimate (start-up and cached work do not distort it)."""

from __future__ import annotations

import io
import pkgutil
import subprocess
import sys

import pytest

import statinterp
from statinterp import progress
from statinterp.app.cli import TqdmReporter, main, stderr_reporter
from statinterp.progress import LineReporter, RateEstimate, use_reporter


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


IMPORTER_PROBE = """
import builtins, importlib, sys

importers = set()
original_import = builtins.__import__


def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    # every `import click...` / `from click... import` statement, even when click is loaded already
    if level == 0 and (name == "click" or name.startswith("click.")):
        importers.add((globals or {}).get("__name__", "?"))
    return original_import(name, globals, locals, fromlist, level)


builtins.__import__ = recording_import
for name in MODULES:
    try:
        importlib.import_module(name)
    except ImportError as exc:  # an optional extra (e.g. the neural one) that is not installed
        if "statinterp" in str(exc):
            raise
print(sorted(m for m in importers if m.startswith(PACKAGE + ".") and not m.startswith(PACKAGE + ".app")))
print(sorted(m for m in sys.modules if m.startswith(PACKAGE + ".app")))
"""


@pytest.mark.slow
def test_the_library_never_imports_click():
    """No module outside statinterp/app imports click (spaCy itself imports click through its own
    CLI, so 'click' in sys.modules alone cannot tell; the probe records who imports it)."""
    modules = sorted(m.name for m in pkgutil.walk_packages(statinterp.__path__, "statinterp.")
                     if not m.name.startswith("statinterp.app") and m.name != "statinterp.data")
    assert "statinterp.workflow" in modules and "statinterp.vectors.provider" in modules
    code = f"MODULES = {modules!r}\nPACKAGE = 'statinterp'\n" + IMPORTER_PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    ours, app = out.splitlines()
    assert ours == "[]", f"library modules import click: {ours}"
    assert app == "[]", f"the library imports the app layer: {app}"


def test_the_click_probe_sees_a_library_module_that_imports_click(tmp_path):
    """The probe above can fail: a module inside the package that imports click is caught."""
    package = tmp_path / "statinterp_probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bad.py").write_text("import click\n")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
            "import click\n"  # already loaded, as spaCy loads it before statinterp's modules
            "MODULES = ['statinterp_probe_pkg.bad']\nPACKAGE = 'statinterp_probe_pkg'\n" + IMPORTER_PROBE)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "['statinterp_probe_pkg.bad']"


def test_first_estimate_ignores_start_up_time():
    """30 s of start-up (loading spaCy, starting workers), then 1,000 units/s: the first estimate
    of the time left is right, not 30x too long."""
    clock = FakeClock()
    est = RateEstimate(100_000, clock)
    clock.now += 30.0
    est.advance(1000)
    clock.now += 1.0
    est.advance(1000)
    assert abs(est.remaining() - 98.0) < 1.0


def test_cached_work_leaves_the_total_instead_of_faking_speed():
    """90% of the work is found in a cache at once; the rest runs at 100 units/s."""
    clock = FakeClock()
    est = RateEstimate(10_000, clock)
    est.skip(9_000)
    est.advance(100)
    clock.now += 1.0
    est.advance(100)
    assert est.total == 1_000 and est.done == 200
    assert abs(est.remaining() - 8.0) < 0.5


def test_line_reporter_prints_a_line_every_interval_not_one_per_phase():
    clock = FakeClock()
    lines: list[str] = []
    with use_reporter(LineReporter(lines.append, interval=5.0, clock=clock)):
        with progress.task(600, "Training word2vec", unit="sentences") as advance:
            for _ in range(60):  # one minute, 10 units a second
                clock.now += 1.0
                advance(10)
    assert lines[0].startswith("Training word2vec: 10/600 sentences (2%)")
    assert lines[-1].startswith("Training word2vec: 600 sentences done in 1:00")
    middle = lines[1:-1]
    assert 10 <= len(middle) <= 13, lines
    assert "310/600 sentences (52%), 0:31 elapsed, ~0:29 left" in " ".join(middle), middle


def test_a_task_whose_work_is_all_cached_reports_nothing():
    lines: list[str] = []
    buf = io.StringIO()
    for reporter in (LineReporter(lines.append), TqdmReporter(buf)):
        with use_reporter(reporter):
            with progress.task(1000, "Analysing case texts", unit="chars") as advance:
                advance.skip(1000)
    assert lines == [] and buf.getvalue() == ""


def test_disabled_or_empty_tasks_report_nothing():
    lines: list[str] = []
    with use_reporter(LineReporter(lines.append)):
        with progress.task(10, "x", enabled=False) as advance:
            advance(10)
        with progress.task(0, "y") as advance:
            advance.skip(0)
        list(progress.iterate([1], "one item"))
        progress.note("hidden", enabled=False)
    assert lines == []


def test_tqdm_reporter_draws_counts_and_drops_skipped_work_from_the_total():
    buf = io.StringIO()
    with use_reporter(TqdmReporter(buf)):
        with progress.task(1000, "Analysing case texts", unit="chars") as advance:
            advance.skip(600)
            advance(100)
            advance(300)
        progress.note("trained word2vec vectors in 3 s")
    text = buf.getvalue()
    assert "Analysing case texts" in text and "100%" in text
    assert "400/400" in text.replace(" chars", "")
    assert "statinterp: trained word2vec vectors in 3 s" in text


def test_stderr_reporter_uses_tqdm_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(stderr_reporter(Tty()), TqdmReporter)
    assert isinstance(stderr_reporter(io.StringIO()), LineReporter)


def test_cli_reports_progress_as_lines_when_stderr_is_not_a_terminal(capsys):
    code = main(["tune", "TF-ISF-c", "--grid", "lam=0,0.5,1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "grid" in ln]
    assert lines[0].startswith("statinterp: Evaluating TF-ISF-c grid: 1/3"), err
    assert lines[-1].startswith("statinterp: Evaluating TF-ISF-c grid: 3 done in"), err
    assert "\r" not in err
    code = main(["tune", "TF-ISF-c", "--grid", "lam=0,0.5,1", "-q"])
    out, err = capsys.readouterr()
    assert code == 0 and "grid" not in err


def test_vector_training_reports_the_vocabulary_scan_and_the_epochs_as_separate_tasks():
    """gensim reads the corpus once to build the vocabulary (fast), then once per epoch (slow):
    one task over all passes would give a time left several times too short after the scan."""
    from statinterp.vectors.provider import _Counted

    clock = FakeClock()
    lines: list[str] = []
    corpus = [["a"]] * 10
    with use_reporter(LineReporter(lines.append, interval=0.0, clock=clock)):
        with progress.task(10, "Scanning", unit="sentences") as scan, \
                progress.task(30, "Training", unit="sentences") as epochs:
            counted = _Counted(corpus, [scan, epochs], step=5)
            for _ in counted:  # the scan: quick
                clock.now += 0.01
            scan_done = [ln for ln in lines if ln.startswith("Scanning: 10 sentences done")]
            for _ in range(3):  # three epochs: 1 s per sentence
                for _ in counted:
                    clock.now += 1.0
            assert scan_done == [] and any(ln.startswith("Scanning: 10 sentences done") for ln in lines)
    training = [ln for ln in lines if ln.startswith("Training: ")]
    assert training[0].startswith("Training: 5/30 sentences")
    # the time left after 10 of 30 training sentences: 20 s at 1 s each (not a rate mixed with the scan)
    assert any(ln.startswith("Training: 10/30 sentences (33%)") and "~0:20 left" in ln for ln in training), training
    assert lines[-1].startswith("Training: 30 sentences done")


def test_a_counter_of_unknown_size_reports_counts_and_rate_without_a_share():
    clock = FakeClock()
    lines: list[str] = []
    with use_reporter(LineReporter(lines.append, interval=5.0, clock=clock)):
        with progress.counter("ingest", unit="cases") as advance:
            for _ in range(20):  # 20 s, 10 cases a second
                clock.now += 1.0
                advance(10)
    assert lines[0] == "ingest: 10 cases, 0:01 elapsed", lines
    assert any(ln.startswith("ingest: 110 cases, 10.0 cases/s, 0:11 elapsed") for ln in lines), lines
    assert lines[-1] == "ingest: 200 cases done in 0:20"
    assert not any("%" in ln or "left" in ln for ln in lines)
    buf = io.StringIO()
    with use_reporter(TqdmReporter(buf)):  # on a terminal: a count without a bar (tqdm has no total)
        with progress.counter("ingest", unit="cases") as advance:
            advance(7)
    assert "ingest: 7 cases" in buf.getvalue()


@pytest.mark.slow
def test_ingest_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys):
    code = main(["ingest", "--collection", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("statinterp: ingest: ")]
    assert lines and lines[-1].startswith("statinterp: ingest: 9 cases done in"), err
    assert "\r" not in err
    code = main(["ingest", "--collection", str(tmp_path / "d"), "-q"])
    out, err = capsys.readouterr()
    assert code == 0 and "statinterp: ingest:" not in err
