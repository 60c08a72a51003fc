"""Plain text: one case per ``.txt`` file, paragraphs separated by blank lines.

The case's id is the file's name (without ``.txt``); its name is the file's first paragraph
when that is a single short line (a caption such as ``Smith v. Jones``), else the id. Lines
inside a paragraph are joined with a space.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from statinterp.corpus.dataset import MAX_TEXT_CHARS
from statinterp.errors import InputError, read_limited
from statinterp.sources.records import CaseRecord, OpinionRecord, SkippedRecord
from statinterp.sources.registry import SourceFormat, register


def text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.txt") if p.is_file())


def text_case(text: str, case_id: str) -> CaseRecord:
    paragraphs = tuple(" ".join(p.split()) for p in re.split(r"\n[ \t\r\f\v]*\n", text) if p.strip())
    name = paragraphs[0] if paragraphs and len(paragraphs[0]) <= 200 and len(paragraphs) > 1 else case_id
    return CaseRecord(source="text", source_id=case_id, name=name, name_abbreviation="", decision_date="",
                      docket_number="", citations=(), court="", jurisdiction="", head_matter="", judges="",
                      parties="", attorneys="", opinions=(OpinionRecord("majority", None, paragraphs),))


def read_text(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    """A folder of ``.txt`` files (that folder only) or one ``.txt`` file."""
    for file in [path] if path.is_file() else text_files(path):
        try:
            with open(file, "rb") as fh:  # never more than the limit (4 bytes per character) is read
                raw = read_limited(fh, 4 * MAX_TEXT_CHARS)
        except OSError as exc:
            raise InputError(file, f"cannot be read ({exc.strerror or exc})") from None
        if len(raw) > 4 * MAX_TEXT_CHARS:
            yield SkippedRecord(str(file), file.stem, "(text)", f"over the limit of {MAX_TEXT_CHARS} characters")
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            yield SkippedRecord(str(file), file.stem, "(text)", f"not UTF-8 text (bad byte at offset {exc.start})")
            continue
        if not text.strip():
            yield SkippedRecord(str(file), file.stem, "(text)", "is empty")
            continue
        if len(text) > MAX_TEXT_CHARS:
            yield SkippedRecord(str(file), file.stem, "(text)", f"over the limit of {MAX_TEXT_CHARS} characters")
            continue
        yield text_case(text.replace("\r\n", "\n"), file.stem)


register(SourceFormat(
    "text", ".txt files, one case each", lambda p: read_text(Path(p.path)),
    lambda path: path.name.lower().endswith(".txt") and path.name != "bagit.txt",
    group=lambda path: True, files=text_files, order=40))
