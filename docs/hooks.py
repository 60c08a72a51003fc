"""MkDocs hook: the figures of the committed reports (reports/*.png) are served beside the report
pages that include them (docs/research/reports.md), so a report's ``![...](core.png)`` works in
the manual as it does in reports/ itself, without a copy of the figure in docs/."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

REPORTS = Path(__file__).resolve().parent.parent / "reports"


def on_files(files: Files, config) -> Files:
    for figure in sorted(REPORTS.glob("*.png")):
        files.append(File.generated(config, f"research/{figure.name}", abs_src_path=str(figure)))
    return files
