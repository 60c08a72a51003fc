"""Text that reads like the opinion: the one cleaning step every source reader applies.

Readers hand their raw paragraphs here and get back an opinion's paragraphs, footnotes and
page starts (:class:`~statinterp.sources.records.OpinionRecord`):

* **Page labels** (CourtListener's ``<span class="star-pagination">*583</span>``, CAP HTML's
  ``<a class="page-label">*37</a>``, ``*583`` in plain text, a ``*345`` line of its own) leave
  the text and become ``page_starts``: the offset of the first character of the page in its
  line. A label between paragraphs (or ending one) starts the next paragraph at offset 0.
  Readers of markup put :func:`page_marker` where a label was; plain ``*583`` is found here.
* **Footnotes** leave the sentences: a mark glued to a word ("testimony6", "Code.22") or standing
  as a paragraph of its own ("2") is removed, the footnote's text goes to ``footnotes``
  (after the paragraphs in ``lines``). Glued marks are removed only when they count up like
  footnote marks (1, 2, 3, ...) or name a footnote the opinion has, so "section 1983" stays.
  Footnotes a plain text appends to its opinion are a block of items labelled 1..k, each perhaps
  over several paragraphs, proved by the body's marks when not every paragraph is labelled
  (:func:`_trailing_notes`); a starred note leaves the text when its "*" mark is found.
* **PDF-born plain text** (pdftotext output: form feeds, running headers, many line-end
  hyphens; :func:`is_pdf_text`) is repaired (:func:`pdf_paragraphs`): running headers and
  footers ("Cite as: 570 U. S. ____ (2013) 11", "2 FISHER v. UNIVERSITY OF TEXAS AT AUSTIN",
  lines repeated at the top of pages) and bare page numbers go; what follows a footnote rule
  ("——————") on a page is that page's footnotes; words hyphenated at line ends are rejoined when
  the joined word occurs elsewhere in the text or in spaCy's English word table
  (``spacy-lookups-data``, offline), so true hyphens ("self-defense") stay.
  Without a rule, footnotes at a page's foot are found by their label and the mark the page
  shows (:func:`_page_foot`: the Tax Court, the Fifth and First Circuits; a one-page text ended by
  a form feed too); double spacing is
  reflowed (:func:`_paragraph_breaks`); filing banners ("Case: 21-50498 Document: ...") and
  "Cite as:" lines are running headers; a text without form feeds is split into pages at its
  page-number lines; pleading paper's line numbers go (:func:`_drop_line_numbers`); a footnote
  rule is one only when a footnote follows it (:func:`_strip_page`). Each page starts a page
  labelled with its printed number (else its place), and each footnote starts on the page it
  stands on, as the PDF reader gives them.
* **Markup**: one paragraph per block; a ``<pre>`` (with the ``<pre class="inline">`` pieces and
  citation ``<span>``s of CourtListener's ``html_with_citations``) is one plain text, cleaned as
  plain text is; ``<style>``, ``<script>``, ``<title>``, ``<head>`` are never text.
* **One normal form** (:func:`normal_form`): NFC, no soft hyphens (the word joined), no
  zero-width characters, for every reader.
* **Encodings**: :func:`decode_text` reads UTF-8, else guesses the encoding
  (``charset-normalizer``) and says which, unless one is forced.

Ordinary text (one paragraph per line, no page labels, no footnotes) comes out unchanged
except for whitespace, which is collapsed as before. The data set's own text is not cleaned
(``sources/plaintext.py`` keeps it as annotated).

**A case's name from its caption** (a ``.txt`` file, a PDF's text).
:func:`caption_name` takes the opinion's first lines and returns its "X v. Y" caption, never a
docket stamp ("FILED", "ENTERED", "RECEIVED", a date stamp), a report number ("T.C. Memo.
2020-26", "No. 21-50498"), a running header ("Case: 21-50498 Document: ...") or the court's
name. In order:

1. a PDF-born text's all-capitals caption ("FISHER v. UNIVERSITY OF TEXAS AT AUSTIN ET AL.",
   :func:`pdf_caption`);
2. a block of the head (the short lines before the first long paragraph) holding "v." between
   two parties ("Smith v. Jones"; the Tax Court's "JOHN F. BORDELON, Petitioner v." /
   "COMMISSIONER OF INTERNAL REVENUE, Respondent"), or "In re X" / "Matter of X";
3. parties set on lines of their own around a "v." line
   (:func:`party_caption`);
4. the first paragraph when it is a single short line that is none of the above things.

None when nothing fits (the reader then names the case by its file). The caption is returned as
written, designations and all; a citation writes it as cited
(:func:`statinterp.corpus.pin_cites.cite_name`).
"""

from __future__ import annotations

import codecs
import dataclasses
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from statinterp.sources.records import OpinionRecord, PageStart
from statinterp.text.headings import MAX_LINE_CHARS, MIN_TABLE_ROWS, PAREN_LABEL, ends_open

#: A page label inside a raw paragraph, as markup readers write it: PAGE_OPEN label PAGE_CLOSE.
PAGE_OPEN, PAGE_CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(f"{PAGE_OPEN}([^{PAGE_CLOSE}]*){PAGE_CLOSE}")
_SENTINEL = "\ue002"

#: ``*583`` in text: a star, digits; not part of a word before it, not a footnote star ("**"), not a
#: pin cite to a database's star page ("2006 WL 266560, at *3", "LEXIS 21348 at *26-27", "*20-*21").
#: A bracketed label ("[*2]", the Tax Court's and LEXIS's) is always one; its brackets go with it.
_STAR_LABEL = re.compile(r"\[\*(?:Page\s+)?(\d{1,5})\]"
                         r"|(?<![\w*,;\-–\[])(?<!\bat )(?<![,;] )(?<!\d )(?<![\-–] )"
                         r"\*(?:Page\s+)?(\d{1,5})(?![\d\-–]*\s*[\-–])")

#: A footnote mark glued to the end of a word or after its punctuation: "testimony6", "Code.22", "[CFS].”3".
_GLUED_MARK = re.compile(r"(?<=[a-z][.,;:”’\"']|[a-z][a-z]|[.,;:)\]][.,;:”’\"'])(\d{1,3})(?=[\s.,;:)]|[—–-](?!\d)|$)")
#: "p.2", "n.7", "No.3", "ch.5": a number after a short abbreviation is a reference, not a mark.
_ABBREVIATION_BEFORE = re.compile(r"(?:^|[^A-Za-z])(?:p|pp|n|nn|no|nos|ch|art|arts|vol|sec|cl|par|para|subd|tit|r)\.$",
                                  re.IGNORECASE)
#: Only after a lower-case word ("testimony6"), for an opinion whose footnotes are not known.
_WORD_MARK = re.compile(r"(?<=[a-z][a-z])(\d{1,3})(?=[\s.,;:)]|[—–-](?!\d)|$)")
#: A footnote's own text in plain sources: "1 . The record ...", "[2] The ...", "3 The ...", ". Code 1951".
#: A footnote line appended to a plain text: CAP's "1 . The" and ". The", "[2] The", "3 The" (a capital,
#: a quote or a bracket next: "1. The" is an enumerated paragraph, not a footnote), "* The".
_NOTE_START = re.compile(r"^(?:(\d{1,3})\s+\.(?:\s+|(?=[A-Z“\"‘'(\[]))|\[(\d{1,3})\]\s*"
                         r"|(\d{1,3})\s+(?=[A-Z“\"‘'(\[])|\*{1,3}\s+|[†‡]\s*|\.\s+)(?=\S)")
#: An item of a footnote block at the end of a plain text (:func:`_trailing_notes`): a
#: :data:`_NOTE_START` label, or "1. The" -- an enumerated paragraph unless the body holds its mark.
_ITEM_START = re.compile(r"^(\d{1,3})\.\s*(?=[A-Z“\"‘'(\[])")
#: A starred footnote ("* The Honorable ..."): its mark, alone in a paragraph or glued to a word
#: ("STROM,*"), and its text, a paragraph that opens with the same star.
_STAR_MARK = re.compile(r"^(\*{1,3}|[†‡])$")
_STAR_GLUED = re.compile(r"(?<=[A-Za-z.,;:”’\"'])(\*{1,3}|[†‡])(?=\s|$)")
_STAR_NOTE = re.compile(r"^(\*{1,3}|[†‡])\s*(?=[A-Z“\"‘'(\[])")
#: The label of a footnote a reader found apart from the text (after a PDF's footnote rule, in markup).
_LOOSE_NOTE_START = re.compile(r"^(?:\[?(\d{1,3})\]?\s*\.?\s+|\*{1,3}\s*|[†‡]\s*|\.\s+)(?=\S)")
#: "[2]" after a word or its punctuation, before a space or the end (not "(a)[1]", not "[2]-[3]").
_BRACKET_MARK = re.compile(r"(?<=[\w.,;:)”’\"']) ?\[(\d{1,3})\](?=\s|$)")
_LONE_NUMBER = re.compile(r"^\[?(\d{1,3})\]?$")


def _label_digits(m: re.Match) -> str:
    """The page of a :data:`_STAR_LABEL` match ("[*2]" or "*583")."""
    return m.group(1) or m.group(2)


#: Characters that are never text: zero-width space, non-joiner, joiner, word joiner, BOM.
_INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE = dict.fromkeys(map(ord, _INVISIBLE_CHARS))
#: A soft hyphen (U+00AD), with the line break a PDF may put after it: the word is joined.
_SOFT_HYPHEN = re.compile("\u00ad[ \t]*(?:\r?\n[ \t]*)?")


def normal_form(text: str) -> str:
    """The one normal form of every reader's text (see docs/data-format.md, "Cleaning"): soft
    hyphens (U+00AD) removed and the word they split joined ("autho\u00adrized" -> "authorized",
    also across a line end), zero-width characters (U+200B..U+200D, U+2060, U+FEFF) removed,
    then Unicode NFC ("e" + combining acute -> "é")."""
    if text.isascii():
        return text
    if "\u00ad" in text:
        text = _SOFT_HYPHEN.sub("", text)
    if any(c in text for c in _INVISIBLE_CHARS):
        text = text.translate(_INVISIBLE)
    return unicodedata.normalize("NFC", text)


def page_marker(label: str) -> str:
    """What a markup reader writes where a page label was (see :func:`clean_opinion`)."""
    label = " ".join(label.replace("*", " ").split())
    label = re.sub(r"^(?:Page|p\.)\s*", "", label, flags=re.IGNORECASE)
    return f"{PAGE_OPEN}{label}{PAGE_CLOSE}" if label else ""


def strip_markers(text: str) -> str:
    """A text without page markers (for footnotes and captions, whose pages are not kept)."""
    return " ".join(_MARKER.sub(" ", text).split())


# --- page labels -------------------------------------------------------------------------------

def _star_labels(paragraphs: Sequence[str]) -> list[str]:
    """``*583`` labels in plain text -> markers (a bracketed "[*2]" with its brackets). A label is
    taken when it is bracketed, a paragraph of its own, when a word follows it, or when the page
    before or after it is labelled too (pages run 583, 584, ...: a lone "Offenders *9 (May 2009)" is
    not a label); a label glued to digits ("*58456(b)" after *583) is split after the page that
    follows."""
    found = [(i, m) for i, p in enumerate(paragraphs) if "*" in p for m in _STAR_LABEL.finditer(p)]
    if not found:
        return list(paragraphs)
    whole = {int(_label_digits(m)) for _, m in found}
    parts = {int(_label_digits(m)[:k]) for _, m in found for k in range(1, len(_label_digits(m)) + 1)}

    def label(i: int, m: re.Match) -> str | None:
        digits = _label_digits(m)
        own_line = m.group(0) == paragraphs[i].strip()
        if m.group(1) or own_line or re.match(r" ?[A-Za-z]", paragraphs[i][m.end():m.end() + 2]):
            return digits  # bracketed, a line of its own, or a page's first word follows: "*583 the", "*583in"
        if int(digits) - 1 in parts or int(digits) + 1 in parts:
            return digits
        for k in range(len(digits) - 1, 0, -1):  # "*58456(b)": page 584 then "56(b)"
            if int(digits[:k]) - 1 in whole:
                return digits[:k]
        return None

    out = list(paragraphs)
    for i in sorted({i for i, _ in found}, reverse=True):
        text = out[i]
        for m in reversed([m for j, m in found if j == i]):
            page = label(i, m)
            if page is not None:
                rest = _label_digits(m)[len(page):]
                text = text[:m.start()] + page_marker(page) + (" " + rest if rest else " ") + text[m.end():]
        out[i] = text
    return out


def _split_pages(text: str) -> tuple[str, list[PageStart], list[str]]:
    """One paragraph's text with its markers removed, whitespace collapsed: (text, page starts
    inside it -- each at the first character of the page's text --, labels that end it: they
    start the next paragraph)."""
    text = text.replace(_SENTINEL, "")  # (a stray one in the source)
    labels = _MARKER.findall(text)
    if not labels:
        return " ".join(text.split()), [], []
    out: list[str] = []
    at: list[int] = []  # where each label was, in the joined ``out``
    size = 0
    after_space = True  # at the start, or after a space: a space here collapses
    for k, piece in enumerate(" ".join(_MARKER.sub(_SENTINEL, text).split()).split(_SENTINEL)):
        if k:
            at.append(size)
        if after_space and piece.startswith(" "):
            piece = piece[1:]  # the spaces either side of a label collapse
        if piece:
            out.append(piece)
            size += len(piece)
            after_space = piece.endswith(" ")
    result = "".join(out).rstrip()
    inside: list[PageStart] = []
    tail: list[str] = []
    for o, label in zip(at, labels, strict=True):
        while o < len(result) and result[o] == " ":
            o += 1
        if o < len(result):
            inside.append((o, label))
        else:
            tail.append(label)
    return result, inside, tail


# --- footnote marks ----------------------------------------------------------------------------

def note_label(text: str, loose: bool = False) -> tuple[str | None, str]:
    """A footnote line's label ('' for an unnumbered one, None for no label) and text:
    "1 . The record" -> ("1", "The record"). ``loose``: a footnote found apart from the text,
    whose leading number is its label whatever follows ("3 affirming ...")."""
    m = (_LOOSE_NOTE_START if loose else _NOTE_START).match(text)
    if not m:
        return None, text
    return next((g for g in m.groups() if g), ""), text[m.end():]


def _drop_glued_marks(paragraphs: list[str], known: set[int], restarts: int = 0) -> list[str]:
    """Remove footnote marks glued to words: those that count up (1, 2, 3, ...; one number may
    be missing, two when the opinion's footnotes are known and name it). Without known footnotes
    only a number glued to a lower-case word counts ("testimony6", not "Code.22" or "II.4").
    ``restarts``: how many times the known footnotes start again at 1 (a slip opinion's text holds
    several opinions, each numbering its own footnotes): a mark 1 may start the count again."""
    expected = [1]
    left = [restarts]
    reach = 3 if known else 2

    def repl(m: re.Match) -> str:
        n = int(m.group(1))
        if _ABBREVIATION_BEFORE.search(m.string[max(0, m.start() - 6):m.start()]):
            return m.group(0)
        if expected[0] <= n < expected[0] + reach and (not known or n in known):
            expected[0] = n + 1
            return ""
        if n == 1 and left[0] > 0 and expected[0] > 1:
            left[0] -= 1
            expected[0] = 2
            return ""
        return m.group(0)

    pattern = _GLUED_MARK if known else _WORD_MARK  # "II.4" is a paragraph number, not a mark
    out = [pattern.sub(repl, p) if any(c.isdigit() for c in p) else p for p in paragraphs]
    if known:  # a web copy's "... 1982). [2] Such": a bracketed mark of a known footnote
        out = [_BRACKET_MARK.sub(lambda m: "" if int(m.group(1)) in known else m.group(0), p) if "[" in p else p
               for p in out]
    return out


