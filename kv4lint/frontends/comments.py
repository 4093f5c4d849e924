"""Where a text's comments are, for the suppression grammar (:func:`kv4lint.base.suppression.file_codes`).

A ``# kv4lint: disable-file`` line inside a string literal, a here-document or a
YAML value is data, not a comment: each reader tells which offsets start a
comment of its language.  This module holds the readers' shared tests; the
shell's comments come from its own syntax tree (kv4lint.frontends.shell.walk).
"""

from __future__ import annotations

import io
import tokenize
from typing import Callable


def python_comments(text: str) -> Callable[[int], bool]:
    """Whether a Python comment starts at an offset of ``text`` (its tokens: not a line of a string).

    Text the tokenizer cannot read (not Python) keeps the plain reading: a line that starts with ``#``.
    """
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    found: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found.add(starts[tok.start[0] - 1] + tok.start[1])
    except (tokenize.TokenError, SyntaxError, IndentationError, IndexError):
        return lambda offset: text.startswith("#", offset)
    return found.__contains__


def outside(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """True at an offset that lies in none of ``spans`` (the string values, the code blocks of a text).

    Called for the few lines that look like a directive only: a scan of the spans each time is enough.
    """
    return lambda offset: not any(s <= offset < e for s, e in spans)
