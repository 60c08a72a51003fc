"""Reading cache and model files safely: regular files only, never more than a stated size.

A cache entry or a model file may have been replaced by anything: a symlink to ``/dev/zero``
(endless zeros), a FIFO (a read that never returns), a device, or a file far larger than the
entry it claims to be. :func:`read_regular` opens without blocking (``O_NONBLOCK``), refuses
whatever ``fstat`` does not call a regular file, and reads at most ``max_bytes``: memory
grows with what a valid entry can hold, whatever the file is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NotRegularFile", "TooLarge", "open_regular", "read_regular", "special_kind"]


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
