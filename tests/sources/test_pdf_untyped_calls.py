"""PDFium called without pypdfium2's argument types (statinterp.sources.pdf._pdfium_function).

The reader's loops over every object and character of a page call PDFium through untyped function
objects (the typed ones' argument checks took over half their time). The typed functions stand in
when the library's handle cannot be had; both must read a PDF alike, and the typed functions
pypdfium2 itself uses must be left as they were.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pypdfium2.raw as pdfium_c
import pytest

from statinterp.sources import pdf as pdf_module
from statinterp.sources.pdf import read_pdf
from statinterp.sources.records import CaseRecord

GENUINE = Path(__file__).resolve().parents[1] / "fixtures" / "genuine" / "pdf"


def _record(path: Path) -> tuple:
    record = read_pdf(path)
    assert isinstance(record, CaseRecord), record
    return record.name, record.decision_date, [(op.paragraphs, op.footnotes, op.page_starts) for op in record.opinions]


@pytest.mark.parametrize("name", ["cand-04-0098-alvarado-fedex.pdf", "ca11-08-14991-robinson.pdf",
                                  "caed-15-208-crane-order.pdf"])
def test_typed_functions_read_the_same(name, monkeypatch):
    untyped = _record(GENUINE / name)

    def typed(function_name: str, restype=ctypes.c_int):
        return getattr(pdfium_c, function_name)

    monkeypatch.setattr(pdf_module, "_pdfium_function", typed)
    assert _record(GENUINE / name) == untyped


def test_untyped_functions_are_objects_of_their_own():
    untyped = pdf_module._pdfium_function("FPDFPage_GetObject", pdfium_c.FPDF_PAGEOBJECT)
    assert untyped is not pdfium_c.FPDFPage_GetObject
    assert pdfium_c.FPDFPage_GetObject.argtypes  # pypdfium2's own binding keeps its argument types
    assert pdfium_c.FPDFText_GetCharAngle.restype is ctypes.c_float
    assert pdf_module._pdfium_function("FPDFText_GetCharAngle", ctypes.c_float).restype is ctypes.c_float
