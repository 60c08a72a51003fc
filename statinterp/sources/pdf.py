"""PDF opinions read directly: one case per ``.pdf`` file, separated by layout.

The case's id is the file's name without ``.pdf`` (as for ``.txt``). The text layer is read with
pypdfium2 (PDFium: each character's position and size), and each page's lines are sorted by
what they are, from where they sit and how big they are, not from their words alone (a space the PDF
sets as text of its own that PDFium leaves out is put back: :func:`_dropped_spaces`):

* **Running headers and footers** -- lines at a page's edge (its three highest and two lowest
  lines, or in its top or bottom :data:`EDGE_SHARE`) whose text (digits aside) recurs at the same
  height on three pages or half of them, or among the three highest (two lowest) lines of three
  pages or half of them at any height (portrait and landscape pages), or differs from such a line
  by a few characters; any line recurring at one height on half of four pages or more
  (repeated captions, "Opinion of the Court"), court e-filing banners ("Case: 21-50498 Document:
  00516242060 Page: 7 Date Filed: ...", "Cite as:") and page numbers ("3", "- 4 -", "Page 3 of
  10") -- leave the text. Pleading paper's line numbers go too (:func:`_line_numbers`: a column
  of numbers alone counting 1, 2, 3, ... down the page, evenly spaced, or a number alone left of
  the page's text column), with any text beyond them in the margin; they are never the page's
  number. Text set sideways (:func:`_turned`: at another angle than most of the page's text, as
  a pleading paper's "United States District Court" read upwards in the margin) is never the
  page's text. A clerk's "FILED" stamp block, separator lines ("_____") and a stamp's lone
  letter in a large font go too.
* **Footnotes**: a line that opens with a footnote mark (a number in a smaller font, or raised)
  low on the page or in a smaller font starts the page's footnotes; so does a rule of dashes
  ("——————"), a drawn footnote rule (a short horizontal line at the left margin, looked for on
  a page after one with footnotes: a footnote carried over without a mark), and a run of lines
  at the foot of the page in a smaller font than the body's that opens with a mark or goes on
  from the page before (a table in a small font is no footnote). Everything below that point is
  footnotes: numbered as the court numbered them (:func:`layout`), stored apart from the
  paragraphs in order, without their numbers, as every reader stores them
  (:attr:`~statinterp.sources.records.OpinionRecord.footnotes`); a footnote carried over to the
  next page ("9(...continued)") stays one footnote.
* **Footnote marks** in the body (digits or ``*`` in a font under :data:`MARK_RATIO` of the
  line's size) leave the text, so no word carries one ("section 6662(a)2" reads
  "section 6662(a)").
* **Paragraphs**: lines are joined into paragraphs; a paragraph starts where the first line is
  indented, where the gap above a line is over :data:`GAP_RATIO` times the document's usual line
  gap (so double spacing is not a break), or after a short line that ends a sentence; a list's
  item ("c. ", "(3) ") after a line that ends one or a colon, and a short line in capitals ("IT
  IS SO ORDERED") are paragraphs of their own; each row
  of a table (a line in three cells or more, parted by gaps over :data:`CELL_GAP` times its
  font size, or two beside a caption's ")" column) is a paragraph of its own. Words
  hyphenated at a line end are rejoined (:class:`~statinterp.sources.cleaning.Dehyphenator`).
* **Pages**: each page's printed number (a number alone at its head or foot, or a running
  header's: the one that goes on from the page before, else one centred on the page; else its
  place in the file) is kept as a page start
  (:attr:`~statinterp.sources.records.OpinionRecord.page_starts`) for pin cites of slip opinions;
  a footnote starts on the page it stands on (one carried over goes on to the next page there).

* **Head matter**: what comes before the opinion's start -- its author's line ("SELYA, Circuit
  Judge.", "JUSTICE SOTOMAYOR delivered the opinion of the Court."; the opinion's ``author``),
  "Per Curiam:", an order's title in capitals ("ORDER GRANTING ...", "MEMORANDUM AND ORDER":
  the title is head matter too), or an opening heading ("OPINION", "Memorandum Opinion",
  "Introduction", in any case) in the first 40 % of the paragraphs or characters -- is the case's
  ``head_matter`` (caption, syllabus, counsel), as in CAP; without such a start all the text is
  the opinion's (:func:`~statinterp.sources.cleaning.split_head`, the rule plain text uses too).
  The rest of a caption under the title and an order's closing lines after its last sentence
  (signature, clerk, "Dated: ...") are head matter too (:func:`~statinterp.sources.cleaning.split_matter`).
* **Separate opinions**: a concurrence or dissent starts at its author's line ("BARRON, Circuit
  Judge, concurring ...", "JUSTICE THOMAS, dissenting.") and is an opinion of its own
  (:func:`split_opinions`), with the footnotes that stand on its pages.

The decision date ("Filed February 20, 2020", "Decided ...", a date line of its own, else the
e-filing banner's "Date Filed") and the docket number ("No. 21-50498") come from the first page.
So does the court (:func:`_court`): courts-db's id of the court its head names above the caption
("United States Court of Appeals / For the First Circuit" -> ``ca1``, cited "1st Cir."), else "".
The case's name comes from the caption on the first page ("X v. Y", parties on lines of their
own around "v." or "versus", roles such as "Petitioners" dropped), never from a docket stamp or a
report number; a name that keeps a role or a docket number (a caption in a ":" column) is read
again by its left column (:func:`~statinterp.sources.cleaning.column_caption`). Without a caption
the name says so, "[no case name found: ID.pdf]", and ``ingest`` notes the file. A file with no
text layer (a scan) or one PDFium cannot open is a skipped record with one line saying so ("no
text layer: run OCR first"). Bytes before ``%PDF`` (a court download's preamble) are skipped.

:func:`read_pdf` reads one file (for studies and tests); the format ``pdf`` is registered for
``statinterp ingest``. The thresholds were chosen on the Tax Court memorandum and the First
Circuit opinion of ``tests/fixtures/genuine/pdf/`` and are checked on the other courts there.
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections import Counter
from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statinterp.errors import InputError
from statinterp.progress import note
from statinterp.sources.cleaning import (
    CAPITALS_NAME,
    JUSTICE_TITLE,
    LIST_ITEM,
    MARGIN_SHARE,
    MIN_PLEADING_LINES,
    PAGE_CLOSE,
    PAGE_OPEN,
    SLASHES,
    SPLIT_MARKER,
    Dehyphenator,
    author_name,
    clean_opinion,
    column_caption,
    column_start,
    dehyphenate,
    is_banner_line,
    page_labels,
    page_marker,
    party_caption,
    split_matter,
    strip_markers,
    tidy_caption,
    two_columns,
)
from statinterp.sources.records import CaseRecord, SkippedRecord, SourceItem
from statinterp.sources.registry import SourceFormat, register
from statinterp.text import MAX_TEXT_CHARS
from statinterp.text.headings import MIN_TABLE_ROWS, ends_open

#: A mark is a digit (or star) in a font under this share of its line's size.
MARK_RATIO = 0.8
#: A footnote line's font is under this share of the body's size (when it has no mark).
NOTE_RATIO = 0.9
#: A gap above a line over this many times the usual line gap starts a paragraph.
GAP_RATIO = 1.35
#: A line is a running header or footer when it recurs on this share of the pages (at least 2;
#: three pages are enough at a page's edge).
REPEAT_SHARE = 0.5
#: The top and bottom shares of a page where headers, footers and page numbers are looked for.
EDGE_SHARE = 0.12
#: A gap between two pieces of one printed line wider than this many times its font size parts
#: a table's cells (a justified line's widest word gap is under one).
CELL_GAP = 2.0
#: A line wider than this many times the page's usual width per letter is looked at for cells.
SPARSE = 1.15
#: A page whose usual line is wider than this many times its font size per letter (a table's page)
#: has every line looked at.
WIDE = 0.55
#: A space the PDF sets apart (:func:`_dropped_spaces`) lies on the baseline of the letters it parts,
#: within this share of their font size.
SPACE_DRIFT = 0.2
#: How far (points) from a space object's place PDFium looks for the letter set there (:func:`_dropped_spaces`).
SPACE_REACH = 2.0
#: The most bytes of one PDF file read.
MAX_PDF_BYTES = 256 * 1024 * 1024
#: How far into the file ``%PDF`` is looked for.
HEADER_SEARCH = 64 * 1024

_SEGMENT = re.compile("[^\r\n\ufffe\x02]+[\ufffe\x02]?")
_MAY_MARK = re.compile(r"[\d*†‡]")
_MARK_CHARS = re.compile(r"\d{1,3}|[*†‡]{1,3}")
_NUMBER_LINE = re.compile(r"^(?:-\s*)?(?:Page\s+)?(\d{1,4})(?:\s*-)?(?:\s+of\s+\d{1,4})?$", re.IGNORECASE)
_NUMBER_COLUMN = re.compile(r"^(?:\d{1,2}\s+)+\d{1,2}$")
_PRINTED_PAGE = (re.compile(r"^Cite as:.*\s(\d{1,4})$"), re.compile(r"^(\d{1,4})\s+\S.* v\. .*$"),
                 re.compile(r"^\(Slip Opinion\).*\s(\d{1,4})$"))
_STAR_PAGE = re.compile(r"\[\*\d{1,5}\]\s*")  # the Tax Court's own "[*4]" page labels: the page is known
_CONTINUED = re.compile(r"^\(\.{2,3}\s?continued\)\s*", re.IGNORECASE)
_NOTE_HEAD = re.compile(r"^(?:\d{1,3}|\*{1,3}|[†‡])(?:\s|$)|^\(\.{2,3}\s?continued\)", re.IGNORECASE)
_CONTINUES = re.compile(r"\s*\(continued\.{2,3}\)$", re.IGNORECASE)
_SEPARATOR = re.compile(r"^[_—–─-]{5,}$")  # a line of its own, not a footnote rule: no text
_TEXT_RULE = re.compile(r"^[—─–]{4,30}$")
_PAGE_LABEL = re.compile(f"{PAGE_OPEN}([^{PAGE_CLOSE}]*){PAGE_CLOSE}")
_BULLETS = "•◦▪‣●\uf0b7\uf0a7\uf076\uf0d8"
_PRIVATE_BULLETS = str.maketrans({"\uf0b7": "•", "\uf0a7": "▪", "\uf076": "•", "\uf0d8": "•"})  # Symbol font
_TERMINAL = re.compile(r"[.?!:;”\"’')\]]$")
#: A list item's head: "c. ", "(c) ", "3. ", "(3) ", "iv. " ("v. " is a case name's).
_ENUMERATED = re.compile(r"^(?!v\.)(?:\(?[a-z]\)|\(\d{1,2}\)|\d{1,2}\)|[a-z]\.|\d{1,2}\.|\(?[ivx]{1,5}\)"
                         r"|[ivx]{2,5}\.)\s+\S")
_ROLES = re.compile(r"(?:,?\s*\b(?:et al\.?|Petitioners?|Respondents?|Plaintiffs?|Defendants?|Appellants?|Appellees?"
                    r"|Intervenors?|Movants?|Claimants?|Cross[-\s]\w+|and|[/\-–—&])\b\.?)+[\s,.;:]*$", re.IGNORECASE)


@dataclass
class _Line:
    """One printed line: its text (footnote marks removed), where it sits, its font size."""

    text: str
    x0: float
    x1: float
    y: float  # baseline, from the page's foot up
    size: float
    page: int
    lead: str | None = None  # the footnote mark the line opens with
    marks: list[str] = field(default_factory=list)
    cells: int = 1  # pieces set apart by a gap wider than :data:`CELL_GAP` (a table's row)
    rotated: bool = False  # set at another angle than the page's text (a margin's vertical court name)
    column: int = 0  # 1: in a two-column page's right column (moved left over the gutter: :func:`_move_right_column`)


@dataclass
class PdfLayout:
    """A PDF's text sorted by layout (what :func:`read_pdf` stores, before cleaning)."""

    paragraphs: list[str]  # with page markers (:func:`~statinterp.sources.cleaning.page_marker`)
    footnotes: list[tuple[str, str]]  # (label, text): "" for a note with no label; page markers as paragraphs
    page_labels: list[str]
    caption: str | None  # the case's name from the first page's caption
    dropped: list[str]  # running headers, footers, page numbers, line numbers, stamps
    decision_date: str = ""  # YYYY-MM-DD from the first page ("Filed February 20, 2020"), or ""
    docket_number: str = ""  # from the first page ("No. 21-50498"), or ""
    court: str = ""  # courts-db's id of the court the first page's head names ("ca8"), or ""


