"""Opinions of the Colorado Court of Appeals (issue 34's fifth held-apart half, judged blind on
2026-11-29 at eb217e9, then looked at: in-sample for these rules since).

* ``coloctapp-23ca0398-mau.pdf`` (People v. Mau, not published): a cover page set in one size --
  caption, "Division VII / Opinion by JUDGE PAWAR / Gomez and Graham*, JJ., concur", "Announced
  January 22, 2026", counsel -- and at its foot the note "*Sitting by assignment of the Chief Justice
  ...", in the same size as the text above it, its "*" glued to "Graham". The opinion numbers its
  paragraphs from "¶ 1". Blind: the note was a paragraph of the opinion (footnotes 6 of 7 on the
  PDF route) and the cover page, "Division VII Opinion by JUDGE PAWAR ..." and counsel, sentences
  of it (the "JUDGMENT AFFIRMED IN PART" title stopped the head matter there).
* ``coloctapp-23ca0398-mau.txt``: CourtListener's text of it (``pdftotext -layout``).
* ``coloctapp-wpas-2026.pdf`` (In re Parental Responsibilities Concerning W.P.A.S., published): a
  summary page comes before the caption, so no name was found on the first page.
"""

from __future__ import annotations

from statinterp.corpus.pin_cites import format_cite
from statinterp.sources.pdf import read_pdf
from statinterp.sources.plaintext import text_case
from statinterp.sources.records import CaseRecord
from tests.support.paths import FIXTURES

COLORADO = FIXTURES / "genuine" / "pdf-colorado"


def _read(name: str) -> CaseRecord:
    record = read_pdf(COLORADO / name)
    assert isinstance(record, CaseRecord), record
    return record


def test_a_star_note_in_the_texts_own_size_is_a_footnote():
    mau = _read("coloctapp-23ca0398-mau.pdf")
    notes = [n for op in mau.opinions for n in op.footnotes]
    assert len(notes) == 1 and notes[0].startswith("Sitting by assignment of the Chief Justice")
    body = " ".join(p for op in mau.opinions for p in op.paragraphs)
    assert "Sitting by assignment" not in body + mau.head_matter  # before: a paragraph of the opinion


def test_an_opinion_numbering_its_paragraphs_starts_at_paragraph_one():
    for record in (_read("coloctapp-23ca0398-mau.pdf"),
                   text_case((COLORADO / "coloctapp-23ca0398-mau.txt").read_text(encoding="utf-8"), "mau")):
        opinion = record.opinions[0]
        assert opinion.paragraphs[0].startswith("Defendant, Bryan Steven Mau, appeals his convictions")
        assert opinion.numbers[0] == "1"
        assert "Opinion by JUDGE PAWAR" in record.head_matter.replace("\n", " ")
        assert "for Defendant-Appellant" in record.head_matter  # counsel: head matter, not sentences
        assert opinion.author == "Pawar"


def test_the_cover_pages_announced_date_is_the_decision_date():
    assert _read("coloctapp-23ca0398-mau.pdf").decision_date == "2026-01-22"


def test_a_caption_after_a_summary_page_names_the_case():
    wpas = _read("coloctapp-wpas-2026.pdf")
    assert wpas.name.startswith("In re the Parental Responsibilities Concerning W.P.A.S., a Child")
    assert format_cite(wpas.name, "", wpas.court, wpas.decision_date).startswith(
        "In re Parental Responsibilities Concerning W.P.A.S.")  # before: "[no case name found: ...]"


def test_a_heading_wrapped_after_an_open_word_is_one_paragraph():
    """"D.    Hill Is Inapplicable to APR Orders Outside of a Dissolution of" over a centred
    "Marriage Proceeding": two paragraphs (so a fragment ending "of") on the PDF route and in its
    text, before."""
    heading = "D. Hill Is Inapplicable to APR Orders Outside of a Dissolution of Marriage Proceeding"
    assert heading in _read("coloctapp-wpas-2026.pdf").opinions[0].paragraphs


def test_a_sentence_wrapped_after_an_open_word_runs_on_in_pdf_text():
    """The First Circuit's text: "... erupted at 8:30 p.m. on" / "May 4, at which time ..." was cut
    (the next line's capital read as a paragraph's start); a list's next item still starts anew."""
    from statinterp.sources.cleaning import clean_plain, strip_markers

    text = (FIXTURES / "genuine" / "pdf-modern" / "ca1-20-1507.txt").read_text(encoding="utf-8")
    paragraphs = [strip_markers(p) for p in clean_plain(text).paragraphs]
    assert any("erupted at 8:30 p.m. on May 4, at which time the Chapel" in p for p in paragraphs)
