"""Caselaw Access Project readers: the static per-case JSON release and the legacy bulk bags.

* **Per-case JSON** (``cap``): ``REPORTER/VOLUME/cases/*.json`` beside ``CasesMetadata.json``,
  one case object per file; or one zip per volume holding the same files. Opinion texts hold
  one paragraph per line.
* **Legacy bulk** (``cap-bulk``): a BagIt folder or zip (``bagit.txt``,
  ``data/data.jsonl.xz``), one case per line, the body under ``casebody.data`` with a
  ``casebody.status``.

Each reader streams: one file (or one line) at a time, so memory does not grow with the input.

A JSON case object is read field by field (:func:`text_of`, :func:`cap_case`): a bad field
raises :class:`BadField`, which the readers (CourtListener's too) turn into a
:class:`~statinterp.sources.records.SkippedRecord` reason.
"""

from __future__ import annotations

import json
import lzma
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath

from statinterp.corpus.dataset import MAX_MEMBER_BYTES
from statinterp.errors import InputError, json_type, json_values_problem, read_limited
from statinterp.sources.cleaning import cap_pagination, clean_markup, clean_opinion, normal_form
from statinterp.sources.records import MAX_LINE_BYTES, CaseRecord, SkippedRecord, bounded_lines, refuse_special
from statinterp.sources.registry import Partition, SourceFormat, register, zip_names
from statinterp.text import MAX_TEXT_CHARS

#: Metadata files of a CAP volume that are not cases.
CAP_METADATA = frozenset({"CasesMetadata.json", "VolumeMetadata.json", "ReporterMetadata.json",
                          "JurisdictionsMetadata.json", "CourtsMetadata.json", "ReportersMetadata.json",
                          "VolumesMetadata.json"})

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, ValueError, RuntimeError,
               NotImplementedError, OSError)


def _decode(raw: bytes, where: str, record: str) -> tuple[object | None, SkippedRecord | None]:
    too_many = json_values_problem(raw)
    if too_many is not None:
        return None, SkippedRecord(where, record, "(record)", too_many)
    try:
        return json.loads(raw.decode("utf-8-sig")), None
    except UnicodeDecodeError as exc:
        return None, SkippedRecord(where, record, "(record)", f"not UTF-8 text (bad byte at offset {exc.start})")
    except (ValueError, RecursionError) as exc:  # ValueError: also a number of over 4300 digits
        return None, SkippedRecord(where, record, "(record)", f"malformed JSON ({exc})")


def _one_case(raw: bytes, where: str, fallback_id: str, source: str, body_key: str | None = None,
              html: bytes | None = None) -> CaseRecord | SkippedRecord:
    if len(raw) > MAX_MEMBER_BYTES:
        return SkippedRecord(where, fallback_id, "(record)", f"larger than the limit of {MAX_MEMBER_BYTES} bytes")
    obj, bad = _decode(raw, where, fallback_id)
    if bad is not None:
        return bad
    rid = record_id(obj)
    try:
        record = cap_case(obj, source, body_key)
    except BadField as exc:
        return SkippedRecord(where, rid if rid != "?" else fallback_id, exc.field, exc.reason)
    return with_html(record, html) if html else record


def with_html(record: CaseRecord, html: bytes) -> CaseRecord:
    """A CAP case with its opinions read from the case's HTML (the static release's
    ``html/NNNN-01.html`` beside ``cases/``), which keeps the page labels and footnotes the JSON
    text lacks: one ``<article class="opinion">`` per opinion, in order. The JSON's opinions are
    kept when the HTML cannot be parsed or has another number of opinions. Page labels are those of
    the pagination of the citation the case is cited by (:func:`~statinterp.sources.cleaning.cap_pagination`)."""
    import lxml.html

    try:
        root = lxml.html.fromstring(html.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, lxml.etree.ParserError):
        return record
    articles = [a for a in root.iter("article") if "opinion" in (a.get("class") or "").split()]
    if len(articles) != len(record.opinions):
        return record
    opinions = []
    pagination = cap_pagination(record.citations)
    for op, art in zip(record.opinions, articles, strict=True):
        clean = clean_markup(lxml.html.tostring(art, encoding="unicode"), kind=op.type, author=op.author,
                             pagination=pagination)
        opinions.append(clean if clean.paragraphs else op)
    return replace(record, opinions=tuple(opinions))


def _html_beside(case_file: Path) -> bytes | None:
    """The static release's HTML of a case file ``VOLUME/cases/X.json``: ``VOLUME/html/X.html``."""
    html = case_file.parent.parent / "html" / (case_file.stem + ".html")
    try:
        with open(html, "rb") as fh:
            return read_limited(fh, MAX_MEMBER_BYTES)
    except OSError:
        return None


