"""The data model (cases > opinions > paragraphs > sentences), its loaders and its writer.

The annotated data set stores each term as four JSON files, each a dict ``id -> record``:
``TERM-case.json``, ``TERM-opinion.json``, ``TERM-paragraph.json`` and ``TERM-sentence.json``
(the contract, field by field: ``docs/data-format.md``). :func:`load_corpus` reads one term
zip, a directory with the four files of one or more terms, or a directory of term zips (the
whole data set).

Every problem with the input is raised as :class:`~statinterp.errors.InputError`, naming the
file, the record id and the field.

**Relevance labels** of the annotated data set and their NDCG gains: :data:`LABEL_GAINS`.

**Writing** a term in the data set's format (a term zip), e.g. with a reviewer's labels.

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
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from statinterp.cache import files as atomic
from statinterp.corpus.provisions import Provision, ProvisionBook
from statinterp.errors import (
    InputError,
    UsageError,
    check_unique_keys,
    closest_names,
    did_you_mean,
    json_type,
    parse_json,
    read_limited,
)
from statinterp.text import MAX_TEXT_CHARS

__all__ = ["normalise_label", "gain", "Case", "Opinion", "Paragraph", "Sentence", "TermData", "Corpus",
           "term_key", "query_of", "load_corpus", "case_fields", "found_records", "term_records",
           "tables_zip_bytes", "zip_filters", "term_zip_bytes", "write_term_zip"]

#: Gain of each label, as used for NDCG (Savelka & Ashley's annotation scheme).
LABEL_GAINS: dict[str, int] = {
    "high value": 3,
    "certain value": 2,
    "potential value": 1,
    "no value": 0,
}


def normalise_label(raw: object) -> str | None:
    """Return the canonical label for ``raw`` or ``None`` if it is not a known label.

    Labels are matched case-insensitively after stripping surrounding whitespace.
    """
    if not isinstance(raw, str):
        return None
    key = " ".join(raw.split()).lower()
    return key if key in LABEL_GAINS else None


def gain(label: str | None) -> int | None:
    """Gain of a canonical label, ``None`` for an unlabelled sentence."""
    return None if label is None else LABEL_GAINS[label]

KINDS = ("case", "opinion", "paragraph", "sentence")

#: Refuse data files (plain or zip members) larger than this many bytes once expanded (a zip
#: bomb, or not our data; the largest file of the real data set is about 6 MB). Both the size a
#: zip declares and the bytes actually read are checked.
MAX_MEMBER_BYTES = 256 * 1024 * 1024

#: Refuse a zip whose members together declare more than this many bytes.
MAX_ZIP_BYTES = 1024 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    """A case of the data set (its case table's record; the zip's field names in comments), as
    loaded or as ``find`` builds it from a collection's stored case."""

    id: str
    text: str  # the whole case
    name: str = ""
    short_name: str = ""
    citation: str = ""  # official_citation
    court: str = ""
    date: str = ""
    short_court: str = ""  # the court's abbreviation, when the record gives one (CAP's, the data set's)
    source: str = ""  # the source format a collection's case was ingested from (cap, courtlistener, text, ...)
    original_id: str = ""  # the case's id in its source (CAP's id)
    jurisdiction: str = ""
    docket_number: str = ""
    alternate_citations: tuple[str, ...] = ()  # every citation, the official one included
    attorneys: tuple[str, ...] = ()
    parties: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()


@dataclass(frozen=True)
class Opinion:
    id: str
    case_id: str
    text: str
    type: str = ""
    author: str = ""
    position: int | None = None


@dataclass(frozen=True)
class Paragraph:
    id: str
    case_id: str
    opinion_id: str
    text: str
    position: int | None = None


@dataclass(frozen=True)
class Sentence:
    id: str
    case_id: str
    opinion_id: str
    paragraph_id: str
    text: str
    label: str | None = None
    position: int | None = None
    pin_page: str = ""  # the reporter page the sentence starts on ("" unknown)
    pin_cite: str = ""  # its ready-to-paste citation with the pin (statinterp.corpus.pin_cites)

    @property
    def gain(self) -> int | None:
        return None if self.label is None else LABEL_GAINS[self.label]


@dataclass
class TermData:
    """One term: its query, its provision and the case-law sentences that mention it."""

    key: str
    query: str
    cases: dict[str, Case]
    opinions: dict[str, Opinion]
    paragraphs: dict[str, Paragraph]
    sentences: list[Sentence]
    provision: Provision | None = None
    source: str = ""

    @property
    def labelled(self) -> bool:
        return any(s.label is not None for s in self.sentences)

    def case_of(self, sentence: Sentence) -> Case:
        return self.cases[sentence.case_id]