class PdfProblem(Exception):
    """Why a PDF cannot be read: its one-line reason."""


# --- reading the text layer ---------------------------------------------------------------------

@functools.cache
def _pdfium_function(name: str, restype: Any = ctypes.c_int) -> Any:
    """PDFium's function ``name`` without pypdfium2's argument types: pointers are passed with
    ``ctypes.byref``, numbers as they are. The typed function's checks of each argument took over
    half the time of the loops over every object and character of a page (the Eleventh Circuit's
    21,482 objects: 36 ms typed, 15 ms untyped). A function object of its own: pypdfium2's typed
    one is left as it is, and stands in when the library's handle cannot be had."""
    import pypdfium2.raw as pdfium_c

    try:
        from pypdfium2_raw.bindings import _libs

        function = _libs["pdfium"][name]
    except (ImportError, KeyError, AttributeError):  # another build of pypdfium2: its typed function
        return getattr(pdfium_c, name)
    function.restype = restype
    return function


def pdf_bytes(raw: bytes) -> bytes:
    """The PDF from ``%PDF`` on (court downloads may carry bytes before it); PdfProblem if none."""
    at = raw.find(b"%PDF", 0, HEADER_SEARCH)
    if at < 0:
        raise PdfProblem("not a PDF file (no %PDF header)" if raw.strip() else "is empty")
    return raw[at:]


