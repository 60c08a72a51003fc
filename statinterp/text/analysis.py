"""Text analysis: spaCy tokens -> lower-cased lemma ids and sentence spans, cached on disk.

A *token* is the lower-cased lemma of a spaCy token that contains a letter or a digit.
Lemmas come from spaCy's lookup lemmatizer (tables of ``spacy-lookups-data``); since lookup
lemmatization depends only on the token's form, each distinct form is lemmatized once
(:meth:`LemmaTable.lemma`) instead of once per token.

Each distinct text is analysed once: :class:`Analyzer` keeps an on-disk cache
(:class:`statinterp.cache.namespaces.AnalysisCache`) keyed by the SHA-256 of the text and by every
setting that changes the result (see :attr:`Analyzer.settings_key`), so a second run reads
arrays instead of running spaCy.

Text units as token-id sequences are stored ragged (:class:`TokenSeqs`: one flat id array plus
row offsets), with their sparse count matrices derived on demand.
"""

from __future__ import annotations

import functools
import hashlib
import os
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import scipy.sparse as sp
from spacy.attrs import IDX, IS_SPACE, LENGTH, ORTH, SENT_START

from statinterp.cache.namespaces import AnalysisCache
from statinterp.cache.store import default_cache_dir
from statinterp.provenance import package_version
from statinterp.text import MAX_TEXT_CHARS  # the analyser accepts every text the loaders accept
from statinterp.text.segmentation import SEGMENTER_VERSION, build_pipeline

