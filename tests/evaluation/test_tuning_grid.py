"""Tuning grids (statinterp.evaluation.tuning): a grid value that is not a finite number is
refused (issue 16, defect 4)."""

from __future__ import annotations

import pytest

from tests.support.cli import one_error_line, run_main


@pytest.mark.parametrize("grid", ["nwr=nan,0.2", "nwr=0.1,inf", "nwr=-inf"])
def test_non_finite_grid_values_are_refused(capsys, grid):
    code, out, err = run_main(capsys, "tune", "Tp-Nr", "--grid", grid, "-q")
    assert code == 2 and out == "" and "finite" in one_error_line(err)