def case_files(volume: Path) -> list[Path]:
    """The case files of a per-case volume folder, in name order (a folder named ``*.json``, or a
    link to one, is none)."""
    folder = volume / "cases" if (volume / "cases").is_dir() else volume
    return sorted(p for p in folder.glob("*.json") if p.name not in CAP_METADATA and not p.is_dir())


def read_cap_folder(volume: Path) -> Iterator[CaseRecord | SkippedRecord]:
    """A volume folder (``VOLUME/cases/*.json``), or a lone case file."""
    files = [volume] if volume.is_file() else case_files(volume)
    for path in files:
        try:
            with open(path, "rb") as fh:
                raw = read_limited(fh, MAX_MEMBER_BYTES)
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
        yield _one_case(raw, str(path), path.stem, "cap", html=_html_beside(path))


def _zip_members(zf: zipfile.ZipFile, path: Path) -> list[zipfile.ZipInfo]:
    out = []
    for info in zf.infolist():
        name = PurePosixPath(info.filename)
        if info.is_dir() or name.suffix != ".json" or name.name in CAP_METADATA:
            continue
        if info.filename.startswith("/") or ".." in name.parts:
            raise InputError(path, f"unsafe member name {info.filename!r}; refusing to read this zip")
        if name.parts[0] == "__MACOSX" or name.name.startswith("."):
            continue
        out.append(info)
    return sorted(out, key=lambda i: i.filename)


def read_cap_zip(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    """One volume zip of per-case JSON files."""
    try:
        zf = zipfile.ZipFile(path)
        members = _zip_members(zf, path)
    except _ZIP_ERRORS as exc:
        raise InputError(path, f"is not a readable zip file ({exc})") from None
    with zf:
        names = set(zf.namelist())
        for info in members:
            where = f"{path}:{info.filename}"
            if info.file_size > MAX_MEMBER_BYTES:
                yield SkippedRecord(where, PurePosixPath(info.filename).stem, "(record)",
                                    f"would expand to {info.file_size} bytes, over the limit of {MAX_MEMBER_BYTES}")
                continue
            try:
                with zf.open(info) as fh:
                    raw = read_limited(fh, MAX_MEMBER_BYTES)
            except _ZIP_ERRORS as exc:
                yield SkippedRecord(where, PurePosixPath(info.filename).stem, "(record)", f"corrupt zip member ({exc})")
                continue
            member = PurePosixPath(info.filename)
            html_name = str(member.parent.parent / "html" / (member.stem + ".html"))
            html = None
            if html_name in names and zf.getinfo(html_name).file_size <= MAX_MEMBER_BYTES:
                try:
                    with zf.open(html_name) as fh:
                        html = read_limited(fh, MAX_MEMBER_BYTES)
                except _ZIP_ERRORS:
                    html = None  # the JSON's text is used
            yield _one_case(raw, where, member.stem, "cap", html=html)


def _jsonl_lines(fh, where: str, source: str) -> Iterator[CaseRecord | SkippedRecord]:
    n = 0
    lines = bounded_lines(fh)
    while True:
        try:
            n, line = next(lines, (n, b""))
        except (lzma.LZMAError, *_ZIP_ERRORS) as exc:
            raise InputError(where, f"cannot be decompressed after line {n} ({exc})") from None
        if line is None:
            yield SkippedRecord(where, f"line {n}", "(record)", f"longer than {MAX_LINE_BYTES} bytes")
            continue
        if not line:
            return
        if not line.strip():
            continue
        yield _one_case(line, f"{where}:{n}", f"line {n}", source, body_key="data")


def bag_data_member(names: list[str]) -> str | None:
    """The ``data/data.jsonl.xz`` member of a bag zip (possibly under one top folder)."""
    wanted = (("data", "data.jsonl.xz"), ("data", "data.jsonl"))
    hits = sorted(n for n in names if PurePosixPath(n).parts[-2:] in wanted)
    return hits[0] if hits else None


def read_cap_bag(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    """A legacy bulk export: a BagIt folder or zip with ``data/data.jsonl.xz``."""
    if path.is_dir():
        data = path / "data" / "data.jsonl.xz"
        plain = path / "data" / "data.jsonl"
        target = data if data.exists() else plain
        refuse_special(target)  # a FIFO there would block the read forever
        try:
            fh = lzma.open(target, "rb") if target.suffix == ".xz" else open(target, "rb")
        except OSError as exc:
            raise InputError(target, f"cannot be read ({exc.strerror or exc})") from None
        with fh:
            yield from _jsonl_lines(fh, str(target), "cap-bulk")
        return
    try:
        zf = zipfile.ZipFile(path)
        member = bag_data_member(zf.namelist())
    except _ZIP_ERRORS as exc:
        raise InputError(path, f"is not a readable zip file ({exc})") from None
    if member is None:
        raise InputError(path, "is a bag without data/data.jsonl.xz")
    with zf:
        try:
            raw = zf.open(member)
        except _ZIP_ERRORS as exc:
            raise InputError(f"{path}:{member}", f"corrupt zip member ({exc})") from None
        with raw:
            if member.endswith(".xz"):
                with lzma.open(raw, "rb") as fh:
                    yield from _jsonl_lines(fh, f"{path}:{member}", "cap-bulk")
            else:
                yield from _jsonl_lines(raw, f"{path}:{member}", "cap-bulk")


def to_cap_json(record: CaseRecord, case_id: int | str | None = None) -> dict:
    """A record as a CAP per-case JSON object (the static release's fields); the inverse of the
    ``cap`` reader (used to write test fixtures and synthetic collections)."""
    def lines(value: str) -> list[str]:
        return [line for line in value.split("\n") if line]

    rid = case_id if case_id is not None else (int(record.source_id) if record.source_id.isdigit()
                                               else record.source_id)
    return {
        "id": rid, "name": record.name, "name_abbreviation": record.name_abbreviation,
        "decision_date": record.decision_date, "docket_number": record.docket_number,
        "citations": [{"type": t, "cite": c} for t, c in record.citations],
        "court": {"name": record.court}, "jurisdiction": {"name_long": record.jurisdiction},
        "casebody": {"head_matter": record.head_matter, "judges": lines(record.judges),
                     "parties": lines(record.parties), "attorneys": lines(record.attorneys),
                     "opinions": [{"type": o.type, "author": o.author, "text": o.text} for o in record.opinions]},
    }


def write_cap_volume(records: list[CaseRecord], folder: Path, as_zip: bool = False) -> Path:
    """Write records as one CAP volume (``folder/cases/NNNN-01.json`` beside ``CasesMetadata.json``),
    or as ``folder.zip`` holding the same files. Returns the folder or the zip."""
    meta = [{"id": to_cap_json(r)["id"], "file_name": f"{i + 1:04d}-01", "name": r.name}
            for i, r in enumerate(records)]
    files = {"CasesMetadata.json": json.dumps(meta, indent=1)}
    for i, r in enumerate(records):
        files[f"cases/{i + 1:04d}-01.json"] = json.dumps(to_cap_json(r), ensure_ascii=False, indent=1)
    if as_zip:
        target = folder.with_suffix(".zip")
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, text in files.items():
                zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), text)
        return target
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return folder