@dataclass
class Corpus:
    """The loaded terms, by key (``technological_measure``)."""

    terms: dict[str, TermData] = field(default_factory=dict)

    def __iter__(self):
        return iter(self.terms.values())

    def __len__(self) -> int:
        return len(self.terms)

    def term(self, name: str) -> TermData:
        key = term_key(name)
        if key not in self.terms:
            known = ", ".join(sorted(self.terms)) or "none"
            hint = did_you_mean(closest_names(key, self.terms))
            raise UsageError(f"term {name!r} is not in the loaded data ({hint + ' ' if hint else ''}terms: {known})")
        return self.terms[key]


def term_key(name: str) -> str:
    """``"technological measure"`` and ``technological_measure`` both give ``technological_measure``."""
    return "_".join(name.strip().lower().replace("-", " ").replace("_", " ").split())


def query_of(key: str) -> str:
    return key.replace("_", " ")


class _Source:
    """Where the four JSON files of one term come from (a directory or a zip)."""

    def __init__(self, label: str, key: str, members: dict[str, Any]):
        self.label = label  # shown in error messages
        self.key = term_key(key)
        self.members = members  # kind -> Path or (ZipFile, member name)

    def name(self, kind: str) -> str:
        m = self.members[kind]
        return str(m) if isinstance(m, Path) else f"{self.label}:{m[1]}"

    def read(self, kind: str) -> dict[str, Any]:
        where = self.name(kind)
        member = self.members.get(kind)
        if member is None:
            raise InputError(self.label, f"missing the {kind} file (expected TERM-{kind}.json)")
        limit = MAX_MEMBER_BYTES
        try:
            if isinstance(member, Path):
                with open(member, "rb") as fh:
                    raw = read_limited(fh, limit)  # never more than the limit, whatever the file is
            else:
                zf, name = member
                with zf.open(name) as fh:
                    raw = read_limited(fh, limit)  # the declared size was checked; guard the real one too
        except OSError as exc:
            raise InputError(where, f"cannot be read ({exc.strerror or exc})") from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, ValueError, RuntimeError,
                NotImplementedError) as exc:
            raise InputError(where, f"corrupt or unreadable zip member ({exc})") from None
        if len(raw) > limit:
            raise InputError(where, f"is larger than the limit of {limit} bytes; refusing to read it")
        data = parse_json(raw, where)
        if not isinstance(data, dict):
            raise InputError(where, f"expected a JSON object mapping ids to records, found {json_type(data)}")
        check_unique_keys(data, where)
        return data


def _split_member(name: str) -> tuple[str, str] | None:
    """``"x/technological_measure-case.json"`` -> ``("technological_measure", "case")``."""
    base = PurePosixPath(name).name
    if not base.endswith(".json") or "-" not in base:
        return None
    stem, kind = base[: -len(".json")].rsplit("-", 1)
    return (stem, kind) if kind in KINDS and stem else None


def _zip_sources(path: Path) -> list[_Source]:
    try:
        zf = zipfile.ZipFile(path)
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise InputError(path, f"is not a readable zip file ({exc})") from None
    grouped: dict[str, dict[str, Any]] = {}
    declared = 0
    for info in infos:
        name = info.filename
        if info.is_dir():
            continue
        parts = PurePosixPath(name).parts
        if name.startswith("/") or ".." in parts or "\\" in name:
            raise InputError(path, f"unsafe member name {name!r} (absolute or with '..'); refusing to read this zip")
        if parts and (parts[0] == "__MACOSX" or PurePosixPath(name).name.startswith(".")):
            continue
        split = _split_member(name)
        if split is None:
            raise InputError(path, f"unexpected member {name!r}; "
                                   "a term zip holds TERM-case/opinion/paragraph/sentence.json")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                path, f"member {name!r} would expand to {info.file_size} bytes, over the limit of {MAX_MEMBER_BYTES}"
            )
        declared += info.file_size
        if declared > MAX_ZIP_BYTES:
            raise InputError(path, f"members would expand to more than the limit of {MAX_ZIP_BYTES} bytes")
        stem, kind = split
        if kind in grouped.setdefault(stem, {}):
            raise InputError(path, f"holds the {kind} file of {stem!r} twice")
        grouped[stem][kind] = (zf, name)
    if not grouped:
        raise InputError(path, "holds no TERM-*.json files")
    return [_Source(str(path), stem, members) for stem, members in sorted(grouped.items())]


