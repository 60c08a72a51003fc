"""A heading of double-spaced PDF-born text stands apart from the paragraph under it (issue 34:
the PDF and CourtListener's text of it should give the same sentences).

In ``pdftotext -layout`` text of a double-spaced opinion, a heading ("B.     Application to the
Many Loan") is one short line, indented like the paragraph that follows it; a blank line is only
the spacing. The heading ran into the paragraph's first sentence ("B. Application to the Many Loan
With regard to the Many LLC deductions, ..."), which the PDF route keeps apart. Genuine texts of
the rules half (tests/fixtures/genuine/README.md): the Tax Court's memo, D.N.J. and S.D.N.Y.
"""

from __future__ import annotations

import pytest

from statinterp.sources.cleaning import clean_plain, strip_markers
from tests.support.paths import FIXTURES

PDF_TEXT = FIXTURES / "genuine" / "pdf-modern"


@pytest.mark.parametrize(("name", "heading", "opening"), [
    ("tax-court-memo-2020-26.txt", "B. Application to the Many Loan", "With regard to the Many LLC deductions,"),
    ("tax-court-memo-2020-26.txt", "B. Kilgore LLC", "During the relevant years, Mr. Bordelon was"),
    ("njd-18-16281.txt", "II. LEGAL STANDARD", "In deciding a motion to dismiss pursuant to Federal"),
    ("nysd-12-5708.txt", "I. Background", "The following facts are not disputed unless otherwise noted."),
])
def test_heading_is_a_paragraph_of_its_own(name: str, heading: str, opening: str) -> None:
    paragraphs = [strip_markers(p) for p in clean_plain((PDF_TEXT / name).read_text(encoding="utf-8")).paragraphs]
    at = paragraphs.index(heading)  # before: "<heading> <opening> ..." one paragraph
    assert paragraphs[at + 1].startswith(opening)


def test_a_sentence_wrapped_under_an_indented_first_line_runs_on() -> None:
    """The paragraph's own first line is indented too, and is followed by its next line at the
    margin: that is no heading (only a short line alone before an indented line is)."""
    paragraphs = clean_plain((PDF_TEXT / "tax-court-memo-2020-26.txt").read_text(encoding="utf-8")).paragraphs
    text = " ".join(strip_markers(p) for p in paragraphs)
    assert "With regard to the Many LLC deductions, the Commissioner contends that the personal guarantee" in text


AGENCY = FIXTURES / "genuine" / "pdf-agency"


def test_a_heading_at_a_pages_head_after_a_sentences_end_stands_apart() -> None:
    """The USCIS Administrative Appeals Office's decision (ninth held-apart half of the text-quality
    study, judged blind, then looked at): page 2 ends a paragraph with "... § 204.5(h)(3)(v).", page 3
    opens with the heading "B. Original Contributions of Major Significance"; the page break hides the
    gap above it, and the heading ran into the paragraph before, in the PDF and in its text alike."""
    from statinterp.sources.pdf import read_pdf
    from statinterp.sources.records import CaseRecord

    record = read_pdf(AGENCY / "aao-eb1a-contributions-2025-pages2-3.pdf")
    assert isinstance(record, CaseRecord)
    text = (AGENCY / "aao-eb1a-contributions-2025-pages2-3.txt").read_text(encoding="utf-8")
    for paragraphs in ([strip_markers(p) for p in record.opinions[0].paragraphs],
                       [strip_markers(p) for p in clean_plain(text).paragraphs]):
        at = paragraphs.index("B. Original Contributions of Major Significance")
        assert paragraphs[at - 1].endswith("See 8 C.F.R. § 204.5(h)(3)(v).")
        assert paragraphs[at + 1].startswith("This criterion requires")
