"""The collection: one SQLite file (``collection.sqlite``) in a collection folder.

Tables (every id an integer given in insertion order, so the same ingest gives the same ids):

==================  ==========================================================================
``cases``           one row per case: source, source_id (identity), content_hash, CAP fields
``opinions``        case_id, position (0, 1, ... in the case), type, author, paged (the source gave page labels)
``paragraphs``      case_id, opinion_id, position (index of the line in the opinion text), text, page (the
                    reporter page the line starts on; NULL: unknown), page_starts (JSON ``[[offset, page],
                    ...]``: the pages starting inside it), footnote (1: the line is one of the opinion's
                    footnotes, stored after its paragraphs), number (the number the court gave the
                    paragraph, "17" for "¶ 17" or "{17}", taken off its text; on a footnote's line, the
                    footnote's number when a footnote has several lines; NULL: none)
``paragraphs_fts``  FTS5 index over paragraph text (external content: the text is stored once)
``paragraph_pairs`` FTS5 index of each paragraph's adjacent word pairs, rowids only (contentless;
                    :func:`~statinterp.text.term_match.fts_pairs_text`; ``find``'s lookup of terms
                    of several words, :func:`~statinterp.text.term_match.fts_pair_query`)
``citations``       per paragraph: kind (case / statute / journal), offsets, text, normalized
``token_stats``     per unit level and token (lower-cased lemma): df and cf over the collection
``level_totals``    per unit level: N (units holding a token) and total tokens
``sources``         every source path ingested, its format, cases read, when
``meta``            format version, analysis settings, statistics date
==================  ==========================================================================

An opinion's text is its paragraphs joined by line breaks; a case's text is its head matter
followed by its opinions (:attr:`~statinterp.sources.records.CaseRecord.text`), as in the data
set. Writes happen in transactions (WAL journal; :func:`statinterp.sqlite.transaction`): a
reader, or a process killed at any moment, sees whole batches of cases with their statistics,
never part of one. The writer's connection enforces the foreign keys (``REFERENCES``).

The format (schema version) is the ``format`` row of ``meta``: :data:`COLLECTION_SCHEMA` holds
the schema of a new collection and one migration step per older format (1 -> 2: the pair index;
2 -> 3: the page columns; 3 -> 4: paragraph numbers), applied in order by the next ingest, in the
transaction that opens the collection.
"""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import heapq
import itertools
import json
import os
import re
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Self, TypeVar

from statinterp.corpus.authority import CaseFilter
from statinterp.corpus.dataset import Case
from statinterp.corpus.pin_cites import first_page, page_at
from statinterp.errors import InputError, OutputError, StatinterpError, UsageError, printable
from statinterp.index import LEVELS
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.sqlite import Schema, select, select_as, transaction
from statinterp.text.term_match import PAIR_INDEX_OPTIONS, fts_pairs, fts_pairs_text

K = TypeVar("K")
T = TypeVar("T")

FILENAME = "collection.sqlite"
#: The collection's format (its schema version, the ``format`` row of ``meta``). Bump it when the
#: schema or the meaning of a stored value changes, with a step from the last format in
#: :data:`COLLECTION_SCHEMA`. Format 2 added ``paragraph_pairs``; format 3 the pages of paragraphs
#: (``page``, ``page_starts``), ``footnote`` and ``opinions.paged``; format 4 ``paragraphs.number``.
FORMAT_VERSION = 4

#: The pair index (format 2).
PAIR_INDEX = f"CREATE VIRTUAL TABLE IF NOT EXISTS paragraph_pairs USING fts5(pairs, content='', {PAIR_INDEX_OPTIONS})"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (path TEXT NOT NULL, format TEXT NOT NULL, cases INTEGER NOT NULL,
    skipped INTEGER NOT NULL, ingested_at TEXT NOT NULL, PRIMARY KEY (path, format));
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, source_id TEXT NOT NULL, content_hash TEXT NOT NULL,
    name TEXT NOT NULL, name_abbreviation TEXT NOT NULL, decision_date TEXT NOT NULL,
    docket_number TEXT NOT NULL, citations TEXT NOT NULL, court TEXT NOT NULL, jurisdiction TEXT NOT NULL,
    head_matter TEXT NOT NULL, judges TEXT NOT NULL, parties TEXT NOT NULL, attorneys TEXT NOT NULL,
    UNIQUE (source, source_id));
CREATE TABLE IF NOT EXISTS opinions (
    id INTEGER PRIMARY KEY, case_id INTEGER NOT NULL REFERENCES cases(id), position INTEGER NOT NULL,
    type TEXT NOT NULL, author TEXT, paged INTEGER NOT NULL DEFAULT 0, UNIQUE (case_id, position));
CREATE TABLE IF NOT EXISTS paragraphs (
    id INTEGER PRIMARY KEY, case_id INTEGER NOT NULL REFERENCES cases(id),
    opinion_id INTEGER NOT NULL REFERENCES opinions(id), position INTEGER NOT NULL, text TEXT NOT NULL,
    page TEXT, page_starts TEXT NOT NULL DEFAULT '[]', footnote INTEGER NOT NULL DEFAULT 0, number TEXT);
