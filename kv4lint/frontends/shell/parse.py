"""Reading a shell text: the tree-sitter-bash parse and the positions of its characters.

:func:`parse_bash` parses bytes (tree-sitter is imported on first use);
:class:`ShellText` is one text being walked (the file, or a string inside it)
with the file offset of every character; :class:`Chars` is expanded text
that keeps, per character, where it was written and what variable it came
through.
"""

from __future__ import annotations

import re
from array import array

from kv4lint.base.model import Span
from kv4lint.base.source import LineIndex

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


# tree-sitter keeps about 60 bytes a byte of a shell text of short commands (570 MB for 10 MB): a long text is
# parsed a piece at a time, each piece's tree dropped once its statements are walked.
PIECE = 1 << 20


def parse_pieces(src: "ShellText"):
    """The statements of ``src`` as (text, root, statements), one piece after another.

    A text up to :data:`PIECE` bytes is one piece (:func:`parse_shell`, with its repairs; ``root`` is the tree's
    root). A longer one is parsed a range at a time (tree-sitter's included ranges: every offset stays the
    file's), cut at the end of a line; a range that parses without an error yields its statements but the last
    (``root`` None; the last may go on past the range: a continued line, a here-document), and the next range
    starts at that one. A range with an error (the cut inside a statement, or a syntax error) is parsed again
    twice as long, up to the end of the text, whose piece is yielded whole with its root (its syntax error is
    reported)."""
    data = src.data
    n = len(data)
    if n <= PIECE:
        src, tree = parse_shell(src)
        yield src, tree.root_node, tree.root_node.named_children
        return
    import tree_sitter

    safe = data if data.isascii() else _TS_HAZARD.sub(_ts_safe, data)
    parser = tree_sitter.Parser(_parser().language)
    start, size = 0, PIECE
    while start < n:
        end = n if start + size >= n else _line_end(data, start, start + size)
        if end <= start:
            size *= 2
            continue
        parser.included_ranges = [tree_sitter.Range(_point(data, start), _point(data, end), start, end)]
        root = parser.parse(safe).root_node
        kids = root.named_children
        if end == n:
            yield src, root, kids
            return
        if root.has_error or len(kids) < 2:  # cut inside a statement (or an error): a longer range
            size *= 2
            continue
        yield src, None, kids[:-1]  # the last may go on past the range (a here-document, a continued line)
        start, size = kids[-1].start_byte, PIECE


def _line_end(data: bytes, start: int, stop: int) -> int:
    """Just after the last newline in ``data[start:stop]`` that does not end a continued line (0: none)."""
    end = data.rfind(b"\n", start, stop)
    while end > start and data[end - 1] == 0x5C:  # "\\"
        end = data.rfind(b"\n", start, end - 1)
    return end + 1


def _point(data: bytes, offset: int):
    import tree_sitter

    line_start = data.rfind(b"\n", 0, offset) + 1
    return tree_sitter.Point(data.count(b"\n", 0, offset), offset - line_start)


