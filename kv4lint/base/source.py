"""Reading a file's text faithfully, and mapping offsets to lines and columns.

Used by every stage that touches text: the frontends (positions, embedded
languages), the reporters (line/column) and the fix engine (writing back with
the same encoding, BOM and line endings).  Every candidate of a run is decoded here before any parse, so the
positions' records (:class:`~kv4lint.base.model.Position`, :class:`~kv4lint.base.model.Span`: the rich model, with
dataclasses) load when the first LineIndex or OffsetMap is made, not with this module.
"""

from __future__ import annotations

import bisect
import codecs
import re

from kv4lint.base.record import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from kv4lint.base.model import Position, Span

# kv4lint.base.model's Position and Span, bound when the first LineIndex or OffsetMap is made (module docstring).
_Position = _Span = None


def _bind_model() -> None:
    global _Position, _Span
    from kv4lint.base.model import Position, Span

    _Position, _Span = Position, Span


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class DecodeError(Exception):
    """The file's bytes are not text in the encoding it declares (or UTF-8)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class Text(Frozen):
    """A decoded file: its text and how to turn the text back into the same bytes."""

    __slots__ = ("text", "encoding", "bom")

    def __init__(self, text: str, encoding: str = "utf-8", bom: bytes = b""):
        self._set("text", text)
        self._set("encoding", encoding)
        self._set("bom", bom)

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding)


def _python_cookie(data: bytes) -> str | None:
    for line in data.split(b"\n", 2)[:2]:
        m = _COOKIE.match(line)
        if m:
            return m.group(1).decode("ascii", "replace")
        if line.strip() and not line.lstrip().startswith(b"#"):
            break
    return None


_SAMPLE = 4096  # bytes looked at to tell UTF-16 or UTF-32 without a byte order mark


def wide_encoding(data: bytes) -> str | None:
    """The UTF-32 or UTF-16 encoding of text written without a byte order mark, told by where its NUL bytes
    are, else None.

    Text in these encodings is mostly characters below U+0100 (scripts, configuration: ASCII), whose other
    bytes are NUL: in UTF-16-LE every odd byte, in UTF-16-BE every even one, in UTF-32 three of four.  Read
    as UTF-8 such text decodes (NUL is valid UTF-8) to characters separated by NULs, in which no option or
    command can be found: a silent pass (issue 34).  An encoding is named when, in the first 4 KB, at least
    half the bytes at its NUL positions are NUL and almost none elsewhere (binary data has NULs anywhere)."""
    sample = data[:_SAMPLE]
    if len(sample) < 2 or b"\0" not in sample:
        return None

    def nul_share(start: int, step: int) -> float:
        lane = sample[start::step]
        return lane.count(0) / len(lane) if lane else 0.0

    if len(sample) >= 4:
        for enc, zeros, text in (("utf-32-le", (1, 2, 3), 0), ("utf-32-be", (0, 1, 2), 3)):
            if all(nul_share(z, 4) >= 0.5 for z in zeros) and nul_share(text, 4) < 0.1:
                return enc
    for enc, zero, text in (("utf-16-le", 1, 0), ("utf-16-be", 0, 1)):
        if nul_share(zero, 2) >= 0.5 and nul_share(text, 2) < 0.1:
            return enc
    return None


def decode(data: bytes, *, python: bool = False) -> Text:
    """Decode a file's bytes: BOM first, then UTF-16/32 without one (:func:`wide_encoding`), then (for Python)
    a PEP 263 cookie, else UTF-8.

    Raises :class:`DecodeError` naming the line of the first bad byte.
    Line endings are kept as they are (no universal-newline translation), so
    offsets and the written-back file match the original byte for byte.
    """
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"),
                     (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                     (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return _decode(data, len(bom), enc, data[: len(bom)])
    wide = wide_encoding(data)
    if wide is not None:
        try:
            return _decode(data, 0, wide, b"")
        except DecodeError as e:
            raise DecodeError(f"{e} (its NUL bytes say {wide.upper()} without a byte order mark)", e.line) from None
    enc = "utf-8"
    if python:
        cookie = _python_cookie(data)
        if cookie:
            try:
                enc = codecs.lookup(cookie).name
            except LookupError:
                raise DecodeError(f"unknown encoding {cookie!r} in coding declaration", 1) from None
    return _decode(data, 0, enc, b"")


def _decode(data: bytes, skip: int, enc: str, bom: bytes) -> Text:
    try:
        return Text(data[skip:].decode(enc), enc, bom)
    except UnicodeDecodeError as e:
        line = data[: skip + e.start].count(b"\n") + 1
        raise DecodeError(f"cannot decode as {enc}: byte {data[skip + e.start]:#04x} at offset {skip + e.start}",
                          line) from None


class LineIndex:
    """Character offset <-> 1-based (line, column) for one text.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as editors count them).
    """

    def __init__(self, text: str):
        if _Position is None:
            _bind_model()
        self.text = text
        starts = [0]
        i, n = 0, len(text)
        find = text.find
        # Fast path: only \n endings.
        if "\r" not in text:
            while True:
                i = find("\n", i)
                if i < 0:
                    break
                i += 1
                starts.append(i)
        else:
            for m in re.finditer(r"\r\n|\r|\n", text):
                starts.append(m.end())
        self.starts = starts
        self.length = n

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, self.length))
        line = bisect.bisect_right(self.starts, offset) - 1
        return _Position(line + 1, offset - self.starts[line] + 1)

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset`` (:meth:`position`'s, without making the Position)."""
        return bisect.bisect_right(self.starts, max(0, min(offset, self.length)))

    def offset(self, line: int, column: int) -> int:
        """Offset of 1-based ``line`` and 1-based ``column``."""
        line = max(1, min(line, len(self.starts)))
        return min(self.starts[line - 1] + column - 1, self.length)

    def line_text(self, line: int) -> str:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else self.length
        return self.text[start:end].rstrip("\r\n")


