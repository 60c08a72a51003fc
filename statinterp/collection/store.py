"""The collection: one SQLite file (``collection.sqlite``) in a collection folder.

Tables (every id an integer given in insertion order, so the same ingest gives the same ids):

==================  ==========================================================================
``cases``           one row per case: source, source_id (identity), content_hash, CAP fields
``opinions``        case_id, position (0, 1, ... in the case), type, author, paged (the source gave page labels)
``paragraphs``      case_id, opinion_id, position (index of the line in the opinion text), text, page (the
                    reporter page the line starts on; NULL: unknown), page_starts (JSON ``[[offset, page],
                    ...]``: the pages starting inside it), footnote (1: the line is one of the opinion's
                    footnotes, stored after its paragraphs)
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
set. Writes happen in transactions (WAL journal): a reader, or a process killed at any moment,
sees whole batches of cases with their statistics, never part of one.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from statinterp.corpus.pin_cites import first_page, page_at
from statinterp.errors import InputError, OutputError, UsageError, printable
from statinterp.index.statistics import LEVELS
from statinterp.sources.records import CaseRecord, OpinionRecord
from statinterp.text.term_match import PAIR_INDEX_OPTIONS, fts_pairs, fts_pairs_text

FILENAME = "collection.sqlite"
#: Bump when the schema or the meaning of a stored value changes. Format 2 added ``paragraph_pairs``;
#: format 3 the pages of paragraphs (``page``, ``page_starts``), ``footnote`` and ``opinions.paged``.
FORMAT_VERSION = 3
#: Formats this statinterp reads; a collection of format 1 is found with the phrase query alone, one
#: of format 1 or 2 has no pages (every page unknown), and the next ``ingest`` into either upgrades
#: it (:meth:`CollectionWriter._upgrade`).
READABLE_FORMATS = (1, 2, 3)

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
    page TEXT, page_starts TEXT NOT NULL DEFAULT '[]', footnote INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS paragraphs_by_opinion ON paragraphs (opinion_id, position);
CREATE INDEX IF NOT EXISTS paragraphs_by_case ON paragraphs (case_id);
CREATE VIRTUAL TABLE IF NOT EXISTS paragraphs_fts USING fts5(
    text, content='paragraphs', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS paragraph_pairs USING fts5(pairs, content='', {PAIR_INDEX_OPTIONS});
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

#: Columns format 3 added (table, column, definition): :meth:`CollectionWriter._upgrade` adds them.
PAGE_COLUMNS = (("opinions", "paged", "INTEGER NOT NULL DEFAULT 0"), ("paragraphs", "page", "TEXT"),
                ("paragraphs", "page_starts", "TEXT NOT NULL DEFAULT '[]'"),
                ("paragraphs", "footnote", "INTEGER NOT NULL DEFAULT 0"))

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


def _paragraph_row(row: Sequence) -> ParagraphRow:
    """A paragraph row from ``case_id, opinion_id, id, position, text, page, page_starts, footnote``."""
    starts = tuple((int(at), str(label)) for at, label in json.loads(row[6]))
    return ParagraphRow(row[0], row[1], row[2], row[3], row[4], row[5], starts, bool(row[7]))


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
    """Turn an SQLite error saying the collection's database is damaged, raised inside, into one
    :class:`InputError` naming the file (``find``, ``rank``, ``ingest``, ``collection info``)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        raise InputError(database_path(folder), f"is damaged ({exc}); restore a copy, or ingest its sources "
                         "again into a new folder") from None


