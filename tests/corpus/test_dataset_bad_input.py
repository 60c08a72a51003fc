"""Loading bad data sets (statinterp.corpus.dataset): property-based and fuzz tests (issue 5) and
the defects an adversarial probe found (issue 16).

Every bad input must end in exactly one line on stderr that starts with ``statinterp: error:``
and names the file (and, where there is one, the record and the field), exit status 2, and no
traceback. Valid variations (extra keys, a BOM, huge texts, surrogate pairs) must load. The inputs
are mutations of the shipped example corpus (term ``vehicle``, tests/support/bad_input.py).
"""

from __future__ import annotations

import io
import json
import os
import struct
import tempfile
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from statinterp.corpus import dataset as corpus_mod
from statinterp.corpus.dataset import KINDS, load_corpus, normalise_label
from statinterp.errors import InputError
from tests.support.bad_input import (
    ALL_IDS,
    FUZZ,
    GOOD_MEMBERS,
    GOOD_ZIP,
    RECORDS,
    cli_error,
    dumps_pairs,
    load_or_error,
    with_escape,
    write_term,
    zip_bytes,
)
from tests.support.cli import one_error_line, run_main

# --------------------------------------------------------------------------------------------
# JSON: truncated, not UTF-8, garbage, nested too deeply, duplicate keys


@pytest.mark.slow
@FUZZ
@given(kind=st.sampled_from(KINDS), frac=st.floats(0.0, 1.0, exclude_max=True))
def test_truncated_json_is_one_clear_error(kind, frac):
    raw = json.dumps(RECORDS[kind]).encode("utf-8")
    cut = raw[: int(len(raw) * frac)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), RECORDS, {kind: cut})
        line = cli_error(folder, f"vehicle-{kind}.json")
        # a cut inside a multi-byte character is reported as bad UTF-8, else as bad JSON
        assert "malformed JSON" in line or "not UTF-8" in line, line


@FUZZ
@given(kind=st.sampled_from(KINDS), where=st.floats(0.0, 1.0),
       bad=st.sampled_from([0xC0, 0xC1, 0xF5, 0xF8, 0xFC, 0xFE, 0xFF]))
def test_non_utf8_byte_anywhere_names_the_file(kind, where, bad):
    raw = json.dumps(RECORDS[kind], ensure_ascii=False).encode("utf-8")
    pos = int(len(raw) * where)
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), RECORDS, {kind: raw[:pos] + bytes([bad]) + raw[pos:]})
        cli_error(folder, f"vehicle-{kind}.json", "not UTF-8", "offset")


@FUZZ
@given(garbage=st.binary(max_size=300))
def test_arbitrary_bytes_as_a_data_file_name_that_file(garbage):
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), RECORDS, {"sentence": garbage})
        cli_error(folder, "vehicle-sentence.json")


def test_utf8_bom_is_accepted(tmp_path):
    raw = b"\xef\xbb\xbf" + json.dumps(RECORDS["sentence"]).encode("utf-8")
    term = load_corpus(write_term(tmp_path, RECORDS, {"sentence": raw})).term("vehicle")
    assert len(term.sentences) == len(RECORDS["sentence"])


def test_json_nested_too_deeply_is_an_input_error_not_a_recursion_traceback(tmp_path):
    folder = write_term(tmp_path, RECORDS, {"paragraph": b"[" * 200_000})
    cli_error(folder, "vehicle-paragraph.json", "nested too deeply")


@FUZZ
@given(kind=st.sampled_from(KINDS), data=st.data())
@pytest.mark.slow
def test_duplicate_ids_are_an_error_naming_file_and_id(kind, data):
    pairs = list(RECORDS[kind].items())
    i = data.draw(st.integers(0, len(pairs) - 1), label="duplicated record")
    j = data.draw(st.integers(0, len(pairs)), label="where the copy goes")
    rid, rec = pairs[i]
    same = data.draw(st.booleans(), label="identical copy")
    copy = rec if same else {**rec, "text": rec["text"] + " (second version)"}
    pairs.insert(j, (rid, copy))
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), RECORDS, {kind: dumps_pairs(pairs)})
        with pytest.raises(InputError) as info:
            load_corpus(folder)
        assert info.value.record == rid
        line = cli_error(folder, f"vehicle-{kind}.json", f"record {rid!r}", "more than once")
        assert "field" not in line


