"""Text quality of genuine opinions as statinterp stores them, per court (issue 34).

The set is built by :mod:`experiments.text_quality_set` (its manifest,
``experiments/text_quality_set.json``, names each opinion's repository, path, commit, court and
format, and splits the courts once into a *rules* half, on which rules and thresholds may be
chosen, and a *held-apart* half, which no rule is chosen on). Each opinion is read by each of its
routes (its PDF, its plain text, its CourtListener fields, its CAP HTML) through statinterp's own
readers (:func:`statinterp.sources.discover` and :func:`~statinterp.sources.read_partition`,
exactly as ``statinterp ingest`` reads a folder; a PDF only when a ``pdf`` format is
registered, else the route is reported as "no reader"), and its stored lines are segmented as
``find`` segments them (:func:`statinterp.text.segmentation.build_pipeline` with line joining,
the body's lines as one text, each footnote apart). Then, for every stored sentence:

* **fragment** -- one of: *short* (no word of two letters or more and no "§": "1", "¶ 2", "(2)", "O 4"),
  *lowercase start* (its first letter, after opening quotes and brackets and a list item's label
  "(a)", is lower-case, and it does not open with "e.g.", "i.e.", "id.", "cf." or "ibid."),
  *open end* (it does not end with ``. ? ! : ; …``, closing quotes and brackets, each after at
  most one space (".’ ”"), and a footnote number allowed after it). A *heading*
  is left out of the count (not a sentence): a whole stored line (or all of it after an
  enumerator: "2.", "A.", "(a)", "IV.", "¶ 3") of at most 12 words, with no ``. ? !`` at its end,
  whose words all start with a capital, a digit or a bracket, small words (of, the, and ...) aside.
* **running header** -- it holds an ECF banner ("Case: … Document: … Page: … Date Filed:",
  "Appellate Case:", "DktEntry:", "Page ID #", "Page N of M"), "Cite as", or a line that the
  source repeats at the head or foot of pages: for a PDF, a line of at least two words among the
  first three or last three lines of at least three pages of ``pdftotext -layout``'s text, digits
  masked (caption lines and banners repeated on every page).
* **page label** -- "[*N]", "*N" (not "at *N" or ", *N": a Westlaw pin), a page number
  "- N -", or an empty "[ ]" beyond those the source text has itself (a quotation's "possess[ ]").
* **glued footnote mark** -- a word ending in a letter, optionally with ``. , ; :`` and a closing
  quote or bracket, then 1-2 digits and a space or punctuation ("parties,3", "cite9",
  "6662(a)2 for": after a bracket only before a lower-case word, as "§ 66.0217(14)(b)1." numbers a
  subdivision); the usual words before a number ("at", "No", "p", "n", "fn", "sec", "art", "Rule",
  "Title", "chapter" ...) excepted.

Per opinion also: **footnotes recognised** against the footnotes the opinion has (counted by
hand for PDFs and texts, in the manifest; for CAP HTML the ``<aside class="footnote">`` inside
its opinions): a footnote is recognised when a stored footnote (``OpinionRecord.notes``: a
footnote stored as several lines counts as one) opens with its opening words (read in the PDF
by hand: the manifest's ``footnote_openings``; for CAP HTML its first 60 characters; compared
with :func:`loose`, 20 characters of slack for a label), each stored footnote counting for one
footnote only (two run together count once); without openings, the stored footnotes up to the
number it has. **Footnote text in the body**: footnotes whose
opening words (25 characters or more, spaces aside) stand in the body's paragraphs instead
(run into a sentence or a paragraph of their own); without openings, body lines that open with
the number of one of its footnotes (1 .. N) followed by a capital or a quote ("3 The parties
...", "1The Chapel ...").
**Found sentences** (the issue's fragment target counts these): the sentences ``statinterp find``
returns. Each route folder is ingested into a fresh collection as ``statinterp ingest`` does it
(:func:`statinterp.collection.ingest.ingest`, its defaults) and the library function the
``find`` command calls, :func:`statinterp.collection.find.find_term`, is run for each of the
opinion's *find terms*, a fixed list made from the opinion's text before any sentence is
measured (:func:`find_terms`, on the text its first route stores): its :data:`FIND_WORDS` most
frequent content words (letters only, 4 or more, not an English stop word, 2 occurrences or more;
ties alphabetical), its :data:`FIND_PHRASES` most frequent pairs of adjacent content words (2 or
more), and each of the 42 statutory terms of ``../shared/data/provisions.json`` that occurs in
it (:func:`statutory_terms`). A sentence found for two terms counts once. A found sentence is a *fragment* by
:func:`fragment_reason`, headings included (a heading that ``find`` returns is not a sentence a
user can quote).
**Pins checked by hand**: for the sentences in the manifest's
``pins`` (a quote from the sentence and the page read in the source by hand), the page statinterp
stores for that sentence (:func:`statinterp.collection.store.line_pages` and
:func:`statinterp.corpus.pin_cites.page_at` at the sentence's first character, as ``find``
gives ``pin_page``). **Routes compared**: for an opinion read by two routes, the share of one
route's sentences found, whitespace-normalised, among the other's; and the same with typography
aside (:func:`loose`: quotes and dashes folded, a leading "{9}" or "¶ 9" and all spaces dropped).

Run from the project root::

    python -m experiments.text_quality_set --mirrors MIRRORS --out SET
    python -m experiments.text_quality --set SET --out reports/text_quality.md --force

(``MIRRORS``: a folder of bare git mirrors of the repositories the manifest names, as
``OWNER+NAME/``; ``SET``: any folder the set is laid out in.)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from experiments.common import add_output_options, out_options, output_path
from statinterp.text.headings import PAREN_LABEL

# ---------------------------------------------------------------------------------------------
# The measures (pure functions of a text: tested in experiments/test_text_quality.py)
# ---------------------------------------------------------------------------------------------

_LOWER_OPENERS = ("e.g.", "i.e.", "id.", "cf.", "ibid.")
#: A list item's label before its words: "(a) contact, regardless of method, ..." opens an item of a
#: list (a statute's, a guideline's), not a sentence cut in the middle.
_ITEM_LABEL = re.compile(rf"^[\"“‘']?{PAREN_LABEL}\s+")
_SMALL_WORDS = frozenset("a an and as at by de for in of on or the to v v. vs vs. with".split())
#: A sentence's end: its mark, then closing quotes and brackets, each after at most one space (a
#: quotation within a quotation closes as ".’ ”"), then perhaps a footnote number.
_END = re.compile(r"""(?:[.?!:;…]|\.\s?\.\s?\.)(?:\s?["”’'»)\]])*(?:\d{1,3}|\*+)?$""")
_WORD = re.compile(r"[^\W_]+")


_ENUMERATOR = re.compile(rf"(?:(?:[IVXLC]+|[A-Za-z]|\d{{1,3}})[.)]?|{PAREN_LABEL}|¶\s?\d+)?")


def is_heading(sentence: str, whole_line: bool) -> bool:
    """A heading, caption or label line rather than a sentence (see the module's docstring)."""
    words = sentence.split()
    if not whole_line or len(words) > 12 or re.search(r"[.?!][\"”’')\]]*$", sentence):
        return False
    return all(w.lower() in _SMALL_WORDS or not w[0].isalpha() or w[0].isupper() for w in words)


def fragment_reason(sentence: str) -> str | None:
    """Why ``sentence`` is a fragment (``short``, ``lowercase start``, ``open end``), or None."""
    text = sentence.strip()
    if not any(sum(c.isalpha() for c in w) >= 2 for w in _WORD.findall(text)) and "§" not in text:
        return "short"
    opening = text.lstrip("\"“‘'([«—-– ")
    first = next((c for c in opening if c.isalpha()), "")
    if (opening[:1].isalpha() and first.islower() and not opening.lower().startswith(_LOWER_OPENERS)
            and not _ITEM_LABEL.match(text)):  # a list item's words may start lower-case: "(a) contact, ..."
        return "lowercase start"
    if not _END.search(text):
        return "open end"
    return None


_ECF = re.compile(
    r"\b(?:Appellate\s+)?Case:?\s*\d[\w:.-]*,?\s+(?:Document|Doc\.?|Page|DktEntry)\b"
    r"|\bDate\s+Filed:\s*\d|\bDktEntry:\s*\d|\bPage\s?ID\s?#|\bPage\s*\d+\s+of\s+\d+\b|(?-i:\bCite\s+as:?\s)"
    r"|\bEntry\s+ID:\s*\d|\bAppeal:\s*\d+-\d+\s+Doc:",
    re.IGNORECASE)


def _masked(text: str) -> str:
    return " ".join(re.sub(r"\d+", "#", text).split())


def repeated_page_lines(pages: list[str], edge: int = 3, min_pages: int = 3) -> set[str]:
    """Lines (digits masked, whitespace collapsed) of at least two words that stand among the
    first or last ``edge`` non-blank lines of at least ``min_pages`` pages: running headers and
    footers, repeated captions; not "SO ORDERED." (:data:`_CLOSING`)."""
    seen: Counter[str] = Counter()
    for page in pages:
        lines = [ln for ln in page.splitlines() if ln.strip()]
        here = {_masked(ln) for ln in lines[:edge] + lines[-edge:]}
        seen.update(ln for ln in here if len(ln.split()) >= 2 and len(ln) >= 8 and not _CLOSING.match(ln))
    return {ln for ln, n in seen.items() if n >= min_pages}


#: The court's own closing words, which end each of several rulings of one document near a page's foot
#: (a calendar of tentative rulings): no running footer, however often they stand at a page's edge.
_CLOSING = re.compile(r"(?:IT\s+IS\s+)?SO\s+ORDERED\.?$", re.IGNORECASE)


def header_hits(sentence: str, repeated: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """The running-header text ``sentence`` holds (ECF banners, "Cite as", repeated page lines)."""
    hits = [m.group(0) for m in _ECF.finditer(sentence)]
    if repeated:
        masked = _masked(sentence)
        hits.extend(ln for ln in repeated if ln in masked)
    return hits


_PAGE_LABEL = re.compile(r"\[\s*\*+\s*\d+\s*\]|(?<!at )(?<!, )(?<![\w*\]])(?<!\d[-–])\*{1,3}\d{1,4}\b"
                         r"|(?:^|(?<=\s))-\s?\d{1,3}\s?-(?=\s|$)")
EMPTY_BRACKETS = re.compile(r"\[\s*\]")


def page_labels(sentence: str) -> list[str]:
    """Page labels left in ``sentence``: "[*2]", "*2" (not "at *2", ", *2", "at *3-*4"), "- 2 -". The "[ ]" a
    removed label leaves is counted apart (:func:`bracket_debris`): a quotation has them too."""
    return [m.group(0) for m in _PAGE_LABEL.finditer(sentence)]


def bracket_debris(stored: list[str], source: str) -> int:
    """Empty brackets "[ ]" in the stored sentences beyond those the source text itself has (a
    quotation's omitted letters, "possess[ ]"): what a removed "[*2]" leaves behind."""
    return max(0, sum(len(EMPTY_BRACKETS.findall(s)) for s in stored) - len(EMPTY_BRACKETS.findall(source)))


_GLUED = re.compile(r"(?<![\w.§])([A-Za-z]*[a-z]|[A-Za-z0-9.]*\([a-z0-9]{1,3}\))([.,;:]?[\"”’')\]]?)(\d{1,2})"
                    r"(?=[\s.,;:)]|$)")
_BEFORE_NUMBER = frozenset("at no nos p pp n nn fn fns sec secs art arts rule rules title ch chap chapter para paras "
                           "vol pt part ex exh tab tbl tbls fig figs app id op docs doc dkt r ct c cl subd sub amend "
                           "stat".split())


def glued_marks(sentence: str) -> list[str]:
    """Footnote marks glued to the word before them ("parties,3", "cite9", "6662(a)2")."""
    out = []
    for m in _GLUED.finditer(sentence):
        word, punct, _ = m.groups()
        if word.lower().strip("()") in _BEFORE_NUMBER or (not punct and len(word) == 1):
            continue
        if word.endswith(")") and not re.match(r"\s+[a-z]", sentence[m.end():]):
            continue  # "§ 66.0217(14)(b)1." numbers a subdivision; "6662(a)2 for" is a mark
        out.append(m.group(0))
    return out


def footnote_like_lines(body: list[str], expected: int) -> list[str]:
    """Body lines that open with the number of one of the opinion's ``expected`` footnotes then a
    capital or a quote: a footnote stored as body text."""
    out = []
    for line in body:
        m = re.match(r"\s*(\d{1,3})\s?(?=[A-Z“\"‘])", line)
        if m and 1 <= int(m.group(1)) <= expected and not re.match(r"\s*\d{1,3}\s?(?:[A-Z]\.){2,}", line):
            out.append(line)
    return out


def normal(text: str) -> str:
    return " ".join(text.split())


_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00ad": None})


def loose(text: str) -> str:
    """``text`` with quotes and dashes folded, a leading paragraph number ("{9}", "¶ 9") and every
    space removed: the same sentence whatever a source's typography ("S.Ct." / "S. Ct.")."""
    import unicodedata

    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = re.sub(r"^\s*(?:\{\d+\}|\[?¶\s?\d+\]?)\s*", "", text)
    return "".join(text.split())


def sentence_overlap(a: list[str], b: list[str], key=normal) -> float:
    """Share of the sentences of ``a`` that occur among those of ``b``, compared by ``key``
    (whitespace-normalised; :func:`loose`: typography aside too)."""
    if not a:
        return float("nan")
    other = {key(s) for s in b}
    return sum(key(s) in other for s in a) / len(a)


# ---------------------------------------------------------------------------------------------
# Reading and segmenting
# ---------------------------------------------------------------------------------------------


@dataclass
class Sentence:
    text: str
    footnote: bool
    whole_line: bool
    page: str | None


def read_route(folder: Path) -> tuple[list, str]:
    """The case records statinterp's readers make of a route folder, and a status ("read", "no
    reader", or the reader's one-line error)."""
    from statinterp.errors import InputError
    from statinterp.sources import CaseRecord, SkippedRecord, discover, read_partition

    try:
        import statinterp.sources.pdf  # noqa: F401  (registers the pdf format once it exists)
    except ImportError:
        pass
    try:
        partitions = discover([folder])
    except InputError as exc:
        if any(folder.glob("*.pdf")):
            return [], "no reader"
        return [], f"error: {exc}"
    records, skipped = [], []
    for p in partitions:
        for item in read_partition(p):
            if isinstance(item, CaseRecord):
                records.append(item)
            elif isinstance(item, SkippedRecord):
                skipped.append(item.line())
    if not records:
        return [], "skipped: " + ("; ".join(skipped)[:200] or "no case")
    return records, "read"


_NLP = None


def _pipeline():
    global _NLP
    if _NLP is None:
        from statinterp.text.segmentation import build_pipeline

        _NLP = build_pipeline(legal_rules=True, join_lines=True)
        _NLP.max_length = 5_000_000
    return _NLP


def segment(record) -> list[Sentence]:
    """Every sentence of the record's opinions as ``find`` would cut it, with its stored page."""
    from statinterp.collection.store import line_pages
    from statinterp.corpus.pin_cites import page_at
    from statinterp.text.segmentation import sentence_spans

    nlp = _pipeline()
    out: list[Sentence] = []
    for op, pages in zip(record.opinions, line_pages(record), strict=True):
        lines = list(op.lines)
        groups = [list(range(len(op.paragraphs)))] + [[k] for k in range(len(op.paragraphs), len(lines))]
        for group in groups:
            if not group:
                continue
            starts = []
            at = 0
            for k in group:
                starts.append(at)
                at += len(lines[k]) + 1
            text = "\n".join(lines[k] for k in group)
            for s, e in sentence_spans(nlp(text)):
                i = max(j for j, st in enumerate(starts) if st <= s)
                k = group[i]
                starts_k = op.page_starts[k] if op.page_starts and k < len(op.page_starts) else ()
                page = page_at(pages[k], starts_k, s - starts[i])
                before = lines[k][:s - starts[i]].strip()
                whole = e == starts[i] + len(lines[k].rstrip()) and _ENUMERATOR.fullmatch(before) is not None
                out.append(Sentence(text[s:e], k >= len(op.paragraphs), whole, page))
    return out


# ---------------------------------------------------------------------------------------------
# The sentences ``find`` returns
# ---------------------------------------------------------------------------------------------

#: The opinion's most frequent content words and pairs of adjacent content words that are looked up.
FIND_WORDS = 5
FIND_PHRASES = 3
_LETTERS = re.compile(r"[A-Za-z]+(?:['’][a-z]+)?|[^A-Za-z\s]+")


def statutory_terms(path: Path | None = None) -> list[str]:
    """The 42 statutory terms of the data set: ``provisions.json`` of the shared data
    (``../shared/data``, or ``$STATINTERP_SHARED_DATA``); without it, statinterp's shipped
    provisions file (said on stderr)."""
    import os

    from statinterp.corpus.provisions import load_provisions

    root = Path(__file__).resolve().parents[1]
    path = path or Path(os.environ.get("STATINTERP_SHARED_DATA") or root.parent / "shared" / "data") / "provisions.json"
    if not path.is_file():
        print(f"note: {path} not found: the find terms take the shipped provisions file's terms", file=sys.stderr)
        book = load_provisions()
    else:
        book = load_provisions(path)
    return sorted(book.get(k).term for k in book.keys())  # type: ignore[union-attr]


def find_terms(text: str, statutory: list[str] = (), words: int = FIND_WORDS,  # type: ignore[assignment]
               phrases: int = FIND_PHRASES) -> list[str]:
    """The terms looked up in an opinion whose stored text is ``text`` (the module's docstring):
    its ``words`` most frequent content words and ``phrases`` most frequent pairs of adjacent
    content words (each 2 times or more; ties alphabetical), then the ``statutory`` terms that
    occur in it (case and spacing aside)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    def content(token: str) -> bool:
        return token.isalpha() and len(token) >= 4 and token not in STOP_WORDS

    tokens = [t.lower() for t in _LETTERS.findall(text)]
    single: Counter[str] = Counter(t for t in tokens if content(t))
    pairs: Counter[str] = Counter(f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)
                                  if content(a) and content(b))

    def top(counts: Counter[str], n: int) -> list[str]:
        return [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2][:n]

    flat = " ".join(text.lower().replace("-", " ").split())
    occurring = [t for t in statutory if re.search(rf"\b{re.escape(t.lower())}\b", flat)]
    return top(single, words) + top(pairs, phrases) + occurring


def found_sentences(folder: Path, terms: list[str], workdir: Path) -> list[str]:
    """The sentences ``statinterp find`` returns for ``terms`` from a collection that
    ``statinterp ingest`` makes of ``folder`` (in ``workdir``), each sentence once."""
    from statinterp.collection.find import find_term
    from statinterp.collection.ingest import ingest
    from statinterp.collection.shards import open_collection

    collection = workdir / "collection"
    ingest([folder], collection)
    seen: dict[tuple[str, str], str] = {}
    with open_collection(collection) as c:
        for term in terms:
            for row in find_term(c, term).tables["sentence"].values():
                seen.setdefault((row["paragraph_id"], row["text"]), row["text"])
    return list(seen.values())


def tally_found(result: RouteResult, found: list[str]) -> None:
    """Count the sentences ``find`` returned, and their fragments, into ``result``."""
    result.counts["found"] += len(found)
    result.counts["found_fragments"] += 0  # measured, even if none is a fragment
    for text in found:
        reason = fragment_reason(text)
        if reason:
            result.note("found_fragments", f"[{reason}] {text}")


# ---------------------------------------------------------------------------------------------
# One route of one opinion
# ---------------------------------------------------------------------------------------------

COUNTERS = ("sentences", "headings", "fragments", "headers", "labels", "glued", "footnotes_expected",
            "footnotes_stored", "footnotes_recognised", "footnotes_in_body", "lines", "found", "found_fragments")


#: Counters that are None in the summary when not measured (no hand count; found sentences not looked up).
UNMEASURED = ("footnotes_expected", "found", "found_fragments")


@dataclass
class RouteResult:
    entry: str
    court: str
    half: str
    route: str
    status: str
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    sentences: list[Sentence] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # the find terms looked up (found sentences)

    def note(self, kind: str, text: str) -> None:
        self.counts[kind] += 1
        if len(self.examples[kind]) < 3:
            self.examples[kind].append(text if len(text) <= 160 else text[:157] + "...")


def source_pages(home: Path) -> list[str]:
    """The pages of the opinion's PDF (``pdftotext -layout``, split at form feeds), if it has one."""
    pdfs = sorted((home / "pdf").glob("*.pdf"))
    if not pdfs:
        return []
    done = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(pdfs[0]), "-"], capture_output=True)
    return done.stdout.decode("utf-8", errors="replace").split("\f")


