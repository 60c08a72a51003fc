"""Pleading paper and page numbers, in both routes of the same genuine orders (issue 34).

* ``pdf/cand-04-0098-alvarado-fedex.pdf`` (N.D. Cal., *Alvarado v. FedEx Corp.*, 2005): pleading
  paper, its lines numbered 1-28 in a column at x 74-86, the court's name set sideways in the left
  margin ("United States District Court / For the Northern District of California", read
  upwards), a footnote on page 1, a printed "2" at page 2's foot and none on page 1. Before: page 1
  was labelled 28 (its last line number taken for the page's number) and the sideways name was
  stored as sentences ("U n ited", "S ta te s").
* ``pdf-modern/cand-04-0098.txt``: ``pdftotext -layout -enc UTF-8`` of that PDF (CourtListener's
  ``plain_text`` of it). The margin's name pushes the line numbers to column 74, so the rule that
  wanted them within 5 spaces of the margin missed them: "13 14 By letter briefs,1 ..." was text,
  the footnote stayed in the body.
* ``pdf/ca10-21-800-liebowitz.pdf`` and ``pdf-modern/ca10-21-800.txt`` (Tenth Circuit order, *In re
  Liebowitz*, 2021): one page, no printed page number. The PDF route pinned it to page 1, the text
  route to no page.

These courts were held apart in the text-quality study until this session; the rules below are
structural (a column of numbers counting 1, 2, 3, ... evenly spaced; a character's angle), with no
court's text in them.
"""

from __future__ import annotations

import re

from statinterp.sources.cleaning import _drop_line_numbers, clean_plain, strip_markers
from statinterp.sources.pdf import _Line, _line_numbers, _printed, layout
from statinterp.sources.records import OpinionRecord
from tests.support.genuine import GENUINE, pdf_opinion, text_opinion

CAND_PDF = GENUINE / "pdf" / "cand-04-0098-alvarado-fedex.pdf"
CAND_TEXT = GENUINE / "pdf-modern" / "cand-04-0098.txt"
CA10_PDF = GENUINE / "pdf" / "ca10-21-800-liebowitz.pdf"
CA10_TEXT = GENUINE / "pdf-modern" / "ca10-21-800.txt"


def _page_of(op: OpinionRecord, quote: str) -> str | None:
    """The page the sentence holding ``quote`` starts on (the last page start at or before it)."""
    page = None
    for text, starts in zip(op.paragraphs, op.page_starts, strict=False):
        at = text.find(quote)
        for offset, label in starts:
            if at < 0 or offset <= at:
                page = label
        if at >= 0:
            return page
    raise AssertionError(f"{quote!r} is in no paragraph")


# --- the PDF ------------------------------------------------------------------------------------

def test_pleading_line_numbers_are_never_the_page_number():
    lay = layout(CAND_PDF.read_bytes())
    assert lay.page_labels == ["1", "2"]  # before: ["28", "2"]
    op = pdf_opinion(CAND_PDF)
    assert _page_of(op, "defendant seeks an order quashing a subpoena") == "1"
    assert _page_of(op, "FedEx seeks to quash the subpoena") == "1"
    assert _page_of(op, "The Court agrees with plaintiff that") == "2"
    assert not any(re.match(r"\d", p) for p in op.paragraphs)


def test_text_set_sideways_in_the_margin_leaves_the_body():
    lay = layout(CAND_PDF.read_bytes())
    body = "\n".join(strip_markers(p) for p in lay.paragraphs)
    assert "U n" not in body and "S ta" not in body and "ifo rn" not in body
    assert "United States District Court" not in body  # the margin's (the heading is in capitals)
    assert "For the Northern District of California" not in body
    assert "United States District Court" in lay.dropped  # kept aside as a whole line, read upwards
    assert "For the Northern District of California" in lay.dropped
    # every paragraph is the order's: none is a piece of a word (before: 37 paragraphs, 23 of them pieces)
    assert all(len(p.split()) > 1 or p in ("Defendant.", "/") for p in map(strip_markers, lay.paragraphs))
    assert len(lay.paragraphs) == 14


def test_footnote_of_the_pleading_pdf_is_stored_apart():
    op = pdf_opinion(CAND_PDF)
    assert len(op.footnotes) == 1 and op.footnotes[0].startswith("Defendant’s letter brief dated July 14, 2005")
    assert "By letter briefs, defendant seeks" in "\n".join(op.paragraphs)


def _column(numbers, x1: float = 86.0, top: float = 712.0, gaps: tuple[float, ...] = (24.0, 22.5)) -> list[_Line]:
    out, y = [], top
    for k, n in enumerate(numbers):
        out.append(_Line(str(n), x1 - 6 * len(str(n)), x1, y, 13.3, 0))
        y -= gaps[k % len(gaps)]
    return out


def test_a_column_of_numbers_is_pleading_paper_only_when_evenly_spaced_and_counting():
    column = _column(range(1, 29))
    page_number = _Line("2", 339.0, 344.6, 50.2, 13.3, 0)  # below the column, in the page's centre
    found = _line_numbers([*column, page_number])
    assert found == {id(ln) for ln in column}
    assert _line_numbers(_column(range(1, 12))) == set()  # too few: a list, not a page's lines
    assert _line_numbers(_column(range(1, 29), gaps=(24.0, 60.0))) == set()  # not evenly spaced
    shuffled = _column([1, 2, 3, 5, 4] + list(range(6, 29)))
    assert len(_line_numbers(shuffled)) < len(shuffled)  # only the numbers that count on