@FUZZ
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_duplicate_field_inside_a_record_names_record_and_field(kind, data):
    rid = data.draw(st.sampled_from(sorted(RECORDS[kind])), label="record")
    rec = RECORDS[kind][rid]
    field = data.draw(st.sampled_from(sorted(rec)), label="field")
    inner = dumps_pairs(list(rec.items()) + [(field, rec[field])]).decode("utf-8")
    body = ", ".join(
        f"{json.dumps(k)}: {inner if k == rid else json.dumps(v)}" for k, v in RECORDS[kind].items()
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), RECORDS, {kind: ("{" + body + "}").encode("utf-8")})
        cli_error(folder, f"vehicle-{kind}.json", f"record {rid!r}", f"field {field!r}", "more than once")


# --------------------------------------------------------------------------------------------
# Records: wrong types in every field, missing and extra keys, ids that point nowhere


FIELDS = {
    "case": {"text": "text", "name": "opt", "short_name": "opt", "official_citation": "opt", "court": "opt",
             "date": "opt", "short_court": "opt", "source": "opt", "original_id": "opt", "jurisdiction": "opt",
             "docket_number": "opt", "alternate_citations": "strs", "attorneys": "strs", "parties": "strs",
             "judges": "strs"},
    "opinion": {"case_id": "ref", "text": "text", "type": "opt", "author": "opt", "position": "pos"},
    "paragraph": {"case_id": "ref", "opinion_id": "ref", "text": "text", "position": "pos"},
    "sentence": {"case_id": "ref", "opinion_id": "ref", "paragraph_id": "ref", "text": "text",
                 "position": "pos", "label": "label"},
}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["", " ", "\t\n", "\u00a0", "high value", " No Value ", "vehicle"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=5,
)


def accepts(rule: str, value: object, original: object) -> bool:
    if rule == "text":
        return isinstance(value, str) and bool(value.strip())
    if rule == "opt":
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value is None or isinstance(value, str) or number
    if rule == "strs":
        return value is None or isinstance(value, str) or (isinstance(value, list) and
                                                           all(isinstance(v, str) for v in value))
    if rule == "pos":
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    if rule == "label":
        return value is None or normalise_label(value) is not None
    assert rule == "ref"
    return value == original


@FUZZ
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_any_value_in_any_field_loads_or_names_file_record_and_field(kind, data):
    rid = data.draw(st.sampled_from(sorted(RECORDS[kind])[:5]), label="record")
    field = data.draw(st.sampled_from(sorted(FIELDS[kind])), label="field")
    rule = FIELDS[kind][field]
    original = RECORDS[kind][rid].get(field)
    action = data.draw(st.sampled_from(["set", "delete"]), label="action")
    records = json.loads(json.dumps(RECORDS))
    if action == "delete":
        records[kind][rid].pop(field, None)
        valid = rule not in ("text", "ref")
    else:
        value = data.draw(json_values, label="value")
        # an id of another existing record is a different error (covered below)
        assume(not (isinstance(value, str) and value in ALL_IDS and value != original))
        records[kind][rid][field] = value
        valid = accepts(rule, value, original)
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_term(Path(tmp), records)
        if valid:
            term = load_corpus(folder).term("vehicle")
            if kind == "sentence" and field == "label":
                got = next(s for s in term.sentences if s.id == rid).label
                assert got == (None if action == "delete" or value is None else normalise_label(value))
        else:
            with pytest.raises(InputError) as info:
                load_corpus(folder)
            assert (info.value.record, info.value.field) == (rid, field)
            cli_error(folder, f"vehicle-{kind}.json", f"record {rid!r}", f"field {field!r}")


@FUZZ
@given(kind=st.sampled_from(KINDS), key=st.text(min_size=1, max_size=10), value=json_values)
def test_extra_keys_are_ignored(kind, key, value):
    assume(key not in FIELDS[kind] and key not in ("label",))
    records = json.loads(json.dumps(RECORDS))
    for rec in list(records[kind].values())[:3]:
        rec[key] = value
    with tempfile.TemporaryDirectory() as tmp:
        term = load_corpus(write_term(Path(tmp), records)).term("vehicle")
    assert [s.id for s in term.sentences] == list(RECORDS["sentence"])


