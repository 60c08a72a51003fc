"""Footnotes of CAP's case text read as a .txt file (statinterp/sources/cleaning.py,
``_trailing_notes``): the text puts each footnote mark on a line of its own ("12") and the
footnotes after the opinion as "N . text" or "N text" lines, a footnote running on over lines
of its own (a quoted statute), and a starred note ("* The Honorable ...") in the head matter.
Genuine files: tests/fixtures/genuine/cap-text-footnotes (sources in the fixtures' README)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from statinterp.sources.cleaning import clean_markup, clean_opinion, clean_plain, note_label
from statinterp.sources.plaintext import text_case

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine"
CAP_TEXT = GENUINE / "cap-text-footnotes"
LONE = re.compile(r"^(?:\d{1,3}|\*)$")
LABEL = re.compile(r"^\d{1,3} ?\. ")


def read(name: str) -> str:
    return (CAP_TEXT / name).read_text(encoding="utf-8")


def test_a_footnote_quoting_a_statute_over_several_lines_alaska():
    """Childs v. Childs (Alaska 2013): footnote 11 quotes 50 U.S.C. app. § 522(a) over three
    lines of its own; before, not one of the case's footnotes was recognised."""
    op = text_case(read("alaska-childs-2013-excerpt.txt"), "childs").opinions[0]
    assert len(op.notes) == 12
    assert op.notes[0].startswith("The Notice of Motion to Change Custody")
    assert op.notes[10].startswith("50 U.S.C. app. § 522(a) provides: This section applies")
    assert op.notes[10].endswith("(2) has received notice of the action or proceeding.")
    assert op.notes[11] == "50 U.S.C. app. § 522(b)(2)."
    assert not any(LONE.match(p) or LABEL.match(p) for p in op.paragraphs)
    assert not any(p.startswith("(1) is in military service") for p in op.paragraphs)
    # the footnote's paragraphs stay lines of their own (segmented as the text has them), each
    # saying which footnote it belongs to
    eleven = [line for line, n in zip(op.footnotes, op.note_numbers, strict=True) if n == "11"]
    assert len(eleven) == 4 and eleven[0] == "50 U.S.C. app. § 522(a) provides:"
    assert eleven[-1] == "(2) has received notice of the action or proceeding."
    assert op.note_numbers[-1] == "12" and len(op.footnotes) == len(op.note_numbers) == 15
    # the sentence mark 1 cut ("... Support or Visitation," 1 "the superior court ...") is whole
    assert any("Support or Visitation, the superior court clerk" in p for p in op.paragraphs)


def test_labels_without_a_period_and_numbered_paragraphs_of_the_body_georgia():
    """Wallace v. Wallace (Ga. 2014): "1 OCGA § 19-6-15 ..." labels without a period, notes 1
    and 4 quoting the statute's items over lines of their own; the opinion's own "1. Mother
    enumerates ..." and "2. Mother also asserts ..." divisions stay in the body."""
    op = text_case(read("ga-wallace-2014.txt"), "wallace").opinions[0]
    assert len(op.notes) == 4
    assert op.notes[0].startswith("OCGA § 19-6-15 (i) (1) (B) similarly provides: When ordering")
    assert "(II) The best interest of the child" in op.notes[0]
    assert op.notes[3].startswith("OCGA § 19-6-15 (f) (1) (E) reads:")
    assert op.notes[3].rstrip().endswith(op.notes[3].split("(iv) ")[-1])
    assert any(p.startswith("1. Mother enumerates as error") for p in op.paragraphs)
    assert any(p.startswith("2. Mother also asserts") for p in op.paragraphs)
    assert not any(LONE.match(p) or p.startswith("(iv) Basic allowance") for p in op.paragraphs)
    # "... (f) (1) (E) (iv)," 4 "which provides ..." is one sentence again
    assert any("(f) (1) (E) (iv), which provides" in p for p in op.paragraphs)


