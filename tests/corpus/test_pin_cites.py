"""Pin cites (issue 25): pages stored per paragraph, pin pages and ready citations in find, rank and review.

The collection is built from handmade :class:`CaseRecord` s with page labels (``page_starts``),
as the CourtListener / CAP HTML readers give them, stored without statistics (find and
``rank --data FOUND.zip`` need none).
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.find import find_term
from statinterp.collection.ingest import analysis_settings, prepare_cases
from statinterp.collection.store import FORMAT_VERSION, Collection, CollectionWriter, canonical_dump, line_pages
from statinterp.corpus.dataset import load_corpus
from statinterp.corpus.pin_cites import format_cite, page_at, paragraph_number, parse_cite
from statinterp.sources.records import CaseRecord, OpinionRecord

# --------------------------------------------------------------------------------------------
# Formatting citations


@pytest.mark.parametrize(("args", "kw", "expected"), [
    # U.S.: the reporter says the court
    (("Fisher v. Univ. of Tex. at Austin", "570 U.S. 297", "Supreme Court of the United States", "2013-06-24"),
     {"page": "310"}, "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 310 (2013)"),
    (("Fisher v. Univ. of Tex. at Austin", "570 U.S. 297", "scotus", "2013-06-24"), {},
     "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297 (2013)"),
    # F.2d / F.3d: the circuit from courts-db (CourtListener id or court name)
    (("Brown v. Smith", "203 F.2d 34", "cadc", "1953-01-05"), {"page": "36"},
     "Brown v. Smith, 203 F.2d 34, 36 (D.C. Cir. 1953)"),
    (("Reddy v. CFTC", "191 F.3d 109", "United States Court of Appeals for the Second Circuit", "1999-09-03"),
     {"page": "112"}, "Reddy v. CFTC, 191 F.3d 109, 112 (2d Cir. 1999)"),
    # a regional reporter keeps the state's court; the state's own reporter drops the state
    (("State v. Jones", "435 P.3d 1219", "Supreme Court of New Mexico", "2019-02-11"), {"page": "1224"},
     "State v. Jones, 435 P.3d 1219, 1224 (N.M. 2019)"),
    (("State v. Jones", "120 N.M. 5", "Supreme Court of New Mexico", "1995-02-11"), {"page": "7"},
     "State v. Jones, 120 N.M. 5, 7 (1995)"),
    (("State v. Lee", "120 N.M. 50", "Court of Appeals of New Mexico", "1995-02-11"), {"page": "52"},
     "State v. Lee, 120 N.M. 50, 52 (Ct. App. 1995)"),
    (("People v. Brown", "294 Mich. App. 377", "Michigan Court of Appeals", "2011-09-01"), {"page": "380"},
     "People v. Brown, 294 Mich. App. 377, 380 (2011)"),
    (("State v. Payne", "121 Conn. App. 308", "", "2010-05-04"), {"short_court": "Conn. App. Ct."},
     "State v. Payne, 121 Conn. App. 308 (2010)"),
    (("People v. Western Express", "85 A.D.3d 1", "", "2011-05-05"), {"short_court": "N.Y. App. Div."},
     "People v. W. Express, 85 A.D.3d 1 (N.Y. App. Div. 2011)"),
    # a source's own court abbreviation wins (the data set's short_court)
    (("Michelson v. Merrill Lynch", "619 F. Supp. 727", "United States District Court for the Southern District "
      "of New York", "1985-10-02"), {"short_court": "S.D.N.Y.", "page": "730", "footnote": 4},
     "Michelson v. Merrill Lynch, 619 F. Supp. 727, 730 n.4 (S.D.N.Y. 1985)"),
    # public-domain citation: paragraph, not page; no parenthetical
    (("State v. Jones", "2019-NMSC-005", "Supreme Court of New Mexico", "2019-02-11"), {"paragraph": 22, "page": "9"},
     "State v. Jones, 2019-NMSC-005, ¶ 22"),
    (("State v. Jones", "2019-NMSC-005", "nm", "2019-02-11"), {}, "State v. Jones, 2019-NMSC-005"),
    # an unknown reporter and court: parsed as VOLUME WORDS PAGE, the court written as stored
    (("City of Eastbrook v. Dalton", "212 Marl. App. 341", "Court of Appeals of Marlowe", "2004-05-18"),
     {"page": "343"}, "City of Eastbrook v. Dalton, 212 Marl. App. 341, 343 (Court of Appeals of Marlowe 2004)"),
    # a court named with its district: the court's abbreviation (Mendoza v. State, CourtListener JSON line)
    (("Mendoza v. State", "61 S.W.3d 498", "Court of Appeals of Texas, Fourth District, San Antonio", "2002-02-13"),
     {"page": "500"}, "Mendoza v. State, 61 S.W.3d 498, 500 (Tex. App. 2002)"),
    # no citation but a docket number: a slip opinion, pinned to its own page, with the full date
    # (D. Or.'s opinion and order of the text-quality study's ninth half; it was "... (D. Or. 2025)")
    (("TYLER ALLEN LOFALL v. CLACKAMAS COUNTY", "", "ord", "2025-09-03"),
     {"page": "6", "docket": "3:24-cv-00839-SB"},
     "Lofall v. Clackamas Cnty., No. 3:24-cv-00839-SB, slip op. at 6 (D. Or. Sept. 3, 2025)"),
    (("Doe v. Roe", "", "cadc", "2001-03-04"), {"page": "5", "footnote": 2, "docket": "No. 00-7001"},
     "Doe v. Roe, No. 00-7001, slip op. at 5 n.2 (D.C. Cir. Mar. 4, 2001)"),
    (("Doe v. Roe", "", "cadc", "2001-03-04"), {"docket": "00-7001"},
     "Doe v. Roe, No. 00-7001 (D.C. Cir. Mar. 4, 2001)"),
    # a citation: the docket number is not cited
    (("Brown v. Smith", "203 F.2d 34", "cadc", "1953-01-05"), {"page": "36", "docket": "11223"},
     "Brown v. Smith, 203 F.2d 34, 36 (D.C. Cir. 1953)"),
    # no citation at all: no pin
    (("Doe v. Roe", "", "cadc", "2001-03-04"), {"page": "5"}, "Doe v. Roe (D.C. Cir. 2001)"),
    (("Doe v. Roe", "", "", ""), {}, "Doe v. Roe"),
])
def test_format_cite(args, kw, expected):
    assert format_cite(*args, **kw) == expected


def test_parsing_pages_and_paragraph_numbers():
    assert parse_cite("570  U.S. 297").page == "297"
    assert parse_cite("2019-NMSC-005").neutral and not parse_cite("435 P.3d 1219").neutral
    assert parse_cite("not a citation") is None
    assert page_at("297", ((0, "297"), (16, "298")), 15) == "297"
    assert page_at("297", ((0, "297"), (16, "298")), 16) == "298"
    assert page_at(None, (), 3) is None
    assert [paragraph_number(t) for t in ("{22} The", "[¶ 7] A", "¶ 13 B", "[4] C", "22. D", "A {3}")] == \
        [22, 7, 13, 4, None, None]


# --------------------------------------------------------------------------------------------
# A collection with page labels

FISHER_P1 = "The court looked at the record. A motor vehicle is a machine that moves on wheels."
PAGE_BREAK = FISHER_P1.index("A motor")

FISHER = CaseRecord(
    source="courtlistener", source_id="1", name="Abigail Fisher v. University of Texas at Austin",
    name_abbreviation="Fisher v. Univ. of Tex. at Austin", decision_date="2013-06-24", docket_number="11-345",
    citations=(("official", "570 U.S. 297"),), court="scotus", jurisdiction="U.S.", head_matter="Fisher v. Texas",
    judges="", parties="", attorneys="",
    opinions=(OpinionRecord(
        "majority", "Kennedy",
        ("The statute speaks of a motor vehicle here.",  # no label before it: the citation's first page, 297
         FISHER_P1,  # page 298 starts inside it, at "A motor"
         "Each motor vehicle must be registered.",  # continues page 298
         "A motor vehicle includes a truck."),  # page 299 starts at its offset 0
        footnotes=("Motor vehicle is defined in the code.",),  # runs on from page 299
        page_starts=((), ((PAGE_BREAK, "298"),), (), ((0, "299"),), ())),
     OpinionRecord("dissent", "Ginsburg", ("I would not call a bicycle a motor vehicle.",),
                   page_starts=(((0, "301"),),))))

BROWN = CaseRecord(
    source="courtlistener", source_id="2", name="Brown v. Smith", name_abbreviation="Brown v. Smith",
    decision_date="1997-05-01", docket_number="", citations=(("official", "123 F.3d 45"),), court="cadc",
    jurisdiction="", head_matter="", judges="", parties="", attorneys="",
    opinions=(OpinionRecord("majority", None, ("Preamble without the term.", "A motor vehicle needs a licence."),
                            page_starts=(((0, "46"),), ((10, "47"),))),))

JONES = CaseRecord(
    source="courtlistener", source_id="3", name="State v. Jones", name_abbreviation="State v. Jones",
    decision_date="2019-02-11", docket_number="",
    citations=(("official", "2019-NMSC-005"), ("parallel", "435 P.3d 1219")),
    court="Supreme Court of New Mexico", jurisdiction="N.M.", head_matter="", judges="", parties="", attorneys="",
    opinions=(OpinionRecord("majority", None, ("{21} The facts are plain.", "{22} Here the motor vehicle was a car.",
                                               "So a motor vehicle it was."),
                            page_starts=(((0, "1223"),), (), ((0, "1224"),))),))

UNPAGED = CaseRecord(
    source="text", source_id="4", name="Doe v. Roe", name_abbreviation="Doe v. Roe", decision_date="2001-03-04",
    docket_number="", citations=(("official", "203 F.2d 34"),), court="cadc", jurisdiction="", head_matter="",
    judges="", parties="", attorneys="",
    opinions=(OpinionRecord("majority", None, ("A motor vehicle without pages.",)),))

RECORDS = [FISHER, BROWN, JONES, UNPAGED]


def write_collection(folder: Path, records: list[CaseRecord]) -> Path:
    with CollectionWriter(folder, analysis_settings(statistics=False)) as writer:
        writer.write(prepare_cases(records, None, citations=False))
    return folder


@pytest.fixture(scope="module")
def paged(tmp_path_factory) -> Path:
    return write_collection(tmp_path_factory.mktemp("paged") / "col", RECORDS)


def test_line_pages_follow_labels_citation_and_footnotes():
    assert line_pages(FISHER) == [["297", "297", "298", "299", "299"], ["301"]]
    assert line_pages(UNPAGED) == [[None]]
    assert line_pages(JONES) == [["1223", "1223", "1224"]]  # a public-domain citation has no first page


def test_an_opinion_without_labels_runs_on_from_the_page_before_it():
    """Cannon v. State (tests/fixtures/genuine/courtlistener): the lead opinion's "*Page 758" is its
    only label; the concurrence after it has none and is on page 758 too, not on an unknown page;
    the text before the label is on page 757 (there is no citation to say so)."""
    lead = OpinionRecord("majority", None, ("Facts.", "After the disposal of counts 2 and 3."), (),
                         ((), ((0, "758"),)))
    concurrence = OpinionRecord("concurrence", None, ("Under the record the judgment should be reversed.",))
    cannon = replace(UNPAGED, citations=(), opinions=(lead, concurrence))
    assert line_pages(cannon) == [["757", "758"], ["758"]]
    cited = replace(UNPAGED, citations=(("official", "10 S.E.2d 755"),), opinions=(concurrence, lead))
    assert line_pages(cited) == [["757"], ["757", "758"]]  # the page before the first label, not the citation's
    roman = replace(lead, page_starts=((), ((0, "ix"),)))
    assert line_pages(replace(cited, opinions=(roman,))) == [["755", "ix"]]  # no number: the citation's first page


def test_the_text_before_the_first_label_is_on_the_page_before_it():
    """Peyton v. District of Columbia, 100 A.2d 36 (CourtListener's opinion HTML of the CAP case):
    page 37 starts in the head matter, which the opinion's HTML lacks; its first label is "*38"."""
    peyton = replace(UNPAGED, citations=(("official", "100 A.2d 36"),), opinions=(
        OpinionRecord("majority", None, ("QUINN, Associate Judge.", "In this case ... through the trees."), (),
                      ((), ((12, "38"),))),))
    assert line_pages(peyton) == [["37", "37"]]


def test_stored_pages_and_the_record_round_trip(paged):
    with Collection.open(paged) as c:
        assert c.info()["format"] == FORMAT_VERSION == 4 and c.has_pages
        ids = c.case_ids()
        for case_id, record in zip(ids, RECORDS, strict=True):
            assert c.record(case_id) == record
            assert c.record(case_id).content_hash == record.content_hash
        op = c.opinions(ids[0])[0]
        rows = c.opinion_paragraphs(op["id"])
        assert [(r.page, r.footnote) for r in rows] == [("297", False), ("297", False), ("298", False),
                                                       ("299", False), ("299", True)]
        assert rows[1].page_starts == ((PAGE_BREAK, "298"),)
        assert rows[1].page_at(PAGE_BREAK - 1) == "297" and rows[1].page_at(PAGE_BREAK) == "298"
    dump = "\n".join(canonical_dump(paged))
    assert json.dumps(f'[[{PAGE_BREAK}, "298"]]') in dump  # collections differing only in pages differ


def test_found_sentences_carry_their_pin_pages_and_cites(paged, tmp_path):
    with Collection.open(paged) as c:
        found = find_term(c, "motor vehicle")
    got = {s["text"]: (s.get("pin_page"), s["pin_cite"]) for s in found.tables["sentence"].values()}
    fisher = "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297"
    assert got == {
        "The statute speaks of a motor vehicle here.": ("297", f"{fisher}, 297 (2013)"),
        # the sentence after the page break inside the paragraph is on the new page
        "A motor vehicle is a machine that moves on wheels.": ("298", f"{fisher}, 298 (2013)"),
        # a paragraph continuing the previous page
        "Each motor vehicle must be registered.": ("298", f"{fisher}, 298 (2013)"),
        "A motor vehicle includes a truck.": ("299", f"{fisher}, 299 (2013)"),
        "Motor vehicle is defined in the code.": ("299", f"{fisher}, 299 n.1 (2013)"),
        "I would not call a bicycle a motor vehicle.": ("301", f"{fisher}, 301 (2013)"),
        "A motor vehicle needs a licence.": ("46", "Brown v. Smith, 123 F.3d 45, 46 (D.C. Cir. 1997)"),
        "{22} Here the motor vehicle was a car.": ("1223", "State v. Jones, 2019-NMSC-005, ¶ 22"),
        "So a motor vehicle it was.": ("1224", "State v. Jones, 2019-NMSC-005, ¶ 22"),
        "A motor vehicle without pages.": (None, "Doe v. Roe, 203 F.2d 34 (D.C. Cir. 2001)"),
    }


@pytest.fixture(scope="module")
def found_zip(paged, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("found") / "motor_vehicle.zip"
    assert main(["find", "motor vehicle", "--collection", str(paged), "--out", str(out)]) == 0
    return out


def test_find_out_writes_the_fields_and_the_loader_reads_them(found_zip, tmp_path):
    with zipfile.ZipFile(found_zip) as zf:
        sentences = json.loads(zf.read("motor_vehicle-sentence.json"))
    by_text = {s["text"]: s for s in sentences.values()}
    assert by_text["A motor vehicle is a machine that moves on wheels."]["pin_page"] == "298"
    assert "pin_page" not in by_text["A motor vehicle without pages."]
    term = load_corpus(found_zip).term("motor vehicle")
    loaded = {s.text: (s.pin_page, s.pin_cite) for s in term.sentences}
    assert loaded["Each motor vehicle must be registered."] == (
        "298", "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 298 (2013)")
    assert loaded["A motor vehicle without pages."] == ("", "Doe v. Roe, 203 F.2d 34 (D.C. Cir. 2001)")
    # a term written back (the review's export) keeps them
    from statinterp.corpus.dataset import write_term_zip

    again = load_corpus(write_term_zip(term, tmp_path / "motor_vehicle.zip")).term("motor vehicle")
    assert {s.text: (s.pin_page, s.pin_cite) for s in again.sentences} == loaded


def _rank(args: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(["rank", "motor vehicle", "-m", "TF-ISF", "--top", "0", *args]) == 0
    return capsys.readouterr().out


def test_rank_shows_the_pin_cite_in_json_csv_and_table(found_zip, capsys):
    data = json.loads(_rank(["--data", str(found_zip), "--format", "json"], capsys))
    rows = {r["text"]: r for r in data["results"]}
    row = rows["A motor vehicle is a machine that moves on wheels."]
    assert row["pin_page"] == "298"
    assert row["pin_cite"] == "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 298 (2013)"
    assert row["citation"] == "570 U.S. 297"
    unpaged = rows["A motor vehicle without pages."]
    assert unpaged["pin_page"] is None and unpaged["pin_cite"] == "Doe v. Roe, 203 F.2d 34 (D.C. Cir. 2001)"

    table = list(csv.DictReader(io.StringIO(_rank(["--data", str(found_zip), "--format", "csv"], capsys))))
    by_text = {r["text"]: r for r in table}
    assert by_text["{22} Here the motor vehicle was a car."]["pin_cite"] == "State v. Jones, 2019-NMSC-005, ¶ 22"
    assert by_text["{22} Here the motor vehicle was a car."]["pin_page"] == "1223"
    assert by_text["A motor vehicle without pages."]["pin_page"] == ""

    text = _rank(["--data", str(found_zip)], capsys)
    assert "Brown v. Smith, 123 F.3d 45, 46 (D.C. Cir. 1997)" in text
    assert "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 299 n.1 (2013)" in text


def test_rank_collection_gives_the_pin_cite(tmp_path, capsys):
    """``rank --collection`` finds and ranks in one go: the found sentences' pin cites are shown."""
    from statinterp.collection.ingest import new_analyzer

    with CollectionWriter(tmp_path / "col", analysis_settings()) as writer:
        writer.write(prepare_cases(RECORDS, new_analyzer(), citations=False))
    data = json.loads(_rank(["--collection", str(tmp_path / "col"), "--format", "json"], capsys))
    rows = {r["text"]: (r["pin_page"], r["pin_cite"]) for r in data["results"]}
    assert rows["A motor vehicle needs a licence."] == ("46", "Brown v. Smith, 123 F.3d 45, 46 (D.C. Cir. 1997)")
    assert len(rows) == 10


def test_rank_of_data_without_pages_gives_the_citation_without_pin(capsys):
    from statinterp.workflow import example_data_path

    data = json.loads(_rank_vehicle(["--data", str(example_data_path()), "--format", "json", "--top", "1"], capsys))
    row = data["results"][0]
    assert row["pin_page"] is None
    assert row["pin_cite"].startswith(f"{row['case_name']}, {row['citation']} (") and row["pin_cite"].endswith(")")


def _rank_vehicle(args: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(["rank", "vehicle", "-m", "TF-ISF", *args]) == 0
    return capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# Migration of formats 1 and 2


def _make_format(folder: Path, version: int) -> None:
    """Turn a collection into one of an older format, as statinterp wrote it then."""
    db = sqlite3.connect(folder / "collection.sqlite", isolation_level=None)
    for table, column in (("paragraphs", "page"), ("paragraphs", "page_starts"), ("paragraphs", "footnote"),
                          ("opinions", "paged"), ("paragraphs", "number")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    if version == 1:
        db.execute("DROP TABLE paragraph_pairs")
    db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(version),))
    db.close()


@pytest.mark.parametrize("version", [1, 2])
def test_old_formats_are_read_with_unknown_pages_and_upgraded_by_the_next_ingest(tmp_path, version):
    unpaged = [UNPAGED, CaseRecord(**{**UNPAGED.__dict__, "source_id": "5"})]
    write_collection(tmp_path / "col", unpaged)
    _make_format(tmp_path / "col", version)
    with Collection.open(tmp_path / "col") as c:
        assert c.info()["format"] == version and not c.has_pages
        assert c.record(c.case_ids()[0]) == UNPAGED  # no pages: what those formats knew
        found = find_term(c, "motor vehicle")
    assert [(s.get("pin_page"), s["pin_cite"]) for s in found.tables["sentence"].values()] == \
        [(None, "Doe v. Roe, 203 F.2d 34 (D.C. Cir. 2001)")] * 2

    # the next ingest upgrades it: as a collection of the current format built at once
    write_collection(tmp_path / "col", [*unpaged, FISHER])
    write_collection(tmp_path / "fresh", [*unpaged, FISHER])
    assert list(canonical_dump(tmp_path / "col")) == list(canonical_dump(tmp_path / "fresh"))
    with Collection.open(tmp_path / "col") as c:
        assert c.info()["format"] == FORMAT_VERSION and c.has_pages and c.has_pairs
        assert c.record(c.case_ids()[2]) == FISHER


def test_a_collection_of_an_unknown_format_is_refused(tmp_path):
    write_collection(tmp_path / "col", [UNPAGED])
    db = sqlite3.connect(tmp_path / "col" / "collection.sqlite", isolation_level=None)
    db.execute("UPDATE meta SET value = '5' WHERE key = 'format'")
    db.close()
    with pytest.raises(Exception, match="format 5, this statinterp reads formats 1, 2, 3, 4"):
        Collection.open(tmp_path / "col")


# --------------------------------------------------------------------------------------------
# The review page


def test_review_page_shows_the_pin_cite_with_a_copy_button(found_zip, tmp_path, analysis_cache_dir):
    pytest.importorskip("starlette.testclient", reason="starlette/httpx not installed")
    from starlette.testclient import TestClient

    from statinterp.app.review.server import create_app
    from statinterp.app.review.session import ReviewSession
    from statinterp.corpus.labels import LabelStore
    from statinterp.workflow import prepare_corpus

    prepared = prepare_corpus(load_corpus(found_zip), cache_dir=analysis_cache_dir)
    session = ReviewSession(prepared["motor_vehicle"], LabelStore(tmp_path / "labels.sqlite"))
    client = TestClient(create_app(session), raise_server_exceptions=False)
    html = client.get("/term/motor_vehicle?all=1").text
    cite = "Fisher v. Univ. of Tex. at Austin, 570 U.S. 297, 298 (2013)"
    assert f'<span class="pin-cite-text">{cite}</span>' in html
    assert f'data-action="copy-cite" data-cite="{cite}"' in html
    assert "State v. Jones, 2019-NMSC-005, ¶ 22" in html
    sentence = next(s for s in session.term.sentences if s.text == "A motor vehicle without pages.")
    assert session.pin_cite(sentence) == "Doe v. Roe, 203 F.2d 34 (D.C. Cir. 2001)"


def test_a_footnote_of_several_lines_keeps_its_number_in_store_and_pin(tmp_path):
    """A footnote of several paragraphs is stored as several lines (``note_numbers`` says whose):
    the record round-trips and a sentence of its second paragraph is pinned to its own number,
    not to its line's order among the footnote lines (the third line is footnote 2's)."""
    op = OpinionRecord("majority", None, ("The motor vehicle rule applies.",),
                       ("A first note.", "The code provides:", "(1) a motor vehicle is a car;",
                        "A motor vehicle note."),
                       page_starts=(((0, "35"),), (), (), (), ()), note_numbers=("1", "2", "2", "3"))
    record = replace(UNPAGED, source_id="5", opinions=(op,))
    assert op.notes == ("A first note.", "The code provides: (1) a motor vehicle is a car;", "A motor vehicle note.")
    folder = write_collection(tmp_path / "col", [record])
    with Collection.open(folder) as c:
        assert c.record(c.case_ids()[0]) == record
        found = find_term(c, "motor vehicle")
    got = {s["text"]: s["pin_cite"] for s in found.tables["sentence"].values()}
    assert got["(1) a motor vehicle is a car;"] == "Doe v. Roe, 203 F.2d 34, 35 n.2 (D.C. Cir. 2001)"
    assert got["A motor vehicle note."] == "Doe v. Roe, 203 F.2d 34, 35 n.3 (D.C. Cir. 2001)"


def test_a_pdfs_slip_opinion_is_pinned_to_its_page(tmp_path, capsys):
    """``rank --collection`` over a court's PDF with a docket number and no reporter citation pastes a
    slip opinion's cite with the page the sentence is on (D. Or.'s findings and recommendation, pages
    1-2: tests/fixtures/genuine/README.md); it was "Lofall v. Oregon (D. Or. 2024)", no pin."""
    import shutil

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(Path(__file__).parents[1] / "fixtures" / "genuine" / "pdf-modern" / "ord-24-839-doc9-pages1-2.pdf",
                pdfs)
    assert main(["ingest", str(pdfs), "--collection", str(tmp_path / "coll")]) == 0
    capsys.readouterr()
    assert main(["rank", "pro se", "--collection", str(tmp_path / "coll"), "--format", "json",
                 "--provision", "Pro se pleadings are held to a less stringent standard."]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert rows
    for row in rows:
        assert row["pin_cite"] == (f"Lofall v. Oregon, No. 3:24-cv-00839-SB, slip op. at {row['pin_page']} "
                                   "(D. Or. July 15, 2024)")
    assert {row["pin_page"] for row in rows} <= {"1", "2"}
