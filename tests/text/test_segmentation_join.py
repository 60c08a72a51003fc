"""Line-joining segmentation (``build_pipeline(join_lines=True)``, what ``statinterp find`` uses): the
boundary rules added for the exact-sentence target of issue 17, one test per rule, each with the layout
it must leave alone. None of them changes the default segmentation (last test)."""

from __future__ import annotations

import pytest

from statinterp.text.segmentation import build_pipeline, lines_may_join
from tests.support.segmentation import spans

QUOTE_END = ("It covers those who circumvent “a measure that controls access to a work protected under” Title 17, "
             "whereas § 1201(b) does not. The “Act” is the Plaintiffs’ Copyright Act.")
DETACHED_QUOTE = ("It applies “to the owner of a copyright.... ” 17 U.S.C. § 1201(3)(A). It was “protected under "
                  "this title.... ” Although it broadly provides liability, it stops there.")
NUMBER_PAREN = ("Plaintiff filed suit. (Pl. Mem. at 10 n. 4; Conant Dep. at 104) Plaintiff’s criticism fails. "
                "It is a sum of Five Thousand ($5,000) dollars. Section 1201(a)(2) Congress enacted.")
HEADING_NUMBER = ("A. The Microchips Circumvent the Measure that Controls Access to the Programs\n"
                  "72. SCC admits that its microchips bypass the sequence.\nC. Technologies and Provision\n"
                  "103.The Studios have established that.")
COLON_LOWER = ("The statute defines a mask work as:\na series of related images, however fixed.\n"
               "Serious harm means a likelihood of:\nb. Killing another person.")
COMMA_LABEL = ("The benefit is based on the participant’s (i) final average compensation, (ii) Social Security "
               "benefit, and (iii) Length of employment. It found: (1) Those transactions were elsewhere; and (2) "
               "Rosen was not the broker.")


def test_a_closing_double_quote_after_a_lower_case_word_before_a_capital_ends_the_sentence(joined):
    assert spans(joined, QUOTE_END) == [
        "It covers those who circumvent “a measure that controls access to a work protected under”",
        "Title 17, whereas § 1201(b) does not.",
        # a quoted word before a lower-case word and a closing single quote (a possessive) do not
        "The “Act” is the Plaintiffs’ Copyright Act."]


def test_a_closing_quote_set_off_after_final_punctuation_opens_the_next_sentence(joined):
    assert spans(joined, DETACHED_QUOTE) == [
        "It applies “to the owner of a copyright....", "” 17 U.S.C. § 1201(3)(A).",
        # before a sentence opener the quote closes the sentence it follows
        "It was “protected under this title.... ”", "Although it broadly provides liability, it stops there."]
    # a straight quote opening a quotation after a sentence is not a closing quote
    assert spans(joined, 'It held so. "No person shall do it." The end.') == [
        "It held so.", '"No person shall do it."', "The end."]


def test_a_closing_parenthesis_after_a_number_before_a_capitalised_word_ends_the_sentence(joined):
    assert spans(joined, NUMBER_PAREN) == [
        "Plaintiff filed suit.", "(Pl. Mem. at 10 n. 4; Conant Dep. at 104)", "Plaintiff’s criticism fails.",
        # not before a lower-case word; a subsection number before a capitalised word is split too (the
        # data set decides so more often than not)
        "It is a sum of Five Thousand ($5,000) dollars.", "Section 1201(a)(2)", "Congress enacted."]
    assert spans(joined, "It is so.\n“(2) Does the will require it?") == [
        "It is so.", "“(2)", "Does the will require it?"]


def test_a_heading_line_is_joined_to_the_paragraph_number_that_follows(joined):
    assert spans(joined, HEADING_NUMBER) == [
        "A. The Microchips Circumvent the Measure that Controls Access to the Programs\n72.",
        "SCC admits that its microchips bypass the sequence.",
        "C. Technologies and Provision\n103.The Studios have established that."]
    # after a finished line or a semicolon the numbered paragraph starts a sentence of its own
    assert spans(joined, "It was so.\n2. There is a likelihood of damage;\n3. The inmate is unable.") == [
        "It was so.", "2.", "There is a likelihood of damage;", "3.", "The inmate is unable."]
    assert lines_may_join("Access to the Programs", "72. SCC admits")
    assert lines_may_join("Copy-Control Provision", "103.The Studios have established that.")
    assert not lines_may_join("of damage;", "3. The inmate")


