"""The namespaces of the cache store (:mod:`statinterp.cache.store`), each a thin class saying what
an entry holds: :class:`AnalysisCache` (``analysis``), :class:`PreparedCache` (``prepared``),
:class:`StoredAnswers` (``answers``), :class:`DirectionCache` (``directions``) and
:class:`VectorCache` (``vectors``, ``dense``). The files, checksums, atomic writes, the
damaged-entry rule and eviction are the store's.

**analysis**: the token arrays of every analysed text. What an entry *means* (token offsets,
local ids, words) is :mod:`statinterp.text.analysis`'s business: it gives
:meth:`AnalysisCache.put` named arrays and reads them back through a ``decode`` function that
raises ``ValueError`` on anything inconsistent.

**prepared**: what :func:`statinterp.index.term_index.prepare` builds, one array entry per
prepared corpus. The index module computes the key parts and turns a prepared corpus into named
arrays and back.

**answers**: a slow lookup's answers kept between processes. :class:`StoredAnswers` is a key ->
answer map (strings to JSON values) read from its entry (an array entry without arrays, keyed
by the lookup's name and version) when first asked, and written back (atomically, whole) when
the process ends if it learnt something new. A missing entry counts as empty; a damaged one too,
after the store's one warning; a cache folder that cannot be written is not an error (the
answers are found again next time). Two processes learning at once: the last to end writes its
answers and those it read.

**directions**: on-disk cache of the unit directions of the embedding methods (mean word-vector directions)
and of other values computed under word vectors (WMD novelty distances, similar words).

The cosine methods (``w2vec*``, ``fastt*``, pretrained vectors, with every context) need,
for each term, the direction of the mean unit word vector of every sentence, paragraph,
opinion, case and recursive neighbour, after the vectors' phrase model has joined their
tokens: millions of tokens per run.  :class:`DirectionCache` keeps them, one entry per term and
vectors, and the directions of the queries (one small file each), so a warm run reads them
instead and need not even load the vectors.

The directions are computed by :mod:`statinterp.vectors.embeddings`; this module keeps the
files. A file is named by the SHA-256 of everything the directions depend on: the source of the
code that computes them (its fingerprint, :mod:`statinterp.cache.store`, of
``vectors/embeddings.py`` and ``vectors/embeddings.py``), the identity of the vectors
(``DomainVectors.source``: the corpus hash and training settings of domain vectors, or the
path, size and modification time of a vectors file), the vocabulary (id -> word) and the token
ids and offsets of every set of units.  Vectors without a ``source`` (built in memory) are never
cached.  Entries are array entries of the cache store's ``directions`` namespace
(:mod:`statinterp.cache.store`: float64, so a warm run gives bit-identical scores; a damaged
entry is discarded with a warning and recomputed; the most recently used entries are kept).

Per-unit values (``*.v.bin``, one float64 value per unit: the Word Mover's Distance of every
sentence of a term to its provision) are keyed the same way (:func:`unit_values_key`), plus the
name of the measure, everything its result depends on beyond the units (the reference tokens,
its parameters, the versions of the libraries that compute it) and the fingerprint of the code
that computes it; a warm run reads them instead of loading the vectors and solving the
transport problems again.

Word lists computed from the vectors (``*.w.bin``: the words most similar to a term's query,
the query expansion ``-e``) are keyed by the code, the vectors and ``measure`` alone
(:func:`words_key`).

**vectors** and **dense**: trained word vectors (gensim
``KeyedVectors`` + phrase model) and the sentence embeddings of the dense features.

An entry is keyed (:meth:`~statinterp.cache.store.CacheStore.key`) by the caller's hash of what
the vectors were made from, ``settings.key()``, the gensim and NumPy versions and
:attr:`VectorCache.FORMAT`, and stored as ``NAMESPACE/KK/KEY.vectors``: a magic line, a pickle
of the vectors and phrase model (with the key, checked on reading), and a trailer with the
SHA-256 of the pickle. Writes are atomic (:mod:`statinterp.cache.files`). Only a regular file
is read (:mod:`statinterp.cache.files`), the checksum is verified in bounded chunks before
anything is unpickled, and an entry that is truncated, altered, foreign, not a regular file
or written by an older statinterp whose classes have moved is discarded by the store's rule
(one :class:`~statinterp.cache.store.CacheWarning`) and :meth:`VectorCache.get` returns
``None`` (the caller retrains).

Entries are pickles: only use a cache folder you trust.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from statinterp.cache import files as atomic
from statinterp.cache.files import open_regular
from statinterp.cache.store import CacheStore, CacheWarning, Stale, one_line
from statinterp.errors import OutputError

__all__ = ["DirectionCache", "directions_key", "query_key", "unit_values_key", "words_key", "AnalysisCache",
           "PreparedCache", "Stale", "StoredAnswers", "CacheWarning", "CachedVectors", "VectorCache"]

DIRECTIONS_NAMESPACE = "directions"

#: Bump when the file layout or the meaning of the stored directions changes.
DIRECTIONS_FORMAT = 1

_WORDS_DIGESTS: dict[tuple[int, int], tuple[object, str]] = {}


def _words_digest(words: Sequence[str]) -> str:
    """SHA-256 of a vocabulary (memoised while the same list keeps its length: it only grows)."""
    key = (id(words), len(words))
    hit = _WORDS_DIGESTS.get(key)
    if hit is not None and hit[0] is words:
        return hit[1]
    digest = hashlib.sha256("\n".join(words).encode("utf-8", "surrogatepass")).hexdigest()
    _WORDS_DIGESTS.clear()
    _WORDS_DIGESTS[key] = (words, digest)
    return digest


def directions_key(code: str, vectors_source: str, words: Sequence[str], unit_sets: Mapping[str, Any]) -> str:
    """The cache key of the directions of ``unit_sets`` (name -> ragged units with ``ids`` and
    ``offsets``, a :class:`~statinterp.text.analysis.TokenSeqs`) under some vectors, as computed by
    the code whose fingerprint is ``code``."""
    return _units_digest(f"statinterp-directions {DIRECTIONS_FORMAT}|{code}|{vectors_source}|", words, unit_sets)


def unit_values_key(code: str, vectors_source: str, words: Sequence[str], unit_sets: Mapping[str, Any],
                    measure: str) -> str:
    """The cache key of per-unit values of ``unit_sets`` (as in :func:`directions_key`) under some
    vectors: ``measure`` names the measure and everything else its values depend on (reference
    tokens, parameters, library versions); ``code`` is the fingerprint of the code computing it."""
    return _units_digest(f"statinterp-unit-values {DIRECTIONS_FORMAT}|{code}|{vectors_source}|{measure}|",
                         words, unit_sets)


def words_key(code: str, vectors_source: str, measure: str) -> str:
    """The cache key of a word list computed from some vectors: ``measure`` names what it is and
    everything it depends on besides the vectors; ``code`` as in :func:`unit_values_key`."""
    return hashlib.sha256(f"statinterp-words {DIRECTIONS_FORMAT}|{code}|{vectors_source}|{measure}".encode(
        "utf-8", "surrogatepass")).hexdigest()


def _units_digest(head: str, words: Sequence[str], unit_sets: Mapping[str, Any]) -> str:
    """SHA-256 of ``head``, the vocabulary and the token ids and offsets of every set of units."""
    digest = hashlib.sha256(f"{head}{_words_digest(words)}".encode("utf-8", "surrogatepass"))
    for name, seqs in unit_sets.items():
        digest.update(f"|{name}|{len(seqs.ids)}|{len(seqs.offsets)}|".encode())
        digest.update(np.ascontiguousarray(seqs.ids, dtype=np.int32).tobytes())
        digest.update(np.ascontiguousarray(seqs.offsets, dtype=np.int64).tobytes())
    return digest.hexdigest()


def query_key(code: str, vectors_source: str, tokens: Sequence[str]) -> str:
    """The cache key of the direction of a query (its tokens before phrase joining)."""
    digest = hashlib.sha256(
        f"statinterp-query-direction {DIRECTIONS_FORMAT}|{code}|{vectors_source}|".encode(
            "utf-8", "surrogatepass")
    )
    digest.update("\n".join(tokens).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class DirectionCache:
    """The ``directions`` namespace of the cache store under ``root``: unit directions (one entry
    per term and vectors, ``*.d.bin``), query directions (``*.q.bin``), per-unit values
    (``*.v.bin``) and word lists (``*.w.bin``); each kind keeps its most recently used entries
    (:data:`~statinterp.cache.store.KEEP`)."""

    def __init__(self, root: str | Path | None):
        self.store = CacheStore(root)
        self.directory = self.store.folder(DIRECTIONS_NAMESPACE)

    def _entry(self, kind: str, key: str) -> tuple[str, str]:
        return self.store.key(DIRECTIONS_NAMESPACE, kind, key), f".{kind}.bin"

    def _path(self, kind: str, key: str) -> Path:
        return self.store.path(DIRECTIONS_NAMESPACE, *self._entry(kind, key))

    def path(self, key: str) -> Path:
        return self._path("d", key)

    def query_path(self, key: str) -> Path:
        return self._path("q", key)

    def values_path(self, key: str) -> Path:
        return self._path("v", key)

    def words_path(self, key: str) -> Path:
        return self._path("w", key)

    def get(self, key: str, rows: Mapping[str, int]) -> dict[str, np.ndarray] | None:
        """The stored directions (name -> float64 array with ``rows[name]`` rows), or ``None``."""

        def decode(meta, array):
            if sorted(meta["names"]) != sorted(rows):
                raise ValueError("written for other units")
            out = {}
            for name, n in rows.items():
                values = array(name)
                if values.ndim != 2 or values.shape[0] != n or values.shape[1] != meta["dim"] \
                        or values.dtype != np.float64:
                    raise ValueError(f"inconsistent array {name}")
                out[name] = values
            return out

        return self._read("d", key, decode)

    def put(self, key: str, directions: Mapping[str, np.ndarray]) -> None:
        """Store ``directions`` (best effort)."""
        arrays = {name: np.asarray(values, dtype=np.float64) for name, values in directions.items()}
        dims = {a.shape[1] for a in arrays.values()}
        if len(dims) != 1:
            return
        self._write("d", key, {"names": list(arrays), "dim": dims.pop()}, arrays)

    def get_query(self, key: str) -> tuple[np.ndarray | None] | None:
        """``(direction,)`` of a stored query (``(None,)`` for a query without any vector), or
        ``None`` on a miss."""

        def decode(meta, array):
            if meta["none"]:
                return (None,)
            direction = array("direction")
            if direction.ndim != 1 or direction.dtype != np.float64:
                raise ValueError("inconsistent array")
            return (direction,)

        return self._read("q", key, decode)

    def put_query(self, key: str, direction: np.ndarray | None) -> None:
        arrays = {} if direction is None else {"direction": np.asarray(direction, dtype=np.float64)}
        self._write("q", key, {"none": direction is None}, arrays)

    def get_values(self, key: str, n: int) -> np.ndarray | None:
        """The stored per-unit values (a float64 array of length ``n``), or ``None``."""

        def decode(meta, array):
            values = array("values")
            if values.shape != (n,) or values.dtype != np.float64:
                raise ValueError("inconsistent array")
            return values

        return self._read("v", key, decode)

    def put_values(self, key: str, values: np.ndarray) -> None:
        """Store per-unit ``values`` (best effort, as :meth:`put`)."""
        self._write("v", key, {}, {"values": np.asarray(values, dtype=np.float64)})

    def get_words(self, key: str) -> list[str] | None:
        """The stored word list, or ``None``."""

        def decode(meta, array):
            words = meta["words"]
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise ValueError("inconsistent word list")
            return words

        return self._read("w", key, decode)

    def put_words(self, key: str, words: Sequence[str]) -> None:
        """Store a word list (best effort, as :meth:`put`)."""
        self._write("w", key, {"words": list(words)}, {})

    def _read(self, kind: str, key: str, decode: Callable[[dict, Callable], Any]) -> Any:
        def checked(meta, array):
            if meta.get("format") != DIRECTIONS_FORMAT:
                raise ValueError("another format")
            return decode(meta, array)

        entry, suffix = self._entry(kind, key)
        return self.store.read_arrays(DIRECTIONS_NAMESPACE, entry, checked, suffix)

    def _write(self, kind: str, key: str, meta: dict, arrays: Mapping[str, np.ndarray]) -> None:
        entry, suffix = self._entry(kind, key)
        self.store.write_arrays(DIRECTIONS_NAMESPACE, entry, {"format": DIRECTIONS_FORMAT, **meta}, arrays, suffix)

T = TypeVar("T")

#: An entry is never larger than this, whatever the text (texts are at most 10 million characters).
MAX_ENTRY_BYTES = 1 << 30

ANALYSIS_NAMESPACE = "analysis"


def _arrays(z: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return dict(z)


class AnalysisCache:
    """One array entry per analysed text, keyed by the analysis settings key and the SHA-256 of
    the text. A damaged, truncated, oversized, foreign or non-regular entry (a FIFO, a symlink
    to a device) is never used, but discarded with a warning and rebuilt; a folder that cannot
    be written warns once and the run continues without storing entries."""

    def __init__(self, directory: str | Path | None, settings_key: str):
        self.store = CacheStore(directory)
        self.settings_key = settings_key
        self.directory = self.store.folder(ANALYSIS_NAMESPACE)

    def key(self, digest: str) -> str:
        return self.store.key(ANALYSIS_NAMESPACE, self.settings_key, digest)

    def path(self, digest: str) -> Path:
        return self.store.path(ANALYSIS_NAMESPACE, self.key(digest))

    def get(self, digest: str, decode: Callable[[Mapping[str, np.ndarray]], T] = _arrays,  # type: ignore[assignment]
            max_bytes: int = MAX_ENTRY_BYTES) -> T | None:
        """``decode(arrays)`` of the entry of the text with SHA-256 ``digest``, ``None`` on a miss
        or a damaged entry. ``max_bytes`` is the most an entry of this text can hold (the caller
        knows the text); a larger file is damaged."""
        return self.store.read_arrays(ANALYSIS_NAMESPACE, self.key(digest),
                                      lambda meta, array: decode({name: array(name) for name in meta["arrays"]}),
                                      max_bytes=min(max_bytes, MAX_ENTRY_BYTES))

    def put(self, digest: str, arrays: Mapping[str, np.ndarray]) -> None:
        """Store the named ``arrays`` of a text (best effort)."""
        self.store.write_arrays(ANALYSIS_NAMESPACE, self.key(digest), {}, arrays)

PREPARED_NAMESPACE = "prepared"


class PreparedCache:
    """The entry of one prepared corpus, keyed by ``parts`` (what its contents depend on)."""

    def __init__(self, root: str | Path | None, *parts: str):
        self.store = CacheStore(root)
        self.key = self.store.key(PREPARED_NAMESPACE, *parts)
        self.path = self.store.path(PREPARED_NAMESPACE, self.key)

    def load(self, decode: Callable[[dict[str, Any], Callable[[str], np.ndarray]], T]) -> T | None:
        """``decode(meta, array)`` of the entry, ``None`` if there is none, if ``decode`` raises
        :class:`Stale`, or if it is damaged (discarded with a warning)."""
        return self.store.read_arrays(PREPARED_NAMESPACE, self.key, decode)

    def save(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Write the entry (best effort)."""
        self.store.write_arrays(PREPARED_NAMESPACE, self.key, meta, arrays)

