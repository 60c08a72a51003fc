"""Each shard's word list: which tokens its text index holds, kept beside the shard's database,
so that a lookup over a set of shards passes over a shard lacking a word of the term without
opening it (docs/collection.md, "Shards": "The word list").

At the end of an ingest, each shard it wrote is *finished* (:func:`finish_shard`): its two
full-text indexes are merged into one segment each (FTS5 ``optimize``: a lookup then reads one
segment instead of a dozen), it is left in SQLite's rollback-journal mode (a reader opens it in
half the time of a WAL database: no shared-memory file), and the tokens of its text index (``paragraphs_fts``, as FTS5
tokenized them: ``fts5vocab``) and of its pair index (``paragraph_pairs``: each two adjacent
tokens, ``first|second``; a pair token never equals a word token) are written to ``words.bin``
beside ``collection.sqlite``: a header line, then the sorted 8-byte hashes of the tokens
(BLAKE2b; two tokens sharing a hash only keep a shard that could have been passed over, never
the reverse). With the pairs, a shard that holds every word of a term of several words but
never two of them side by side is passed over too (:func:`~statinterp.text.term_match.may_match`).

The header records the database file's size and modification time when the list was made. A
list whose database has changed since (a later write by anything that did not finish the shard,
a copy that did not keep modification times), or whose database has a write-ahead log with
unmerged writes beside it, is not used: the shard is then asked, as without a list. A list can
only make a lookup skip work, never change what it finds.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import mmap
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from statinterp.collection.store import FILENAME, database_path
from statinterp.text.term_match import holders_of_term, list_questions, may_match

__all__ = ["SET_WORDS_FILE", "WORDS_FILE", "SetWords", "ShardWords", "finish_shard", "finish_stale", "refresh_list",
           "token_hash", "write_set_words", "write_words"]

#: The word list's file name, beside the shard's ``collection.sqlite``.
WORDS_FILE = "words.bin"
#: The first bytes of a word list (its format's version; 2: the pair index's tokens too).
MAGIC = b"statinterp-words 2\n"
#: The set's word index's file name, beside the set's ``manifest.json``.
SET_WORDS_FILE = "set-words.bin"
#: The first bytes of a set's word index (its format's version; 2: made of lists of version 2).
SET_MAGIC = b"statinterp-set-words 2\n"
#: A word list larger than this is mapped from its file, a smaller one read whole.
MAPPED_ABOVE = 1 << 20


def _hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


#: A token's 8-byte hash in a word list (the same in every process and on every machine).
token_hash = functools.lru_cache(maxsize=1 << 14)(_hash)


def _fingerprint(database: str | Path) -> dict[str, int] | None:
    """The database file's size and modification time; ``None`` when a write-ahead log with
    unmerged writes lies beside it (the file alone then is not the collection's state)."""
    database = os.fspath(database)
    wal = database + "-wal"
    if os.access(wal, os.F_OK):  # no exception raised where there is none (a finished shard): a set asks each shard
        with contextlib.suppress(FileNotFoundError):
            if os.stat(wal).st_size > 0:
                return None
    stat = os.stat(database)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _index_tokens(db: sqlite3.Connection, table: str) -> Iterator[str]:
    """The tokens of a full-text index (``fts5vocab``)."""
    db.execute(f"CREATE VIRTUAL TABLE temp.shard_words USING fts5vocab(main, {table}, row)")
    try:
        for (token,) in db.execute("SELECT term FROM temp.shard_words"):
            yield token
    finally:
        db.execute("DROP TABLE temp.shard_words")


def write_words(folder: str | Path) -> int:
    """Write the word list of the collection in ``folder`` (a shard; nothing must be writing it)
    and return the number of its tokens. Written to a temporary file first, then renamed: a list
    is whole or absent."""
    folder = Path(folder)
    database = database_path(folder)
    db = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        pairs = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'paragraph_pairs'").fetchone() is not None
        tables = ("paragraphs_fts", "paragraph_pairs") if pairs else ("paragraphs_fts",)
        hashes = np.unique(np.fromiter((_hash(t) for table in tables for t in _index_tokens(db, table)), dtype="<u8"))
    finally:
        db.close()
    fingerprint = _fingerprint(database)
    if fingerprint is None:  # cannot happen once every writer has closed; then no list
        return 0
    _write_list(folder, {**fingerprint, "tokens": int(hashes.size), "pairs": pairs}, hashes.tobytes())
    return int(hashes.size)


def finish_shard(folder: str | Path) -> int:
    """After an ingest wrote the shard in ``folder``: merge each of its full-text indexes into one
    segment (FTS5 ``optimize``), leave it in SQLite's rollback-journal mode, then write its word
    list (:func:`write_words`). Returns the number of tokens in the list (words and pairs)."""
    from statinterp.sqlite import transaction

    database = database_path(Path(folder))
    db = sqlite3.connect(database, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 30000")
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE name IN ('paragraphs_fts', 'paragraph_pairs')")}
        with transaction(db):
            for table in sorted(tables):
                db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    _rollback_journal(database)
    return write_words(folder)


def _rollback_journal(database: Path) -> None:
    """Leave the database in rollback-journal mode: a reader opens it in about half the time of
    a WAL one (no shared-memory file), and a set's lookup opens many shards. The next writer
    sets WAL again. While a reader holds it open the switch cannot be made: it stays in WAL
    mode, which is only slower."""
    db = sqlite3.connect(database, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 2000")
        db.execute("PRAGMA journal_mode = DELETE")
    except sqlite3.OperationalError:
        pass
    finally:
        db.close()


def refresh_list(folder: str | Path) -> bool:
    """For a shard opened by a writer that stored nothing in it (its text index as its list says):
    leave it in rollback-journal mode again and record the database's new size and modification
    time in its list, whose tokens stay. False (nothing done) when it has no list to refresh."""
    folder = Path(folder)
    try:
        data = (folder / WORDS_FILE).read_bytes()
        header, offset = _header(data)
    except (OSError, ValueError):
        return False
    _rollback_journal(database_path(folder))
    fingerprint = _fingerprint(database_path(folder))
    if fingerprint is None:
        return False
    _write_list(folder, {**header, **fingerprint}, data[offset:])
    return True


def _header(data: bytes) -> tuple[dict, int]:
    """A list's header (fingerprint and number of tokens) and where its hashes start; ValueError
    when ``data`` does not start as a word list."""
    if not data.startswith(MAGIC):
        raise ValueError("not a word list")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):end])
    if not isinstance(header, dict):
        raise ValueError("not a word list")
    return header, end + 1