def source_text(folder: Path) -> str:
    """The text of a route's input as given (markup removed, entities decoded; a PDF's
    ``pdftotext -layout`` text): what the source itself holds."""
    import html as html_lib

    parts = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        if f.suffix == ".pdf":
            done = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(f), "-"], capture_output=True)
            parts.append(done.stdout.decode("utf-8", errors="replace"))
            continue
        raw = f.read_text(encoding="utf-8", errors="replace")
        if f.suffix == ".json":
            obj = json.loads(raw)
            raw = "\n".join(v for v in obj.values() if isinstance(v, str)) if isinstance(obj, dict) else ""
        parts.append(html_lib.unescape(re.sub(r"<[^>]+>", "", raw)))
    return "\n".join(parts)


def footnote_openings(entry: dict, notes: list[str] | None) -> list[str]:
    """The opening words of each of the opinion's footnotes: the manifest's (read in the PDF by
    hand), else the first 60 characters of each footnote of its CAP HTML (its label dropped)."""
    if entry.get("footnote_openings"):
        return list(entry["footnote_openings"])
    if entry.get("footnotes") == "html" and notes:
        return [re.sub(r"^(?:\d{1,3}\.?|\*+|[†‡§]+)\s+", "", n)[:60] for n in notes]
    return []


def recognised_footnotes(openings: list[str], stored: list[str], slack: int = 20) -> int:
    """How many of the footnotes whose ``openings`` are given are stored, each as a footnote of its
    own: a stored footnote that starts (within ``slack`` characters, spaces aside: a label, a
    name the opening leaves out) with an opening counts for that one footnote only, so two
    footnotes run together count once."""
    keys = [loose(o) for o in openings]
    found: set[int] = set()
    for note in stored:
        head = loose(note)
        for k, key in enumerate(keys):
            if k not in found and key and key in head[: len(key) + slack]:
                found.add(k)
                break
    return len(found)