ANSWERS_NAMESPACE = "answers"


class StoredAnswers:
    """The stored answers of one lookup (``name``) for one version of what answers it."""

    def __init__(self, name: str, version: str):
        self.name = name
        self.version = version
        self.key = CacheStore.key(ANSWERS_NAMESPACE, name, version)
        self._answers: dict[str, Any] | None = None
        self._new = False
        self._lock = threading.Lock()

    @staticmethod
    def _store() -> CacheStore:
        return CacheStore()  # the cache folder as it is now (it follows $STATINTERP_CACHE)

    @property
    def path(self) -> Path:
        return self._store().path(ANSWERS_NAMESPACE, self.key)

    def _loaded(self) -> dict[str, Any]:
        if self._answers is None:
            def decode(meta, array):
                if meta.get("lookup") != [self.name, self.version] or not isinstance(meta.get("answers"), dict):
                    raise ValueError("not the answers of this lookup")
                return meta["answers"]

            self._answers = self._store().read_arrays(ANSWERS_NAMESPACE, self.key, decode) or {}
        return self._answers

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._loaded().get(key, default)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._loaded()

    def put(self, key: str, answer: Any) -> None:
        """Keep ``answer`` for ``key`` (written when the process ends, or by :meth:`save`)."""
        with self._lock:
            self._loaded()[key] = answer
            if not self._new:
                self._new = True
                atexit.register(self.save)

    def save(self) -> None:
        """Write the answers if some are new (nothing happens when the folder cannot be written)."""
        with self._lock:
            if not self._new or self._answers is None:
                return
            with warnings.catch_warnings():  # often at exit, after the command line has said all
                warnings.simplefilter("ignore", CacheWarning)
                meta = {"lookup": [self.name, self.version], "answers": self._answers}
                written = self._store().write_arrays(ANSWERS_NAMESPACE, self.key, meta, {})
            if written:
                self._new = False

    def forget(self) -> None:
        """Drop what this process holds (the next question reads the file again)."""
        with self._lock:
            self._answers = None
            self._new = False


