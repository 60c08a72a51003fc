"""A set of shards verifies each shard's identity and stays inside its folder; a link to a folder
named ``*.json`` is no case file; a Dask ingest with ``--split-parts`` leaves no process behind
(issue 35). The identity, containment and link tests failed before their fixes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from statinterp.collection.ingest import ingest
from statinterp.collection.shards import Manifest, open_collection
from statinterp.sources.cap import write_cap_volume
from tests.collection.test_ingest import copies
from tests.support.cli import run_main


def _set(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A set of two shards (by jurisdiction): the copies alternate between two jurisdictions."""
    records = copies(6)
    import dataclasses

    records = [dataclasses.replace(r, jurisdiction="Alpha" if i % 2 else "Beta") for i, r in enumerate(records)]
    root = tmp_path / "set"
    ingest([write_cap_volume(records, tmp_path / "vol")], root, citations=False, shard_by="jurisdiction")
    folders = [folder for _, folder in Manifest.load(root).folders(root)]
    assert len(folders) == 2
    return root, folders


def test_a_shard_database_copied_over_another_is_named_not_read_twice(tmp_path, capsys):
    """Before: find wrote every sentence of the copied shard twice."""
    root, (a, b) = _set(tmp_path)
    shutil.copy(a / "collection.sqlite", b / "collection.sqlite")
    code, _, err = run_main(capsys, "find", "vehicle", "--collection", str(root), "--out", str(tmp_path / "v.zip"))
    line = err.strip().splitlines()[-1]
    assert code == 2 and line.startswith("statinterp: error: ") and "Traceback" not in err
    assert f"{b / 'collection.sqlite'}: holds the shard 'Alpha', not 'Beta'" in line or \
        f"{b / 'collection.sqlite'}: holds the shard 'Beta', not 'Alpha'" in line
    assert not (tmp_path / "v.zip").exists()
    code, _, err = run_main(capsys, "ingest", str(tmp_path / "vol"), "--collection", str(root), "-q",
                            "--no-citations", "--shard-by", "jurisdiction")  # nor written as the other
    assert code == 2 and "holds the shard" in err


@pytest.mark.slow
def test_a_shard_folder_linked_out_of_the_set_is_refused(tmp_path, capsys):
    root, (a, _) = _set(tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.move(a, outside)
    os.symlink(outside, a)
    with open_collection(root) as store, pytest.raises(Exception, match="symbolic link out of the set"):
        store.info()
    code, _, err = run_main(capsys, "collection", "info", str(root))
    assert code == 2 and "is a symbolic link out of the set" in err.strip().splitlines()[-1]


def test_a_link_to_a_folder_named_json_does_not_stop_a_per_case_ingest(tmp_path):
    """Before: "cases/link.json: cannot be read (Is a directory)" stopped the volume."""
    vol = write_cap_volume(copies(3), tmp_path / "vol")
    (tmp_path / "other.json").mkdir()
    os.symlink(tmp_path / "other.json", vol / "cases" / "link.json")
    (vol / "cases" / "folder.json").mkdir()
    summary = ingest([vol], tmp_path / "col", citations=False, statistics=False)
    assert summary.added == 3 and summary.skipped_count == 0


@pytest.mark.slow
def test_a_dask_ingest_with_split_parts_leaves_no_process_behind(tmp_path, dask_cluster):
    psutil = pytest.importorskip("psutil", reason="psutil (a dependency of distributed) is not installed")
    from benchmarks.courtlistener_bulk import DATE, write_invented

    write_invented(tmp_path, 12)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    summary = ingest([tmp_path / f"opinions-{DATE}.csv.bz2"], tmp_path / "col", engine="dask",
                     scheduler=dask_cluster.scheduler_address, split_parts=3, citations=False)
    assert summary.split_parts == 3 and summary.added == 12
    ingest([tmp_path / f"opinions-{DATE}.csv.bz2"], tmp_path / "col2", engine="dask", split_parts=2,
           citations=False, n_workers=1)  # a local cluster of its own: closed with its workers
    after = {p.pid: " ".join(p.cmdline()) for p in psutil.Process().children(recursive=True)
             if p.is_running() and p.status() != psutil.STATUS_ZOMBIE}
    left = {pid: cmd for pid, cmd in after.items() if pid not in before and "resource_tracker" not in cmd}
    assert left == {}
