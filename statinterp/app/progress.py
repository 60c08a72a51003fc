"""How the command line shows the library's progress reports (:mod:`statinterp.progress`) on stderr.

On a terminal: a tqdm bar per task. Otherwise (a log file, a pipe, CI): a plain line every few
seconds with counts, rate and time left (tqdm's carriage-return redraws would pile up there).
"""

from __future__ import annotations

import sys
from typing import TextIO

from statinterp.progress import LineReporter, RateEstimate, Reporter, format_seconds

__all__ = ["LINE_INTERVAL", "TqdmReporter", "stderr_reporter"]

#: Seconds between two progress lines when stderr is not a terminal.
LINE_INTERVAL = 5.0


class _TqdmTask:
    """A tqdm bar, drawn from the first real work on (a task whose work is all cached draws none)."""

    def __init__(self, label: str, total: int, unit: str, file: TextIO):
        # the time left comes from our estimate (clock from the first advance, cached work
        # skipped), not from tqdm's average since the start
        self.estimate = RateEstimate(total)
        self.label, self.unit, self.file = label, unit, file
        self.bar = None

    def _open(self):
        from tqdm import tqdm

        unit = f" {self.unit}" if self.unit else ""
        fmt = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{unit} [{elapsed}{postfix}]" if self.estimate.total
               else "{desc}: {n_fmt}{unit} [{elapsed}, {rate_fmt}]")  # a task of unknown size: counts only
        self.bar = tqdm(total=self.estimate.total or None, desc=self.label, unit=unit,
                        unit_scale=bool(unit and self.estimate.total),
                        file=self.file, dynamic_ncols=True, leave=True, mininterval=0.5, bar_format=fmt)
        return self.bar

    def advance(self, n: int = 1) -> None:
        self.estimate.advance(n)
        bar = self.bar if self.bar is not None else self._open()  # bool(tqdm) fails without a total
        left = self.estimate.remaining()
        postfix = f"~{format_seconds(left)} left" if left is not None and self.estimate.done < self.estimate.total \
            else ""  # tqdm puts ", " before it
        if postfix != (bar.postfix or ""):
            bar.postfix = postfix
        bar.update(n)

    def skip(self, n: int) -> None:
        self.estimate.skip(n)
        if self.bar is not None:
            self.bar.total = self.estimate.total
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.postfix = ""
            self.bar.close()


class TqdmReporter:
    """A tqdm bar for each task on ``file`` (default stderr); notes are printed above the bars."""

    def __init__(self, file: TextIO | None = None):
        self.file = file

    def start(self, label: str, total: int, unit: str = "") -> _TqdmTask:
        return _TqdmTask(label, total, unit, self.file or sys.stderr)

    def note(self, message: str) -> None:
        from tqdm import tqdm

        tqdm.write(f"statinterp: {message}", file=self.file or sys.stderr)


def _stderr_line(text: str) -> None:
    print(f"statinterp: {text}", file=sys.stderr, flush=True)


def stderr_reporter(stream: TextIO | None = None) -> Reporter:
    """The reporter for the command line: tqdm bars on a terminal, else a line every few seconds."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        return TqdmReporter(stream)
    if stream is sys.stderr:
        return LineReporter(_stderr_line, interval=LINE_INTERVAL)
    return LineReporter(lambda text: print(f"statinterp: {text}", file=stream, flush=True), interval=LINE_INTERVAL)
