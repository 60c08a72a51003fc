"""Defects an adversarial probe found (issue 16, defects 2-5): lone surrogates in JSON, misleading
messages about output paths and special files, NaN thresholds, half-replaced report sets.

Each bad input must end in one line on stderr (``statinterp: error: ...``) with exit status 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from statinterp.corpus.dataset import load_corpus
from statinterp.corpus.provisions import load_provisions
from statinterp.errors import InputError
from tests.support.cli import one_error_line, run_main
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
EXAMPLE = REPO / "data" / "example"
PROVISIONS = REPO / "data" / "provisions.json"


def copy_example(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for src in EXAMPLE.glob("vehicle-*.json"):
        (folder / src.name).write_bytes(src.read_bytes())
    return folder


# --------------------------------------------------------------------------------------------
# Defect 3: lone surrogate escapes


def _with_escape(path: Path, record: str, field: str, escape: str) -> None:
    """Rewrite ``path`` so that ``record``'s ``field`` ends with the raw JSON escape ``escape``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[record][field] = data[record][field] + "@@ESC@@"
    path.write_text(json.dumps(data).replace("@@ESC@@", escape), encoding="utf-8")


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\ud83d x"])
def test_lone_surrogate_in_a_sentence_is_refused_at_load(tmp_path, capsys, escape):
    folder = copy_example(tmp_path / "data")
    sentences = folder / "vehicle-sentence.json"
    record = next(iter(json.loads(sentences.read_text(encoding="utf-8"))))
    _with_escape(sentences, record, "text", escape)
    with pytest.raises(InputError) as info:
        load_corpus(folder)
    assert info.value.record == record and info.value.field == "text"
    code, out, err = run_main(capsys, "rank", "vehicle", "--data", str(folder), "-q")
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "vehicle-sentence.json" in line and repr(record) in line and "'text'" in line and "surrogate" in line


def test_lone_surrogate_in_a_label_is_refused(tmp_path, capsys):
    folder = copy_example(tmp_path / "data")
    sentences = folder / "vehicle-sentence.json"
    data = json.loads(sentences.read_text(encoding="utf-8"))
    record = next(rid for rid, rec in data.items() if rec.get("label"))
    _with_escape(sentences, record, "label", "\\udc00")
    code, _, err = run_main(capsys, "evaluate", "--data", str(folder), "-q")
    line = one_error_line(err)
    assert code == 2 and repr(record) in line and "'label'" in line


def test_a_valid_surrogate_pair_loads(tmp_path):
    folder = copy_example(tmp_path / "data")
    sentences = folder / "vehicle-sentence.json"
    record = next(iter(json.loads(sentences.read_text(encoding="utf-8"))))
    _with_escape(sentences, record, "text", " \\ud83d\\ude97")
    text = next(s.text for s in load_corpus(folder).term("vehicle").sentences if s.id == record)
    assert text.endswith("\U0001f697")


