"""The text-quality measures (experiments/text_quality.py) on shipped genuine opinions: each
counter finds the defect it names when that defect is planted in genuine stored sentences, and
finds none in the clean ones."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from experiments import text_quality as tq
from experiments.text_quality_set import MANIFEST, load_manifest
from tests.support.paths import FIXTURES

GENUINE = FIXTURES / "genuine"
INDIANA = GENUINE / "cap-indiana"  # Fox v. State, 997 N.E.2d 384 (Ind. Ct. App. 2013): CAP HTML
DC_CIRCUIT = GENUINE / "pdf-text" / "dc-circuit-96-7169.txt"  # CourtListener's plain text of a PDF


def _routes(tmp_path: Path) -> Path:
    """A set folder holding the two fixtures as routes (as experiments.text_quality_set lays them out)."""
    home = tmp_path / "fixture"
    shutil.copytree(INDIANA, home / "cap")
    (home / "text").mkdir()
    shutil.copy(DC_CIRCUIT, home / "text" / "dc.txt")
    return home


def _measure(home: Path, route: str, entry: dict | None = None) -> tq.RouteResult:
    entry = entry or {"id": "fixture", "court": "x", "footnotes": "html"}
    return tq.measure_route(entry, "rules", home, route, set(), tq.html_footnotes(home))


@pytest.mark.slow
def test_planted_defects_are_counted_in_genuine_sentences(tmp_path):
    home = _routes(tmp_path)
    clean = _measure(home, "cap")
    assert clean.status == "read"
    assert clean.counts["headers"] == clean.counts["glued"] == 0
    # Fox v. State: 4 footnotes in the HTML, all stored apart, none in the body.
    assert clean.counts["footnotes_expected"] == clean.counts["footnotes_stored"] == 4
    assert clean.counts["footnotes_recognised"] == 4
    assert clean.counts["footnotes_in_body"] == 0

    body = [s for s in clean.sentences if not s.footnote and len(s.text.split()) > 12]
    a, b, c, d = body[3], body[5], body[7], body[9]
    planted = [
        tq.Sentence(a.text[:40] + " Case: 21-50498 Document: 00516242060 Page: 7 Date Filed: 03/16/2022 "
                    + a.text[40:], False, False, a.page),
        tq.Sentence("[*2] " + b.text, False, False, b.page),
        tq.Sentence(c.text.replace(" ", " parties,3 ", 1), False, False, c.page),
        tq.Sentence(d.text[: len(d.text) // 2], False, False, d.page),  # cut mid-sentence
    ]
    before = tq.RouteResult("fixture", "x", "rules", "cap", "read")
    tq.tally(before, [a, b, c, d], set(), "")
    after = tq.RouteResult("fixture", "x", "rules", "cap", "read")
    tq.tally(after, planted, set(), "")
    for kind in ("headers", "labels", "glued", "fragments"):
        assert after.counts[kind] == before.counts[kind] + 1, kind
    assert before.counts["headers"] == before.counts["labels"] == before.counts["glued"] == 0


@pytest.mark.slow
def test_footnote_text_in_the_body_is_counted(tmp_path):
    """A footnote of the HTML moved into the body (as a reader that misses the aside would store
    it) is counted, by its number at the head of a body line and by its text."""
    home = _routes(tmp_path)
    html = home / "cap" / "NE2d" / "997" / "html" / "0001-01.html"
    text = html.read_text(encoding="utf-8")
    start = text.index('<aside data-label="1."')
    end = text.index("</aside>", start) + len("</aside>")
    aside = text[start:end]
    note = aside[aside.index("<p"):aside.rindex("</p>") + 4].replace("<p", "<p data-x", 1)
    moved = text[:start] + text[end:]
    moved = moved.replace("</article>", note.replace('data-x id="', 'id="x-') + "</article>", 1)
    html.write_text(moved, encoding="utf-8")
    result = tq.measure_route({"id": "fixture", "court": "x", "footnotes": "html"}, "rules", home, "cap", set(),
                              tq.html_footnotes(_routes(tmp_path / "orig")))
    assert result.counts["footnotes_expected"] == 4
    assert result.counts["footnotes_stored"] == result.counts["footnotes_recognised"] == 3
    assert result.counts["footnotes_in_body"] == 1


@pytest.mark.slow
def test_hand_checked_pin_of_the_fixture(tmp_path):
    """The manifest's hand-checked pin of Fox v. State (page 386, read in the HTML) is checked
    against the stored page; a wrong hand page is reported wrong."""
    home = _routes(tmp_path)
    result = _measure(home, "cap")
    pins = [p for p in load_manifest()["pins"] if p["entry"] == "cap-997ne2d384"]
    assert pins, f"{MANIFEST.name} lost the pin of the shipped fixture"
    index = {("cap-997ne2d384", "cap"): result}
    assert tq.check_pin(pins[0], index)["status"] == "right"
    assert tq.check_pin({**pins[0], "page": "999"}, index)["status"] == "wrong"
    assert tq.check_pin({**pins[0], "quote": "no such sentence anywhere"}, index)["status"] == "sentence not found"


@pytest.mark.slow
def test_text_route_is_read_and_page_debris_beyond_the_source_counted(tmp_path):
    home = _routes(tmp_path)
    records, status = tq.read_route(home / "text")
    assert status == "read" and len(records) == 1
    source = tq.source_text(home / "text")
    assert "Ideal Electronic Security" in source
    # "[ ]" the source holds itself (a quotation's omission) is not debris; more than it holds is:
    assert tq.bracket_debris(["the surety [ ] to reimbursement"], "the surety [ ] to reimbursement") == 0
    assert tq.bracket_debris(["[ ] M LLC; and for 2010", "retired [ ]members"], "") == 2


def test_a_pdf_without_a_reader_is_reported_not_measured(tmp_path):
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "x.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    records, status = tq.read_route(tmp_path / "pdf")
    assert records == []
    if importlib.util.find_spec("statinterp.sources.pdf") is None:
        assert status == "no reader"
    else:  # a PDF of no page is a bad record (or an error), never a case
        assert status != "read" and status != "no reader"


@pytest.mark.parametrize(("sentence", "reason"), [
    ("Mr. Bordelon bears the burden to show that he was at risk for the", "open end"),
    ("members of the Board were present.", "lowercase start"),
    ("¶ 17", "short"),
    ("(2)", "short"),
    ("We affirm.", None),
    ("Id.", None),
    ("e.g., the rule applies here.", None),
    ("He said, “It is done.”3", None),
    ("The Court agrees:", None),
    # a list item's label opens it: DOHA's quotation of a guideline (eighth held-apart half)
    ("(a) contact, regardless of method, with a foreign family member;", None),
    ("(ii) would receive a paid holiday the following day.", None),
    ("(a) the behavior happened so long ago;\n(b) the con", "open end"),
    ("members (a) of the Board were present.", "lowercase start"),
])
def test_fragment_reasons(sentence, reason):
    assert tq.fragment_reason(sentence) == reason


# Genuine sentences that close a quotation within a quotation with a space between the two
# closing quotes: the Third Circuit's Flora (data-set text) and North Carolina's Gift Surplus
# (CourtListener's text of its PDF, ¶ 18). The space is no open end.
@pytest.mark.parametrize("sentence", [
    "“ “Whether a particular incident of speech is made within a particular plaintiffs job duties is a"
    " mixed question of fact and law.’ ”",
    "In his dissenting opinion, Judge Ervin reasoned that “given that [plaintiffs’] equipment and"
    " activities . . . clearly involve the use of electronic devices to engage in or simulate game play"
    " based upon which a participant may win or become eligible to win a prize, the only basis upon which"
    " [p]laintiffs’ equipment and activities can avoid running afoul of [N.C.G.S.] § 14-306.4(b) is in the"
    " event that the game or simulated game involved is ‘dependent on skill or dexterity.’ ”",
])
def test_a_space_between_closing_quotes_is_a_sentence_end(sentence):
    assert tq.fragment_reason(sentence) is None
    # …but a quotation left open after the space is still an open end:
    assert tq.fragment_reason(sentence + " Sandhill") == "open end"


def test_headings_are_not_sentences():
    assert tq.is_heading("STATEMENT OF THE CASE", whole_line=True)
    assert tq.is_heading("Standard of Review", whole_line=True)
    assert not tq.is_heading("Standard of Review", whole_line=False)
    assert not tq.is_heading("the mother argues that the juvenile court erred", whole_line=True)


@pytest.mark.parametrize(("sentence", "hits"), [
    ("Case: 21-50498 Document: 00516242060 Page: 7 Date Filed: 03/16/2022", True),
    ("Case: 20-16276, 08/05/2020, ID: 11778722, DktEntry: 19, Page 1 of 15", True),
    ("Cite as: 569 U. S. ____ (2013)", True),
    ("The case was filed on 03/16/2022 and decided later.", False),
    # E.D. Mich. (fourth half, CAP text): a body sentence, no header
    ("A trier of fact could reasonably view this statement as Satterfield’s suggestion of a legitimate ground "
     "Futch could cite as a basis for a disciplinary action", False),
])
def test_running_headers(sentence, hits):
    assert bool(tq.header_hits(sentence)) is hits


def test_repeated_page_lines_are_running_headers():
    pages = [f"GIFT SURPLUS, LLC V. STATE\n2022-NCSC-1\nOpinion of the Court\nbody {i}\n\nmore\n{i}" for i in range(4)]
    repeated = tq.repeated_page_lines(pages)
    assert "Opinion of the Court" in repeated
    assert tq.header_hits("Opinion of the Court name, but into the game", repeated)
    assert not tq.header_hits("The opinion of this court is plain.", repeated)


def test_so_ordered_at_the_foot_of_several_rulings_is_no_running_footer():
    """A calendar of tentative rulings (Santa Clara, the sixth half) ends several rulings with "SO
    ORDERED." near a page's foot: the court's words, not a footer."""
    pages = [f"Ruling {i}\nThe motion is granted.\nSO ORDERED.\n{i}" for i in range(4)]
    repeated = tq.repeated_page_lines(pages)
    assert not any("ORDERED" in ln for ln in repeated)
    assert not tq.header_hits("SO ORDERED.", repeated)
    assert "The motion is granted." in repeated  # any other line repeated at the edges still counts