CREATE INDEX IF NOT EXISTS paragraphs_by_opinion ON paragraphs (opinion_id, position);
CREATE INDEX IF NOT EXISTS paragraphs_by_case ON paragraphs (case_id);
CREATE VIRTUAL TABLE IF NOT EXISTS paragraphs_fts USING fts5(
    text, content='paragraphs', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
{PAIR_INDEX};
CREATE TABLE IF NOT EXISTS citations (
    paragraph_id INTEGER NOT NULL REFERENCES paragraphs(id), start INTEGER NOT NULL, end INTEGER NOT NULL,
    kind TEXT NOT NULL, text TEXT NOT NULL, normalized TEXT NOT NULL, PRIMARY KEY (paragraph_id, start, end, kind))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS token_stats (
    level TEXT NOT NULL, token TEXT NOT NULL, df INTEGER NOT NULL, cf INTEGER NOT NULL,
    PRIMARY KEY (level, token)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS level_totals (
    level TEXT PRIMARY KEY, n_units INTEGER NOT NULL, total_tokens INTEGER NOT NULL);
"""

#: The order of :meth:`Collection.paragraphs_matching`'s paragraphs.
_MATCHING_ORDER = "p.case_id, o.position, p.position"

#: Columns format 3 added (table, column, definition): :func:`_add_pages` adds them.
PAGE_COLUMNS = (("opinions", "paged", "INTEGER NOT NULL DEFAULT 0"), ("paragraphs", "page", "TEXT"),
                ("paragraphs", "page_starts", "TEXT NOT NULL DEFAULT '[]'"),
                ("paragraphs", "footnote", "INTEGER NOT NULL DEFAULT 0"))


def _index_pairs(db: sqlite3.Connection, paragraph_id: int, text: str) -> None:
    """Add a paragraph's adjacent word pairs to the pair index (removed with the same
    :func:`~statinterp.text.term_match.fts_pairs_text` and FTS5's ``'delete'``)."""
    db.execute("INSERT INTO paragraph_pairs (rowid, pairs) VALUES (?, ?)", (paragraph_id, fts_pairs_text(text)))


def _add_pair_index(db: sqlite3.Connection) -> None:
    """Format 1 -> 2: the pair index, with the pairs of every stored paragraph."""
    db.execute(PAIR_INDEX)
    for row in select(db, "SELECT id, text FROM paragraphs ORDER BY id"):  # streamed, not held
        _index_pairs(db, row["id"], row["text"])


def _add_pages(db: sqlite3.Connection) -> None:
    """Format 2 -> 3: the page columns, every stored page unknown and no line a footnote (what
    the older formats knew)."""
    for table, column, definition in PAGE_COLUMNS:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")


#: The column format 4 added (table, column, definition): :func:`_add_numbers` adds it.
NUMBER_COLUMNS = (("paragraphs", "number", "TEXT"),)


def _add_numbers(db: sqlite3.Connection) -> None:
    """Format 3 -> 4: the paragraph numbers, none known for the stored paragraphs (an older format
    kept them in the text; the next ingest of a changed case stores them apart)."""
    for table, column, definition in NUMBER_COLUMNS:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")


def _record_format(db: sqlite3.Connection, version: int) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)", (str(version),))


#: The collection's schema: new collections get :data:`SCHEMA`; the next ``ingest`` into one of
#: an older format applies the steps from it (:meth:`CollectionWriter.__init__`, one transaction:
#: a crash leaves the old format, whole).
COLLECTION_SCHEMA = Schema(FORMAT_VERSION, SCHEMA, {1: _add_pair_index, 2: _add_pages, 3: _add_numbers},
                           _record_format)
#: Formats this statinterp reads; a collection of format 1 is found with the phrase query alone, one
#: of format 1 or 2 has no pages (every page unknown), and the next ``ingest`` into either upgrades it.
READABLE_FORMATS = COLLECTION_SCHEMA.readable


def stored_format(db: sqlite3.Connection) -> str | None:
    """The ``format`` row of a collection database's ``meta`` (None: no collection there yet)."""
    if select(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone() is None:
        return None
    row = select(db, "SELECT value FROM meta WHERE key = 'format'").fetchone()
    return None if row is None else row["value"]


def _described(db: sqlite3.Connection) -> tuple[str | None, bool, bool]:
    """A collection database's format (:func:`stored_format`), whether it has the pair index and
    whether its paragraphs have pages: one statement and one prepared only (a set's lookup opens
    many shards)."""
    try:
        found, has_pairs = db.execute("SELECT (SELECT value FROM meta WHERE key = 'format'), "
                                      "EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'paragraph_pairs')").fetchone()
    except sqlite3.OperationalError:  # no meta table: not a collection
        return stored_format(db), False, False
    try:
        db.execute("SELECT page FROM paragraphs LIMIT 0")  # prepared only: fails without the column
        has_pages = True
    except sqlite3.OperationalError:
        has_pages = False
    return found, bool(has_pairs), has_pages


def _has_numbers(db: sqlite3.Connection) -> bool:
    """Whether a collection database's paragraphs have the ``number`` column (format 4): one
    statement prepared only."""
    try:
        db.execute("SELECT number FROM paragraphs LIMIT 0")
    except sqlite3.OperationalError:
        return False
    return True


#: Meta keys that record when (left out of :func:`canonical_dump`).
TIME_KEYS = ("created_at", "statistics_date")


@dataclass(frozen=True)
class ParagraphRow:
    case_id: int
    opinion_id: int
    paragraph_id: int
    position: int
    text: str
    page: str | None = None  # the reporter page the line starts on (None: unknown)
    page_starts: tuple[tuple[int, str], ...] = ()  # (offset, page) of the pages starting inside it
    footnote: bool = False  # one of the opinion's footnotes (they follow its paragraphs)
    number: str | None = None  # the paragraph's number ("17": pin cite "¶ 17"; None: none or unknown)

    def page_at(self, offset: int) -> str | None:
        """The reporter page at character ``offset`` of the line (None: unknown)."""
        return page_at(self.page, self.page_starts, offset)


def line_pages(record: CaseRecord) -> list[list[str | None]]:
    """The reporter page each line of each opinion starts on (None: unknown).

    Only cases with page labels (``page_starts``) have pages. The text runs on from opinion to
    opinion (an opinion without labels of its own, such as a short concurrence, lies on the page
    the text before it ended on): a paragraph with no page starting at its offset 0 is on the
    page the paragraph before it ended on. The text before the case's first label is on the
    page before that label ("*758" -> 757: CourtListener's opinion HTML often lacks the label of
    the head matter's page), or, when the label is not a number, on the first page of the
    official citation. Footnotes, stored after an opinion's paragraphs, run on from the page its
    paragraphs end on, and do not move the text's page."""
    if not any(op.page_starts for op in record.opinions):  # no labels: no pages (and no citation to parse)
        return [[None] * len(op.lines) for op in record.opinions]
    page = first_page(record.official_citation) if record.citations else None
    first_label = next(starts[0][1] for op in record.opinions for starts in op.page_starts if starts)
    if first_label.isdigit() and int(first_label) > 1:  # the text before "*758" is on page 757
        page = str(int(first_label) - 1)
    out: list[list[str | None]] = []
    for op in record.opinions:
        if not op.page_starts:  # an opinion without labels lies on the page the text before it ended on
            out.append([page] * len(op.lines))
            continue
        pages: list[str | None] = []
        note_page = None
        for j in range(len(op.lines)):
            starts = op.page_starts[j] if j < len(op.page_starts) else ()
            if j == len(op.paragraphs):
                note_page = page  # the footnotes start where the paragraphs ended
            current = note_page if j >= len(op.paragraphs) else page
            pages.append(starts[0][1] if starts and starts[0][0] == 0 else current)
            last = starts[-1][1] if starts else current
            if j >= len(op.paragraphs):
                note_page = last
            else:
                page = last
        out.append(pages)
    return out


#: The columns of a :class:`ParagraphRow` without its pages, in ``paragraphs p``.
_PARAGRAPH_COLUMNS = "p.case_id, p.opinion_id, p.id AS paragraph_id, p.position, p.text"


def _paragraph_row(row: sqlite3.Row) -> ParagraphRow:
    """A paragraph from a row of :data:`_PARAGRAPH_COLUMNS` and the page columns."""
    raw = row["page_starts"]
    starts = () if raw == "[]" else tuple((int(at), str(label)) for at, label in json.loads(raw))
    return ParagraphRow(case_id=row["case_id"], opinion_id=row["opinion_id"], paragraph_id=row["paragraph_id"],
                        position=row["position"], text=row["text"], page=row["page"], page_starts=starts,
                        footnote=bool(row["footnote"]), number=row["number"])


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def database_path(folder: str | Path) -> Path:
    return Path(folder) / FILENAME


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error says the database file is damaged (not a bug in a query)."""
    name = getattr(exc, "sqlite_errorname", "") or ""  # SQLITE_CORRUPT_VTAB too: a damaged FTS5 index
    return isinstance(exc, sqlite3.DatabaseError) and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


@contextmanager
def damage_named(folder: str | Path) -> Iterator[None]:
    """Turn an SQLite error about the collection's database, raised inside, into one line naming
    the file (``find``, ``rank``, ``ingest``, ``collection info``): damaged, missing a table,
    on a full disk, or on a read-only folder or mount."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        problem = database_problem(exc, database_path(folder))
        if problem is None:
            raise
        raise problem from None
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise OutputError(f"cannot write {exc.filename or folder}: the disk is full; {_RESUME}") from None


_RESUME = ("the collection is consistent (as after its last whole batch): free space and run the same command "
           "again to complete it")


def database_problem(exc: sqlite3.DatabaseError, path: Path) -> StatinterpError | None:
    """The one-line error an SQLite error on the collection database ``path`` stands for, or None
    (a bug): damaged, missing one of its tables, a full disk, a read-only file, folder or mount."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if is_damage(exc):
        return InputError(path, f"is damaged ({exc}); restore a copy, or ingest its sources again into a new folder")
    if name == "SQLITE_FULL":
        return OutputError(f"cannot write {path}: the disk is full ({exc}); {_RESUME}")
    if name.startswith("SQLITE_READONLY") or (name == "SQLITE_CANTOPEN" and not os.access(path.parent, os.W_OK)):
        return OutputError(f"cannot write {path}: {exc} (a read-only file, folder or mount?); ingest into a folder "
                           "you can write")
    missing = re.match(r"no such table: (\S+)", str(exc))
    if missing is not None:
        return InputError(path, f"lacks its table {missing.group(1)!r}: damaged, or not made by statinterp; "
                          "restore a copy, or ingest its sources again into a new folder")
    return None


def check_integrity(db: sqlite3.Connection, folder: str | Path) -> None:
    """Raise :class:`InputError` if SQLite's ``quick_check`` finds the collection damaged (it reads
    every page once: ``ingest`` and ``collection info`` run it)."""
    problems = [row["quick_check"] for row in select(db, "PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise InputError(database_path(folder), f"is damaged ({'; '.join(problems)}); restore a copy, or ingest its "
                         "sources again into a new folder")


#: A reader waits this long for a lock (a writer's checkpoint, a recovery) before it fails.
READ_BUSY_SECONDS = 30.0


def _read_only_connection(path: Path) -> tuple[sqlite3.Connection, tuple[str | None, bool, bool]]:
    """A read-only connection to ``path`` and what :func:`_described` says of its database (the
    first statement: it reads the schema). A collection on a read-only folder or mount cannot get
    the shared-memory file a WAL database is read with: it is then opened ``immutable`` (nothing
    can write it there), unless a write-ahead log with unmerged writes lies beside it."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path))  # no symbolic link resolved: a set opens many shards
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, timeout=READ_BUSY_SECONDS)
    try:
        return db, _described(db)
    except sqlite3.OperationalError:
        db.close()
        if os.access(path.parent, os.W_OK):  # false on a read-only mount, for root too (EROFS)
            raise
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise InputError(path, "is in a read-only folder with writes not yet merged into it (its -wal file); "
                         "open it once where it can be written")
    db = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False, timeout=READ_BUSY_SECONDS)
    return db, _described(db)


