"""CourtListener's text of a PDF (``pdftotext -layout``: form feeds, page numbers) keeps its
pages: each page's printed number (else its place) starts it, and each footnote starts on the
page it stands on, as the PDF itself gives them (issue 34). Genuine texts of
tests/fixtures/genuine/pdf-modern/ and scotus-slip/, beside the same courts' PDFs in pdf/."""

from __future__ import annotations

from statinterp.collection.store import line_pages
from statinterp.sources.cleaning import clean_markup, clean_plain
from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord, OpinionRecord
from tests.support.paths import REPO_ROOT

GENUINE = REPO_ROOT / "tests" / "fixtures" / "genuine"


def pages(op: OpinionRecord) -> list[str | None]:
    record = CaseRecord(source="text", source_id="x", name="x", name_abbreviation="", decision_date="",
                        docket_number="", citations=(), court="", jurisdiction="", head_matter="", judges="",
                        parties="", attorneys="", opinions=(op,))
    return line_pages(record)[0]


def note_pages(op: OpinionRecord) -> list[str | None]:
    return pages(op)[len(op.paragraphs):]


def test_footnotes_of_a_pdfs_text_start_on_their_pages():
    tax = clean_plain((GENUINE / "pdf-modern" / "tax-court-memo-2020-26.txt").read_text("utf-8"))
    assert note_pages(tax) == ["1", "3", "4", "8", "9", "12", "13", "16", "20", "23", "24", "25", "30", "31", "31"]
    ca5 = clean_plain((GENUINE / "pdf-modern" / "ca5-21-50498.txt").read_text("utf-8"))
    assert note_pages(ca5) == ["1", "3", "7", "9"]
    slip = clean_plain((GENUINE / "scotus-slip" / "tarrant-11-889.txt").read_text("utf-8"))
    assert note_pages(slip)[0] == "3"  # "Interpretive comments were included in the Compact", slip page 3


def test_the_text_and_the_pdf_give_a_footnote_the_same_pages():
    """Footnote 2 of the Fifth Circuit runs from page 7 on to page 8, at the same character, and
    the Tax Court's footnote 10 from page 23 on to 24, by either route."""
    for text, pdf, k in (("ca5-21-50498.txt", "ca5-21-50498-st-pierre.pdf", 2),
                         ("tax-court-memo-2020-26.txt", "tc-memo-2020-26-bordelon.pdf", 9)):
        plain = clean_plain((GENUINE / "pdf-modern" / text).read_text("utf-8"))
        case = read_pdf(GENUINE / "pdf" / pdf)
        assert isinstance(case, CaseRecord)
        read = case.opinions[0]
        assert len(plain.page_starts[len(plain.paragraphs) + k]) == 2
        assert plain.page_starts[len(plain.paragraphs) + k] == read.page_starts[len(read.paragraphs) + k]
        assert plain.footnotes[k] == read.footnotes[k]


def test_body_pages_of_a_pdfs_text_are_its_printed_pages():
    """Checked by hand against the printed pages (pdftotext -f N -l N), as for the PDF."""
    ca5 = clean_plain((GENUINE / "pdf-modern" / "ca5-21-50498.txt").read_text("utf-8"))
    i = next(i for i, p in enumerate(ca5.paragraphs) if "St. Pierre’s husband passed away" in p)
    at = ca5.paragraphs[i].index("St. Pierre’s husband passed away")
    starts = [s for s in ca5.page_starts[i] if s[0] <= at]
    assert (starts[-1][1] if starts else pages(ca5)[i]) == "4"
    html = clean_markup((GENUINE / "pdf-modern" / "ca5-21-50498.html_with_citations.html").read_text("utf-8"))
    assert html.page_starts == ca5.page_starts  # CourtListener's html_with_citations: the same pages


def test_a_text_without_page_breaks_gets_no_pages():
    op = clean_plain((GENUINE / "pdf-text" / "dc-circuit-96-7169.txt").read_text("utf-8"))
    assert op.page_starts == ()