class OffsetMap:
    """Maps offsets in an embedded text (a shell string inside a Python literal,
    a YAML block scalar, a Markdown fence) to offsets in the file.

    ``outer[i]`` is the file offset of the embedded text's character ``i`` when it is written there verbatim,
    one character for one, and ``None`` when it is not (an escape such as ``\\u0034``, ``''`` in YAML, ``$$``
    in a Makefile: its raw text is longer than the character); ``outer[len(text)]`` is the file offset just
    past the last character, never ``None``.  A span maps to a file span only when its characters are written
    verbatim and contiguously in the file (no escapes, no folding in between); otherwise :meth:`span` returns
    ``None`` and the value is reported but not edited (issue 34: an edit replaces exactly the raw text).
    """

    __slots__ = ("_outer", "_parts")

    def __init__(self, outer: Sequence[int | None]):
        if _Span is None:
            _bind_model()
        self._outer = outer
        self._parts: list | None = None

    @classmethod
    def of_parts(cls, parts: list) -> "OffsetMap":
        """A map made of ``parts`` (ranges and lists, one after another), made into one list only when it is
        read: a container format builds a map for each of its blocks and reads few of them, and a list of one
        int per character costs about 36 bytes a character (a 10 MB Dockerfile: 0.9 GB, issue 34)."""
        m = cls(())
        m._outer, m._parts = None, parts
        return m

    @property
    def outer(self) -> Sequence[int | None]:
        if self._outer is None:
            out: list[int | None] = []
            for part in self._parts:
                out.extend(part)
            self._outer, self._parts = out, None
        return self._outer

    @classmethod
    def contiguous(cls, start: int, length: int) -> "OffsetMap":
        return cls(list(range(start, start + length + 1)))

    @classmethod
    def concat(cls, parts: list[tuple[int, int]]) -> "OffsetMap":
        """From ``(file_start, length)`` pieces written verbatim one after another."""
        outer: list[int | None] = []
        for start, length in parts:
            outer.extend(range(start, start + length))
        last = parts[-1] if parts else (0, 0)
        outer.append(last[0] + last[1])
        return cls(outer)

    def at(self, i: int | None) -> int | None:
        """The file offset of character ``i`` when it is written verbatim, else ``None`` (for building maps)."""
        if i is None:
            return None
        return self.outer[max(0, min(i, len(self.outer) - 1))]

    def offset(self, i: int) -> int:
        """A file offset to report character ``i`` at: where it is written, or for a character that is not
        written verbatim, just after the verbatim character before it."""
        outer = self.outer
        i = max(0, min(i, len(outer) - 1))
        o = outer[i]
        if o is not None:
            return o
        for j in range(i - 1, -1, -1):
            if outer[j] is not None:
                return outer[j] + 1
        return next((o for o in outer[i:] if o is not None), 0)

    def span(self, span: Span) -> Span | None:
        outer = self.outer
        s, e = span.start, span.end
        if e >= len(outer) or s < 0:
            return None
        first = outer[s]
        if first is None:
            return None
        if e == s:
            return _Span(first, first)
        for k in range(s + 1, e):
            if outer[k] != first + (k - s):
                return None
        return _Span(first, first + (e - s))

    def anchor(self, span: Span) -> Span:
        """A best-effort file span for reporting (even when not editable)."""
        mapped = self.span(span)
        if mapped is not None:
            return mapped
        a = self.offset(span.start)
        b = self.offset(max(span.start, span.end - 1)) + 1
        return _Span(a, max(a, b))

    def compose(self, inner: "OffsetMap") -> "OffsetMap":
        """``inner`` maps a text embedded in *our* embedded text; return a map to the file."""
        mine, last = self.outer, len(self.outer) - 1
        outer = [None if i is None else mine[max(0, min(i, last))] for i in inner.outer]
        if outer and outer[-1] is None:
            outer[-1] = self.offset(inner.outer[-1] or 0)
        return OffsetMap(outer)
