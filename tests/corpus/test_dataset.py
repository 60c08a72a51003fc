"""Loading and validating corpora (statinterp.corpus.dataset): zips, folders, folders of zips, and
one clear InputError (file, record, field) for every kind of bad input."""

from __future__ import annotations

import pytest

from statinterp.corpus.dataset import load_corpus, term_key
from statinterp.errors import InputError, UsageError
from statinterp.workflow import example_data_path

# --------------------------------------------------------------------------------------------
# Well-formed input


def _check_tiny_term(corpus):
    assert list(corpus.terms) == ["red_car"]
    term = corpus.term("red car")
    assert term.key == "red_car" and term.query == "red car"
    assert sorted(term.cases) == ["c1", "c2"]
    assert sorted(term.opinions) == ["c1-o1", "c1-o2", "c2-o1"]
    assert sorted(term.paragraphs) == ["c1-o1-p0", "c1-o1-p1", "c1-o1-p2", "c1-o2-p1", "c2-o1-p0"]
    assert [s.id for s in term.sentences] == ["s1", "s2", "s3", "s4", "s5"]
    assert [s.label for s in term.sentences] == ["high value", "no value", "certain value", "potential value", None]
    assert [s.gain for s in term.sentences] == [3, 0, 2, 1, None]
    assert term.labelled
    s3 = term.sentences[2]
    assert (s3.case_id, s3.opinion_id, s3.paragraph_id) == ("c1", "c1-o1", "c1-o1-p2")
    assert s3.text == "The red car and the red car."
    assert term.paragraphs["c1-o1-p2"].text == "A red bird in a tree. The red car and the red car."
    assert term.opinions["c1-o2"].text == "The old dog near the tree.\nA red car."
    assert term.cases["c2"].text.startswith("Header small road\nThe small car in the park.")
    assert term.cases["c1"].citation == "1 Tiny c1" and term.cases["c1"].name == "Case c1"
    assert term.case_of(s3).id == "c1"


def test_load_folder_of_json_files(corpus_builder):
    _check_tiny_term(load_corpus(corpus_builder.write()))


def test_load_single_zip(corpus_builder):
    folder = corpus_builder.zip()
    _check_tiny_term(load_corpus(folder / "red_car.zip"))


def test_load_folder_of_zips_and_terms_filter(corpus_builder):
    records = corpus_builder.records()
    other = corpus_builder.records()["red_car"]
    records["blue_bird"] = other
    folder = corpus_builder.zip(records)
    corpus = load_corpus(folder)
    assert sorted(corpus.terms) == ["blue_bird", "red_car"]
    assert corpus.term("blue bird").query == "blue bird"
    assert len(corpus.term("blue_bird").sentences) == 5

    only = load_corpus(folder, terms=["Blue Bird"])
    assert list(only.terms) == ["blue_bird"]
    with pytest.raises(UsageError, match="no_such_term"):
        load_corpus(folder, terms=["no such term"])
    with pytest.raises(UsageError, match=r"'red car'.*terms: blue_bird"):  # names the loaded terms
        only.term("red car")


def test_load_folder_with_json_files_and_zips_together(corpus_builder):
    folder = corpus_builder.write()
    corpus_builder.zip_term(folder / "green_tree.zip", "green_tree", corpus_builder.records()["red_car"])
    assert sorted(load_corpus(folder).terms) == ["green_tree", "red_car"]


def test_same_term_twice_is_an_error(corpus_builder):
    folder = corpus_builder.write()
    corpus_builder.zip_term(folder / "red_car.zip", "red_car", corpus_builder.records()["red_car"])
    with pytest.raises(InputError, match="loaded twice"):
        load_corpus(folder)


def test_example_data_matches_its_readme():
    corpus = load_corpus(example_data_path())
    term = corpus.term("vehicle")
    assert (len(term.cases), len(term.opinions), len(term.paragraphs), len(term.sentences)) == (7, 10, 42, 47)
    counts = {}
    for s in term.sentences:
        counts[s.label] = counts.get(s.label, 0) + 1
    assert counts == {"high value": 9, "certain value": 13, "potential value": 14, "no value": 11}


@pytest.mark.parametrize("raw, expected", [
    ("  HIGH   Value\n", "high value"),
    ("Certain value", "certain value"),
    ("\tpotential VALUE ", "potential value"),
    ("NO VALUE", "no value"),
])
def test_labels_are_case_insensitive_and_ignore_whitespace(corpus_builder, raw, expected):
    records = corpus_builder.records()
    records["red_car"]["sentence"]["s2"]["label"] = raw
    term = load_corpus(corpus_builder.write(records)).term("red_car")
    assert term.sentences[1].label == expected


