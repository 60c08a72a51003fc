"""How ``statinterp find`` segments the labelled sentences, without an ingest (a fast loop).

The data set's cases are read as the ingest reads the data set's zips
(:func:`~statinterp.sources.plaintext.read_dataset`,
each case once, its opinions' non-blank lines as paragraphs: the text the annotators labelled; the
cleaning step of the other readers, which moves footnotes and removes their marks, would change the
labelled sentences themselves) into an in-memory stand-in for a collection, and each term
is found in it by :func:`statinterp.collection.find.find_term` itself (the full-text look-up is
replaced by "every paragraph", which find checks with the exact term pattern anyway). The found
candidates are compared with the labelled sentences by
:func:`statinterp.evaluation.against.compare_with_labelled`, as ``experiments.find_target`` does:
*exact* (same text after whitespace normalisation), *contained* (one lies inside the other) or
*missed*.

Every labelled sentence found but not exactly is then categorised, on the segmentation of its
whole opinion by the same pipeline: *merged* (it lies inside a larger segment: a boundary the
data set has is missing), *split* (segments end inside it: a boundary the data set does not have
was made), or both; and each such boundary by what is there: a line break (with what the line
before ends with and the line after starts with), a semicolon, a colon, an ellipsis, a list
label, a citation, an abbreviation, a quotation, a footnote number ...

The *layout ceiling*: every gap between words that a labelled sentence decides (one inside it
is joined, one at its start or end ends a sentence) is given a layout class from what a
segmenter can see: for a line break, how the line before ends and how the line after starts (a
footnote-number line looked through); inside a line, how the word before ends (period, period
after an abbreviation, colon, list label ...) and what starts after it (capitalised word, list
label, quotation, citation ...). A labelled sentence that find misses at a gap whose class the
data set decides the other way at least as often cannot be matched by a rule for that class
without losing as many others; the report counts those and so the exact rate reachable at best.

Writes ``experiment-results/find_segmentation.md`` (and ``.json``; the committed
``reports/find_segmentation.md`` with ``--out reports/ --force``). Run from the project root::

    python -m experiments.find_segmentation --data ../shared/data/statutory_interpretation
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from experiments.common import add_output_options, output_path
from statinterp.collection.store import ParagraphRow, dataset_case
from statinterp.corpus.dataset import Case
from statinterp.text.segmentation import _is_abbreviation

#: Folds of the held-apart rule choice: 7 folds of 2 terms (the 14 shared terms in sorted order, the
#: i-th in fold i % 7); each fold's rules are chosen on the other 12 terms.
RULE_FOLDS = 7


# ---------------------------------------------------------------------------
# An in-memory collection: the records the ingest would store
# ---------------------------------------------------------------------------


class MemoryCollection:
    """The parts of :class:`~statinterp.collection.store.Collection` that ``find_term`` uses."""

    def __init__(self, records):
        self.folder = Path("memory")
        self._cases: dict[int, Case] = {}
        self._opinions: dict[int, list[dict]] = {}
        self._rows: dict[int, list[ParagraphRow]] = {}
        self._all: list[ParagraphRow] = []
        next_opinion = next_paragraph = 1
        for case_id, rec in enumerate(records, 1):
            ops = []
            for position, op in enumerate(rec.opinions):
                oid = next_opinion
                next_opinion += 1
                rows = []
                for k, text in enumerate(op.paragraphs):
                    rows.append(ParagraphRow(case_id, oid, next_paragraph, k, text))
                    next_paragraph += 1
                self._rows[oid] = rows
                self._all.extend(rows)
                ops.append({"id": oid, "type": op.type, "author": op.author or "", "position": position,
                            "text": "\n".join(op.paragraphs)})
            self._opinions[case_id] = ops
            parts = [rec.head_matter] if rec.head_matter.strip() else []
            parts.extend(o["text"] for o in ops)
            self._cases[case_id] = dataset_case(rec, f"c{case_id}", "\n".join(parts))

    def occurring(self, phrases):
        """Every spelling counts as occurring: the full-text lookup is replaced by "every paragraph"
        here (find checks each with the exact pattern anyway)."""
        return set(phrases)

    #: No pair index: ``find`` asks for the phrase query, which :meth:`paragraphs_matching` ignores.
    has_pairs = False
    #: No word list (a finished shard's): ``find`` asks :meth:`occurring`.
    word_list = None
    allowed_cases = None  # no case filter (Collection.restrict): every case is searched

    @property
    def paragraph_count_estimate(self) -> int:
        return len(self._all)

    def lacks_a_prefix(self, prefix_queries) -> bool:
        """No word is missing here (as :meth:`occurring`: every spelling counts as occurring)."""
        return False

    def paragraphs_matching(self, fts_query: str, pairs: bool = False):
        return iter(self._all)

    def opinion_paragraphs(self, opinion_id: int) -> list[ParagraphRow]:
        return self._rows[opinion_id]

    def case(self, case_id: int, opinions: list[dict] | None = None) -> Case:
        return self._cases[case_id]

    def opinions(self, case_id: int) -> list[dict]:
        return self._opinions[case_id]


def load_records(data: Path):
    """The data set's cases as the find target ingests them (each case once, the text as labelled)."""
    from statinterp.sources.plaintext import read_dataset
    from statinterp.sources.records import CaseRecord

    records: dict[str, CaseRecord] = {}
    for path in sorted(data.glob("*.zip")):
        for record in read_dataset(path):
            if isinstance(record, CaseRecord):
                records.setdefault(record.source_id, record)
    return list(records.values())