def _dir_sources(path: Path) -> list[_Source]:
    grouped: dict[str, dict[str, Any]] = {}
    for child in sorted(path.iterdir()):
        split = _split_member(child.name)
        if split and not child.is_file():
            raise InputError(child, "is not a regular file (a folder, FIFO or device); a term's TERM-KIND.json "
                                    "files must be regular files")
        if split:
            grouped.setdefault(split[0], {})[split[1]] = child
    sources = [_Source(str(path / stem), stem, members) for stem, members in sorted(grouped.items())]
    for zpath in sorted(path.glob("*.zip")):
        if not zpath.is_file():
            raise InputError(zpath, "is not a regular file (a folder, FIFO or device); a term zip must be a file")
        sources.extend(_zip_sources(zpath))
    if not sources:
        inner = _subfolders_with_terms(path)
        if inner:
            raise InputError(path, f"holds neither TERM-*.json files nor term zips, but its subfolder "
                                   f"{inner[0].name!r} does: pass --data {inner[0]}")
        raise InputError(path, "holds neither TERM-*.json files nor term zips")
    return sources


def _subfolders_with_terms(path: Path) -> list[Path]:
    """The immediate subfolders of ``path`` that hold TERM-*.json files or term zips."""
    found = []
    for child in sorted(path.iterdir()):
        try:
            if child.is_dir() and any((_split_member(c.name) or c.suffix == ".zip") and c.is_file()
                                      for c in child.iterdir()):
                found.append(child)
        except OSError:
            continue
    return found


def _sources(path: Path) -> list[_Source]:
    if not path.exists():
        raise InputError(path, "does not exist")
    try:
        if path.is_dir():
            return _dir_sources(path)
        if not path.is_file():
            raise InputError(path, "is neither a folder nor a regular file (a FIFO or device?); give a term zip, "
                                   "a folder of TERM-*.json files or a folder of term zips")
        if zipfile.is_zipfile(path):
            return _zip_sources(path)
    except OSError as exc:
        raise InputError(exc.filename or path, f"cannot be read ({exc.strerror or exc})") from None
    raise InputError(path, "is neither a directory nor a zip file (or is an empty or corrupt zip)")


class _Records:
    def __init__(self, source: _Source, kind: str):
        self.where = source.name(kind) if kind in source.members else source.label
        self.kind = kind
        self.data = source.read(kind)

    def items(self) -> Iterable[tuple[str, dict[str, Any]]]:
        for rid, rec in self.data.items():
            if not isinstance(rec, dict):
                raise InputError(self.where, f"expected a JSON object, found {json_type(rec)}", record=rid)
            check_unique_keys(rec, self.where, record=rid)
            yield rid, rec

    def text(self, rid: str, rec: dict, name: str = "text") -> str:
        if name not in rec:
            raise InputError(self.where, "missing", record=rid, field=name)
        value = rec[name]
        if not isinstance(value, str):
            raise InputError(self.where, f"expected a string, found {json_type(value)}", record=rid, field=name)
        if not value.strip():
            raise InputError(self.where, "is empty", record=rid, field=name)
        if len(value) > MAX_TEXT_CHARS:
            raise InputError(self.where, f"is {len(value)} characters long, over the limit of {MAX_TEXT_CHARS}",
                             record=rid, field=name)
        return value

    def optional_str(self, rid: str, rec: dict, name: str) -> str:
        value = rec.get(name)
        if value is None:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise InputError(self.where, f"expected a string, found {json_type(value)}", record=rid, field=name)
        return value

    def optional_strings(self, rid: str, rec: dict, name: str) -> tuple[str, ...]:
        value = rec.get(name)
        if value is None:
            return ()
        if isinstance(value, str):  # one string (as CAP's judges may be): one item
            return (value,)
        if not isinstance(value, list):
            found = json_type(value)
        else:
            bad = [v for v in value if not isinstance(v, str)]
            if not bad:
                return tuple(value)
            found = f"an item of type {json_type(bad[0])}"
        raise InputError(self.where, f"expected a list of strings, found {found}", record=rid, field=name)

    def position(self, rid: str, rec: dict) -> int | None:
        value = rec.get("position")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(self.where, f"expected an integer, found {value!r}", record=rid, field="position")
        return value

    def ref(self, rid: str, rec: dict, name: str, known: dict) -> str:
        value = rec.get(name)
        if value is None:
            raise InputError(self.where, "missing", record=rid, field=name)
        if not isinstance(value, str):
            raise InputError(self.where, f"expected a string id, found {json_type(value)}", record=rid, field=name)
        if value not in known:
            raise InputError(self.where, f"points to unknown {name[:-3]} {value!r}", record=rid, field=name)
        return value


