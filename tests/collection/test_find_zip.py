"""find --out: the zip it writes is byte-identical to the committed one (tests/fixtures/find_zips),
made by `statinterp find vehicle` (with and without `--against data/example`) on a collection of
data/example/sources/cap before find's case table held typed cases (issue #27)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from statinterp.app.cli import main
from statinterp.collection.ingest import ingest
from tests.support.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "data" / "example"
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "find_zips"


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("find_zip") / "collection"
    ingest([EXAMPLE / "sources" / "cap"], folder)
    return folder


def _members(path: Path) -> list[tuple[str, tuple, bytes]]:
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, i.date_time, zf.read(i)) for i in zf.infolist()]


@pytest.mark.parametrize("name, against", [("vehicle.zip", []), ("vehicle-against.zip", ["--against", str(EXAMPLE)])])
def test_find_out_zip_is_byte_identical_to_the_committed_one(collection, tmp_path, name, against):
    out = tmp_path / name
    code = main(["find", "vehicle", "--collection", str(collection), "--out", str(out), *against])
    assert code == 0
    assert _members(out) == _members(FIXTURES / name)  # same members, order, dates and JSON text
    assert out.read_bytes() == (FIXTURES / name).read_bytes()