# ---------------------------------------------------------------------------
# Locating sentences and describing boundaries
# ---------------------------------------------------------------------------

_SPACE_RE = re.compile(r"\s+")


def _locate(text: str, sentence: str) -> tuple[int, int] | None:
    """Raw span of ``sentence`` in ``text``, whitespace runs matching any whitespace."""
    words = sentence.split()
    if not words:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (m.start(), m.end()) if m else None


_LABEL = r"(?:\((?:\d{1,3}|[A-Za-z]{1,4})\)|\[(?:\d{1,3}|[A-Za-z]{1,4})\]|\d{1,3}\.|[A-Za-z]\.)"
_LABEL_RE = re.compile(r"[“\"‘']*" + _LABEL + r"(?:\s|$)")
_FOOTNOTE_RE = re.compile(r"\d{1,3}")
_CLOSERS = "\"'”’)]}»›"
_QUOTES = "\"'“”‘’«»"
_ABBREV_END_RE = re.compile(r"(?:\b[A-Z][a-z]{0,5}|\b[a-z]{1,5}|[A-Z]\.[A-Z]?|\bNo|\bId|\bid)\.$")
_LABEL_END_RE = re.compile(r"(?:^|\s)[“\"‘']?(?:\((?:\d{1,3}|[A-Za-z]{1,4})\)|[A-Za-z]\.|[ivxIVX]{1,4}\.)$")
_CITATION_RE = re.compile(r"^[(\[](?:[^)\]]*(?:§|\d+\s+[A-Z][\w.]*\s+\d|U\.S\.C|Code|Stat\.|Cal\.|Fed\.|Cir\.|"
                          r"supra|infra|Id\.|id\.|See|see|at \d|App\.|Rptr))")


def line_end_class(line: str) -> str:
    """How a line ends, past closing quotes and brackets (what a segmenter sees)."""
    s = line.rstrip()
    if _FOOTNOTE_RE.fullmatch(s.strip()):
        return "footnote-number"
    core = s.rstrip(_CLOSERS)
    if not core:
        return "bracket"
    last = core[-1]
    if core.endswith(("...", ". . .", "…")):
        return "ellipsis"
    if last == ".":
        return "abbrev." if _ABBREV_END_RE.search(core) else "period"
    if last in "?!":
        return "?!"
    if last in ":;,":
        return last
    if last in "—–-":
        return "dash"
    if last.isdigit():
        return "digit"
    if last.isalpha():
        return "lower" if last.islower() else "upper"
    return "other"


def line_start_class(line: str) -> str:
    """How a line starts (list label, quote, case of the first letter ...)."""
    s = line.strip()
    if _FOOTNOTE_RE.fullmatch(s):
        return "footnote-number"
    prefix = ""
    q = len(s) - len(s.lstrip(_QUOTES))
    if q:
        prefix = "quote+"
        s = s[q:]
    m = _LABEL_RE.match(s)
    if m:
        rest = s[m.end():].lstrip(_QUOTES + "([")
        first = rest[:1]
        after = "Cap" if first.isupper() else "low" if first.islower() else "other"
        return f"{prefix}label+{after}"
    if s.startswith("(") or s.startswith("["):
        return prefix + ("citation" if _CITATION_RE.match(s) else "paren")
    first = s.lstrip(_QUOTES + "([")[:1]
    if s.startswith("§"):
        return prefix + "§"
    if first.isdigit():
        return prefix + "digit"
    if first.isalpha():
        return prefix + ("Cap" if first.isupper() else "low")
    return prefix + "other"


def boundary_category(text: str, left_end: int, right_start: int) -> str:
    """What is at a sentence boundary between ``text[:left_end]`` and ``text[right_start:]``."""
    gap = text[left_end:right_start]
    if "\n" in gap:
        line_start = text.rfind("\n", 0, left_end) + 1
        prev = text[line_start:left_end]
        nxt_end = text.find("\n", right_start)
        nxt = text[right_start: nxt_end if nxt_end >= 0 else len(text)]
        return f"newline: {line_end_class(prev)} | {line_start_class(nxt)}"
    left = text[max(0, left_end - 60):left_end]
    right = text[right_start:right_start + 60]
    core = left.rstrip(_CLOSERS)
    if core.endswith(";"):
        kind = "semicolon"
    elif core.endswith(":"):
        kind = "colon"
    elif core.endswith(("...", ". . .", "…")) or right.startswith(("...", ". . .", "…")):
        kind = "ellipsis"
    elif _LABEL_END_RE.search(left.rstrip()):
        kind = "list label before"
    elif _LABEL_RE.match(right) and not right[:1].isdigit():
        kind = "list label"
    elif re.match(r"\d{1,3}\.\s", right):
        kind = "list label"
    elif _CITATION_RE.match(right):
        kind = "citation after"
    elif re.search(r"[.,;]\d{1,3}$", core) or re.search(r"[a-z]\d{1,3}$", core):
        kind = "footnote number"
    elif core.endswith(".") and _is_abbreviation(core.split()[-1].lstrip(_QUOTES + "([")):
        kind = "abbreviation"
    elif left.rstrip()[-1:] in _QUOTES or right[:1] in _QUOTES:
        kind = "quotation"
    elif core.endswith((".", "?", "!")):
        kind = "sentence punctuation"
    else:
        kind = "other"
    return kind


