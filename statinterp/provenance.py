"""Provenance of a figure: the command that made it and the versions that can change it.

One home for what every report (Markdown and JSON) and every model file records, so that
anyone can tell, and reproduce, how a published number was made:

* the command (as the user would type it again),
* the Python version and the version of every library whose change can move a figure
  (:data:`FIGURE_LIBRARIES`; ``None`` = not installed),
* the BLAS/OpenMP libraries NumPy and scikit-learn call (``threadpoolctl``), and
* the date (the one field that differs between two otherwise identical runs).

Reports write their figures at a fixed precision (:data:`FIGURE_DIGITS` significant digits:
:func:`fixed_precision`, :func:`report_json`), so that summation-order differences in the last
bits (another CPU's vector instructions, another BLAS) do not change a report's bytes.

:func:`run_provenance` builds the record, :func:`provenance_lines` renders it as Markdown
bullet lines, :func:`version_differences` compares a recorded set of versions with the
running ones (``statinterp reproduce --check``, loading a model). The exact versions the
committed reports were made with are pinned in ``constraints.txt`` at the repository root
(``pip install -c constraints.txt -e .``).
"""

from __future__ import annotations

import datetime
import json
import math
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from importlib import metadata
from typing import Any

__all__ = ["FIGURE_DIGITS", "FIGURE_LIBRARIES", "command_line", "fixed_precision", "library_versions",
           "provenance_lines", "report_json", "run_provenance", "thread_libraries", "version_differences"]

#: Distributions (PyPI names) whose version can change a reported figure: analysis (spaCy and its
#: lookup tables), statistics and scores (NumPy, SciPy), word vectors (gensim, fasttext), Word
#: Mover's Distance (POT), learners and model files (scikit-learn, joblib, threadpoolctl), charts
#: (matplotlib), and the optional neural features (sentence-transformers, torch).
FIGURE_LIBRARIES = ("numpy", "scipy", "scikit-learn", "joblib", "threadpoolctl", "spacy", "spacy-lookups-data",
                    "gensim", "POT", "fasttext", "matplotlib", "sentence-transformers", "torch")


def package_version(dist: str) -> str | None:
    """The installed version of a distribution (``importlib.metadata``), or None if it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def library_versions(libraries: Sequence[str] = FIGURE_LIBRARIES) -> dict[str, str | None]:
    """``python``, ``statinterp`` and each of ``libraries``: its installed version, or ``None``."""
    versions: dict[str, str | None] = {"python": platform.python_version(), "statinterp": package_version("statinterp")}
    for dist in libraries:
        versions[dist] = package_version(dist)
    return versions


def thread_libraries() -> list[dict[str, Any]]:
    """The native thread pools loaded now (BLAS, OpenMP): API, library, version and thread count,
    as :func:`threadpoolctl.threadpool_info` reports them (empty if threadpoolctl is missing), in a
    fixed order (by API, library, version): the order in which libraries happen to be loaded
    changes from run to run, and a regenerated report must not."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - scikit-learn depends on it
        return []
    keep = ("user_api", "internal_api", "version", "num_threads")
    seen, out = set(), []
    for info in threadpool_info():
        row = {k: info.get(k) for k in keep}
        key = tuple(row.values())
        if key not in seen:
            seen.add(key)
            out.append(row)
    return sorted(out, key=lambda row: tuple(str(value) for value in row.values()))


