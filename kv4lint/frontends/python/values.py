"""The partial values a launch is built from, and the operations on them.

A Python expression evaluates (:mod:`.evaluate`) to one of: :class:`StrValue`
(a string whose characters keep the offsets they were written at; parts may
be unknown :class:`Hole` s), :class:`ConstValue` (a bool, None or number),
:class:`ListValue` of :class:`ListItem` s (each with the span that removes it
cleanly), :class:`DictValue`, :class:`UnknownValue` (possibly a ``*splat``), or
:class:`ConvertedValue` (a word the shell frontend already made a Value).
Each carries its :class:`Origin`: the name at the launch site it came through.
"""

from __future__ import annotations

from kv4lint.base.model import Span, Value
from kv4lint.base.record import Frozen, Record


# ---------------------------------------------------------------------------
# Abstract values


class Origin(Frozen):
    """How a value reached the launch: ``use`` is the name at the launch site it came through."""

    __slots__ = ("use", "shared")

    def __init__(self, use: Span | None = None, shared: bool = False) -> None:
        self._set("use", use)
        self._set("shared", shared)


LITERAL = Origin()


class Segment(Record):
    """Known characters: ``offs`` gives, per character, its offset in the Python text if written verbatim, else
    None."""

    __slots__ = ("text", "offs", "org")

    def __init__(self, text: str, offs: list, org: Origin) -> None:
        self.text = text
        self.offs = offs
        self.org = org


class Hole(Record):
    """Unknown characters (an f-string's hole that names nothing kv4lint can resolve)."""

    __slots__ = ("where", "org")

    def __init__(self, where: Span | None, org: Origin) -> None:
        self.where = where
        self.org = org


class StrValue(Record):
    __slots__ = ("parts", "where", "quote")

    def __init__(self, parts: list, where: Span | None = None, quote: str = "") -> None:
        self.parts = parts
        self.where = where
        self.quote = quote

    @property
    def known(self) -> bool:
        return all(isinstance(p, Segment) for p in self.parts)

    @property
    def text(self) -> str | None:
        return "".join(p.text for p in self.parts) if self.known else None


class ConstValue(Record):
    """A non-string constant: True/False/None or a number (``text`` as str() gives it; ``kind``: ``"bool"``,
    ``"none"``, ``"int"`` or ``"float"``)."""

    __slots__ = ("text", "kind", "span", "org", "where")

    def __init__(self, text: str, kind: str, span: Span | None, org: Origin, where: Span | None = None) -> None:
        self.text = text
        self.kind = kind
        self.span = span
        self.org = org
        self.where = where


class UnknownValue(Record):
    """A value kv4lint cannot know (``splat``: it may be any number of items; ``tag`` ``"python"``:
    ``sys.executable``)."""

    __slots__ = ("where", "org", "splat", "tag")

    def __init__(self, where: Span | None = None, org: Origin = LITERAL, splat: bool = False,
                 tag: str | None = None) -> None:
        self.where = where
        self.org = org
        self.splat = splat
        self.tag = tag


class ListItem(Record):
    __slots__ = ("val", "remove")

    def __init__(self, val: object, remove: Span | None = None) -> None:
        self.val = val
        self.remove = remove


class ListValue(Record):
    __slots__ = ("items", "where")

    def __init__(self, items: list, where: Span | None = None) -> None:
        self.items = items
        self.where = where


class DictValue(Record):
    """``entries``: key -> :class:`ListItem`; ``open``: keys kv4lint cannot see may be present; ``keyspans``: key
    -> the span of the key's literal."""

    __slots__ = ("entries", "open", "where", "keyspans")

    def __init__(self, entries: dict, open: bool = False, where: Span | None = None,
                 keyspans: dict | None = None) -> None:
        self.entries = entries
        self.open = open
        self.where = where
        self.keyspans = {} if keyspans is None else keyspans


class ConvertedValue(Record):
    """An already converted Value (a word from the shell frontend's splitter)."""

    __slots__ = ("value", "where", "org")

    def __init__(self, value: Value, where: Span | None = None, org: Origin = LITERAL) -> None:
        self.value = value
        self.where = where
        self.org = org


class _Unbound:
    pass


UNBOUND = _Unbound()


def where_of(v) -> Span | None:
    return getattr(v, "where", None)


def origin_of(v) -> Origin:
    if isinstance(v, StrValue):
        for p in v.parts:
            if p.org.use is not None:
                return p.org
        return v.parts[0].org if v.parts else LITERAL
    return getattr(v, "org", LITERAL)


