"""Reading one JSON case object field by field: bad fields become :class:`SkippedRecord` reasons."""

from __future__ import annotations

from statinterp.errors import json_type
from statinterp.sources.cleaning import clean_opinion, normal_form
from statinterp.sources.records import CaseRecord
from statinterp.text.limits import MAX_TEXT_CHARS


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