def command_line(argv: Sequence[str] | None = None, program: str = "statinterp") -> str:
    """The command as typed: ``program`` followed by ``argv`` (default: this process's arguments)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return shlex.join([program, *args])


def run_provenance(command: str | Sequence[str], **extra: Any) -> dict[str, Any]:
    """What a report or model records about the run that made it: ``command`` (a string, or a list
    of arguments joined with shell quoting), ``date`` (UTC), ``versions``
    (:func:`library_versions`), ``platform``, ``thread_libraries`` and any ``extra`` fields."""
    if not isinstance(command, str):
        command = shlex.join(list(command))
    record: dict[str, Any] = {
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": library_versions(),
        "platform": f"{platform.system()} {platform.machine()}",
        "thread_libraries": thread_libraries(),
    }
    record.update(extra)
    return record


def _versions_text(versions: Mapping[str, str | None]) -> str:
    shown = [f"{name} {v}" for name, v in versions.items() if v is not None and name not in ("python", "statinterp")]
    missing = [name for name, v in versions.items() if v is None]
    text = f"Python {versions.get('python')}, statinterp {versions.get('statinterp')}"
    if shown:
        text += ", " + ", ".join(shown)
    if missing:
        text += "; not installed: " + ", ".join(missing)
    return text


def provenance_lines(record: Mapping[str, Any]) -> list[str]:
    """Markdown bullet lines for a record of :func:`run_provenance` (the versions, the platform and
    the thread libraries; the command and date are laid out by each report)."""
    lines = []
    if record.get("versions"):
        lines.append(f"- Versions: {_versions_text(record['versions'])} "
                     "(pinned in `constraints.txt`: `pip install -c constraints.txt -e .`)")
    if record.get("platform") or record.get("thread_libraries"):
        libs = ", ".join(f"{t.get('internal_api')} {t.get('version')} ({t.get('num_threads')} threads)"
                         for t in record.get("thread_libraries") or [])
        lines.append(f"- Platform: {record.get('platform', '?')}" + (f"; native thread pools: {libs}" if libs else ""))
    return lines


def version_differences(recorded: Mapping[str, str | None] | None,
                        now: Mapping[str, str | None] | None = None) -> list[tuple[str, str | None, str | None]]:
    """``(library, recorded, now)`` for every library whose recorded version differs from the
    running one (``statinterp`` itself excluded: its figures are what is being checked)."""
    if not recorded:
        return []
    now = library_versions(tuple(k for k in recorded if k not in ("python", "statinterp"))) if now is None else now
    return [(name, recorded.get(name), now.get(name)) for name in recorded
            if name != "statinterp" and recorded.get(name) != now.get(name)]


#: Significant digits of every float a report's JSON writes. Summation order (SIMD width, BLAS,
#: threads) moves a figure by a few units in its last bit (~1e-16 relative); rounded to 10 digits
#: such a figure is written the same unless it lies within those bits of a rounding boundary (about
#: one changed figure in 10**5). Every figure statinterp reports needs far fewer digits (NDCG is
#: shown to 3-4 decimals), and ``reproduce --check``'s tolerance (1e-9) is above the rounding.
FIGURE_DIGITS = 10
#: A float this close (relative) to a half-way point between two ``digits``-digit decimals is
#: rounded as the half-way point itself (half to even): exact p-values such as 277/2048 =
#: 0.13525390625 lie *on* such a point, and a last-bit difference must not round them both ways.
TIE_WINDOW = Decimal("1e-15")


def _fixed(value: float, digits: int) -> float:
    if value == 0.0 or not math.isfinite(value):
        return value
    exact = Decimal(value)  # the float's exact binary value
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    tie = exact.quantize(step, rounding=ROUND_FLOOR) + step / 2
    if abs(exact - tie) <= abs(exact) * TIE_WINDOW:
        exact = tie
    return float(exact.quantize(step, rounding=ROUND_HALF_EVEN))


def fixed_precision(value: Any, digits: int = FIGURE_DIGITS) -> Any:
    """``value`` with every float (also inside dicts, lists and tuples) rounded to ``digits``
    significant digits (half to even, a float within :data:`TIE_WINDOW` of a half-way point
    counting as on it); NaN, infinities, ints, bools and other objects unchanged."""
    if isinstance(value, float):
        return _fixed(float(value), digits)
    if isinstance(value, Mapping):
        return {k: fixed_precision(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [fixed_precision(v, digits) for v in value]
    return value


def report_json(doc: Any, **dumps: Any) -> str:
    """``doc`` as a report's JSON text (with a final newline), its floats at :data:`FIGURE_DIGITS`
    significant digits: the one writer of report JSON (``json.dumps`` options pass through)."""
    return json.dumps(fixed_precision(doc), **dumps) + "\n"
