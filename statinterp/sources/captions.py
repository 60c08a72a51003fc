"""A case's name from the caption at the head of its text (a ``.txt`` file, a PDF's text).

:func:`caption_name` takes the opinion's first lines and returns its "X v. Y" caption, never a
docket stamp ("FILED", "ENTERED", "RECEIVED", a date stamp), a report number ("T.C. Memo.
2020-26", "No. 21-50498"), a running header ("Case: 21-50498 Document: ...") or the court's
name. In order:

1. a PDF-born text's all-capitals caption ("FISHER v. UNIVERSITY OF TEXAS AT AUSTIN ET AL.",
   :func:`~statinterp.sources.cleaning.pdf_caption`);
2. a block of the head (the short lines before the first long paragraph) holding "v." between
   two parties ("Smith v. Jones"; the Tax Court's "JOHN F. BORDELON, Petitioner v." /
   "COMMISSIONER OF INTERNAL REVENUE, Respondent"), or "In re X" / "Matter of X";
3. parties set on lines of their own around a "v." line
   (:func:`~statinterp.sources.cleaning.party_caption`);
4. the first paragraph when it is a single short line that is none of the above things.

None when nothing fits (the reader then names the case by its file). The caption is returned as
written, designations and all; a citation writes it as cited
(:func:`statinterp.corpus.pin_cites.cite_name`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from statinterp.sources.cleaning import is_pdf_text, party_caption, pdf_caption

__all__ = ["caption_name", "is_stamp"]

#: How many lines of the text's head are read.
HEAD_LINES = 200
#: A block of this many words or more is the opinion's body: the caption comes before it.
BODY_WORDS = 40

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
#: Lines that are no case name: a clerk's stamps, dates, report and docket numbers, running
#: headers, the court's name, the kind of decision.
_STAMP_PARTS = (
    r"\[?\s*(?:FILED|ENTERED|RECEIVED|DOCKETED|ISSUED|RELEASED|RECORDED|SUBMITTED|ARGUED|DECIDED|CORRECTED|"
    r"AMENDED|REVISED|PUBLISHED|UNPUBLISHED|NOT FOR PUBLICATION|NOT PRECEDENTIAL|PRECEDENTIAL|DO NOT PUBLISH|"
    r"FOR PUBLICATION|NOTICE|COPY|CLERK|MANDATE|OPINION|MEMORANDUM|ORDER|JUDGMENT|SYLLABUS|PER CURIAM)\b",
    r"T\.\s?C\.\s+(?:Memo|Summary Opinion)|Nos?\.|Case No|Docket No|Appeal No|Civil Action|Case:|Cite as|"
    r"\(Slip Opinion\)|USCA\d*\s+Case|Appellate Case",
    r"\d{4}[- ][A-Za-z]+[- ]\d+\b(?!.*\sv\.)",  # a public-domain citation: 2022-NCSC-1
    r"\d{1,2}/\d{1,2}/\d{2,4}",
    _MONTH + r"\s+\d{1,2},?\s+\d{4}",
    r"(?!In re\b|In the Matter\b|Matter of\b)(?!.*\sv\.?\s).*\b(?:COURT|CIRCUIT|TRIBUNAL)\b",  # the court
)
_STAMP = re.compile("^(?:" + "|".join(_STAMP_PARTS) + ")", re.IGNORECASE)
_VERSUS = re.compile(r"(?:^|\s)(?:v\.?|vs\.?|versus)(?:\s|$)", re.IGNORECASE)
_MATTER = re.compile(r"^(?:In re|In the Matter of|Matter of|Ex parte|Estate of)\s+\S", re.IGNORECASE)


def is_stamp(line: str) -> bool:
    """Whether a line is a clerk's stamp, a date, a report or docket number, a running header
    or a court's name: never a case's name."""
    line = " ".join(line.split())
    if not line or not re.search(r"[A-Za-z]{2}", line):
        return True
    return _STAMP.match(line) is not None


def _blocks(lines: Sequence[str]) -> list[list[str]]:
    """The head's blocks (runs of non-blank lines) before the first long one (the body)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for raw in [*lines[:HEAD_LINES], ""]:
        line = " ".join(raw.replace("\f", " ").split())
        if line:
            current.append(line)
            continue
        if current:
            if len(" ".join(current).split()) >= BODY_WORDS:
                break
            blocks.append(current)
            current = []
    return blocks


def _versus_block(blocks: list[list[str]]) -> str | None:
    """The first block that reads "X v. Y" (or "In re X"), its stamps and numbers left out."""
    for block in blocks:
        kept = [ln for ln in block if not is_stamp(ln)]
        text = " ".join(kept)
        m = _VERSUS.search(text)
        if m and m.start() > 0 and text[m.end():].strip() and len(text) <= 400:
            return text.rstrip(" ,;:")
        if kept and _MATTER.match(kept[0]) and len(text) <= 300:
            return text.rstrip(" ,;:")
    return None


def caption_name(lines: Sequence[str]) -> str | None:
    """The case name at the head of an opinion's text (its lines, in order): its "X v. Y" caption
    as written; None when it has none that is not a stamp or a number. See the module docstring."""
    lines = [ln.rstrip("\n") for ln in lines[:HEAD_LINES]]
    text = "\n".join(lines)
    if is_pdf_text(text):
        found = pdf_caption(text)
        if found and _VERSUS.search(found) and not is_stamp(found):
            return found
    blocks = _blocks(lines)
    found = _versus_block(blocks)
    if found:
        return found
    found = party_caption(text)
    if found and not is_stamp(found.split(" v. ")[0]):
        return found
    if len(blocks) > 0 and len(blocks[0]) == 1 and len(blocks[0][0]) <= 200 and not is_stamp(blocks[0][0]):
        return blocks[0][0]
    return None
