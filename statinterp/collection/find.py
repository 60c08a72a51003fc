"""Find every sentence of a collection that mentions a term, in the data set's format.

:func:`find_term` asks the collection's FTS5 indexes for the paragraphs that may mention the
term (:func:`candidate_paragraphs`: a superset made of the spellings that occur in the
collection; for a term of several words, from the index of adjacent word pairs,
:func:`~statinterp.text.term_match.fts_pair_query`, else
:func:`~statinterp.text.term_match.fts_exact_query`'s phrases), checks them with the exact
pattern (:func:`~statinterp.text.term_match.term_pattern`), segments the text around each
matching paragraph into sentences and keeps the sentences holding a match. In a set of shards
(:class:`~statinterp.collection.shards.ShardSet`) the lookup and the pattern run on each
selected shard side by side and the matching opinions are merged in case id order
(:func:`matching_opinions`): the same tables as in a single file of the same sources.

Segmentation is the project's legal segmenter with line joining
(``build_pipeline(join_lines=True)``): a sentence broken by a footnote-number line or
continued by a quoted list item ("... that—\\n(A) is primarily designed ...") stays one
sentence, as the annotated data set has it. Only a window of lines around each matching
paragraph is segmented: the paragraph and the lines before and after it that the segmenter
could join to it (:func:`~statinterp.text.segmentation.lines_may_join`, a text test that never
says no where the segmenter joins), so the work grows with the number of matches, not with
the size of the collection.

The output (:class:`FoundTerm`) holds the data set's four tables, ``case``, ``opinion``,
``paragraph`` and ``sentence`` (no labels), each a dict ``id -> record``: the cases as
:class:`~statinterp.corpus.dataset.Case` (:meth:`~statinterp.collection.store.Collection.case`,
with their whole text), the others with the data set's fields: every opinion of a case that has a match, one paragraph
per line range a found sentence spans (a line, or the lines a joined sentence crosses), and
the sentences, each with its ``pin_cite`` (:mod:`statinterp.corpus.pin_cites`) and, when the
collection knows it, its ``pin_page``: the page at the sentence's first character
(:meth:`~statinterp.collection.store.ParagraphRow.page_at`). :func:`write_term_zip` writes
them as ``TERM.zip``, which every command reads with ``--data``. Ids: case ``c<case id>``,
opinion ``o<opinion id>``, paragraph ``o<opinion id>-l<first line>[-<last line>]``, sentence
``<paragraph id>-s<position>``.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statinterp.cache import files as atomic
from statinterp.collection.shards import ShardSet, each_part, open_collection
from statinterp.collection.store import Collection, ParagraphRow
from statinterp.corpus.dataset import (
    KINDS,
    Case,
    Opinion,
    Paragraph,
    Sentence,
    TermData,
    found_records,
    query_of,
    tables_zip_bytes,
    term_key,
)
from statinterp.corpus.pin_cites import format_cite, paragraph_number, parse_cite, slip_docket
from statinterp.corpus.provisions import Provision
from statinterp.text.headings import LABEL_RE, MAX_LINE_CHARS, is_heading_line, table_rows
from statinterp.text.segmentation import build_pipeline, lines_may_join, sentence_spans
from statinterp.text.term_match import (
    fts_exact_query,
    fts_near_query,
    fts_pair_query,
    fts_pair_query_from_tokens,
    fts_word_options,
    fts_word_prefixes,
    list_questions,
    term_pattern,
)

__all__ = ["FoundTerm", "FoundTables", "MatchingOpinion", "candidate_paragraphs", "find_term", "matching_opinions",
           "merge_found_tables", "sentences_around", "write_term_zip", "term_data_from_tables"]

#: Above this many paragraphs from the pair query, :func:`candidate_paragraphs` reads only those that
#: the positions of the term's content words allow (benchmarks/RESULTS.md, "find").
POSITION_CHECK_ROWS = 256

#: Up to this many paragraphs, :func:`candidate_paragraphs` first asks whether each word's prefix
#: (:func:`~statinterp.text.term_match.fts_word_prefixes`) starts a token there: one seek, cheaper
#: than one per spelling's token in a small collection (a shard); in larger ones the prefix's
#: merged postings cost more than they save (94 k paragraphs: about even; benchmarks/RESULTS.md,
#: "find over a set of shards").
PREFIX_CHECK_PARAGRAPHS = 20_000

#: A filter (``--court``, ``--since``, ...) keeping at most this many cases of a collection is applied
#: to the pair query's paragraph ids from the index by case, before the position check and any row
#: is read; a wider one when the rows are read (in SQL, before their text is).
NARROW_FILTER_CASES = 5_000

#: find's four tables, kind -> id -> record: the cases as :class:`~statinterp.corpus.dataset.Case`,
#: the opinions, paragraphs and sentences as records with the data set's fields.
Tables = dict[str, dict[str, Any]]

#: At most this many lines are joined to a matching line on each side.
MAX_JOIN_LINES = 12


@functools.lru_cache(maxsize=4)
def _joining_pipeline(join_rules: frozenset[str] | None = None):
    """The line-joining pipeline with the line-joining rules ``join_rules`` (``None``: the default set)."""
    from statinterp.text import MAX_TEXT_CHARS

    nlp = build_pipeline(legal_rules=True, join_lines=True, join_rules=join_rules)
    nlp.max_length = max(nlp.max_length, MAX_TEXT_CHARS + 1)  # a window of lines lies inside one case text
    return nlp


@dataclass
class FoundTerm:
    """The sentences of a collection that mention a term, as the data set's four tables."""

    key: str
    query: str
    tables: Tables
    paragraphs_searched: int = 0  # paragraphs the FTS5 query returned
    paragraphs_matched: int = 0  # of those, paragraphs the exact pattern matched
    collection: str = ""
    sentence_case: dict[str, int] = field(default_factory=dict)  # sentence id -> collection case id
    filters: dict[str, Any] = field(default_factory=dict)  # the case filter applied (CaseFilter.as_dict)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: len(self.tables[kind]) for kind in KINDS}

    def summary(self) -> str:
        c = self.counts
        return (f"found {c['sentence']} sentence(s) mentioning {self.query!r} in {c['paragraph']} paragraph(s), "
                f"{c['opinion']} opinion(s), {c['case']} case(s) "
                f"({self.paragraphs_matched} of {self.paragraphs_searched} full-text hits matched the term)")

    def term_data(self, provision: Provision | None = None) -> TermData:
        """The found sentences as a :class:`~statinterp.corpus.dataset.TermData` (no labels)."""
        return term_data_from_tables(self.key, self.tables, provision, source=self.collection)


