"""Errors that the CLI reports as one clear line (exit status 2), and the checks that raise them.

Beside the error types: "did you mean" suggestions, and the strict reading of input files every
layer shares (a bounded read, JSON with unique keys, a bounded number of values and no lone
surrogates, a value's JSON type and a name made printable for a message). What only the CLI
shows (text safe for a terminal) is in :mod:`statinterp.app.output`.
"""

from __future__ import annotations

import re


class StatinterpError(Exception):
    """Base class of every error statinterp reports to a user without a traceback."""

    exit_code = 2


class InputError(StatinterpError):
    """Bad input data: names the file, the record and the field that is wrong."""

    def __init__(self, file: object, problem: str, record: str | None = None, field: str | None = None):
        self.file = str(file)
        self.record = record
        self.field = field
        self.problem = problem
        where = [self.file]
        if record is not None:
            where.append(f"record {record!r}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(": ".join(where) + ": " + problem)


class UsageError(StatinterpError):
    """A bad option value or an impossible request (unknown method, missing term, ...)."""


class OutputError(StatinterpError):
    """An output file cannot be written (missing folder, no permission, disk full, ...)."""


def closest_names(name: str, known, n: int = 3) -> list[str]:
    """Up to ``n`` of the names ``known`` closest to ``name`` (ignoring case), best first."""
    import difflib

    by_lower = {k.lower(): k for k in known}
    return [by_lower[m] for m in difflib.get_close_matches(name.strip().lower(), list(by_lower), n=n, cutoff=0.6)]


def did_you_mean(close: list[str]) -> str:
    """``did you mean 'a', 'b' or 'c'?`` (empty for no names)."""
    if not close:
        return ""
    names = [repr(c) for c in close]
    return "did you mean " + (", ".join(names[:-1]) + " or " if len(names) > 1 else "") + names[-1] + "?"


class StatinterpWarning(UserWarning):
    """A problem statinterp recovered from (e.g. a damaged cache entry); shown as one line."""


class DuplicateKeys(dict):
    """A parsed JSON object in which some keys occur more than once (``json`` keeps the last)."""

    duplicates: list[str]


def _object_pairs(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    dups: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in dups:
            dups.append(key)
        seen.add(key)
    out = DuplicateKeys(obj)
    out.duplicates = dups
    return out


def read_limited(fh, limit: int) -> bytes:
    """Read a binary file object to its end, but never more than ``limit + 1`` bytes.

    Memory grows with what is actually read, whatever size the file or a zip header claims;
    a result longer than ``limit`` means the file is too large.
    """
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = fh.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


#: The most values one JSON document (or one JSON line) may hold, counted from above by its commas
#: and opening brackets before it is parsed: a parsed value takes up to ~130 bytes (an empty object
#: under a key), so a document within this bound takes at most ~0.5 GB parsed, whatever its size on
#: disk (docs/guarantees.md, "Memory"). Real ones hold far fewer (a 6 MB term file ~0.2 M).
MAX_JSON_VALUES = 4_000_000


def json_values_problem(raw: bytes | str) -> str | None:
    """Why ``raw`` (JSON) is refused before parsing: more values than :data:`MAX_JSON_VALUES`
    (counted by its commas and opening brackets, strings' too: an upper bound). None if it may be read."""
    chars = (",", "{", "[") if isinstance(raw, str) else (b",", b"{", b"[")
    n = 0
    for c in chars:
        n += raw.count(c)  # type: ignore[arg-type]
        if n > MAX_JSON_VALUES:
            return (f"holds more than {MAX_JSON_VALUES:,} JSON values (commas and brackets counted): too many to "
                    "read at once; give such records as JSON lines (one a line)")
    return None


def parse_json(raw: bytes, where: object):
    """Decode UTF-8 (an optional BOM is allowed) JSON, or raise :class:`InputError` naming ``where``.

    Objects whose keys repeat come back as :class:`DuplicateKeys`; check them with
    :func:`check_unique_keys`. A document of more than :data:`MAX_JSON_VALUES` values is refused
    before it is parsed (memory stays bounded).
    """
    import json

    problem = json_values_problem(raw)
    if problem is not None:
        raise InputError(where, problem)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(where, f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        data = json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        raise InputError(where, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(where, "malformed JSON: nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):  # rare: only then walk the parsed data
        check_no_lone_surrogates(data, where)
    return data


#: A JSON ``\uD800``-``\uDFFF`` escape: the only way a surrogate gets into decoded JSON (valid
#: pairs are joined into one character by the parser; lone ones stay and cannot be encoded).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate_path(value: object, path: tuple) -> tuple | None:
    """The path (keys and indices) to the first string in ``value`` with a lone surrogate."""
    if isinstance(value, str):
        return None if _encodable(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                return path + (key,)
            found = _lone_surrogate_path(item, path + (key,))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate_path(item, path + (i,))
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_no_lone_surrogates(data: object, where: object, record: str | None = None) -> None:
    """Raise :class:`InputError` (file, record, field) if a string in parsed JSON holds a lone
    surrogate (an unpaired ``\\ud800``-style escape): it is no text, and would fail later when
    hashed or written out. ``record`` names the record when ``data`` is one (a JSON line)."""
    path = _lone_surrogate_path(data, ())
    if path is None:
        return
    field = None
    parts = [p if isinstance(p, int) else printable(p) for p in path]
    if record is not None:  # the caller names the record (e.g. "line 3"): the path is the field
        parts.insert(0, record)
    if parts:
        record = str(parts[0])
        rest = parts[1:]
        while rest and isinstance(rest[0], int):
            record += f"[{rest.pop(0)}]"
        if rest:
            field = ".".join(f"[{p}]" if isinstance(p, int) else p for p in rest).replace(".[", "[")
    raise InputError(where, "contains a lone surrogate escape (e.g. \\ud800 without its pair): not valid "
                     "Unicode text; fix or remove it", record=record, field=field)


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot hold escaped: the bytes of a name that is not UTF-8 (which
    Python keeps as lone surrogates U+DC80..U+DCFF) as backslash-x escapes, any other lone
    surrogate as a backslash-u escape."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_unique_keys(obj: object, where: object, record: str | None = None) -> None:
    """Raise :class:`InputError` if ``obj`` (top level: ids; inside a record: fields) repeats a key."""
    if isinstance(obj, DuplicateKeys):
        key = obj.duplicates[0]
        if record is None:
            raise InputError(where, "duplicate key: occurs more than once in the file (ids must be unique)", record=key)
        raise InputError(where, "duplicate key: occurs more than once in the record", record=record, field=key)


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type (for messages: "expected a string, found null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
