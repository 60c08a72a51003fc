"""Paragraph numbers leave the text and become the paragraph's number (issue 34): "¶ 17", "{17}" (New
Mexico), "{¶ 17}" (Ohio), "[¶17]" (North Dakota), and "17." where the opinion numbers its paragraphs
(statinterp.sources.cleaning.paragraph_numbers); stored in the collection's ``paragraphs.number``.

Genuine samples: tests/fixtures/genuine/paragraph-numbers (README beside them names their sources). The
"17." rule (at least 5 numbered heads running 1, 2, 3, ..., half of the paragraphs) was set on the data
set's federal opinions (N.D. Ga. here); the state opinions' lists and the other genuine fixtures are
what it is checked on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection
from statinterp.sources.cleaning import clean_opinion, clean_plain, paragraph_numbers

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine"
NUMBERED = GENUINE / "paragraph-numbers"


def _numbers_left(opinion) -> list[str]:  # noqa: ANN001 - an OpinionRecord
    """The numbered paragraphs whose text still opens with a number and a period."""
    return [p for p, n in zip(opinion.paragraphs, opinion.numbers, strict=True) if n and re.match(r"\d+\.\s", p)]


def _lines(name: str) -> list[str]:
    return (NUMBERED / name).read_text(encoding="utf-8").split("\n")


def test_new_mexico_braces_leave_the_text_and_become_numbers():
    opinion = clean_plain((NUMBERED / "nm-garcia-2008.txt").read_text(encoding="utf-8"))
    assert opinion.paragraphs[1].startswith("Defendant Joshua Garcia appeals the district court's denial")
    assert opinion.paragraphs[3].startswith("At the suppression hearing, a narrative by Officer")
    assert opinion.numbers == ("", "1", "", "2")  # "OPINION" and "BACKGROUND" have none
    assert not any("{" in p for p in opinion.paragraphs)


@pytest.mark.parametrize(("name", "numbers", "first"), [
    ("wis-danner-2001.txt", ["1", "2", "3", "4", "5", ""], "Darci, Frederick and Rita Danner (the Danners)"),
    ("ohio-corrigan-2016.txt", ["1", "2", "3", "4", "5", ""], "A 2002 amendment to R.C. 5747.212"),
    # CAP's ".[¶ 2]" (a stray period before the mark) is left as it is
    ("nd-srb-2013.txt", ["1", "", "", "3", "4", "5"], "S.R.B. appeals the trial court’s order"),
    ("miss-chesney-2015.txt", ["1", "2", "", "", "", ""], "On December 19, 2011, Philadelphia, Mississippi Police"),
])
def test_marked_numbers_of_genuine_opinions(name, numbers, first):
    opinion = clean_opinion(_lines(name))
    assert list(opinion.numbers) == numbers
    assert opinion.paragraphs[0].startswith(first)
    marked = [p for p, n in zip(opinion.paragraphs, opinion.numbers, strict=True) if n]
    assert not any(p.lstrip().startswith(("¶", "{", "[¶")) for p in marked)


def test_numbered_findings_of_a_federal_court_are_paragraph_numbers():
    """The opinion the "17." rule was chosen on: findings of fact 1-71, then conclusions of law from 1 again."""
    opinion = clean_opinion(_lines("ndga-danube-1982.txt"))
    numbers = [n for n in opinion.numbers if n]
    assert numbers[:3] == ["1", "2", "3"] and len(numbers) == 97
    assert numbers.count("1") == 2  # the conclusions of law start again at 1
    assert _numbers_left(opinion) == []


@pytest.mark.parametrize(("name", "count"), [("mdtenn-smith-estate-1946.txt", 19), ("sdill-mccoy-1973.txt", 22)])
def test_the_rule_finds_the_numbered_paragraphs_of_other_courts(name, count):
    opinion = clean_opinion(_lines(name))
    numbers = [n for n in opinion.numbers if n]
    assert len(numbers) == count and numbers[:2] == ["1", "2"]
    assert _numbers_left(opinion) == []


def test_a_numbered_list_inside_an_opinion_keeps_its_numbers_as_text():
    opinion = clean_opinion(_lines("nj-angiola-2003.txt"))
    assert opinion.numbers == ()
    assert sum(1 for p in opinion.paragraphs if p[:2] in ("1.", "2.", "3.")) >= 3


@pytest.mark.parametrize("name", [pytest.param("scotus-slip/tarrant-11-889.txt", marks=pytest.mark.slow),
                                  "pdf-text/dc-circuit-96-7169.txt", "latin1/peyton-latin1.txt"])
def test_opinions_that_do_not_number_their_paragraphs_get_no_numbers(name):
    raw = (GENUINE / name).read_bytes().decode("utf-8", "replace")
    assert clean_plain(raw).numbers == ()


def test_a_mark_out_of_order_or_alone_stays_text():
    texts, numbers = paragraph_numbers(["¶ 3 First.", "¶ 1 of the lease provides that rent is due.", "¶ 4 Next."])
    assert numbers == ["3", "", "4"] and texts[1].startswith("¶ 1 of the lease")
    assert paragraph_numbers(["¶ 2 of the contract governs.", "The court agreed."]) == (
        ["¶ 2 of the contract governs.", "The court agreed."], [])


def test_four_numbered_heads_are_a_list_five_running_over_half_the_paragraphs_are_numbers():
    four = [f"{k}. Item {k}." for k in range(1, 5)]
    assert paragraph_numbers(four)[1] == []
    five = [f"{k}. The court finds {k}." for k in range(1, 6)] + ["Heading", "More text."]
    texts, numbers = paragraph_numbers(five)
    assert numbers == ["1", "2", "3", "4", "5", "", ""] and texts[0] == "The court finds 1."
    assert paragraph_numbers(five + ["Other."] * 4)[1] == []  # 5 of 11 paragraphs: under half


def test_page_starts_inside_a_numbered_paragraph_move_with_its_text():
    opinion = clean_opinion(["¶ 1 First paragraph.", "¶ 2 Second *44 paragraph."])
    assert opinion.paragraphs == ("First paragraph.", "Second paragraph.")
    assert opinion.page_starts[1] == ((7, "44"),)
    assert opinion.paragraphs[1][7:].startswith("paragraph")


def test_the_collection_stores_the_number_and_reads_it_back(tmp_path):
    source = tmp_path / "opinions"
    source.mkdir()
    text = (NUMBERED / "nm-garcia-2008.txt").read_text(encoding="utf-8")
    (source / "state-v-garcia.txt").write_text("State v. Garcia\n\n" + text, encoding="utf-8")
    ingest([source], tmp_path / "col", citations=False, statistics=False)
    with Collection.open(tmp_path / "col") as c:
        (case_id,) = c.case_ids()
        rows = [r for op in c.opinions(case_id) for r in c.opinion_paragraphs(op["id"])]
        numbered = {r.number: r.text for r in rows if r.number}
        assert set(numbered) == {"1", "2"}
        assert numbered["1"].startswith("Defendant Joshua Garcia") and numbered["2"].startswith("At the suppression")
        record = c.record(case_id)
        assert [n for op in record.opinions for n in op.numbers if n] == ["1", "2"]


def test_find_pins_a_public_domain_citation_to_the_stored_paragraph_number(tmp_path):
    """The number left the text: ``find`` takes the ¶ pin from ``paragraphs.number``."""
    from statinterp.collection.find import find_term
    from statinterp.collection.ingest import analysis_settings, prepare_cases
    from statinterp.collection.store import CollectionWriter
    from statinterp.sources.records import CaseRecord

    opinion = clean_opinion(["{21} The facts are plain.", "{22} Here the motor vehicle was a car.",
                             "So a motor vehicle it was."])
    assert opinion.paragraphs[1] == "Here the motor vehicle was a car." and opinion.numbers == ("21", "22", "")
    record = CaseRecord(
        source="text", source_id="jones", name="State v. Jones", name_abbreviation="State v. Jones",
        decision_date="2019-02-11", docket_number="", citations=(("official", "2019-NMSC-005"),),
        court="Supreme Court of New Mexico", jurisdiction="N.M.", head_matter="", judges="", parties="",
        attorneys="", opinions=(opinion,))
    with CollectionWriter(tmp_path / "col", analysis_settings(statistics=False)) as writer:
        writer.write(prepare_cases([record], None, citations=False))
    with Collection.open(tmp_path / "col") as c:
        found = find_term(c, "motor vehicle")
    got = {s["text"]: s["pin_cite"] for s in found.tables["sentence"].values()}
    assert got == {"Here the motor vehicle was a car.": "State v. Jones, 2019-NMSC-005, ¶ 22",
                   "So a motor vehicle it was.": "State v. Jones, 2019-NMSC-005, ¶ 22"}


def test_markup_readers_take_the_numbers_off_too():
    from statinterp.sources.cleaning import clean_markup

    opinion = clean_markup('<div><p>OPINION</p><p>¶ 1 The court <span class="citation">2021-NCSC-57</span> held.</p>'
                           "<p>¶ 2 We agree.</p></div>")
    assert opinion.paragraphs == ("OPINION", "The court 2021-NCSC-57 held.", "We agree.")
    assert opinion.numbers == ("", "1", "2")
