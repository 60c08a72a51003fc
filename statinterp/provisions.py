"""Source provisions: the statutory text each term comes from.

The shipped ``data/provisions.json`` holds the provision of all 42 terms of the data set
(public-domain U.S. Code text) plus the invented example term ``vehicle``. Its format is
``{"terms": [{"term", "key", "citation", "provision"}, ...]}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import InputError


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

    def with_override(self, key: str, text: str, citation: str = "user-supplied") -> "ProvisionBook":
        book = ProvisionBook(self._by_key, self.source)
        book._by_key[key] = Provision(key.replace("_", " "), key, citation, text)
        return book


def default_provisions_path() -> Path:
    return Path(str(resources.files("statinterp.data").joinpath("provisions.json")))


def load_provisions(path: str | Path | None = None) -> ProvisionBook:
    """Read a provisions file (default: the shipped one)."""
    path = Path(path) if path is not None else default_provisions_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("terms"), list):
        raise InputError(path, 'expected {"terms": [{"term", "key", "citation", "provision"}, ...]}')
    out: dict[str, Provision] = {}
    for i, rec in enumerate(data["terms"]):
        record = f"terms[{i}]"
        if not isinstance(rec, dict):
            raise InputError(path, "expected an object", record=record)
        for name in ("key", "provision"):
            if not isinstance(rec.get(name), str) or not rec[name].strip():
                raise InputError(path, "missing or not a non-empty string", record=record, field=name)
        key = rec["key"].strip()
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "does not exist") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not text.strip():
        raise InputError(path, "is empty")
    return text