@pytest.mark.parametrize(("sentence", "labels"), [
    ("retired [*2] members", ["[*2]"]),
    ("the text *387 continues", ["*387"]),
    ("2019 WL 123456, at *3 (S.D.N.Y. 2019).", []),
    ("Feliciano, 2020 NY Slip Op 50753(U), *2.", []),
    # E.D. Mich. (fourth half, CAP text): a Westlaw pin range, no label
    ("DeMaagd v. City of Southfield, No. 267291, 2006 WL 2312086, at *3-*4 (Mich.Ct.App. Aug. 10, 2006)", []),
    ("and so on - 10 - in the text", ["- 10 -"]),
])
def test_page_labels(sentence, labels):
    assert tq.page_labels(sentence) == labels


@pytest.mark.parametrize(("sentence", "marks"), [
    ("After concessions by the parties,3 the remaining issues", ["parties,3"]),
    ("as we cite9 below", ["cite9"]),
    ("penalties under section 6662(a)2 for both years", ["6662(a)2"]),
    ("WIS. STAT. § 66.0217(14)(b)1., which provides", []),
    ("see 42 U.S.C. § 1983 and Rule 12(b)(6) at 5", []),
    ("in 570 U.S. 297, 301 (2013) and F.3d 12", []),
    # N.D. Ala. (ninth half): the court writes a table's number after "tbl." with no space
    ("Id. at 27–28 tbl.2. See id. at 38 tbl.6.", []),
])
def test_glued_marks(sentence, marks):
    assert [m.split(" ")[-1] for m in tq.glued_marks(sentence)] == marks


