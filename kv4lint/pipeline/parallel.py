"""Lint many files: in this process for little work, with worker processes for much.

Most files of a repository cost only their read and the pre-filter (tens of
microseconds), so workers pay only on large trees or when many files must be
parsed.  The rules here, measured with ``bench/run.py``:

- up to ``SEQUENTIAL_BELOW`` files, or with ``jobs=1``: this process alone;
- otherwise, where the platform has ``fork`` (Linux), ``jobs - 1`` forked
  children and this process share the work (:func:`_forked`): they inherit the
  imported modules, the files and their settings, so nothing is sent to them
  but chunk numbers; the files are dealt in strided chunks (``files[k::n]``,
  so that a directory full of launches is spread), taken one at a time from
  a pipe, so that a process that meets a slow file takes fewer chunks.  The
  Python files and the others are dealt apart (:func:`_dealt`): the children
  start with the Python files, the parent with the others, so that a
  language's parser (Markdown's, YAML's, the shell's; the Python frontend's
  and ``ast``) is mostly loaded by one process, not by each, and the children
  meet early the Python files that need libcst.  A
  child sends back only what is not empty: a file without a launch comes
  back as its language, not as a report.  A file that needs libcst, which
  the child has not imported, goes back to the parent to be linted there
  (:data:`PARENT_ONLY`): its import costs more than most files' whole scan,
  and every process would pay it.  So, up to :data:`HAND_BACK` files, does a
  file that needs the stages past the pre-filter and the Python screen (the
  runner, the frontends, their parsers: :data:`PARENT_FIRST`), while the child
  has not loaded them: on a tree like SGLang's own sources, whose Python files
  the screen rules out, a child never loads them.  It goes back at once, not with the end
  of the child's chunk, and the parent looks for such files every few
  milliseconds (:data:`LOOK_S`) between its own files: the import, the
  longest piece of work of a run, starts as soon as a file needs it, while
  the children go on with the other chunks.  No ``multiprocessing`` import
  (25 ms) and no idle parent;
- elsewhere, a ``concurrent.futures`` process pool of ``jobs`` workers
  (:func:`_executor`), fed the same chunks;
- a worker that dies (killed, out of memory) loses nothing: the chunks it did
  not report are done in this process.

Reports come back in the order of ``files``.  Each file may have its own settings (the
nearest configuration above it).
"""

from __future__ import annotations

import os
import select
import sys
import time

from kv4lint.base import internal_error, process
from kv4lint.base.file_report import FileReport
from kv4lint.base.settings import Settings
from kv4lint.pipeline.read import lint_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SEQUENTIAL_BELOW = 256  # files; below this a pool costs more than it saves (fork + IPC ~ 30-60 ms)
CHUNKS_PER_JOB = 8  # more chunks balance uneven files; fewer cost less IPC
# Files a chunk holds at most: when the chunks run out, the processes end within about one chunk of each other
# (a few ms of plain files).  Chunks of 512 (340 on SGLang's sources, 30 ms each) left the parent, which also
# carries the files handed back to it, working long after the child was done (issue 37).
MAX_CHUNK = 64
LOOK_S = 0.005  # how often the parent, busy with a chunk, looks for files a child handed back (seconds)

_settings: tuple[Settings, ...] = ()  # the worker's settings, by index (set by _init)


