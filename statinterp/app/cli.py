"""The ``statinterp`` command line: the click group, ``main()`` and its error handling; the commands
live in the app/*_commands.py modules, each listing its own in ``COMMANDS``, added here in one loop.

The library (spaCy, gensim, SciPy, scikit-learn, ...) is imported inside the commands, so that
building the command tree and ``--help`` stay fast; only light modules are imported here.

**Progress**: how the command line shows the library's progress reports (:mod:`statinterp.progress`) on stderr.

On a terminal: a tqdm bar per task. Otherwise (a log file, a pipe, CI): a plain line every few
seconds with counts, rate and time left (tqdm's carriage-return redraws would pile up there).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback
import warnings
from typing import TextIO

import click

from statinterp.app import collection_commands, ranking_commands, research_commands, review_commands
from statinterp.app.output import terminal_safe
from statinterp.errors import StatinterpError, StatinterpWarning
from statinterp.progress import LineReporter, RateEstimate, Reporter, format_seconds

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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="statinterp")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx, debug):
    """Find the case-law sentences that explain what a statutory term means.

    statinterp ranks the sentences that mention a term so that those that define, explain,
    give examples of, or apply the term come first, and evaluates rankings by NDCG on
    annotated data. Run `statinterp methods` for the ranking methods.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug

#: click >= 8.2 raises this (with the help text) for a bare ``statinterp``.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler, so that ``finally`` blocks (temporary files) run."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _one_line(text: object) -> str:
    """``text`` as one line safe for a terminal (control characters shown as ``\\xNN``)."""
    return terminal_safe(" ".join(str(text).splitlines()).strip())


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning):
    if issubclass(category, StatinterpWarning):
        click.echo(f"statinterp: warning: {_one_line(message)}", err=True)
    else:
        _default(message, category, filename, lineno, file, line)


class _StderrLog(logging.Handler):
    """Shows the library's log messages (``statinterp.*`` loggers, INFO and up) as
    ``statinterp: MESSAGE`` lines on stderr (the library itself never prints)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(f"statinterp: {_one_line(record.getMessage())}", err=True)
        except Exception:  # noqa: BLE001 - logging must never end a run
            self.handleError(record)

#: The modules whose ``COMMANDS`` make up ``statinterp``: each lists the commands it defines.
COMMAND_MODULES = (ranking_commands, research_commands, review_commands, collection_commands)

for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main(argv=None) -> int:
    """Console entry point: clear one-line errors, exit status 2 for bad input or usage.

    Exit status: 0 success, 1 internal error (a bug; ``--debug`` shows the traceback), 2 bad
    input or usage, 130 interrupted (SIGINT), 143 terminated (SIGTERM). SIGTERM is turned into
    an exception so that partly written output files are removed.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    debug = "--debug" in args
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    log, handler = logging.getLogger("statinterp"), _StderrLog(logging.INFO)
    log.addHandler(handler)
    level = log.level
    log.setLevel(min(level or logging.INFO, logging.INFO))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", StatinterpWarning)
            warnings.showwarning = _show_warning
            return _main(args, debug)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(args: list[str], debug: bool) -> int:
    def error(message: object, code: int = 2) -> int:
        if debug:
            traceback.print_exc()
        click.echo(f"statinterp: error: {_one_line(message)}", err=True)
        return code

    from statinterp.progress import use_reporter

    try:
        with use_reporter(stderr_reporter()):
            status = cli.main(args=args, prog_name="statinterp", standalone_mode=False, obj={"argv": list(args)})
        return status if isinstance(status, int) else 0  # click returns an Exit's code here
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, Terminated):
            click.echo("statinterp: terminated", err=True)
            return 143
        click.echo("statinterp: interrupted", err=True)
        return 130
    except Terminated:
        click.echo("statinterp: terminated", err=True)
        return 143
    except KeyboardInterrupt:
        click.echo("statinterp: interrupted", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except _NO_ARGS_IS_HELP as exc:  # bare `statinterp`: the help text, as click shows it
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return error(exc.format_message() + hint, exc.exit_code)
    except click.ClickException as exc:
        return error(exc.format_message(), exc.exit_code)
    except StatinterpError as exc:
        return error(exc, exc.exit_code)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback with --debug
        return error(f"internal error ({type(exc).__name__}: {exc}); this is a bug, run with --debug "
                     "for the traceback", 1)

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