def test_footnote_openings_from_the_manifest_or_the_html():
    entry = {"footnotes": 2, "footnote_openings": ["The Chapel claimed", "Even if these"]}
    assert tq.footnote_openings(entry, None) == ["The Chapel claimed", "Even if these"]
    assert tq.footnote_openings({"footnotes": "html"}, ["1. The first note.", "* A star note."]) == [
        "The first note.", "A star note."]
    assert tq.footnote_openings({"footnotes": 0}, None) == []


def test_recognised_footnotes_count_each_stored_footnote_once():
    openings = ["The Chapel claimed violations", "Even if these circumstances", "A third note"]
    assert tq.recognised_footnotes(openings, ["1 The Chapel claimed violations of ...",
                                              "Even if these circumstances qualified"]) == 2
    # two footnotes run together are one stored footnote: one recognised
    assert tq.recognised_footnotes(openings, ["The Chapel claimed violations ... Even if these circumstances"]) == 1
    # a footnote's text inside a body-like stored note far from its start is not its footnote
    assert tq.recognised_footnotes(openings, ["x" * 40 + " A third note"]) == 0


def test_manifest_footnote_openings_match_the_hand_counts():
    for e in load_manifest()["entries"]:
        if "footnote_openings" in e:
            assert len(e["footnote_openings"]) == e["footnotes"], e["id"]


