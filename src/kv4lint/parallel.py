"""Lint many files: sequentially for a few, with a process pool for many."""

from __future__ import annotations

import os

from kv4lint.runner import FileReport, lint_file
from kv4lint.settings import Settings

SEQUENTIAL_BELOW = 64  # files; below this a pool costs more than it saves


def _one(item):
    path, language, settings = item
    try:
        return lint_file(path, settings, language)
    except Exception as e:  # never let one file stop the run
        from kv4lint.model import FileError

        rep = FileReport(path, language)
        rep.errors.append(FileError(path, f"internal error ({type(e).__name__}: {e})"))
        return rep


def lint_many(files: list[tuple[str, str | None]], settings: Settings, *, jobs: int = 0) -> list[FileReport]:
    jobs = jobs or os.cpu_count() or 1
    items = [(p, lang, settings) for p, lang in files]
    if jobs <= 1 or len(items) < SEQUENTIAL_BELOW:
        return [_one(i) for i in items]
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(8, len(items) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_one, items, chunksize=chunk))
