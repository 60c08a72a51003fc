"""Word embeddings: training domain vectors, loading pretrained vectors, caching.

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
"""

from __future__ import annotations

import dataclasses
import os
import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import gensim
import numpy as np
from gensim.models import FastText, Word2Vec
from gensim.models.fasttext import FastTextKeyedVectors, load_facebook_vectors
from gensim.models.keyedvectors import KeyedVectors
from gensim.models.phrases import FrozenPhrases, Phrases

from statinterp.errors import InputError, UsageError
from statinterp.text.phrasing import apply_phrases, join_phrases_in_sentences

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
    if isinstance(sentences, (list, tuple)):  # in memory: join the pairs at once (statinterp.text.phrasing)
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
