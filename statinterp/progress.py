"""Progress of long work, reported to a listener: the library reports, it never draws.

Long loops in the library report through :func:`task` (or :func:`iterate`; :func:`counter`
when the amount of work is not known beforehand) and one-off
messages through :func:`note`. Where the reports go is the current *reporter*:

* by default, :class:`LineReporter` writing to the ``statinterp.progress`` logger (INFO): a line
  with counts, rate and time left every few seconds (silent unless logging is configured);
* the command line installs its own (a tqdm bar on a terminal, plain lines every few seconds
  otherwise; :mod:`statinterp.app.cli`) with :func:`use_reporter`;
* Python users may do the same, e.g. ``with use_reporter(LineReporter(print)): ...``.

A reporter is any object with ``start(label, total, unit) -> Task`` and ``note(message)``; a
task has ``advance(n)`` (``n`` units done), ``skip(n)`` (``n`` units need no work, e.g. found in a
cache: they leave the total instead of counting as done, so they do not distort the rate and
the time left) and ``close()``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

T = TypeVar("T")

logger = logging.getLogger("statinterp.progress")


class Task(Protocol):
    def advance(self, n: int = 1) -> None: ...

    def skip(self, n: int) -> None: ...

    def close(self) -> None: ...


class Reporter(Protocol):
    def start(self, label: str, total: int, unit: str = "") -> Task: ...

    def note(self, message: str) -> None: ...


class _NoTask:
    def advance(self, n: int = 1) -> None:
        pass

    def skip(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


class Advance:
    """What :func:`task` yields: call it with a count done (``advance(n)``); ``advance.skip(n)``
    removes ``n`` units that need no work from the total."""

    def __init__(self, task: Task):
        self._task = task
        self._closed = False

    def __call__(self, n: int = 1) -> None:
        self._task.advance(n)

    def skip(self, n: int) -> None:
        self._task.skip(n)

    def close(self) -> None:
        """End the task early (e.g. a pass that is over while a later task runs); idempotent."""
        if not self._closed:
            self._closed = True
            self._task.close()


def format_seconds(seconds: float) -> str:
    """``75`` -> ``1:15``, ``3725`` -> ``1:02:05``."""
    seconds = int(round(max(0.0, seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class RateEstimate:
    """Counts done, the rate and the time left of one task, measured from its first advance.

    The clock starts at the first :meth:`advance`, not when the task starts, so a one-off
    start-up (loading a model, starting worker processes) does not make the first estimate
    far too long; :meth:`skip` takes units out of the total, so work found in a cache does not
    make it far too short.
    """

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic):
        self.total = max(0, int(total))
        self.done = 0
        self.clock = clock
        self.started = clock()
        self._first: float | None = None  # time of the first advance
        self._first_done = 0  # units done by the first advance

    def advance(self, n: int) -> None:
        now = self.clock()
        if self._first is None:
            self._first, self._first_done = now, n
        self.done += n

    def skip(self, n: int) -> None:
        self.total = max(self.done, self.total - n)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self) -> float | None:
        """Units per second since the first advance (None until there are two measurements)."""
        if self._first is None:
            return None
        seconds = self.clock() - self._first
        units = self.done - self._first_done
        if seconds <= 0 or units <= 0:
            return None
        return units / seconds

    def remaining(self) -> float | None:
        rate = self.rate()
        if rate is None or self.total <= 0:
            return None
        return max(0, self.total - self.done) / rate

    def line(self, label: str, unit: str = "") -> str:
        """``label: done/total unit (pct), elapsed, left``; a task of unknown size (total 0):
        ``label: done unit, rate, elapsed``."""
        unit = f" {unit}" if unit else ""
        if not self.total:
            rate = self.rate()
            per_second = f", {rate:,.1f}{unit}/s" if rate is not None else ""
            return f"{label}: {self.done:,}{unit}{per_second}, {format_seconds(self.elapsed())} elapsed"
        text = f"{label}: {self.done:,}/{self.total:,}{unit}"
        text += f" ({100 * min(self.done, self.total) / self.total:.0f}%)"
        text += f", {format_seconds(self.elapsed())} elapsed"
        left = self.remaining()
        if self.done < self.total:
            text += f", ~{format_seconds(left)} left" if left is not None else ", time left not known yet"
        return text


class _LineTask:
    """Lines start with the first real work (a task whose work is all cached prints nothing)."""

    def __init__(self, reporter: LineReporter, label: str, total: int, unit: str):
        self.reporter, self.label, self.unit = reporter, label, unit
        self.estimate = RateEstimate(total, reporter.clock)
        self._last: float | None = None  # when the last line was printed (None: none yet)
        self._closed = False

    def advance(self, n: int = 1) -> None:
        self.estimate.advance(n)
        now = self.reporter.clock()
        if self._last is None or now - self._last >= self.reporter.interval:
            self._last = now
            self.reporter.emit(self.estimate.line(self.label, self.unit))

    def skip(self, n: int) -> None:
        self.estimate.skip(n)

    def close(self) -> None:
        if not self._closed and self._last is not None:
            self._closed = True
            est = self.estimate
            self.reporter.emit(f"{self.label}: {est.done:,}{' ' + self.unit if self.unit else ''} done in "
                               f"{format_seconds(est.elapsed())}")


class LineReporter:
    """Plain text lines: one at a task's first advance, then one every ``interval`` seconds of
    work, and one when it ends. ``emit`` receives each line (default: the ``statinterp.progress`` logger)."""

    def __init__(self, emit: Callable[[str], None] | None = None, interval: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        self.emit = emit or logger.info
        self.interval = interval
        self.clock = clock

    def start(self, label: str, total: int, unit: str = "") -> Task:
        return _LineTask(self, label, total, unit)

    def note(self, message: str) -> None:
        self.emit(message)


_reporter: Reporter = LineReporter()


def current_reporter() -> Reporter:
    return _reporter


@contextmanager
def use_reporter(reporter: Reporter) -> Iterator[Reporter]:
    """Send progress reports to ``reporter`` inside the block."""
    global _reporter
    previous, _reporter = _reporter, reporter
    try:
        yield reporter
    finally:
        _reporter = previous


@contextmanager
def task(total: int, label: str, enabled: bool = True, unit: str = "") -> Iterator[Advance]:
    """Report a task of ``total`` units; yields :class:`Advance` (``advance(n)``, ``advance.skip(n)``)."""
    if not enabled or total <= 0:
        yield Advance(_NoTask())
        return
    advance = Advance(_reporter.start(label, total, unit))
    try:
        yield advance
    finally:
        advance.close()


@contextmanager
def counter(label: str, enabled: bool = True, unit: str = "") -> Iterator[Advance]:
    """Report work of unknown size (e.g. records read from a stream): like :func:`task` without a
    total, so the lines give counts, rate and time elapsed but no share done or time left."""
    if not enabled:
        yield Advance(_NoTask())
        return
    advance = Advance(_reporter.start(label, 0, unit))
    try:
        yield advance
    finally:
        advance.close()


def iterate(items: Iterable[T], label: str, enabled: bool = True, unit: str = "") -> Iterator[T]:
    """Iterate ``items``, reporting one unit per item."""
    items = list(items)
    with task(len(items), label, enabled and len(items) > 1, unit) as advance:
        for item in items:
            yield item
            advance(1)


def note(message: str, enabled: bool = True) -> None:
    """A one-off message about long work (e.g. that vectors are being trained)."""
    if enabled:
        _reporter.note(message)
