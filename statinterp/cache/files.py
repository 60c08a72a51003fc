"""Files on disk: atomic writes, safe reads of regular files, checksummed array files.

**Atomic output**: write to a temporary file beside the target, then rename.

An interrupted run leaves either the old file or the new one, never a truncated one: the data
go to a temporary file ``.NAME.XXXX.tmp`` in the target's folder, which is flushed to disk and
then renamed onto the target in one step. On any exception, including ``KeyboardInterrupt``
(Ctrl-C) and ``SystemExit`` (the CLI turns SIGTERM into one), the temporary file is removed.
Only SIGKILL or a power cut can leave a stray temporary file behind (never a damaged target).

Without ``force`` an existing file is never replaced, even one that appears while we write:
the temporary file is hard-linked to the target name, which fails if the name exists.

**Safe reads**: cache and model files are read as regular files only, never more than a stated size.

A cache entry or a model file may have been replaced by anything: a symlink to ``/dev/zero``
(endless zeros), a FIFO (a read that never returns), a device, or a file far larger than the
entry it claims to be. :func:`read_regular` opens without blocking (``O_NONBLOCK``), refuses
whatever ``fstat`` does not call a regular file, and reads at most ``max_bytes``: memory
grows with what a valid entry can hold, whatever the file is.

**Array files**: checksummed files of named NumPy arrays plus a JSON manifest (the caches' on-disk format).

Layout: a magic string; the SHA-256 of the cache key followed by everything after the digest;
an 8-byte little-endian header length; the JSON header (the caller's metadata plus the
manifest ``arrays: {name: [dtype, shape, offset]}``, padded to 8 bytes); the arrays' raw
bytes, each starting on an 8-byte boundary.  No pickles: reading a file can only give arrays
and JSON values.  The file is written atomically (:func:`replace`), so a
reader meets the old file, the new one, or none; a damaged or foreign file fails
:func:`read_array_file` with ``ValueError``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from statinterp.errors import OutputError, UsageError

__all__ = ["check_writable", "fsync_dir", "replace", "write_text", "write_bytes", "write_set",
           "NotRegularFile", "TooLarge", "open_regular", "read_regular", "special_kind", "write_array_file",
           "read_array_file", "touch", "evict_oldest"]


def check_writable(path: str | Path, force: bool = False) -> Path:
    """Refuse to overwrite an existing user file unless ``force``; refuse directories."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a directory, expected a file path")
    try:
        kind = special_kind(path)
    except OSError:
        kind = None  # no such file (or a dangling link): written as usual
    if kind is not None:  # --force would replace a device node or FIFO with a regular file
        raise UsageError(f"{path} is {kind}, not a file; give the path of a regular file to write")
    for folder in path.parents:  # the nearest existing ancestor must be a folder (mkdir says "File exists")
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise OutputError(f"cannot write {path}: {folder} is a file, not a folder")
            break
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    return path


def _create_temp(path: Path) -> Path:
    """A new empty file beside ``path``, created with the usual permissions (0666 & ~umask)."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise OutputError(f"cannot create a temporary file beside {path}")


def fsync_dir(directory: Path) -> None:
    """Flush a folder's entries (a rename in it) to disk; best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _keep_mode(tmp: Path, path: Path) -> None:
    """Give the temporary file the permission bits of the file it replaces (if there is one)."""
    try:
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
    except FileNotFoundError:
        pass


def _commit(tmp: Path, path: Path, force: bool) -> None:
    """Move ``tmp`` onto ``path``; without ``force`` never replace an existing ``path``."""
    if force:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # atomic and fails if ``path`` exists, even if it appeared meanwhile
    except FileExistsError:
        raise UsageError(f"{path} already exists; pass --force to overwrite it") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise
        check_writable(path, force=False)  # no hard links on this file system
        os.replace(tmp, path)
        return
    tmp.unlink()


