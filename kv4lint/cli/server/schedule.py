"""When the language server judges a buffer: never for work that is already stale.

- a change is judged :data:`DEBOUNCE` seconds after the last one (typing makes one check, not one a key);
  opening and saving a buffer are judged at once, and so is a buffer a request is waiting for;
- one check at a time, in the checking process (:class:`kv4lint.cli.server.worker.Worker`); a check is taken
  from the buffer's text when it starts, so a buffer edited while it waits is judged once, as it is then;
- a check whose buffer changed (or closed) while it ran is dropped; one that has run :data:`STALE_KILL`
  seconds by then is stopped (its process killed, a fresh one started for the next check): a 2 MB script's
  stale check does not hold up the next for seconds;
- requests never wait on the loop: :meth:`Checks.settled` is awaited by a request that needs the buffer's
  current judgement (code actions, pull diagnostics); the loop answers everything else meanwhile.

The checking process's answers arrive in a thread (one per job, a daemon: a job never holds up the
server's exit) and are handed to the loop.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

from kv4lint.cli.server.buffer import Judged
from kv4lint.cli.server.worker import Failed, Stopped, Worker

DEBOUNCE = 0.25  # seconds after the last change before a buffer is judged
STALE_KILL = 1.0  # a stale check that has run this long is stopped (a fresh process costs about 0.5 s)


class Outcome:
    """The judgement of one version of a buffer: ``judged``, or ``failed`` (a Failed or a Stopped)."""

    __slots__ = ("version", "judged", "failed")

    def __init__(self, version: int | None, judged: Judged | None = None, failed: Any = None):
        self.version = version
        self.judged = judged
        self.failed = failed


class _Job:
    __slots__ = ("uri", "version", "generation", "started", "kill_at")

    def __init__(self, uri: str, version: int | None, generation: int, started: float):
        self.uri = uri
        self.version = version
        self.generation = generation
        self.started = started
        self.kill_at: asyncio.TimerHandle | None = None


class Checks:
    """The buffers waiting to be judged and the one being judged.

    ``source(uri)``: the buffer's (path, version, text) now, or None when it is closed or is no file;
    ``judged(uri, outcome)``: called on the loop with each current outcome (never a stale one).
    """

    def __init__(self, worker: Worker, source: Callable[[str], tuple[str, int | None, str] | None],
                 judged: Callable[[str, Outcome], None]):
        self.worker = worker
        self.source = source
        self.on_judged = judged
        self.due: dict[str, float] = {}  # uri -> when to judge it (loop time)
        self.outcomes: dict[str, Outcome] = {}  # uri -> its latest current outcome
        self.generation: dict[str, int] = {}  # uri -> how often its judgement was invalidated (configuration)
        self.running: _Job | None = None
        self.calls: list[tuple[str, str, asyncio.Future]] = []  # (kind, uri, answer): other jobs (fix-all)
        self.waiters: dict[str, list[asyncio.Future]] = {}
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self.stopped = 0  # stale checks stopped: the tests read it

    # -- asking ----------------------------------------------------------------------------------------

    def touch(self, uri: str, delay: float = 0.0) -> None:
        """Judge ``uri`` ``delay`` seconds from now (a later change moves it later: the debounce); its check
        in flight, if any, is stale if it was for another version."""
        loop = asyncio.get_running_loop()
        at = loop.time() + delay
        self.due[uri] = at if delay else min(self.due.get(uri, at), at)
        self._stale(uri)
        self._kick()

    def forget(self, uri: str) -> None:
        """The buffer closed: nothing more to judge, its check in flight is stale, its waiters answered."""
        self.due.pop(uri, None)
        self.outcomes.pop(uri, None)
        self._stale(uri)
        self._wake_waiters(uri)

    def invalidate(self, uri: str) -> None:
        """Its judgement no longer holds (a configuration changed): judge it again now."""
        self.outcomes.pop(uri, None)
        self.generation[uri] = self.generation.get(uri, 0) + 1
        self.touch(uri)

    async def settled(self, uri: str) -> Outcome | None:
        """The outcome of the buffer's current version (judged now if it waits), or None once it is closed."""
        loop = asyncio.get_running_loop()
        while True:
            src = self.source(uri)
            if src is None:
                return None
            out = self.outcomes.get(uri)
            if out is not None and out.version == src[1]:
                return out
            if uri in self.due:
                self.due[uri] = min(self.due[uri], loop.time())  # a request waits: no debounce
            elif self.running is None or self.running.uri != uri:
                self.touch(uri)
            self._kick()
            fut = loop.create_future()
            self.waiters.setdefault(uri, []).append(fut)
            await fut

    def current(self, uri: str) -> Outcome | None:
        """The outcome of the buffer's current version if there is one already (no waiting: a hover)."""
        src = self.source(uri)
        out = self.outcomes.get(uri)
        return out if src is not None and out is not None and out.version == src[1] else None

    async def call(self, kind: str, uri: str) -> tuple[int | None, Any]:
        """Run the job ``kind`` on the buffer as it is now, before any waiting check: (its version, answer)."""
        fut = asyncio.get_running_loop().create_future()
        self.calls.append((kind, uri, fut))
        self._kick()
        return await fut

    # -- running ---------------------------------------------------------------------------------------

    def close(self) -> None:
        """Shutting down: stop the check in flight and the checking process."""
        if self._task is not None:
            self._task.cancel()
        self.worker.close()

    def _kick(self) -> None:
        if self._task is None:  # the first buffer: the loop that judges them starts
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())
        assert self._wake is not None
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wake is not None
        while True:
            if self.calls:
                kind, uri, fut = self.calls.pop(0)
                src = self.source(uri)
                if src is None:
                    fut.set_result((None, None))
                    continue
                try:
                    answer = await self._job(kind, uri, src)
                except Stopped as e:
                    answer = e
                if not fut.done():
                    fut.set_result((src[1], answer))
                continue
            now = loop.time()
            uri = min(self.due, key=self.due.__getitem__, default=None)
            if uri is None or self.due[uri] > now:
                self._wake.clear()
                timeout = None if uri is None else self.due[uri] - now
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except asyncio.TimeoutError:
                    pass
                continue
            del self.due[uri]
            src = self.source(uri)
            if src is None:
                continue
            generation = self.generation.get(uri, 0)
            try:
                answer = await self._job("check", uri, src)
            except Stopped as e:
                answer = e
            if self._is_stale(uri, src[1], generation):  # the buffer changed or closed meanwhile
                self._wake_waiters(uri)
                continue
            out = Outcome(src[1], answer if isinstance(answer, Judged) else None,
                          None if isinstance(answer, Judged) else answer)
            self.outcomes[uri] = out
            self.on_judged(uri, out)
            self._wake_waiters(uri)

    async def _job(self, kind: str, uri: str, src: tuple[str, int | None, str]) -> Any:
        loop = asyncio.get_running_loop()
        path, version, text = src
        job = self.running = _Job(uri, version, self.generation.get(uri, 0), loop.time())
        fut = loop.create_future()

        def work() -> None:
            try:
                result: Any = self.worker.call(kind, path, text)
            except Stopped as e:
                result = e
            except Exception as e:  # noqa: BLE001 - handed to the loop as a failure
                result = Failed("internal", repr(e))
            loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(result))

        threading.Thread(target=work, name="kv4lint-check-wait", daemon=True).start()
        try:
            result = await fut
        finally:
            if job.kill_at is not None:
                job.kill_at.cancel()
            self.running = None
        if isinstance(result, Stopped):
            raise result
        return result

    def _is_stale(self, uri: str, version: int | None, generation: int) -> bool:
        src = self.source(uri)
        return src is None or src[1] != version or self.generation.get(uri, 0) != generation

    def _stale(self, uri: str) -> None:
        """The check in flight for ``uri``, if stale: stopped now if it has run long, else when it has."""
        job = self.running
        if job is None or job.uri != uri or job.kill_at is not None or \
                not self._is_stale(uri, job.version, job.generation):
            return
        loop = asyncio.get_running_loop()
        left = STALE_KILL - (loop.time() - job.started)

        def kill() -> None:
            if self.running is job:
                self.stopped += 1
                self.worker.kill()

        if left <= 0:
            kill()
        else:
            job.kill_at = loop.call_later(left, kill)

    def _wake_waiters(self, uri: str) -> None:
        for fut in self.waiters.pop(uri, []):
            if not fut.done():
                fut.set_result(None)
