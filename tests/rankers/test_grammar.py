"""Method names (statinterp.rankers.grammar): a gate threshold that is not a finite number is
refused (issue 16, defect 4)."""

from __future__ import annotations

import pytest

from tests.support.cli import one_error_line, run_main


@pytest.mark.parametrize("name", ["TF-ISF-p+NWR>=nan", "TF-ISF-p+NWR>=NaN", "BM25+gate(BM25-g,nan)",
                                  "TF-ISF+TF-ISF-g>=inf"])
def test_non_finite_gate_threshold_is_refused(capsys, name):
    code, out, err = run_main(capsys, "rank", "vehicle", "-q", "-m", name)
    line = one_error_line(err)
    assert code == 2 and out == "" and "finite" in line
