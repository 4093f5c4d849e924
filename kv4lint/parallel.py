"""Lint many files: in this process for little work, with a process pool for much.

Most files of a repository cost only their read and the pre-filter (tens of
microseconds), so a pool pays only on large trees or when many files must be
parsed.  The rules here, measured with ``bench/run.py``:

- up to ``SEQUENTIAL_BELOW`` files, or with ``jobs=1``: this process, no pool;
- otherwise a pool of ``jobs`` workers (default: the CPUs this process may
  use), started with ``fork`` where the platform has it (the workers inherit
  the imported modules and the settings instead of importing and unpickling
  them), fed strided chunks of files (``files[k::n]``) so that a directory full
  of launches is spread over every worker, and returning only what is not
  empty: a file without a launch comes back as its language, not as a report;
- a broken pool (a worker killed) finishes the remaining files in this process.

Reports come back in the order of ``files``.  Each file may have its own settings (the
nearest configuration above it): the workers receive the few distinct settings once and each
file the index of its own.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from kv4lint import internal_error
from kv4lint.model import FileReport
from kv4lint.read import lint_file
from kv4lint.settings import Settings

SEQUENTIAL_BELOW = 256  # files; below this a pool costs more than it saves (fork + IPC ~ 30-60 ms)
CHUNKS_PER_JOB = 8  # more chunks balance uneven files; fewer cost less IPC
MAX_CHUNK = 512

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


def _one(path: str, language: str | None, settings: Settings) -> FileReport:
    internal_error.current_file = path
    try:
        return lint_file(path, settings, language)
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
    out: list[tuple[int, object]] = []
    for i, path, language, k in items:
        rep = _one(path, language, _settings[k] if _settings else Settings())
        if is_empty(rep):
            out.append((i, rep.language))
        else:
            if not rep.findings:
                rep.text = None  # only the fix engine reads it, and only where there are findings
            out.append((i, rep))
    return out


def _context():
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def lint_many(files: list[tuple[str, str | None]], settings: Settings | Sequence[Settings], *, jobs: int = 0,
              progress=None) -> list[FileReport]:
    """Lint ``files`` (path, language or None) and return one report per file, in order.

    ``settings``: one for every file, or a sequence with each file's own.  ``jobs``: worker
    processes (0: :func:`default_jobs`).  ``progress``: called with the number of files
    finished, as they finish.
    """
    announce_scan_started()
    per_file = [settings] * len(files) if isinstance(settings, Settings) else list(settings)
    if len(per_file) != len(files):
        raise ValueError("lint_many: one settings per file")
    jobs = jobs if jobs and jobs > 0 else default_jobs()
    jobs = min(jobs, max(1, len(files) // 32))  # no idle workers on small inputs
    if jobs <= 1 or len(files) < SEQUENTIAL_BELOW:
        out = []
        for (path, language), s in zip(files, per_file):
            out.append(_one(path, language, s))
            if progress is not None:
                progress(1)
        return out
    return _pool(files, per_file, jobs, progress)


def _pool(files, per_file: list[Settings], jobs, progress) -> list[FileReport]:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    n_chunks = max(jobs * CHUNKS_PER_JOB, -(-len(files) // MAX_CHUNK))
    palette: dict[int, int] = {}  # id(settings) -> its index among the distinct ones
    distinct: list[Settings] = []
    for s in per_file:
        if id(s) not in palette:
            palette[id(s)] = len(distinct)
            distinct.append(s)
    indexed = [(i, p, lang, palette[id(per_file[i])]) for i, (p, lang) in enumerate(files)]
    chunks = [indexed[k::n_chunks] for k in range(n_chunks)]
    chunks = [c for c in chunks if c]
    results: list[object] = [None] * len(files)
    done = [False] * len(files)

    def take(part):
        for i, r in part:
            results[i] = r
            done[i] = True
        if progress is not None:
            progress(len(part))

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_init, initargs=(tuple(distinct),))
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
    reports: list[FileReport] = []
    for i, (path, language) in enumerate(files):
        r = results[i]
        if not done[i]:
            r = _one(path, language, per_file[i])
            if progress is not None:
                progress(1)
        elif not isinstance(r, FileReport):
            r = FileReport(path, r)
        reports.append(r)
    return reports
