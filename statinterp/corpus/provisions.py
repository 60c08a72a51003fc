"""Source provisions: the statutory text each term comes from.

The shipped ``data/provisions.json`` holds the provision of all 42 terms of the data set
(public-domain U.S. Code text) plus the invented example term ``vehicle``. Its format is
``{"terms": [{"term", "key", "citation", "provision"}, ...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statinterp.cache.files import NotRegularFile, open_regular
from statinterp.errors import InputError, check_unique_keys, parse_json, read_limited


@dataclass(frozen=True)
class Provision:
    term: str
    key: str
    citation: str
    text: str


class ProvisionBook:
    """Provisions by term key, with user overrides."""

    def __init__(self, provisions: dict[str, Provision], source: str = ""):
        self._by_key = dict(provisions)
        self.source = source

    def get(self, key: str) -> Provision | None:
        return self._by_key.get(key)

    def keys(self):
        return self._by_key.keys()

    def with_override(self, key: str, text: str, citation: str = "user-supplied") -> ProvisionBook:
        book = ProvisionBook(self._by_key, self.source)
        book._by_key[key] = Provision(key.replace("_", " "), key, citation, text)
        return book


#: Refuse provisions files (and ``--provision-file`` texts) larger than this many bytes.
MAX_PROVISIONS_BYTES = 64 * 1024 * 1024


def default_provisions_path() -> Path:
    return Path(str(resources.files("statinterp.data").joinpath("provisions.json")))


def _read_bounded(path: Path) -> bytes:
    """The bytes of a provisions or provision file, refusing one over the size limit, and a FIFO
    or device (opened without blocking: a FIFO would wait for a writer forever)."""
    try:
        with open_regular(path) as fh:
            raw = read_limited(fh, MAX_PROVISIONS_BYTES)
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except NotRegularFile as exc:
        raise InputError(path, f"is {exc.kind}, not a file; give a regular file") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_PROVISIONS_BYTES:
        raise InputError(path, f"is larger than the limit of {MAX_PROVISIONS_BYTES} bytes")
    return raw


def load_provisions(path: str | Path | None = None) -> ProvisionBook:
    """Read a provisions file (default: the shipped one)."""
    path = Path(path) if path is not None else default_provisions_path()
    raw = _read_bounded(path)
    data = parse_json(raw, path)
    if not isinstance(data, dict) or not isinstance(data.get("terms"), list):
        raise InputError(path, 'expected {"terms": [{"term", "key", "citation", "provision"}, ...]}')
    check_unique_keys(data, path)
    out: dict[str, Provision] = {}
    for i, rec in enumerate(data["terms"]):
        record = f"terms[{i}]"
        if not isinstance(rec, dict):
            raise InputError(path, "expected an object", record=record)
        check_unique_keys(rec, path, record=record)
        for name in ("key", "provision"):
            if not isinstance(rec.get(name), str) or not rec[name].strip():
                raise InputError(path, "missing or not a non-empty string", record=record, field=name)
        for name in ("term", "citation"):
            if rec.get(name) is not None and not isinstance(rec[name], str):
                raise InputError(path, "expected a string", record=record, field=name)
        key = "_".join(rec["key"].strip().lower().replace("-", " ").replace("_", " ").split())  # as term_key
        if not key:
            raise InputError(path, "is not a term name", record=record, field="key")
        if key in out:
            raise InputError(path, f"term key {key!r} appears twice", record=record, field="key")
        out[key] = Provision(
            term=str(rec.get("term") or key.replace("_", " ")),
            key=key,
            citation=str(rec.get("citation") or ""),
            text=rec["provision"],
        )
    return ProvisionBook(out, str(path))


def read_provision_file(path: str | Path) -> str:
    """A plain-text provision given with ``--provision-file``."""
    path = Path(path)
    raw = _read_bounded(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    if not text.strip():
        raise InputError(path, "is empty")
    return text
