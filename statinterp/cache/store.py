"""The one cache store: every rebuildable value on disk, under one layout, key scheme and rules.

Layout: ``ROOT/NAMESPACE/KK/KEY.EXT``. ``KEY`` is the SHA-256 of the canonical JSON of
``[STORE_FORMAT, NAMESPACE, *parts]`` (:meth:`CacheStore.key`); the parts are everything the
value depends on (a format version, the code fingerprint where the code computing it may
change, settings, library versions, and the content itself or its SHA-256). ``KK`` is the first
two hex digits of ``KEY`` (no folder holds more than a few hundred entries).

The namespaces (:data:`NAMESPACES`): ``analysis`` (token arrays per text), ``prepared``
(prepared corpora), ``vectors`` (trained word vectors), ``dense`` (sentence embeddings),
``directions`` (unit directions and values computed under word vectors), ``answers`` (a slow
lookup's answers). Array entries (everything but the two vector namespaces, which hold gensim
pickles) are checksummed array files (:mod:`statinterp.cache.files`, magic
:data:`MAGIC`, the entry's key in the checksum).

The rules, the same for every namespace:

* An entry is checked (regular file, size, checksum, key) before anything in it is used. A
  damaged entry is discarded with one :class:`CacheWarning` and ``None`` is returned: the
  caller rebuilds it (:meth:`CacheStore.discard`).
* Writes are atomic (:mod:`statinterp.cache.files`) and best effort: a folder that cannot be
  written gives one warning per cache folder and process, and the run goes on without storing.
* A namespace with a :data:`KEEP` limit keeps only that many most recently used entries of each
  kind (file suffix); reading an entry marks it used. ``analysis`` keeps everything (prepared
  corpora record its entries' modification times).
* ``statinterp cache info`` / ``statinterp cache clear [NAMESPACE]`` (:meth:`CacheStore.info`,
  :meth:`CacheStore.clear`).
* Where: :func:`default_cache_dir`. Keys of computed values include :func:`code_fingerprint`, a
  fingerprint of the source code that computes them: editing that code invalidates what was
  cached (the old files are simply never found again).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from statinterp.cache.files import evict_oldest, read_array_file, touch, write_array_file
from statinterp.errors import StatinterpError, StatinterpWarning

__all__ = ["CacheStore", "CacheWarning", "NAMESPACES", "Stale", "STORE_FORMAT", "MAGIC", "default_cache_dir",
           "code_fingerprint"]

T = TypeVar("T")

#: Bump when the layout or the key scheme changes (every key changes with it).
STORE_FORMAT = 1

#: The magic string every array entry starts with.
MAGIC = b"statinterp-cache 1\n"

NAMESPACES = ("analysis", "prepared", "vectors", "dense", "directions", "answers")

#: How many entries of each kind (file suffix) a namespace keeps; a namespace not named keeps all.
KEEP: dict[tuple[str, str], int] = {
    ("prepared", ".bin"): 8,
    ("directions", ".d.bin"): 256,
    ("directions", ".q.bin"): 4096,
    ("directions", ".v.bin"): 1024,
    ("directions", ".w.bin"): 4096,
}

_WARNED: set[tuple[str, str]] = set()


class CacheWarning(StatinterpWarning):
    """A cache entry was damaged (and has been discarded), or the cache folder cannot be used."""


class Stale(Exception):
    """Raised by a ``decode`` function: the entry is intact but something it was derived from has
    changed (it is not used, and not reported as damaged)."""


def one_line(exc: BaseException | str) -> str:
    """An exception (or reason) as one short line for a warning."""
    if isinstance(exc, str):
        return exc
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


@dataclass(frozen=True)
class NamespaceInfo:
    name: str
    entries: int
    bytes: int


class CacheStore:
    """The cache under ``root`` (``None``: :func:`~statinterp.cache.store.default_cache_dir`)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    # ---------------------------------------------------------------- keys and paths

    @staticmethod
    def key(namespace: str, *parts: Any) -> str:
        """The key of the entry of ``namespace`` that depends on ``parts`` (JSON values)."""
        text = json.dumps([STORE_FORMAT, namespace, *parts], sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def folder(self, namespace: str) -> Path:
        if namespace not in NAMESPACES:
            raise ValueError(f"unknown cache namespace {namespace!r}")
        return self.root / namespace

    def path(self, namespace: str, key: str, suffix: str = ".bin") -> Path:
        return self.folder(namespace) / key[:2] / f"{key}{suffix}"

    # ---------------------------------------------------------------- the rules

    def discard(self, namespace: str, path: Path, reason: BaseException | str, inode: int | None = None,
                stacklevel: int = 3) -> None:
        """The damaged-entry rule: one warning, and the entry is removed (unless it is no longer the
        file that was read, ``inode``: another run has just written a good one)."""
        warnings.warn(f"discarding damaged {namespace} cache entry {path} ({one_line(reason)}); "
                      "it will be rebuilt", CacheWarning, stacklevel=stacklevel)
        try:
            if inode is None or os.lstat(path).st_ino == inode:
                path.unlink()
        except OSError:
            pass

    def unwritable(self, exc: BaseException, stacklevel: int = 4) -> None:
        """A write failed: one warning per cache folder and process."""
        self._once("write", f"cannot write the cache ({self.root}: {one_line(exc)}); continuing without storing",
                   stacklevel)

    def unreadable(self, path: Path, exc: OSError, stacklevel: int = 4) -> None:
        """An entry could not be read (an I/O error, not damage): one warning per cache folder and process."""
        self._once("read", f"cannot read the cache ({path}: {exc.strerror or exc}); rebuilding what it holds",
                   stacklevel)

    def _once(self, what: str, message: str, stacklevel: int) -> None:
        if (str(self.root), what) in _WARNED:
            return
        _WARNED.add((str(self.root), what))
        warnings.warn(message, CacheWarning, stacklevel=stacklevel)

    def used(self, namespace: str, path: Path, suffix: str) -> None:
        """Mark an entry recently used (only where a :data:`KEEP` limit applies)."""
        if (namespace, suffix) in KEEP:
            touch(path)

    def evict(self, namespace: str, suffix: str) -> None:
        keep = KEEP.get((namespace, suffix))
        if keep is not None:
            evict_oldest(self.folder(namespace), f"*/*{suffix}", keep)

    # ---------------------------------------------------------------- array entries

    def read_arrays(self, namespace: str, key: str, decode: Callable[[dict[str, Any], Callable[[str], np.ndarray]], T],
                    suffix: str = ".bin", max_bytes: int | None = None) -> T | None:
        """``decode(meta, array)`` of an array entry, ``None`` if there is none, if ``decode``
        raises :class:`Stale`, or if it is damaged (discarded, :meth:`discard`). ``max_bytes``:
        the most the entry can hold (a larger file is damaged)."""
        path = self.path(namespace, key, suffix)
        inode = None
        try:
            inode = os.lstat(path).st_ino
            meta, array = read_array_file(path, MAGIC, key, max_bytes)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            self.unreadable(path, exc)
            return None
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the entry is not used
            self.discard(namespace, path, exc, inode)
            return None
        try:
            value = decode(meta, array)
        except Stale:
            return None
        except Exception as exc:  # noqa: BLE001
            self.discard(namespace, path, exc, inode)
            return None
        self.used(namespace, path, suffix)
        return value

    def write_arrays(self, namespace: str, key: str, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                     suffix: str = ".bin") -> bool:
        """Store an array entry atomically (best effort: :meth:`unwritable`); ``True`` if written."""
        try:
            write_array_file(self.path(namespace, key, suffix), MAGIC, key, meta, arrays)
        except (OSError, StatinterpError) as exc:
            self.unwritable(exc)
            return False
        self.evict(namespace, suffix)
        return True

    # ---------------------------------------------------------------- info and clear

    def info(self) -> list[NamespaceInfo]:
        """Entries (files) and bytes of each namespace."""
        out = []
        for name in NAMESPACES:
            entries = size = 0
            for dirpath, _, files in os.walk(self.root / name):
                for file in files:
                    try:
                        size += os.lstat(os.path.join(dirpath, file)).st_size
                    except OSError:
                        continue
                    entries += not file.startswith(".")
            out.append(NamespaceInfo(name, entries, size))
        return out

    def clear(self, namespace: str | None = None) -> NamespaceInfo:
        """Remove every entry of ``namespace`` (all namespaces if ``None``); what was removed."""
        names = NAMESPACES if namespace is None else (namespace,)
        for name in names:
            self.folder(name)  # unknown names are refused before anything is removed
        before = {i.name: i for i in self.info()}
        for name in names:
            shutil.rmtree(self.root / name, ignore_errors=True)
        return NamespaceInfo(namespace or "all", sum(before[n].entries for n in names),
                             sum(before[n].bytes for n in names))


def default_cache_dir() -> Path:
    """``$STATINTERP_CACHE``, else ``$XDG_CACHE_HOME/statinterp``, else ``~/.cache/statinterp``."""
    env = os.environ.get("STATINTERP_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "statinterp"


def _source_file(module: str) -> Path:
    loaded = sys.modules.get(module)
    origin = getattr(loaded, "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec(module)  # found, not imported: no import order to mind
        origin = spec.origin if spec is not None else None
    if origin is None:
        raise ValueError(f"no source file for module {module!r}")
    return Path(origin)


@functools.cache
def code_fingerprint(*modules: str) -> str:
    """SHA-256 over the source files of the named modules (dotted names), in the given order."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(_source_file(module).read_bytes())
    return digest.hexdigest()
