"""The set's word index (statinterp.collection.shards.SetWords): one file, written when a
set is finished, saying which shards' word lists hold each token. A lookup reads it instead of
every shard's list; it answers as the shards' own lists do, is not used for a shard whose
database changed since, and a damaged index is not used at all."""

from __future__ import annotations

import os
import sqlite3

import pytest

from statinterp.collection.find import find_term
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import (
    SET_WORDS_FILE,
    WORDS_FILE,
    Manifest,
    SetWords,
    ShardWords,
    finish_set,
    open_collection,
    write_set_words,
)
from statinterp.collection.store import Collection
from tests.support.databases import fts_tokens
from tests.support.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "data" / "example"
TERMS = ("motor vehicle", "vehicle", "zzzqqqxx motor", "navigation equipment", "the")


@pytest.fixture()
def shard_set(tmp_path):
    folder = tmp_path / "set"
    ingest([EXAMPLE], folder, citations=False, statistics=False, shard_by="court")
    return folder


def shards_of(root):
    return list(Manifest.load(root).folders(root))


def test_an_ingest_writes_the_index_and_it_answers_as_each_shards_list(shard_set):
    index = SetWords.load(shard_set)
    assert index is not None
    every = set().union(*(fts_tokens(f) | fts_tokens(f, "paragraph_pairs") for _, f in shards_of(shard_set)))
    asked = tuple(sorted(every)[::7] + ["zzzqqqxx", "notawordanywhere", "motor|vehicle", "zzzqqqxx|motor"])
    for key, folder in shards_of(shard_set):
        own, in_set = ShardWords.load(folder), index.shard(key, folder)
        assert own is not None and in_set is not None, key
        assert own.pairs and in_set.pairs, key
        held = set(asked) & (fts_tokens(folder) | fts_tokens(folder, "paragraph_pairs"))
        assert in_set.holds(asked) == own.holds(asked) == held, key
        for term in TERMS:
            assert in_set.may_match(term) == own.may_match(term), (key, term)


def test_the_index_decides_which_shards_are_asked(shard_set, tmp_path):
    """An index that says a shard holds no token makes the set pass over it, though the shard's own
    list holds the word: the index, not the lists, was read. Removing the index brings the lists back."""
    with open_collection(shard_set) as shards:
        before = shards.may_hold("vehicle")
    assert before
    key = before[0]
    folder = Manifest.load(shard_set).folder_of(shard_set, key)
    saved = (folder / WORDS_FILE).read_bytes()
    header, fingerprint, _ = saved.split(b"\n", 2)
    (folder / WORDS_FILE).write_bytes(header + b"\n" + fingerprint.replace(b'"tokens": ', b'"tokens": 0, "was": ')
                                      + b"\n")
    write_set_words(shard_set, shards_of(shard_set))  # an index made from a list without tokens
    (folder / WORDS_FILE).write_bytes(saved)  # the shard's own list holds the word again
    with open_collection(shard_set) as shards:
        assert key not in shards.may_hold("vehicle")
    (shard_set / SET_WORDS_FILE).unlink()
    with open_collection(shard_set) as shards:
        assert shards.may_hold("vehicle") == before


def test_a_shard_changed_since_the_index_is_asked(shard_set, tmp_path):
    """A shard whose database changed after the index was written is not answered from it: from its
    own list if that is newer, else it is opened; find still finds what the one file finds."""
    ingest([EXAMPLE], tmp_path / "one", citations=False, statistics=False)
    key, folder = shards_of(shard_set)[0]
    db = sqlite3.connect(folder / "collection.sqlite")  # a write neither the index nor the list knows of
    db.execute("INSERT INTO meta (key, value) VALUES ('note', 'x')")
    db.commit()
    db.close()
    index = SetWords.load(shard_set)
    assert index is not None and index.shard(key, folder) is None
    assert index.shard(*shards_of(shard_set)[1]) is not None  # the others are still described
    with open_collection(shard_set) as shards:
        assert key in shards.may_hold("zzzqqqxx motor")  # nothing describes it: it must be asked
    finish_set(shard_set)  # finishes the shard: new list, new index
    index = SetWords.load(shard_set)
    assert index is not None and index.shard(key, folder) is not None
    with open_collection(shard_set) as shards, Collection.open(tmp_path / "one") as one:
        assert key not in shards.may_hold("zzzqqqxx motor")
        for term in TERMS[:2]:
            assert find_term(shards, term).counts == find_term(one, term).counts


@pytest.mark.parametrize("damage", ["cut", "foreign", "empty"])
def test_a_damaged_index_is_not_used(shard_set, damage):
    by_shard = [fts_tokens(f) for _, f in shards_of(shard_set)]
    rare = next(t for t in sorted(set().union(*by_shard)) if t.isalpha() and sum(t in b for b in by_shard) == 1)
    path = shard_set / SET_WORDS_FILE
    data = path.read_bytes()
    path.write_bytes({"cut": data[:-5], "foreign": b"something else\n" + data, "empty": b""}[damage])
    assert SetWords.load(shard_set) is None
    with open_collection(shard_set) as shards:  # each shard's own list is read instead
        may = shards.may_hold(rare)
        assert len(may) == 1 < len(shards.selected)
        assert shards.shards.opened() == []


def test_collection_finish_writes_the_index_of_an_older_set(shard_set):
    os.remove(shard_set / SET_WORDS_FILE)
    total, finished = finish_set(shard_set)
    assert finished == [] and total == len(shards_of(shard_set))
    index = SetWords.load(shard_set)
    assert index is not None and all(index.shard(k, f) is not None for k, f in shards_of(shard_set))


def test_a_shards_query_made_from_its_list_finds_what_asking_it_finds(shard_set):
    """A shard with a word list makes a term's pair query from the list (find.candidate_paragraphs:
    term_match.fts_pair_query_from_tokens) instead of asking its index which spellings occur; the
    paragraphs it returns are those of the query made by asking."""
    from statinterp.collection.find import candidate_paragraphs
    from statinterp.text.term_match import fts_pair_query, fts_pair_query_from_tokens, list_questions

    terms = [*TERMS[:2], "navigation equipment", "leadership role in an organization",
             "distributive share of the income", "the motor vehicle", "vehicle's owner", "motor vehicles"]
    compared = 0
    with open_collection(shard_set) as shards:
        for key in shards.selected:
            shard = shards.shards[key]
            words = shard.word_list
            assert words is not None
            for term in terms:
                if len(term.split()) < 2:
                    continue
                made = fts_pair_query_from_tokens(term, words.holds(list_questions(term, True)), pairs_known=True)
                asked = fts_pair_query(term, shard.occurring)
                if made is None:  # no spelling of a word held, or no pair of a boundary: nothing can match
                    assert asked is None or not shard.paragraph_ids_matching(asked, pairs=True), (key, term)
                found = [r.paragraph_id for r in candidate_paragraphs(shard, term)]
                shard.word_list = None
                try:
                    assert [r.paragraph_id for r in candidate_paragraphs(shard, term)] == found, (key, term)
                finally:
                    shard.word_list = words
                compared += bool(found)
    assert compared >= 3  # some shards have candidates for some terms
