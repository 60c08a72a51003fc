"""One line and exit status 2, not "internal error ... this is a bug" (exit 1), for a full disk,
a full temporary folder, a read-only collection, a collection without its full-text table, a
codec that is no text encoding, an unknown scheduler scheme, a manifest nested too deep or too
large; a FIFO or device refused where a file is read or written (issue 35). Every test here
failed before its fix."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from statinterp.collection import store
from statinterp.collection.ingest import ingest
from statinterp.collection.store import Collection, CollectionWriter
from statinterp.sources.cap import write_cap_volume
from statinterp.sources.courtlistener import write_bulk_csv
from tests.collection.test_ingest import copies
from tests.support.cli import run_main
from tests.support.paths import REPO_ROOT


def _last_error(code: int, err: str) -> str:
    """The error line (after any progress lines): exit 2, no traceback, no "this is a bug"."""
    assert code == 2 and "Traceback" not in err and "this is a bug" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("statinterp: error: "), err
    return line


@pytest.mark.slow
def test_a_full_disk_during_ingest_is_one_line_and_the_collection_stays_consistent(tmp_path, capsys, monkeypatch):
    """A real SQLITE_FULL: the writer's database may not grow past its size at the start."""
    col = tmp_path / "col"
    ingest([write_cap_volume(copies(3), tmp_path / "small")], col, citations=False)
    opened = CollectionWriter.__init__

    def no_room(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        self.db.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(CollectionWriter, "__init__", no_room)
    code, _, err = run_main(capsys, "ingest", str(write_cap_volume(copies(80), tmp_path / "big")),
                            "--collection", str(col), "-q", "--no-citations")
    line = _last_error(code, err)
    assert "collection.sqlite: the disk is full" in line and "run the same command again" in line
    assert "consistent" in line
    monkeypatch.setattr(CollectionWriter, "__init__", opened)
    assert Collection.open(col).info()["cases"] >= 3  # readable, as after its last whole batch


def test_a_full_temporary_folder_during_the_courtlistener_join_is_one_line(tmp_path, capsys, monkeypatch):
    from statinterp.sources import courtlistener

    schema = courtlistener._schema

    def small(db):
        schema(db)
        db.execute("PRAGMA max_page_count = 12")  # the spill file may not grow: SQLITE_FULL

    monkeypatch.setattr(courtlistener, "_schema", small)
    path = tmp_path / "opinions-2026-01-01.csv"
    write_bulk_csv(path, ["id", "cluster_id", "plain_text"],
                   [{"id": i, "cluster_id": i, "plain_text": "A vehicle. " * 200} for i in range(200)])
    code, _, err = run_main(capsys, "ingest", str(path), "--collection", str(tmp_path / "col"), "-q",
                            "--no-citations")
    line = _last_error(code, err)
    assert "temporary folder" in line and "is full" in line and "TMPDIR" in line


def test_a_collection_without_its_full_text_table_is_one_line(tmp_path, capsys):
    col = tmp_path / "col"
    ingest([write_cap_volume(copies(3), tmp_path / "vol")], col, citations=False)
    db = sqlite3.connect(col / "collection.sqlite")
    db.execute("DROP TABLE paragraphs_fts")
    db.commit()
    db.close()
    for args in (["find", "vehicle", "--collection", str(col), "--out", str(tmp_path / "v.zip")],
                 ["rank", "vehicle", "--collection", str(col), "-q"]):
        code, _, err = run_main(capsys, *args)
        line = _last_error(code, err)
        assert "collection.sqlite: lacks its table 'paragraphs_fts'" in line, args


def test_database_problem_names_a_read_only_database():
    db = sqlite3.connect("file::memory:?mode=ro", uri=True)
    try:
        db.execute("CREATE TABLE t (x)")
    except sqlite3.OperationalError as error:
        problem = store.database_problem(error, Path("/c/collection.sqlite"))
    else:
        raise AssertionError("a read-only database was written")
    finally:
        db.close()
    assert problem is not None and "cannot write /c/collection.sqlite" in str(problem)
    assert "read-only" in str(problem)


@pytest.mark.parametrize("codec", ["zlib_codec", "base64", "rot13"])
def test_an_encoding_that_is_no_text_encoding_is_one_line(tmp_path, capsys, codec):
    (tmp_path / "case.txt").write_text("Smith v. Jones\n\nA vehicle.\n", encoding="utf-8")
    code, _, err = run_main(capsys, "ingest", str(tmp_path / "case.txt"), "--collection", str(tmp_path / "c"),
                            "-q", "--encoding", codec)
    assert "is not a text encoding (--encoding)" in _last_error(code, err)
    assert not (tmp_path / "c").exists()


def test_a_scheduler_of_an_unknown_scheme_is_one_line(tmp_path, capsys):
    (tmp_path / "case.txt").write_text("Smith v. Jones\n\nA vehicle.\n", encoding="utf-8")
    code, _, err = run_main(capsys, "ingest", str(tmp_path / "case.txt"), "--collection", str(tmp_path / "c"),
                            "-q", "--engine", "dask", "--scheduler", "foo://host:8786")
    assert "--scheduler 'foo://host:8786' is not a Dask scheduler address" in _last_error(code, err)


def _shard_set(tmp_path: Path) -> Path:
    root = tmp_path / "set"
    ingest([write_cap_volume(copies(3), tmp_path / "vol")], root, citations=False, shard_by="source")
    return root


@pytest.mark.slow
def test_a_manifest_nested_too_deep_or_too_large_is_one_line(tmp_path, capsys):
    root = _shard_set(tmp_path)
    manifest = root / "manifest.json"
    manifest.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, _, err = run_main(capsys, "collection", "info", str(root))
    assert "manifest.json: malformed JSON: nested too deeply" in _last_error(code, err)
    with open(manifest, "wb") as fh:  # 300 MB, sparse: never read whole
        fh.truncate(300 * 1024 * 1024)
    code, _, err = run_main(capsys, "collection", "info", str(root))
    assert "manifest.json: cannot be read" in _last_error(code, err) and "small JSON file" in err


@pytest.fixture
def alarm():
    """Fail rather than hang: a read that blocks is interrupted after 30 s."""
    def stop(signum, frame):
        raise TimeoutError("blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
@pytest.mark.parametrize("option", ["--provision-file", "--provisions"])
def test_a_fifo_given_as_provisions_is_refused_not_waited_for(tmp_path, capsys, alarm, option):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = run_main(capsys, "rank", "vehicle", option, str(fifo), "-q", "--no-cache")
    assert "fifo: is a FIFO, not a file" in _last_error(code, err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_out_force_onto_a_fifo_or_device_is_refused_and_the_node_kept(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = run_main(capsys, "rank", "vehicle", "-q", "--no-cache", "--out", str(fifo), "--force")
    assert "is a FIFO, not a file" in _last_error(code, err)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    if Path("/dev/null").exists():
        from statinterp.cache import files as atomic
        from statinterp.errors import UsageError

        with pytest.raises(UsageError, match="/dev/null is a character device, not a file"):
            atomic.check_writable("/dev/null", force=True)


def _unshare_works() -> bool:
    import shutil

    return shutil.which("unshare") is not None and \
        subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.slow
def test_a_real_full_disk_temporary_folder_and_read_only_mount_are_one_line(tmp_path):
    """Tests run as root: a tiny tmpfs and a read-only bind mount in a user and mount namespace."""
    if not _unshare_works():
        pytest.skip("unshare -rm (user and mount namespaces) is not available: cannot mount a tmpfs")
    vol = write_cap_volume(copies(120), tmp_path / "vol")
    cl = tmp_path / "cl"
    cl.mkdir()
    write_bulk_csv(cl / "opinions-2026-01-01.csv", ["id", "cluster_id", "plain_text"],
                   [{"id": i, "cluster_id": i, "plain_text": "A vehicle. " * 400} for i in range(400)])
    done = tmp_path / "done"
    done.mkdir()
    ingest([write_cap_volume(copies(2), tmp_path / "two")], done, citations=False)
    small, tmp = tmp_path / "small", tmp_path / "tmp"
    small.mkdir()
    tmp.mkdir()
    python = f"{sys.executable} -m statinterp.app.cli"
    script = (f"mount -t tmpfs -o size=400k tmpfs {small} && mount -t tmpfs -o size=64k tmpfs {tmp} && "
              f"mount --bind {done} {done} && mount -o remount,ro,bind {done} {done}; "
              f"{python} ingest {vol} --collection {small}/col -q --no-citations; echo exit=$?; "
              f"TMPDIR={tmp} {python} ingest {cl} --collection {tmp_path}/c2 -q --no-citations; echo exit=$?; "
              f"{python} ingest {vol} --collection {done} -q --no-citations; echo exit=$?")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=900,
                          cwd=REPO_ROOT)
    assert proc.stdout.count("exit=2") == 3, (proc.stdout, proc.stderr)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("statinterp: error: ")]
    assert len(errors) == 3 and "this is a bug" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "the disk is full" in errors[0] and "run the same command again" in errors[0]
    assert "temporary folder" in errors[1] and "is full" in errors[1]
    assert "read-only" in errors[2]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_a_fifo_given_as_feedback_labels_is_refused_and_a_bom_accepted(tmp_path, alarm):
    from statinterp.corpus.labels import read_label_file
    from statinterp.errors import InputError

    fifo = tmp_path / "labels.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="labels.jsonl: is a FIFO, not a file"):
        read_label_file(fifo)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"sentence_id": "s1", "label": "high value"}\n')
    assert list(read_label_file(bom)) == ["s1"]