def _trailing_notes(paragraphs: list[str]) -> tuple[list[str], list[list[str]]]:
    """Split off the footnotes a plain text appends to its opinion: each returned as its
    paragraphs, the first with its label (a footnote's paragraphs stay apart, as the text has them).

    After the last "Notes:" / "FOOTNOTES" heading: the labelled paragraphs counting up from 1
    that follow it, whatever comes after them (a web copy's "Citation ..." trailer stays in the
    text). Else the footnote block (:func:`_note_block`): the last paragraphs, from a paragraph
    labelled 1 to the end, whose labels count 1, 2, ..., k; a footnote may run on over
    paragraphs of its own (a quoted statute, "(1) is in military service"; the last footnote's
    only as :func:`_runs_on` says). A block of CAP's
    ". " notes, or one whose every paragraph opens with a footnote's label, is taken as it is;
    any other block only when the body before it holds the notes' marks (:func:`_body_marks`),
    so an opinion that ends with a numbered list ("1. The ordinance applies.") keeps it.
    Starred footnotes ("* The Honorable ...", whose "*" mark the text holds) come first
    (:func:`_star_notes`)."""
    heading = next((h for h in range(len(paragraphs) - 1, -1, -1) if _is_notes_heading(paragraphs[h])), None)
    if heading is not None:
        run = 0
        for p in paragraphs[heading + 1:]:
            label, rest = note_label(p)
            if label != str(run + 1) or not rest.strip():
                break
            run += 1
        if run:
            return (paragraphs[:heading] + paragraphs[heading + 1 + run:],
                    [[p] for p in paragraphs[heading + 1:heading + 1 + run]])
    body, stars = _star_notes(paragraphs)
    head, block = _after_head_notes(body)
    head_notes = [[body[i]] for i in head]
    body = [p for i, p in enumerate(body) if i not in head]
    notes: list[list[str]] = []
    while block is not None:
        start, end, found = block  # from the last opinion's notes back
        body, notes, limit = body[:start] + body[end:], found + notes, start
        if body[:start] and _is_notes_heading(body[start - 1]):
            body, limit = body[:start - 1] + body[start:], start - 1
        block = _note_block(body, limit, dotted=False)  # before the text's last block: "1." items are headings
    notes = head_notes + notes
    if not notes and not stars:
        return paragraphs, []
    return body, [[star] for star in stars] + notes


NoteBlock = tuple[int, int, list[list[str]]]  # a footnote block's start, end and notes (:func:`_note_block`)


def _after_head_notes(paragraphs: list[str]) -> tuple[list[int], NoteBlock | None]:
    """Where the notes on the head are (:func:`_head_notes`) and the text's last block of notes
    (:func:`_note_block`, searched once here; None when there is none). When the head holds m notes
    and no block opening with label 1 ends the text, the block that counts on from m + 1 in the
    paragraphs without the head's notes: the head's notes are returned with it (its start and end
    index those paragraphs). Else ([], the block opening with label 1 in ``paragraphs``)."""
    head = _head_notes(paragraphs)
    block = _note_block(paragraphs, len(paragraphs))
    if head and block is None:
        others = [p for i, p in enumerate(paragraphs) if i not in head]
        if (after := _note_block(others, len(others), first=len(head) + 1)) is not None:
            return head, after
    return [], block


#: A footnote's label in CAP's text: "1 . The Hon. ...", a space before the period.
_CAP_NOTE = re.compile(r"^(\d{1,3}) \.\s*(?=\S)")


