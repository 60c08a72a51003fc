"""Issue 25's targets, end to end, on every genuine fixture (tests/fixtures/genuine/README.md).

All genuine files go into one collection with one ``statinterp ingest``: CourtListener's bulk CSV
(with its clusters, dockets, courts and citations files, found beside it), the same opinions as
per-opinion JSON files in a tar.gz and as a REST API page, the two JSON lines, the CAP case (JSON
and HTML, in the static release's volume layout), the slip opinion and the D.C. Circuit's PDF text,
and the Latin-1 ``.txt``. Then:

* every opinion is stored, with its case's name, date and court for CourtListener and CAP, and no
  record is skipped; the guessed encoding is in the summary;
* every sentence of every stored opinion (segmented as ``find`` segments: the legal segmenter with
  line joining, over the opinion's lines) is free of page labels, of footnote numbers glued to a
  word, of words split by a line-end hyphen whose joined form occurs in the text, and of running
  headers; no paragraph is a bare page number;
* ``find`` then ``rank`` (learned:default) of a term of each case gives top-10 sentences that are
  whole sentences (:func:`whole_sentence`);
* where the source has page labels, found sentences carry the right pin page (checked by hand
  against the fixtures) and a pin cite in the courts' form.

The ingest and the rankings take seconds: those tests are ``slow``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.find import find_term
from statinterp.collection.store import Collection
from statinterp.text.segmentation import build_pipeline, sentence_spans
from tests.support.paths import FIXTURES

GENUINE = FIXTURES / "genuine"
CL = GENUINE / "courtlistener"
LATIN1 = GENUINE / "latin1" / "peyton-latin1.txt"

#: What each source holds: (source, id) -> (name, date, court, opinions). CourtListener's clusters
#: 2001-2004 come from the bulk CSV, the tar.gz and the API page alike (README.md there).
EXPECTED = {
    ("courtlistener", "2001"): ("Cannon v. State", "1944-11-18", "Court of Appeals of Georgia", 2),
    ("courtlistener", "2002"): ("State v. Aspby", "2003-09-30", "Washington Supreme Court", 1),
    ("courtlistener", "2003"): ("Fisher v. University of Texas at Austin", "2013-06-24",
                                "Supreme Court of the United States", 1),
    ("courtlistener", "2004"): ("Hogarth v. Bell", "2025-03-28", "District Court, E.D. North Carolina", 1),
    ("courtlistener", "100036"): ("Peyton v. District of Columbia", "1953-11-06",
                                  "District of Columbia Municipal Court of Appeals", 1),
    ("courtlistener", "200500"): ("Mendoza v. State", "2002-02-13",
                                  "Court of Appeals of Texas, Fourth District, San Antonio", 1),
    ("cap", "8118004"): ("PEYTON v. DISTRICT OF COLUMBIA", "1953-11-06",
                         "District of Columbia Municipal Court of Appeals", 1),
    ("text", "tarrant-11-889"): ("TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL.", "", "", 1),
    ("text", "dc-circuit-96-7169"): ("Ideal Electronic Security Co., Inc., et al. v. International Fidelity "
                                     "Insurance Company", "", "", 1),
    ("text", "peyton-latin1"): ("PEYTON v. DISTRICT OF COLUMBIA.", "", "", 1),
}

#: A page label left in a sentence: "*583", "*Page 758", "* 37". Not a database's star page, which is
#: a pin cite the opinion makes ("2019 WL 4235356, at *3", "1997 WL 582901 at *5", "2010 WL 2817220, *4").
PAGE_LABEL = re.compile(r"(?<!\bat )(?<!, )\*\s?(?:Page\s*)?\d|\*\s?Page\b")
#: A footnote number glued to a word or its punctuation: "testimony6", "Code.22", "Nation,1",
#: "plans.2", "[CFS].”3". Not "n.4", "No.3", "p.2", "F.2d", "§1983" (no lower-case word before).
GLUED_NOTE = re.compile(r"(?<![A-Za-z])(?!(?:nn?|no|p|pp|ch|art|sec|cl)\.)[A-Za-z]*[a-z][a-z]?[.,;:”’\"']?\d{1,2}"
                        r"(?=[\s.,;:)]|$)")
#: A running header or footer of the PDF-born texts (slip opinions, their CourtListener plain_text).
RUNNING_HEADER = re.compile(r"Cite as: \d+ U\. ?S\.|\(Slip Opinion\)|OCTOBER TERM, \d{4}|"
                            r"\b\d{1,3} {1,3}[A-Z][A-Z.,'’& ]+ v\. [A-Z]")
#: Repeated caption lines of those texts: a sentence may be a caption, never hold one inside it.
#: (A justice's "THOMAS, J., concurring" header is not checked: opinions cite it in parentheticals.)
CAPTIONS = ("FISHER v. UNIVERSITY OF TEXAS AT AUSTIN", "TARRANT REGIONAL WATER DIST. v. HERRMANN",
            "Opinion of the Court")

#: One term of each genuine case, for find then rank.
TERMS = {
    "Cannon v. State": "distilled spirits",
    "State v. Aspby": "petition for review",
    "Fisher v. University of Texas at Austin": "strict scrutiny",
    "Hogarth v. Bell": "ballot selfie",
    "Peyton v. District of Columbia": "indecent exposure",
    "Mendoza v. State": "lorem ipsum",
    "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL.": "red river compact",
    "Ideal Electronic Security Co., Inc., et al. v. International Fidelity Insurance Company": "indemnity agreement",
}

#: How a whole sentence starts: a capital or a digit, maybe after opening quotes, brackets or
#: parentheses ("“The", "[T]he", "(The", "§ 1983", "... "), or after an enumerator ("(a) The").
SENTENCE_START = re.compile(r"^(?:\((?:[a-z]|[ivx]+|\d+)\) )?[“\"‘'(\[]*(?:[A-Z0-9§]|\.\.\.)")
#: How a whole sentence ends: terminal punctuation (. ? !), maybe followed by closing quotes,
#: brackets or parentheses, a space among them as slip opinions set them ("... the Court.”",
#: "... (2003).)", "... legitimate.’ ”"), or a colon ending a lead-in that
#: introduces a quotation or a list (the segmenter ends the sentence there).
SENTENCE_END = re.compile(r"[.?!:][”\"’')\] ]*$")
#: A digit opening a fragment rather than a sentence: a page number before lower-case text.
PAGE_FRAGMENT = re.compile(r"^\d+ [a-z]")


def whole_sentence(text: str) -> bool:
    """Whether ``text`` reads as a whole sentence: it starts like one (:data:`SENTENCE_START`)
    and ends like one (:data:`SENTENCE_END`). A fragment cut at a page break ("6 this plea
    agreement.”"), a running header's tail ("... to further 2 FISHER v. ...") or a sentence cut
    before its end fails one of the two."""
    text = text.strip()
    return bool(SENTENCE_START.match(text)) and not PAGE_FRAGMENT.match(text) and bool(SENTENCE_END.search(text))


def test_whole_sentence_check():
    assert whole_sentence("The verdict was contrary to law and the evidence.")
    assert whole_sentence("“[N]arrow tailoring does not require exhaustion.”")
    assert whole_sentence("(a) Any person who sells a vehicle shall be fined.")
    assert whole_sentence("The final statute provides that:")
    assert whole_sentence("Strict scrutiny requires that the reasons be “ ‘clearly identified.’ ”")
    assert not whole_sentence("Strict scrutiny must not be “ ‘strict in theory, but fatal in fact,’ ”")
    assert not whole_sentence("6 this plea agreement.”")
    assert not whole_sentence("the Court of Appeals must be reversed.")
    assert not whole_sentence("The University has taken care to follow the model approved by")


def cap_volume(tmp: Path) -> Path:
    """The CAP case in the static release's volume layout (``cases/`` and ``html/``)."""
    vol = tmp / "a2d" / "100"
    (vol / "cases").mkdir(parents=True)
    (vol / "html").mkdir()
    shutil.copy(GENUINE / "cap" / "0036-01.json", vol / "cases" / "0036-01.json")
    shutil.copy(GENUINE / "cap" / "0036-01.html", vol / "html" / "0036-01.html")
    (vol / "CasesMetadata.json").write_text("[]", encoding="utf-8")
    return vol


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("genuine")
    sources = [CL / "opinions-2026-11-25.csv.bz2", CL / "per-opinion-json.tar.gz", CL / "api-opinions-page.json",
               CL / "opinions.jsonl", cap_volume(tmp), GENUINE / "scotus-slip", GENUINE / "pdf-text", LATIN1]
    folder = tmp / "col"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["ingest", *map(str, sources), "--collection", str(folder), "--quiet",
                     "--format-summary", "json"])
    assert code == 0, out.getvalue()
    return folder, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def collection(ingested):
    with Collection.open(ingested[0]) as c:
        yield c


