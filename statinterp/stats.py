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

from .units import TokenSeqs

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


class StatsAccumulator:
    """Adds up df / cf / N / length over batches of units of one granularity."""

    def __init__(self, level: str):
        self.level = level
        self.n_units = 0
        self.total_tokens = 0
        self._df = np.zeros(0, dtype=np.float64)
        self._cf = np.zeros(0, dtype=np.float64)

    def add(self, units: TokenSeqs) -> None:
        lengths = units.lengths
        nonempty = lengths > 0
        self.n_units += int(nonempty.sum())
        self.total_tokens += int(lengths.sum())
        if not len(units.ids):
            return
        size = int(units.ids.max()) + 1
        rows = np.repeat(np.arange(len(units), dtype=np.int64), lengths)
        # one entry per (unit, token) pair for df; plain counts for cf
        pairs = np.unique(rows * size + units.ids)
        df = np.bincount(pairs % size, minlength=size).astype(np.float64)
        cf = np.bincount(units.ids, minlength=size).astype(np.float64)
        self._df = _add(self._df, df)
        self._cf = _add(self._cf, cf)

    def result(self, vocab_size: int) -> CollectionStats:
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
