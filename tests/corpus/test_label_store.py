"""The label store's schema versions (statinterp.corpus.labels.LABEL_SCHEMA, issue #27): every
older version migrates to the schema of a new store. (Its labels surviving the migration, and a
newer store refused: tests/app/test_review.py.)"""

from __future__ import annotations

import shutil

from statinterp.corpus.labels import LABEL_SCHEMA, SCHEMA_VERSION, LabelStore
from tests.support.databases import schema_of
from tests.support.paths import FIXTURES


def test_every_older_label_store_version_migrates_to_the_schema_of_a_new_store(tmp_path):
    """Version 0 is the only older one: tests/fixtures/label_store/unversioned.sqlite (written
    by the code of that time; tests/app/test_review.py checks that its labels survive)."""
    assert LABEL_SCHEMA.readable == (0, SCHEMA_VERSION) == (0, 1)
    old = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURES / "label_store" / "unversioned.sqlite", old)
    with LabelStore(old) as store:
        assert store.schema_version == SCHEMA_VERSION
    with LabelStore(tmp_path / "new.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION
    assert schema_of(old) == schema_of(tmp_path / "new.sqlite")