def check_integrity(db: sqlite3.Connection, folder: str | Path) -> None:
    """Raise :class:`InputError` if SQLite's ``quick_check`` finds the collection damaged (it reads
    every page once: ``ingest`` and ``collection info`` run it)."""
    problems = [r[0] for r in db.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise InputError(database_path(folder), f"is damaged ({'; '.join(problems)}); restore a copy, or ingest its "
                         "sources again into a new folder")


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection to ``path``. A collection on a read-only folder or mount cannot get
    the shared-memory file a WAL database is read with: it is then opened ``immutable`` (nothing
    can write it there), unless a write-ahead log with unmerged writes lies beside it."""
    uri = path.resolve().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
    try:
        db.execute("PRAGMA busy_timeout = 30000")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        if os.access(path.parent, os.W_OK):  # false on a read-only mount, for root too (EROFS)
            raise
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise InputError(path, "is in a read-only folder with writes not yet merged into it (its -wal file); "
                         "open it once where it can be written")
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)


def _lines(value: str) -> list[str]:
    return [line for line in value.split("\n") if line] if value else []


class Collection:
    """Read access to a collection folder (read-only; use as a context manager).

    Each call reads one consistent state (SQLite's WAL snapshot), whatever an ingest writing
    at the same time is doing.
    """

    def __init__(self, folder: Path, db: sqlite3.Connection):
        self.folder = folder
        self.db = db
        #: Whether the collection has the pair index (format 2; :meth:`paragraphs_matching`'s ``pairs``).
        self.has_pairs = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'paragraph_pairs'").fetchone() is not None
        #: Whether paragraphs have pages and footnote marks (format 3); without, every page is unknown.
        self.has_pages = "page" in {r[1] for r in db.execute("PRAGMA table_info(paragraphs)")}
        self._page_columns = "page, page_starts, footnote" if self.has_pages else "NULL, '[]', 0"

    @classmethod
    def open(cls, folder: str | Path) -> Collection:
        folder = Path(folder)
        path = database_path(folder)
        if not path.is_file():
            raise InputError(folder, f"is not a statinterp collection (no {FILENAME}); build one with "
                             "`statinterp ingest SOURCE... --collection DIR`")
        try:
            db = _read_only_connection(path)
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(path, f"is not a readable collection database ({exc})") from None
        if row is None or row[0] not in {str(f) for f in READABLE_FORMATS}:
            db.close()
            raise InputError(path, f"has collection format {row[0] if row else 'unknown'}, this statinterp reads "
                             f"formats {', '.join(map(str, READABLE_FORMATS))}; ingest the sources again into a new "
                             "folder")
        return cls(folder, db)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- lookup -------------------------------------------------------------------------------
    def paragraphs_matching(self, fts_query: str, pairs: bool = False) -> Iterator[ParagraphRow]:
        """Paragraphs whose text matches an FTS5 query (``pairs``: a query of the pair index,
        :func:`~statinterp.text.term_match.fts_pair_query`), in (case, opinion position, paragraph
        position) order."""
        table = "paragraph_pairs" if pairs else "paragraphs_fts"
        if pairs and not self.has_pairs:
            raise UsageError(f"the collection {self.folder} has no pair index (format 1); ingest into it to add one")
        sql = (f"SELECT p.case_id, p.opinion_id, p.id, p.position, p.text FROM {table} "
               f"JOIN paragraphs p ON p.id = {table}.rowid JOIN opinions o ON o.id = p.opinion_id "
               f"WHERE {table} MATCH ? ORDER BY p.case_id, o.position, p.position")
        try:
            cursor = self.db.execute(sql, (fts_query,))
        except sqlite3.OperationalError as exc:
            raise UsageError(f"bad full-text query {fts_query!r}: {exc}") from None
        for row in cursor:
            yield ParagraphRow(*row)

    def occurring(self, phrases: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
        """Those of ``phrases`` (sequences of single words) that occur in some paragraph: one FTS5
        lookup per distinct word, then, per sequence of several words that all occur, one lookup:
        with the pair index, of a paragraph holding all its adjacent pairs (which keeps a sequence
        that may not occur: a superset, as the queries built from it allow), else of the phrase."""
        phrases = set(phrases)
        words = {w for p in phrases for w in p}
        for word in words:
            if not word.isalnum():
                raise UsageError(f"not a single word: {word!r}")
        known = {w for w in words if self._first_match(f'"{w}"')}

        def occurs(p: tuple[str, ...]) -> bool:
            if len(p) == 1:
                return True
            if self.has_pairs:
                return self._first_match(" AND ".join(f'"{pair}"' for pair in fts_pairs(p)),
                                         pairs=True)
            return self._first_match(" + ".join(f'"{w}"' for w in p))

        return {p for p in phrases if p and all(w in known for w in p) and occurs(p)}

    def _first_match(self, fts_query: str, pairs: bool = False) -> bool:
        table = "paragraph_pairs" if pairs else "paragraphs_fts"
        return self.db.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1",
                               (fts_query,)).fetchone() is not None

    def opinion_paragraphs(self, opinion_id: int) -> list[ParagraphRow]:
        """Every paragraph (line) of an opinion, in position order, with its pages."""
        return [_paragraph_row(row) for row in self.db.execute(
            f"SELECT case_id, opinion_id, id, position, text, {self._page_columns} FROM paragraphs "
            "WHERE opinion_id = ? ORDER BY position", (opinion_id,))]

    def case_ids(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT id FROM cases ORDER BY id")]

    def case(self, case_id: int, opinions: list[dict] | None = None) -> dict:
        """The case in the data set's fields (``text`` is the whole case). ``opinions``: the case's
        :meth:`opinions` if the caller has read them already (they are not read again)."""
        row = self.db.execute(
            "SELECT source, source_id, name, name_abbreviation, decision_date, citations, court, jurisdiction, "
            "attorneys, parties, judges, head_matter, docket_number FROM cases WHERE id = ?", (case_id,)).fetchone()
        if row is None:
            raise UsageError(f"no case {case_id} in the collection {self.folder}")
        (source, source_id, name, abbr, date, cites, court, jurisdiction, attorneys, parties, judges, head,
         docket) = row
        citations = [tuple(c) for c in json.loads(cites)]
        official = next((c for k, c in citations if k == "official"), citations[0][1] if citations else "")
        parts = [head] if head.strip() else []
        parts.extend(o["text"] for o in (self.opinions(case_id) if opinions is None else opinions))
        return {"original_id": source_id, "source": source, "name": name, "short_name": abbr, "date": date,
                "official_citation": official, "alternate_citations": [c for _, c in citations],
                "court": court, "jurisdiction": jurisdiction, "docket_number": docket,
                "attorneys": _lines(attorneys), "parties": _lines(parties), "judges": _lines(judges),
                "text": "\n".join(parts)}

    def opinions(self, case_id: int) -> list[dict]:
        """The case's opinions in order: id, type, author, position, text."""
        out = []
        for oid, pos, kind, author in self.db.execute(
                "SELECT id, position, type, author FROM opinions WHERE case_id = ? ORDER BY position", (case_id,)):
            text = "\n".join(t for (t,) in self.db.execute(
                "SELECT text FROM paragraphs WHERE opinion_id = ? ORDER BY position", (oid,)))
            out.append({"id": oid, "type": kind, "author": author or "", "position": pos, "text": text})
        return out

    def record(self, case_id: int) -> CaseRecord:
        """The stored case as the record it was ingested from."""
        row = self.db.execute(
            "SELECT source, source_id, name, name_abbreviation, decision_date, docket_number, citations, court, "
            "jurisdiction, head_matter, judges, parties, attorneys FROM cases WHERE id = ?", (case_id,)).fetchone()
        if row is None:
            raise UsageError(f"no case {case_id} in the collection {self.folder}")
        ops = []
        paged = "paged" if self.has_pages else "0"
        for oid, kind, author, has_labels in self.db.execute(
                f"SELECT id, type, author, {paged} FROM opinions WHERE case_id = ? ORDER BY position",
                (case_id,)).fetchall():
            rows = self.opinion_paragraphs(oid)
            ops.append(OpinionRecord(kind, author, tuple(r.text for r in rows if not r.footnote),
                                     tuple(r.text for r in rows if r.footnote),
                                     tuple(r.page_starts for r in rows) if has_labels else ()))
        (source, source_id, name, abbr, date, docket, cites, court, jurisdiction, head, judges, parties,
         attorneys) = row
        return CaseRecord(source, source_id, name, abbr, date, docket, tuple(tuple(c) for c in json.loads(cites)),
                          court, jurisdiction, head, judges, parties, attorneys, tuple(ops))

    def citations(self, paragraph_id: int) -> list[dict]:
        return [{"kind": k, "start": s, "end": e, "text": t, "normalized": n} for s, e, k, t, n in self.db.execute(
            "SELECT start, end, kind, text, normalized FROM citations WHERE paragraph_id = ? ORDER BY start, end, kind",
            (paragraph_id,))]

    # -- statistics ---------------------------------------------------------------------------
    def _require_statistics(self) -> None:
        if json.loads(self.meta().get("analysis", "{}")).get("statistics", True) is False:
            raise UsageError(f"the collection {self.folder} was ingested without statistics; ingest its sources "
                             "again into a new folder")

    def token_statistics(self, level: str, tokens: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(df, cf) over the collection of each token (lower-cased lemmas); (0, 0) if unseen."""
        _check_level(level)
        self._require_statistics()
        out = {t: (0, 0) for t in tokens}
        distinct = list(out)
        for i in range(0, len(distinct), 500):
            chunk = distinct[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for token, df, cf in self.db.execute(
                    f"SELECT token, df, cf FROM token_stats WHERE level = ? AND token IN ({marks})", [level, *chunk]):
                out[token] = (df, cf)
        return out

    def level_totals(self, level: str) -> tuple[int, int]:
        """(N units holding a token, total tokens) of a unit level over the collection."""
        _check_level(level)
        self._require_statistics()
        row = self.db.execute("SELECT n_units, total_tokens FROM level_totals WHERE level = ?", (level,)).fetchone()
        return (row[0], row[1]) if row else (0, 0)

    # -- description --------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta"))

    def info(self) -> dict:
        """Counts, sources, statistics date and size on disk (``collection info``), after checking
        that the database is not damaged (:func:`check_integrity`)."""
        def count(table: str) -> int:
            return self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

        check_integrity(self.db, self.folder)
        meta = self.meta()
        files = [p for p in self.folder.iterdir() if p.name.startswith(FILENAME)]
        size = sum(p.stat().st_size for p in files)
        cases = count("cases")
        return {
            "collection": str(self.folder),
            "format": int(meta.get("format", 0)),
            "cases": cases, "opinions": count("opinions"), "paragraphs": count("paragraphs"),
            "citations": dict(self.db.execute("SELECT kind, count(*) FROM citations GROUP BY kind ORDER BY kind")),
            "by_source": dict(self.db.execute("SELECT source, count(*) FROM cases GROUP BY source ORDER BY source")),
            "sources": [{"path": p, "format": f, "cases": c, "skipped": s, "ingested_at": t} for p, f, c, s, t in
                        self.db.execute("SELECT path, format, cases, skipped, ingested_at FROM sources "
                                        "ORDER BY ingested_at, path")],
            "statistics": {lvl: dict(zip(("units", "tokens"), self.db.execute(  # noqa: B905
                "SELECT n_units, total_tokens FROM level_totals WHERE level = ?", (lvl,)).fetchone() or (0, 0)))
                for lvl in LEVELS},
            "vocabulary": {lvl: n for lvl, n in self.db.execute(
                "SELECT level, count(*) FROM token_stats GROUP BY level ORDER BY level")},
            "statistics_date": meta.get("statistics_date", ""),
            "analysis": json.loads(meta.get("analysis", "{}")),
            "size_bytes": size,
            "bytes_per_case": round(size / cases, 1) if cases else None,
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


def _index_pairs(db: sqlite3.Connection, paragraph_id: int, text: str) -> None:
    """Add a paragraph's adjacent word pairs to the pair index (removed with the same
    :func:`~statinterp.text.term_match.fts_pairs_text` and FTS5's ``'delete'``)."""
    db.execute("INSERT INTO paragraph_pairs (rowid, pairs) VALUES (?, ?)", (paragraph_id, fts_pairs_text(text)))


class CollectionWriter:
    """Adds prepared cases to a collection folder (creating it), one transaction per batch.

    ``check=False`` skips the integrity check of an existing collection (:func:`check_integrity`:
    it reads every page): for a writer whose caller checked it earlier in the same ingest (the
    write tasks of a shard set, :mod:`statinterp.collection.dask_shards`)."""

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
            self.db.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            found = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if found is not None and check:
                self._check_integrity()
            if found is None:
                now = _now()
                self.db.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("format", str(FORMAT_VERSION)), ("created_at", now), ("statistics_date", now),
                    ("analysis", json.dumps(analysis or {}, sort_keys=True))])
                self.db.executemany("INSERT INTO level_totals VALUES (?, 0, 0)", [(lvl,) for lvl in LEVELS])
            elif found[0] not in {str(f) for f in READABLE_FORMATS}:
                self.db.execute("ROLLBACK")
                raise InputError(self.folder, f"holds a collection of format {found[0]}; this statinterp writes "
                                 f"format {FORMAT_VERSION}: use a new folder")
            else:
                stored = self.db.execute("SELECT value FROM meta WHERE key = 'analysis'").fetchone()[0]
                if analysis is not None and json.loads(stored) != analysis:
                    self.db.execute("ROLLBACK")
                    raise UsageError(f"{self.folder}: the collection's statistics were made with other analysis "
                                     f"settings ({stored}); ingest into a new folder")
                if found[0] != str(FORMAT_VERSION):
                    try:
                        self._upgrade(int(found[0]))
                    except BaseException:
                        self.db.execute("ROLLBACK")
                        raise
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise InputError(database_path(self.folder), f"is not a usable collection database ({exc})") from None

    def _check_integrity(self) -> None:
        """Refuse a damaged collection before writing into it (:func:`check_integrity`)."""
        try:
            check_integrity(self.db, self.folder)
        except InputError:
            self.db.execute("ROLLBACK")
            raise

    def _upgrade(self, found: int) -> None:
        """Upgrade a collection of format 1 or 2 to the current format, in the caller's transaction
        (a crash leaves the old format, whole): format 1 gets the pair index (SCHEMA has just made
        the empty table; the stored paragraphs' pairs are indexed), formats 1 and 2 the page
        columns (every stored page unknown, no line a footnote: what those formats knew)."""
        db = self.db
        if found < 2:
            for pid, text in db.execute("SELECT id, text FROM paragraphs ORDER BY id"):  # streamed, not held
                _index_pairs(db, pid, text)
        for table, column, definition in PAGE_COLUMNS:
            if column not in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(FORMAT_VERSION),))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> CollectionWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def known_hash(self, source: str, source_id: str) -> str | None:
        row = self.db.execute("SELECT content_hash FROM cases WHERE source = ? AND source_id = ?",
                              (source, source_id)).fetchone()
        return row[0] if row else None

    def max_ids(self) -> tuple[int, int]:
        """The largest case id and opinion id stored (0 when none)."""
        return (self.db.execute("SELECT coalesce(max(id), 0) FROM cases").fetchone()[0],
                self.db.execute("SELECT coalesce(max(id), 0) FROM opinions").fetchone()[0])

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
        db.execute("BEGIN IMMEDIATE")
        try:
            for case in prepared:
                rec = case.record
                row = db.execute("SELECT id, content_hash FROM cases WHERE source = ? AND source_id = ?",
                                 (rec.source, rec.source_id)).fetchone()
                if row is not None and row[1] == case.content_hash:
                    counts["unchanged"] += 1
                    continue
                if row is not None:
                    old = Collection(self.folder, db).record(row[0])
                    self._add_counts(stats, totals, reprepare(old).counts, -1)
                    self._delete_case(row[0])
                    counts["replaced"] += 1
                else:
                    counts["added"] += 1
                n_ops, n_paras = self._insert_case(case, ids(rec) if ids is not None else None)
                counts["opinions"] += n_ops
                counts["paragraphs"] += n_paras
                self._add_counts(stats, totals, case.counts, +1)
            self._apply_stats(stats, totals)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('statistics_date', ?)", (_now(),))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
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

    def _insert_case(self, case, ids: tuple[int, int] | None = None) -> tuple[int, int]:
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
                pid = db.execute("INSERT INTO paragraphs (case_id, opinion_id, position, text, page, page_starts, "
                                 "footnote) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 (case_id, oid, j, text, pages[i][j], starts, int(j >= n_paragraphs))).lastrowid or 0
                db.execute("INSERT INTO paragraphs_fts (rowid, text) VALUES (?, ?)", (pid, text))
                _index_pairs(db, pid, text)
                paragraph_ids[(i, j)] = pid
                n_paras += 1
        db.executemany("INSERT OR IGNORE INTO citations VALUES (?, ?, ?, ?, ?, ?)",
                       [(paragraph_ids[(c.opinion, c.paragraph)], c.start, c.end, c.kind, c.text, c.normalized)
                        for c in case.citations])
        return len(r.opinions), n_paras

    def _delete_case(self, case_id: int) -> None:
        db = self.db
        db.execute("DELETE FROM citations WHERE paragraph_id IN (SELECT id FROM paragraphs WHERE case_id = ?)",
                   (case_id,))
        rows = db.execute("SELECT id, text FROM paragraphs WHERE case_id = ?", (case_id,)).fetchall()
        db.executemany("INSERT INTO paragraphs_fts (paragraphs_fts, rowid, text) VALUES ('delete', ?, ?)", rows)
        db.executemany("INSERT INTO paragraph_pairs (paragraph_pairs, rowid, pairs) VALUES ('delete', ?, ?)",
                       [(pid, fts_pairs_text(text)) for pid, text in rows])
        db.execute("DELETE FROM paragraphs WHERE case_id = ?", (case_id,))
        db.execute("DELETE FROM opinions WHERE case_id = ?", (case_id,))
        db.execute("DELETE FROM cases WHERE id = ?", (case_id,))