def _is_zip(path: Path) -> bool:
    return path.name.lower().endswith(".zip")


def _sniff_bag(path: Path) -> bool:
    if not _is_zip(path):
        return False
    names = list(zip_names(path))
    return any(n.rsplit("/", 1)[-1] == "bagit.txt" for n in names) or bag_data_member(names) is not None


def _sniff_case_file(path: Path) -> bool:
    name = path.name
    if _is_zip(path):
        return any(n.endswith(".json") for n in zip_names(path))
    if not name.lower().endswith(".json") or name in CAP_METADATA:
        return False
    return not any(name.endswith(f"-{k}.json") for k in ("case", "opinion", "paragraph", "sentence"))


def _read_cap(partition: Partition) -> Iterator[CaseRecord | SkippedRecord]:
    path = Path(partition.path)
    return read_cap_zip(path) if path.is_file() and _is_zip(path) else read_cap_folder(path)


register(SourceFormat(
    "cap", "CAP per-case JSON: REPORTER/VOLUME/cases/*.json or a volume zip", _read_cap, _sniff_case_file,
    sniff_folder=lambda here, names: here.parent if here.name == "cases" and any(
        n.endswith(".json") for n in names) else None,
    group=lambda path: not _is_zip(path), files=case_files, order=90))
register(SourceFormat(
    "cap-bulk", "CAP legacy BagIt folder or zip", lambda p: read_cap_bag(Path(p.path)), _sniff_bag,
    sniff_folder=lambda here, names: here if "bagit.txt" in names else None, order=10))