def opinion_lines(c: Collection) -> list[tuple[str, list]]:
    """(case name, rows of the opinion) of every stored opinion."""
    out = []
    for cid in c.case_ids():
        case = c.case(cid)
        for op in c.opinions(cid):
            out.append((case.name, c.opinion_paragraphs(op["id"])))
    return out


@pytest.fixture(scope="module")
def sentences(collection) -> list[tuple[str, str, str]]:
    """(case name, sentence, its opinion's text) of every stored opinion, segmented as ``find`` does."""
    nlp = build_pipeline(legal_rules=True, join_lines=True)  # what find segments with
    out = []
    for name, rows in opinion_lines(collection):
        text = "\n".join(r.text for r in rows)
        out.extend((name, text[s:e], text) for s, e in sentence_spans(nlp(text)))
    return out


@pytest.mark.slow
def test_every_opinion_is_stored_with_name_date_and_court_and_nothing_is_skipped(ingested, collection):
    _, summary = ingested
    assert summary["skipped"] == 0 and summary["skipped_records"] == [] and summary["mostly_skipped"] == []
    # 4 clusters from the bulk CSV, again from the tar.gz and the API page (unchanged), 2 JSON lines,
    # the CAP case, 3 texts
    assert summary["cases_read"] == 18 and summary["added"] == 10 and summary["unchanged"] == 8
    assert summary["opinions"] == 11
    assert summary["decoded"] == [{"file": str(LATIN1), "encoding": "cp1252"}]
    stored = {}
    for cid in collection.case_ids():
        record = collection.record(cid)
        stored[(record.source, record.source_id)] = (record.name, record.decision_date, record.court,
                                                     len(record.opinions))
        assert all(op.paragraphs for op in record.opinions), record.source_id
    assert stored == EXPECTED


