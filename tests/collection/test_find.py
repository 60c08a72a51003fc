"""statinterp find: joined-line segmentation, finding in a collection, --against, rank --collection."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.find import (
    MatchingOpinion,
    find_on_dask,
    find_runs,
    find_term,
    matching_opinions,
    merge_found_tables,
    sentences_around,
    term_zip_bytes,
    write_term_zip,
)
from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection
from statinterp.corpus.dataset import load_corpus
from statinterp.evaluation.against import compare_with_labelled, normalise
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.text.segmentation import build_pipeline, sentence_spans
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
EXAMPLE = REPO / "data" / "example"
EXAMPLE_CAP = EXAMPLE / "sources" / "cap"


def spans(nlp, text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(nlp(text))]


# --------------------------------------------------------------------------------------------
# Segmentation with line joining

FOOTNOTE = "The causes were the lack of proper charts on board,\n10\nthe failure to post a lookout. It sank."
LIST = ("No person shall traffic in any technology that—\n(A) is primarily designed for circumventing;\n"
        "(B) has only limited purpose.\nII. DISCUSSION\nThe court holds.")


def test_join_lines_keeps_footnote_and_list_sentences_whole():
    nlp = build_pipeline(join_lines=True)
    assert spans(nlp, FOOTNOTE) == [
        "The causes were the lack of proper charts on board,\n10\nthe failure to post a lookout.", "It sank."]
    assert spans(nlp, LIST) == [
        "No person shall traffic in any technology that—\n(A) is primarily designed for circumventing;\n"
        "(B) has only limited purpose.", "II. DISCUSSION", "The court holds."]
    # headings, colons before a capitalised line, finished lines and blank lines still end a sentence
    assert spans(nlp, "Heading\nThe text.\n12\nThe next.") == ["Heading", "The text.", "12", "The next."]
    assert spans(nlp, "The statute provides:\nEach amendment shall apply.") == [
        "The statute provides:", "Each amendment shall apply."]
    assert spans(nlp, "It was not\n\nthe end.") == ["It was not", "the end."]


def test_default_segmentation_is_unchanged_by_the_option():
    nlp = build_pipeline()
    assert nlp.pipe_names == ["lemmatizer", "legal_sentence_boundaries"]
    assert spans(nlp, FOOTNOTE) == [
        "The causes were the lack of proper charts on board,", "10", "the failure to post a lookout.", "It sank."]
    assert spans(nlp, LIST)[:3] == [
        "No person shall traffic in any technology that—", "(A) is primarily designed for circumventing;",
        "(B) has only limited purpose."]
    assert build_pipeline(join_lines=True).pipe_names == ["lemmatizer", "legal_sentence_boundaries_joined"]


# The data set's list-label conventions (line joining only)
ITEM_AFTER_UNFINISHED = ("A person is dangerous when there is a likelihood of:\n(1) Harm to himself; or\n"
                         "“(2) Killing another person; or\n(3) Substantial deterioration in health.")
LETTERED_ITEMS = "Serious harm means a likelihood of:\nb. Killing another person;\nc. Substantial damage."
MIDLINE_LABELS = ("Petitioner overlooks two facts: (1) Those transactions were elsewhere; and (2) Rosen was "
                  "not the broker. Section 1201(a)(1) (A) applies.")
FOOTNOTE_TEXT = "It is likely to be permanent.\n3 A service-connected retirement compensates the member.\n4 See id."


def test_join_lines_label_opening_an_item_after_an_unfinished_line_ends_the_sentence_before_it():
    nlp = build_pipeline(join_lines=True)
    assert spans(nlp, ITEM_AFTER_UNFINISHED) == [
        "A person is dangerous when there is a likelihood of:", "(1)", "Harm to himself; or\n“(2)",
        "Killing another person; or\n(3)", "Substantial deterioration in health."]
    # after a colon the line is finished: the letter label is split off as "(1)" is
    assert spans(nlp, LETTERED_ITEMS) == [
        "Serious harm means a likelihood of:", "b.", "Killing another person;\nc.", "Substantial damage."]
    # a finished line still ends the sentence; a quoted label there stays with its item, a capital
    # letter heading stays whole, and a lower-case item still continues the sentence
    assert spans(nlp, "It is so.\n“(d) In cases under it, tax.\nB. The Plan\nIt is, that—\n(a) is primarily.") == [
        "It is so.", "“(d) In cases under it, tax.", "B. The Plan", "It is, that—\n(a) is primarily."]


def test_join_lines_labels_inside_a_line_and_footnote_numbers_at_a_line_start():
    nlp = build_pipeline(join_lines=True)
    # the data set's convention (find's default): a label inside a line ends the sentence after it
    assert spans(nlp, MIDLINE_LABELS) == [
        "Petitioner overlooks two facts: (1)", "Those transactions were elsewhere; and (2)",
        "Rosen was not the broker.", "Section 1201(a)(1) (A) applies."]
    assert spans(nlp, "It was so; and (ii) The court (1)(A) No person shall (b) rule.") == [
        "It was so; and (ii)", "The court (1)(A)", "No person shall (b) rule."]
    # the layout rule list_in_sentence (off in find): after a colon or a semicolon the list stays whole
    whole = build_pipeline(join_lines=True, layout_rules=["numbered_heading", "dot_leaders", "list_in_sentence"])
    assert spans(whole, MIDLINE_LABELS) == [
        "Petitioner overlooks two facts: (1) Those transactions were elsewhere; and (2) Rosen was not the broker.",
        "Section 1201(a)(1) (A) applies."]
    assert spans(whole, "It was so; and (ii) The court (1)(A) No person shall (b) rule.") == [
        "It was so; and (ii) The court (1)(A)", "No person shall (b) rule."]
    assert spans(nlp, FOOTNOTE_TEXT) == [
        "It is likely to be permanent.", "3", "A service-connected retirement compensates the member.", "4",
        "See id."]
    # a number before an abbreviation or a reporter is not a footnote number
    assert spans(nlp, "It held so.\n28 U.S.C. § 1331 gives jurisdiction.\n2 Stats. 1933, p. 60.") == [
        "It held so.", "28 U.S.C. § 1331 gives jurisdiction.", "2 Stats. 1933, p. 60."]


def test_default_segmentation_ignores_the_label_conventions():
    nlp = build_pipeline()
    assert spans(nlp, LETTERED_ITEMS) == [
        "Serious harm means a likelihood of:", "b. Killing another person;", "c. Substantial damage."]
    assert spans(nlp, MIDLINE_LABELS)[0] == "Petitioner overlooks two facts: (1) Those transactions were elsewhere; " \
                                            "and (2) Rosen was not the broker."
    assert spans(nlp, FOOTNOTE_TEXT)[1] == "3 A service-connected retirement compensates the member."


def test_lines_may_join_covers_label_items():
    from statinterp.text.segmentation import lines_may_join

    assert lines_may_join("Harm to himself; or", "“(2) Killing another person; or")
    assert lines_may_join("a likelihood of:", "b. Killing") is False  # a colon ends the line
    assert lines_may_join("relevant to suicidal potential;", "b. Killing")
    assert not lines_may_join("It is so.", "(d) In cases")


# --------------------------------------------------------------------------------------------
# Finding in a collection


def _case(source_id: str, paragraphs: tuple[str, ...], name: str) -> CaseRecord:
    return CaseRecord(source="cap", source_id=source_id, name=name, name_abbreviation=name, decision_date="2001-01-01",
                      docket_number="1", citations=(("official", f"{source_id} F.3d 1"),), court="Court",
                      jurisdiction="Marl.", head_matter=f"{name}\nDecided 2001.", judges="", parties="", attorneys="",
                      opinions=(OpinionRecord("majority", "Judge", paragraphs),))


HANDMADE = [
    _case("11", ("The district court held otherwise.",
                 "A pre-employment testing program was adopted. Nothing else happened.",
                 "The causes were the lack of preemployment\n10\ntesting, and a lookout.".replace("\n10\n", " "),
                 "We affirm."), "Alpha v. Beta"),
    _case("12", ("The statute covers a program that—",
                 "(A) requires preemployment tests of drivers; or",
                 "(B) requires nothing.",
                 "The employer's Pre-Employment Testing's scope was narrow.",
                 "Employment testing before hiring is a different matter."), "Gamma v. Delta"),
    _case("13", ("Nothing here mentions the term at all.",), "Epsilon v. Zeta"),
]


@pytest.fixture(scope="module")
def handmade_collection(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("handmade")
    records = list(HANDMADE)
    # a sentence broken by a footnote-number line, as CAP prints them
    records[0] = _case("11", ("The district court held otherwise.",
                              "A pre-employment testing program was adopted. Nothing else happened.",
                              "The causes were the lack of pre-employment testing",
                              "10",
                              "and the lack of a lookout.",
                              "We affirm."), "Alpha v. Beta")
    volume = write_cap_volume(records, root / "volume")
    ingest([volume], root / "collection")
    return root / "collection"


@pytest.mark.slow
def test_find_term_in_a_handmade_collection(handmade_collection):
    with Collection.open(handmade_collection) as collection:
        found = find_term(collection, "preemployment testing")
    texts = sorted(r["text"] for r in found.tables["sentence"].values())
    assert texts == sorted([
        "A pre-employment testing program was adopted.",
        "The causes were the lack of pre-employment testing\n10\nand the lack of a lookout.",
        "The statute covers a program that—\n(A) requires preemployment tests of drivers; or\n(B) requires nothing.",
        "The employer's Pre-Employment Testing's scope was narrow.",
    ])
    assert found.counts == {"case": 2, "opinion": 2, "paragraph": 4, "sentence": 4}
    assert found.paragraphs_matched == 4  # the FTS hit "Employment testing before ..." is not a match
    assert found.paragraphs_searched >= found.paragraphs_matched
    # every record points to its parents; every sentence lies in its paragraph, every paragraph in its opinion
    t = found.tables
    for _sid, s in t["sentence"].items():
        p = t["paragraph"][s["paragraph_id"]]
        assert s["text"] in p["text"] and p["opinion_id"] == s["opinion_id"] and p["case_id"] == s["case_id"]
        assert p["text"] in t["opinion"][s["opinion_id"]]["text"]
        assert t["opinion"][s["opinion_id"]]["text"] in t["case"][s["case_id"]].text
        assert "label" not in s
    multi = [pid for pid, p in t["paragraph"].items() if "\n" in p["text"]]
    assert len(multi) == 2 and all("-l" in pid and pid.count("-") == 2 for pid in multi)


def test_windows_give_the_sentences_of_whole_opinion_segmentation(handmade_collection):
    """find_term segments only the lines around matches; the result equals segmenting whole opinions."""
    from statinterp.collection.find import _joining_pipeline
    from statinterp.text.term_match import fts_query, term_pattern

    term = "preemployment testing"
    pattern = term_pattern(term)
    nlp = _joining_pipeline()
    with Collection.open(handmade_collection) as collection:
        got = {(r["opinion_id"], r["text"]) for r in find_term(collection, term).tables["sentence"].values()}
        want = set()
        matching: dict[int, set[int]] = {}
        for row in collection.paragraphs_matching(fts_query(term)):
            if pattern.search(row.text):
                matching.setdefault(row.opinion_id, set()).add(row.position)
        for opinion_id, positions in matching.items():
            rows = collection.opinion_paragraphs(opinion_id)
            text = "\n".join(r.text for r in rows)
            starts = [0]
            for r in rows:
                starts.append(starts[-1] + len(r.text) + 1)
            targets = [(starts[k], starts[k + 1] - 1) for k, r in enumerate(rows) if r.position in positions]
            for s, e in sentence_spans(nlp(text)):
                if any(s < te and e > ts for ts, te in targets) and pattern.search(text, s, e):
                    want.add((f"o{opinion_id}", text[s:e]))
    assert got == want and len(got) == 4


def test_found_zip_is_read_by_every_command(handmade_collection, tmp_path):
    with Collection.open(handmade_collection) as collection:
        found = find_term(collection, "Preemployment  testing")
    assert found.key == "preemployment_testing"
    path = write_term_zip(found, tmp_path / "preemployment_testing.zip")
    assert sorted(zipfile.ZipFile(path).namelist()) == [
        f"preemployment_testing-{k}.json" for k in ("case", "opinion", "paragraph", "sentence")]
    term = load_corpus(path).term("preemployment testing")
    assert len(term.sentences) == 4 and not term.labelled
    assert {s.text for s in term.sentences} == {s.text for s in found.term_data().sentences}
    # the zip is reproducible byte for byte
    assert write_term_zip(found, tmp_path / "again.zip").read_bytes() == path.read_bytes()


def test_against_counts_exact_contained_and_carries_labels(handmade_collection):
    with Collection.open(handmade_collection) as collection:
        found = find_term(collection, "preemployment testing").term_data()
    labelled = found.__class__(**{**found.__dict__})
    # labelled data: one sentence the same, one a part of a found sentence, one never found
    from dataclasses import replace

    sentences = {s.text: s for s in found.sentences}
    same = replace(sentences["A pre-employment testing program was adopted."], id="L1", label="high value")
    part = replace(sentences["The employer's Pre-Employment Testing's scope was narrow."], id="L2",
                   text="Pre-Employment   Testing's scope", label="certain value")
    lost = replace(same, id="L3", text="A sentence the finder never produced.", label="no value")
    labelled.sentences = [same, part, lost]
    result = compare_with_labelled(found, labelled)
    assert (result.labelled, result.found_exact, result.found_contained) == (3, 1, 2)
    assert result.missed == ["L3"]
    assert result.candidates == 4 and result.labels_carried == 2 and result.extra == 2
    by_text = {normalise(s.text): result.labels.get(s.id) for s in found.sentences}
    assert by_text["A pre-employment testing program was adopted."] == "high value"
    assert by_text["The employer's Pre-Employment Testing's scope was narrow."] == "certain value"


def test_rank_with_collection_statistics(handmade_collection):
    from statinterp.workflow import find_in_collection, prepare_found

    found, corpus = find_in_collection(handmade_collection, "preemployment testing")
    prepared = prepare_found(handmade_collection, corpus, cache_dir=False)
    index = prepared["preemployment testing"]
    with Collection.open(handmade_collection) as collection:
        for level in ("sentence", "paragraph", "opinion", "case"):
            stats = index.background[level]
            assert (stats.n_units, stats.total_tokens) == collection.level_totals(level)
        words = prepared.analyzer.vocab.words
        wid = words.index("employment")
        df, cf = collection.token_statistics("sentence", ["employment"])["employment"]
        assert index.background["sentence"].df[wid] == df and index.background["sentence"].cf[wid] == cf
        assert df > 0
    assert "collection" in index.background.description


# --------------------------------------------------------------------------------------------
# Command line


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def example_collection(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("example")
    ingest([EXAMPLE_CAP], root / "collection")
    return root / "collection"


@pytest.mark.slow
def test_cli_find_against_evaluate_and_rank(example_collection, tmp_path, capsys):
    out = tmp_path / "vehicle.zip"
    code, stdout, err = run(["find", "vehicle", "--collection", str(example_collection), "--out", str(out),
                             "--against", str(EXAMPLE), "--format", "json"], capsys)
    assert code == 0, err
    report = json.loads(stdout)
    a = report["against"]
    assert report["sentence"] == a["candidates"] > 30
    assert 0 < a["found_exact"] <= a["found_contained"] <= a["labelled"] == 47
    assert a["labels_carried"] + a["extra"] == a["candidates"]
    labels = [s.label for s in load_corpus(out).term("vehicle").sentences]
    assert sum(x is not None for x in labels) == a["labels_carried"]

    # refusing to overwrite: one line, exit 2, file untouched
    before = out.read_bytes()
    code, stdout, err = run(["find", "vehicle", "--collection", str(example_collection), "--out", str(out)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--force" in err and out.read_bytes() == before

    code, stdout, err = run(["evaluate", "--data", str(out), "-m", "TF-ISF-p", "--format", "json", "-q"], capsys)
    assert code == 0, err
    assert json.loads(stdout)
    if a["extra"]:
        assert "condensed" in err

    code, stdout, err = run(["rank", "vehicle", "--collection", str(example_collection), "--format", "json",
                             "--top", "0", "-q", "--no-cache"], capsys)
    assert code == 0, err
    ranking = json.loads(stdout)
    assert ranking["candidates"] == report["sentence"] == len(ranking["results"])


def test_cli_find_errors(example_collection, tmp_path, capsys):
    out = tmp_path / "none.zip"
    code, _, err = run(["find", "zebra crossing", "--collection", str(example_collection), "--out", str(out)], capsys)
    assert code == 2 and "no sentence" in err and not out.exists()
    code, _, err = run(["find", "vehicle", "--collection", str(tmp_path), "--out", str(out)], capsys)
    assert code == 2 and "not a statinterp collection" in err and not out.exists()
    code, _, err = run(["rank", "vehicle", "--collection", str(example_collection), "--data", str(EXAMPLE)], capsys)
    assert code == 2 and "not both" in err


@pytest.mark.slow
def test_cli_rank_collection_with_a_compound_and_the_shipped_model(example_collection, capsys):
    code, stdout, err = run(["rank", "vehicle", "--collection", str(example_collection), "-m", "Tp-Tg-Nr",
                             "--format", "json", "--top", "0", "-q", "--no-cache"], capsys)
    assert code == 0, err
    compound = json.loads(stdout)
    assert compound["method"] == "Tp-Tg-Nr" and compound["candidates"] == len(compound["results"]) > 30
    model = REPO / "data" / "models" / "default.statinterp-model"
    assert model.is_file(), f"no shipped model at {model}"
    code, stdout, err = run(["rank", "vehicle", "--collection", str(example_collection), "--model", str(model),
                             "--format", "json", "--top", "0", "-q", "--no-cache"], capsys)
    assert code == 0, err
    learned = json.loads(stdout)
    assert learned["candidates"] == compound["candidates"]
    assert {r["sentence_id"] for r in learned["results"]} == {r["sentence_id"] for r in compound["results"]}


# --------------------------------------------------------------------------------------------
# find on Dask: runs of whole cases, merged in order


def test_find_runs_cut_between_cases_only_and_keep_the_order():
    cases = [1, 1, 2, 3, 3, 3, 4, 5]
    opinions = [MatchingOpinion(k + 10, case, (k,)) for k, case in enumerate(cases)]
    for n in range(1, 10):
        runs = find_runs(opinions, n)
        assert [o for run in runs for o in run] == opinions
        assert 1 <= len(runs) <= n
        case_sets = [{o.case_id for o in run} for run in runs]
        assert all(not (a & b) for i, a in enumerate(case_sets) for b in case_sets[i + 1:])
    assert len(find_runs(opinions, 5)) == 5
    assert find_runs([], 3) == []


def test_tables_of_runs_merged_in_order_equal_the_tables_of_the_whole(example_collection):
    with Collection.open(example_collection) as c:
        for term in ("vehicle", "park"):
            opinions, _, matched = matching_opinions(c, term)
            assert matched and len({o.case_id for o in opinions}) >= 3
            whole = sentences_around(c, term, opinions)
            for n in (1, 2, 3, len(opinions)):
                merged = merge_found_tables(sentences_around(c, term, run) for run in find_runs(opinions, n))
                assert merged == whole
                assert [list(table) for table in merged[0].values()] == [list(table) for table in whole[0].values()]


@pytest.mark.slow
def test_find_on_dask_gives_the_same_zip_as_local(example_collection, dask_cluster, tmp_path, capsys):
    local, dask = tmp_path / "local.zip", tmp_path / "dask.zip"
    code, _, err = run(["find", "vehicle", "--collection", str(example_collection), "--out", str(local)], capsys)
    assert code == 0, err
    code, _, err = run(["find", "vehicle", "--collection", str(example_collection), "--out", str(dask),
                        "--engine", "dask", "--scheduler", dask_cluster.scheduler_address], capsys)
    assert code == 0, err
    assert dask.read_bytes() == local.read_bytes()
    code, _, err = run(["find", "vehicle", "--collection", str(example_collection), "--out", str(tmp_path / "x.zip"),
                        "--scheduler", dask_cluster.scheduler_address], capsys)
    assert code == 2 and "--engine dask" in err and not (tmp_path / "x.zip").exists()


def _dies_once(folder, term, opinions, marker_dir=None):
    """A find task whose worker process dies the first time it runs the second run."""
    from statinterp.collection.find import find_run

    marker = Path(marker_dir) / "died"
    if opinions[0].case_id != 1 and not marker.exists():
        marker.write_text("x")
        os._exit(1)  # the worker dies mid-run
    return find_run(folder, term, opinions)


@pytest.mark.slow
def test_a_dask_worker_that_dies_mid_run_is_retried_and_find_is_unchanged(example_collection, dask_cluster,
                                                                          tmp_path):
    import functools
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    task = functools.partial(_dies_once, marker_dir=str(tmp_path))
    with Collection.open(example_collection) as c:
        local = find_term(c, "vehicle")
        opinions, _, _ = matching_opinions(c, "vehicle")
    tables, sentence_case = find_on_dask(example_collection, "vehicle", opinions, dask_cluster.scheduler_address, 2,
                                         task=task)
    assert (tmp_path / "died").exists()  # the worker really died once
    assert term_zip_bytes(local.key, tables) == term_zip_bytes(local.key, local.tables)
    assert sentence_case == local.sentence_case


@pytest.mark.slow  # 3.2 CPU s on CI's fresh clone (the fast-loop budget is 3)
def test_against_compares_a_labelled_sentence_without_its_lone_footnote_mark(handmade_collection):
    # the data set keeps a footnote's mark on a line of its own inside a sentence ("... the
    # exchanges\n7\nviolated section 4c ..."); the cleaning step takes it out of the stored text
    from dataclasses import replace

    with Collection.open(handmade_collection) as collection:
        found = find_term(collection, "preemployment testing").term_data()
    labelled = found.__class__(**{**found.__dict__})
    sentence = next(s for s in found.sentences if s.text == "A pre-employment testing program was adopted.")
    marked = replace(sentence, id="L1", text="A pre-employment testing\n7\nprogram was adopted.", label="high value")
    glued = replace(sentence, id="L2", text="A pre-employment testing 7 program was adopted.", label="no value")
    labelled.sentences = [marked, glued]
    result = compare_with_labelled(found, labelled)
    assert (result.found_exact, result.found_contained, result.missed) == (1, 1, ["L2"])
