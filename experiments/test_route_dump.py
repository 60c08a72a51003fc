"""experiments.route_dump: a dump of what readers store, and the entries two dumps differ in."""

import json
import shutil
from pathlib import Path

from experiments.route_dump import compare, first_difference, main

GENUINE = Path(__file__).parents[1] / "tests" / "fixtures" / "genuine"


def test_compare_names_each_differing_entry_and_where():
    before = {"a/pdf": ["read", ["Name", "2020-01-01", "", [[["one.", "two."], []]]]], "b/pdf": ["read"]}
    after = {"a/pdf": ["read", ["Name", "2020-01-01", "", [[["one.", "Two."], []]]]], "c/pdf": ["read"]}
    lines = compare(before, after)
    assert lines == ["a/pdf[1][3][0][0][1]: 'two.' != 'Two.'", "b/pdf: only in the first",
                     "c/pdf: only in the second"]
    assert compare(before, before) == []
    assert first_difference([1, 2], [1, 2, 3]) == ": 2 items != 3 items"


def test_a_folder_of_pdfs_dumped_twice_gives_no_difference(tmp_path, capsys):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(GENUINE / "pdf-calsuperct" / "santaclara-dept16-pages13-15.pdf", pdfs / "one.pdf")
    assert main(["--pdfs", str(pdfs), "--out", str(tmp_path / "a.json")]) == 0
    dump = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    name, date, head, opinions = dump["one.pdf"]
    paragraphs, footnotes, page_starts, numbers = opinions[0]
    assert any(n.startswith("The Court notes that Plaintiff’s Reply brief") for n in footnotes)
    assert paragraphs and page_starts
    assert main(["--pdfs", str(pdfs), "--out", str(tmp_path / "b.json")]) == 0
    assert main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert "no difference in 1 entries" in capsys.readouterr().out
    dump["one.pdf"][0] = "Another name"
    (tmp_path / "b.json").write_text(json.dumps(dump), encoding="utf-8")
    assert main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "one.pdf[0]:" in capsys.readouterr().out


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--pdfs", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'nothing'}: no such folder"
