"""Find the files to scan and their language.

Walks the given paths, honours ``.gitignore`` files and configured excludes,
picks files by extension, name (Dockerfile, Makefile) and shebang, and never
follows a symlink out of the tree it was given.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

_EXT = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".sh": "shell", ".bash": "shell", ".ksh": "shell", ".zsh": "shell", ".slurm": "shell", ".sbatch": "shell",
    ".yaml": "yaml", ".yml": "yaml",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "markdown",
    ".ipynb": "notebook",
    ".mk": "makefile",
    ".dockerfile": "dockerfile", ".containerfile": "dockerfile",
}
_NAMES = {"dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "makefile",
          "gnumakefile": "makefile"}
_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+(?:-S\s+)?)?(?:\S*/)?(\w+?)(?:[\d.]*)(?:\s|$)")
_SHELLS = {"sh", "bash", "dash", "ksh", "zsh"}

DEFAULT_EXCLUDES = [".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
                    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", "build", "dist"]


def language_of(path: str, head: bytes | None = None) -> str | None:
    """The language of a file from its name, or its first line (shebang)."""
    name = os.path.basename(path)
    low = name.lower()
    if low in _NAMES:
        return _NAMES[low]
    if low.startswith(("dockerfile.", "containerfile.")) or low.endswith((".dockerfile", ".containerfile")):
        return "dockerfile"
    ext = os.path.splitext(low)[1]
    if ext in _EXT:
        return _EXT[ext]
    if head is not None and head.startswith(b"#!"):
        m = _SHEBANG.match(head)
        if m:
            prog = m.group(1).decode("ascii", "replace")
            if prog in _SHELLS:
                return "shell"
            if prog.startswith(("python", "pypy")):
                return "python"
    return None


@dataclass
class Candidate:
    path: str  # as the user will see it (relative to cwd when given relatively)
    language: str | None  # None: decided from the shebang after reading


@dataclass
class Discovery:
    files: list[Candidate] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class _Ignore:
    """.gitignore files found on the way down, as pathspec matchers (lazily imported)."""

    def __init__(self):
        self.specs: list[tuple[str, object]] = []

    def load(self, directory: str) -> None:
        gi = os.path.join(directory, ".gitignore")
        try:
            with open(gi, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        import pathspec

        self.specs.append((directory, pathspec.PathSpec.from_lines("gitwildmatch", lines)))

    def ignored(self, path: str, is_dir: bool) -> bool:
        for base, spec in self.specs:
            rel = os.path.relpath(path, base)
            if rel.startswith(".."):
                continue
            if is_dir:
                rel += "/"
            if spec.match_file(rel):
                return True
        return False


def excluded(path: str, patterns: list[str]) -> bool:
    parts = Path(path).parts
    name = os.path.basename(path)
    for pat in patterns:
        p = pat.rstrip("/")
        if fnmatch(name, p) or fnmatch(path, p) or fnmatch(path, f"*/{p}") or fnmatch(path, f"{p}/*"):
            return True
        if "/" not in p and any(fnmatch(part, p) for part in parts):
            return True
    return False


def discover(paths: list[str], *, exclude: list[str] | None = None, respect_gitignore: bool = True,
             force_exclude: bool = False) -> Discovery:
    """Files under ``paths`` that kv4lint can scan.

    A path named explicitly is scanned whatever its name (unless
    ``force_exclude``, as pre-commit needs), when its language can be told.
    """
    excl = DEFAULT_EXCLUDES + list(exclude or [])
    out = Discovery()
    seen: set[tuple[int, int]] = set()
    for root in paths:
        try:
            st = os.stat(root)
        except OSError as e:
            out.errors.append((root, f"cannot read: {e.strerror or e}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(root, excl, respect_gitignore, out, seen)
        elif stat.S_ISREG(st.st_mode):
            if force_exclude and excluded(os.path.normpath(root), list(exclude or [])):
                continue
            out.files.append(Candidate(root, language_of(root)))
        else:
            out.skipped.append((root, "not a regular file"))
    return out


def _walk(root: str, excl: list[str], respect_gitignore: bool, out: Discovery, seen: set) -> None:
    real_root = os.path.realpath(root)
    ignore = _Ignore()
    stack = [root]
    seen_files: set[tuple[int, int]] = set()
    linked: list[tuple[str, str | None, tuple[int, int]]] = []  # symlinks to files in the tree: one path per file
    while stack:
        d = stack.pop()
        try:
            st = os.stat(d)
        except OSError as e:
            out.errors.append((d, f"cannot read directory: {e.strerror or e}"))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue
        seen.add(key)
        if respect_gitignore:
            ignore.load(d)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            out.errors.append((d, f"cannot read directory: {e.strerror or e}"))
            continue
        subdirs = []
        for e in entries:
            p = os.path.join(d, e.name) if d != "." else e.name
            if excluded(p, excl):
                continue
            try:
                if e.is_symlink():
                    target = os.path.realpath(p)
                    if not (target == real_root or target.startswith(real_root + os.sep)):
                        out.skipped.append((p, "symlink out of the tree"))
                        continue
                is_dir = e.is_dir()
                is_file = e.is_file()
            except OSError:
                continue
            if respect_gitignore and ignore.ignored(p, is_dir):
                continue
            if is_dir:
                subdirs.append(p)
            elif is_file:
                lang = language_of(p)
                if lang is None and "." in e.name:
                    continue  # extension says it is something else
                try:
                    fst = e.stat()
                except OSError as err:
                    out.errors.append((p, f"cannot read: {err.strerror or err}"))
                    continue
                key = (fst.st_dev, fst.st_ino)
                if e.is_symlink():
                    linked.append((p, lang, key))
                elif key not in seen_files:
                    seen_files.add(key)
                    out.files.append(Candidate(p, lang))
        stack.extend(reversed(subdirs))
    # A symlink to a file of the tree is that file: checked (and fixed) once, under its real name.
    for p, lang, key in linked:
        if key not in seen_files:
            seen_files.add(key)
            out.files.append(Candidate(p, lang))
