"""CourtListener opinions: JSON lines or the CSV bulk files, grouped into cases by ``cluster_id``.

An opinion's text is ``plain_text`` when it has one, else ``html_with_citations``, ``html``,
``html_lawbox``, ``html_columbia`` or ``xml_harvard`` turned into paragraphs by lxml's HTML
parser (one paragraph per block element). Opinions are grouped into cases by ``cluster_id``:
they are first spilled to a temporary SQLite file (memory stays flat however large the input)
and then read back cluster by cluster, clusters in the order of their first opinion, opinions in
file order (or by ``ordering_key`` when given).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from statinterp.errors import InputError, json_type
from statinterp.sources.cleaning import clean_markup, clean_plain
from statinterp.sources.fields import BadField, text_of
from statinterp.sources.records import CaseRecord, OpinionRecord, SkippedRecord

MARKUP_FIELDS = ("html_with_citations", "html", "html_lawbox", "html_columbia", "xml_harvard")

#: CourtListener opinion types -> the data set's names (others keep their own name, digits removed).
OPINION_TYPES = {
    "010combined": "majority", "015unamimous": "majority", "015unanimous": "majority", "020lead": "majority",
    "025plurality": "plurality", "030concurrence": "concurrence", "035concurrenceinpart": "concurrence",
    "040dissent": "dissent",
}

def markup_paragraphs(markup: str) -> tuple[str, ...]:
    """Paragraphs of an HTML/XML opinion (:func:`~statinterp.sources.cleaning.clean_markup`)."""
    return clean_markup(markup).paragraphs


def opinion_text(row: dict, kind: str, author: str | None) -> OpinionRecord:
    """An opinion, its text cleaned: ``plain_text`` when it has one, else the first markup field."""
    plain = text_of(row, "plain_text")
    if plain.strip():
        return clean_plain(plain, kind=kind, author=author)
    for name in MARKUP_FIELDS:
        markup = text_of(row, name)
        if markup.strip():
            return clean_markup(markup, kind=kind, author=author)
    return OpinionRecord(kind, author, ())


def _open_text(path: Path):
    name = path.name.lower()
    opener = gzip.open if name.endswith(".gz") else bz2.open if name.endswith(".bz2") else (
        lzma.open if name.endswith(".xz") else open)
    return opener(path, "rt", encoding="utf-8", newline="")


def _rows(path: Path) -> Iterator[tuple[str, dict | None, str | None]]:
    """(record label, row or None, problem) per opinion of the file."""
    is_csv = ".csv" in path.name.lower()
    try:
        fh = _open_text(path)
        with fh:
            if is_csv:
                csv.field_size_limit(sys.maxsize)
                reader = csv.DictReader(fh)
                for i, row in enumerate(reader, 1):
                    yield f"row {i}", row, None
                return
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    yield f"line {i}", None, f"malformed JSON ({exc})"
                    continue
                if not isinstance(obj, dict):
                    yield f"line {i}", None, f"expected a JSON object, found {json_type(obj)}"
                    continue
                yield f"line {i}", obj, None
    except (OSError, EOFError, UnicodeDecodeError, lzma.LZMAError, csv.Error) as exc:
        raise InputError(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None


def read_courtlistener(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    """Cases (opinions grouped by cluster) of one CourtListener JSON-lines or CSV file."""
    where = str(path)
    skipped: list[SkippedRecord] = []
    with tempfile.TemporaryDirectory(prefix="statinterp-cl-") as tmp:
        db = sqlite3.connect(Path(tmp) / "spill.sqlite")
        db.execute("CREATE TABLE op (seq INTEGER PRIMARY KEY, cluster TEXT, ordering INTEGER, row TEXT)")
        db.execute("CREATE TABLE cl (cluster TEXT PRIMARY KEY, first INTEGER)")
        for seq, (label, row, problem) in enumerate(_rows(path)):
            if row is None:
                yield SkippedRecord(where, label, "(record)", problem or "unreadable")
                continue
            rid = str(row.get("id") or label)
            cluster = row.get("cluster_id")
            if cluster is None or isinstance(cluster, (dict, list, bool)) or not str(cluster).strip():
                yield SkippedRecord(where, rid, "cluster_id", "missing" if cluster in (None, "") else
                                    f"expected an id, found {json_type(cluster)}")
                continue
            cluster = str(cluster).strip()
            order = row.get("ordering_key")
            order = int(order) if isinstance(order, int) or (isinstance(order, str) and order.isdigit()) else None
            db.execute("INSERT OR IGNORE INTO cl VALUES (?, ?)", (cluster, seq))
            db.execute("INSERT INTO op VALUES (?, ?, ?, ?)", (seq, cluster, order, json.dumps(row)))
        db.commit()
        clusters = db.execute("SELECT cluster FROM cl ORDER BY first")
        for (cluster,) in clusters.fetchall():
            rows = [json.loads(r) for (r,) in db.execute(
                "SELECT row FROM op WHERE cluster = ? ORDER BY coalesce(ordering, 1 << 62), seq", (cluster,))]
            yield _case(where, cluster, rows)
        db.close()
    yield from skipped


def _case(where: str, cluster: str, rows: list[dict]) -> CaseRecord | SkippedRecord:
    opinions = []
    try:
        for row in rows:
            kind = text_of(row, "type")
            kind = OPINION_TYPES.get(kind, re.sub(r"^\d+", "", kind) or "majority")
            author = text_of(row, "author_str") or None
            opinions.append(opinion_text(row, kind, author))
        first = rows[0]
        if not any(o.paragraphs for o in opinions):
            raise BadField("plain_text", "no opinion of the cluster has any text (plain_text or markup)")
        citations = tuple(("official", c) for c in [text_of(first, "citation")] if c)
        return CaseRecord(
            source="courtlistener", source_id=cluster, name=text_of(first, "case_name"),
            name_abbreviation=text_of(first, "case_name_short"), decision_date=text_of(first, "date_filed"),
            docket_number=text_of(first, "docket_number"), citations=citations, court=text_of(first, "court"),
            jurisdiction=text_of(first, "jurisdiction"), head_matter="", judges=text_of(first, "judges"),
            parties="", attorneys="", opinions=tuple(o for o in opinions if o.paragraphs),
        )
    except BadField as exc:
        return SkippedRecord(where, f"cluster {cluster}", exc.field, exc.reason)
