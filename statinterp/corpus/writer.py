"""Write a term in the data set's format (a term zip), e.g. with a reviewer's labels.

The zip holds ``KEY-case.json``, ``KEY-opinion.json``, ``KEY-paragraph.json`` and
``KEY-sentence.json`` exactly as :func:`statinterp.corpus.dataset.load_corpus` reads them
(``docs/data-format.md``), so ``evaluate``, ``train`` and ``cv`` take it as ``--data``.
:func:`term_records` writes the fields the rankers read (a labelled term's case: name,
citation, court, date, text; a collection's ``attorneys`` and the like are not kept);
:func:`found_records` writes every field of a case ``find`` built from a collection
(:func:`case_fields`).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from statinterp.cache import files as atomic
from statinterp.corpus.dataset import KINDS, Case, TermData

__all__ = ["case_fields", "found_records", "term_records", "tables_zip_bytes", "zip_filters", "term_zip_bytes",
           "write_term_zip"]

#: The case fields :func:`term_records` writes (when not empty).
_RANKED_CASE_FIELDS = ("name", "short_name", "official_citation", "court", "short_court", "date", "text")


def _drop_empty(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if v not in ("", None) or k == "label"}


def case_fields(case: Case) -> dict[str, Any]:
    """``case`` as a record of the zip's case table, in its field names: every field a
    collection's case has (empty ones too, lists as lists), and ``short_court`` when known."""
    record: dict[str, Any] = {
        "original_id": case.original_id, "source": case.source, "name": case.name, "short_name": case.short_name,
        "date": case.date, "official_citation": case.citation, "alternate_citations": list(case.alternate_citations),
        "court": case.court, "jurisdiction": case.jurisdiction, "docket_number": case.docket_number,
        "attorneys": list(case.attorneys), "parties": list(case.parties), "judges": list(case.judges),
        "text": case.text}
    if case.short_court:
        record["short_court"] = case.short_court
    return record


def found_records(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, dict]]:
    """``find``'s tables (cases as :class:`Case`, the other kinds as records) as the zip's records."""
    return {kind: ({cid: case_fields(case) for cid, case in tables[kind].items()} if kind == "case"
                   else dict(tables[kind])) for kind in KINDS}


def term_records(term: TermData, labels: Mapping[str, str | None] | None = None) -> dict[str, dict]:
    """The four files' contents (kind -> id -> record). ``labels`` (sentence id -> label) replaces
    every sentence's label; without it the term's own labels are kept."""
    cases = {c.id: _drop_empty({k: v for k, v in case_fields(c).items() if k in _RANKED_CASE_FIELDS})
             for c in term.cases.values()}
    opinions = {o.id: _drop_empty({"case_id": o.case_id, "type": o.type, "author": o.author, "position": o.position,
                                   "text": o.text}) for o in term.opinions.values()}
    paragraphs = {p.id: _drop_empty({"case_id": p.case_id, "opinion_id": p.opinion_id, "position": p.position,
                                     "text": p.text}) for p in term.paragraphs.values()}
    sentences = {}
    for s in term.sentences:
        label = s.label if labels is None else labels.get(s.id)
        rec = _drop_empty({"case_id": s.case_id, "opinion_id": s.opinion_id, "paragraph_id": s.paragraph_id,
                           "position": s.position, "text": s.text, "pin_page": s.pin_page,
                           "pin_cite": s.pin_cite})
        if label is not None:
            rec["label"] = label
        sentences[s.id] = rec
    return {"case": cases, "opinion": opinions, "paragraph": paragraphs, "sentence": sentences}


#: The zip comment's key under which the case filter a term was found with is recorded.
FILTERS_KEY = "statinterp_filters"


def tables_zip_bytes(key: str, tables: Mapping[str, Mapping[str, dict]],
                     filters: Mapping[str, Any] | None = None) -> bytes:
    """The data set's zip (``KEY-case.json`` ... ``KEY-sentence.json``) of the four tables (kind -> id ->
    record), deterministic: fixed member order, timestamps and key order, so the same tables give the same bytes.
    ``filters`` (the case filter the term was found with, ``find --court ...``) is written as the
    zip's comment, JSON (:func:`zip_filters` reads it; loaders ignore comments)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        if filters:
            zf.comment = json.dumps({FILTERS_KEY: dict(filters)}, sort_keys=True, ensure_ascii=False).encode("utf-8")
        for kind in KINDS:
            info = zipfile.ZipInfo(f"{key}-{kind}.json", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, json.dumps(tables[kind], ensure_ascii=False, indent=1, sort_keys=True))
    return buf.getvalue()


def zip_filters(path: str | Path) -> dict[str, Any]:
    """The case filter recorded in a term zip's comment (:func:`tables_zip_bytes`); ``{}``: none."""
    try:
        with zipfile.ZipFile(path) as zf:
            comment = zf.comment
    except (OSError, zipfile.BadZipFile):
        return {}
    try:
        found = json.loads(comment.decode("utf-8")) if comment else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return dict(found.get(FILTERS_KEY) or {}) if isinstance(found, dict) else {}


def term_zip_bytes(term: TermData, labels: Mapping[str, str | None] | None = None,
                   filters: Mapping[str, Any] | None = None) -> bytes:
    """The term zip of ``term`` (with ``labels`` in place of its own, see :func:`term_records`) as
    bytes; ``filters``: the case filter it was found with, recorded (:func:`tables_zip_bytes`)."""
    return tables_zip_bytes(term.key, term_records(term, labels), filters=filters)


def write_term_zip(term: TermData, path: str | Path, labels: Mapping[str, str | None] | None = None,
                   force: bool = False, filters: Mapping[str, Any] | None = None) -> Path:
    """Write the term zip atomically (never overwriting an existing file without ``force``)."""
    return atomic.write_bytes(path, term_zip_bytes(term, labels, filters), force=force)
