"""Word vectors for the embedding methods: domain vectors trained on the loaded case law, and
pretrained vectors given by the user.

A :class:`VectorProvider` is attached to every :class:`~statinterp.index.term_index.TermIndex`
(``index.vectors``) by :func:`statinterp.workflow.prepare_corpus`; scorers call
``index.vectors.get(kind)`` and receive :class:`~statinterp.vectors.embeddings.DomainVectors`
(keyed vectors + phrase model).  Kinds:

``"word2vec"`` / ``"fasttext"``
    *Domain* vectors (methods ``w2vec*`` and ``fastt*``): skip-gram word2vec / fastText,
    300 dimensions, 5 epochs, trained on the lower-cased lemma tokens of every spaCy
    sentence of every (distinct) case text of the loaded corpus, after joining frequent 2-
    and 3-word phrases (gensim ``Phrases``).  Trained lazily, on the first ``get``, and
    stored in :class:`~statinterp.cache.namespaces.VectorCache` under ``<cache dir>/vectors``,
    keyed by a hash of the corpus content (the sorted SHA-256 of the case texts and the
    analyzer's settings key) and by the training settings; later runs load them.
``"w2vec"`` / ``"GloVe"`` / ``"fastt"`` (or any other name)
    *Pretrained* vectors from files given by the user (``--vectors NAME=PATH``), loaded
    lazily with :func:`~statinterp.vectors.embeddings.load_vectors`.

Determinism: with ``workers=1`` (the default) and the fixed seed, training on the same
corpus gives bit-identical vectors.  ``workers=N`` uses N threads (roughly N times faster
on N idle cores) but the vectors then differ from run to run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from statinterp import progress
from statinterp.cache.store import default_cache_dir
from statinterp.errors import InputError, UsageError
from statinterp.text.analysis import Analyzer, text_hash

if TYPE_CHECKING:  # gensim is imported only when vectors are actually used
    from statinterp.cache.namespaces import DirectionCache, VectorCache
    from statinterp.vectors.embeddings import DomainVectors, UnitDirections, VectorSettings

#: Messages about training (what is trained, how long it took) go to this logger at level INFO;
#: the command line shows them on stderr unless ``--quiet``.
logger = logging.getLogger(__name__)

__all__ = [
    "DOMAIN_KINDS",
    "PRETRAINED_NAMES",
    "VectorProvider",
    "domain_settings",
    "fasttext_buckets",
    "method_name",
    "parse_vectors_option",
    "required_pretrained",
    "vector_kinds",
]

#: Domain vector kinds and the method names they give (``w2vec*``, ``fastt*``).
DOMAIN_KINDS = {"word2vec": "w2vec*", "fasttext": "fastt*"}
#: Names of user-supplied pretrained vectors (also their method names).
PRETRAINED_NAMES = ("w2vec", "GloVe", "fastt")
#: At most this many fastText hash buckets for the domain vectors: gensim's default
#: (2,000,000) makes a 2.4 GB n-gram matrix at 300 dimensions (saved in the cache and read by
#: every run), far more than the case law needs: the 14 terms of the data set (38 M characters)
#: have 144,000 distinct character n-grams in words occurring at least 5 times.
DOMAIN_FASTTEXT_BUCKET = 500_000
#: ... and one bucket per this many characters of case text (at least 20,000 buckets), so that a
#: small corpus gets a small n-gram matrix.
CHARS_PER_BUCKET = 50


def fasttext_buckets(n_chars: int) -> int:
    """Default fastText buckets for a corpus of ``n_chars`` characters of distinct case text."""
    return int(min(DOMAIN_FASTTEXT_BUCKET, max(20_000, n_chars // CHARS_PER_BUCKET)))

#: Progress bars while training only for corpora of more sentences than this.
BAR_SENTENCES = 20_000

_ALIASES = {name: kind for kind, name in DOMAIN_KINDS.items()}  # "w2vec*" -> "word2vec"


def method_name(kind: str) -> str:
    """The method name of a vector kind: ``word2vec`` -> ``w2vec*``; pretrained names as they are."""
    return DOMAIN_KINDS.get(kind, kind)


def domain_settings(kind: str, **overrides: Any) -> VectorSettings:
    """The default training settings of domain vectors of ``kind``, with ``overrides``.

    Skip-gram, 300 dimensions, 5 epochs, window 5, min_count 5, phrases with gensim's
    defaults, seed 1, one worker; fastText with :data:`DOMAIN_FASTTEXT_BUCKET` buckets (a
    :class:`VectorProvider` uses :func:`fasttext_buckets` of its corpus instead).
    """
    from statinterp.vectors.embeddings import VectorSettings

    if kind not in DOMAIN_KINDS:
        raise UsageError(f"unknown domain vector kind {kind!r}; expected one of {', '.join(DOMAIN_KINDS)}")
    base: dict[str, Any] = dict(dim=300, epochs=5, sg=1, workers=1, seed=1)
    if kind == "fasttext":
        base["bucket"] = DOMAIN_FASTTEXT_BUCKET
    base.update(overrides)
    return VectorSettings(kind, **base)


# ----------------------------------------------------------------------------------------
# The --vectors option


def _file_identity(path: str | os.PathLike[str]) -> str | None:
    """Path, size and modification time of a vectors file (``None`` if it cannot be read)."""
    try:
        resolved = Path(path).resolve()
        st = resolved.stat()
    except OSError:
        return None
    return f"file {resolved} {st.st_size} {st.st_mtime_ns}"


def _default_name(path: Path) -> str:
    """The pretrained name implied by a file's format (fastText ``.vec`` by its extension)."""
    from statinterp.vectors import embeddings

    try:
        fmt = embeddings._sniff(path)  # reads the first 64 KiB
    except Exception as exc:  # noqa: BLE001 - any failure is bad input
        reason = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        reason = " ".join(reason.split())
        raise InputError(path, f"unrecognised vectors file ({reason}); {embeddings._EXPECTED}") from None
    if fmt == "glove":
        return "GloVe"
    suffixes = [s.lower() for s in path.suffixes]
    if fmt == "fasttext-bin" or ".vec" in suffixes[-2:]:
        return "fastt"
    return "w2vec"


