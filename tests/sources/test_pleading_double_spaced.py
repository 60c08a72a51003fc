"""Double-spaced pleading paper, in both routes of the same genuine E.D. Cal. orders (issue 34).

* ``pdf-modern/caed-15-208.txt`` and ``pdf-modern/caed-20-1133.txt``: ``pdftotext -layout`` of the
  orders (CourtListener's ``plain_text`` of them, byte for byte). Dropping the line numbers drops the
  paper's spacing too, so a footnote's label alone on its line ("26   1" / its text below) had no
  blank line above it and was taken for body text: 0 of 3 notes found, "The court found plaintiff
  stated 1" as a sentence, marks glued ("review.1", "late.2"); headings ran on into the paragraph
  above ("... discovery documents. I. Plaintiff's Allegations This action ...").
* ``pdf/caed-15-208-crane-order.pdf`` and ``pdf/caed-20-1133-mendoza-redaction.pdf``: the same
  orders read as PDFs. A paragraph's first line under a heading at the same indent was taken for a
  block quote's end ("The undersigned reviewed ... of defendants" cut from its sentence), a list
  item's hanging second line (and a short last line that looked centred) started paragraphs of
  their own, and a file-name stamp under the date ("/cran0208.icr") was appended to footnote 2.

These orders were held apart in the text-quality study until this session; the rules are
structural (blank lines, indents, line widths, punctuation), with no court's text in them.
"""

from __future__ import annotations

from statinterp.sources.cleaning import split_matter, strip_markers
from statinterp.sources.records import OpinionRecord
from tests.support.genuine import GENUINE, pdf_opinion, text_opinion

CRANE_TEXT = GENUINE / "pdf-modern" / "caed-15-208.txt"
CRANE_PDF = GENUINE / "pdf" / "caed-15-208-crane-order.pdf"
MENDOZA_TEXT = GENUINE / "pdf-modern" / "caed-20-1133.txt"
MENDOZA_PDF = GENUINE / "pdf" / "caed-20-1133-mendoza-redaction.pdf"


def _body(op: OpinionRecord) -> list[str]:
    return [strip_markers(p) for p in op.paragraphs]


def test_pleading_text_footnotes_at_the_page_foot_leave_the_body():
    op = text_opinion(CRANE_TEXT)
    notes = [strip_markers(n) for n in op.footnotes]
    assert len(notes) == 2
    assert notes[0].startswith("Defendant Weeks is represented by separate counsel.")
    assert notes[1].startswith("The undersigned has considered whether plaintiff")
    body = " ".join(_body(op))
    assert "Defendant Weeks is represented" not in body
    assert "The court found plaintiff stated potentially cognizable First" in body  # no "stated 1"
    assert "for in-camera review. (ECF No. 206.)" in body  # "review.1": the mark is gone
    assert "filed six days too late." in body and "late.2" not in body

    other = text_opinion(MENDOZA_TEXT)  # the label on an unnumbered line between pleading lines 27 and 28
    assert [strip_markers(n) for n in other.footnotes] == [
        "Citation to this unpublished Ninth Circuit opinion is appropriate pursuant to Ninth Circuit Rule 36-3(b)."]
    assert "Citation to this unpublished" not in " ".join(_body(other))


def test_pleading_text_headings_and_items_are_paragraphs_of_their_own():
    body = _body(text_opinion(CRANE_TEXT))
    for heading in ("I. Plaintiff’s Allegations", "II. In Camera Review", "A. Personnel Records",
                    "C. Confidential Memos", "IV. Further Scheduling"):
        assert heading in body, heading
    assert "2. Plaintiff’s motion for an extension of time (ECF No. 208) is denied." in body
    assert not any(p.strip("/ ") == "" for p in body)  # "////": the paper's sign that the text goes on
    assert any(p.startswith("A. The group defendants shall produce to plaintiff the redacted copy of Part C of "
                            "Rules Violation Report") for p in body)  # an item's indented first line runs on


def test_pleading_pdf_lines_stay_in_their_sentences():
    body = _body(pdf_opinion(CRANE_PDF))
    assert any(p.startswith("The undersigned reviewed the documents from the personnel records of defendants "
                            "Robinette and Probst") for p in body)
    assert "////" not in body
    notes = [strip_markers(n) for n in pdf_opinion(CRANE_PDF).footnotes]
    assert notes[-1].endswith("to file a request for extension of time.")  # no file-name stamp after it

    items = _body(pdf_opinion(MENDOZA_PDF))
    item = "2. The court orders that the unredacted and redacted versions of the Declaration of Gerhard P. Dietrich"
    assert any(p.startswith(item) and p.endswith("for filing under seal on the docket.") for p in items)


def test_a_second_order_title_under_the_first_is_head_matter():
    # the first paragraphs of the E.D. Cal. order Still v. Commissioner of Social Security, No.
    # 1:11-cv-00637 (2021), as the PDF route reads them (freelawproject/x-ray,
    # program/data1/gov.uscourts.caed.222763.30.0.pdf, 64b396db3dcf4ace7d26567e8ec01e1b05aaa91e)
    paragraphs = [
        "UNITED STATES DISTRICT COURT FOR THE EASTERN DISTRICT OF CALIFORNIA",
        "TRACIE STILL,", "Plaintiff, v.", "COMMISSIONER OF SOCIAL SECURITY,", "Defendant.",
        "No. 1:11-cv-00637-NONE-EPG ORDER GRANTING MOTION FOR ATTORNEY’S FEES (ECF No. 26)",
        "ORDER SEALING DOCKET NUMBERS 26-2 AND 26-3 AND REQUIRING COUNSEL TO RE-FILE SUCH DOCUMENTS WITH "
        "PROPER REDACTION",
        "Sengthiene Bosavanh (“Counsel”) of the Offices of Jeffrey Milam Law, attorney for Tracie Still "
        "(“Plaintiff”), filed a Motion for Attorney’s Fees Pursuant to 42 U.S.C. § 406(b) on November 16, 2015.",
        "For the reasons set forth below, the motion for attorney’s fees is granted.",
        "I. BACKGROUND",
        "On April 11, 2011, Plaintiff commenced this action for judicial review of a final denial of an "
        "application for disability benefits under the Social Security Act.",
    ]
    head, body, _ = split_matter(paragraphs)
    assert head[-1].startswith("ORDER SEALING DOCKET NUMBERS")
    assert body[0].startswith("Sengthiene Bosavanh")
