"""Read only regular files: a FIFO, socket or device of the scanned tree is never opened.

A repository can hold a symlink to ``/dev/zero``, ``/dev/stdin`` or a FIFO
under any name kv4lint reads -- a script, a ``.gitignore``, a
``pyproject.toml``, a model's ``config.json``, a ``--config`` file.  Opened
and read, it would never end (or wait for a writer forever).  Every read of a
file kv4lint did not write goes through :func:`read_bytes` (or
:func:`open_regular`):

- ``stat`` first: anything but a regular file is refused without being opened (a walk's ``stat`` of the file,
  when the caller has one: :func:`open_regular`'s ``walked``);
- then ``open`` with ``O_NONBLOCK`` (a FIFO swapped in after the ``stat`` does
  not block the open) and ``O_NOCTTY``, and ``fstat`` on the open file: if it is
  not the regular file, it is closed unread.

The refusal is an ``OSError`` whose ``strerror`` is "not a regular file", so
callers that already handle unreadable files need nothing more.  This module
is a leaf.
"""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    def __init__(self, path: str, *, opened: bool = False):
        super().__init__(errno.EINVAL, "not a regular file", path)
        self.opened = opened  # False: the stat before the open said so; True: the fstat after it (a swap)


def open_regular(path: str, walked: os.stat_result | None = None) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its ``fstat``, or :class:`NotRegularFile` / ``OSError``.

    ``walked``: the ``stat`` a directory walk took of ``path`` just before, which stands for the ``stat`` before
    the open (one system call less per file of a tree); the ``fstat`` after it is taken all the same."""
    if not stat.S_ISREG((walked or os.stat(path)).st_mode):
        raise NotRegularFile(path)
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, opened=True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """The content of the regular file ``path``; with a ``limit``, at most ``limit + 1`` bytes (so that a
    caller can tell a file over it)."""
    fd, st = open_regular(path)
    try:
        return read_open(fd, st.st_size, limit)
    finally:
        os.close(fd)


def read_open(fd: int, size: int, limit: int | None = None) -> bytes:
    """The content of the regular file open at ``fd`` whose ``fstat`` gave ``size`` (see :func:`read_bytes`).

    Plain ``os.read``: one ``read`` of the size ``fstat`` gave, plus one, so
    that a file that grew since shows; no buffered file object, no buffer of
    the limit's size allocated for every file.  A regular file's read returns
    less than asked only at its end, so a shorter read is the whole file.
    """
    want = (size if limit is None else min(size, limit)) + 1
    data = os.read(fd, want)
    if len(data) < want or (limit is not None and len(data) > limit):
        return data
    parts = [data]
    total = len(data)
    while limit is None or total <= limit:  # the file grew
        more = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit + 1 - total))
        if not more:
            break
        parts.append(more)
        total += len(more)
    return b"".join(parts)


def open_file(path: str, mode: str = "rb", **kwargs):
    """``open(path, mode)`` for reading, through :func:`open_regular`."""
    if any(c in mode for c in "wax+"):
        raise ValueError("open_file only reads")
    fd, _ = open_regular(path)
    try:
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str, limit: int | None = None, *, errors: str = "strict") -> str:
    """:func:`read_bytes` decoded as UTF-8."""
    return read_bytes(path, limit).decode("utf-8", errors)
