"""A decision set in two columns (tests/fixtures/genuine/README.md): *Sequel of New Mexico, LLC d/b/a
Bernalillo Academy*, 361 NLRB No. 127 (2014), the Board's PDF, three pages, unchanged. The text-quality
study's eighth held-apart half, judged blind (found fragments 7 of 73 on this PDF), then looked at.

The PDF writes the left column, its notes, then the right column and its notes. The notes of both
columns were taken from one height on the page and sorted by height, so their lines were interleaved
("... the hearing officer cited Notre All employees, unit and nonunit, were invited to attend Hills
Medical Services ..."), the right column's lines below the left column's notes went into the notes,
and every right-column line (set at the gutter, far right of the page's margin) opened a paragraph."""

from pathlib import Path

import pytest

from statinterp.sources.cleaning import clean_plain, text_columns, two_columns
from statinterp.sources.pdf import _columns, _Line, _move_right_column, read_pdf
from statinterp.sources.records import CaseRecord

PDF = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "pdf-agency" / "nlrb-361-127-bernalillo.pdf"


@pytest.fixture(scope="module")
def record() -> CaseRecord:
    case = read_pdf(PDF)
    assert isinstance(case, CaseRecord)
    return case


def test_each_columns_notes_are_read_apart(record):
    (opinion,) = record.opinions
    notes = [" ".join(n.split()) for n in opinion.notes]
    assert len(notes) == 8
    assert notes[4].startswith("See also Lamar Advertising of Janesville, 340 NLRB 979, 980 (2003)")
    assert notes[4].endswith("123 NLRB 86, 87–88 (1959).")
    # note 8 stands at the foot of page 2's right column and goes on at page 3's left column's foot
    assert notes[7].startswith("In upholding Objection 1, the hearing officer cited Notre Dame Hills Medical Services")
    assert "In Lou Taylor, the day before the election the employer promised" in notes[7]
    assert notes[7].endswith("not paid for attending the party as a new holiday benefit.")
    assert not any("(SEAL)" in n for n in notes)


def test_a_columns_lines_are_one_paragraph(record):
    (opinion,) = record.opinions
    text = opinion.paragraphs
    assert any(p.startswith("After carefully considering all relevant factors, we find that the Union has not met "
                            "its burden on the specific facts of this case.") and p.endswith("B & D Plastics factor.")
               for p in text)
    # the right column of page 1 goes on from the left column's last line ("... to attend" / "the holiday party.")
    assert any("All employees, unit and nonunit, were invited to attend the holiday party. Attendance was voluntary"
               in p for p in text)
    assert not any("Notre Dame" in p for p in text)  # note text stays out of the body
    assert any("AFSCME, AFL–" in p and "CIO, and that it is not the exclusive representative" in p for p in text)


def test_the_same_decision_as_pdftotext_sets_it_reads_column_after_column():
    """``pdftotext -layout`` (CourtListener's text of a PDF) sets the two columns side by side on each
    line: the text route stored "... publication in the approved a Stipulated Election Agreement
    scheduling the bound volumes ..." and found none of the 8 notes. A page whose lines have text
    starting at one position after a gap (the gutter) is read as its left column, then its right,
    each with its notes at its foot."""
    text = PDF.with_suffix(".txt").read_text(encoding="utf-8")
    opinion = clean_plain(text)
    notes = [" ".join(n.split()) for n in opinion.notes]
    assert len(notes) == 8
    assert notes[0].startswith("In the absence of exceptions, we adopt pro forma the hearing officer’s")
    assert notes[7].startswith("In upholding Objection 1, the hearing officer cited Notre Dame Hills Medical Services")
    assert any(p.startswith("NOTICE: This opinion is subject to formal revision before publication in the bound "
                            "volumes of NLRB decisions.") for p in opinion.paragraphs)
    assert any(p.startswith("After carefully considering all relevant factors, we find that the Union has not met "
                            "its burden on the specific facts of this case.") for p in opinion.paragraphs)
    assert any("All employees, unit and nonunit, were invited to attend the holiday party. Attendance was voluntary"
               in p for p in opinion.paragraphs)
    # the last page's right column is a signature block: read after the left column (the gutter of the
    # page before), not line by line beside it
    last = ("Under the circumstances of this case, we find that the party did not constitute objectionable "
            "conduct that warrants setting aside the election.")
    assert any(p.startswith(last) for p in opinion.paragraphs)
    # (the rest of note 8 at the left column's foot, without a label, stays in the body here: a limit)
    assert any(p.endswith("CIO, and that it is not the exclusive representative of these bargaining-unit employees.")
               for p in opinion.paragraphs)
    assert "Mark Gaston Pearce, Chairman" in opinion.paragraphs


