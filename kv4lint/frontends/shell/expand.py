"""Shell words as bash expands them: variables, quoting, word splitting.

:class:`~kv4lint.frontends.shell.variables.Variables` holds what the script's
assignments set (merged over branches: what differs is a choice of the paths'
bindings, :mod:`.variables`); :class:`Expander` turns a word node into
the :class:`Field` tokens bash would produce -- quotes, escapes,
``$VAR``/``${VAR:-default}``, arrays, word splitting of unquoted expansions --
each character carrying the file offset it was written at and, when it came
through a variable, where that variable was used.  Nothing is guessed: a value
that depends on the environment or a command substitution is unknown.
"""

from __future__ import annotations

import re
from typing import Protocol

from kv4lint.base.model import ForeignString, Span
from kv4lint.frontends.shell.parse import Chars, CharsBuilder, ShellText, contiguous_span
from kv4lint.frontends.shell.variables import ARRAY, CHOICE, CONCAT, SCALAR, UNKNOWN, UNSET, Assignment, Binding, \
    Element, Ref, Variables, shared_parts, used_on_every_path

MAX_DEPTH = 60  # nesting of statements / substitutions / bash -c levels


class _Res:
    """Provenance of a character that came through variables: where it is used, and from which assignments."""

    __slots__ = ("use", "assigns")

    def __init__(self, use: Span | None, assigns: frozenset):
        self.use = use
        self.assigns = assigns


def _resolved(chars: Chars, use: Span | None, assigns: frozenset) -> Chars:
    """``chars`` as seen through a variable used at ``use``: the outermost use wins, assignments accumulate."""
    if chars.plain():  # (most values: written in the script, through no variable)
        return chars.with_res([_Res(use, assigns)] * len(chars.text))
    res = chars.res
    # each distinct provenance (a _Res is its own key) once, then every character through the map, in C
    new = {r: _Res(use, assigns | r.assigns if r is not None else assigns) for r in dict.fromkeys(res)}
    return chars.with_res(list(map(new.__getitem__, res)))


def setting_chars(name: str, value: str, *, exported: bool = True, seeded: bool = False) -> Chars:
    """A variable's value that another file may set (:class:`~kv4lint.base.model.ForeignString`): its characters
    at their offsets in that file, resolved through an assignment that names the file, so that a launch
    using it is fixed there (as an unsafe fix: other scripts read that file too).  A plain ``str``: its
    characters written nowhere."""
    if not isinstance(value, ForeignString) or value.path is None:
        return Chars(str(value))
    span = value.span()
    chars = Chars(str(value), at=span.start)
    return _resolved(chars, None, frozenset({Assignment(name, None, exported, seeded, path=value.path)}))


def _joined(pieces: list) -> Chars:
    out = CharsBuilder()
    for p in pieces:
        out.add(p)
    return out.build()


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

    def __init__(self, elems: list[Element], quoted: bool):
        self.elems = elems
        self.quoted = quoted


class _LazyRef:
    """A use of a variable whose value depends on the path, inside an assignment's value (Expander.lazy)."""

    __slots__ = ("binding",)

    def __init__(self, binding: Binding):
        self.binding = binding