def parse_vectors_option(values: Iterable[str]) -> dict[str, Path]:
    """``[NAME=]PATH`` values of ``--vectors`` -> ``{name: path}``.

    NAME is one of :data:`PRETRAINED_NAMES` (case-insensitive); without it the name comes
    from the file's format (GloVe text -> ``GloVe``, fastText ``.bin``/``.vec`` -> ``fastt``,
    word2vec binary/text -> ``w2vec``).  The file must exist and look like a vectors file
    (:class:`InputError` otherwise); it is read fully only when a method uses it.
    """
    from statinterp.vectors import embeddings

    known = {name.lower(): name for name in PRETRAINED_NAMES}
    out: dict[str, Path] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if sep and name.strip().lower() in known:
            name, path = known[name.strip().lower()], Path(rest)
        elif sep and name and not Path(value).exists() and os.sep not in name:
            raise UsageError(
                f"--vectors {value}: unknown vectors name {name!r}; use one of {', '.join(PRETRAINED_NAMES)}"
            )
        else:
            name, path = "", Path(value)
        if not str(path):
            raise UsageError(f"--vectors {value}: no file given")
        if not path.exists():
            raise InputError(path, f"vectors file not found; {embeddings._EXPECTED}")
        if not path.is_file():
            raise InputError(path, f"not a regular file; {embeddings._EXPECTED}")
        if not name:
            name = _default_name(path)
        else:
            _default_name(path)  # fail early on a file that is no vectors file at all
        if name in out:
            raise UsageError(f"--vectors gives {name} twice ({out[name]} and {path})")
        out[name] = path
    return out