def test_the_page_number_goes_on_from_the_page_before_else_is_centred():
    left = _Line("7", 72.0, 78.0, 40.0, 12.0, 0)
    centre = _Line("9", 303.0, 309.0, 40.0, 12.0, 0)
    assert _printed([], 612.0, 3) is None
    assert _printed([(7, left), (9, centre)], 612.0, 7) == 7  # agrees with the page sequence
    assert _printed([(7, left), (9, centre)], 612.0, 4) == 9  # else the centred one
    assert _printed([(7, left)], 612.0, 4) == 7


# --- CourtListener's text of the PDF (pdftotext -layout) ------------------------------------------

def test_line_numbers_in_column_74_leave_the_text():
    op = text_opinion(CAND_TEXT)
    body = "\n".join(op.paragraphs)
    assert not re.search(r"(?:^|\s)\d{1,2}\s+\d{1,2}\s", body)  # before: "13 14 By letter briefs,1 ..."
    assert not any(re.fullmatch(r"[\d\s]+", p) for p in op.paragraphs)
    assert "one of plaintiffs’ lawyers in this matter is also counsel of record" in body  # before: "lawyers 26"
    assert "United States District Court" not in body and "For the Northern District" not in body
    assert len(op.paragraphs) < 15  # before: 42


def test_footnote_of_the_pleading_text_is_recognised_and_its_mark_leaves():
    op = text_opinion(CAND_TEXT)
    body = "\n".join(op.paragraphs)
    assert "By letter briefs, defendant seeks an order quashing a subpoena" in body  # before: "briefs,1"
    assert len(op.footnotes) == 1 and op.footnotes[0].startswith("Defendant’s letter brief dated July 14, 2005")
    assert "Defendant’s letter brief" not in body


def test_pages_of_the_pleading_text_agree_with_the_pdf():
    text, pdf = text_opinion(CAND_TEXT), pdf_opinion(CAND_PDF)
    for quote, page in (("FedEx seeks to quash the subpoena", "1"), ("The Court agrees with plaintiff that", "2"),
                        ("in the Satchell case", "2")):
        assert _page_of(text, quote) == _page_of(pdf, quote) == page


def test_line_numbers_at_the_end_of_lines_leave_too():
    # the same page with pdftotext setting the number column after the text (right of the body)
    page = CAND_TEXT.read_text(encoding="utf-8").split("\f")[1].split("\n")
    moved = []
    for ln in page:
        m = re.match(r"^\s*(\d{1,2})(?=\s|$)(.*)$", ln)
        moved.append(f"{m.group(2).rstrip():<200}{m.group(1):>3}" if m else ln)
    out = _drop_line_numbers(moved)
    text = " ".join(" ".join(out).split())
    assert "in this matter is also counsel of record in the Satchell case." in text
    assert not re.search(r"\b(?:1[0-9]|2[0-8])\b", text.replace("8/23/05", ""))


def test_numbers_of_a_short_list_are_no_line_numbers():
    page = [f"    {n} item of a list" for n in range(1, 8)] + ["text"]
    assert _drop_line_numbers(page) == page  # at any indent: fewer than 20 lines counting up from 1


# --- one page with no printed number ---------------------------------------------------------------

def test_a_one_page_text_is_page_1_as_its_pdf_is():
    quote = "This court has been advised by order of the United States District Court"
    text, pdf = text_opinion(CA10_TEXT), pdf_opinion(CA10_PDF)
    assert _page_of(pdf, quote) == "1"
    assert _page_of(text, quote) == "1"  # before: None (a text of one page had no page)


def test_text_without_form_feeds_gets_no_page():
    # a plain text with no page structure (no form feed, no page-number lines) has no pages to label
    raw = CA10_TEXT.read_text(encoding="utf-8").replace("\f", "")
    op = clean_plain(raw, head=[])
    assert not any(op.page_starts)


# --- numbers at the paper's other edge: the body is not a margin ------------------------------------

def test_text_beyond_the_numbers_is_a_margin_only_when_little_of_the_page():
    from statinterp.sources.pdf import _margin

    column = _column(range(1, 29))
    body = [_Line("text of the order " * 5, 99.0, 585.0, 700.0 - 24 * k, 13.3, 0) for k in range(20)]
    name = _Line("United States District Court", 18.0, 33.0, 320.0, 13.3, 0)
    assert _margin([*column, *body, name], {id(ln) for ln in column}) == {id(name)}
    right = _column(range(1, 29), x1=600.0)  # numbers at the right edge: the body lies left of them
    assert _margin([*right, *body, name], {id(ln) for ln in right}) == set()


def test_numbers_set_right_of_the_body_leave_the_body_in_place():
    # C.D. Cal.'s page 2 (its text lines float between the numbered lines) with the numbers moved
    # to the right of the text, as a paper numbered at its right edge would be set
    page = (GENUINE / "pdf-modern" / "cacd-8-16-cv-01261.txt").read_text(encoding="utf-8").split("\f")[1].split("\n")
    moved = []
    for ln in page:
        m = re.match(r"^(\s*)(\d{1,2})(?=\s|$)(.*)$", ln)
        if m is None:
            moved.append(ln)
            continue
        if m.group(3).strip():
            moved.append(" " * len(m.group(1) + m.group(2)) + m.group(3))
        moved.append(" " * 100 + m.group(2))  # every number on a line of its own, right of the text
    text = " ".join(" ".join(_drop_line_numbers(moved)).split())
    assert "the Court issued a Temporary Restraining Order" in text
    assert not re.search(r"(?:^|\s)(?:1[0-9]|2[0-8])(?:\s|$)", text)
