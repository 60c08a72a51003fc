"""Source provisions: the statutory text each term comes from.

The shipped ``data/provisions.json`` holds the provision of all 42 terms of the data set
(public-domain U.S. Code text) plus the invented example term ``vehicle``. Its format is
``{"terms": [{"term", "key", "citation", "provision"}, ...]}``.

**The US Code**: a provision's text as the Office of the Law Revision Counsel publishes it (USLM
XML, one file per title: ``usc18.xml`` from https://uscode.house.gov/download/download.shtml).

:func:`parse_usc_cite` reads a citation such as ``18 U.S.C. § 1839(3)`` (or ``17 USC 1201(a)(3)(B)``)
as the USLM identifier of the provision, ``/us/usc/t18/s1839/3``; :func:`usc_provision` finds the
element with that identifier in a title file (streamed: a title is up to some hundred MB) and
gives its text: each level's number, heading, chapeau, content and continuation, one line per
level (``(3) the term “trade secret” means ...``, ``(A) the owner thereof ...``), without the
source credits and notes. ``rank --provision-cite CITE --uscode FILE`` and ``memo`` use it, so
the cite and the text stay together (:class:`~statinterp.corpus.provisions.Provision`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statinterp.cache.files import NotRegularFile, open_regular
from statinterp.errors import InputError, UsageError, check_unique_keys, parse_json, read_limited

__all__ = ["Provision", "ProvisionBook", "default_provisions_path", "load_provisions", "read_provision_file",
           "USLM_NAMESPACE", "parse_usc_cite", "usc_provision"]


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

USLM_NAMESPACE = "http://xml.house.gov/schemas/uslm/1.0"

_CITE = re.compile(r"^\s*(\d+[A-Za-z]?)\s*U\.?\s*S\.?\s*C\.?(?:\s*A\.?)?\s*(?:§+|sec(?:tion)?\.?)?\s*"
                   r"([0-9][0-9A-Za-z\-–]*)\s*((?:\(\s*[0-9A-Za-z]+\s*\))*)\s*$", re.IGNORECASE)

#: Elements whose text is not the provision's (history, notes, tables of contents).
_SKIPPED = {"sourceCredit", "notes", "note", "toc", "layout"}

#: Elements that are one line each (their number, heading, chapeau, content, continuation).
_LINE_PARTS = {"num", "heading", "chapeau", "content", "continuation", "proviso"}


def parse_usc_cite(cite: str) -> tuple[str, str]:
    """``18 U.S.C. § 1839(3)`` -> (``/us/usc/t18/s1839/3``, ``18 U.S.C. § 1839(3)``): the USLM
    identifier and the cite as it is written back."""
    m = _CITE.match(cite.replace("\u00a0", " "))
    if not m:
        raise UsageError(f"--provision-cite {cite!r}: give a US Code citation such as '18 U.S.C. § 1839(3)' "
                         "(TITLE U.S.C. § SECTION, then its subdivisions in parentheses)")
    title, section, subdivisions = m.group(1), m.group(2).replace("–", "-"), m.group(3)
    parts = re.findall(r"\(\s*([0-9A-Za-z]+)\s*\)", subdivisions)
    identifier = f"/us/usc/t{title}/s{section}" + "".join(f"/{p}" for p in parts)
    shown = f"{title} U.S.C. § {section}" + "".join(f"({p})" for p in parts)
    return identifier, shown


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _lines(element) -> list[str]:
    """The provision's text, one line per level."""
    lines: list[str] = []
    current: list[str] = []

    def flush() -> None:
        text = " ".join(" ".join(current).split())
        if text:
            lines.append(text)
        current.clear()

    def walk(el) -> None:
        for child in el:
            name = _local(child.tag)
            if name in _SKIPPED or not name:
                continue
            if name in _LINE_PARTS:
                if name == "num" and current:
                    flush()
                current.append(" ".join("".join(child.itertext()).split()))
                if name in ("content", "chapeau", "continuation", "proviso"):
                    flush()
            else:
                flush()
                walk(child)
        flush()

    walk(element)
    return lines


def usc_provision(path: str | Path, cite: str) -> tuple[str, str]:
    """The text of the provision ``cite`` names in the USLM title file ``path`` and the cite as
    written back (:func:`parse_usc_cite`); :class:`InputError` naming the file when it is not a
    USLM file or lacks the provision."""
    from lxml import etree

    identifier, shown = parse_usc_cite(cite)
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "is not a file; give the USLM XML of the title (usc18.xml, from "
                         "https://uscode.house.gov/download/download.shtml)")
    found = None
    seen_uslm = False
    try:
        for _, element in etree.iterparse(str(path), events=("end",), huge_tree=True, resolve_entities=False,
                                          no_network=True):
            if not seen_uslm and isinstance(element.tag, str) and element.tag.startswith("{" + USLM_NAMESPACE):
                seen_uslm = True
            if element.get("identifier") == identifier and _local(element.tag) not in ("ref", "toc"):
                found = element
                break
            if _local(element.tag) == "section":
                element.clear()  # a title is large: sections passed over are dropped as they end
    except etree.XMLSyntaxError as exc:
        raise InputError(path, f"is not well-formed XML ({exc}); give the USLM XML of the title") from None
    if found is None:
        what = "is not USLM XML (no element in its namespace)" if not seen_uslm else \
            f"holds no provision {identifier} ({shown})"
        raise InputError(path, f"{what}; give the USLM XML of title {identifier.split('/')[3][1:]}")
    text = "\n".join(_lines(found))
    if not text.strip():
        raise InputError(path, f"provision {identifier} ({shown}) has no text")
    return text, shown