@pytest.mark.parametrize("kind,field", [("opinion", "case_id"), ("paragraph", "case_id"),
                                        ("paragraph", "opinion_id"), ("sentence", "case_id"),
                                        ("sentence", "opinion_id"), ("sentence", "paragraph_id")])
def test_id_that_points_nowhere(tmp_path, kind, field):
    records = json.loads(json.dumps(RECORDS))
    rid = sorted(records[kind])[-1]
    records[kind][rid][field] = "no-such-record"
    cli_error(write_term(tmp_path, records), f"vehicle-{kind}.json", f"record {rid!r}", f"field {field!r}",
              "'no-such-record'")


def test_ids_that_exist_but_disagree_name_the_record(tmp_path):
    records = json.loads(json.dumps(RECORDS))
    rid = next(iter(records["sentence"]))
    other = next(p for p, rec in records["paragraph"].items()
                 if rec["opinion_id"] != records["sentence"][rid]["opinion_id"])
    records["sentence"][rid]["paragraph_id"] = other
    cli_error(write_term(tmp_path, records), "vehicle-sentence.json", f"record {rid!r}",
              "field 'paragraph_id'", "belongs to another opinion")


@pytest.mark.parametrize("value", ["", " ", "\n\t ", "\u2003\u00a0"])
@pytest.mark.parametrize("kind", KINDS)
def test_empty_and_whitespace_only_texts(tmp_path, kind, value):
    records = json.loads(json.dumps(RECORDS))
    rid = next(iter(records[kind]))
    records[kind][rid]["text"] = value
    cli_error(write_term(tmp_path, records), f"vehicle-{kind}.json", f"record {rid!r}", "field 'text'", "empty")


@pytest.mark.parametrize("kind", KINDS)
def test_a_record_that_is_not_an_object(tmp_path, kind):
    records = json.loads(json.dumps(RECORDS))
    rid = next(iter(records[kind]))
    records[kind][rid] = ["not", "a", "record"]
    cli_error(write_term(tmp_path, records), f"vehicle-{kind}.json", f"record {rid!r}", "found array")


@pytest.mark.parametrize("value", [[], "text", 3, None])
def test_a_file_that_is_not_an_object_of_records(tmp_path, value):
    folder = write_term(tmp_path, RECORDS, {"opinion": json.dumps(value).encode()})
    cli_error(folder, "vehicle-opinion.json", "expected a JSON object")


def test_missing_file_of_a_term(tmp_path):
    records = {k: v for k, v in RECORDS.items() if k != "paragraph"}
    cli_error(write_term(tmp_path, records), "paragraph")


def test_huge_texts_load_and_too_huge_texts_are_refused(tmp_path, monkeypatch):
    records = json.loads(json.dumps(RECORDS))
    cid = next(iter(records["case"]))
    records["case"][cid]["text"] += " The vehicle." * 120_000  # about 1.6 million characters
    folder = write_term(tmp_path / "huge", records)
    term = load_corpus(folder).term("vehicle")
    assert len(term.cases[cid].text) > 1_500_000
    monkeypatch.setattr(corpus_mod, "MAX_TEXT_CHARS", 1_000_000)
    cli_error(folder, "vehicle-case.json", f"record {cid!r}", "field 'text'", "over the limit of 1000000")


# --------------------------------------------------------------------------------------------
# Lone surrogate escapes (issue 16, defect 3)


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\ud83d x"])
def test_lone_surrogate_in_a_sentence_is_refused_at_load(tmp_path, capsys, escape):
    folder = write_term(tmp_path / "data", RECORDS)
    sentences = folder / "vehicle-sentence.json"
    record = next(iter(json.loads(sentences.read_text(encoding="utf-8"))))
    with_escape(sentences, record, "text", escape)
    with pytest.raises(InputError) as info:
        load_corpus(folder)
    assert info.value.record == record and info.value.field == "text"
    code, out, err = run_main(capsys, "rank", "vehicle", "--data", str(folder), "-q")
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "vehicle-sentence.json" in line and repr(record) in line and "'text'" in line and "surrogate" in line


