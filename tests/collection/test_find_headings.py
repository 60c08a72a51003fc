"""``find`` returns no heading as a sentence by default (issue 34); ``--headings`` does; each
sentence names the heading it stands under. On a genuine opinion: the Tax Court's T.C. Memo.
2020-26 as CourtListener's text of its PDF (tests/fixtures/genuine/pdf-modern/)."""

import shutil
from pathlib import Path

import pytest

from statinterp.collection.find import find_term
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import open_collection

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "pdf-modern" / "tax-court-memo-2020-26.txt"


@pytest.fixture(scope="module")
def tax_court(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("headings")
    (root / "src").mkdir()
    shutil.copy(FIXTURE, root / "src")
    ingest([root / "src"], root / "collection")
    return root / "collection"


def _texts(collection: Path, term: str, **options) -> dict[str, dict]:
    with open_collection(collection) as c:
        return {r["text"]: r for r in find_term(c, term, **options).tables["sentence"].values()}


@pytest.mark.slow
def test_find_leaves_headings_out_and_gives_sections(tax_court):
    found = _texts(tax_court, "at risk")
    assert "Amounts at risk" not in found  # "2. Amounts at risk": a heading in sentence case (defect 9)
    with_headings = _texts(tax_court, "at risk", headings=True)
    assert "Amounts at risk" in with_headings
    assert set(with_headings) - set(found) == {"Amounts at risk"}  # nothing else changes
    under = next(r for t, r in found.items() if t.startswith("A taxpayer’s amount at risk for an activity"))
    assert under["section"] == "2. Amounts at risk"
    general = _texts(tax_court, "general rule")
    assert "General rule" not in general
    assert "General rule" in _texts(tax_court, "general rule", headings=True)


@pytest.mark.slow
def test_cli_find_headings_option(tax_court, tmp_path, capsys):
    import json
    import zipfile

    from statinterp.app.cli import main

    def sentences(*extra: str) -> list[str]:
        out = tmp_path / f"x{len(extra)}.zip"
        assert main(["find", "general rule", "--collection", str(tax_court), "--out", str(out), *extra]) == 0
        with zipfile.ZipFile(out) as z:
            return [r["text"] for r in json.loads(z.read("general_rule-sentence.json")).values()]

    assert "General rule" not in sentences()
    assert "General rule" in sentences("--headings")
    capsys.readouterr()
