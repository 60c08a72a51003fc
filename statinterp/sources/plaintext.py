"""Plain text: one case per ``.txt`` file, paragraphs separated by blank lines.

The case's id is the file's name (without ``.txt``); its name is the file's first paragraph
when that is a single short line (a caption such as ``Smith v. Jones``), else the id; a
PDF-born text's name is its caption (a slip opinion's "FISHER v. UNIVERSITY OF TEXAS AT AUSTIN
ET AL.", not its running header); a caption that sets the parties on lines of their own around
a "v." line gives "X v. Y" (:func:`~statinterp.sources.cleaning.party_caption`), not the
court's name. Lines inside a paragraph are joined with a space. The text goes through
:mod:`statinterp.sources.cleaning` (page labels, footnotes, PDF layout). A file that is not
UTF-8 is decoded by the encoding ``charset-normalizer`` guesses (or the one given with
``statinterp ingest --encoding``); the guess is reported as a progress note
(:func:`statinterp.progress.note`: a ``statinterp: ...`` warning line of ``statinterp ingest``)
and listed in the ingest's summary (a :class:`~statinterp.sources.records.DecodedFile` before
the case).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from statinterp.errors import InputError, read_limited
from statinterp.progress import note
from statinterp.sources.cleaning import (
    clean_plain,
    decode_text,
    is_pdf_text,
    normal_form,
    party_caption,
    pdf_caption,
)
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, SourceItem
from statinterp.sources.registry import SourceFormat, register
from statinterp.text.limits import MAX_TEXT_CHARS


def text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.txt") if p.is_file())


def text_case(text: str, case_id: str) -> CaseRecord:
    text = normal_form(text)  # the caption too: one normal form (docs/data-format.md, "Cleaning")
    clean = clean_plain(text)
    paragraphs = clean.paragraphs
    caption = pdf_caption(text) if is_pdf_text(text) else None
    if caption is None and not (paragraphs and " v. " in paragraphs[0]):
        caption = party_caption(text)
    if caption is None:
        caption = paragraphs[0] if paragraphs and len(paragraphs[0]) <= 200 and len(paragraphs) > 1 else case_id
    return CaseRecord(source="text", source_id=case_id, name=caption, name_abbreviation="", decision_date="",
                      docket_number="", citations=(), court="", jurisdiction="", head_matter="", judges="",
                      parties="", attorneys="", opinions=(clean,))


def read_text(path: Path, encoding: str | None = None) -> Iterator[SourceItem]:
    """A folder of ``.txt`` files (that folder only) or one ``.txt`` file. ``encoding`` forces the
    encoding of every file (else UTF-8, or the guessed encoding of a file that is not UTF-8)."""
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
            text, used = decode_text(raw, encoding)
        except UnicodeDecodeError as exc:
            yield SkippedRecord(str(file), file.stem, "(text)",
                                f"not UTF-8 text (bad byte at offset {exc.start}) and no other encoding fits; "
                                "give one with --encoding")
            continue
        if not text.strip():
            yield SkippedRecord(str(file), file.stem, "(text)", "is empty")
            continue
        if len(text) > MAX_TEXT_CHARS:
            yield SkippedRecord(str(file), file.stem, "(text)", f"over the limit of {MAX_TEXT_CHARS} characters")
            continue
        if used is not None and encoding is None:
            note(f"{file}: not UTF-8; decoded as {used} (a guess; force another with --encoding)")
            yield DecodedFile(str(file), used)
        yield text_case(text.replace("\r\n", "\n"), file.stem)


register(SourceFormat(
    "text", ".txt files, one case each", lambda p: read_text(Path(p.path), p.encoding),
    lambda path: path.name.lower().endswith(".txt") and path.name != "bagit.txt",
    group=lambda path: True, files=text_files, order=40))