def term_data_from_tables(key: str, tables: Tables, provision: Provision | None = None,
                          source: str = "") -> TermData:
    """A :class:`TermData` from the data set's four tables (those :func:`find_term` makes)."""
    cases: dict[str, Case] = dict(tables["case"])
    opinions = {oid: Opinion(oid, r["case_id"], r["text"], r.get("type", ""), r.get("author", ""), r.get("position"))
                for oid, r in tables["opinion"].items()}
    paragraphs = {pid: Paragraph(pid, r["case_id"], r["opinion_id"], r["text"], r.get("position"))
                  for pid, r in tables["paragraph"].items()}
    sentences = [Sentence(sid, r["case_id"], r["opinion_id"], r["paragraph_id"], r["text"], r.get("label"),
                          r.get("position"), r.get("pin_page") or "", r.get("pin_cite") or "")
                 for sid, r in tables["sentence"].items()]
    return TermData(key, query_of(key), cases, opinions, paragraphs, sentences, provision, source)


def _window(lines: list[str], i: int, join_rules: frozenset[str] | None = None) -> tuple[int, int]:
    """First and last line (inclusive) to segment around matching line ``i``: the lines the
    segmenter could join to it (:func:`~statinterp.text.segmentation.lines_may_join`)."""
    lo = i
    while lo > 0 and i - lo < MAX_JOIN_LINES and lines_may_join(lines[lo - 1], lines[lo], join_rules):
        lo -= 1
    hi = i
    while hi + 1 < len(lines) and hi - i < MAX_JOIN_LINES and lines_may_join(lines[hi], lines[hi + 1], join_rules):
        hi += 1
    return lo, hi


