"""Where the studies write (experiments/common.py): never over a committed report unless asked."""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
from pathlib import Path

import pytest

from experiments.common import REPORTS, RESULTS, ROOT, add_output_options, out_options, output_path

#: Every study with a report, and the report's name (``reports/NAME.md``).
STUDIES = {"alignment": "segmentation", "citation_agreement": "citation_agreement", "feedback_simulation": "feedback",
           "find_segmentation": "find_segmentation", "find_target": "find", "learned_alternatives":
           "learned_alternatives", "learned_limits": "learned_limits", "text_quality": "text_quality"}
#: Modules with a ``main`` that are checking tools, not studies: they print a table to be read by
#: hand and write no report (case_names_check: the citation of every route of the text study's set;
#: route_dump: what readers store, dumped and compared before and after a change).
TOOLS = {"case_names_check", "route_dump"}


def parse(*argv: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    add_output_options(ap, "study")
    return ap.parse_args(list(argv))


def test_studies_list_is_every_module_with_a_main():
    modules = {p.stem for p in (ROOT / "experiments").glob("*.py") if not p.stem.startswith("test_")
               if "def main(" in p.read_text(encoding="utf-8")}
    assert modules == set(STUDIES) | TOOLS


def test_default_is_a_folder_no_clone_commits():
    out = output_path(parse(), "study")
    assert out == RESULTS / "study.md"
    assert "experiment-results/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert out_options(parse(), out) == ""  # the recorded command needs no --out for the default


@pytest.mark.parametrize("given", ["reports", "reports/", "reports/study.md", str(REPORTS / "study.md")])
def test_reports_needs_force_and_then_records_it(given, capsys):
    with pytest.raises(SystemExit) as exc:
        output_path(parse("--out", given), "study")
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--force" in line and "committed" in line
    args = parse("--out", given, "--force")
    out = output_path(args, "study")
    assert out == REPORTS / "study.md" or out.resolve() == (REPORTS / "study.md").resolve()
    # the command a report records writes the same file again
    assert out_options(args, out) == " --out reports/study.md --force"


def test_elsewhere_is_written_without_force(tmp_path):
    assert output_path(parse("--out", str(tmp_path)), "study") == tmp_path / "study.md"
    assert output_path(parse("--out", str(tmp_path / "x.md")), "study") == tmp_path / "x.md"


@pytest.mark.parametrize("module", sorted(STUDIES))
def test_every_study_refuses_reports_before_any_work(module, capsys, monkeypatch):
    """Without --force a study stops at once (exit 2, one line), whatever else it would do."""
    study = importlib.import_module(f"experiments.{module}")
    report = REPORTS / f"{STUDIES[module]}.md"
    before = report.read_bytes() if report.exists() else None
    with pytest.raises(SystemExit) as exc:
        study.main(["--data", "/nonexistent", "--out", "reports/"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{STUDIES[module]}.md" in line and "--force" in line
    assert (report.read_bytes() if report.exists() else None) == before


def test_readme_study_commands_write_to_reports_only_with_force():
    """A newcomer copying the study commands of the README and the manual (docs/) never overwrites a
    committed report; the commands that regenerate one say so with --force."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    commands = re.findall(r"python -m experiments\.\w+[^\n#`]*", readme)
    assert commands, "neither the README nor the manual shows a study command"
    for command in commands:
        args = shlex.split(command.replace("\\", ""))
        if "--out" in args:
            out = Path(args[args.index("--out") + 1])
            in_reports = (ROOT / out).resolve().is_relative_to(REPORTS.resolve())
            assert not in_reports or "--force" in args, command