def html_footnotes(home: Path) -> list[str] | None:
    """The footnote texts inside the opinions of a CAP HTML route (None: no such route)."""
    files = sorted((home / "cap").rglob("html/*.html"))
    if not files:
        return None
    import lxml.html

    root = lxml.html.fromstring(files[0].read_text(encoding="utf-8"))
    return [normal(a.text_content()) for art in root.iter("article") if "opinion" in (art.get("class") or "")
            for a in art.iter("aside") if "footnote" in (a.get("class") or "")]


def measure_route(entry: dict, half: str, home: Path, route: str, repeated: set[str],
                  notes: list[str] | None) -> RouteResult:
    result = RouteResult(entry["id"], entry["court"], half, route, "")
    records, result.status = read_route(home / route)
    if not records:
        return result
    expected = entry.get("footnotes")
    openings = footnote_openings(entry, notes)
    if expected == "html":
        expected = len(notes) if notes is not None else None
    for record in records:
        for op in record.opinions:
            result.counts["lines"] += len(op.paragraphs)
            result.counts["footnotes_stored"] += len(op.notes)
            body = loose(" ".join(op.paragraphs))
            if openings:
                result.counts["footnotes_recognised"] += recognised_footnotes(openings, list(op.notes))
                for o in openings:
                    # a short one ("§ 28-105.01(2).") recurs in the body as a citation
                    if len(loose(o)) >= 25 and loose(o) in body:
                        result.note("footnotes_in_body", o)
            else:
                result.counts["footnotes_recognised"] += min(len(op.notes), expected or 0)
                for line in footnote_like_lines(list(op.paragraphs), expected or 0):
                    result.note("footnotes_in_body", line)
        result.sentences.extend(segment(record))
    if isinstance(expected, int):
        result.counts["footnotes_expected"] = expected
    tally(result, result.sentences, repeated, source_text(home / route))
    return result


