"""The files a file's report reads besides the file: ``--config`` files, a model's ``config.json``, the files
settings are sourced from (``source env.sh``, ``env_file:``, a Makefile's ``include``, a sibling module).

A cached report (:class:`kv4lint.pipeline.cache.FileIndex`) is reused only while every one of them is unchanged, so
whatever reads or tests another file while a file is judged says so with :func:`look` (kv4lint.pipeline.launch_configs,
kv4lint.pipeline.sourced, kv4lint.target).  A leaf: it imports nothing of kv4lint.
"""

from __future__ import annotations

import contextlib
import os

_looked_at: list[str] | None = None


@contextlib.contextmanager
def recording():
    """Collect the paths looked at inside the ``with`` block (nested blocks also give them to the outer one)."""
    global _looked_at
    outer, _looked_at = _looked_at, []
    try:
        yield _looked_at
    finally:
        if outer is not None:
            outer.extend(_looked_at)
        _looked_at = outer


def look(path: str) -> str:
    """Record ``path`` (whether it exists or not: one that appears later changes the result too)."""
    if _looked_at is not None:
        _looked_at.append(os.path.abspath(path))
    return path


def looked_again(paths) -> None:
    """Record ``paths`` that a :func:`recording` gave (absolute already): what a memo read before, read again."""
    if _looked_at is not None:
        _looked_at.extend(paths)