def restamped(v, org: Origin):
    """The value as seen through a name: its origin becomes ``org`` (the outermost name wins)."""
    if org is LITERAL:
        return v
    if isinstance(v, StrValue):
        parts = [Segment(p.text, p.offs, _merge_org(p.org, org)) if isinstance(p, Segment)
                 else Hole(p.where, _merge_org(p.org, org)) for p in v.parts]
        return StrValue(parts, v.where, v.quote)
    if isinstance(v, ConstValue):
        return ConstValue(v.text, v.kind, v.span, _merge_org(v.org, org), v.where)
    if isinstance(v, UnknownValue):
        return UnknownValue(v.where, _merge_org(v.org, org), v.splat, v.tag)
    if isinstance(v, ListValue):
        return ListValue([ListItem(restamped(i.val, org), i.remove) for i in v.items], v.where)
    if isinstance(v, DictValue):
        return DictValue({k: ListItem(restamped(i.val, org), i.remove) for k, i in v.entries.items()}, v.open, v.where,
                         dict(v.keyspans))
    return v


def _merge_org(inner: Origin, outer: Origin) -> Origin:
    return Origin(outer.use if outer.use is not None else inner.use, inner.shared or outer.shared)


def _same(a, b) -> bool:
    if isinstance(a, StrValue) and isinstance(b, StrValue):
        return a.known and b.known and a.text == b.text
    if isinstance(a, ConstValue) and isinstance(b, ConstValue):
        return a.text == b.text and a.kind == b.kind
    if isinstance(a, ListValue) and isinstance(b, ListValue):
        return len(a.items) == len(b.items) and all(_same(x.val, y.val) for x, y in zip(a.items, b.items))
    return False


def _strip_spans(v):
    """The same value, not editable in place (it has more than one source)."""
    if isinstance(v, StrValue):
        parts = [Segment(p.text, [None] * len(p.text), p.org) if isinstance(p, Segment) else p for p in v.parts]
        return StrValue(parts, v.where, v.quote)
    if isinstance(v, ConstValue):
        return ConstValue(v.text, v.kind, None, v.org, v.where)
    if isinstance(v, ListValue):
        return ListValue([ListItem(_strip_spans(i.val), None) for i in v.items], v.where)
    return v


def join_values(a, b, where: Span | None):
    """Either ``a`` or ``b`` (two paths): known only when both agree."""
    if a is UNBOUND:
        return b
    if b is UNBOUND:
        return a
    if _same(a, b):
        return _strip_spans(a)
    if isinstance(a, ListValue) or isinstance(b, ListValue):
        return UnknownValue(where, origin_of(a), splat=True)
    return UnknownValue(where, origin_of(a))


# ---------------------------------------------------------------------------
# Small helpers


def call_argument(call, index: int | None, keyword: str | None):
    """The expression passed as positional ``index`` or as ``keyword=`` (None if absent or behind a star)."""
    k = 0
    for a in call.args:
        if a.star:
            if a.keyword is None and index is not None and k <= index and a.star == "*":
                return None
            continue
        if a.keyword is not None:
            if keyword is not None and a.keyword.value == keyword:
                return a.value
            continue
        if index is not None and k == index:
            return a.value
        k += 1
    return None


def contiguous_span(offs: list) -> Span | None:
    if not offs or any(o is None for o in offs):
        return None
    first = offs[0]
    for k, o in enumerate(offs):
        if o != first + k:
            return None
    return Span(first, offs[-1] + 1)


def const_offsets(c: ConstValue) -> list:
    if c.span is not None and c.span.end - c.span.start == len(c.text):
        return list(range(c.span.start, c.span.end))
    return [None] * len(c.text)


def chars_of(s: StrValue) -> list:
    """(char, offset|None, org) per character; a hole is one ``("\\0", None, org, hole)`` entry."""
    out = []
    for p in s.parts:
        if isinstance(p, Segment):
            for ch, o in zip(p.text, p.offs):
                out.append((ch, o, p.org))
        else:
            out.append(("\0", None, p.org, p))
    return out


