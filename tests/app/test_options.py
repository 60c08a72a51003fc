"""Output paths (statinterp.app.options.OutputPath): a trailing slash names a folder and is
refused before anything is written (issue 16, defect 4); the data options as one typed object
(issue 37)."""

from __future__ import annotations

import pytest

from tests.support.cli import one_error_line, run_main


def test_out_with_a_trailing_slash_is_refused(tmp_path, capsys):
    target = str(tmp_path / "new") + "/"
    code, _, err = run_main(capsys, "rank", "vehicle", "-q", "--out", target)
    line = one_error_line(err)
    assert code == 2 and "slash" in line
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", [["evaluate"], ["train"]])
def test_trailing_slash_refused_for_every_file_output(tmp_path, capsys, command):
    code, _, err = run_main(capsys, *command, "-q", "--out", str(tmp_path / "x") + "/")
    assert code == 2 and "slash" in one_error_line(err)
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------- one typed object (issue 37)


def _capture_options(monkeypatch):
    """Stop ``explain`` at its first use of the data options and return what it was handed."""
    from statinterp.app import ranking_commands

    seen = []

    def stop(rankers, opts):
        seen.append(opts)
        raise SystemExit(0)

    monkeypatch.setattr(ranking_commands, "check_vectors", stop)
    return seen


def test_data_options_reach_the_command_as_one_frozen_object(tmp_path, monkeypatch):
    import dataclasses

    from click.testing import CliRunner

    from statinterp.app.cli import cli
    from statinterp.app.options import DataOptions

    seen = _capture_options(monkeypatch)
    result = CliRunner().invoke(cli, ["explain", "vehicle", "s1", "--data", str(tmp_path / "d"), "--no-cache",
                                      "--jobs", "2", "-q", "--statistics", "candidates"],
                                obj={"argv": []}, env={"STATINTERP_CACHE": str(tmp_path / "c")})
    assert result.exit_code == 0, result.output
    [opts] = seen
    assert isinstance(opts, DataOptions)
    assert opts == DataOptions(data=tmp_path / "d", cache_dir=tmp_path / "c", no_cache=True, jobs=2, quiet=True,
                               statistics="candidates")
    assert opts.cache is False  # --no-cache wins over --cache-dir / STATINTERP_CACHE
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.quiet = False  # type: ignore[misc]


def test_data_options_defaults_are_the_options_defaults(monkeypatch):
    from click.testing import CliRunner

    from statinterp.app.cli import cli
    from statinterp.app.options import DataOptions

    seen = _capture_options(monkeypatch)
    result = CliRunner().invoke(cli, ["explain", "vehicle", "s1"], obj={"argv": []}, env={"STATINTERP_CACHE": None})
    assert result.exit_code == 0, result.output
    assert seen == [DataOptions()]
    assert seen[0].cache is None  # the default cache folder


def test_check_vectors_returns_a_copy_and_leaves_the_options_unchanged(tmp_path, monkeypatch):
    import dataclasses

    from statinterp.app import options
    from statinterp.vectors import embeddings, provider

    given = options.DataOptions(vectors={"GloVe": tmp_path / "g.txt"})
    monkeypatch.setattr(provider, "required_pretrained", lambda rankers, available: ["GloVe"])
    monkeypatch.setattr(embeddings, "load_vectors", lambda path: f"loaded {path.name}")
    loaded = options.check_vectors([], given)
    assert loaded.vectors == {"GloVe": "loaded g.txt"}
    assert given.vectors == {"GloVe": tmp_path / "g.txt"}  # the options as given are never changed in place
    assert dataclasses.replace(loaded, vectors=given.vectors) == given  # only the vectors differ


def test_collection_options_reach_the_command_as_one_frozen_object(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from statinterp.app import ranking_commands
    from statinterp.app.cli import cli
    from statinterp.app.options import CollectionOptions
    from statinterp.corpus.authority import CaseFilter

    seen = []

    def stop(opts, where, term, provision_text, citation):
        seen.append((where, term))
        raise SystemExit(0)

    monkeypatch.setattr(ranking_commands, "prepare_found", stop)
    result = CliRunner().invoke(cli, ["rank", "vehicle", "--collection", str(tmp_path / "c"), "--shard", "court=X",
                                      "--shard-statistics", "selected", "--since", "2001", "--strict",
                                      "--workers", "3"], obj={"argv": []})
    assert result.exit_code == 0, result.output
    assert seen == [(CollectionOptions(collection=tmp_path / "c", shards=("court=X",), shard_statistics="selected",
                                       case_filter=CaseFilter(since="2001"), strict=True, workers=3), "vehicle")]
