"""What statinterp stores from every route of a text-quality set, or from a folder of PDFs, as one
JSON file, and which entries two such files differ in: the check behind a claim that a change to
a reader leaves the stored text of other opinions as it was (issue 34's notes,
experiments/text_quality_notes.md).

Run from the project root::

    python -m experiments.route_dump --set SET --out before.json      # every route of a set
    python -m experiments.route_dump --pdfs DIR --out before.json     # every *.pdf under DIR
    # ... change the code ...
    python -m experiments.route_dump --set SET --out after.json
    python -m experiments.route_dump --compare before.json after.json

``SET`` is a folder ``experiments.text_quality_set`` wrote. Each entry holds what a reader stores
of an opinion: its name, date, head matter, and each opinion's paragraphs, footnotes, page starts
and paragraph numbers (or the reason it was skipped). ``--compare`` prints the entries that
differ, the first differing value of each, and exits 1 when any does (0 when none).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from statinterp.sources.records import CaseRecord


def record_summary(record: Any) -> Any:
    """What a reader stored of one case: a :class:`CaseRecord`'s name, date, head matter and
    opinions (paragraphs, footnotes, page starts, paragraph numbers), or the skipped record's reason."""
    if not isinstance(record, CaseRecord):
        return str(getattr(record, "reason", record))
    return [record.name, record.decision_date, record.head_matter,
            [[list(op.paragraphs), list(op.footnotes), [[list(p) for p in starts] for starts in op.page_starts],
              list(op.numbers)] for op in record.opinions]]


def dump_set(set_dir: Path) -> dict[str, Any]:
    """Every route of every entry of a text-quality set, keyed "entry/route"."""
    from experiments.text_quality import read_route

    out: dict[str, Any] = {}
    for entry in sorted(p for p in set_dir.iterdir() if p.is_dir()):
        for route in sorted(r for r in entry.iterdir() if r.is_dir()):
            records, status = read_route(route)
            out[f"{entry.name}/{route.name}"] = [status, *[record_summary(r) for r in records]]
    return out


def dump_pdfs(folder: Path) -> dict[str, Any]:
    """Every PDF under ``folder`` as :func:`statinterp.sources.pdf.read_pdf` reads it, keyed by its
    path under ``folder``."""
    from statinterp.sources.pdf import read_pdf

    return {str(p.relative_to(folder)): record_summary(read_pdf(p)) for p in sorted(folder.rglob("*.pdf"))}


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Where two dumped values first differ ("[2][0][13]: 'old' != 'new'")."""
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
        return f"{where}: {len(a)} items != {len(b)} items"
    return f"{where}: {str(a)[:160]!r} != {str(b)[:160]!r}"


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per entry that differs between two dumps (or is in one only)."""
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in before or key not in after:
            lines.append(f"{key}: only in {'the second' if key not in before else 'the first'}")
        elif before[key] != after[key]:
            lines.append(f"{key}{first_difference(before[key], after[key])}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--set", type=Path, help="a folder experiments.text_quality_set wrote")
    what.add_argument("--pdfs", type=Path, help="a folder of PDFs (searched recursively)")
    what.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                      help="two dumps: print the entries that differ; exit 1 if any does")
    parser.add_argument("--out", type=Path, help="the JSON file to write (with --set or --pdfs)")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        lines = compare(before, after)
        print("\n".join(lines) if lines else f"no difference in {len(before)} entries")
        return 1 if lines else 0
    if args.out is None:
        parser.error("--out is needed with --set or --pdfs")
    folder = args.set or args.pdfs
    if not folder.is_dir():
        print(f"error: {folder}: no such folder", file=sys.stderr)
        return 2
    dump = dump_set(folder) if args.set else dump_pdfs(folder)
    args.out.write_text(json.dumps(dump, ensure_ascii=False), encoding="utf-8")
    print(f"{len(dump)} entries written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