def _load_term(source: _Source, provisions: ProvisionBook | None) -> TermData:
    key = source.key
    missing = [k for k in KINDS if k not in source.members]
    if missing:
        expected = ", ".join(f"{key}-{kind}.json" for kind in missing)
        raise InputError(source.label, f"term {key!r} lacks its {', '.join(missing)} file(s) (expected {expected})")

    recs = _Records(source, "case")
    cases: dict[str, Case] = {}
    for rid, rec in recs.items():
        cases[rid] = Case(
            id=rid,
            text=recs.text(rid, rec),
            name=recs.optional_str(rid, rec, "name"),
            short_name=recs.optional_str(rid, rec, "short_name"),
            citation=recs.optional_str(rid, rec, "official_citation"),
            court=recs.optional_str(rid, rec, "court"),
            date=recs.optional_str(rid, rec, "date"),
            short_court=recs.optional_str(rid, rec, "short_court"),
            source=recs.optional_str(rid, rec, "source"),
            original_id=recs.optional_str(rid, rec, "original_id"),
            jurisdiction=recs.optional_str(rid, rec, "jurisdiction"),
            docket_number=recs.optional_str(rid, rec, "docket_number"),
            alternate_citations=recs.optional_strings(rid, rec, "alternate_citations"),
            attorneys=recs.optional_strings(rid, rec, "attorneys"),
            parties=recs.optional_strings(rid, rec, "parties"),
            judges=recs.optional_strings(rid, rec, "judges"),
        )

    recs = _Records(source, "opinion")
    opinions: dict[str, Opinion] = {}
    for rid, rec in recs.items():
        opinions[rid] = Opinion(
            id=rid,
            case_id=recs.ref(rid, rec, "case_id", cases),
            text=recs.text(rid, rec),
            type=recs.optional_str(rid, rec, "type"),
            author=recs.optional_str(rid, rec, "author"),
            position=recs.position(rid, rec),
        )

    recs = _Records(source, "paragraph")
    paragraphs: dict[str, Paragraph] = {}
    for rid, rec in recs.items():
        case_id = recs.ref(rid, rec, "case_id", cases)
        opinion_id = recs.ref(rid, rec, "opinion_id", opinions)
        if opinions[opinion_id].case_id != case_id:
            raise InputError(recs.where, f"opinion {opinion_id!r} belongs to another case",
                             record=rid, field="opinion_id")
        paragraphs[rid] = Paragraph(rid, case_id, opinion_id, recs.text(rid, rec), recs.position(rid, rec))

    recs = _Records(source, "sentence")
    sentences: list[Sentence] = []
    for rid, rec in recs.items():
        case_id = recs.ref(rid, rec, "case_id", cases)
        opinion_id = recs.ref(rid, rec, "opinion_id", opinions)
        paragraph_id = recs.ref(rid, rec, "paragraph_id", paragraphs)
        if paragraphs[paragraph_id].opinion_id != opinion_id:
            raise InputError(recs.where, f"paragraph {paragraph_id!r} belongs to another opinion",
                             record=rid, field="paragraph_id")
        if opinions[opinion_id].case_id != case_id:
            raise InputError(recs.where, f"opinion {opinion_id!r} belongs to another case",
                             record=rid, field="opinion_id")
        raw_label = rec.get("label")
        label = None
        if raw_label is not None:
            label = normalise_label(raw_label)
            if label is None:
                valid = ", ".join(repr(x) for x in LABEL_GAINS)
                raise InputError(recs.where, f"unknown label {raw_label!r} (valid: {valid})", record=rid, field="label")
        sentences.append(
            Sentence(rid, case_id, opinion_id, paragraph_id, recs.text(rid, rec), label, recs.position(rid, rec),
                     recs.optional_str(rid, rec, "pin_page"), recs.optional_str(rid, rec, "pin_cite"))
        )
    if not sentences:
        raise InputError(recs.where, f"term {key!r} has no sentences")

    provision = provisions.get(key) if provisions is not None else None
    return TermData(key, query_of(key), cases, opinions, paragraphs, sentences, provision, source.label)


def load_corpus(path: str | Path, provisions: ProvisionBook | None = None,
                terms: Iterable[str] | None = None) -> Corpus:
    """Load a term zip, a directory of ``TERM-*.json`` files, or a directory of term zips.

    ``provisions`` attaches each term's source provision (default: none attached; the CLI
    passes the shipped ``provisions.json``). ``terms`` restricts loading to these term names.
    """
    wanted = None if terms is None else {term_key(t) for t in terms}
    corpus = Corpus()
    available: list[str] = []
    for source in _sources(Path(path)):
        key = source.key
        available.append(key)
        if wanted is not None and key not in wanted:
            continue
        if key in corpus.terms:
            raise InputError(source.label, f"term {key!r} is loaded twice (also from {corpus.terms[key].source})")
        corpus.terms[key] = _load_term(source, provisions)
    if wanted is not None:
        missing = wanted - corpus.terms.keys()
        if missing:
            hints = [did_you_mean(closest_names(m, available)) for m in sorted(missing)]
            hint = " ".join(h for h in hints if h)
            raise UsageError(f"{path}: no data for term(s) {', '.join(sorted(missing))} "
                             f"({hint + ' ' if hint else ''}terms: {', '.join(sorted(available)) or 'none'})")
    return corpus

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
