"""An order's closing lines (signature, clerk, "Dated:") and the rest of a long caption are head
matter, not body sentences (issue 34), in a PDF and in CourtListener's text of it: genuine orders
of tests/fixtures/genuine/ (the text-quality study's rules half)."""

from __future__ import annotations

from statinterp.sources import CaseRecord, discover, read_partition
from statinterp.sources.cleaning import split_closing, split_matter
from statinterp.sources.pdf import read_pdf
from tests.support.paths import REPO_ROOT

GENUINE = REPO_ROOT / "tests" / "fixtures" / "genuine"


def _text_case(name: str) -> CaseRecord:
    cases = [c for p in discover([GENUINE / "pdf-modern" / name]) for c in read_partition(p)
             if isinstance(c, CaseRecord)]
    assert len(cases) == 1
    return cases[0]


def _body(case: CaseRecord) -> list[str]:
    return [p for op in case.opinions for p in op.paragraphs]


def test_the_clerks_signature_of_an_order_is_closing_matter_pdf_and_text():
    pdf = read_pdf(GENUINE / "pdf" / "ca10-21-800-liebowitz.pdf")
    assert isinstance(pdf, CaseRecord)
    for case in (pdf, _text_case("ca10-21-800.txt")):
        assert case.head_matter.splitlines()[-2:] == ["Entered for the Court", "CHRISTOPHER M. WOLPERT, Clerk"]
        body = _body(case)
        assert not any(p in ("Entered for the Court", "CHRISTOPHER M. WOLPERT, Clerk") for p in body)
        assert body[-1].startswith("A copy of the court’s Plan for Attorney Disciplinary Enforcement")


def test_a_judges_signature_and_date_after_the_last_sentence_are_closing_matter():
    pdf = read_pdf(GENUINE / "pdf" / "cand-04-0098-alvarado-fedex.pdf")
    assert isinstance(pdf, CaseRecord)
    for case in (pdf, _text_case("cand-04-0098.txt")):
        assert case.head_matter.splitlines()[-2:] == ["Dated: 8/23/05", "SUSAN ILLSTON United States District Judge"]
        assert _body(case)[-1] == "IT IS SO ORDERED."  # a sentence: it stays
        assert case.opinions[0].footnotes  # the footnote stays a footnote


# The Seventh Circuit's order 17-2400 (freelawproject/doctor at a66445041477ae18eb5d3c6792f477fc06d610d7,
# doctor/test_assets/recap_documents/ca7_3.pdf, its paragraphs as statinterp's PDF reader makes them):
# a caption set in a "]" table, then the title with its letters spaced out.
CA7 = ["United States Court of Appeals", "For the Seventh Circuit Chicago, Illinois 60604", "July 13, 2017",
       "By the Court:", "No. 17-2400", "IN RE: ] Appeal from the United",
       "FEDEX GROUND PACKAGE SYSTEM, ] States District Court for", "INC. EMPLOYMENT PRACTICES ] the Northern District",
       "LITIGATION ] of Indiana, South Bend", "] Division.", "MICHAEL TOFAUTE, et al., ]",
       "Plaintiffs-Appellants, ] No. 3:05-cv-00595-RLM-MGG", "]", "v. ] Robert L. Miller, Jr., Judge.", "]",
       "FEDEX GROUND PACKAGE SYSTEM, ]", "INC., ]", "Defendant-Appellant. ]", "O R D E R",
       "The court, on its own initiative, ORDERS the parties to this appeal to file a Statement, addressing "
       "whether this appeal should be consolidated with Appeal No. 17-2401.",
       "The parties’ Statements are due on or before July 21, 2017."]


def test_a_long_caption_and_a_spaced_out_title_are_head_matter():
    head, body, _ = split_matter(list(CA7))
    assert head == CA7[:19] and body == CA7[19:]


# The Second Circuit's order in 25-1686/1687/1689 (freelawproject/courtlistener at
# 26a474e60bd2131e0d05918eeb5f65c218cd6ecf, cl/recap/test_assets/acms_test.pdf; read as above, its
# long paragraphs shortened): its consolidated captions under the title.
CA2 = ["UNITED STATES COURT OF APPEALS", "FOR THE SECOND CIRCUIT", "Bainbridge Fund LTD,", "Plaintiff - Appellee, v.",
       "The Republic of Argentina,", "Defendant - Appellant.", "ORDER", "Docket No. 25-1686",
       "Petersen Energia Inversora, S.A.U.,", "Plaintiffs - Appellees, Docket No. 25-1687 v.", "Argentine Republic,",
       "Defendant – Appellant.", "Eton Park Capital Management, L.P., et al.",
       "Plaintiffs - Appellees, Docket No. 25-1689 v.", "Argentine Republic,", "Defendant – Appellant.",
       "In each of the above-captioned appeals, Appellant moves for a stay pending the appeal of the District "
       "Court's Turnover Order dated June 30, 2025, and for an administrative stay.",
       "IT IS HEREBY ORDERED that the Court grants a temporary administrative stay.",
       "For the Court:", "Catherine O’Hagan Wolfe, Clerk of Court"]


def test_consolidated_captions_under_the_title_and_for_the_court_are_head_matter():
    head, body, _ = split_matter(list(CA2))
    assert body == CA2[16:18]
    assert head == CA2[:16] + CA2[18:]


def test_a_sentence_cut_short_or_a_heading_at_the_end_stays():
    body = ["We hold so.", "Consequently, Mr. Bordelon bears the burden to show that he was at risk for the"]
    assert split_closing(body) == (body, [])
    body = ["It is so.", "The Commissioner argues the"]
    assert split_closing(body) == (body, [])
    assert split_closing(["The end."]) == (["The end."], [])


def test_a_decree_and_date_run_into_the_last_sentence_are_split_off():
    """Defect 8 in CourtListener's text of the C.D. Cal. order: "IT IS SO ORDERED Dated: August 5,
    2016" ran into the last sentence's paragraph, with no end: it is closing matter now."""
    case = _text_case("cacd-8-16-cv-01261.txt")
    assert _body(case)[-1] == "3. The Court finds that no bond is required."
    assert case.head_matter.splitlines()[-2:] == ["IT IS SO ORDERED Dated: August 5, 2016",
                                                  "DAVID O. CARTER United States District Judge"]
    # a paragraph cut short is no closing line: it stays whole
    body = ["It is so.", "He said so. The Commissioner argues the"]
    assert split_closing(body) == (body, [])
