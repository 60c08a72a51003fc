"""Spaces the PDF sets that PDFium leaves out (issue 34).

``pdf/cand-04-0098-alvarado-fedex.pdf`` (N.D. Cal., *Alvarado v. FedEx Corp.*, 2005) sets each word
and each space between words as text of its own; four spaces are moved back over the end of the
word before them, PDFium drops them, and its text read "ofthe", "whichMichael", "ofplaintiffs’",
"ofany" (pdftotext parts them). The gap between those words is no wider than some gaps between
two letters of one word of that file ("o|f" 0.043 of the font's height, "f|t" 0.057, "f|a" 0.015),
so the rule reads the PDF's own space (a text object with no ink and no text in PDFium's text)
rather than a gap threshold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from statinterp.sources import pdf as pdf_module
from statinterp.sources.pdf import _with_spaces, read_pdf
from statinterp.sources.records import CaseRecord

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "pdf"
CAND_PDF = GENUINE / "cand-04-0098-alvarado-fedex.pdf"


def _words(path: Path) -> list[str]:
    record = read_pdf(path)
    assert isinstance(record, CaseRecord), record
    return " ".join(p for op in record.opinions for p in [*op.paragraphs, *op.footnotes]).split()


def test_words_set_apart_by_a_dropped_space_are_parted():
    words = _words(CAND_PDF)
    text = " ".join(words)
    for joined in ("ofthe", "whichMichael", "ofplaintiffs’", "ofany"):
        assert joined not in words  # before: all four
    assert "because none of the plaintiffs have identified" in text
    assert "employment decision in which Michael Pigors" in text
    assert "in the absence of any order by the Los Angeles Court" in text
    assert "one of plaintiffs’ lawyers" in text


def test_only_the_dropped_spaces_change_the_text(monkeypatch):
    with_rule = _words(CAND_PDF)
    monkeypatch.setattr(pdf_module, "_dropped_spaces", lambda page, raw, text: set())
    without = _words(CAND_PDF)
    assert len(with_rule) == len(without) + 4
    assert [w for w in without if w not in with_rule] == ["ofthe", "whichMichael", "ofplaintiffs’", "ofany"]


def test_spaces_move_the_marks_after_them():
    seg, marks = _with_spaces("ofthe cite12text", [2, 10], [(10, 12, "12")])
    assert seg == "of the cite 12text"
    assert [seg[s:e] for s, e, _ in marks] == ["12"]


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(p for p in GENUINE.glob("*.pdf") if p != CAND_PDF), ids=lambda p: p.stem)
def test_no_other_genuine_pdf_changes(path, monkeypatch):
    record = read_pdf(path)
    if not isinstance(record, CaseRecord):
        assert "no text layer" in record.reason or "scan" in path.stem, record
        return
    with_rule = _words(path)
    monkeypatch.setattr(pdf_module, "_dropped_spaces", lambda page, raw, text: set())
    assert _words(path) == with_rule  # no word newly split
