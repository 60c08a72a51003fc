"""Phrase joining over token-id arrays: gensim's ``FrozenPhrases`` without a Python loop per token.

The embedding methods compare mean word vectors of whole cases and opinions, so the phrase
model of the domain vectors (``a b`` -> ``a_b``, :func:`statinterp.vectors.embeddings.train_phrases`)
must be applied to millions of tokens per run.  gensim does it one token at a time in Python;
:func:`join_phrases` gives exactly the same tokens from the ragged id arrays of a
:class:`~statinterp.text.units.TokenSeqs` with a few NumPy passes.

gensim's rule (``_PhrasesTransformation.analyze_sentence``, no connector words): scan the
tokens left to right; a token starts a candidate; if the candidate and the next token form a
phrase whose score exceeds the threshold, both are emitted as one joined token and the
following token starts afresh, otherwise the candidate is emitted alone and the next token
becomes the candidate (an empty token that becomes the candidate is dropped: gensim tests
``if start_token``, so it is neither emitted nor joined to the next token).  Over a run of consecutive phrase pairs
this joins the first, third, fifth, ... pair of the run, which is what :func:`_greedy_joins` computes.  Pairs never
cross a unit boundary (each unit is one gensim "sentence").  Phrasers with connector words are not supported here
(statinterp trains without them); :func:`join_phrases` falls back to gensim for those.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np
from gensim.models.phrases import FrozenPhrases

from statinterp.text.analysis import Vocabulary

__all__ = ["PhraseTable", "join_phrases", "join_phrases_in_sentences", "phrase_table", "ragged_ids", "vocabulary_of"]


def vocabulary_of(words: Sequence[str]) -> Vocabulary:
    """A :class:`~statinterp.text.analysis.Vocabulary` whose ids are the positions of ``words`` (distinct)."""
    vocabulary = Vocabulary()
    vocabulary.add_all(words)
    if len(vocabulary) != len(words):
        raise ValueError("the words of a vocabulary must be distinct")
    return vocabulary


def _phrase_splits(phraser: FrozenPhrases) -> list[tuple[str, str, str]]:
    """``(left, right, phrase)`` for every way to split each phrase of ``phraser`` (score above
    its threshold) at a delimiter into a non-empty left and a right string: gensim compares the
    joined string, so every such split of a phrase is a pair it joins."""
    delimiter = phraser.delimiter
    threshold = phraser.threshold
    out = []
    for phrase, score in phraser.phrasegrams.items():
        if not score > threshold:
            continue
        start = phrase.find(delimiter, 1)
        while start >= 0:
            out.append((phrase[:start], phrase[start + len(delimiter):], phrase))
            start = phrase.find(delimiter, start + 1)
    return out


class PhraseTable:
    """Everything :func:`join_phrases` needs, worked out once per phrase model and vocabulary.

    The id space: the given ``words`` (ids ``0 .. len(words) - 1``), then every phrase each
    pass can produce from them, in a fixed order, so the joined ids do not depend on which
    units are joined.  Per pass: the sorted keys ``a * len(words) + b`` of the id pairs it
    joins and the id of each joined pair.
    """

    def __init__(self, phrasers: Sequence[FrozenPhrases], words: Sequence[str]):
        self.phrasers = tuple(phrasers)
        lexicon = vocabulary_of(words)
        self._passes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        split_lists = [_phrase_splits(phraser) for phraser in self.phrasers]
        raw: list[tuple[list[int], list[int], list[int]]] = []
        for splits in split_lists:  # the ids of pass k's pairs use the words of passes < k
            looked_up = [(lexicon.get(a), lexicon.get(b), phrase) for a, b, phrase in splits]
            known = [(a, b, phrase) for a, b, phrase in looked_up if a is not None and b is not None]
            raw.append(([a for a, _, _ in known], [b for _, b, _ in known], [lexicon.add(p) for _, _, p in known]))
        self.words: list[str] = lexicon.words
        self.size = len(lexicon)
        for left, right, joined in raw:
            keys = np.asarray(left, dtype=np.int64) * self.size + np.asarray(right, dtype=np.int64)
            keys, first = np.unique(keys, return_index=True)
            is_left = np.zeros(self.size, dtype=bool)  # ids that begin some pair of this pass
            is_left[keys // self.size] = True
            self._passes.append((keys, np.asarray(joined, dtype=np.int64)[first], is_left))
        self._empty = lexicon.get("")

    def join(self, ids: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The phrase-joined units (ids into :attr:`words`) of the units ``ids[offsets[i]:offsets[i + 1]]``."""
        ids = np.asarray(ids, dtype=np.int64)
        offsets = np.asarray(offsets, dtype=np.int64)
        for pairs, joined, is_left in self._passes:
            ids, offsets = self._join_pass(pairs, joined, is_left, ids, offsets)
        return ids, offsets

    def _join_pass(
        self, pairs: np.ndarray, joined: np.ndarray, is_left: np.ndarray, ids: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        n = len(ids)
        joins = np.zeros(0, dtype=np.int64)
        joined_at = joins
        if n >= 2 and len(pairs):
            at = np.flatnonzero(is_left[ids[:-1]])  # only these positions can begin a pair
            keys = ids[at] * self.size + ids[at + 1]
            where = np.searchsorted(pairs, keys)
            where[where == len(pairs)] = 0
            found = pairs[where] == keys
            candidate = np.zeros(n - 1, dtype=bool)
            candidate[at[found]] = True
            pair_of = np.zeros(n - 1, dtype=np.int64)
            pair_of[at[found]] = where[found]
            starts = offsets[1:-1]  # a unit starting at position k: the pair (k - 1, k) crosses a boundary
            candidate[starts[(starts > 0) & (starts < n)] - 1] = False
            joins = np.flatnonzero(_greedy_joins(candidate))
            joined_at = joined[pair_of[joins]]
        keep = np.ones(n, dtype=bool)
        keep[joins + 1] = False
        if self._empty is not None:
            keep &= ids != self._empty  # gensim drops an empty token that is not the end of a phrase
        if not len(joins) and keep.all():
            return ids, offsets
        out = ids.copy()
        out[joins] = joined_at
        removed_before = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(~keep, out=removed_before[1:])
        return out[keep], offsets - removed_before[offsets]


def _greedy_joins(candidate: np.ndarray) -> np.ndarray:
    """Positions ``i`` whose pair (i, i + 1) gensim joins, given which pairs are phrases.

    Within each run of consecutive candidate pairs the 1st, 3rd, 5th, ... are joined.
    """
    n = len(candidate)
    if n == 0:
        return candidate
    starts = candidate.copy()
    starts[1:] &= ~candidate[:-1]
    start_at = np.flatnonzero(starts)
    run = np.cumsum(starts) - 1  # index of the run each position belongs to (-1 before the first)
    offset = np.arange(n) - start_at[np.maximum(run, 0)] if len(start_at) else np.zeros(n, dtype=np.int64)
    return candidate & (offset % 2 == 0)


#: The last table built per first phraser (a vocabulary only grows, so one entry per model suffices).
_TABLES: weakref.WeakKeyDictionary[FrozenPhrases, tuple] = weakref.WeakKeyDictionary()


def phrase_table(phrasers: Sequence[FrozenPhrases], words: Sequence[str]) -> PhraseTable:
    """The :class:`PhraseTable` of ``phrasers`` over ``words``, memoised while the same words
    object keeps the same length (a :class:`~statinterp.text.analysis.Vocabulary` only grows)."""
    phrasers = tuple(phrasers)
    hit = _TABLES.get(phrasers[0])
    if hit is not None:
        words_seen, n_words, table = hit
        if words_seen is words and n_words == len(words) and table.phrasers == phrasers:
            return table
    table = PhraseTable(phrasers, words)
    _TABLES[phrasers[0]] = (words, len(words), table)
    return table


def join_phrases(
    phrasers: Sequence[FrozenPhrases] | None,
    ids: np.ndarray,
    offsets: np.ndarray,
    words: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Apply ``phrasers`` in order to every unit ``ids[offsets[i]:offsets[i + 1]]``.

    ``words[id]`` is the string of a token id.  Returns ``(ids, offsets, words)`` of the
    phrase-joined units: the new ids index the returned ``words``, which extend the given ones
    with the phrases (a joined string that already is a word keeps that word's id).  The
    tokens of unit ``i`` equal ``apply_phrases(phrasers, [words[t] for t in unit_i])``.
    """
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if not phrasers:
        return ids, offsets, list(words)
    if any(phraser.connector_words for phraser in phrasers):
        return _join_with_gensim(phrasers, ids, offsets, vocabulary_of(words))
    table = phrase_table(phrasers, words)
    ids, offsets = table.join(ids, offsets)
    return ids, offsets, table.words


def ragged_ids(docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Token lists as ``(ids, offsets, words)``: doc ``i`` is ``ids[offsets[i]:offsets[i + 1]]``
    and ``words[id]`` a token's string (numbered in order of first occurrence)."""
    vocabulary = Vocabulary()
    ids = np.fromiter((vocabulary.add(t) for doc in docs for t in doc), dtype=np.int64)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)), out=offsets[1:])
    return ids, offsets, vocabulary.words


