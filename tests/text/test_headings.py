"""Headings' one home (statinterp.text.headings), on lines of genuine opinions (issue 34)."""

from statinterp.text.headings import heading_text, is_heading_line, is_titled
from statinterp.text.segmentation import _is_heading, _is_heading_line

# Lines of the Tax Court's T.C. Memo. 2020-26 (tests/fixtures/genuine/pdf-modern/tax-court-memo-2020-26.txt).
SECTION = "A. Section 465 principles"
GENERAL = "1. General rule"
AFTER_GENERAL = "For certain taxpayers (including individuals and certain closely held corporations), section 465(a)"
CUT = "Consequently, Mr. Bordelon bears the burden to show that he was at risk for the"


def test_sentence_case_headings_standing_alone_are_headings():
    # defect 9: the heading test wanted capitals, so these were sentences
    assert not is_titled(heading_text(GENERAL)) and not is_titled("Amounts at risk")
    assert is_heading_line(GENERAL, SECTION, AFTER_GENERAL)
    assert is_heading_line("2. Amounts at risk", "Sec. 465(a)(2).", "A taxpayer’s amount at risk for an activity")
    assert is_heading_line("IRS examinations and SNODs", "OPINION", "The SNOD for 2008 disallowed, among other things")
    assert is_heading_line(SECTION, "moot.", "1. General rule")


def test_titled_numbered_and_capital_headings():
    for line in ("III. Summary Judgment", "Gang Affiliation", "II. DISCUSSION", "(a) Ex Post Facto Claim",
                 "OPINION", "United States Court of Appeals", "Entered for the Court"):
        assert is_heading_line(line, "The court so held.", "The next paragraph opens here.")


def test_lines_that_are_no_headings():
    assert not is_heading_line(CUT, "It is so.", "debt.")  # a sentence cut at a page break
    assert not is_heading_line("Argentine Republic,")  # a caption's party: head matter, not a heading
    assert not is_heading_line("11905-14 2011 1,350,716 --- 270,143.20")  # a table's row of figures
    assert not is_heading_line("We affirm.")
    # a short sentence-case line that goes on, or that the line before leads into, is no heading
    assert not is_heading_line("Amounts at risk", "the taxpayer's", "A taxpayer’s amount")
    assert not is_heading_line("Amounts at risk", "It is so.", "includes amounts borrowed")
    assert not is_heading_line("The rule of the", "It is so.", "Court")
    # in sentence case, only standing alone
    assert not is_heading_line("General rule", "It is so.", "For certain", alone=False)


def test_the_segmenter_keeps_its_titled_test():
    """The segmenter's numbered-heading rules use the one home's titled test: segmentation unchanged."""
    assert _is_heading is is_titled
    assert _is_heading_line("4. ANALYSIS AND RESOLUTION") and _is_heading_line("(a) Bank Murders")
    assert not _is_heading_line(GENERAL)  # a sentence-case heading is find's to leave out, not the segmenter's
