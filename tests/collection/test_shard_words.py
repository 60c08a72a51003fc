"""Each shard's word list (statinterp.collection.shards): written when an ingest finishes a
shard, it lets a set's lookup pass over a shard lacking a word of the term without opening it,
is not used once its database has changed, and never changes what find finds."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from statinterp.collection.find import find_term
from statinterp.collection.ingest import ingest
from statinterp.collection.shards import (
    SET_WORDS_FILE,
    WORDS_FILE,
    Manifest,
    ShardedWriter,
    ShardWords,
    finish_set,
    finish_shard,
    open_collection,
    token_hash,
)
from statinterp.collection.store import Collection
from statinterp.text.term_match import lacks_a_word, term_pattern, word_tokens
from tests.support.cli import assert_one_line_error, run_main
from tests.support.databases import fts_tokens
from tests.support.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "data" / "example"


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory):
    folder = tmp_path_factory.mktemp("words") / "set"
    ingest([EXAMPLE], folder, citations=False, statistics=False, shard_by="court")
    return folder


def test_every_shard_an_ingest_writes_gets_a_list_of_its_tokens(shard_set):
    folders = [f for _, f in Manifest.load(shard_set).folders(shard_set)]
    assert len(folders) > 1
    for folder in folders:
        words = ShardWords.load(folder)
        assert words is not None, folder
        tokens, pairs = fts_tokens(folder), fts_tokens(folder, "paragraph_pairs")
        assert pairs and all("|" in p for p in pairs) and not any("|" in t for t in tokens)
        assert words.pairs and words.hashes.size == len(tokens) + len(pairs)
        assert words.holds(tokens | pairs) == tokens | pairs
        assert words.holds(["zzzqqqxx", "notawordanywhere", "zzzqqqxx|notawordanywhere"]) == set()


def test_a_set_opens_only_the_shards_whose_list_holds_every_word(shard_set, tmp_path):
    ingest([EXAMPLE], tmp_path / "one", citations=False, statistics=False)
    by_shard = {key: fts_tokens(folder) for key, folder in Manifest.load(shard_set).folders(shard_set)}
    rare = sorted(t for t in set().union(*by_shard.values()) if t.isalpha() and len(t) > 6
                  and sum(t in tokens for tokens in by_shard.values()) == 1)
    assert rare, "a word only one shard holds"
    with Collection.open(tmp_path / "one") as one:
        for term in ("motor vehicle", rare[0], f"{rare[0]} vehicle"):
            with open_collection(shard_set) as shards:
                assert shards.shards.opened() == []  # opening the set opens no shard
                a, b = find_term(one, term), find_term(shards, term)
                assert [list(t) for t in a.tables.values()] == [list(t) for t in b.tables.values()], term
                assert a.counts == b.counts
                may = shards.may_hold(term)
                assert sorted(shards.shards.opened()) == sorted(may), term  # the others were never opened
                for key in shards.selected:  # a shard passed over has no paragraph that can match
                    if key not in may:
                        folder = Manifest.load(shard_set).folder_of(shard_set, key)
                        assert not any(term_pattern(term).search(t) for t in _paragraphs(folder)), (term, key)
        with open_collection(shard_set) as shards:
            assert len(shards.may_hold(rare[0])) < len(shards.selected)
            assert find_term(shards, rare[0]).counts == find_term(one, rare[0]).counts


def _paragraphs(folder) -> list[str]:
    db = sqlite3.connect(folder / "collection.sqlite")
    try:
        return [text for (text,) in db.execute("SELECT text FROM paragraphs")]
    finally:
        db.close()


def test_a_shard_holding_the_words_but_never_side_by_side_is_passed_over(shard_set, tmp_path):
    """A term of two words both of which a shard holds, but never adjacent: the pairs in its list
    say no paragraph can match, so the set passes over it unopened (the words alone would not);
    find finds what the one file finds, and no paragraph of that shard matches the term."""
    ingest([EXAMPLE], tmp_path / "one", citations=False, statistics=False)
    shards = list(Manifest.load(shard_set).folders(shard_set))
    terms = []
    for key, folder in shards:
        tokens = sorted(t for t in fts_tokens(folder) if t.isalpha() and len(t) > 6)
        for first, second in zip(tokens, tokens[1:] + tokens[:1], strict=True):
            term = f"{first} {second}"
            words = ShardWords.load(folder)
            assert words is not None
            if not lacks_a_word(term, fts_tokens(folder).__contains__) and not words.may_match(term):
                terms.append((key, folder, term))
                break
    assert len(terms) >= 2, "shards holding two words never side by side"
    with Collection.open(tmp_path / "one") as one:
        for key, folder, term in terms:
            pattern = term_pattern(term)
            assert not any(pattern.search(text) for text in _paragraphs(folder)), term
            with open_collection(shard_set) as shards_open:
                assert key not in shards_open.may_hold(term)
                assert key not in shards_open.shards.opened()
                assert find_term(shards_open, term).counts == find_term(one, term).counts


def test_a_list_of_words_alone_is_not_used_and_finish_writes_it_anew(tmp_path):
    """A list of format 1 (words alone, by a statinterp before the pairs) describing its database
    as it is is not used: its shard would be passed over for every term of several words. The set
    asks the shard instead, and collection finish writes the list anew with the pairs."""
    folder = tmp_path / "set"
    ingest([EXAMPLE], folder, citations=False, statistics=False, shard_by="court")
    key, shard = next(iter(Manifest.load(folder).folders(folder)))
    (folder / SET_WORDS_FILE).unlink()
    words = ShardWords.load(shard)
    assert words is not None and words.pairs
    header = json.loads((shard / WORDS_FILE).read_bytes().split(b"\n")[1])
    old = sorted(token_hash(t) for t in fts_tokens(shard))
    (shard / WORDS_FILE).write_bytes(b"statinterp-words 1\n" + json.dumps(
        {k: header[k] for k in ("mtime_ns", "size")} | {"tokens": len(old)}).encode() + b"\n"
        + b"".join(h.to_bytes(8, "little") for h in old))
    assert ShardWords.load(shard) is None
    with open_collection(folder) as shards:
        assert key in shards.may_hold("zzzqqqxx motor")  # no list describes it: it is asked
    finish_set(folder)
    again = ShardWords.load(shard)
    assert again is not None and again.pairs
    assert (shard / WORDS_FILE).read_bytes().startswith(b"statinterp-words 2\n")


def test_a_list_whose_database_changed_since_is_not_used(shard_set, tmp_path):
    key, folder = next(iter(Manifest.load(shard_set).folders(shard_set)))
    assert ShardWords.load(folder) is not None
    saved = (folder / WORDS_FILE).read_bytes()
    try:
        stat = (folder / "collection.sqlite").stat()
        os.utime(folder / "collection.sqlite", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert ShardWords.load(folder) is None
        with open_collection(shard_set) as shards:
            assert key in shards.may_hold("zzzqqqxx motor")  # no list: the shard must be asked
    finally:
        os.utime(folder / "collection.sqlite", ns=(stat.st_atime_ns, stat.st_mtime_ns))
        (folder / WORDS_FILE).write_bytes(saved)
    assert ShardWords.load(folder) is not None


def test_a_damaged_or_foreign_list_is_not_used(tmp_path):
    ingest([EXAMPLE], tmp_path / "set", citations=False, statistics=False, shard_by="court")
    _, folder = next(iter(Manifest.load(tmp_path / "set").folders(tmp_path / "set")))
    data = (folder / WORDS_FILE).read_bytes()
    (folder / WORDS_FILE).write_bytes(data[:-3])  # cut short
    assert ShardWords.load(folder) is None
    (folder / WORDS_FILE).write_bytes(b"something else\n" + data)
    assert ShardWords.load(folder) is None
    finish_shard(folder)
    assert ShardWords.load(folder) is not None


def test_the_list_is_trusted_when_it_matches(tmp_path):
    """A list that matches its database decides: one claiming no tokens makes the set pass over
    the shard (what shows the list, not the database, was asked). Without the set's word index
    (tests/collection/test_set_words.py), each shard's own list is read."""
    ingest([EXAMPLE], tmp_path / "set", citations=False, statistics=False, shard_by="court")
    root = tmp_path / "set"
    (root / SET_WORDS_FILE).unlink()
    with open_collection(root) as shards:
        before = shards.may_hold("vehicle")
    assert before
    folder = Manifest.load(root).folder_of(root, before[0])
    header, _, _ = (folder / WORDS_FILE).read_bytes().partition(b"\n")
    meta = json.loads((folder / WORDS_FILE).read_bytes().split(b"\n")[1])
    (folder / WORDS_FILE).write_bytes(header + b"\n" + json.dumps({**meta, "tokens": 0}).encode() + b"\n")
    with open_collection(root) as shards:
        assert before[0] not in shards.may_hold("vehicle")