def vector_kinds(ranker: object) -> list[str]:
    """The vector kinds a ranker (and the rankers it is composed of) will ask for, as each part
    declares them (:meth:`statinterp.rankers.base.Component.requires`); none for other objects."""
    requires = getattr(ranker, "requires", None)
    return list(requires().vectors) if callable(requires) else []


def _missing_message(kind: str) -> str:
    return f"method {kind} needs pretrained vectors: pass --vectors {kind}=PATH"


def required_pretrained(rankers: Iterable[object], available: Iterable[str]) -> list[str]:
    """Pretrained names the rankers need; :class:`UsageError` naming ``--vectors`` if one is missing."""
    have = set(available)
    needed: list[str] = []
    for ranker in rankers:
        for kind in vector_kinds(ranker):
            kind = _ALIASES.get(kind, kind)
            if kind in DOMAIN_KINDS or kind in needed:
                continue
            if kind not in have:
                raise UsageError(_missing_message(kind))
            needed.append(kind)
    return needed


# ----------------------------------------------------------------------------------------
# Training corpus


class _Counted:
    """Re-iterable view of a list that reports progress every ``step`` items.

    ``advance`` may be a list: pass ``i`` over the items reports to ``advance[i]`` (the last one
    for every later pass), so a fast first pass (gensim's vocabulary scan) and the slow training
    epochs are separate tasks with their own rates and times left.
    """

    def __init__(self, items: Sequence, advance: Callable[[int], None] | Sequence[Callable[[int], None]],
                 step: int = 2000):
        self.items = items
        self.advances = cast("list[Callable[[int], None]]",
                             list(advance) if isinstance(advance, (list, tuple)) else [advance])
        self.step = step
        self.passes = 0

    def __iter__(self) -> Iterator:
        advance = self.advances[min(self.passes, len(self.advances) - 1)]
        if 0 < self.passes < len(self.advances):  # the previous pass's task is over
            getattr(self.advances[self.passes - 1], "close", lambda: None)()
        self.passes += 1
        pending = 0
        for item in self.items:
            yield item
            pending += 1
            if pending == self.step:
                advance(pending)
                pending = 0
        if pending:
            advance(pending)

    def __len__(self) -> int:
        return len(self.items)


def _sentence_tokens(analysed, words: np.ndarray) -> Iterator[list[str]]:
    spans = analysed.sentences
    if len(spans) == 0 or len(analysed.ids) == 0:
        return
    lo = np.searchsorted(analysed.starts, spans[:, 0], "left")
    hi = np.searchsorted(analysed.ends, spans[:, 1], "right")
    ids = analysed.ids
    for a, b in zip(lo.tolist(), hi.tolist(), strict=False):
        if b > a:
            yield words[ids[a:b]].tolist()


# ----------------------------------------------------------------------------------------
# The provider


