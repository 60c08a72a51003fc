"""Text units as token-id sequences, stored ragged (one flat id array plus row offsets)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class TokenSeqs:
    """``n`` token sequences: row ``i`` is ``ids[offsets[i]:offsets[i + 1]]``.

    The sparse count matrix (rows = units, columns = vocabulary ids) is derived on demand and
    memoised per vocabulary size, by rows (:meth:`matrix`) or by columns (:meth:`columns`).
    """

    ids: np.ndarray  # int32
    offsets: np.ndarray  # int64, length n + 1
    _matrix: dict = field(default_factory=dict, repr=False, compare=False)
    _columns: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_list(cls, seqs: list[np.ndarray]) -> TokenSeqs:
        lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.concatenate(seqs).astype(np.int32) if seqs else np.zeros(0, dtype=np.int32)
        return cls(ids, offsets)

    @classmethod
    def from_ranges(cls, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> TokenSeqs:
        """Rows ``ids[lo[i]:hi[i]]`` of one token array, gathered without a Python loop."""
        lo = np.asarray(lo, dtype=np.int64)
        lengths = np.maximum(np.asarray(hi, dtype=np.int64) - lo, 0)
        offsets = np.zeros(len(lo) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        if total == 0:
            return cls(np.zeros(0, dtype=np.int32), offsets)
        starts = np.repeat(lo - offsets[:-1], lengths)
        gather = starts + np.arange(total, dtype=np.int64)
        return cls(np.asarray(ids, dtype=np.int32)[gather], offsets)

    @classmethod
    def concat(cls, parts: list[TokenSeqs]) -> TokenSeqs:
        if not parts:
            return cls(np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64))
        ids = np.concatenate([p.ids for p in parts]).astype(np.int32)
        offsets = [np.zeros(1, dtype=np.int64)]
        base = 0
        for p in parts:
            offsets.append(p.offsets[1:] + base)
            base += int(p.offsets[-1])
        return cls(ids, np.concatenate(offsets))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i] : self.offsets[i + 1]]

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def take(self, rows: np.ndarray) -> TokenSeqs:
        rows = np.asarray(rows, dtype=np.int64)
        return TokenSeqs.from_ranges(self.ids, self.offsets[rows], self.offsets[rows + 1])

    def matrix(self, vocab_size: int) -> sp.csr_matrix:
        """Counts: ``M[i, t]`` = occurrences of token ``t`` in unit ``i`` (CSR, float64)."""
        m = self._matrix.get(vocab_size)
        if m is None:
            m = self._counts(vocab_size)
            m.sum_duplicates()
            self._matrix = {vocab_size: m}
        return m

    def _counts(self, vocab_size: int) -> sp.csr_matrix:
        """The rows as they are (unsorted, duplicates not summed): the offsets are the row
        pointers and (a copy of) the ids the column indices, so nothing is sorted here."""
        start, end = int(self.offsets[0]), int(self.offsets[-1])
        indptr = self.offsets - start
        if end < 2**31:
            indptr = indptr.astype(np.int32)
        data = np.ones(end - start, dtype=np.float64)
        indices = self.ids[start:end].astype(np.int32, copy=True)  # sum_duplicates sorts it in place
        m = sp.csr_matrix((data, indices, indptr), shape=(len(self), vocab_size))
        m.has_canonical_format = False  # make sum_duplicates sort and sum, whatever SciPy assumed
        return m

    def columns(self, vocab_size: int) -> sp.csc_matrix:
        """The counts of :meth:`matrix` stored by columns (CSC, float64): taking the columns of a
        few query tokens reads only their entries, not the whole matrix."""
        return self._column_counts(vocab_size)[0]

    def occurrences(self, vocab_size: int) -> np.ndarray:
        """Occurrences of each token id in all the rows (int64, length ``vocab_size``): the
        collection frequency, read off the same pass that builds :meth:`columns`."""
        return self._column_counts(vocab_size)[1]

    def _column_counts(self, vocab_size: int) -> tuple[sp.csc_matrix, np.ndarray]:
        entry = self._columns.get(vocab_size)
        if entry is None:
            entry = self._build_columns(vocab_size)
            self._columns = {vocab_size: entry}
        return entry

    def _build_columns(self, vocab_size: int) -> tuple[sp.csc_matrix, np.ndarray]:
        """A counting sort of the rows as they are (SciPy's linear CSR -> CSC transposition on a
        matrix of ones whose column indices are the ids themselves, not a copy): it visits the
        rows in order, so each column's row indices come out sorted, repeats side by side, and
        the column sizes before the repeats are summed are the occurrences of each id. Summing
        the repeats (also linear) gives the canonical matrix, with no sorting at all. Until then the
        ones are the smallest unsigned integers that hold the longest row's length (a quarter to an
        eighth of the memory traffic of float64); only the summed entries become float64."""
        start, end = int(self.offsets[0]), int(self.offsets[-1])
        small = end - start < 2**31
        index_type = np.int32 if small else np.int64
        indptr = (self.offsets - start).astype(index_type)
        ids = self.ids[start:end].astype(index_type, copy=False)  # read only: never sorted in place
        if len(ids) and (int(ids.max()) >= vocab_size or int(ids.min()) < 0):
            raise ValueError(f"token ids must lie in [0, {vocab_size})")  # SciPy would write out of bounds
        # a count in one row never exceeds the row's length: the smallest type that holds the longest
        longest = int(np.diff(indptr).max()) if len(self) else 0
        count_type = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if longest <= np.iinfo(t).max)
        ones = np.ones(end - start, dtype=count_type)
        rows = sp.csr_matrix((ones, ids, indptr), shape=(len(self), vocab_size))
        m = rows.tocsc()
        occurrences = np.diff(m.indptr).astype(np.int64)
        m.has_sorted_indices = True
        m.has_canonical_format = False  # make sum_duplicates sum, whatever SciPy assumed
        m.sum_duplicates()
        m.data = m.data.astype(np.float64)
        return m, occurrences
