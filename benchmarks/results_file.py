"""benchmarks/RESULTS.md is written by several benchmarks, each owning sections of its own.

``benchmarks.run`` rewrites the whole file; ``benchmarks.ingest``, ``benchmarks.shards``,
``benchmarks.find``, ``benchmarks.courtlistener_bulk`` and ``benchmarks.review`` each replace
only their section (a ``## `` heading and everything up to the next one). This module is the
one place that knows the headings and how a section is replaced or kept.
"""

from __future__ import annotations

from pathlib import Path

#: The first line of a results file a benchmark starts.
RESULTS_TITLE = "# statinterp performance results\n"
#: Heading of the section ``benchmarks.ingest`` writes.
INGEST_HEADING = "## Ingest (`statinterp ingest`)"
#: Heading of the section ``benchmarks.find`` writes.
FIND_HEADING = "## find: latency per term"
#: Heading of the section ``benchmarks.courtlistener_bulk`` writes.
CL_BULK_HEADING = "## CourtListener bulk files: join throughput and memory"
#: Heading of the section ``benchmarks.review`` writes.
REVIEW_HEADING = "## review: a label in continuous mode, an explanation"
#: Heading of the section ``benchmarks.shards`` writes.
SHARDS_HEADING = "## Shards on Dask"
#: Heading of the section ``benchmarks.pdf`` writes.
PDF_HEADING = "## PDF opinions: statinterp's reader against pdftotext -layout"
#: The sections ``benchmarks.run`` does not make and keeps when it rewrites the file, in order.
KEPT_BY_RUN = (INGEST_HEADING, SHARDS_HEADING, FIND_HEADING, CL_BULK_HEADING, REVIEW_HEADING, PDF_HEADING)


def shown_command(program: str, argv: list[str], names: dict[str, str]) -> str:
    """The command ``program argv...`` as RESULTS.md records it: an argument that is, or lies under,
    a folder of ``names`` (path -> name, e.g. the work folder -> ``WORK``) is written with the
    name (``WORK/RESULTS.md``), and any other absolute path as ``FILE``, so no machine's path is
    recorded."""
    def shown(arg: str) -> str:
        for folder, name in names.items():
            folder = folder.rstrip("/")
            if arg.rstrip("/") == folder:
                return name
            if arg.startswith(folder + "/"):
                return name + arg[len(folder):]
        return "FILE" if arg.startswith("/") else arg

    return " ".join([program, *(shown(a) for a in argv)])


def section_of(text: str, heading: str) -> str | None:
    """The section of ``text`` whose heading line starts with ``heading`` (through the line before
    the next ``## `` heading, or the end), or ``None`` when there is none."""
    start = _heading_at(text, heading)
    if start < 0:
        return None
    end = text.find("\n## ", start + len(heading))
    return text[start:end + 1 if end >= 0 else len(text)]


def splice_section(text: str, heading: str, section: str) -> str:
    """``text`` with its section under ``heading`` replaced by ``section`` (appended if absent)."""
    start = _heading_at(text, heading)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    end = text.find("\n## ", start + len(heading))
    rest = text[end + 1:] if end >= 0 else ""
    return text[:start] + section.rstrip("\n") + "\n" + ("\n" + rest if rest else "")


def write_section(path: Path, heading: str, section: str) -> None:
    """Replace (or append) the section under ``heading`` of the results file at ``path`` with
    ``section``; a missing file is started with the results' title."""
    text = path.read_text(encoding="utf-8") if path.exists() else RESULTS_TITLE
    path.write_text(splice_section(text, heading, section), encoding="utf-8")


def keep_sections(path: Path, new_text: str, headings: tuple[str, ...] = KEPT_BY_RUN) -> str:
    """``new_text`` with the sections under ``headings`` taken from the file at ``path`` (those the
    file has; ``new_text`` is returned as it is when the file cannot be read)."""
    try:
        old = path.read_text(encoding="utf-8")
    except OSError:
        return new_text
    for heading in headings:
        section = section_of(old, heading)
        if section is not None:
            new_text = splice_section(new_text, heading, section)
    return new_text


def _heading_at(text: str, heading: str) -> int:
    """Offset of the line starting with ``heading`` in ``text``, or -1."""
    if text.startswith(heading):
        return 0
    at = text.find("\n" + heading)
    return at + 1 if at >= 0 else -1