class Field:
    """One argv token as bash would produce it, with where it was written."""

    __slots__ = ("chars", "full", "unknown", "splat", "src", "s", "e", "_rm", "_at", "quote")

    def __init__(self, chars: Chars, unknown: bool, splat: bool, src: ShellText, s: int, e: int,
                 rm: Span | None = None, quote: str = "", full: Chars | None = None):
        self.chars = chars  # the text (when unknown: the known text before the first unknown part)
        self.full = full if full is not None else chars  # all of it, unknown parts written as HOLE
        self.unknown = unknown or HOLE in chars.text
        self.splat = splat
        self.src = src
        self.s = s  # the word it came from, in src
        self.e = e
        self._rm = rm
        self._at: tuple | None = None  # (:meth:`removable`)
        self.quote = quote

    @property
    def text(self) -> str | None:
        return None if self.unknown else self.chars.text

    @property
    def rm(self) -> Span | None:
        """The span that deletes this word with its separator (None: it cannot be removed cleanly)."""
        at = self._at
        if at is not None:
            self._rm = self.src.removal(*at)
            self._at = None
        return self._rm

    @rm.setter
    def rm(self, span: Span | None) -> None:
        self._rm, self._at = span, None

    def removable(self, kids, spans: list[tuple[int, int]], i: int, sep) -> None:
        """This word is ``kids[i]``, deleted with a separator ``sep``: :attr:`rm`, worked out when it is read (most
        words of a script are in no launch, and no launch's word is removed unless a fix asks)."""
        self._at = (kids, spans, i, sep)

    @property
    def prefix(self) -> str:
        return self.chars.text

    @property
    def raw(self) -> str:
        return self.src.text[self.s:self.e]

    @property
    def suffix(self) -> str:
        t = self.full.text
        return self.chars.text if not self.unknown else t.rsplit(HOLE, 1)[1] if HOLE in t else ""

    def anchor(self) -> Span:
        return self.src.fanchor(self.s, self.e)

    def synth(self, text: str) -> "Field":
        """A made-up word reported where this one is (``python`` for ``torchrun -m``)."""
        return Field(Chars(text), False, False, self.src, self.s, self.e)

    def tail(self, k: int) -> "Field":
        """The word from character ``k`` on (the value of ``--opt=value``)."""
        return Field(self.chars[k:], self.unknown, False, self.src, self.s, self.e, full=self.full[k:])

    def concat(self, words: list["Field"]) -> "Field":
        """The words joined by spaces, as one shell string (what ``eval`` runs)."""
        b = CharsBuilder()
        for k, f in enumerate(words):
            if k:
                b.add(Chars(" "))
            b.add(f.full)
        chars = b.build()
        return Field(chars, False, False, words[0].src, words[0].s, words[-1].e, full=chars)

    def __repr__(self) -> str:
        return f"Field({self.text!r})"


class _Acc:
    """Accumulates the parts of one field during word splitting."""

    __slots__ = ("chars", "full", "unknown", "splat", "n", "rm")

    def __init__(self):
        self.chars = Chars()  # known text up to the first unknown part
        self.full = CharsBuilder()  # all of it, an unknown part written as HOLE
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
        self.full.add(Chars(HOLE, [None], [_Res(site, frozenset())]))


_IFS = re.compile(r"[^ \t\n]+")
EXPANSIONS = ("simple_expansion", "expansion")  # the node types of $NAME and ${...}
_DQ_PLAIN = re.compile(r'[^$`\\"]*')  # the inside of a double-quoted string that expands nothing
# Stands for an unknown part inside a text that is parsed again (bash -c "... $UNKNOWN ...").
HOLE = "\ue000"
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
         "\\": "\\", "'": "'", '"': '"', "?": "?"}
_CASE_OPS = {",,": str.lower, "^^": str.upper, ",": lambda s: s[:1].lower() + s[1:],
             "^": lambda s: s[:1].upper() + s[1:]}
