"""A shard set written on Dask (statinterp.collection.ingest): the workers prepare, spool and
write the shards in parallel, and the set equals the local engine's row for row, after a changed
case, a worker killed inside a write, and a run stopped and run again."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from statinterp.collection.ingest import (
    SPOOL,
    IngestSummary,
    Unchanged,
    analysis_settings,
    ingest,
    prepare_to_spool,
    read_spool,
    write_from_spool,
    write_shards_on_dask,
)
from statinterp.collection.shards import LOCK, MANIFEST, Manifest, SetWords, ShardedWriter, ShardWords
from statinterp.collection.store import canonical_dump
from statinterp.errors import UsageError
from statinterp.sources import Partition, discover, read_partition
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.records import CaseRecord
from tests.support.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "data" / "example"
COURTS = ("Marlowe Tax Court", "Court of Appeals of Marlowe", "Supreme Court of Marlowe")


def records(n: int, start: int = 0, mark: str = "") -> list[CaseRecord]:
    """``n`` distinct cases made from the example cases, spread over three courts (case ``i`` in
    court ``i mod 3``); ``mark`` adds a sentence (a changed case)."""
    base = [r for r in read_partition(Partition(str(EXAMPLE), "dataset")) if isinstance(r, CaseRecord)]
    out = []
    for i in range(start, start + n):
        r = base[i % len(base)]
        ops = list(r.opinions)
        ops[0] = dataclasses.replace(ops[0], paragraphs=ops[0].paragraphs + (f"This is copy number {i}.{mark}",))
        out.append(dataclasses.replace(r, source_id=str(100000 + i), court=COURTS[i % 3], opinions=tuple(ops)))
    return out


def dumps(root: Path) -> dict[str, list[str]]:
    """Each shard's rows (canonical_dump), by shard key."""
    return {key: list(canonical_dump(folder)) for key, folder in Manifest.load(root).folders(root)}


def counts(summary: IngestSummary) -> dict:
    d = summary.as_dict()
    return {k: d[k] for k in ("cases_read", "added", "replaced", "unchanged", "opinions", "paragraphs", "skipped",
                              "partitions", "input_bytes")}


@pytest.mark.slow
def test_dask_shards_equal_the_local_engines_row_for_row(tmp_path, dask_cluster):
    src = tmp_path / "src"
    recs = records(12)
    for i in range(3):
        write_cap_volume(recs[4 * i: 4 * i + 4], src / f"vol{i + 1}")
    (src / "vol3" / "cases" / "0009-01.json").write_text("{bad json")
    sources = [src, EXAMPLE / "sources"]
    local = ingest(sources, tmp_path / "local", citations=True, shard_by="court")
    dask = ingest(sources, tmp_path / "dask", citations=True, shard_by="court", engine="dask",
                  scheduler=dask_cluster.scheduler_address)
    assert counts(dask) == counts(local) and local.added == 21 and len(local.skipped) == 1
    assert set(dask.cpu_seconds) == {"workers_preparing", "writers_storing", "writers_finishing", "coordinator",
                                     "coordinator_thread"}
    assert dask.cpu_seconds["workers_preparing"] > 0 and dask.cpu_seconds["writers_storing"] > 0
    assert dask.cpu_seconds["writers_finishing"] > 0  # the workers finished the shards: each has its word list
    assert all(ShardWords.load(f) is not None for _, f in Manifest.load(tmp_path / "dask").folders(tmp_path / "dask"))
    index = SetWords.load(tmp_path / "dask")  # and the set's word index describes every shard
    assert index is not None
    assert all(index.shard(k, f) is not None for k, f in Manifest.load(tmp_path / "dask").folders(tmp_path / "dask"))
    assert (tmp_path / "dask" / MANIFEST).read_text() == (tmp_path / "local" / MANIFEST).read_text()
    assert len(Manifest.load(tmp_path / "dask").shards) >= 4
    assert dumps(tmp_path / "dask") == dumps(tmp_path / "local")
    assert not (tmp_path / "dask" / SPOOL).exists()  # the spool is removed when done

    # again, with changed cases and one id read twice (from two files, the later one stored)
    src2 = tmp_path / "src2"
    changed = records(6, mark=" Changed.")
    write_cap_volume(changed[:3] + records(3, start=20), src2 / "vol1")
    write_cap_volume(records(1, start=1, mark=" Changed twice.") + records(1, start=21) + records(1, start=4),
                     src2 / "vol2")
    local = ingest([src2], tmp_path / "local", citations=True, shard_by="court")
    dask = ingest([src2], tmp_path / "dask", citations=True, shard_by="court", engine="dask",
                  scheduler=dask_cluster.scheduler_address)
    assert counts(dask) == counts(local)
    assert (local.added, local.replaced, local.unchanged) == (3, 4, 2)
    assert dumps(tmp_path / "dask") == dumps(tmp_path / "local")

    # and once more: the id read from two files is replaced again (the earlier file first), the rest unchanged
    local = ingest([src2], tmp_path / "local", citations=True, shard_by="court")
    dask = ingest([src2], tmp_path / "dask", citations=True, shard_by="court", engine="dask",
                  scheduler=dask_cluster.scheduler_address)
    assert counts(dask) == counts(local) and (dask.added, dask.replaced, dask.unchanged) == (0, 2, 7)
    assert dumps(tmp_path / "dask") == dumps(tmp_path / "local")