#: Bump when the cache layout or the token definition changes.
CACHE_FORMAT = 3


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Vocabulary:
    """Token string <-> integer id, shared by every analysed text of a run."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.words: list[str] = []

    def __len__(self) -> int:
        return len(self.words)

    def add(self, word: str) -> int:
        i = self._ids.get(word)
        if i is None:
            i = self._ids[word] = len(self.words)
            self.words.append(word)
        return i

    def get(self, word: str) -> int | None:
        return self._ids.get(word)

    def add_all(self, words: Sequence[str]) -> np.ndarray:
        """Ids of ``words``, adding the new ones in order (as :meth:`add` one by one would)."""
        if not self.words:  # a whole vocabulary at once (e.g. restored from a cache)
            ids = dict(zip(words, range(len(words)), strict=False))
            if len(ids) == len(words):
                self._ids, self.words = ids, list(words)
                return np.arange(len(words), dtype=np.int32)
        get = self._ids.get
        out = [get(w) for w in words]
        if None in out:
            for k, i in enumerate(out):
                if i is None:
                    out[k] = self.add(words[k])
        return np.asarray(out, dtype=np.int32).reshape(len(out))


@dataclass
class AnalysedText:
    """The word tokens of one text: character spans and vocabulary ids, plus sentence spans."""

    starts: np.ndarray  # int32, character offset where each word token starts
    ends: np.ndarray  # int32, character offset where it ends
    ids: np.ndarray  # int32, vocabulary id of its lower-cased lemma
    sentences: np.ndarray  # int32 (m, 2), character spans of spaCy sentences

    def token_range(self, start: int, end: int) -> tuple[int, int]:
        """Indices ``lo, hi`` of the tokens lying wholly inside characters ``[start, end)``."""
        lo = int(np.searchsorted(self.starts, start, "left"))
        hi = int(np.searchsorted(self.ends, end, "right"))
        return lo, max(lo, hi)

    def tokens(self, start: int, end: int) -> np.ndarray:
        lo, hi = self.token_range(start, end)
        return self.ids[lo:hi]


@dataclass
class _LocalAnalysis:
    """One text's analysis with a text-local vocabulary: the cache's unit of storage."""

    starts: np.ndarray
    ends: np.ndarray
    local_ids: np.ndarray
    words: list[str]  # local vocabulary
    sentences: np.ndarray


#: A worker builds its spaCy pipeline afresh once the string store holds more than this many
#: strings (spaCy keeps every string and lexeme it has seen: over a long ingest of real case law
#: that grows with every new word).
MAX_SPACY_STRINGS = 1_000_000
#: :class:`LemmaTable` forgets its memo when it holds this many forms (memory stays bounded over a
#: long ingest, where real case law keeps bringing new forms).
MAX_MEMO_FORMS = 500_000


class LemmaTable:
    """Form -> lower-cased lemma via spaCy's lookup table, memoised per distinct form (at most
    :data:`MAX_MEMO_FORMS` at a time)."""

    def __init__(self, nlp) -> None:
        self._table = nlp.get_pipe("lemmatizer").lookups.get_table("lemma_lookup")
        self._memo: dict[str, str | None] = {}

    def lemma(self, form: str) -> str | None:
        """The token for ``form``, or ``None`` when it holds no letter or digit."""
        try:
            return self._memo[form]
        except KeyError:
            pass
        if not any(ch.isalnum() for ch in form):
            out = None
        else:
            lemma = self._table.get(form)
            if lemma is None:
                lower = form.lower()
                lemma = self._table.get(lower, lower)
            out = lemma.lower()
        if len(self._memo) >= MAX_MEMO_FORMS:
            self._memo.clear()
        self._memo[form] = out
        return out


#: Distinct whitespace-separated chunks :class:`TokenizerCacheWarmer` puts in the tokenizer's cache
#: (spaCy's own limit is 10,000): what it keeps stays bounded over a long ingest.
MAX_WARM_CHUNKS = 300_000


class TokenizerCacheWarmer:
    """Fills a spaCy tokenizer's cache chunk by chunk, so long texts are tokenized from the cache.

    spaCy's tokenizer caches how it split each whitespace-separated chunk, but once a text has
    hit one special case ("U.S.", "Cir.", "can't": every case text does, early) it caches nothing
    more of that text (explosion/spaCy#13950, open as of spaCy 3.8.18): the affix rules run again
    for every chunk of every long text. :meth:`warm` tokenizes each chunk not seen before on its
    own, where the cache does save it, so the texts' own pass finds their chunks cached. The cache
    maps a chunk to the tokens it gives wherever it stands, so the tokens are the same; only the
    time changes (tests compare token for token).
    """

    def __init__(self, nlp, max_chunks: int = MAX_WARM_CHUNKS):
        self.tokenizer = nlp.tokenizer
        self.tokenizer.max_cache_size = max(self.tokenizer.max_cache_size, max_chunks)
        self.max_chunks = max_chunks
        self._seen: set[str] = set()

    def warm(self, texts: Iterable[str]) -> None:
        """Cache the chunks of ``texts`` not seen before (until :attr:`max_chunks` have been seen)."""
        tokenizer, seen = self.tokenizer, self._seen
        for text in texts:
            if len(seen) >= self.max_chunks:
                return
            new = set(text.split()).difference(seen)
            for chunk in new:
                tokenizer(chunk)
            seen.update(new)


class _Worker:
    """Runs the spaCy pipeline and turns docs into compact arrays (also inside subprocesses)."""

    def __init__(self, legal_rules: bool):
        self.legal_rules = legal_rules
        self._build()

    def _build(self) -> None:
        self.nlp = build_pipeline(legal_rules=self.legal_rules)
        self.nlp.max_length = max(self.nlp.max_length, MAX_TEXT_CHARS + 1)
        self.lemmas = LemmaTable(self.nlp)
        self.tokenizer_cache = TokenizerCacheWarmer(self.nlp)
        self.disabled = [name for name in self.nlp.pipe_names if name == "lemmatizer"]

    def run(self, texts: Sequence[str], batch_size: int = 32) -> list[_LocalAnalysis]:
        """The analyses of ``texts``. When spaCy's string store has grown past
        :data:`MAX_SPACY_STRINGS`, the pipeline is built afresh afterwards (the results hold no
        spaCy object, and tokenizing does not depend on what was seen before), so a worker's
        memory does not grow with every new word of a long ingest."""
        out = []
        self.tokenizer_cache.warm(texts)
        for doc in self.nlp.pipe(texts, batch_size=batch_size, disable=self.disabled):
            out.append(self.convert(doc))
        if len(self.nlp.vocab.strings) > MAX_SPACY_STRINGS:
            self._build()
        return out

    def convert(self, doc) -> _LocalAnalysis:
        """Word tokens of ``doc`` as arrays; each distinct form is looked up once.

        One ``Doc.to_array`` call gives everything, sentence spans included
        (:func:`array_sentence_spans`, equal to :func:`~statinterp.text.segmentation.sentence_spans`
        without creating a Python object per token).
        """
        if len(doc) == 0:
            empty = np.zeros(0, dtype=np.int32)
            return _LocalAnalysis(empty, empty, empty, [], np.zeros((0, 2), dtype=np.int32))
        arr = doc.to_array([ORTH, IDX, LENGTH, SENT_START, IS_SPACE]).astype(np.int64, copy=False)
        spans = array_sentence_spans(arr[:, 3], arr[:, 1], arr[:, 2], arr[:, 4])
        forms, inverse = np.unique(arr[:, 0].view(np.uint64), return_inverse=True)
        strings = doc.vocab.strings
        local: dict[str, int] = {}
        form_to_local = np.full(len(forms), -1, dtype=np.int32)
        for j, h in enumerate(forms.tolist()):
            word = self.lemmas.lemma(strings[h])
            if word is not None:
                form_to_local[j] = local.setdefault(word, len(local))
        token_local = form_to_local[inverse.reshape(-1)]
        keep = token_local >= 0
        starts = arr[keep, 1].astype(np.int32)
        ends = (arr[keep, 1] + arr[keep, 2]).astype(np.int32)
        return _LocalAnalysis(starts, ends, token_local[keep], list(local), spans)


def array_sentence_spans(sent_start: np.ndarray, idx: np.ndarray, length: np.ndarray,
                         is_space: np.ndarray) -> np.ndarray:
    """:func:`~statinterp.text.segmentation.sentence_spans` computed on token attribute arrays.

    The arguments are a doc's ``SENT_START``, ``IDX``, ``LENGTH`` and ``IS_SPACE`` columns
    (``Doc.to_array``). As in ``Doc.sents``, a sentence starts at token 0 and at every token
    whose ``SENT_START`` is 1. Its whitespace-trimmed span runs from the first to the last of its
    tokens that are not whitespace: spaCy's tokenizer splits text at every change between
    whitespace and other characters, so a token is either all whitespace or holds none, and
    trimming characters equals dropping whitespace tokens at the edges. A sentence of
    whitespace only has no such token and is left out. Returns int32 ``(m, 2)``.
    """
    n = len(idx)
    if n == 0:
        return np.zeros((0, 2), dtype=np.int32)
    starts = np.asarray(sent_start) == 1
    starts[0] = True
    sentence = np.cumsum(starts) - 1  # sentence number of each token
    words = np.flatnonzero(np.asarray(is_space) == 0)
    if len(words) == 0:
        return np.zeros((0, 2), dtype=np.int32)
    of = sentence[words]
    change = of[1:] != of[:-1]
    first = words[np.concatenate(([True], change))]
    last = words[np.concatenate((change, [True]))]
    idx = np.asarray(idx, dtype=np.int64)
    out = np.empty((len(first), 2), dtype=np.int32)
    out[:, 0] = idx[first]
    out[:, 1] = idx[last] + np.asarray(length, dtype=np.int64)[last]
    return out


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _CacheWriter:
    """Writes cache entries in one background thread; :meth:`close` waits for all of them and
    re-raises the first error (a warning turned into an error, say) in the caller's thread."""

    def __init__(self, cache: AnalysisCache):
        self._cache = cache
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statinterp-cache-writer")
        self._futures: list[Future] = []

    def put(self, digest: str, entry: _LocalAnalysis) -> None:
        self._futures.append(self._executor.submit(self._cache.put, digest, _entry_arrays(entry)))

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for future in self._futures:
            future.result()


_PROCESS_WORKER: _Worker | None = None


#: Seconds between a worker's checks that the process that started it is still alive.
PARENT_CHECK_SECONDS = 0.5


def _exit_with_parent(parent: int, interval: float = PARENT_CHECK_SECONDS) -> None:
    """Start a daemon thread that ends this process as soon as ``parent`` is no longer its parent.

    A worker blocks on its task pipe, whose write end it inherited at the fork, so it never sees
    EOF when the parent is killed (SIGKILL, OOM killer): without this check it would wait for
    good. When the parent dies the worker is re-parented (to init or a subreaper), so
    ``os.getppid()`` changes. A thread, unlike ``prctl(PR_SET_PDEATHSIG)``, does not fire when
    merely the parent's *thread* that started the worker ends, and works on every POSIX system.
    """
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="statinterp-parent-watch", daemon=True).start()