def default_jobs() -> int:
    """The CPUs this process may run on (the affinity mask, e.g. a CI container's share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Test harnesses only: when this environment variable holds the number of an open file descriptor (a pipe the
# harness made), kv4lint writes one line to it as the scan of the files begins.  Unset in every normal run.
READY_FD_ENV = "KV4LINT_TEST_READY_FD"


def announce_scan_started() -> None:
    """Tell a test harness that the scan has begun (see ``READY_FD_ENV``): the Ctrl-C tests wait for this line
    instead of guessing from outside when kv4lint is busy."""
    fd = os.environ.get(READY_FD_ENV)
    if fd:
        try:
            os.write(int(fd), b"scanning\n")
        except (OSError, ValueError):
            pass


# The parsers a forked child leaves to its parent: a child that needs one for a file hands the file back instead
# of importing it (libcst's import costs more than most files' whole scan, and every process would pay it).
PARENT_ONLY = ("libcst",)
# The stages past the pre-filter and the Python screen (kv4lint.pipeline.read): a child that has not loaded them
# (about 20 ms, and a parser's import more: Markdown's 30 ms) hands the file that needs them to its parent, which
# loads them for its own files of the other languages; after HAND_BACK such files it loads them itself, so that a
# tree with many launches outside Python is still shared (a handed back file costs the parent its whole scan).
PARENT_FIRST = "kv4lint.pipeline.runner"
HAND_BACK = 8
_DEFERRED = ("deferred",)  # the payload of a file handed back to the parent


class _Deferred(BaseException):
    """Raised by a child's import of a :data:`PARENT_ONLY` parser (or :data:`PARENT_FIRST`): the file goes back to
    the parent.  A ``BaseException``, so that no ``except Exception`` (nor ``except ImportError``) on the way keeps
    it."""


class _ParentOnly:
    """A forked child's import hook that refuses the :data:`PARENT_ONLY` parsers with :class:`_Deferred`, and
    :data:`PARENT_FIRST` the first ``hand_back`` times.  Asked only for a module not loaded yet: one loaded before
    the fork, the child has too."""

    def __init__(self, hand_back: int):
        self.hand_back = hand_back

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in PARENT_ONLY and top not in sys.modules:  # a parser loaded before the fork: a module of it, later
            raise _Deferred(name)
        if name == PARENT_FIRST and self.hand_back > 0:
            self.hand_back -= 1
            raise _Deferred(name)
        return None


def _one(path: str, language: str | None, settings: Settings, walked=None) -> FileReport:
    internal_error.current_file = path
    try:
        return lint_file(path, settings, language, walked)
    except Exception as e:  # never let one file stop the run; a bug is not a finding (exit 2)
        rep = FileReport(path, language)
        rep.errors.append(internal_error.file_error(path, e))
        return rep
    finally:
        internal_error.current_file = None


def is_empty(rep: FileReport) -> bool:
    """Nothing to report: no finding, error or launch (a worker sends back only the language)."""
    return (rep.scanned and not rep.findings and not rep.errors and not rep.launches and not rep.targets)


def _init(settings: tuple[Settings, ...]) -> None:
    global _settings
    _settings = settings


def _chunk(items: list[tuple[int, str, str | None, int]]) -> list[tuple[int, object]]:
    """Worker: lint a chunk; an empty report comes back as its language only (cheap to pickle)."""
    return [(i, _payload(_one(path, language, _settings[k] if _settings else Settings())))
            for i, path, language, k in items]


def _payload(rep: FileReport) -> object:
    """What a worker sends back for ``rep``: its language when it is empty, else the report without its text
    (only the fix engine reads it, and only where there are findings)."""
    if is_empty(rep):
        return rep.language
    if not rep.findings:
        rep.text = None
    return rep


def _context():
    import multiprocessing

    return multiprocessing.get_context()


def lint_many(files: list[tuple[str, str | None]], settings: Settings | Sequence[Settings], *, jobs: int = 0,
              progress=None) -> list[FileReport]:
    """Lint ``files`` (path, language or None[, the walk's ``stat`` of the file]) and return one report per file,
    in order.

    ``settings``: one for every file, or a sequence with each file's own.  ``jobs``: processes
    (0: :func:`default_jobs`).  ``progress``: called with the number of files finished, as they finish.
    """
    announce_scan_started()
    per_file = [settings] * len(files) if isinstance(settings, Settings) else list(settings)
    if len(per_file) != len(files):
        raise ValueError("lint_many: one settings per file")
    jobs = jobs if jobs and jobs > 0 else default_jobs()
    jobs = min(jobs, max(1, len(files) // 32))  # no idle workers on small inputs
    if jobs <= 1 or len(files) < SEQUENTIAL_BELOW:
        out = []
        for f, s in zip(files, per_file):
            out.append(_one(f[0], f[1], s, _walked(f)))
            if progress is not None:
                progress(1)
        return out
    return _pool(files, per_file, jobs, progress)


def _walked(f: tuple):
    """The walk's ``stat`` of a file of :func:`lint_many`, where it has one (it stands for the ``stat`` before the
    open: :func:`kv4lint.files.regular_file.open_regular`)."""
    return f[2] if len(f) > 2 else None


def _dealt(files, jobs: int, most: int) -> tuple[list[list[int]], int]:
    """The chunks of ``files`` (indices), the Python files' first, and how many of them there are: each group in
    at most ``most`` strided chunks of its own (:func:`_chunks`)."""
    python = [i for i, f in enumerate(files) if f[1] == "python"]
    others = [i for i, f in enumerate(files) if f[1] != "python"]
    chunks = [[python[j] for j in c] for c in _chunks(len(python), jobs, most)]
    n_python = len(chunks)
    return chunks + [[others[j] for j in c] for c in _chunks(len(others), jobs, most)], n_python


def _chunks(n_files: int, jobs: int, most: int | None = None) -> list[range]:
    """Strided chunks of ``range(n_files)``: a directory of launches is spread over every process.  At most
    ``most`` of them: past that, a chunk holds more than ``MAX_CHUNK`` files."""
    n = min(n_files, max(jobs * CHUNKS_PER_JOB, -(-n_files // MAX_CHUNK)))
    if most is not None:
        n = min(n, most)
    return [range(k, n_files, n) for k in range(n)]


def _holds(fd: int) -> int:
    """How many chunk numbers (4 bytes each) the pipe ``fd`` takes before a write to it blocks: they are all
    written before a child reads one, and a write that blocks there would never end.  Linux says the pipe's size
    (64 KiB; one page where the user's pipes exceed their quota)."""
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) // 4
    except (AttributeError, OSError):
        return 4096 // 4  # one page: the least a pipe holds


def _pool(files, per_file: list[Settings], jobs, progress) -> list[FileReport]:
    results: list[object] = [None] * len(files)
    done = [False] * len(files)

    def take(part) -> None:
        for i, r in part:
            results[i] = r
            done[i] = True
        if progress is not None:
            progress(len(part))

    if _can_fork():
        _forked(files, per_file, jobs, take)
    else:
        _executor(files, per_file, jobs, take)
    reports: list[FileReport] = []
    for i, f in enumerate(files):
        path, language = f[0], f[1]
        r = results[i]
        if not done[i]:  # a worker died with it
            r = _one(path, language, per_file[i], _walked(f))
            if progress is not None:
                progress(1)
        elif not isinstance(r, FileReport):
            r = FileReport(path, r)
        reports.append(r)
    return reports


def _can_fork() -> bool:
    """``fork`` is safe here: Linux (macOS has it, but its system libraries may not survive it)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def _forked(files, per_file: list[Settings], jobs: int, take) -> None:
    """Lint ``files`` in this process and ``jobs - 1`` forked children; ``take`` gets each chunk's
    ``[(index, payload)]`` as it is finished.  Chunks a child took and did not report are left undone."""
    import pickle
    import signal

    # The chunk numbers, all written before the children start, in two pipes: the Python files' and the others'
    # (as many chunks as each pipe holds at most).  Each process reads the next number of its first pipe, then of
    # the other (a read of a pipe takes its bytes for one reader), and an empty pipe with no writer ends the work.
    pipes = [os.pipe(), os.pipe()]
    chunks, n_python = _dealt(files, jobs, min(_holds(w) for _, w in pipes))
    queues = []
    for (tasks_r, tasks_w), group in zip(pipes, (range(n_python), range(n_python, len(chunks)))):
        queues.append(tasks_r)
        os.write(tasks_w, b"".join(k.to_bytes(4, "big") for k in group))
        os.close(tasks_w)
    order = queues[::-1]  # this process: the other languages first; a child: Python first

    def next_chunk() -> int | None:
        for tasks in order:
            b = os.read(tasks, 4)
            if len(b) == 4:
                return int.from_bytes(b, "big")
        return None

    def payload(i: int) -> object:
        try:
            return _payload(_one(files[i][0], files[i][1], per_file[i], _walked(files[i])))
        except _Deferred:  # a child met a file for the parent's parsers
            return _DEFERRED

    deferred: list[int] = []

    def collect(part: list[tuple[int, object]]) -> None:
        """``take`` what is done; keep what a child handed back, for this process (which may import anything)."""
        mine = [x for x in part if x[1] != _DEFERRED]
        deferred.extend(i for i, r in part if r == _DEFERRED)
        if mine:
            take(mine)

    def run_deferred() -> None:
        while deferred:
            i = deferred.pop(0)
            take([(i, payload(i))])

    children: dict[int, int] = {}  # pid -> the read end of its results pipe
    buffers: dict[int, bytearray] = {}

    def look() -> None:
        """What the children finished meanwhile; the files they handed back, done now: the first of them starts
        its parser's import while the children go on with the other chunks."""
        for fd in children.values():
            _drain(fd, buffers[fd], collect)
        run_deferred()

    if process.own:  # what this process holds now (its modules, the files found) lives as long as the run:
        import gc  # neither process's collector walks it again, nor copies its pages (copy-on-write) to do so

        gc.freeze()
    try:
        for _ in range(jobs - 1):
            r, w = os.pipe()
            try:
                pid = os.fork()
            except OSError:  # no more processes for this user: the ones started (and this one) do the work
                os.close(r)
                os.close(w)
                break
            if pid == 0:  # the child: chunks until none is left, each sent back as it is done
                code = 0
                try:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent reports it
                    sys.meta_path.insert(0, _ParentOnly(HAND_BACK))  # a parser not loaded yet is the parent's to load
                    os.close(r)
                    for fd in children.values():
                        os.close(fd)

                    def send(part: list[tuple[int, object]], w=w) -> None:
                        data = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
                        _write_all(w, len(data).to_bytes(8, "big") + data)

                    order[:] = queues
                    while (k := next_chunk()) is not None:
                        _child_chunk(chunks[k], payload, send)
                except BaseException:  # noqa: BLE001 - the parent does what is not reported
                    code = 1
                finally:
                    try:
                        process.store_kept()  # the patterns this child compiled, for the next run
                    finally:
                        os._exit(code)
            os.close(w)
            os.set_blocking(r, False)
            children[pid] = r
            buffers[r] = bytearray()
        next_look = time.monotonic() + LOOK_S
        while (k := next_chunk()) is not None:
            part = []
            for i in chunks[k]:
                part.append((i, payload(i)))
                if children and time.monotonic() >= next_look:  # a file handed back: before this chunk's rest
                    look()
                    next_look = time.monotonic() + LOOK_S
            take(part)
            look()  # before the next chunk: the children take more of them meanwhile
        waiting = select.poll()  # the children's last chunks; what they hand back is done as it comes
        for fd in children.values():
            waiting.register(fd, select.POLLIN)
        left = len(children)
        while left:
            for fd, _event in waiting.poll():
                if _drain(fd, buffers[fd], collect):  # closed: that child is done
                    waiting.unregister(fd)
                    left -= 1
            run_deferred()
    finally:
        for tasks in queues:
            os.close(tasks)
        for pid, fd in children.items():
            try:
                os.kill(pid, signal.SIGKILL)  # finished already, or interrupted: never left behind
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _drain(fd: int, buf: bytearray, take) -> bool:
    """Read what a child has sent on ``fd`` (non-blocking) and hand each whole message to ``take``.  True when
    the child closed it: nothing more will come."""
    import pickle

    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            data = None
        if data:
            buf += data
        while len(buf) >= 8 and len(buf) >= 8 + int.from_bytes(buf[:8], "big"):
            n = int.from_bytes(buf[:8], "big")
            take(pickle.loads(buf[8:8 + n]))
            del buf[:8 + n]
        if not data:  # nothing more now (or ever: a closed pipe reads b"")
            return data == b""


def _child_chunk(chunk, payload, send) -> None:
    """A forked child's chunk: each file's payload, sent when the chunk is done, and at once with every file
    handed back to the parent, so that the parent starts on it (and on its parser's import) while this chunk
    goes on."""
    part: list[tuple[int, object]] = []
    for i in chunk:
        p = payload(i)
        part.append((i, p))
        if p is _DEFERRED:
            send(part)
            part = []
    if part:
        send(part)


def _executor(files, per_file: list[Settings], jobs: int, take) -> None:
    """Lint ``files`` in a ``concurrent.futures`` pool (platforms without ``fork``): the workers get the
    few distinct settings once and each file the index of its own."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    palette: dict[int, int] = {}  # id(settings) -> its index among the distinct ones
    distinct: list[Settings] = []
    for s in per_file:
        if id(s) not in palette:
            palette[id(s)] = len(distinct)
            distinct.append(s)
    chunks = [[(i, files[i][0], files[i][1], palette[id(per_file[i])]) for i in c]
              for c in _chunks(len(files), jobs)]
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_init,
                               initargs=(tuple(distinct),))
    try:
        pending = {pool.submit(_chunk, c) for c in chunks}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                take(fut.result())
    except BrokenProcessPool:
        pass  # a worker died (killed, out of memory): the rest is done here
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
