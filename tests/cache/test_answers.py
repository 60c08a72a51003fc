"""Answers of a slow lookup kept between processes (statinterp.cache.namespaces), and their use for
courts-db's court names in pin cites (statinterp.corpus.pin_cites)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from statinterp.cache.namespaces import StoredAnswers
from statinterp.cache.store import CacheWarning, default_cache_dir
from tests.support.paths import REPO_ROOT


def test_answers_are_kept_for_the_next_process_and_a_damaged_file_is_empty():
    answers = StoredAnswers("test-lookup", "v1")
    assert answers.get("a") is None and "a" not in answers
    answers.put("a", ["x", "y"])
    answers.save()
    assert answers.path.parent.parent == default_cache_dir() / "answers"  # the store's answers namespace
    again = StoredAnswers("test-lookup", "v1")
    assert again.get("a") == ["x", "y"]
    assert StoredAnswers("test-lookup", "v2").get("a") is None  # another version answers afresh
    answers.path.write_text("{not json")
    with pytest.warns(CacheWarning, match="discarding damaged answers cache entry"):
        assert StoredAnswers("test-lookup", "v1").get("a") is None
    assert not answers.path.exists()


def test_a_cache_folder_that_cannot_be_written_is_not_an_error(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("STATINTERP_CACHE", str(blocked / "cache"))
    answers = StoredAnswers("test-lookup", "v1")
    answers.put("a", 1)
    answers.save()  # nothing written, nothing raised
    assert answers.get("a") == 1
    answers.forget()  # or the answer would be written at exit, into the session's cache folder


def test_court_names_are_found_by_courts_db_once_across_processes(tmp_path):
    """A court name courts-db finds by its patterns (not by its exact name): the second process
    answers from the stored answers, without courts-db's find_court."""
    name = "Court of Appeals of Texas, Fourth District, San Antonio"
    code = (
        "import sys, courts_db\n"
        "from statinterp.corpus import pin_cites\n"
        "calls = []\n"
        "real = courts_db.find_court\n"
        "courts_db.find_court = lambda *a, **k: (calls.append(a), real(*a, **k))[1]\n"
        f"print(pin_cites.court_abbreviation({name!r}), len(calls))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "STATINTERP_CACHE": str(tmp_path)}  # none stored yet
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    abbr, calls = first.stdout.split()[:-1], int(first.stdout.split()[-1])
    assert calls >= 1 and abbr, first.stdout
    assert second.stdout.split()[:-1] == abbr and int(second.stdout.split()[-1]) == 0, second.stdout
    stored = list((tmp_path / "answers").rglob("*.bin"))
    assert stored and any(name.encode() in path.read_bytes() for path in stored)