@pytest.mark.slow
def test_no_sentence_holds_a_page_label_a_glued_footnote_mark_or_a_running_header(sentences):
    assert len(sentences) > 1000
    labels = [(n, s) for n, s, _ in sentences if PAGE_LABEL.search(s)]
    assert labels == []
    glued = [(n, m.group(0), s) for n, s, _ in sentences for m in GLUED_NOTE.finditer(s)]
    assert glued == []
    headers = [(n, s) for n, s, _ in sentences if RUNNING_HEADER.search(s)]
    assert headers == []
    inside = [(n, s) for n, s, _ in sentences for cap in CAPTIONS if cap in s and not s.startswith(cap)]
    assert inside == []


@pytest.mark.slow
def test_no_word_split_by_a_line_end_hyphen_whose_joined_form_occurs(sentences):
    split = []
    for name, s, text in sentences:
        for m in re.finditer(r"\b([A-Za-z]+)- ([a-z]+)\b", s):
            if re.search(rf"\b{m.group(1)}{m.group(2)}\b", text, re.IGNORECASE):
                split.append((name, m.group(0)))
    assert split == []


@pytest.mark.slow
def test_no_paragraph_is_a_bare_page_number(collection):
    bare = [(name, r.text) for name, rows in opinion_lines(collection) for r in rows
            if re.fullmatch(r"[\s\-–—\[\]().]*\d{1,4}[\s\-–—\[\]().]*", r.text)]
    assert bare == []