def test_a_stopped_ingest_leaves_lists_unused_and_the_next_finishes_them(tmp_path):
    root = tmp_path / "set"
    ingest([EXAMPLE], root, citations=False, statistics=False, shard_by="court")
    key, folder = next(iter(Manifest.load(root).folders(root)))
    db = sqlite3.connect(folder / "collection.sqlite")  # a write the list does not know of
    db.execute("UPDATE meta SET value = value WHERE key = 'format'")
    db.execute("INSERT INTO meta (key, value) VALUES ('note', 'x')")
    db.commit()
    db.close()
    assert ShardWords.load(folder) is None
    with pytest.raises(RuntimeError), ShardedWriter(root, "court"):
        raise RuntimeError("stopped")
    folders = [f for _, f in Manifest.load(root).folders(root)]
    # a stopped ingest finishes nothing; its writer opened every shard (the files changed): no list is used
    assert all(ShardWords.load(f) is None for f in folders)
    total, finished = finish_set(root)
    assert sorted(finished) == sorted(folders) and total == len(folders)
    assert all(ShardWords.load(f) is not None for f in folders)


def test_a_rerun_that_stores_nothing_refreshes_the_lists_without_finishing(tmp_path, monkeypatch):
    import statinterp.collection.shards as shard_words

    root = tmp_path / "set"
    ingest([EXAMPLE], root, citations=False, statistics=False, shard_by="court")
    folders = [f for _, f in Manifest.load(root).folders(root)]
    before = {f: (f / WORDS_FILE).read_bytes().split(b"\n", 2)[2] for f in folders}
    finished: list = []
    monkeypatch.setattr(shard_words, "finish_shard", finished.append)
    summary = ingest([EXAMPLE], root, citations=False, statistics=False, shard_by="court")
    assert summary.unchanged > 0 and summary.added == summary.replaced == 0
    assert finished == []  # no shard's text changed: no optimize, no new list of tokens
    for f in folders:
        assert ShardWords.load(f) is not None, f  # the lists describe the databases again
        assert (f / WORDS_FILE).read_bytes().split(b"\n", 2)[2] == before[f]
        db = sqlite3.connect(f / "collection.sqlite")
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        db.close()


