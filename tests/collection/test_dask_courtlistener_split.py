"""``ingest --engine dask`` splits a CourtListener bulk file into parts (statinterp.sources.
courtlistener.split_bulk) and gives the cases, opinions, texts and statistics of the local ingest of the
whole file (ids may differ: the parts are read in part order); the split folder goes at the end,
and a stopped run's is never read."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.courtlistener_bulk import DATE, OPINION_COLUMNS, write_invented
from statinterp.collection.ingest import SPLIT_FOLDER, IngestSummary, analysis_settings, ingest
from statinterp.collection.shards import Manifest
from statinterp.collection.store import CollectionWriter
from statinterp.sources import courtlistener
from statinterp.sources.courtlistener import read_records, write_bulk_csv


def bulk(folder: Path, n: int = 24) -> Path:
    """Invented bulk files of ``n`` clusters, plus an opinion row without a cluster (skipped)."""
    write_invented(folder, n)
    opinions = folder / f"opinions-{DATE}.csv.bz2"
    rows = [row for _, row, _ in read_records(opinions) if row is not None]
    write_bulk_csv(opinions, OPINION_COLUMNS, [*rows, {"id": 99999, "cluster_id": "", "plain_text": "Lost."}])
    return opinions


def content(db_path: Path) -> dict:
    """Cases by source id, with their opinions and paragraph texts (no ids), the sources and statistics."""
    db = sqlite3.connect(db_path)
    try:
        cases = {}
        for case_id, source_id, chash, name, court, docket in db.execute(
                "SELECT id, source_id, content_hash, name, court, docket_number FROM cases"):
            opinions = [(t, a, [p for (p,) in db.execute(
                "SELECT text FROM paragraphs WHERE opinion_id = ? ORDER BY position", (oid,))])
                for oid, t, a in db.execute("SELECT id, type, author FROM opinions WHERE case_id = ? "
                                            "ORDER BY position", (case_id,))]
            cases[source_id] = (chash, name, court, docket, opinions)
        return {"cases": cases,
                "sources": sorted(db.execute("SELECT path, format, cases, skipped FROM sources")),
                "token_stats": sorted(db.execute("SELECT * FROM token_stats")),
                "level_totals": sorted(db.execute("SELECT * FROM level_totals"))}
    finally:
        db.close()


def totals(s: IngestSummary) -> dict:
    d = s.as_dict()
    return {k: d[k] for k in ("cases_read", "added", "opinions", "paragraphs", "skipped", "input_bytes")}


@pytest.mark.slow
def test_a_split_bulk_file_on_dask_equals_the_local_ingest_of_the_whole_file(tmp_path, dask_cluster, monkeypatch):
    opinions = bulk(tmp_path / "bulk")
    local = ingest([opinions], tmp_path / "local", citations=False)
    dask = ingest([opinions], tmp_path / "dask", citations=False, engine="dask",
                  scheduler=dask_cluster.scheduler_address, split_parts=3)
    assert dask.split_parts == 3 and local.split_parts == 0
    assert totals(dask) == totals(local) and local.cases_read == 24
    assert [s.line() for s in dask.skipped] == [s.line() for s in local.skipped]
    assert [(s.file, s.record, s.field) for s in dask.skipped] == [(str(opinions), "99999", "cluster_id")]
    want = content(tmp_path / "local" / "collection.sqlite")
    assert content(tmp_path / "dask" / "collection.sqlite") == want  # the sources: the bulk file, its totals
    assert want["sources"] == [(str(opinions), "courtlistener", 24, 1)] and want["token_stats"]
    assert not (tmp_path / "dask" / SPLIT_FOLDER).exists()  # the split folder is removed

    # again, split by default (as a file of at least SPLIT_MIN_BYTES): two parts per worker of the cluster
    monkeypatch.setattr(courtlistener, "SPLIT_MIN_BYTES", opinions.stat().st_size)
    again = ingest([opinions], tmp_path / "dask", citations=False, engine="dask",
                   scheduler=dask_cluster.scheduler_address)
    assert (again.added, again.unchanged, len(again.skipped), again.split_parts) == (0, 24, 1, 4)
    monkeypatch.setattr(courtlistener, "SPLIT_MIN_BYTES", opinions.stat().st_size + 1)
    assert ingest([opinions], tmp_path / "dask", citations=False, engine="dask",
                  scheduler=dask_cluster.scheduler_address).split_parts == 0  # a smaller file is read whole


@pytest.mark.slow
def test_a_split_bulk_file_written_in_shards_on_dask(tmp_path, dask_cluster):
    opinions = bulk(tmp_path / "bulk", 30)
    local = ingest([opinions], tmp_path / "local", citations=False, statistics=False, shard_by="court")
    dask = ingest([opinions], tmp_path / "dask", citations=False, statistics=False, shard_by="court",
                  engine="dask", scheduler=dask_cluster.scheduler_address, split_parts=4)
    assert dask.split_parts == 4 and totals(dask) == totals(local)
    shards = {e.key: e.folder for e in Manifest.load(tmp_path / "local").shards}
    assert {e.key: e.folder for e in Manifest.load(tmp_path / "dask").shards} == shards and len(shards) == 3
    for folder in shards.values():  # each shard: the same cases, texts, and the bulk file with its shard's cases
        assert (content(tmp_path / "dask" / folder / "collection.sqlite")
                == content(tmp_path / "local" / folder / "collection.sqlite"))
    assert not (tmp_path / "dask" / SPLIT_FOLDER).exists()


@pytest.mark.slow
def test_the_ingest_command_splits_and_a_stopped_runs_folder_is_not_read(tmp_path, dask_cluster):
    from click.testing import CliRunner

    from statinterp.app.cli import cli

    opinions = bulk(tmp_path / "bulk", 12)
    with CollectionWriter(tmp_path / "coll", analysis_settings()):
        pass
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    for run in (f"elsewhere-{gone}-0", f"{socket.gethostname()}-{gone}-0"):  # stopped runs' half-written splits
        stale = tmp_path / "coll" / SPLIT_FOLDER / run / "000000.incomplete" / "0000"
        stale.mkdir(parents=True)
        (stale / "opinions-0000.jsonl").write_text(json.dumps({"id": 1, "cluster_id": 5, "plain_text": "Stale."}))
    result = CliRunner().invoke(cli, ["ingest", str(opinions), "--collection", str(tmp_path / "coll"),
                                      "--engine", "dask", "--scheduler", dask_cluster.scheduler_address,
                                      "--split-parts", "2", "--no-citations", "-q", "--format-summary", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["added"], summary["skipped"], summary["split_parts"]) == (12, 1, 2)
    # this machine's stopped run is removed, another machine's left alone (it may be running), neither read
    assert [p.name for p in (tmp_path / "coll" / SPLIT_FOLDER).iterdir()] == [f"elsewhere-{gone}-0"]