class VectorProvider:
    """Word vectors by kind, for the scorers of one loaded corpus.

    Parameters
    ----------
    source:
        A :class:`~statinterp.index.term_index.PreparedCorpus` (its case texts and analyzer are used),
        or the case texts themselves (then ``analyzer`` is required).
    analyzer:
        The :class:`~statinterp.text.analysis.Analyzer` that splits case texts into sentences of
        tokens (its on-disk cache makes this fast); default: the prepared corpus's.
    cache_dir:
        statinterp's cache folder (vectors go to its ``vectors`` subfolder); ``None`` uses
        :func:`~statinterp.cache.store.default_cache_dir`, ``False`` disables the vector cache.
    settings:
        Training settings per domain kind (``{"word2vec": VectorSettings(...)}``); missing
        kinds get :func:`domain_settings`.
    workers:
        If given, overrides the ``workers`` of every domain setting (``>1``: faster, but not
        deterministic; also a separate cache entry).
    pretrained:
        ``{name: path or DomainVectors}`` of user-supplied vectors (``--vectors``).
    show_progress:
        Show a progress bar on stderr while training.
    """

    def __init__(
        self,
        source: Any,
        *,
        analyzer: Analyzer | None = None,
        cache_dir: str | os.PathLike[str] | None | bool = None,
        settings: Mapping[str, VectorSettings] | None = None,
        workers: int | None = None,
        pretrained: Mapping[str, str | os.PathLike[str] | DomainVectors] | None = None,
        show_progress: bool = False,
    ):
        if hasattr(source, "indices") and hasattr(source, "analyzer"):
            texts: list[str] = [c.text for ix in source for c in ix.term.cases.values()]
            analyzer = analyzer or source.analyzer
        else:
            if isinstance(source, str):
                raise UsageError("VectorProvider needs a prepared corpus or a list of case texts, not one string")
            texts = list(source)
        if analyzer is None:
            raise UsageError("VectorProvider needs an analyzer to split case texts into sentences")
        unique: dict[str, str] = {}
        for text in texts:
            unique.setdefault(text_hash(text), text)
        self._texts = [unique[d] for d in sorted(unique)]  # the training order: by content hash
        self._digests = sorted(unique)
        self.analyzer = analyzer
        self.show_progress = show_progress
        unknown = set(settings or {}) - set(DOMAIN_KINDS)
        if unknown:
            raise UsageError(f"settings given for unknown vector kinds: {', '.join(sorted(unknown))}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise UsageError(f"vector workers must be a positive integer, not {workers!r}")
        self._given_settings = dict(settings or {})
        self._workers = workers
        self._settings: dict[str, VectorSettings] | None = None
        given = cast("str | os.PathLike[str]", cache_dir)
        self._cache_base = None if cache_dir is False else (Path(given) if cache_dir else default_cache_dir())
        self._cache: VectorCache | None = None
        self._directions: DirectionCache | None = None
        self._unit_directions: dict = {}
        self.pretrained: dict[str, Any] = dict(pretrained or {})
        self._loaded: dict[str, DomainVectors] = {}
        self._phrasers: dict[tuple[int, float], Any] = {}
        self._corpus_hash: str | None = None
        #: How each kind was obtained: "trained", "cache" or "file" (for reports and tests).
        self.origin: dict[str, str] = {}
        #: Statistics of the last training per kind: seconds, sentences, tokens, words/s.
        self.training: dict[str, dict[str, float]] = {}

    # -- public --------------------------------------------------------------------------

    @property
    def settings(self) -> dict[str, VectorSettings]:
        """The training settings of each domain kind."""
        if self._settings is None:
            from statinterp.vectors.embeddings import VectorSettings

            resolved = {}
            for kind in DOMAIN_KINDS:
                value = self._given_settings.get(kind)
                if value is None:
                    extra = {"bucket": fasttext_buckets(sum(map(len, self._texts)))} if kind == "fasttext" else {}
                    value = domain_settings(kind, **extra)
                if not isinstance(value, VectorSettings) or value.kind != kind:
                    raise UsageError(f"settings for {kind} must be VectorSettings of kind {kind!r}")
                if self._workers is not None:
                    value = dataclasses.replace(value, workers=self._workers)
                resolved[kind] = value
            self._settings = resolved
        return self._settings

    @property
    def cache(self) -> VectorCache | None:
        """The on-disk cache of trained vectors (``None`` when caching is off)."""
        if self._cache is None and self._cache_base is not None:
            from statinterp.cache.namespaces import VectorCache

            self._cache = VectorCache(self._cache_base)
        return self._cache

    @property
    def directions_cache(self) -> DirectionCache | None:
        """The on-disk cache of unit directions of the embedding methods (``None`` when caching is off)."""
        if self._directions is None and self._cache_base is not None:
            from statinterp.cache.namespaces import DirectionCache

            self._directions = DirectionCache(self._cache_base)
        return self._directions

    def directions(self, kind: str) -> UnitDirections:
        """The unit directions of texts under the current vectors of ``kind`` (what the cosine
        methods compare): one :class:`~statinterp.vectors.embeddings.UnitDirections` per kind and
        vectors, memoised for the life of this provider and kept in :attr:`directions_cache`."""
        from statinterp.vectors.embeddings import memoised_directions

        return memoised_directions(self._unit_directions, self, _ALIASES.get(kind, kind), self.directions_cache)

    @property
    def kinds(self) -> list[str]:
        """Every kind :meth:`get` can return."""
        return list(DOMAIN_KINDS) + list(self.pretrained)

    @property
    def corpus_hash(self) -> str:
        """SHA-256 over the sorted case-text hashes and the analyzer's settings key."""
        if self._corpus_hash is None:
            digest = hashlib.sha256()
            digest.update(f"statinterp-vectors-corpus 1|{self.analyzer.settings_key}\n".encode())
            for d in self._digests:
                digest.update(d.encode("ascii") + b"\n")
            self._corpus_hash = digest.hexdigest()
        return self._corpus_hash

    def get(self, kind: str) -> DomainVectors:
        """The vectors of ``kind`` (``word2vec``, ``fasttext``, or a pretrained name)."""
        from statinterp.vectors import embeddings

        kind = _ALIASES.get(kind, kind)
        found = self._loaded.get(kind)
        if found is not None:
            return found
        if kind in DOMAIN_KINDS:
            found = self._domain(kind)
        elif kind in self.pretrained:
            value = self.pretrained[kind]
            if isinstance(value, embeddings.DomainVectors):
                found = value
            else:
                found = embeddings.load_vectors(value)
                found.source = _file_identity(value)
            self.origin[kind] = "file"
        elif kind in PRETRAINED_NAMES:
            raise UsageError(_missing_message(kind))
        else:
            raise UsageError(f"unknown word vectors {kind!r}; available: {', '.join(self.kinds)}")
        self._loaded[kind] = found
        return found

    def prefetch(self, kinds: Iterable[str]) -> None:
        """Train ``kinds`` now if they need training (e.g. before drawing another progress bar),
        or load them; domain vectors already in the vector cache are left to load when first
        used (a warm run whose unit directions are cached may never need them)."""
        for kind in kinds:
            kind = _ALIASES.get(kind, kind)
            if kind in DOMAIN_KINDS and kind not in self._loaded and self._cached_entry(kind) is not None:
                continue
            self.get(kind)

    def source(self, kind: str) -> str | None:
        """What the vectors of ``kind`` are (``DomainVectors.source``), without loading them when
        they are known by their file: the vector cache entry of domain vectors, or a vectors
        file.  ``None`` if unknown (not trained yet, given in memory without a source)."""
        kind = _ALIASES.get(kind, kind)
        found = self._loaded.get(kind)
        if found is not None:
            return found.source
        if kind in DOMAIN_KINDS:
            entry = self._cached_entry(kind)
            return None if entry is None else _file_identity(entry)
        value = self.pretrained.get(kind)
        if value is None:
            return None
        return getattr(value, "source", None) if not isinstance(value, (str, os.PathLike)) else _file_identity(value)

    def _cached_entry(self, kind: str) -> Path | None:
        cache = self.cache
        if cache is None:
            return None
        path = cache.path_for(self.corpus_hash, self.settings[kind])
        return path if path.is_file() else None

    def sentences(self) -> list[list[str]]:
        """The training corpus: the token strings of every spaCy sentence of every case text."""
        out: list[list[str]] = []
        step = 64
        analyzer = self.analyzer
        with progress.task(len(self._texts), "Reading sentences", self.show_progress and len(self._texts) > 200,
                           unit="texts") as adv:
            for i in range(0, len(self._texts), step):
                chunk = self._texts[i : i + step]
                analysed = analyzer.analyse(chunk)
                words = np.asarray(analyzer.vocab.words, dtype=object)
                for at in analysed:
                    out.extend(_sentence_tokens(at, words))
                analyzer.forget()
                adv(len(chunk))
        return out

    # -- domain vectors ------------------------------------------------------------------

    def _domain(self, kind: str) -> DomainVectors:
        settings = self.settings[kind]
        cache = self.cache
        if cache is not None:
            from statinterp.vectors.embeddings import DomainVectors

            cached = cache.get(self.corpus_hash, settings)
            if cached is not None:
                self.origin[kind] = "cache"
                source = _file_identity(cache.path_for(self.corpus_hash, settings))
                return DomainVectors(kv=cached.kv, phrasers=cached.phrasers, source=source)
        vectors = self.train(kind)
        if cache is not None:  # the cache entry identifies the vectors (training with several workers varies)
            try:
                vectors.source = _file_identity(cache.put(self.corpus_hash, settings, vectors))
            except OSError as exc:
                cache.store.unwritable(exc)
        return vectors

    def train(self, kind: str) -> DomainVectors:
        """Train the domain vectors of ``kind`` (no cache); the same as
        ``embeddings.train_vectors(self.sentences(), settings)``, with progress reports."""
        from statinterp.vectors import embeddings
        from statinterp.vectors.embeddings import DomainVectors

        settings = self.settings[kind]
        show = self.show_progress
        started = time.perf_counter()
        sentences = self.sentences()
        n_tokens = sum(len(s) for s in sentences)
        if show:
            logger.info(
                f"training {kind} vectors ({settings.dim} dimensions, {settings.epochs} epochs, "
                f"{settings.workers} worker{'s' if settings.workers != 1 else ''}) on {len(sentences):,} "
                f"sentences ({n_tokens:,} tokens); they are cached for later runs"
            )
        phrasers = None
        corpus: Sequence[Sequence[str]] = sentences
        n = len(sentences)
        if settings.phrases:
            phrase_key = (settings.phrase_min_count, float(settings.phrase_threshold))
            phrasers = self._phrasers.get(phrase_key)  # word2vec and fastText share the phrase model
            passes = 1 if phrasers is not None else 3
            with progress.task(passes * n, "Learning phrases", show and n > BAR_SENTENCES, unit="sentences") as advance:
                if phrasers is None:
                    phrasers = embeddings.train_phrases(
                        _Counted(sentences, advance), settings.phrase_min_count, settings.phrase_threshold
                    )
                    self._phrasers[phrase_key] = phrasers
                from statinterp.vectors.embeddings import join_phrases_in_sentences

                corpus = join_phrases_in_sentences(phrasers, sentences)
                advance(n)
            del sentences
        plain = dataclasses.replace(settings, phrases=False)  # phrases are joined already
        train_started = time.perf_counter()
        bars = show and n > BAR_SENTENCES
        with progress.task(n, f"Scanning {kind} vocabulary", bars, unit="sentences") as scan, \
                progress.task(settings.epochs * n, f"Training {kind} ({settings.epochs} epochs)", bars,
                              unit="sentences") as epochs:
            trained = embeddings.train_vectors(_Counted(corpus, [scan, epochs]), plain)
        finished = time.perf_counter()
        seconds = finished - train_started
        self.training[kind] = {
            "seconds_total": finished - started,
            "seconds_training": seconds,
            "sentences": float(n),
            "tokens": float(n_tokens),
            "words_per_second": n_tokens * settings.epochs / seconds if seconds > 0 else float("nan"),
        }
        self.origin[kind] = "trained"
        if show:
            logger.info(
                f"trained {kind} vectors in {finished - started:.0f} s "
                f"({self.training[kind]['words_per_second']:,.0f} words/s)"
            )
        return DomainVectors(kv=trained.kv, phrasers=phrasers)

    def __repr__(self) -> str:
        return f"VectorProvider({len(self._texts)} case texts, kinds={self.kinds})"