def _varint(block: bytes, i: int) -> tuple[int, int]:
    value = 0
    for k in range(9):
        c = block[i]
        i += 1
        if k == 8:
            return (value << 8) | c, i
        value = (value << 7) | (c & 0x7F)
        if not c & 0x80:
            break
    return value, i


def fts_segments(database, table: str) -> int:
    """The number of segments of an FTS5 index (its structure record: a 4-byte cookie, then the
    numbers of levels and of segments as varints)."""
    db = sqlite3.connect(database)
    block = db.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()[0]
    db.close()
    _, i = _varint(block, 4)
    return _varint(block, i)[0]


def test_finishing_merges_the_full_text_segments(tmp_path):
    sources = sorted((EXAMPLE / "sources").iterdir())
    assert len(sources) > 1
    for source in sources:  # two ingests or more: more than one segment where nothing merges them
        ingest([source], tmp_path / "one", citations=False, statistics=False)
        ingest([source], tmp_path / "set", citations=False, statistics=False, shard_by="source")
    assert fts_segments(tmp_path / "one" / "collection.sqlite", "paragraphs_fts") > 1
    for _, folder in Manifest.load(tmp_path / "set").folders(tmp_path / "set"):
        for table in ("paragraphs_fts", "paragraph_pairs"):
            assert fts_segments(folder / "collection.sqlite", table) == 1, (folder, table)
    with open_collection(tmp_path / "set") as shards, Collection.open(tmp_path / "one") as one:
        assert find_term(shards, "vehicle").counts == find_term(one, "vehicle").counts


def test_word_tokens_are_the_tokens_the_index_holds(shard_set):
    """The term's tokens are FTS5's own (what a list is looked up with must be what it holds)."""
    tokens = set().union(*(fts_tokens(f) for _, f in Manifest.load(shard_set).folders(shard_set)))
    assert set(word_tokens("motor vehicle")) & tokens >= {"motor", "vehicle"}
    assert token_hash("vehicle") == token_hash("vehicle") != token_hash("vehicles")


def test_collection_finish_command(shard_set, tmp_path, capsys):
    code, out, err = run_main(capsys, "collection", "finish", str(shard_set))
    assert code == 0 and "0 of" in out and "up to date" in out, (out, err)
    ingest([EXAMPLE], tmp_path / "one", citations=False, statistics=False)
    code, out, err = run_main(capsys, "collection", "finish", str(tmp_path / "one"))
    assert_one_line_error(code, err, "not a set of shards")