def test_unlabelled_sentences_are_allowed(corpus_builder):
    records = corpus_builder.records()
    for rec in records["red_car"]["sentence"].values():
        rec.pop("label", None)
    records["red_car"]["sentence"]["s1"]["label"] = None  # explicit null is unlabelled too
    term = load_corpus(corpus_builder.write(records)).term("red_car")
    assert [s.label for s in term.sentences] == [None] * 5
    assert not term.labelled


def test_term_key_normalises_names():
    assert term_key(" Technological  Measure ") == "technological_measure"
    assert term_key("technological-measure") == "technological_measure"
    assert term_key("technological_measure") == "technological_measure"


# --------------------------------------------------------------------------------------------
# Bad input: InputError naming the file, the record and the field


def _set(kind, rid, field, value):
    def mutate(records):
        records["red_car"][kind][rid][field] = value
    return mutate


def _drop_field(kind, rid, field):
    def mutate(records):
        del records["red_car"][kind][rid][field]
    return mutate


def _replace_record(kind, rid, value):
    def mutate(records):
        records["red_car"][kind][rid] = value
    return mutate


def _replace_file(kind, value):
    def mutate(records):
        records["red_car"][kind] = value
    return mutate


BAD_RECORDS = {
    # name: (mutation, file kind, record, field, words the message must contain)
    "sentence to unknown paragraph": (_set("sentence", "s2", "paragraph_id", "nope"), "sentence", "s2",
                                      "paragraph_id", ["unknown paragraph", "'nope'"]),
    "sentence to unknown opinion": (_set("sentence", "s3", "opinion_id", "c9-o9"), "sentence", "s3", "opinion_id",
                                    ["unknown opinion", "'c9-o9'"]),
    "sentence to unknown case": (_set("sentence", "s4", "case_id", "c9"), "sentence", "s4", "case_id",
                                 ["unknown case", "'c9'"]),
    "paragraph to unknown opinion": (_set("paragraph", "c1-o1-p1", "opinion_id", "zz"), "paragraph", "c1-o1-p1",
                                     "opinion_id", ["unknown opinion"]),
    "opinion to unknown case": (_set("opinion", "c2-o1", "case_id", "c7"), "opinion", "c2-o1", "case_id",
                                ["unknown case"]),
    "sentence in paragraph of another opinion": (_set("sentence", "s4", "paragraph_id", "c1-o1-p0"), "sentence",
                                                 "s4", "paragraph_id", ["another opinion"]),
    "unknown label": (_set("sentence", "s1", "label", "very high value"), "sentence", "s1", "label",
                      ["unknown label", "very high value", "high value", "no value"]),
    "label of wrong type": (_set("sentence", "s1", "label", 3), "sentence", "s1", "label", ["unknown label"]),
    "empty sentence text": (_set("sentence", "s5", "text", "   \n "), "sentence", "s5", "text", ["empty"]),
    "empty case text": (_set("case", "c2", "text", ""), "case", "c2", "text", ["empty"]),
    "empty opinion text": (_set("opinion", "c1-o2", "text", "\t"), "opinion", "c1-o2", "text", ["empty"]),
    "text of wrong type": (_set("sentence", "s2", "text", 12), "sentence", "s2", "text", ["expected a string"]),
    "missing text": (_drop_field("paragraph", "c1-o1-p2", "text"), "paragraph", "c1-o1-p2", "text", ["missing"]),
    "missing case_id": (_drop_field("opinion", "c1-o1", "case_id"), "opinion", "c1-o1", "case_id", ["missing"]),
    "id of wrong type": (_set("sentence", "s3", "case_id", 1), "sentence", "s3", "case_id", ["expected a string"]),
    "position of wrong type": (_set("paragraph", "c1-o2-p1", "position", "1"), "paragraph", "c1-o2-p1", "position",
                               ["expected an integer"]),
    "optional field of wrong type": (_set("opinion", "c1-o1", "type", ["majority"]), "opinion", "c1-o1", "type",
                                     ["expected a string"]),
    "record not an object": (_replace_record("case", "c1", ["text"]), "case", "c1", None, ["expected a JSON object"]),
}


