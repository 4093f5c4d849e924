"""Frontends: turn a file's text into Launch records.  They know nothing of rules.

Each language's scanner is imported lazily (libcst and tree-sitter are costly
to import, and most files never need them).
"""

from __future__ import annotations

import importlib

from kv4lint.model import FileError, ScanResult

# language -> "module:function"; every function is ``f(text: str, path: str) -> ScanResult``.
SCANNERS: dict[str, str] = {
    "python": "kv4lint.frontends.python:scan_python",
    "shell": "kv4lint.frontends.shell:scan_shell",
    "dockerfile": "kv4lint.frontends.dockerfile:scan_dockerfile",
    "yaml": "kv4lint.frontends.yaml:scan_yaml",
    "markdown": "kv4lint.frontends.markdown:scan_markdown",
    "notebook": "kv4lint.frontends.notebook:scan_notebook",
    "makefile": "kv4lint.frontends.makefile:scan_makefile",
}


def scanner(language: str):
    target = SCANNERS.get(language)
    if target is None:
        return None
    mod, func = target.split(":")
    try:
        return getattr(importlib.import_module(mod), func)
    except (ImportError, AttributeError):
        return None


def scan(path: str, text: str, language: str) -> ScanResult:
    fn = scanner(language)
    if fn is None:
        return ScanResult(errors=[FileError(path, f"no scanner for {language} files in this installation")])
    return fn(text, path)
