"""Reading a shell text: the tree-sitter-bash parse and the positions of its characters.

:func:`parse_bash` parses bytes (tree-sitter is imported on first use);
:class:`ShellText` is one text being walked (the file, or a string inside it)
with the file offset of every character; :class:`Chars` is expanded text
that keeps, per character, where it was written and what variable it came
through.
"""

from __future__ import annotations

import re

from kv4lint.model import Span
from kv4lint.source import LineIndex

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


# tree-sitter-bash 0.25's external scanner tests the character after ``{``
# (and after ``{1``, ``{1..``) with the C library's ``isdigit``, which reads
# outside its table for a non-ASCII code point: a segmentation fault for
# some inputs (``echo {`` + U+F0000), depending on the memory layout.  Such a
# character is handed to the parser as ASCII of the same UTF-8 length
# (spaces for whitespace, else ``x``), so every byte offset stays the same;
# the text kv4lint reads is always its own, not the parser's.
_TS_HAZARD = re.compile(rb"(?<=[{.0-9])[\xc0-\xff][\x80-\xbf]*")


def _ts_safe(m: re.Match) -> bytes:
    raw = m.group()
    return (b" " if raw.decode("utf-8", "surrogatepass").isspace() else b"x") * len(raw)


def parse_bash(data: bytes):
    """The tree-sitter tree of ``data`` (see ``_TS_HAZARD``)."""
    if not data.isascii():
        data = _TS_HAZARD.sub(_ts_safe, data)
    return _parser().parse(data)


# ===========================================================================
# Text, positions, provenance


def _byte_map(text: str) -> list[int]:
    """For UTF-8 byte offset ``b``, the character index it falls in."""
    out: list[int] = []
    for i, ch in enumerate(text):
        o = ord(ch)
        n = 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        out.extend([i] * n)
    out.append(len(text))
    return out


class ShellText:
    """One shell text being walked: the file itself, or a string inside it.

    ``pos[i]`` is the file offset of character ``i`` (``None``: not written
    verbatim); ``pos`` is ``None`` for the file itself (identity).  ``res[i]``
    is the provenance of character ``i`` when this text was itself produced by
    expanding variables (a ``bash -c "... $X ..."`` string).
    """

    __slots__ = ("text", "data", "pos", "res", "fallback", "_b2c", "_lines")

    def __init__(self, text: str, pos: list | None = None, res: list | None = None, fallback: Span | None = None):
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self._b2c = None if len(self.data) == len(text) else _byte_map(text)
        if pos is not None and len(pos) < len(text) + 1:
            pos = list(pos) + [None] * (len(text) + 1 - len(pos))
        self.pos = pos
        self.res = res
        self.fallback = fallback or Span(0, 0)
        self._lines: LineIndex | None = None

    # -- offsets
    def c(self, b: int) -> int:
        return b if self._b2c is None else self._b2c[min(b, len(self._b2c) - 1)]

    def ns(self, node) -> tuple[int, int]:
        return self.c(node.start_byte), self.c(node.end_byte)

    def nt(self, node) -> str:
        s, e = self.ns(node)
        return self.text[s:e]

    def fspan(self, s: int, e: int) -> Span | None:
        """The file span of ``text[s:e]`` when written verbatim and contiguously."""
        if self.pos is None:
            return Span(s, e)
        first = self.pos[s]
        if first is None:
            return None
        for k in range(s + 1, e):
            if self.pos[k] != first + (k - s):
                return None
        return Span(first, first + (e - s))

    def fanchor(self, s: int, e: int) -> Span:
        """A file span to report ``text[s:e]`` at, even when not verbatim."""
        sp = self.fspan(s, e)
        if sp is not None:
            return sp
        e = max(e, s + 1)
        if self.res is not None:  # prefer what is written here over text that came through variables
            local = [p for p, r in zip(self.pos[s:e], self.res[s:e]) if p is not None and r is None]
            if local:
                return Span(min(local), max(local) + 1)
        known = [p for p in self.pos[s:e] if p is not None]
        if known:
            return Span(min(known), max(known) + 1)
        return self.fallback

    def chars(self, s: int, e: int) -> "Chars":
        if e <= s:
            return Chars()
        pos = list(range(s, e)) if self.pos is None else self.pos[s:e]
        res = [None] * (e - s) if self.res is None else self.res[s:e]
        return Chars(self.text[s:e], pos, res)

    def line(self, offset: int) -> int:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.position(offset).line

    def line_text(self, line: int) -> str:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.line_text(line)


class Chars:
    """A string with, for each character, its file offset and provenance."""

    __slots__ = ("text", "pos", "res")

    def __init__(self, text: str = "", pos: list | None = None, res: list | None = None):
        self.text = text
        self.pos = pos if pos is not None else [None] * len(text)
        self.res = res if res is not None else [None] * len(text)

    def __add__(self, other: "Chars") -> "Chars":
        return Chars(self.text + other.text, self.pos + other.pos, self.res + other.res)

    def __getitem__(self, sl: slice) -> "Chars":
        return Chars(self.text[sl], self.pos[sl], self.res[sl])

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:  # for debugging
        return f"Chars({self.text!r})"

    def span(self) -> Span | None:
        return contiguous_span(self.pos)


class CharsBuilder:
    """Builds a Chars from pieces without quadratic copying."""

    __slots__ = ("text", "pos", "res")

    def __init__(self):
        self.text: list[str] = []
        self.pos: list = []
        self.res: list = []

    def add(self, c: "Chars") -> None:
        self.text.append(c.text)
        self.pos.extend(c.pos)
        self.res.extend(c.res)

    def build(self) -> "Chars":
        return Chars("".join(self.text), self.pos, self.res)


def contiguous_span(pos: list) -> Span | None:
    if not pos or pos[0] is None:
        return None
    first = pos[0]
    for k, p in enumerate(pos):
        if p != first + k:
            return None
    return Span(first, first + len(pos))
