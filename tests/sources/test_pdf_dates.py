"""A PDF's footnote labels set before their note, its head and author line, and its decision date
(statinterp/sources/pdf.py), on genuine court PDFs (tests/fixtures/genuine/pdf, sources in its README).

The Eleventh Circuit's opinion was in the text-quality study's third held-apart half: judged there
(its 2 footnotes stayed in the body, "Before ..." and "FAY, Circuit Judge:" ran together, no date),
then looked at for these rules, so it is in-sample for them. The dates of the district orders come
from their closing "Dated:" line or, without one, their e-filing banner."""

from __future__ import annotations

import pytest

from statinterp.sources.pdf import _decided, read_pdf
from tests.support.paths import REPO_ROOT

PDFS = REPO_ROOT / "tests" / "fixtures" / "genuine" / "pdf"


@pytest.mark.slow
def test_eleventh_circuit_footnotes_head_author_and_date():
    record = read_pdf(PDFS / "ca11-08-14991-robinson.pdf")
    majority, concurrence = record.opinions
    # the note's small label comes after its text in the PDF's order but stands before it
    assert majority.footnotes == (
        "§ 1328 refers to 11 U.S.C. § 1328, which outlines the requirements for discharge.",
        "Robinson brought her claim under Title VII of the Civil Rights Act of 1964, the Civil Rights Act of "
        "1991, and multiple Alabama state law provisions. 42 U.S.C. § 2000 et seq., 42 U.S.C. § 1981.")
    assert not any("§ 1328 refers" in p or "Robinson brought her claim under" in p for p in majority.paragraphs)
    assert any(p.endswith("the case is dismissed.”") for p in majority.paragraphs)  # its mark gone
    # two short lines ending a sentence each, double spaced: two paragraphs, so the author line is found
    assert majority.author == "Fay" and majority.paragraphs[0] == "FAY, Circuit Judge:"
    assert record.head_matter.endswith("Before MARCUS, FAY and ANDERSON, Circuit Judges.")
    assert not any(p.startswith(("BRENDA ROBINSON", "Plaintiff-Appellant")) for p in majority.paragraphs)
    assert concurrence.author == "Anderson"
    assert record.decision_date == "2010-02-05"  # "(February 5, 2010)" under the caption


@pytest.mark.slow
@pytest.mark.parametrize(("name", "date"), [
    ("cacd-8-16-cv-01261-experian", "2016-08-05"),  # "Dated: August 5, 2016" at its end
    ("cand-04-0098-alvarado-fedex", "2005-08-23"),  # "Dated: 8/23/05"
    ("njd-18-16281-mccrimmon", "2020-06-30"),  # no closing date: the banner's "Filed 06/30/20"
    ("nysd-12-5708-hostess", "2013-09-27"),  # the same: "Filed 09/27/13"
])
def test_district_orders_have_their_decision_date(name, date):
    assert read_pdf(PDFS / f"{name}.pdf").decision_date == date


def test_the_court_date_comes_before_the_closing_date_and_the_banner():
    banner = "Case 2:15-cv-00208-TLN-KJN Document 209 Filed 04/22/20 Page 1 of 5"
    assert _decided("", "IT IS SO ORDERED.\nDated: April 21, 2020", banner) == "2020-04-21"
    assert _decided("", "IT IS SO ORDERED.", banner) == "2020-04-22"
    assert _decided("(February 5, 2010)", "Dated: April 21, 2020", banner) == "2010-02-05"
    assert _decided("", "", "Case: 25-1689, 07/15/2025, DktEntry: 28.1, Page 1 of 2") == "2025-07-15"
    # a date in a sentence is no decision date
    assert _decided("", "Plaintiff dated his original federal complaint November 13, 2018.", "") == ""


@pytest.mark.parametrize(("line", "docket"), [
    # N.D. Ala.'s three-judge court (ninth held-apart half, judged blind, then looked at): a colon after "No."
    ("Case No.: 2:21-cv-1291-AMM", "2:21-cv-1291-AMM"),
    # E.D. Ky. (the seventh half): "NO." in capitals
    ("CIVIL ACTION NO. 2:19-00019 (WOB-CJS)", "2:19-00019"),
    ("No. 21-50498", "21-50498"),
])
def test_a_docket_number_after_no_with_a_colon_or_in_capitals(line: str, docket: str) -> None:
    from statinterp.sources.pdf import _DOCKET

    m = _DOCKET.search(line)
    assert m is not None and m.group(1) == docket