def tally(result: RouteResult, sentences: list[Sentence], repeated: set[str], source: str) -> None:
    """Count the stored ``sentences``' headings, fragments, running headers, page labels and glued
    marks into ``result`` (``source``: the route's input text, for :func:`bracket_debris`)."""
    debris = bracket_debris([s.text for s in sentences], source)
    result.counts["labels"] += debris
    if debris:
        for s in sentences:
            if EMPTY_BRACKETS.search(s.text) and len(result.examples["labels"]) < 3:
                result.examples["labels"].append(s.text[:157])
    for s in sentences:
        if not s.footnote and is_heading(s.text, s.whole_line):
            result.counts["headings"] += 1
            continue
        result.counts["sentences"] += 1
        reason = fragment_reason(s.text)
        if reason:
            result.note("fragments", f"[{reason}] {s.text}")
        if header_hits(s.text, repeated):
            result.note("headers", s.text)
        if page_labels(s.text):
            result.note("labels", s.text)
        if glued_marks(s.text):
            result.note("glued", ", ".join(glued_marks(s.text)) + " | " + s.text)


def check_pin(pin: dict, results: dict[tuple[str, str], RouteResult]) -> dict:
    """The stored page of a hand-checked sentence against the page read in the source."""
    r = results.get((pin["entry"], pin["route"]))
    out = {**pin, "stored": None, "status": ""}
    if r is None or r.status != "read":
        out["status"] = r.status if r is not None else "no such route"
        return out
    quote = normal(pin["quote"])
    hit = next((s for s in r.sentences if quote in normal(s.text)), None)
    if hit is None:
        out["status"] = "sentence not found"
        return out
    out["stored"] = hit.page
    out["status"] = "right" if hit.page == str(pin["page"]) else "wrong"
    return out


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f} %" if d else "–"


