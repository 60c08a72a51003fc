"""Collections in shards (statinterp.collection.shards): the writer's side.

A shard set of the example sources holds, shard by shard, exactly the rows of a single-file
collection of the same sources (same case and opinion ids), and its statistics add up to the
single file's."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from statinterp.app.cli import cli
from statinterp.app.collection_commands import example_sources
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import (
    MANIFEST,
    SHARD_KEYS,
    Manifest,
    ShardedWriter,
    reporter_of,
    shard_folder_name,
    shard_key,
)
from statinterp.errors import InputError, UsageError
from statinterp.sources.records import CaseRecord


def _rows(dbs: list[sqlite3.Connection], sql: str) -> list[tuple]:
    return sorted(row for db in dbs for row in db.execute(sql))


def _statistics(dbs: list[sqlite3.Connection]) -> Counter:
    sums: Counter = Counter()
    for db in dbs:
        for level, token, df, cf in db.execute("SELECT level, token, df, cf FROM token_stats"):
            sums[(level, token, "df")] += df
            sums[(level, token, "cf")] += cf
        for level, n_units, total in db.execute("SELECT level, n_units, total_tokens FROM level_totals"):
            sums[(level, "N")] += n_units
            sums[(level, "tokens")] += total
    return +sums


@pytest.fixture(scope="module")
def single_and_sharded(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shards")
    ingest([example_sources()], root / "single", citations=True)
    ingest([example_sources()], root / "sharded", citations=True, shard_by="court")
    return root / "single", root / "sharded"


@pytest.mark.slow
def test_shards_hold_the_single_files_rows_with_the_same_ids(single_and_sharded):
    single, sharded = single_and_sharded
    manifest = Manifest.load(sharded)
    assert manifest.shard_by == "court" and len(manifest.shards) >= 3
    one = [sqlite3.connect(single / "collection.sqlite")]
    shards = [sqlite3.connect(folder / "collection.sqlite") for _, folder in manifest.folders(sharded)]
    for sql in ("SELECT * FROM cases", "SELECT * FROM opinions",
                "SELECT o.id, p.position, p.text, p.page, p.page_starts, p.footnote FROM paragraphs p "
                "JOIN opinions o ON o.id = p.opinion_id",
                "SELECT o.id, p.position, c.start, c.end, c.kind, c.text FROM citations c "
                "JOIN paragraphs p ON p.id = c.paragraph_id JOIN opinions o ON o.id = p.opinion_id"):
        assert _rows(shards, sql) == _rows(one, sql), sql
    assert _statistics(shards) == _statistics(one)
    for key, folder in manifest.folders(sharded):  # every case is in the shard of its key
        db = sqlite3.connect(folder / "collection.sqlite")
        assert {court or "unknown" for (court,) in db.execute("SELECT court FROM cases")} == {key}


@pytest.mark.slow
def test_ingesting_a_shard_set_again_changes_nothing(single_and_sharded, tmp_path):
    _, sharded = single_and_sharded
    before = (sharded / MANIFEST).read_text()
    summary = ingest([example_sources()], sharded, citations=True, shard_by="court")
    assert summary.added == 0 and summary.unchanged == summary.cases_read > 0
    assert (sharded / MANIFEST).read_text() == before


def test_shard_keys_of_a_record():
    record = CaseRecord("cap", "1", "A v. B", "A v. B", "2001-01-01", "1", (("parallel", "3 X.Y.Z. 4"),
                        ("official", "212 Marl. App. 341")), "Marlowe Tax Court", "Marlowe", "", "", "", "", ())
    assert reporter_of(record) == "Marl. App."
    assert shard_key(record, "court") == "Marlowe Tax Court"
    assert shard_key(record, "jurisdiction") == "Marlowe"
    assert shard_key(record, "source") == "cap"
    with pytest.raises(UsageError, match="cannot shard by"):
        shard_key(record, "year")
    assert shard_folder_name("a/b") != shard_folder_name("a:b")  # distinct keys, distinct folders
    assert shard_folder_name("../x").startswith("shards/x-")


def test_a_shard_set_refuses_another_key_and_a_single_file(tmp_path):
    ShardedWriter(tmp_path / "set", "court").close()
    with pytest.raises(UsageError, match="holds shards by court"):
        ShardedWriter(tmp_path / "set", "reporter")
    ingest([example_sources()], tmp_path / "one", statistics=False, citations=False)
    with pytest.raises(UsageError, match="single-file collection"):
        ShardedWriter(tmp_path / "one", "court")


@pytest.mark.parametrize("text, message", [
    ("{", "malformed JSON"),  # parse_json (issue 35: capped, depth-bounded)
    ('{"kind": "other"}', "not a statinterp shard manifest"),
    ('{"kind": "statinterp-shard-set", "version": 1, "shard_by": "court", "shards": [{"key": "a", '
     '"folder": "../outside"}]}', "must be a path inside the set"),
])
def test_a_bad_manifest_is_one_clear_error(tmp_path, text, message):
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(InputError, match=message):
        Manifest.load(tmp_path)


def test_shard_by_offers_the_shard_keys_and_refuses_others(tmp_path):
    """--shard-by's choices are read from SHARD_KEYS when the command runs (not at start-up)."""
    shown = CliRunner().invoke(cli, ["ingest", "--help"], terminal_width=200)
    assert shown.exit_code == 0 and f"[{'|'.join(SHARD_KEYS)}]" in shown.output
    refused = CliRunner().invoke(cli, ["ingest", "--collection", str(tmp_path / "set"), "--shard-by", "judge"])
    assert refused.exit_code == 2 and "'judge' is not one of" in refused.output
    assert not (tmp_path / "set").exists()


@pytest.mark.slow
def test_ingest_command_writes_shards(tmp_path):
    result = CliRunner().invoke(cli, ["ingest", "--collection", str(tmp_path / "set"), "--shard-by", "source",
                                       "--no-citations", "-q", "--format-summary", "json"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "set" / MANIFEST).read_text())
    assert manifest["shard_by"] == "source" and len(manifest["shards"]) >= 2


@pytest.mark.slow
def test_a_rerun_of_a_shard_set_analyses_no_stored_case(tmp_path):
    """Stored unchanged cases are looked up in the shard of their record's key, not analysed again."""
    from statinterp.collection.ingest import new_analyzer

    analyzer = new_analyzer()
    texts: list[str] = []
    analyse = analyzer.analyse

    def counting(batch, *args, **kwargs):
        texts.extend(batch)
        return analyse(batch, *args, **kwargs)

    analyzer.analyse = counting
    first = ingest([example_sources()], tmp_path / "set", citations=False, shard_by="court", analyzer=analyzer)
    assert len(texts) == first.added == 9
    again = ingest([example_sources()], tmp_path / "set", citations=False, shard_by="court", analyzer=analyzer)
    assert again.unchanged == 9 and len(texts) == 9  # nothing analysed the second time