def test_a_starred_note_in_the_head_matter_ninth_circuit():
    """Noel v. Hall (9th Cir. 2009): "* The Honorable Lyle E. Strom ..." after the counsel, its
    mark "*" a line of its own inside the "Before:" line. Before, 13 of its 14 footnotes."""
    op = text_case(read("ca9-noel-2009-excerpt.txt"), "noel").opinions[0]
    assert op.notes[0].startswith("The Honorable Lyle E. Strom, Senior United States District Judge")
    assert len(op.notes) == 3 and op.notes[1].startswith("Although we denied Weisser")
    assert "Circuit Judges, and LYLE E. STROM, District Judge." in " ".join(op.paragraphs)
    assert not any(LONE.match(p) or p.startswith("* ") for p in op.paragraphs)


def test_the_same_notes_from_courtlistener_html_with_citations():
    """The text inside CourtListener's <pre class="inline"> is cleaned as plain text is."""
    for name in ("ga-wallace-2014.txt", "alaska-childs-2013-excerpt.txt", "ca9-noel-2009-excerpt.txt"):
        text = read(name)
        markup = clean_markup(f'<pre class="inline">{html.escape(text)}</pre>')
        assert markup.notes == clean_plain(text).notes and markup.notes


def test_a_label_with_no_space_after_its_period_third_circuit():
    """Flora v. County of Luzerne (3d Cir. 2015), its footnote 11's line as CAP's text has it."""
    assert note_label("11 .Lane introduced the word “ordinary” to modify") == (
        "11", "Lane introduced the word “ordinary” to modify")
    assert note_label("1 .5 acres") == (None, "1 .5 acres")


def test_a_numbered_ending_without_marks_stays_in_the_body():
    """A run "1. ...", "2. ..." at the end, continued by lines of its own, is a list unless the
    body holds its marks; with the marks (lines of their own) it is the footnotes."""
    ending = ["We hold:", "1. The ordinance applies.", "(a) It is valid.", "2. The fine stands."]
    assert clean_opinion(ending).paragraphs == tuple(ending) and clean_opinion(ending).notes == ()
    marked = ["The ordinance", "1", "applies. The fine", "2", "stands.", "1. The ordinance applies.",
              "(a) It is valid.", "2. The fine stands."]
    op = clean_opinion(marked)
    assert op.notes == ("The ordinance applies. (a) It is valid.", "The fine stands.")
    assert op.paragraphs == ("The ordinance applies. The fine stands.",)


def test_mark_lines_counting_past_the_notes_are_page_numbers():
    """Lines "1" .. "4" with only two notes after them are page numbers, not marks: dropped as
    page numbers and the block is not proved by them."""
    text = "Text one\n\n1\n\nruns on.\n\n2\n\nMore.\n\n3\n\nAnd.\n\n4\n\nEnd.\n\n1. First item.\n\n2. Second item."
    op = clean_plain(text)
    assert op.notes == () and "1. First item." in op.paragraphs and "Text one runs on." in op.paragraphs


def test_paragraph_numbered_opinions_keep_their_numbers():
    """Opinions of the rules half that number their paragraphs or end with numbered items
    (tests/fixtures/genuine/paragraph-numbers) take no footnotes from them."""
    for name, notes in (("ndga-danube-1982.txt", 0), ("mdtenn-smith-estate-1946.txt", 0),
                        ("sdill-mccoy-1973.txt", 1), ("nj-angiola-2003.txt", 2)):
        op = clean_plain((GENUINE / "paragraph-numbers" / name).read_text(encoding="utf-8"))
        assert len(op.notes) == notes, name


def test_text_after_the_last_footnote_is_not_taken_into_it():
    """Only a quotation, a list item or what a colon opens runs a last footnote on: a line the
    copier added after the notes stays in the body, and the note is still found by its mark."""
    text = ["The ordinance applies.", "1", "It is affirmed.", "1 . The record is silent.",
            "This is copy number 0."]
    op = clean_opinion(text)
    assert op.notes == ("The record is silent.",)
    assert op.paragraphs == ("The ordinance applies.", "It is affirmed.", "This is copy number 0.")
    quoted = clean_opinion(text[:3] + ["1 . The record reads:", "“[t]he record is silent.”"])
    assert quoted.notes == ("The record reads: “[t]he record is silent.”",)