def found_cell(read: list[RouteResult]) -> str:
    """Fragments among the found sentences of ``read`` routes ("n / found (p %)"), or "–" when a
    route's found sentences were not looked up."""
    if not read or any("found" not in r.counts for r in read):
        return "–"
    n = sum(r.counts["found_fragments"] for r in read)
    d = sum(r.counts["found"] for r in read)
    return f"{n} / {d} ({pct(n, d)})"


def court_rows(results: list[RouteResult]) -> list[str]:
    rows = ["| court | half | route | opinions | lines | sentences | fragments | headers | page labels | glued marks "
            "| footnotes recognised / had (stored) | footnote text in body | found sentences: fragments / found |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    groups: dict[tuple[str, str, str], list[RouteResult]] = defaultdict(list)
    for r in results:
        groups[(r.half, r.court, r.route)].append(r)
    for (half, court, route), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "rules", kv[0][1:])):
        read = [r for r in rs if r.status == "read"]
        if not read:
            rows.append(f"| {court} | {half} | {route} | {len(rs)} | {rs[0].status} | | | | | | | | |")
            continue
        c: Counter = sum((r.counts for r in read), Counter())
        had = sum(r.counts["footnotes_expected"] for r in read if "footnotes_expected" in r.counts)
        known = all("footnotes_expected" in r.counts for r in read)
        stored = f"{c['footnotes_recognised']} / {had if known else '?'} ({c['footnotes_stored']})"
        rows.append(f"| {court} | {half} | {route} | {len(read)} | {c['lines']} | {c['sentences']} "
                    f"| {c['fragments']} ({pct(c['fragments'], c['sentences'])}) | {c['headers']} | {c['labels']} "
                    f"| {c['glued']} | {stored} | {c['footnotes_in_body']} | {found_cell(read)} |")
    return rows