def _init_process(legal_rules: bool, parent: int | None = None) -> None:
    global _PROCESS_WORKER
    if parent is not None:
        _exit_with_parent(parent)
    _PROCESS_WORKER = _Worker(legal_rules)


def _run_in_process(texts: list[str]) -> list[_LocalAnalysis]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.run(texts)


def _entry_arrays(entry: _LocalAnalysis) -> dict[str, np.ndarray]:
    """The named arrays an analysis is stored as in the :class:`~statinterp.cache.namespaces.AnalysisCache`."""
    return {"starts": entry.starts, "ends": entry.ends, "local_ids": entry.local_ids,
            "words": np.frombuffer("\n".join(entry.words).encode("utf-8"), dtype=np.uint8),
            "sentences": entry.sentences}


def _entry_of_arrays(z) -> _LocalAnalysis:
    """The analysis stored as :func:`_entry_arrays`; ``ValueError`` if the arrays do not fit together."""
    words_raw = z["words"].tobytes().decode("utf-8")
    entry = _LocalAnalysis(z["starts"], z["ends"], z["local_ids"],
                           words_raw.split("\n") if words_raw else [], z["sentences"])
    n = len(entry.starts)
    if (entry.starts.shape != (n,) or entry.ends.shape != (n,) or entry.local_ids.shape != (n,)
            or entry.sentences.ndim != 2 or entry.sentences.shape[1] != 2
            or (n and (entry.local_ids.min() < 0 or entry.local_ids.max() >= len(entry.words)))):
        raise ValueError("inconsistent arrays")
    return entry