def test_lone_surrogate_in_a_label_is_refused(tmp_path, capsys):
    folder = write_term(tmp_path / "data", RECORDS)
    sentences = folder / "vehicle-sentence.json"
    data = json.loads(sentences.read_text(encoding="utf-8"))
    record = next(rid for rid, rec in data.items() if rec.get("label"))
    with_escape(sentences, record, "label", "\\udc00")
    code, _, err = run_main(capsys, "evaluate", "--data", str(folder), "-q")
    line = one_error_line(err)
    assert code == 2 and repr(record) in line and "'label'" in line


def test_a_valid_surrogate_pair_loads(tmp_path):
    folder = write_term(tmp_path / "data", RECORDS)
    sentences = folder / "vehicle-sentence.json"
    record = next(iter(json.loads(sentences.read_text(encoding="utf-8"))))
    with_escape(sentences, record, "text", " \\ud83d\\ude97")
    text = next(s.text for s in load_corpus(folder).term("vehicle").sentences if s.id == record)
    assert text.endswith("\U0001f697")


def test_lone_surrogate_in_a_record_id_is_refused(tmp_path):
    folder = write_term(tmp_path / "data", RECORDS)
    path = folder / "vehicle-case.json"
    text = path.read_text(encoding="utf-8")
    first = next(iter(json.loads(text)))
    path.write_text(text.replace(json.dumps(first), json.dumps(first)[:-1] + '\\ud800"', 1), encoding="utf-8")
    with pytest.raises(InputError, match="surrogate"):
        load_corpus(folder)


# --------------------------------------------------------------------------------------------
# Special files and folders as --data (issue 16, defect 4)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available on this system")
def test_a_fifo_in_the_data_folder_is_named(tmp_path, capsys):
    folder = write_term(tmp_path / "data", RECORDS)
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
    write_term(tmp_path / "outer" / "inner", RECORDS)
    code, _, err = run_main(capsys, "rank", "vehicle", "--data", str(tmp_path / "outer"), "-q")
    line = one_error_line(err)
    assert code == 2 and "'inner'" in line and f"--data {tmp_path / 'outer' / 'inner'}" in line


# --------------------------------------------------------------------------------------------
# Zip files: corrupt, empty, unexpected members, path traversal, zip bombs


@FUZZ
@given(data=st.data())
def test_damaged_zip_loads_intact_or_fails_with_one_line(data):
    raw = bytearray(GOOD_ZIP)
    how = data.draw(st.sampled_from(["flip", "truncate", "zero-run"]), label="damage")
    if how == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1), label="length")]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 4), label="flips")):
            raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    else:
        start = data.draw(st.integers(0, len(raw) - 1))
        raw[start:start + 64] = bytes(len(raw[start:start + 64]))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vehicle.zip"
        path.write_bytes(bytes(raw))
        loaded = load_or_error(path, "vehicle.zip")
        if loaded is not None:  # the damage hit bytes that do not matter (a timestamp, say)
            for term in loaded:
                assert [s.text for s in term.sentences] == [r["text"] for r in RECORDS["sentence"].values()]


def test_empty_file_and_empty_zip(tmp_path):
    (tmp_path / "empty.zip").write_bytes(b"")
    cli_error(tmp_path / "empty.zip", "empty.zip", "empty or corrupt zip")
    (tmp_path / "nothing.zip").write_bytes(zip_bytes({}))
    cli_error(tmp_path / "nothing.zip", "nothing.zip", "holds no TERM-*.json files")