def test_a_caption_table_or_a_calendar_is_no_second_column():
    """Side-by-side text that is no column: a caption's ")" cells (Washington) and a calendar's rows."""
    caption = ["JEFFERY L. COCKRUM,              )", "                                  )     No. 102881-4",
               "           Petitioner,            )", "                                  )     EN BANC"] * 5
    assert text_columns(caption) is None
    calendar = ["9:00      24CV448974 Wells Fargo Bank, N.A.      Order on Motion for Summary Judgment of",
                " 1                  v.                           Plaintiff Wells Fargo Bank, N.A. See Line 1",
                "                    Peggy Bagdriwicz             below for complete tentative ruling and order."] * 6
    assert text_columns(calendar) is None


def test_a_note_label_before_its_text_after_one_blank_line_above_a_foot_of_notes():
    """DOHA, ISCR Case No. 16-03770 (2019), pages 1-2 as pdftotext sets them (eighth held-apart half,
    judged blind, then looked at): page 2's foot opens with note 2 after one blank line ("2
    Applicant's response to the SOR; ..."), notes 3 and 4 after two: note 2 was read as the body's
    and ran into the next paragraph (CourtListener's text: 8 of 10 notes). One blank line is
    enough when every later run of the page's lines opens with the next label."""
    text = (PDF.parent / "doha-iscr-16-03770-pages1-2.txt").read_text(encoding="utf-8")
    opinion = clean_plain(text)
    notes = [" ".join(n.split()) for n in opinion.notes]
    assert len(notes) == 4
    assert notes[1].startswith("Applicant’s response to the SOR; Tr. at 6-7, 10-11")
    assert not any("response to the SOR; Tr. at" in p for p in opinion.paragraphs)


def test_the_column_test_moves_nothing_and_its_caller_moves_the_right_column():
    """``_columns`` only tells the right column's lines and shift (it used to move them as it decided);
    ``_move_right_column`` marks and moves them. A page of ten justified lines a side, a
    paragraph's first line indented in each column."""
    lines = []
    for i in range(10):
        lines.append(_Line("left column text " * 3, 54 + 18 * (i == 0), 300, 700 - 12 * i, 10, 0))
        lines.append(_Line("right column text " * 3, 312 + 18 * (i == 5), 558, 700 - 12 * i, 10, 0))
    before = [(ln.x0, ln.x1, ln.column) for ln in lines]
    found = _columns(lines, 612.0)
    assert found is not None
    right, shift = found
    assert shift == 258.0  # the right column's left edge (312) over the left column's (54)
    assert right == [ln for ln in lines if ln.text.startswith("right")]
    assert [(ln.x0, ln.x1, ln.column) for ln in lines] == before
    _move_right_column(right, shift)
    assert [(ln.x0, ln.x1, ln.column) for ln in lines if ln.text.startswith("right")] == (
        [(54.0, 300.0, 1)] * 5 + [(72.0, 300.0, 1)] + [(54.0, 300.0, 1)] * 4)
    assert [(ln.x0, ln.x1, ln.column) for ln in lines if ln.text.startswith("left")] == before[::2]
    assert _columns(lines[::2], 612.0) is None  # one column only


def test_one_test_decides_two_columns_in_points_and_in_characters():
    """The PDF reader's sides (points) and the text reader's (characters) go through one test: the
    same page's spans decide alike in either unit. A column's lines make two columns; a calendar's
    cells ("9:00", "1 v.", a name), seven lines, or three lines of 21 across the gutter do not."""
    prose = [(0, 45)] * 7 + [(4, 45), (0, 30)]
    cells = [(0, 4), (1, 3), (0, 30)] * 3
    for unit in (1.0, 6.0):
        def scaled(spans, unit=unit):
            return [(start * unit, end * unit) for start, end in spans]
        assert two_columns(scaled(prose), scaled(prose), 0)
        assert not two_columns(scaled(cells), scaled(prose), 0)
        assert not two_columns(scaled(prose), scaled(cells), 0)
        assert not two_columns(scaled(prose), scaled(prose), 3)
        assert not two_columns(scaled(prose[:7]), scaled(prose), 0)