KINDS = (("PDF", ("pdf",)), ("CourtListener text of a PDF", ("cl-plain_text",)),
         ("CourtListener html_with_citations", ("cl-html_with_citations",)),
         ("text file", ("text",)), ("CourtListener HTML", ("cl-html", "cl-html_lawbox")), ("CAP HTML", ("cap",)))


def target_rows(results: list[RouteResult], pins: list[dict]) -> list[str]:
    """Issue 34's targets on the held-apart half, per route kind: met (yes), not met (no), or
    not measurable (–)."""
    rows = ["| route kind (held-apart) | footnotes ≥ 95 % | 0 page labels | 0 glued marks | 0 running headers "
            "| found sentences fragments ≤ 2 % | hand-checked pins right |", "|---|---|---|---|---|---|---|"]
    pin_routes = defaultdict(list)
    for p in pins:
        pin_routes[p["route"]].append(p)
    held = {r.entry for r in results if r.half == "held-apart"}

    def yes(ok: bool, shown: str) -> str:
        return f"{'yes' if ok else 'no'} ({shown})"

    for kind, routes in KINDS:
        rs = [r for r in results if r.half == "held-apart" and r.route in routes]
        read = [r for r in rs if r.status == "read"]
        if not read:
            if rs:
                rows.append(f"| {kind} | {rs[0].status} | | | | | |")
            continue
        c, fs, fe = totals(read)
        ps = [p for route in routes for p in pin_routes[route] if p["entry"] in held]
        right = sum(p["status"] == "right" for p in ps)
        rows.append(" | ".join([
            f"| {kind}", yes(fs >= 0.95 * fe, pct(fs, fe)) if fe else "–", yes(not c["labels"], str(c["labels"])),
            yes(not c["glued"], str(c["glued"])), yes(not c["headers"], str(c["headers"])),
            (yes(c["found_fragments"] <= 0.02 * c["found"], f"{pct(c['found_fragments'], c['found'])} of "
                 f"{c['found']}") if found_cell(read) != "–" else "not measured"),
            yes(right == len(ps), f"{right} of {len(ps)}") if ps else "–"]) + " |")
    return rows


def totals(read: list[RouteResult]) -> tuple[Counter, int, int]:
    """The summed counters of routes ``read``, and of those whose footnotes are known, the footnotes
    recognised (at most as many as each has) and the footnotes they have."""
    c: Counter = sum((r.counts for r in read), Counter())
    known = [r for r in read if "footnotes_expected" in r.counts]
    fs = sum(min(r.counts["footnotes_recognised"], r.counts["footnotes_expected"]) for r in known)
    return c, fs, sum(r.counts["footnotes_expected"] for r in known)


