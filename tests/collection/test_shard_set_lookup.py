"""The lookup of find on each shard of a set (statinterp.collection.find.candidate_paragraphs on a
shard, statinterp.text.term_match._kept_spellings, Collection.occurring).

Here the shards' word lists are set aside (a shard without one: of an older set, or written
since its list was made). A small shard lacking a word of the term yields no paragraph after one statement (the words'
prefixes, fts_word_prefixes); a larger one after one or two (the longest word's tokens, then the
other words'); neither runs the pair query. Where every word is there, the spellings kept are
those kept by asking for every spelling at once (the lookup before)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from statinterp.app.collection_commands import example_sources
from statinterp.collection import find
from statinterp.collection.find import candidate_paragraphs
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import ShardSet, open_collection
from statinterp.collection.store import Collection
from statinterp.text.term_match import _kept_spellings, fts_word_options

TAX_COURT = "Marlowe Tax Court"  # the example sources' court with no "motor"


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lookup") / "by-court"
    ingest([example_sources()], folder, citations=False, shard_by="court")
    return folder


def _statements(shard: Collection, term: str) -> tuple[list, list[str]]:
    """The candidate paragraphs of ``term`` in ``shard`` and the SQL statements that found them
    (those run by the caller: FTS5's own statements, traced as ``-- ...``, are left out)."""
    assert shard.paragraph_count_estimate >= 0  # read once per shard, before the trace
    seen: list[str] = []
    shard.db.set_trace_callback(lambda sql: None if sql.startswith("--") else seen.append(sql))
    try:
        rows = list(candidate_paragraphs(shard, term))
    finally:
        shard.db.set_trace_callback(None)
    return rows, seen


def test_a_small_shard_lacking_a_word_is_skipped_after_one_prefix_statement(shard_set):
    with open_collection(shard_set) as shards:
        assert isinstance(shards, ShardSet)
        tax = shards.shards[TAX_COURT]
        tax.word_list = None  # as a shard without a word list (tests/collection/test_shard_words.py has those)
        assert tax.paragraph_count_estimate <= find.PREFIX_CHECK_PARAGRAPHS
        assert not tax.occurring({("motor",)})
        rows, seen = _statements(tax, "park motor")
        assert rows == []
        assert len(seen) == 1, seen
        assert '"motor\\" *' in seen[0] and "paragraph_pairs" not in seen[0]


def test_a_larger_shard_lacking_the_longest_word_is_skipped_after_one_statement(shard_set, monkeypatch):
    monkeypatch.setattr(find, "PREFIX_CHECK_PARAGRAPHS", 0)  # as in a shard above the prefix check's size
    with open_collection(shard_set) as shards:
        assert isinstance(shards, ShardSet)
        tax = shards.shards[TAX_COURT]
        tax.word_list = None  # as a shard without a word list (tests/collection/test_shard_words.py has those)
        assert tax.occurring({("motor",), ("park",)}) == {("park",)}
        rows, seen = _statements(tax, "motor park")  # "motor" is the longer word
        assert rows == []
        assert len(seen) == 1, seen
        assert "paragraph_pairs" not in seen[0] and " *" not in seen[0]


def test_a_larger_shard_lacking_a_shorter_word_is_skipped_without_a_pair_query(shard_set, monkeypatch):
    monkeypatch.setattr(find, "PREFIX_CHECK_PARAGRAPHS", 0)
    with open_collection(shard_set) as shards:
        assert isinstance(shards, ShardSet)
        tax = shards.shards[TAX_COURT]
        tax.word_list = None  # as a shard without a word list (tests/collection/test_shard_words.py has those)
        assert tax.occurring({("vehicle",)}) == {("vehicle",)}
        rows, seen = _statements(tax, "motor vehicle")  # "vehicle" is there, "motor" is not
        assert rows == []
        assert len(seen) == 2, seen
        assert not any("paragraph_pairs" in sql for sql in seen)
        # A shard with both words runs the pair query and finds the term.
        other = next(s for k, s in shards.shards.items() if s.occurring({("motor",)}))
        other.word_list = None
        rows, seen = _statements(other, "motor vehicle")
        assert rows
        assert any("paragraph_pairs MATCH" in sql for sql in seen)


def _kept_all_at_once(term: str, occurring) -> list[list[tuple[str, ...]]] | None:
    """The spellings kept by asking ``occurring`` for every spelling at once (the lookup before)."""
    words = fts_word_options(term)
    last = len(words) - 1
    candidates = {o for options, _ in words for o in options}
    candidates |= {o + ("s",) for i, (options, possessive) in enumerate(words) if possessive and i < last
                   for o in options}
    found = occurring(candidates)
    kept = []
    for i, (options, possessive) in enumerate(words):
        here = [o for o in options if o in found]
        if possessive and i < last:
            here += [o + ("s",) for o in here if o + ("s",) in found]
        kept.append(here)
    return kept if all(kept) else None


def test_the_spellings_kept_are_those_of_asking_for_every_spelling_at_once(shard_set):
    words = ("motor", "vehicle", "park", "vehicle's", "co-operative", "pre-employment", "zeppelin", "the", "of")
    terms = [" ".join(p) for p in itertools.permutations(words, 2)] + list(words)
    with open_collection(shard_set) as shards:
        assert isinstance(shards, ShardSet)
        parts: list[Collection | ShardSet] = [shards, *shards.shards.values()]
        kept_some = 0
        for part, term in itertools.product(parts, terms):
            kept = _kept_spellings(term, part.occurring)
            assert kept == _kept_all_at_once(term, part.occurring), (term, part)
            kept_some += kept is not None
        assert kept_some > len(parts)  # the comparison saw kept spellings, not only Nones


def test_the_lookup_threads_come_from_the_environment(monkeypatch):
    """STATINTERP_SHARD_THREADS sets how many threads look up a set's shards (never more than the
    shards); unset, one per CPU up to MAX_THREADS; a value that is not a whole number from 1 is a
    usage error naming the variable."""
    from statinterp.collection.shards import MAX_THREADS, THREADS_VARIABLE, lookup_threads
    from statinterp.errors import UsageError

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert lookup_threads(50) == min(os.cpu_count() or 1, MAX_THREADS)
    assert lookup_threads(1) == 1
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    assert (lookup_threads(50), lookup_threads(2)) == (3, 2)
    monkeypatch.setenv(THREADS_VARIABLE, " 1 ")
    assert lookup_threads(50) == 1
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(THREADS_VARIABLE, bad)
        with pytest.raises(UsageError, match=THREADS_VARIABLE):
            lookup_threads(5)


def test_find_over_a_set_finds_the_same_with_one_thread_or_several(shard_set, tmp_path, monkeypatch, capsys):
    from statinterp.collection.find import find_term
    from statinterp.collection.shards import THREADS_VARIABLE
    from tests.support.cli import assert_one_line_error, run_main

    ingest([example_sources()], tmp_path / "one", citations=False)
    with Collection.open(tmp_path / "one") as one:
        expected = {term: find_term(one, term).counts for term in ("vehicle", "motor vehicle", "park")}
    for threads in ("1", "2", "5"):
        monkeypatch.setenv(THREADS_VARIABLE, threads)
        with open_collection(shard_set) as shards:
            assert {term: find_term(shards, term).counts for term in expected} == expected, threads
    monkeypatch.setenv(THREADS_VARIABLE, "none")
    code, _, err = run_main(capsys, "find", "vehicle", "--collection", str(shard_set), "--out", str(tmp_path / "x.zip"))
    assert_one_line_error(code, err, THREADS_VARIABLE, "'none'")
    assert not (tmp_path / "x.zip").exists()