def candidate_paragraphs(collection: Collection | ShardSet, term: str) -> Iterator[ParagraphRow]:
    """The paragraphs of ``collection`` in which ``term``'s pattern may match (a superset), made of
    the spellings that occur in the collection: for a term of several words in a collection with
    the pair index, the pair query (:func:`~statinterp.text.term_match.fts_pair_query`), else the
    phrase query (:func:`~statinterp.text.term_match.fts_exact_query`); none when a word of the
    term has no spelling there (in a collection of at most :data:`PREFIX_CHECK_PARAGRAPHS`
    paragraphs, known from one prefix query per word first: a shard lacking a word costs that
    one statement).

    The pair query's paragraphs are found from the index first; above :data:`POSITION_CHECK_ROWS`
    of them, only those that the positions of the term's content words also allow
    (:func:`~statinterp.text.term_match.fts_near_query`, when it makes a query) are read: the pairs
    of a match lie together, those of other paragraphs may lie apart, and a paragraph read costs a
    disk read when the collection is not in memory.

    On a shard set, each selected shard is searched by itself, side by side, and the paragraphs
    are merged in case order (paragraph ids are each shard's own); a shard whose word list lacks a
    word of the term is passed over unopened (:meth:`~statinterp.collection.shards.ShardSet.may_hold`)."""
    if isinstance(collection, ShardSet):
        parts = collection.map_selected(lambda shard: list(candidate_paragraphs(shard, term)), term=term)
        return heapq.merge(*parts, key=lambda row: row.case_id)
    if collection.allowed_cases is not None and not collection.allowed_cases:
        return iter(())  # the filter (--court, --since, ...) keeps no case here
    if collection.word_list is None and collection.paragraph_count_estimate <= PREFIX_CHECK_PARAGRAPHS and \
            collection.lacks_a_prefix(fts_word_prefixes(term)):
        return iter(())  # a word of the term has no spelling here (a shard without it: most shards)
    pairs = collection.has_pairs and len(fts_word_options(term)) > 1
    if pairs and collection.word_list is not None:  # a shard with a word list: made from it, nothing asked
        words = collection.word_list
        held = words.holds(list_questions(term, words.pairs))
        query = fts_pair_query_from_tokens(term, held, pairs_known=words.pairs)
    else:
        query = (fts_pair_query if pairs else fts_exact_query)(term, collection.occurring)
    if query is None:
        return iter(())
    if not pairs:
        return collection.paragraphs_matching(query)
    ids = collection.paragraph_ids_matching(query, pairs=True)
    if collection.allowed_cases is not None and len(collection.allowed_cases) <= NARROW_FILTER_CASES:
        ids &= collection.allowed_paragraph_ids() or set()  # a narrow filter: its paragraphs, from the index
    if len(ids) > POSITION_CHECK_ROWS:
        near = fts_near_query(term, collection.occurring)
        if near is not None:
            ids &= collection.paragraph_ids_matching(near)
    return collection.paragraphs_with_ids(ids)


@dataclass(frozen=True)
class MatchingOpinion:
    """An opinion with a paragraph (line) that mentions the term: its id, its case's id and the
    ids of its matching paragraphs, in position order."""

    opinion_id: int
    case_id: int
    paragraph_ids: tuple[int, ...]


def matching_opinions(collection: Collection | ShardSet, term: str) -> tuple[list[MatchingOpinion], int, int]:
    """The opinions of ``collection`` with a paragraph that ``term``'s exact pattern matches, in
    case / opinion / position order, with the number of paragraphs the full-text lookup returned
    and the number of those the pattern matched. In a shard set, each selected shard is searched
    side by side (:func:`~statinterp.collection.shards.each_part`: its own
    :func:`candidate_paragraphs`) and the opinions merged in case id order (a case lies in one
    shard): the opinions of a single-file collection of the same sources."""
    query = query_of(term_key(term))
    parts = each_part(collection, _matching_in_part, query,
                      located=lambda part: ((o.case_id, o.opinion_id) for o in part[0]), term=query)
    opinions = list(heapq.merge(*(part[0] for part in parts), key=lambda o: o.case_id))
    return opinions, sum(part[1] for part in parts), sum(part[2] for part in parts)


