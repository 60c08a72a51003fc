"""benchmarks/results_file.py: each benchmark's sections of RESULTS.md survive the others' rewrites."""

from __future__ import annotations

from pathlib import Path

from benchmarks.results_file import (
    FIND_HEADING,
    INGEST_HEADING,
    RESULTS_TITLE,
    keep_sections,
    section_of,
    splice_section,
    write_section,
)

OLD = (f"# results\n\n## Performance\n\nold run\n\n{INGEST_HEADING}: throughput\n\ningest figures\n\n"
       f"{FIND_HEADING} and size on disk\n\nfind figures\n### Per term\n\nrows\n")


def test_section_of_runs_to_the_next_top_heading_or_the_end():
    assert section_of(OLD, INGEST_HEADING) == f"{INGEST_HEADING}: throughput\n\ningest figures\n\n"
    assert section_of(OLD, FIND_HEADING).endswith("### Per term\n\nrows\n")
    assert section_of(OLD, "## Missing") is None


def test_splice_replaces_only_its_section_or_appends_it():
    text = splice_section(OLD, INGEST_HEADING, f"{INGEST_HEADING}: new\n\nnew figures\n")
    assert "ingest figures" not in text and "new figures" in text
    assert "find figures" in text and "old run" in text
    appended = splice_section("# results\n", FIND_HEADING, f"{FIND_HEADING}\n\nx\n")
    assert appended == f"# results\n\n{FIND_HEADING}\n\nx\n"


def test_keep_sections_carries_ingest_and_find_into_a_rewritten_file(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(OLD, encoding="utf-8")
    rewritten = keep_sections(path, "# results\n\n## Performance\n\nnew run\n")
    assert "new run" in rewritten and "old run" not in rewritten
    assert "ingest figures" in rewritten and "find figures" in rewritten and "### Per term" in rewritten
    assert rewritten.index(INGEST_HEADING) < rewritten.index(FIND_HEADING)
    assert keep_sections(tmp_path / "absent.md", "# new\n") == "# new\n"


def test_a_heading_mentioned_inside_a_line_is_not_a_section():
    text = f"# results\n\nsee `{INGEST_HEADING}` below\n"
    assert section_of(text, INGEST_HEADING) is None


def test_a_recorded_command_names_folders_instead_of_machine_paths():
    from benchmarks.results_file import shown_command

    argv = ["--workdir", "/tmp/w/", "--out", "/tmp/w/R.md", "--data", "/d/data", "--x", "/tmp/wx"]
    command = shown_command("python -m benchmarks.run", argv, {"/tmp/w/": "WORK", "/d/data": "DATA"})
    # /tmp/wx is not under /tmp/w: any other absolute path is written as FILE
    assert command == "python -m benchmarks.run --workdir WORK --out WORK/R.md --data DATA --x FILE"


def test_recorded_data_folder_is_never_a_machine_path(tmp_path):
    from benchmarks.run import shown_data

    shared = tmp_path / "elsewhere" / "shared" / "data" / "statutory_interpretation"
    shared.mkdir(parents=True)
    assert shown_data(str(shared)) == "../shared/data/statutory_interpretation"
    assert shown_data(str(tmp_path)) == "DATA"


def test_rendering_the_run_report_again_keeps_the_ingest_and_find_sections(tmp_path, capsys):
    import shutil

    from benchmarks import run

    figures = tmp_path / "RESULTS.json"
    shutil.copy(Path(__file__).parent / "RESULTS.json", figures)
    out = tmp_path / "RESULTS.md"
    out.write_text(f"# old\n\n{INGEST_HEADING}: kept\n\ningest body\n\n{FIND_HEADING}: kept\n\nfind body\n")
    assert run.main(["--render", str(figures), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## 1–2. Floor ratio" in text
    assert section_of(text, INGEST_HEADING) == f"{INGEST_HEADING}: kept\n\ningest body\n\n"
    assert section_of(text, FIND_HEADING).startswith(f"{FIND_HEADING}: kept\n\nfind body")


def test_write_section_replaces_its_section_in_the_file_or_starts_one(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(OLD, encoding="utf-8")
    write_section(path, INGEST_HEADING, f"{INGEST_HEADING}\n\nnew figures\n")
    text = path.read_text(encoding="utf-8")
    assert "new figures" in text and "ingest figures" not in text and "find figures" in text
    fresh = tmp_path / "new.md"
    write_section(fresh, FIND_HEADING, f"{FIND_HEADING}\n\nx\n")
    assert fresh.read_text(encoding="utf-8") == f"{RESULTS_TITLE}\n{FIND_HEADING}\n\nx\n"