def half_rows(results: list[RouteResult]) -> list[str]:
    rows = ["| half | route kind | opinions | sentences | fragments | headers | page labels | glued marks "
            "| footnotes recognised / had (known) | footnote text in body | found sentences: fragments / found |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for half in ("rules", "held-apart"):
        for kind, routes in KINDS:
            rs = [r for r in results if r.half == half and r.route in routes]
            read = [r for r in rs if r.status == "read"]
            if not rs:
                continue
            if not read:
                rows.append(f"| {half} | {kind} | {len(rs)} | {rs[0].status} | | | | | | | |")
                continue
            c, fs, fe = totals(read)
            rows.append(f"| {half} | {kind} | {len(read)} | {c['sentences']} | {c['fragments']} "
                        f"({pct(c['fragments'], c['sentences'])}) | {c['headers']} | {c['labels']} | {c['glued']} "
                        f"| {fs} / {fe} ({pct(fs, fe)}) | {c['footnotes_in_body']} | {found_cell(read)} |")
    return rows


def route_pairs(results: list[RouteResult]) -> list[str]:
    by_entry: dict[str, dict[str, RouteResult]] = defaultdict(dict)
    for r in results:
        if r.status == "read":
            by_entry[r.entry][r.route] = r
    rows = ["| opinion | court | route A | route B | sentences A / B | A found in B | B found in A "
            "| A in B, typography aside | B in A, typography aside |",
            "|---|---|---|---|---:|---:|---:|---:|---:|"]
    pairs = (("pdf", "cl-plain_text"), ("pdf", "cl-html_with_citations"), ("cl-plain_text", "cl-html_with_citations"),
             ("text", "cl-html_with_citations"), ("cl-plain_text", "cl-html_lawbox"),
             ("cl-html_lawbox", "cl-html_with_citations"))
    for entry, routes in sorted(by_entry.items()):
        for a, b in pairs:
            if a in routes and b in routes:
                sa = [s.text for s in routes[a].sentences]
                sb = [s.text for s in routes[b].sentences]
                cells = [pct(round(sentence_overlap(x, y, key) * len(x)), len(x))
                         for key in (normal, loose) for x, y in ((sa, sb), (sb, sa))]
                rows.append(f"| {entry} | {routes[a].court} | {a} | {b} | {len(sa)} / {len(sb)} | "
                            + " | ".join(cells) + " |")
    return rows


def versions() -> str:
    from importlib.metadata import version

    names = ("statinterp", "spacy", "eyecite", "reporters-db", "courts-db", "lxml", "pdfplumber", "pypdfium2",
             "pdfminer.six")
    out = []
    for n in names:
        try:
            out.append(f"{n} {version(n)}")
        except Exception:  # noqa: BLE001 - a library that is not installed is listed as such
            out.append(f"{n} (not installed)")
    done = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True)
    first = (done.stderr or done.stdout).splitlines()
    out.append(first[0] if first else "pdftotext ?")
    return ", ".join(out)