def test_a_colon_line_is_joined_to_a_line_starting_with_a_lower_case_word(joined):
    assert spans(joined, COLON_LOWER) == [
        "The statute defines a mask work as:\na series of related images, however fixed.",
        # a lower-case letter label after a colon is still split off
        "Serious harm means a likelihood of:", "b.", "Killing another person."]
    assert lines_may_join("defines a mask work as:", "a series of related images")
    assert not lines_may_join("a likelihood of:", "b. Killing")
    assert not lines_may_join("The statute provides:", "Each amendment shall apply.")


def test_a_label_after_a_comma_continues_the_sentence(joined):
    first = ("The benefit is based on the participant’s (i) final average compensation, (ii) Social Security "
             "benefit, and (iii) Length of employment.")
    # a label after a colon or a semicolon: the data set's convention (find's default) ends the sentence
    # after it; the layout rule list_in_sentence keeps the list whole
    assert spans(joined, COMMA_LABEL) == [
        first, "It found: (1)", "Those transactions were elsewhere; and (2)", "Rosen was not the broker."]
    whole = build_pipeline(join_lines=True, layout_rules=["numbered_heading", "dot_leaders", "list_in_sentence"])
    assert spans(whole, COMMA_LABEL) == [
        first, "It found: (1) Those transactions were elsewhere; and (2) Rosen was not the broker."]
    assert spans(joined, "It is the greater of (b) and (c) of this section, or (ii) Two percent of pay.") == [
        "It is the greater of (b) and (c) of this section, or (ii) Two percent of pay."]


def test_the_default_segmentation_ignores_these_rules():
    nlp = build_pipeline()
    assert spans(nlp, QUOTE_END)[0].endswith("Title 17, whereas § 1201(b) does not.")
    assert spans(nlp, DETACHED_QUOTE)[0] == "It applies “to the owner of a copyright.... ”"
    assert spans(nlp, NUMBER_PAREN)[1] == "(Pl. Mem. at 10 n. 4; Conant Dep. at 104) Plaintiff’s criticism fails."
    assert spans(nlp, HEADING_NUMBER)[:2] == [
        "A. The Microchips Circumvent the Measure that Controls Access to the Programs", "72."]
    assert spans(nlp, COLON_LOWER)[:2] == [
        "The statute defines a mask work as:", "a series of related images, however fixed."]
    assert spans(nlp, COMMA_LABEL)[0].startswith("The benefit is based on the participant’s (i) final average")
    assert spans(nlp, "It is affirmed.\nMemorandum: This action arises.")[1] == "Memorandum: This action arises."
    assert spans(nlp, "It prohibits a device that—\n(A)is primarily designed.") == [
        "It prohibits a device that—", "(A)is primarily designed."]


def test_a_closing_double_quote_after_other_characters_than_a_letter_ends_the_sentence(joined):
    assert spans(joined, "It is known as ‘Wild Horse Valley/ ” Id. It was “pretty good,” R.6-314, and “hard.” So.") == [
        "It is known as ‘Wild Horse Valley/ ”", "Id.",
        # after a comma the quotation goes on
        "It was “pretty good,” R.6-314, and “hard.”", "So."]


def test_a_single_word_and_a_colon_opening_a_line_end_a_sentence(joined):
    assert spans(joined, "It is affirmed.\nMemorandum: This action arises out of a fire. It held: The rule.") == [
        "It is affirmed.", "Memorandum:", "This action arises out of a fire.", "It held: The rule."]


def test_a_label_glued_to_its_first_word_continues_an_unfinished_line(joined):
    text = ("It prohibits a device that—\n(A)is primarily designed for it; or\n(4)engaging in any activity;\n"
            "(3)Sums paid in recognition of services.")
    assert spans(joined, text) == [text]
    assert spans(joined, "A transaction that—\n(A)(i) is a wash sale.") == [
        "A transaction that—\n(A)(i) is a wash sale."]
    # a bracketed letter glued to a word is an alteration, not a label
    assert spans(joined, "It is defined\n[C]ircumvent means to avoid.") == [
        "It is defined", "[C]ircumvent means to avoid."]
    assert lines_may_join("such a measure; or", "(4)engaging in any activity")


