"""An interrupted ingest is visible: the collection records an ingest in progress from its start
to its clean finish; ``collection info``, ``find`` and ``rank --collection`` say so and give the
command that completes it, or exit 2 with ``--strict`` (issue 35: after Ctrl-C ``collection
info`` reported the partial collection as a whole one and ``find`` quietly found less)."""

from __future__ import annotations

import json

import pytest

from statinterp.collection.shards import ShardedWriter
from statinterp.collection.store import CollectionWriter
from statinterp.sources.cap import write_cap_volume
from tests.collection.test_ingest import copies
from tests.support.cli import run_main


def _stop_on_second_batch(monkeypatch, cls) -> None:
    write = cls.write
    calls = [0]

    def stopping(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt  # Ctrl-C after the first batch is committed
        return write(self, *args, **kwargs)

    monkeypatch.setattr(cls, "write", stopping)


@pytest.mark.parametrize("shard_by", [None, "source"])
@pytest.mark.slow
def test_an_interrupted_ingest_is_named_until_the_same_command_completes_it(tmp_path, capsys, monkeypatch,
                                                                           shard_by):
    vol = write_cap_volume(copies(70), tmp_path / "vol")
    col = tmp_path / "col"
    command = ["ingest", str(vol), "--collection", str(col), "-q", "--no-citations",
               *(["--shard-by", shard_by] if shard_by else [])]
    _stop_on_second_batch(monkeypatch, ShardedWriter if shard_by else CollectionWriter)
    code, _, err = run_main(capsys, *command)
    assert code == 130, err
    monkeypatch.undo()

    code, out, err = run_main(capsys, "collection", "info", str(col))
    assert code == 0 and "INCOMPLETE: an ingest into it did not finish" in out
    assert f"complete it by running statinterp {' '.join(command)}" in out
    code, out, _ = run_main(capsys, "collection", "info", str(col), "--format", "json")
    assert json.loads(out)["unfinished_ingest"]["command"] == "statinterp " + " ".join(command)
    code, _, err = run_main(capsys, "collection", "info", str(col), "--strict")
    assert code == 2 and "did not finish" in err and "(--strict)" in err

    zip_out = tmp_path / "v.zip"
    code, out, err = run_main(capsys, "find", "vehicle", "--collection", str(col), "--out", str(zip_out))
    assert code == 0 and "statinterp: warning: " in err and "did not finish" in err
    code, _, err = run_main(capsys, "find", "vehicle", "--collection", str(col), "--out", str(zip_out), "--force",
                            "--strict")
    assert code == 2 and err.strip().splitlines()[-1].startswith("statinterp: error: ") and "did not finish" in err
    code, _, err = run_main(capsys, "rank", "vehicle", "--collection", str(col), "-q", "--no-cache", "--strict")
    assert code == 2 and "did not finish" in err

    code, _, err = run_main(capsys, *command)  # the same command completes it
    assert code == 0, err
    code, out, _ = run_main(capsys, "collection", "info", str(col))
    assert "INCOMPLETE" not in out and "70 cases" in out
    code, out, err = run_main(capsys, "find", "vehicle", "--collection", str(col), "--out", str(zip_out), "--force",
                              "--strict")
    assert code == 0 and "did not finish" not in err