def _write_list(folder: Path, header: dict, hashes: bytes) -> None:
    """The list file written whole: to a temporary file first, then renamed."""
    partial = folder / (WORDS_FILE + ".partial")
    with open(partial, "wb") as fh:
        fh.write(MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n")
        fh.write(hashes)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, folder / WORDS_FILE)


def finish_stale(folders: list[Path], finish: Callable[[list[Path]], object] | None = None,
                 unwritten: set[Path] | None = None) -> list[Path]:
    """Finish (:func:`finish_shard`) each shard of ``folders`` whose word list is missing or no
    longer describes its database (it was written since); return those folders. ``unwritten``:
    shards whose list was up to date when the ingest began and in which it stored no case (a
    writer opened them, which changes the database file, not its text): their lists are only
    refreshed (:func:`refresh_list`). ``finish``: how to finish the rest (e.g. on a Dask
    cluster), else one after the other here."""
    stale = [f for f in folders if ShardWords.load(f) is None]
    todo = [f for f in stale if not (unwritten and f in unwritten and refresh_list(f))]
    if todo:
        if finish is None:
            for folder in todo:
                finish_shard(folder)
        else:
            finish(todo)
    return todo


class ShardWords:
    """A shard's word list, read for lookups (:meth:`load`)."""

    def __init__(self, hashes: np.ndarray, fingerprint: dict[str, int] | None = None, pairs: bool = False):
        self.hashes = hashes
        #: The database's size and modification time the list describes.
        self.fingerprint = fingerprint or {}
        #: Whether the list holds the pair index's tokens too (a shard without the pair index: not).
        self.pairs = pairs

    @classmethod
    def load(cls, folder: str | Path) -> ShardWords | None:
        """The word list of the shard in ``folder``; ``None`` when it has none, or one that does
        not describe its database as it is now (see the module's text): the shard is then asked.
        A large list is mapped from the file, not read (a lookup reads the few pages it needs)."""
        folder = os.fspath(folder)
        try:
            with open(os.path.join(folder, WORDS_FILE), "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                head = fh.read() if size <= MAPPED_ABOVE else fh.read(4096)
                header, offset = _header(head)
                fingerprint = _fingerprint(os.path.join(folder, FILENAME))
                if fingerprint is None or any(header.get(k) != v for k, v in fingerprint.items()):
                    return None
                n = int(header.get("tokens", 0))
                if offset + 8 * n <= len(head):
                    data: bytes | mmap.mmap = head
                else:
                    data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        if len(data) != offset + 8 * n:
            return None
        return cls(np.frombuffer(data, dtype="<u8", count=n, offset=offset), fingerprint, header.get("pairs") is True)

    def _held(self, hashes: np.ndarray) -> np.ndarray:
        """Per hash of ``hashes`` (:func:`token_hash`), whether the shard's full-text indexes may hold
        its token (false: the token is in no paragraph of the shard)."""
        if self.hashes.size == 0:
            return np.zeros(hashes.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
        return np.asarray(self.hashes[at] == hashes)

    def holds(self, tokens: Iterable[str]) -> frozenset[str]:
        """Those of ``tokens`` that the shard's full-text indexes may hold (those left out it holds
        in no paragraph)."""
        tokens = list(tokens)
        hashes = np.fromiter((token_hash(t) for t in tokens), dtype="<u8", count=len(tokens))
        return frozenset(t for t, h in zip(tokens, self._held(hashes), strict=True) if h)

    def may_match(self, term: str) -> bool:
        """Whether a paragraph of the shard may match ``term`` (:func:`~statinterp.text.term_match.may_match`
        of the tokens and, if the list has them, the pairs it holds): false when a word of the term
        has no spelling all of whose tokens the shard holds or, with pairs, when two adjacent words
        of the term never stand side by side in it; then the shard need not be asked."""
        return may_match(term, self.holds(list_questions(term, self.pairs)), pairs_known=self.pairs)


class SetWords:
    """A set's word index (:data:`SET_WORDS_FILE`): per token hash, the shards whose word list
    holds it, made from the shards' lists when the set is finished (:func:`write_set_words`). A
    lookup reads this one file instead of every shard's list; for a shard whose database has
    changed since (its fingerprint differs), :meth:`shard` gives ``None`` and the shard's own list
    (or the shard itself) is asked."""

    def __init__(self, fingerprints: dict[str, dict[str, int]], hashes: np.ndarray, offsets: np.ndarray,
                 postings: np.ndarray, keys: list[str], pairs: dict[str, bool] | None = None):
        self._fingerprints = fingerprints
        self._index = {key: i for i, key in enumerate(keys)}
        self._pairs = pairs or {}
        self.hashes, self.offsets, self.postings = hashes, offsets, postings
        self._masks: dict[bytes, list[int]] = {}
        self._token_masks: dict[tuple[str, ...], list[int]] = {}
        self._for_term: dict[tuple[str, bool], int] = {}

    @classmethod
    def load(cls, root: str | Path) -> SetWords | None:
        """The word index of the set in ``root``; ``None`` when it has none (or a damaged one)."""
        try:
            with open(os.path.join(os.fspath(root), SET_WORDS_FILE), "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                data: bytes | mmap.mmap = (fh.read() if size <= MAPPED_ABOVE else
                                           mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
            if data[:len(SET_MAGIC)] != SET_MAGIC:
                return None
            end = data.find(b"\n", len(SET_MAGIC))
            header = json.loads(data[len(SET_MAGIC):end])
            n, p = int(header["hashes"]), int(header["postings"])
            posting_type = np.dtype(header["posting_type"])
            start = end + 1
            if len(data) != start + 8 * n + 4 * (n + 1) + posting_type.itemsize * p:
                return None
            hashes = np.frombuffer(data, dtype="<u8", count=n, offset=start)
            offsets = np.frombuffer(data, dtype="<u4", count=n + 1, offset=start + 8 * n)
            postings = np.frombuffer(data, dtype=posting_type, count=p, offset=start + 12 * n + 4)
            keys = [entry["key"] for entry in header["shards"]]
            fingerprints = {entry["key"]: {"size": entry["size"], "mtime_ns": entry["mtime_ns"]}
                            for entry in header["shards"]}
            pairs = {entry["key"]: entry.get("pairs") is True for entry in header["shards"]}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return cls(fingerprints, hashes, offsets, postings, keys, pairs)

    def shard(self, key: str, folder: str | Path) -> ShardWords | None:
        """The word list of shard ``key`` (in ``folder``) as this index holds it; ``None`` when the
        index does not describe the shard's database as it is now."""
        known = self._fingerprints.get(key)
        if known is None:
            return None
        try:
            fingerprint = _fingerprint(os.path.join(os.fspath(folder), FILENAME))
        except OSError:
            return None
        if fingerprint != known:
            return None
        return _ShardInSet(self, self._index[key], fingerprint, self._pairs.get(key, False))

    def holder_masks(self, hashes: np.ndarray) -> list[int]:
        """Per hash of ``hashes``, the shards whose list holds it, as a bit mask of their indexes
        (bit ``i``: shard ``i``; remembered: every shard of a lookup asks the same)."""
        remembered = self._masks.get(hashes.tobytes())
        if remembered is not None:
            return remembered
        found = [0] * hashes.size
        if self.hashes.size:
            at = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
            bits = np.zeros(len(self._index) + 8, dtype=bool)
            for n, (i, h) in enumerate(zip(at.tolist(), hashes.tolist(), strict=True)):
                if self.hashes[i] == h:
                    bits[:] = False
                    bits[self.postings[self.offsets[i]:self.offsets[i + 1]]] = True
                    found[n] = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
        if len(self._masks) < 4096:
            self._masks[hashes.tobytes()] = found
        return found

    def token_masks(self, tokens: tuple[str, ...]) -> list[int]:
        """:meth:`holder_masks` of the tokens ``tokens`` (remembered)."""
        remembered = self._token_masks.get(tokens)
        if remembered is None:
            remembered = self.holder_masks(np.fromiter((token_hash(t) for t in tokens), dtype="<u8",
                                                       count=len(tokens)))
            if len(self._token_masks) < 4096:
                self._token_masks[tokens] = remembered
        return remembered

    def shards_for(self, term: str, pairs: bool) -> int:
        """The shards in which ``term`` may match by their lists as this index holds them, as a bit
        mask of their indexes (:func:`~statinterp.text.term_match.holders_of_term`; ``pairs``: the
        lists hold the pair index's tokens), found once for all shards (remembered per term)."""
        remembered = self._for_term.get((term, pairs))
        if remembered is None:
            tokens = list_questions(term, pairs)
            masks = dict(zip(tokens, self.token_masks(tokens), strict=True))
            remembered = holders_of_term(term, masks.__getitem__, pairs_known=pairs)
            if len(self._for_term) < 4096:
                self._for_term[term, pairs] = remembered
        return remembered


class _ShardInSet(ShardWords):
    """One shard's word list read from its set's word index (:class:`SetWords`)."""

    def __init__(self, words: SetWords, index: int, fingerprint: dict[str, int], pairs: bool):
        super().__init__(np.zeros(0, dtype="<u8"), fingerprint, pairs)
        self._set, self._i = words, index

    def holds(self, tokens: Iterable[str]) -> frozenset[str]:
        tokens = tuple(tokens)
        i = self._i
        return frozenset(t for t, mask in zip(tokens, self._set.token_masks(tokens), strict=True) if mask >> i & 1)

    def may_match(self, term: str) -> bool:
        return bool(self._set.shards_for(term, self.pairs) >> self._i & 1)


def write_set_words(root: str | Path, shards: Iterable[tuple[str, Path]]) -> int:
    """Write the word index of the set in ``root`` (:class:`SetWords`) from the word lists of
    ``shards`` (key, folder) that describe their databases (a shard without one is left out: it is
    asked); return the number of shards in it. Written whole, then renamed."""
    entries: list[dict] = []
    parts: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for key, folder in shards:
        words = ShardWords.load(folder)
        if words is None:
            continue
        owners.append(np.full(words.hashes.size, len(entries), dtype="<u4"))
        parts.append(np.asarray(words.hashes))
        entries.append({"key": key, **words.fingerprint, "pairs": words.pairs})
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype="<u8")
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype="<u4")
    order = np.lexsort((owner, hashes))
    hashes, owner = hashes[order], owner[order]
    distinct, first = np.unique(hashes, return_index=True)
    offsets = np.append(first, hashes.size).astype("<u4")
    posting_type = "<u2" if len(entries) <= 1 << 16 else "<u4"
    header = {"shards": entries, "hashes": int(distinct.size), "postings": int(owner.size),
              "posting_type": posting_type}
    root = Path(root)
    partial = root / (SET_WORDS_FILE + ".partial")
    with open(partial, "wb") as fh:
        fh.write(SET_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n")
        fh.write(distinct.astype("<u8").tobytes())
        fh.write(offsets.tobytes())
        fh.write(owner.astype(posting_type).tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, root / SET_WORDS_FILE)
    return len(entries)
