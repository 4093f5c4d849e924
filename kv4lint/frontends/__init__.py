"""Frontends: turn a file's text into Launch records.  They know nothing of rules.

This module is the frontend registry.  Each language's scanner is imported
lazily (libcst and tree-sitter are costly to import, and most files never
need them).  A frontend that meets another language inside its own text
(Python in a heredoc, shell in a Python string or a YAML key) asks here with
:func:`nested`; it never imports another frontend.
"""

from __future__ import annotations

import importlib

from kv4lint.base.file_error import FileError
from kv4lint.base.model import ScanResult
from kv4lint.base.process import gc_paused, imports_kept
from kv4lint.frontends import budget

# language -> "module:function"; every function is ``f(text: str, path: str) -> ScanResult``.
SCANNERS: dict[str, str] = {
    "python": "kv4lint.frontends.python:scan_python",
    "shell": "kv4lint.frontends.shell:scan_shell",
    "dockerfile": "kv4lint.frontends.dockerfile:scan_dockerfile",
    "yaml": "kv4lint.frontends.yaml:scan_yaml",
    "markdown": "kv4lint.frontends.markdown:scan_markdown",
    "notebook": "kv4lint.frontends.notebook:scan_notebook",
    "makefile": "kv4lint.frontends.makefile:scan_makefile",
    "json": "kv4lint.frontends.json_:scan_json",
    "systemd": "kv4lint.frontends.services:scan_systemd",
    "supervisord": "kv4lint.frontends.services:scan_supervisord",
    "procfile": "kv4lint.frontends.services:scan_procfile",
    "justfile": "kv4lint.frontends.services:scan_justfile",
    "tox": "kv4lint.frontends.services:scan_tox",
    "pyproject": "kv4lint.frontends.services:scan_pyproject",
}


# Nested languages: the readers one frontend hands another language's text to.
# Each takes keyword arguments for the embedding (``origin``: offsets in the outer file, ...).
NESTED: dict[str, str] = {
    "python": "kv4lint.frontends.python:scan_python",
    "shell": "kv4lint.frontends.shell:scan_shell",
    "shell words": "kv4lint.frontends.shell:split_words",  # shlex-like splitting with spans
    "yaml": "kv4lint.frontends.yaml:scan_yaml",  # a Kubernetes manifest written in JSON (JSON is YAML)
}

# What kv4lint.pipeline.sourced reads the settings of another file with (a Makefile's variables, a shell script's:
# ``f(text, path, nested)``); it scans a file again, with those settings, through SCANNERS.  Loaded when a file
# refers to another, not with the stage (most launches refer to none).
SETTINGS: dict[str, str] = {
    "makefile": "kv4lint.frontends.makefile:parse",
    "shell": "kv4lint.frontends.shell:shell_variables",
}

# language -> "module:function" placing a file offset in the file's own units: ``f(text, offset)`` -> (cell,
# line in the cell), or None.
CELLS: dict[str, str] = {
    "notebook": "kv4lint.frontends.notebook:cell_position",
}


def _load(target: str):
    mod, func = target.split(":")
    try:
        return getattr(importlib.import_module(mod), func)
    except AttributeError as e:
        raise ImportError(f"{target} not found") from e


def nested(kind: str):
    """The reader of a nested language (a key of :data:`NESTED`); raises ImportError when it cannot be loaded."""
    return _load(NESTED[kind])


def again(language: str):
    """The scanner of ``language`` (a key of :data:`SCANNERS`) for a scan with another file's settings
    (kv4lint.pipeline.sourced); raises ImportError when it cannot be loaded."""
    return _load(SCANNERS[language])


def settings_reader(language: str):
    """The reader of another file's settings (a key of :data:`SETTINGS`); raises ImportError as :func:`nested`."""
    return _load(SETTINGS[language])


def scanner(language: str):
    target = SCANNERS.get(language)
    if target is None:
        return None
    mod, func = target.split(":")
    try:
        with imports_kept():  # a frontend's first use: its module and what it imports live as long as the process
            return getattr(importlib.import_module(mod), func)
    except (ImportError, AttributeError):
        return None


def cell_position(language: str, text: str, offset: int) -> tuple[int, int] | None:
    """Where ``offset`` lies in a file made of cells (a notebook): (cell number, line in the cell); else None."""
    target = CELLS.get(language)
    if target is None:
        return None
    mod, func = target.split(":")
    return getattr(importlib.import_module(mod), func)(text, offset)


def scan(path: str, text: str, language: str) -> ScanResult:
    fn = scanner(language)
    if fn is None:
        return ScanResult(errors=[FileError(path, f"no scanner for {language} files in this installation")])
    with gc_paused(), budget.opened():  # the launch words of the file's blocks together (kv4lint.frontends.budget)
        return fn(text, path)
