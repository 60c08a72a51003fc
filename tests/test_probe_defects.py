"""Defects an adversarial probe found (issue 16, defects 2-5): lone surrogates in JSON, misleading
messages about output paths and special files, NaN thresholds, half-replaced report sets.

Each bad input must end in one line on stderr (``statinterp: error: ...``) with exit status 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.corpus.dataset import load_corpus
from statinterp.corpus.provisions import load_provisions
from statinterp.errors import InputError

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"
PROVISIONS = REPO / "data" / "provisions.json"


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("statinterp: error: "), err
    return lines[0]


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
