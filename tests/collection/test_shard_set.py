"""A set of shards read as one collection (statinterp.collection.shards).

The same sources ingested as one file and as shards (by court, by source) give byte-identical
``find --out`` zips and ``rank --collection`` JSON; ``--shard`` restricts the candidates to the
selected shards, scored with the whole set's statistics unless ``--shard-statistics selected``;
``collection info`` sums the shards; a missing or damaged shard is one line naming its file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.app.collection_commands import example_sources
from statinterp.collection.find import find_term
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import Manifest, ShardSet, open_collection
from statinterp.collection.store import TIME_KEYS, Collection, Reader
from statinterp.errors import InputError, UsageError

#: Two small term zips of the annotated data set, ingested in the ``dataset`` format too.
DATASET_TERMS = ("semiconductor_chip_product", "mechanical_recordation")
#: Terms of one and of several words, in the example sources and in the data set's cases.
TERMS = ("vehicle", "motor vehicle", "park", "semiconductor chip product", "mechanical recordation")
COURT = "Court of Appeals of Marlowe, Second District"  # a key with a comma and spaces


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def collections(tmp_path_factory, shared_data) -> dict[str, Path]:
    """The example sources and two of the data set's zips, as one file and as shards by court and
    by source (two ingests each: ids continue over the set as in the single file)."""
    root = tmp_path_factory.mktemp("shard-set")
    zips = [shared_data / f"{term}.zip" for term in DATASET_TERMS]
    out = {}
    for name, shard_by in (("single", None), ("court", "court"), ("source", "source")):
        ingest([example_sources()], root / name, citations=False, shard_by=shard_by)
        ingest(zips, root / name, fmt="dataset", citations=False, shard_by=shard_by)
        out[name] = root / name
    return out


def _sentences(path: Path) -> dict[str, dict]:
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("-sentence.json"))
        return json.loads(zf.read(name))


@pytest.mark.slow
def test_find_and_rank_over_shards_equal_the_single_file_byte_for_byte(collections, tmp_path, capsys):
    assert len(Manifest.load(collections["court"]).shards) >= 10
    assert len(Manifest.load(collections["source"]).shards) >= 4
    for term in TERMS:
        zips, rankings = {}, {}
        for name, folder in collections.items():
            zips[name] = tmp_path / f"{name}-{term}.zip"
            code, out, err = run(["find", term, "--collection", folder, "--out", zips[name], "--format", "json"],
                                 capsys)
            assert code == 0, err
            assert json.loads(out)["sentence"] > 0
            code, out, err = run(["rank", term, "--collection", folder, "-m", "BM25-p", "--top", "0", "--format",
                                  "json", "-q"], capsys)
            assert code == 0, err
            rankings[name] = out
        assert zips["court"].read_bytes() == zips["single"].read_bytes() == zips["source"].read_bytes(), term
        assert rankings["court"] == rankings["single"] == rankings["source"], term
        assert json.loads(rankings["single"])["results"]


@pytest.mark.slow
def test_statistics_and_reads_of_a_set_are_the_single_files(collections):
    with Collection.open(collections["single"]) as one, open_collection(collections["court"]) as shards:
        assert isinstance(shards, ShardSet)
        tokens = ["vehicle", "park", "semiconductor", "the", "never-seen-token"]
        for level in ("sentence", "paragraph", "opinion", "case"):
            assert shards.level_totals(level) == one.level_totals(level)
            assert shards.token_statistics(level, tokens) == one.token_statistics(level, tokens)
        assert shards.case_ids() == one.case_ids()
        for case_id in one.case_ids():
            assert shards.record(case_id) == one.record(case_id)
            assert shards.case(case_id) == one.case(case_id)
        rows = list(shards.paragraphs_matching('"vehicle"'))
        assert [(r.case_id, r.opinion_id, r.text) for r in rows] == [
            (r.case_id, r.opinion_id, r.text) for r in one.paragraphs_matching('"vehicle"')]
        assert shards.occurring({("motor", "vehicle"), ("vehicle",), ("zzz",)}) == {("motor", "vehicle"),
                                                                                   ("vehicle",)}
        for case_id in one.case_ids():
            assert shards.opinions(case_id) == one.opinions(case_id)
            for opinion in one.opinions(case_id):  # paragraph ids are each shard's own: not compared
                assert [replace(r, paragraph_id=0) for r in shards.opinion_paragraphs(opinion["id"])] == [
                    replace(r, paragraph_id=0) for r in one.opinion_paragraphs(opinion["id"])]
        assert {k: v for k, v in shards.meta().items() if k not in ("shard_key", *TIME_KEYS)} == {
            k: v for k, v in one.meta().items() if k not in TIME_KEYS}
        with pytest.raises(UsageError, match="no case 999"):
            shards.case(999)
        with pytest.raises(UsageError, match="name the shard"):
            shards.citations(1)


#: The read interface of a collection (issue #37, "Two read paths": ShardSet had its own copy of each).
READ_METHODS = ("case", "case_ids", "citations", "info", "level_totals", "meta", "occurring", "opinion_paragraphs",
                "opinions", "paragraphs_matching", "record", "token_statistics", "restrict", "map_selected")


def test_each_read_method_is_written_once_for_a_file_and_a_set():
    for name in READ_METHODS:
        assert name in vars(Reader), name
        assert name not in vars(Collection) and name not in vars(ShardSet), f"{name} written again"
    assert issubclass(Collection, Reader) and issubclass(ShardSet, Reader)


@pytest.mark.slow
def test_collection_info_of_a_set_sums_its_shards(collections, capsys):
    code, out, err = run(["collection", "info", collections["single"], "--format", "json"], capsys)
    assert code == 0, err
    one = json.loads(out)
    code, out, err = run(["collection", "info", collections["court"], "--format", "json"], capsys)
    assert code == 0, err
    sharded = json.loads(out)
    for field in ("format", "cases", "opinions", "paragraphs", "citations", "by_source", "statistics", "vocabulary",
                  "analysis"):
        assert sharded[field] == one[field], field
    assert sorted((s["path"], s["cases"], s["skipped"]) for s in sharded["sources"]) == sorted(
        (s["path"], s["cases"], s["skipped"]) for s in one["sources"])  # listed by time of ingest: not compared
    assert sharded["shard_by"] == "court"
    assert sum(s["cases"] for s in sharded["shards"]) == one["cases"]
    assert sharded["size_bytes"] > sum(s["size_bytes"] for s in sharded["shards"])  # plus the manifest
    code, out, err = run(["collection", "info", collections["court"]], capsys)
    assert code == 0, err
    assert f"{len(sharded['shards'])} shards by court" in out
    assert f"    {COURT}: 4 cases, " in out


@pytest.mark.slow
def test_shard_selection_restricts_the_candidates_and_keeps_the_statistics(collections, tmp_path, capsys):
    folder = collections["court"]
    selection = ["--shard", f"court={COURT}", "--shard", "court=Supreme Court of Marlowe"]
    code, _, err = run(["find", "vehicle", "--collection", folder, "--out", tmp_path / "all.zip"], capsys)
    assert code == 0, err
    code, out, err = run(["find", "vehicle", "--collection", folder, "--out", tmp_path / "some.zip", "--format",
                          "json", *selection], capsys)
    assert code == 0, err
    assert json.loads(out)["shards"] == [f"court={COURT}", "court=Supreme Court of Marlowe"]
    with open_collection(folder) as shards:
        courts = {int(cid[1:]): shards.case(int(cid[1:])).court for cid in
                  {s["case_id"] for s in _sentences(tmp_path / "all.zip").values()}}
    everything = _sentences(tmp_path / "all.zip")
    some = _sentences(tmp_path / "some.zip")
    assert some == {sid: s for sid, s in everything.items()
                    if courts[int(s["case_id"][1:])] in (COURT, "Supreme Court of Marlowe")}
    assert 0 < len(some) < len(everything)

    def scores(*extra: str) -> dict[str, float]:
        code, out, err = run(["rank", "vehicle", "--collection", folder, "-m", "BM25-p", "--top", "0", "--format",
                              "json", "-q", *extra], capsys)
        assert code == 0, err
        return {r["sentence_id"]: r["score"] for r in json.loads(out)["results"]}

    whole, selected_all, selected_own = scores(), scores(*selection), scores(*selection, "--shard-statistics",
                                                                              "selected")
    assert set(selected_all) == set(selected_own) == set(some)
    assert selected_all == {sid: whole[sid] for sid in selected_all}  # the whole set's statistics
    assert all(selected_own[sid] != selected_all[sid] for sid in selected_all)  # the selected shards' alone
    with open_collection(folder, [f"court={COURT}"], "selected") as own, open_collection(folder) as every:
        assert own.level_totals("case")[0] == 4 < every.level_totals("case")[0]
        assert own.token_statistics("case", ["vehicle"])["vehicle"] < every.token_statistics("case", ["vehicle"])[
            "vehicle"]


@pytest.mark.slow
def test_find_on_dask_reads_a_set(collections, dask_cluster, tmp_path, capsys):
    local, dask = tmp_path / "local.zip", tmp_path / "dask.zip"
    folder = collections["court"]
    code, _, err = run(["find", "vehicle", "--collection", folder, "--out", local], capsys)
    assert code == 0, err
    code, _, err = run(["find", "vehicle", "--collection", folder, "--out", dask, "--engine", "dask", "--scheduler",
                        dask_cluster.scheduler_address], capsys)
    assert code == 0, err
    assert dask.read_bytes() == local.read_bytes()


@pytest.mark.slow
def test_bad_selections_are_one_clear_line(collections, tmp_path, capsys):
    folder, single = collections["court"], collections["single"]
    out = ["--out", tmp_path / "x.zip"]
    cases = [
        (["find", "vehicle", "--collection", folder, "--shard", f"jurisdiction={COURT}", *out],
         ["is sharded by court", "court=VALUE", repr(COURT)]),
        (["find", "vehicle", "--collection", folder, "--shard", "Supreme Court of Marlowe", *out],
         ["is sharded by court"]),
        (["find", "vehicle", "--collection", folder, "--shard", "court=Supreme Court of Marlow", *out],
         ["no shard of", "did you mean 'Supreme Court of Marlowe'?"]),
        (["find", "vehicle", "--collection", single, "--shard", "court=x", *out], ["is a single-file collection"]),
        (["rank", "vehicle", "--shard", "court=x"], ["apply to --collection only"]),
        (["rank", "vehicle", "--collection", folder, "--shard-statistics", "sometimes"], ["'sometimes' is not one of"]),
    ]
    for args, messages in cases:
        code, _, err = run(args, capsys)
        assert code == 2, (args, err)
        assert err.count("\n") == 1 or "Usage:" in err, (args, err)
        for message in messages:
            assert message in err, (args, err)
    assert not (tmp_path / "x.zip").exists()


def _damage(database: Path) -> None:
    """Overwrite the root page of the paragraphs table with garbage."""
    db = sqlite3.connect(database)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'paragraphs'").fetchone()[0]
    db.close()
    with open(database, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xa5" * page_size)


@pytest.mark.slow
def test_a_missing_or_damaged_shard_is_one_line_naming_its_file(tmp_path, capsys):
    folder = tmp_path / "set"
    ingest([example_sources()], folder, citations=False, statistics=False, shard_by="court")
    manifest = Manifest.load(folder)
    damaged = manifest.folder_of(folder, COURT) / "collection.sqlite"
    _damage(damaged)
    commands = [["collection", "info", folder],
                ["find", "vehicle", "--collection", folder, "--out", tmp_path / "v.zip"]]
    for args in commands:
        code, _, err = run(args, capsys)
        assert code == 2 and err.count("\n") == 1, (args, err)
        assert f"{damaged}: is damaged" in err or f"{damaged}: is not a readable" in err, (args, err)
    missing = manifest.folder_of(folder, "Supreme Court of Marlowe")
    shutil.rmtree(missing)
    for args in commands:
        code, _, err = run(args, capsys)
        assert code == 2 and err.count("\n") == 1, (args, err)
        assert f"{missing / 'collection.sqlite'}: is missing" in err and "manifest.json" in err, (args, err)
    with pytest.raises(InputError, match="is missing"):
        open_collection(folder)


def test_shards_of_other_analysis_settings_do_not_add_up(tmp_path):
    folder = tmp_path / "set"
    ingest([example_sources()], folder, citations=False, statistics=False, shard_by="source")
    key, shard = next(iter(Manifest.load(folder).folders(folder)))
    db = sqlite3.connect(shard / "collection.sqlite")
    db.execute("UPDATE meta SET value = '{\"other\": 1}' WHERE key = 'analysis'")
    db.commit()
    db.close()
    with open_collection(folder) as shards, pytest.raises(InputError, match="was analysed with other settings"):
        shards.level_totals("sentence")  # checked when the statistics are first read


@pytest.mark.slow
def test_find_in_a_set_equals_find_in_the_single_file(tmp_path):
    """Without statistics (quick): the found tables, insertion order included, and the counts."""
    ingest([example_sources()], tmp_path / "one", citations=False, statistics=False)
    ingest([example_sources()], tmp_path / "set", citations=False, statistics=False, shard_by="court")
    with Collection.open(tmp_path / "one") as one, open_collection(tmp_path / "set") as shards:
        for term in ("vehicle", "motor vehicle"):
            a, b = find_term(one, term), find_term(shards, term)
            assert [list(t) for t in a.tables.values()] == [list(t) for t in b.tables.values()]
            assert a.tables == b.tables and a.sentence_case == b.sentence_case
            assert a.paragraphs_matched == b.paragraphs_matched > 0