def test_a_numbered_item_opening_with_a_gerund_continues_a_list_after_a_semicolon(joined):
    text = ("They are enjoined from:\n3. Circumventing the measure in a work;\n4. Using the trademarks;\n"
            "5. Manufacturing devices.")
    assert spans(joined, text) == [
        "They are enjoined from:", "3.", "Circumventing the measure in a work;\n4.", "Using the trademarks;\n5.",
        "Manufacturing devices."]
    assert lines_may_join("the measure in a work;", "4. Using the trademarks")
    assert not lines_may_join("of damage;", "3. The inmate")


# --------------------------------------------------------------------------------------------
# The rules are individually switchable (build_pipeline(join_lines=True, join_rules=...))


def test_join_rule_names_are_checked_and_the_default_is_a_subset():
    from statinterp.text.segmentation import DEFAULT_JOIN_RULES, JOIN_RULES, join_rule_set

    assert join_rule_set(None) == DEFAULT_JOIN_RULES <= set(JOIN_RULES)
    assert join_rule_set(["quote_end"]) == {"quote_end"}
    with pytest.raises(ValueError, match="unknown line-joining rule.*no_such_rule"):
        build_pipeline(join_lines=True, join_rules=["no_such_rule"])


@pytest.mark.parametrize("rule,text,with_rule,without", [
    ("quote_end", QUOTE_END, 3, 2),
    ("number_paren", NUMBER_PAREN, 6, 4),
    ("label_after_comma", COMMA_LABEL, 4, 6),
    ("continuation", "It prohibits a device made\nprimarily for it.", 1, 2),
    ("open_word", "It was argued at the\nCourt of Appeals.", 1, 2),
    ("colon_lower", "The statute defines a mask work as:\na series of related images, however fixed.", 1, 2),
    ("lead_word_colon", "It is affirmed.\nMemorandum: This action arises out of a fire.", 3, 2),
])
@pytest.mark.slow
def test_each_rule_switched_off_alone_undoes_its_boundaries(rule, text, with_rule, without):
    from statinterp.text.segmentation import JOIN_RULES

    every = set(JOIN_RULES)
    layout = ["numbered_heading", "dot_leaders"]  # the data set's conventions alone: no list_in_sentence
    assert len(spans(build_pipeline(join_lines=True, join_rules=every, layout_rules=layout), text)) == with_rule
    assert len(spans(build_pipeline(join_lines=True, join_rules=every - {rule}, layout_rules=layout), text)) == without


def test_lines_may_join_follows_the_rules():
    from statinterp.text.segmentation import JOIN_RULES

    every = set(JOIN_RULES)
    assert lines_may_join("defines a mask work as:", "a series of related images", every)
    assert not lines_may_join("defines a mask work as:", "a series of related images", every - {"colon_lower"})
    assert lines_may_join("Access to the Programs", "72. SCC admits", every)
    assert not lines_may_join("Access to the Programs", "72. SCC admits", every - {"heading_number"})
    assert not lines_may_join("the measure in a work;", "4. Using the trademarks", every - {"gerund_item"})


def test_a_closing_double_quote_after_a_nested_quote_that_ends_with_a_comma_goes_on(joined):
    """Fisher v. University of Tex. at Austin, 570 U.S. 297 (2013), slip opinion: a quotation in a
    quotation ending with a comma is cited on, not ended; after a word the nested quote still ends it."""
    text = ("Strict scrutiny must not be “ ‘strict in theory, but fatal in fact,’ ” Adarand, supra, at 237. "
            "It was called “a ‘fair’ ” Rule. Then it ended.")
    assert spans(joined, text) == [
        "Strict scrutiny must not be “ ‘strict in theory, but fatal in fact,’ ” Adarand, supra, at 237.",
        "It was called “a ‘fair’ ”", "Rule.", "Then it ended."]


def test_a_heading_label_alone_on_its_line_is_no_cut_sentence(joined):
    """The README's example collection (State v. Ortiz): the heading "A" above "We agree with the
    Court of Appeals ..." ends with an article of the open-word rule but is a label, not a sentence
    cut after "a"; a line ending with that article after other words is cut."""
    from statinterp.text.segmentation import lines_may_join

    text = "A\nWe agree with the Court of Appeals that the word is to be given its ordinary meaning."
    assert spans(joined, text)[0] == "A"
    assert not lines_may_join("A", "We agree with the Court of Appeals")
    assert lines_may_join("It was, as the court put it, a", "vehicle in every ordinary sense.")
