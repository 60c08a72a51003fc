"""Plain-text readers: one case per ``.txt`` file (``text``), and the data set's own term files (``dataset``).

A ``.txt`` file is one case, paragraphs separated by blank lines.

The case's id is the file's name (without ``.txt``); its name is the caption at the head of its
text (:func:`~statinterp.sources.cleaning.caption_name`: "Smith v. Jones", a slip opinion's
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

**The annotated data set's own term zips** (or folders of ``TERM-*.json``), read back as cases.

Each term is loaded and validated by :func:`statinterp.corpus.dataset.load_corpus` (a problem
there stops with one line: a data-set file is validated as a whole), its cases as
:class:`~statinterp.corpus.dataset.Case`. Every case becomes a
record whose id is the case's CAP id (``original_id``; the data-set id when it has none), so a
case shared by several terms is stored once. Its head matter is the case text before its
first opinion; each opinion's lines are its paragraphs; text outside the listed opinions (the
data set omits some opinions) becomes an opinion of type ``unlisted``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from statinterp.corpus.dataset import load_corpus
from statinterp.errors import InputError, read_limited
from statinterp.progress import note
from statinterp.sources.cap import split_lines
from statinterp.sources.cleaning import caption_name, clean_plain, decode_text, normal_form
from statinterp.sources.records import CaseRecord, DecodedFile, OpinionRecord, SkippedRecord, SourceItem
from statinterp.sources.registry import SourceFormat, register, zip_names
from statinterp.text import MAX_TEXT_CHARS


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


def _split_case(text: str, ops: list) -> tuple[str, tuple[OpinionRecord, ...]]:
    """Head matter and opinions of a case text. The data set lists only some opinions of some
    cases (a concurrence may be in the case text but not in the opinion file): text between or
    after the listed opinions becomes an opinion of type ``unlisted``, so the stored case keeps
    its whole text."""
    placed = sorted((text.find(o.text), i) for i, o in enumerate(ops) if o.text and text.find(o.text) >= 0)
    if not placed:
        return text, tuple(OpinionRecord(o.type or "majority", o.author or None, split_lines(o.text)) for o in ops)
    out: list[OpinionRecord] = []
    head = text[:placed[0][0]].rstrip("\n")
    pos = placed[0][0]
    for start, i in placed:
        if start < pos:  # overlaps the previous opinion: keep it as listed
            start = pos
        gap = text[pos:start].strip("\n")
        if gap.strip():
            out.append(OpinionRecord("unlisted", None, split_lines(gap)))
        o = ops[i]
        out.append(OpinionRecord(o.type or "majority", o.author or None, split_lines(o.text)))
        pos = max(pos, start + len(o.text))
    tail = text[pos:].strip("\n")
    if tail.strip():
        out.append(OpinionRecord("unlisted", None, split_lines(tail)))
    return head, tuple(out)


def read_dataset(path: Path) -> Iterator[CaseRecord | SkippedRecord]:
    corpus = load_corpus(path)
    for term in corpus:
        by_case: dict[str, list] = {}
        for op in term.opinions.values():
            by_case.setdefault(op.case_id, []).append(op)
        for cid in sorted(term.cases):
            case = term.cases[cid]
            ops = sorted(by_case.get(cid, []), key=lambda o: (o.position if o.position is not None else 1 << 30, o.id))
            head, opinions = _split_case(case.text, ops)
            yield CaseRecord(
                source="dataset", source_id=case.original_id if case.original_id.strip() else cid,
                name=case.name, name_abbreviation=case.short_name, decision_date=case.date, docket_number="",
                citations=(("official", case.citation),) if case.citation else (),
                court=case.court, jurisdiction=case.jurisdiction, head_matter=head,
                judges="\n".join(case.judges), parties="\n".join(case.parties),
                attorneys="\n".join(case.attorneys), opinions=opinions,
            )


def _sniff(path: Path) -> bool:
    if path.name.lower().endswith(".zip"):
        return any(n.endswith("-case.json") for n in zip_names(path))
    return path.name.endswith("-case.json")


register(SourceFormat(
    "dataset", "the annotated data set's term zips or folders of TERM-*.json", lambda p: read_dataset(Path(p.path)),
    _sniff, group=lambda path: not path.name.lower().endswith(".zip"),
    files=lambda folder: sorted(p for p in folder.glob("*.json") if not p.is_dir()), order=20))