def max_entry_bytes(n_chars: int) -> int:
    """The most bytes the cache entry of a text of ``n_chars`` characters can hold, generously:
    per character at most one token (start, end, id: 12 bytes), one sentence span (8 bytes) and
    a few bytes of words (UTF-8 lemmas), plus the entry's header."""
    return 64 * n_chars + (1 << 16)


@functools.lru_cache(maxsize=1)
def segmenter_code_digest() -> str:
    """SHA-256 (16 hex digits) of the segmentation module's source: its rules and lists decide
    the sentence units, so any edit to them must give new analysis cache entries."""
    from statinterp.text import segmentation

    return hashlib.sha256(Path(segmentation.__file__).read_bytes()).hexdigest()[:16]




class Analyzer:
    """Analyses texts into :class:`AnalysedText` with a shared :class:`Vocabulary`.

    Parameters
    ----------
    cache_dir:
        Folder of the persistent cache; ``None`` uses :func:`default_cache_dir`, ``False``
        disables the cache.
    legal_rules:
        Use the legal abbreviation and citation rules of the sentence segmenter.
    n_process:
        Worker processes for spaCy (texts are split into chunks across them). ``None``
        (default) chooses: ``min(AUTO_MAX_PROCESSES, usable CPUs)`` processes when one call has
        at least :data:`AUTO_PROCESS_CHARS` characters to analyse (worth the start-up), else none.
        The results do not depend on it.
    batch_size:
        Texts per ``nlp.pipe`` batch (and at most per task sent to a worker process).

    Without worker processes, finished analyses are written to the cache by a background
    thread while spaCy runs on (the atomic writes wait for the disk); with them, the main process
    writes while the workers run. Either way every entry is written before :meth:`analyse`
    returns. Inside ``with analyzer.session():`` started worker processes are kept for the
    following calls (:func:`~statinterp.index.term_index.prepare` analyses term by term).
    """

    #: Most worker processes the automatic choice (``n_process=None``) starts.
    AUTO_MAX_PROCESSES = 2
    #: Characters to analyse in one call from which the automatic choice starts processes.
    AUTO_PROCESS_CHARS = 2_000_000

    def __init__(self, cache_dir: str | Path | None | bool = None, legal_rules: bool = True,
                 n_process: int | None = None, batch_size: int = 16):
        self.legal_rules = legal_rules
        self.n_process = None if n_process is None else max(1, int(n_process))
        self.batch_size = batch_size
        self.vocab = Vocabulary()
        self._worker: _Worker | None = None
        self._memory: dict[str, AnalysedText] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._pool_size = 0
        self._sessions = 0
        #: The cache folder (``None`` without a cache); :mod:`statinterp.index.term_index` keeps prepared
        #: corpora under it too.
        self.cache_root: Path | None = None
        #: SHA-256 of every text :meth:`analyse` was given (a prepared corpus records their entries).
        self.seen: set[str] = set()
        if cache_dir is False:
            self.cache = None
        else:
            self.cache_root = Path(cast("str | Path", cache_dir)) if cache_dir else default_cache_dir()
            self.cache = AnalysisCache(self.cache_root, self.settings_key)

    @property
    def settings_key(self) -> str:
        parts = [
            f"format={CACHE_FORMAT}",
            f"segmenter={SEGMENTER_VERSION}",
            # the rules themselves, not only the hand-bumped name: a cache filled while the rules
            # were edited under the same SEGMENTER_VERSION once gave figures nobody could reproduce
            f"segmenter_code={segmenter_code_digest()}",
            f"legal_rules={self.legal_rules}",
            f"spacy={package_version('spacy') or 'unknown'}",
            f"lookups={package_version('spacy-lookups-data') or 'unknown'}",
            f"unicode={unicodedata.unidata_version}",  # str.isalnum decides what is a word token
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    @property
    def worker(self) -> _Worker:
        if self._worker is None:
            self._worker = _Worker(self.legal_rules)
        return self._worker

    def analyse(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> list[AnalysedText]:
        """Analyse ``texts`` (each distinct text once, reusing the cache); results in input order.

        ``progress`` is called with the number of characters finished after each text; texts found
        in the cache go to ``progress.skip`` instead, if it has one (see :mod:`statinterp.progress`).
        New words join the vocabulary in input order whether an analysis comes from the cache
        or from spaCy, so vocabulary ids (and every result) are the same cold, warm or uncached.
        """
        digests = [text_hash(t) for t in texts]
        self.seen.update(digests)
        local: dict[str, _LocalAnalysis | None] = {}
        todo: dict[str, str] = {}
        skip = cast("Callable[[int], None]", getattr(progress, "skip", progress))  # called only if progress
        for digest, text in zip(digests, texts, strict=False):
            if digest in self._memory or digest in local:
                continue
            entry = (self.cache.get(digest, _entry_of_arrays, max_entry_bytes(len(text)))
                     if self.cache is not None else None)
            local[digest] = entry
            if entry is not None:
                if progress:
                    skip(len(text))
            else:
                todo[digest] = text
        if todo:
            items = list(todo.items())
            n = self._processes_for(items)
            # one process: a thread writes the cache while spaCy runs (never alive at a fork)
            writer = _CacheWriter(self.cache) if self.cache is not None and n == 1 else None
            try:
                for digest, entry in self._run(items, progress, n):
                    if writer is not None:
                        writer.put(digest, entry)
                    elif self.cache is not None:
                        self.cache.put(digest, _entry_arrays(entry))
                    local[digest] = entry
            finally:
                if writer is not None:
                    writer.close()
        for digest, entry in local.items():  # first-occurrence order
            assert entry is not None  # every text missing from the cache was analysed above
            self._memory[digest] = self._globalise(entry)
        return [self._memory[d] for d in digests]

    def forget(self) -> None:
        """Drop the in-memory copies (the on-disk cache stays)."""
        self._memory.clear()

    @contextmanager
    def session(self):
        """Keep worker processes started inside the block for every :meth:`analyse` call in it."""
        self._sessions += 1
        try:
            yield self
        finally:
            self._sessions -= 1
            if self._sessions == 0:
                self._close_pool()

    def _processes_for(self, items: list[tuple[str, str]]) -> int:
        """Worker processes for analysing ``items`` (1: in this process)."""
        if self.n_process is not None:
            return 1 if len(items) < 2 * self.n_process else self.n_process
        if self._pool is not None:
            return self._pool_size
        if len(items) < 2 or sum(len(t) for _, t in items) < self.AUTO_PROCESS_CHARS:
            return 1
        return max(1, min(self.AUTO_MAX_PROCESSES, _usable_cpus()))

    def _close_pool(self) -> None:
        pool, self._pool, self._pool_size = self._pool, None, 0
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _run(self, items: list[tuple[str, str]], progress, n: int = 1) -> Iterable[tuple[str, _LocalAnalysis]]:
        if n == 1:
            for i in range(0, len(items), self.batch_size):
                chunk = items[i : i + self.batch_size]
                entries = self.worker.run([t for _, t in chunk], self.batch_size)
                for (digest, text), entry in zip(chunk, entries, strict=False):
                    if progress:
                        progress(len(text))
                    yield digest, entry
            return
        # small tasks (about 4 per process) keep the processes busy to the end of the call
        size = max(1, min(self.batch_size, -(-len(items) // (4 * n))))
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        if self._pool is None or self._pool_size != n:
            self._close_pool()
            self._pool = ProcessPoolExecutor(n, initializer=_init_process,
                                             initargs=(self.legal_rules, os.getpid()))
            self._pool_size = n
        try:
            results = self._pool.map(_run_in_process, [[t for _, t in c] for c in chunks])
            for chunk, entries in zip(chunks, results, strict=False):
                for (digest, text), entry in zip(chunk, entries, strict=False):
                    if progress:
                        progress(len(text))
                    yield digest, entry
        finally:
            if self._sessions == 0:
                self._close_pool()

    def _globalise(self, entry: _LocalAnalysis) -> AnalysedText:
        mapping = self.vocab.add_all(entry.words)
        ids = mapping[entry.local_ids] if len(entry.local_ids) else np.zeros(0, dtype=np.int32)
        return AnalysedText(entry.starts, entry.ends, ids.astype(np.int32), entry.sentences)

    def tokens(self, text: str) -> list[str]:
        """The token strings of a short text (a query or a provision); not cached."""
        doc = self.worker.nlp.make_doc(text)
        return [w for w in (self.worker.lemmas.lemma(t.text) for t in doc) if w is not None]

    def known_ids(self, text: str) -> np.ndarray:
        """Vocabulary ids of the tokens of ``text`` that occur in the analysed corpus."""
        ids = [self.vocab.get(w) for w in self.tokens(text)]
        return np.asarray([i for i in ids if i is not None], dtype=np.int32)


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
