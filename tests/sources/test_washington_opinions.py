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

from statinterp.corpus.pin_cites import cite_name
from statinterp.sources.cleaning import _find_mark, _page_foot, clean_plain, is_banner_line, split_head
from statinterp.sources.pdf import read_pdf, split_opinions
from statinterp.sources.plaintext import text_case
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


LEWIS = GENUINE / "pdf-washington" / "wash-102910-1-lewis-pages1-2-13.pdf"


def test_the_clerks_stamp_written_after_the_text_leaves_the_first_sentence():
    """*State v. Lewis*, No. 102910-1 (Wash. 2025), the court's PDF, pages 1, 2 and 13 (seventh
    held-apart half, judged blind, then looked at). The clerk's stamp at page 1's top ("FILE / IN
    CLERK'S OFFICE / ... THIS OPINION WAS FILED FOR RECORD AT 8 A.M. ON ...") and one caption cell
    ("Respondent,") are written after the page's text: they were read after its last line, inside
    the sentence that runs on to page 2."""
    record = read_pdf(LEWIS)
    assert isinstance(record, CaseRecord)
    text = "\n".join(p for o in record.opinions for p in o.paragraphs)
    for stamp in ("FILE", "CLERK", "FOR RECORD", "PENDLETON"):
        assert stamp not in text
    assert not any(p.strip() == "Respondent," for o in record.opinions for p in o.paragraphs)
    assert "Respondent," in record.head_matter  # the caption's cell stays in the caption


def test_an_author_line_with_a_dash_opens_the_opinion_and_leaves_its_text():
    """Washington's opinions open "GONZÁLEZ, J.—Our legislature ..." (here with no space after the
    comma) under a caption set in a ")" table: no head matter was found, the caption was the
    opinion's first paragraphs and "GONZÁLEZ,J.—" the first sentence's start. A separate opinion
    opens the same way, "JOHNSON, J. (concurring)—I concur ...", and was part of the majority's."""
    record = read_pdf(LEWIS)
    assert isinstance(record, CaseRecord)
    majority, concurrence = record.opinions
    assert (majority.type, majority.author) == ("majority", "González")
    assert majority.paragraphs[0].startswith("Our legislature has enacted a detailed felony sentencing system")
    assert record.head_matter.startswith("IN THE SUPREME COURT OF THE STATE OF WASHINGTON")
    assert (concurrence.type, concurrence.author) == ("concurrence", "Johnson")
    assert concurrence.paragraphs[0].startswith("I concur with the majority that Matthew Lewis is entitled")


def test_the_case_is_named_by_its_running_head():
    """The caption, in a ")" table, was read as "STATE OF WASHINGTON v. MATTHEW ADAM LEWIS" (in other
    opinions of the court "JEFFERY L. COCKRUM ) v. ) EN BANC C.H. MURPHY ...", "No. 102976-4 v.
    THURSTON COUNTY ..."); the running head names the case as the court cites it: "State v. Lewis,
    No. 102910-1"."""
    record = read_pdf(LEWIS)
    assert isinstance(record, CaseRecord)
    assert record.name == "State v. Lewis"


def test_the_author_line_with_a_dash_in_plain_text():
    """The same rule on pdftotext's text of *John Doe P v. Thurston County* (pages 1-3): "YU, J. —
    This case involves ..." opens the opinion; the caption above it is head matter."""
    text = (GENUINE / "pdf-modern" / "wash-102976-4-doe-p-pages1-3.txt").read_text(encoding="utf-8")
    record = text_case(text, "wash-102976-4-doe-p")
    (opinion,) = record.opinions
    assert opinion.author == "Yu"
    assert opinion.paragraphs[0].startswith("This case involves a postdismissal challenge")
    assert record.head_matter.rstrip().endswith("Petitioners. )")


