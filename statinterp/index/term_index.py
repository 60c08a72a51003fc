"""From a loaded corpus to what scorers read: token units per candidate and background statistics.

Analyse once, by offsets: in the data-set format every opinion text is a substring of its case
text, every paragraph of its opinion and every sentence of its paragraph. Each case text is
analysed once (:class:`~statinterp.text.analysis.Analyzer`), and the tokens of opinions,
paragraphs, sentences and recursive-context neighbours are sliced out of it by character
offsets. Where a text is *not* a substring of its parent, it is analysed on its own (and such a
sentence gets no recursive neighbours); :attr:`PreparedCorpus.fallbacks` counts these.

**Background collections and their term statistics**, per granularity.

Every candidate sentence mentions the term, so statistics over the candidates alone are
degenerate (every query token is in most units; BM25's IDF turns negative). As in the paper,
whose statistics came from an index of the whole case-law corpus, statistics come from a
*background collection*: every unit of a granularity in all loaded cases.

============  ================================================================
granularity   background units
============  ================================================================
sentence      every spaCy sentence of every opinion
paragraph     every line (block between line breaks) of every opinion
opinion       every opinion
case          every case (whole text)
============  ================================================================

Units without a token are not counted. :class:`CollectionStats` holds, per token id, the
document frequency ``df`` and collection frequency ``cf``, plus ``N`` and the average length.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from statinterp.cache.namespaces import PreparedCache, Stale
from statinterp.cache.store import code_fingerprint
from statinterp.corpus.dataset import Corpus, Sentence, TermData, term_key
from statinterp.errors import UsageError
from statinterp.index import LEVELS, MAX_NEIGHBOURS  # noqa: F401 - re-exported (their home is the package)
from statinterp.text.analysis import AnalysedText, Analyzer, TokenSeqs, Vocabulary, text_hash

#: Context suffix of the paper's method names -> granularity.
SUFFIX_LEVEL = {"c": "case", "o": "opinion", "p": "paragraph"}


@dataclass
class CollectionStats:
    """Term statistics of one background collection."""

    level: str
    n_units: int
    total_tokens: int
    df: np.ndarray  # float64 per vocabulary id: units containing the token
    cf: np.ndarray  # float64 per vocabulary id: occurrences in the collection

    @property
    def avg_length(self) -> float:
        return self.total_tokens / self.n_units if self.n_units else 0.0

    def df_of(self, ids: np.ndarray) -> np.ndarray:
        return _lookup(self.df, ids)

    def cf_of(self, ids: np.ndarray) -> np.ndarray:
        return _lookup(self.cf, ids)

    def collection_probability(self, ids: np.ndarray) -> np.ndarray:
        """P(t | Mc) = cf_t / total tokens of the collection."""
        return self.cf_of(ids) / max(self.total_tokens, 1)


def _lookup(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.int64)
    out = np.zeros(len(ids), dtype=np.float64)
    inside = ids < len(values)
    out[inside] = values[ids[inside]]
    return out


def collection_stats(level: str, units: TokenSeqs, vocab_size: int) -> CollectionStats:
    """The statistics of one collection of units at once, read off its column-wise count matrix
    (:meth:`TokenSeqs.columns`, memoised, the matrix scorers read): df = entries per column,
    cf = occurrences per id (:meth:`TokenSeqs.occurrences`, from the same pass). Equal to a
    :class:`StatsAccumulator` fed ``units``; cheaper when the same units are then scored.
    Token ids must be below ``vocab_size``."""
    lengths = units.lengths
    counts = units.columns(vocab_size)
    df = np.diff(counts.indptr).astype(np.float64)
    cf = units.occurrences(vocab_size).astype(np.float64)
    return CollectionStats(level, int((lengths > 0).sum()), int(lengths.sum()), df, cf)


class StatsAccumulator:
    """Adds up df / cf / N / length over batches of units of one granularity.

    Each :meth:`add` reduces its batch to one token id per distinct (unit, token) pair (df) and
    its token ids (cf) without hashing: by sorting the (unit, token) keys, or for a batch of at
    least :attr:`MATRIX_IDS` ids by SciPy's linear-time conversion to a sparse matrix (whose
    summed entries are the distinct pairs). The ids wait in a buffer that is counted
    (``np.bincount``) once it holds :attr:`FLUSH_IDS` ids and at :meth:`result`, so the cost
    of a batch is proportional to its tokens, not to the vocabulary size.
    """

    #: Buffered ids before they are counted into the totals (bounds the buffer's memory).
    FLUSH_IDS = 1 << 23
    #: Batches of at least this many ids find their distinct pairs through a sparse matrix.
    MATRIX_IDS = 1 << 16

    def __init__(self, level: str):
        self.level = level
        self.n_units = 0
        self.total_tokens = 0
        self._df = np.zeros(0, dtype=np.float64)
        self._cf = np.zeros(0, dtype=np.float64)
        self._pending_df: list[np.ndarray] = []
        self._pending_cf: list[np.ndarray] = []
        self._pending = 0

    def add(self, units: TokenSeqs) -> None:
        lengths = units.lengths
        nonempty = lengths > 0
        self.n_units += int(nonempty.sum())
        self.total_tokens += int(lengths.sum())
        if not len(units.ids):
            return
        ids = units.ids.astype(np.int64)
        size = int(ids.max()) + 1
        if len(ids) >= self.MATRIX_IDS:
            # CSR conversion sums duplicate (unit, token) entries: its column indices are the pairs
            rows = np.repeat(np.arange(len(units), dtype=np.int32), lengths)
            counts = sp.csr_matrix((np.ones(len(ids), dtype=np.float32), (rows, units.ids)),
                                   shape=(len(units), size))
            counts.sum_duplicates()
            self._pending_df.append(counts.indices.astype(np.int64))
        else:
            # one entry per distinct (unit, token) pair: sort the pair keys, keep run starts
            keys = np.repeat(np.arange(len(units), dtype=np.int64) * size, lengths) + ids
            keys.sort()
            first = np.empty(len(keys), dtype=bool)
            first[0] = True
            np.not_equal(keys[1:], keys[:-1], out=first[1:])
            self._pending_df.append(keys[first] % size)
        self._pending_cf.append(ids)
        self._pending += len(ids)
        if self._pending >= self.FLUSH_IDS:
            self._flush()

    def _flush(self) -> None:
        if self._pending_cf:
            self._df = _add(self._df, np.bincount(np.concatenate(self._pending_df)).astype(np.float64))
            self._cf = _add(self._cf, np.bincount(np.concatenate(self._pending_cf)).astype(np.float64))
        self._pending_df, self._pending_cf, self._pending = [], [], 0

    def result(self, vocab_size: int) -> CollectionStats:
        self._flush()
        df = np.zeros(vocab_size, dtype=np.float64)
        cf = np.zeros(vocab_size, dtype=np.float64)
        df[: len(self._df)] = self._df[:vocab_size]
        cf[: len(self._cf)] = self._cf[:vocab_size]
        return CollectionStats(self.level, self.n_units, self.total_tokens, df, cf)


def _add(acc: np.ndarray, more: np.ndarray) -> np.ndarray:
    if len(more) > len(acc):
        acc = np.concatenate([acc, np.zeros(len(more) - len(acc))])
    acc[: len(more)] += more
    return acc


@dataclass
class Background:
    """The statistics of every granularity, and where they came from."""

    stats: dict[str, CollectionStats]
    description: str

    def __getitem__(self, level: str) -> CollectionStats:
        return self.stats[level]


def stats_from_counts(level: str, words: list[str], counts: dict[str, tuple[int, int]],
                      totals: tuple[int, int]) -> CollectionStats:
    """:class:`CollectionStats` of an external collection (a stored collection's statistics).

    ``words[i]`` is the token of vocabulary id ``i``; ``counts`` maps tokens to ``(df, cf)``
    over the collection (missing tokens count 0); ``totals`` is ``(N units, total tokens)``.
    """
    df = np.zeros(len(words), dtype=np.float64)
    cf = np.zeros(len(words), dtype=np.float64)
    for i, word in enumerate(words):
        d, c = counts.get(word, (0, 0))
        df[i] = d
        cf[i] = c
    return CollectionStats(level, int(totals[0]), int(totals[1]), df, cf)


@dataclass
class Query:
    """A bag of query tokens: distinct vocabulary ids and their counts (tf in the query).

    The distinct tokens are ordered by their text, not by their vocabulary id: scorers add the
    per-token products in this order, and vocabulary ids depend on which terms were loaded and
    in what order, so an id order would let the last bits of a score (and with them the order of
    near-tied sentences) depend on what else was loaded.
    """

    ids: np.ndarray  # int32, distinct, in the order of their words
    counts: np.ndarray  # float64
    tokens: list[str]  # all analysed tokens, including those not in the vocabulary

    @classmethod
    def from_tokens(cls, tokens: list[str], vocab: Vocabulary) -> Query:
        counts: dict[str, int] = {}
        for t in tokens:
            if vocab.get(t) is not None:
                counts[t] = counts.get(t, 0) + 1
        words = sorted(counts)
        ids = np.asarray([vocab.get(w) for w in words], dtype=np.int32)
        return cls(ids, np.asarray([counts[w] for w in words], dtype=np.float64), list(tokens))

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class UnitSet:
    """Distinct units of one kind and, for each candidate, the row of its unit."""

    seqs: TokenSeqs
    row: np.ndarray  # int64 per candidate; -1 where the candidate has no such unit
    labels: list[str] = field(default_factory=list)  # an id per distinct unit

    @property
    def present(self) -> np.ndarray:
        return self.row >= 0

    def spread(self, unit_values: np.ndarray, missing: float = 0.0) -> np.ndarray:
        """Per-candidate values from per-unit values (``missing`` where a candidate has none)."""
        out = np.full(len(self.row), missing, dtype=np.float64)
        ok = self.row >= 0
        out[ok] = unit_values[self.row[ok]]
        return out


@dataclass
class TermIndex:
    """Everything a scorer needs about one term's candidate sentences."""

    term: TermData
    sentences: list[Sentence]
    levels: dict[str, UnitSet]  # "sentence", "paragraph", "opinion", "case"
    neighbours: dict[int, UnitSet]  # offset (-4..-1, 1..4) -> neighbour sentence of each candidate
    single_segment: np.ndarray  # bool: candidate is exactly one spaCy sentence of its opinion
    query: Query
    provision: Query | None
    background: Background
    vocab: Vocabulary
    analyzer: Analyzer
    #: Word vectors for embedding scorers, set by the workflow (:mod:`statinterp.vectors.provider`).
    vectors: Any = None

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def key(self) -> str:
        return self.term.key

    @property
    def sentence_ids(self) -> np.ndarray:
        return np.asarray([s.id for s in self.sentences], dtype=object)

    @property
    def gains(self) -> np.ndarray:
        """Gain per candidate, NaN where unlabelled."""
        return np.asarray([np.nan if s.gain is None else s.gain for s in self.sentences], dtype=np.float64)

    @property
    def cases(self) -> UnitSet:
        return self.levels["case"]

    def require_provision(self) -> Query:
        if self.provision is None:
            raise UsageError(
                f"term {self.term.key!r} has no source provision; add it to the file given with --provisions, "
                f"or (rank only) give it with --provision or --provision-file"
            )
        if len(self.provision) == 0:
            raise UsageError(f"the provision of term {self.term.key!r} analyses to no known tokens")
        return self.provision


@dataclass
class PreparedCorpus:
    indices: dict[str, TermIndex]
    background: Background
    analyzer: Analyzer
    fallbacks: int = 0  # texts that were not substrings of their parent

    def __getitem__(self, name: str) -> TermIndex:
        """The index of a term, by key (``technological_measure``) or name (``technological measure``)."""
        key = term_key(name)
        if key not in self.indices:
            known = ", ".join(sorted(self.indices)) or "none"
            raise UsageError(f"term {name!r} is not in the loaded data (terms: {known})")
        return self.indices[key]

    def __iter__(self):
        return iter(self.indices.values())


# --------------------------------------------------------------------------------------------


@dataclass
class TextSpan:
    """A span of characters ``[start, end)`` of an analysed text (``host``)."""

    host: AnalysedText
    start: int
    end: int

    def tokens(self) -> np.ndarray:
        return self.host.tokens(self.start, self.end)


def _line_spans(text: str, base: int) -> np.ndarray:
    """Character spans of the lines of ``text`` (offset by ``base``)."""
    breaks = [m.start() for m in re.finditer("\n", text)]
    starts = np.asarray([0] + [b + 1 for b in breaks], dtype=np.int64)
    ends = np.asarray(breaks + [len(text)], dtype=np.int64)
    return np.stack([starts + base, ends + base], axis=1)


def _ranges(at: AnalysedText, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(spans) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lo = np.searchsorted(at.starts, spans[:, 0], "left")
    hi = np.searchsorted(at.ends, spans[:, 1], "right")
    return lo, np.maximum(lo, hi)


def _segments_within(at: AnalysedText, start: int, end: int) -> np.ndarray:
    s = at.sentences
    if len(s) == 0:
        return s.reshape(0, 2)
    keep = (s[:, 0] >= start) & (s[:, 1] <= end)
    return s[keep]


class _TermBuilder:
    def __init__(self, term: TermData, analyzer: Analyzer):
        self.term = term
        self.analyzer = analyzer
        self.fallbacks = 0

    def locate(self, parent: TextSpan, parent_text: str, text: str) -> TextSpan:
        """Span of ``text`` inside ``parent`` (its first occurrence), else its own analysis."""
        off = parent_text.find(text)
        if off >= 0:
            return TextSpan(parent.host, parent.start + off, parent.start + off + len(text))
        self.fallbacks += 1
        at = self.analyzer.analyse([text])[0]
        return TextSpan(at, 0, len(text))


def background_units(case_at: AnalysedText, case_text: str, opinion_spans: list[TextSpan], opinion_texts: list[str]):
    """Background units of one case, {level: TokenSeqs}: the whole case, each opinion, each
    paragraph (line) and each sentence of its opinions; the units every level's statistics
    count, for a prepared corpus and for a collection's ingest alike."""
    units: dict[str, list[TokenSeqs]] = {lvl: [] for lvl in LEVELS}
    units["case"].append(TokenSeqs(case_at.ids, np.asarray([0, len(case_at.ids)], dtype=np.int64)))
    for span, text in zip(opinion_spans, opinion_texts, strict=False):
        at = span.host
        lo, hi = at.token_range(span.start, span.end)
        units["opinion"].append(TokenSeqs.from_ranges(at.ids, np.asarray([lo]), np.asarray([hi])))
        lines = _line_spans(text, span.start)
        units["paragraph"].append(TokenSeqs.from_ranges(at.ids, *_ranges(at, lines)))
        segs = _segments_within(at, span.start, span.end)
        units["sentence"].append(TokenSeqs.from_ranges(at.ids, *_ranges(at, segs)))
    return {lvl: TokenSeqs.concat(parts) for lvl, parts in units.items()}


def prepare(
    corpus: Corpus,
    analyzer: Analyzer,
    *,
    statistics: str = "background",
    extra_background: Corpus | None = None,
    background_only: bool = False,
    progress: Callable[[int], None] | None = None,
) -> PreparedCorpus:
    """Analyse the corpus and build one :class:`TermIndex` per term.

    ``statistics="background"`` (default) computes the collection statistics over every unit
    of all loaded cases (plus the cases of ``extra_background``); ``"candidates"`` computes
    them over each term's own candidates only: its candidate sentences, their paragraphs and
    opinions, and its cases (degenerate on real data; for comparison). ``progress`` receives the
    number of characters analysed. ``background_only=True`` takes the background statistics from
    the cases of ``extra_background`` alone (a fixed collection), not from the loaded cases.
    """
    if statistics not in ("background", "candidates"):
        raise UsageError(f"unknown statistics {statistics!r}; use 'background' or 'candidates'")
    if background_only and (extra_background is None or statistics != "background"):
        raise UsageError("a background collection of its own needs an extra background and background statistics")
    store = prepared_cache(corpus, analyzer, statistics, extra_background, background_only)
    if store is not None:
        found = _load_prepared(store, corpus, analyzer)
        if found is not None:
            if progress:  # nothing to analyse: out of the total (a progress callback without skip: done)
                getattr(progress, "skip", progress)(
                    _case_chars(corpus, extra_background if statistics == "background" else None))
            return found
    with analyzer.session():  # worker processes, if the analyzer starts any, serve every term
        prepared = _prepare(corpus, analyzer, statistics, extra_background, progress, background_only)
    if store is not None:
        _save_prepared(store, prepared, statistics)
    return prepared


def _case_chars(corpus: Corpus, extra_background: Corpus | None) -> int:
    terms = list(corpus) + (list(extra_background) if extra_background is not None else [])
    return sum(len(c.text) for t in terms for c in t.cases.values())


def _prepare(corpus: Corpus, analyzer: Analyzer, statistics: str, extra_background: Corpus | None,
             progress: Callable[[int], None] | None, background_only: bool = False) -> PreparedCorpus:
    acc = {lvl: StatsAccumulator(lvl) for lvl in LEVELS}
    seen_cases: set[str] = set()
    n_background_cases = 0
    fallbacks = 0
    background = Background({}, "")  # filled once every term has been read
    indices: dict[str, TermIndex] = {}
    own_stats: dict[str, dict[str, StatsAccumulator]] = {}

    def add_case_background(case_text: str, at: AnalysedText, spans: list[TextSpan], texts: list[str]) -> None:
        nonlocal n_background_cases
        digest = text_hash(case_text)
        if digest in seen_cases:
            return
        seen_cases.add(digest)
        n_background_cases += 1
        for lvl, seqs in background_units(at, case_text, spans, texts).items():
            acc[lvl].add(seqs)

    if extra_background is not None and statistics == "background":
        for term in extra_background:
            case_ids = sorted(term.cases)
            analysed = analyzer.analyse([term.cases[c].text for c in case_ids], progress)
            builder = _TermBuilder(term, analyzer)
            for cid, at in zip(case_ids, analysed, strict=False):
                case = term.cases[cid]
                ops = [o for o in term.opinions.values() if o.case_id == cid]
                root = TextSpan(at, 0, len(case.text))
                spans = [builder.locate(root, case.text, o.text) for o in ops]
                add_case_background(case.text, at, spans, [o.text for o in ops])
            analyzer.forget()

    for term in corpus:
        builder = _TermBuilder(term, analyzer)
        case_ids = sorted(term.cases)
        analysed = analyzer.analyse([term.cases[c].text for c in case_ids], progress)
        case_span: dict[str, TextSpan] = {}
        opinion_span: dict[str, TextSpan] = {}
        for cid, at in zip(case_ids, analysed, strict=False):
            case = term.cases[cid]
            root = TextSpan(at, 0, len(case.text))
            case_span[cid] = root
            ops = sorted((o for o in term.opinions.values() if o.case_id == cid), key=lambda o: o.id)
            spans = [builder.locate(root, case.text, o.text) for o in ops]
            opinion_span.update({o.id: s for o, s in zip(ops, spans, strict=False)})
            if statistics == "background" and not background_only:
                add_case_background(case.text, at, spans, [o.text for o in ops])
        paragraph_span = {
            pid: builder.locate(opinion_span[p.opinion_id], term.opinions[p.opinion_id].text, p.text)
            for pid, p in sorted(term.paragraphs.items())
        }
        sentence_span = [
            builder.locate(paragraph_span[s.paragraph_id], term.paragraphs[s.paragraph_id].text, s.text)
            for s in term.sentences
        ]
        fallbacks += builder.fallbacks
        level_spans = dict(case=case_span, opinion=opinion_span, paragraph=paragraph_span, sentence=sentence_span)
        index = _term_index(term, level_spans, background, analyzer)
        indices[term.key] = index
        if statistics == "candidates":
            own = {lvl: StatsAccumulator(lvl) for lvl in LEVELS}  # this term's candidates only
            for lvl in LEVELS:
                acc[lvl].add(index.levels[lvl].seqs)
                own[lvl].add(index.levels[lvl].seqs)
            own_stats[term.key] = own
        analyzer.forget()

    vocab_size = len(analyzer.vocab)
    stats = {lvl: acc[lvl].result(vocab_size) for lvl in LEVELS}
    if statistics == "background" and background_only:
        description = f"all units of the {n_background_cases} distinct cases of the given background collection"
    elif statistics == "background" and extra_background is not None:
        description = f"all units of the {n_background_cases} distinct cases loaded and of the extra background"
    elif statistics == "background":
        description = f"all units of the {n_background_cases} distinct cases loaded"
    else:
        description = "each term's own candidate sentences and their paragraphs, opinions and cases"
    background.stats.update(stats)
    background.description = description
    for key, own in own_stats.items():  # candidates: each term keeps its own statistics
        indices[key].background = Background({lvl: own[lvl].result(vocab_size) for lvl in LEVELS}, description)
    for index in indices.values():  # queries last: the vocabulary is complete now
        index.query, index.provision = _queries(index.term, analyzer)
    return PreparedCorpus(indices, background, analyzer, fallbacks)


def _unit_ids(term: TermData, lvl: str) -> list[str]:
    """The ids of a level's distinct units, in the order of the :class:`UnitSet`'s rows."""
    if lvl == "sentence":
        return [s.id for s in term.sentences]
    if lvl == "case":
        return sorted(term.cases)
    return sorted({getattr(s, f"{lvl}_id") for s in term.sentences})


def _candidate_levels(term: TermData, spans: dict) -> dict[str, UnitSet]:
    sentences = term.sentences
    levels = {"sentence": UnitSet(TokenSeqs.from_list([s.tokens() for s in spans["sentence"]]),
                                  np.arange(len(sentences), dtype=np.int64), _unit_ids(term, "sentence"))}
    for lvl, key in (("paragraph", "paragraph_id"), ("opinion", "opinion_id"), ("case", "case_id")):
        ids = _unit_ids(term, lvl)
        pos = {u: i for i, u in enumerate(ids)}
        seqs = TokenSeqs.from_list([spans[lvl][u].tokens() for u in ids])
        row = np.asarray([pos[getattr(s, key)] for s in sentences], dtype=np.int64)
        levels[lvl] = UnitSet(seqs, row, ids)
    return levels


def _neighbours(spans: dict, sentences: list[Sentence], term: TermData):
    """Recursive-context neighbours of each candidate, and whether it is a single segment."""
    n = len(sentences)
    per_offset: dict[int, list[np.ndarray]] = {d: [] for d in range(-MAX_NEIGHBOURS, MAX_NEIGHBOURS + 1) if d}
    present: dict[int, np.ndarray] = {d: np.zeros(n, dtype=bool) for d in per_offset}
    single = np.zeros(n, dtype=bool)
    empty = np.zeros(0, dtype=np.int32)
    for i, (s, span) in enumerate(zip(sentences, spans["sentence"], strict=False)):
        op = spans["opinion"][s.opinion_id]
        if span.host is not op.host:
            for d in per_offset:
                per_offset[d].append(empty)
            continue
        segs = _segments_within(op.host, op.start, op.end)
        i0 = int(np.searchsorted(segs[:, 1], span.start, "right"))  # first segment ending after start
        i1 = int(np.searchsorted(segs[:, 0], span.end, "left")) - 1  # last segment starting before end
        single[i] = i0 == i1
        for d in per_offset:
            j = i0 + d if d < 0 else i1 + d
            if 0 <= j < len(segs) and i1 >= i0:
                per_offset[d].append(op.host.tokens(int(segs[j, 0]), int(segs[j, 1])))
                present[d][i] = True
            else:
                per_offset[d].append(empty)
    units = {}
    for d, seqs in per_offset.items():
        row = np.where(present[d], np.arange(n), -1).astype(np.int64)
        units[d] = UnitSet(TokenSeqs.from_list(seqs), row)
    return units, single


def _term_index(term: TermData, spans: dict, background: Background, analyzer: Analyzer) -> TermIndex:
    vocab = analyzer.vocab
    levels = _candidate_levels(term, spans)
    neighbours, single = _neighbours(spans, term.sentences, term)
    query, provision = _queries(term, analyzer)
    return TermIndex(term, list(term.sentences), levels, neighbours, single, query, provision, background,
                     vocab, analyzer)


def _queries(term: TermData, analyzer: Analyzer,
             known: dict[str, list[str]] | None = None) -> tuple[Query, Query | None]:
    """The term's query and provision; ``known`` maps texts to their tokens (no spaCy needed)."""
    def tokens(text: str) -> list[str]:
        return list(known[text]) if known is not None and text in known else analyzer.tokens(text)

    query = Query.from_tokens(tokens(term.query), analyzer.vocab)
    provision = None
    if term.provision is not None:
        provision = Query.from_tokens(tokens(term.provision.text), analyzer.vocab)
    return query, provision


# --------------------------------------------------------------------------------------------
# The prepared-corpus cache


#: Bump when the layout of a prepared-corpus file changes.
PREPARED_FORMAT = 1


def _code_fingerprint() -> str:
    """SHA-256 of the modules that build a prepared corpus: editing them invalidates the files."""
    return code_fingerprint(__name__, "statinterp.text.analysis")


def _content_key(corpus: Corpus, analyzer: Analyzer, statistics: str, extra_background: Corpus | None,
                 background_only: bool = False) -> str:
    """SHA-256 of everything :func:`prepare`'s arrays depend on: the analysis settings, the
    statistics, the code, and every id, link and text of the corpus (in loading order)."""
    parts = [f"statinterp-prepared {PREPARED_FORMAT}|{analyzer.settings_key}|{statistics}|{_code_fingerprint()}"]

    def add(term: TermData, candidates: bool) -> None:
        parts.extend((term.key, str(len(term.cases)), str(len(term.opinions))))
        for cid, case in term.cases.items():
            parts.extend((cid, case.text))
        for oid, op in term.opinions.items():
            parts.extend((oid, op.case_id, op.text))
        if candidates:
            parts.extend((str(len(term.paragraphs)), str(len(term.sentences))))
            for pid, par in term.paragraphs.items():
                parts.extend((pid, par.case_id, par.opinion_id, par.text))
            for s in term.sentences:
                parts.extend((s.id, s.case_id, s.opinion_id, s.paragraph_id, s.text))

    for term in corpus:
        add(term, True)
    parts.append("background only" if background_only else "extra background")
    if extra_background is not None and statistics == "background":
        for term in extra_background:
            add(term, False)
    digest = hashlib.sha256()
    digest.update(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)).tobytes())
    digest.update("".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def prepared_cache(corpus: Corpus, analyzer: Analyzer, statistics: str,
                   extra_background: Corpus | None, background_only: bool = False) -> PreparedCache | None:
    """The :class:`~statinterp.cache.namespaces.PreparedCache` file of a run, ``None`` without one.

    One entry per prepared corpus in the cache store's ``prepared`` namespace, keyed by the SHA-256 of
    the analysis settings, the statistics choice, the source of the modules that build it and
    every id, link and text of the corpus (:func:`_content_key`); labels, queries and provisions
    are not part of the arrays and come from the corpus as loaded. It holds the vocabulary, every
    term's unit token arrays, neighbours and the background statistics. Only used with an
    analyzer whose vocabulary is still empty (a used one would number words differently).

    A prepared corpus is derived from the analysis cache entries of its texts: it records their
    size and modification time and is used only while every one of them is unchanged, so a
    replaced, damaged or deleted analysis entry is met (and reported) on the way it would be
    without this file.
    """
    root = getattr(analyzer, "cache_root", None)
    if root is None or analyzer.cache is None or len(analyzer.vocab):
        return None
    key = _content_key(corpus, analyzer, statistics, extra_background, background_only)
    return PreparedCache(root, analyzer.settings_key, key)


def _save_prepared(store: PreparedCache, prepared: PreparedCorpus, statistics: str) -> None:
    """Store ``prepared`` as named arrays and a JSON manifest (no pickles)."""
    arrays: dict[str, np.ndarray] = {}
    words = "\n".join(prepared.analyzer.vocab.words).encode("utf-8", "surrogatepass")
    arrays["words"] = np.frombuffer(words, dtype=np.uint8)
    meta: dict[str, Any] = {
        "format": PREPARED_FORMAT, "statistics": statistics, "n_words": len(prepared.analyzer.vocab),
        "description": prepared.background.description, "fallbacks": prepared.fallbacks,
        "terms": [ix.key for ix in prepared], "stats": {}, "own_stats": {}, "queries": {},
    }
    meta["stats"] = _put_stats(arrays, "bg", prepared.background)
    analyzer = prepared.analyzer
    try:
        meta["analysis_entries"] = _entry_stamps(analyzer, sorted(analyzer.seen))
    except OSError:
        return  # an analysis entry is missing (not writable?): nothing to derive from
    for t, ix in enumerate(prepared):
        for lvl, units in ix.levels.items():
            _put_units(arrays, f"{t}/{lvl}", units)
        for d, units in ix.neighbours.items():
            _put_units(arrays, f"{t}/n{d}", units)
        arrays[f"{t}/single"] = ix.single_segment.astype(np.uint8)
        if ix.background is not prepared.background:
            meta["own_stats"][str(t)] = _put_stats(arrays, f"{t}/bg", ix.background)
        texts = [ix.term.query] + ([ix.term.provision.text] if ix.term.provision is not None else [])
        for text in texts:
            meta["queries"][text] = analyzer.tokens(text)
    store.save(meta, arrays)


def _load_prepared(store: PreparedCache, corpus: Corpus, analyzer: Analyzer) -> PreparedCorpus | None:
    """The prepared corpus of ``store``'s file, ``None`` if there is none (or it is stale or damaged)."""
    found = store.load(lambda meta, array: _decode_prepared(meta, array, corpus, analyzer))
    if found is None and len(analyzer.vocab):  # a half-restored vocabulary would renumber the words
        analyzer.vocab = Vocabulary()
    return found


def _decode_prepared(meta: dict, array, corpus: Corpus, analyzer: Analyzer) -> PreparedCorpus:
    if meta["format"] != PREPARED_FORMAT or meta["terms"] != [t.key for t in corpus]:
        raise ValueError("written for another corpus")
    try:
        if _entry_stamps(analyzer, [d for d, _, _ in meta["analysis_entries"]]) != meta["analysis_entries"]:
            raise Stale
    except OSError:
        raise Stale from None

    words_raw = array("words").tobytes().decode("utf-8", "surrogatepass")
    words = words_raw.split("\n") if meta["n_words"] else []
    if len(words) != meta["n_words"]:
        raise ValueError("inconsistent vocabulary")
    vocab = analyzer.vocab
    if not np.array_equal(vocab.add_all(words), np.arange(len(words))):
        raise ValueError("repeated words in the vocabulary")
    size = len(words)
    background = _get_stats(array, "bg", meta["stats"], size, meta["description"])
    indices: dict[str, TermIndex] = {}
    for t, term in enumerate(corpus):
        n = len(term.sentences)
        levels = {lvl: _get_units(array, f"{t}/{lvl}", n, size, _unit_ids(term, lvl)) for lvl in LEVELS}
        neighbours = {d: _get_units(array, f"{t}/n{d}", n, size)
                      for d in range(-MAX_NEIGHBOURS, MAX_NEIGHBOURS + 1) if d}
        single = array(f"{t}/single").astype(bool)
        if single.shape != (n,):
            raise ValueError("inconsistent arrays")
        own = meta["own_stats"].get(str(t))
        bg = background if own is None else _get_stats(array, f"{t}/bg", own, size, meta["description"])
        query, provision = _queries(term, analyzer, meta["queries"])
        indices[term.key] = TermIndex(term, list(term.sentences), levels, neighbours, single, query, provision,
                                      bg, vocab, analyzer)
    return PreparedCorpus(indices, background, analyzer, int(meta["fallbacks"]))


def _entry_stamps(analyzer: Analyzer, digests: list[str]) -> list[list]:
    """``[digest, size, mtime_ns]`` of the analysis cache entry of each digest (OSError if absent)."""
    cache = analyzer.cache
    assert cache is not None  # a prepared-corpus cache exists only beside an analysis cache
    out = []
    for digest in digests:
        st = os.stat(cache.path(digest))
        out.append([digest, st.st_size, st.st_mtime_ns])
    return out


def _put_units(arrays: dict[str, np.ndarray], name: str, units: UnitSet) -> None:
    arrays[f"{name}/ids"] = units.seqs.ids
    arrays[f"{name}/offsets"] = units.seqs.offsets
    arrays[f"{name}/row"] = units.row


def _get_units(array, name: str, n: int, vocab_size: int, labels: list[str] | None = None) -> UnitSet:
    ids, offsets, row = array(f"{name}/ids"), array(f"{name}/offsets"), array(f"{name}/row")
    units = len(offsets) - 1
    if (units < 0 or offsets[0] != 0 or offsets[-1] != len(ids) or (np.diff(offsets) < 0).any()
            or row.shape != (n,) or (len(ids) and (ids.min() < 0 or ids.max() >= vocab_size))
            or (n and (row.min() < -1 or row.max() >= units)) or (labels is not None and len(labels) != units)):
        raise ValueError(f"inconsistent arrays in {name}")
    return UnitSet(TokenSeqs(ids, offsets), row, list(labels) if labels is not None else [])


def _put_stats(arrays: dict[str, np.ndarray], name: str, background: Background) -> dict[str, list]:
    out = {}
    for lvl, st in background.stats.items():
        nz = np.flatnonzero(st.cf).astype(np.int32)
        arrays[f"{name}/{lvl}/at"] = nz
        arrays[f"{name}/{lvl}/df"] = st.df[nz]
        arrays[f"{name}/{lvl}/cf"] = st.cf[nz]
        out[lvl] = [st.level, st.n_units, st.total_tokens, len(st.df)]
    return out


def _get_stats(array, name: str, meta: dict[str, list], vocab_size: int, description: str) -> Background:
    stats = {}
    for lvl, (level, n_units, total, length) in meta.items():
        at = array(f"{name}/{lvl}/at")
        if length != vocab_size or (len(at) and (at.min() < 0 or at.max() >= length)):
            raise ValueError("inconsistent statistics")
        df = np.zeros(length, dtype=np.float64)
        cf = np.zeros(length, dtype=np.float64)
        df[at] = array(f"{name}/{lvl}/df")
        cf[at] = array(f"{name}/{lvl}/cf")
        stats[lvl] = CollectionStats(level, int(n_units), int(total), df, cf)
    return Background(stats, description)