@pytest.mark.parametrize("name", sorted(BAD_RECORDS))
@pytest.mark.parametrize("packing", ["folder", "zip"])
def test_bad_record_names_file_record_and_field(corpus_builder, name, packing):
    mutate, kind, record, field, words = BAD_RECORDS[name]
    records = corpus_builder.records()
    mutate(records)
    path = corpus_builder.write(records) if packing == "folder" else corpus_builder.zip(records) / "red_car.zip"
    with pytest.raises(InputError) as info:
        load_corpus(path)
    err = info.value
    message = str(err)
    assert err.file.endswith(f"red_car-{kind}.json"), err.file
    assert err.file in message
    assert err.record == record
    assert err.field == field
    if record is not None:
        assert repr(record) in message
    if field is not None:
        assert repr(field) in message
    for word in words:
        assert word in message, message
    if packing == "zip":
        assert "red_car.zip" in message


@pytest.mark.parametrize("packing", ["folder", "zip"])
def test_malformed_json_names_the_file_and_position(corpus_builder, packing):
    records = corpus_builder.records()
    records["red_car"]["opinion"] = '{"c1-o1": {"case_id": "c1",\n  "text": }'
    path = corpus_builder.write(records) if packing == "folder" else corpus_builder.zip(records) / "red_car.zip"
    with pytest.raises(InputError) as info:
        load_corpus(path)
    message = str(info.value)
    assert info.value.file.endswith("red_car-opinion.json")
    assert "malformed JSON" in message and "line 2" in message


@pytest.mark.parametrize("value, words", [
    ("[1, 2]", ["expected a JSON object", "array"]),
    ('"text"', ["expected a JSON object"]),
])
def test_file_that_is_not_an_object_of_records(corpus_builder, value, words):
    records = corpus_builder.records()
    records["red_car"]["case"] = value
    with pytest.raises(InputError) as info:
        load_corpus(corpus_builder.write(records))
    assert info.value.file.endswith("red_car-case.json")
    assert info.value.record is None
    assert words[0] in str(info.value)


def test_not_utf8_names_the_file(corpus_builder):
    folder = corpus_builder.write()
    (folder / "red_car-sentence.json").write_bytes(b'{"s1": {"text": "caf\xe9"}}')
    with pytest.raises(InputError) as info:
        load_corpus(folder)
    assert info.value.file.endswith("red_car-sentence.json")
    assert "UTF-8" in str(info.value)


@pytest.mark.parametrize("kind", ["case", "opinion", "paragraph", "sentence"])
def test_missing_file_names_the_term_and_the_missing_kind(corpus_builder, kind):
    folder = corpus_builder.write()
    (folder / f"red_car-{kind}.json").unlink()
    with pytest.raises(InputError) as info:
        load_corpus(folder)
    message = str(info.value)
    assert "red_car" in message
    assert f"red_car-{kind}.json" in message, message


def test_missing_member_of_a_zip(corpus_builder):
    records = corpus_builder.records()
    del records["red_car"]["paragraph"]
    folder = corpus_builder.zip(records)
    with pytest.raises(InputError) as info:
        load_corpus(folder / "red_car.zip")
    assert "red_car.zip" in str(info.value) and "red_car-paragraph.json" in str(info.value)


def test_term_without_sentences(corpus_builder):
    records = corpus_builder.records()
    records["red_car"]["sentence"] = {}
    with pytest.raises(InputError) as info:
        load_corpus(corpus_builder.write(records))
    assert info.value.file.endswith("red_car-sentence.json")
    assert "no sentences" in str(info.value) and "red_car" in str(info.value)


def test_missing_path_and_non_data_path(tmp_path):
    with pytest.raises(InputError, match="does not exist") as info:
        load_corpus(tmp_path / "nowhere")
    assert info.value.file == str(tmp_path / "nowhere")
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello")
    with pytest.raises(InputError) as info:
        load_corpus(text_file)
    assert info.value.file == str(text_file)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError) as info:
        load_corpus(empty)
    assert info.value.file == str(empty)


def test_unexpected_member_in_a_zip(corpus_builder, tmp_path):
    import zipfile

    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert info.value.file == str(path) and "readme.txt" in str(info.value)


def test_input_error_message_layout():
    err = InputError("dir/x-sentence.json", "is empty", record="s1", field="text")
    assert str(err) == "dir/x-sentence.json: record 's1': field 'text': is empty"
