"""Whole sentences around citations (issue 34): the segmenter never splits a citation eyecite finds
(statutes with their code abbreviations, cases, Id., supra), nor one shaped as reporters-db's statute and
reporter patterns are for a state eyecite does not know (the example data's "Marl."); legal
abbreviations come from reporters-db's lists."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import statinterp.text.segmentation as segmentation
from statinterp.text.segmentation import LEGAL_ABBREVIATIONS, build_pipeline, sentence_spans

ROOT = Path(__file__).resolve().parents[2]

CAL = "The scooter is a vehicle within the meaning of Cal. Veh. Code § 21200, which governs bicycles."
NY = "A bicycle is a vehicle under N.Y. Veh. & Traf. Law § 125, as the court held."
MARL_STATUTE = ("The code's definition was written for streets, before bringing bicycles back in by a special rule, "
                "Marl. Veh. Code §§ 670, 21.200, which suggests that the Legislature did not regard them as vehicles.")
MARL_CASE = ("The word bears its ordinary meaning, City of Eastbrook v. Dalton, 212 Marl. App. 341, 344 (2004), "
             "and the device must serve that function, Post 17 v. Park Comm'n, 231 Marl. 655, 663 (2009).")
MARL_PROCEDURE = "Such a challenge must be brought under Marl. Code Civ. Proc. § 1060."
CASES = "See Smith v. Jones, 500 U.S. 100, 105 (1990)."
JOURNAL = "The point is made in 46 Notre Dame Law. 55, 142 (1972), and elsewhere."


@pytest.fixture(scope="module", params=[False, True], ids=["default", "joined"])
def nlp(request):
    return build_pipeline(join_lines=request.param)


def sentences(nlp, text: str) -> list[str]:
    doc = nlp(text)
    return [text[a:b] for a, b in sentence_spans(doc)]


@pytest.mark.parametrize("sentence", [CAL, NY, MARL_STATUTE, MARL_CASE, MARL_PROCEDURE, CASES, JOURNAL])
def test_a_sentence_citing_a_statute_or_a_case_stays_whole(nlp, sentence):
    text = f"The court agreed. {sentence} The judgment is affirmed."
    assert sentences(nlp, text) == ["The court agreed.", sentence, "The judgment is affirmed."]


def test_id_and_supra_stay_with_their_sentence(nlp):
    text = "Id. at 106. The court, supra, at 5, said so. See Jones, supra, 500 U.S. at 104. It held."
    assert sentences(nlp, text) == ["Id. at 106.", "The court, supra, at 5, said so.",
                                    "See Jones, supra, 500 U.S. at 104.", "It held."]


@pytest.mark.parametrize(("text", "expected"), [
    ("He went to the Hill. The end.", ["He went to the Hill.", "The end."]),
    ("See the Act. 7 U.S.C. § 5 applies.", ["See the Act.", "7 U.S.C. § 5 applies."]),
    ("He joined the Army. The Code § 5 governs.", ["He joined the Army.", "The Code § 5 governs."]),
    ("It was decided in Marl. Id. at 5.", ["It was decided in Marl.", "Id. at 5."]),
])
def test_sentences_that_merely_end_before_a_citation_still_end(nlp, text, expected):
    assert sentences(nlp, text) == expected


def test_eyecite_keeps_a_citation_the_shapes_do_not_know(nlp, monkeypatch):
    """"46 Notre Dame Law. 55": a journal eyecite knows, whose name is not all abbreviations."""
    text = f"The court agreed. {JOURNAL}"
    assert sentences(nlp, text) == ["The court agreed.", JOURNAL]
    monkeypatch.setattr(segmentation, "_line_citation_spans", lambda line: ())
    assert len(sentences(nlp, text)) == 3  # without eyecite's span the sentence is cut after "Law."


def test_eyecite_runs_only_where_a_citation_may_go_on(monkeypatch):
    calls: list[str] = []
    real = segmentation._line_citation_spans

    def counting(line: str):  # noqa: ANN202
        calls.append(line)
        return real(line)

    monkeypatch.setattr(segmentation, "_line_citation_spans", counting)
    nlp = build_pipeline()
    nlp("The court agreed. In 1990 the Congress acted. See Smith v. Jones, 500 U.S. 100 (1990). He left the "
        "Commission. On 3 May it met. Id. at 5.")
    assert calls == []
    nlp(f"The court agreed. {JOURNAL}")
    assert len(calls) == 1


def test_abbreviations_come_from_reporters_db():
    import reporters_db

    hand_kept = set(segmentation._ABBREVIATION_TEXT.split())
    listed = segmentation._listed_abbreviations()
    # statute and journal words, state and case-name abbreviations the hand-kept list no longer holds
    for form in ("Transp.", "Admin.", "Const.", "Mortg.", "Harv.", "Tex."):
        assert form in listed and form not in hand_kept and form in LEGAL_ABBREVIATIONS
    assert "Tex." in reporters_db.STATE_ABBREVIATIONS and "Mortg." in reporters_db.CASE_NAME_ABBREVIATIONS
    assert "Rest." not in listed and "Coal." not in listed  # English words: they end sentences in prose
    assert not hand_kept & listed  # each abbreviation in one list only
    assert {"Dkt.", "Decl.", "Jan.", "Mr.", "Id.", "v."} <= hand_kept  # what the lists lack


def test_a_case_name_abbreviation_from_the_lists_no_longer_ends_a_sentence():
    nlp = build_pipeline()
    text = "The lender, Wells Fargo Home Mortg. Corp., foreclosed. It sold the house."
    assert sentences(nlp, text) == ["The lender, Wells Fargo Home Mortg. Corp., foreclosed.", "It sold the house."]


@pytest.mark.slow
def test_every_sentence_found_in_the_example_collection_and_a_statute_citing_opinion_is_whole(tmp_path):
    """README's three-command example (its CAP and text sources) and a text opinion citing statutes:
    `find vehicle` returns no sentence cut inside a citation."""
    from statinterp.collection.find import find_term
    from statinterp.collection.ingest import ingest
    from statinterp.collection.store import Collection

    sources = tmp_path / "sources"
    shutil.copytree(ROOT / "data" / "example" / "sources", sources)
    (sources / "text" / "people-v-rider.txt").write_text(
        "People v. Rider\n\n" + CAL + " The scooter was ridden on a sidewalk.\n\n" + NY
        + " So is a scooter.\n", encoding="utf-8")
    ingest([sources / "cap", sources / "text"], tmp_path / "col", citations=False, statistics=False)
    with Collection.open(tmp_path / "col") as c:
        found = find_term(c, "vehicle")
    texts = [s["text"] for s in found.tables["sentence"].values()]
    assert CAL in texts and NY in texts
    assert any(t.startswith("The code's definition of \"vehicle\"") and "Marl. Veh. Code §§ 670, 21.200, which" in t
               for t in texts)
    assert any("see Marl. Veh. Code § 21.200 (a person riding a bicycle" in t for t in texts)
    assert any("City of Eastbrook v. Dalton, 212 Marl. App. 341, 344 (2004), and under Post 17" in t for t in texts)
    cut = [t for t in texts if t.endswith(("Marl.", "Veh.", "Cal.", "App.", "Traf.", "Code", "N.Y."))]
    assert cut == []
    assert not any(t.startswith(("Veh.", "Code §", "App. ", "Traf.")) for t in texts)