def test_author_lines_of_the_courts_dissents_and_majorities():
    """Genuine opening lines of *Branson v. Wash. Fine Wine & Spirits* and *Cockrum v. C.H.
    Murphy/Clark-Ullman* (Wash. 2025): a name with small letters ("McCLOUD"), a hyphenated one."""
    caption = ["IN THE SUPREME COURT OF THE STATE OF WASHINGTON", "JEFFERY L. COCKRUM )", "Petitioner, )",
               "v. )", "Respondent. ) ______________________________ )"]
    first = "MONTOYA-LEWIS, J.—Jeffrey Cockrum developed mesothelioma after decades of working for Alcoa Inc."
    head, body, author = split_head([*caption, first, "It is undisputed that Alcoa knowingly exposed its employees."])
    assert (head, author) == (caption, "Montoya-Lewis")
    assert body[0].startswith("Jeffrey Cockrum developed mesothelioma")
    dissent = ("GORDON McCLOUD, J. (dissenting)—Washington’s Equal Pay and Opportunities Act (EPOA) requires "
               "every employer")
    majority = "In 2022, the legislature amended the Washington Equal Pay and Opportunities Act."
    parts = split_opinions([majority, dissent], "Madsen")
    assert [(kind, who) for kind, who, _ in parts] == [("majority", "Madsen"), ("dissent", "Gordon McCloud")]
    assert parts[1][2] == ["Washington’s Equal Pay and Opportunities Act (EPOA) requires every employer"]


def test_en_banc_alone_on_a_line_is_a_caption_cell():
    """"En Banc", a Washington caption's cell, was left in the sentence the page's text ran on with."""
    assert is_banner_line("En Banc") and is_banner_line("EN BANC")
    assert not is_banner_line("The court heard the case en banc.")


def test_a_spaced_mark_after_a_comma_before_a_lower_case_word():
    """CourtListener's text (pdftotext) of *Branson* (its dissent's page 13, PDF page 30) and *Cockrum*
    (Wash. 2025; seventh half, rules half now): "S.B. 5761, 4 the 2022 bill", "Alcoa), 1 claiming".
    The mark was not found, so note 4 at the page's foot stayed in the body, between "meaning real"
    and the next page's "applicants, ...": that sentence was stored in two, and pinned to page 14."""
    pages = (GENUINE / "pdf-modern" / "wash-103394-0-branson-pages30-31.txt").read_text(encoding="utf-8")
    page = pages.split("\f")[0].split("\n")
    while not page[-1].strip():
        page.pop()
    body, notes, after = _page_foot(page, 4)
    assert len(notes) == 1  # (the page's number, which the full reader drops first, is still under it here)
    assert " ".join(" ".join(notes[0]).split()).startswith("4 S.B. 5761, 67th Leg., Reg. Sess. (Wash. 2022).")
    assert after == 5
    assert any("S.B. 5761, the 2022 bill" in ln for ln in body)  # the mark left the body
    assert _find_mark(["corporate successor to Alcoa), 1 claiming his employer deliberately intended"], "1")
    assert _find_mark(["under Sections 8, 9 and 13 of the Act"], "9") is None  # a list of numbers: no mark


def test_a_matter_caption_after_the_courts_name_on_one_line():
    """*In re DVPO for Montesi*, No. 85858-1-I (Wash. Ct. App. 2025), the court's PDF, page 1: the
    court's name in capitals and the caption's first words stand on one line ("IN THE COURT OF
    APPEALS OF THE STATE OF WASHINGTON In the Matter of the Domestic Violence"), so no caption was
    found and every citation of the case read "[no case name found: ...]"."""
    record = read_pdf(GENUINE / "pdf-washington" / "washctapp-85858-montesi-page1.pdf")
    assert isinstance(record, CaseRecord)
    assert record.name == "In the Matter of the Domestic Violence Protection Order for JESSICA DIANE MONTESI"
    assert cite_name(record.name, "washctapp") == "In re Domestic Violence Prot. Order for JESSICA DIANE MONTESI"
