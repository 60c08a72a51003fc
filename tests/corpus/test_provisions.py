"""Provisions files (statinterp.corpus.provisions): missing terms, bad fields and malformed files
are one clear error (issue 5, issue 16's lone surrogates); keys are normalised like term names."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statinterp.corpus.provisions import load_provisions
from statinterp.errors import InputError
from tests.support.bad_input import EXAMPLE, FUZZ, PROVISIONS
from tests.support.cli import assert_one_line_error, capture_main, one_error_line, run_main


def provision_terms() -> list[dict]:
    return json.loads(PROVISIONS.read_text(encoding="utf-8"))["terms"]


@pytest.mark.slow
def test_provisions_file_without_the_term(tmp_path):
    path = tmp_path / "prov.json"
    path.write_text(json.dumps({"terms": [t for t in provision_terms() if t["key"] != "vehicle"]}))
    from statinterp.workflow import open_corpus

    assert open_corpus(EXAMPLE, provisions=path).term("vehicle").provision is None
    from statinterp.rankers.grammar import list_methods

    needs_provision = [n for n, desc in list_methods() if "provision" in desc and "vectors" not in desc
                       and "2vec" not in desc and "WMD" not in n]
    assert needs_provision, "no registered method uses the provision"
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--provisions", str(path),
                               "-m", needs_provision[0]])
    assert_one_line_error(code, err, "'vehicle'", "no source provision", "--provision")


prov_values = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=2)


@FUZZ
@given(field=st.sampled_from(["key", "provision", "term", "citation"]), value=prov_values,
       delete=st.booleans())
def test_provisions_record_fields(field, value, delete):
    terms = provision_terms()
    rec = terms[0]
    needle = "record 'terms[0]'"
    if delete:
        rec.pop(field)
        valid = field in ("term", "citation")
    else:
        rec[field] = value
        if field == "key":
            key = "_".join(value.lower().replace("-", " ").replace("_", " ").split()) if isinstance(value, str) else ""
            valid = bool(key)
            if key in {t["key"] for t in terms[1:]}:
                valid, needle = False, "appears twice"  # reported at the later record
        elif field == "provision":
            valid = isinstance(value, str) and bool(value.strip())
        else:
            valid = value is None or isinstance(value, str)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prov.json"
        path.write_text(json.dumps({"terms": terms}))
        if valid:
            assert len(load_provisions(path).keys()) == len(terms)
        else:
            code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--provisions", str(path)])
            assert_one_line_error(code, err, "prov.json", needle)


@pytest.mark.parametrize("raw,needle", [
    (b'{"terms": []', "malformed JSON"),
    (b'{"terms": [], "terms": []}', "more than once"),
    (b'{"terms": [{"key": "vehicle", "key": "car", "provision": "x"}]}', "field 'key'"),
    (b'\xff\xfe{"terms": []}', "not UTF-8"),
    (b'[]', 'expected {"terms"'),
    (b'{"terms": ' + b"[" * 100_000, "nested too deeply"),
])
def test_malformed_provisions_files(tmp_path, raw, needle):
    path = tmp_path / "prov.json"
    path.write_bytes(raw)
    code, out, err = capture_main(["rank", "vehicle", "-q", "--no-cache", "--provisions", str(path)])
    assert_one_line_error(code, err, "prov.json", needle)


def test_provision_keys_are_normalised_like_term_names(tmp_path):
    path = tmp_path / "prov.json"
    path.write_text(json.dumps({"terms": [{"key": " Motor-Vehicle ", "provision": "No motor vehicle."}]}))
    assert load_provisions(path).get("motor_vehicle").text == "No motor vehicle."


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
