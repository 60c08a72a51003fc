"""The citation statinterp makes for each opinion of the text study's set, for checking case names
by hand against each source's caption (issue 34: "every citation shows the full case name").

    python -m experiments.case_names_check --set SET [ENTRY ...]

Prints one tab-separated row per route of each entry: entry, route, the citation
(:func:`statinterp.corpus.pin_cites.format_cite` of the record's name, first citation, court and
date, as ``find`` cites a sentence without a pin), the name as read. Each CourtListener route's
plain text is also read as a ``.txt`` file (route ``cl-plain_text->txt``): the text reader names
it from its caption (:func:`statinterp.sources.cleaning.caption_name`), where the set's JSON
names it only by the entry's id.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from experiments.text_quality import read_route
from statinterp.corpus.pin_cites import format_cite


def rows(root: Path, only: list[str]) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    entries = sorted(p for p in root.iterdir() if p.is_dir() and (not only or p.name in only))
    for entry in entries:
        for route in sorted(r for r in entry.iterdir() if r.is_dir()):
            records, status = read_route(route)
            if not records:
                out.append((entry.name, route.name, f"<{status}>", ""))
            for r in records:
                cite = format_cite(r.name_abbreviation or r.name, r.official_citation, r.court, r.decision_date)
                out.append((entry.name, route.name, cite, r.name))
        for file in sorted(entry.glob("cl-plain_text/*.json")):
            body = json.loads(file.read_text(encoding="utf-8")).get("plain_text") or ""
            if not body.strip():
                continue
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp) / entry.name
                folder.mkdir()
                (folder / f"{entry.name}.txt").write_text(body, encoding="utf-8")
                records, status = read_route(folder)
            court = json.loads(file.read_text(encoding="utf-8")).get("court", "")
            for r in records:
                out.append((entry.name, "cl-plain_text->txt", format_cite(r.name, "", court, ""), r.name))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, required=True,
                        help="the study's set folder (python -m experiments.text_quality_set --out SET)")
    parser.add_argument("entries", nargs="*", help="only these entries")
    args = parser.parse_args(argv)
    for row in rows(args.set, args.entries):
        print("\t".join(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