def _page_lines(page, number: int) -> list[_Line]:
    """A page's printed lines in the order of its text, pieces on one baseline joined, marks found."""
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    try:
        raw = textpage.raw
        count = pdfium_c.FPDFText_CountChars(raw)
        text = textpage.get_text_range(0, count) if count > 0 else ""
        if len(text) != count:  # one character per index is needed to find each one's box
            text = "".join(chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 32) for i in range(count))
        box = pdfium_c.FS_RECTF()
        ox, oy = ctypes.c_double(), ctypes.c_double()
        at_box, at_ox, at_oy = ctypes.byref(box), ctypes.byref(ox), ctypes.byref(oy)
        get_box = _pdfium_function("FPDFText_GetLooseCharBox")
        get_origin = _pdfium_function("FPDFText_GetCharOrigin")
        lines: list[_Line] = []
        spans: dict[int, tuple[int, int]] = {}  # each piece's first and last character
        segments = list(_segments(raw, text))
        turned = _turned(raw, text, segments)
        spaced = _dropped_spaces(page, raw, text)
        for start, end in segments:
            seg = text[start:end]
            stripped = seg.strip()
            if not stripped:
                continue
            first = start + len(seg) - len(seg.lstrip())
            last = start + len(seg.rstrip()) - 1
            if first in turned:  # set sideways: not the page's text (kept only to be dropped)
                if lines and lines[-1].rotated and start > 0 and text[start - 1] not in "\r\n":
                    lines[-1].text += seg  # the next piece of the same sideways line
                else:
                    get_box(raw, first, at_box)
                    lines.append(_Line(seg, box.left, box.right, box.bottom, 0.0, number, rotated=True))
                continue
            get_box(raw, first, at_box)
            x0 = box.left
            get_origin(raw, first, at_ox, at_oy)
            y = oy.value
            get_box(raw, last, at_box)
            x1 = box.right
            sizes = []
            for k in (first, (first + last) // 2):  # two letters' sizes (a mark may open the line)
                if not text[k].isalpha():
                    k = next((j for j in range(k, min(k + 6, last + 1)) if text[j].isalpha()), k)
                if text[k].isalpha():
                    get_box(raw, k, at_box)
                    sizes.append(box.top - box.bottom)
            if not sizes:  # digits or punctuation only: the first character's size
                get_box(raw, first, at_box)
                sizes.append(box.top - box.bottom)
            size = max(sizes)
            # footnote marks: digit runs or stars in a smaller font than the line's
            marks: list[tuple[int, int, str]] = []
            leading = None  # a small mark the PDF writes after the line's text but sets before it
            if _MAY_MARK.search(seg):
                for mm in _MARK_CHARS.finditer(seg):
                    at = start + mm.start()
                    get_box(raw, at, at_box)
                    small = box.top - box.bottom < MARK_RATIO * size
                    if not small and at > first:  # a mark in the line's font size, raised ("Curiam:*")
                        get_origin(raw, at, at_ox, at_oy)
                        small = oy.value - y > 0.25 * size
                    if small:
                        marks.append((mm.start(), mm.end(), mm.group(0)))
                        if at > first and box.right <= x0 + 0.5 and mm.end() >= len(seg.rstrip()):
                            leading = mm.group(0)  # the Eleventh Circuit's "§ 1328 refers ... 1": label 1
                    elif len(mm.group(0)) > 1 and mm.group(0).isdigit():
                        # a mark set right after a number of the text's size: the run's last digits in the
                        # smaller font ("RIMS II⁴", its "II" read "11" by an OCR layer: "114")
                        j = mm.end()
                        while j > mm.start() + 1:
                            get_box(raw, start + j - 1, at_box)
                            if box.top - box.bottom >= MARK_RATIO * size:
                                break
                            j -= 1
                        if j < mm.end():
                            marks.append((j, mm.end(), seg[j:mm.end()]))
            cuts = [k - start for k in range(first + 1, last + 1) if k in spaced] if spaced else []
            if cuts:
                seg, marks = _with_spaces(seg, cuts, marks)
            line_text, lead, found = _remove_marks(seg, marks)
            if lead and marks:  # a raised mark opens the piece: its baseline is the text's after it
                k = start + marks[0][1]
                while k < last and text[k].isspace():
                    k += 1
                get_origin(raw, k, at_ox, at_oy)
                y = oy.value
            lead = lead or leading
            if not sizes or not line_text.strip() and not found:
                continue
            piece = _Line(line_text, x0, x1, y, size, number, lead, found)
            spans[id(piece)] = (first, last)
            prev = lines[-1] if lines else None
            if prev is not None and _same_line(prev, piece):
                _merge(prev, piece)
            else:
                lines.append(piece)
        _find_cells(raw, text, lines, spans)
        return lines
    finally:
        textpage.close()


def _dropped_spaces(page, raw, text: str) -> set[int]:
    """The characters of PDFium's text before which the PDF sets a space that PDFium left out.

    A PDF may set each word and each space between words as text of its own; a space moved back
    over the end of the word before it (justified text) is dropped by PDFium, and the two words
    run together ("ofthe") though the gap between them is no wider than one between two letters.
    Such a space is a text object with no ink (an empty box) and no text in PDFium's text: it
    parts the two letters on its baseline (within :data:`SPACE_DRIFT` of the font size) whose
    boxes lie either side of where it starts (after the first's start, by the second's start).

    Only a space that starts before the right edge of the object set just before it (moved back
    over the end of the word before it) is looked up: a space after its word's end is one PDFium
    keeps or writes itself. A page that sets each word as an object of its own has thousands of
    spaces and a few dozen moved back (the Eleventh Circuit's 17 pages: 3,300 and 108), and the
    look-up of a letter at a place is PDFium's search over the whole page."""
    import pypdfium2.raw as pdfium_c

    page_raw = page.raw
    left, bottom, right, top = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    refs = ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
    get_object = _pdfium_function("FPDFPage_GetObject", pdfium_c.FPDF_PAGEOBJECT)
    get_bounds, get_type = _pdfium_function("FPDFPageObj_GetBounds"), _pdfium_function("FPDFPageObj_GetType")
    text_type = pdfium_c.FPDF_PAGEOBJ_TEXT
    spots: list[tuple[float, float]] = []
    before: tuple[float, float, float] | None = None  # the inked object set just before: right, bottom, top
    for i in range(pdfium_c.FPDFPage_CountObjects(page_raw)):
        obj = get_object(page_raw, i)
        get_bounds(obj, *refs)
        x0, y0 = left.value, bottom.value
        if right.value - x0 > 0.01 or top.value - y0 > 0.01:  # ink: a glyph (or a rule, an image)
            before = right.value, y0, top.value
            continue
        if before is None or x0 >= before[0] - 0.01 or not before[1] - 1.0 <= y0 <= before[2]:
            continue  # not moved back over the word before it on its line
        if get_type(obj) == text_type and pdfium_c.FPDFTextObj_GetText(obj, raw, None, 0) <= 2:
            spots.append((x0, y0))  # no ink and no text in PDFium's text (bytes with the final NUL)
    if not spots:
        return set()
    box = pdfium_c.FS_RECTF()
    ox, oy = ctypes.c_double(), ctypes.c_double()
    at_box, at_ox, at_oy = ctypes.byref(box), ctypes.byref(ox), ctypes.byref(oy)
    get_box = _pdfium_function("FPDFText_GetLooseCharBox")
    get_origin = _pdfium_function("FPDFText_GetCharOrigin")
    boxes: dict[int, tuple[float, float, float]] = {}

    def letter(k: int) -> tuple[float, float, float] | None:  # (left, baseline, size), or None: no letter
        if not 0 <= k < len(text) or text[k].isspace() or not text[k].isprintable():
            return None
        if k not in boxes:
            get_box(raw, k, at_box)
            get_origin(raw, k, at_ox, at_oy)
            boxes[k] = (box.left, oy.value, box.top - box.bottom)
        return boxes[k]

    out: set[int] = set()
    for x, y in spots:
        # the letter PDFium sets where the space starts: the one after it, or the one before it
        # when the space was moved back over that one's end
        hit = pdfium_c.FPDFText_GetCharIndexAtPos(raw, x + 0.5, y + 1.0, SPACE_REACH, SPACE_REACH)
        if hit < 0:
            continue
        for k0 in (hit - 1, hit):
            first, second = letter(k0), letter(k0 + 1)
            if first is None or second is None:
                continue
            (left0, base0, size0), (left1, base1, size1) = first, second
            if (round(base0) == round(base1) and left0 < x <= left1 + 0.01
                    and max(abs(base0 - y), abs(base1 - y)) <= SPACE_DRIFT * max(size0, size1)):
                out.add(k0 + 1)
    return out


_Marks = list[tuple[int, int, str]]


def _with_spaces(seg: str, cuts: list[int], marks: _Marks) -> tuple[str, _Marks]:
    """``seg`` with a space before each offset of ``cuts`` (ascending); the marks' offsets moved."""
    pieces = [seg[a:b] for a, b in zip([0, *cuts], [*cuts, len(seg)], strict=True)]
    moved = [(s + sum(1 for c in cuts if c <= s), e + sum(1 for c in cuts if c < e), label) for s, e, label in marks]
    return " ".join(pieces), moved


#: Characters more than this many radians off the page's usual angle are set sideways (rotated).
TURN = 0.05


def _turned(raw, text: str, segments: list[tuple[int, int]]) -> set[int]:
    """The first characters of the pieces (``segments``) set at another angle than most of the
    page's text (PDFium's angle of each piece's first and last character): a pleading paper's court
    name set sideways in the margin ("United States District Court" read upwards), a vertical stamp.
    The page's own rotation (a landscape page) turns all its text alike and is no turn."""
    import math


    angle = _pdfium_function("FPDFText_GetCharAngle", ctypes.c_float)
    found: list[tuple[int, float, int]] = []
    for start, end in segments:
        seg = text[start:end]
        if not seg.strip():
            continue
        first = start + len(seg) - len(seg.lstrip())
        last = start + len(seg.rstrip()) - 1
        a, b = angle(raw, first), angle(raw, last)
        if a < 0 or b < 0:  # PDFium cannot tell
            continue
        if abs(a - b) > TURN and abs(abs(a - b) - 2 * math.pi) > TURN:
            continue  # mixed: not a piece set sideways as a whole
        found.append((first, a, last - first + 1))
    if not found:
        return set()
    weights: Counter = Counter()
    for _, a, n in found:
        weights[round(a / TURN) % round(2 * math.pi / TURN)] += n
    usual = weights.most_common(1)[0][0] * TURN

    def off(a: float) -> bool:
        d = abs(a - usual) % (2 * math.pi)
        return min(d, 2 * math.pi - d) > 2 * TURN

    return {first for first, a, _ in found if off(a)}


def _find_cells(raw, text: str, lines: list[_Line], spans: dict[int, tuple[int, int]]) -> None:
    """Count the cells of the lines that are wide for their letters (:data:`SPARSE` times the
    page's usual width per letter, from lines of 20 letters or more; every line of a page whose
    usual width is over :data:`WIDE`): a table's rows."""
    widths = sorted((ln.x1 - ln.x0) / (ln.size * len(ln.text.strip())) for ln in lines
                    if len(ln.text.strip()) >= 20 and ln.size > 0)
    if not widths:
        return
    usual = widths[len(widths) // 2]
    limit = SPARSE * usual if usual < WIDE else 0.0  # a page of wide lines (a table's): every line
    for ln in lines:
        span = spans.get(id(ln))
        stripped = ln.text.strip()
        if (span is not None and ln.cells == 1 and " " in stripped and ln.size > 0
                and ln.x1 - ln.x0 > limit * ln.size * len(stripped)):
            ln.cells = _cells(raw, text, span[0], span[1], ln.size)


def _cells(raw, text: str, first: int, last: int, size: float) -> int:
    """How many pieces the line from character ``first`` to ``last`` is set in, parted by spaces
    wider than :data:`CELL_GAP` times its font size (a table's cells)."""
    import pypdfium2.raw as pdfium_c

    box = pdfium_c.FS_RECTF()
    at_box, get_box = ctypes.byref(box), _pdfium_function("FPDFText_GetLooseCharBox")
    cells = 1
    k = first
    while (k := text.find(" ", k + 1, last)) > 0:
        before = k - 1
        after = k + 1
        while after < last and text[after] == " ":
            after += 1
        get_box(raw, before, at_box)
        right = box.right
        get_box(raw, after, at_box)
        if box.left - right > CELL_GAP * size:
            cells += 1
        k = after
    return cells


def _segments(raw, text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each printed line in PDFium's text: its lines (a line hyphenated at its end
    goes on after U+FFFE), a line PDFium ran into the next one split where the text goes back left."""
    import pypdfium2.raw as pdfium_c

    get_box = _pdfium_function("FPDFText_GetLooseCharBox")
    box = pdfium_c.FS_RECTF()  # its own: the caller's is overwritten between two lines
    at_box = ctypes.byref(box)
    for m in _SEGMENT.finditer(text):
        seg = m.group(0)
        body = seg.rstrip()
        if len(body) < 2:
            yield m.start(), m.end()
            continue
        get_box(raw, m.start() + len(body) - 1, at_box)
        last_bottom = box.bottom
        first = m.start() + len(seg) - len(seg.lstrip())
        get_box(raw, first, at_box)
        if abs(box.bottom - last_bottom) < 0.6 * (box.top - box.bottom):
            yield m.start(), m.end()
            continue
        cut = m.start()
        prev_left, prev_bottom = box.left, box.bottom
        for k in range(first + 1, m.start() + len(body)):
            if text[k].isspace():
                continue
            get_box(raw, k, at_box)
            drop = abs(box.bottom - prev_bottom)
            height = box.top - box.bottom
            if (box.left < prev_left - 20 and drop > 0.3 * height) or drop > 0.9 * height:  # a new line, or a column
                yield cut, k
                cut = k
            prev_left, prev_bottom = box.left, box.bottom
        yield cut, m.end()


def _unprivate(text: str) -> str:
    """PDFium's end-of-line hyphens as hyphens, a Symbol font's bullets as bullets."""
    return text if text.isascii() else text.replace("\ufffe", "-").translate(_PRIVATE_BULLETS)


def _remove_marks(seg: str, marks: list[tuple[int, int, str]]) -> tuple[str, str | None, list[str]]:
    """The segment without its marks; the mark it opens with; all its marks."""
    if not marks:
        return _unprivate(seg.replace("\x02", "-")), None, []
    out: list[str] = []
    at = 0
    lead = None
    for start, end, label in marks:
        if not seg[:start].strip():
            lead = label
        if seg[start - 1:start] == "[" and seg[end:end + 1] == "]":
            start, end = start - 1, end + 1  # a court's note in a quotation, bracketed: "(1993).[7]"
        out.append(seg[at:start])
        nxt = seg[end:end + 1]
        if out[-1] and not out[-1][-1].isspace() and nxt and nxt.isalnum():
            out.append(" ")  # "cite9text" -> "cite text"
        at = end
    out.append(seg[at:])
    text = _unprivate("".join(out).replace("\x02", "-"))
    return text, lead, [label for _, _, label in marks]


def _lone_mark(line: _Line) -> bool:
    return not line.marks and bool(_MARK_CHARS.fullmatch(line.text.strip()))


def _same_line(prev: _Line, piece: _Line) -> bool:
    """A piece that continues ``prev`` on its baseline (or is a raised mark before or after it)."""
    if piece.page != prev.page or piece.x0 < prev.x1 - 2 or prev.rotated or piece.rotated:
        return False
    lone = not piece.text.strip() or _lone_mark(piece) or _lone_mark(prev)
    limit = 0.7 * max(prev.size, piece.size) if lone else 0.3 * max(prev.size, piece.size)
    return abs(piece.y - prev.y) <= limit


def _merge(prev: _Line, piece: _Line) -> None:
    if _lone_mark(prev) and not prev.lead and piece.text.strip() and prev.size < MARK_RATIO * piece.size:
        prev.lead, prev.marks, prev.text = prev.text.strip(), [prev.text.strip()], ""  # "1" + "Three cases ..."
        prev.size, prev.y = piece.size, piece.y
    elif _lone_mark(piece) and piece.size < MARK_RATIO * prev.size:
        prev.marks.append(piece.text.strip())  # "the parties," + raised "3"
        prev.x1 = max(prev.x1, piece.x1)
        return
    if piece.text.strip():
        gap = piece.x0 - prev.x1
        spaced = prev.text.endswith(" ") or piece.text.startswith(" ")
        joiner = " " if gap > 0.15 * prev.size and not spaced and prev.text else ""
        if gap > CELL_GAP * prev.size and prev.text.strip():
            prev.cells += 1
        prev.text = prev.text + joiner + piece.text
        prev.x1 = max(prev.x1, piece.x1)
        if piece.size > prev.size * 1.05 and len(piece.text.strip()) > len(prev.text.strip()) // 2:
            prev.size = piece.size
    prev.marks.extend(piece.marks)
    if piece.marks and not prev.text.strip():
        prev.lead = prev.lead or piece.lead


def _rules(page, margin: float, height: float) -> list[float]:
    """Heights of footnote rules: thin horizontal lines starting near the left margin, 50 to 300
    points long, in the lower 70 % of the page."""
    import pypdfium2.raw as pdfium_c

    raw = page.raw
    left, bottom, right, top = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    out = []
    for i in range(pdfium_c.FPDFPage_CountObjects(raw)):
        obj = pdfium_c.FPDFPage_GetObject(raw, i)
        if pdfium_c.FPDFPageObj_GetType(obj) != pdfium_c.FPDF_PAGEOBJ_PATH:
            continue
        pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top)
        if (top.value - bottom.value < 3 and 50 <= right.value - left.value <= 300
                and margin - 15 <= left.value <= margin + 60 and bottom.value < 0.7 * height):
            out.append(top.value)
    return out


# --- layout -------------------------------------------------------------------------------------

_DIGITS = re.compile(r"\d+")


def _norm(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text).split())


def _mode(values: list[float], step: float) -> float:
    if not values:
        return 0.0
    return Counter(round(v / step) for v in values).most_common(1)[0][0] * step


def layout(data: bytes) -> PdfLayout:
    """The layout of a PDF's text: paragraphs, footnotes, page labels (PdfProblem when it has none)."""
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(pdf_bytes(data))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise PdfProblem("password-protected PDF: give an unprotected copy") from None
        raise PdfProblem(f"damaged PDF: cannot be opened ({exc})") from None
    pages: list = []  # (page, its height, its lines); the pages stay open for the footnote-rule scan
    try:
        for number in range(len(doc)):
            try:
                page = doc[number]
                pages.append((page, page.get_size()[1], _page_lines(page, number)))
            except pdfium.PdfiumError as exc:
                raise PdfProblem(f"damaged PDF: page {number + 1} cannot be read ({exc})") from None
        chars = sum(len(ln.text.strip()) for _, _, lines in pages for ln in lines)
        if chars < 20 * max(1, len(pages)) // 4 + 20:
            raise PdfProblem("no text layer: run OCR first")
        found = _sort_out(pages)
        if sum(len(p) for p in found.paragraphs) + sum(len(t) for _, t in found.footnotes) < 20:
            raise PdfProblem("no text layer: run OCR first")  # a scan under an e-filing stamp's text
        return found
    finally:
        for page, _, _ in pages:
            page.close()
        doc.close()


def _sort_out(pages: list) -> PdfLayout:
    sideways: list[str] = []  # text set sideways (a pleading paper's margin): never the page's text
    for _, _, lines in pages:
        sideways.extend(" ".join(ln.text.split()) for ln in lines if ln.rotated)
        lines[:] = [ln for ln in lines if not ln.rotated]
    # the court its first page names (a published opinion's summary page may come first: then its second)
    court = next((named for _, _, lines in pages[:2] if (named := _court(lines))), "")
    two_columns = set()  # the pages set in two columns: their right column's lines marked and moved
    for page_no, (page, _, lines) in enumerate(pages):
        if (right_column := _columns(lines, page.get_size()[0])) is not None:
            _move_right_column(*right_column)
            two_columns.add(page_no)
    all_lines = [ln for _, _, lines in pages for ln in lines]
    weights: Counter = Counter()
    for ln in all_lines:  # the size most characters have
        weights[round(ln.size / 0.5)] += len(ln.text)
    body_size = weights.most_common(1)[0][0] * 0.5 if weights else 0.0
    margin = _mode([ln.x0 for ln in all_lines if abs(ln.size - body_size) < 0.1 * body_size
                    and not _NUMBER_LINE.match(ln.text.strip())], 2.0)  # pleading paper's numbers are no text
    dropped: list[str] = []
    numbered = [_line_numbers(lines) for _, _, lines in pages]
    # running headers and footers: edge lines whose text (digits aside) recurs at one height
    seen: Counter = Counter()
    norms: dict[int, str] = {}
    edges: list[set[int]] = []
    heads: list[dict[int, str]] = []  # each page's three highest and two lowest lines: "top"/"foot"
    placed: Counter = Counter()
    for _, height, lines in pages:
        edges.append(_edges(lines, height))
        keys = {(norms.setdefault(id(ln), _norm(ln.text)), round(ln.y / 4), id(ln) in edges[-1]) for ln in lines}
        seen.update(keys)
        heads.append(_heads(lines))
        placed.update({(norms[i], where) for i, where in heads[-1].items()})
    half = max(2, int(REPEAT_SHARE * len(pages) + 0.999))
    # at a page's edge a line on three pages (or half of them) is a running header ("Syllabus",
    # an even page's "10 TARRANT ... v. HERRMANN"); elsewhere on half of four pages or more
    repeated = {k[:2] for k, c in seen.items() if c >= (min(half, 3) if k[2] else max(half, 3))
                and (k[2] or len(pages) >= 4)} if len(pages) >= 2 else set()
    # a page's first (last) lines that open (close) three pages or half of them, at whatever height
    # (portrait and landscape pages of one order), and lines that differ from one only a little
    # (a docket number's suffix left out on one page)
    running_heads = {k for k, c in placed.items() if c >= min(half, 3) and len(k[0]) >= 4} if len(pages) >= 3 else set()
    printed: list[int | None] = []
    kept_pages: list[list[_Line]] = []
    running_lines: Counter = Counter()  # the running headers' lines dropped, and on how many pages
    for (page, _height, lines), edge_ids, line_ids in zip(pages, edges, numbered, strict=True):
        found: list[tuple[int, _Line]] = []  # the page's printed number, where it may be
        kept = []
        words = [ln.x0 for ln in lines if not _NUMBER_LINE.match(ln.text.strip()) and id(ln) not in line_ids]
        page_margin = _mode(words, 2.0) if len(words) >= 5 else margin
        margin_ids = _margin(lines, line_ids)
        for ln in lines:
            t = " ".join(ln.text.split())
            number = _NUMBER_LINE.match(t)
            edge = id(ln) in edge_ids
            if _SEPARATOR.match(t) or _stray_letter(ln, t, lines, body_size):
                dropped.append(t)
                continue
            if id(ln) in line_ids or id(ln) in margin_ids or (
                    (number or _NUMBER_COLUMN.match(t)) and ln.x1 < page_margin - 3):  # pleading paper, its margin
                dropped.append(t)
                continue
            if edge and number:
                found.append((int(number.group(1)), ln))
                dropped.append(t)
                continue
            running = (norms[id(ln)], round(ln.y / 4)) in repeated or _running_head(
                norms[id(ln)], heads[len(printed)].get(id(ln)), running_heads)
            if running or is_banner_line(t):
                if running:
                    running_lines[t] += 1
                for p in _PRINTED_PAGE:
                    pm = p.match(t)
                    if pm and edge:
                        found.append((int(pm.group(1)), ln))
                dropped.append(t)
                continue
            kept.append(ln)
        last = next((p for p in reversed(printed) if p is not None), None)
        printed.append(_printed(found, page.get_size()[0], last + 1 if last is not None else len(printed) + 1))
        kept = _drop_stamp(kept, dropped)
        if len(kept_pages) not in two_columns:  # the first page's lines written after its text
            late = _late_stamp(kept, _height)
            dropped.extend(" ".join(ln.text.split()) for ln in kept if id(ln) in late)
            kept = _late_cells([ln for ln in kept if id(ln) not in late], _height)
        kept_pages.append(kept)
    labels = page_labels(printed)
    # footnotes
    body: list[_Line] = []
    notes: list[list] = []  # [label, [lines]]
    had_notes = False
    parts = [(page, height, part, len(split) > 1) for (page, height, _), kept in zip(pages, kept_pages, strict=True)
             for split in [_by_column(kept)] for part in split]  # a two-column page's notes stand under each column
    for page, height, lines, in_column in parts:
        closing = notes[-1][1][-1].rstrip() if notes and notes[-1][1] else ""
        unfinished = not _TERMINAL.search(closing)
        start = _notes_start(page, lines, height, body_size, margin, had_notes, unfinished, in_column)
        page_notes = [ln for ln in lines if start is not None and ln.y <= start + 0.5
                      and not _TEXT_RULE.match(ln.text.strip())]
        body.extend(ln for ln in lines if start is None or ln.y > start + 0.5)
        had_notes = bool(page_notes)
        before = len(notes)
        if page_notes:
            _collect_notes(sorted(page_notes, key=lambda ln: -ln.y), notes, labels[page_notes[0].page])
        for label, _ in notes[before:]:
            if label and not label.isdigit():  # a "*" mark set in the body's font: found by its note
                _drop_symbol_mark(label, [ln for ln in lines if ln not in page_notes])
    tables = _table_lines(body)
    dropped.extend(" ".join(ln.text.split()) for ln in body if id(ln) in tables)
    paragraphs = _paragraphs(body, labels, tables)
    fix = Dehyphenator("\n".join(ln.text for ln in body))
    paras = [_join(p, fix) for p in paragraphs]
    note_texts = [(label, _join(texts, fix)) for label, texts in notes]
    caption = None
    # the caption is read from the first page's own paragraphs (a published opinion's summary page may
    # come first: then the second's), laid out again on that page alone, so that its last paragraph
    # does not run on into the next page's text (one or two pages: a small share of the layout's time)
    for page_no in sorted({ln.page for ln in body})[:2]:
        first = [ln for ln in body if ln.page == page_no]
        caption = _caption(first, [strip_markers(" ".join(p)) for p in _paragraphs(first, labels)])
        if caption is not None:
            break
    # the name the court cites the case by, its running head's ("State v. Lewis, No. 102910-1"), before
    # the caption's parties (a caption set in a ")" table is read wrong: "No. 102976-4 v. THURSTON ...")
    caption = _running_name(running_lines) or caption
    first = [ln for ln in body if ln.page == body[0].page] if body else []
    head = "\n".join([" ".join(ln.text.split()) for ln in first[:80]] + dropped[:12])
    tail = "\n".join(" ".join(ln.text.split()) for ln in body[-40:])
    decided = _decided(head, tail, "\n".join(dropped[:12]))
    return PdfLayout([p for p in paras if p.strip()], [(lab, t) for lab, t in note_texts if t], labels,
                     caption, dropped + sideways, decided, _docket(head), court)


def _line_numbers(lines: list[_Line]) -> set[int]:
    """Ids of a page's pleading-paper line numbers: numbers alone in one column (right edges within
    two points), counting 1, 2, 3, ... down the page to at least :data:`MIN_PLEADING_LINES`, evenly
    spaced (each gap within a third of the usual one). They are never text and never the page's
    number, wherever the column stands (a margin's sideways court name may stand left of it)."""
    found = [ln for ln in lines if re.fullmatch(r"\d{1,2}", ln.text.strip())]
    if len(found) < MIN_PLEADING_LINES:
        return set()
    best: list[_Line] = []
    for right in {round(ln.x1) for ln in found}:
        run: list[_Line] = []
        for ln in sorted((ln for ln in found if abs(ln.x1 - right) <= 2), key=lambda ln: -ln.y):
            if int(ln.text.strip()) == len(run) + 1:
                run.append(ln)
        if len(run) > len(best):
            best = run
    if len(best) < MIN_PLEADING_LINES:
        return set()
    gaps = sorted(a.y - b.y for a, b in zip(best, best[1:], strict=False))
    usual = gaps[len(gaps) // 2]
    if usual <= 0 or gaps[0] < 0.67 * usual or gaps[-1] > 1.5 * usual:
        return set()
    return {id(ln) for ln in best}


def _margin(lines: list[_Line], line_ids: set[int]) -> set[int]:
    """Ids of the lines left of a page's pleading-paper number column (``line_ids``): its margin,
    when they hold under ``MARGIN_SHARE`` of the page's text (else the body itself lies there:
    numbers set at the paper's right edge)."""
    if not line_ids:
        return set()
    column = min(ln.x0 for ln in lines if id(ln) in line_ids)
    rest = [ln for ln in lines if id(ln) not in line_ids]
    outside = [ln for ln in rest if ln.x1 < column]
    if sum(len(ln.text.strip()) for ln in outside) >= MARGIN_SHARE * sum(len(ln.text.strip()) for ln in rest):
        return set()
    return {id(ln) for ln in outside}


def _printed(found: list[tuple[int, _Line]], width: float, expected: int) -> int | None:
    """A page's printed number among the numbers ``found`` at its head or foot: the one that goes
    on from the page before (``expected``), else one centred on the page, else the last found."""
    if not found:
        return None
    if any(n == expected for n, _ in found):
        return expected
    centred = [n for n, ln in found if abs((ln.x0 + ln.x1) / 2 - width / 2) < 0.1 * width]
    return centred[0] if centred else found[-1][0]


_MONTH = (r"(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"  # also in capitals: "MAR. 05, 2025"
          r"|(?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|SEPT|OCT|NOV|DEC)[A-Z]*\.?)")
_DATES = (  # (pattern, strptime formats): the court's own dates first, then a lone date line, then e-filing's
    re.compile(rf"\b(?:Filed|FILED|Decided|Dated|Date|Opinion Filed|Date Filed|Announced)[:\s]+"
               rf"({_MONTH} \d{{1,2}}, \d{{4}}|\d{{1,2}} {_MONTH} \d{{4}})"),
    re.compile(rf"^[\[(]?({_MONTH} \d{{1,2}}, \d{{4}})[\])]?$", re.MULTILINE | re.IGNORECASE),
    re.compile(r"\bDate Filed:\s*(\d{1,2}/\d{1,2}/\d{4})"),
    re.compile(r"^[\[(]?(\d{1,2}/\d{1,2}/\d{4})[\])]?$", re.MULTILINE),  # a date line in figures ("05/10/2019")
)
#: An order's closing date ("Dated: August 5, 2016", "DATED this 3rd ..." aside: a month, day and year
#: or 8/23/05), read from the opinion's last lines when its first page gives none.
_CLOSING_DATE = re.compile(rf"^(?:Dated|Date|Signed|Entered|Filed)\s*:?\s+({_MONTH} \d{{1,2}}, ?\d{{4}}"
                           r"|\d{1,2}/\d{1,2}/\d{2,4})", re.MULTILINE | re.IGNORECASE)
#: An e-filing banner ("Case 1:12-cv-05708-ER Document 11 Filed 09/27/13 Page 1 of 15", the Second
#: Circuit's "Case: 25-1689, 07/15/2025, DktEntry: 28.1"): the day the order was filed, the last resort.
_BANNER_DATE = re.compile(r"(?:\b(?:Document|Doc)\s*#?:?\s*\d+(?:-\d+)?\s+Filed:?\s+|\bCase:\s*[\w-]+,\s*)"
                          r"(\d{1,2}/\d{1,2}/\d{2,4})\b")  # (E.D. Ky.: "Doc #: 64 Filed: 10/28/19")
_DOCKET = re.compile(r"\b(?:Docket |Case |Appeal )?(?:Nos?|NOS?)\.:?\s+([A-Z]{0,3}\d[\w:–-]*(?:,\s*\d[\w:–-]*)*)")


def _decided(head: str, tail: str = "", banners: str = "") -> str:
    """The decision date as YYYY-MM-DD, or "": the one the first page (``head``) gives, else an
    order's closing date among its last lines (``tail``), else the e-filing banner's (``banners``)."""
    import datetime

    for pattern, text_of in [*((p, head) for p in _DATES), (_CLOSING_DATE, tail), (_BANNER_DATE, banners)]:
        for m in pattern.finditer(text_of):
            text = " ".join(m.group(1).replace(".", "").split()).replace("Sept ", "Sep ").replace(",", ", ")
            text = " ".join(text.split())
            for fmt in ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%m/%d/%Y", "%m/%d/%y"):
                try:
                    return datetime.datetime.strptime(text, fmt).date().isoformat()
                except ValueError:
                    continue
    return ""


#: A line that ends a first page's head: the caption ("X v. Y", "In re ...") or a docket number.
_HEAD_ENDS = re.compile(r"(?:^|\s)(?:v\.|vs\.|versus)(?:\s|$)|^In re\b", re.IGNORECASE)
#: A line that may name a court (others are not looked up).
_COURT_WORD = re.compile(r"\b(?:court|circuit|board|panel|commission|tribunal)\b", re.IGNORECASE)
_COURT_LEAD = re.compile(r"^(?:in|before)\s+the\s+", re.IGNORECASE)
#: The most head lines looked at for the court's name.
COURT_LINES = 20


def _court(lines: list[_Line]) -> str:
    """courts-db's id of the court a first page's head names, or "" (no guessing).

    The head is the page's lines from the top down to the caption or the docket number (an
    "Appeal from the United States District Court ..." below them is another court). From the
    top, each line is looked up with the line under it in the same column ("United States Court
    of Appeals" / "FOR THE EIGHTH CIRCUIT"; "In the Missouri Court of Appeals" / "Eastern
    District", also read "..., Eastern District"), then alone, a leading "In the" dropped; the
    first that courts-db's names and patterns recognise is the court
    (:func:`~statinterp.corpus.pin_cites.courts_db_court`: ambiguous names only when their
    abbreviations agree), stored by :func:`_citable`."""
    from statinterp.corpus.pin_cites import courts_db_court

    head: list[_Line] = []
    for ln in sorted((ln for ln in lines if not ln.rotated and ln.text.strip()), key=lambda ln: -ln.y):
        text = " ".join(ln.text.split())
        if _HEAD_ENDS.search(text) or _DOCKET.search(text) or len(head) >= COURT_LINES:
            break
        head.append(ln)
    for i, ln in enumerate(head):
        text = " ".join(ln.text.split())
        size = ln.size or 12.0
        below = next((b for b in head[i + 1:] if 0 < ln.y - b.y < 2.5 * size and b.x0 < ln.x1 and b.x1 > ln.x0), None)
        tries = []
        if below is not None:
            more = " ".join(below.text.split())
            tries += [f"{text} {more}", f"{text}, {more}"]
        tries.append(text)
        for name in tries:
            name = _COURT_LEAD.sub("", name)
            if not _COURT_WORD.search(name):
                continue
            found = courts_db_court(name)
            if found is not None:
                return _citable(found)
    return ""


def _citable(found: dict) -> str:
    """The id to store for a courts-db court: its own, or its nearest parent's when it has no
    citation string ("moctapped", Missouri Court of Appeals, Eastern District -> "moctapp",
    "Mo. Ct. App."); with none up its line, its name (cited in full)."""
    from statinterp.corpus.pin_cites import courts_db_court

    court: dict | None = found
    while court is not None and not court.get("citation_string"):
        parent = court.get("parent")
        court = courts_db_court(parent) if parent else None
    return str(court["id"]) if court is not None else str(found["name"])


def _docket(head: str) -> str:
    m = _DOCKET.search(head)
    return m.group(1).rstrip(",.;") if m else ""


#: A running head that names the case as the court cites it, perhaps with its docket number: "State v.
#: Lewis, No. 102910-1", "Cockrum v. C.H. Murphy/Clark-Ullman, Inc.", "In re Bard IVC ..., No. MDL ...".
_RUNNING_NAME = re.compile(r"^((?:\S.*?\sv\.\s|In re\s).*?)(?:,\s*(?:Nos?\.|Case No\.)\s*\S+)?$")


def _running_name(running: Counter) -> str | None:
    """The case's name from its running head (on two pages or more) in capitals and small letters,
    as the court cites it: not a head in capitals ("NEW STAR v. DUMAR", a short form) nor a page
    number's line ("2 TARRANT REGIONAL WATER DIST. v. HERRMANN")."""
    for line, count in running.most_common():
        m = _RUNNING_NAME.match(line)
        if count >= 2 and m and not line[:1].isdigit() and re.search(r"[a-z]{2}", line):
            return tidy_caption(m.group(1))
    return None


def _edges(lines: list[_Line], height: float) -> set[int]:
    """Ids of a page's edge lines: its three highest and two lowest, and any in the page's top or
    bottom :data:`EDGE_SHARE` (a slip opinion's small text block sits far from the paper's edge)."""
    by_y = sorted(lines, key=lambda ln: -ln.y)
    return {id(ln) for ln in by_y[:3] + by_y[-2:]} | {id(ln) for ln in lines if _edge(ln, height)}


def _stray_letter(ln: _Line, text: str, lines: list[_Line], body_size: float) -> bool:
    """A letter alone in a font a third larger than the body's with no text just right of it (a
    stamp's letter, not a drop capital opening a paragraph)."""
    if len(text) != 1 or not text.isalpha() or ln.size < 1.3 * body_size:
        return False
    return not any(o is not ln and ln.x1 - 2 <= o.x0 <= ln.x1 + 2 * body_size
                   and ln.y - 1.5 * ln.size <= o.y <= ln.y + ln.size for o in lines)


def _heads(lines: list[_Line]) -> dict[int, str]:
    """Ids of a page's three highest lines ("top") and two lowest ("foot"), page numbers aside."""
    by_y = sorted((ln for ln in lines if not _NUMBER_LINE.match(ln.text.strip())), key=lambda ln: -ln.y)
    foot = by_y[3:][-2:]
    return {**{id(ln): "top" for ln in by_y[:3]}, **{id(ln): "foot" for ln in foot}}


def _running_head(norm: str, where: str | None, running: set[tuple[str, str]]) -> bool:
    """Whether a line at a page's top or foot (``where``) repeats one of the ``running`` heads, or
    differs from one by a few characters (a long line with the same start: at most one in ten)."""
    if where is None:
        return False
    if (norm, where) in running:
        return True
    if len(norm) < 20:
        return False
    import difflib

    for head, w in running:
        if w == where and head[:8] == norm[:8] and abs(len(head) - len(norm)) <= 0.1 * len(head):
            match = difflib.SequenceMatcher(None, head, norm)
            if match.quick_ratio() >= 0.9 and match.ratio() >= 0.9:
                return True
    return False


def _edge(ln: _Line, height: float) -> bool:
    return ln.y > (1 - EDGE_SHARE) * height or ln.y < EDGE_SHARE * height


def _sides(lines: list[_Line], width: float) -> tuple[list[_Line], list[_Line], int]:
    """A page's text lines left and right of its middle, and how many cross it (on neither side)."""
    mid = width / 2
    text = [ln for ln in lines if len(ln.text.strip()) > 3]
    left = [ln for ln in text if ln.x1 <= mid + 2]
    right = [ln for ln in text if ln.x0 >= mid - 2]
    return left, right, len(text) - len(left) - len(right)


def _columns(lines: list[_Line], width: float) -> tuple[list[_Line], float] | None:
    """A page's right column's lines and how far that column stands right of its left column (the
    shift of its left edge) when the page is set in two columns (an NLRB decision), or None: the
    lines on each side of the page's middle tested by :func:`~statinterp.sources.cleaning.two_columns`
    (a single column's lines cross the middle; a caption's ")" column, a signature block, a calendar
    or a table is no second column). Pure: :func:`_move_right_column` acts on it."""
    left, right, across = _sides(lines, width)
    left_spans, right_spans = ([(ln.x0, ln.x1) for ln in side] for side in (left, right))
    if not two_columns(left_spans, right_spans, across):
        return None
    return right, column_start(right_spans) - column_start(left_spans)


def _move_right_column(right: list[_Line], shift: float) -> None:
    """Mark a two-column page's right column's lines (``column`` 1) and move them left over the
    gutter by ``shift`` (:func:`_columns`), so that margins, indents and line ends read as in one
    column (its text follows the left column's, as the PDF writes it)."""
    for ln in right:
        ln.column = 1
        ln.x0 -= shift
        ln.x1 -= shift


def _by_column(lines: list[_Line]) -> list[list[_Line]]:
    """A page's lines as one part, or a two-column page's as two: the left column (with any line
    across both) and the right column, each in the text's order."""
    right = [ln for ln in lines if ln.column]
    return [[ln for ln in lines if not ln.column], right] if right else [lines]


#: At most this many lines come after the first page's lowest line as a caption's cells written
#: after the text (Washington's "Respondent,": one; a stamp above the page's first line goes first,
#: :func:`_late_stamp`).
LATE_LINES = 12


def _late_stamp(lines: list[_Line], height: float) -> set[int]:
    """Ids of the lines set above the first page's first line of text (in the text's order, high on
    the page) that come after it: a stamp put on the page after its text was set (a clerk's "FILE /
    IN CLERK'S OFFICE / THIS OPINION WAS FILED FOR RECORD ...", "JS-6"), never part of the text's
    flow. Later pages keep such lines (a heading a word processor sets last)."""
    if len(lines) < 2 or lines[0].page > 0 or lines[0].y < height / 2:
        return set()
    first = lines[0]
    return {id(ln) for ln in lines[1:] if ln.y > first.y + max(first.size, ln.size)}


def _late_cells(lines: list[_Line], height: float) -> list[_Line]:
    """The first page's lines in reading order again when a few lines (at most :data:`LATE_LINES`)
    come after its lowest line (in the second half of the text's order, in the page's lowest
    quarter: the text's last line) and all stand well above it: a caption's cells written after
    the text ("Respondent,", a right column "ORDER GRANTING ..."), put back, in their order,
    before the first line below them all (a column after the column beside it), not run into the
    page's last sentence."""
    if len(lines) < 2 or lines[0].page > 0:
        return lines
    low = min(range(len(lines)), key=lambda k: lines[k].y)
    after = lines[low + 1:]
    if not (2 * low >= len(lines) and lines[low].y < height / 4 and 0 < len(after) <= LATE_LINES
            and all(ln.y > lines[low].y + 2 * lines[low].size for ln in after)):
        return lines
    out = lines[:low + 1]
    bottom = min(ln.y - 0.5 * ln.size for ln in after)
    at = next(k for k, o in enumerate(out) if o.y < bottom)
    return out[:at] + after + out[at:]


def _drop_stamp(lines: list[_Line], dropped: list[str]) -> list[_Line]:
    """Without a clerk's stamp: the lines around a lone "FILED" right of the page's middle."""
    at = next((i for i, ln in enumerate(lines) if ln.text.strip().upper() == "FILED" and ln.x0 > 250), None)
    if at is None:
        return lines
    lo = at
    while lo > 0 and lines[lo - 1].x0 > 250 and abs(lines[lo - 1].y - lines[lo].y) < 40:
        lo -= 1
    hi = at
    while hi + 1 < len(lines) and lines[hi + 1].x0 > 250 and abs(lines[hi + 1].y - lines[hi].y) < 40:
        hi += 1
    dropped.extend(ln.text.strip() for ln in lines[lo:hi + 1])
    return lines[:lo] + lines[hi + 1:]


def _notes_start(page, lines: list[_Line], height: float, body_size: float, margin: float,
                 carried: bool, unfinished: bool = True, column: bool = False) -> float | None:
    """The height from which a page's lines are footnotes, or None. ``carried``: the page before
    had footnotes; ``unfinished``: its last one ends inside a sentence (only then does a run of small
    lines without a mark go on with it: a clerk's file-name stamp under a signature is no note);
    ``column``: the lines are a column of a two-column page (whose notes go on at the next column's
    foot, however high, a new paragraph of the note or not)."""
    marked = [ln.y for ln in lines if ln.lead is not None and ln.text.strip()
              and (ln.y < 0.6 * height or ln.size < NOTE_RATIO * body_size)]
    marked += _ruled_high_notes(page, lines, height, body_size, margin)
    rules = [ln.y for ln in lines if ln.y < 0.7 * height and _TEXT_RULE.match(ln.text.strip())]
    start = max(marked + [y - 0.6 for y in rules], default=None)  # a rule of dashes is no footnote
    if carried and start is None and _gap_below(lines, height):  # a footnote carried over, without a mark: its rule
        rules = [r for r in _rules(page, margin, height)
                 if any(ln.y < r for ln in lines) and not any(0 <= ln.y - r < 4 for ln in lines)]
        if rules:
            top = max(rules)
            start = max(start, top - 1) if start is not None else top - 1
    star = _star_note(lines, height)
    if star is not None:
        start = max(start, star) if start is not None else star
    # a run of lines in a smaller font at the foot of the page
    by_height = sorted(lines, key=lambda ln: ln.y)
    run = 0
    for ln in by_height:
        if ln.size < NOTE_RATIO * body_size:
            run += 1
        else:
            break
    if 0 < run < len(by_height):
        top = by_height[run - 1].y
        opens = by_height[run - 1]  # a footnote opens with its mark, or goes on from the page before
        prose = all(ln.cells == 1 for ln in by_height[:run])  # ("(SEAL)   NATIONAL LABOR RELATIONS BOARD": no note)
        if carried and (unfinished or column and prose) or top < 0.6 * height and (
                opens.lead is not None or _NOTE_HEAD.match(opens.text.strip())):
            start = max(start, top) if start is not None else top
    return start


def _ruled_high_notes(page, lines: list[_Line], height: float, body_size: float, margin: float) -> list[float]:
    """Heights of lines in the text's own size, high on the page (its upper 40 %), that open with a
    footnote mark right under a footnote rule (:func:`_rules`; no line between, the gap under three
    lines' height): a long footnote that fills most of its page, set in the body's size. A marked
    line that high without a rule over it is a numbered paragraph, not a note. The page's objects
    are only scanned for rules when such a line is there."""
    high = [ln for ln in lines if ln.lead is not None and ln.text.strip()
            and ln.y >= 0.6 * height and ln.size >= NOTE_RATIO * body_size]
    if not high:
        return []
    rules = _rules(page, margin, height)
    return [ln.y for ln in high
            if any(0 < r - ln.y < 3 * ln.size and not any(ln.y < o.y < r for o in lines) for r in rules)]


#: A note labelled with stars, the label glued to its first word ("*Sitting by assignment ...").
_STAR_NOTE = re.compile(r"^(\*{1,3})[A-Z]")


def _star_note(lines: list[_Line], height: float) -> float | None:
    """The height of a note labelled with stars in the text's own font, at the foot of the page
    (its lowest third), whose stars a line above sets after a word ("Gomez and Graham*, JJ.,
    concur" / "*Sitting by assignment of the Chief Justice ..."): a cover page set in one size, where
    neither a small font nor a small mark tells the note apart. None without one."""
    for ln in sorted(lines, key=lambda ln: -ln.y):
        m = _STAR_NOTE.match(ln.text.strip())
        if m is None or ln.y > height / 3:
            continue
        glued = re.compile(r"\w" + re.escape(m.group(1)) + r"(?![*\w])")
        if any(above.y > ln.y and glued.search(above.text) for above in lines):
            return ln.y
    return None


def _gap_below(lines: list[_Line], height: float) -> bool:
    """Whether the lower 70 % of a page has a gap between lines over 1.4 times its usual one (the
    space around a footnote rule): only then are the page's objects scanned for a rule."""
    ys = sorted((ln.y for ln in lines), reverse=True)
    gaps = [a - b for a, b in zip(ys, ys[1:], strict=False) if a - b > 1]
    if len(gaps) < 3:
        return bool(gaps)
    usual = sorted(gaps)[len(gaps) // 2]
    return any(a - b > 1.4 * usual for a, b in zip(ys, ys[1:], strict=False) if a < 0.7 * height)


def _collect_notes(lines: list[_Line], notes: list[list], page: str) -> None:
    """Footnote lines (top to bottom) of the page labelled ``page`` -> notes: a line opening with a
    mark, or with the next number in a small font, starts one; other lines continue the last one.
    A note starting here, or the rest of one carried over, opens with the page's marker."""
    marked = any(ln.lead for ln in lines)  # notes with marks: a number at a line's head is text ("5 and 40")
    marker = page_marker(page)
    for k, ln in enumerate(lines):
        text = ln.text.strip()
        label = ln.lead
        more = _CONTINUED.match(text)
        if more and notes:  # the Tax Court's "9(...continued)": footnote 9 goes on
            notes[-1][1].append(marker + text[more.end():] if k == 0 else text[more.end():])
            continue
        text = _CONTINUES.sub("", text)
        if label is None and not marked:
            m = re.match(r"^(\d{1,3}|\*{1,3}|[†‡])\s+(?=\S)", text)
            expected = str(_next_number(notes))
            if m and (m.group(1) == expected or not m.group(1).isdigit() or (not notes and m.group(1) == "1")):
                label, text = m.group(1), text[m.end():]
        if label is not None or not notes:
            notes.append([label or "", [marker + text]])
        else:
            notes[-1][1].append(marker + text if k == 0 else text)


def _drop_symbol_mark(label: str, lines: list[_Line]) -> None:
    """Remove the first ``*`` (``†``, ...) mark ``label`` glued to a word of the page's body."""
    pattern = re.compile(r"(?<=[\w.,:;)”’\"])" + re.escape(label) + r"(?![*†‡\w])")
    for ln in lines:
        if label in ln.text and pattern.search(ln.text):
            ln.text = pattern.sub("", ln.text, count=1)
            return


def _next_number(notes: list[list]) -> int:
    for label, _ in reversed(notes):
        if label.isdigit():
            return int(label) + 1
    return 1


def _paragraphs(lines: list[_Line], labels: list[str], skip: Set[int] = frozenset()) -> list[list[str]]:
    """Body lines -> paragraphs (lists of lines; a page's first line opens with its page marker).
    Lines whose ids are in ``skip`` (a table's) are no text, but still end the paragraph before them."""
    if not lines:
        return []
    gaps = [a.y - b.y for a, b in zip(lines, lines[1:], strict=False) if a.page == b.page and a.y > b.y]
    usual = _mode(gaps, 0.5) or 14.0
    margin = _mode([ln.x0 for ln in lines], 2.0)
    ends = sorted(ln.x1 for ln in lines)
    right_edge = ends[int(0.9 * (len(ends) - 1))]  # where the text's full lines end (ragged or justified)
    paras: list[list[str]] = []
    page = None
    for i, ln in enumerate(lines):
        text = _STAR_PAGE.sub("", ln.text).strip()
        if not text or SLASHES.match(text) or id(ln) in skip:  # pleading paper's "////" (the text goes on) is no text
            continue
        if ln.page != page:
            text = page_marker(labels[ln.page]) + text
        if not paras or _breaks(lines, i, usual, margin, right_edge):
            paras.append([text])
        else:
            paras[-1].append(text)
        page = ln.page
    return paras


def _table_lines(lines: list[_Line]) -> set[int]:
    """Ids of the body's lines that are its tables: runs of at least :data:`MIN_TABLE_ROWS` lines
    of three cells or more (a schedule of cases, a certificate of service's recipients), with a
    line between two rows that stands inside the table (a cell's second line, indented past the
    first row's start). A table is no sentence: its lines leave the text (:func:`_paragraphs`), as
    the plain-text reader drops them (``cleaning.drop_tables``), so CourtListener's text of the
    same PDF stores the same paragraphs. A caption's ")" rows are no table (:func:`_table_row`)."""
    found: set[int] = set()
    i = 0
    while i < len(lines):
        if not _table_row(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].page == lines[i].page and (_table_row(lines[j]) or (
                j + 1 < len(lines) and _table_row(lines[j + 1])
                and lines[j].x0 > lines[i].x0 + 2 * (lines[i].size or 12.0))):
            j += 1
        if sum(_table_row(ln) for ln in lines[i:j]) >= MIN_TABLE_ROWS:
            found.update(id(ln) for ln in lines[i:j])
        i = j
    return found


def _table_row(line: _Line) -> bool:
    """Whether a line is a row of a table that leaves the text (:func:`_table_lines`): three cells
    or more, not beside a caption's column of ")", "]" or "*"."""
    return line.cells >= 3 and not _COLUMN.search(" " + line.text)


def _line_apart(line: _Line) -> bool:
    """Whether a line is a paragraph of its own (:func:`_breaks`), being a row: three cells or more
    (a table's row, or a caption's row beside its column), or two beside a caption's column of ")"
    or ":" ("Ruben Diaz ) Docket No. ..."). Wider than :func:`_table_row`: a caption's rows stay in
    the text, each a line of its own."""
    return line.cells >= 3 or line.cells == 2 and re.search(r"\s[):\]](?:\s|$)", line.text) is not None


def _breaks(lines: list[_Line], i: int, usual: float, margin: float, right_edge: float | None = None) -> bool:
    """Whether line ``i`` starts a paragraph (``right_edge``: where the text's full lines end)."""
    a, b = lines[i - 1], lines[i]
    if _line_apart(a) or _line_apart(b):
        return True  # each row of a table is a line of its own
    size = b.size or 12.0
    prev_text = a.text.rstrip()
    if (ends_open(prev_text) and a.page == b.page and 0 < a.y - b.y <= GAP_RATIO * usual
            and not _ENUMERATED.match(b.text.lstrip())):  # (a list's next item starts anew)
        return False  # "D.  Hill Is Inapplicable to APR Orders Outside of a Dissolution of" / "Marriage Proceeding"
    if not _TERMINAL.search(prev_text) and b.text.lstrip(" “\"‘'[(")[:1].islower():
        return False  # the sentence runs on
    if a.page == b.page and a.column == b.column:  # (the next column goes on like the next page)
        gap = a.y - b.y
        if gap < -0.5 * size or gap > GAP_RATIO * usual:
            return True
    if _centered(a, right := max(a.x1, b.x1), margin) or (_centered(b, right, margin) and (
            _TERMINAL.search(prev_text) or a.x1 < right - 3 * size)):
        return True  # a heading, a date line (not a sentence's last line under a full line that runs on)
    # a list item's second line, under its text: after a bullet, or after a number whose line runs on
    # ("2. The court orders that ... the Declaration of" / "Gerhard P. Dietrich in support ...")
    hanging = b.x0 - a.x0 < 3 * size and (a.text.lstrip()[:1] in _BULLETS or (
        _ENUMERATED.match(a.text.lstrip()) is not None and not _TERMINAL.search(prev_text)))
    if b.x0 > a.x0 + 0.8 * size and b.x0 > margin + 0.8 * size and not hanging:
        return True  # an indented first line, or a block quote's start
    if b.x0 < margin - 0.8 * size and b.x0 < a.x0 - 0.8 * size:
        return True  # a paragraph number in the margin ("¶ 16 Plaintiffs ...")
    before = lines[i - 2] if i >= 2 and lines[i - 2].page == a.page else a
    right = max(a.x1, b.x1, before.x1)
    if (a.page != b.page and a.x0 > margin + 0.45 * (max(right, right_edge or 0.0) - margin)
            and b.x0 < a.x0 - 4 * size):
        return True  # a page's last line set right of the middle (a signature: "Hon. Vincent I. Parrett")
    if (_TERMINAL.search(prev_text) and _ENUMERATED.match(b.text.lstrip())
            and (prev_text.endswith(":") or _ENUMERATED.match(a.text.lstrip()))):
        return True  # a list's next item ("b. A video bingo game." / "c. A video craps game.")
    if a.page != b.page and _TERMINAL.search(prev_text) and LIST_ITEM.match(b.text):
        return True  # a heading's or an item's label at a page's head after a sentence's end ("B. Original ...")
    if ((_TERMINAL.search(prev_text) and _shouting(b, right))
            or (_shouting(a, right) and b.text.lstrip()[:1].isupper() and not _capitals(b.text))):
        return True  # a short line in capitals: "IT IS SO ORDERED", "DISCUSSION" (a title's lines stay one)
    word = len(b.text.split()[0]) if b.text.split() else 0
    short = a.x1 < right - 0.4 * (right - margin)
    if _TERMINAL.search(prev_text) and right_edge is not None and not prev_text.endswith((". .", "...", "…")):
        right = max(right, right_edge)  # short lines in a row ("Before ..., Circuit Judges." / "FAY, ...")
    if (a.x1 + (word + 2) * 0.5 * size < right and (_TERMINAL.search(prev_text) or short)
            and prev_text.count("(") <= prev_text.count(")")):  # "... (1st Cir." / "1993).": a citation runs on
        return True  # the next line's first word would have fit: the line ended its paragraph
    return (a.x0 > margin + 0.8 * size and abs(before.x0 - a.x0) < 2 and before is not a
            and b.x0 < a.x0 - 0.8 * size and a.x1 < right - size
            and before.x1 > a.x1 - size)  # the end of a block quote (not a paragraph's first line under a heading)


def _shouting(line: _Line, right: float) -> bool:
    """A short line in capitals (four fifths of four letters or more), not ending in a comma or
    hyphen (a caption's party, a sentence going on): a heading, a decree's "IT IS SO ORDERED"."""
    if line.x1 >= right - 4 * line.size:
        return False
    text = line.text.strip()
    return text[-1:] not in ",;-–—" and _capitals(text)


_LOWER = re.compile(r"[^\W\d_A-Z]")  # a letter that is no capital (ASCII capitals only, as court PDFs set)
_UPPER = re.compile(r"[A-Z]")


def _capitals(text: str) -> bool:
    upper = len(_UPPER.findall(text))
    return upper >= 4 and upper >= 4 * len(_LOWER.findall(text))


def _centered(line: _Line, right: float, margin: float) -> bool:
    left, rest = line.x0 - margin, right - line.x1
    return left > 3 * line.size and rest > 3 * line.size and abs(left - rest) < 1.5 * line.size


def _join(lines: list[str], fix: Dehyphenator) -> str:
    text = "\n".join(lines)
    if PAGE_OPEN in text:  # "Dic-" / page 8 "tionary": the page starts before the word split over it
        text = SPLIT_MARKER.sub(r"\2\1\n", text)
    return " ".join(dehyphenate(text, fix).split())


# --- the case -----------------------------------------------------------------------------------

_HEADING = re.compile(r"^(?:No\.|Nos\.|Docket|Case No|Appeal No|Filed|\d)|\b(?:COURT|Court|CIRCUIT|Circuit|DISTRICT)\b")


_COLUMN = re.compile(r"\s[)\]*](?:\s|$)|\s[)\]*]$")  # a caption set in a table: "JAGELS, ) No. ED108783", "Appellee, *"


def _left(text: str) -> str:
    """The left column of a caption line set in a ")", "]" or "*" table."""
    return _COLUMN.split(" " + text, maxsplit=1)[0].strip()


def _party(line: _Line) -> str:
    return _ROLES.sub("", _left(line.text)).strip(" ,;:")


def _caption(lines: list[_Line], paragraphs: list[str]) -> str | None:
    """"X v. Y" from the first page: the lines around a "v." (or "versus") line, the parties'
    roles ("Plaintiff, Appellant,", "Petitioners") dropped; else "In re ..."; None without one.
    A name that keeps a role or a docket number (a caption set in a ":" column, its right column
    read into it) is read again by the caption's left column (:func:`column_caption`)."""
    name = _caption_lines(lines, paragraphs)
    if name is None or _NOT_A_NAME.search(name):
        boxed = column_caption([ln.text for ln in lines[:80]])
        if boxed is not None:
            return tidy_caption(_clean_name(boxed))
    return tidy_caption(name) if name is not None else None


#: What a case's name never holds: a party's role, a docket or case number.
_NOT_A_NAME = re.compile(r"\b(?:Plaintiffs?|Defendants?|Appellants?|Appellees?|Petitioners?|Respondents?)\b|"
                         r"\bNo\.\s*\d|\b\d:\d{2}-", re.IGNORECASE)


#: How a caption without a "v." opens: "In re", "In the Matter of", "Matter of", "Ex parte".
_MATTER_HEAD = r"(?:In re|In the Matter of|Matter of|Ex parte)"
#: A court's name in capitals before a "Matter" caption on one line ("IN THE COURT OF APPEALS OF THE
#: STATE OF WASHINGTON In the Matter of the Domestic Violence"): the caption starts after it.
_COURT_BEFORE_MATTER = re.compile(rf"^[A-Z][A-Z .,'’]*\bCOURT\b[A-Z .,'’]*\s+(?={_MATTER_HEAD}\s)")
#: A docket number set on a caption's "v." line ("v.    17-2543"): no party.
_DOCKET_ONLY = re.compile(r"(?:(?:Case\s+)?Nos?\.\s*)?\d[\d:]*(?:-[A-Za-z0-9]+)+")
#: ... or the paper's title set in the caption's middle column ("VS.      ORDER"): no party either.
_TITLE_ONLY = re.compile(r"(?:MEMORANDUM\s+)?(?:OPINION|ORDER|DECISION|JUDGMENT)(?:\s+(?:AND|&)\s+(?:OPINION|ORDER))?")
#: A party set before "v." on its line has at most this many words: more is a sentence that cites
#: a case across a line's end ("... depends on context. United States v." / "Bonanno, 852 F.2d ...").
MAX_PARTY_WORDS = 12
#: A sentence's end inside a line: a word of small letters, its stop, a space and a capital.
_SENTENCE_INSIDE = re.compile(r"[a-z]{2}[.?!][\"”’)]*\s+[A-Z]")


def _caption_lines(lines: list[_Line], paragraphs: list[str]) -> str | None:
    for i, ln in enumerate(lines[:80]):
        head = _left(ln.text)
        m = re.search(r"(?:^|\s)(?:v\.|vs\.|versus|V\.|VS\.|VERSUS)(?:\s+(.+))?$", head)
        if not m:
            continue
        left = _ROLES.sub("", head[:m.start()]).strip(" ,;:")
        after = (m.group(1) or "").strip()
        if _DOCKET_ONLY.fullmatch(after) or _TITLE_ONLY.fullmatch(after):
            after = ""  # the docket number or the title set on the "v." line: the party is on the next
        if after and left and not (left.isupper() and after.isupper()):
            continue  # "See United States v. Detroit Timber ...": a citation, not the caption
        if left and (len(left.split()) > MAX_PARTY_WORDS or _SENTENCE_INSIDE.search(left)):
            continue  # a sentence running on to a citation on the next line, not the caption
        up = i - 1
        parts: list[str] = []
        while not left and up >= 0 and i - up <= 4:
            left = _party(lines[up])
            up -= 1
        if left:
            parts.insert(0, left)
            while up >= 0 and len(parts) < 3 and lines[up].y - lines[up + 1].y < 1.6 * ln.size:
                if _HEADING.search(lines[up].text) or not _party(lines[up]):
                    break
                parts.insert(0, _party(lines[up]))
                up -= 1
        rights: list[str] = []
        if after:  # "PETITIONER v. RUDOLF JOHN" / "HERRMANN ET AL."
            party = _ROLES.sub("", after).strip(" ,;:")
            rights.append(party)
        for below in lines[i + 1:i + 5] if not after or party == after.strip(" ,;:") else []:
            text = _left(below.text)
            if _HEADING.search(text) and rights:
                break
            party = _ROLES.sub("", text).strip(" ,;:")
            if party:
                rights.append(party)
            if (rights and party != text.strip(" ,;:")) or len(rights) >= 3:
                break  # the line ends with the party's role
        if parts and rights:
            return _clean_name(f"{' '.join(parts)} v. {' '.join(rights)}")
    name = party_caption("\n".join(ln.text for ln in lines[:80]))
    if name is not None:
        return _clean_name(name)
    # a caption set in a ")" table: its left column, without a court's name before its first words
    cells = [_COURT_BEFORE_MATTER.sub("", _left(p), count=1) for p in paragraphs[:40]]
    for at, text in enumerate(cells):
        if re.fullmatch(rf"{_MATTER_HEAD}[:\s]*", text, re.IGNORECASE):
            # "In Re: )" / ")" / "ALLEN HENRY CHOY, LLC, ) Case No. ..." / "Debtor. )": the party below
            party = next((_ROLES.sub("", c).strip(" ,;:") for c in cells[at + 1:at + 6] if c.strip(" ,;:")), "")
            if party and not _HEADING.search(party):
                return _clean_name(f"{text.rstrip(': ')} {party}")
            continue
        if re.match(rf"^{_MATTER_HEAD}[:\s]+\S", text, re.IGNORECASE) and len(text) < 200:
            following = cells[at + 1] if at + 1 < len(cells) else ""
            if (not _TERMINAL.search(text) and following and len(following) < 80 and not _HEADING.search(following)
                    and not _PROCEEDINGS.match(following)):
                text = f"{text} {following}"  # "IN RE: Bard IVC Filters Products" / "Liability Litigation,"
            text = re.split(r"\s+(?:No\.|Nos\.|Case No|Docket|Date:|ORDER\b|OPINION\b)", text)[0]
            return _clean_name(text.rstrip(" ,;:"))
    # a board's caption: its parties joined by "and", then the case number ("Sequel of New Mexico LLC,
    # d/b/a Bernalillo Academy and Andrea E. Baumgartner and District 1199NM, ... Case 28–RD–093404"):
    # the case is named by its first party, as the board cites it
    for text in cells[:8]:
        m = _PARTIES_THEN_CASE.match(text)
        if m:
            first = m["parties"].split(" and ")[0].rstrip(" ,;:.")
            return _clean_name(dehyphenate(first))  # "Acade- my": a line's end
    return None


#: The kind of proceedings under an immigration decision's caption ("MATTER OF CHAWATHE" / "In Preservation of
#: Residence for Naturalization Proceedings", "In Removal Proceedings"): no part of its name.
_PROCEEDINGS = re.compile(r"In\s+[A-Z][\w\s]*\bProceedings\b")
#: Parties, then an NLRB-style case number ("Case 28–RD–093404", "Cases 07–CA–123456 and ...").
_PARTIES_THEN_CASE = re.compile(r"(?P<parties>[A-Z][^\n]{3,400}?)\s+Cases?\s+\d{1,2}[–-][A-Z]{1,2}[–-]\d{4,}")


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    left, sep, right = name.partition(" v. ")
    if sep:
        name = f"{_ROLES.sub('', left).strip(' ,;:')} v. {_ROLES.sub('', right).strip(' ,;:')}"
    return name


#: A separate opinion's opening: "BARRON, Circuit Judge, concurring in part ...", "JUSTICE THOMAS,
#: dissenting.", "Justice BERGER dissenting.", "MADSEN, J. (dissenting)—..."
_SEPARATE = re.compile(r"^(?:(?:(?:Chief\s+)?(?:JUSTICE|Justice)\s+(?P<justice>[A-Z][A-Za-z'’\-]+)"
                       r"|(?P<judge>[A-Z][A-Z'’\-]+(?:\s[A-Z][A-Z'’\-]+)?),\s+(?:Chief\s+|Senior\s+)?"
                       r"(?:Circuit\s+|District\s+|Magistrate\s+)?(?:Judge|Justice))\s*,?\s+"
                       r"(?P<kind>concurring|dissenting)\b"
                       rf"|(?P<inline>{CAPITALS_NAME}){JUSTICE_TITLE}\s?\((?P<inline_kind>concurring|dissenting)\b"
                       r"[^)]*\)\s?[—–]\s*)")  # "MADSEN, J. (dissenting)—Washington's ...": the text follows
#: The line a court sets between opinions: "— Concurring Opinion Follows —", "- Dissenting Opinion Follows -".
_FOLLOWS = re.compile(r"^[—–\-\s]*(?:Concurring|Dissenting)(?:\s+and\s+\w+)?\s+Opinions?\s+Follows?[—–\-\s]*$",
                      re.IGNORECASE)


def split_opinions(body: list[str], author: str | None) -> list[tuple[str, str | None, list[str]]]:
    """(type, author, paragraphs) of each opinion of the body: a separate opinion starts at its
    author's line ("BARRON, Circuit Judge, concurring ...": a concurrence; "..., dissenting": a
    dissent), as CAP and CourtListener store them; the court's "— Concurring Opinion Follows —"
    line goes. Without one, the body is the majority's."""
    out: list[tuple[str, str | None, list[str]]] = [("majority", author, [])]
    for i, raw in enumerate(body):
        text = strip_markers(raw)
        if _FOLLOWS.match(text):
            labels = _PAGE_LABEL.findall(raw)
            if labels and i + 1 < len(body) and not body[i + 1].startswith(PAGE_OPEN):
                body[i + 1] = page_marker(labels[-1]) + body[i + 1]  # its page goes on to the next paragraph
            continue
        m = _SEPARATE.match(text) if i > 0 else None
        if m:
            kind = "concurrence" if "concurring" in (m["kind"], m["inline_kind"]) else "dissent"
            if m["inline"]:  # the author's words open the first paragraph: they leave its text
                raw = raw.replace(m[0], "", 1)
            out.append((kind, author_name(m["justice"] or m["judge"] or m["inline"]), [raw]))
        else:
            out[-1][2].append(raw)
    return [o for o in out if o[2]]


def _note_page(note: str) -> int | None:
    label = _PAGE_LABEL.match(note)
    return int(label.group(1)) if label and label.group(1).isdigit() else None


def pdf_case(data: bytes, case_id: str) -> CaseRecord:
    """The case a PDF holds (PdfProblem when it cannot be read)."""
    lay = layout(data)
    head, body, author = split_matter(lay.paragraphs)
    notes = [f"{lab} {text}" if lab else text for lab, text in lay.footnotes]
    parts = split_opinions(body, author)
    # a footnote goes with the opinion on whose pages it stands: from a separate opinion's first page
    # on (on that page itself only once the numbering starts again at 1)
    firsts = [next((int(x) for p in paras for x in _PAGE_LABEL.findall(p) if x.isdigit()), None)
              for _, _, paras in parts]
    owner: list[int] = []
    for k, (label, _) in enumerate(lay.footnotes):
        page = _note_page(notes[k][len(label) + 1:] if label else notes[k])
        at = owner[-1] if owner else 0
        while at + 1 < len(parts) and page is not None and (start := firsts[at + 1]) is not None and (
                page > start or page == start and label == "1" and k > 0):
            at += 1
        owner.append(at)
    opinions = tuple(clean_opinion(paras, [n for n, o in zip(notes, owner, strict=True) if o == j], kind=kind,
                                   author=who) for j, (kind, who, paras) in enumerate(parts))
    name = lay.caption or nameless_pdf(case_id)
    return CaseRecord(source="pdf", source_id=case_id, name=name, name_abbreviation="",
                      decision_date=lay.decision_date, docket_number=lay.docket_number, citations=(), court=lay.court,
                      jurisdiction="", head_matter="\n".join(head), judges="", parties="", attorneys="",
                      opinions=opinions or (clean_opinion([], notes, author=author),))


def nameless_pdf(case_id: str) -> str:
    """The name of a PDF's case whose first page has no caption: says so, with the file's id."""
    return f"[no case name found: {case_id}.pdf]"


def read_pdf(path: str | Path) -> CaseRecord | SkippedRecord:
    """One PDF file -> its case, or the skipped record saying why it cannot be read (no text
    layer, damaged, not a PDF, over the size limit). Raises InputError when the file cannot be
    opened at all."""
    file = Path(path)
    try:
        with open(file, "rb") as fh:
            raw = fh.read(MAX_PDF_BYTES + 1)
    except OSError as exc:
        raise InputError(file, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_PDF_BYTES:
        return SkippedRecord(str(file), file.stem, "(pdf)", f"over the limit of {MAX_PDF_BYTES} bytes for a PDF")
    try:
        case = pdf_case(raw, file.stem)
    except PdfProblem as exc:
        return SkippedRecord(str(file), file.stem, "(pdf)", str(exc))
    if sum(len(line) for op in case.opinions for line in op.lines) > MAX_TEXT_CHARS:
        return SkippedRecord(str(file), file.stem, "(pdf)", f"over the limit of {MAX_TEXT_CHARS} characters")
    if case.name == nameless_pdf(file.stem):
        note(f"{file}: no caption (\"X v. Y\") found on its first page; the case is named {case.name!r}")
    return case


def pdf_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")


def read_pdfs(path: Path) -> Iterator[SourceItem]:
    """A folder of ``.pdf`` files (that folder only) or one ``.pdf`` file."""
    for file in [path] if path.is_file() else pdf_files(path):
        yield read_pdf(file)


register(SourceFormat(
    "pdf", ".pdf files, one case each (text layer read by layout)", lambda p: read_pdfs(Path(p.path)),
    lambda path: path.suffix.lower() == ".pdf", group=lambda path: True, files=pdf_files, order=40))
