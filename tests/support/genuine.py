"""The genuine source files kept as fixtures (tests/fixtures/genuine/, their sources in its README)
and the opinion statinterp stores from one of them, read by the text route or the PDF route."""

from __future__ import annotations

from pathlib import Path

from statinterp.sources.cleaning import clean_plain
from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord, OpinionRecord
from tests.support.paths import FIXTURES

#: The genuine files: court opinions as their sources publish them.
GENUINE = FIXTURES / "genuine"


def text_opinion(path: Path) -> OpinionRecord:
    """The opinion of a plain text file (``pdftotext -layout`` of a PDF, a CourtListener
    ``plain_text``), its head matter set apart as the PDF reader sets it."""
    return clean_plain(path.read_text(encoding="utf-8"), head=[])


def pdf_opinion(path: Path) -> OpinionRecord:
    """The first opinion the PDF reader stores of a PDF file."""
    record = read_pdf(path)
    assert isinstance(record, CaseRecord), record
    return record.opinions[0]