class BadField(Exception):
    """A field of one record is malformed; the reader skips the record and reports this."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def text_of(obj: dict, name: str, where: str = "", numbers: bool = True) -> str:
    """An optional string field ('' when absent or null); a number is turned into its digits
    (unless ``numbers`` is false: a text must be a string)."""
    value = obj.get(name)
    label = where + name
    if value is None:
        return ""
    if isinstance(value, bool) or (not numbers and not isinstance(value, str)):
        raise BadField(label, f"expected a string, found {json_type(value)}")
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, str):
        raise BadField(label, f"expected a string, found {json_type(value)}")
    if len(value) > MAX_TEXT_CHARS:
        raise BadField(label, f"is {len(value)} characters long, over the limit of {MAX_TEXT_CHARS}")
    return value


def lines_of(obj: dict, name: str, where: str = "") -> str:
    """A string or a list of strings (CAP's judges, parties, attorneys), as lines."""
    value = obj.get(name)
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise BadField(f"{where}{name}[{i}]", f"expected a string, found {json_type(item)}")
        return "\n".join(value)
    return text_of(obj, name, where)


def record_id(obj: object) -> str:
    """The ``id`` of a case object as a string, for messages ('?' when there is none)."""
    if isinstance(obj, dict):
        value = obj.get("id")
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return "?"


def split_lines(text: str) -> tuple[str, ...]:
    """Paragraphs of a CAP opinion text: its lines that hold more than whitespace."""
    return tuple(line for line in text.split("\n") if line.strip())


def named(obj: dict, name: str) -> str:
    """CAP's ``court`` / ``jurisdiction``: an object with a name (or a plain string)."""
    value = obj.get(name)
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, dict):
        raise BadField(name, f"expected an object, found {json_type(value)}")
    for key in ("name_long", "name") if name == "jurisdiction" else ("name", "name_abbreviation"):
        if value.get(key):
            return text_of(value, key, name + ".")
    return ""


def cap_case(obj: object, source: str, body_key: str | None = None) -> CaseRecord:
    """A CAP case object (static per-case JSON; legacy bulk with ``body_key='data'``) as a record."""
    if not isinstance(obj, dict):
        raise BadField("(record)", f"expected a JSON object, found {json_type(obj)}")
    rid = record_id(obj)
    if rid == "?":
        raise BadField("id", "missing or empty")
    body = obj.get("casebody")
    where = "casebody."
    if not isinstance(body, dict):
        raise BadField("casebody", "missing" if body is None else f"expected an object, found {json_type(body)}")
    if body_key is not None:
        status = body.get("status")
        if status not in (None, "ok"):
            raise BadField("casebody.status", f"is {status!r}, not 'ok'")
        inner = body.get(body_key)
        if isinstance(inner, str):
            raise BadField(f"casebody.{body_key}", "holds markup (an XML/HTML export); use the text export")
        if not isinstance(inner, dict):
            raise BadField(f"casebody.{body_key}",
                           "missing" if inner is None else f"expected an object, found {json_type(inner)}")
        body, where = inner, f"casebody.{body_key}."
    raw_ops = body.get("opinions")
    if not isinstance(raw_ops, list):
        raise BadField(where + "opinions",
                       "missing" if raw_ops is None else f"expected an array, found {json_type(raw_ops)}")
    opinions = []
    for i, op in enumerate(raw_ops):
        at = f"{where}opinions[{i}]."
        if not isinstance(op, dict):
            raise BadField(at[:-1], f"expected an object, found {json_type(op)}")
        text = text_of(op, "text", at, numbers=False)
        author = text_of(op, "author", at) or None
        opinions.append(clean_opinion(split_lines(text), kind=text_of(op, "type", at) or "majority", author=author))
    if not any(o.paragraphs for o in opinions):
        raise BadField(where + "opinions", "no opinion has any text")
    cites = obj.get("citations") or []
    if not isinstance(cites, list):
        raise BadField("citations", f"expected an array, found {json_type(cites)}")
    citations = []
    for i, c in enumerate(cites):
        if not isinstance(c, dict):
            raise BadField(f"citations[{i}]", f"expected an object, found {json_type(c)}")
        citations.append((text_of(c, "type", f"citations[{i}].") or "official", text_of(c, "cite", f"citations[{i}].")))
    return CaseRecord(
        source=source, source_id=rid, name=text_of(obj, "name"), name_abbreviation=text_of(obj, "name_abbreviation"),
        decision_date=text_of(obj, "decision_date"), docket_number=text_of(obj, "docket_number"),
        citations=tuple(citations), court=named(obj, "court"), jurisdiction=named(obj, "jurisdiction"),
        head_matter=normal_form(text_of(body, "head_matter", where)),  # part of the case's text: one normal form
        judges=normal_form(lines_of(body, "judges", where)),
        parties=normal_form(lines_of(body, "parties", where)),
        attorneys=normal_form(lines_of(body, "attorneys", where)),
        opinions=tuple(opinions),
    )
