"""Labels files (statinterp.corpus.labels): a lone surrogate is refused naming the line and
the field (issue 16, defect 3)."""

from __future__ import annotations

import pytest

from statinterp.errors import InputError
from tests.support.cli import one_error_line, run_main


def test_lone_surrogate_in_a_labels_file_is_refused(tmp_path, capsys):
    from statinterp.corpus.labels import read_label_file

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"sentence_id": "case-01-op1-p010-s4", "label": "high value"}\n'
                      '{"sentence_id": "s\\ud800", "label": "no value"}\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_label_file(labels)
    assert info.value.record == "line 2" and info.value.field == "sentence_id"
    code, out, err = run_main(capsys, "rank", "vehicle", "-q", "--feedback", str(labels))
    line = one_error_line(err)
    assert code == 2 and out == "" and "labels.jsonl" in line and "'line 2'" in line and "surrogate" in line
