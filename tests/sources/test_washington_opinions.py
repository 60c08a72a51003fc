"""Genuine Washington text (tests/fixtures/genuine/README.md). The Court of Appeals: *Culinary Ventures,
Ltd. v. Microsoft Corp.*, No. 83486-0-I, its PDF's pages 9-11 and pdftotext's text of pages 1-11.
The text-quality study's seventh held-apart half, judged blind, then looked at for these rules of
``statinterp.sources.cleaning`` and ``statinterp.sources.pdf``, so in-sample for them.

* The court set its own note's mark in brackets after a block quotation ("(1st Cir. 1993).[7]"): the
  PDF reader left "[]" in the sentence, and the plain-text reader found no mark, so no note 7.
* On page 9 the foot is the rest of note 6, set single after one blank line, and then note 7's
  label: the plain-text reader wanted two blank lines before such a rest, lost note 7 and so every
  later note (CourtListener's text: 6 of 13).
* Without the bracketed mark, the PDF's line "1993)." after "... (1st Cir." began a paragraph of
  its own: a line with a parenthesis still open ends no paragraph."""

from pathlib import Path

from statinterp.sources.cleaning import clean_plain
from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine"
QUOTE_END = "Lambert v. Kysar, 983 F.2d 1110, 1121-22 (1st Cir. 1993)."


def test_the_pdf_drops_a_bracketed_mark_and_keeps_the_citation_whole():
    record = read_pdf(GENUINE / "pdf-washington" / "washctapp-83486-culinary-pages9-11.pdf")
    assert isinstance(record, CaseRecord)
    (opinion,) = record.opinions
    ends = [p for p in opinion.paragraphs if "1121-22" in p]
    assert len(ends) == 1 and ends[0].endswith(QUOTE_END)
    assert not any("[]" in p for p in opinion.paragraphs)
    assert any(n.startswith("In Coastal Steel Corp., the relevant contract clause") for n in opinion.notes)


def test_the_text_finds_a_note_after_the_rest_of_the_last_one():
    text = (GENUINE / "pdf-modern" / "washctapp-83486-culinary-pages1-11.txt").read_text(encoding="utf-8")
    opinion = clean_plain(text)
    notes = [" ".join(n.split()) for n in opinion.notes]
    assert len(notes) == 8
    assert notes[5].startswith("See Alliance Commc’ns") and notes[5].endswith("forum non conveniens”).")
    assert notes[6].startswith("In Coastal Steel Corp., the relevant contract clause stated")
    assert notes[7].startswith("Moreover, the Lambert court applied Washington law")
    ends = [p for p in opinion.paragraphs if "1121-22" in p]
    assert len(ends) == 1 and ends[0].endswith(QUOTE_END)  # the bracketed mark left with its note


def test_a_spaced_mark_after_an_acronym_at_a_lines_end():
    """Washington Supreme Court, *John Doe P v. Thurston County*, No. 102976-4 (pages 1-3 as
    pdftotext gives them; seventh held-apart half, judged blind, then looked at): note 1's mark
    stands spaced after an acronym at a line's end ("The underlying case is a PRA 1"), so the note,
    its label alone on a line at page 2's foot, was not found."""
    text = (GENUINE / "pdf-modern" / "wash-102976-4-doe-p-pages1-3.txt").read_text(encoding="utf-8")
    opinion = clean_plain(text)
    notes = [" ".join(n.split()) for n in opinion.notes]
    assert notes[0] == "Public Records Act, ch. 42.56 RCW."
    assert any("The underlying case is a PRA injunction action" in p for p in opinion.paragraphs)


def test_a_line_whose_end_opens_with_a_raised_mark_stays_one_body_line():
    """*In re DVPO for Montesi*, No. 85858-1-I, pages 12-13 of the court's PDF (seventh held-apart
    half, judged blind, then looked at): page 13's last body line is written end first, "5 The
    statute now provides immunity for individuals" (the raised mark 5 opening the piece), then
    "issue raised in Flannery." on the same baseline. Its baseline was read from the raised mark,
    so the two pieces stayed apart, the piece that opens with a mark was taken for a footnote, and
    the line's start went with it."""
    record = read_pdf(GENUINE / "pdf-washington" / "washctapp-85858-montesi-pages12-13.pdf")
    assert isinstance(record, CaseRecord)
    (opinion,) = record.opinions
    assert len(opinion.notes) == 2
    assert opinion.notes[1].startswith("In his reply brief, Brandon claims for the first time")
    assert any("issue raised in Flannery. The statute now provides immunity for individuals" in p
               for p in opinion.paragraphs)
