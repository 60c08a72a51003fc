"""PDF opinions: CPU time of statinterp's reader against ``pdftotext -layout`` on the same files.

    python -m benchmarks.pdf [--files DIR] [--repeat 5] [--write]

For each ``.pdf`` in DIR (default: the genuine PDFs of tests/fixtures/genuine/pdf/; files with
no text layer are left out), CPU seconds (user + system) of one read, the median of ``--repeat``
runs:

* ``pdftotext``: ``pdftotext -layout FILE /dev/null`` (poppler-utils), a child process: its
  start-up is counted, as it is when a user runs it;
* ``statinterp``: :func:`statinterp.sources.pdf.read_pdf` in this process (modules imported and
  one warm-up read before): the text layer, the layout (headers, footnotes, marks, paragraphs,
  pages), the cleaning step and the caption -- the whole record ``ingest`` stores;
* ``pdfium floor``: PDFium opening the file and extracting each page's text, nothing else (what
  no reader built on it can go under).

Prints a Markdown table; ``--write`` puts it in its section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.results_file import PDF_HEADING as HEADING
from benchmarks.results_file import write_section

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILES = ROOT / "tests" / "fixtures" / "genuine" / "pdf"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pdftotext_cpu(path: Path, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        before = _child_cpu()
        subprocess.run(["pdftotext", "-layout", str(path), os.devnull], stderr=subprocess.DEVNULL, check=False)
        runs.append(_child_cpu() - before)
    return statistics.median(runs)


def reader_cpu(path: Path, repeat: int) -> float:
    from statinterp.sources.pdf import read_pdf

    read_pdf(path)
    runs = []
    for _ in range(repeat):
        before = time.process_time()
        read_pdf(path)
        runs.append(time.process_time() - before)
    return statistics.median(runs)


def floor_cpu(path: Path, repeat: int) -> tuple[float, int]:
    import pypdfium2 as pdfium

    runs = []
    pages = 0
    for _ in range(repeat):
        before = time.process_time()
        doc = pdfium.PdfDocument(path.read_bytes())
        pages = len(doc)
        for i in range(pages):
            page = doc[i]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
        doc.close()
        runs.append(time.process_time() - before)
    return statistics.median(runs), pages


def run(files: list[Path], repeat: int) -> str:
    from statinterp.sources.pdf import read_pdf
    from statinterp.sources.records import CaseRecord

    rows = []
    ratios: list[tuple[float, str]] = []
    floors: dict[str, float] = {}
    total = [0.0, 0.0, 0.0]
    for path in files:
        if not isinstance(read_pdf(path), CaseRecord):
            continue  # no text layer, damaged: nothing to compare
        ours = reader_cpu(path, repeat)
        theirs = pdftotext_cpu(path, repeat)
        floor, pages = floor_cpu(path, repeat)
        floors[path.name] = floor / theirs
        ratios.append((ours / theirs, path.name))
        total[0] += theirs
        total[1] += ours
        total[2] += floor
        rows.append(f"| `{path.name}` | {pages} | {path.stat().st_size / 1024:.0f} KB | {theirs * 1000:.0f} | "
                     f"{ours * 1000:.0f} | {floor * 1000:.0f} | {ours / theirs:.2f} |")
    load = os.getloadavg()[0]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    version = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True, check=False).stderr.split("\n")[0]
    head = [HEADING, "",
            f"`python -m benchmarks.pdf --repeat {repeat}` ({when}; {platform.machine()}, {os.cpu_count()} cores "
            f"shared with other work, load average {load:.1f}; Python {platform.python_version()}; {version}). "
            "CPU ms of one read, the median of the runs. `pdftotext`: `pdftotext -layout FILE /dev/null`, a child "
            "process (its start-up counted); `statinterp`: `read_pdf` (text layer, layout, cleaning, caption: "
            "the record `ingest` stores), modules loaded; `pdfium floor`: PDFium opening the file and "
            "extracting each page's text, nothing else.", "",
            "| file | pages | size | pdftotext ms | statinterp ms | pdfium floor ms | statinterp / pdftotext |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    tail = [f"| all | | | {total[0] * 1000:.0f} | {total[1] * 1000:.0f} | {total[2] * 1000:.0f} | "
            f"{total[1] / total[0]:.2f} |", "",
            f"Over all the files statinterp's reader took {total[1] / total[0]:.2f}× the CPU time of "
            f"`pdftotext -layout` (goal: at most 2×; per file {min(ratios)[0]:.2f}× to {max(ratios)[0]:.2f}×, the "
            f"highest `{max(ratios)[1]}`, whose PDFium floor alone is "
            f"{floors[max(ratios)[1]]:.2f}× pdftotext). PDFium's own text extraction is {total[2] / total[0]:.2f}× "
            f"of it; the rest ({(total[1] - total[2]) / total[0]:.2f}×) is the reader's Python: a few character "
            "boxes per line (PDFium calls through ctypes, untyped in the loops over characters and objects), "
            "marks, headers, footnotes, paragraphs, and the shared cleaning step (`clean_opinion`). Each page's "
            "objects are scanned once for spaces PDFium left out (only a space moved back over the word before "
            "it is looked up); for a footnote rule only on a page after one with footnotes where no mark or "
            "smaller font shows where they start, or on a page where a line in the body's size opens with a "
            "mark high on the page.", ""]
    return "\n".join(head + rows + tail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=Path, default=DEFAULT_FILES, help="a folder of PDFs")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="put the table in benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    if shutil.which("pdftotext") is None:
        print("pdftotext is not installed (apt-get install poppler-utils)", file=sys.stderr)
        return 2
    files = sorted(p for p in args.files.iterdir() if p.suffix.lower() == ".pdf")
    section = run(files, args.repeat)
    print(section)
    if args.write:
        write_section(ROOT / "benchmarks" / "RESULTS.md", HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