def _head_notes(paragraphs: list[str]) -> list[int]:
    """Where CAP's text sets the notes on its head (a judge sitting by designation: "... Judge
    KELLY" / "1" / "concurred." ... "1 . The Hon. Virginia C. Kelly, a retired judge ..."): in the
    text's first half, paragraphs labelled 1, 2, ..., m in CAP's form, each after a line holding
    only its mark. The notes at the text's end then count on from m + 1 (:func:`_trailing_notes`)."""
    found: list[int] = []
    marks: set[str] = set()
    for i, p in enumerate(paragraphs[:len(paragraphs) // 2]):
        if lone := _LONE_NUMBER.match(p):
            marks.add(lone.group(1))
        elif (m := _CAP_NOTE.match(p)) and m.group(1) == str(len(found) + 1) and m.group(1) in marks:
            found.append(i)
    return found


def _item_label(paragraph: str, dotted: bool) -> tuple[str | None, str]:
    """A footnote block's item: its label and text (:func:`note_label`; with ``dotted`` also
    "1. The", :data:`_ITEM_START`)."""
    label, rest = note_label(paragraph)
    if label is None and dotted and (m := _ITEM_START.match(paragraph)):
        return m.group(1), paragraph[m.end():]
    return label, rest


def _note_block(paragraphs: list[str], limit: int, dotted: bool = True, first: int = 1) -> NoteBlock | None:
    """The last footnote block of ``paragraphs[:limit]``: where it starts and ends and its notes
    (each its paragraphs: "N . text", then those it runs on over), or None. The latest paragraph
    labelled 1 whose block is acceptable (see :func:`_trailing_notes`) starts it, a block that
    reaches ``limit`` first; the paragraphs up to the next label are a note's, and the last
    note's end where :func:`_runs_on` says (the next opinion, after the notes of the one before;
    a trailer after the text's notes). ``dotted``: "1. The" items may be notes (the text's last
    block only: before it, "1. Injury in Fact" is a heading). ``first``: the label the block
    opens with (after notes on the head, :func:`_head_notes`)."""
    if limit == len(paragraphs):  # CAP's ". " notes: every paragraph of the run opens with ". "
        i = len(paragraphs)
        while i > 0 and paragraphs[i - 1].startswith(". ") and paragraphs[i - 1][2:].strip():
            i -= 1
        if 0 < i < len(paragraphs):
            return i, len(paragraphs), [[p] for p in paragraphs[i:]]
    starts = [i for i in range(limit - 1, 0, -1) if _item_label(paragraphs[i], dotted)[0] == str(first)]
    for whole in (True, False):  # a block that reaches the limit first; else the notes between opinions
        for start in starts:
            items = [start]
            for k in range(start + 1, limit):
                label, rest = _item_label(paragraphs[k], dotted)
                if label == str(len(items) + first) and rest.strip() and not _LONE_NUMBER.match(paragraphs[k]):
                    items.append(k)
            end = items[-1] + 1
            while end < limit and _runs_on(paragraphs[end - 1], paragraphs[end]):
                end += 1
            if whole and end < limit:
                continue
            notes = [[paragraphs[i] for i in range(a, b)] for a, b in zip(items, [*items[1:], end], strict=True)]
            notes = [[f"{k + first} . {_item_label(n[0], dotted)[1]}", *n[1:]] for k, n in enumerate(notes)]
            strict = end == len(paragraphs) and all(note_label(p)[0] for p in paragraphs[start:end])
            total = len(notes) + first - 1
            if strict or any(total * 0.8 <= m <= total for m in _body_marks(paragraphs[:start])):
                return start, end, notes
    return None


def _runs_on(before: str, after: str) -> bool:
    """Whether paragraph ``after`` goes on with the last footnote that ``before`` ends: it opens
    a quotation or a list item ("“[t]he city ...", "(1) is in military service"), follows one, or
    follows a paragraph ending with a colon ("50 U.S.C. app. § 522(a) provides:"). Other text
    after the notes (the next opinion, a copier's trailer) is no footnote's."""
    return before.rstrip().endswith(":") or after[:1] in "“\"‘'(" or before[:1] in "“\"‘'("


def _body_marks(paragraphs: list[str]) -> set[int]:
    """How far the footnote marks of a body count up (1, 2, 3, ...; one number may be missing):
    a mark alone in a paragraph ("12", as CAP's text sets them) or glued to a lower-case word
    ("testimony6"). Counted from the start and again from each mark 1 alone in a paragraph
    (an opinion after another counts its own marks); {0} when the body holds none."""
    marks = [[int(m.group(1))] if (m := _LONE_NUMBER.match(p)) else (
        [int(m.group(1)) for m in _WORD_MARK.finditer(p)] if any(c.isdigit() for c in p) else [])
        for p in paragraphs]
    counts = {0}
    for first in [0, *(i for i, p in enumerate(paragraphs) if _LONE_NUMBER.match(p) and marks[i] == [1])]:
        expected = 1
        for found in marks[first:]:
            for n in found:
                if expected <= n <= expected + 1:
                    expected = n + 1
        counts.add(expected - 1)
    return counts


def _star_notes(paragraphs: list[str]) -> tuple[list[str], list[str]]:
    """Starred footnotes ("* The Honorable ... sitting by designation.") out of the paragraphs:
    a paragraph that opens with a star (or a dagger) whose mark an earlier paragraph holds, alone
    ("*") or glued to a word ("STROM,*"). The mark goes too; the note is returned with its star."""
    body = list(paragraphs)
    notes: list[str] = []
    for j, p in enumerate(paragraphs):
        m = _STAR_NOTE.match(p)
        if not m:
            continue
        star = m.group(1)
        mark = next((i for i in range(j - 1, -1, -1) if (lone := _STAR_MARK.match(body[i])) and lone.group(1) == star
                     or any(g.group(1) == star for g in _STAR_GLUED.finditer(body[i]))), None)
        if mark is None:
            continue
        notes.append(p)
        body[j] = ""
        if _STAR_MARK.match(body[mark]):
            body[mark] = _SENTINEL
        else:
            glued = next(g for g in _STAR_GLUED.finditer(body[mark]) if g.group(1) == star)
            body[mark] = body[mark][:glued.start()] + body[mark][glued.end():]
    if not notes:
        return list(paragraphs), []
    return _join_at_marks(body), notes


_RUNS_ON_TEXT = re.compile(r"[^.:;?!”\"’)\]]\s*$")
_ROMAN_HEAD = re.compile(r"^[ivxl]{1,5}\.\s")  # "v. CONCLUSION": a heading, not a sentence's rest


def _join_at_marks(paragraphs: list[str]) -> list[str]:
    """Paragraphs without the footnote marks that stood alone between them (:data:`_SENTINEL`);
    a paragraph that a mark cut (the one after opens in lower case and the one before runs on or
    ends with a closing quote, or the one before ends with a comma) is joined again:
    "... COLA and specialty pay”" 26 "and perquisites ..."."""
    out: list[str] = []
    cut = False
    for p in paragraphs:
        if p == _SENTINEL:
            cut = True
            continue
        if not p:
            continue
        before, after = strip_markers(out[-1]).rstrip() if out else "", strip_markers(p)
        lower = after[:1].islower() and not _ROMAN_HEAD.match(after)
        if cut and before and (_RUNS_ON_TEXT.search(before) and (lower or before.endswith(","))
                               or before.endswith(("\"", "”")) and lower):
            out[-1] = f"{out[-1]} {p}"
        else:
            out.append(p)
        cut = False
    return out


def _marks_of_notes(text: str) -> bool:
    """Whether a plain text's lines that hold only a number are its footnotes' marks, not page
    numbers: they count 1, 2, ... and the text ends with the footnote block they mark
    (:func:`_note_block`, its lines taken as paragraphs)."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    lone = [int(m.group(1)) for ln in lines if (m := _LONE_NUMBER.match(ln))]
    if not lone or lone != list(range(1, len(lone) + 1)):
        return False
    head, block = _after_head_notes(lines)
    return block is not None and (len(block[2]) + len(head)) * 0.8 <= len(lone) <= len(block[2]) + len(head)


def _is_notes_heading(paragraph: str) -> bool:
    return strip_markers(paragraph).rstrip(":").upper() in ("FOOTNOTES", "NOTES")


# --- the step ----------------------------------------------------------------------------------

def clean_opinion(paragraphs: Iterable[str], footnotes: Iterable[str] = (), notes_in_text: bool = True, *,
                  kind: str = "majority", author: str | None = None) -> OpinionRecord:
    """The one cleaning step: page labels out of the text into page starts, footnote marks out of
    words, footnotes after the paragraphs; the opinion of type ``kind`` by ``author``.

    ``paragraphs`` may hold :func:`page_marker` markers and plain ``*583`` labels; ``footnotes``
    are the footnotes a reader found in the markup (their text, label first or not; a marker at a
    footnote's head gives the page it stands on, one inside it the page it goes on to). With
    ``notes_in_text`` and no ``footnotes`` given, footnotes appended at the end of the text
    ("1 . The record ...") are found here. Every text is put in :func:`normal_form` first."""
    paras = _star_labels(_without_running_headers([p for p in map(normal_form, paragraphs) if p.strip()]))
    given = [n for n in map(normal_form, footnotes) if strip_markers(n)]  # markers kept: a note's pages
    notes = [strip_markers(n) for n in given]
    loose = bool(notes)
    groups = [[n] for n in given]
    if notes_in_text and not notes:
        paras, groups = _trailing_notes(paras)
        given = [g[0] for g in groups]
        notes = [strip_markers(n) for n in given]
    paged_notes = [(p, loose and k == 0, k > 0) for g in groups for k, p in enumerate(g)]
    note_of = [i for i, g in enumerate(groups) for _ in g]
    numbered = [int(lab) for lab, _ in (note_label(n, loose) for n in notes) if lab]
    unstarred = [n for n in notes if not _STAR_NOTE.match(n)]
    labels = set(numbered) | (set(range(1, len(unstarred) + 1)) if unstarred and not numbered else set())
    paras = _drop_glued_marks(paras, labels, max(0, numbered.count(1) - 1))
    if labels:  # a footnote's mark standing as its own paragraph; the paragraph it cut joined again
        paras = _join_at_marks([_SENTINEL if (m := _LONE_NUMBER.match(strip_markers(p))) and int(m.group(1)) in labels
                                else p for p in paras])
    out: list[str] = []
    starts: list[tuple[PageStart, ...]] = []
    pending: list[str] = []
    for p in paras:
        text, inside, tail = _split_pages(p)
        if not text:
            pending.extend(inside_label for _, inside_label in inside)
            pending.extend(tail)
            continue
        here = [(0, label) for label in pending] + inside
        pending = tail
        out.append(text)
        starts.append(tuple(dict.fromkeys(here)))  # a text's own "[*4]" and its page break's marker: one start
    note_lines, note_starts, kept = _note_pages(paged_notes)
    numbers = [note_of[k] for k in kept]
    # a footnote of several paragraphs is several lines: each line says which footnote it is
    note_numbers = tuple(str(n + 1) for n in numbers) if len(set(numbers)) < len(numbers) else ()
    if not any(starts) and not any(note_starts):
        return numbered_paragraphs(OpinionRecord(kind, author, tuple(out), tuple(note_lines),
                                                 note_numbers=note_numbers))
    return numbered_paragraphs(OpinionRecord(kind, author, tuple(out), tuple(note_lines),
                                             tuple(starts) + tuple(note_starts), note_numbers=note_numbers))


def _without_running_headers(paragraphs: list[str]) -> list[str]:
    """The paragraphs without those that are a running header (:func:`is_running_header`, their page
    markers aside); a page marker such a paragraph held stays, as a paragraph of its own."""
    out: list[str] = []
    for p in paragraphs:
        if is_running_header(strip_markers(p)):
            if markers := "".join(m.group(0) for m in _MARKER.finditer(p)):
                out.append(markers)
        else:
            out.append(p)
    return out


def _note_pages(notes: list[tuple[str, bool, bool]]) -> tuple[list[str], list[tuple[PageStart, ...]], list[int]]:
    """Footnote lines (their text, page markers kept; whether loosely labelled; whether the line
    goes on with the footnote before, so has no label) -> their text without label or markers,
    the pages starting inside each (a marker at a footnote's head is the page it stands on, offset
    0; one inside it the page a footnote carried over goes on to), and which lines were kept."""
    texts: list[str] = []
    starts: list[tuple[PageStart, ...]] = []
    kept: list[int] = []
    for k, (raw, loose, goes_on) in enumerate(notes):
        text, inside, _ = _split_pages(raw)
        if not text:
            continue
        kept.append(k)
        rest = text if goes_on else " ".join(note_label(text, loose)[1].split()) or text
        cut = len(text) - len(rest) if text.endswith(rest) else 0
        texts.append(rest)
        starts.append(tuple((max(0, at - cut), label) for at, label in inside))
    return texts, starts, kept


# --- paragraph numbers ---------------------------------------------------------------------------

#: A paragraph number marked as one at a paragraph's head: "¶ 17" (North Carolina, Wisconsin,
#: Washington ...), "¶17." (Mississippi), "{17}" (New Mexico), "{¶ 17}" (Ohio), "[¶17]" (North
#: Dakota, Maine), "[¶17.]" (South Dakota).
_PARAGRAPH_LABEL = r"\{¶?[ \t]*(\d{1,4})\}|\[¶[ \t]*(\d{1,4})\.?\]|¶[ \t]*(\d{1,4})\.?"
_PARAGRAPH_MARK = re.compile(rf"(?:{_PARAGRAPH_LABEL})[ \t]+(?=\S)")
#: A bare number and a period at a paragraph's head ("17. The trial court ..."): a paragraph number only
#: where the opinion numbers its paragraphs (:func:`paragraph_numbers`).
_PARAGRAPH_ORDINAL = re.compile(r"(\d{1,3})\.[ \t]+(?=[“\"‘'(\[]?[A-Z])")
#: "17." numbers paragraphs when the run 1, 2, 3, ... of such heads holds at least this many
#: paragraphs and at least :data:`MIN_NUMBERED_SHARE` of the opinion's paragraphs (a list of items
#: inside an opinion holds a few of them). Chosen on the data set's federal opinions and checked on
#: its state courts' (tests/sources/test_paragraph_numbers.py).
MIN_NUMBERED = 5
MIN_NUMBERED_SHARE = 0.5


def paragraph_numbers(paragraphs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The paragraphs without their paragraph numbers, and the numbers ("" for a paragraph without
    one; an empty list when the opinion does not number its paragraphs).

    A marked number (:data:`_PARAGRAPH_MARK`: "¶ 17", "{17}", "[¶17]") is a paragraph number where
    the marked numbers go up through the opinion (a mark out of order stays text) and there are two
    or more. A bare "17." is one only where the opinion numbers its paragraphs: the paragraphs whose
    heads run 1, 2, 3, ... (each the next number, or 1 again after a run of :data:`MIN_NUMBERED`:
    findings of fact, then conclusions of law; a head that is neither stays text) are at least :data:`MIN_NUMBERED` and
    :data:`MIN_NUMBERED_SHARE` of the paragraphs."""
    found: list[tuple[int, str, int]] = []  # (paragraph, number, characters taken off)
    last = -1
    for i, p in enumerate(paragraphs):
        if (m := _PARAGRAPH_MARK.match(p)) and int(n := next(g for g in m.groups() if g)) > last:
            found.append((i, str(int(n)), m.end()))
            last = int(n)
    if len(found) < 2:
        found = []
        expected = 1
        for i, p in enumerate(paragraphs):
            if (m := _PARAGRAPH_ORDINAL.match(p)) and (int(m.group(1)) == expected
                                                       or (m.group(1) == "1" and expected > MIN_NUMBERED)):
                found.append((i, m.group(1), m.end()))
                expected = int(m.group(1)) + 1
        if len(found) < max(MIN_NUMBERED, MIN_NUMBERED_SHARE * len(paragraphs)):
            return list(paragraphs), []
    texts, numbers = list(paragraphs), [""] * len(paragraphs)
    for i, number, taken in found:
        texts[i], numbers[i] = texts[i][taken:], number
    return texts, numbers


def numbered_paragraphs(opinion: OpinionRecord) -> OpinionRecord:
    """``opinion`` with its paragraph numbers taken off its paragraphs' text into ``numbers``
    (:func:`paragraph_numbers`); the pages starting inside a paragraph move with its text."""
    texts, numbers = paragraph_numbers(opinion.paragraphs)
    if not numbers:
        return opinion
    starts = opinion.page_starts
    if starts:
        starts = tuple(tuple((max(0, at - (len(old) - len(new))), label) for at, label in here)
                       if k < len(texts) and (old := opinion.paragraphs[k]) != (new := texts[k]) else here
                       for k, here in enumerate(starts))
    return dataclasses.replace(opinion, paragraphs=tuple(texts), page_starts=starts, numbers=tuple(numbers))


# --- markup (CourtListener's HTML fields, Harvard XML, CAP HTML) ------------------------------

_BLOCK = frozenset(["p", "div", "blockquote", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table",
                    "tr", "td", "th", "dd", "dt", "dl", "section", "article", "center", "br", "hr", "opinion",
                    "author", "aside", "footnote", "footnote_body"])
_NOTE_ID = re.compile(r"^(?:op\d+-)?(?:ref[-_]?)?(?:fn|footnote)[-_\d]", re.IGNORECASE)


def _classes(el) -> set[str]:
    return set((el.get("class") or "").lower().split())


#: CAP's order of citation types (capstone's ``Citation.citation_types``): the ``data-citation-index``
#: of a page label is the position, from 1, of its reporter's citation in this order.
_CAP_CITATION_ORDER = ("official", "nominative", "parallel", "vendor")


def cap_pagination(citations: Sequence[tuple[str, str]]) -> str:
    """The ``data-citation-index`` of the page labels that paginate the citation a case is cited
    by (:attr:`~statinterp.sources.records.CaseRecord.official_citation`: the "official" one, else
    the first). CAP numbers a case's paginations by its citations sorted by type (official,
    nominative, parallel, vendor; capstone's ``Citation.sorted_by_type``, which its Fastcase import
    uses to label "[264 Ga. App. 475]" pages "**475", data-citation-index 2), so *In re K.N.C.*'s
    "590 S.E.2d 792" (official) is pagination 1 and "264 Ga. App. 475" (parallel) is 2."""
    if not citations:
        return "1"
    cited = next((i for i, (kind, _) in enumerate(citations) if kind == "official"), 0)
    rank = {kind: k for k, kind in enumerate(_CAP_CITATION_ORDER)}
    order = sorted(range(len(citations)), key=lambda i: rank.get(citations[i][0], len(rank)))
    return str(order.index(cited) + 1)


def _is_other_reporter_label(el, pagination: str = "1") -> bool:
    """A CAP page label of another pagination than ``pagination`` (its ``data-citation-index``; a
    label without one is of pagination 1): a parallel reporter's page, dropped, never a pin."""
    index = (el.get("data-citation-index") or "1").strip()
    return index != pagination and "page-label" in _classes(el)


def _is_page_label(el, tag: str) -> bool:
    cls = _classes(el)
    return "star-pagination" in cls or "page-label" in cls or tag == "page_number"


def _is_note(el, tag: str) -> bool:
    """A footnote's body: <footnote>, Columbia's <footnote_body>, <div class="footnote">, CAP's
    <aside class="footnote">, resource.org's <div id="fn1">."""
    if tag in ("footnote", "footnote_body"):
        return True
    cls = _classes(el)
    if tag in ("div", "aside", "li", "p") and ("footnote" in cls or "fn" in cls):
        return True
    return tag in ("div", "aside", "li") and bool(_NOTE_ID.match(el.get("id") or "")) and "ref" not in (
        el.get("id") or "").lower()


def _is_mark(el, tag: str) -> bool:
    """A footnote mark in the text: <footnotemark>, <a class="footnote(mark)">, a <sup> or <a>
    linking to a footnote, a <sup> holding only a number or a star."""
    if tag == "footnotemark":
        return True
    cls = _classes(el)
    href = (el.get("href") or "").lstrip("#")
    if tag == "a" and ("footnote" in cls or "footnotemark" in cls or (href and _NOTE_ID.match(href))):
        return True
    if tag == "sup":
        text = el.text_content().strip()
        return bool(re.fullmatch(r"\[?(?:\d{1,3}|\*{1,3}|[†‡])\]?", text)) or any(
            _NOTE_ID.match((a.get("href") or "").lstrip("#")) for a in el.iter("a"))
    return False


#: Elements whose content is never the opinion's text.
_NOT_TEXT = frozenset(["style", "script", "title", "head", "noscript", "template"])
#: Inline elements that may sit between the ``<pre class="inline">`` pieces of one text.
_INLINE = frozenset(["span", "a", "em", "i", "b", "strong", "u", "sup", "sub", "small", "mark"])


def _tag(el) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def _flat_text(el, pagination: str = "1") -> str:
    """An element's text with page labels as :func:`page_marker` markers and ``<br>`` as a line end."""
    out = [el.text or ""] if isinstance(el.tag, str) else []
    for child in el:
        tag = _tag(child)
        if _is_other_reporter_label(child, pagination):
            pass
        elif _is_page_label(child, tag):
            out.append(page_marker(child.get("label") or child.get("data-label") or child.text_content()))
        elif tag == "br":
            out.append("\n")
        elif tag and tag not in _NOT_TEXT:
            out.append(_flat_text(child, pagination))
        out.append(child.tail or "")
    return "".join(out)


_PRE_TEXT = "data-statinterp-pre"


def _merge_pre_runs(root) -> list[str]:
    """Make each ``<pre>`` one text: CourtListener's ``html_with_citations`` of a plain text is
    ``<pre class="inline">...</pre><span class="citation">...</span><pre class="inline">...</pre>``
    (the citations between the pieces, or inside a ``<pre>`` as ``<span>``/``<a>``). A ``<pre>``
    and the inline elements and ``<pre>`` siblings that follow it become one ``<pre>`` holding
    their text, which is then cleaned as plain text is (:func:`plain_paragraphs`). Returns the
    texts; each ``<pre>`` names its own by the attribute ``data-statinterp-pre``."""
    texts: list[str] = []
    for pre in list(root.iter("pre")):
        if pre.getparent() is None and pre is not root:
            continue  # a piece already merged into the <pre> before it
        text = [_flat_text(pre)]
        run = []
        nxt = pre.getnext()
        while nxt is not None and (not isinstance(nxt.tag, str) or _tag(nxt) == "pre"
                                   or _tag(nxt) in _INLINE and not _is_page_label(nxt, _tag(nxt))):
            run.append(nxt)
            nxt = nxt.getnext()
        if run:
            text.append(pre.tail or "")
            for el in run:
                if isinstance(el.tag, str):
                    text.append(_flat_text(el))
                text.append(el.tail or "")
                el.getparent().remove(el)
            pre.tail = None
        for child in list(pre):
            pre.remove(child)
        pre.text = None  # (lxml refuses a form feed in a tree's text: the text is kept apart)
        pre.set(_PRE_TEXT, str(len(texts)))
        texts.append("".join(text))
    return texts


def clean_markup(markup: str, *, kind: str = "majority", author: str | None = None,
                 pagination: str = "1", head: list[str] | None = None) -> OpinionRecord:
    """An HTML/XML opinion -> cleaned text: one paragraph per block element, whitespace
    collapsed; page labels -> page starts; footnote marks dropped; footnotes after the text.
    A ``<pre>`` (with the citation ``<span>``s and ``<pre>`` pieces of CourtListener's
    ``html_with_citations``: :func:`_merge_pre_runs`) is one plain text, cleaned as
    :func:`clean_plain` cleans it; ``<style>``, ``<script>``, ``<title>`` and ``<head>`` are never text.
    ``pagination``: of CAP page labels, only those of this ``data-citation-index`` are pages
    (:func:`cap_pagination`); the others are a parallel reporter's. ``head``: as for
    :func:`clean_plain`, when a ``<pre>`` holds PDF-born text."""
    import lxml.html

    try:
        root = lxml.html.fromstring(markup)
    except Exception:  # noqa: BLE001 - lxml raises several types for unusable markup
        return OpinionRecord(kind, author, ())
    pre_texts = _merge_pre_runs(root)
    out: list[str] = []
    notes: list[str] = []
    buf: list[str] = []
    pdf_born = False

    def flush(into: list[str]) -> None:
        text = "".join(buf)
        if text.strip():
            into.append(text)
        buf.clear()

    def walk(el, into: list[str]) -> None:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if tag in _NOT_TEXT:
            return
        if _is_other_reporter_label(el, pagination):
            return
        if _is_page_label(el, tag):
            buf.append(page_marker(el.get("label") or el.get("data-label") or el.text_content()))
            return
        if _is_mark(el, tag):
            return
        if _is_note(el, tag) and into is out:
            flush(out)
            note: list[str] = []
            label = el.get("label") or el.get("data-label")
            inner(el, note, skip_label=True)
            flush(note)
            text = " ".join(strip_markers(" ".join(note)).split())
            if label and text.startswith(label + " "):
                text = text[len(label) + 1:]
            if text:
                notes.append(text)
            return
        block = tag in _BLOCK
        if block:
            flush(into)
        if tag == "pre":  # one plain text (its pieces merged): cleaned as plain text is
            nonlocal pdf_born
            paras, pre_notes, born = _plain_paragraphs(pre_texts[int(el.get(_PRE_TEXT, "0"))])
            pdf_born = pdf_born or born
            into.extend(paras)
            notes.extend(pre_notes)
        else:
            inner(el, into)
        if block:
            flush(into)

    def inner(el, into: list[str], skip_label: bool = False) -> None:
        if el.text and isinstance(el.tag, str):
            buf.append(el.text)
        for child in el:
            ctag = child.tag.lower() if isinstance(child.tag, str) else ""
            if skip_label and ctag in ("a", "sup", "label") and re.fullmatch(
                    r"\s*\[?(?:\d{1,3}|\*{1,3}|[†‡])\]?\s*", child.text_content() or ""):
                skip_label = False  # the footnote's own number
            else:
                walk(child, into)
            if child.tail:
                buf.append(child.tail)

    walk(root, out)
    flush(out)
    if head is not None and pdf_born:
        out, author = _take_head(out, head, author)
    return clean_opinion(out, notes, kind=kind, author=author)


# --- plain text and PDF-born text --------------------------------------------------------------

_RULE = re.compile(r"^\s{0,3}(?:[—─]{5,}|_{10,})\s*$")
_UNDERLINE = re.compile(r"^\s{4,}_{5,}\s*$")  # a slip opinion's separators around the docket number
#: A line of a caption box holding only its ":" or ")" column (or its bottom rule and the column): no text.
_BOX_COLUMN = re.compile(r"^[\s_—─]*[:)]\s*$")
_PAGE_NUMBER = re.compile(r"^\s*(?:-\s*)?\d{1,4}(?:\s*-)?\s*$")
#: A federal court's electronic-filing banner: "Case: 21-50498 Document: 00516242060 Page: 7 Date Filed:
#: ...", "Case: 20-16276, 08/05/2020, ID: 11778722, DktEntry: 19, Page 2 of 15", "Appellate Case: 21-1234 ...".
_EFILING_BANNER = re.compile(r"^\s*(?:USCA\d+\s+|Appellate\s+)?Case:?\s+[\w\-:./]+.{0,40}?"
                             r"\b(?:Document|DktEntry|Doc\.?|ID)\b.{0,80}\bPages?:?\s*\d+.{0,60}$")
_HEADER_PATTERNS = (
    re.compile(r"^\s*\(Slip Opinion\)\s+OCTOBER TERM,\s+\d{4}\s+\d*\s*$"),
    re.compile(r"^\s*Cite as:\s+\d+\s+U\.\s?S\.\s.*$"),
    re.compile(r"^\s*\d{1,4}\s{2,}[A-Z][A-Z0-9 .,'’&\-]* v\. [A-Z0-9 .,'’&\-]+$"),  # "2   FISHER v. UNIVERSITY ..."
    _EFILING_BANNER,
    re.compile(r"^\s*Cite as:\s+\S.{0,90}$"),  # "Cite as: 2022 Ark. 12", "Cite as: 604 U. S. ____ (2025)"
    # Ohio's header above an opinion's text, a line of its own: "[Cite as Wiebusch v. Wiebusch, 186 Ohio
    # App.3d 237, 2010-Ohio-504.]"; a sentence that cites "[Cite as ...]" inside it is no header
    re.compile(r"^\s*\[Cite as\s[^\]\n]{5,300}\]\s*$"),
)
_LINE_HYPHEN = re.compile(r"[A-Za-z]-$")
#: A line of slashes only ("///", "////"): pleading paper's sign that the text goes on, no text.
SLASHES = re.compile(r"^\s*/{3,}\s*$")
_NOTE_LINE = re.compile(r"^\s{0,6}(\d{1,3}|\*{1,3}|[†‡])\s+(?=\S)")
#: A footnote's label glued to its first word ("   26Except, MERRIAM-WEBSTER ..."): one only when it is the
#: next label expected.
_GLUED_NOTE_LINE = re.compile(r"^\s{0,6}(\d{1,3})(?=[A-Z“\"‘'(\[][a-z])")


#: Banners of a page's physical line that :data:`_HEADER_PATTERNS` leaves to a line's context, as
#: their forms are looser: e-filing stamps ("Appeal: 17-2218 Doc: 17 Filed: 10/31/2017 Pg: 1 of 1",
#: "Case 15-11680 Doc 1 Filed 03/31/15 Entered 03/31/15 16:49:55 Desc Main"), any "Cite as:" line and a
#: slip opinion's "(Slip Opinion)" line. Matched on a PDF's lines and on the edge lines of a PDF-born
#: text's pages (:func:`is_banner_line`), never on a paragraph.
_LINE_BANNERS = (
    re.compile(r"^\s*(?:Appellate\s+|USCA\d*\s+)?(?:Case|Appeal)[:\s#]+[\w:.\-–]*\d[\w:.\-–]*,?\s.*"
               r"\b(?:Document|Doc|DktEntry|Page|Filed)\b", re.IGNORECASE),
    re.compile(r"^\s*Cite as:\s", re.IGNORECASE),
    re.compile(r"^\s*\(Slip Opinion\)", re.IGNORECASE),
    re.compile(r"^\s*En\s+Banc\s*$", re.IGNORECASE),  # a caption's cell set apart ("En Banc"), never text
)


def is_banner_line(line: str) -> bool:
    """Whether one printed line (of a PDF's page, or at the head or foot of a PDF-born text's page)
    is a running header or banner: :func:`is_running_header`, or one of :data:`_LINE_BANNERS`."""
    return is_running_header(line) or any(p.match(line) for p in _LINE_BANNERS)


def is_running_header(line: str) -> bool:
    """Whether a line (or a whole paragraph) is a running header or banner, never text: a slip
    opinion's "Cite as: 570 U. S. ____ (2013)", an e-filing banner, Ohio's "[Cite as ...]"
    (:data:`_HEADER_PATTERNS`). Every route drops them: PDF-born text from its pages' lines, the
    PDF reader from its lines, and :func:`clean_opinion` a paragraph that is one."""
    return any(p.match(line) for p in _HEADER_PATTERNS)


def is_pdf_text(text: str) -> bool:
    """Whether a plain text is PDF-born (pdftotext-like): form feeds, or many lines ending in a
    hyphenated word, or double spacing with lines wrapped inside sentences, or running headers
    ("Cite as: ...") repeated on several pages."""
    if "\f" in text:
        return True
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if any(_EFILING_BANNER.match(ln) for ln in lines[:3]):
        return True  # an e-filing banner at its head: a court's PDF (a one-page order has no form feed)
    if len(lines) < 20:
        return False
    hyphens = sum(1 for ln in lines if _LINE_HYPHEN.search(ln.rstrip()))
    if hyphens >= 10 and hyphens >= 0.03 * len(lines):
        return True
    widths = sorted(len(ln.rstrip()) for ln in lines)
    if (widths[int(0.9 * (len(widths) - 1))] <= 130 and _double_spaced(text.split("\n"))
            and sum(1 for ln in lines if _RUNS_ON.search(ln)) >= 0.3 * len(lines)):
        return True  # double spaced, lines of a page's width wrapped inside sentences: a PDF's page layout
    return sum(1 for ln in lines if is_running_header(ln)) >= 3


def _norm_header(line: str) -> str:
    return " ".join(re.sub(r"\d+", "#", line).split())


def _page_number_lines(lines: Sequence[str]) -> list[int]:
    """The lines holding only a page number, set apart from the text ("- 4 -", or a number
    centred: 20 or more spaces before it; a footnote's label at the margin is not one), that
    count up (a step of 1 or 2; numbers out of step are passed over): a text's page breaks
    without form feeds. [] when there are fewer than three."""
    found: list[int] = []
    last = None
    for i, ln in enumerate(lines):
        if not _PAGE_NUMBER.match(ln) or not ("-" in ln or len(ln) - len(ln.lstrip()) >= 20):
            continue
        n = int(re.sub(r"\D", "", ln))
        if last is None or 0 < n - last <= 2:
            found.append(i)
            last = n
    return found if len(found) >= 3 else []


def _pages(text: str) -> list[list[str]]:
    """A PDF-born text's pages: split at form feeds, or (with none) after each page-number line."""
    pages = [p.split("\n") for p in text.replace("\r\n", "\n").split("\f")]
    if len(pages) == 1 and (breaks := _page_number_lines(pages[0])):
        lines = pages[0]
        cuts = [0] + [i + 1 for i in breaks] + [len(lines)]
        pages = [lines[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    return [p for p in pages if any(ln.strip() for ln in p)]


def page_labels(printed: Sequence[int | None]) -> list[str]:
    """Each page's label: its printed number when most pages print one (a page without one
    continues the count), else its place in the file."""
    if sum(p is not None for p in printed) * 2 < len(printed):
        return [str(i + 1) for i in range(len(printed))]
    out: list[str] = []
    last: int | None = None
    for i, p in enumerate(printed):
        if p is None:
            p = last + 1 if last is not None else i + 1
        out.append(str(p))
        last = p
    return out


#: A page's number in a running header: "Cite as: 569 U. S. ____ (2013) 3", "4   TARRANT ... v. HERRMANN".
_HEADER_NUMBER = (re.compile(r"^\s*Cite as:.*\s(\d{1,4})\s*$"), re.compile(r"^\s*(\d{1,4})\s{2,}[A-Z].* v\. "))


def _is_page_number(page: list[str], i: int, top: list[int], repeated: set[str]) -> bool:
    """Whether line ``i`` of ``page`` (a number among its edge lines: :data:`_PAGE_NUMBER`) is the
    page's number: at its head, or with none of the page's text below it (a number with the page's
    text below it is a footnote's label)."""
    return i in top or not any(
        page[j].strip() and _norm_header(page[j]) not in repeated
        and not is_running_header(page[j]) for j in range(i + 1, len(page)))


def _printed_number(page: list[str], repeated: set[str], edges: tuple[list[int], list[int]]) -> int | None:
    """The number a PDF-born text's page prints at its top or foot ("- 4 -", "4", "Cite as: ... 4");
    ``edges``: the page's :func:`_edge_lines`."""
    top, bottom = edges
    for i in bottom + top:
        if _PAGE_NUMBER.match(page[i]) and _is_page_number(page, i, top, repeated):
            return int(re.sub(r"\D", "", page[i]))
    for i in top:
        for pattern in _HEADER_NUMBER:
            if m := pattern.match(page[i]):
                return int(m.group(1))
    return None


#: A page marker after a line-end hyphen ("Dic-" / page 8 "tionary"): the page starts before the word.
SPLIT_MARKER = re.compile(f"([A-Za-z]+-)\n({PAGE_OPEN}[^{PAGE_CLOSE}]*{PAGE_CLOSE})(?=[a-z])")


def _mark_pages(paragraphs: list[str], firsts: dict[int, str]) -> list[str]:
    """``paragraphs`` (:func:`_paragraph_breaks`: each a run of the body's text lines, stripped,
    joined by line ends) with the page marker of ``firsts`` (text line's index -> page label)
    before each page's first line."""
    out: list[str] = []
    k = 0
    for para in paragraphs:
        lines = para.split("\n")
        for j, ln in enumerate(lines):
            if k + j in firsts:
                lines[j] = page_marker(firsts[k + j]) + ln
        k += len(lines)
        out.append(SPLIT_MARKER.sub(r"\2\1\n", "\n".join(lines)))
    return out


def _edge_lines(page: list[str], n: int = 3) -> tuple[list[int], list[int]]:
    """The first ``n`` and the last three lines with text of a page (where running heads and feet are)."""
    filled = [i for i, ln in enumerate(page) if ln.strip()]
    return filled[:n], filled[-3:]


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Common English words (spaCy's lexeme table of ``spacy-lookups-data``, log probability
    above -17.8: "scrutiny", "indemnify", not "selfdefense"). Loaded once, offline."""
    import gzip
    import json
    from importlib import resources

    try:
        path = resources.files("spacy_lookups_data") / "data" / "en_lexeme_prob.json.gz"
        with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
            probs = json.load(fh)
    except (OSError, ValueError, ModuleNotFoundError):
        return frozenset()
    return frozenset(w for w, p in probs.items() if p > -17.8 and w.isalpha())


def _words(text: str) -> Counter:
    return Counter(w.lower() for w in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", text))


class Dehyphenator:
    """Decides whether "scru-" + "tiny" is "scrutiny" (a word split at a line end) or a true
    hyphen ("self-" + "defense"): joined when the joined word occurs in the text (or the
    collection's words given) or in :func:`english_words`, and the hyphenated form does not
    occur inside a line of the text."""

    def __init__(self, text: str, extra_words: Iterable[str] = ()):
        body = re.sub(r"[A-Za-z]-\s*\n\s*[a-z]", " ", text)  # words not split at a line end
        self.words = _words(body)
        self.extra = {w.lower() for w in extra_words}

    def join(self, head: str, tail: str) -> str:
        """The word made of a line-end ``head-`` and the next line's ``tail`` (letters only)."""
        joined = (head + tail).lower()
        hyphened = f"{head}-{tail}".lower()
        if self.words.get(hyphened, 0) > self.words.get(joined, 0):
            return f"{head}-{tail}"
        if joined in self.words or joined in self.extra or joined in english_words():
            return head + tail
        return f"{head}-{tail}"


_SPLIT_WORD = re.compile(r"([A-Za-z]+)-[ \t]*\n?[ \t]*([a-z]+)")


def dehyphenate(text: str, hyphens: Dehyphenator | None = None) -> str:
    """Rejoin words split by a hyphen at a line end ("scru-\\ntiny") or, in text whose lines were
    already joined, before a space ("scru- tiny"); true hyphens stay."""
    fix = hyphens or Dehyphenator(text)

    def repl(m: re.Match) -> str:
        between = m.group(0)[len(m.group(1)) + 1:-len(m.group(2))]
        if not between:
            return m.group(0)  # "self-defense" inside a line: nothing to do
        word = fix.join(m.group(1), m.group(2))
        if "\n" not in between and "-" in word:
            return m.group(0)  # "pre- and post-trial": a suspended hyphen stays as written
        return word

    return _SPLIT_WORD.sub(repl, text)


def _strip_page(page: list[str], repeated: set[str], edges: tuple[list[int], list[int]],
                continuing: bool = False) -> tuple[list[str], list[str]]:
    """A page's body lines and footnote lines, running headers/footers and page numbers removed.
    The footnotes are what follows a footnote rule (:data:`_RULE`) when they open with a footnote's
    label or, ``continuing`` (the notes so far end inside a sentence), go on with the last one; a
    rule followed by other text (a caption boxed with underscores, a judge's signature line, a
    topic index after the opinion) is no footnote rule: it leaves the text as a blank line.
    ``edges``: the page's :func:`_edge_lines` (found once, with its printed number)."""
    top, bottom = edges
    drop = set()
    for i in top + bottom:
        ln = page[i]
        if not _PAGE_NUMBER.match(ln):
            if _norm_header(ln) in repeated or is_banner_line(ln):
                drop.add(i)
        elif _is_page_number(page, i, top, repeated):
            drop.add(i)
    lines = [x for i, ln in enumerate(page)
             if i not in drop and not is_running_header(ln) and not _UNDERLINE.match(ln)
             and not SLASHES.match(ln)
             for x in (("", "") if _BOX_COLUMN.match(ln) else (ln,))]  # a box's row ends a paragraph
    for i, ln in enumerate(lines):
        if not _RULE.match(ln):
            continue
        after = next((x for x in lines[i + 1:] if x.strip()), "")
        if i > 0 and (continuing or _NOTE_LINE.match(after) or _FOOT_LABEL.match(after)):
            return lines[:i], lines[i + 1:]
        lines[i] = ""
    return lines, []


#: A footnote's first line at a page foot: its label alone ("      1", "   *"), before its text, or glued
#: to it ("1The Chapel claimed", the First Circuit's).
_FOOT_LABEL = re.compile(r"^\s*(\d{1,3}|\*{1,3}|[†‡])(?:\s*$|\s+(?=\S)|(?=[A-Z“\"(\[]))")
#: Superscript digits (a PDF's footnote marks and labels) -> digits.
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _mark_pattern(label: str, glued_only: bool = False) -> re.Pattern:
    """Where footnote ``label``'s mark stands in a page's body: glued to a word or a closing
    bracket or quote ("cite9", "6662(a)2", "Loan15"), after a word's punctuation ("the parties,3",
    "BORDELON,1", "465(b)(2)(A).10"), after a year's full stop before a new sentence ("the end of
    2011.5 Tax") or an amount's comma ("$550,000,14 which"), or spaced after punctuation
    ("_____.” 1 The form"), in brackets after a quotation's end ("1121-22 (1st Cir. 1993).[7]": the
    court's own note in a quotation); a star glued to a word. ``glued_only``: only a mark glued to a
    word or after its punctuation, never one set apart by a space (what may be a number of the text:
    "Compact, 1 App. 7-51", "94 Stat. 12 (")."""
    if not label.isdigit():
        return re.compile(rf"(?<=[A-Za-z.,;:)”’\"']){re.escape(label)}(?!\*)")
    glued = (rf"(?<=[A-Za-z)\]”’\"']){label}(?=[\s.,;:)—–]|-(?!\d)|$)"
             rf"|(?<=[A-Za-z)\]”’\"'][.,;:]){label}(?=[\s)—–]|$)")
    if glued_only:
        return re.compile(glued)
    return re.compile(glued + rf"|(?<=\d\.){label}(?=\s+[A-Z“\"]|\s*$)|(?<=\d{{3}},){label}(?=\s)"
                      rf"|(?<=[.,;:”’\"')] ){label}(?=\s+[A-Z“\"(]|\s*$)"
                      rf"|(?<=[A-Za-z.,;:)”’\"'])\[{label}\](?=[\s.,;:)]|$)")  # "(1993).[7]": a bracketed mark


#: Words a number after them refers to ("Rule 7 requires", "Local 37 members"): no footnote mark.
_NUMBERED_THING = re.compile(
    r"(?:^|\W)(?:rules?|sections?|secs?|titles?|counts?|parts?|chapters?|articles?|exhibits?|pages?|notes?|"
    r"footnotes?|claims?|steps?|items?|paragraphs?|schedules?|appendix|amendments?|volumes?|tables?|figures?|"
    r"lines?|columns?|class|phases?|levels?|units?|locals?|districts?|circuits?|days?|years?|months?|weeks?|"
    r"hours?|minutes?|no|nos|art|ch|tit|vol|ex|app|fig|para|cl|subd|version|tier|grade|room|docs?|ecf|dkt|"
    r"at|of|and|or|to|in|on|by|for|from|than|about|over|under|only|all|the|a|an|some|those|these|first|last)$",
    re.IGNORECASE)


def _spaced_word_mark(label: str) -> re.Pattern:
    """A mark set apart by spaces after a word, before a word of the sentence or the line's end
    ("Three of the CBAs 7 lack the provision", a heading's "Memorandum Opinion 1": pdftotext's
    rendering of a raised mark with a gap before it), or after an acronym at the line's end ("The
    underlying case is a PRA 1"), or after a comma that follows a word, a bracket or a number of
    three digits or more, before a lower-case word ("S.B. 5761, 4 the 2022 bill", "Alcoa), 1
    claiming": not "Sections 8, 9 and 13"): tried only when :func:`_mark_pattern` finds none, and not
    after a word a number refers to (:data:`_NUMBERED_THING`)."""
    return re.compile(rf"(?<=[a-z] ){label}(?= [a-z]|\s*$)|(?<=[A-Z]{{2}} ){label}(?=\s*$)"
                      rf"|(?:(?<=[A-Za-z)\]”’\"], )|(?<=\d{{3}}, )){label}(?= [a-z])")


def _find_mark(lines: Sequence[str], label: str, start: tuple[int, int] = (0, 0),
               glued_only: bool = False) -> tuple[int, int, int] | None:
    """The first mark of footnote ``label`` at or after ``start`` (line, column): (line, start, end);
    ``glued_only``: see :func:`_mark_pattern`."""
    pattern = _mark_pattern(label, glued_only)
    for i in range(start[0], len(lines)):
        m = pattern.search(lines[i], start[1] if i == start[0] else 0)
        if m:
            return i, m.start(), m.end()
    if not label.isdigit() or glued_only:
        return None
    spaced = _spaced_word_mark(label)
    for i in range(start[0], len(lines)):
        for m in spaced.finditer(lines[i], start[1] if i == start[0] else 0):
            if not _NUMBERED_THING.search(lines[i][:m.start()].rstrip()):
                return i, m.start(), m.end()
    return None


#: A footnote's "(continued...)" line, and its "(...continued)" head on the next page.
_CONTINUED = re.compile(r"\((?:\.{3}\s*)?continued(?:\s*\.{3})?\)", re.IGNORECASE)
#: The first line of a page's notes that continue the last footnote of the page before.
CONTINUED = "\ue003"


def _page_foot(lines: list[str], next_note: int, continuing: bool = False,
               spaced: bool = False) -> tuple[list[str], list[list[str]], int]:
    """Footnotes at a page's foot without a rule above them (the Tax Court, the Fifth Circuit, state
    courts): a line that starts with the label of the next footnote (its number, the one after it if
    one was missed, 1 for a new opinion's first, or a star), alone on its line after a blank line or
    before its text after two (or one, above a foot of notes: :func:`_labelled_foot`), whose mark
    the body above shows (:func:`_find_mark`); from there to
    the page's end are footnotes, a new one at each label that counts on. Each footnote's mark
    leaves the body (a number there is a mark only when its footnote is on that page).
    ``continuing``: the page before ended inside a footnote; its rest, unlabelled, is the page's
    foot after its last gap of two blank lines (:func:`_last_gap`). A note whose first line
    is :data:`CONTINUED` continues the page before's last one (also a Tax Court note's "10" /
    "(...continued)"). ``spaced``: the page is double spaced though its blank lines are gone (pleading
    paper without its line numbers, :func:`_drop_line_numbers`), so a label alone on its line, its
    text below, needs no blank line above it. (body, notes, next number)."""
    if continuing and not any(_CONTINUED.search(ln) for ln in lines) and (j := _last_gap(lines)) is not None:
        return _foot_notes(lines, j, next_note, [[CONTINUED]])
    if continuing and (j := _rest_before_label(lines, next_note)) is not None:
        return _foot_notes(lines, j, next_note, [[CONTINUED]])
    for i, ln in enumerate(lines):
        m = _FOOT_LABEL.match(ln)
        if not m or i < 2:
            continue
        label = m.group(1)
        if lines[i - 1].strip() and not (ln.strip() == label and i + 1 < len(lines) and lines[i + 1].strip()
                                         and (spaced or _double_spaced(lines[:i]))):
            continue  # no blank line above: only a label alone, its text below, under double-spaced body lines
        if ln.strip() != label and lines[i - 2].strip() and not _labelled_foot(lines, i, label):
            continue  # a label before its text: two blank lines above it, or one above a foot of notes
        after = next((x for x in lines[i + 1:] if x.strip()), "")
        continued = label == str(next_note - 1) and _CONTINUED.match(after.strip() if ln.strip() == label else
                                                                      ln.strip()[len(label):].strip()) is not None
        if continued:
            return _foot_notes(lines, i, next_note, [[CONTINUED]], skip=ln.strip() == label)
        if label.isdigit() and int(label) not in (next_note, next_note + 1, 1):
            continue
        if _find_mark(lines[:i], label) is None:
            continue
        return _foot_notes(lines, i, int(label) if label.isdigit() else next_note, [])
    return lines, [], next_note


def _labelled_foot(lines: list[str], i: int, label: str) -> bool:
    """Whether the page's lines from ``i`` (a label before its text after one blank line) are a foot
    of notes: at most 40 % of the page, each later run of lines after a blank one opening with the
    next label (DOHA's "2 Applicant's response to the SOR; ..." / "3 Tr. at 14-16, ..."), never a
    numbered paragraph of the body with more text after it."""
    if not label.isdigit() or len(lines) - i > 0.4 * len(lines):
        return False
    expect = int(label) + 1
    for k in range(i + 1, len(lines)):
        if lines[k].strip() and not lines[k - 1].strip():
            m = _FOOT_LABEL.match(lines[k])
            if m is None or m.group(1) != str(expect):
                return False
            expect += 1
    return True


def _rest_before_label(lines: list[str], next_note: int) -> int | None:
    """Where the rest of the page before's last footnote starts, on a page whose foot is that rest,
    after one blank line, and then the next footnote's label, indented as pdftotext sets a note's
    first line, its mark in the body above (a Washington Court of Appeals opinion: "... forum non
    conveniens”)." / "        7 In Coastal Steel Corp., ..."): the first line of the unbroken run of
    lines that ends with that label's line. None without one, or when the run is over 40 % of the
    page's lines."""
    for i, ln in enumerate(lines):
        m = _FOOT_LABEL.match(ln)
        if m is None or m.group(1) != str(next_note) or ln.strip() == m.group(1) or not lines[i - 1].strip():
            continue
        j = i
        while j > 0 and lines[j - 1].strip():
            j -= 1
        indent = len(ln) - len(ln.lstrip())
        if (j >= 3 and i - j >= 2 and len(lines) - j <= 0.4 * len(lines)
                and indent >= min(len(x) - len(x.lstrip()) for x in lines[j:i]) + 4
                and _find_mark(lines[:j], m.group(1)) is not None):
            return j
    return None


def _last_gap(lines: list[str]) -> int | None:
    """Where the text after a page's last gap of two or more blank lines starts, when that text is
    at most 40 % of the page's lines (a footnote's rest, not the page's body)."""
    for j in range(len(lines) - 1, 2, -1):
        if lines[j].strip() and not lines[j - 1].strip() and not lines[j - 2].strip():
            return j if len(lines) - j <= 0.4 * len(lines) and any(ln.strip() for ln in lines[:j]) else None
    return None


def _foot_notes(lines: list[str], i: int, n: int, notes: list[list[str]],
                skip: bool = False) -> tuple[list[str], list[list[str]], int]:
    """The page's body above line ``i`` (the marks of its notes removed) and the notes from there
    (``skip``: from the line after it): a new one at each label counting on from ``n`` (``notes``
    holds a continued note to go on)."""
    labels: list[str] = []
    for x in lines[i + skip:]:
        if not x.strip() or _CONTINUED.fullmatch(x.strip()):
            continue
        mm = _FOOT_LABEL.match(x)
        lab = mm.group(1) if mm else None
        if lab is not None and (lab == str(n) or not notes and not lab.isdigit()):
            notes.append([f"{lab} {x.strip()[len(lab):].strip()}"])
            labels.append(lab)
            n = n + 1 if lab.isdigit() else n
        elif notes:
            notes[-1].append(x.strip())
    return _without_marks(list(lines[:i]), labels), notes, n


def _without_marks(body: list[str], labels: list[str], glued_only: bool = False) -> list[str]:
    """A page's body lines without the marks of the notes ``labels`` (in their order, each found
    after the one before: :func:`_find_mark`); a spaced mark's space goes too."""
    at = (0, 0)
    for lab in labels:
        found = _find_mark(body, lab, at, glued_only)
        if found is None:
            continue
        row, a, b = found
        line = body[row]
        if line[a - 1:a] == " ":  # a spaced mark: its space goes too
            body[row] = line[:a].rstrip(" ") + (" " if line[b:b + 1] not in ("", " ") else "") + line[b:]
        else:
            body[row] = line[:a] + line[b:]
        at = (row, a)
    return body


def _double_spaced(lines: Sequence[str]) -> bool:
    """Whether body lines are double spaced: most lines are followed by one blank line and a
    line of text (pdftotext's layout of a double-spaced page)."""
    single = pairs = 0
    for i in range(len(lines) - 2):
        if not lines[i].strip() or lines[i] == "\f":
            continue
        if lines[i + 1].strip():
            pairs += 1
        elif lines[i + 2].strip() and lines[i + 2] != "\f":
            pairs += 1
            single += 1
    return pairs >= 6 and single >= 0.6 * pairs


#: A list item's or heading's head: "2. ", "B. ", "IV. ", "(3) ".
LIST_ITEM = re.compile(rf"^\s*(?:\d{{1,3}}\.|[A-Z]\.|[IVX]{{1,5}}\.|{PAREN_LABEL})\s+(?=\S)")


#: A paragraph number at a layout line's start, its text set apart by a gap ("¶1         Gift ...",
#: "{17}     The ...", "[¶17]    The ..."): the number stands in the margin.
_MARGIN_PARAGRAPH_MARK = re.compile(rf"^[ \t]*(?:{_PARAGRAPH_LABEL})[ \t]{{2,}}(?=\S)")


#: A page's left margin is an indent at least this many of its lines share (:func:`_paragraph_breaks`).
MARGIN_LINES = 3


def _paragraph_breaks(lines: list[str], spaced: bool = False) -> list[str]:
    """Body lines -> paragraphs: a blank line or an indented first line starts one, unless the text
    runs on (no closing punctuation, next line starts lower-case). In double-spaced text
    (:func:`_double_spaced`) one blank line is only the spacing: there a paragraph starts at an
    indented first line, after two blank lines, or after a short line that ends a sentence (a
    paragraph's last line, a heading). A line indented 12 or more (a centred heading) is a paragraph
    unless it continues a full line's sentence at the same indent (an indented list item). Rule
    chosen on the Tax Court's T.C. Memo. 2020-26 and the Fifth Circuit's No. 21-50498; see
    tests/sources/test_cleaning_modern.py for the courts it is checked on. ``spaced``: pleading paper
    without its line numbers (:func:`_drop_line_numbers`), double spaced with its spacing gone: each
    blank line left is a gap, and a short line that ends a sentence ends a paragraph there too
    (chosen on the E.D. Cal. orders, where a heading otherwise ran on from the paragraph above), a
    short line not ending a sentence (a heading) ends one before an indented line (so in double-spaced
    text when that line is the whole paragraph so far), an indented list
    item (:data:`LIST_ITEM`) after a sentence's end starts one, and a line under a full line that runs on
    continues it at any indent (a hanging indent)."""
    # a paragraph number set in the margin ("¶1         Gift Surplus, LLC, ... sued Governor" over
    # "     Roy Cooper and ...") stands apart: the line's indent is its text's, after the number
    text_at = {k: m.end() for k, ln in enumerate(lines) if (m := _MARGIN_PARAGRAPH_MARK.match(ln))}
    # each page's own left margin: pdftotext sets a page's text from its leftmost line, so the body
    # of one page may start at column 0, of the next at 7 (a page whose paragraph numbers jut out).
    # A page's margin is its smallest indent when at least :data:`MARGIN_LINES` of its lines share it;
    # else (a title over a table's rows, a list under one line) the text's smallest indent.
    indents = {k: text_at.get(k, len(ln) - len(ln.lstrip())) for k, ln in enumerate(lines) if ln.strip() and ln != "\f"}
    least = min(indents.values(), default=0)
    margins = [least] * len(lines)  # margins[k]: the left margin of line k's page
    start = 0  # a page's lines run from the form feed before it (or the text's start) to the next one
    for end in [k for k, ln in enumerate(lines) if ln == "\f"] + [len(lines)]:
        counts = Counter(indents[j] for j in range(start, end) if j in indents)
        low = min(counts, default=least)
        margins[start:end] = [low if sum(counts[low + d] for d in (0, 1)) >= MARGIN_LINES else least] * (end - start)
        start = end
    double = _double_spaced(lines)
    widths = sorted(len(ln.rstrip()) for ln in lines if ln.strip() and ln != "\f")
    full = widths[int(0.9 * (len(widths) - 1))] if widths else 0
    paras: list[list[str]] = [[]]
    prev_indent = 0
    prev_short = False
    blank = 0
    page_top = False  # the line is a page's first
    for k, ln in enumerate(lines):
        if ln == "\f":  # a page break: the next page's first line starts a paragraph if indented
            prev_indent = 0
            blank = 0
            page_top = True
            continue
        if not ln.strip():
            blank += 1
            continue
        indent = text_at.get(k, len(ln) - len(ln.lstrip())) - margins[k]
        cur = paras[-1]
        ends = bool(cur) and re.search(r"[.:;?!”\"’)\]]\s*$", cur[-1]) is not None
        runs_on = bool(cur) and not ends and (ln.lstrip()[:1].islower()
                                              or ends_open(cur[-1]) and not LIST_ITEM.match(ln))
        gap = blank >= 2 or (prev_short and ends) if double else blank > 0
        if double and prev_short and not ends and indent >= 2 and len(cur) == 1:
            gap = True  # a heading's one short line ("B.   Application to the Many Loan"), a paragraph under it
        if spaced:  # a short line ends a sentence or heads an indented paragraph; an item follows an item
            gap = gap or prev_short and (ends or indent >= 2) or (ends and LIST_ITEM.match(ln) is not None
                                                                  and (indent >= 2 or len(ln.rstrip()) < 0.75 * full))
        deep = (indent >= 12 or prev_indent >= 12) and not ((indent == prev_indent or spaced) and cur and not ends
                                                             and not prev_short)
        # a label at a page's head after a sentence's end: a heading's or a list item's ("B. Original
        # Contributions of Major Significance"), its gap above lost in the page break
        top_item = page_top and ends and LIST_ITEM.match(ln) is not None
        starts = (gap or (indent >= 2 and prev_indent < 2) or deep or top_item) and not runs_on
        if starts and cur:
            paras.append([])
        paras[-1].append(ln.strip())
        prev_indent = indent
        prev_short = len(ln.rstrip()) < 0.75 * full
        blank = 0
        page_top = False
    return ["\n".join(p) for p in paras if p]


_LOWER_WORD = re.compile(r"[a-z][a-z'’-]*[,.;:]?$")  # a cell that is one word of running text
_CELL = re.compile(r"\S+(?: {1,2}\S+)*")


def _cells(line: str) -> list[tuple[int, str]]:
    """A layout line's cells: its runs of text split at gaps of three or more spaces, with their columns."""
    return [(m.start(), m.group()) for m in _CELL.finditer(line)]


def _is_row(cells: list[tuple[int, str]]) -> bool:
    # three or more cells; a caption's ")" column is head matter, not a table
    return len(cells) >= 3 and not any(c in (")", "§") for _, c in cells)


def drop_tables(lines: list[str], min_rows: int = MIN_TABLE_ROWS) -> list[str]:
    """Page lines without their tables (a certificate of service's list of recipients, a schedule of
    cases): a block of at least ``min_rows`` lines of three or more cells (text runs apart by three or
    more spaces), where one column other than the first starts at the same place (within one
    character) in at least ``min_rows`` of them. Lines between the rows that only hold text starting
    at one of those columns (a cell's second line) and single blank lines go with the table. Widely
    justified prose (over a quarter of the cells after a row's first being one lower-case word) is
    no table. A table is no sentence: it is dropped from the text (docs/data-format.md). Rule by layout, chosen on the
    Tennessee appeals board's certificate of service (tests/sources/test_tables.py)."""
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        cells = _cells(lines[i]) if lines[i] != "\f" else []
        if not _is_row(cells):
            out.append(lines[i])
            i += 1
            continue
        starts = {c for c, _ in cells}
        rows = [cells]
        j = i + 1
        end = i + 1
        while j < n and lines[j] != "\f":
            cur = _cells(lines[j])
            if not cur:
                if j + 1 < n and _is_row(_cells(lines[j + 1])):
                    j += 1
                    continue
                break
            if _is_row(cur):
                rows.append(cur)
                starts |= {c for c, _ in cur}
            elif not all(any(abs(c - s) <= 1 for s in starts) for c, _ in cur) or len(rows) < 1:
                break
            j += 1
            end = j
        first = min(c for r in rows for c, _ in r)
        shared = [s for s in starts if s > first + 1
                  and sum(any(abs(c - s) <= 1 for c, _ in r) for r in rows) >= min_rows]
        words = [c for r in rows for _, c in r[1:]]
        prose = sum(bool(_LOWER_WORD.match(c)) for c in words) > 0.25 * len(words)  # justified text
        if len(rows) >= min_rows and shared and not prose:
            i = end
            continue
        out.append(lines[i])
        i += 1
    return out


def _join_lines(text: str, fix: Dehyphenator) -> str:
    return " ".join(dehyphenate(text, fix).split())


#: A line's leading number (pleading paper's line number, at whatever indent: a margin's sideways
#: court name may push it to column 74) and a number that ends a line (where pdftotext sets the
#: number column after the text).
_LEADING_NUMBER = re.compile(r"^\s*(\d{1,2})(?=\s|$)")
_TRAILING_NUMBER = re.compile(r"(?:^|(?<=\s))(\d{1,2})\s*$")
#: Pleading paper numbers its lines 1, 2, 3, ... to at least this many on a page (28 in California).
MIN_PLEADING_LINES = 20
#: Text beyond the number column is the paper's margin only while under this share of the page's text.
MARGIN_SHARE = 0.25


def _number_run(page: list[str], pattern: re.Pattern) -> list[tuple[int, re.Match]]:
    """The longest run of lines whose number (``pattern``'s group 1) counts 1, 2, 3, ... down the
    page in one column (the numbers' right ends within one character: right-aligned)."""
    found = [(i, m) for i, ln in enumerate(page) if (m := pattern.search(ln))]
    best: list[tuple[int, re.Match]] = []
    for column in {m.end(1) for _, m in found}:
        run: list[tuple[int, re.Match]] = []
        for i, m in found:
            if abs(m.end(1) - column) <= 1 and int(m.group(1)) == len(run) + 1:
                run.append((i, m))
        if len(run) > len(best):
            best = run
    return best


def _drop_line_numbers(page: list[str]) -> list[str]:
    """A page of pleading paper without its line numbers. Its numbers are found by their structure,
    not their indent: a run of lines whose first token (or, as pdftotext may set them, last token)
    counts 1, 2, 3, ... down the page in one column, to at least :data:`MIN_PLEADING_LINES`. Those
    lines lose the number (blanked, so the text keeps its columns and indents); text on the far
    side of the number column from the body (a margin's court name, "United States District
    Court", set sideways) goes; a numbered line left empty between two numbered lines of text is
    a blank line of the paper (a gap: a paragraph's end, the space above a footnote), and every
    other blank line goes (the paper's fixed spacing: its paragraphs start at an indent). Other
    pages are returned as they are. Rule chosen on the C.D. Cal. order (rules half) and made
    structural on the N.D. Cal. order of the text-quality set."""
    lead = _number_run(page, _LEADING_NUMBER)
    trail = _number_run(page, _TRAILING_NUMBER)
    leading = len(lead) >= len(trail)
    run = lead if leading else trail
    if len(run) < MIN_PLEADING_LINES:
        return page
    out = list(page)
    for i, m in run:
        out[i] = page[i][:m.start(1)] + " " * len(m.group(1)) + page[i][m.end(1):]
    numbered = {i for i, _ in run}
    if leading:  # the margin left of the numbers: lines that end before the number column starts
        column = min(m.start(1) for _, m in run)
        margin = {i for i, ln in enumerate(page) if i not in numbered and ln.strip() and len(ln.rstrip()) <= column}
    else:  # the margin right of them: lines that start after the number column ends
        column = max(m.end(1) for _, m in run)
        margin = {i for i, ln in enumerate(page) if i not in numbered and ln.strip()
                  and len(ln) - len(ln.lstrip()) >= column}
    if sum(len(page[i].strip()) for i in margin) >= MARGIN_SHARE * sum(len(ln.strip()) for ln in out):
        margin = set()  # most of the text is there: the body, not a margin (numbers at the paper's other edge)
    text = [i for i, ln in enumerate(out) if ln.strip() and i not in margin]
    kept: list[str] = []
    for i, ln in enumerate(out):
        if i in margin:
            continue
        if ln.strip():
            kept.append(ln)
            continue
        if i not in numbered:
            continue  # pdftotext's spacing between the paper's lines
        before = next((j for j in reversed(text) if j < i), None)
        after = next((j for j in text if j > i), None)
        if before in numbered and after in numbered and kept and kept[-1].strip():
            kept.append("")  # the paper's line left empty between two lines of text: a gap
    return kept


def pdf_paragraphs(text: str, extra_words: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Paragraphs and footnotes of PDF-born text (see the module's docstring)."""
    text = text.translate(_SUPERSCRIPTS)
    printed = _pages(text)
    pages = [_drop_line_numbers(page) for page in printed]
    # pleading paper (its line numbers gone: a page returned anew) is double spaced without blank lines
    pleading = [page is not raw for page, raw in zip(pages, printed, strict=True)]
    edges = [_edge_lines(page) for page in pages]
    tops: Counter = Counter()
    for page, (top, bottom) in zip(pages, edges, strict=True):
        for h in {_norm_header(page[i]) for i in top + bottom}:
            tops[h] += 1
    need = 3
    repeated = {h for h, c in tops.items() if c >= need and len(h) < 100}
    body: list[str] = []
    notes: list[list[str]] = []
    next_note = 1
    noted = False  # whether the page before ended with footnotes found at its foot
    labels = page_labels([_printed_number(page, repeated, edge) for page, edge in zip(pages, edges, strict=True)])
    # a text split into pages (by form feeds, or page numbers) has its pages labelled, one page too
    paged = len(pages) > 1 or "\f" in text
    firsts: dict[int, str] = {}  # the index of each page's first text line among the body's -> its label
    text_lines = 0
    # a page set in two columns is read as two pages of one label: the left column, then the right,
    # each with its footnotes at its foot
    units = []
    gutter = None  # the gutter of the page before, set in two columns
    for page, label, edge, spaced in zip(pages, labels, edges, pleading, strict=True):
        columns = text_columns(page, gutter)
        gutter = columns[2] if columns else None
        units.extend([(column, label, _edge_lines(column), spaced) for column in columns[:2]] if columns
                     else [(page, label, edge, spaced)])
    for page, label, edge, spaced in units:
        marker = page_marker(label) if paged else ""  # a footnote's page, and the body's
        carried = True  # the page's first note line may go on with the page before's last note
        lines, note_lines = _strip_page(page, repeated, edge,
                                        bool(notes) and _RUNS_ON.search(notes[-1][-1]) is not None)
        while lines and not lines[-1].strip():
            lines.pop()
        if not note_lines and paged:  # footnotes at a page's foot without a rule above them (one page too)
            unfinished = bool(notes) and noted and _RUNS_ON.search(notes[-1][-1]) is not None
            lines, foot, next_note = _page_foot(lines, next_note, unfinished, spaced)
            noted = bool(foot)
            if foot and foot[0][0] == CONTINUED:
                if notes and foot[0][1:]:
                    notes[-1].extend([marker + foot[0][1]] + foot[0][2:])
                foot = foot[1:]
            notes.extend([marker + n[0]] + n[1:] for n in foot if n)
            while lines and not lines[-1].strip():
                lines.pop()
        lines = drop_tables(lines)
        while lines and not lines[0].strip():
            lines.pop(0)
        if body and lines:  # a page break is not a paragraph break unless the text says so
            body.append("\f")
        if marker and any(ln.strip() for ln in lines):
            firsts[text_lines] = label
        text_lines += sum(1 for ln in lines if ln.strip())
        page_start = len(body)
        body.extend(lines)
        ruled: list[str] = []  # the labels of the notes under this page's rule: their marks leave its body
        indented = any(ln[:1] in " \t" for ln in note_lines if ln.strip())
        for ln in note_lines:
            if not ln.strip():
                continue
            glued = _GLUED_NOTE_LINE.match(ln)
            if glued and int(glued.group(1)) == next_note and (ln[:1] in " \t" or not indented):
                ln = ln[:glued.end(1)] + " " + ln[glued.end(1):]  # "26Except, ...": glued to an italic word
            m = _NOTE_LINE.match(ln)
            if m and indented and ln[:1] not in " \t":
                m = None  # pdftotext -layout indents a footnote's first line, not its continuation
            if m and indented and m.group(1).isdigit() and int(m.group(1)) == next_note + 1:
                next_note += 1  # one label lost (read as its note's text): the notes go on from the next
            if not notes or (m and (not m.group(1).isdigit() or int(m.group(1)) in (next_note, 1))):  # 1: next opinion
                notes.append([marker + ln.strip()])
                if m and m.group(1).isdigit():
                    next_note = int(m.group(1)) + 1
                    ruled.append(m.group(1))
            else:
                notes[-1].append(marker + ln.strip() if carried else ln.strip())
            carried = False
        if ruled:
            body[page_start:] = _without_marks(body[page_start:], ruled, glued_only=True)
    fix = Dehyphenator(text, extra_words)
    breaks = _paragraph_breaks(body, spaced=sum(pleading) * 2 > len(pleading))
    paras = [_join_lines(p, fix) for p in (_mark_pages(breaks, firsts) if firsts else breaks)]
    note_texts = [_join_lines(SPLIT_MARKER.sub(r"\2\1\n", "\n".join(n)), fix) for n in notes]
    return [p for p in paras if p], [n for n in note_texts if n]


#: A page is set in two columns (:func:`two_columns`) when each side of its gutter holds at least
#: this many lines, ...
COLUMN_MIN_LINES = 8
#: ... at most this share of its lines cross the gutter (a running head; a single column's lines all do),
COLUMN_ACROSS = 0.1
#: ... at least this share of each side's lines reach the side's edge, as a column's lines do (a
#: table's cells, a calendar's "9:00" and "v.", a caption's ")" cells do not) ...
COLUMN_FILL = 0.65
#: ... and at least this share of the left side's lines start at its margin (a calendar's time,
#: number and "v." do not).
COLUMN_MARGIN = 0.7
#: A line reaches its side's edge (starts at its margin) when it ends (starts) within this share of
#: the side's width of it: the edge is its 75th-percentile end, the margin its leftmost start.
COLUMN_NEAR = 0.15

#: A line's (start, end) on its side of a page: points for a PDF, characters for a laid-out text
#: (the right side's measured from the gutter).
Span = tuple[float, float]


def two_columns(left: Sequence[Span], right: Sequence[Span], across: int) -> bool:
    """Whether lines on each side of a gutter make two columns (an NLRB decision), from each side's
    lines' spans and how many lines cross the gutter: the one test of the PDF reader and of the text
    reader (each finds the gutter its own way). Enough lines on each side
    (:data:`COLUMN_MIN_LINES`), few across (:data:`COLUMN_ACROSS`), each side's lines filling it
    (:data:`COLUMN_FILL`) and the left side's starting at one margin (:data:`COLUMN_MARGIN`).

    The values were chosen on the NLRB decision (tests/fixtures/genuine/pdf-agency, all three
    pages, as a PDF and as ``pdftotext -layout`` text) and on the pages of the eighth
    text-quality set's 120 opinions (PDF and text routes) and of 64 PDFs that must stay one
    column (calendars, schedules of cases, Washington's ")" captions, tables, signature blocks):
    every page is decided as by the two readers' former tests (0.15 and 0.1 across; half the left
    side's lines within 10 % of its widest line, or 85 % of its 75th-percentile line and 0.7 of
    the right side's; 0.7 of the left side's lines within 4 characters of its margin; three
    lines a side of 30 % of the page's width), the right column's shift alike."""
    if min(len(left), len(right)) < COLUMN_MIN_LINES or across > COLUMN_ACROSS * (len(left) + len(right) + across):
        return False
    if any(len(_full_lines(side)) < COLUMN_FILL * len(side) for side in (left, right)):
        return False
    margin, edge = _margin_edge(left)
    return sum(start <= margin + COLUMN_NEAR * (edge - margin) for start, _ in left) >= COLUMN_MARGIN * len(left)


def column_start(side: Sequence[Span]) -> float:
    """Where a column's text starts: the left end of its lines that reach its edge (a paragraph's
    indented first line, a heading set in from the margin, do not count)."""
    return min(start for start, _ in _full_lines(side))


def _margin_edge(side: Sequence[Span]) -> tuple[float, float]:
    """A side's margin (where its first-starting line starts) and edge (its 75th-percentile end)."""
    ends = sorted(end for _, end in side)
    return min(start for start, _ in side), ends[int(0.75 * (len(ends) - 1))]


def _full_lines(side: Sequence[Span]) -> list[Span]:
    """The lines of a side that reach its edge (within :data:`COLUMN_NEAR` of its width)."""
    margin, edge = _margin_edge(side)
    return [span for span in side if span[1] >= edge - COLUMN_NEAR * (edge - margin)]


#: A PDF-born text's page is set in two columns when at least this share of its lines have text
#: starting at one position after a gap of two spaces or more (the gutter), and the sides make two
#: columns (:func:`two_columns`).
COLUMN_START_SHARE = 0.4
_GAP_THEN_TEXT = re.compile(r" {2,}(?=\S)")


def text_columns(page: list[str], after: int | None = None) -> tuple[list[str], list[str], int] | None:
    """The left and right columns of a PDF-born text's page set in two columns (``pdftotext
    -layout`` sets them side by side: an NLRB decision) and the gutter's position, or None. The right
    column keeps its indents (a paragraph's first line) measured from the gutter. ``after``: the
    gutter of the page before, set in two columns: a page whose lines leave a gap near it (but for
    :data:`COLUMN_ACROSS` of them: a running head), a quarter of them with text on both sides,
    is set in two columns too (a decision's last page, its right column a signature block)."""
    lines = [ln for ln in page if ln.strip()]
    if len(lines) < 8:
        return None
    gutter = _gutter(lines) if len(lines) >= 16 else None
    if gutter is None and after is not None:
        both = [g for g in range(after + 2, after - 12, -1)
                if sum(bool(ln[g - 1:g + 1].strip()) for ln in lines) <= COLUMN_ACROSS * len(lines)
                and sum(bool(ln[:g].strip() and ln[g:].strip()) for ln in lines) >= 0.25 * len(lines)]
        return _split_columns(page, both[0]) if both else None
    if gutter is None:
        return None
    split = _split_columns(page, gutter)
    left, right, _ = split
    if not two_columns(_spans(left), _spans(right), sum(_crosses(ln, gutter) for ln in lines)):
        return None  # a table's cells, a caption's ")" column, a schedule of cases, a calendar
    return split


def _spans(lines: list[str]) -> list[Span]:
    """The (start, end) character columns of a column's lines that hold text."""
    return [(len(ln) - len(ln.lstrip()), len(ln)) for ln in lines if ln.strip()]


def _gutter(lines: list[str]) -> int | None:
    """Where the right column's lines start, when at least :data:`COLUMN_START_SHARE` of a page's
    lines have text there after a gap of two spaces or more and few cross it (:data:`COLUMN_ACROSS`)."""
    width = max(len(ln.rstrip()) for ln in lines)
    starts = Counter(m.end() for ln in lines for m in _GAP_THEN_TEXT.finditer(ln) if m.end() > 0.3 * width)
    if not starts:
        return None
    gutter = starts.most_common(1)[0][0]
    if sum(starts[gutter + d] for d in (-1, 0, 1)) < COLUMN_START_SHARE * len(lines):
        return None
    if sum(_crosses(ln, gutter) for ln in lines) > COLUMN_ACROSS * len(lines):
        return None
    return gutter


def _crosses(line: str, gutter: int) -> bool:
    """Whether a line's text runs across the gutter (a word on both sides of it: a running head)."""
    return len(line) > gutter and line[gutter - 1] != " " and line[gutter] != " "


def _split_columns(page: list[str], gutter: int) -> tuple[list[str], list[str], int]:
    """A page's lines cut at ``gutter`` into its left and right columns (each line in both, blank where
    it has no text: the blank lines are the cues of paragraphs and notes); a line across both (a
    running head) stays whole in the left one."""
    left = [ln.rstrip() if _crosses(ln, gutter) else ln[:gutter].rstrip() for ln in page]
    right = [ln[gutter:].rstrip() if len(ln) > gutter and not _crosses(ln, gutter) else "" for ln in page]
    return left, right, gutter


_TEXT_RULE = re.compile(r"^\s*[-—–_=~]{5,}\s*$")  # a separator line ("---------"): no text
_RUNS_ON = re.compile(r"[^.:;?!”\"’)\]]\s*$")


def drop_page_number_lines(text: str) -> str:
    """A plain text whose page breaks were kept as lines holding only the page number (web copies
    of PDF-born opinions: "...in the voting booth, to\\n\\n4\\n\\nballots or ...") without those
    lines: taken as page numbers when there are at least three and they count up (a step of 1 or
    2). A sentence the page break cut ("booth, to" / "ballots or") is joined again."""
    lines = text.split("\n")
    found = [i for i, ln in enumerate(lines) if _PAGE_NUMBER.match(ln)]
    numbers = [int(re.sub(r"\D", "", lines[i])) for i in found]
    if len(found) < 3 or any(not 0 < b - a <= 2 for a, b in zip(numbers, numbers[1:], strict=False)):
        return text
    drop = set(found)
    for i in found:  # blank lines around a page number inside a sentence go too
        before = next((j for j in range(i - 1, -1, -1) if lines[j].strip() and j not in drop), None)
        after = next((j for j in range(i + 1, len(lines)) if lines[j].strip() and j not in drop), None)
        if (before is not None and after is not None and _RUNS_ON.search(lines[before])
                and lines[after].lstrip()[:1].islower()):
            drop.update(range(before + 1, after))
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop)


def plain_paragraphs(text: str) -> tuple[list[str], list[str]]:
    """Paragraphs (and footnotes, if PDF-born) of a plain text: blank lines separate paragraphs;
    when there are none, lines are paragraphs. PDF-born text is repaired (:func:`pdf_paragraphs`);
    other text loses its page-number lines (:func:`drop_page_number_lines`)."""
    paras, notes, _ = _plain_paragraphs(text)
    return paras, notes


def _plain_paragraphs(text: str) -> tuple[list[str], list[str], bool]:
    """:func:`plain_paragraphs`, and whether the text is PDF-born."""
    text = normal_form(text.replace("\r\n", "\n"))
    if is_pdf_text(text):
        return (*pdf_paragraphs(text), True)
    if not _marks_of_notes(text):  # CAP's "12" mark lines count up too: not page numbers
        text = drop_page_number_lines(text)
    parts = [p for p in re.split(r"\n[ \t\r\f\v]*\n", text) if p.strip() and not _TEXT_RULE.match(p)]
    if len(parts) <= 1:
        parts = [ln for ln in text.split("\n") if ln.strip()]
    fix: Dehyphenator | None = None
    out = []
    for p in parts:
        if "- " in p or "-\n" in p:
            fix = fix or Dehyphenator(text)
            p = dehyphenate(p, fix)
        out.append(" ".join(p.split()))
    return out, [], False


def clean_plain(text: str, *, kind: str = "majority", author: str | None = None,
                head: list[str] | None = None) -> OpinionRecord:
    """Plain text (a ``.txt`` file, CourtListener's ``plain_text``) -> the cleaned opinion. With
    ``head`` given, the head matter of PDF-born text (:func:`split_head`: its caption, an order's
    title) goes there, not into the opinion, as the PDF reader does; the opinion's author comes
    from its author's line when ``author`` is None."""
    paras, notes, pdf_born = _plain_paragraphs(text)
    if head is not None and pdf_born:
        paras, author = _take_head(paras, head, author)
    return clean_opinion(paras, notes, kind=kind, author=author)


def _take_head(paras: list[str], head: list[str], author: str | None) -> tuple[list[str], str | None]:
    """The opinion's paragraphs without their head and closing matter (:func:`split_matter`), added to ``head``."""
    front, body, who = split_matter(paras)
    head.extend(front)
    return body, author or who


# --- head matter -------------------------------------------------------------------------------

#: A judge's name in capitals (a group): "MADSEN", "MONTOYA-LEWIS", "GONZÁLEZ", "GORDON McCLOUD".
CAPITALS_NAME = r"([A-ZÀ-Þ][A-Za-zÀ-ÿ'’\-]*[A-ZÀ-Þ](?:\s[A-ZÀ-Þ][A-Za-zÀ-ÿ'’\-]*[A-ZÀ-Þ])?)"
#: A state court justice's title after the name: ", J.", ", C.J.", ", A.C.J.".
JUSTICE_TITLE = r",\s*(?:[A-Z]\.\s?)*J\."
#: A state court's author line opening the opinion's first paragraph, a dash after the justice's
#: title: "MADSEN, J.—In 2022, ...", "SMITH, J. — ...", "GORDON McCLOUD, C.J.—" (the name is group 1).
INLINE_AUTHOR = re.compile(CAPITALS_NAME + JUSTICE_TITLE + r"\s?[—–]\s*")


def author_name(name: str) -> str:
    """A judge's name from an author line in capitals, as the court writes it in text: "GONZÁLEZ"
    -> "González", "MONTOYA-LEWIS" -> "Montoya-Lewis", "GORDON McCLOUD" -> "Gordon McCloud" (a
    prefix in small letters kept)."""
    def word(w: str) -> str:
        lower = max((k for k, c in enumerate(w) if c.islower()), default=-1)
        return w[:lower + 1] + w[lower + 1:].title() if lower >= 0 else w.title()
    return " ".join(word(w) for w in name.split())


#: Where an opinion starts after its caption, syllabus and counsel: its author's line
#: ("SELYA, Circuit Judge.", "GUSTAFSON, Judge:", "HUDSON, Justice.", "JUSTICE SOTOMAYOR delivered
#: the opinion of the Court."), or a heading that opens it ("OPINION", "Introduction").
_AUTHOR = re.compile(r"^(?:(?:Chief\s+)?JUSTICE\s+([A-Z][A-Za-z'’\-]+)\s+delivered\b"
                     r"|([A-Z][A-Z'’\-]+(?:\s[A-Z][A-Z'’\-]+)?),\s+(?:Chief\s+|Senior\s+)?"
                     r"(?:(?:U\.\s?S\.|United\s+States)\s+)?"  # "BECKERMAN, U.S. Magistrate Judge."
                     r"(?:Circuit\s+|District\s+|Magistrate\s+|Special\s+Trial\s+)?(?:Judge|Justice)\b[.:]"
                     r"(?!.{0,40}\b(?:concurring|dissenting))"
                     r"|([A-Z][A-Z'’\-]+),\s+(?:CHIEF\s+|SENIOR\s+)?(?:(?:U\.\s?S\.|UNITED\s+STATES)\s+)?"
                     r"(?:CIRCUIT\s+|DISTRICT\s+|MAGISTRATE\s+)?"
                     r"(?:JUDGE|JUSTICE)[.:]?$"  # "MARTINOTTI, DISTRICT JUDGE", a line of its own
                     rf"|{INLINE_AUTHOR.pattern})")  # "MADSEN, J.—In 2022, ...": the opinion's first words follow
_OPENING = re.compile(r"^(?:Opinion|Memorandum Opinion|Opinion and Order|Memorandum Opinion and Order|Introduction)$",
                      re.IGNORECASE)
_PER_CURIAM = re.compile(r"(?:^|[.:]\s)(?:PER CURIAM|Per Curiam)[.:]?$")
#: An order's title, in capitals ("ORDER GRANTING ... PRELIMINARY INJUNCTION", "MEMORANDUM AND
#: ORDER", "EXPEDITED HEARING ORDER"): the caption above it is head matter, the order follows it.
_ORDER_TITLE = re.compile(r"\bORDER\b(?!.*:$)")


def _capitals(text: str) -> float:
    """The share of a text's letters that are capitals (1 without letters)."""
    letters = [c for c in text if c.isalpha()]
    return sum(c.isupper() for c in letters) / len(letters) if letters else 1.0


_SPACED_LETTERS = re.compile(r"\b[A-Z](?: [A-Z]){3,}\b")


def _order_title(text: str) -> bool:
    """An order's title: "ORDER" in a line nine tenths of whose letters are capitals (its letters
    perhaps spaced out: "O R D E R")."""
    text = _SPACED_LETTERS.sub(lambda m: m.group().replace(" ", ""), text)
    return bool(_ORDER_TITLE.search(text)) and _capitals(text) >= 0.9


#: A caption set in two columns and read line by line (``pdftotext -layout``): the title's cell
#: ends a line of the parties' column -- "Plaintiff, ORDER GRANTING", "STEVE JOHNSON, et al., :
#: OPINION" -- and the title's run of capital words ends the paragraph.
_COLUMN_TITLE = re.compile(r"(?:^|\s)(?:(?:[A-Z]{2,}\s+)*ORDER(?:\s+[A-Z]{2,})+|(?:[A-Z]{2,}\s+)+ORDER"
                           r"|(?<=[:)]\s)(?:MEMORANDUM\s+)?OPINION(?:\s+AND\s+ORDER)?|(?<=,\s)ORDER)$")
#: A party's role in a caption's cell ("Plaintiff,", "Defendants. :").
_CAPTION_ROLE = re.compile(r"\b(?:Plaintiffs?|Defendants?|Appellants?|Appellees?|Petitioners?|Respondents?)\b[,.;:]*")


def _caption_cell(text: str) -> bool:
    """A short paragraph of a two-column caption: mostly capitals (the parties' names, the title's
    words), a party's role, or a line ending at the caption's ":" or ")" column."""
    return len(text) < 120 and (_capitals(text) >= 0.5 or bool(_CAPTION_ROLE.search(text))
                                or text.rstrip().endswith((" :", " )")))


def _paragraph_one(text: str) -> bool:
    """Whether a paragraph opens with the mark of paragraph 1 ("¶ 1 ...", "{1} ...", "[¶1] ...",
    :data:`_PARAGRAPH_MARK`): an opinion that numbers its paragraphs starts there (the Colorado
    Court of Appeals' cover page, caption, panel and counsel, stands before it)."""
    m = _PARAGRAPH_MARK.match(text)
    return m is not None and next(g for g in m.groups() if g) == "1"


#: The panel line's author: "Opinion by JUDGE PAWAR" (a cover page's).
_OPINION_BY = re.compile(r"\bOpinion\s+by\s+(?:CHIEF\s+)?(?:JUDGE|JUSTICE)\s+([A-Z][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*)")


def _head_start(paragraphs: list[str], i: int, text: str) -> tuple[int | None, re.Match | None]:
    """Where the opinion starts if its head matter ends at paragraph ``i`` (None: not there)."""
    author = _AUTHOR.match(text)
    if author or _OPENING.match(text):
        return i, author
    if i > 0 and _paragraph_one(text):
        by = next((m for p in paragraphs[:i] if (m := _OPINION_BY.search(strip_markers(p)))), None)
        return i, by
    if (_PER_CURIAM.search(text) or _order_title(text)) and len(text) < 200:
        j = i + 1  # a second title under the first ("ORDER GRANTING ..." / "ORDER SEALING ...") is head too
        while j < len(paragraphs) and _order_title(title := strip_markers(paragraphs[j])) and len(title) < 200:
            j += 1
        return j, None
    if len(text) < 200 and _COLUMN_TITLE.search(text):  # the rest of the caption's lines go with it
        j = i + 1
        while j < len(paragraphs) and _caption_cell(cell := strip_markers(paragraphs[j])):
            if author := _AUTHOR.match(cell):  # "MARTINOTTI, DISTRICT JUDGE" under the caption opens the opinion
                return j, author
            j += 1
        return j, None
    return None, None


#: A head paragraph repeated later is the caption again (a certificate of service's page) when it
#: is at least this long: short lines ("Plaintiff,", "v.") may be the text's own.
MIN_REPEATED_HEAD = 20


def _without_repeated_caption(body: list[str], head: list[str]) -> list[str]:
    """The body without the paragraphs that repeat one of the head matter's (its caption set again
    over a certificate of service: "TENNESSEE BUREAU OF WORKERS' COMPENSATION", "Ruben Diaz )
    Docket No. ..."); a page label such a paragraph held goes on to the next one."""
    repeated = {h for h in head if len(h) >= MIN_REPEATED_HEAD and len(h) < 200}
    if not repeated:
        return body
    out = []
    for raw in body:
        if strip_markers(raw) in repeated:
            labels = "".join(page_marker(label) for label in _MARKER.findall(raw))
            if labels:
                out.append(labels)
        else:
            out.append(raw)
    return out


#: The gutter of a caption set in a ")" or "]" column, read into one paragraph ("FEDEX GROUND PACKAGE
#: SYSTEM, ] States District Court for INC. EMPLOYMENT PRACTICES ] the Northern District ...").
_COLUMN_GUTTER = re.compile(r"\s[)\]]\s")
#: Caption and closing lines are short: at most this many characters and words.
CAPTION_LINE_CHARS = 120
CAPTION_LINE_WORDS = 12
#: At most this many closing lines (a signature block) follow an order's last sentence.
MAX_CLOSING_LINES = 6
_DOCKET_LINE = re.compile(r"\b(?:Docket|Case|Appeal)?\s*Nos?\.\s*[A-Z]{0,3}\s?\d", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.?!;][\"”’')\]]*$")
_WRAPPED_END = re.compile(r"[.?!:][\"”’')\]]*\d{0,3}$")
_SENTENCE_BREAK = re.compile(r"(?<=[a-z\d)\]])[.?!][\"”’')\]]*\s+(?=[A-Z])")


def _short(text: str) -> bool:
    return 0 < len(text) <= CAPTION_LINE_CHARS and len(text.split()) <= CAPTION_LINE_WORDS


def _caption_line(text: str) -> bool:
    """A line of a caption: short, and a party's role, a docket number, a "v." or a column of a
    caption's table ("]", ")") in it, or no sentence's end (a party's name, "Argentine Republic,")."""
    if not _short(text):
        return False
    last = text.split()[-1]
    if last.endswith(".") and (len(last) <= 5 or "." in last[:-1]):
        text = text[:-1]  # a party's name ends with an abbreviation ("et al.", "Inc.", "L.P."), not a sentence
    return bool(_CAPTION_ROLE.search(text) or _DOCKET_LINE.search(text) or _VERSUS_WITHIN.search(text)
                or re.search(r"(?:^|\s)[\])](?:\s|$)", text) or not _SENTENCE_END.search(text))


def _leading_caption(body: list[str]) -> int:
    """How many of the opinion's first paragraphs are the rest of its caption (a second caption of
    consolidated appeals under the order's title): a run of caption lines before the first sentence,
    holding a party's role or a docket number."""
    n = 0
    while n < len(body) and n < 40 and _caption_line(strip_markers(body[n]).strip()):
        n += 1
    run = [strip_markers(p) for p in body[:n]]
    if n == len(body) or not any(_CAPTION_ROLE.search(t) or _DOCKET_LINE.search(t) for t in run):
        return 0
    return n


def _closing_line(text: str) -> bool:
    """A line of an order's closing: short, no sentence's end, opening with a capital, a digit or
    "/s/", and not ending with a word in lower case (a sentence cut short): "For the Court:",
    "Entered for the Court", "CHRISTOPHER M. WOLPERT, Clerk", "Dated: 8/23/05", "/s/ Jane Roe"."""
    if not _short(text) or _SENTENCE_END.search(text):
        return False
    last = text.split()[-1].strip("\"”’')],:")
    return bool(re.match(r"^(?:[A-Z0-9(]|/s/)", text)) and not last[:1].islower()


def split_closing(body: list[str]) -> tuple[list[str], list[str]]:
    """(opinion, closing matter): the closing lines (:func:`_closing_line`: a signature, a clerk's
    name and title, "Dated: ...") after the opinion's last sentence, at most
    :data:`MAX_CLOSING_LINES` of them, leave the opinion."""
    n = 0
    while n < min(MAX_CLOSING_LINES, len(body) - 1) and _closing_line(strip_markers(body[-1 - n]).strip()):
        n += 1
    if not body or n == len(body):
        return body, []
    last = body[-1 - n]
    if not _WRAPPED_END.search(strip_markers(last).strip()):
        # the closing's first line run into the last sentence's paragraph ("... no bond is required.
        # IT IS SO ORDERED Dated: August 5, 2016"): split off after the paragraph's last sentence
        ends = list(_SENTENCE_BREAK.finditer(last))
        tail = last[ends[-1].end():] if ends else ""
        if not tail or PAGE_OPEN in tail or not _closing_line(tail.strip()) or n + 1 > MAX_CLOSING_LINES:
            return body, []
        closing = [tail.strip()] + [strip_markers(p) for p in body[len(body) - n:]]
        return body[:-1 - n] + [last[:ends[-1].end()].rstrip()], closing
    if n == 0:
        return body, []
    return body[:-n], [strip_markers(p) for p in body[-n:]]


def split_matter(paragraphs: list[str]) -> tuple[list[str], list[str], str | None]:
    """:func:`split_head`, then the rest of the caption at the opinion's head and the closing lines
    at its end (:func:`split_closing`) go to the head matter too: (head matter, opinion, author).
    The rule of PDF-born opinions (a PDF's paragraphs, a plain text of one)."""
    head, body, author = split_head(paragraphs)
    if head:
        lead = _leading_caption(body)
        if lead:
            page = next(iter(_MARKER.findall("".join(body[:lead]))[-1:]), None)
            head = head + [strip_markers(p) for p in body[:lead]]
            body = body[lead:]
            if page is not None and not body[0].startswith(PAGE_OPEN):
                body[0] = page_marker(page) + body[0]
    body, closing = split_closing(body)
    return head + closing, body, author


def _head_zone(paragraphs: list[str]) -> Iterator[int]:
    """The indices of the paragraphs where the head matter may end: the first 80, while within the
    first 40 % of the paragraphs or of the characters, or while every one so far is a caption's
    short line (:func:`split_head`)."""
    total = sum(len(p) for p in paragraphs)
    before = 0
    caption = True  # every paragraph so far is a caption's short line
    for i, raw in enumerate(paragraphs[:80]):
        if i > int(0.4 * len(paragraphs)) and before > 0.4 * total and not caption:
            return
        caption = caption and (len(strip_markers(raw)) <= CAPTION_LINE_CHARS
                               or len(_COLUMN_GUTTER.findall(raw)) >= 2)  # cells of a ")" or "]" caption
        before += len(raw)
        yield i


def split_head(paragraphs: list[str]) -> tuple[list[str], list[str], str | None]:
    """(head matter, opinion, author): the paragraphs before the opinion's start (its author's
    line, an opening heading, after a "Per Curiam:" line or an order's title, or after a
    two-column caption whose title ends one of its lines) in the first 40 % of the paragraphs or
    of the characters (at most 80 paragraphs: a caption, a syllabus, counsel) are the head matter;
    (the limit does not apply while every paragraph so far is a caption's short line: an order's
    title under a long caption); without such a start everything is the opinion. The opinion's
    first paragraph keeps the page label it is on; the head's caption set again later (a
    certificate of service) leaves the opinion too. The same rule for a PDF's paragraphs and for a
    plain text's (whose caption lines are joined into fewer paragraphs: hence the share of the
    characters too)."""
    page = None
    heads = list(_head_zone(paragraphs))
    # an opinion that numbers its paragraphs starts at its paragraph 1: a title inside the caption
    # above it ("APPEAL DISMISSED IN PART, ORDER REVERSED,") starts nothing
    one = next((i for i in heads if i > 0 and _paragraph_one(strip_markers(paragraphs[i]))), None)
    for i in heads:
        raw = paragraphs[i]
        labels = _MARKER.findall(raw)
        text = strip_markers(raw)
        if one is not None and i < one and not (_AUTHOR.match(text) or _OPENING.match(text)):
            page = labels[-1] if labels else page
            continue
        start, author = _head_start(paragraphs, i, text)
        if start is not None and 0 < start < len(paragraphs):
            body = list(paragraphs[start:])
            for head_para in paragraphs[i:start]:  # the head's last page label goes on to the opinion
                page = (_MARKER.findall(head_para) or [page])[-1]
            if page is not None and not body[0].startswith(PAGE_OPEN):
                body[0] = page_marker(page) + body[0]
            name = author_name(next(g for g in author.groups() if g)) if author else None
            if author is not None and author.re is _AUTHOR and author.group(4):  # the author's words leave the text
                body[0] = body[0].replace(author.group(0), "", 1)
            head = [strip_markers(p) for p in paragraphs[:start]]
            return head, _without_repeated_caption(body, head), name
        if start is not None:
            break
        page = labels[-1] if labels else page
    return [], list(paragraphs), None



# --- captions ----------------------------------------------------------------------------------

_CAPS_CAPTION = re.compile(r"^[A-Z0-9][A-Z0-9 .,'’&()\-]* v\.(?: [A-Z0-9 .,'’&()\-]*)?$")


def pdf_caption(text: str) -> str | None:
    """The caption of a PDF-born opinion: its first all-capitals "X v. Y" block (a slip
    opinion's "FISHER v. UNIVERSITY OF TEXAS AT AUSTIN ET AL."), continued over the capital
    lines that follow it; else its running header's caption."""
    lines = [ln.strip() for ln in text.replace("\f", "\n").split("\n")[:200]]
    for i, ln in enumerate(lines):
        if _CAPS_CAPTION.match(ln) and not is_running_header(ln) and not ln.startswith(
                ("CERTIORARI", "ON WRIT", "ON PETITION", "APPEAL")):
            parts = [ln]
            for nxt in lines[i + 1:i + 4]:
                if (not nxt or not nxt.isupper() or nxt.startswith(("CERTIORARI", "ON WRIT", "ON PETITION", "ON APPEAL",
                                                                     "APPEAL", "No.", "SUPREME COURT"))):
                    break
                parts.append(nxt)
            return " ".join(" ".join(parts).split())
    for ln in lines:
        m = re.match(r"^\d{1,4}\s{2,}(.+ v\. .+)$", ln)
        if m:
            return m.group(1).strip()
    return party_caption(text)


_VERSUS = re.compile(r"^(?:v\.?|vs\.?|versus)$", re.IGNORECASE)
#: A party's role under its name in a caption ("Appellants/Cross-Appellees", "Plaintiff,").
_ROLE = re.compile(r"^(?:(?:Plaintiffs?|Defendants?|Appellants?|Appellees?|Petitioners?|Respondents?|Cross-|"
                   r"Intervenors?|Movants?|Claimants?|and|[/,\-–—& ])+)[,.;:]*$", re.IGNORECASE)


def party_caption(text: str) -> str | None:
    """"X v. Y" from a caption that sets the parties on lines of their own around a "v." line
    (a court of appeals' "Ideal Electronic Security Co., Inc., et al.," / "Appellants" / "v." /
    "International Fidelity Insurance Company,"): the nearest line before and after it that is not
    a party's role. None when the first 200 lines have no such caption."""
    lines = [" ".join(ln.split()) for ln in text.replace("\f", "\n").split("\n")[:200]]
    for i, ln in enumerate(lines):
        if not _VERSUS.match(ln):
            continue
        before = next((x for x in reversed(lines[max(0, i - 6):i]) if x and not _ROLE.match(x)), None)
        after = next((x for x in lines[i + 1:i + 7] if x and not _ROLE.match(x)), None)
        if before and after and len(before) + len(after) < 300:
            return f"{before.rstrip(',;: ')} v. {after.rstrip(',;: ')}"
    return None


# --- encodings ---------------------------------------------------------------------------------

def check_encoding(name: str) -> str:
    """The canonical name of a text encoding; LookupError for an unknown name, ValueError for a
    codec that is no text encoding (``zlib_codec``, ``base64``, ``rot13``: bytes to bytes, or
    text to text)."""
    info = codecs.lookup(name)
    if not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"{info.name} is not a text encoding")
    return info.name


def decode_text(raw: bytes, encoding: str | None = None) -> tuple[str, str | None]:
    """Bytes -> (text, the encoding used when it was not UTF-8). A forced ``encoding`` is used as
    given (undecodable bytes replaced); otherwise UTF-8 (with or without a BOM), else the
    encoding ``charset-normalizer`` guesses. UnicodeDecodeError when nothing fits."""
    if encoding:
        return raw.decode(encoding, errors="replace"), check_encoding(encoding)
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        first = exc
    from charset_normalizer import from_bytes

    found = from_bytes(raw)
    english = [m for m in found if m.language == "English"]
    best = english[0] if english else found.best()
    if english:  # case law is English: a Western single-byte code page is the usual answer
        try:
            return raw.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            pass
    if best is None or best.encoding in ("utf_8", "utf_8_sig"):
        raise first
    return str(best), best.encoding


__all__ = ["caption_name", "is_stamp", "tidy_caption"]

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
_VERSUS_WITHIN = re.compile(r"(?:^|\s)(?:v\.?|vs\.?|versus)(?:\s|$)", re.IGNORECASE)
_MATTER = re.compile(r"^(?:In re|In the Matter of|Matter of|Ex parte|Estate of)\s+\S", re.IGNORECASE)


def is_stamp(line: str) -> bool:
    """Whether a line is a clerk's stamp, a date, a report or docket number, a running header
    or a court's name: never a case's name."""
    line = " ".join(line.split())
    if not line or not re.search(r"[A-Za-z]{2}", line):
        return True
    return _STAMP.match(line) is not None or is_running_header(line)


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


#: What a caption never holds and a sentence of the body may: a reporter citation ("515 F.3d 224"),
#: a section sign, quotation marks, a signal after a full stop (". See ").
_SENTENCE_NOT_CAPTION = re.compile(r"\b\d+\s+[A-Z][A-Za-z.]*\s?(?:\d?d|\dth)?\s+\d+\b|§|[“”]|\.\s+(?:See|Cf|But)\b")


#: Prose before a "v.": three words in small letters, then, with no comma between (a caption parts its
#: parties with commas: "..., formerly doing business as Weber's Welding, and ..., Debtors."), a
#: sentence's end and a capital ("Impeachment of a witness is governed by Rules 608 and 609. United
#: States v. Colbert,"): a body line citing a case.
_PROSE = re.compile(r"\b[a-z]{2,}\s+[a-z]{2,}\s+[a-z]{2,}\b[^.?!,]*[.?!][\"”’)]*\s+[A-Z]")


def _versus_block(blocks: list[list[str]], max_chars: int = 400) -> str | None:
    """The first block that reads "X v. Y" (or "In re X"), its stamps and numbers left out; an
    "X v. Y" block is at most ``max_chars`` long."""
    for block in blocks:
        kept = [ln for ln in block if not is_stamp(ln)]
        text = " ".join(kept)
        m = _VERSUS_WITHIN.search(text)
        if m and (_SENTENCE_NOT_CAPTION.search(text) or _PROSE.search(text[:m.start()])):
            continue  # "... See Phillips v. Cty. of Allegheny, 515 F.3d 224": the body, not a caption
        if m and m.start() > 0 and text[m.end():].strip() and len(text) <= max_chars:
            return text.rstrip(" ,;:")
        if kept and _MATTER.match(kept[0]) and len(text) <= 300:
            return text.rstrip(" ,;:")
    return None


#: A line number of pleading paper at a line's start ("  13   CONSUMERINFO.COM, INC."), and the
#: gutter of a caption set in columns: a ")", ":", "]" or "*" column, or three spaces and more.
_PLEADING_NUMBER = re.compile(r"^\s*\d{1,2}(?:\s{2,}|$)")
_GUTTER = re.compile(r"\s+[):\]*](?:\s|$)|\s{3,}|\s[):\]*]$")
#: A rule of a caption's box: underscores, dashes or equals signs only.
_BOX_RULE = re.compile(r"^[_\-=*\s:)]+$")


def _left_column(line: str) -> tuple[int, str]:
    """A layout line's left column and where it starts: no pleading line number, nothing after
    the gutter; a line holding only the gutter's ")" or ":" is empty."""
    line = line.replace("\f", " ").rstrip()
    number = _PLEADING_NUMBER.match(line)
    start = number.end() if number else 0
    rest = line[start:]
    stripped = rest.strip()
    pos = start + len(rest) - len(rest.lstrip())
    m = _GUTTER.search(stripped)
    text = " ".join((stripped[:m.start()] if m else stripped).split())
    return pos, "" if re.fullmatch(r"[):\]*\s]*", text) else text


#: How far right of the "v." line a line may start and still be in a caption's left column.
_RIGHT_COLUMN = 20


def column_caption(lines: Sequence[str]) -> str | None:
    """"X v. Y" from a caption set in columns (PDF-born text kept in its layout): its left column,
    pleading line numbers, docket numbers and titles in the right column left out; each party the
    run of lines above and below the "v." line, its roles ("Plaintiff,", "Defendant - Appellant")
    and stamps left out. None without a "v." line in the head."""
    cells = [_left_column(ln) for ln in lines[:HEAD_LINES]]
    for i, (at, ln) in enumerate(cells):
        if not _VERSUS.match(ln):
            continue
        left = [text if pos <= at + _RIGHT_COLUMN else "" for pos, text in cells]
        j = i - 1
        while j >= 0 and (not left[j] or _ROLE.match(left[j])):
            j -= 1
        before: list[str] = []
        while j >= 0 and left[j] and not _BOX_RULE.match(left[j]) and not _ROLE.match(left[j]) \
                and not is_stamp(left[j]) and len(before) < 4:
            before.insert(0, left[j])
            j -= 1
        k = i + 1
        while k < len(left) and not left[k]:
            k += 1
        after: list[str] = []
        while k < len(left) and left[k] and not _BOX_RULE.match(left[k]) and not _ROLE.match(left[k]) \
                and not is_stamp(left[k]) and len(after) < 4:
            after.append(left[k])
            k += 1
        first, second = " ".join(before).rstrip(",;: "), " ".join(after).rstrip(",;: ")
        if first and second and len(first) + len(second) < 300:
            return f"{first} v. {second}"
        return None
    return None


#: The longest caption read from a head's single long line (a bankruptcy case's debtors and its
#: adversary proceeding's parties, 419 characters in the Minnesota bankruptcy court's head).
LONG_CAPTION_CHARS = 1000
#: A long caption line comes after at most this many short lines of the head (court, docket numbers).
_LONG_CAPTION_AFTER = 6


def _line_caption(lines: Sequence[str], laid_out: bool) -> str | None:
    """The caption of a head written a line a paragraph, read only when a long line (the body) was
    met or the text is ``laid_out`` (PDF-born, its lines a page's width: pleading paper's "IN RE:
    Bard IVC Filters Products"): the first of the short lines before it that reads "X v. Y" (or
    "In re X"); else the long line itself
    when it reads so, comes after a few short lines (court, docket numbers) and before a stamp
    (the decision's date): a caption too long for a head line (the Minnesota bankruptcy court's,
    419 characters)."""
    head_lines: list[list[str]] = []
    long_line: str | None = None
    after: str | None = None
    for k, ln in enumerate(lines):
        text = ln.strip()
        if len(text) > MAX_LINE_CHARS:
            long_line = text
            after = next((x.strip() for x in lines[k + 1:] if x.strip()), None)
            break
        if text:
            head_lines.append([text])
    if long_line is None and not laid_out:  # short lines apart by blank lines (text wrapped at 70
        return None  # columns): nothing says where a head written a line a paragraph ends
    found = _versus_block(head_lines)
    if found:
        return found
    if long_line and 0 < len(head_lines) <= _LONG_CAPTION_AFTER and after is not None and is_stamp(after):
        return _versus_block([[long_line]], max_chars=LONG_CAPTION_CHARS)
    return None


def caption_name(lines: Sequence[str]) -> str | None:
    """The case name at the head of an opinion's text (its lines, in order): its "X v. Y" caption
    as written; None when it has none that is not a stamp or a number. See the module docstring."""
    found = _caption_found(lines)
    return tidy_caption(found) if found is not None else None


#: A label before the parties in a court's letter or notice: "RE:", "Short Title:".
_NAME_LABEL = re.compile(r"^(?:.*?\b(?:Short\s+Title|Case\s+Title|Title|Case\s+Name|Caption)\s*:|\s*Re\s*:)\s*(?=\S)",
                         re.IGNORECASE)
#: A docket number in a name: ", No. MDL 15-02641-PHX-DGC", " Case No.: 17-2678".
_NAME_DOCKET = re.compile(r",?\s+(?:Case\s+(?:No\.?|Number)|Docket\s+No\.?|Nos?\.)\s*:?\s*(?:MDL\s*)?\d+[-:][\w\-:]*",
                          re.IGNORECASE)
#: A page range after the parties, from a table of contents ("LONG vs ABILITY RECOVERY SERVICES 1-4").
_NAME_PAGES = re.compile(r"\s+\d+\s?[–-]\s?\d+$")


def tidy_caption(name: str) -> str:
    """A caption's name without what a court's letter, notice or table sets around it: a "RE:" or
    "Short Title:" label before it, a docket number after it ("In re Bard IVC Filters Products
    Liability Litigation, No. MDL 15-02641-PHX-DGC"), a page range ("... SERVICES 1-4")."""
    tidy = _NAME_LABEL.sub("", name, count=1)
    docket = _NAME_DOCKET.search(tidy)
    if docket is not None:  # what follows it goes too (a letter's "(Arg. & Sub. ...)"), unless a party
        rest = tidy[docket.end():]
        tidy = tidy[:docket.start()] + (rest if _VERSUS_WITHIN.search(rest) else "")
    return _NAME_PAGES.sub("", tidy).strip(" ,;:") or name


def _caption_found(lines: Sequence[str]) -> str | None:
    lines = [ln.rstrip("\n") for ln in lines[:HEAD_LINES]]
    text = "\n".join(lines)
    found = column_caption(lines)
    if found:
        return found
    laid_out = is_pdf_text(text)
    if laid_out:
        found = pdf_caption(text)
        if found and _VERSUS_WITHIN.search(found) and not is_stamp(found) and not _SENTENCE_NOT_CAPTION.search(found):
            return found  # (a footnote's line "1  infringement suit. 17 U.S.C. § 411(a); ... v. Wall-" is none)
    blocks = _blocks(lines)
    found = _versus_block(blocks)
    if found:
        return found
    # a head written a line a paragraph, with no blank lines (CAP's text: court, citation, "Dale
    # CLUKEY, Jr. v. PISCATAQUIS COUNTY ...", date, counsel): each line before the first long one
    found = _line_caption(lines, laid_out)
    if found:
        return found
    found = party_caption(text)
    if found and not is_stamp(found.split(" v. ")[0]):
        return found
    if len(blocks) > 0 and len(blocks[0]) == 1 and len(blocks[0][0]) <= MAX_LINE_CHARS and not is_stamp(blocks[0][0]):
        return blocks[0][0]
    return None
