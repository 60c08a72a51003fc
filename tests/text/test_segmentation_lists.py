"""Line-joining segmentation (``find``) of issue 34's list and signature defects, on genuine sentences
of the text-quality set (reports/text_quality.md, "Known defects still open"):

* Prewett v. Weems, 749 F.3d 454 (6th Cir. 2014): jsavelka/statutory_interpretation
  @9db9ba2aa162457dc36f2ef80e657e53618f402f, digital_musical_recording.zip, case
  ea88e3d3-8e23-4ff1-a145-635bcb90f4b6 (the set's si-ca6-prewett-2014);
* C.D. Cal. 8:16-cv-01261, order of August 5, 2016: freelawproject/doctor
  @a66445041477ae18eb5d3c6792f477fc06d610d7,
  doctor/test_assets/recap_extract/gov.uscourts.cacd.652774.40.0.pdf (the set's cacd-16-1261; its last
  page's lines as the PDF reader and CourtListener's text give them, line numbers removed).
"""

from __future__ import annotations

from statinterp.text.segmentation import build_pipeline
from tests.support.segmentation import spans

PREWETT = ("When a statute contains some ambiguity, as this one does, we should not construe it in a way that "
           "“tag[s]” Congress with “a taste for the bizarre.” Cortez Byrd Chips, Inc. v. Bill Harbert Constr. "
           "Co., 529 U.S. 193, 203 (2000).")


def test_a_quoted_word_ending_with_a_bracketed_alteration_goes_on(joined):
    # before the fix: "... in a way that “tag[s]”" | "Congress with “a taste for the bizarre.”"
    assert spans(joined, PREWETT) == [
        "When a statute contains some ambiguity, as this one does, we should not construe it in a way that "
        "“tag[s]” Congress with “a taste for the bizarre.”",
        "Cortez Byrd Chips, Inc. v. Bill Harbert Constr. Co., 529 U.S. 193, 203 (2000).",
    ]


def test_a_quote_ending_after_a_word_still_ends_the_sentence(joined):
    # the quote_end rule is kept for a word before the closing quote
    text = "It covers a work protected under” Title 17 alone."
    assert spans(joined, text) == ["It covers a work protected under”", "Title 17 alone."]


CACD_PDF = ("3. The Court finds that no bond is required.\nIT IS SO ORDERED\nDated: August 5, 2016\n"
            "DAVID O. CARTER\nUnited States District Judge\n")
CACD_TEXT = "The Court finds that no bond is required.\nIT IS SO ORDERED Dated: August 5, 2016\nDAVID O. CARTER\n"


def test_a_dated_line_is_one_sentence_whole(joined):
    # before the fix the PDF route gave "Dated:" | "August 5, 2016"
    assert "Dated: August 5, 2016" in spans(joined, CACD_PDF)
    assert "August 5, 2016" not in spans(joined, CACD_PDF)


def test_a_dated_line_glued_to_the_order_is_a_sentence_of_its_own(joined):
    # before the fix CourtListener's text gave "IT IS SO ORDERED Dated: August 5, 2016"
    assert spans(joined, CACD_TEXT)[1:3] == ["IT IS SO ORDERED", "Dated: August 5, 2016"]


def test_a_lead_word_and_colon_before_a_sentence_still_end_a_sentence(joined):
    text = "Memorandum: This action arises under the Act.\nDated: the fifth day of August.\n"
    assert spans(joined, text)[:2] == ["Memorandum:", "This action arises under the Act."]


def test_the_default_segmentation_keeps_the_dated_line_whole():
    assert "Dated: August 5, 2016" in spans(build_pipeline(), CACD_PDF)


def test_a_date_after_a_two_word_label_stays_with_its_label(joined):
    # the set's nm-ramirez-891689 (CourtListener's text): "Filing Date: June 13, 2011" is one line, whole
    assert spans(joined, "Filing Date: June 13, 2011\n") == ["Filing Date: June 13, 2011"]


def test_numbered_labels_after_commas_go_on_with_their_list(joined):
    """Santa Clara Superior Court (the text-quality study's sixth half): "(2)" after a comma went on
    the sentence before and cut the list into "Joric Pang, (2)" | "Lily Pang, and (3)"."""
    text = ("The Clerk rejected the motions against Cross-Defendants (1) Joric Pang, (2) Lily Pang, "
            "and (3) Campbell Land Company, L.P., for errors in the filing.")
    sents = [s.text for s in joined(text).sents]
    assert sents[-1] == ("Joric Pang, (2) Lily Pang, and (3) Campbell Land Company, L.P., for errors in the "
                         "filing.")
    # the data set's conventions stay: a label opening a list inside a sentence ends it, and a
    # closing parenthesis after a number without a comma before its label still ends a sentence
    assert sents[0].endswith("Cross-Defendants (1)")
    assert [s.text for s in joined("See Conant Dep. at 104) Plaintiffs criticism is wrong.").sents] == [
        "See Conant Dep. at 104)", "Plaintiffs criticism is wrong."]
