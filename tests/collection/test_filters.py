"""Filters of the cases a collection is read from (--court, --jurisdiction, --level, --since,
--until, --published-only) and the authority of courts (statinterp.corpus.authority)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.find import find_term, term_zip_bytes
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import open_collection
from statinterp.corpus.authority import CaseFilter, court_authority
from statinterp.corpus.dataset import zip_filters
from statinterp.errors import UsageError
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.records import CaseRecord, OpinionRecord

NINTH = "United States Court of Appeals for the Ninth Circuit"
NDCAL = "United States District Court for the Northern District of California"
PA = "Supreme Court of Pennsylvania"
PA_SUPER = "Superior Court of Pennsylvania"


def _case(source_id: str, court: str, jurisdiction: str, date: str, cite: str) -> CaseRecord:
    name = f"Case {source_id} v. Other"
    text = (f"In {source_id}, the court read the term technological measure narrowly.",
            f"A technological measure of case {source_id} must effectively control access to a work.",
            "We affirm.")
    return CaseRecord(source="cap", source_id=source_id, name=name, name_abbreviation=name, decision_date=date,
                      docket_number="1", citations=(("official", cite),), court=court, jurisdiction=jurisdiction,
                      head_matter=f"{name}\nDecided {date[:4]}.", judges="", parties="", attorneys="",
                      opinions=(OpinionRecord("majority", "Judge", text),))


CASES = [
    _case("101", NINTH, "United States", "1998-05-01", "150 F.3d 101"),
    _case("102", NINTH, "United States", "2004-07-01", "380 F.3d 102"),
    _case("103", NINTH, "United States", "2011-02-03", "640 F.3d 103"),
    _case("104", NDCAL, "United States", "2005-01-01", "400 F. Supp. 2d 104"),
    _case("105", PA, "Pennsylvania", "2006-03-04", "590 Pa. 105"),
    _case("106", PA_SUPER, "Pennsylvania", "2007-09-09", "930 A.2d 106"),
]


@pytest.fixture(scope="module")
def collections(tmp_path_factory) -> tuple[Path, Path]:
    """The cases as one file and as a set of shards by court."""
    root = tmp_path_factory.mktemp("filters")
    volume = write_cap_volume(CASES, root / "volume")
    ingest([volume], root / "single", citations=False)
    ingest([volume], root / "by-court", citations=False, shard_by="court")
    return root / "single", root / "by-court"


# --------------------------------------------------------------------------------------------
# Authority


@pytest.mark.parametrize(("court", "jurisdiction", "level", "system", "state"), [
    ("Supreme Court of the United States", "United States", "supreme", "federal", ""),
    (NINTH, "United States", "appellate", "federal", ""),
    (NDCAL, "United States", "trial", "federal", ""),
    ("District Court, District of Columbia", "", "trial", "federal", ""),  # courts-db's type says appellate
    (PA, "Pennsylvania", "supreme", "state", "Pennsylvania"),
    (PA_SUPER, "Pennsylvania", "appellate", "state", "Pennsylvania"),
    ("New York Supreme Court", "", "trial", "state", "New York"),  # a trial court whatever its name says
    ("ca9", "F", "appellate", "federal", ""),  # CourtListener's courts file
    ("scotus", "F", "supreme", "federal", ""),
    ("Some County Court", "ST", "trial", "state", ""),
    ("Supreme Court of Marlowe", "Marlowe", "supreme", "state", "Marlowe"),  # courts-db does not know it
    ("Court of Appeals of Marlowe, Second District", "Marlowe", "appellate", "state", "Marlowe"),
])
def test_court_authority(court, jurisdiction, level, system, state):
    authority = court_authority(court, jurisdiction)
    assert (authority.level, authority.system, authority.state) == (level, system, state)


def test_case_filter_checks_its_options():
    with pytest.raises(UsageError, match="--since '2001-1'"):
        CaseFilter(since="2001-1")
    with pytest.raises(UsageError, match="--level 'high'"):
        CaseFilter(levels=("high",))
    with pytest.raises(UsageError, match="after --until"):
        CaseFilter(since="2005", until="2004")
    assert not CaseFilter()
    until = CaseFilter(until="2005")
    assert until.accepts_date("2005-12-31") and not until.accepts_date("2006-01-01")
    assert CaseFilter(since="2005-06").accepts_date("2005-06-01") and not CaseFilter(since="2005-06").accepts_date(
        "2005-05-31")


def test_published_only_keeps_what_the_source_calls_published():
    from statinterp.corpus.dataset import Case

    assert CaseFilter.published("cap", [])  # CAP holds the published reporters
    assert CaseFilter.published("courtlistener", [["official", "380 F.3d 102"]])
    assert not CaseFilter.published("courtlistener", [["federal", "123 F. App'x 45"]])  # unpublished series
    assert not CaseFilter.published("courtlistener", [])
    assert not CaseFilter.published("text", [])
    only = CaseFilter(published_only=True)
    assert only.accepts(Case("c1", "", court=NINTH, source="courtlistener", citation="380 F.3d 102"))
    assert not only.accepts(Case("c2", "", court=NINTH, source="courtlistener", citation="123 F. App'x 45"))
    assert only.as_dict() == {"published_only": True} and only.describe() == "published cases only"


def test_a_court_is_named_by_name_courtlistener_id_or_courts_db_id():
    for name in (NINTH, "ca9", "united states court of appeals for the ninth circuit"):
        assert CaseFilter(courts=(name,)).accepts_court(NINTH, "United States"), name
    assert not CaseFilter(courts=("ca9",)).accepts_court(NDCAL, "United States")
    assert CaseFilter(jurisdictions=("pennsylvania",)).accepts_court(PA_SUPER, "Pennsylvania")
    assert not CaseFilter(jurisdictions=("federal",)).accepts_court(PA_SUPER, "Pennsylvania")
    assert CaseFilter(levels=("supreme",)).accepts_court(PA, "Pennsylvania")


# --------------------------------------------------------------------------------------------
# In the store, on a file and on a set of shards


def _found_cases(folder: Path, case_filter: CaseFilter | None) -> tuple[list[str], bytes]:
    with open_collection(folder, case_filter=case_filter) as collection:
        found = find_term(collection, "technological measure")
    courts = sorted({found.tables["case"][s["case_id"]].court + " " + found.tables["case"][s["case_id"]].date
                     for s in found.tables["sentence"].values()})
    return courts, term_zip_bytes(found.key, found.tables, case_filter.as_dict() if case_filter else None)


@pytest.mark.slow
@pytest.mark.parametrize(("case_filter", "expected"), [
    (CaseFilter(courts=("ca9",), since="2000"), [f"{NINTH} 2004-07-01", f"{NINTH} 2011-02-03"]),
    (CaseFilter(courts=(NINTH,), until="2004"), [f"{NINTH} 1998-05-01", f"{NINTH} 2004-07-01"]),
    (CaseFilter(jurisdictions=("Pennsylvania",)), [f"{PA_SUPER} 2007-09-09", f"{PA} 2006-03-04"]),
    (CaseFilter(levels=("trial",)), [f"{NDCAL} 2005-01-01"]),
    (CaseFilter(levels=("supreme", "trial"), since="2005-06"), [f"{PA} 2006-03-04"]),
    (CaseFilter(courts=("cand", "pa")), [f"{PA} 2006-03-04", f"{NDCAL} 2005-01-01"]),
    (CaseFilter(courts=("scotus",)), []),
])
def test_the_filter_keeps_only_its_cases_the_same_on_a_file_and_a_set(collections, case_filter, expected):
    single, shards = collections
    courts, single_zip = _found_cases(single, case_filter)
    assert courts == expected
    set_courts, set_zip = _found_cases(shards, case_filter)
    assert set_courts == expected
    assert set_zip == single_zip  # byte-identical


@pytest.mark.slow
def test_an_empty_filter_changes_nothing(collections):
    single, _ = collections
    everything, plain_zip = _found_cases(single, None)
    assert len(everything) == len(CASES)
    assert _found_cases(single, CaseFilter())[1] == plain_zip


@pytest.mark.slow
def test_find_records_the_filter_in_its_zip_and_report(collections, tmp_path, capsys):
    single, _ = collections
    out = tmp_path / "tm.zip"
    assert main(["find", "technological measure", "--collection", str(single), "--court", "ca9", "--since", "2000",
                 "--out", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["filters"] == {"courts": ["ca9"], "since": "2000"}
    assert report["case"] == 2
    assert zip_filters(out) == {"courts": ["ca9"], "since": "2000"}
    with zipfile.ZipFile(out) as zf:  # still a plain term zip: the filter is the comment, not a member
        assert sorted(zf.namelist()) == [f"technological_measure-{k}.json"
                                         for k in ("case", "opinion", "paragraph", "sentence")]


@pytest.mark.slow
def test_rank_court_since_returns_only_that_courts_sentences(collections, capsys):
    single, _ = collections
    assert main(["rank", "technological measure", "--collection", str(single), "--court", "ca9", "--since", "2000",
                 "--method", "BM25", "--top", "0", "--format", "json", "-q"]) == 0
    shown = json.loads(capsys.readouterr().out)
    results = shown["results"]
    assert results and {r["case_name"] for r in results} == {"Case 102 v. Other", "Case 103 v. Other"}
    assert shown["filters"] == {"courts": ["ca9"], "since": "2000"}
    assert main(["rank", "technological measure", "--collection", str(single), "--court", "ca9", "--since", "2000",
                 "--method", "BM25", "-q"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "cases filtered: courts ca9; since 2000"


@pytest.mark.slow
def test_a_filter_keeping_no_case_says_so(collections, capsys):
    single, _ = collections
    assert main(["find", "technological measure", "--collection", str(single), "--court", "scotus",
                 "--out", "never.zip"]) == 2
    err = capsys.readouterr().err
    assert "among the cases kept (courts scotus)" in err


def test_filters_apply_to_collections_only(capsys):
    assert main(["rank", "vehicle", "--court", "ca9"]) == 2
    assert "apply to --collection only" in capsys.readouterr().err


@pytest.mark.slow
def test_a_wide_filter_is_applied_when_the_rows_are_read(collections, monkeypatch):
    """Above NARROW_FILTER_CASES the paragraph ids are not narrowed from the index by case: the
    rows are (in SQL, before their text is read); the result is the same."""
    from statinterp.collection import find

    single, shards = collections
    case_filter = CaseFilter(courts=("ca9",), since="2000")
    narrow = _found_cases(single, case_filter)
    monkeypatch.setattr(find, "NARROW_FILTER_CASES", 0)
    assert _found_cases(single, case_filter) == narrow
    assert _found_cases(shards, case_filter) == narrow


# --------------------------------------------------------------------------------------------
# Authority in rank's output, --order authority


@pytest.mark.slow
def test_rank_shows_each_sentences_court_level_and_orders_by_authority_on_request(collections, capsys):
    single, _ = collections
    args = ["rank", "technological measure", "--collection", str(single), "--method", "BM25", "--top", "0", "-q"]
    assert main([*args, "--format", "json"]) == 0
    by_score = json.loads(capsys.readouterr().out)["results"]
    levels = {r["case_name"]: (r["level"], r["jurisdiction"]) for r in by_score}
    assert levels["Case 105 v. Other"] == ("supreme", "Pennsylvania")
    assert levels["Case 101 v. Other"] == ("appellate", "federal")
    assert levels["Case 104 v. Other"] == ("trial", "federal")
    assert main([*args, "--format", "json", "--order", "authority"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["order"] == "authority"
    rows = shown["results"]
    keys = [({"supreme": 0, "appellate": 1, "trial": 2}[r["level"]], "".join(chr(0x10FFFF - ord(c)) for c in r["date"]))
            for r in rows]
    assert keys == sorted(keys)  # level, then the newest first
    assert sorted((r["rank"], r["score"], r["sentence_id"]) for r in rows) == \
        [(r["rank"], r["score"], r["sentence_id"]) for r in by_score]  # ranks and scores unchanged
    assert main([*args, "--order", "authority"]) == 0
    table = capsys.readouterr().out
    assert "shown by authority" in table.splitlines()[0]
    assert "[Pennsylvania supreme]" in table and "[federal trial]" in table


@pytest.mark.slow
def test_memo_of_a_filtered_collection_names_the_filter_and_quotes_only_its_cases(collections, tmp_path, capsys):
    single, _ = collections
    out = tmp_path / "memo.md"
    assert main(["memo", "technological measure", "--collection", str(single), "--court", "ca9", "--since", "2000",
                 "--method", "BM25", "--labels", str(tmp_path / "none.sqlite"), "--out", str(out), "-q"]) == 2
    assert "no such label store" in capsys.readouterr().err
    assert main(["memo", "technological measure", "--collection", str(single), "--court", "ca9", "--since", "2000",
                 "--method", "BM25", "--out", str(out), "-q"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "**Cases searched:** courts ca9; since 2000" in text
    assert "### Federal courts" in text and "#### Intermediate appellate courts" in text
    assert "Case 102 v. Other, 380 F.3d 102" in text and "Case 103 v. Other, 640 F.3d 103" in text
    for other in ("101", "104", "105", "106"):
        assert f"Case {other} v. Other" not in text
    assert "https://www.courtlistener.com/c/F.3d/380/102/" in text


@pytest.mark.slow
def test_labels_export_of_a_filtered_collection_records_the_filter(collections, tmp_path, capsys):
    from statinterp.corpus.dataset import load_corpus
    from statinterp.corpus.labels import LabelStore

    single, _ = collections
    with open_collection(single) as collection:
        found = find_term(collection, "technological measure")
    by_case = {found.tables["case"][s["case_id"]].short_name: sid for sid, s in found.tables["sentence"].items()}
    kept, dropped = by_case["Case 103 v. Other"], by_case["Case 105 v. Other"]
    store = tmp_path / "labels.sqlite"
    with LabelStore(store) as labels:
        labels.set_labels("technological_measure", [kept], "high value")
        labels.set_labels("technological_measure", [dropped], "no value")
    out = tmp_path / "tm.zip"
    assert main(["labels", "export", "technological measure", "--collection", str(single), "--labels", str(store),
                 "--court", "ca9", "--out", str(out)]) == 0
    assert "the cases kept (courts ca9) do not hold" in capsys.readouterr().err
    assert zip_filters(out) == {"courts": ["ca9"]}
    term = load_corpus(out).term("technological_measure")
    assert {s.id: s.label for s in term.sentences if s.label} == {kept: "high value"}
    assert {c.short_name for c in term.cases.values()} == {"Case 101 v. Other", "Case 102 v. Other",
                                                           "Case 103 v. Other"}
