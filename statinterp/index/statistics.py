"""Background collections and their term statistics, per granularity.

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

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from statinterp.text.units import TokenSeqs

LEVELS = ("sentence", "paragraph", "opinion", "case")
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
