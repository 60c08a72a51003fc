"""Folders the tests read: the repository, the test fixtures and the annotated data."""

from __future__ import annotations

import os
from pathlib import Path

#: The checkout's root (the folder holding pyproject.toml).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: The test suite's folder (tests/).
TESTS = REPO_ROOT / "tests"
#: Small files kept for the tests (tests/fixtures/: genuine source files, an old label store).
FIXTURES = TESTS / "fixtures"
#: Where CI (and the development checkout) keep the annotated data: ../shared/data (or the folder
#: named by STATINTERP_SHARED_DATA, e.g. for a git worktree that is not beside it).
SHARED_DATA = Path(os.environ.get("STATINTERP_SHARED_DATA") or REPO_ROOT.parent / "shared" / "data")
REAL_DATA = SHARED_DATA / "statutory_interpretation"
