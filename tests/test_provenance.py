"""Report figures at a fixed precision (statinterp/provenance.py: fixed_precision, report_json):
figures that differ only in their last bits, as summation order on another CPU makes them,
write byte-identical reports."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from statinterp.app.report import reproduction_json
from statinterp.evaluation.tuning import DEFAULT_TOLERANCE, reproduce
from statinterp.provenance import FIGURE_DIGITS, fixed_precision, report_json
from statinterp.workflow import MethodResult, open_corpus, prepare_corpus
from tests.support.paths import REPO_ROOT

REPORTS = REPO_ROOT / "reports"


def nudged(value, rng: np.random.Generator):
    """``value`` with every float moved by 1-4 units in the last place, up or down."""
    if isinstance(value, float):
        if not math.isfinite(value) or value == 0.0:
            return value
        out = value
        towards = math.inf if rng.random() < 0.5 else -math.inf
        for _ in range(int(rng.integers(1, 5))):
            out = math.nextafter(out, towards)
        return out
    if isinstance(value, dict):
        return {k: nudged(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [nudged(v, rng) for v in value]
    return value


def floats(value) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in floats(v)]
    return []


def test_fixed_precision_rounds_floats_only():
    doc = {"a": 0.1 + 0.2, "b": [1 / 3, 3, True, None, "x", float("nan"), -math.inf], "c": (2.5e-17, -0.0)}
    out = fixed_precision(doc)
    assert out["a"] == 0.3 and out["b"][0] == float(f"{1 / 3:.{FIGURE_DIGITS}g}")
    assert out["b"][1:5] == [3, True, None, "x"] and type(out["b"][2]) is bool
    assert math.isnan(out["b"][5]) and out["b"][6] == -math.inf
    assert out["c"] == [2.5e-17, -0.0]
    assert fixed_precision(np.float64(1 / 3)) == out["b"][0]
    assert report_json(doc).endswith("}\n") and json.loads(report_json(doc))["a"] == 0.3


def test_exact_half_way_figures_round_one_way_whatever_their_last_bit():
    """Exact p-values (k / 2**n) can lie exactly half-way between two 10-digit decimals: nudged
    either way in the last bit, they still round the same (half to even)."""
    for exact in (277 / 2048, 66 / 16384, 86 / 16384, -277 / 2048):
        assert len(f"{abs(exact):.17g}".rstrip("0").lstrip("0.")) == FIGURE_DIGITS + 1  # on the half-way point
        up, down = math.nextafter(exact, math.inf), math.nextafter(exact, -math.inf)
        assert fixed_precision(up) == fixed_precision(down) == fixed_precision(exact)
    assert fixed_precision(277 / 2048) == 0.1352539062  # half to even


def test_summation_order_does_not_change_the_written_figure():
    rng = np.random.default_rng(0)
    differ = 0
    for _ in range(200):
        parts = rng.random(50) / 50
        forward, backward = float(sum(parts)), float(sum(parts[::-1]))
        differ += forward != backward
        assert report_json(forward) == report_json(backward)
    assert differ > 20  # the two orders do disagree in the last bits, often


@pytest.mark.parametrize("name", ["core.json", "learned.json"])
def test_committed_figures_nudged_in_the_last_bits_write_identical_files(name):
    """The committed report's own figures (thousands), each moved by a few ulps as another CPU
    may move them, are written byte for byte the same; the rounding stays inside --check's
    tolerance."""
    doc = json.loads((REPORTS / name).read_text(encoding="utf-8"))
    other = nudged(doc, np.random.default_rng(1))
    n = len(floats(doc))
    assert n > 500 and sum(a != b for a, b in zip(floats(doc), floats(other), strict=True)) > n // 2
    assert report_json(doc, indent=2) == report_json(other, indent=2)
    worst = max(abs(a - b) for a, b in zip(floats(doc), floats(fixed_precision(doc)), strict=True) if abs(a) <= 1)
    assert worst < DEFAULT_TOLERANCE


def test_reproduction_report_is_written_the_same_from_nudged_figures():
    """The reproduce writer itself: the same run with its figures moved in the last bits gives
    an identical reproduction.json."""
    prepared = prepare_corpus(open_corpus(), cache_dir=False)
    rep = reproduce(prepared, ["Random", "TF-ISF-p", "BM25-c"], metadata={"command": "statinterp x", "date": "d"})
    rng = np.random.default_rng(2)
    moved = dataclasses.replace(rep, results=[
        MethodResult(r.method, nudged(r.per_term, rng), nudged(r.macro, rng)) for r in rep.results])
    assert floats(moved.results[1].per_term) != floats(rep.results[1].per_term)
    assert reproduction_json(moved) == reproduction_json(rep)


def test_thread_libraries_are_listed_in_a_fixed_order(monkeypatch):
    """Two runs load the same BLAS libraries in another order; the report lists them alike (issue 37:
    a regenerated reports/core.json differed in this list alone)."""
    import threadpoolctl

    from statinterp.provenance import thread_libraries

    pools = [{"user_api": "blas", "internal_api": "openblas", "version": "0.3.31", "num_threads": 2},
             {"user_api": "blas", "internal_api": "openblas", "version": "0.3.30", "num_threads": 2}]
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: pools)
    first = thread_libraries()
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: pools[::-1])
    assert thread_libraries() == first
    assert [row["version"] for row in first] == ["0.3.30", "0.3.31"]