def _matching_in_part(collection: Collection, query: str) -> tuple[list[MatchingOpinion], int, int]:
    """:func:`matching_opinions` of one single-file collection (a shard)."""
    pattern = term_pattern(query)
    by_opinion: dict[int, list[int]] = {}
    case_of_opinion: dict[int, int] = {}
    searched = matched = 0
    for row in candidate_paragraphs(collection, query):
        searched += 1
        if pattern.search(row.text) is None:
            continue
        matched += 1
        by_opinion.setdefault(row.opinion_id, []).append(row.paragraph_id)
        case_of_opinion[row.opinion_id] = row.case_id
    opinions = [MatchingOpinion(oid, case_of_opinion[oid], tuple(pids)) for oid, pids in by_opinion.items()]
    return opinions, searched, matched


#: The data set's four tables (:data:`Tables`) and, per sentence id, the collection id of its case.
FoundTables = tuple[Tables, dict[str, int]]


def sentences_around(collection: Collection | ShardSet, term: str, opinions: list[MatchingOpinion], *,
                     progress: Callable[[int], None] | None = None,
                     join_rules: frozenset[str] | None = None, headings: bool = False) -> FoundTables:
    """The sentences of ``opinions`` (from :func:`matching_opinions`) that mention ``term``, with
    their paragraphs, opinions and cases, as the data set's tables. Every case's opinions must all
    be in ``opinions`` together (tables of consecutive runs of the list, merged in order, equal
    the tables of the whole list: :func:`merge_found_tables`). ``progress`` is called with 1
    after each case. ``join_rules``: the segmentation's line-joining rules (names of
    :data:`~statinterp.text.segmentation.JOIN_RULES`; ``None``: the default set, what ``find`` uses).
    A sentence that is a whole heading line (:func:`~statinterp.text.headings.is_heading_line`:
    "III. Summary Judgment", "General rule") is left out unless ``headings``, a sentence in a
    table's row (:func:`~statinterp.text.headings.table_rows`) always; each sentence of
    the opinion's paragraphs gets the heading it stands under, when it has one, as ``section``."""
    pattern = term_pattern(query_of(term_key(term)))
    nlp = _joining_pipeline(join_rules)
    tables: Tables = {kind: {} for kind in KINDS}
    sentence_case: dict[str, int] = {}
    cases_done: set[int] = set()
    per_paragraph: dict[str, int] = {}
    for matching in opinions:
        opinion_id, case_id, paragraph_ids = matching.opinion_id, matching.case_id, matching.paragraph_ids
        rows = collection.opinion_paragraphs(opinion_id)
        lines = [r.text for r in rows]
        line_of = {r.paragraph_id: k for k, r in enumerate(rows)}
        starts = [0]
        for text in lines:
            starts.append(starts[-1] + len(text) + 1)  # lines joined by "\n"
        opinion_text = "\n".join(lines)
        # Windows around the matching lines (merged where they overlap), segmented together.
        windows: list[tuple[int, int, list[int]]] = []
        for paragraph_id in paragraph_ids:
            k = line_of[paragraph_id]
            lo, hi = _window(lines, k, join_rules)
            if windows and lo <= windows[-1][1]:
                plo, phi, targets = windows[-1]
                windows[-1] = (plo, max(phi, hi), targets + [k])
            else:
                windows.append((lo, hi, [k]))
        texts = [opinion_text[starts[lo]: starts[hi + 1] - 1] for lo, hi, _ in windows]
        found_here: dict[tuple[int, int], None] = {}
        rows_of_tables: set[int] | None = None  # the opinion's table rows, found when first asked
        for (lo, _, targets), doc in zip(windows, nlp.pipe(texts, batch_size=32, disable=["lemmatizer"]), strict=True):
            base = starts[lo]
            target_spans = [(starts[k], starts[k + 1] - 1) for k in targets]
            for s, e in sentence_spans(doc):
                start, end = base + s, base + e
                if not any(start < te and end > ts for ts, te in target_spans):
                    continue
                if pattern.search(opinion_text, start, end) is None:
                    continue
                if not headings and _is_heading_sentence(lines, starts, start, end, rows):
                    continue
                if rows_of_tables is None:
                    rows_of_tables = table_rows(lines)
                if rows_of_tables and all(k in rows_of_tables for k in range(
                        _line_index(starts, start), _line_index(starts, end - 1) + 1)):
                    continue  # it lies in a table's rows: no sentence (text.headings.table_rows)
                found_here[(start, end)] = None
        if not found_here:
            continue

        oid = f"o{opinion_id}"
        cid = f"c{case_id}"
        if case_id not in cases_done:
            cases_done.add(case_id)
            case_opinions = collection.opinions(case_id)
            tables["case"][cid] = collection.case(case_id, case_opinions)
            for op in case_opinions:
                tables["opinion"][f"o{op['id']}"] = {"case_id": cid, "author": op["author"], "type": op["type"],
                                                    "position": op["position"], "text": op["text"]}
            if progress is not None:
                progress(1)
        pin = _PinCites(tables["case"][cid], rows)
        sections = _Sections(lines, rows)
        for start, end in sorted(found_here):
            first = _line_index(starts, start)
            last = _line_index(starts, end - 1)
            pid = f"{oid}-l{first}" if first == last else f"{oid}-l{first}-{last}"
            if pid not in tables["paragraph"]:
                tables["paragraph"][pid] = {"case_id": cid, "opinion_id": oid, "position": first,
                                            "text": opinion_text[starts[first]: starts[last + 1] - 1]}
            position = per_paragraph.get(pid, 0)
            per_paragraph[pid] = position + 1
            sid = f"{pid}-s{position}"
            tables["sentence"][sid] = {"case_id": cid, "opinion_id": oid, "paragraph_id": pid,
                                       "position": position, "text": opinion_text[start:end],
                                       **pin.fields(first, start - starts[first]), **sections.fields(first)}
            sentence_case[sid] = case_id
    return tables, sentence_case


