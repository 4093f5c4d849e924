"""Writing fixed files back without losing a byte.

The fix engine edits a file's *decoded* text (character offsets) and hands the
new text here.  This module turns it back into bytes with the file's own
encoding and BOM (:meth:`kv4lint.base.source.Text.encode`; line endings were never
translated, so they come back exactly), and replaces the file atomically:

1. the new bytes go to a temporary file in the file's own directory
   (``tempfile.mkstemp``), which is flushed and fsynced;
2. the temporary file gets the original's permission bits (the executable bit
   included) and, where the process may, its owner and group;
3. just before the replacement the file on disk is compared with what was
   read (size, mtime, SHA-256 of the content): if anything else wrote it in the
   meantime, nothing is replaced;
4. ``os.replace`` swaps the temporary file in; the temporary file never
   survives an error, and Ctrl-C or SIGTERM wait for the few milliseconds from
   its creation to the replacement or its removal (:func:`signals_held`).

A file is refused, with a :class:`WriteError` naming it (the caller goes on
with the other files), when it changed since it was read, is read-only (no
write permission bit, or the process may not write it), is not a regular file,
has other hard links (replacing it would split them), lies (through a symlink)
outside the trees kv4lint was asked to fix, or would not survive the round trip
through its encoding.  A symlink inside the tree is followed: its target is
rewritten and the link is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import tempfile
import threading

from kv4lint.base.record import Frozen
from kv4lint.base.source import Text
from kv4lint.files.discover import inside, roots_of  # noqa: F401 - roots_of: the trees a run may write in
from kv4lint.files.regular_file import open_file

TEMP_SUFFIX = ".kv4lint-tmp"


class WriteError(Exception):
    """A file that was not written, and why (the file is unchanged)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class Snapshot(Frozen):
    """What a file was when it was read: compared again just before it is replaced.

    ``path`` as given; ``real``: the file actually read (symlinks resolved); ``digest``: sha256 of the content.
    A plain record (kv4lint.base.record): a cached run that writes its file index loads this module.
    """

    __slots__ = ("path", "real", "size", "mtime_ns", "digest")

    def __init__(self, path: str, real: str, size: int, mtime_ns: int, digest: str):
        self._set("path", path)
        self._set("real", real)
        self._set("size", size)
        self._set("mtime_ns", mtime_ns)
        self._set("digest", digest)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read(path: str) -> tuple[bytes, Snapshot]:
    """Read a file's bytes and remember its state, for :func:`write_text`.

    Raises :class:`WriteError` when the path is not a regular file or cannot be read.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as e:
        raise WriteError(path, f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise WriteError(path, "not a regular file; not rewritten")
    try:
        with open_file(real) as f:
            before = os.fstat(f.fileno())
            data = f.read()
            after = os.fstat(f.fileno())
    except OSError as e:
        raise WriteError(path, f"cannot read: {e.strerror or e}") from None
    if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns) or len(data) != after.st_size:
        raise WriteError(path, "the file changed while it was being read; not rewritten")
    return data, Snapshot(path, real, after.st_size, after.st_mtime_ns, _digest(data))


def _unchanged(snap: Snapshot) -> None:
    """Raise unless the file on disk is still exactly what was read."""
    if os.path.realpath(snap.path) != snap.real:
        raise WriteError(snap.path, "changed on disk since it was read (the link points elsewhere now); not rewritten")
    try:
        st = os.stat(snap.real)
    except OSError as e:
        raise WriteError(snap.path, f"changed on disk since it was read ({e.strerror or e}); not rewritten") from None
    if (st.st_size, st.st_mtime_ns) != (snap.size, snap.mtime_ns):
        raise WriteError(snap.path, "changed on disk since it was read; not rewritten (run kv4lint again)")
    try:
        with open_file(snap.real) as f:
            data = f.read()
    except OSError as e:
        raise WriteError(snap.path, f"cannot re-read before writing: {e.strerror or e}") from None
    if _digest(data) != snap.digest:
        raise WriteError(snap.path, "changed on disk since it was read; not rewritten (run kv4lint again)")


def _before_replace(real: str) -> None:
    """Called between writing the temporary file and the last check (a seam for tests)."""


def check(path: str, snap: Snapshot, roots: list[str] | None) -> os.stat_result:
    """The refusals that do not need the new content; returns the target's stat."""
    real = os.path.realpath(path)
    if roots is not None and not inside(real, roots):
        what = "a symlink to" if os.path.islink(path) else "resolves to"
        raise WriteError(path, f"{what} {real}, outside the tree being fixed; not rewritten")
    try:
        st = os.lstat(real)
    except OSError as e:
        raise WriteError(path, f"cannot write: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise WriteError(path, "not a regular file; not rewritten")
    if not (st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) or not os.access(real, os.W_OK):
        raise WriteError(path, "read-only; not rewritten")
    if st.st_nlink > 1:
        raise WriteError(path, f"has {st.st_nlink} hard links; replacing it would split them; not rewritten")
    if real != snap.real:
        raise WriteError(path, "changed on disk since it was read (the link points elsewhere now); not rewritten")
    return st


@contextlib.contextmanager
def signals_held():
    """Ctrl-C (SIGINT) and SIGTERM wait until the block is done.

    Between ``mkstemp`` creating a temporary file and the ``try`` that removes
    it on failure, a KeyboardInterrupt would leave the file behind (and SIGTERM
    kills without any cleanup).  While the block runs, a handler only records
    these signals; each is raised again, with the handler it had, as the block
    ends -- right after the file was replaced or its temporary removed, a few
    milliseconds later.  Outside the main thread (where Python runs signal
    handlers) nothing is changed.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    sigs = [signal.SIGINT] + ([signal.SIGTERM] if hasattr(signal, "SIGTERM") else [])
    old = {}
    try:
        for sig in sigs:
            if signal.getsignal(sig) is not None:  # None: a handler set outside Python, left alone
                old[sig] = signal.signal(sig, lambda signum, frame: held.append(signum))
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(held):
            signal.raise_signal(sig)


def write_bytes(path: str, data: bytes, snap: Snapshot, *, roots: list[str] | None = None) -> None:
    """Atomically replace ``path``'s content with ``data`` (see the module docstring)."""
    st = check(path, snap, roots)
    _unchanged(snap)
    with signals_held():
        _replace(path, data, snap, st)


def _replace(path: str, data: bytes, snap: Snapshot, st: os.stat_result) -> None:
    real = snap.real
    directory = os.path.dirname(real)
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(real) + ".", suffix=TEMP_SUFFIX)
    except OSError as e:
        raise WriteError(path, f"cannot create a temporary file in {directory}: {e.strerror or e}; "
                               "not rewritten") from None
    pending: str | None = tmp
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()) and hasattr(os, "chown"):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                try:  # at least the group, when we belong to it
                    os.chown(tmp, -1, st.st_gid)
                except OSError:
                    pass
        os.chmod(tmp, stat.S_IMODE(st.st_mode))  # after chown, which may clear set-id bits
        _before_replace(real)
        _unchanged(snap)
        os.replace(tmp, real)
        pending = None
        _fsync_dir(directory)
    except OSError as e:
        raise WriteError(path, f"cannot write: {e.strerror or e}; not rewritten") from None
    finally:
        if pending is not None:
            try:
                os.unlink(pending)
            except FileNotFoundError:
                pass


def _fsync_dir(directory: str) -> None:
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


def encode(path: str, original: Text, new_text: str, snap: Snapshot) -> bytes:
    """The bytes of ``new_text`` in ``original``'s encoding, after checking the round trip is exact."""
    if _digest(original.encode(original.text)) != snap.digest:
        raise WriteError(path, f"its bytes do not survive a round trip through {original.encoding}; not rewritten")
    try:
        return original.encode(new_text)
    except UnicodeEncodeError as e:
        raise WriteError(path, f"the fix cannot be written in the file's encoding ({original.encoding}): "
                               f"{e.object[e.start:e.end]!r}; not rewritten") from None


def write_text(path: str, original: Text, new_text: str, snap: Snapshot, *, roots: list[str] | None = None) -> None:
    """Write ``new_text`` over ``path``, whose decoded content was ``original`` when ``snap`` was taken."""
    write_bytes(path, encode(path, original, new_text, snap), snap, roots=roots)
