"""Footnotes of CourtListener's text of PDF-born opinions: what a footnote rule is, labels under
double-spaced body lines, spaced marks. Genuine files (tests/fixtures/genuine/README.md):

* ``pdf-modern/njd-18-16281.txt``: a district court's caption boxed with lines of underscores at
  the head of page 1 (the first underscore line was taken for a footnote rule: the caption was
  stored as a footnote);
* ``courtlistener-nm/nm-ramirez-891689.plain_text.txt``: New Mexico's signature lines of
  underscores and topic index after the opinion (stored as a footnote);
* ``pdf-modern/nysd-12-5708.txt``: footnote 6's label directly under a double-spaced body line,
  with no blank line between ("majority6" stayed glued, the note stayed in the body and footnotes 7
  and 8 were then missed too); footnote 7's mark set apart by spaces ("the CBAs 7 lack");
* ``pdf-modern/tn-wcc-calderon.txt``: footnote 1's label is one of the page's last two lines (it
  was dropped as the page's number, its text left in the body);
* ``pdf-modern/tn-wcab-diaz.txt``: footnote 1's mark spaced at a heading's end ("Memorandum Opinion 1");
* ``pdf-modern/cacd-8-16-cv-01261.txt``: pleading paper's line numbers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from statinterp.sources.cleaning import _find_mark, clean_plain

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine"


def _plain(path: str):
    return clean_plain((GENUINE / path).read_text(encoding="utf-8"))


def test_a_caption_boxed_with_underscores_is_no_footnote_rule():
    op = _plain("pdf-modern/njd-18-16281.txt")
    assert op.footnotes == ()  # the opinion has none
    body = "\n".join(op.paragraphs)
    assert "RASOOL McCRIMMON" in body and "STEVE JOHNSON, et al." in body
    assert "____" not in body  # the rule lines leave no debris
    assert all(re.search(r"\w", p) for p in op.paragraphs)  # nor the box's ":" column
    assert any(p.startswith("Before this Court is Plaintiff Rasool McCrimmon") for p in op.paragraphs)


def test_signature_lines_and_a_topic_index_after_the_opinion_are_no_footnote():
    op = _plain("courtlistener-nm/nm-ramirez-891689.plain_text.txt")
    assert op.footnotes == ()
    body = "\n".join(op.paragraphs)
    assert "CHARLES W. DANIELS, Chief Justice" in body and "Topic Index for State v. Ramirez" in body
    assert "____" not in body


def test_footnote_labels_under_double_spaced_body_lines_and_spaced_marks():
    op = _plain("pdf-modern/nysd-12-5708.txt")
    manifest = json.loads((Path(__file__).resolve().parents[2] / "experiments" / "text_quality_set.json")
                          .read_text(encoding="utf-8"))
    (entry,) = [e for e in manifest["entries"] if e.get("id") == "nysd-12-5708"]
    openings = entry["footnote_openings"]  # footnotes 2-8 (page 1, with note 1, has no text layer)
    assert len(op.footnotes) == len(openings) == 7
    for note, opening in zip(op.footnotes, openings, strict=True):
        assert note.startswith(opening), (note[:80], opening)
    body = " ".join(op.paragraphs)
    assert "The vast majority of the CBAs include language" in body  # "majority6": mark gone
    assert "Three of the CBAs lack the provision" in body  # "CBAs 7 lack": spaced mark gone
    assert "is not necessarily feasible. The foregoing findings" in body  # "feasible. 8"
    for opening in openings:
        assert opening not in body
    assert not re.search(r"\b[a-z]+[2-8]\b", body)


def test_a_footnote_label_low_on_the_page_is_no_page_number():
    op = _plain("pdf-modern/tn-wcc-calderon.txt")
    assert op.footnotes[0] == ("Mr. Calderon-Fuentes's first language is Spanish. "
                               "Steven Robinson interpreted at the hearing.")
    body = " ".join(op.paragraphs)
    assert "first language is Spanish" not in body
    assert "driven by Anthony Banks. He felt immediate pain" in body  # its spaced mark gone
    assert "He moved the forklift because" in body  # the sentence the note cut is whole


def test_a_spaced_mark_at_a_headings_end():
    op = _plain("pdf-modern/tn-wcab-diaz.txt")
    assert len(op.footnotes) == 1 and op.footnotes[0].startswith("“The Appeals Board may, in an effort")
    assert "Memorandum Opinion" in op.paragraphs and "Memorandum Opinion 1" not in op.paragraphs
    assert not any("The Appeals Board may, in an effort" in p for p in op.paragraphs)


def test_a_spaced_number_after_a_word_it_numbers_is_no_mark():
    # The spaced form is the last resort, and never after a word a number refers to.
    assert _find_mark(["the court applied Rule 7 requiring notice"], "7") is None
    assert _find_mark(["members of BCT Local 7 and others"], "7") is None
    assert _find_mark(["Three of the CBAs 7 lack the provision"], "7") == (0, 18, 19)
    assert _find_mark(["the CBAs 7 lack it; the majority7 of them"], "7") == (0, 32, 33)  # a glued one first
    assert _find_mark(["as set out in Exhibit 7"], "7") is None
    assert _find_mark(["Three of the CBAs 7 Lack"], "7") is None  # nor before a capital (a new sentence's number)


def test_pleading_paper_line_numbers_leave_the_text():
    # C.D. Cal.'s order on pleading paper (rules half: the rule was chosen on it): each page's lines
    # numbered 1-28 at the left margin; the numbers were left in the sentences ("... Order (“TRO”) 2 and
    # Order to Show Cause"), each number-only line a paragraph of its own.
    op = _plain("pdf-modern/cacd-8-16-cv-01261.txt")
    assert not any(re.fullmatch(r"[\d\s]+", p) for p in op.paragraphs)
    body = "\n".join(op.paragraphs)
    assert ("the Court issued a Temporary Restraining Order (“TRO”) and Order to Show Cause Re Preliminary "
            "Injunction that was set to expire on July 25, 2016 based on Plaintiff") in body
    assert "UNITED STATES DISTRICT COURT\nCENTRAL DISTRICT OF CALIFORNIA" in body
    assert "ORDER" not in op.paragraphs and not re.search(r"\bORDER \w+ code", body)  # its running foot
    assert len(op.paragraphs) < 30  # before: 77


def test_numbered_lines_of_ordinary_text_are_not_pleading_paper():
    from statinterp.sources.cleaning import _drop_line_numbers

    page = [f"{n} item of a list" for n in range(1, 8)] + ["text"]
    assert _drop_line_numbers(page) == page  # fewer than 20 lines counting up from 1


def test_html_with_citations_of_the_sdny_text_gives_the_same_lines_and_footnotes():
    from statinterp.sources.cleaning import clean_markup

    plain = _plain("pdf-modern/nysd-12-5708.txt")
    markup = clean_markup((GENUINE / "pdf-modern/nysd-12-5708.html_with_citations.html").read_text("utf-8"))
    assert markup.paragraphs == plain.paragraphs
    assert markup.footnotes == plain.footnotes and len(markup.footnotes) == 7


def test_a_footnote_label_glued_to_its_first_word_opens_the_next_note():
    """Utah's New Star v. Dumar, 2025 UT 14 (pages 10-12 as pdftotext -layout gives them; the
    text-quality study's seventh held-apart half, judged blind, then looked at): footnote 26's label
    is glued to its italic first word ("   26Except, MERRIAM-WEBSTER"), so it was read as note 25's
    text and, the next label expected being 26, every later note was run into note 25."""
    op = _plain("pdf-modern/utah-2025-ut-14-pages10-12.txt")
    notes = [" ".join(n.split()) for n in op.notes]
    assert any(n.startswith("Except, MERRIAM-WEBSTER") for n in notes)
    assert "Id. § 38-1a-501(2)(c)." in notes  # note 25, alone
    assert "Id. at 744." in notes and "2012 UT 89, ¶ 20." in notes and "Id. ¶ 36." in notes  # 32-34
    assert not any(re.search(r"\b2[6-9] See\b|\b3\d Id\.", n) for n in notes)  # no label inside a note
    # the marks glued to words of notes under a rule leave the body (they stayed: "to be paid.31 We")
    body = " ".join(" ".join(p.split()) for p in op.paragraphs)
    assert "laborers to be paid. We applied a fact-specific analysis" in body