def test_lone_surrogate_in_provisions_is_refused(tmp_path, capsys):
    data = json.loads(PROVISIONS.read_text(encoding="utf-8"))
    data["terms"][1]["provision"] += "@@ESC@@"
    bad = tmp_path / "provisions.json"
    bad.write_text(json.dumps(data).replace("@@ESC@@", "\\ud800"), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_provisions(bad)
    assert info.value.record == "terms[1]" and info.value.field == "provision"
    code, _, err = run_main(capsys, "rank", "vehicle", "--provisions", str(bad), "-q")
    assert code == 2 and "terms[1]" in one_error_line(err)


def test_lone_surrogate_in_a_record_id_is_refused(tmp_path):
    folder = copy_example(tmp_path / "data")
    path = folder / "vehicle-case.json"
    text = path.read_text(encoding="utf-8")
    first = next(iter(json.loads(text)))
    path.write_text(text.replace(json.dumps(first), json.dumps(first)[:-1] + '\\ud800"', 1), encoding="utf-8")
    with pytest.raises(InputError, match="surrogate"):
        load_corpus(folder)


def test_lone_surrogate_in_provision_option_is_refused(capsys):
    # what Python makes of a non-UTF-8 byte in argv (surrogateescape)
    code, out, err = run_main(capsys, "rank", "vehicle", "--provision", "No vehicles \udcff in the park", "-q")
    line = one_error_line(err)
    assert code == 2 and out == "" and "--provision" in line


# --------------------------------------------------------------------------------------------
# Defect 4: messages


def test_out_whose_parent_is_a_file_says_so(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub" / "ranking.txt"
    code, stdout, err = run_main(capsys, "rank", "vehicle", "-q", "--out", str(out))
    line = one_error_line(err)
    assert code == 2 and stdout == ""
    assert "is a file, not a folder" in line and str(tmp_path / "afile") in line
    assert "File exists" not in line


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


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_a_fifo_in_the_data_folder_is_named(tmp_path, capsys):
    folder = copy_example(tmp_path / "data")
    (folder / "vehicle-sentence.json").unlink()
    os.mkfifo(folder / "vehicle-sentence.json")
    code, _, err = run_main(capsys, "rank", "vehicle", "--data", str(folder), "-q")
    line = one_error_line(err)
    assert code == 2 and "vehicle-sentence.json" in line and "not a regular file" in line
    assert "lacks" not in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_data_that_is_a_fifo_is_refused_without_hanging(tmp_path, capsys):
    fifo = tmp_path / "data.zip"
    os.mkfifo(fifo)
    code, _, err = run_main(capsys, "rank", "vehicle", "--data", str(fifo), "-q")
    assert code == 2 and "nor a regular file" in one_error_line(err)


def test_data_device_is_refused(capsys):
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null on this system")
    code, _, err = run_main(capsys, "rank", "vehicle", "--data", "/dev/null", "-q")
    assert code == 2 and "nor a regular file" in one_error_line(err)


def test_data_folder_whose_subfolder_holds_terms_says_so(tmp_path, capsys):
    copy_example(tmp_path / "outer" / "inner")
    code, _, err = run_main(capsys, "rank", "vehicle", "--data", str(tmp_path / "outer"), "-q")
    line = one_error_line(err)
    assert code == 2 and "'inner'" in line and f"--data {tmp_path / 'outer' / 'inner'}" in line


@pytest.mark.parametrize("name", ["TF-ISF-p+NWR>=nan", "TF-ISF-p+NWR>=NaN", "BM25+gate(BM25-g,nan)",
                                  "TF-ISF+TF-ISF-g>=inf"])
def test_non_finite_gate_threshold_is_refused(capsys, name):
    code, out, err = run_main(capsys, "rank", "vehicle", "-q", "-m", name)
    line = one_error_line(err)
    assert code == 2 and out == "" and "finite" in line


# --------------------------------------------------------------------------------------------
# Defect 5 (second half): a report set is written as a whole


def _old_set(folder: Path, stem: str) -> dict[Path, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    old = {folder / f"{stem}.{ext}": f"old {ext}\n".encode() for ext in ("md", "json", "png")}
    for path, data in old.items():
        path.write_bytes(data)
    return old


def _no_temporaries(folder: Path) -> bool:
    return not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("force", [True, False])
def test_write_set_failure_between_files_keeps_every_old_file(tmp_path, monkeypatch, force):
    from statinterp.cache import atomic
    from statinterp.errors import OutputError

    folder = tmp_path / "reports"
    old = _old_set(folder, "core") if force else {}
    if not force:
        folder.mkdir()
    real = atomic._create_temp
    calls = []

    def failing(path):
        calls.append(path)
        if len(calls) == 3:  # the png's temporary: the disk is full
            raise OSError(28, "No space left on device")
        return real(path)

    monkeypatch.setattr(atomic, "_create_temp", failing)
    new = {folder / "core.md": "new md\n", folder / "core.json": "new json\n", folder / "core.png": b"new png"}
    with pytest.raises(OutputError, match="core.png"):
        atomic.write_set(new, force=force)
    assert {p: p.read_bytes() for p in folder.iterdir()} == old
    assert _no_temporaries(folder)


def test_write_set_interrupted_while_renaming_without_force_leaves_nothing_new(tmp_path, monkeypatch):
    from statinterp.cache import atomic

    folder = tmp_path / "reports"
    real = atomic._commit
    done = []

    def interrupted(tmp, path, force):
        if done:
            raise KeyboardInterrupt
        real(tmp, path, force)
        done.append(path)

    monkeypatch.setattr(atomic, "_commit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_set({folder / "a.md": "a", folder / "a.png": b"b"})
    assert list(folder.iterdir()) == []


def test_write_set_refuses_all_if_one_exists(tmp_path):
    from statinterp.cache import atomic
    from statinterp.errors import UsageError

    (tmp_path / "r.png").write_bytes(b"old")
    with pytest.raises(UsageError, match="already exists"):
        atomic.write_set({tmp_path / "r.md": "new", tmp_path / "r.png": b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.png"]
    written = atomic.write_set({tmp_path / "r.md": "new", tmp_path / "r.png": b"new"}, force=True)
    assert written == [tmp_path / "r.md", tmp_path / "r.png"]
    assert (tmp_path / "r.png").read_bytes() == b"new" and (tmp_path / "r.md").read_text() == "new"


def test_reproduce_failing_chart_leaves_the_old_report_set(tmp_path, monkeypatch, capsys):
    from statinterp.app import report

    folder = tmp_path / "reports"
    old = _old_set(folder, "core")

    def broken_chart(rep):  # e.g. matplotlib failing after the tables were made
        raise RuntimeError("chart failed")

    monkeypatch.setattr(report, "reproduction_chart", broken_chart)
    code, _, err = run_main(capsys, "reproduce", "--methods", "core", "--out", str(folder), "--force", "-q")
    assert code == 1 and "chart failed" in err, err
    assert {p: p.read_bytes() for p in folder.iterdir()} == old
    assert _no_temporaries(folder)


@pytest.mark.parametrize("grid", ["nwr=nan,0.2", "nwr=0.1,inf", "nwr=-inf"])
def test_non_finite_grid_values_are_refused(capsys, grid):
    code, out, err = run_main(capsys, "tune", "Tp-Nr", "--grid", grid, "-q")
    assert code == 2 and out == "" and "finite" in one_error_line(err)


def test_lone_surrogate_in_a_labels_file_is_refused(tmp_path, capsys):
    from statinterp.corpus.label_files import read_label_file

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"sentence_id": "case-01-op1-p010-s4", "label": "high value"}\n'
                      '{"sentence_id": "s\\ud800", "label": "no value"}\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_label_file(labels)
    assert info.value.record == "line 2" and info.value.field == "sentence_id"
    code, out, err = run_main(capsys, "rank", "vehicle", "-q", "--feedback", str(labels))
    line = one_error_line(err)
    assert code == 2 and out == "" and "labels.jsonl" in line and "'line 2'" in line and "surrogate" in line