def git_commit() -> str:
    """The commit of statinterp's code: the last commit that changed ``statinterp/`` (the study's
    own commits change only experiments/, reports/ and tests/)."""
    done = subprocess.run(["git", "log", "-1", "--format=%h", "--", "statinterp"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    return done.stdout.strip() or "?"


def measure_found(entry_results: list[RouteResult], set_dir: Path, statutory: list[str]) -> None:
    """The found sentences of each read route of one opinion, for the find terms of the text its
    first read route stores (the same terms for every route)."""
    import tempfile

    read = [r for r in entry_results if r.status == "read"]
    if not read:
        return
    terms = find_terms("\n".join(s.text for s in read[0].sentences), statutory)
    for r in read:
        r.terms = terms
        with tempfile.TemporaryDirectory(prefix="tq-found-") as tmp:
            tally_found(r, found_sentences(set_dir / r.entry / r.route, terms, Path(tmp)))
        r.counts["found"] += 0  # measured, even if nothing was found


def run(set_dir: Path, found: bool = True) -> tuple[list[RouteResult], list[dict], dict]:
    from experiments.text_quality_set import load_manifest

    with open(set_dir / "set.json", encoding="utf-8") as fh:
        routes = {e["id"]: e["routes"] for e in json.load(fh)["entries"]}
    manifest = load_manifest()  # courts, halves, footnotes and pins: the committed manifest's
    missing = [e["id"] for e in manifest["entries"] if e["id"] not in routes]
    if missing:
        raise SystemExit(f"error: {set_dir / 'set.json'}: lacks {', '.join(missing[:3])}; rebuild the set")
    halves = {c: v["half"] for c, v in manifest["courts"].items()}
    statutory = statutory_terms() if found else []
    results: list[RouteResult] = []
    for entry in manifest["entries"]:
        home = set_dir / entry["id"]
        pages = source_pages(home)
        repeated = repeated_page_lines(pages) if pages else set()
        notes = html_footnotes(home)
        here = []
        for route in routes[entry["id"]]:
            print(f"{entry['id']} {route}", file=sys.stderr)
            here.append(measure_route(entry, halves[entry["court"]], home, route, repeated, notes))
        if found:
            measure_found(here, set_dir, statutory)
        results.extend(here)
    index = {(r.entry, r.route): r for r in results}
    pins = [check_pin(p, index) for p in manifest.get("pins", [])]
    return results, pins, manifest


def load_summary(path: Path) -> tuple[str, list[RouteResult]]:
    """An earlier run's commit and its per-route counts (its ``.json``)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    out = []
    for row in data["routes"]:
        r = RouteResult(row["entry"], row["court"], row["half"], row["route"], row["status"])
        r.counts.update({k: row[k] for k in COUNTERS if row.get(k) is not None})
        if row.get("found") is not None:
            r.counts["found"] += 0  # measured
        out.append(r)
    return data.get("commit", "?"), out


def report(results: list[RouteResult], pins: list[dict], manifest: dict, command: str,
           before: tuple[str, list[RouteResult]] | None = None, notes: str = "") -> str:
    courts = manifest["courts"]
    n_courts = len({e["court"] for e in manifest["entries"]})
    lines = [
        "# Text quality of genuine opinions, per court (issue 34)", "",
        f"Regenerate: `{command}` (the set: `python -m experiments.text_quality_set --mirrors MIRRORS --out SET`, "
        "from the repositories and commits of `experiments/text_quality_set.json`).", "",
        f"statinterp's code at commit {git_commit()} (the last commit that changed statinterp/); {versions()}.", "",
        f"{len(manifest['entries'])} opinions of {n_courts} courts; "
        f"{sum(v['half'] == 'rules' for v in courts.values())} courts in the rule-choosing half (*rules*), "
        f"{sum(v['half'] == 'held-apart' for v in courts.values())} held apart. Definitions: "
        "`experiments/text_quality.py`'s docstring. A route is a way the same opinion reaches statinterp: "
        "`pdf` (the court's PDF), `cl-plain_text` (CourtListener's text of that PDF, `pdftotext -layout` as "
        "CourtListener's extractor makes it), `cl-html_with_citations` (that text as CourtListener's citation "
        "step wraps it), `text` (a .txt file), `cl-html`/`cl-html_lawbox` (CourtListener's HTML fields), "
        "`cap` (CAP's case HTML).", "",
        *([notes.strip(), ""] if notes.strip() else []),
        "## Issue 34's targets on the held-apart half", "", *target_rows(results, pins), "",
        "## By half", "", *half_rows(results), "",
        *([f"### Before: the same set on statinterp commit {before[0]}", "", *half_rows(before[1]), ""]
          if before else []),
        "## By court", "", *court_rows(results), "",
        "## Pins checked by hand", "",
    ]
    if pins:
        lines += ["| opinion | route | sentence | page in the source (by hand) | stored page | |",
                  "|---|---|---|---|---|---|"]
        for p in pins:
            lines.append(f"| {p['entry']} | {p['route']} | {p['quote'][:60]} | {p['page']} ({p.get('how', '')}) "
                         f"| {p['stored']} | {p['status']} |")
        right = sum(p["status"] == "right" for p in pins)
        lines += ["", f"{right} of {len(pins)} right."]
    else:
        lines.append("(none recorded)")
    lines += ["", "## Routes compared (share of sentences identical after whitespace normalisation)", "",
              *route_pairs(results), "", "## Examples (first three per opinion and counter)", ""]
    for r in results:
        for kind in ("fragments", "found_fragments", "headers", "labels", "glued", "footnotes_in_body"):
            for ex in r.examples.get(kind, []):
                lines.append(f"- {r.entry} / {r.route} / {kind}: `{ex.replace('`', chr(39))}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", "--data", dest="set_dir", required=True, type=Path,
                    help="the folder experiments.text_quality_set wrote")
    ap.add_argument("--before", type=Path, default=None, metavar="JSON",
                    help="an earlier run's .json (e.g. reports/text_quality_before.json): its figures by half are "
                         "shown beside this run's")
    ap.add_argument("--no-find", dest="find", action="store_false",
                    help="do not ingest each route and look up its find terms (no found-sentence figures; faster)")
    ap.add_argument("--notes", type=Path, default=None, metavar="MD",
                    help="a Markdown file of findings, put at the head of the report")
    add_output_options(ap, "text_quality")
    args = ap.parse_args(argv)
    out = output_path(args, "text_quality")
    if not (args.set_dir / "set.json").is_file():
        print(f"error: --set {args.set_dir}: no set.json (build it with python -m experiments.text_quality_set)",
              file=sys.stderr)
        return 2
    before = load_summary(args.before) if args.before else None
    notes = args.notes.read_text(encoding="utf-8") if args.notes else ""
    results, pins, manifest = run(args.set_dir, found=args.find)
    if before:  # an earlier run's routes take the halves of today's manifest (a court looked at moves to rules)
        for r in before[1]:
            r.half = manifest["courts"].get(r.court, {}).get("half", r.half)
    extra = (f" --before {args.before.as_posix()}" if args.before else "") + (
        f" --notes {args.notes.as_posix()}" if args.notes else "") + ("" if args.find else " --no-find")
    command = f"python -m experiments.text_quality --set SET{extra}{out_options(args, out)}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report(results, pins, manifest, command, before, notes), encoding="utf-8")
    summary = [{"entry": r.entry, "court": r.court, "half": r.half, "route": r.route, "status": r.status,
                **{k: r.counts[k] if k in r.counts else (None if k in UNMEASURED else 0) for k in COUNTERS},
                "terms": r.terms} for r in results]
    out.with_suffix(".json").write_text(json.dumps({"commit": git_commit(), "routes": summary, "pins": pins},
                                                   indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