def _lines(value: str) -> tuple[str, ...]:
    return tuple(line for line in value.split("\n") if line) if value else ()


#: The columns of ``cases`` that are a :class:`CaseRecord`'s fields (all but ``id`` and ``content_hash``).
_CASE_COLUMNS = ", ".join(f.name for f in fields(CaseRecord) if f.name != "opinions")


def dataset_case(record: CaseRecord, case_id: str, text: str) -> Case:
    """A stored case as the data set's :class:`~statinterp.corpus.dataset.Case` (id ``case_id``;
    ``text``: the whole case): the one place a source's record becomes a data set's case."""
    return Case(id=case_id, text=text, name=record.name, short_name=record.name_abbreviation,
                citation=record.official_citation, court=record.court, date=record.decision_date,
                source=record.source, original_id=record.source_id, jurisdiction=record.jurisdiction,
                docket_number=record.docket_number, alternate_citations=tuple(cite for _, cite in record.citations),
                attorneys=_lines(record.attorneys), parties=_lines(record.parties), judges=_lines(record.judges))


class Reader:
    """The read interface of a collection, written once over its *parts*: a single-file
    :class:`Collection` is one part (itself), a :class:`~statinterp.collection.shards.ShardSet`
    one part per shard (each a :class:`Collection`, opened when first used).

    * **lookups** (:meth:`paragraphs_matching`, :meth:`occurring`, :meth:`case_ids`) run over
      the :attr:`selected` parts and are merged in case id order (a case lies in one part, and a
      set's case and opinion ids are those of a single file of the same sources);
      :meth:`map_selected` runs a function on each selected part (a set's side by side);
    * **reads by id** (:meth:`case`, :meth:`opinions`, :meth:`record`, :meth:`opinion_paragraphs`)
      read the part holding the case or opinion (ids unique over a set); paragraph ids are each
      part's own, so a set's :meth:`citations` needs ``shard=``;
    * **statistics** (:meth:`token_statistics`, :meth:`level_totals`) are sums over the parts
      (every level's N and token total and every token's df and cf are sums over cases): all of
      them, or the selected ones with ``statistics="selected"``;
    * :meth:`meta` and :meth:`info` describe the whole.

    A subclass says only where its parts are: :meth:`_keys` (every part's key, in order),
    :meth:`_part` and :meth:`_part_folder`. An SQLite error in a part is one line naming the
    part's file (:func:`damage_named`).
    """

    folder: Path
    #: What a set's parts are keyed by (``None``: a single file, one part).
    shard_by: str | None = None

    def __init__(self, selected: Sequence[str], statistics: str = "all"):
        #: The keys of the parts lookups search (a set's: all, unless ``--shard`` names some).
        self.selected = list(selected)
        #: Where statistics come from: every part (``"all"``) or the selected ones (``"selected"``).
        self.statistics = statistics
        #: The filter lookups apply (:meth:`restrict`; ``None``: every case).
        self.case_filter: CaseFilter | None = None
        self._holders: dict[tuple[str, int], str] = {}  # (table, case or opinion id) -> key of its part
        self._analysis_checked = False

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- parts (what a subclass says) ---------------------------------------------------------
    def _keys(self) -> Sequence[str]:
        """Every part's key, in order."""
        raise NotImplementedError

    def _part(self, key: str) -> Collection:
        raise NotImplementedError

    def _part_folder(self, key: str) -> str | Path:
        raise NotImplementedError

    def _opened_parts(self) -> list[Collection]:
        """The parts opened so far (a part opened later is prepared by :meth:`_prepare_part`)."""
        raise NotImplementedError

    def _lookup_keys(self, term: str | None) -> list[str]:
        """The selected parts in which ``term`` may match (``None``: every selected part)."""
        return self.selected

    def _threads(self, parts: int) -> int:
        """How many threads run :meth:`map_selected` on ``parts`` parts."""
        return 1

    def _set_info(self, info: dict, parts: list[tuple[str, dict]]) -> dict:
        """:meth:`info` with what only a set has (``parts``: each part's key and facts)."""
        return info

    def statistics_description(self) -> str:
        """Which parts the statistics come from, for reports."""
        return f"the collection {self.folder}"

    # -- reading parts ------------------------------------------------------------------------
    @contextmanager
    def _reading(self, key: str) -> Iterator[Collection]:
        """The part of ``key`` (opened if need be), its SQLite errors one line naming its file."""
        with damage_named(self._part_folder(key)):
            yield self._part(key)

    def _prepare_part(self, part: Collection) -> None:
        """Apply :attr:`case_filter` to a part (as :meth:`restrict` does, when the part opens)."""
        with damage_named(part.folder):
            part.allowed_cases = part.matching_case_ids(self.case_filter) if self.case_filter else None

    def restrict(self, case_filter: CaseFilter | None) -> None:
        """Make the lookups (:meth:`paragraphs_matching`, and a part's
        :meth:`~Collection.paragraphs_with_ids`) return only the paragraphs of the cases
        ``case_filter`` keeps (``None`` or an empty filter: every case), in SQL, before a
        paragraph's text is read. Statistics and reads by id are not restricted."""
        self.case_filter = case_filter
        for part in self._opened_parts():
            self._prepare_part(part)

    def map_selected(self, func: Callable[..., T], *args: Any,
                     located: Callable[[T], Iterable[tuple[int, int]]] | None = None,
                     term: str | None = None) -> list[T]:
        """``func(part, *args)`` on each selected part, results in part order; a set's side by side
        (a thread pool; each part's connection is used by one thread at a time, and a part not
        yet open is opened by the thread that first uses it). ``located(result)``: the (case id,
        opinion id) pairs a part's result names, remembered as lying there (reads by id then go
        straight to it); ``term``: ``func`` looks up this term, and a part that cannot hold it is
        passed over (:meth:`_lookup_keys`)."""
        keys = self._lookup_keys(term)

        def run(key: str) -> T:
            with self._reading(key) as part:
                return func(part, *args)

        threads = self._threads(len(keys))
        if threads <= 1:
            results = [run(k) for k in keys]
        else:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="shard") as pool:
                results = list(pool.map(run, keys))
        if located is not None and len(self._keys()) > 1:
            for key, result in zip(keys, results, strict=True):
                for case_id, opinion_id in located(result):
                    self._holders[("cases", case_id)] = self._holders[("opinions", opinion_id)] = key
        return results

    def _holder(self, table: str, item_id: int) -> str:
        """The key of the part holding case or opinion ``item_id`` (``table``: cases or opinions)."""
        keys = self._keys()
        if len(keys) == 1:
            return keys[0]
        key = self._holders.get((table, item_id))
        if key is None:
            for k in keys:
                with self._reading(k) as part:
                    if part.db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (item_id,)).fetchone():
                        key = self._holders[(table, item_id)] = k
                        break
            else:
                raise UsageError(f"no {table[:-1]} {item_id} in the collection {self.folder}")
        return key

    # -- lookup -------------------------------------------------------------------------------
    def paragraphs_matching(self, fts_query: str, pairs: bool = False) -> Iterator[ParagraphRow]:
        """Paragraphs whose text matches an FTS5 query (``pairs``: a query of the pair index,
        :func:`~statinterp.text.term_match.fts_pair_query`), in (case, opinion position, paragraph
        position) order; only the allowed cases' (:meth:`restrict`)."""
        def rows(key: str) -> Iterator[ParagraphRow]:
            with self._reading(key) as part:
                table = part._fts_table(pairs)
                clause, extra = part._case_clause()
                sql = (f"SELECT {_PARAGRAPH_COLUMNS} FROM {table} JOIN paragraphs p ON p.id = {table}.rowid JOIN "
                       f"opinions o ON o.id = p.opinion_id WHERE {table} MATCH ?{clause} ORDER BY {_MATCHING_ORDER}")
                try:
                    found = select_as(part.db, ParagraphRow, sql, (fts_query, *extra))
                except sqlite3.OperationalError as exc:
                    raise UsageError(f"bad full-text query {fts_query!r}: {exc}") from None
                yield from found

        return _by_case([rows(k) for k in self.selected])

    def occurring(self, phrases: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
        """Those of ``phrases`` (sequences of single words) that occur in some paragraph of a
        selected part: per part, one statement asking the FTS5 index for each distinct word (or
        the part's word list, :attr:`Collection.word_list`), then, if some sequence of several
        words has them all, one statement asking for each such sequence: with the pair index, of a
        paragraph holding all its adjacent pairs (which keeps a sequence that may not occur: a
        superset, as the queries built from it allow), else of the phrase."""
        phrases = set(phrases)
        for word in {w for p in phrases for w in p}:
            if not word.isalnum():
                raise UsageError(f"not a single word: {word!r}")
        found: set[tuple[str, ...]] = set()
        for key in self.selected:
            with self._reading(key) as part:
                found |= part._occurring_here(phrases - found)
        return found

    def case_ids(self) -> list[int]:
        """The ids of the selected parts' cases, in order."""
        ids: list[int] = []
        for key in self.selected:
            with self._reading(key) as part:
                ids.extend(row[0] for row in part.db.execute("SELECT id FROM cases ORDER BY id"))
        return sorted(ids)

    # -- reads by id --------------------------------------------------------------------------
    def opinion_paragraphs(self, opinion_id: int) -> list[ParagraphRow]:
        """Every paragraph (line) of an opinion, in position order, with its pages."""
        with self._reading(self._holder("opinions", opinion_id)) as part:
            return part._opinion_rows(opinion_id)

    def case(self, case_id: int, opinions: list[dict] | None = None) -> Case:
        """The case as the data set's :class:`~statinterp.corpus.dataset.Case`, id ``c<case_id>``
        (``find``'s; ``text`` is the whole case). ``opinions``: the case's :meth:`opinions` if the
        caller has read them already (they are not read again)."""
        record = self._case_record(case_id)
        parts = [record.head_matter] if record.head_matter.strip() else []  # as CaseRecord.text
        parts.extend(o["text"] for o in (self.opinions(case_id) if opinions is None else opinions))
        return dataset_case(record, f"c{case_id}", "\n".join(parts))

    def opinions(self, case_id: int) -> list[dict]:
        """The case's opinions in order: id, type, author, position, text."""
        out = []
        with self._reading(self._holder("cases", case_id)) as part:
            for row in select(part.db, "SELECT id, type, author, position FROM opinions WHERE case_id = ? "
                              "ORDER BY position", (case_id,)).fetchall():
                lines = select(part.db, "SELECT text FROM paragraphs WHERE opinion_id = ? ORDER BY position",
                               (row["id"],))
                out.append({**row, "author": row["author"] or "",
                            "text": "\n".join(line["text"] for line in lines)})
        return out

    def record(self, case_id: int) -> CaseRecord:
        """The stored case as the record it was ingested from."""
        ops = []
        with self._reading(self._holder("cases", case_id)) as part:
            paged = "paged" if part.has_pages else "0 AS paged"
            for row in select(part.db, f"SELECT id, type, author, {paged} FROM opinions WHERE case_id = ? "
                              "ORDER BY position", (case_id,)).fetchall():
                rows = part._opinion_rows(row["id"])
                ops.append(OpinionRecord(type=row["type"], author=row["author"],
                                         paragraphs=tuple(r.text for r in rows if not r.footnote),
                                         footnotes=tuple(r.text for r in rows if r.footnote),
                                         page_starts=tuple(r.page_starts for r in rows) if row["paged"] else (),
                                         numbers=tuple(r.number or "" for r in rows if not r.footnote)
                                         if any(r.number for r in rows if not r.footnote) else (),
                                         note_numbers=tuple(r.number or "" for r in rows if r.footnote)
                                         if any(r.number for r in rows if r.footnote) else ()))
        return self._case_record(case_id, tuple(ops))

    def _case_record(self, case_id: int, opinions: tuple[OpinionRecord, ...] = ()) -> CaseRecord:
        """The stored case's fields (its columns are :class:`CaseRecord`'s fields) with ``opinions``."""
        with self._reading(self._holder("cases", case_id)) as part:
            row = select(part.db, f"SELECT {_CASE_COLUMNS} FROM cases WHERE id = ?", (case_id,)).fetchone()
        if row is None:
            raise UsageError(f"no case {case_id} in the collection {self.folder}")
        citations = tuple(tuple(cite) for cite in json.loads(row["citations"]))
        return CaseRecord(**{**row, "citations": citations, "opinions": opinions})

    def citations(self, paragraph_id: int, shard: str | None = None) -> list[dict]:
        """A paragraph's citations. Paragraph ids are each part's own: in a set, ``shard`` (the key
        of the paragraph's shard) is needed."""
        keys = self._keys()
        key = keys[0] if shard is None and len(keys) == 1 else shard
        if key is None or key not in keys:
            raise UsageError(f"paragraph ids are each shard's own in {self.folder}: name the shard "
                             f"({self.shard_by}=...) of paragraph {paragraph_id}")
        with self._reading(key) as part:
            return [dict(row) for row in select(
                part.db, "SELECT kind, start, end, text, normalized FROM citations WHERE paragraph_id = ? "
                "ORDER BY start, end, kind", (paragraph_id,))]

    # -- statistics ---------------------------------------------------------------------------
    def _statistics_keys(self) -> Sequence[str]:
        """The parts the statistics come from (checked to be analysed alike)."""
        self._check_analysis()
        return self.selected if self.statistics == "selected" else self._keys()

    def _check_analysis(self) -> None:
        """Statistics add up only if every part was analysed alike (checked once, when the
        statistics or the description are first read: it opens every part)."""
        if self._analysis_checked:
            return
        first = None
        for key in self._keys():
            with self._reading(key) as part:
                analysis = json.loads(part._stored_meta().get("analysis", "{}"))
            if first is None:
                first = (key, analysis)
            elif analysis != first[1]:
                raise InputError(database_path(part.folder), f"was analysed with other settings than the shard "
                                 f"{first[0]!r} of {self.folder} ({analysis} against {first[1]}): its statistics do "
                                 "not add up; ingest the sources again into a new folder")
        self._analysis_checked = True

    def token_statistics(self, level: str, tokens: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(df, cf) of each token (lower-cased lemmas), summed over the parts (all, or the selected
        ones with ``statistics="selected"``); (0, 0) if unseen."""
        _check_level(level)
        out = {t: (0, 0) for t in tokens}
        distinct = list(out)
        for key in self._statistics_keys():
            with self._reading(key) as part:
                part._require_statistics()
                for i in range(0, len(distinct), 500):
                    chunk = distinct[i:i + 500]
                    marks = ",".join("?" * len(chunk))
                    for token, df, cf in part.db.execute(
                            f"SELECT token, df, cf FROM token_stats WHERE level = ? AND token IN ({marks})",
                            [level, *chunk]):
                        old = out[token]
                        out[token] = (old[0] + df, old[1] + cf)
        return out

    def level_totals(self, level: str) -> tuple[int, int]:
        """(N units holding a token, total tokens) of a unit level: sums over the parts (as
        :meth:`token_statistics`)."""
        _check_level(level)
        n = total = 0
        for key in self._statistics_keys():
            with self._reading(key) as part:
                part._require_statistics()
                row = part.db.execute("SELECT n_units, total_tokens FROM level_totals WHERE level = ?",
                                      (level,)).fetchone()
            if row is not None:
                n, total = n + row[0], total + row[1]
        return n, total

    # -- description --------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        """The meta table; of a set, the first shard's, with the latest statistics date of any
        shard and the oldest format."""
        self._check_analysis()
        metas = []
        for key in self._keys():
            with self._reading(key) as part:
                metas.append(part._stored_meta())
        if len(metas) <= 1:
            return metas[0] if metas else {}
        out = dict(metas[0])
        out["statistics_date"] = max(m.get("statistics_date", "") for m in metas)
        out["format"] = str(min(int(m.get("format", 0)) for m in metas))
        return out

    def info(self) -> dict:
        """Counts, sources, statistics date and size on disk (``collection info``; of a set: the
        totals, and one entry per shard under ``shards``), after checking that each part's
        database is not damaged (:func:`check_integrity`)."""
        parts = []
        for key in self._keys():
            with self._reading(key) as part:
                parts.append((key, part._facts()))
        facts = [d for _, d in parts]
        cases = sum(d["cases"] for d in facts)
        size = sum(d["size_bytes"] for d in facts)
        sources: dict[tuple[str, str], dict] = {}
        for d in facts:
            for s in d["sources"]:
                known = sources.setdefault((s["path"], s["format"]), {**s, "cases": 0})
                known["cases"] += s["cases"]
                known["skipped"] = max(known["skipped"], s["skipped"])  # each shard records the source's skips
                known["ingested_at"] = max(known["ingested_at"], s["ingested_at"])
        meta = self.meta()
        info = {
            "collection": str(self.folder),
            "format": int(meta.get("format", 0)),
            "cases": cases, "opinions": sum(d["opinions"] for d in facts),
            "paragraphs": sum(d["paragraphs"] for d in facts),
            "citations": _sum_counts(d["citations"] for d in facts),
            "by_source": _sum_counts(d["by_source"] for d in facts),
            "sources": sorted(sources.values(), key=lambda s: (s["ingested_at"], s["path"])),
            "statistics": {lvl: {"units": sum(d["statistics"][lvl]["units"] for d in facts),
                                 "tokens": sum(d["statistics"][lvl]["tokens"] for d in facts)} for lvl in LEVELS},
            "vocabulary": self._vocabulary(),
            "statistics_date": meta.get("statistics_date", ""),
            "analysis": json.loads(meta.get("analysis", "{}")),
            "size_bytes": size,
            "bytes_per_case": round(size / cases, 1) if cases else None,
        }
        return self._set_info(info, parts)

    def _vocabulary(self) -> dict[str, int]:
        """Distinct tokens per level: of one part, counted in SQL; of several, their sorted token
        lists merged (tokens shared by parts counted once; memory does not grow with the
        vocabulary)."""
        keys = self._keys()
        if len(keys) == 1:
            with self._reading(keys[0]) as part:
                return dict(part.db.execute("SELECT level, count(*) FROM token_stats GROUP BY level ORDER BY level"))
        out: dict[str, int] = {}
        for level in LEVELS:
            streams = [self._part(k).db.execute("SELECT token FROM token_stats WHERE level = ? ORDER BY token",
                                                (level,)) for k in keys]
            n, last = 0, None
            for (token,) in heapq.merge(*streams):
                if token != last:
                    n, last = n + 1, token
            if n:
                out[level] = n
        return dict(sorted(out.items()))


def _by_case(parts: list[Iterator[ParagraphRow]]) -> Iterator[ParagraphRow]:
    """Rows of parts (each in case order) merged in case order (a case lies in one part)."""
    return parts[0] if len(parts) == 1 else heapq.merge(*parts, key=lambda r: r.case_id)


def _sum_counts(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in parts:
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


class Collection(Reader):
    """Read access to a collection folder (read-only; use as a context manager): the
    :class:`Reader` of one file, and a part of a shard set (its per-file state: the format's
    facts, the word list, the cases a filter allows, and the lookups ``find`` runs per part).

    Each call reads one consistent state (SQLite's WAL snapshot), whatever an ingest writing
    at the same time is doing.
    """

    def __init__(self, folder: Path, db: sqlite3.Connection, described: tuple[bool, bool] | None = None):
        super().__init__([""])
        self.folder = folder
        self.db = db
        has_pairs, has_pages = _described(db)[1:] if described is None else described
        #: Whether the collection has the pair index (format 2; :meth:`paragraphs_matching`'s ``pairs``).
        self.has_pairs = has_pairs
        #: Whether paragraphs have pages and footnote marks (format 3); without, every page is unknown.
        self.has_pages = has_pages
        #: Whether paragraphs have their numbers apart (format 4); without, none is known.
        self.has_numbers = _has_numbers(db) if has_pages else False
        self._page_columns = ("p.page, p.page_starts, p.footnote" if self.has_pages else
                              "NULL AS page, '[]' AS page_starts, 0 AS footnote")
        self._page_columns += ", p.number" if self.has_numbers else ", NULL AS number"
        #: The shard's word list (:class:`~statinterp.collection.shards.ShardWords`), set by
        #: the shard set that opened it: :meth:`occurring` then answers single words from it.
        self.word_list: Any = None
        #: The ids of the cases lookups may return (:meth:`restrict`; ``None``: every case).
        self.allowed_cases: list[int] | None = None

    @classmethod
    def open(cls, folder: str | Path) -> Collection:
        folder = Path(folder)
        path = database_path(folder)
        if not path.is_file():
            raise InputError(folder, f"is not a statinterp collection (no {FILENAME}); build one with "
                             "`statinterp ingest SOURCE... --collection DIR`")
        try:
            db, (found, has_pairs, has_pages) = _read_only_connection(path)
        except sqlite3.DatabaseError as exc:
            raise InputError(path, f"is not a readable collection database ({exc})") from None
        if found not in {str(f) for f in READABLE_FORMATS}:
            db.close()
            raise InputError(path, f"has collection format {found or 'unknown'}, this statinterp reads "
                             f"formats {', '.join(map(str, READABLE_FORMATS))}; ingest the sources again into a new "
                             "folder")
        return cls(folder, db, (has_pairs, has_pages))

    def close(self) -> None:
        self.db.close()

    # -- the one part -------------------------------------------------------------------------
    def _keys(self) -> Sequence[str]:
        return self.selected

    def _part(self, key: str) -> Collection:
        return self

    def _part_folder(self, key: str) -> str | Path:
        return self.folder

    def _opened_parts(self) -> list[Collection]:
        return [self]

    # -- per file: the filter -----------------------------------------------------------------
    def matching_case_ids(self, case_filter: CaseFilter) -> list[int]:
        """The ids of the cases ``case_filter`` keeps, in id order, chosen in SQL: each distinct
        (court, jurisdiction) stored is judged once (:meth:`CaseFilter.accepts_court`), then one
        statement selects the cases of the courts kept within the dates."""
        courts = [row["court"] + "\x1f" + row["jurisdiction"] for row in select(
            self.db, "SELECT DISTINCT court, jurisdiction FROM cases")
            if case_filter.accepts_court(row["court"], row["jurisdiction"])]
        if not courts:
            return []
        sql = ("SELECT id, source, citations FROM cases WHERE court || char(31) || jurisdiction IN "
               "(SELECT value FROM json_each(?))")
        args: list[Any] = [json.dumps(courts, ensure_ascii=False)]
        if case_filter.since:
            sql += " AND decision_date >= ?"
            args.append(case_filter.since)
        if case_filter.until:
            sql += " AND substr(decision_date, 1, ?) <= ?"
            args += [len(case_filter.until), case_filter.until]
        rows = select(self.db, sql + " ORDER BY id", args)
        if case_filter.published_only:
            return [row["id"] for row in rows if case_filter.published(row["source"], json.loads(row["citations"]))]
        return [row["id"] for row in rows]

    def _case_clause(self) -> tuple[str, tuple]:
        """The SQL condition (and its argument) restricting ``p`` to :attr:`allowed_cases`."""
        if self.allowed_cases is None:
            return "", ()
        return " AND p.case_id IN (SELECT value FROM json_each(?))", (json.dumps(self.allowed_cases),)

    def allowed_paragraph_ids(self) -> set[int] | None:
        """The ids of the allowed cases' paragraphs (:meth:`restrict`), from the index by case alone
        (no paragraph read); ``None``: every case is allowed."""
        if self.allowed_cases is None:
            return None
        return {row[0] for row in self.db.execute(
            "SELECT id FROM paragraphs WHERE case_id IN (SELECT value FROM json_each(?))",
            (json.dumps(self.allowed_cases),))}

    # -- per file: find's lookups -------------------------------------------------------------
    def paragraph_ids_matching(self, fts_query: str, pairs: bool = False) -> set[int]:
        """The ids of the paragraphs :meth:`paragraphs_matching` returns, from the index alone (no
        paragraph is read)."""
        table = self._fts_table(pairs)
        return {row[0] for row in self._fts_rows(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", fts_query)}

    def paragraphs_with_ids(self, ids: Iterable[int]) -> Iterator[ParagraphRow]:
        """The paragraphs of ``ids`` (those of :meth:`paragraph_ids_matching`), in
        :meth:`paragraphs_matching`'s order; only the allowed cases' (:meth:`restrict`)."""
        clause, extra = self._case_clause()
        sql = (f"SELECT {_PARAGRAPH_COLUMNS} FROM paragraphs p JOIN opinions o ON o.id = p.opinion_id "
               f"WHERE p.id IN (SELECT value FROM json_each(?)){clause} ORDER BY {_MATCHING_ORDER}")
        yield from select_as(self.db, ParagraphRow, sql, (json.dumps(sorted(ids)), *extra))

    def _fts_table(self, pairs: bool) -> str:
        if pairs and not self.has_pairs:
            raise UsageError(f"the collection {self.folder} has no pair index (format 1); ingest into it to add one")
        return "paragraph_pairs" if pairs else "paragraphs_fts"

    def _fts_rows(self, sql: str, fts_query: str) -> sqlite3.Cursor:
        try:
            return self.db.execute(sql, (fts_query,))
        except sqlite3.OperationalError as exc:
            raise UsageError(f"bad full-text query {fts_query!r}: {exc}") from None

    def _occurring_here(self, phrases: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
        """:meth:`occurring` in this file."""
        known = (self.word_list.holds({w for p in phrases for w in p}) if self.word_list is not None
                 else self._matching_any({w: f'"{w}"' for p in phrases for w in p}))
        longer = [p for p in phrases if len(p) > 1 and all(w in known for w in p)]
        if self.has_pairs:
            found = self._matching_any({p: " AND ".join(f'"{pair}"' for pair in fts_pairs(p)) for p in longer},
                                       pairs=True)
        else:
            found = self._matching_any({p: " + ".join(f'"{w}"' for w in p) for p in longer})
        return found | {p for p in phrases if len(p) == 1 and p[0] in known}

    def lacks_a_prefix(self, prefix_queries: Iterable[str]) -> bool:
        """Whether one of the FTS5 prefix queries (``"technolog" *``,
        :func:`~statinterp.text.term_match.fts_word_prefixes`) matches no paragraph: one statement."""
        queries = {q: q for q in prefix_queries}
        return len(self._matching_any(queries)) < len(queries)

    @functools.cached_property
    def paragraph_count_estimate(self) -> int:
        """The largest paragraph id (one index seek): about the number of paragraphs."""
        return self.db.execute("SELECT coalesce(max(id), 0) FROM paragraphs").fetchone()[0]

    def _matching_any(self, queries: dict[K, str], pairs: bool = False) -> set[K]:
        """The keys of ``queries`` (key -> FTS5 query) whose query matches some paragraph: one
        statement for them all (each query stops at its first match)."""
        if not queries:
            return set()
        keys = list(queries)
        table = "paragraph_pairs" if pairs else "paragraphs_fts"
        rows = self.db.execute(f"SELECT key FROM json_each(?) WHERE EXISTS (SELECT 1 FROM {table} "
                               f"WHERE {table} MATCH json_each.value)", (json.dumps([queries[k] for k in keys]),))
        return {keys[i] for (i,) in rows}

    # -- per file: rows the reader assembles --------------------------------------------------
    def _opinion_rows(self, opinion_id: int) -> list[ParagraphRow]:
        return [_paragraph_row(row) for row in select(
            self.db, f"SELECT {_PARAGRAPH_COLUMNS}, {self._page_columns} FROM paragraphs p "
            "WHERE p.opinion_id = ? ORDER BY p.position", (opinion_id,))]

    def _stored_meta(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in select(self.db, "SELECT key, value FROM meta")}

    def _require_statistics(self) -> None:
        if json.loads(self._stored_meta().get("analysis", "{}")).get("statistics", True) is False:
            raise UsageError(f"the collection {self.folder} was ingested without statistics; ingest its sources "
                             "again into a new folder")

    def _facts(self) -> dict:
        """This file's part of :meth:`info`, after checking that it is not damaged."""
        def count(table: str) -> int:
            return select(self.db, f"SELECT count(*) AS n FROM {table}").fetchone()["n"]

        def counts(table: str, column: str) -> dict:  # value -> number of rows, in value order
            return {row["value"]: row["n"] for row in select(
                self.db, f"SELECT {column} AS value, count(*) AS n FROM {table} GROUP BY {column} ORDER BY {column}")}

        check_integrity(self.db, self.folder)
        files = [p for p in self.folder.iterdir() if p.name.startswith(FILENAME)]
        return {
            "format": int(self._stored_meta().get("format", 0)),
            "cases": count("cases"), "opinions": count("opinions"), "paragraphs": count("paragraphs"),
            "citations": counts("citations", "kind"), "by_source": counts("cases", "source"),
            "sources": [dict(row) for row in select(self.db, "SELECT path, format, cases, skipped, ingested_at "
                                                    "FROM sources ORDER BY ingested_at, path")],
            "statistics": {lvl: dict(select(self.db, "SELECT n_units AS units, total_tokens AS tokens FROM "
                                            "level_totals WHERE level = ?", (lvl,)).fetchone() or
                                     {"units": 0, "tokens": 0}) for lvl in LEVELS},
            "size_bytes": sum(p.stat().st_size for p in files),
        }


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise UsageError(f"unknown unit level {level!r}; use one of {', '.join(LEVELS)}")


def canonical_dump(folder: str | Path) -> Iterator[str]:
    """Every stored row, table by table in key order, one line each, without the times of ingest:
    equal dumps mean equal collections, however (and by which engine) they were written."""
    with Collection.open(folder) as c:
        db = c.db
        for key, value in db.execute("SELECT key, value FROM meta ORDER BY key"):
            if key not in TIME_KEYS:
                yield f"meta\t{key}\t{value}"
        for row in db.execute("SELECT path, format, cases, skipped FROM sources ORDER BY path, format"):
            yield "sources\t" + json.dumps(row)
        for table, order in (("cases", "id"), ("opinions", "id"), ("paragraphs", "id"),
                             ("citations", "paragraph_id, start, end, kind"), ("token_stats", "level, token"),
                             ("level_totals", "level")):
            for row in db.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                yield f"{table}\t" + json.dumps(row, ensure_ascii=False)
        if c.has_pairs:  # contentless: its content is what its vocabulary says (pair, paragraph id)
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.pair_instances "
                       "USING fts5vocab(main, paragraph_pairs, instance)")
            for row in db.execute("SELECT term, doc FROM temp.pair_instances ORDER BY term, doc"):
                yield "paragraph_pairs\t" + json.dumps(row, ensure_ascii=False)


#: The meta key an ingest sets when it begins and removes at a clean finish: while it is there, the
#: collection may lack cases (an ingest stopped by Ctrl-C, SIGTERM, a full disk, a source that
#: cannot be read); its value: ``{"command": ..., "started_at": ...}``.
INGEST_KEY = "ingest_in_progress"
#: The meta key of a shard's own key value in its set (checked when the set opens the shard).
SHARD_KEY = "shard_key"


def unfinished_ingest_of(meta: dict[str, str]) -> dict | None:
    """The unfinished ingest a collection's meta records (``command``, ``started_at``), or None."""
    raw = meta.get(INGEST_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"command": "", "started_at": ""}


class CollectionWriter:
    """Adds prepared cases to a collection folder (creating it), one transaction per batch.

    ``check=False`` skips the integrity check of an existing collection (:func:`check_integrity`:
    it reads every page): for a writer whose caller checked it earlier in the same ingest (the
    write tasks of a shard set, :mod:`statinterp.collection.ingest`)."""

    def __init__(self, folder: str | Path, analysis: dict | None = None, check: bool = True):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the collection folder {self.folder}: {exc.strerror or exc}") from None
        if any(self.folder.iterdir()) and not database_path(self.folder).exists():
            raise UsageError(f"{self.folder} is a folder with other files and no {FILENAME}; give an empty or "
                             "new folder for a new collection")
        try:
            self.db = sqlite3.connect(database_path(self.folder), isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA busy_timeout = 60000")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: consistent after any crash
            self.db.execute("PRAGMA foreign_keys = ON")  # every write keeps the schema's REFERENCES
            with transaction(self.db):
                self._open(analysis, check)
        except sqlite3.DatabaseError as exc:
            problem = database_problem(exc, database_path(self.folder))
            if problem is not None and not is_damage(exc):  # a full disk, a read-only folder or mount
                raise problem from None
            raise InputError(database_path(self.folder), f"is not a usable collection database ({exc})") from None

    def _open(self, analysis: dict | None, check: bool = True) -> None:
        """Create the collection, or check the stored one (not damaged, a readable format, the
        same analysis settings) and bring it to the current format, in the caller's transaction."""
        db = self.db
        found = stored_format(db)
        if found is None:
            COLLECTION_SCHEMA.create_in(db)
            now = _now()
            db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                ("created_at", now), ("statistics_date", now),
                ("analysis", json.dumps(analysis or {}, sort_keys=True))])
            db.executemany("INSERT INTO level_totals VALUES (?, 0, 0)", [(lvl,) for lvl in LEVELS])
            return
        if check:  # an ingest never adds to a damaged collection
            check_integrity(db, self.folder)
        if found not in {str(f) for f in READABLE_FORMATS}:
            raise InputError(self.folder, f"holds a collection of format {found}; this statinterp writes "
                             f"format {FORMAT_VERSION}: use a new folder")
        stored = select(db, "SELECT value FROM meta WHERE key = 'analysis'").fetchone()["value"]
        if analysis is not None and json.loads(stored) != analysis:
            raise UsageError(f"{self.folder}: the collection's statistics were made with other analysis "
                             f"settings ({stored}); ingest into a new folder")
        COLLECTION_SCHEMA.upgrade(db, int(found))

    def claim_shard(self, key: str) -> None:
        """Record (once) that this collection is the shard of ``key`` of a set (:data:`SHARD_KEY`):
        a set checks it when it opens the shard, so a shard's database copied over another's is
        named, never read as the other. Raises :class:`InputError` if it records another key."""
        self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (SHARD_KEY, key))
        found = select(self.db, "SELECT value FROM meta WHERE key = ?", (SHARD_KEY,)).fetchone()["value"]
        if found != key:
            raise InputError(database_path(self.folder), f"holds the shard {found!r}, not {key!r} as the set's "
                             "manifest lists it (a shard's database copied over another's?); restore it, or ingest "
                             "the sources again into a new folder")

    def mark_ingest(self, command: str | None = None) -> None:
        """Record in the meta table that an ingest has begun (``command``: the command line that
        completes it); :meth:`unmark_ingest` clears it at a clean finish (:data:`INGEST_KEY`)."""
        value = json.dumps({"command": command or "", "started_at": _now()}, ensure_ascii=False)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (INGEST_KEY, value))

    def unmark_ingest(self) -> None:
        self.db.execute("DELETE FROM meta WHERE key = ?", (INGEST_KEY,))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> CollectionWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def known_hash(self, source: str, source_id: str) -> str | None:
        row = select(self.db, "SELECT content_hash FROM cases WHERE source = ? AND source_id = ?",
                     (source, source_id)).fetchone()
        return row["content_hash"] if row else None

    def max_ids(self) -> tuple[int, int]:
        """The largest case id and opinion id stored (0 when none)."""
        row = select(self.db, "SELECT (SELECT coalesce(max(id), 0) FROM cases) AS cases, "
                     "(SELECT coalesce(max(id), 0) FROM opinions) AS opinions").fetchone()
        return row["cases"], row["opinions"]

    def write(self, prepared: Iterable, reprepare=None,
              ids: Callable[[CaseRecord], tuple[int, int]] | None = None) -> dict[str, int]:
        """Store prepared cases in one transaction: new ones are added, changed ones replace the
        stored case (``reprepare(record)`` gives the old case's statistics to subtract),
        unchanged ones are left alone. Returns counts of added / replaced / unchanged cases and
        of the opinions and paragraphs added.

        ``ids(record)`` gives a stored case its id and its first opinion's id (the opinions'
        follow): a shard set's writer allocates them over the whole set
        (:mod:`statinterp.collection.shards`); without it SQLite gives the next ids."""
        counts = {"added": 0, "replaced": 0, "unchanged": 0, "opinions": 0, "paragraphs": 0}
        stats: dict[str, dict[str, list[int]]] = {}
        totals = {lvl: [0, 0] for lvl in LEVELS}
        db = self.db
        text_work: list[tuple[bool, int, str]] = []  # the full-text indexing, done after the rows
        with transaction(db):
            for case in prepared:
                rec = case.record
                row = select(db, "SELECT id, content_hash FROM cases WHERE source = ? AND source_id = ?",
                             (rec.source, rec.source_id)).fetchone()
                if row is not None and row["content_hash"] == case.content_hash:
                    counts["unchanged"] += 1
                    continue
                if row is not None:
                    old = Collection(self.folder, db).record(row["id"])
                    self._add_counts(stats, totals, reprepare(old).counts, -1)
                    self._delete_case(row["id"], text_work)
                    counts["replaced"] += 1
                else:
                    counts["added"] += 1
                n_ops, n_paras = self._insert_case(case, text_work, ids(rec) if ids is not None else None)
                counts["opinions"] += n_ops
                counts["paragraphs"] += n_paras
                self._add_counts(stats, totals, case.counts, +1)
            self._index_text(text_work)
            self._apply_stats(stats, totals)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('statistics_date', ?)", (_now(),))
        return counts

    def record_source(self, path: str, fmt: str, cases: int, skipped: int) -> None:
        # a path that is not UTF-8 (its bytes kept by Python as lone surrogates) is stored with them escaped
        self.db.execute("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?)",
                        (printable(os.path.abspath(path)), fmt, cases, skipped, _now()))

    @staticmethod
    def _add_counts(stats: dict, totals: dict, counts: dict, sign: int) -> None:
        """Add ``sign`` × a case's counts to ``stats`` (level -> token -> [df, cf]) and ``totals``."""
        for lvl, c in counts.items():
            totals[lvl][0] += sign * c.n_units
            totals[lvl][1] += sign * c.total_tokens
            level = stats.setdefault(lvl, {})
            for word, df, cf in zip(c.words, c.df.tolist(), c.cf.tolist(), strict=True):
                entry = level.get(word)
                if entry is None:
                    level[word] = [sign * df, sign * cf]
                else:
                    entry[0] += sign * df
                    entry[1] += sign * cf

    def _apply_stats(self, stats: dict, totals: dict) -> None:
        db = self.db
        # in key order: the upserts walk token_stats' B-tree once, front to back
        rows = [(lvl, word, v[0], v[1]) for lvl in sorted(stats) for word, v in sorted(stats[lvl].items())
                if v[0] or v[1]]
        db.executemany("INSERT INTO token_stats VALUES (?, ?, ?, ?) ON CONFLICT (level, token) DO UPDATE SET "
                       "df = df + excluded.df, cf = cf + excluded.cf", rows)
        if any(v[0] < 0 or v[1] < 0 for level in stats.values() for v in level.values()):
            db.execute("DELETE FROM token_stats WHERE df <= 0")
        db.executemany("UPDATE level_totals SET n_units = n_units + ?, total_tokens = total_tokens + ? "
                       "WHERE level = ?", [(n, t, lvl) for lvl, (n, t) in totals.items()])

    def _index_text(self, work: list[tuple[bool, int, str]]) -> None:
        """A batch's full-text work, in order: ``(False, id, text)`` adds a paragraph to both FTS5
        indexes, ``(True, id, text)`` removes it (FTS5's ``'delete'``, with the text it was added
        with). It follows the batch's rows: with foreign keys on, a DELETE from a table that
        others reference opens a statement journal, at which FTS5 writes out its pending changes;
        interleaved with the deletes of replaced cases, that made replacing cost 20 % more CPU."""
        db = self.db
        for removing, run in itertools.groupby(work, key=lambda item: item[0]):
            rows = [(pid, text) for _, pid, text in run]
            pairs = [(pid, fts_pairs_text(text)) for pid, text in rows]
            if removing:
                db.executemany("INSERT INTO paragraphs_fts (paragraphs_fts, rowid, text) VALUES ('delete', ?, ?)", rows)
                db.executemany("INSERT INTO paragraph_pairs (paragraph_pairs, rowid, pairs) VALUES ('delete', ?, ?)",
                               pairs)
            else:
                db.executemany("INSERT INTO paragraphs_fts (rowid, text) VALUES (?, ?)", rows)
                db.executemany("INSERT INTO paragraph_pairs (rowid, pairs) VALUES (?, ?)", pairs)

    def _insert_case(self, case, text_work: list[tuple[bool, int, str]],
                     ids: tuple[int, int] | None = None) -> tuple[int, int]:
        """Insert a prepared case's rows (``ids``: its id and its first opinion's, see :meth:`write`);
        its paragraphs' full-text indexing goes to ``text_work``."""
        db = self.db
        r = case.record
        case_id, first_opinion = ids if ids is not None else (None, None)
        cur = db.execute(
            "INSERT INTO cases (id, source, source_id, content_hash, name, name_abbreviation, decision_date, "
            "docket_number, citations, court, jurisdiction, head_matter, judges, parties, attorneys) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (case_id, r.source, r.source_id, case.content_hash, r.name, r.name_abbreviation, r.decision_date,
             r.docket_number, json.dumps([list(c) for c in r.citations], ensure_ascii=False), r.court,
             r.jurisdiction, r.head_matter, r.judges, r.parties, r.attorneys))
        case_id = int(cur.lastrowid or 0)
        paragraph_ids: dict[tuple[int, int], int] = {}
        n_paras = 0
        pages = line_pages(r)
        for i, op in enumerate(r.opinions):
            oid = db.execute("INSERT INTO opinions (id, case_id, position, type, author, paged) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             (None if first_opinion is None else first_opinion + i, case_id, i, op.type, op.author,
                              int(bool(op.page_starts)))).lastrowid or 0
            n_paragraphs = len(op.paragraphs)
            for j, text in enumerate(op.lines):
                starts = json.dumps([list(s) for s in op.page_starts[j]] if j < len(op.page_starts) else [],
                                    ensure_ascii=False)
                number = ((op.numbers[j] or None if j < len(op.numbers) else None) if j < n_paragraphs else
                          (op.note_numbers[j - n_paragraphs] or None if j - n_paragraphs < len(op.note_numbers)
                           else None))
                pid = db.execute("INSERT INTO paragraphs (case_id, opinion_id, position, text, page, page_starts, "
                                 "footnote, number) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 (case_id, oid, j, text, pages[i][j], starts, int(j >= n_paragraphs),
                                  number)).lastrowid or 0
                text_work.append((False, pid, text))
                paragraph_ids[(i, j)] = pid
                n_paras += 1
        db.executemany("INSERT OR IGNORE INTO citations VALUES (?, ?, ?, ?, ?, ?)",
                       [(paragraph_ids[(c.opinion, c.paragraph)], c.start, c.end, c.kind, c.text, c.normalized)
                        for c in case.citations])
        return len(r.opinions), n_paras

    def _delete_case(self, case_id: int, text_work: list[tuple[bool, int, str]]) -> None:
        """Delete a stored case's rows, children first (foreign keys are on); the removal of its
        paragraphs from the full-text indexes goes to ``text_work``."""
        db = self.db
        db.execute("DELETE FROM citations WHERE paragraph_id IN (SELECT id FROM paragraphs WHERE case_id = ?)",
                   (case_id,))
        text_work.extend((True, row["id"], row["text"])
                         for row in select(db, "SELECT id, text FROM paragraphs WHERE case_id = ? ORDER BY id",
                                           (case_id,)))
        db.execute("DELETE FROM paragraphs WHERE case_id = ?", (case_id,))
        db.execute("DELETE FROM opinions WHERE case_id = ?", (case_id,))
        db.execute("DELETE FROM cases WHERE id = ?", (case_id,))