def test_footnotes_between_two_opinions():
    """CAP's case text puts each opinion's notes after it: the majority's notes end where the
    dissent begins, and each opinion's marks count from 1 again."""
    text = ["The fine stands.", "1", "Affirmed.", "2", "1 . A note.", "2 . Another note.",
            "SMITH, J., dissenting.", "I would reverse.", "1", "Reversed.", "1 . The dissent's note."]
    op = clean_opinion(text)
    assert op.notes == ("A note.", "Another note.", "The dissent's note.")
    assert op.paragraphs == ("The fine stands.", "Affirmed.", "SMITH, J., dissenting.", "I would reverse.",
                             "Reversed.")


def test_a_starred_note_needs_its_mark():
    """A "*" glued to a word marks a starred note; without a mark a "* ..." paragraph stays, and
    a "* * *" break is no note."""
    op = clean_opinion(["Before: SMITH, Judge.*", "* * *", "Text.", "* Sitting by designation."])
    assert op.notes == ("Sitting by designation.",)
    assert op.paragraphs == ("Before: SMITH, Judge.", "* * *", "Text.")
    unmarked = ["Before: SMITH, Judge.", "Text.", "* Sitting by designation."]
    assert clean_opinion(unmarked).paragraphs == tuple(unmarked)


def test_numbered_headings_before_the_notes_are_not_a_block():
    """Only the text's last block may be "1. The" items: before it, "1. Injury in Fact" and
    "2. Causation" are headings, even where the body's marks would count as far."""
    text = ["Standing.", "1", "Harm.", "2", "1. Injury in Fact", "They lost money.", "2. Causation",
            "The loss was caused.", "1 . A note.", "2 . Another note."]
    op = clean_opinion(text)
    assert op.notes == ("A note.", "Another note.")
    assert op.paragraphs == ("Standing.", "Harm.", "1. Injury in Fact", "They lost money.", "2. Causation",
                             "The loss was caused.")


def test_a_note_on_the_head_and_the_notes_counting_on_after_the_opinion_bap10():
    """In re Weber (B.A.P. 10th Cir. 2005): CAP sets footnote 1 (a judge sitting by designation)
    in the head, after its mark line, and footnotes 2-33 after the opinion. Before, the block from
    2 was not taken (a block had to open with 1) and the mark lines were dropped as page numbers:
    0 of 33 footnotes."""
    op = text_case(read("bap10-weber-2005.txt"), "weber").opinions[0]
    assert len(op.notes) == 33
    assert op.notes[0].startswith("Honorable Michael E. Romero, United States Bankruptcy Judge")
    assert op.notes[1] == "11 U.S.C. § 101, et seq."
    assert not any(LONE.match(p) or LABEL.match(p) for p in op.paragraphs)


def test_a_numbered_paragraph_in_the_head_without_its_mark_is_no_note():
    """"1 . ..." early in a text is a note on the head only after a line holding its mark."""
    paras = ["Court of Appeals.", "Judge KELLY concurred.", "1 . The Hon. Kelly sits by designation.",
             "The facts.", "The law.", "More law.", "Text with a mark", "2", "here.", "2 . The note."]
    assert clean_opinion(paras).notes == ()
    marked = paras[:1] + ["Judge KELLY", "1", "concurred."] + paras[2:]
    assert clean_opinion(marked).notes == ("The Hon. Kelly sits by designation.", "The note.")


def test_ohios_cite_as_header_line_is_no_text():
    """Wiebusch v. Wiebusch, 186 Ohio App.3d 237 (CAP's text, statutory-interpretation data set):
    Ohio's "[Cite as ...]" header above the opinion was kept as a sentence (the fourth held-apart
    half's one running header); a sentence that cites the same way stays."""
    lines = ["Court of Appeals of Ohio, Second District.", "186 Ohio App.3d 237",
             "[Cite as Wiebusch v. Wiebusch, 186 Ohio App.3d 237, 2010-Ohio-504.]",
             "The court so held [Cite as Wiebusch, at ¶ 3] in passing."]
    assert clean_plain("\n".join(lines)).paragraphs == (lines[0], lines[1], lines[3])