def _dies_after_one_batch(*args, marker_dir: str = ""):
    """A write task whose worker process dies after committing the first batch, the first time."""
    import statinterp.collection.store as store

    marker = Path(marker_dir) / "died"
    if not marker.exists():
        write = store.CollectionWriter.write

        def write_then_die(self, *a, **k):
            out = write(self, *a, **k)
            marker.write_text(str(self.db.execute("SELECT count(*) FROM cases").fetchone()[0]))
            os._exit(1)  # the worker dies between two batches of one write task
            return out

        store.CollectionWriter.write = write_then_die
    return write_from_spool(*args)


@pytest.mark.slow
def test_a_worker_killed_inside_a_write_is_retried_and_stores_nothing_twice(tmp_path, dask_cluster):
    import functools

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    src = tmp_path / "src"
    recs = records(198)  # 33 cases of each court a volume: a shard's part of a volume is 2 batches (32 + 1)
    write_cap_volume(recs[:99], src / "vol1")
    write_cap_volume(recs[99:], src / "vol2")
    summary = IngestSummary()
    with ShardedWriter(tmp_path / "dask", "court", analysis_settings(False)) as writer:
        write_shards_on_dask(discover([src]), writer, summary, citations=False, statistics=False,
                             scheduler=dask_cluster.scheduler_address, n_workers=2,
                             write_task=functools.partial(_dies_after_one_batch, marker_dir=str(tmp_path)))
    assert (tmp_path / "died").exists() and int((tmp_path / "died").read_text()) > 0  # it died with a batch stored
    assert summary.added == 198
    ingest([src], tmp_path / "local", citations=False, statistics=False, shard_by="court")
    assert dumps(tmp_path / "dask") == dumps(tmp_path / "local")


def _fails_for_one_shard(*args):
    if "Supreme" in args[1] and "vol2" in args[7][0]:
        raise RuntimeError("stopped")
    return write_from_spool(*args)