_DEFAULT_OPS = {":-", "-", ":=", "=", ":+", "+", ":?", "?"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class ScanState(Protocol):
    """What expansion reads and records of the file's scan (value sets: kv4lint.frontends.shell.choices)."""

    selection: dict  # the path chosen at each join while a command is expanded once per path
    seen: list  # the joins met by the expansion under way
    consulted: list  # the joins whose bindings of several paths were read (Calls: what a walk read)
    partial: bool  # reading one choice at a time


class WalkState(Protocol):
    """What expanding a word reads and changes of the walk it is part of (the Walker,
    kv4lint.frontends.shell.walk, which builds on this module, never the reverse)."""

    src: ShellText
    env: Variables
    depth: int  # statements and expansions being read around the word
    deepest: int  # the greatest depth reached
    positional: list[Element] | None  # $1 $2 ...: None = unknown (the script's arguments)
    scan: ScanState

    def bind(self, name: str, b: Binding, *, local: bool = False) -> None: ...

    def touch(self, node) -> None: ...

    def subshell(self, nodes) -> None: ...

    def read_positional(self, elems) -> None: ...


class Expander:
    """Evaluates word nodes of one source the way bash expands them."""

    def __init__(self, walker: WalkState):
        self.w = walker
        self.src = walker.src
        self._every_path: dict[int, tuple] = {}  # used_on_every_path's assignments per binding, for this walk
        # Reading an assignment's value: a variable whose value depends on the path (a choice) is kept as a
        # Ref, read later on the path chosen then, instead of reading the assignment once per path.
        self.lazy = False
        self.lazy_target: str | None = None  # the variable the value is assigned to
        self.lazy_unresolved = False  # the value depends on a choice in a way only a reading per path can tell
        self.touching = 0  # > 0: expanding only for the variables used (Walker.touch), the value unread

    # -- public entry points ------------------------------------------------
    def fields(self, node) -> list[Field]:
        """The argv tokens one word node expands to (0, 1 or more)."""
        return self.fields_at(node, node.type, *self.src.ns(node))

    def fields_at(self, node, t: str, s: int, e: int) -> list[Field]:
        """:meth:`fields` of a node whose type ``t`` and place ``src.ns(node)`` (``s``, ``e``) the caller read."""
        w = self.w
        if (t == "word" or t == "number") and w.depth <= MAX_DEPTH:
            # Most words of a script: a plain word without escapes is its own text, one field (as parts and split
            # make it).
            src = self.src
            word = src.text[s:e]
            if "\\" not in word:
                if w.depth >= w.deepest:
                    w.deepest = w.depth + 1
                if e <= s:
                    return []
                # one field, its text and full text one Chars (as split makes it; src.chars, its slice made once)
                c = Chars(word, None, None, s) if src.pos is None and src.res is None else src.chars(s, e)
                # (by position: a call with keywords makes a dict of them, for each of the script's words)
                return [Field(c, False, False, src, s, e, None, "", c)]
        elif t == "string" and w.depth <= MAX_DEPTH and e - s >= 2:
            # A double-quoted string with no expansion or escape in it: its characters inside the quotes, one field
            # (as _string's parts and split make it).
            src = self.src
            text = src.text
            if text[s] == '"' and text[e - 1] == '"' and _DQ_PLAIN.fullmatch(text, s + 1, e - 1):
                if w.depth >= w.deepest:
                    w.deepest = w.depth + 1
                c = src.chars(s + 1, e - 1)
                return [Field(c, False, False, src, s, e, None, '"', c)]
            if node.child_count == 3 and text[s] == '"' and (mid := node.children[1]).type in EXPANSIONS:
                # "$MODEL": the quoted value of one expansion (what _string's parts give, without its walk over them)
                w.depth += 1
                if w.depth > w.deepest:
                    w.deepest = w.depth
                try:
                    parts = [_Lit(Chars()), *self.parts(mid, True)]
                finally:
                    w.depth -= 1
                fields = self.split(parts, s, e)
                if len(fields) == 1:
                    fields[0].quote = '"'
                return fields
        fields = self.split(self.parts(node, False), s, e)
        if len(fields) == 1 and t in ("string", "raw_string", "ansi_c_string"):
            fields[0].quote = "'" if t == "raw_string" else '"' if t == "string" else "$'"
        return fields

    def scalar(self, node) -> Chars | None:
        """The value of ``node`` in an assignment (no word splitting); None when unknown."""
        return self.join(self.parts(node, False))

    def lazy_scalar(self, node, target: str | None = None) -> "Chars | list | None":
        """An assignment's value (to ``target``): Chars, None when unknown, or the pieces of a CONCAT (Chars,
        Ref, None) when it uses a variable whose value depends on the path."""
        self.lazy, self.lazy_target, self.lazy_unresolved = True, target, False
        try:
            parts = self.parts(node, False)
        finally:
            self.lazy, self.lazy_target = False, None
        if not any(isinstance(p, _LazyRef) for p in parts):
            return self.join(parts)
        pieces: list = []
        text = CharsBuilder()
        pending = False
        for p in parts:
            if isinstance(p, _Lit):
                if p.chars.text:  # ("" makes a word exist; nothing between pieces)
                    text.add(p.chars)
                    pending = True
                continue
            if pending:
                pieces.append(text.build())
                text, pending = CharsBuilder(), False
            if isinstance(p, _LazyRef):
                pieces.append(Ref(p.binding))
            elif isinstance(p, _Arr):
                j = self.join([p])
                pieces.append(j)  # None: unknown
            else:
                pieces.append(None)
        if pending:
            pieces.append(text.build())
        return pieces

    @staticmethod
    def join(parts: list) -> Chars | None:
        out = CharsBuilder()
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
    def split(self, parts: list, s: int, e: int) -> list[Field]:
        src = self.src
        if len(parts) == 1 and type(parts[0]) is _Lit and not parts[0].split or \
                parts and all(type(p) is _Lit and not p.split for p in parts):
            # Known text, not split (a literal or quoted word): one field of all of it, as _split_all makes it
            # (its text and full text one Chars: no Chars is changed once made).
            if len(parts) == 1:
                c = parts[0].chars
            else:
                c = CharsBuilder.concat([p.chars for p in parts])
            return [Field(c, False, False, src, s, e, None, "", c)]
        return self._split_all(parts, s, e)

    def _split_all(self, parts: list, s: int, e: int) -> list[Field]:
        """:meth:`split` for any parts: known text, unknown values, arrays, word splitting."""
        src = self.src
        fields: list[Field] = []
        cur: _Acc | None = None

        def flush():
            nonlocal cur
            if cur is not None:
                fields.append(Field(cur.chars, cur.unknown, cur.splat and cur.n == 1, src, s, e, cur.rm,
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
                    rm = contiguous_span(chars.pos[toks[k - 1][1]:b])
                elif len(toks) > 1:
                    rm = contiguous_span(chars.pos[a:toks[1][0]])
                else:
                    rm = contiguous_span(chars.pos[a:b])
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
        if w.depth > MAX_DEPTH:
            w.too_deep(node)
            return [_Unk(not quoted)]
        w.depth += 1
        if w.depth > w.deepest:
            w.deepest = w.depth
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
        if t in EXPANSIONS:
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
        out = CharsBuilder()
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
        out = CharsBuilder()
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

    def touch_name(self, node) -> bool:
        """Walker.touch of ``$NAME``/``${NAME}``: only what its lookup records, no value built; False for the rest."""
        named = node.named_children
        if len(named) != 1 or named[0].type != "variable_name" or node.type == "expansion" and node.child_count != 3 \
                or not NAME.match(name := self.src.nt(named[0])):
            return False
        s, e = self.src.ns(node)
        self._lookup(name, None, (self.src.fanchor(s, e), s, len(self.src.text)))
        return True

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
        if not NAME.match(name) and not name.isdigit():
            return [_Unk(False)]  # $?, $$, $!, $#, $-, $0
        if self.lazy:
            b = self.w.env.vars.get(name)
            if b is not None and b.lazy and op is None and prefix is None and index is None:
                if name != self.lazy_target:  # ARGS="$ARGS --x" extends the value: no other use of it
                    used_on_every_path(b, key, self._every_path)
                return [_LazyRef(b)]
            self.lazy = False  # an operation on a choice (``${A:-x}``, ``${#A}``): read once per path
            before = len(self.w.scan.seen)
            try:
                return self._expand_name(name, index, key, prefix, op, operand, quoted, site, s, e)
            finally:
                self.lazy = True
                if len(self.w.scan.seen) > before:
                    self.lazy_unresolved = True
        return self._expand_name(name, index, key, prefix, op, operand, quoted, site, s, e)

    def _expand_name(self, name, index, key, prefix, op, operand, quoted, site, s, e) -> list:
        state = self._lookup(name, index, key)
        if prefix == "#":
            return self._length(state, index)
        if op is None:
            return self._value(state, quoted, site, index)
        if op in _DEFAULT_OPS:
            return self._default(name, state, op, operand, quoted, site, s, e, key)
        if op in _CASE_OPS and state[0] == SCALAR:
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
        elems: list[Element] = self.w.positional or []
        if name == "#":
            return [_Unk(False)] if any(el.splat for el in elems) else [_Lit(Chars(str(len(elems))))]
        read = not self.touching or op is not None  # echo "$*": the values are not read (Calls.read_positional)
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
            if read:
                self.w.read_positional(elems)
            if quoted and name == "*":
                j = self.join([_Arr(elems, True)])
                return [_Lit(j)] if j is not None else [_Unk(False)]
            return [_Arr(elems, quoted)]
        k = int(name)
        if k == 0 or any(el.splat for el in elems[:k - 1]):
            return [_Unk(not quoted)]
        el = elems[k - 1] if k <= len(elems) else None
        if read and el is not None:
            self.w.read_positional((el,))
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
        while b is not None and b.kind == CHOICE:
            self.w.scan.consulted.append(b.point)
            k = self.w.scan.selection.get(b.point)
            if k is None:  # the command is expanded again once per path (Walker.command)
                used_on_every_path(b, key, self._every_path)
                if self.w.scan.partial:
                    return self._read(b, key, index is not None, index)
                self.w.scan.seen.append(b.point)
                return ("unknown",)
            b = b.alts[k]
        if b is not None and b.kind == CONCAT:
            if b.assign is not None:
                b.assign.sites.add(key)
            return self._read(b, key, index is not None, index)
        if b is None:
            return ("ext",)
        if b.assign is not None:
            b.assign.sites.add(key)
        if b.kind == UNSET:
            return ("unset",)
        if b.kind == UNKNOWN:
            return ("unknown",)
        if b.kind == SCALAR:
            if b.chars is None:
                return ("unknown",)
            if index in ("@", "*"):
                return ("array", [Element(b.chars, False, None, b.assign)])
            if index is None or index == 0:
                return (SCALAR, b.chars, b.assign)
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
            return (SCALAR, el.chars, el.assign)
        return ("unset",)

    def _read(self, b: Binding, key, array: bool, index=None) -> tuple:
        """A CHOICE or CONCAT binding read on the selected paths: a state as :meth:`_lookup` gives it.

        A choice whose path is not selected is noted (the command is expanded again per path) and the value is
        unknown; when reading one choice at a time (``scan.partial``), what the paths of such a choice share (a
        value they all extend: ``A="$A --x"`` in one branch) is read and the rest is unknown ("partial").
        """
        pieces = self._pieces(b, array)
        if pieces is None:
            return ("unknown",)
        if array:
            elems = [p if isinstance(p, Element) else Element(None, True, None, None) for p in pieces]
            if index in ("@", "*") or index is None:
                return ("array", elems)
            if index == "?" or any(el.chars is None and el.splat for el in elems[:index + 1]):
                return ("unknown",)
            if index < len(elems) and elems[index].chars is not None:
                return (SCALAR, elems[index].chars, None)
            return ("unknown",) if index < len(elems) else ("unset",)
        if any(p is None for p in pieces):
            if not any(p is not None and p.text for p in pieces):
                return ("unknown",)
            return ("partial", pieces)
        out = CharsBuilder()
        for p in pieces:
            out.add(p)
        return (SCALAR, out.build(), None)

    def _pieces(self, b: Binding, array: bool) -> list | None:
        """The pieces of ``b`` on the selected paths: Chars (``array``: Element) or None (unknown); None when a
        choice is not selected and choices are not read one at a time."""
        scan = self.w.scan
        pieces: list = []
        stack: list = [(b, frozenset())]
        while stack:
            x, assigns = stack.pop()
            if x is None:
                if not pieces or pieces[-1] is not None:  # a run of unknown pieces is one unknown piece
                    pieces.append(None)
            elif isinstance(x, Chars):
                pieces.append(_resolved(x, None, assigns) if assigns else x)
            elif isinstance(x, Element):
                own = assigns | {x.assign} if x.assign is not None else assigns
                pieces.append(Element(_resolved(x.chars, None, own) if x.chars is not None else None,
                                      x.splat, x.remove, x.assign))
            elif isinstance(x, Ref):
                stack.append((x.binding, assigns))
            elif x.kind == CHOICE:
                scan.consulted.append(x.point)
                k = scan.selection.get(x.point)
                if k is not None:
                    stack.append((x.alts[k], assigns))
                    continue
                scan.seen.append(x.point)
                if not scan.partial:
                    return None
                head, tail = shared_parts(x)
                stack.extend((p, assigns) for p in reversed(tail))
                stack.append((None, assigns))
                stack.extend((p, assigns) for p in reversed(head))
            elif x.kind == CONCAT and (x.elems is not None) == array:
                own = assigns | {x.assign} if x.assign is not None else assigns
                stack.extend((p, own) for p in reversed(x.parts))
            elif x.kind == CONCAT and array:  # a string in an array: one element
                inner = self._pieces(x, False)
                if inner is None:
                    return None
                chars = None if any(p is None for p in inner) else _joined(inner)
                own = assigns | {x.assign} if x.assign is not None else assigns
                pieces.append(Element(_resolved(chars, None, own) if chars is not None else None, chars is None,
                                      None, x.assign))
            elif x.kind == CONCAT:  # $A of an array: its first element
                inner = self._pieces(x, True)
                if inner is None:
                    return None
                if not inner:
                    pieces.append(Chars())
                else:
                    pieces.append(inner[0].chars if inner[0] is not None else None)
            elif x.kind == SCALAR or x.kind == ARRAY:
                own = assigns | {x.assign} if x.assign is not None else assigns
                if x.kind == SCALAR and array:
                    pieces.append(Element(_resolved(x.chars, None, own), False, None, x.assign)
                                  if x.chars is not None else None)
                elif x.kind == SCALAR:
                    pieces.append(_resolved(x.chars, None, own) if x.chars is not None else None)
                elif array:
                    stack.extend((el, assigns) for el in reversed(x.elems or []))
                else:  # $A of an array: its first element
                    elems = x.elems or []
                    el = elems[0] if elems else None
                    pieces.append(Chars() if el is None else None if el.chars is None else _resolved(
                        el.chars, None, own | ({el.assign} if el.assign else set())))
            elif x.kind != UNSET:
                pieces.append(None)
        return pieces

    def _resolve_state(self, state: tuple, site: Span) -> Chars:
        chars, assign = state[1], state[2]
        return _resolved(chars, site, frozenset((assign,)) if assign is not None else frozenset())

    def _value(self, state: tuple, quoted: bool, site: Span, index) -> list:
        kind = state[0]
        if kind == SCALAR:
            return [_Lit(self._resolve_state(state, site), not quoted)]
        if kind == "array":
            elems = [
                Element(_resolved(el.chars, site, frozenset((el.assign,)) if el.assign else frozenset())
                        if el.chars is not None else None, el.splat, el.remove, el.assign)
                for el in state[1]
            ]
            if quoted and index == "*":
                j = self.join([_Arr(elems, True)])
                return [_Lit(j)] if j is not None else [_Unk(False)]
            return [_Arr(elems, quoted)]
        if kind == "unset":
            return [_Lit(Chars(), not quoted)]
        if kind == "partial":  # known pieces around unknown ones: each choice read on its own (scan.partial)
            return [_Lit(_resolved(p, site, frozenset()), not quoted) if isinstance(p, Chars) else
                    _Unk(not quoted, site) for p in state[1]]
        return [_Unk(not quoted or index == "@")]

    def _length(self, state: tuple, index) -> list:
        if state[0] == SCALAR:
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
        if kind == "unknown" or kind == "partial":
            for ch in operand:
                self.w.touch(ch)
            return [_Unk(not quoted)]
        is_set = kind in (SCALAR, "array")
        is_null = kind == SCALAR and state[1].text == ""
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
        touching = self.touching
        if base == "=":  # ${X:=$1} assigns the value, whatever word holds it: read (Calls.read_positional)
            self.touching = 0
        try:
            parts = self._seq(operand, ostart, oend, quoted, not quoted)
        finally:
            self.touching = touching
        if base == "=":
            chars = self.join(parts)
            a = Assignment(name, site)
            a.sites.add(key)
            self.w.bind(name, Binding(SCALAR, chars, assign=a) if chars is not None else
                        Binding(UNKNOWN, assign=a))
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
