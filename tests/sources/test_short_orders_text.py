"""Short court orders in CourtListener's text of their PDFs (issue 34: the text stored from a PDF and
from CourtListener's text of it should give the same sentences). The PDF route put the caption of
these two orders in the head matter; the text route kept every caption line as a paragraph of the
order (and the Seventh Circuit's e-filing banner, "Pages: 1", as its first sentence):

* ``ca7-17-2400-order.txt``: a one-page order (no form feed), its caption in a "]" table whose
  cells run into one long paragraph, the title "ORDER" under it;
* ``ca2-25-1689-order.txt``: three captions in a row, the title "ORDER" in the right column of
  the first ("Bainbridge Fund LTD,   ORDER").

Both are the ``cl-plain_text`` route of the text-quality study's rules half
(experiments/text_quality_set.json), ``pdftotext -layout`` of the courts' PDFs (sources in
tests/fixtures/genuine/README.md).
"""

from __future__ import annotations

from statinterp.sources.cleaning import is_pdf_text
from statinterp.sources.plaintext import text_case
from tests.support.paths import FIXTURES

PDF_TEXT = FIXTURES / "genuine" / "pdf-modern"


def _case(name: str):
    return text_case((PDF_TEXT / name).read_text(encoding="utf-8"), name.removesuffix(".txt"))


def test_one_page_order_with_an_e_filing_banner_is_pdf_born_without_its_form_feed():
    """pdftotext ends the page with a form feed; a text saved with its end trimmed has none, and
    with 20 lines a one-page order showed no other sign of a PDF's layout."""
    text = (PDF_TEXT / "ca7-17-2400-order.txt").read_text(encoding="utf-8").rstrip()
    assert "\f" not in text
    assert is_pdf_text(text)  # before: False, so no head matter was split off
    case = text_case(text, "ca7-17-2400-order")
    assert len(case.opinions[0].paragraphs) == 2


def test_seventh_circuit_order_caption_is_head_matter():
    case = _case("ca7-17-2400-order.txt")
    paragraphs = case.opinions[0].paragraphs
    assert paragraphs[0].startswith("The court, on its own initiative, ORDERS the parties")
    assert len(paragraphs) == 2  # before: 20, from "Case: 17-2400 Document: 3 Filed: 07/13/2017 Pages: 1" on
    assert "Pages: 1" not in case.head_matter + " ".join(paragraphs)  # the banner is no text
    assert case.head_matter.split("\n")[0] == "United States Court of Appeals"
    assert case.head_matter.split("\n")[-1] == "ORDER"


def test_second_circuit_order_with_three_captions_is_head_matter():
    case = _case("ca2-25-1689-order.txt")
    paragraphs = case.opinions[0].paragraphs
    assert paragraphs[0].startswith("In each of the above-captioned appeals, Appellant moves for a stay")
    assert len(paragraphs) == 2  # before: 20, from "UNITED STATES COURT OF APPEALS" on
    head = case.head_matter.split("\n")
    assert "Bainbridge Fund LTD, ORDER" in head and "Defendant – Appellant." in head
    assert head[-1] == "Catherine O’Hagan Wolfe, Clerk of Court"