def _neighbours(lines: list[str], rows: list[ParagraphRow], k: int) -> tuple[str | None, str | None]:
    """The lines before and after line ``k`` among the lines of its kind (paragraphs or footnotes)."""
    before = lines[k - 1] if k > 0 and rows[k - 1].footnote == rows[k].footnote else None
    after = lines[k + 1] if k + 1 < len(lines) and rows[k + 1].footnote == rows[k].footnote else None
    return before, after


def _is_heading_sentence(lines: list[str], starts: list[int], start: int, end: int,
                         rows: list[ParagraphRow]) -> bool:
    """Whether the sentence at ``start:end`` of the opinion's text is a whole heading line (or all of
    one after its label: "2." | "General rule")."""
    k = _line_index(starts, start)
    line = lines[k]
    if end > starts[k] + len(line.rstrip()) or len(line) > MAX_LINE_CHARS:
        return False  # it goes on past its line, or the line is too long to be a heading
    label = line[:start - starts[k]].strip()
    if label and LABEL_RE.fullmatch(label + " ") is None:
        return False
    return is_heading_line(line, *_neighbours(lines, rows, k))


class _Sections:
    """The heading each line of one opinion's paragraphs stands under (``section``), found when first asked."""

    def __init__(self, lines: list[str], rows: list[ParagraphRow]):
        self.lines = lines
        self.rows = rows
        self._headings: list[int] | None = None

    def fields(self, line: int) -> dict[str, str]:
        """``section``: the nearest heading line before paragraph line ``line`` (none for a footnote)."""
        if self.rows[line].footnote:
            return {}
        if self._headings is None:
            self._headings = [k for k, text in enumerate(self.lines) if not self.rows[k].footnote
                              and len(text) <= MAX_LINE_CHARS
                              and is_heading_line(text, *_neighbours(self.lines, self.rows, k))]
        at = bisect.bisect_left(self._headings, line) - 1
        return {"section": self.lines[self._headings[at]]} if at >= 0 else {}


