"""Everything computed for one case before it is stored: its background statistics and citations.

This is the pure, picklable part of ingesting (it never touches the collection), so the same
function runs in the calling process (``--engine local``) or on Dask workers (``--engine
dask``), and both give the same values.

Statistics use the project's own analysis (:class:`~statinterp.text.analysis.Analyzer`) and the
same units as the background statistics of a prepared corpus
(:func:`statinterp.index.term_index.background_units`): the whole case text, each opinion,
each line of an opinion (a paragraph) and each spaCy sentence of an opinion. For each unit level
the case contributes ``n_units`` (units holding a token), ``total_tokens`` and, per token (a
lower-cased lemma), ``df`` (units containing it) and ``cf`` (occurrences).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from statinterp.index.term_index import LEVELS, TextSpan, background_units
from statinterp.sources import Partition, read_partition
from statinterp.sources.records import CaseRecord, DecodedFile, SkippedRecord, Unjoined
from statinterp.text.analysis import Analyzer, TokenSeqs, Vocabulary
from statinterp.text.citations import cached_stored_citations

#: Cases analysed and committed together (one spaCy batch, one transaction).
BATCH_CASES = 32


@dataclass(frozen=True)
class LevelCounts:
    """One case's contribution to the statistics of one unit level."""

    n_units: int
    total_tokens: int
    words: tuple[str, ...]
    df: np.ndarray  # int64, per word
    cf: np.ndarray  # int64, per word


@dataclass(frozen=True)
class Citation:
    opinion: int  # index of the opinion in the record
    paragraph: int  # index of the paragraph in the opinion
    kind: str  # case | statute | journal
    start: int  # character offsets in the paragraph
    end: int
    text: str  # as written
    normalized: str  # eyecite's corrected citation


@dataclass(frozen=True)
class PreparedCase:
    record: CaseRecord
    content_hash: str
    counts: dict[str, LevelCounts]
    citations: tuple[Citation, ...]


def opinion_offsets(record: CaseRecord) -> list[tuple[int, int]]:
    """Character spans of the record's opinions inside :attr:`CaseRecord.text`."""
    pos = len(record.head_matter) + 1 if record.head_matter.strip() else 0
    spans = []
    for op in record.opinions:
        text = op.text
        spans.append((pos, pos + len(text)))
        pos += len(text) + 1
    return spans


def level_counts(seqs: TokenSeqs, words: list[str]) -> LevelCounts:
    lengths = seqs.lengths
    ids = seqs.ids.astype(np.int64)
    if not len(ids):
        return LevelCounts(int((lengths > 0).sum()), 0, (), np.zeros(0, np.int64), np.zeros(0, np.int64))
    uniq, cf = np.unique(ids, return_counts=True)
    size = int(uniq[-1]) + 1
    rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = np.unique(rows * size + ids) % size
    df = np.bincount(np.searchsorted(uniq, pairs), minlength=len(uniq))
    return LevelCounts(int((lengths > 0).sum()), int(lengths.sum()), tuple(words[i] for i in uniq.tolist()),
                       df.astype(np.int64), cf.astype(np.int64))


def citations_of(record: CaseRecord) -> tuple[Citation, ...]:
    """Case, statute and journal citations (:data:`~statinterp.text.citations.STORED_KINDS`) found by
    eyecite (:func:`statinterp.text.citations.stored_citations`), paragraph by paragraph (memoised: the
    segmenter has asked for a few of them already)."""
    return tuple(Citation(i, j, c.kind, c.start, c.end, c.text, c.normalized)
                 for i, op in enumerate(record.opinions) for j, para in enumerate(op.lines)
                 for c in cached_stored_citations(para))


def prepare_cases(records: list[CaseRecord], analyzer: Analyzer | None, citations: bool = True) -> list[PreparedCase]:
    """Statistics (and, with ``citations``, citations) of each record; one spaCy pass for all.

    Without an analyzer no statistics are computed (a collection without statistics: the
    benchmarks' "parse and store only" pass)."""
    if analyzer is None:
        return [PreparedCase(r, r.content_hash, {}, citations_of(r) if citations else ()) for r in records]
    texts = [r.text for r in records]
    analysed = analyzer.analyse(texts)
    words = analyzer.vocab.words
    out = []
    for record, text, at in zip(records, texts, analysed, strict=True):
        spans = [TextSpan(at, s, e) for s, e in opinion_offsets(record)]
        units = background_units(at, text, spans, [o.text for o in record.opinions])
        counts = {lvl: level_counts(units[lvl], words) for lvl in LEVELS}
        out.append(PreparedCase(record, record.content_hash, counts, citations_of(record) if citations else ()))
    analyzer.forget()
    analyzer.vocab = Vocabulary()  # words were turned into strings: memory stays flat over a long ingest
    return out


def new_analyzer() -> Analyzer:
    """The analyzer ingesting uses: no on-disk cache (a collection is analysed once), one process."""
    return Analyzer(cache_dir=False, n_process=1)


def prepare_partition(partition: Partition, citations: bool = True,
                      known: Callable[[CaseRecord], str | None] | None = None,
                      analyzer=None, statistics: bool = True
                      ) -> Iterator[list[PreparedCase] | SkippedRecord | DecodedFile | Unjoined]:
    """Batches of prepared cases (and skipped records) of one partition, in record order.

    ``known(record)`` gives the content hash stored for the record's case (None: not stored;
    a shard set looks in the shard of the record's key): such unchanged cases are not analysed
    again (the writer would leave them alone anyway)."""
    if statistics and analyzer is None:
        analyzer = new_analyzer()
    batch: list[CaseRecord] = []
    for item in read_partition(partition):
        if not isinstance(item, CaseRecord):  # a skipped record, a file's guessed encoding
            yield item
            continue
        batch.append(item)
        if len(batch) >= BATCH_CASES:
            yield _prepare_batch(batch, analyzer, citations, known)
            batch = []
    if batch:
        yield _prepare_batch(batch, analyzer, citations, known)


class Unchanged:
    """A record already stored with the same content: nothing to compute."""

    def __init__(self, record: CaseRecord, content_hash: str):
        self.record = record
        self.content_hash = content_hash


def _prepare_batch(batch: list[CaseRecord], analyzer, citations: bool,
                   known: Callable[[CaseRecord], str | None] | None) -> list:
    if known is None:
        return prepare_cases(batch, analyzer, citations)
    stored = [known(r) == r.content_hash for r in batch]
    done = iter(prepare_cases([r for r, same in zip(batch, stored, strict=True) if not same], analyzer, citations)
                if not all(stored) else [])
    return [Unchanged(r, r.content_hash) if same else next(done) for r, same in zip(batch, stored, strict=True)]