def test_corrupt_zip_in_a_folder_of_zips(tmp_path):
    (tmp_path / "vehicle.zip").write_bytes(GOOD_ZIP)
    (tmp_path / "broken.zip").write_bytes(GOOD_ZIP[: len(GOOD_ZIP) // 2])
    cli_error(tmp_path, "broken.zip")


@pytest.mark.parametrize("name", ["../x", "../vehicle-case.json", "a/../../vehicle-case.json", "/etc/x-case.json",
                                  "..\\..\\vehicle-case.json", "sub/../../x.json"])
def test_path_traversal_member_names_are_refused(tmp_path, name):
    path = tmp_path / "evil.zip"
    path.write_bytes(zip_bytes({**GOOD_MEMBERS, name: "{}"}))
    line = cli_error(path, "evil.zip", "unsafe member name")
    assert not (tmp_path.parent / "x").exists()
    assert name.replace("\\", "\\\\") in line or repr(name) in line


@FUZZ
@given(name=st.text(min_size=1, max_size=30))
def test_any_extra_member_name_loads_or_names_the_zip(name):
    assume(name.split("\x00")[0])  # zipfile cuts names at NUL and cannot write an empty one
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "extra.zip"
        path.write_bytes(_zip_with_extra(name))
        loaded = load_or_error(path, "extra.zip")
        if loaded is not None:  # folders, hidden files and __MACOSX are skipped
            assert list(loaded.terms) == ["vehicle"]


def _zip_with_extra(name: str) -> bytes:
    """The good members plus ``name`` (which may repeat one of them)."""
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name
        for member, text in GOOD_MEMBERS.items():
            zf.writestr(member, text)
        zf.writestr(name, "{}")
    return buf.getvalue()


def test_unexpected_member_is_named(tmp_path):
    path = tmp_path / "x.zip"
    path.write_bytes(zip_bytes({**GOOD_MEMBERS, "notes.txt": "hello"}))
    cli_error(path, "x.zip", "unexpected member 'notes.txt'")


def _set_declared_size(raw: bytes, member: str, size: int) -> bytes:
    """Rewrite the uncompressed size a zip declares for ``member`` (local and central headers)."""
    out = bytearray(raw)
    name = member.encode()
    pos = 0
    while (pos := out.find(b"PK\x03\x04", pos)) >= 0:  # local file headers: size at +22
        n = struct.unpack_from("<H", out, pos + 26)[0]
        if out[pos + 30:pos + 30 + n] == name:
            struct.pack_into("<I", out, pos + 22, size)
        pos += 4
    pos = 0
    while (pos := out.find(b"PK\x01\x02", pos)) >= 0:  # central directory: size at +24
        n = struct.unpack_from("<H", out, pos + 28)[0]
        if out[pos + 46:pos + 46 + n] == name:
            struct.pack_into("<I", out, pos + 24, size)
        pos += 4
    return bytes(out)


def test_zip_member_declaring_a_huge_size_is_refused_before_reading(tmp_path):
    path = tmp_path / "bomb.zip"
    path.write_bytes(_set_declared_size(GOOD_ZIP, "vehicle-case.json", 0xFFFFFFF0))
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("vehicle-case.json").file_size == 0xFFFFFFF0
    cli_error(path, "bomb.zip", "'vehicle-case.json'", "would expand to 4294967280 bytes", "over the limit")


def test_zip_whose_members_together_exceed_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_mod, "MAX_ZIP_BYTES", 60_000)
    path = tmp_path / "big.zip"
    path.write_bytes(GOOD_ZIP)
    cli_error(path, "big.zip", "more than the limit of 60000 bytes")


def test_zip_member_over_the_limit_and_plain_file_over_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_mod, "MAX_MEMBER_BYTES", 30_000)
    path = tmp_path / "v.zip"
    path.write_bytes(GOOD_ZIP)
    cli_error(path, "v.zip", "would expand to", "over the limit of 30000")
    # plain files have no declared size: the read itself is capped
    cli_error(write_term(tmp_path / "plain", RECORDS), "vehicle-case.json", "larger than the limit of 30000 bytes")


@pytest.mark.slow
def test_zip_header_that_lies_about_the_size_cannot_exhaust_memory(tmp_path):
    """A member that declares 2 kB but inflates to 64 MB: reading stops at the declared size."""
    members = dict(GOOD_MEMBERS)
    members["vehicle-sentence.json"] = b"{" + b" " * (64 * 1024 * 1024) + b"}"
    path = tmp_path / "liar.zip"
    path.write_bytes(_set_declared_size(zip_bytes(members), "vehicle-sentence.json", 2048))
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            load_corpus(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "vehicle-sentence.json" in str(info.value)
    assert peak < 16 * 1024 * 1024, peak
    cli_error(path, "liar.zip:vehicle-sentence.json")