class _PinCites:
    """The pin page and pin cite of sentences of one opinion (``rows``: its lines) of ``case``,
    :mod:`statinterp.corpus.pin_cites`."""

    def __init__(self, case: Case, rows: list[ParagraphRow]):
        self.case = case
        self.rows = rows
        self.n_paragraphs = sum(1 for r in rows if not r.footnote)
        parsed = parse_cite(case.citation) if case.citation else None
        self.neutral = parsed is not None and parsed.neutral

    def _paragraph_number(self, line: int) -> int | None:
        """The number of the numbered paragraph line ``line`` is in (public-domain citations): the
        number stored apart from its text (``paragraphs.number``), else one its text opens with (a
        collection stored before numbers were taken off the text)."""
        for k in range(line, -1, -1):
            row = self.rows[k]
            if not row.footnote:
                number = int(row.number) if row.number and row.number.isdigit() else paragraph_number(row.text)
                if number is not None:
                    return number
        return None

    def fields(self, line: int, offset: int) -> dict[str, str]:
        """``pin_page`` (when known) and ``pin_cite`` of a sentence starting at ``offset`` of ``line``."""
        row = self.rows[line]
        page = row.page_at(offset)
        footnote = None  # the footnote's number it has stored (a footnote of several lines), else its order
        if row.footnote:
            footnote = int(row.number) if row.number and row.number.isdigit() else line - self.n_paragraphs + 1
        paragraph = self._paragraph_number(line) if self.neutral and not row.footnote else None
        c = self.case
        cite = format_cite(c.short_name or c.name, c.citation, c.court, c.date,
                           page=page, footnote=footnote, paragraph=paragraph, docket=slip_docket(c))
        return {"pin_page": page, "pin_cite": cite} if page is not None else {"pin_cite": cite}


def merge_found_tables(parts: Iterable[FoundTables]) -> FoundTables:
    """The tables of consecutive runs of a list of matching opinions, merged in order: equal,
    insertion order included, to :func:`sentences_around` of the whole list."""
    tables: Tables = {kind: {} for kind in KINDS}
    sentence_case: dict[str, int] = {}
    for part_tables, part_cases in parts:
        for kind in KINDS:
            tables[kind].update(part_tables[kind])
        sentence_case.update(part_cases)
    return tables, sentence_case


#: find's runs: about this many per worker (small runs balance the load; each costs a task).
RUNS_PER_WORKER = 4


