"""CourtListener's files as published: bulk CSV (PostgreSQL's dialect) joined with its companions,
REST API pages, per-opinion JSON; the text priority; the source-format registry."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection
from statinterp.errors import InputError
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources import courtlistener as clf
from statinterp.sources.courtlistener import TEXT_FIELDS, opinion_record, reporter_citations, write_bulk_csv
from statinterp.sources.records import CaseRecord, OpinionRecord, SkippedRecord
from statinterp.sources.registry import SourceFormat, register, unregister
from tests.support.paths import FIXTURES

GENUINE = FIXTURES / "genuine" / "courtlistener"
OPINIONS = GENUINE / "opinions-2026-11-25.csv.bz2"
COMPANIONS = [GENUINE / f"{p}-2026-11-25.csv.bz2" for p in ("opinion-clusters", "dockets", "courts", "citations")]

#: What the genuine files hold (README.md there): cluster -> (name, date, court, docket number, opinions).
EXPECTED = {
    "2001": ("Cannon v. State", "1944-11-18", "Court of Appeals of Georgia", "30614", 2),
    "2002": ("State v. Aspby", "2003-09-30", "Washington Supreme Court", "No. 73722-3", 1),
    "2003": ("Fisher v. University of Texas at Austin", "2013-06-24", "Supreme Court of the United States",
             "11-345", 1),
    "2004": ("Hogarth v. Bell", "2025-03-28", "District Court, E.D. North Carolina", "5:24-CV-481-FL", 1),
}


def read_all(partitions: list[Partition]) -> tuple[list[CaseRecord], list[SkippedRecord]]:
    items = [item for p in partitions for item in read_partition(p)]
    return [i for i in items if isinstance(i, CaseRecord)], [i for i in items if isinstance(i, SkippedRecord)]


def check_genuine(cases: list[CaseRecord], names: bool = True) -> None:
    assert sorted(c.source_id for c in cases) == sorted(EXPECTED)
    for c in cases:
        name, date, court, docket, n_opinions = EXPECTED[c.source_id]
        assert len(c.opinions) == n_opinions and all(o.paragraphs for o in c.opinions)
        if names:
            assert (c.name, c.decision_date, c.court, c.docket_number) == (name, date, court, docket)


# --------------------------------------------------------------------------------------------
# Bulk CSV, joined


def test_genuine_bulk_files_give_every_opinion_with_name_date_and_court(tmp_path):
    """On main the default csv dialect read these 5 opinions as 2 cases and 18 skipped records."""
    folder = tmp_path / "bulk"
    folder.mkdir()
    for f in [OPINIONS, *COMPANIONS]:
        shutil.copy(f, folder)
    parts = discover([folder])
    assert [(Path(p.path).name, p.format) for p in parts] == [("opinions-2026-11-25.csv.bz2", "courtlistener")]
    assert sorted(Path(c).name for c in parts[0].companions) == sorted(c.name for c in COMPANIONS)
    cases, skipped = read_all(parts)
    assert skipped == []
    check_genuine(cases)
    by_id = {c.source_id: c for c in cases}
    cannon = by_id["2001"]
    assert [(o.type, o.author) for o in cannon.opinions] == [("majority", "Broyles"), ("concurrence", "Gardner")]
    assert "the verdicts are repugnant and void" in cannon.opinions[1].text  # a quote-laden HTML value, whole
    assert cannon.judges == "Broyles, Gardner, MacIntyre" and cannon.jurisdiction == "SA"
    fisher = by_id["2003"]
    assert fisher.citations == (("official", "570 U.S. 297"), ("parallel", "133 S. Ct. 2411"))
    assert fisher.official_citation == "570 U.S. 297"
    assert "FISHER v. UNIVERSITY OF TEXAS AT AUSTIN" in fisher.text
    assert by_id["2002"].opinions[0].paragraphs[0].startswith("Petition for review of a decision")  # xml_harvard


def test_genuine_bulk_files_ingest_without_skipped_records(tmp_path):
    summary = ingest([OPINIONS, *COMPANIONS], tmp_path / "coll", statistics=False, citations=False)
    assert (summary.cases_read, len(summary.skipped), summary.as_dict()["opinions"]) == (4, 0, 5)
    with Collection.open(tmp_path / "coll") as c:
        info = c.info()
        assert info["cases"] == 4 and info["opinions"] == 5
        names = {r[0] for r in c.db.execute("SELECT name FROM cases WHERE source = 'courtlistener'")}
    assert names == {v[0] for v in EXPECTED.values()}


def test_text_follows_courtlistener_priority_on_genuine_opinions():
    """Cannon's lead has html_with_citations and xml_harvard: CourtListener's best text is the
    former; only the Harvard XML has '(After stating the foregoing facts.)'."""
    cases, _ = read_all(discover([OPINIONS, *COMPANIONS]))
    lead = next(c for c in cases if c.source_id == "2001").opinions[0]
    assert lead.paragraphs[0] == "The overruling of the certiorari was error."
    assert "After stating the foregoing facts" not in lead.text


def test_text_priority_is_courtlistener_order_then_plain_text():
    # OPINION_TEXT_SOURCE_FIELDS in cl/search/models.py (courtlistener @ 26a474e60), then plain_text
    assert TEXT_FIELDS == ("html_with_citations", "xml_harvard", "html_columbia", "html_lawbox", "html_anon_2020",
                           "html", "plain_text")
    for i, field in enumerate(TEXT_FIELDS):
        row = {f: (f"<p>from {f}</p>" if f != "plain_text" else "from plain_text") for f in TEXT_FIELDS[i:]}
        row.update({f: "  " for f in TEXT_FIELDS[:i]})  # blank fields do not count
        assert opinion_record(row, "majority", None).paragraphs == (f"from {field}",)
    row = {"plain_text": "PDF text", "html_with_citations": "<pre>PDF text, linked</pre>"}
    assert opinion_record(row, "majority", None).paragraphs == ("PDF text, linked",)
    escaped = '&lt;opinion type="majority"><p id="x">Escaped &amp; stored.&lt;/p>&lt;/opinion>'
    assert opinion_record({"xml_harvard": escaped}, "majority", None).paragraphs == ("Escaped & stored.",)


def _opinion_rows() -> list[dict]:
    return [
        {"id": 1, "cluster_id": 10, "type": "020lead", "author_str": 'Smith, "J."',
         "html_with_citations": '<p class="x">He said "stop" \\ and left,</p>\n<p>then "came back".</p>',
         "plain_text": "ignored", "extra_column": "x"},
        {"id": 2, "cluster_id": 10, "type": "040dissent", "author_str": "", "plain_text": 'I dissent: "no".\\'},
        {"id": 3, "cluster_id": 11, "type": "010combined", "plain_text": "Other case.\n\nSecond \"para\"."},
    ]


def test_quotes_and_backslashes_inside_values_in_any_column_order(tmp_path):
    """PostgreSQL writes a quote inside a value as \\" (not ""): read whole, whatever the columns'
    order, extra columns ignored; .csv, .bz2, .gz and .xz alike."""
    orders = [["id", "cluster_id", "type", "author_str", "plain_text", "html_with_citations", "extra_column"],
              ["html_with_citations", "extra_column", "plain_text", "type", "cluster_id", "author_str", "id"]]
    for k, (cols, suffix) in enumerate(zip(orders * 2, [".csv", ".csv.bz2", ".csv.gz", ".csv.xz"], strict=True)):
        path = tmp_path / f"opinions-{k}{suffix}"
        write_bulk_csv(path, cols, _opinion_rows())
        cases, skipped = read_all(discover([path]))
        assert skipped == []
        assert [c.source_id for c in cases] == ["10", "11"]
        assert cases[0].opinions == (
            OpinionRecord("majority", 'Smith, "J."', ('He said "stop" \\ and left,', 'then "came back".')),
            OpinionRecord("dissent", None, ('I dissent: "no".\\',)))
        assert cases[1].opinions[0].paragraphs == ("Other case.", 'Second "para".')


def test_long_fields_are_read_and_the_csv_field_limit_is_bounded(tmp_path, monkeypatch):
    long_text = ("A sentence of an opinion. " * 12_000).strip()  # 312 k characters, over csv's default 131,072
    path = tmp_path / "opinions.csv"
    write_bulk_csv(path, ["id", "cluster_id", "plain_text"], [{"id": 1, "cluster_id": 5, "plain_text": long_text}])
    cases, _ = read_all(discover([path]))
    assert cases[0].opinions[0].paragraphs == (long_text,)
    assert clf.CSV_FIELD_LIMIT < 2**31  # bounded (not sys.maxsize)
    monkeypatch.setattr(clf, "CSV_FIELD_LIMIT", 100_000)  # a one-line field over it: its row is skipped (issue 25)
    cases, skipped = read_all(discover([path]))
    assert cases == [] and [(s.record, s.reason) for s in skipped] == [
        ("row 1", "holds a line longer than 100000 bytes (the row at byte 25)")]
    write_bulk_csv(path, ["id", "cluster_id", "plain_text"],  # a field of many lines over it: its row is skipped
                   [{"id": 1, "cluster_id": 5, "plain_text": "\n".join([long_text[:50_000]] * 3)},
                    {"id": 2, "cluster_id": 6, "plain_text": "Short."}])  # (issue 35: it once stopped the file)
    cases, skipped = read_all(discover([path]))
    assert [c.source_id for c in cases] == ["6"]
    assert skipped[0].record == "row 1" and "at byte 25 cannot be read (field larger than field limit" in \
        skipped[0].reason


# --------------------------------------------------------------------------------------------
# Companions


def test_companions_given_as_arguments_from_another_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(OPINIONS, tmp_path / "a")
    for c in COMPANIONS:
        shutil.copy(c, tmp_path / "b")
    alone = read_all(discover([tmp_path / "a"]))[0]  # without companions: cases named by their cluster
    assert len(alone) == 4 and all(c.name == f"CourtListener cluster {c.source_id}" for c in alone)
    parts = discover([tmp_path / "a", *sorted((tmp_path / "b").iterdir())])
    assert len(parts) == 1 and len(parts[0].companions) == 4
    cases, skipped = read_all(parts)
    assert skipped == []
    check_genuine(cases)


def test_companions_beside_prefer_the_opinions_files_date(tmp_path):
    shutil.copy(OPINIONS, tmp_path / "opinions-2026-11-25.csv.bz2")
    write_bulk_csv(tmp_path / "opinion-clusters-2026-11-25.csv", ["id", "case_name", "docket_id"],
                   [{"id": 2001, "case_name": "Right date", "docket_id": ""}])
    write_bulk_csv(tmp_path / "opinion-clusters-2030-01-01.csv", ["id", "case_name", "docket_id"],
                   [{"id": 2001, "case_name": "Wrong date", "docket_id": ""}])
    cases, _ = read_all(discover([tmp_path]))
    assert next(c for c in cases if c.source_id == "2001").name == "Right date"
    given = tmp_path / "elsewhere" / "opinion-clusters-2031-01-01.csv"
    given.parent.mkdir()
    write_bulk_csv(given, ["id", "case_name", "docket_id"], [{"id": 2001, "case_name": "Given", "docket_id": ""}])
    (part,) = discover([tmp_path / "opinions-2026-11-25.csv.bz2", given])
    assert part.companions == (str(given),)  # a kind given is not also taken from beside
    cases, _ = read_all([part])
    assert next(c for c in cases if c.source_id == "2001").name == "Given"


def test_a_companion_alone_is_a_clear_message_not_skipped_rows(tmp_path, capsys):
    """On main a clusters file was read as opinions: every row skipped (cluster_id missing), exit 0."""
    with pytest.raises(InputError, match="clusters file .* holds none itself; give it together with"):
        discover([COMPANIONS[0]])
    code = main(["ingest", str(COMPANIONS[0]), "--collection", str(tmp_path / "c"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "opinion-clusters-2026-11-25.csv.bz2" in err and "CourtListener clusters file" in err
    assert not (tmp_path / "c").exists()
    folder = tmp_path / "only-companions"
    folder.mkdir()
    shutil.copy(COMPANIONS[1], folder)
    with pytest.raises(InputError, match="holds a CourtListener dockets file .* but no courtlistener source"):
        discover([folder])


def test_reporter_citations_official_first_in_courtlistener_order():
    rows = [{"volume": "364", "reporter": "P.3d", "page": "810", "type": "3"},  # STATE_REGIONAL
            {"volume": "2015", "reporter": "WL", "page": "1", "type": "7"},  # WEST
            {"volume": "191", "reporter": "Wash. App.", "page": "530", "type": "2"},  # STATE
            {"volume": "2015", "reporter": "Wash.", "page": "12", "type": "8"},  # NEUTRAL
            {"volume": "1", "reporter": "", "page": "2", "type": "2"}]  # no reporter: dropped
    assert reporter_citations(rows) == (("official", "2015 Wash. 12"), ("official", "191 Wash. App. 530"),
                                        ("parallel", "364 P.3d 810"), ("parallel", "2015 WL 1"))


# --------------------------------------------------------------------------------------------
# JSON: API pages, per-opinion files


def test_api_page_is_read_with_companions_beside():
    """On main an API page (.json) was sniffed as CAP and skipped."""
    parts = discover([GENUINE / "api-opinions-page.json"])
    assert [p.format for p in parts] == ["courtlistener"] and len(parts[0].companions) == 4
    cases, skipped = read_all(parts)
    assert skipped == []
    check_genuine(cases)


def test_per_opinion_json_tar_folder_and_one_line(tmp_path):
    """Per-opinion JSON (``cluster`` a v3 URL): in a tar.gz, a folder of files, one a line."""
    cases, skipped = read_all([Partition(str(GENUINE / "per-opinion-json.tar.gz"), "courtlistener")])
    assert skipped == []
    check_genuine(cases, names=False)
    folder = tmp_path / "per-opinion"
    with tarfile.open(GENUINE / "per-opinion-json.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    parts = discover([folder])  # on main: sniffed as CAP, every file skipped
    assert parts == [Partition(str(folder), "courtlistener")]
    check_genuine(read_all(parts)[0], names=False)
    lines = tmp_path / "opinions.jsonl"
    lines.write_text("".join(json.dumps(json.loads(f.read_text())) + "\n" for f in sorted(folder.glob("*.json"))))
    cases, skipped = read_all(discover([lines]))  # on main: cluster_id missing, every line skipped
    assert skipped == []
    check_genuine(cases, names=False)
    assert next(c for c in cases if c.source_id == "2001").opinions[1].type == "concurrence"


def test_bad_cluster_values_are_skipped_with_the_field_named(tmp_path):
    path = tmp_path / "ops.jsonl"
    rows = [{"id": 1, "cluster": "https://www.courtlistener.com/api/rest/v4/clusters/77/", "plain_text": "x"},
            {"id": 2, "cluster": "https://example.org/nothing/", "plain_text": "y"},
            {"id": 3, "plain_text": "z"}, {"id": 4, "cluster_id": [1], "plain_text": "w"},
            {"id": 5, "cluster_id": 8, "plain_text": 12}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "[1]\n")
    cases, skipped = read_all(discover([path]))
    assert [c.source_id for c in cases] == ["77"]
    assert [(s.record, s.field) for s in skipped] == [
        ("2", "cluster_id"), ("3", "cluster_id"), ("4", "cluster_id"), ("line 6[0]", "(record)"),
        ("cluster 8", "plain_text")]


# --------------------------------------------------------------------------------------------
# The registry


def test_a_format_registered_elsewhere_is_sniffed_read_and_listed(tmp_path, capsys):
    def read(partition: Partition):
        text = Path(partition.path).read_text()
        yield CaseRecord("memo", Path(partition.path).stem, text.split("\n")[0], "", "", "", (), "", "", "", "", "",
                         "", (OpinionRecord("majority", None, tuple(text.split("\n")[1:])),))

    register(SourceFormat("memo-test", "memo files (.memo), a test format", read,
                          lambda p: p.name.endswith(".memo"), order=5))
    try:
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "one.memo").write_text("Memo v. Test\nFirst line.\nSecond line.")
        from statinterp import sources

        assert "memo-test" in sources.FORMATS
        parts = discover([tmp_path / "src"])
        assert parts == [Partition(str(tmp_path / "src" / "one.memo"), "memo-test")]
        (case,) = list(read_partition(parts[0]))
        assert case.name == "Memo v. Test" and case.opinions[0].paragraphs == ("First line.", "Second line.")
        assert main(["ingest", "--help"]) == 0
        help_text = " ".join(capsys.readouterr().out.split())
        assert "memo-test (memo files (.memo), a test format)" in help_text and "|memo-test" in help_text
        assert main(["ingest", str(tmp_path / "src"), "--format", "memo-test", "--collection",
                     str(tmp_path / "c"), "-q", "--no-citations"]) == 0
    finally:
        unregister("memo-test")
    assert "memo-test" not in sources.FORMATS


def test_invented_bulk_files_of_the_benchmark_ingest_whole(tmp_path):
    from benchmarks.courtlistener_bulk import write_invented

    counts = write_invented(tmp_path / "cl", 30)
    parts = discover([tmp_path / "cl"])
    assert len(parts) == 1 and len(parts[0].companions) == 4
    cases, skipped = read_all(parts)
    assert skipped == [] and len(cases) == 30
    assert sum(len(c.opinions) for c in cases) == counts["opinions"]
    assert all(c.name.startswith('Invented "') and c.court and c.docket_number and c.decision_date for c in cases)
    assert all([k for k, _ in c.citations] == ["official", "parallel"] for c in cases)
    assert any("\\ note" in c.text for c in cases) and any('"quoted"' in c.text for c in cases)
