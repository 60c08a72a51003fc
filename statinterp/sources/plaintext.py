"""Plain text: one case per ``.txt`` file, paragraphs separated by blank lines.

The case's id is the file's name (without ``.txt``); its name is the caption at the head of its
text (:func:`~statinterp.sources.captions.caption_name`: "Smith v. Jones", a slip opinion's
"FISHER v. UNIVERSITY OF TEXAS AT AUSTIN ET AL.", parties set on lines of their own around a "v."
line; never a clerk's stamp such as "FILED", a report number such as "T.C. Memo. 2020-26" or the
court's name), else the id; it has no short name: a citation writes the caption as cited
(:func:`~statinterp.corpus.pin_cites.cite_name`: "Fisher v. Univ. of Tex. at Austin"). Lines
inside a paragraph are joined with a space. The text goes through
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
from statinterp.sources.captions import caption_name
from statinterp.sources.cleaning import clean_plain, decode_text, normal_form
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, SourceItem
from statinterp.sources.registry import SourceFormat, register
from statinterp.text.limits import MAX_TEXT_CHARS


def text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.txt") if p.is_file())


def text_case(text: str, case_id: str) -> CaseRecord:
    text = normal_form(text)  # the caption too: one normal form (docs/data-format.md, "Cleaning")
    head: list[str] = []
    clean = clean_plain(text, head=head)
    caption = caption_name(text.split("\n", 400)[:400]) if len(clean.paragraphs) + len(head) > 1 else None
    return CaseRecord(source="text", source_id=case_id, name=caption or case_id, name_abbreviation="", decision_date="",
                      docket_number="", citations=(), court="", jurisdiction="", head_matter="\n".join(head), judges="",
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
