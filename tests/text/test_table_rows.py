"""A table written one row a line in plain text is no sentence (issue 34: the Tennessee Court of
Appeals' pay table counted as found fragments). On the genuine text of Wade v. Wade (CAP's text in
the statutory-interpretation data set; tests/fixtures/genuine/case-names/README.md, heads/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from statinterp.text.headings import is_table_row, table_rows

BODY = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "case-names" / "heads" / \
    "tennctapp-wade-2002-body.txt"


def _lines() -> list[str]:
    return BODY.read_text(encoding="utf-8").splitlines()


def test_the_pay_table_rows_and_nothing_else():
    lines = _lines()
    rows = table_rows(lines)
    assert [lines[k].split(" $")[0] for k in sorted(rows)] == ["Base Pay", "BAS", "BAH", "Fly Pay"]


def test_a_row_alone_or_a_sentence_is_no_table():
    lines = _lines()
    row = next(ln for ln in lines if ln.startswith("BAS $"))
    assert is_table_row(row)
    assert table_rows([lines[0], row, lines[0]]) == set()  # one row alone
    assert table_rows([row, row]) == set()  # fewer than MIN_TABLE_ROWS
    assert not is_table_row("Adding to this net amount the $160.42 BAS received results in $4,651.83.")
    assert not is_table_row("A correct calculation of Appellant’s child support obligation for the year 2001")


@pytest.mark.slow
def test_find_leaves_the_table_rows_out(tmp_path):
    from statinterp.collection.find import find_term
    from statinterp.collection.ingest import ingest
    from statinterp.collection.shards import open_collection

    (tmp_path / "src").mkdir()
    shutil.copy(BODY, tmp_path / "src" / "wade.txt")
    ingest([tmp_path / "src"], tmp_path / "collection")
    with open_collection(tmp_path / "collection") as c:
        found = [r["text"] for r in find_term(c, "base pay").tables["sentence"].values()]
    assert found and all("Base Pay+(Fly" in t or "base pay" in t.lower() for t in found)
    assert not any(t.startswith("Base Pay $4,309.50") for t in found)  # was found: a fragment
    assert any("Base Pay+(Fly" in t for t in found)  # the sentence that computes with it is kept
