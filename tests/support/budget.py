"""The fast loop's budget: a report of every test not marked ``slow`` that took too long.

``python -m pytest -m "not slow"`` is the day-to-day loop and must stay within about two minutes
of CPU on two cores; that holds only while every unmarked test is quick. This plugin (loaded by
tests/conftest.py) measures each test's setup, call and teardown in CPU seconds of this process
and of the subprocesses it waited for, which load on the machine barely changes, and at the end
of the run lists the unmarked tests over :data:`BUDGET_CPU_SECONDS` with the marker to add. It is
a report, never a failure: it says nothing about the product's speed.

``STATINTERP_TEST_BUDGET`` sets the budget in CPU seconds (default 3).
"""

from __future__ import annotations

import os
import resource
import time

import pytest

#: CPU seconds an unmarked test may take before the report names it.
BUDGET_CPU_SECONDS = float(os.environ.get("STATINTERP_TEST_BUDGET", "3"))

_spent: dict[str, tuple[float, float]] = {}


def _cpu_seconds() -> float:
    own = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    if item.get_closest_marker("slow") is None:
        _spent[item.nodeid] = (_cpu_seconds() - cpu, time.perf_counter() - wall)


def over_budget(spent: dict[str, tuple[float, float]], budget: float) -> list[tuple[str, float, float]]:
    """The unmarked tests over ``budget`` CPU seconds, slowest first: (node id, CPU s, wall s)."""
    rows = [(nodeid, cpu, wall) for nodeid, (cpu, wall) in spent.items() if cpu > budget]
    return sorted(rows, key=lambda row: -row[1])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _spent:
        return
    total = sum(cpu for cpu, _ in _spent.values())
    rows = over_budget(_spent, BUDGET_CPU_SECONDS)
    terminalreporter.write_sep("-", "fast-loop budget (tests not marked slow)")
    terminalreporter.write_line(f"{len(_spent)} unmarked test(s): {total:.1f} CPU s in all "
                                f"(this process and its subprocesses)")
    if not rows:
        terminalreporter.write_line(f"none over {BUDGET_CPU_SECONDS:g} CPU s")
        return
    terminalreporter.write_line(f"{len(rows)} over {BUDGET_CPU_SECONDS:g} CPU s: mark them @pytest.mark.slow")
    for nodeid, cpu, wall in rows:
        terminalreporter.write_line(f"  {cpu:6.1f} CPU s {wall:6.1f} s wall  {nodeid}")
