"""sources/plaintext.py: the data set's cases read back as records, from the loaded Case (issue #27)."""

from __future__ import annotations

import shutil

from statinterp.sources.plaintext import read_dataset
from statinterp.sources.records import CaseRecord
from tests.support.paths import REPO_ROOT

FOUND = REPO_ROOT / "tests" / "fixtures" / "find_zips" / "vehicle.zip"  # find's zip: every case field


def test_a_zip_and_a_folder_of_zips_give_the_same_records_with_the_source_fields(tmp_path):
    shutil.copy(FOUND, tmp_path / "vehicle.zip")
    alone = list(read_dataset(FOUND))
    assert alone == list(read_dataset(tmp_path))
    assert all(isinstance(r, CaseRecord) for r in alone) and len(alone) == 5
    first = alone[0]
    assert first.source_id == "900001" and first.jurisdiction == "Marlowe"  # the CAP id, not the data set's c1
    assert first.judges == "REYES\nOKONKWO\nBRANDT" and first.attorneys.count("\n") == 1
