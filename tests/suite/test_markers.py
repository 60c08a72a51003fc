"""The ``slow`` and ``real_data`` markers (issue 16): registered, ``slow`` written on each slow
test itself, and every test that reads the annotated data marked ``slow``."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import REAL_DATA_FIXTURES
from tests.support.paths import REPO_ROOT, TESTS


def test_markers_are_registered():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = {m.split(":", 1)[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"slow", "real_data"} <= markers


def test_every_real_data_test_is_marked_slow_where_it_is_written(request):
    """conftest marks a test using the annotated data ``real_data`` but never ``slow``: the test
    must say ``@pytest.mark.slow`` itself (preparing the 14 terms takes minutes cold). Under
    ``-m "not slow"`` any such test left unmarked is still collected, and named here."""
    items = request.session.items
    assert request.node in items
    unmarked = [item.nodeid for item in items
                if item.get_closest_marker("real_data") is not None and item.get_closest_marker("slow") is None]
    assert unmarked == []


def test_real_data_fixtures_exist():
    source = "".join(p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py"))
    for name in REAL_DATA_FIXTURES:
        assert re.search(rf"^def {name}\(", source, re.M), name
