"""Paragraphs of PDF-born text whose pages are set at different left margins, with paragraph
numbers in the margin (issue 34: the PDF and CourtListener's text of it should give the same
sentences).

``ncsc-2022-1-pp1-6.txt`` (pages 1-6 of CourtListener's text of the Supreme Court of North
Carolina's 2022-NCSC-1, `pdftotext -layout`): "¶1         Gift Surplus, LLC, ... sued Governor"
over "     Roy Cooper and several ...", and pdftotext sets page 1's body at column 5, page 2's at 7.
Each line after a paragraph's first was taken for an indented first line, so most sentences
were cut at a line's end ("... sued Governor" / "Roy Cooper ..."), and "¶ 16" stayed inside a
paragraph. ``tax-court-memo-2020-26.txt``: page 1's syllabus paragraphs were run together.
"""

from __future__ import annotations

from statinterp.sources.cleaning import clean_plain, strip_markers
from tests.support.paths import FIXTURES

PDF_TEXT = FIXTURES / "genuine" / "pdf-modern"


def _paragraphs(name: str) -> list[str]:
    return [strip_markers(p) for p in clean_plain((PDF_TEXT / name).read_text(encoding="utf-8")).paragraphs]


def test_a_paragraph_number_in_the_margin_does_not_cut_its_paragraph():
    paragraphs = _paragraphs("ncsc-2022-1-pp1-6.txt")
    first = next(p for p in paragraphs if p.startswith("Gift Surplus, LLC, and Sandhill Amusements"))
    assert "sued Governor Roy Cooper and several state law enforcement officials" in first
    assert "whether plaintiffs’ new game, as modified since plaintiffs last appeared" in first
    ninth = next(p for p in paragraphs if p.startswith("A divided panel of the Court of Appeals"))
    assert "dismissed the appeal in Sandhill Amusements, Inc. v. Sheriff of Onslow Cty." in ninth  # page 2, column 7
    assert not any(p.startswith(("Roy Cooper", "Amusements, Inc. v. Sheriff")) for p in paragraphs)


def test_a_page_at_another_margin_keeps_its_paragraphs_apart():
    paragraphs = _paragraphs("ncsc-2022-1-pp1-6.txt")
    assert any(p.startswith("This case follows from the North Carolina General Assembly’s") for p in paragraphs)
    assert any(p.startswith("Following enactment of the law, purveyors of video-game kiosks") for p in paragraphs)


def test_an_indented_first_line_on_a_page_of_its_own_margin_starts_a_paragraph():
    paragraphs = _paragraphs("tax-court-memo-2020-26.txt")
    assert any(p.startswith("For Federal tax purposes, M LLC was a disregarded entity") for p in paragraphs)


def test_each_numbered_paragraph_gets_its_number():
    """With whole paragraphs, every "¶ N" of those pages is a paragraph's number (before: 3 and 6
    were lost inside paragraphs cut at a line's end)."""
    opinion = clean_plain((PDF_TEXT / "ncsc-2022-1-pp1-6.txt").read_text(encoding="utf-8"))
    assert [n for n in opinion.numbers if n] == [str(k) for k in range(1, 11)]