def from_chars(chars: list, where: Span | None, quote: str = "") -> StrValue:
    parts: list = []
    buf: list = []
    for c in chars:
        if len(c) == 4:
            if buf:
                parts.append(Segment("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
                buf = []
            parts.append(c[3])
        else:
            if buf and buf[-1][2] != c[2]:
                parts.append(Segment("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
                buf = []
            buf.append(c)
    if buf:
        parts.append(Segment("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
    return StrValue(parts or [Segment("", [], LITERAL)], where, quote)


def split_on_whitespace(chars: list) -> list:
    """``str.split()`` of a partly known string: words as StrValue; a word that is only a hole may be several."""
    out = []
    word: list = []

    def flush():
        if word:
            if len(word) == 1 and len(word[0]) == 4:
                h = word[0][3]
                out.append(UnknownValue(h.where, h.org, splat=True))
            else:
                out.append(from_chars(list(word), None))
            word.clear()

    for c in chars:
        if len(c) == 3 and c[0].isspace():
            flush()
        else:
            word.append(c)
    flush()
    return out


def joined_value(sep: str, lst: ListValue, where: Span, org: Origin) -> StrValue:
    parts: list = []
    for k, it in enumerate(lst.items):
        if k:
            parts.append(Segment(sep, [None] * len(sep), org))
        v = it.val
        if isinstance(v, StrValue):
            parts.extend(v.parts)
        elif isinstance(v, ConvertedValue):
            if v.value.known:
                parts.append(Segment(v.value.text, [None] * len(v.value.text), org))
            else:
                parts.append(Hole(v.value.use or v.value.span, org))
        elif isinstance(v, ConstValue):
            parts.append(Segment(v.text, const_offsets(v), v.org))
        else:
            parts.append(Hole(where_of(v), origin_of(v)))
    return StrValue(parts or [Segment("", [], org)], where)


def ipython_expand(s: StrValue) -> StrValue:
    """``{expr}`` in an IPython ``!`` command is a Python value: a hole (``{{``/``}}`` are braces)."""
    ch = chars_of(s)
    out: list = []
    i = 0
    while i < len(ch):
        c = ch[i]
        if len(c) == 3 and c[0] in "{}" and i + 1 < len(ch) and len(ch[i + 1]) == 3 and ch[i + 1][0] == c[0]:
            out.append((c[0], None, c[2]))
            i += 2
            continue
        if len(c) == 3 and c[0] == "{":
            j = i + 1
            while j < len(ch) and not (len(ch[j]) == 3 and ch[j][0] == "}"):
                j += 1
            if j < len(ch):
                offs = [x[1] for x in ch[i:j + 1] if x[1] is not None]
                where = Span(min(offs), max(offs) + 1) if offs else s.where
                out.append(("\0", None, c[2], Hole(where, c[2])))
                i = j + 1
                continue
        out.append(c)
        i += 1
    return from_chars(out, s.where, s.quote)


def python_word(v: "UnknownValue") -> "Segment":
    """``sys.executable`` inside a command string: some Python interpreter (not editable)."""
    return Segment("python3", [None] * 7, v.org)


_MAX_PARTS = 10_000  # pieces of one string value; past that it is unknown (x = x + x ...)
_MAX_ITEMS = 100_000  # items of one list value


def as_text(v):
    """A converted word with known text as a string value (not editable: its characters may be elsewhere)."""
    if isinstance(v, ConvertedValue) and v.value.known:
        return StrValue([Segment(v.value.text, [None] * len(v.value.text), v.org)], v.where)
    return v


def add_values(a, b, where: Span, org: Origin):
    a, b = as_text(a), as_text(b)
    if len(getattr(a, "parts", ())) + len(getattr(b, "parts", ())) > _MAX_PARTS:
        return UnknownValue(where, org)
    if len(getattr(a, "items", ())) + len(getattr(b, "items", ())) > _MAX_ITEMS:
        return UnknownValue(where, org, splat=True)
    if isinstance(a, UnknownValue) and a.tag == "python" and isinstance(b, StrValue):
        a = StrValue([python_word(a)], a.where)
    if isinstance(b, UnknownValue) and b.tag == "python" and isinstance(a, StrValue):
        b = StrValue([python_word(b)], b.where)
    if isinstance(a, StrValue) and isinstance(b, StrValue):
        return StrValue(a.parts + b.parts, where, a.quote)
    if isinstance(a, ListValue) and isinstance(b, ListValue):
        return ListValue(a.items + b.items, where)
    if isinstance(a, ListValue):
        return ListValue(a.items + [ListItem(UnknownValue(where_of(b), origin_of(b), splat=True))], where)
    if isinstance(b, ListValue):
        return ListValue([ListItem(UnknownValue(where_of(a), origin_of(a), splat=True))] + b.items, where)
    if isinstance(a, StrValue):
        return StrValue(a.parts + [Hole(where_of(b), origin_of(b))], where, a.quote)
    if isinstance(b, StrValue):
        return StrValue([Hole(where_of(a), origin_of(a))] + b.parts, where, b.quote)
    return UnknownValue(where, org)


def splatified(v, where, org):
    if isinstance(v, ListValue):
        return ListValue([ListItem(UnknownValue(where, org, splat=True))], where)
    if isinstance(v, StrValue):
        return StrValue([Hole(where, org)], where)
    return UnknownValue(where, org, splat=True)


def frame_relation(ev_frames: tuple, use_frames: tuple) -> str:
    """How an event before the use relates to it: certain, cond(itional) or loop (repeated)."""
    k = 0
    while k < len(ev_frames) and k < len(use_frames) and ev_frames[k] == use_frames[k]:
        k += 1
    rest = ev_frames[k:]
    if any(f[0] == "l" for f in rest):
        return "loop"
    if rest:
        return "cond"
    return "certain"


def shares_loop(ev_frames: tuple, use_frames: tuple) -> bool:
    k = 0
    while k < len(ev_frames) and k < len(use_frames) and ev_frames[k] == use_frames[k]:
        if ev_frames[k][0] == "l":
            return True
        k += 1
    return False


def truth_of(v) -> bool | None:
    """Python truthiness of a constant, None when unknown."""
    if isinstance(v, ConstValue):
        if v.kind in ("bool", "none"):
            return v.text == "True"
        try:
            return float(v.text) != 0
        except ValueError:
            return None
    if isinstance(v, StrValue) and v.known:
        return v.text != ""
    return None
