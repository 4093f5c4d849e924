"""A deliberately tiny scanner, for testing the fix engine apart from the real frontends.

It knows one shape (and honours ``# kv4lint: disable=...`` comment lines right above
the command's line, as the shell frontend does): ``python -m sglang.launch_server`` followed by
whitespace-separated words (``\\``-newline continues the command), each with
its span and a ``remove`` span (the word and the blanks or continuation before
it).  ``--config FILE`` reads ``key: value`` lines of FILE as config arguments
(spans in FILE), as a container frontend would.  An odd number of ``"`` in the
file is reported as a syntax error, and so is text matching :data:`BREAK_ON`, so
tests can make a fix "break" a file.

Tests install it with :func:`install` (monkeypatching the scanner lookup).
"""

from __future__ import annotations

import os
import re

from kv4lint import frontends
from kv4lint.base.file_error import FileError
from kv4lint.base.model import Launch, ScanResult, Span, Value

_ENTRY = re.compile(r"python3? -m sglang\.launch_server")
BREAK_ON: str | None = None  # a regex: text matching it gets a syntax error (tests monkeypatch it)
SHARED: set[str] = set()  # words to mark as shared (their fixes are unsafe); tests monkeypatch it
_WORD = re.compile(r"(?:[ \t]|\\\r?\n)*([^\s\\]+)")


def scan(text: str, path: str) -> ScanResult:
    out = ScanResult()
    if text.count('"') % 2:
        out.errors.append(FileError(path, "unterminated quote", text[: text.index('"')].count("\n") + 1))
    if BREAK_ON and re.search(BREAK_ON, text):
        out.errors.append(FileError(path, "syntax error near the fixed text", 1))
    for m in _ENTRY.finditer(text):
        pos = m.end()
        argv: list[Value] = []
        while True:
            w = _WORD.match(text, pos)
            if not w or w.start(1) == w.end(1):
                break
            argv.append(Value(w.group(1), Span(w.start(1), w.end(1)), remove=Span(w.start(), w.end()),
                              shared=w.group(1) in SHARED))
            pos = w.end()
        launch = Launch(path, "argv", "sglang.launch_server", Span(m.start(), pos), Span(m.start(), m.end()),
                        argv=argv, language="shell", disabled=_disabled_above(text, m.start()))
        for i, v in enumerate(argv[:-1]):
            if v.text == "--config":
                cfg = argv[i + 1].text
                cpath = cfg if os.path.isabs(cfg) else os.path.join(os.path.dirname(path), cfg)
                try:
                    ctext = open(cpath, encoding="utf-8", newline="").read()
                except OSError:
                    continue
                launch.config_path = cpath
                for cm in re.finditer(r"^([\w-]+):[ \t]*(\S+)[ \t]*\r?$", ctext, re.M):
                    launch.config_argv.append(Value("--" + cm.group(1), Span(cm.start(1), cm.end(1)),
                                                    remove=Span(cm.start(), cm.end())))
                    launch.config_argv.append(Value(cm.group(2), Span(cm.start(2), cm.end(2)),
                                                    remove=Span(cm.end(), cm.end())))
        out.launches.append(launch)
    return out


def _disabled_above(text: str, offset: int) -> frozenset[str]:
    """Codes of ``# kv4lint: disable=...`` in the comment lines right above the line holding ``offset``."""
    lines = text[: text.rfind("\n", 0, offset) + 1].splitlines()
    out: set[str] = set()
    for line in reversed(lines):
        t = line.strip()
        if not t.startswith("#"):
            break
        m = re.search(r"#\s*kv4lint:\s*disable(?:=([\w,]+))?\s*$", t)
        if m:
            out |= set(m.group(1).upper().split(",")) if m.group(1) else {"ALL"}
    return frozenset(out)


def install(monkeypatch, languages=("shell",)) -> None:
    real = frontends.scanner

    def scanner(language):
        return scan if language in languages else real(language)

    monkeypatch.setattr(frontends, "scanner", scanner)