# ===========================================================================
# Text, positions, provenance


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _byte_map(text: str) -> "array[int]":
    """For UTF-8 byte offset ``b``, the character index it falls in (runs of ASCII in one step; 4 bytes an
    entry, not an int object)."""
    out = array("I")
    at = 0
    for m in _NON_ASCII.finditer(text):
        a, b = m.span()
        out.extend(range(at, a))
        for i in range(a, b):
            o = ord(text[i])
            out.extend([i] * (2 if o < 0x800 else 3 if o < 0x10000 else 4))
        at = b
    out.extend(range(at, len(text)))
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
        m = self._b2c
        if m is None:
            return b
        try:
            return m[b]
        except IndexError:
            return m[-1]

    def ns(self, node) -> tuple[int, int]:
        m = self._b2c
        if m is None:
            return node.start_byte, node.end_byte
        try:
            return m[node.start_byte], m[node.end_byte]  # (:meth:`c` inline: asked for most nodes of a script)
        except IndexError:
            return self.c(node.start_byte), self.c(node.end_byte)

    def spans(self, nodes) -> list[tuple[int, int]]:
        """:meth:`ns` of each of ``nodes`` (a command's children: most words of a script)."""
        if self._b2c is None:
            return [(k.start_byte, k.end_byte) for k in nodes]
        c = self.c
        return [(c(k.start_byte), c(k.end_byte)) for k in nodes]

    def nt(self, node) -> str:
        m = self._b2c
        if m is None:  # (most texts: ASCII, a byte its own character; asked for most nodes of a script)
            return self.text[node.start_byte:node.end_byte]
        s, e = self.ns(node)
        return self.text[s:e]

    def fspan(self, s: int, e: int) -> Span | None:
        """The file span of ``text[s:e]`` when written verbatim and contiguously."""
        if self.pos is None:
            return Span(s, e)
        first = self.pos[s]
        if first is None or (e - s > 1 and self.pos[s:e] != list(range(first, first + e - s))):
            return None
        return Span(first, first + (e - s))

    def removal(self, kids, spans: list[tuple[int, int]], i: int, sep: re.Pattern) -> Span | None:
        """The file span that deletes ``kids[i]`` (one of a command's or an array's children) with its separator
        (``sep``) from a neighbour; ``spans``: each kid's :meth:`ns`."""
        text = self.text
        s, e = spans[i]
        # the separator before it (from a word before; after the next word's, from anything before); " ": most are
        if i:
            pe = spans[i - 1][1]
            gap = text[pe:s]
            before = gap == " " or sep.fullmatch(gap) is not None
            if before and kids[i - 1].is_named:
                return self.fspan(pe, e)
        else:
            pe, before = s, False
        if i + 1 < len(kids) and kids[i + 1].is_named:
            ns_ = spans[i + 1][0]
            gap = text[e:ns_]
            if gap == " " or sep.fullmatch(gap):
                return self.fspan(s, ns_)
        return self.fspan(pe if before else s, e)

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
            a, b = min(known), max(known) + 1
            # An escape of the outer format at either end (``$$`` in a Makefile, ``\u0034`` in JSON): its raw
            # text lies between the verbatim neighbours.
            if self.pos[s] is None and s > 0 and self.pos[s - 1] is not None and self.pos[s - 1] < a:
                a = self.pos[s - 1] + 1
            if self.pos[e - 1] is None and e < len(self.pos) and self.pos[e] is not None and self.pos[e] > b:
                b = self.pos[e]
            return Span(a, b)
        return self.fallback

    def chars(self, s: int, e: int) -> "Chars":
        if e <= s:
            return Chars()
        res = None if self.res is None else self.res[s:e]
        if self.pos is None:
            return Chars(self.text[s:e], None, res, s)
        return Chars(self.text[s:e], self.pos[s:e], res)

    def line(self, offset: int) -> int:
        """The 1-based line of ``offset`` (:meth:`LineIndex.line`: no Position made)."""
        lines = self._lines
        if lines is None:
            lines = self._lines = LineIndex(self.text)
        return lines.line(offset)

    def line_text(self, line: int) -> str:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.line_text(line)

    def line_start(self, line: int) -> int:
        """The offset of the first character of 1-based ``line``."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.offset(line, 1)


class Chars:
    """A string with, for each character, its file offset and provenance.

    ``pos[i]`` is the file offset of character ``i`` (``None``: not written verbatim), ``res[i]`` its provenance
    (``None``: written here, through no variable).  Most words of a script are its own characters, one after
    another: such a run is kept as its first offset (``at``) and its provenance as ``None`` (none at all), and
    the per-character lists are made only when read (``pos``, ``res``); a slice or concatenation of runs stays
    a run.  No Chars is changed once made."""

    __slots__ = ("text", "_pos", "_res", "at")

    def __init__(self, text: str = "", pos: list | None = None, res: list | None = None, at: int | None = None):
        self.text = text
        self._pos = pos  # None: ``at`` onwards (a run), or no offsets (``at`` None)
        self._res = res  # None: no provenance
        self.at = at if pos is None and text else None

    @property
    def pos(self) -> list:
        p = self._pos
        if p is None:
            at, n = self.at, len(self.text)
            p = self._pos = [None] * n if at is None else list(range(at, at + n))
        return p

    @property
    def res(self) -> list:
        r = self._res
        if r is None:
            r = self._res = [None] * len(self.text)
        return r

    def plain(self) -> bool:
        """No character came through a variable (every ``res`` is None)."""
        r = self._res
        return r is None or r.count(None) == len(r)

    def with_res(self, res: list) -> "Chars":
        """These characters at their offsets, with provenance ``res``."""
        return Chars(self.text, self._pos, res, self.at)

    def __add__(self, other: "Chars") -> "Chars":
        if not other.text:
            return self
        if not self.text:
            return other
        res = None if self._res is None and other._res is None else self.res + other.res
        if self.at is not None and other.at == self.at + len(self.text):
            return Chars(self.text + other.text, None, res, self.at)
        return Chars(self.text + other.text, self.pos + other.pos, res)

    def __getitem__(self, sl: slice) -> "Chars":
        res = None if self._res is None else self._res[sl]
        if self.at is not None and sl.step is None:
            start = sl.indices(len(self.text))[0]
            return Chars(self.text[sl], None, res, self.at + start)
        return Chars(self.text[sl], self.pos[sl], res)

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:  # for debugging
        return f"Chars({self.text!r})"

    def span(self) -> Span | None:
        if self.at is not None:
            return Span(self.at, self.at + len(self.text))
        return contiguous_span(self.pos)


class CharsBuilder:
    """Builds a Chars from pieces without quadratic copying (runs that follow each other stay one run)."""

    __slots__ = ("text", "n", "at", "pos", "res")

    def __init__(self):
        self.text: list[str] = []
        self.n = 0  # characters so far
        self.at: int | None = None  # the first offset while they are one run (``pos`` None)
        self.pos: list | None = None
        self.res: list | None = None  # None: no provenance so far

    def add(self, c: "Chars") -> None:
        t = c.text
        if not t:
            return
        self.text.append(t)
        n = self.n
        pos = self.pos
        if pos is not None:
            pos.extend(c.pos)
        elif c.at is not None and (n == 0 or c.at == self.at + n):
            if n == 0:
                self.at = c.at
        else:
            self.pos = list(range(self.at, self.at + n)) if n else []  # (n: a run so far)
            self.pos.extend(c.pos)
        if self.res is not None:
            self.res.extend(c.res)
        elif c._res is not None:
            self.res = [None] * n
            self.res.extend(c._res)
        self.n = n + len(t)

    def build(self) -> "Chars":
        return Chars("".join(self.text), self.pos, self.res, self.at)

    @staticmethod
    def concat(pieces: list["Chars"]) -> "Chars":
        b = CharsBuilder()
        for c in pieces:
            b.add(c)
        return b.build()


def contiguous_span(pos: list) -> Span | None:
    if not pos or pos[0] is None:
        return None
    first = pos[0]
    if len(pos) > 1 and pos != list(range(first, first + len(pos))):
        return None
    return Span(first, first + len(pos))


# ===========================================================================
# Valid bash that tree-sitter-bash 0.25 cannot parse
#
# Each repair below is tried only when the parse has an error, and kept only
# when the repaired text parses further (so a text without these shapes is
# never touched).  Masks change bytes the parser sees, never the text kv4lint
# reads, and keep every offset; the one rearrangement (a here-document
# redirection before its command) moves characters together with their file
# offsets (``ShellText.pos``), so spans still point at what the user wrote.

# ``cmd \`` + newline + `` `# note` --x y \`` : a comment in backquotes
# expands to nothing (bash -n accepts it; tree-sitter lets the comment
# swallow the closing backquote).
_BACKQUOTE_COMMENT = re.compile(r"(?:(?<=[ \t\n])|^)`#[^`\n]*`(?=[ \t\n;\\]|$)", re.M)

# ``${VAR:+(text: $VAR)}``: the word of an expansion with an operator.
_EXPANSION_OP = re.compile(r"\$\{[#!]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(?:\[[^\]\n]*\])?(?::?[-+=?])")

# ``$((d[(i * (n + 1) + j)] + 1))``: parentheses in an array subscript (av/harbor's ``harbor.sh``); masked as
# blanks, the subscript's text kept.
_SUBSCRIPT_PARENS = re.compile(r"(?<=[A-Za-z0-9_])\[(?=[^\]\n]*\()([^\]\n$`]*)\]")

# ``${key:$offset}``: a substring whose offset is a variable (``${key:$n:2}``); its ``$`` masked as a blank
# (``${key: n}``, which tree-sitter reads).
_SUBSTRING_VAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:(\$)(?=[A-Za-z_])")

# ``<<EOT bash`` (Docker's ``RUN <<EOT bash``): redirections may come before
# the command; tree-sitter only knows them after it.
_HEREDOC_FIRST = re.compile(
    r"^(?P<ws>[ \t]*)(?P<redir>(?:[0-9]*<<-?[ \t]*(?:'[A-Za-z_][A-Za-z0-9_]*'|\"[A-Za-z_][A-Za-z0-9_]*\"|"
    r"\\?[A-Za-z_][A-Za-z0-9_]*)[ \t]*)+)(?P<cmd>[^\s|&;<>()#`\\][^\n|&;<>()`\\]*?)?[ \t]*$", re.M)


def _mask_expansion_parens(text: str, out: list[str]) -> None:
    """``(`` / ``)`` in the word of ``${VAR op word}`` become ``.`` (not ``$(...)`` ones)."""
    for m in _EXPANSION_OP.finditer(text):
        i = m.end()
        depth = 1
        subst = []  # for each open paren: True when it belongs to $( or $((
        while i < len(text) and depth:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "$" and text.startswith("${", i):
                depth += 1
                i += 2
                continue
            if c == "}":
                depth -= 1
            elif c == "(":
                is_subst = i > 0 and text[i - 1] == "$"
                subst.append(is_subst)
                if not is_subst:
                    out[i] = "."
            elif c == ")":
                if subst and subst.pop():
                    pass
                else:
                    out[i] = "."
            elif c == "\n" and depth == 1 and not subst:
                pass
            i += 1


def _masked(text: str) -> str | None:
    out = list(text)
    for m in _BACKQUOTE_COMMENT.finditer(text):
        out[m.start():m.end()] = " " * (m.end() - m.start())
    if "${" in text:
        _mask_expansion_parens(text, out)
        for m in _SUBSTRING_VAR.finditer(text):
            out[m.start(1)] = " "
    if "[" in text and "(" in text:
        for m in _SUBSCRIPT_PARENS.finditer(text):
            for i in range(m.start(1), m.end(1)):
                if text[i] in "()":
                    out[i] = " "
    tail = text.rstrip(" \t\r\n")
    if tail.endswith("\\") and (len(tail) - len(tail.rstrip("\\"))) % 2 == 1:
        out[len(tail) - 1] = " "  # a ``\`` at the end (a fence ends after a continued line)
    masked = "".join(out)
    return None if masked == text else masked


def _heredoc_first(src: ShellText) -> ShellText | None:
    """``<<EOT cmd args`` rewritten as ``cmd args <<EOT`` (a bare ``<<EOT`` as ``:<<EOT``), offsets kept."""
    text = src.text
    if "<<" not in text:
        return None
    pos = list(range(len(text) + 1)) if src.pos is None else list(src.pos)
    res = src.res
    new_text: list[str] = []
    new_pos: list = []
    new_res: list | None = [] if res is not None else None
    last = 0

    def take(s: int, e: int) -> None:
        new_text.append(text[s:e])
        new_pos.extend(pos[s:e])
        if new_res is not None:
            new_res.extend(res[s:e])

    changed = False
    for m in _HEREDOC_FIRST.finditer(text):
        redir_s, redir_e = m.span("redir")
        core_e = redir_s + len(m.group("redir").rstrip(" \t"))
        take(last, redir_s)
        if m.group("cmd"):
            cmd_s, cmd_e = m.span("cmd")
            take(cmd_s, cmd_e)
            take(core_e, cmd_s)  # the blanks between, then the redirection
            take(redir_s, core_e)
            last = cmd_e
        else:
            new_text.append(":")
            new_pos.append(None)
            if new_res is not None:
                new_res.append(None)
            take(redir_s, redir_e)
            last = redir_e
        changed = True
    if not changed:
        return None
    take(last, len(text))
    new_pos.append(pos[len(text)] if len(pos) > len(text) else None)
    return ShellText("".join(new_text), new_pos, new_res, src.fallback)


def _error_start(root) -> int:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing or n.type == "ERROR":
            return n.start_byte
        if n.has_error:
            stack.extend(reversed(n.children))
    return 1 << 62


def parse_shell(src: ShellText) -> tuple[ShellText, object]:
    """The tree of ``src``, and the text it is a tree of.

    That is ``src`` itself, unless ``src`` does not parse and a repair of the
    valid shapes tree-sitter-bash cannot read (above) parses further.
    """
    tree = parse_bash(src.data)
    if not tree.root_node.has_error:
        return src, tree
    best_src, best_tree, best_at = src, tree, _error_start(tree.root_node)
    moved = _heredoc_first(src) or src
    masked = _masked(moved.text)
    if moved is src and masked is None:
        return src, tree
    data = masked.encode("utf-8", "surrogatepass") if masked is not None else moved.data
    t2 = parse_bash(data)
    at = _error_start(t2.root_node) if t2.root_node.has_error else 1 << 63
    if at > best_at:
        best_src, best_tree = moved, t2
    return best_src, best_tree
