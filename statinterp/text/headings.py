"""Headings: the one test of whether a line of an opinion is a heading rather than a sentence.

A heading is a stored line (a paragraph), or all of it after a list label ("2.", "A.", "(a)",
"IV.", "¶ 3"), of at most :data:`MAX_WORDS` words with no punctuation at its end and a word of two
letters or more (a table's row of figures is none), that is:

* *titled* (:func:`is_titled`): every word capitalised, small words aside, or no word at all
  ("Bank Murders", "II. DISCUSSION", "(a) Ex Post Facto Claim", "Mitigator (2)(b)"); or
* *in sentence case* (:func:`is_heading_line` with its neighbours): at most
  :data:`SENTENCE_CASE_MAX_WORDS` words opening with a capital, its last word one a sentence can
  end on (not "the", "of", "and" ...), standing alone as a paragraph: the line before it (if any)
  ends a sentence or is a heading (either kind), the line after it (if any) opens with a capital, a digit, a
  label or a quote ("General rule", "Amounts at risk", "Proximate causation").

The segmenter's numbered-heading rules use :func:`is_titled` (as they always have);
``find`` (:mod:`statinterp.collection.find`) leaves out a sentence that is a whole heading line
(:func:`is_heading_line`) unless asked for headings, and gives each found sentence the heading
it stands under (its ``section``). Layout only: no court's words.

A *table's row* in plain text (:func:`table_rows`) is no sentence either: a line of at most
:data:`MAX_LINE_CHARS` characters holding a figure (an amount of money, a number with a thousands
separator or decimals, a percentage) and ending with no sentence's punctuation, in a run of at
least :data:`MIN_TABLE_ROWS` such lines ("Base Pay $4,309.50 (subject to both Federal Income Tax
and FICA)" / "BAS $160.42 (NOT subject to ...)" / ...: a pay table written one row a line).
``find`` leaves out a sentence that lies in such a row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["LABEL_RE", "MAX_LINE_CHARS", "MAX_WORDS", "MIN_TABLE_ROWS", "SENTENCE_CASE_MAX_WORDS", "ends_open",
           "heading_text", "is_heading_line", "is_table_row", "is_titled", "table_rows"]

#: Words a titled heading leaves in lower case ("Motion for Discovery", "Standard of Review").
SMALL_WORDS = frozenset("a an and as at by de for from in into of on or nor the to v. vs. with".split())
#: The longest line (in characters) that is a heading, or a line of an opinion's head (its court,
#: caption, date) written a line a paragraph: a longer line is a paragraph of the body. Used by
#: ``find``'s headings and sections and by the caption reader
#: (:func:`statinterp.sources.cleaning.caption_name`).
MAX_LINE_CHARS = 200
#: A heading has at most this many words (past its label).
MAX_WORDS = 12
#: A heading in sentence case has at most this many words (past its label).
SENTENCE_CASE_MAX_WORDS = 6
#: Punctuation that ends a sentence or leaves one open (a heading ends with none of it).
SENTENCE_END_RE = re.compile(r"[.?!:;,][\"'”’)\]]*$")
#: A list label in brackets: "(a)", "(12)", "(iv)", "(B)" (the segmenter's, the cleaning's and the study's one pattern).
PAREN_LABEL = r"\((?:\d{1,3}|[A-Za-z]{1,4})\)"
#: A list label opening a heading line ("4. ", "(a) ", "IV. ", "B. ", "¶ 3 ").
LABEL_RE = re.compile(rf"(?:{PAREN_LABEL}|[IVXLC]{{1,6}}\.|[A-Za-z]\.|\d{{1,3}}\.|¶[ \t]*\d+)[ \t]+")
#: Words no sentence (nor heading) ends with: a line ending with one goes on.
_OPEN_WORDS = frozenset("a an and as at by for from in into of on or nor the to that with which who whose its "
                        "their his her our your this these those is are was were be been than".split())
#: What the line after a heading opens with: a capital, a digit, a label, a quote or a bracket.
_NEXT_OPENS = re.compile(r"^[\"“‘'(\[¶§]?[A-Z0-9]")
#: A sentence's end on the line before a heading (closing quotes and a footnote number allowed).
_ENDS_SENTENCE = re.compile(r"""[.?!:…][\"”’')\]]*\d{0,3}$""")