@contextmanager
def replace(path: str | Path, force: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; on success rename it onto ``path``.

    Without ``force`` an existing ``path`` is an error (:class:`UsageError`). With ``force`` an
    existing file keeps its permission bits. I/O failures raise :class:`OutputError`.
    """
    path = check_writable(path, force)
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _create_temp(path)
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        if force:
            _keep_mode(tmp, path)
        _commit(tmp, path, force)
        tmp = None
        fsync_dir(path.parent)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None:
            try:
                tmp.unlink()
            except OSError:
                pass


def write_text(path: str | Path, text: str, force: bool = False) -> Path:
    with replace(path, force) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes, force: bool = False) -> Path:
    with replace(path, force) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_set(files: dict[str | Path, bytes | str], force: bool = False) -> list[Path]:
    """Write several files that belong together (a report's .md, .json and .png) as one set.

    Every file is written to a temporary beside its target first; only when all are written
    are they renamed onto their targets, one after the other with nothing in between. A failure
    or an interruption while writing leaves every old file as it was (and no temporaries), so a
    new ``.md`` never sits beside an old ``.png``. Without ``force`` nothing is replaced: if any
    target exists, none is written (and targets already linked by this call are removed again).
    Text is written as UTF-8. Returns the paths written, in the order given.
    """
    targets = [check_writable(p, force) for p in files]
    temps: dict[Path, Path] = {}
    committed: list[Path] = []
    current = targets[0] if targets else Path()
    try:
        for path, data in zip(targets, files.values(), strict=True):
            current = path
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = _create_temp(path)
            temps[path] = tmp
            with open(tmp, "wb") as fh:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
            if force:
                _keep_mode(tmp, path)
        for path in targets:
            current = path
            _commit(temps[path], path, force)
            committed.append(path)
            del temps[path]
        for folder in {p.parent for p in targets}:
            fsync_dir(folder)
    except BaseException as exc:
        if not force:  # without force the committed ones are new files: take them back
            for path in committed:
                try:
                    path.unlink()
                except OSError:
                    pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {current}: {exc.strerror or exc}") from exc
        raise
    finally:
        for tmp in temps.values():
            try:
                tmp.unlink()
            except OSError:
                pass
    return targets


class NotRegularFile(ValueError):
    """The path is a FIFO, a device, a socket or a folder, not a regular file (``kind`` says which)."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(f"{kind}, not a regular file")


class TooLarge(ValueError):
    """The file is larger than its kind of file may be (or than its own header says)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is neither a regular file nor a folder ("a FIFO", "a character
    device", ...; a symlink is followed), else None. Only ``stat``: nothing is opened."""
    mode = os.stat(path).st_mode
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _kind(mode)


def open_regular(path: str | os.PathLike[str], max_bytes: int | None = None):
    """A binary file object of ``path`` if it is a regular file of at most ``max_bytes``.

    Raises ``FileNotFoundError`` (and other ``OSError``) as ``open`` does,
    :class:`NotRegularFile` for anything but a regular file (after a symlink is followed),
    and :class:`TooLarge` for a file over ``max_bytes``. Opening never blocks (a FIFO without
    a writer is refused, not waited for).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(_kind(st.st_mode))
        if max_bytes is not None and st.st_size > max_bytes:
            raise TooLarge(f"{st.st_size} bytes, more than the {max_bytes} such a file may hold")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """All bytes of the regular file ``path``, which may hold at most ``max_bytes``.

    The read itself is capped too (a file that grows while it is read is refused), so memory
    never exceeds ``max_bytes + 1``. Errors as :func:`open_regular`.
    """
    with open_regular(path, max_bytes) as fh:
        size = os.fstat(fh.fileno()).st_size
        data = bytearray(size)
        got = fh.readinto(data)
        if got != size:
            raise ValueError(f"short read ({got} of {size} bytes)")
        if fh.read(1):
            raise TooLarge(f"{Path(path).name} grew while it was read")
    return bytes(data)


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
    with replace(path, force=True) as tmp:
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