def test_footnote_like_lines():
    body = ["3 The parties stipulated that the loan was guaranteed.", "1The Chapel claimed violations",
            "11 U.S.C.A. § 544(a) (West 2016).", "12 The twelfth note", "I. Background"]
    assert tq.footnote_like_lines(body, 3) == body[:2]


def test_sentence_overlap():
    assert tq.sentence_overlap(["A b.", "C  d."], ["C d.", "E."]) == 0.5
    cited = ["{9} A plea is not “knowing.”", "See 89 S.Ct. 1709."]
    assert tq.sentence_overlap(cited, ['A plea is not "knowing."', "See 89 S. Ct. 1709."]) == 0
    assert tq.sentence_overlap(cited, ['A plea is not "knowing."', "See 89 S. Ct. 1709."], tq.loose) == 1


def test_manifest_names_30_opinions_of_10_courts_split_in_two_halves():
    manifest = load_manifest()
    entries = manifest["entries"]
    courts = {e["court"] for e in entries}
    assert len(entries) >= 30 and len(courts) >= 10
    assert {manifest["courts"][c]["half"] for c in courts} == {"rules", "held-apart"}
    for e in entries:
        assert {"repo", "path", "commit", "court", "format"} <= set(e) and len(e["commit"]) == 40, e["id"]
    assert len({e["id"] for e in entries}) == len(entries)
    assert json.loads(MANIFEST.read_text(encoding="utf-8")) == manifest


def test_html_with_citations_is_made_as_courtlistener_makes_it():
    """The derived route: the text escaped in <pre class="inline">, each citation eyecite finds
    closed off in a <span> between two <pre> pieces (cl/citations/annotate_citations.py)."""
    from experiments.text_quality_set import html_with_citations

    text = "See Smith v. Jones, 570 U.S. 297, 301 (2013) & more.\nNext line < here."
    out = html_with_citations(text)
    assert out.startswith('<pre class="inline">') and out.endswith("</pre>")
    assert '</pre><span class="citation no-link">570 U.S. 297</span><pre class="inline">' in out
    assert "&amp; more." in out and "&lt; here." in out
    assert html_with_citations("No citation at all.") == '<pre class="inline">No citation at all.</pre>'


def test_cap_case_json_takes_the_html_opinions():
    from experiments.text_quality_set import _cap_case_json

    meta = {"name": "A v. B", "name_abbreviation": "A v. B", "court": {"name": "Court"},
            "citations": [{"type": "official", "cite": "1 X 2"}]}
    html = '<article class="opinion" data-type="majority"></article><article class="opinion" data-type="dissent">'
    case = _cap_case_json({"id": "x"}, meta, html)
    assert [o["type"] for o in case["casebody"]["opinions"]] == ["majority", "dissent"]
    assert case["id"] == _cap_case_json({"id": "x"}, meta, html)["id"]  # the same on every run


def test_find_terms_are_frequent_content_words_pairs_and_statutory_terms():
    text = ("The insurance policy named the city. The city kept the policy; the insurance policy lapsed. "
            "A switchblade knife was found. Appellees paid. Appellees left. The dependent life plan.")
    terms = tq.find_terms(text, ["switchblade knife", "technological measure"], words=3, phrases=2)
    # words: "policy" 3, then "appellees", "city", "insurance" 2 each, alphabetically: 3 of them
    assert terms[:3] == ["policy", "appellees", "city"]
    assert terms[3:4] == ["insurance policy"] and terms[4] != "dependent life"  # the only pair found twice
    assert terms[-1] == "switchblade knife" and "technological measure" not in terms
    assert "the" not in terms and "dependent" not in terms  # a stop word; a word found once


