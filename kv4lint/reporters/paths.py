"""Paths in reports: relative to a root, with forward slashes."""

from __future__ import annotations

import os

from kv4lint.files.ignore import repository_root as top


def relative(path: str, root: str | None) -> str | None:
    """``path`` relative to ``root`` with ``/`` separators; ``None`` when it lies outside ``root``
    (or is not a file path, such as ``<argv>``)."""
    if not path or path.startswith("<"):
        return None
    base = os.path.abspath(root or os.getcwd())
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, base)
    except ValueError:  # another drive
        return None
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def repository_root(root: str | None) -> str:
    """The top of the git repository holding ``root`` (where GitHub resolves paths), else ``root`` itself."""
    base = os.path.abspath(root or os.getcwd())
    return top(base) or base