# ---------------------------------------------------------------------------
# The measurement
# ---------------------------------------------------------------------------


def _norm(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


def _case_hash(text: str) -> str:
    return hashlib.sha256(_norm(text).encode("utf-8", "surrogatepass")).hexdigest()


def measure(data: Path, examples: int = 3, folds: int = RULE_FOLDS, scores_cache: Path | None = None) -> dict:
    from statinterp.collection.find import _joining_pipeline, find_term
    from statinterp.evaluation.against import compare_with_labelled
    from statinterp.text.segmentation import sentence_spans
    from statinterp.workflow import open_corpus

    started = time.perf_counter()
    memory = MemoryCollection(load_records(data))
    case_of_hash = {_case_hash(c.text): cid for cid, c in memory._cases.items()}
    labelled = open_corpus(data)
    nlp = _joining_pipeline()
    segmented: dict[int, list[tuple[int, int]]] = {}

    def segments(oid: int, text: str) -> list[tuple[int, int]]:
        if oid not in segmented:
            segmented[oid] = sentence_spans(nlp(text))
        return segmented[oid]

    terms = []
    outcomes: dict[str, str] = {}
    categories: Counter = Counter()
    category_examples: dict[str, list[str]] = defaultdict(list)
    shapes: Counter = Counter()
    breaks: list[tuple[str, str, str]] = []  # (layout class, "join"/"split", sentence id)
    failing: dict[str, list[tuple[str, str]]] = {}  # missed sentence -> (class, the data set's decision)
    disagree: list[str] = []
    for term in labelled:
        found = find_term(memory, term.query)
        result = compare_with_labelled(found.term_data(term.provision), term)
        found_by_case: dict[str, set[str]] = defaultdict(set)
        for rec in found.tables["sentence"].values():
            found_by_case[rec["case_id"]].add(_norm(rec["text"]))
        row = {"term": term.key, "labelled": result.labelled, "exact": result.found_exact,
               "contained": result.found_contained, "shapes": Counter()}
        for s in term.sentences:
            if s.label is None:
                continue
            sid = f"{term.key}/{s.id}"
            cid = case_of_hash.get(_case_hash(term.cases[s.case_id].text))
            target = _norm(s.text)
            texts = found_by_case.get(f"c{cid}", set())
            if target in texts:
                outcome = "exact"
            elif any(target in t or t in target for t in texts):
                outcome = "contained"
            else:
                outcome = "missed"
            outcomes[sid] = outcome
            # locate it in its case's opinions (collection form) and segment that opinion whole
            where = None
            for op in memory.opinions(cid) if cid else []:
                span = _locate(op["text"], s.text)
                if span:
                    where = (op["id"], op["text"], span)
                    break
            if where is None:
                row["shapes"]["not located"] += 1
                continue
            oid, text, (ls, le) = where
            _collect_gaps(text, ls, le, sid, breaks)
            segs = segments(oid, text)
            starts = [a for a, _ in segs]
            k = max(bisect.bisect_right(starts, ls) - 1, 0)
            over = []
            while k < len(segs) and segs[k][0] < le:
                if segs[k][1] > ls:
                    over.append(segs[k])
                k += 1
            aligned = len(over) == 1 and over[0] == (ls, le)
            if aligned != (outcome == "exact"):
                disagree.append(f"{sid} (find: {outcome}, whole opinion: {'exact' if aligned else 'not exact'})")
            if aligned:
                continue
            cats = []
            points = []
            if over and over[0][0] < ls:  # a boundary the data set has at its start is missing
                cats.append(("merged at start: " + boundary_category(text, _rstrip_at(text, ls), ls), ls))
                points.append((gap_class(text, _rstrip_at(text, ls), ls), "split"))
            if over and over[-1][1] > le:
                cats.append(("merged at end: " + boundary_category(text, le, _lstrip_at(text, le)), le))
                points.append((gap_class(text, le, _lstrip_at(text, le)), "split"))
            for a, b in zip(over, over[1:], strict=False):  # boundaries made inside it
                cats.append(("split: " + boundary_category(text, a[1], b[0]), b[0]))
                points.append((gap_class(text, a[1], b[0]), "join"))
            failing[sid] = points
            shape = ("merged" if over[0][0] < ls or over[-1][1] > le else "") + \
                    ("+" if len(over) > 1 and (over[0][0] < ls or over[-1][1] > le) else "") + \
                    ("split" if len(over) > 1 else "")
            row["shapes"][shape] += 1
            shapes[shape] += 1
            seen = set()
            for c, point in cats:
                if c in seen:
                    continue
                seen.add(c)
                categories[c] += 1
                if len(category_examples[c]) < examples:
                    context = _clip(text[max(0, point - 70):point], 70) + " ⟂ " + _clip(text[point:point + 70], 70)
                    category_examples[c].append(f"{sid} [{outcome}] `{context}`")
        terms.append(row)
    total = {k: sum(r[k] for r in terms) for k in ("labelled", "exact", "contained")}
    ceiling = layout_ceiling(breaks, outcomes, failing)
    choice = rule_choice(memory, labelled, folds, scores_cache) if folds else None
    return {"terms": terms, **total, "outcomes": outcomes, "categories": categories,
            "examples": category_examples, "shapes": shapes, "whole_opinion_disagreements": disagree,
            "ceiling": ceiling, "rule_choice": choice, "seconds": time.perf_counter() - started}


# ---------------------------------------------------------------------------
# The line-joining rules chosen on terms held apart
# ---------------------------------------------------------------------------

class _CachedTokenizer:
    """A pipeline's tokenizer that tokenizes each text once (``cache``: text -> Doc, shared by the
    pipelines of every rule set). A cached Doc is handed out again: the boundary component sets every
    token's sentence start afresh, and ``find`` reads the sentences before the next text."""

    def __init__(self, tokenizer, cache: dict):
        self.tokenizer = tokenizer
        self.cache = cache

    def __call__(self, text: str):
        doc = self.cache.get(text)
        if doc is None:
            doc = self.cache[text] = self.tokenizer(text)
        return doc


def _scoring_fingerprint() -> str:
    """Digest of the code a rule set's scores depend on (the segmenter without its choice of default rules,
    find, the term pattern, the comparison): a scores cache made by other code is not used."""
    import statinterp.collection.find as find
    import statinterp.evaluation.against as against
    import statinterp.text.segmentation as segmentation
    import statinterp.text.term_match as term_match

    digest = hashlib.sha256()
    for module in (segmentation, find, term_match, against):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        digest.update(re.sub(r"(?m)^DEFAULT_JOIN_RULES\b.*$", "", source).encode("utf-8"))
    return digest.hexdigest()


def term_scorer(memory, labelled, cache: Path | None = None) -> Callable[[frozenset[str], str], tuple[int, int]]:
    """``score(rules, term_key)``: (labelled sentences found exactly, found) by ``find``'s sentences
    with the line-joining rules ``rules`` (:func:`~statinterp.collection.find.sentences_around`, the
    matching opinions looked up once per term), memoised per rule set (every term is scored at once).
    ``cache``: a JSON file of the scores of earlier runs, read when made by the same code
    (:func:`_scoring_fingerprint`) and written after each new rule set (a scratch file)."""
    from statinterp.collection.find import _joining_pipeline, matching_opinions, sentences_around, term_data_from_tables
    from statinterp.corpus.dataset import term_key
    from statinterp.evaluation.against import compare_with_labelled

    terms = {t.key: t for t in labelled}
    opinions = {key: matching_opinions(memory, term_key(t.query))[0] for key, t in terms.items()}
    memo: dict[frozenset[str], dict[str, tuple[int, int]]] = {}
    fingerprint = _scoring_fingerprint()
    if cache is not None and cache.exists():
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("fingerprint") == fingerprint:
            memo.update({frozenset(filter(None, k.split(","))): {t: tuple(v) for t, v in scores.items()}
                         for k, scores in stored["scores"].items()})
    tokenized: dict[str, object] = {}  # window text -> its Doc: tokenized once for every rule set

    def score(rules: frozenset[str], key: str) -> tuple[int, int]:
        if rules not in memo:
            memo[rules] = {}
            nlp = _joining_pipeline(rules)
            if not isinstance(nlp.tokenizer, _CachedTokenizer):
                nlp.tokenizer = _CachedTokenizer(nlp.tokenizer, tokenized)
            for k, t in terms.items():
                tables, _ = sentences_around(memory, term_key(t.query), opinions[k], join_rules=rules)
                r = compare_with_labelled(term_data_from_tables(k, tables, t.provision), t)
                memo[rules][k] = (r.found_exact, r.found_contained)
            if cache is not None:
                cache.write_text(json.dumps({"fingerprint": fingerprint, "scores": {
                    ",".join(sorted(rs)): scores for rs, scores in memo.items()}}), encoding="utf-8")
        return memo[rules][key]

    score.memo = memo  # type: ignore[attr-defined]
    return score


def rule_choice(memory, labelled, k: int = RULE_FOLDS, cache: Path | None = None) -> dict:
    """The line-joining rules chosen on all the terms (the default set), and the same choice measured on
    terms held apart from it (:func:`statinterp.evaluation.tuning.held_apart`, ``k`` folds); scores are
    (exact, found) counts of labelled sentences, exact first."""
    from statinterp.evaluation.tuning import choose_rules, held_apart, total_score
    from statinterp.text.segmentation import JOIN_RULES

    started = time.perf_counter()
    score = term_scorer(memory, labelled, cache)
    rules = list(JOIN_RULES)
    terms = sorted(t.key for t in labelled)
    chosen, steps = choose_rules(rules, score, terms)
    apart = held_apart(rules, score, terms, k)
    every = frozenset(rules)
    counts = {t.key: sum(1 for s in t.sentences if s.label is not None) for t in labelled}
    per_term = {t: {"labelled": counts[t], "in_sample": score(chosen, t), "all_rules": score(every, t),
                    "no_rule": score(frozenset(), t)} for t in terms}
    for fold in apart["folds"]:
        for t, value in fold["score"].items():
            per_term[t]["held_apart"] = value
    # each rule alone taken out of the chosen set (or added to it): what it is worth in-sample
    ablation = {r: total_score(score, chosen ^ {r}, terms) for r in rules}
    # the held-apart figure with fewer and more folds (2: chosen on 7 terms; 14: on 13, one term out)
    by_folds = {n: held_apart(rules, score, terms, n)["score"] for n in sorted({2, k, len(terms)})}
    return {"rules": rules, "folds": k, "chosen": [r for r in rules if r in chosen], "steps": steps,
            "in_sample": total_score(score, chosen, terms), "all_rules": total_score(score, every, terms),
            "no_rule": total_score(score, frozenset(), terms), "held_apart": apart["score"],
            "held_apart_folds": apart["folds"], "per_term": per_term, "ablation": ablation,
            "held_apart_by_folds": by_folds,
            "labelled": sum(counts.values()),
            "rule_sets_scored": len(score.memo),  # type: ignore[attr-defined]
            "seconds": time.perf_counter() - started}


def _rstrip_at(text: str, i: int) -> int:
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return i


def _lstrip_at(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _clip(s: str, n: int = 160) -> str:
    s = s.replace("\n", "⏎")
    return s if len(s) <= n else s[: n // 2] + " … " + s[-n // 2:]


# ---------------------------------------------------------------------------
# The layout ceiling
# ---------------------------------------------------------------------------


def break_class(text: str, nl: int) -> str:
    """Layout class of the line break at ``text[nl] == "\\n"``: how the line before ends and the
    line after starts; a footnote-number line between two lines is looked through."""
    line_start = text.rfind("\n", 0, nl) + 1
    prev = text[line_start:nl]
    nxt_end = text.find("\n", nl + 1)
    nxt = text[nl + 1: nxt_end if nxt_end >= 0 else len(text)]
    if _FOOTNOTE_RE.fullmatch(nxt.strip()) and nxt_end >= 0:
        after_end = text.find("\n", nxt_end + 1)
        after = text[nxt_end + 1: after_end if after_end >= 0 else len(text)]
        return f"{line_end_class(prev)} | fn | {line_start_class(after)}"
    if _FOOTNOTE_RE.fullmatch(prev.strip()) and line_start > 0:
        before_start = text.rfind("\n", 0, line_start - 1) + 1
        before = text[before_start:line_start - 1]
        return f"{line_end_class(before)} | fn | {line_start_class(nxt)}"
    return f"{line_end_class(prev)} | {line_start_class(nxt)}"


def _word_end_class(word: str) -> str:
    """How the last word before a gap ends (a label, a period after an abbreviation or a word ...)."""
    if re.fullmatch(r"[“\"‘']?(?:\((?:\d{1,3}|[A-Za-z]{1,4})\))+", word):
        return "label"
    if re.fullmatch(r"[“\"‘']?[a-z]\.", word):
        return "letter label"
    if re.fullmatch(r"[A-Z]\.", word):
        return "initial or heading letter"
    core = word.rstrip(_CLOSERS)
    closed = "+close" if core != word else ""
    if not core:
        return "bracket"
    last = core[-1]
    if core.endswith(("...", "…")):
        cls = "ellipsis"
    elif last == ".":
        bare = core.lstrip(_QUOTES + "([")
        cls = "abbrev." if len(bare) > 1 and _is_abbreviation(bare) else "period"
    elif last in "?!":
        cls = "?!"
    elif last in ";:,":
        cls = last
    elif last in "—–-":
        cls = "dash"
    elif last.isdigit():
        cls = "digit"
    elif last.isalpha():
        cls = "lower" if last.islower() else "upper"
    else:
        cls = "other"
    return cls + closed


def gap_class(text: str, a: int, b: int) -> str:
    """Layout class of the whitespace ``text[a:b]`` between two words: for a line break, how the line
    before ends and the line after starts (:func:`break_class`); inside a line, how the word before
    ends and what starts after it."""
    if "\n" in text[a:b]:
        return "line break: " + break_class(text, a + text[a:b].index("\n"))
    line_start = text.rfind("\n", 0, a) + 1
    words = text[line_start:a].split()
    end = text.find("\n", b)
    return (f"in line: {_word_end_class(words[-1] if words else '')} | "
            f"{line_start_class(text[b: end if end >= 0 else len(text)])}")


def _collect_gaps(text: str, ls: int, le: int, sid: str, out: list) -> None:
    """The gaps between words a labelled sentence at ``text[ls:le]`` decides: the ones inside it are
    joined, the ones at its start and end (when text is there) end a sentence."""
    for m in re.finditer(r"\s+", text[ls:le]):
        out.append((gap_class(text, ls + m.start(), ls + m.end()), "join", sid))
    a = _rstrip_at(text, ls)
    if 0 < a < ls:
        out.append((gap_class(text, a, ls), "split", sid))
    b = _lstrip_at(text, le)
    if le < b < len(text):
        out.append((gap_class(text, le, b), "split", sid))


def layout_ceiling(gaps: list[tuple[str, str, str]], outcomes: dict[str, str],
                   failing: dict[str, list[tuple[str, str]]]) -> dict:
    """The exact rate a segmenter deciding each gap by its layout class can reach at best.

    Every gap the labelled sentences decide is tallied by class (joined / split). A sentence not
    found exactly is *against the data set* when one of the gaps find decides differently is in a
    class where the data set itself decides that way as often or more often than the way it did
    here: a rule for the class that fixed it would break at least as many others. The rest are
    *fixable in principle* (the data set mostly decides their class as it did here)."""
    by_class: dict[str, Counter] = defaultdict(Counter)
    for cls, decision, _ in gaps:
        by_class[cls][decision] += 1
    other = {"join": "split", "split": "join"}
    against: dict[str, list[str]] = {}
    fixable: dict[str, list[str]] = {}
    for sid, points in failing.items():
        if outcomes.get(sid) == "exact":
            continue
        bad = [f"{cls} ({decision})" for cls, decision in points
               if by_class[cls][decision] <= by_class[cls][other[decision]]]
        if bad:
            against[sid] = bad
        else:
            fixable[sid] = [f"{cls} ({decision})" for cls, decision in points]
    inconsistent = {sid for sid, points in failing.items() if outcomes.get(sid) != "exact"
                    and any(by_class[cls]["join"] and by_class[cls]["split"] for cls, _ in points)}
    n = len(outcomes)
    exact = sum(1 for o in outcomes.values() if o == "exact")
    against_classes: Counter = Counter(c for v in against.values() for c in set(v))
    fixable_classes: Counter = Counter(c for v in fixable.values() for c in set(v))
    not_exact = n - exact
    return {
        "labelled": n, "exact": exact, "not_exact": not_exact,
        "against": len(against), "fixable": len(fixable), "in_inconsistent_classes": len(inconsistent),
        "unexplained": not_exact - len(against) - len(fixable),
        "ceiling_rate": (n - len(against)) / n if n else None,
        "gaps": len(gaps), "classes": len(by_class),
        "inconsistent_classes": {cls: dict(c) for cls, c in by_class.items() if c["join"] and c["split"]},
        "against_classes": against_classes, "fixable_classes": fixable_classes,
        "class_counts": {cls: dict(c) for cls, c in by_class.items()},
    }


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _ranked(counter, top: int | None = None) -> list:
    """``counter.most_common(top)`` with ties in key order, so the report does not depend on the
    order in which the counts were made (set iteration follows the hash seed)."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))[:top]


def report(result: dict, command: str, top: int = 40, provenance: dict | None = None) -> str:
    from statinterp.provenance import provenance_lines

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f}%" if b else "n/a"

    n = result["labelled"]
    lines = ["# find: how the labelled sentences are segmented (no ingest)", "", "Produced by:", "", "```",
             command, "```", "",
             *([f"- Date: {provenance['date']}", *provenance_lines(provenance), ""] if provenance else []),
             f"Whole run {result['seconds']:.0f} s. Each term is found by `find_term` in an in-memory collection of "
             "the data set's cases (as the find target ingests them) and compared with `compare_with_labelled`.", "",
             f"Exact: **{result['exact']}/{n} ({pct(result['exact'], n)})**; found (containment): "
             f"{result['contained']}/{n} ({pct(result['contained'], n)}).", "",
             "| term | labelled | exact | contained |", "|---|---:|---:|---:|"]
    for r in result["terms"]:
        lines.append(f"| {r['term']} | {r['labelled']} | {r['exact']} ({pct(r['exact'], r['labelled'])}) | "
                     f"{r['contained']} ({pct(r['contained'], r['labelled'])}) |")
    lines += ["", f"Segmenting whole opinions instead of find's windows of joinable lines gives a different exact "
              f"result for {len(result['whole_opinion_disagreements'])} labelled sentence(s)"
              + "".join(f"; {d}" for d in result["whole_opinion_disagreements"]) + ".", "",
              "## Misses by shape", "", "| shape | sentences |", "|---|---:|"]
    for shape, c in _ranked(result["shapes"]):
        lines.append(f"| {shape} | {c} |")
    lines += ["", "## Misses by boundary (a sentence counts once per category it shows)", "",
              "| boundary | sentences |", "|---|---:|"]
    for cat, c in _ranked(result["categories"], top):
        lines.append(f"| {cat} | {c} |")
    c = result["ceiling"]
    counts = c["class_counts"]

    def tally(key: str) -> str:
        cls = key.rsplit(" (", 1)[0]
        return f"{counts[cls].get('join', 0)} | {counts[cls].get('split', 0)}"

    lines += ["", "## The layout ceiling", "",
              f"The labelled sentences decide {c['gaps']} gaps between words (a gap inside one is joined, one at "
              f"its start or end ends a sentence), in {c['classes']} layout classes (a line break by how the line "
              f"before ends and the line after starts, a footnote-number line looked through; a gap inside a line "
              f"by how the word before ends and what starts after it). The data set decides both ways in "
              f"{len(c['inconsistent_classes'])} classes.", "",
              f"Of the {c['not_exact']} labelled sentences not found exactly, {c['in_inconsistent_classes']} miss at a "
              f"gap in one of those classes (layouts the data set treats both ways); "
              f"**{c['against']}** miss at a gap whose "
              f"class the data set decides the other way at least as often (a rule for the class that fixed them "
              f"would break as many or more), {c['fixable']} miss only at gaps whose class the data set mostly "
              f"decides as it did there (fixable in principle by a rule for the class, if finer features tell "
              f"the exceptions apart), {c['unexplained']} are not located or not classified. "
              f"So at best **{pct(c['labelled'] - c['against'], c['labelled'])}** "
              f"({c['labelled'] - c['against']}/{c['labelled']}) are reachable by a segmenter deciding by these "
              f"classes.", "",
              "Against the data set's own majority (sentences; the class's joined | split gaps):", "",
              "| gap class (decision the data set made here) | sentences | joined | split |", "|---|---:|---:|---:|"]
    for key, k in _ranked(c["against_classes"], top):
        lines.append(f"| {key} | {k} | {tally(key)} |")
    lines += ["", "Fixable in principle:", "",
              "| gap class (decision the data set made here) | sentences | joined | split |", "|---|---:|---:|---:|"]
    for key, k in _ranked(c["fixable_classes"], top):
        lines.append(f"| {key} | {k} | {tally(key)} |")
    if result.get("rule_choice"):
        lines += rule_choice_lines(result["rule_choice"])
    lines += ["", "## Examples", ""]
    for cat, _ in _ranked(result["categories"], top):
        lines.append(f"### {cat}")
        lines += [f"- {e}" for e in result["examples"][cat]]
        lines.append("")
    return "\n".join(lines) + "\n"


def _rate(score, n: int) -> str:
    """``(exact, found)`` as "exact x/n (p%), found y/n (q%)"."""
    return (f"exact {score[0]}/{n} ({100 * score[0] / n:.1f}%), found {score[1]}/{n} ({100 * score[1] / n:.1f}%)")


def rule_choice_lines(rc: dict) -> list[str]:
    """The report's section on the line-joining rules chosen on terms held apart."""
    from statinterp.text.segmentation import DEFAULT_JOIN_RULES, JOIN_RULES

    n = rc["labelled"]
    chosen = rc["chosen"]
    shipped = sorted(DEFAULT_JOIN_RULES) == sorted(chosen)
    lines = ["", "## The line-joining rules chosen on terms held apart", "",
             f"Each line-joining rule of `build_pipeline(join_lines=True)` can be switched on or off by name "
             f"(`statinterp.text.segmentation.JOIN_RULES`). A rule set is scored by `find`'s sentences with it "
             f"(exact, then found, labelled sentences; summed over terms). Rules are chosen by ablation "
             f"(`statinterp.evaluation.tuning.choose_rules`): each rule is taken out of the full set alone "
             f"and kept when that lowers the score on the terms the choice is made on. *Held apart*: the 14 terms "
             f"in sorted order dealt into {rc['folds']} folds (the i-th term in fold i mod {rc['folds']}); each "
             f"fold's terms are scored with the rules chosen on the other folds' terms, and the scores are summed: "
             f"every term is measured by rules chosen without it. That is what the procedure predicts for terms it "
             f"has not seen. {rc['rule_sets_scored']} rule sets scored, {rc['seconds']:.0f} s.", "",
             "| rules | exact | found |", "|---|---:|---:|"]
    for label, key in (("no line-joining rule", "no_rule"), ("every rule", "all_rules"),
                       ("chosen on all 14 terms, measured on them (in-sample)", "in_sample"),
                       (f"chosen without the term ({rc['folds']} folds, held apart)", "held_apart")):
        v = rc[key]
        lines.append(f"| {label} | {v[0]}/{n} ({100 * v[0] / n:.1f}%) | {v[1]}/{n} ({100 * v[1] / n:.1f}%) |")
    lines += ["", "The held-apart figure by number of folds (rules chosen on fewer terms with fewer folds):", "",
              "| folds | terms the rules are chosen on | exact | found |", "|---:|---:|---:|---:|"]
    n_terms = len(rc["per_term"])
    for k, v in rc["held_apart_by_folds"].items():
        lines.append(f"| {k} | about {n_terms - n_terms // int(k)} | {v[0]}/{n} ({100 * v[0] / n:.1f}%) | "
                     f"{v[1]}/{n} ({100 * v[1] / n:.1f}%) |")
    lines += ["", "Chosen on all 14 terms: " + (", ".join(f"`{r}`" for r in chosen) or "none")
              + ". Not chosen (taking it out alone loses nothing): "
              + (", ".join(f"`{r}`" for r in rc["rules"] if r not in chosen) or "none") + ". "
              + ("This is the default set `find` ships (`DEFAULT_JOIN_RULES`)." if shipped else
                 "**The default set `find` ships (`DEFAULT_JOIN_RULES`) differs from this choice.**"), "",
              "| fold: terms held apart | rules chosen on the other terms (not chosen: ...) | held apart exact |",
              "|---|---|---|"]
    for fold in rc["held_apart_folds"]:
        missing = [r for r in rc["rules"] if r not in fold["chosen"]]
        scores = "; ".join(f"{t} {v[0]}" for t, v in fold["score"].items())
        lines.append(f"| {', '.join(fold['held_apart'])} | {len(fold['chosen'])} rules (not: "
                     f"{', '.join(missing) or 'none'}) | {scores} |")
    apart_exact, in_exact = rc["held_apart"][0], rc["in_sample"][0]
    lost = {t: row["in_sample"][0] - row["held_apart"][0] for t, row in rc["per_term"].items()
            if row["in_sample"][0] != row["held_apart"][0]}
    lines += ["", f"Held apart loses {in_exact - apart_exact} exact sentences against the in-sample choice"
              + (": " + ", ".join(f"{t} {-d:+d}" for t, d in lost.items()) if lost else "")
              + ", on the terms whose fold dropped a rule that only they call for (the fold table). What the "
              "figure does not measure: the rules themselves (their patterns) were written looking at the misses "
              "of all 14 terms, and the procedure only chooses among them; so it is an upper estimate for terms "
              "laid out unlike these 14, and the gap between no rule and every rule (above) is what is at stake.", "",
              "Per term (exact labelled sentences):", "",
              "| term | labelled | no rule | every rule | in-sample | held apart |", "|---|---:|---:|---:|---:|---:|"]
    for t, row in rc["per_term"].items():
        lines.append(f"| {t} | {row['labelled']} | {row['no_rule'][0]} | {row['all_rules'][0]} | "
                     f"{row['in_sample'][0]} | {row['held_apart'][0]} |")
    full = rc["all_rules"]
    lines += ["", "The ablation on all 14 terms: every rule but this one (against every rule: "
              f"{full[0]} exact, {full[1]} found), and the chosen set with this rule toggled:", "",
              "| rule | chosen | every rule but it: exact | found | chosen set toggled: exact | found | what it does |",
              "|---|---|---:|---:|---:|---:|---|"]
    without = {step["rule"]: step["score"] for step in rc["steps"][1:]}
    for r in rc["rules"]:
        v, t = without[r], rc["ablation"][r]
        lines.append(f"| `{r}` | {'yes' if r in chosen else 'no'} | {v[0]} ({v[0] - full[0]:+d}) | "
                     f"{v[1]} ({v[1] - full[1]:+d}) | {t[0]} ({t[0] - rc['in_sample'][0]:+d}) | "
                     f"{t[1]} ({t[1] - rc['in_sample'][1]:+d}) | {JOIN_RULES[r]} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("..") / "shared" / "data" / "statutory_interpretation")
    add_output_options(parser, "find_segmentation")
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--folds", type=int, default=RULE_FOLDS,
                        help="Folds of the held-apart choice of line-joining rules (0: skip it).")
    parser.add_argument("--scores-cache", type=Path, default=None,
                        help="A scratch JSON file keeping each rule set's scores between runs (used only when made "
                             "by the same code).")
    parser.add_argument("--compare", type=Path, default=None,
                        help="A previous run's .json: list the sentences gained and lost since.")
    args = parser.parse_args(argv)
    out = output_path(args, "find_segmentation")
    result = measure(args.data, args.examples, args.folds, args.scores_cache)
    given = list(argv if argv is not None else sys.argv[1:])
    for scratch in ("--compare", "--scores-cache"):  # scratch files, not part of what makes the report
        at = given.index(scratch) if scratch in given else -1
        given = given[:at] + given[at + 2:] if at >= 0 else [a for a in given if not a.startswith(scratch + "=")]
    given = [("../" + "/".join(Path(a).parts[-3:]) if a == str(args.data) and Path(a).is_absolute() else a)
             for a in given]
    from statinterp.cache import files as atomic
    from statinterp.provenance import report_json, run_provenance

    command = ("python -m experiments.find_segmentation " + " ".join(given)).strip()
    provenance = run_provenance(command)
    text = report(result, command, provenance=provenance)
    payload = {k: v for k, v in result.items() if k not in ("examples",)}
    payload["provenance"] = provenance
    atomic.write_set({out: text, out.with_suffix(".json"): report_json(payload, indent=1, default=dict)},
                     force=True)
    print(f"exact {result['exact']}/{result['labelled']}, contained {result['contained']}/{result['labelled']}, "
          f"{result['seconds']:.0f} s", file=sys.stderr)
    if args.compare is not None:
        before = json.loads(args.compare.read_text(encoding="utf-8"))["outcomes"]
        rank = {"missed": 0, "contained": 1, "exact": 2}
        gains = sorted(s for s, o in result["outcomes"].items() if rank[o] > rank[before.get(s, "missed")])
        losses = sorted(s for s, o in result["outcomes"].items() if rank[o] < rank[before.get(s, "missed")])
        print(f"gained {len(gains)}, lost {len(losses)}", file=sys.stderr)
        for s in losses:
            print("  lost", s, before.get(s), "->", result["outcomes"][s], file=sys.stderr)
        for s in gains:
            print("  gained", s, before.get(s), "->", result["outcomes"][s], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