def join_phrases_in_sentences(phrasers: Sequence[FrozenPhrases] | None,
                              sentences: Sequence[Sequence[str]]) -> list[list[str]]:
    """``[apply_phrases(phrasers, s) for s in sentences]`` for token strings, via :func:`join_phrases`."""
    if not phrasers:
        return [list(s) for s in sentences]
    ids, offsets, words = join_phrases(phrasers, *ragged_ids(sentences))
    tokens = np.asarray(words, dtype=object)[ids]
    return [tokens[lo:hi].tolist() for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=False)]


def apply_phrases(phrasers: Sequence[FrozenPhrases] | None, tokens: Sequence[str]) -> list[str]:
    """Join the phrases of ``phrasers`` (from :func:`statinterp.vectors.embeddings.train_phrases`) in ``tokens``.

    ``None`` means no phrase model: the tokens are returned unchanged (as a new list).
    Queries and sentences must go through the same phrase model as the training corpus.
    """
    out = list(tokens)
    if not phrasers:
        return out
    for phraser in phrasers:
        if not out:
            break
        out = list(phraser[out])
    return out


def _join_with_gensim(
    phrasers: Sequence[FrozenPhrases], ids: np.ndarray, offsets: np.ndarray, lexicon: Vocabulary
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The slow reference path (one gensim call per unit), for phrasers with connector words."""
    words = lexicon.words
    out: list[int] = []
    bounds = [0]
    for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=False):
        out.extend(lexicon.add(t) for t in apply_phrases(phrasers, [words[t] for t in ids[lo:hi].tolist()]))
        bounds.append(len(out))
    return np.asarray(out, dtype=np.int64), np.asarray(bounds, dtype=np.int64), lexicon.words
