"""corpus.dataset.Case: the fields a collection's case carries, read from a term zip and written
back by corpus.writer.case_fields in the zip's field names (issue #27)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from statinterp.corpus.dataset import Case, case_fields, found_records, load_corpus, tables_zip_bytes, term_records
from statinterp.errors import InputError
from tests.support.bad_input import example_records, write_term

CASE = Case(id="c1", text="The vehicle case.", name="A v. B", short_name="A v. B", citation="1 F.3d 2",
            court="Court of Appeals", date="2001-02-03", source="cap", original_id="77", jurisdiction="Marlowe",
            docket_number="No. 5", alternate_citations=("1 F.3d 2", "9 X. 10"), attorneys=("Ann, for A.",),
            parties=("A, Plaintiff.",), judges=("REYES", "BRANDT"))


def _with_case(tmp_path: Path, record: dict) -> tuple[Path, str]:
    records = example_records()
    cid = next(iter(records["case"]))
    records["case"][cid] = {**record, "text": records["case"][cid]["text"]}
    return write_term(tmp_path, records), cid


def test_a_case_written_with_every_field_loads_back_equal(tmp_path):
    folder, cid = _with_case(tmp_path, case_fields(CASE))
    loaded = load_corpus(folder).term("vehicle").cases[cid]
    assert loaded == dataclasses.replace(CASE, id=cid, text=loaded.text)


def test_case_fields_uses_the_zips_names_and_keeps_empty_fields():
    record = case_fields(Case(id="c2", text="t"))
    assert record == {"original_id": "", "source": "", "name": "", "short_name": "", "date": "",
                      "official_citation": "", "alternate_citations": [], "court": "", "jurisdiction": "",
                      "docket_number": "", "attorneys": [], "parties": [], "judges": [], "text": "t"}
    assert case_fields(Case(id="c2", text="t", short_court="S.D.N.Y."))["short_court"] == "S.D.N.Y."


def test_found_records_converts_only_the_case_table():
    tables = {"case": {"c1": CASE}, "opinion": {"o1": {"case_id": "c1", "text": "x"}}, "paragraph": {},
              "sentence": {}}
    records = found_records(tables)
    assert records["case"] == {"c1": case_fields(CASE)} and records["opinion"] == tables["opinion"]
    json.loads(json.dumps(records))  # plain JSON
    assert tables_zip_bytes("vehicle", records) == tables_zip_bytes("vehicle", found_records(tables))


def test_a_list_field_may_be_one_string(tmp_path):
    folder, cid = _with_case(tmp_path, {"judges": "REYES"})
    assert load_corpus(folder).term("vehicle").cases[cid].judges == ("REYES",)


def test_term_records_writes_only_the_ranked_fields_of_a_case(tmp_path):
    folder, cid = _with_case(tmp_path, case_fields(CASE))
    term = load_corpus(folder).term("vehicle")
    assert set(term_records(term)["case"][cid]) == {"name", "short_name", "official_citation", "court", "date",
                                                    "text"}


@pytest.mark.parametrize("value, found", [(5, "number"), ([1], "an item of type number"),
                                          ({"a": "b"}, "object")])
def test_a_list_field_that_is_not_a_list_of_strings_names_record_and_field(tmp_path, value, found):
    folder, cid = _with_case(tmp_path, {"judges": value})
    with pytest.raises(InputError) as info:
        load_corpus(folder)
    assert (info.value.record, info.value.field) == (cid, "judges")
    assert f"expected a list of strings, found {found}" in str(info.value)
