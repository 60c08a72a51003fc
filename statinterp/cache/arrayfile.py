"""Checksummed files of named NumPy arrays plus a JSON manifest (the caches' on-disk format).

Layout: a magic string; the SHA-256 of the cache key followed by everything after the digest;
an 8-byte little-endian header length; the JSON header (the caller's metadata plus the
manifest ``arrays: {name: [dtype, shape, offset]}``, padded to 8 bytes); the arrays' raw
bytes, each starting on an 8-byte boundary.  No pickles: reading a file can only give arrays
and JSON values.  The file is written atomically (:func:`statinterp.cache.atomic.replace`), so a
reader meets the old file, the new one, or none; a damaged or foreign file fails
:func:`read_array_file` with ``ValueError``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from statinterp.cache import atomic
from statinterp.cache.files import open_regular

__all__ = ["write_array_file", "read_array_file", "touch", "evict_oldest"]


def write_array_file(path: Path, magic: bytes, key: str, meta: Mapping[str, Any],
                     arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` and the JSON-able ``meta`` to ``path`` (atomically, replacing it)."""
    manifest: dict[str, list] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        manifest[name] = [arr.dtype.str, list(arr.shape), offset]
        data = arr.tobytes()
        chunks.append(data)
        offset += len(data)
        if offset % 8:
            chunks.append(bytes(8 - offset % 8))
            offset += 8 - offset % 8
    head = json.dumps({**meta, "arrays": manifest}, ensure_ascii=True).encode("ascii")
    head += b" " * (-len(head) % 8)
    body = [len(head).to_bytes(8, "little"), head] + chunks
    check = hashlib.sha256(key.encode("ascii"))
    for chunk in body:
        check.update(chunk)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replace(path, force=True) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(magic)
            fh.write(check.digest())
            for chunk in body:
                fh.write(chunk)


#: The JSON header of an array file is never larger than this.
MAX_HEADER_BYTES = 64 * 1024 * 1024


def _payload_end(manifest: Mapping[str, Any]) -> int:
    """Where the arrays of a manifest end (relative to their base), padded as written."""
    end = 0
    for dtype, shape, offset in manifest.values():
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if offset < 0 or count < 0:
            raise ValueError("inconsistent manifest")
        end = max(end, offset + count * np.dtype(dtype).itemsize)
    return end + (-end % 8)


def read_array_file(path: Path, magic: bytes, key: str,
                    max_bytes: int | None = None) -> tuple[dict[str, Any], Callable[[str], np.ndarray]]:
    """``(meta, array)`` of a file written by :func:`write_array_file` with the same ``magic``
    and ``key``; ``array(name)`` is a read-only view into the file's bytes.

    Only a regular file is read, and only once its size is the size its header states
    (:mod:`statinterp.cache.files`): a symlink to ``/dev/zero``, a FIFO or a file with bytes
    appended is refused before its contents are read. Raises ``OSError`` if the file cannot be
    read and ``ValueError`` if it is not a regular file, truncated, too large (over its header's
    size or over ``max_bytes``), damaged (checksum) or not such a file.
    """
    n_magic = len(magic)
    prefix = n_magic + 32 + 8
    with open_regular(path, max_bytes) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < prefix:
            raise ValueError("not a cache file of this kind, or truncated")
        start = fh.read(prefix)
        if len(start) != prefix or start[:n_magic] != magic:
            raise ValueError("not a cache file of this kind, or truncated")
        n_head = int.from_bytes(start[-8:], "little")
        if n_head > min(MAX_HEADER_BYTES, size - prefix):
            raise ValueError("truncated, or not a cache file of this kind (header length)")
        head = fh.read(n_head)
        try:
            meta = json.loads(head.decode("ascii"))
            manifest = meta["arrays"]
            expected = prefix + n_head + _payload_end(manifest)
        except Exception as exc:  # noqa: BLE001 - an unreadable header is a damaged file
            raise ValueError(f"damaged header ({type(exc).__name__})") from None
        if size != expected:
            raise ValueError(f"{size} bytes where the header says {expected}")
        raw = bytearray(size)
        raw[:prefix] = start
        raw[prefix : prefix + n_head] = head
        got = fh.readinto(memoryview(raw)[prefix + n_head:])
    if got != size - prefix - n_head:
        raise ValueError("short read")
    body = memoryview(raw)[n_magic + 32:]
    check = hashlib.sha256(key.encode("ascii"))
    check.update(body)
    if check.digest() != bytes(raw[n_magic : n_magic + 32]):
        raise ValueError("checksum mismatch")
    base = prefix + n_head

    def array(name: str) -> np.ndarray:
        dtype, shape, offset = manifest[name]
        count = int(np.prod(shape)) if shape else 1
        return np.frombuffer(raw, dtype=np.dtype(dtype), count=count, offset=base + offset).reshape(shape)

    return meta, array


def touch(path: Path) -> None:
    """Mark a cache file recently used (kept by :func:`evict_oldest`); best effort."""
    try:
        os.utime(path)
    except OSError:
        pass


def evict_oldest(directory: Path, pattern: str, keep: int) -> None:
    """Delete all but the ``keep`` most recently used files matching ``pattern``; best effort."""
    files = []
    for path in directory.glob(pattern):
        try:
            files.append((path.stat().st_mtime, path))
        except OSError:
            pass
    for _, path in sorted(files, reverse=True)[keep:]:
        try:
            path.unlink()
        except OSError:
            pass
