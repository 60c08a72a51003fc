"""benchmarks/results_file.py: each benchmark's sections of RESULTS.md survive the others' rewrites."""

from __future__ import annotations

from benchmarks.results_file import FIND_HEADING, INGEST_HEADING, keep_sections, section_of, splice_section

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
