"""Footnotes at the foot of a one-page text (issue 34).

CourtListener's ``plain_text`` of a one-page order is one page ended by a form feed. Its footnotes
were looked for at the page's foot only when the text had two pages or more, so a one-page text
kept its footnote in the body. The genuine pages below are single pages of the fixtures
``pdf-modern/cand-04-0098.txt`` (N.D. Cal., *Alvarado v. FedEx Corp.*, page 1, footnote 1 with no
rule above it) and ``pdf-modern/tax-court-memo-2020-26.txt`` (page 3, footnote 2), each taken as a
text of its own; ``pdf-modern/ca10-21-800.txt`` (Tenth Circuit order, *In re Liebowitz*) is a
genuine one-page text with no footnote, which must lose nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from statinterp.sources.cleaning import pdf_paragraphs, strip_markers

MODERN = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "pdf-modern"


def _page(name: str, index: int) -> str:
    return (MODERN / name).read_text(encoding="utf-8").split("\f")[index] + "\f"


def _words(parts: list[str]) -> Counter:
    return Counter(re.findall(r"[A-Za-z]{2,}", strip_markers(" ".join(parts))))


def test_a_one_page_text_has_its_footnote_at_its_foot():
    paragraphs, notes = pdf_paragraphs(_page("cand-04-0098.txt", 0))
    note = "Defendant’s letter brief dated July 14, 2005."
    assert len(notes) == 1 and note in strip_markers(notes[0])  # before: no footnote
    assert not any(note in strip_markers(p) for p in paragraphs)  # before: a paragraph of the body


def test_a_one_page_text_keeps_every_word_with_its_notes_apart():
    page = _page("tax-court-memo-2020-26.txt", 2)
    paragraphs, notes = pdf_paragraphs(page)
    assert len(notes) == 1 and "all section references are to the Internal Revenue Code" in notes[0]
    before = pdf_paragraphs(page.replace("\f", ""))  # no page structure: no foot looked at
    assert _words(paragraphs + notes) == _words(before[0] + before[1])


def test_a_one_page_text_without_footnotes_loses_nothing():
    text = (MODERN / "ca10-21-800.txt").read_text(encoding="utf-8")
    assert text.count("\f") == 1
    paragraphs, notes = pdf_paragraphs(text)
    assert notes == []
    assert strip_markers(paragraphs[-1]).endswith("CHRISTOPHER M. WOLPERT, Clerk")
    banner = [ln for ln in text.splitlines() if ln.strip().startswith("Appellate Case:")]  # e-filing stamp
    assert len(banner) == 1
    assert _words(paragraphs) == _words([text]) - _words(banner)