@pytest.mark.slow
@pytest.mark.parametrize("case_name", sorted(TERMS))
def test_find_then_rank_gives_whole_sentences(ingested, tmp_path, capsys, case_name):
    term = TERMS[case_name]
    found = tmp_path / "found.zip"
    assert main(["find", term, "--collection", str(ingested[0]), "--out", str(found), "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["rank", term, "--data", str(found), "--format", "json", "--top", "10"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert any(r["case_name"].rstrip(".").lower() == case_name.rstrip(".").lower() for r in results), case_name
    assert len(results) == min(10, len(results)) and results
    cut = [r["text"] for r in results if not whole_sentence(r["text"])]
    assert cut == []


def pins(collection: Collection, term: str, cited: str = "") -> dict[str, tuple[str | None, str]]:
    """Found sentence text -> (pin page, pin cite) of ``term``, in the cases whose pin cite holds
    ``cited`` (all cases: "")."""
    found = find_term(collection, term)
    return {s["text"]: (s.get("pin_page"), s["pin_cite"]) for s in found.tables["sentence"].values()
            if cited in s["pin_cite"]}


@pytest.mark.slow
def test_pin_pages_of_star_paginated_courtlistener_html(collection):
    # Cannon v. State: html_with_citations puts "*Page 758" before "After the disposal of counts 2
    # and 3"; the concurrence (no label of its own) is on 758 too; what precedes the label is on 757.
    got = pins(collection, "distilled spirits")
    after = next(k for k in got if k.startswith("After the disposal of counts 2 and 3"))
    before = next(k for k in got if k.startswith("Count I charged"))
    assert got[after][0] == "758" and got[before][0] == "757"
    assert got[after][1] == "Cannon v. State (Ga. Ct. App. 1944)"  # no reporter citation in the source: no pin
    got = pins(collection, "inconsistent verdicts")
    (concurrence,) = [k for k in got if "repugnant and void" in k]
    assert got[concurrence][0] == "758"
    # Mendoza v. State (Columbia markup): "*Page 500" opens the opinion's text.
    got = pins(collection, "lorem ipsum")
    (lorem,) = got
    assert got[lorem] == ("500", "Mendoza v. State, 61 S.W.3d 498, 500 (Tex. App. 2002)")


@pytest.mark.slow
def test_pin_pages_of_cap_html_and_its_courtlistener_copy(collection):
    """Peyton v. District of Columbia, 100 A.2d 36: CAP's HTML labels *37 (in the head matter,
    before the attorneys) and *38 (inside "... that anyone would see defendant through' the
    overhanging trees"); CourtListener's copy is the opinion's HTML alone, without the *37."""
    found = find_term(collection, "indecent exposure").tables
    by_case: dict[str, dict[str, tuple]] = {}
    for s in found["sentence"].values():
        source = found["case"][s["case_id"]].name
        by_case.setdefault(source, {})[s["text"]] = (s.get("pin_page"), s["pin_cite"])
    first = "Defendant was convicted by the court of making an obscene and indecent exposure in a public place."
    # courts-db's abbreviation of the D.C. Municipal Court of Appeals
    cite = ("37", "Peyton v. District of Columbia, 100 A.2d 36, 37 (D.C. Ct. App. 1953)")
    assert by_case["PEYTON v. DISTRICT OF COLUMBIA"][first] == cite  # CAP's HTML
    assert by_case["Peyton v. District of Columbia"][first] == cite  # CourtListener's copy
    assert by_case["PEYTON v. DISTRICT OF COLUMBIA."][first] == (None, "Peyton v. District of Columbia")  # .txt
    got = pins(collection, "overhanging trees", "100 A.2d 36")
    assert got and {v[0] for v in got.values()} == {"37"}  # the sentence starts on 37, before the *38
    got = pins(collection, "prior conviction", "100 A.2d 36")
    later = [v for k, v in got.items() if k.startswith("The contention that the trial judge")]
    assert later and {v[0] for v in later} == {"38"}


@pytest.mark.slow
def test_a_slip_opinions_text_pins_to_its_printed_pages(collection):
    """The slip opinion's text (pdftotext, form feeds) has no page labels, but its pages print
    their numbers ("Cite as: ... 3", "2 TARRANT ... v. HERRMANN"): a sentence is pinned to its slip
    page (issue 34), checked by hand against the text's pages. Its syllabus is head matter (as
    the PDF reader and CAP store it): no sentence of it is found."""
    got = pins(collection, "red river compact")
    assert not any(k.startswith("Argued April 23, 2013") for k in got)
    lasted = next(k for k in got if k.startswith("These negotiations lasted over 20 years"))
    assert got[lasted][0] == "2"  # page 2 of the opinion of the Court (the file's sixth page)


@pytest.mark.slow
def test_every_citation_names_both_parties(collection):
    """Issue 34: every found sentence's citation, from CourtListener (bulk, per-opinion JSON, API
    page), CAP and text files, starts with the case's name as cited: two parties ("X v. Y"),
    never empty, a clerk's stamp or a report number."""
    cites = {s["pin_cite"] for term in ("court", "statute", "evidence")
             for s in find_term(collection, term).tables["sentence"].values()}
    assert len(cites) >= 8
    names = {c.split(",")[0].split(" (")[0] for c in cites}
    assert all(" v. " in n for n in names), names
    assert not any(re.match(r"(FILED|ENTERED|T\.C\. Memo|No\. )", n) or n.isupper() for n in names), names
    assert "Peyton v. District of Columbia" in names and "Fisher v. Univ. of Tex. at Austin" in names