def find_runs(opinions: list[MatchingOpinion], n_runs: int) -> list[list[MatchingOpinion]]:
    """``opinions`` (in case order) cut into at most ``n_runs`` consecutive runs of about equal
    numbers of cases, never inside a case."""
    cases = list(dict.fromkeys(o.case_id for o in opinions))
    per_run = max(1, math.ceil(len(cases) / max(1, n_runs)))
    run_of_case = {case_id: i // per_run for i, case_id in enumerate(cases)}
    runs: list[list[MatchingOpinion]] = []
    for opinion in opinions:
        k = run_of_case[opinion.case_id]
        if k == len(runs):
            runs.append([])
        runs[k].append(opinion)
    return runs


def find_run(folder: str, term: str, opinions: list[MatchingOpinion], headings: bool = False) -> FoundTables:
    """One run's tables (:func:`sentences_around`); runs on a worker."""
    with open_collection(folder) as collection:  # a shard set: the whole set (the run's cases may be in any shard)
        return sentences_around(collection, term, opinions, headings=headings)


def find_on_dask(folder: str | Path, term: str, opinions: list[MatchingOpinion], scheduler: str | None,
                 n_workers: int, *, progress: Callable[[int], None] | None = None,
                 task: Callable = find_run, headings: bool = False) -> FoundTables:
    """:func:`sentences_around` of ``opinions`` on ``dask.distributed``: runs of whole cases
    (:func:`find_runs`), each segmented by a task that reads the collection itself (the workers
    must see its folder), merged in run order: the same tables as in one process. ``progress``
    is called with the number of cases of each run as it arrives."""
    from statinterp.collection.ingest import dask_client, results_in_order

    if not opinions:
        return merge_found_tables([])
    runs = find_runs(opinions, RUNS_PER_WORKER * n_workers)
    arguments = [(str(folder), term, run) for run in runs]
    if headings:
        task = functools.partial(task, headings=True)

    def arrived() -> Iterator[FoundTables]:
        with dask_client(scheduler, n_workers) as client:
            for run, part in zip(runs, results_in_order(client, task, arguments, "find"), strict=True):
                if progress is not None:
                    progress(len({o.case_id for o in run}))
                yield part

    return merge_found_tables(arrived())


def find_term(collection: Collection | ShardSet, term: str, *, progress: Callable[[int], None] | None = None,
              engine: str = "local", scheduler: str | None = None, n_workers: int = 2,
              headings: bool = False) -> FoundTerm:
    """Every sentence of ``collection`` that mentions ``term`` (see the module docstring); a
    heading line is no sentence and is left out unless ``headings`` (:func:`sentences_around`).

    ``progress`` is called with the number of matching cases done after each case.
    ``engine="dask"`` segments the matching opinions on ``dask.distributed`` (the scheduler at
    ``scheduler``, else a local cluster of ``n_workers`` processes), in runs of whole cases
    (:func:`find_on_dask`); the result is the same as with ``"local"``.
    """
    from statinterp.collection.ingest import check_engine

    check_engine(engine, scheduler)
    key = term_key(term)
    opinions, searched, matched = matching_opinions(collection, key)
    if engine == "local":
        tables, sentence_case = sentences_around(collection, key, opinions, progress=progress, headings=headings)
    else:
        tables, sentence_case = find_on_dask(collection.folder, key, opinions, scheduler, n_workers,
                                             progress=progress, headings=headings)
    return FoundTerm(key, query_of(key), tables, searched, matched, str(collection.folder), sentence_case)


def _line_index(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


def term_zip_bytes(key: str, tables: Tables, filters: dict[str, Any] | None = None) -> bytes:
    """find's tables as the data set's term zip (:func:`~statinterp.corpus.dataset.tables_zip_bytes`
    of :func:`~statinterp.corpus.dataset.found_records`); ``filters`` (the case filter applied,
    :attr:`FoundTerm.filters`) is recorded in the zip's comment (:func:`~statinterp.corpus.dataset.zip_filters`).
    The zip keeps the data set's fields: a sentence's ``section`` (the heading it stands under) stays
    in find's tables only."""
    records = found_records(tables)
    records["sentence"] = {sid: {k: v for k, v in r.items() if k != "section"}
                           for sid, r in records["sentence"].items()}
    return tables_zip_bytes(key, records, filters=filters)


def write_term_zip(found: FoundTerm, path: str | Path, force: bool = False) -> Path:
    """Write ``found`` as a data-set term zip (atomically; an existing file needs ``force``)."""
    return atomic.write_bytes(path, term_zip_bytes(found.key, found.tables, found.filters), force=force)


def use_collection_statistics(prepared, collection: Collection | ShardSet) -> None:
    """Replace the background statistics of ``prepared`` (a :class:`~statinterp.index.term_index.PreparedCorpus`
    of found candidates) by the collection's: N, df, cf and lengths over every unit of every
    case stored, as the paper's index had them."""
    from statinterp.index.term_index import LEVELS, stats_from_counts

    words = list(prepared.analyzer.vocab.words)
    stats = {level: stats_from_counts(level, words, collection.token_statistics(level, words),
                                      collection.level_totals(level)) for level in LEVELS}
    prepared.background.stats.update(stats)
    n_cases = collection.level_totals("case")[0]
    prepared.background.description = f"{collection.statistics_description()} ({n_cases} cases)"
    for index in prepared:
        if index.background is not prepared.background:
            index.background.stats.update(stats)
            index.background.description = prepared.background.description