@pytest.mark.slow
def test_a_stopped_run_is_completed_by_running_it_again(tmp_path, dask_cluster):
    src = tmp_path / "src"
    recs = records(36)
    for i in range(3):
        write_cap_volume(recs[12 * i: 12 * i + 12], src / f"vol{i + 1}")
    with pytest.raises(RuntimeError, match="stopped"), \
            ShardedWriter(tmp_path / "set", "court", analysis_settings(False)) as writer:
        write_shards_on_dask(discover([src]), writer, IngestSummary(), citations=False, statistics=False,
                             scheduler=dask_cluster.scheduler_address, n_workers=2, write_task=_fails_for_one_shard)
    partial = {k: len([r for r in rows if r.startswith("cases\t")]) for k, rows in dumps(tmp_path / "set").items()}
    assert sum(partial.values()) < 36
    summary = ingest([src], tmp_path / "set", citations=False, statistics=False, shard_by="court", engine="dask",
                     scheduler=dask_cluster.scheduler_address)
    assert summary.added == 36 - sum(partial.values()) and summary.unchanged == sum(partial.values())
    ingest([src], tmp_path / "clean", citations=False, statistics=False, shard_by="court")
    done, clean = _cases(tmp_path / "set"), _cases(tmp_path / "clean")
    assert sorted(c[1:] for c in done) == sorted(c[1:] for c in clean)  # the same cases, in the same shards
    assert len({c[0] for c in done}) == 36  # ids unique over the set (not those of one uninterrupted run)


def _cases(root: Path) -> list[tuple]:
    out = []
    for key, folder in Manifest.load(root).folders(root):
        db = sqlite3.connect(folder / "collection.sqlite")
        out += [(cid, key, source, source_id, h) for cid, source, source_id, h in
                db.execute("SELECT id, source, source_id, content_hash FROM cases")]
        db.close()
    return out


def test_a_rerun_does_not_analyse_the_cases_a_shard_holds(tmp_path):
    """Issue #28 (b): in shards, stored unchanged cases are looked up in the shard of their key."""
    src = tmp_path / "src"
    write_cap_volume(records(6), src / "vol1")
    ingest([src], tmp_path / "set", citations=False, statistics=False, shard_by="court")
    write_cap_volume(records(6) + records(2, start=6), src / "vol1")  # 6 stored, 2 new
    (tmp_path / "set" / SPOOL).mkdir()
    existing = {e.key: e.folder for e in Manifest.load(tmp_path / "set").shards}
    spooled = prepare_to_spool(discover([src])[0], 0, str(tmp_path / "set"), "court", existing, False, False)
    idents = [i for item in spooled.items for i in item]
    assert sum(i.stored == i.content_hash for i in idents) == 6 and len(idents) == 8
    spooled_cases = [c for f in spooled.files.values() for c in read_spool(f)]
    assert sum(isinstance(c, Unchanged) for c in spooled_cases) == 6  # not prepared again
    (tmp_path / "set" / SPOOL).rename(tmp_path / "spool")
    summary = ingest([src], tmp_path / "set", citations=False, statistics=False, shard_by="court")
    assert (summary.added, summary.unchanged) == (2, 6)


def test_a_worker_that_cannot_see_the_set_says_so(tmp_path):
    with pytest.raises(UsageError, match="cannot see the shard set's folder .*shared file system"):
        prepare_to_spool(Partition(str(tmp_path), "cap"), 0, str(tmp_path / "elsewhere"), "court", {}, False, False)


def test_one_ingest_at_a_time_writes_a_shard_set(tmp_path):
    with ShardedWriter(tmp_path / "set", "court"):
        with pytest.raises(UsageError, match="another ingest is writing this shard set"):
            ShardedWriter(tmp_path / "set", "court")
    ShardedWriter(tmp_path / "set", "court").close()  # released
    assert (tmp_path / "set" / LOCK).exists() and json.loads((tmp_path / "set" / MANIFEST).read_text())


@pytest.mark.slow
def test_ingest_command_writes_shards_on_dask(tmp_path, dask_cluster):
    from click.testing import CliRunner

    from statinterp.app.cli import cli

    result = CliRunner().invoke(cli, ["ingest", "--collection", str(tmp_path / "set"), "--shard-by", "source",
                                       "--engine", "dask", "--scheduler", dask_cluster.scheduler_address,
                                       "--no-citations", "-q", "--format-summary", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["added"] == 9 and summary["cpu_seconds"]["writers_storing"] > 0
    assert [e.key for e in Manifest.load(tmp_path / "set").shards] == ["cap", "cap-bulk", "courtlistener", "text"]
