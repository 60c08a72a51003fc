"""An order's caption and title are head matter; list items and lines in capitals are lines of
their own; a stamp's stray letter is no text (issue 34). On genuine PDFs of
tests/fixtures/genuine/pdf/ (the C.D. Cal. order and North Carolina's opinion: the study's rules
half)."""

from __future__ import annotations

from functools import cache

from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord
from tests.support.paths import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "genuine" / "pdf"
ORDER = "cacd-8-16-cv-01261-experian"


@cache
def case(stem: str) -> CaseRecord:
    record = read_pdf(FIXTURES / f"{stem}.pdf")
    assert isinstance(record, CaseRecord), record
    return record


def test_an_orders_caption_and_title_are_head_matter():
    order = case(ORDER)
    assert order.head_matter.splitlines()[-4] == (
        "ORDER GRANTING CONSUMERINFO.COM, INC. dba EXPERIAN CONSUMER SERVICES’ APPLICATION FOR A PRELIMINARY "
        "INJUNCTION")  # a title over five lines, one paragraph (the closing lines follow it)
    assert "ESTEBAN LEON; and DOES 1 through 10, inclusive," in order.head_matter
    body = order.opinions[0].paragraphs
    assert body[0].startswith("On July 13, 2016, the Court issued")  # no stamp's "O" before it
    assert not any("ESTEBAN LEON" in p or p.startswith("ORDER GRANTING") for p in body)


def test_a_decree_in_capitals_is_a_line_of_its_own():
    """... of the order's closing matter, with its date and signature (defect 8: "Dated:" was cut
    from its date), after the order's last sentence."""
    order = case(ORDER)
    body = order.opinions[0].paragraphs
    assert body[-1] == "3. The Court finds that no bond is required."
    assert order.head_matter.splitlines()[-3:] == [
        "IT IS SO ORDERED", "Dated: August 5, 2016", "DAVID O. CARTER United States District Judge"]


def test_each_item_of_a_list_is_a_line_of_its_own():
    """The statute North Carolina quotes lists its items a. to i., one a line, each ending a sentence."""
    body = case("nc-2022-ncsc-1-gift-surplus").opinions[0].paragraphs
    for item in ("b. A video bingo game.", "c. A video craps game.", "d. A video keno game.",
                 "e. A video lotto game.", "f. Eight liner."):
        assert item in body


def test_an_opening_heading_in_any_case_ends_the_head_matter():
    """Tennessee's Workers' Compensation Appeals Board opens its opinion with "Memorandum Opinion"
    (title case) under a caption set in a ")" table, a summary and counsel: those are head
    matter. (A held-apart court of the text-quality study, looked at for this rule.)"""
    diaz = case("tn-wcab-diaz-appeals-board")
    assert "Ruben Diaz ) Docket No. 2019-06-0263" in diaz.head_matter
    assert "employee-appellee, pro se" in diaz.head_matter
    body = diaz.opinions[0].paragraphs
    assert body[0] == "Memorandum Opinion"
    assert body[1].startswith("Ruben Diaz (“Employee”), a thirty-six-year-old resident of Davidson County")


def test_a_concurrence_is_an_opinion_of_its_own():
    """The First Circuit's "— Concurring Opinion Follows —" / "BARRON, Circuit Judge, concurring in
    part and concurring in the judgment." (PDF page 17): a concurrence by Barron, as CAP and
    CourtListener store it; the line between the opinions goes; both footnotes stay the majority's."""
    ops = case("ca1-20-1507-calvary-chapel").opinions
    assert [(op.type, op.author) for op in ops] == [("majority", "Selya"), ("concurrence", "Barron")]
    assert ops[1].paragraphs[0].startswith("BARRON, Circuit Judge, concurring in part and concurring in the judgment.")
    assert ops[1].page_starts[0] == ((0, "17"),)
    assert len(ops[0].footnotes) == 2 and not ops[1].footnotes
    assert not any("Opinion Follows" in p for op in ops for p in op.paragraphs)
    assert [op.type for op in case("nc-2022-ncsc-1-gift-surplus").opinions] == ["majority"]
