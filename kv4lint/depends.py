"""The files a scan looks at besides the scanned file: ``--config`` files, a model's ``config.json``.

A cached result (:mod:`kv4lint.cache`) is reused only while every one of
them is unchanged, so whatever reads another file to judge a launch says so
with :func:`look`.  A leaf: the frontends and kv4lint.target both use it.
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