@pytest.mark.slow
def test_found_sentences_count_a_fragment_planted_in_a_genuine_opinion(tmp_path):
    """Fox v. State (CAP HTML) ingested and looked up as ``find`` does: its found sentences hold
    their term; a paragraph break planted after a term in the middle of one of its sentences,
    before a capitalised word (a line find's joining rules leave apart, as a double-spaced PDF's
    line gap), makes ``find`` return that sentence's first half, counted as a fragment."""
    import re

    home = _routes(tmp_path)
    clean = _measure(home, "cap")
    terms = tq.find_terms("\n".join(s.text for s in clean.sentences), [])
    found = tq.found_sentences(home / "cap", terms, tmp_path / "work1")
    assert found and all(any(t.split()[0] in s.lower() for t in terms) for s in found)
    before = tq.RouteResult("fixture", "x", "rules", "cap", "read")
    tq.tally_found(before, found)
    assert before.counts["found"] == len(found)

    html = home / "cap" / "NE2d" / "997" / "html" / "0001-01.html"
    source = html.read_text(encoding="utf-8")
    term = terms[0]
    cut = None
    for s in found:
        at = s.lower().find(term)
        if at < 0 or tq.fragment_reason(s) is not None:
            continue
        for m in re.finditer(r" (?=[A-Z][a-z])", s):
            head = s[: m.start()]
            if at + len(term) <= m.start() and 40 < len(head) < len(s) - 20 and source.count(head) == 1:
                cut = head
                break
        if cut:
            break
    assert cut is not None, "no sentence of the fixture to plant the break in"
    html.write_text(source.replace(cut, cut + "</p><p>", 1), encoding="utf-8")
    planted = tq.found_sentences(home / "cap", terms, tmp_path / "work2")
    after = tq.RouteResult("fixture", "x", "rules", "cap", "read")
    tq.tally_found(after, planted)
    assert cut in planted and tq.fragment_reason(cut) == "open end"
    assert after.counts["found_fragments"] >= before.counts["found_fragments"] + 1
    assert any(cut in ex for ex in after.examples["found_fragments"])


def test_found_figures_show_unmeasured_routes_as_such():
    measured = tq.RouteResult("a", "x", "held-apart", "pdf", "read")
    tq.tally_found(measured, ["We affirm.", "the court held that the"])
    assert tq.found_cell([measured]) == "1 / 2 (50.0 %)"
    assert tq.found_cell([measured, tq.RouteResult("b", "x", "held-apart", "pdf", "read")]) == "–"
    rows = tq.target_rows([measured], [])
    assert "no (50.0 % of 2)" in rows[2]


def test_a_fresh_held_apart_half_of_court_pdfs():
    """The held-apart half is the fresh one (no court of it was looked at before it was judged): the
    ninth, six decision PDFs of three adjudicators no code, test or earlier entry held (the USCIS
    Administrative Appeals Office, the District of Oregon, the Northern District of Alabama), each with
    pins and its footnotes' opening words. The courts held apart before it (eight halves so far),
    looked at since, are in the rules half and say so."""
    manifest = load_manifest()
    held = {c for c, v in manifest["courts"].items() if v["half"] == "held-apart"}
    entries = [e for e in manifest["entries"] if e["court"] in held]
    assert len(entries) >= 6 and all(e["format"] == "pdf" for e in entries)
    assert len(held) >= 3 and sum(e["footnotes"] for e in entries) >= 31
    assert not any("was" in manifest["courts"][c] for c in held)
    moved = {c for c, v in manifest["courts"].items() if "was" in v}
    assert {"azd", "nysd", "njd", "moctapp", "wva", "ca9", "cand"} <= moved
    assert {"ca4", "ca8", "ca11", "caed", "me", "sd", "acca", "mnd"} <= moved  # the third half
    assert {"wyo", "arizctapp", "bap10", "ohioctapp", "ilnd"} <= moved  # the fourth half
    assert {"coloctapp", "calsuperct"} <= moved  # the fifth and sixth halves
    assert {"utah", "wash", "washctapp", "kyed"} <= moved  # the seventh half
    assert {"cal", "doha", "dohaab", "energyoha", "nlrb"} <= moved  # the eighth half
    assert all(manifest["courts"][c]["half"] == "rules" for c in moved)
    for e in entries:  # every fresh PDF has hand-checked pins, on both of its routes
        routes = {p["route"] for p in manifest["pins"] if p["entry"] == e["id"]}
        assert routes == {"pdf", "cl-plain_text"}, e["id"]
        assert len(e.get("footnote_openings", [])) == e["footnotes"], e["id"]


def test_a_dataset_case_is_laid_out_as_a_text_route(tmp_path):
    import io
    import zipfile

    from experiments.text_quality_set import _dataset_case_text

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("x/term-case.json", json.dumps({"c1": {"text": "CAPTION\nWe affirm.\n1 . A note."}}))
    entry = {"id": "e", "path": "term.zip", "case_id": "c1"}
    assert _dataset_case_text(buf.getvalue(), entry) == "CAPTION\nWe affirm.\n1 . A note."
    with pytest.raises(SystemExit, match="no case 'c2'"):
        _dataset_case_text(buf.getvalue(), {**entry, "case_id": "c2"})
