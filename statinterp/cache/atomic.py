"""Atomic file output: write to a temporary file beside the target, then rename.

An interrupted run leaves either the old file or the new one, never a truncated one: the data
go to a temporary file ``.NAME.XXXX.tmp`` in the target's folder, which is flushed to disk and
then renamed onto the target in one step. On any exception, including ``KeyboardInterrupt``
(Ctrl-C) and ``SystemExit`` (the CLI turns SIGTERM into one), the temporary file is removed.
Only SIGKILL or a power cut can leave a stray temporary file behind (never a damaged target).

Without ``force`` an existing file is never replaced, even one that appears while we write:
the temporary file is hard-linked to the target name, which fails if the name exists.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from statinterp.cache.files import special_kind
from statinterp.errors import OutputError, UsageError


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
