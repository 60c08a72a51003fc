"""Running heads at any height, tables' rows, and a table that is no footnote (issue 34).

On genuine PDFs of tests/fixtures/genuine/pdf/. The Arizona order (``azd-mdl-15-2641``) was in
the text-quality study's held-apart half; it was looked at for these rules, so it is in-sample
for them now. Its appendix pages are landscape and portrait, so its repeated caption ("In re
Bard IVC Filters Products Liability Litigation, No. MDL 15-02641-PHX-DGC" / "SUGGESTION OF
REMAND AND TRANSFER ORDER") stands at a different height on each page, once without "PHX-".
"""

from __future__ import annotations

from functools import cache

from statinterp.sources.cleaning import strip_markers
from statinterp.sources.pdf import PdfLayout, layout
from tests.support.paths import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "genuine" / "pdf"
ARIZONA = "azd-mdl-15-2641-bard-remand"


@cache
def lay(stem: str) -> PdfLayout:
    return layout((FIXTURES / f"{stem}.pdf").read_bytes())


def paragraphs(stem: str) -> list[str]:
    return [strip_markers(p) for p in lay(stem).paragraphs]


def test_a_running_head_is_dropped_at_whatever_height_it_stands():
    paras = paragraphs(ARIZONA)
    assert not [p for p in paras if "Products Liability Litigation, No. MDL" in p]
    assert [p for p in paras if "SUGGESTION OF REMAND AND TRANSFER ORDER" in p] == [
        "SUGGESTION OF REMAND AND TRANSFER ORDER"]  # the title, on the first page only
    assert "Schedule A – Cases that Should Be Remanded by the Panel" in paras


def test_a_table_leaves_the_text_each_row_apart():
    """A table (three rows or more of three cells or more) is no sentence: it leaves the text, as
    the plain-text reader drops it (``cleaning.drop_tables``), each row kept apart in ``dropped``;
    the paragraphs around it stay apart. Before: each row was a paragraph of the opinion."""
    arizona = lay(ARIZONA)
    paras = paragraphs(ARIZONA)
    for row in ("Jessica Parker v. C. R. Bard, Inc. 2:15-cv-01739 Ala. N.D. 5:15-cv-00787",
                "Dean Becker v. C. R. Bard, Inc. 2:15-cv-02155 Cal. C.D. 2:15-cv-07937"):
        assert row not in paras
        assert row in arizona.dropped
    assert "Schedule A – Cases that Should Be Remanded by the Panel" in paras
    assert "Schedule B – Direct-Filed Cases to Be Transferred" in paras  # not run into the next title
    tax = lay("tc-memo-2020-26-bordelon")  # the Tax Court's table of deficiencies
    for row in ("19031-13 2008 $1,236,414 --- $247,282.80", "11905-14 2011 1,350,716 --- 270,143.20"):
        assert row not in [strip_markers(p) for p in tax.paragraphs]
        assert row in tax.dropped
    assert not [p for p in tax.paragraphs if "Deficiency" in p and "6662(a)" in p and len(p) < 80]


def test_a_table_in_a_smaller_font_is_no_footnote():
    """The exhibit list at the foot of the Arizona order's last page is set smaller than the body;
    it opens with no footnote mark, so it is no footnote."""
    assert lay(ARIZONA).footnotes == []
    assert any(p.startswith("908 Ciavarella Deposition") for p in paragraphs(ARIZONA))


def test_prose_is_not_cut_into_rows():
    """Lines of ordinary prose (a justified, double-spaced opinion) stay one paragraph."""
    paras = paragraphs("ca1-20-1507-calvary-chapel")
    assert any("denying the Chapel's request for immediate relief. But a" in p
               or "denying the Chapel’s request for immediate relief. But a" in p for p in paras)
