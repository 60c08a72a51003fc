"""Word embeddings: training domain vectors, loading pretrained vectors, the phrase model applied fast, and
the directions of texts under them.

Everything here works on *token strings*: the analysis of text into lower-cased lemma
tokens happens elsewhere, and this module receives lists of those tokens.

Three entry points:

* :func:`train_vectors` trains word2vec or fastText skip-gram vectors (gensim) on a
  tokenised domain corpus, optionally after joining frequent 2- and 3-word phrases
  (gensim ``Phrases``) so that ``independent economic value`` becomes the single token
  ``independent_economic_value``.  The result is a :class:`DomainVectors`: the keyed
  vectors plus the phrase model, whose :meth:`DomainVectors.transform` must be applied to
  every query/sentence before looking its tokens up.
* :func:`load_vectors` loads pretrained vectors (word2vec binary/text, GloVe text,
  fastText ``.vec``/``.bin``, gensim native) and reports any problem with the file as an
  :class:`~statinterp.errors.InputError` naming the file.
Trained vectors are stored on disk by :class:`statinterp.cache.namespaces.VectorCache`.

**Unit directions of texts under word vectors**: what the cosine methods compare.

The direction of a text is the unit-length mean of the L2-normalised vectors of its tokens
(after the vectors' phrase model has joined them). The cosine scorer
(:class:`statinterp.rankers.cosine.Cosine`) only takes dot products; the directions are
served to it by whoever owns the vectors: :meth:`statinterp.vectors.provider.VectorProvider.directions`
hands out one :class:`UnitDirections` per kind and set of vectors, which computes the
directions of every set of units of a term index together on first use, keeps them in memory
for the run and on disk in the :class:`~statinterp.cache.namespaces.DirectionCache` (a warm run
reads them without loading the vectors). It serves other values computed under the vectors
the same way: per-unit values (:meth:`UnitDirections.unit_values`: the WMD novelty distances)
and word lists (:meth:`UnitDirections.words`: the words most similar to a query).

Pure functions over token strings and a gensim ``KeyedVectors`` (``kv``): a token "has a
vector" when it is a key of ``kv`` or, for fastText vectors, when gensim can build one from
its character n-grams; tokens without a vector are skipped, and so are tokens with an all-zero
vector wherever a direction is needed.

**Phrase joining over token-id arrays**: gensim's ``FrozenPhrases`` without a Python loop per token.

The embedding methods compare mean word vectors of whole cases and opinions, so the phrase
model of the domain vectors (``a b`` -> ``a_b``, :func:`train_phrases`)
must be applied to millions of tokens per run.  gensim does it one token at a time in Python;
:func:`join_phrases` gives exactly the same tokens from the ragged id arrays of a
:class:`~statinterp.text.analysis.TokenSeqs` with a few NumPy passes.

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

import dataclasses
import os
import struct
import weakref
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gensim
import numpy as np
from gensim.models import FastText, Word2Vec
from gensim.models.fasttext import FastTextKeyedVectors, ft_ngram_hashes, load_facebook_vectors
from gensim.models.keyedvectors import KeyedVectors
from gensim.models.phrases import FrozenPhrases, Phrases
from scipy.sparse import csr_matrix

from statinterp.cache.namespaces import directions_key, query_key, unit_values_key, words_key
from statinterp.cache.store import code_fingerprint
from statinterp.errors import InputError, UsageError
from statinterp.text.analysis import Vocabulary


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


__all__ = [
    "VECTOR_FORMATS",
    "DomainVectors",
    "Phrasers",
    "VectorSettings",
    "apply_phrases",
    "load_vectors",
    "stable_hash",
    "train_phrases",
    "train_vectors",
    "LOOKUP_BLOCK",
    "UnitDirections",
    "directions_for",
    "fasttext_oov_vectors",
    "lookup_vectors",
    "mean_directions",
    "mean_directions_of_ids",
    "mean_unit_vector",
    "query_direction",
    "unit_sets",
    "unit_vector_sums",
    "PhraseTable",
    "join_phrases",
    "join_phrases_in_sentences",
    "phrase_table",
    "ragged_ids",
    "vocabulary_of",
]

#: A trained phrase model: the bigram pass and the trigram pass (applied in that order).
Phrasers = tuple[FrozenPhrases, FrozenPhrases]

KINDS = ("word2vec", "fasttext")


def stable_hash(text: str) -> int:
    """A process-independent 32-bit string hash (CRC-32 of the UTF-8 bytes).

    Passed to gensim as ``hashfxn`` instead of the default :func:`hash`, which is salted
    per process for ``str`` unless ``PYTHONHASHSEED`` is fixed.  (In gensim 4.4 the
    ``hashfxn`` is only used by the deprecated ``Word2Vec.seeded_vector``; initial vectors
    come from ``numpy.random.default_rng(seed)``.  Passing it anyway keeps training
    deterministic should a gensim version use it again.)
    """
    return zlib.crc32(text.encode("utf-8"))


# ----------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class VectorSettings:
    """How to train domain vectors.

    ``kind``
        ``"word2vec"`` (gensim ``Word2Vec``) or ``"fasttext"`` (gensim ``FastText``;
        its ``FastTextKeyedVectors`` give vectors to out-of-vocabulary words from their
        character n-grams).
    ``dim``, ``epochs``, ``window``, ``min_count``, ``sg``
        The usual word2vec hyper-parameters (``sg=1``: skip-gram).  Words occurring fewer
        than ``min_count`` times in the (phrase-joined) corpus get no vector of their own.
    ``phrases``
        Join frequent 2- and 3-word phrases before training (two gensim ``Phrases``
        passes, see :func:`train_phrases`).  ``phrase_min_count`` (gensim default 5) is the
        minimum count of a word pair to be considered; ``phrase_threshold`` (gensim default
        10.0, Mikolov et al.'s scorer ``(count(ab) - min_count) * |V| / (count(a) count(b))``)
        the score a pair must exceed.
    ``seed``, ``workers``
        With ``workers=1`` and a fixed ``seed`` training is deterministic, also across
        processes and ``PYTHONHASHSEED`` values.  With more workers the order in which
        threads update the shared weights varies from run to run, so the vectors do too.
        The price is speed: training uses one core (roughly ``workers`` times slower than a
        multi-threaded run on a machine with that many cores).
    ``bucket``, ``min_n``, ``max_n``
        fastText only: number of hash buckets for character n-grams and the n-gram
        lengths.  The n-gram matrix has ``bucket * dim`` float32 entries (the default
        2,000,000 x 300 is 2.4 GB), so reduce ``bucket`` for small corpora.
    """

    kind: str
    dim: int = 300
    epochs: int = 5
    window: int = 5
    min_count: int = 5
    sg: int = 1
    phrases: bool = True
    phrase_min_count: int = 5
    phrase_threshold: float = 10.0
    seed: int = 1
    workers: int = 1
    bucket: int = 2_000_000
    min_n: int = 3
    max_n: int = 6

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"unknown vector kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        positive: tuple[str, ...] = ("dim", "epochs", "window", "min_count", "phrase_min_count", "workers")
        if self.kind == "fasttext":
            positive += ("bucket", "min_n", "max_n")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"vector setting {name} must be a positive integer, not {value!r}")
        if self.sg not in (0, 1):
            raise UsageError(f"vector setting sg must be 0 (CBOW) or 1 (skip-gram), not {self.sg!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise UsageError(f"vector setting seed must be an integer, not {self.seed!r}")
        if not isinstance(self.phrase_threshold, (int, float)) or not self.phrase_threshold > 0:
            raise UsageError(f"vector setting phrase_threshold must be positive, not {self.phrase_threshold!r}")
        if self.kind == "fasttext" and self.min_n > self.max_n:
            raise UsageError(f"vector setting min_n ({self.min_n}) is larger than max_n ({self.max_n})")

    def key(self) -> str:
        """A stable string naming every setting that influences the trained vectors.

        Settings that do not apply are left out (the phrase settings when ``phrases`` is
        false, the n-gram settings for word2vec), so they do not split the cache.
        """
        skip: set[str] = set()
        if not self.phrases:
            skip |= {"phrase_min_count", "phrase_threshold"}
        if self.kind != "fasttext":
            skip |= {"bucket", "min_n", "max_n"}
        parts = []
        for setting in dataclasses.fields(self):
            if setting.name in skip:
                continue
            value = getattr(self, setting.name)
            if setting.name == "phrase_threshold":
                value = repr(float(value))
            parts.append(f"{setting.name}={value}")
        return "v1;" + ";".join(parts)


# ----------------------------------------------------------------------------------------
# Phrases


def _check_reiterable(sentences: object) -> None:
    try:
        iterator = iter(sentences)  # type: ignore[call-overload]
    except TypeError:
        raise UsageError("sentences must be an iterable of token lists") from None
    if iterator is sentences:
        raise UsageError(
            "sentences must be re-iterable (a list, or an object whose __iter__ returns a fresh "
            "iterator), not a one-shot iterator or generator: training passes over them several times"
        )


class _PhrasedCorpus:
    """Re-iterable view of ``sentences`` with the phrase model applied on the fly."""

    def __init__(self, sentences: Iterable[Sequence[str]], phrasers: Sequence[FrozenPhrases]):
        self.sentences = sentences
        self.phrasers = tuple(phrasers)

    def __iter__(self) -> Iterator[list[str]]:
        for sentence in self.sentences:
            yield apply_phrases(self.phrasers, sentence)


def train_phrases(
    sentences: Iterable[Sequence[str]], min_count: int = 5, threshold: float = 10.0
) -> Phrasers:
    """Learn 2- and 3-word phrases from a re-iterable corpus of token lists.

    Two gensim ``Phrases`` passes: the first joins frequent word pairs (``a_b``), the
    second runs over the output of the first, so it can join a pair with a third word
    (``a_b_c``; occasionally two pairs, ``a_b_c_d``).  ``min_count`` and ``threshold`` are
    gensim's (defaults 5 and 10.0, the original word2vec phrase defaults); no connector
    words are used (gensim's default), so phrases never contain stop words such as "of".
    Tokens are joined with ``_``.
    """
    _check_reiterable(sentences)
    bigram = Phrases(sentences, min_count=min_count, threshold=threshold, delimiter="_").freeze()
    joined: Iterable[Sequence[str]] = _PhrasedCorpus(sentences, (bigram,))
    if isinstance(sentences, (list, tuple)):  # in memory: join the pairs at once (join_phrases, above)
        joined = join_phrases_in_sentences((bigram,), sentences)
    trigram = Phrases(joined, min_count=min_count, threshold=threshold, delimiter="_").freeze()
    return bigram, trigram


# ----------------------------------------------------------------------------------------
# Trained / loaded vectors


@dataclass
class DomainVectors:
    """Word vectors plus the phrase model their vocabulary was built with.

    ``kv`` is a gensim ``KeyedVectors`` (``FastTextKeyedVectors`` for fastText, which
    also gives vectors to unseen words); ``phrasers`` is ``None`` for pretrained vectors
    and for vectors trained without phrases.
    """

    kv: KeyedVectors
    phrasers: Phrasers | None = None
    #: What these vectors are, as a cache key for values computed from them (e.g. the unit
    #: directions of :mod:`statinterp.cache.namespaces`); ``None``: unknown, nothing is cached.
    source: str | None = field(default=None, compare=False)

    def transform(self, tokens: Sequence[str]) -> list[str]:
        """Apply the phrase model to ``tokens`` (a copy of them when there is none)."""
        return apply_phrases(self.phrasers, tokens)


def train_vectors(sentences: Iterable[Sequence[str]], settings: VectorSettings) -> DomainVectors:
    """Train skip-gram word2vec / fastText vectors on a corpus of token lists.

    ``sentences`` must be re-iterable (phrase learning and each training epoch pass over
    it again); a generator raises :class:`UsageError`.  With ``settings.phrases`` the
    phrase model is learnt first (:func:`train_phrases`, two passes) and applied to the
    corpus: once, into a new list, when ``sentences`` is a list or tuple; on the fly on
    every pass otherwise (a streamed corpus is never materialised).

    Determinism: with ``workers=1`` and a fixed ``seed`` two runs give bit-identical
    vectors, in the same or in different processes, whatever ``PYTHONHASHSEED`` is:
    gensim 4.4 draws the initial weights from ``numpy.random.default_rng(seed)`` and the
    negative/down-sampling from a ``RandomState(seed)``, the vocabulary order is a stable
    sort by frequency, and a deterministic ``hashfxn`` (:func:`stable_hash`) replaces
    Python's salted ``hash``.  The cost is a single training thread: training is about
    ``n`` times slower than with ``workers=n`` on ``n`` idle cores.  With ``workers > 1``
    the vectors differ between runs (thread scheduling).
    """
    _check_reiterable(sentences)
    phrasers = (
        train_phrases(sentences, settings.phrase_min_count, settings.phrase_threshold)
        if settings.phrases
        else None
    )
    corpus: Iterable[Sequence[str]] = sentences
    if phrasers is not None:
        corpus = _PhrasedCorpus(sentences, phrasers)
        if isinstance(sentences, (list, tuple)):  # already in memory: join phrases once, not every epoch
            corpus = join_phrases_in_sentences(phrasers, sentences)
    common = dict(
        vector_size=settings.dim,
        window=settings.window,
        min_count=settings.min_count,
        sg=settings.sg,
        epochs=settings.epochs,
        seed=settings.seed,
        workers=settings.workers,
        hashfxn=stable_hash,
    )
    if settings.kind == "word2vec":
        model: Word2Vec = Word2Vec(**common)
    else:
        model = FastText(**common, bucket=settings.bucket, min_n=settings.min_n, max_n=settings.max_n)
    model.build_vocab(corpus)
    if len(model.wv.index_to_key) == 0:
        raise UsageError(
            f"cannot train {settings.kind} vectors: no token occurs at least min_count="
            f"{settings.min_count} times in the training corpus"
        )
    model.train(corpus, total_examples=model.corpus_count, epochs=model.epochs)
    return DomainVectors(kv=model.wv, phrasers=phrasers)


# ----------------------------------------------------------------------------------------
# Loading pretrained vectors

#: Accepted values of ``load_vectors(format=...)``.
VECTOR_FORMATS = ("auto", "word2vec-bin", "word2vec-text", "glove", "fasttext-vec", "fasttext-bin", "gensim")

_EXPECTED = "expected word2vec binary/text, GloVe text or fastText .vec/.bin"
_FASTTEXT_MAGIC = 793712314  # first int32 of a fastText .bin (gensim's _FASTTEXT_FILEFORMAT_MAGIC)
_SNIFF_BYTES = 1 << 16
_FORMAT_NAMES = {
    "word2vec-bin": "word2vec binary",
    "word2vec-text": "word2vec text",
    "glove": "GloVe text",
    "fasttext-vec": "fastText .vec",
    "fasttext-bin": "fastText .bin",
    "gensim": "gensim native",
}


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _all_floats(parts: Sequence[str]) -> bool:
    try:
        for part in parts:
            float(part)
    except ValueError:
        return False
    return True


def _sniff(path: Path) -> str:
    """Guess the format of a vectors file from its first bytes (raises ValueError)."""
    with gensim.utils.open(str(path), "rb") as handle:  # transparently decompresses .gz/.bz2
        head = handle.read(_SNIFF_BYTES)
    if not head:
        raise ValueError("the file is empty")
    if len(head) >= 4 and struct.unpack("@i", head[:4])[0] == _FASTTEXT_MAGIC:
        return "fasttext-bin"
    if head[:1] == b"\x80":  # pickle protocol >= 2: KeyedVectors.save / Word2Vec.save
        return "gensim"
    first, _, rest = head.partition(b"\n")
    try:
        fields = first.decode("utf-8").split()
    except UnicodeDecodeError:
        raise ValueError("the first line is not UTF-8 text") from None
    if len(fields) == 2 and _is_int(fields[0]) and _is_int(fields[1]):
        dim = int(fields[1])
        second = rest.partition(b"\n")[0]
        try:
            parts = second.decode("utf-8").rstrip().split(" ")
        except UnicodeDecodeError:
            return "word2vec-bin"
        if not second or (len(parts) == dim + 1 and _all_floats(parts[1:])):
            return "word2vec-text"
        return "word2vec-bin"
    if len(fields) >= 2 and _all_floats(fields[1:]):
        return "glove"
    raise ValueError("the first line is neither a 'count dimension' header nor 'word v1 v2 ...'")


def _load_kv(path: Path, fmt: str) -> KeyedVectors:
    name = str(path)
    if fmt == "word2vec-bin":
        return KeyedVectors.load_word2vec_format(name, binary=True, unicode_errors="replace")
    if fmt in ("word2vec-text", "fasttext-vec"):
        return KeyedVectors.load_word2vec_format(name, binary=False, unicode_errors="replace")
    if fmt == "glove":
        return KeyedVectors.load_word2vec_format(name, binary=False, no_header=True, unicode_errors="replace")
    if fmt == "fasttext-bin":
        return load_facebook_vectors(name)
    if fmt == "gensim":
        obj = KeyedVectors.load(name)
        obj = getattr(obj, "wv", obj)  # a whole Word2Vec/FastText model saved with .save()
        if not isinstance(obj, KeyedVectors):
            raise ValueError(f"the pickle holds a {type(obj).__name__}, not gensim KeyedVectors")
        return obj
    raise AssertionError(fmt)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "no details"
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}"


def lowercase_view(kv: KeyedVectors) -> KeyedVectors:
    """Keyed vectors whose keys are the lower-cased keys of ``kv``.

    Our tokens are lower-case, pretrained vectors are cased.  Every lower-cased key gets
    the vector of the key that is already lower-case if there is one, otherwise that of
    its first case variant in ``kv``'s order (pretrained files are sorted by frequency,
    so the most frequent variant: ``Court`` before ``COURT``).  Keys with upper-case
    letters are dropped (they can never match a token).  ``kv`` itself is returned when
    all its keys are lower-case already, and for fastText vectors, whose n-gram model
    gives every lower-case token a vector anyway.
    """
    if isinstance(kv, FastTextKeyedVectors):
        return kv
    keys = kv.index_to_key
    if all(key == key.lower() for key in keys):
        return kv
    rows: dict[str, int] = {}
    exact: set[str] = set()
    for row, key in enumerate(keys):
        low = key.lower()
        if key == low:
            if low not in exact:
                rows[low] = row
                exact.add(low)
        elif low not in rows:
            rows[low] = row
    view = KeyedVectors(kv.vector_size, count=0, dtype=kv.vectors.dtype)
    view.add_vectors(list(rows), kv.vectors[np.fromiter(rows.values(), dtype=np.int64, count=len(rows))])
    return view


def load_vectors(path: str | os.PathLike[str], format: str = "auto", *, lowercase: bool = True) -> DomainVectors:
    """Load pretrained word vectors (``phrasers`` is ``None``).

    ``format`` is one of :data:`VECTOR_FORMATS`; ``"auto"`` recognises

    * fastText ``.bin`` by its magic number (loaded with gensim's
      ``load_facebook_vectors``, so unseen words get n-gram vectors),
    * gensim native files (``KeyedVectors.save``/``Word2Vec.save``; a pickle),
    * word2vec text and fastText ``.vec`` by the ``count dimension`` header followed by a
      text line of ``dimension + 1`` fields, word2vec binary by the header followed by
      anything else,
    * GloVe text by a first line ``word v1 ... vD`` of numbers and no header.

    ``.gz``/``.bz2`` files are decompressed (gensim's ``smart_open``).  With ``lowercase``
    (default) the keys are lower-cased, see :func:`lowercase_view`.

    Any problem (missing, empty, truncated or malformed file) raises
    :class:`InputError` naming ``path`` with a one-line reason.  gensim native files are
    pickles: load only files you trust.
    """
    if format not in VECTOR_FORMATS:
        raise UsageError(f"unknown vector format {format!r}; expected one of {', '.join(VECTOR_FORMATS)}")
    file = Path(path)
    if not file.exists():
        raise InputError(file, f"vectors file not found; {_EXPECTED}")
    if not file.is_file():
        raise InputError(file, f"not a regular file; {_EXPECTED}")
    fmt = format
    if fmt == "auto":
        try:
            fmt = _sniff(file)
        except Exception as exc:  # noqa: BLE001 - any failure is reported as bad input
            reason = str(exc) if isinstance(exc, ValueError) else _one_line(exc)
            raise InputError(file, f"unrecognised vectors file ({reason}); {_EXPECTED}") from exc
    try:
        kv = _load_kv(file, fmt)
    except Exception as exc:  # noqa: BLE001 - gensim raises many kinds; never show its traceback
        raise InputError(
            file, f"cannot read {_FORMAT_NAMES[fmt]} vectors ({_one_line(exc)}); {_EXPECTED}"
        ) from exc
    if len(kv.index_to_key) == 0:
        raise InputError(file, f"the {_FORMAT_NAMES[fmt]} file contains no vectors; {_EXPECTED}")
    if not np.isfinite(kv.vectors).all():
        raise InputError(file, f"the {_FORMAT_NAMES[fmt]} file contains NaN or infinite values")
    if lowercase:
        kv = lowercase_view(kv)
    return DomainVectors(kv=kv, phrasers=None)


if TYPE_CHECKING:
    from statinterp.cache.namespaces import DirectionCache
    from statinterp.text.analysis import TokenSeqs



def lookup_vectors(
    words: Iterable[str], kv: KeyedVectors, *, drop_zero: bool = True, unit: bool = False
) -> tuple[dict[str, int], np.ndarray]:
    """Vectors (float64 rows) of the distinct ``words`` that have a vector.

    Returns ``(row_of_word, matrix)``; words without a vector (and, with ``drop_zero``,
    words whose vector is all zeros, which has no direction) are absent from the dict.
    ``unit`` (implies ``drop_zero``) scales every row to unit length, in place, with the
    norms computed once for both steps.
    """
    key_to_index = kv.key_to_index
    fasttext = isinstance(kv, FastTextKeyedVectors) and kv.bucket > 0
    known: list[str] = []
    indices: list[int] = []
    oov_words: list[str] = []
    for word in dict.fromkeys(words):
        index = key_to_index.get(word)
        if index is not None:
            known.append(word)
            indices.append(index)
        elif fasttext and word in kv:
            oov_words.append(word)
    # one float64 array, filled in place (the vectors of a whole vocabulary can be large)
    matrix = np.empty((len(known) + len(oov_words), kv.vector_size), dtype=np.float64)
    matrix[: len(known)] = kv.vectors[np.asarray(indices, dtype=np.int64)]
    if oov_words:
        matrix[len(known):] = fasttext_oov_vectors(kv, oov_words)
    words_in_order = known + oov_words
    if drop_zero or unit:
        norms = np.linalg.norm(matrix, axis=1)
        nonzero = norms > 0
        if not nonzero.all():
            matrix, norms = matrix[nonzero], norms[nonzero]
            words_in_order = [w for w, keep in zip(words_in_order, nonzero, strict=True) if keep]
        if unit:
            matrix /= norms[:, None]
    return {word: row for row, word in enumerate(words_in_order)}, matrix


def fasttext_oov_vectors(kv: FastTextKeyedVectors, words: Sequence[str]) -> np.ndarray:
    """``kv.get_vector(word)`` of each word that is not a key (float32 rows), for all at once.

    gensim adds the word's n-gram vectors one after the other in Python and divides by their
    number; here one sparse (words x buckets) times dense (buckets x dim) product in float32
    adds the same rows in the same order, so the vectors are bit for bit gensim's.  A word
    without n-grams gets the zero vector, as in gensim.
    """
    hashes = [ft_ngram_hashes(word, kv.min_n, kv.max_n, kv.bucket) for word in words]
    lengths = np.fromiter(map(len, hashes), dtype=np.int64, count=len(hashes))
    indptr = np.zeros(len(hashes) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    columns = np.fromiter((h for row in hashes for h in row), dtype=np.int64, count=int(indptr[-1]))
    ngrams = csr_matrix((np.ones(len(columns), dtype=np.float32), columns, indptr),
                        shape=(len(hashes), kv.vectors_ngrams.shape[0]))
    sums = np.asarray(ngrams @ kv.vectors_ngrams, dtype=np.float32)
    has = lengths > 0
    sums[has] /= lengths[has, None].astype(np.float32)
    return sums


def mean_unit_vector(tokens: Sequence[str], kv: KeyedVectors) -> np.ndarray | None:
    """Average of the L2-normalised vectors of the tokens that have one (float64).

    Every occurrence counts, so a repeated token weighs more.  ``None`` if no token has
    a vector.  The result is not itself unit length.
    """
    rows, unit = lookup_vectors(tokens, kv, unit=True)
    counts = Counter(token for token in tokens if token in rows)
    if not counts:
        return None
    weights = np.zeros(len(rows))
    for token, count in counts.items():
        weights[rows[token]] = count
    return weights @ unit / weights.sum()


def query_direction(tokens: Sequence[str], kv: KeyedVectors) -> np.ndarray | None:
    """Unit direction of the tokens' :func:`mean_unit_vector` (``None`` if it has none)."""
    mean = mean_unit_vector(tokens, kv)
    if mean is None:
        return None
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else None


def mean_directions(docs: Sequence[Sequence[str]], kv: KeyedVectors) -> np.ndarray:
    """Unit-length direction of each doc's :func:`mean_unit_vector` (rows of a float64 array).

    A row is all zeros where the doc has no token with a vector (or its mean is zero), so a
    dot product with a unit query direction is the doc's cosine, 0 for such docs, exactly
    as in :func:`statinterp.rankers.embedding.cosine_scores`.
    """
    return mean_directions_of_ids(*ragged_ids(list(docs)), kv)


#: Words whose vectors are looked up at a time by :func:`unit_vector_sums` (bounds its memory).
LOOKUP_BLOCK = 16384


def unit_vector_sums(
    parts: Sequence[tuple[np.ndarray, np.ndarray]], words: Sequence[str], kv: KeyedVectors
) -> list[np.ndarray]:
    """For each ``(ids, offsets)`` of ``parts`` (ragged docs ``ids[offsets[i]:offsets[i + 1]]``,
    ``words[id]`` a token's string): per doc, the sum of the unit vectors of its tokens that
    have a (non-zero) vector, as a float64 array (docs x dim).

    The distinct words of all parts are looked up once, :data:`LOOKUP_BLOCK` at a time; each
    block adds one sparse (docs x block words) times dense (block words x dim) product to
    every part, so memory stays bounded however large the vocabulary (fastText gives every
    word a vector).
    """
    sums = [np.zeros((len(offsets) - 1, kv.vector_size)) for _, offsets in parts]
    if not parts:
        return sums
    used = np.unique(np.concatenate([np.asarray(ids, dtype=np.int64) for ids, _ in parts]))
    col_of_id = np.full(len(words), -1, dtype=np.int64)
    for start in range(0, len(used), LOOKUP_BLOCK):
        block = used[start : start + LOOKUP_BLOCK]
        found, matrix = lookup_vectors((words[i] for i in block.tolist()), kv, unit=True)
        if not found:
            continue
        col_of_id[block] = [found.get(words[i], -1) for i in block.tolist()]
        for (ids, offsets), acc in zip(parts, sums, strict=True):
            cols = col_of_id[ids]
            hit = cols >= 0
            indptr = np.concatenate(([0], np.cumsum(hit, dtype=np.int64)))[offsets]  # block tokens per doc
            counts = csr_matrix((np.ones(int(indptr[-1])), cols[hit], indptr), shape=(len(acc), len(found)))
            acc += counts @ matrix
        col_of_id[block] = -1
    return sums


def unit_rows(sums: np.ndarray) -> np.ndarray:
    """Rows of ``sums`` scaled to unit length (in place; all-zero rows stay zero)."""
    norms = np.linalg.norm(sums, axis=1)
    nonzero = norms > 0
    sums[nonzero] /= norms[nonzero, None]
    return sums


def mean_directions_of_ids(ids: np.ndarray, offsets: np.ndarray, words: Sequence[str], kv: KeyedVectors) -> np.ndarray:
    """:func:`mean_directions` of the ragged docs ``ids[offsets[i]:offsets[i + 1]]`` (``words[id]``
    is a token's string), from :func:`unit_vector_sums`."""
    return unit_rows(unit_vector_sums([(np.asarray(ids, dtype=np.int64), offsets)], words, kv)[0])


# ----------------------------------------------------------------------------------------
# Serving directions: one UnitDirections per kind and set of vectors


def _code() -> str:
    """Fingerprint of the code the directions come from (part of their cache keys)."""
    return code_fingerprint(__name__)


def unit_sets(index: Any) -> dict[str, TokenSeqs]:
    """Every set of units of a term index by a stable name: the levels, then the neighbours."""
    sets = {f"level:{name}": units.seqs for name, units in getattr(index, "levels", {}).items()}
    sets.update((f"neighbour:{d}", units.seqs) for d, units in sorted(getattr(index, "neighbours", {}).items()))
    return sets


class UnitDirections:
    """The directions of queries and units under one set of vectors of one kind.

    Memoised for the life of this object (the provider keeps one per kind and vectors), and
    kept in ``cache`` (a :class:`~statinterp.cache.namespaces.DirectionCache`) when the vectors
    are known by their ``source`` (their file): the vectors are loaded (``load()``) only when
    something is not cached.
    """

    def __init__(self, load: Callable[[], DomainVectors], source: str | None = None,
                 cache: DirectionCache | None = None, loaded: DomainVectors | None = None):
        self._load = load
        self.source = source
        self.cache = cache if source else None
        self._loaded = loaded  # also keeps the id of in-memory vectors unique while this lives
        self._units: dict[int, tuple[TokenSeqs, np.ndarray]] = {}
        self._queries: dict[tuple[str, ...], np.ndarray | None] = {}
        self._values: dict[tuple[int, str], tuple[TokenSeqs, np.ndarray]] = {}
        self._words: dict[str, list[str]] = {}

    def vectors(self) -> DomainVectors:
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded

    def query(self, tokens: Sequence[str]) -> np.ndarray | None:
        """Unit direction of the query's mean unit vector after phrase joining (``None`` if no
        query token has a vector)."""
        key_tokens = tuple(tokens)
        if key_tokens in self._queries:
            return self._queries[key_tokens]
        key = query_key(_code(), self.source, key_tokens) if self.cache is not None and self.source else None
        found = self.cache.get_query(key) if key is not None and self.cache is not None else None
        if found is None:
            vectors = self.vectors()
            direction = query_direction(vectors.transform(list(key_tokens)), vectors.kv)
            if key is not None and self.cache is not None:
                self.cache.put_query(key, direction)
        else:
            direction = found[0]
        self._queries[key_tokens] = direction
        return direction

    def units(self, units: TokenSeqs, index: Any) -> np.ndarray:
        """:func:`mean_directions` of the units' tokens (phrases joined; ``index.vocab.words``
        names the ids). For the term's own unit sets (every level and neighbour offset) the
        directions of all of them are computed together on first use, or read from the cache,
        and stored there."""
        hit = self._units.get(id(units))
        if hit is not None and hit[0] is units:
            return hit[1]
        sets = unit_sets(index)
        if any(seqs is units for seqs in sets.values()):
            for name, directions in self._term_directions(index, sets).items():
                self._units[id(sets[name])] = (sets[name], directions)  # holding the units keeps the id unique
            return self._units[id(units)][1]
        vectors = self.vectors()
        ids, offsets, words = join_phrases(vectors.phrasers, units.ids, units.offsets, index.vocab.words)
        directions = mean_directions_of_ids(ids, offsets, words, vectors.kv)
        self._units[id(units)] = (units, directions)
        return directions

    def unit_values(self, units: TokenSeqs, index: Any, measure: str, code_modules: Sequence[str],
                    compute: Callable[[DomainVectors], np.ndarray]) -> np.ndarray:
        """Per-unit values of a measure under these vectors: ``compute(vectors)`` (a float64 array,
        one value per unit of ``units``), memoised for the life of this object and kept in the
        cache, so that a warm run neither loads the vectors nor computes the values again.

        ``measure`` names the measure and everything its values depend on besides the units, their
        words (``index.vocab.words``) and the vectors (reference tokens, parameters, library
        versions); ``code_modules`` are the modules whose source computes them (their
        fingerprint, with this module's and the phrase joining's, is part of the cache key)."""
        memo = (id(units), measure)
        hit = self._values.get(memo)
        if hit is not None and hit[0] is units:
            return hit[1]
        key = None
        if self.cache is not None and self.source:
            code = code_fingerprint(*code_modules, __name__)
            key = unit_values_key(code, self.source, index.vocab.words, {"units": units}, measure)
            found = self.cache.get_values(key, len(units))
        else:
            found = None
        if found is None:
            found = np.asarray(compute(self.vectors()), dtype=np.float64)
            if found.shape != (len(units),):
                raise ValueError(f"{measure}: {found.shape} values for {len(units)} units")
            if key is not None and self.cache is not None:
                self.cache.put_values(key, found)
        self._values[memo] = (units, found)  # holding the units keeps the id unique
        return found

    def words(self, measure: str, code_modules: Sequence[str], compute: Callable[[DomainVectors], list[str]]
              ) -> list[str]:
        """A word list computed from these vectors, ``compute(vectors)``, memoised and kept in the
        cache like :meth:`unit_values` (``measure`` names it and everything it depends on besides
        the vectors: the query, parameters, library versions)."""
        found = self._words.get(measure)
        if found is not None:
            return found
        key = None
        if self.cache is not None and self.source:
            key = words_key(code_fingerprint(*code_modules, __name__), self.source, measure)
            found = self.cache.get_words(key)
        if found is None:
            found = [str(word) for word in compute(self.vectors())]
            if key is not None and self.cache is not None:
                self.cache.put_words(key, found)
        self._words[measure] = found
        return found

    def _term_directions(self, index: Any, sets: dict[str, TokenSeqs]) -> dict[str, np.ndarray]:
        """:func:`mean_directions_of_ids` of every set of ``sets`` (phrases joined), read from or
        written to the cache when there is one (the vectors are loaded only on a miss)."""
        words = index.vocab.words
        cache_key = (directions_key(_code(), self.source, words, sets)
                     if self.cache is not None and self.source else None)
        if cache_key is not None and self.cache is not None:
            found = self.cache.get(cache_key, {name: len(seqs) for name, seqs in sets.items()})
            if found is not None:
                return found
        vectors = self.vectors()
        joined = {name: join_phrases(vectors.phrasers, seqs.ids, seqs.offsets, words) for name, seqs in sets.items()}
        all_words = next(iter(joined.values()))[2] if joined else words  # the same words for every set
        sums = unit_vector_sums([(ids, offsets) for ids, offsets, _ in joined.values()], all_words, vectors.kv)
        out = {name: unit_rows(values) for name, values in zip(joined, sums, strict=True)}
        if cache_key is not None and self.cache is not None:
            self.cache.put(cache_key, out)
        return out


def memoised_directions(memo: dict, provider: Any, kind: str, cache: DirectionCache | None) -> UnitDirections:
    """The :class:`UnitDirections` of ``provider``'s current vectors of ``kind``, from ``memo``.

    The vectors are named by their ``source`` (``provider.source(kind)``: their file) when the
    provider knows it without loading them, so that directions read from the cache never need
    the vectors themselves; vectors without a source are named by the object (not cached on disk).
    """
    source_of = getattr(provider, "source", None)
    source = source_of(kind) if callable(source_of) else None
    loaded = None
    if source is None:
        loaded = provider.get(kind)
        source = getattr(loaded, "source", None)
    ident = ("source", source) if source else ("object", id(loaded))
    found = memo.get((kind, ident))
    if found is None:
        found = UnitDirections(lambda: provider.get(kind), source, cache if source else None, loaded)
        memo[(kind, ident)] = found
    return found


_OTHER_PROVIDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def directions_for(provider: Any, kind: str) -> UnitDirections:
    """The :class:`UnitDirections` of ``kind`` that ``provider`` serves (``provider.directions``);
    for any other object with ``get(kind) -> DomainVectors`` (a stand-in provider), a memoised
    one without a disk cache."""
    own = getattr(provider, "directions", None)
    if callable(own):
        return own(kind)
    try:
        memo = _OTHER_PROVIDERS.setdefault(provider, {})
    except TypeError:  # neither hashable nor weakly referable: nothing is memoised
        memo = {}
    return memoised_directions(memo, provider, kind, None)