def ends_open(line: str) -> bool:
    """Whether a line ends with a word no sentence nor heading ends with ("... Outside of a
    Dissolution of"): the next line goes on with it, whatever its indent."""
    words = line.split()
    return bool(words) and words[-1] in _OPEN_WORDS


def _bare(word: str) -> str:
    return word.lstrip("“\"‘'([")


def is_titled(text: str) -> bool:
    """Whether ``text`` (a line past its list label) is a titled heading: at most twelve words, no
    punctuation at its end, each word capitalised (small words aside) or not a word ("Bank Murders",
    "Jury Instruction: Malice", "ASSIGNMENTS OF ERROR", "Mitigator (2)(b)")."""
    words = text.split()
    if not words or len(words) > MAX_WORDS or SENTENCE_END_RE.search(words[-1]):
        return False
    return all(w.lower() in SMALL_WORDS or not _bare(w)[:1].isalpha() or _bare(w)[:1].isupper() for w in words)


def heading_text(line: str) -> str:
    """``line`` past the list label it opens with, if any."""
    m = LABEL_RE.match(line)
    return line[m.end():] if m else line


def _sentence_case(text: str) -> bool:
    words = text.split()
    if not words or len(words) > SENTENCE_CASE_MAX_WORDS or SENTENCE_END_RE.search(words[-1]) \
            or words[-1][-1] in "-–—":
        return False
    first = _bare(words[0])
    last = words[-1].strip("\"”’')]").lower()
    return (first[:1].isupper() and last not in _OPEN_WORDS and any(c.isalpha() for c in last)
            and sum(c.isalpha() for c in text) >= 4)


def is_heading_line(line: str, previous: str | None = None, following: str | None = None, *,
                    alone: bool = True) -> bool:
    """Whether the stored line ``line`` is a heading (see the module docstring). ``previous`` and
    ``following``: the lines around it in its opinion (None: none). A heading in sentence case is
    one only when it stands ``alone`` as a paragraph between those lines."""
    text = heading_text(line.strip())
    if not re.search(r"[^\W\d_]{2}", text):
        return False  # no word: a table's row of numbers, a lone label
    if is_titled(text):
        return True
    if not alone or not _sentence_case(text):
        return False
    before = heading_text((previous or "").strip())
    after = (following or "").strip()
    return ((not before or bool(_ENDS_SENTENCE.search(before)) or is_titled(before) or _sentence_case(before))
            and (not after or bool(_NEXT_OPENS.match(after))))


#: A figure in a table's cell: an amount of money, a number with a thousands separator or with
#: decimals, a percentage (a year or a page number is none).
_FIGURE = re.compile(r"\$\s?\d|\b\d{1,3}(?:,\d{3})+\b|\b\d+\.\d+\b|\b\d+(?:\.\d+)?\s?%")
#: A table in plain text has at least this many rows, one after another.
MIN_TABLE_ROWS = 3


def is_table_row(line: str) -> bool:
    """Whether a stored line may be a row of a table written one row a line: short, holding a
    figure and ending with no sentence's punctuation ("BAH $745.00 (NOT subject to Federal Income
    Tax or FICA)"). A row alone is no table: :func:`table_rows`."""
    text = line.strip()
    return (0 < len(text) <= MAX_LINE_CHARS and _FIGURE.search(text) is not None
            and SENTENCE_END_RE.search(text) is None)


def table_rows(lines: Sequence[str]) -> set[int]:
    """The indices of ``lines`` that are a table's rows: runs of at least :data:`MIN_TABLE_ROWS`
    lines in a row that each pass :func:`is_table_row`."""
    rows: set[int] = set()
    run: list[int] = []
    for k, line in enumerate([*lines, ""]):
        if k < len(lines) and is_table_row(line):
            run.append(k)
            continue
        if len(run) >= MIN_TABLE_ROWS:
            rows.update(run)
        run = []
    return rows
