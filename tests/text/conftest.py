"""Fixtures of the segmentation tests: the pipelines, built once per module."""

from __future__ import annotations

import pytest

from statinterp.text.segmentation import build_pipeline


@pytest.fixture(scope="module")
def joined():
    """The line-joining segmentation (what ``find`` uses)."""
    return build_pipeline(join_lines=True)
