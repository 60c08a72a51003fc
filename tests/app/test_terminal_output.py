"""Tables printed to a terminal show control characters instead of sending them (issue 35):
a case name or sentence carrying an escape sequence (OSC 52 clipboard write, OSC 8 link, a
window-title change) is shown as ``\\x1b...``, never acted on."""

from __future__ import annotations

import copy
import json

import pytest

from statinterp.app.output import terminal_safe
from tests.support.cli import assert_one_line_error, run_main
from tests.support.corpora import TINY

CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write "echo pwned" to the clipboard
LINK = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # OSC 8 hyperlink
TITLE = "\x1b]0;pwned\x07"  # window title
CSI = "\x9b2J"  # C1 CSI: clear the screen


def test_terminal_safe_escapes_c0_c1_and_del_only():
    assert terminal_safe(CLIPBOARD) == "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"
    assert terminal_safe(CSI + "\x7f") == "\\x9b2J\\x7f"
    assert terminal_safe("a\nb\tc", keep_newlines=True) == "a\nb\tc"
    assert terminal_safe("a\nb\r") == "a\\x0ab\\x0d"
    assert terminal_safe("café § – “quoted” ü") == "café § – “quoted” ü"  # printable text is untouched
    assert terminal_safe("\udcff") == "\\xff"  # a lone surrogate cannot reach the terminal either


@pytest.fixture
def hostile_data(corpus_builder):
    spec = copy.deepcopy(TINY)
    term = spec["red_car"]
    lines = term["cases"]["c1"][1]["c1-o1"]
    lines[0] = f"The red car {CLIPBOARD}near the road."
    lines[1] = f"A dog in the park. The blue car {LINK} in the city."
    term["sentences"][0] = ("s1", "c1-o1", 0, lines[0], "high value")
    term["sentences"][1] = ("s2", "c1-o1", 1, f"The blue car {LINK} in the city.", "no value")
    records = corpus_builder.records(spec)
    for case in records["red_car"]["case"].values():
        case["short_name"] = case["name"] = f"Case {TITLE}{CSI}v. State"
    return corpus_builder.write(records)


def _raw_controls(text: str) -> list[str]:
    return sorted({c for c in text if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) < 0xA0})


@pytest.mark.slow
def test_rank_table_shows_escape_sequences_instead_of_sending_them(hostile_data, capsys):
    code, out, err = run_main(capsys, "rank", "red car", "--data", str(hostile_data), "-m", "TF-ISF-p", "-q",
                              "--no-cache", "--top", "0")
    assert code == 0, err
    assert _raw_controls(out) == []
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in out and "\\x1b]0;pwned\\x07\\x9b2J" in out
    assert "\\x1b]8;;http://evil.example/" in out
    # JSON keeps the text exactly (escaped by JSON itself)
    code, out, _ = run_main(capsys, "rank", "red car", "--data", str(hostile_data), "-m", "TF-ISF-p", "-q",
                            "--no-cache", "--format", "json", "--top", "0")
    assert code == 0 and "\x1b" not in out
    texts = [r["text"] for r in json.loads(out)["results"]]
    assert any(CLIPBOARD in t for t in texts)


def test_explain_and_evaluate_tables_are_escaped_too(hostile_data, capsys):
    code, out, err = run_main(capsys, "explain", "red car", "s1", "--data", str(hostile_data), "-m", "TF-ISF-p",
                              "-q", "--no-cache")
    assert code == 0, err
    assert _raw_controls(out) == [] and "\\x1b]52" in out
    code, out, err = run_main(capsys, "evaluate", "--data", str(hostile_data), "-m", "TF-ISF-p", "-q", "--no-cache")
    assert code == 0, err
    assert _raw_controls(out) == []


def test_an_error_line_quoting_input_is_escaped(capsys):
    code, _, err = run_main(capsys, "rank", "vehicle", "-m", f"TF-ISF{TITLE}", "-q", "--no-cache")
    line = assert_one_line_error(code, err)
    assert _raw_controls(line) == [] and "pwned" in line


def test_collection_info_and_the_ingest_summary_are_escaped(tmp_path, capsys):
    """A source file whose name carries an escape sequence: the ingest summary and `collection
    info` show it, never send it (the JSON form escapes it as JSON does)."""
    folder = tmp_path / f"texts{TITLE}"
    folder.mkdir()
    (folder / f"case{CLIPBOARD}.txt").write_text("Smith v. Jones\n\nThe red car stopped.\n\nIt drove on.\n",
                                                 encoding="utf-8")
    code, out, err = run_main(capsys, "ingest", str(folder), "--collection", str(tmp_path / "c"), "-q",
                              "--no-citations")
    assert code == 0, err
    assert _raw_controls(out) == []
    code, out, err = run_main(capsys, "collection", "info", str(tmp_path / "c"))
    assert code == 0, err
    assert _raw_controls(out) == [] and "\\x1b]0;pwned" in out
    code, out, err = run_main(capsys, "collection", "info", str(tmp_path / "c"), "--format", "json")
    assert TITLE in json.loads(out)["sources"][0]["path"]


def test_escaping_is_the_terminal_edges_not_the_librarys():
    """The library's explanation keeps the sentence's text as it is (the review page shows it as
    HTML, JSON readers get it exactly); ``statinterp explain`` escapes it for the terminal
    (:func:`test_explain_and_evaluate_tables_are_escaped_too`)."""
    from statinterp.evaluation.explain import format_explanation

    expl = {"method": "TF-ISF", "sentence": "s1", "term": "red car", "rank": 1, "candidates": 2, "score": 1.0,
            "label": None, "text": f"The red car {CLIPBOARD}near the road.", "components": {"score": 1.0}}
    assert CLIPBOARD in format_explanation(expl)
    assert CLIPBOARD in json.loads(format_explanation(expl, "json"))["text"]