class _Settings(Protocol):
    def key(self) -> str: ...


@dataclass(frozen=True)
class CachedVectors:
    """What an entry holds: gensim ``KeyedVectors`` and the phrase model (``None`` or two
    ``FrozenPhrases``)."""

    kv: Any
    phrasers: tuple | None


class _HashingWriter:
    def __init__(self, handle, digest):
        self.handle = handle
        self.digest = digest

    def write(self, data) -> int:
        self.digest.update(data)
        return self.handle.write(data)


class _DamagedEntry(Exception):
    pass


class VectorCache:
    """Trained vectors stored in ``directory`` (see the module's description)."""

    MAGIC = b"STATINTERP-VECTOR-CACHE 1\n"
    _TRAILER_PREFIX = b"\nSHA256:"
    _TRAILER_LEN = len(_TRAILER_PREFIX) + 64
    FORMAT = 1

    def __init__(self, root: str | os.PathLike[str] | None, namespace: str = "vectors"):
        self.store = CacheStore(root)
        self.namespace = namespace
        self.directory = self.store.folder(namespace)

    def _ident(self, corpus_hash: str, settings: _Settings) -> str:
        import gensim
        import numpy as np

        return self.store.key(self.namespace, {
            "format": self.FORMAT, "corpus": corpus_hash, "settings": settings.key(),
            "gensim": gensim.__version__, "numpy": np.__version__.split(".")[0]})

    def path_for(self, corpus_hash: str, settings: _Settings) -> Path:
        """The file that holds (or would hold) the entry."""
        return self.store.path(self.namespace, self._ident(corpus_hash, settings), ".vectors")

    def get(self, corpus_hash: str, settings: _Settings) -> CachedVectors | None:
        """The cached vectors, or ``None`` if there is no (intact) entry."""
        from gensim.models.keyedvectors import KeyedVectors
        from gensim.models.phrases import FrozenPhrases

        path = self.path_for(corpus_hash, settings)
        ident = self._ident(corpus_hash, settings)
        try:
            handle = open_regular(path)
        except FileNotFoundError:
            return None
        except ValueError as exc:  # a FIFO, a device, a folder: never read, discarded
            self._discard(path, str(exc))
            return None
        except OSError as exc:
            self.store.unreadable(path, exc, stacklevel=3)
            return None
        try:
            with handle:
                end = self._verify(handle)
                handle.seek(len(self.MAGIC))
                entry = pickle.load(handle)
                if handle.tell() != end:
                    raise _DamagedEntry("the pickle does not fill the entry")
            if not isinstance(entry, dict) or entry.get("ident") != ident:
                raise _DamagedEntry("the entry belongs to another key")
            kv, phrasers = entry["kv"], entry["phrasers"]
            if not isinstance(kv, KeyedVectors):
                raise _DamagedEntry("the entry holds no KeyedVectors")
            if phrasers is not None:
                phrasers = tuple(phrasers)
                if len(phrasers) != 2 or not all(isinstance(p, FrozenPhrases) for p in phrasers):
                    raise _DamagedEntry("the entry holds a bad phrase model")
        except (ModuleNotFoundError, AttributeError) as exc:  # a class that has moved or gone
            self._discard(path, f"written by another version of statinterp or gensim: {one_line(exc)}")
            return None
        except OSError as exc:  # an I/O problem, not necessarily a bad entry: keep the file
            self.store.unreadable(path, exc, stacklevel=3)
            return None
        except Exception as exc:  # noqa: BLE001 - any read/unpickling failure means a bad entry
            self._discard(path, str(exc) if isinstance(exc, _DamagedEntry) else one_line(exc))
            return None
        return CachedVectors(kv, phrasers)

    def put(self, corpus_hash: str, settings: _Settings, vectors: Any) -> Path:
        """Store ``vectors`` (anything with ``kv`` and ``phrasers``) atomically; returns the
        entry's path. Raises ``OSError`` if the folder cannot be written."""
        path = self.path_for(corpus_hash, settings)
        entry = {
            "ident": self._ident(corpus_hash, settings),
            "kv": vectors.kv,
            "phrasers": None if vectors.phrasers is None else tuple(vectors.phrasers),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic.replace(path, force=True) as tmp, open(tmp, "wb") as handle:
                handle.write(self.MAGIC)
                digest = hashlib.sha256()
                pickle.dump(entry, _HashingWriter(handle, digest), protocol=pickle.HIGHEST_PROTOCOL)
                handle.write(self._TRAILER_PREFIX + digest.hexdigest().encode("ascii"))
        except OutputError as exc:
            cause = exc.__cause__
            raise cause if isinstance(cause, OSError) else OSError(str(exc)) from exc
        return path

    def _verify(self, handle) -> int:
        """Check magic line and checksum; return the offset where the pickle must end."""
        size = os.fstat(handle.fileno()).st_size
        if handle.read(len(self.MAGIC)) != self.MAGIC:
            raise _DamagedEntry("not a statinterp vector cache file")
        end = size - self._TRAILER_LEN
        if end <= len(self.MAGIC):
            raise _DamagedEntry("the entry is truncated")
        handle.seek(end)
        trailer = handle.read(self._TRAILER_LEN)
        if not trailer.startswith(self._TRAILER_PREFIX) or len(trailer) != self._TRAILER_LEN:
            raise _DamagedEntry("the entry is truncated (no checksum trailer)")
        expected = trailer[len(self._TRAILER_PREFIX) :].decode("ascii", errors="replace")
        digest = hashlib.sha256()
        handle.seek(len(self.MAGIC))
        remaining = end - len(self.MAGIC)
        while remaining:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                raise _DamagedEntry("the entry is truncated")
            digest.update(chunk)
            remaining -= len(chunk)
        if digest.hexdigest() != expected:
            raise _DamagedEntry("checksum mismatch")
        return end

    def _discard(self, path: Path, reason: str) -> None:
        self.store.discard(self.namespace, path, reason, stacklevel=4)
