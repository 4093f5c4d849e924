"""Shell frontend: find SGLang launches in shell scripts and shell strings.

The script is parsed with tree-sitter-bash (error tolerant, with an offset for
every word) and then *walked the way bash would run it*, in three parts:

* the **word evaluator** (:class:`_Expander`) turns a word node into the argv
  tokens bash would produce: quotes, escapes, ``$VAR``/``${VAR:-default}``,
  arrays, word splitting of unquoted expansions.  Every character carries the
  file offset it was written at (``None`` when it is synthesised, e.g. an
  escape) and, when it came through a variable, where that variable was used;
  that gives each :class:`~kv4lint.model.Value` its ``span`` and ``use``;
* the **wrappers** (``env``, ``nohup``, ``srun``, ``docker run IMAGE``, ...)
  are stripped by :func:`kv4lint.sglang.commands.unwrap`, shared with every
  reader, which also says what they tell of the target (images,
  ``--device``, env vars) and hands shell strings (``bash -c``), Python
  code (``python -c``, ``python -`` fed by a heredoc) back to be scanned;
* the **walker** (:class:`_Walker`) runs statements in order, keeping the
  variables each assignment sets (branches merged: what differs is unknown),
  and the **launch builder** turns a matched command into a
  :class:`~kv4lint.model.Launch`.

Nothing is guessed: a value that depends on the environment, a command
substitution or a branch not known statically is ``Value.unknown()``.
tree-sitter is imported only when a text may hold a launch.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from kv4lint.frontends.hints import PLATFORM_ENV, PLATFORM_SWITCH_ENV, dedupe_hints, env_hints, fact_hints
from kv4lint.model import FileError, Hint, Launch, Provenance, ScanResult, Span, Value
from kv4lint.sglang.commands import Command, unwrap
from kv4lint.source import LineIndex, OffsetMap
from kv4lint.suppression import codes_above, file_codes

__all__ = ["scan_shell", "split_words"]

# Limits that keep hostile input cheap.
_MAX_DEPTH = 60  # nesting of statements / substitutions / bash -c levels
_MAX_VALUE = 64 * 1024  # characters of one variable's value
_MAX_ITEMS = 100_000  # elements of one array

_MAX_STEPS = 300_000  # statements walked before loops and calls stop being expanded
_MAX_LOOP_ITEMS = 16  # a for-loop over more items is walked once with the variable unknown
_MAX_LOOP_PRODUCT = 64  # nested loops: total iterations walked

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


def _parse(data: bytes):
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


class _Src:
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
        return _contig(self.pos)


class _Builder:
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


def _contig(pos: list) -> Span | None:
    if not pos or pos[0] is None:
        return None
    first = pos[0]
    for k, p in enumerate(pos):
        if p != first + k:
            return None
    return Span(first, first + len(pos))


class _Assign:
    """One assignment (or loop binding, or ``:=`` default) a value may come from."""

    __slots__ = ("name", "span", "sites", "exported", "seeded")

    def __init__(self, name: str, span: Span | None, exported: bool = False, seeded: bool = False):
        self.name = name
        self.span = span
        self.sites: set = set()
        self.exported = exported
        self.seeded = seeded

    @property
    def shared(self) -> bool:
        return self.exported or len(self.sites) > 1


class _Res:
    """Provenance of a character that came through variables: where it is used, and from which assignments."""

    __slots__ = ("use", "assigns")

    def __init__(self, use: Span | None, assigns: frozenset):
        self.use = use
        self.assigns = assigns


def _resolved(chars: Chars, use: Span | None, assigns: frozenset) -> Chars:
    """``chars`` as seen through a variable used at ``use``: the outermost use wins, assignments accumulate."""
    cache: dict[int, _Res] = {}
    res = []
    for r in chars.res:
        k = id(r) if r is not None else 0
        nr = cache.get(k)
        if nr is None:
            nr = _Res(use, assigns | r.assigns if r is not None else assigns)
            cache[k] = nr
        res.append(nr)
    return Chars(chars.text, chars.pos, res)


# Variable bindings
_SCALAR, _ARRAY, _UNSET, _UNKNOWN = "scalar", "array", "unset", "unknown"


class _Elem:
    """One element of a bash array."""

    __slots__ = ("chars", "splat", "remove", "assign")

    def __init__(self, chars: Chars | None, splat: bool, remove: Span | None, assign: _Assign | None):
        self.chars = chars  # None: unknown
        self.splat = splat
        self.remove = remove
        self.assign = assign


class _Binding:
    __slots__ = ("kind", "chars", "elems", "assign")

    def __init__(self, kind: str, chars: Chars | None = None, elems: list | None = None,
                 assign: _Assign | None = None):
        self.kind = kind
        self.chars = chars
        self.elems = elems
        self.assign = assign


class _Env:
    __slots__ = ("vars", "exported")

    def __init__(self):
        self.vars: dict[str, _Binding] = {}
        self.exported: set[str] = set()

    def copy(self) -> "_Env":
        e = _Env()
        e.vars = dict(self.vars)
        e.exported = set(self.exported)
        return e


def _merge(envs: list[_Env]) -> _Env:
    """The state after one of several paths ran: what the paths disagree on is unknown."""
    if len(envs) == 1:
        return envs[0]
    out = _Env()
    names = set()
    for e in envs:
        names.update(e.vars)
        out.exported |= e.exported
    for n in names:
        bs = [e.vars.get(n) for e in envs]
        b0 = bs[0]
        if all(b is b0 for b in bs):
            out.vars[n] = b0
            continue
        if all(b is not None and b.kind == _SCALAR and b.chars is not None for b in bs) and \
                len({b.chars.text for b in bs}) == 1:
            # Same text on every path, written in different places: known, not editable.
            out.vars[n] = _Binding(_SCALAR, Chars(b0.chars.text), assign=_Assign(n, None))
            continue
        out.vars[n] = _Binding(_UNKNOWN, assign=_Assign(n, None))
    return out


# ===========================================================================
# Word evaluation


class _Lit:
    """Known text; ``split``: subject to word splitting (an unquoted expansion)."""

    __slots__ = ("chars", "split")

    def __init__(self, chars: Chars, split: bool = False):
        self.chars = chars
        self.split = split


class _Unk:
    """Unknown text; ``splat``: may be any number of words; ``site``: where it is written."""

    __slots__ = ("splat", "site")

    def __init__(self, splat: bool, site: Span | None = None):
        self.splat = splat
        self.site = site


class _Arr:
    """An array expansion: ``"${a[@]}"`` (quoted: one word per element) or unquoted."""

    __slots__ = ("elems", "quoted")

    def __init__(self, elems: list[_Elem], quoted: bool):
        self.elems = elems
        self.quoted = quoted


class _Field:
    """One argv token as bash would produce it, with where it was written."""

    __slots__ = ("chars", "full", "unknown", "splat", "src", "s", "e", "rm", "quote")

    def __init__(self, chars: Chars, unknown: bool, splat: bool, src: _Src, s: int, e: int,
                 rm: Span | None = None, quote: str = "", full: Chars | None = None):
        self.chars = chars  # the text (when unknown: the known text before the first unknown part)
        self.full = full if full is not None else chars  # all of it, unknown parts written as _HOLE
        self.unknown = unknown or _HOLE in chars.text
        self.splat = splat
        self.src = src
        self.s = s  # the word it came from, in src
        self.e = e
        self.rm = rm
        self.quote = quote

    @property
    def text(self) -> str | None:
        return None if self.unknown else self.chars.text

    @property
    def prefix(self) -> str:
        return self.chars.text

    @property
    def raw(self) -> str:
        return self.src.text[self.s:self.e]

    def anchor(self) -> Span:
        return self.src.fanchor(self.s, self.e)

    def synth(self, text: str) -> "_Field":
        """A made-up word reported where this one is (``python`` for ``torchrun -m``)."""
        return _Field(Chars(text), False, False, self.src, self.s, self.e)

    def tail(self, k: int) -> "_Field":
        """The word from character ``k`` on (the value of ``--opt=value``)."""
        return _Field(self.chars[k:], self.unknown, False, self.src, self.s, self.e, full=self.full[k:])

    def concat(self, words: list["_Field"]) -> "_Field":
        """The words joined by spaces, as one shell string (what ``eval`` runs)."""
        b = _Builder()
        for k, f in enumerate(words):
            if k:
                b.add(Chars(" "))
            b.add(f.full)
        chars = b.build()
        return _Field(chars, False, False, words[0].src, words[0].s, words[-1].e, full=chars)

    def __repr__(self) -> str:
        return f"_Field({self.text!r})"


class _Acc:
    """Accumulates the parts of one field during word splitting."""

    __slots__ = ("chars", "full", "unknown", "splat", "n", "rm")

    def __init__(self):
        self.chars = Chars()  # known text up to the first unknown part
        self.full = _Builder()  # all of it, an unknown part written as _HOLE
        self.unknown = False
        self.splat = False
        self.n = 0
        self.rm = None

    def add(self, chars: Chars, rm: Span | None = None) -> None:
        if not chars.text and rm is None:
            return  # the "" that makes a word exist: not a part of its text
        self.n += 1
        self.rm = rm if self.n == 1 else None
        self.full.add(chars)
        if not self.unknown:
            self.chars = self.chars + chars

    def unk(self, splat: bool, site: Span | None = None) -> None:
        self.n += 1
        self.splat = splat and self.n == 1
        self.unknown = True
        self.rm = None
        self.full.add(Chars(_HOLE, [None], [_Res(site, frozenset())]))


_IFS = re.compile(r"[^ \t\n]+")
# Stands for an unknown part inside a text that is parsed again (bash -c "... $UNKNOWN ...").
_HOLE = "\ue000"
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}
_CASE_OPS = {",,": str.lower, "^^": str.upper, ",": lambda s: s[:1].lower() + s[1:],
             "^": lambda s: s[:1].upper() + s[1:]}
_DEFAULT_OPS = {":-", "-", ":=", "=", ":+", "+", ":?", "?"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Expander:
    """Evaluates word nodes of one source the way bash expands them."""

    def __init__(self, walker: "_Walker"):
        self.w = walker
        self.src = walker.src

    # -- public entry points ------------------------------------------------
    def fields(self, node) -> list[_Field]:
        """The argv tokens one word node expands to (0, 1 or more)."""
        parts = self.parts(node, False)
        s, e = self.src.ns(node)
        fields = self.split(parts, s, e)
        if len(fields) == 1 and node.type in ("string", "raw_string", "ansi_c_string"):
            fields[0].quote = "'" if node.type == "raw_string" else '"' if node.type == "string" else "$'"
        return fields

    def scalar(self, node) -> Chars | None:
        """The value of ``node`` in an assignment (no word splitting); None when unknown."""
        return self.join(self.parts(node, False))

    @staticmethod
    def join(parts: list) -> Chars | None:
        out = _Builder()
        for p in parts:
            if isinstance(p, _Lit):
                out.add(p.chars)
            elif isinstance(p, _Arr):
                for k, el in enumerate(p.elems):
                    if el.chars is None:
                        return None
                    if k:
                        out.add(Chars(" "))
                    out.add(el.chars)
            else:
                return None
        return out.build()

    # -- word splitting -------------------------------------------------------
    def split(self, parts: list, s: int, e: int) -> list[_Field]:
        src = self.src
        fields: list[_Field] = []
        cur: _Acc | None = None

        def flush():
            nonlocal cur
            if cur is not None:
                fields.append(_Field(cur.chars, cur.unknown, cur.splat and cur.n == 1, src, s, e, cur.rm,
                                     full=cur.full.build()))
                cur = None

        def acc() -> _Acc:
            nonlocal cur
            if cur is None:
                cur = _Acc()
            return cur

        def split_lit(chars: Chars, whole_rm: Span | None = None):
            toks = [(m.start(), m.end()) for m in _IFS.finditer(chars.text)]
            if not toks:
                if chars.text:  # only whitespace: ends the current field
                    flush()
                return
            if toks[0][0] > 0:
                flush()
            for k, (a, b) in enumerate(toks):
                if k > 0:
                    flush()
                if whole_rm is not None and len(toks) == 1:
                    rm = whole_rm
                elif k > 0:
                    rm = _contig(chars.pos[toks[k - 1][1]:b])
                elif len(toks) > 1:
                    rm = _contig(chars.pos[a:toks[1][0]])
                else:
                    rm = _contig(chars.pos[a:b])
                acc().add(chars[a:b], rm)
            if toks[-1][1] < len(chars.text):
                flush()

        for p in parts:
            if isinstance(p, _Lit):
                if p.split:
                    split_lit(p.chars)
                else:
                    acc().add(p.chars)
            elif isinstance(p, _Unk):
                acc().unk(p.splat, p.site)
            else:  # _Arr
                for k, el in enumerate(p.elems):
                    if p.quoted:
                        if k:
                            flush()
                        if el.chars is None:
                            acc().unk(el.splat)
                        else:
                            acc().add(el.chars, el.remove)
                    else:
                        if k:
                            flush()
                        if el.chars is None:
                            acc().unk(True)
                        else:
                            split_lit(el.chars, el.remove)
        flush()
        return fields

    # -- parts ----------------------------------------------------------------
    def parts(self, node, quoted: bool, oper: bool = False) -> list:
        w = self.w
        if w.depth > _MAX_DEPTH:
            return [_Unk(not quoted)]
        w.depth += 1
        try:
            return self._parts(node, quoted, oper)
        finally:
            w.depth -= 1

    def _parts(self, node, quoted: bool, oper: bool) -> list:
        t = node.type
        src = self.src
        if t == "string" or t == "translated_string":
            return self._string(node)
        if t == "raw_string":
            s, e = src.ns(node)
            end = e - 1 if e - s >= 2 and src.text[e - 1] == "'" else e
            return [_Lit(src.chars(s + 1, end))]
        if t == "ansi_c_string":
            return [_Lit(self._ansi(node))]
        if t in ("simple_expansion", "expansion"):
            return self.expand(node, quoted)
        if t in ("command_substitution", "process_substitution"):
            self.w.subshell(node.named_children)
            return [_Unk(not quoted and t == "command_substitution", src.fanchor(*src.ns(node)))]
        if t == "arithmetic_expansion":
            self.w.touch(node)
            return [_Unk(False, src.fanchor(*src.ns(node)))]
        if t == "concatenation" or (node.named_child_count and t not in ("word", "number")):
            s, e = src.ns(node)
            return self._seq(node.children, s, e, quoted, oper)
        s, e = src.ns(node)
        if quoted:
            return [_Lit(self._dq(s, e))]
        return self._unquoted(s, e, oper)

    def _seq(self, children, s: int, e: int, quoted: bool, oper: bool) -> list:
        """Parts of a run of nodes; text between them (not in any node) is literal."""
        src = self.src
        out: list = []
        at = s
        for ch in children:
            cs, ce = src.ns(ch)
            if cs > at:
                out.extend([_Lit(self._dq(at, cs))] if quoted else self._unquoted(at, cs, oper))
            out.extend(self.parts(ch, quoted, oper))
            at = max(at, ce)
        if e > at:
            out.extend([_Lit(self._dq(at, e))] if quoted else self._unquoted(at, e, oper))
        return out

    def _unquoted(self, s: int, e: int, split: bool) -> list:
        src = self.src
        text = src.text
        if "\\" not in text[s:e]:
            return [_Lit(src.chars(s, e), split)] if e > s else []
        out = []
        i = run = s
        while i < e:
            if text[i] == "\\":
                if i > run:
                    out.append(_Lit(src.chars(run, i), split))
                if i + 1 < e and text[i + 1] == "\n":
                    i += 2
                elif i + 2 < e and text[i + 1] == "\r" and text[i + 2] == "\n":
                    i += 3
                elif i + 1 < e:
                    out.append(_Lit(src.chars(i + 1, i + 2)))
                    i += 2
                else:
                    i += 1
                run = i
            else:
                i += 1
        if e > run:
            out.append(_Lit(src.chars(run, e), split))
        return out

    def _escaped(self, s: int, e: int, special: str) -> Chars:
        """Text where ``\\`` escapes only the characters in ``special`` (and newline)."""
        src = self.src
        text = src.text
        if "\\" not in text[s:e]:
            return src.chars(s, e)
        out = _Builder()
        i = run = s
        while i < e:
            if text[i] == "\\" and i + 1 < e:
                nx = text[i + 1]
                if nx in special or nx == "\n":
                    out.add(src.chars(run, i))
                    if nx != "\n":
                        out.add(src.chars(i + 1, i + 2))
                    i += 2
                    run = i
                    continue
                if nx == "\r" and i + 2 < e and text[i + 2] == "\n":
                    out.add(src.chars(run, i))
                    i += 3
                    run = i
                    continue
                i += 2
                continue
            i += 1
        out.add(src.chars(run, e))
        return out.build()

    def _dq(self, s: int, e: int) -> Chars:
        return self._escaped(s, e, '$`"\\')

    def heredoc_text(self, s: int, e: int) -> Chars:
        return self._escaped(s, e, "$`\\")

    def _string(self, node) -> list:
        src = self.src
        s, e = src.ns(node)
        kids = node.children
        start = s
        if kids and not kids[0].is_named:  # opening quote ('"' or '$"')
            start = src.ns(kids[0])[1]
            kids = kids[1:]
        end = e
        if kids and not kids[-1].is_named and kids[-1].type == '"':
            end = src.ns(kids[-1])[0]
            kids = kids[:-1]
        out: list = [_Lit(Chars())]  # "" is still a word
        at = start
        for ch in kids:
            cs, ce = src.ns(ch)
            if cs > at:
                out.append(_Lit(self._dq(at, cs)))
            if ch.type == "string_content":
                out.append(_Lit(self._dq(cs, ce)))
            else:
                out.extend(self.parts(ch, True))
            at = max(at, ce)
        if end > at:
            out.append(_Lit(self._dq(at, end)))
        return out

    def _ansi(self, node) -> Chars:
        src = self.src
        s, e = src.ns(node)
        text = src.text
        i = s + 2
        end = e - 1 if e - s >= 3 and text[e - 1] == "'" else e
        out = _Builder()
        while i < end:
            ch = text[i]
            if ch != "\\" or i + 1 >= end:
                out.add(src.chars(i, i + 1))
                i += 1
                continue
            nx = text[i + 1]
            if nx in _ANSI:
                out.add(Chars(_ANSI[nx]))
                i += 2
            elif nx in "01234567":
                m = re.match(r"[0-7]{1,3}", text[i + 1:end])
                out.add(Chars(chr(int(m.group(0), 8) & 0xFF)))
                i += 1 + len(m.group(0))
            elif nx in "xuU":
                n = {"x": 2, "u": 4, "U": 8}[nx]
                m = re.match(r"[0-9A-Fa-f]{1,%d}" % n, text[i + 2:end])
                if m:
                    try:
                        out.add(Chars(chr(int(m.group(0), 16))))
                    except (ValueError, OverflowError):
                        pass
                    i += 2 + len(m.group(0))
                else:
                    out.add(src.chars(i, i + 2))
                    i += 2
            elif nx == "c" and i + 2 < end:
                out.add(Chars(chr(ord(text[i + 2]) & 0x1F)))
                i += 3
            else:
                out.add(src.chars(i, i + 2))
                i += 2
        return out.build()

    # -- parameter expansion ---------------------------------------------------
    def expand(self, node, quoted: bool) -> list:
        parts = self._expand(node, quoted)
        site = None
        for p in parts:
            if isinstance(p, _Unk) and p.site is None:
                if site is None:
                    site = self.src.fanchor(*self.src.ns(node))
                p.site = site
        return parts

    def _expand(self, node, quoted: bool) -> list:
        src = self.src
        s, e = src.ns(node)
        site = src.fanchor(s, e)
        key = (site, s, len(src.text))
        prefix = None
        op = None
        operand: list = []
        if node.type == "simple_expansion":
            named = node.named_children
            if not named:
                return [_Lit(src.chars(s, e), not quoted)]  # a lone "$"
            namenode = named[0]
        else:
            inner = node.children[1:]
            if inner and inner[-1].type == "}":
                inner = inner[:-1]
            i = 0
            if inner and not inner[0].is_named and inner[0].type in ("#", "!"):
                prefix = inner[0].type
                i = 1
            if i >= len(inner) or inner[i].type not in ("variable_name", "special_variable_name", "subscript"):
                self.w.touch(node)
                return [_Unk(not quoted)]
            namenode = inner[i]
            if i + 1 < len(inner):
                op = src.nt(inner[i + 1])
                operand = inner[i + 2:]
        index = None
        if namenode.type == "subscript":
            nm = namenode.child_by_field_name("name")
            ix = namenode.child_by_field_name("index")
            name = src.nt(nm) if nm is not None else ""
            itext = src.nt(ix).strip() if ix is not None else ""
            if itext in ("@", "*"):
                index = itext
            elif itext.isdigit():
                index = int(itext)
            else:
                if ix is not None:
                    self.w.touch(ix)
                index = "?"
        else:
            name = src.nt(namenode)
        if prefix == "!":
            return [_Unk(not quoted)]
        if (name in ("@", "*", "#") or name.isdigit()) and self.w.positional is not None and prefix is None:
            return self._positional(name, op, operand, quoted, s, e)
        if name in ("@", "*"):
            return [_Unk(not quoted or (name == "@" and index is None))]
        if not _NAME.match(name) and not name.isdigit():
            return [_Unk(False)]  # $?, $$, $!, $#, $-, $0
        state = self._lookup(name, index, key)
        if prefix == "#":
            return self._length(state, index)
        if op is None:
            return self._value(state, quoted, site, index)
        if op in _DEFAULT_OPS:
            return self._default(name, state, op, operand, quoted, site, s, e, key)
        if op in _CASE_OPS and state[0] == _SCALAR:
            ch = self._resolve_state(state, site)
            conv = _CASE_OPS[op](ch.text)
            if len(conv) == len(ch.text):
                pos = [p if a == b else None for p, a, b in zip(ch.pos, ch.text, conv)]
                return [_Lit(Chars(conv, pos, ch.res), not quoted)]
        for ch in operand:
            self.w.touch(ch)
        return [_Unk(not quoted)]

    def _positional(self, name: str, op: str | None, operand: list, quoted: bool, s: int, e: int) -> list:
        """``$1``, ``"$@"``, ``${@:2}``, ``$#`` inside a function called with known arguments.

        The arguments keep their own provenance: a literal written at the call
        site is reported and edited there.
        """
        elems: list[_Elem] = self.w.positional or []
        if name == "#":
            return [_Unk(False)] if any(el.splat for el in elems) else [_Lit(Chars(str(len(elems))))]
        if name in ("@", "*"):
            if op == ":":  # ${@:offset[:length]}
                m = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?", self.src.text[self.src.ns(operand[0])[0]:e - 1]
                                 if operand else "")
                if not m or any(el.splat for el in elems[:max(0, int(m.group(1)) - 1)]):
                    return [_Unk(not quoted or name == "@")]
                start = max(0, int(m.group(1)) - 1)
                elems = elems[start:start + int(m.group(2))] if m.group(2) else elems[start:]
            elif op is not None:
                return [_Unk(not quoted or name == "@")]
            if quoted and name == "*":
                j = self.join([_Arr(elems, True)])
                return [_Lit(j)] if j is not None else [_Unk(False)]
            return [_Arr(elems, quoted)]
        k = int(name)
        if k == 0 or any(el.splat for el in elems[:k - 1]):
            return [_Unk(not quoted)]
        el = elems[k - 1] if k <= len(elems) else None
        if el is not None and el.chars is None:
            return [_Unk(not quoted)]
        if op is None:
            return [_Lit(el.chars if el is not None else Chars(), not quoted)]
        if op in (":-", "-") and (el is None or (op == ":-" and el.chars.text == "")):
            ostart = self.src.ns(operand[0])[0] if operand else e - 1
            oend = self.src.ns(operand[-1])[1] if operand else e - 1
            site = self.src.fanchor(s, e)
            return [_Lit(_resolved(p.chars, site, frozenset()), p.split) if isinstance(p, _Lit) else p
                    for p in self._seq(operand, ostart, oend, quoted, not quoted)] or [_Lit(Chars(), not quoted)]
        if op in (":-", "-"):
            return [_Lit(el.chars, not quoted)]
        return [_Unk(not quoted)]

    def _lookup(self, name: str, index, key) -> tuple:
        """("ext",) never assigned | ("unset",) | ("unknown",) | ("scalar", chars, assign) | ("array", elems)."""
        b = self.w.env.vars.get(name)
        if b is None:
            return ("ext",)
        if b.assign is not None:
            b.assign.sites.add(key)
        if b.kind == _UNSET:
            return ("unset",)
        if b.kind == _UNKNOWN:
            return ("unknown",)
        if b.kind == _SCALAR:
            if b.chars is None:
                return ("unknown",)
            if index in ("@", "*"):
                return ("array", [_Elem(b.chars, False, None, b.assign)])
            if index is None or index == 0:
                return (_SCALAR, b.chars, b.assign)
            if index == "?":
                return ("unknown",)
            return ("unset",)
        # array
        elems = b.elems or []
        for el in elems:
            if el.assign is not None:
                el.assign.sites.add(key)
        if index in ("@", "*"):
            return ("array", elems)
        if index == "?":
            return ("unknown",)
        k = index or 0
        if any(el.chars is None and el.splat for el in elems[:k + 1]):
            return ("unknown",)
        if k < len(elems):
            el = elems[k]
            if el.chars is None:
                return ("unknown",)
            return (_SCALAR, el.chars, el.assign)
        return ("unset",)

    def _resolve_state(self, state: tuple, site: Span) -> Chars:
        chars, assign = state[1], state[2]
        return _resolved(chars, site, frozenset((assign,)) if assign is not None else frozenset())

    def _value(self, state: tuple, quoted: bool, site: Span, index) -> list:
        kind = state[0]
        if kind == _SCALAR:
            return [_Lit(self._resolve_state(state, site), not quoted)]
        if kind == "array":
            elems = [
                _Elem(_resolved(el.chars, site, frozenset((el.assign,)) if el.assign else frozenset())
                      if el.chars is not None else None, el.splat, el.remove, el.assign)
                for el in state[1]
            ]
            if quoted and index == "*":
                j = self.join([_Arr(elems, True)])
                return [_Lit(j)] if j is not None else [_Unk(False)]
            return [_Arr(elems, quoted)]
        if kind == "unset":
            return [_Lit(Chars(), not quoted)]
        return [_Unk(not quoted or index == "@")]

    def _length(self, state: tuple, index) -> list:
        if state[0] == _SCALAR:
            return [_Lit(Chars(str(len(state[1].text))))]
        if state[0] == "array" and all(el.chars is not None for el in state[1]):
            if index in ("@", "*"):
                return [_Lit(Chars(str(len(state[1]))))]
        if state[0] in ("unset", "ext"):
            return [_Lit(Chars("0"))] if state[0] == "unset" else [_Unk(False)]
        return [_Unk(False)]

    def _default(self, name, state, op, operand, quoted, site, s, e, key) -> list:
        kind = state[0]
        colon = op.startswith(":")
        base = op.lstrip(":")
        if kind == "unknown":
            for ch in operand:
                self.w.touch(ch)
            return [_Unk(not quoted)]
        is_set = kind in (_SCALAR, "array")
        is_null = kind == _SCALAR and state[1].text == ""
        use_operand = {"-": not is_set or (colon and is_null), "=": not is_set or (colon and is_null),
                       "+": is_set and not (colon and is_null), "?": False}[base]
        if base == "?" and not is_set:
            return [_Unk(not quoted)]
        if not use_operand:
            if base == "+":
                for ch in operand:
                    self.w.touch(ch)
                return [_Lit(Chars(), not quoted)]
            for ch in operand:
                self.w.touch(ch)
            return self._value(state, quoted, site, None)
        ostart = self.src.ns(operand[0])[0] if operand else e - 1
        oend = self.src.ns(operand[-1])[1] if operand else e - 1
        parts = self._seq(operand, ostart, oend, quoted, not quoted)
        if base == "=":
            chars = self.join(parts)
            a = _Assign(name, site)
            a.sites.add(key)
            self.w.bind(name, _Binding(_SCALAR, chars, assign=a) if chars is not None else
                        _Binding(_UNKNOWN, assign=a))
            if chars is None:
                return [_Unk(not quoted)]
            return [_Lit(_resolved(chars, site, frozenset((a,))), not quoted)]
        out = []
        for p in parts:
            if isinstance(p, _Lit):
                out.append(_Lit(_resolved(p.chars, site, frozenset()), p.split))
            else:
                out.append(p)
        if not out:
            out = [_Lit(Chars(), not quoted)]
        return out


def _elems(fields: list[_Field]) -> list[_Elem]:
    return [_Elem(None if f.unknown else f.chars, f.splat, f.rm, None) for f in fields]


# ===========================================================================
# The walker: runs the statements in order


_SEP_CMD = re.compile(r"(?:[ \t]|\\\r?\n)+")
_SEP_LIST = re.compile(r"(?:[ \t\r\n]|\\\r?\n)+")
_READERS = {"read", "mapfile", "readarray", "getopts"}
_READER_OPTS = {"read": {"-p", "-d", "-n", "-N", "-t", "-u", "-i"},
                "mapfile": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"},
                "readarray": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"}}
_CHAIN = {"list", "pipeline", "redirected_statement", "negated_command"}
_NOT_LAUNCH_STMT = {"comment", "heredoc_body", "heredoc_start", "heredoc_end", "file_redirect",
                    "herestring_redirect"}


class _Exec:
    """A command to follow: what :func:`~kv4lint.sglang.commands.unwrap` found, with its environment and hints."""

    __slots__ = ("cmd", "env", "hints")

    def __init__(self, cmd: Command, env: list[tuple[str, Chars | None, Span | None]], hints: list[Hint]):
        self.cmd = cmd
        self.env = env  # the variables the command's prefix and wrappers set
        self.hints = hints


class _Pending:
    """A launch found, waiting for the walk to end (``shared`` needs every use counted)."""

    __slots__ = ("entry", "span", "anchor", "argv", "hints", "disabled")

    def __init__(self, entry, span, anchor, argv, hints, disabled):
        self.entry = entry
        self.span = span
        self.anchor = anchor
        self.argv = argv
        self.hints = hints
        self.disabled = disabled


class _Scan:
    """State shared by every walker of one file (the file's own and nested ones)."""

    def __init__(self, path: str, file_text: str | None):
        self.path = path
        self.file_text = file_text
        self.pending: list[_Pending] = []
        self.other: list[tuple[Launch, dict]] = []  # from the Python frontend, and what came through variables
        self.errors: list[FileError] = []
        self.steps = 0
        self.loop_mult = 1
        self.too_deep = False

    def nested_too_deep(self, line: int) -> None:
        """Statements nested deeper than ``_MAX_DEPTH`` are not walked: say so once, a launch there is unknown."""
        if not self.too_deep:
            self.too_deep = True
            self.errors.append(FileError(self.path, f"shell text nested more than {_MAX_DEPTH} levels deep near "
                                                    f"line {line}: not scanned further", line=line))


class _Walker:
    """Runs the statements of one source in order, as bash would, and records the launches found.

    ``env`` is the variable state at the current statement; branches run on
    copies that are merged afterwards.  Nested code (``bash -c``, heredocs fed
    to a shell) gets its own walker sharing the same :class:`_Scan`.
    """

    def __init__(self, scan: _Scan, src: _Src, env: _Env, hints: list[Hint], *, depth: int = 0,
                 disabled: frozenset[str] | None = None):
        self.scan = scan
        self.src = src
        self.env = env
        self.hints = hints
        self.depth = depth
        self.inherited_disabled = disabled
        self.x = _Expander(self)
        self.functions: dict[str, object] = {}
        self.called: set[str] = set()
        self.call_stack: list[str] = []
        self.frames: list[dict] = []
        self.chain: list[int] = []
        self.positional: list[_Elem] | None = None  # $1 $2 ...: None = unknown (the script's arguments)

    # -- variables -----------------------------------------------------------------
    def bind(self, name: str, b: _Binding, *, local: bool = False) -> None:
        # A value past the bound cannot be a KV-cache setting; keeping it would let a script that
        # doubles a variable (A=$A$A ...) grow without limit.
        if (b.kind == _SCALAR and b.chars is not None and len(b.chars.text) > _MAX_VALUE) or (
                b.kind == _ARRAY and len(b.elems or ()) > _MAX_ITEMS):
            b = _Binding(_UNKNOWN, assign=b.assign)
        if self.frames and (local or name in self.frames[-1]):
            frame = self.frames[-1]
            if name not in frame:
                frame[name] = self.env.vars.get(name)
        if b.assign is not None and name in self.env.exported:
            b.assign.exported = True
        self.env.vars[name] = b

    def touch(self, node) -> None:
        """Evaluate a node only for its variable uses (and substitutions that may launch)."""
        if self.depth > _MAX_DEPTH:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("simple_expansion", "expansion"):
                self.depth += 1
                try:
                    self.x.expand(n, True)
                finally:
                    self.depth -= 1
            elif n.type in ("command_substitution", "process_substitution"):
                self.subshell(n.named_children)
            else:
                stack.extend(n.named_children)

    # -- statements ----------------------------------------------------------------
    def run(self, nodes) -> None:
        for n in nodes:
            self.stmt(n)

    def stmt(self, n, stdin: Chars | None = None) -> None:
        self.scan.steps += 1
        if self.depth > _MAX_DEPTH:
            self.scan.nested_too_deep(self.src.line(self.src.c(n.start_byte)))
            return
        self.depth += 1
        # The chain of statements a command starts (``a && b``, ``a | b``, ``a > log``): a
        # suppression comment above the chain applies to its commands; one above an ``if`` does not.
        saved = self.chain
        t = n.type
        if t in _CHAIN:
            self.chain = saved + [n.start_byte]
        elif t != "command":
            self.chain = []
        try:
            h = _STMT.get(t)
            if h is not None:
                h(self, n) if stdin is None or t != "command" else self.command(n, stdin)
            elif n.is_named and t not in _NOT_LAUNCH_STMT:
                self.run(n.named_children)
        finally:
            self.depth -= 1
            self.chain = saved

    def subshell(self, nodes) -> None:
        saved = self.env
        self.env = saved.copy()
        try:
            self.run(nodes)
        finally:
            self.env = saved

    def _subshell_node(self, n) -> None:
        self.subshell(n.named_children)

    def _list(self, n) -> None:
        # a && b || c: left-nested; walk iteratively.  What follows && / || may not run.
        chain = []
        while n.type == "list":
            kids = n.children
            chain.append(kids[1:])
            n = kids[0]
        self.stmt(n)
        for rest in reversed(chain):
            pre = self.env.copy()
            for k in rest:
                if k.is_named:
                    self.stmt(k)
            self.env = _merge([pre, self.env])

    def _pipeline(self, n) -> None:
        kids = [k for k in n.children if k.is_named]
        for k in kids:
            self.subshell([k])

    def _negated(self, n) -> None:
        self.run(n.named_children)

    def _compound(self, n) -> None:
        self.run(n.named_children)

    def _if(self, n) -> None:
        branches: list[list] = []  # each: (conditions, body)
        cur_cond: list = []
        cur_body: list = []
        in_body = False
        has_else = False
        for ch in n.children:
            t = ch.type
            if t == "then":
                in_body = True
            elif t in ("elif_clause", "else_clause"):
                if t == "else_clause":
                    has_else = True
                branches.append((ch,))
            elif ch.is_named and t != "comment":
                (cur_body if in_body else cur_cond).append(ch)
        self.run(cur_cond)
        pre = self.env
        ends = []
        self.env = pre.copy()
        self.run(cur_body)
        ends.append(self.env)
        for (clause,) in branches:
            self.env = pre.copy()
            self._clause(clause)
            ends.append(self.env)
        if not has_else:
            ends.append(pre)
        self.env = _merge(ends)

    def _clause(self, c) -> None:
        # elif COND; then BODY  /  else BODY
        conds, body, in_body = [], [], c.type == "else_clause"
        for ch in c.children:
            if ch.type == "then":
                in_body = True
            elif ch.is_named and ch.type != "comment":
                (body if in_body else conds).append(ch)
        self.run(conds)
        self.run(body)

    def _loop_body(self, n):
        return n.child_by_field_name("body")

    def _while(self, n) -> None:
        conds = [k for k in n.children_by_field_name("condition") if k.is_named]
        self.run(conds)
        pre = self.env
        self.env = pre.copy()
        body = self._loop_body(n)
        if body is not None:
            self.stmt(body)
        self.env = _merge([pre, self.env])

    def _for(self, n) -> None:
        var = n.child_by_field_name("variable")
        body = self._loop_body(n)
        values = n.children_by_field_name("value")
        name = self.src.nt(var) if var is not None else None
        items: list[_Field] | None = []
        if not any(k.type == "in" for k in n.children):
            items = None  # for x; do ...: the positional parameters
        else:
            for v in values:
                items.extend(self.x.fields(v))
            if any(f.unknown for f in items) or len(items) > _MAX_LOOP_ITEMS or \
                    self.scan.loop_mult * max(1, len(items)) > _MAX_LOOP_PRODUCT or self.scan.steps > _MAX_STEPS:
                items = None
        pre = self.env
        if body is None or name is None:
            return
        if items is None:
            self.env = pre.copy()
            self.bind(name, _Binding(_UNKNOWN, assign=_Assign(name, None)))
            self.stmt(body)
            self.env = _merge([pre, self.env])
            return
        if not items:
            return
        self.scan.loop_mult *= len(items)
        try:
            for f in items:
                a = _Assign(name, f.anchor())
                self.bind(name, _Binding(_SCALAR, f.chars, assign=a))
                self.stmt(body)
        finally:
            self.scan.loop_mult //= len(items)

    def _c_for(self, n) -> None:
        pre = self.env
        self.env = pre.copy()
        body = self._loop_body(n)
        self.touch(n) if body is None else self.stmt(body)
        self.env = _merge([pre, self.env])

    def _case(self, n) -> None:
        value = n.child_by_field_name("value")
        if value is not None:
            self.touch(value)
        pre = self.env
        ends = []
        default = False
        for item in n.children:
            if item.type != "case_item":
                continue
            pats = item.children_by_field_name("value")
            if any(self.src.nt(p).strip() == "*" for p in pats):
                default = True
            pat_ids = {p.id for p in pats}
            self.env = pre.copy()
            self.run([c for c in item.named_children if c.id not in pat_ids and c.type != "comment"])
            ends.append(self.env)
        if not default:
            ends.append(pre)
        self.env = _merge(ends) if ends else pre

    def _function(self, n) -> None:
        name = n.child_by_field_name("name")
        body = n.child_by_field_name("body")
        if name is not None and body is not None:
            self.functions[self.src.nt(name)] = body

    def call(self, name: str, args: list[_Field] | None = None) -> None:
        body = self.functions[name]
        self.called.add(name)
        if name in self.call_stack or self.scan.steps > _MAX_STEPS or len(self.call_stack) > 8:
            return
        self.call_stack.append(name)
        self.frames.append({})
        saved_positional = self.positional
        self.positional = None if args is None else _elems(args)
        try:
            self.stmt(body)
        finally:
            self.positional = saved_positional
            frame = self.frames.pop()
            for k, old in frame.items():
                if old is None:
                    self.env.vars.pop(k, None)
                else:
                    self.env.vars[k] = old
            self.call_stack.pop()

    def finish_functions(self) -> None:
        """Functions never called by name (dispatched through "$@", or a library): walk them once."""
        for name in list(self.functions):
            if name not in self.called:
                self.call(name)

    # -- assignments ----------------------------------------------------------------
    def _assignment(self, n, *, exported: bool = False, local: bool = False, stmt=None) -> None:
        name_node = n.child_by_field_name("name")
        value = n.child_by_field_name("value")
        if name_node is None:
            return
        append = any(k.type == "+=" for k in n.children if not k.is_named)
        span = self.src.fanchor(*self.src.ns(stmt if stmt is not None else n))
        if name_node.type == "subscript":
            self._element_assignment(name_node, value, span)
            return
        name = self.src.nt(name_node)
        a = _Assign(name, span, exported)
        old = self.env.vars.get(name)
        if value is not None and value.type == "array":
            elems = self._array(value, a)
            if append and old is not None and old.kind == _ARRAY:
                elems = list(old.elems or []) + elems
            elif append and old is not None and old.kind == _SCALAR and old.chars is not None:
                elems = [_Elem(old.chars, False, None, old.assign)] + elems
            b = _Binding(_ARRAY, elems=elems, assign=a)
        else:
            chars = self.x.scalar(value) if value is not None else Chars()
            if append and old is not None:
                if old.kind == _SCALAR and old.chars is not None and chars is not None:
                    chars = old.chars + chars
                elif old.kind == _ARRAY and chars is not None:
                    b = _Binding(_ARRAY, elems=list(old.elems or []) + [_Elem(chars, False, None, a)], assign=a)
                    self.bind(name, b, local=local)
                    return
                elif old.kind != _UNSET:
                    chars = None
            b = _Binding(_SCALAR, chars, assign=a) if chars is not None else _Binding(_UNKNOWN, assign=a)
        self.bind(name, b, local=local)
        if exported:
            self.env.exported.add(name)

    def _element_assignment(self, sub, value, span) -> None:
        nm = sub.child_by_field_name("name")
        ix = sub.child_by_field_name("index")
        if nm is None:
            return
        name = self.src.nt(nm)
        chars = self.x.scalar(value) if value is not None else Chars()
        old = self.env.vars.get(name)
        itext = self.src.nt(ix).strip() if ix is not None else ""
        a = _Assign(name, span)
        if old is not None and old.kind == _ARRAY and itext.isdigit() and chars is not None:
            k = int(itext)
            elems = list(old.elems or [])
            if k < len(elems):
                elems[k] = _Elem(chars, False, None, a)
                self.bind(name, _Binding(_ARRAY, elems=elems, assign=a))
                return
            if k == len(elems):
                self.bind(name, _Binding(_ARRAY, elems=elems + [_Elem(chars, False, None, a)], assign=a))
                return
        self.bind(name, _Binding(_ARRAY, elems=[_Elem(None, True, None, a)], assign=a))

    def _array(self, node, a: _Assign) -> list[_Elem]:
        kids = node.children
        elems = []
        for i, k in enumerate(kids):
            if not k.is_named or k.type == "comment":
                continue
            fs = self.x.fields(k)
            rm = self._remove(kids, i, _SEP_LIST) if len(fs) == 1 else None
            for f in fs:
                elems.append(_Elem(None if f.unknown else f.chars, f.splat, rm if rm is not None else f.rm, a))
        return elems

    def _assignments(self, n) -> None:
        for k in n.named_children:
            if k.type == "variable_assignment":
                self._assignment(k)

    def _declaration(self, n) -> None:
        kids = n.children
        kw = kids[0].type if kids else ""
        opts = ""
        for k in kids[1:]:
            if k.type == "word":
                t = self.src.nt(k)
                if t.startswith("-"):
                    opts += t[1:]
        exported = (kw == "export" and "n" not in opts) or (kw != "export" and "x" in opts)
        local = kw == "local" or (kw in ("declare", "typeset") and "g" not in opts and bool(self.frames))
        for k in kids[1:]:
            if k.type == "variable_assignment":
                self._assignment(k, exported=exported, local=local, stmt=n if len(kids) == 2 else k)
            elif k.type == "variable_name":
                name = self.src.nt(k)
                if kw == "export" and "n" in opts:
                    self.env.exported.discard(name)
                    continue
                b = self.env.vars.get(name)
                if exported:
                    self.env.exported.add(name)
                    if b is None:
                        b = _Binding(_UNKNOWN, assign=_Assign(name, self.src.fanchor(*self.src.ns(n)), True))
                        self.bind(name, b)
                    elif b.assign is not None:
                        b.assign.exported = True
                if local and not exported:
                    self.bind(name, _Binding(_UNSET, assign=_Assign(name, None)), local=True)
            elif k.is_named:
                self.touch(k)

    def _unset(self, n) -> None:
        func = False
        for k in n.children[1:]:
            t = self.src.nt(k)
            if t == "-f":
                func = True
            elif t.startswith("-"):
                continue
            elif func:
                self.functions.pop(t, None)
            elif _NAME.match(t):
                self.bind(t, _Binding(_UNSET, assign=_Assign(t, None)))
                self.env.exported.discard(t)

    def _redirected(self, n) -> None:
        body = n.child_by_field_name("body")
        stdin: Chars | None = None
        after = []
        for k in n.children:
            if k.type == "heredoc_redirect":
                stdin = self._heredoc(k)
                after.extend(c for c in k.named_children if c.type in ("pipeline", "list", "command",
                                                                       "redirected_statement"))
            elif k.type == "herestring_redirect":
                word = [c for c in k.named_children]
                if word:
                    stdin = self.x.scalar(word[-1])
            elif k.type == "file_redirect":
                self.touch(k)
        if body is None:
            return
        if not after:
            self.stmt(body, stdin=stdin)
            return
        # cat <<EOF | python3 -   (tree-sitter keeps the pipeline inside the heredoc redirect)
        saved = self.env
        self.env = saved.copy()
        try:
            self.stmt(body, stdin=stdin)
        finally:
            self.env = saved
        feed = stdin if body.type == "command" and self._is_cat(body) else None
        for a in after:
            if a.type == "pipeline":
                cmds = [c for c in a.named_children]
                for i, c in enumerate(cmds):
                    self.env, saved = self.env.copy(), self.env
                    try:
                        self.stmt(c, stdin=feed if i == 0 else None)
                    finally:
                        self.env = saved
            else:
                self.stmt(a)

    def _is_cat(self, cmd) -> bool:
        name = cmd.child_by_field_name("name")
        args = cmd.children_by_field_name("argument")
        return name is not None and self.src.nt(name).rsplit("/", 1)[-1] == "cat" and not args

    def _heredoc(self, r) -> Chars | None:
        src = self.src
        start = next((k for k in r.children if k.type == "heredoc_start"), None)
        body = next((k for k in r.children if k.type == "heredoc_body"), None)
        if body is None:
            return None
        s, e = src.ns(body)
        quoted = start is not None and any(q in src.nt(start) for q in "'\"\\")
        strip_tabs = any(k.type == "<<-" for k in r.children if not k.is_named)
        if quoted:
            chars = src.chars(s, e)
        else:
            b = _Builder()
            at = s
            for k in body.named_children:
                ks, ke = src.ns(k)
                if ks > at:
                    b.add(self.x.heredoc_text(at, ks))
                if k.type == "heredoc_content":
                    b.add(self.x.heredoc_text(ks, ke))
                else:
                    j = self.x.join(self.x.parts(k, True))
                    b.add(j if j is not None else Chars(_HOLE))
                at = max(at, ke)
            if e > at:
                b.add(self.x.heredoc_text(at, e))
            chars = b.build()
        if strip_tabs:
            keep = []
            bol = True
            for i, ch in enumerate(chars.text):
                if bol and ch == "\t":
                    continue
                bol = ch == "\n"
                keep.append(i)
            chars = Chars("".join(chars.text[i] for i in keep), [chars.pos[i] for i in keep],
                          [chars.res[i] for i in keep])
        return chars

    def _error(self, n) -> None:
        """Recover what tree-sitter could not fit: statements, and command-like runs of words."""
        kids = n.children
        i = 0
        while i < len(kids):
            k = kids[i]
            if k.type == "command_name":
                j = i + 1
                while j < len(kids) and kids[j].type in _WORDISH:
                    j += 1
                self._words_command(kids[i:j])
                i = j
                continue
            if k.is_named and k.type in _STMT:
                self.stmt(k)
            i += 1

    # -- commands -----------------------------------------------------------------
    def command(self, n, stdin: Chars | None = None) -> None:
        kids = n.children
        prefix = []
        words: list[_Field] = []
        for i, k in enumerate(kids):
            t = k.type
            if t == "variable_assignment" and not words:
                prefix.append(k)
                continue
            if t == "command_name" or n.field_name_for_child(i) == "argument":
                target = k.named_children[0] if t == "command_name" and k.named_child_count else k
                fs = self.x.fields(target)
                if len(fs) == 1:
                    fs[0].rm = self._remove(kids, i, _SEP_CMD)
                words.extend(fs)
            elif t == "herestring_redirect":
                ws = k.named_children
                if ws:
                    stdin = self.x.scalar(ws[-1])
            elif k.is_named:
                self.touch(k)
        self._run_words(n, words, prefix, stdin)

    def _words_command(self, nodes) -> None:
        """A command tree-sitter could only recover as loose words (inside an ERROR)."""
        words: list[_Field] = []
        for k in nodes:
            target = k.named_children[0] if k.type == "command_name" and k.named_child_count else k
            words.extend(self.x.fields(target))
        self._run_words(_FakeNode(nodes[0].start_byte, nodes[-1].end_byte), words, [], None)

    def _run_words(self, n, words: list[_Field], prefix: list, stdin: Chars | None) -> None:
        if not words:
            for p in prefix:  # X=1 $EMPTY: the assignments stay
                self._assignment(p)
            return
        head = words[0].text
        if head is not None and head in self.functions:
            self.call(head, words[1:])
            return
        if head == "shift" or (head == "set" and len(words) > 1 and words[1].text == "--"):
            self._set_positional(words)
            return
        if head in _READERS or (head == "printf" and len(words) > 2 and words[1].text == "-v"):
            self._reader(words)
            return
        penv: list[tuple[str, Chars | None, Span | None]] = []
        phints: list[Hint] = []
        for p in prefix:
            nm = p.child_by_field_name("name")
            val = p.child_by_field_name("value")
            if nm is None:
                continue
            name = self.src.nt(nm)
            chars = self.x.scalar(val) if val is not None else Chars()
            span = self.src.fanchor(*self.src.ns(p))
            penv.append((name, chars, span))
            phints.extend(env_hints(name, chars.text if chars is not None else None, span))
        cmd = unwrap(words)
        if cmd is None or not cmd.runs:
            return
        ex = _Exec(cmd, penv + [(name, None if v is None else v.chars, at.anchor()) for name, v, at in cmd.env],
                   phints + fact_hints(cmd.facts, _Field.anchor))
        if ex.cmd.match is not None:
            self._launch(n, ex)
        elif ex.cmd.shell_code is not None:
            self._inner_shell(n, ex, ex.cmd.shell_code.full, ex.cmd.shell_code)
        elif ex.cmd.python_code is not None:
            self._inner_python(n, ex, ex.cmd.python_code.full, ex.cmd.python_code.anchor())
        elif ex.cmd.stdin is not None and stdin is not None:
            fallback = self.src.fanchor(*self.src.ns(n))
            if ex.cmd.stdin == "python":
                self._inner_python(n, ex, stdin, fallback)
            else:
                self._inner_shell(n, ex, stdin, None, fallback=fallback)

    def _set_positional(self, words: list[_Field]) -> None:
        """``shift [n]`` and ``set -- args``."""
        if words[0].text == "set":
            self.positional = _elems(words[2:])
            return
        if self.positional is None:
            return
        n = words[1].text if len(words) > 1 else "1"
        if n is None or not n.isdigit() or any(el.splat for el in self.positional[:int(n)]):
            self.positional = None
        else:
            self.positional = self.positional[int(n):]

    def _reader(self, words: list[_Field]) -> None:
        """``read``/``mapfile``/``getopts``/``printf -v``: the variables they set become unknown."""
        cmd = words[0].text
        names: list[str] = []
        if cmd == "printf":
            names = [words[2].text or ""]
        elif cmd == "getopts":
            names = [f.text or "" for f in words[2:3]]
        else:
            with_value = _READER_OPTS.get(cmd, set())
            skip = False
            for f in words[1:]:
                t = f.text
                if skip or t is None:
                    skip = False
                    continue
                if t in with_value:
                    skip = True
                elif not t.startswith("-"):
                    names.append(t)
        for name in names:
            if _NAME.match(name):
                self.bind(name, _Binding(_UNKNOWN, assign=_Assign(name, None)))

    def _remove(self, kids, i: int, sep: re.Pattern) -> Span | None:
        """The span that deletes ``kids[i]`` with its separator from a neighbour."""
        src = self.src
        s, e = src.ns(kids[i])
        prev = kids[i - 1] if i > 0 else None
        if prev is not None and prev.is_named:
            ps = src.ns(prev)[1]
            if sep.fullmatch(src.text[ps:s]):
                return src.fspan(ps, e)
        nxt = kids[i + 1] if i + 1 < len(kids) else None
        if nxt is not None and nxt.is_named:
            ns_ = src.ns(nxt)[0]
            if sep.fullmatch(src.text[e:ns_]):
                return src.fspan(s, ns_)
        if prev is not None:
            ps = src.ns(prev)[1]
            if sep.fullmatch(src.text[ps:s]):
                return src.fspan(ps, e)
        return src.fspan(s, e)

    # -- nested code ------------------------------------------------------------------
    def _child_env(self, ex: _Exec) -> _Env:
        env = _Env()
        if not ex.cmd.clean_env:
            for name in self.env.exported:
                b = self.env.vars.get(name)
                if b is not None:
                    env.vars[name] = b
                    env.exported.add(name)
        for name, chars, span in ex.env:
            a = _Assign(name, span, exported=True)
            env.vars[name] = _Binding(_SCALAR, chars, assign=a) if chars is not None else \
                _Binding(_UNKNOWN, assign=a)
            env.exported.add(name)
        return env

    def _outer_hints(self, ex: _Exec) -> list[Hint]:
        """The launch's hints, nearest first: its wrappers, the script's environment, the container's."""
        return ex.hints + ([] if ex.cmd.clean_env else self._env_hints()) + list(self.hints)

    def _inner_shell(self, n, ex: _Exec, chars: Chars, field: _Field | None, fallback: Span | None = None) -> None:
        if self.depth > _MAX_DEPTH or not chars.text.strip():
            return
        pos = list(chars.pos)
        last = next((p for p in reversed(pos) if p is not None), None)
        pos.append(last + 1 if last is not None and pos[-1] is not None else None)
        inner = _Src(chars.text, pos, list(chars.res), fallback or (field.anchor() if field else None))
        sub = _Walker(self.scan, inner, self._child_env(ex), self._outer_hints(ex), depth=self.depth + 1,
                      disabled=self._disabled(n))
        sub.walk()

    def _inner_python(self, n, ex: _Exec, chars: Chars, fallback: Span) -> None:
        if "sglang" not in chars.text.lower() and "kv_cache" not in chars.text:
            return
        try:
            from kv4lint.frontends.python import scan_python
        except ImportError:
            return
        except Exception as e:  # a broken Python frontend must not lose this file's shell launches
            self.scan.errors.append(FileError(self.scan.path, f"could not load the Python frontend "
                                                              f"({type(e).__name__}: {e})"))
            return
        outer: list[int] = []
        prev = fallback.start
        for p in chars.pos:
            if p is None:
                p = prev
            outer.append(p)
            prev = p
        outer.append(outer[-1] + 1 if outer else fallback.start)
        try:
            res = scan_python(chars.text, self.scan.path, origin=OffsetMap(outer))
        except Exception as e:  # the other frontend must not stop this one
            self.scan.errors.append(FileError(self.scan.path, f"could not scan embedded Python "
                                                              f"({type(e).__name__}: {e})"))
            return
        hints = self._outer_hints(ex)
        dis = self._disabled(n)
        # Text this shell expanded into the code ("$D" in an unquoted heredoc): where it came from.
        through = {p: r for p, r in zip(chars.pos, chars.res) if p is not None and r is not None}
        for launch in res.launches:
            launch.hints = dedupe_hints(list(launch.hints) + hints)
            launch.disabled = frozenset(launch.disabled) | dis
            self.scan.other.append((launch, through))
        self.scan.errors.extend(res.errors)

    # -- launches ------------------------------------------------------------------------
    def _env_hints(self) -> list[Hint]:
        out: list[Hint] = []
        for name in (*PLATFORM_ENV, *PLATFORM_SWITCH_ENV):
            b = self.env.vars.get(name)
            if b is None or b.kind == _UNSET or (b.assign is not None and b.assign.seeded):
                continue
            value = b.chars.text if b.kind == _SCALAR and b.chars is not None else None
            how = "export" if name in self.env.exported else None
            out.extend(env_hints(name, value, b.assign.span if b.assign else None, how=how))
        return out

    def _launch(self, n, ex: _Exec) -> None:
        m = ex.cmd.match
        entry = ex.cmd.words[:m.start]
        argv = ex.cmd.words[m.start:]
        first, last = entry[0], entry[-1]
        if first.src is last.src and first.s <= last.e:
            anchor = first.src.fanchor(first.s, last.e)
        else:
            anchor = last.anchor()
        span = self.src.fanchor(*self.src.ns(n))
        hints = dedupe_hints(self._outer_hints(ex))
        self.scan.pending.append(_Pending(m.entry, span, anchor, argv, hints, self._disabled(n)))

    def _disabled(self, n) -> frozenset[str]:
        """Codes disabled by ``# kv4lint: disable=...`` comment lines right above the statement."""
        if self.inherited_disabled is not None:
            return self.inherited_disabled
        src = self.src
        out: set[str] = set()
        for line in {src.line(src.c(b)) for b in (n.start_byte, *self.chain)}:
            out |= codes_above(src.line_text, line)
        return frozenset(out)

    # -- the walk --------------------------------------------------------------------------
    def walk(self, root=None) -> None:
        if root is None:
            tree = _parse(self.src.data)
            root = tree.root_node
        self.run(root.named_children)
        self.finish_functions()


class _FakeNode:
    """Stands for a command tree-sitter recovered only as loose words."""

    type = "command"

    def __init__(self, start_byte: int, end_byte: int):
        self.start_byte = start_byte
        self.end_byte = end_byte


_WORDISH = {"word", "string", "raw_string", "concatenation", "expansion", "simple_expansion", "number",
            "ansi_c_string", "command_substitution", "translated_string"}

_STMT: dict[str, Callable] = {
    "command": _Walker.command,
    "variable_assignment": _Walker._assignment,
    "variable_assignments": _Walker._assignments,
    "declaration_command": _Walker._declaration,
    "unset_command": _Walker._unset,
    "redirected_statement": _Walker._redirected,
    "pipeline": _Walker._pipeline,
    "list": _Walker._list,
    "subshell": _Walker._subshell_node,
    "compound_statement": _Walker._compound,
    "do_group": _Walker._compound,
    "negated_command": _Walker._negated,
    "if_statement": _Walker._if,
    "for_statement": _Walker._for,
    "select_statement": _Walker._for,
    "c_style_for_statement": _Walker._c_for,
    "while_statement": _Walker._while,
    "case_statement": _Walker._case,
    "function_definition": _Walker._function,
    "test_command": _Walker.touch,
    "ERROR": _Walker._error,
}


# ===========================================================================
# The launch builder


def _to_value(f: _Field) -> Value:
    """An argv token as a model Value: text, span, provenance, use, shared, remove."""
    if f.unknown:
        use = None
        if f.src.fspan(f.s, f.e) is None:  # in a re-parsed text: report at the unknown part itself
            use = next((r.use for c, r in zip(f.full.text, f.full.res) if c == _HOLE and r is not None), None)
        return Value(None, None, Provenance.UNKNOWN, use=use or f.anchor(), splat=f.splat, remove=f.rm)
    chars = f.chars
    span = chars.span()
    res = chars.res
    if any(r is not None for r in res):
        assigns: set = set()
        uses = set()
        for r in res:
            if r is not None:
                assigns |= r.assigns
                uses.add(r.use)
            else:
                uses.add(None)
        use = next(iter(uses)) if len(uses) == 1 and None not in uses else f.anchor()
        shared = any(a.shared for a in assigns)
        return Value(chars.text, span, Provenance.RESOLVED, use=use, shared=shared, remove=f.rm, quote=f.quote,
                     offsets=_offsets(chars))
    return Value(chars.text, span, Provenance.LITERAL, remove=f.rm, quote=f.quote, offsets=_offsets(chars))


def _offsets(chars: Chars) -> tuple[int, ...] | None:
    """Per-character file offsets, for editing part of a word (``--flag="value"``)."""
    pos = chars.pos
    if pos is None or chars.span() is not None or any(p is None for p in pos):
        return None
    return tuple(pos)


def _through(v: Value, through: dict) -> Value:
    """A Python frontend's value whose characters this shell expanded from a variable: mark it resolved."""
    if v.span is None or v.span.start == v.span.end:
        return v
    rs = [through.get(p) for p in range(v.span.start, v.span.end)]
    if any(r is None for r in rs) or len({id(r.use) if r.use is None else r.use for r in rs}) != 1:
        return v
    assigns = set().union(*(r.assigns for r in rs))
    return replace(v, provenance=Provenance.RESOLVED, use=rs[0].use or v.use,
                   shared=v.shared or any(a.shared for a in assigns))


def _mark_resolved(launch: Launch, through: dict) -> None:
    launch.argv = [_through(v, through) for v in launch.argv]
    launch.positional = [_through(v, through) for v in launch.positional]
    launch.kwargs = {k: _through(v, through) for k, v in launch.kwargs.items()}


def _build(scan: _Scan, path: str) -> list[Launch]:
    out: list[Launch] = []
    seen = set()
    for p in scan.pending:
        argv = [_to_value(f) for f in p.argv]
        key = (p.span, p.entry, tuple((v.text, v.span, v.use, v.provenance, v.shared) for v in argv))
        if key in seen:
            continue
        seen.add(key)
        out.append(Launch(path=path, form="argv", entry=p.entry, span=p.span, anchor=p.anchor, argv=argv,
                          hints=p.hints, language="shell", disabled=p.disabled))
    for launch, through in scan.other:
        if through:
            _mark_resolved(launch, through)
        out.append(launch)
    out.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return out


# ===========================================================================
# Syntax errors and file-level directives


def _first_error(root):
    """The first ERROR or MISSING node, depth first (subtrees without errors skipped)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing or n.type == "ERROR":
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def _syntax_error(root, src: _Src, scan: _Scan, origin: OffsetMap | None) -> None:
    n = _first_error(root)
    if n is None:
        return
    s, e = src.ns(n)
    quote = next((k for k in n.children if not k.is_named and k.type in ('"', "'", "`", "$(", "${")), None)
    if n.is_missing:
        what = "unterminated heredoc (no closing delimiter line)" if n.type == "heredoc_end" else \
            f"missing {n.type!r}"
    elif quote is not None:  # an opening quote tree-sitter could not match
        s = src.ns(quote)[0]
        what = f"unterminated {quote.type}"
    else:
        snippet = src.text[s:e].strip().split("\n", 1)[0]
        if len(snippet) > 30:
            snippet = snippet[:27] + "..."
        what = f"cannot parse {snippet!r}" if snippet else "unexpected end of input"
    if origin is None:
        line = src.line(s)
    elif scan.file_text is not None:
        line = LineIndex(scan.file_text).position(origin.offset(s)).line
    else:
        line = src.line(s)
        what += " (line counted in the embedded shell text)"
    scan.errors.append(FileError(scan.path, f"shell syntax error near line {line}: {what}", line=line))


# ===========================================================================
# Public API


def scan_shell(text: str, path: str, *, origin: OffsetMap | None = None, env: dict[str, str] | None = None,
               hints: list[Hint] | None = None, file_text: str | None = None) -> ScanResult:
    """Find the SGLang launches in a shell script (or a shell text embedded in a file).

    ``origin`` maps offsets in ``text`` to offsets in the file when ``text`` is
    embedded (a ``RUN`` line, a YAML block, a Python string): every span is
    then a file span (``None`` where the text is not written verbatim).
    ``env`` pre-seeds variables the container sets (Dockerfile ``ENV``/``ARG``,
    Kubernetes ``env:``); ``hints`` are added to every launch found (the
    container's own target hints: give env-var hints there, with their spans).
    ``file_text`` (the whole file, with ``origin``) lets syntax errors be
    reported at file lines.  Never raises.
    """
    result = ScanResult()
    try:
        result.disabled = file_codes(text)
    except Exception:  # pragma: no cover - defensive
        pass
    if "sglang" not in text and not any("sglang" in v for v in (env or {}).values()):
        return result
    scan = _Scan(path, file_text)
    try:
        pos = list(origin.outer) if origin is not None else None
        fallback = origin.anchor(Span(0, min(len(text), 1))) if origin is not None and text else None
        src = _Src(text, pos, None, fallback)
        genv = _Env()
        for name, value in (env or {}).items():
            genv.vars[name] = _Binding(_SCALAR, Chars(str(value)), assign=_Assign(name, None, seeded=True))
            genv.exported.add(name)
        walker = _Walker(scan, src, genv, list(hints or []))
        tree = _parse(src.data)
        root = tree.root_node
        if root.has_error:
            _syntax_error(root, src, scan, origin)
        walker.walk(root)
    except RecursionError:
        scan.errors.append(FileError(path, "shell text too deeply nested to scan fully"))
    except Exception as e:  # never let one file stop the run
        scan.errors.append(FileError(path, f"internal error in the shell frontend ({type(e).__name__}: {e})"))
    try:
        result.launches = _build(scan, path)
    except Exception as e:  # pragma: no cover - defensive
        scan.errors.append(FileError(path, f"internal error in the shell frontend ({type(e).__name__}: {e})"))
    result.errors = scan.errors
    return result


def split_words(text: str, *, origin: OffsetMap | None = None) -> list[Value]:
    """The argv a shell would produce for one simple command written as ``text``.

    For ``shlex.split("...")`` and ``subprocess.run("...", shell=True)``
    argument strings: quotes and escapes are removed, ``$VAR`` is unknown
    (there is no script to resolve it from), spans are mapped through
    ``origin``.  Leading ``VAR=value`` words are kept, as ``shlex.split`` does.
    Only the first simple command is returned; never raises.
    """
    try:
        if not text.strip():
            return []
        pos = list(origin.outer) if origin is not None else None
        src = _Src(text, pos, None, origin.anchor(Span(0, min(len(text), 1))) if origin is not None else None)
        scan = _Scan("<string>", None)
        walker = _Walker(scan, src, _Env(), [])
        root = _parse(src.data).root_node
        stack = [root]
        cmd = None
        while stack:
            n = stack.pop()
            if n.type == "command":
                cmd = n
                break
            stack.extend(reversed(n.named_children))
        if cmd is None:
            return []
        kids = cmd.children
        fields: list[_Field] = []
        for i, k in enumerate(kids):
            if k.type == "variable_assignment" or k.type == "command_name" or \
                    cmd.field_name_for_child(i) == "argument":
                target = k.named_children[0] if k.type == "command_name" and k.named_child_count else k
                fs = walker.x.fields(target)
                if len(fs) == 1:
                    fs[0].rm = walker._remove(kids, i, _SEP_CMD)
                fields.extend(fs)
        return [_to_value(f) for f in fields]
    except Exception:
        return []
