"""The language server's checking process: buffers are judged in a child process, never on the request loop.

kv4lint's check is CPU-bound Python, and its parsers (libcst, tree-sitter) are native code that holds the GIL
for a whole parse: in a thread, a large Python buffer's check stalls the server's request loop for half a
second at a time (measured: 0.5 s gaps on a 0.2 MB file).  In a child process it costs the loop nothing, and
a check that has gone stale can be stopped: the child is killed and a fresh one started for the next
buffer.  The child never writes to the server's stdout (the LSP stream): its stdout is its stderr.

:class:`Worker` is the parent's handle, called from one thread at a time (the server's checking thread):
:meth:`Worker.call` sends a job and waits for its answer, :meth:`Worker.kill` (from any thread) stops the
job in flight, which then raises :class:`Stopped`.  The child is started with ``spawn`` (no fork of a
process that runs threads) and inherits ``PYTHONSAFEPATH=1`` from :mod:`kv4lint.files.isolation`, so that the
working directory's modules are never imported by it either.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import traceback

from kv4lint.cli.server import buffer
from kv4lint.settings.options import ConfigError, UsageError

# What a job asks for: (kind, path, text); kinds: "check" -> buffer.Judged, "fix-all" -> new text or None.
JOBS = {"check": buffer.judge_buffer, "fix-all": buffer.fix_all}


class Stopped(Exception):
    """The job's process was killed (the job went stale, or the server is shutting down) or died."""


class Failed:
    """A job's error, sent back: ``config`` (a bad configuration: a usage error's words) or ``internal``."""

    __slots__ = ("kind", "message")

    def __init__(self, kind: str, message: str):
        self.kind = kind
        self.message = message

    def __reduce__(self):
        return Failed, (self.kind, self.message)


def serve(conn, options: buffer.Options) -> None:
    """The child's loop: a job in, its answer out, until the parent closes the pipe."""
    os.dup2(2, 1)  # nothing may reach the LSP stream: stray output goes to the log (stderr)
    sys.stdout = sys.stderr
    buffer.remember_scans()
    while True:
        try:
            kind, path, text = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = JOBS[kind](path, text, options)
        except (ConfigError, UsageError) as e:
            answer = Failed("config", str(e))
        except Exception as e:  # noqa: BLE001 - a bug in kv4lint: reported, the process goes on
            answer = Failed("internal", f"{e!r}\n{traceback.format_exc()}")
        try:
            conn.send(answer)
        except Exception as e:  # noqa: BLE001 - an answer that cannot be sent (pickling) is a bug too
            conn.send(Failed("internal", f"{e!r}"))


class Worker:
    """The checking process, started on first use and again after it was killed."""

    def __init__(self, options: buffer.Options):
        self.options = options
        self._lock = threading.Lock()
        self._proc = None
        self._conn = None
        self.started = 0  # processes started: the tests count restarts

    def start(self) -> None:
        """Start the process now (the server's first check need not wait for the imports)."""
        with self._lock:
            self._ensure()

    def _ensure(self):
        if self._proc is None or not self._proc.is_alive():
            self._close()
            ctx = multiprocessing.get_context("spawn")
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=serve, args=(child, self.options), name="kv4lint-check", daemon=True)
            proc.start()
            child.close()
            self._proc, self._conn = proc, parent
            self.started += 1
        return self._conn

    def call(self, kind: str, path: str, text: str):
        """The job's answer (blocking); raises :class:`Stopped` when the process was killed meanwhile."""
        with self._lock:
            conn = self._ensure()
        try:
            conn.send((kind, path, text))
            return conn.recv()
        except (EOFError, OSError) as e:
            with self._lock:
                self._close()
            raise Stopped(str(e)) from None

    def kill(self) -> None:
        """Stop the job in flight (its :meth:`call` raises :class:`Stopped`); the next call starts a process."""
        with self._lock:
            proc = self._proc
        if proc is not None and proc.is_alive():
            proc.kill()

    def close(self) -> None:
        self.kill()
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            self._proc.join(timeout=5)
        self._proc = self._conn = None
