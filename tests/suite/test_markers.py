"""The ``slow`` and ``real_data`` markers (issue 16): registered, and the slow list names real tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from conftest import REAL_DATA_FIXTURES, SLOW_TESTS

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def test_markers_are_registered():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = {m.split(":", 1)[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"slow", "real_data"} <= markers


def test_every_listed_slow_test_exists():
    for entry in sorted(SLOW_TESTS):
        file, function = entry.split("::")
        source = (TESTS / file).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(function)}\(", source, re.M), f"{entry} names no test"


def test_real_data_fixtures_exist():
    source = "".join(p.read_text(encoding="utf-8") for p in TESTS.glob("*.py"))
    for name in REAL_DATA_FIXTURES:
        assert re.search(rf"^def {name}\(", source, re.M), name

