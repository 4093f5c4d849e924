"""YAML nodes with positions: composing a document, reading its nodes, and where each character is.

Shared by the YAML reader and the SGLang ``--config`` reader: :func:`compose`
(ruamel.yaml, safe: no tags are constructed), node accessors, :func:`scalar_map`
(a scalar's value with the file offset of each character, through quotes,
escapes and folding) and the argv :class:`~kv4lint.frontends.argv_lists.Word`
of a scalar or a sequence, with removal spans.
"""

from __future__ import annotations

import re
import warnings

from kv4lint.base.file_error import FileError
from kv4lint.base.model import Provenance, Span, Value
from kv4lint.base.process import imports_kept
from kv4lint.base.record import Record
from kv4lint.base.source import OffsetMap
from kv4lint.frontends.argv_lists import Word, removal_spans
from kv4lint.frontends.embedded import TextBuilder

# ---------------------------------------------------------------------------
# Composing


# ruamel's pure-Python composer costs about 60 us a node. Nearly every node follows a line break, a comma or a
# colon, so their count, taken without parsing, measures the work: a text with more than this many (about 6 s of
# composing; a real manifest has a few thousand) is a file error naming the limit, never composed.
MAX_YAML_SEPARATORS = 100_000
# Merge keys (``<<: *base``) copy a mapping's pairs into another, and a chain of them can copy exponentially many
# (issue 34: a 1 KB file of ``<<: [*a, *a]`` took 25 s).  Each mapping's merges are expanded once, and the pairs
# all expansions of a file make together are bounded: past this many (a real file makes a few hundred), the
# file is a file error naming the limit.
MAX_YAML_MERGED = 100_000


def compose(text: str, path: str) -> tuple[list, list[FileError]]:
    """The documents' root nodes (those read before any syntax error) and the errors."""
    with imports_kept():
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

    docs: list = []
    errors: list[FileError] = []
    if text.count("\n") + text.count(",") + text.count(":") > MAX_YAML_SEPARATORS:
        errors.append(FileError(path, f"YAML of more than {MAX_YAML_SEPARATORS} line breaks, commas and colons "
                                      "(the limit kv4lint reads): not scanned"))
        return docs, errors
    try:
        y = YAML(typ="safe", pure=True)
        with warnings.catch_warnings():
            # An anchor defined twice is valid YAML (an alias names the latest): ruamel's warning would print
            # the scanned file's lines on stderr, naming no file.
            warnings.simplefilter("ignore")
            for doc in y.compose_all(text):
                if doc is not None:
                    docs.append(doc)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = (e.problem or e.context or "syntax error").strip()
        hint = " (a template, not YAML?)" if "{{" in text or "{%" in text else ""
        errors.append(FileError(path, f"cannot parse YAML{hint}: {what}", line))
    except YAMLError as e:
        errors.append(FileError(path, f"cannot parse YAML: {e}"))
    except RecursionError:
        errors.append(FileError(path, "YAML too deeply nested to read"))
    except Exception as e:  # noqa: BLE001 - the parser must not stop the run
        errors.append(FileError(path, f"cannot parse YAML ({type(e).__name__}: {e})"))
    try:
        if "<<" in text or "merge" in text:  # ``<<``, or the tag ``!!merge`` on another key
            _expand_merges(docs)
    except MergeLimit:
        errors.append(FileError(path, f"YAML merge keys (<<) expanding to more than {MAX_YAML_MERGED} pairs (the "
                                      "limit kv4lint reads): not scanned"))
        return [], errors
    return docs, errors


def is_map(node) -> bool:
    return type(node).__name__ == "MappingNode"


def is_seq(node) -> bool:
    return type(node).__name__ == "SequenceNode"


def is_scalar(node) -> bool:
    return type(node).__name__ == "ScalarNode"


def items(node) -> list[tuple[object, object]]:
    """A mapping's (key, value) pairs, merge keys (``<<``) expanded the way PyYAML does.

    A mapping's merges are expanded once, when the document is composed (:func:`_expand_merges`), into the
    node's ``merge`` slot (ruamel's place for a mapping's merged pairs, which only its round-trip constructor
    fills: kv4lint never constructs), so that reading them costs what the pairs are, whatever the chain of
    ``<<`` aliases behind them."""
    if not is_map(node):
        return []
    if node.merge is not None:
        return node.merge
    return [(k, v) for k, v in node.value if not _is_merge(k)]


def _merge_sources(node) -> list:
    """The mappings a mapping's ``<<`` keys name, in order."""
    out = []
    for k, v in node.value:
        if _is_merge(k):
            out.extend([v] if is_map(v) else [s for s in v.value if is_map(s)] if is_seq(v) else [])
    return out


class _Merged(list):
    """A mapping's pairs with its merges expanded, and ``index``: each scalar key's last pair (what
    :func:`get` answers), so that a lookup costs the same whatever the number of pairs merged in."""

    __slots__ = ("index",)

    def __init__(self, pairs: list[tuple[object, object]]) -> None:
        super().__init__(pairs)
        self.index = {k.value: (k, v) for k, v in pairs if is_scalar(k)}


def _merged(node) -> _Merged:
    """``node``'s pairs with its sources' (already expanded) pairs merged in front: its own keys win, and of
    the sources the first that has a key."""
    own = [(k, v) for k, v in node.value if not _is_merge(k)]
    keys = {k.value for k, _ in own if is_scalar(k)}
    seen: set = set()
    out = []
    for src in _merge_sources(node):
        for k, v in items(src):
            kv = k.value if is_scalar(k) else id(k)
            if kv in keys or kv in seen:
                continue
            seen.add(kv)
            out.append((k, v))
    return _Merged(out + own)


class MergeLimit(Exception):
    """A document whose merge keys expand past :data:`MAX_YAML_MERGED` pairs."""


def _expand_merges(docs: list) -> None:
    """Expand the merge keys of every mapping of ``docs`` once, sources first (iteratively: a chain of
    aliases is not a nesting of calls), counting the pairs made; past :data:`MAX_YAML_MERGED`, raise
    :class:`MergeLimit`.  A mapping that merges itself (an alias to an anchor still open) merges nothing
    from itself."""
    total = 0
    seen: set[int] = set()
    stack = [(d, False) for d in reversed(docs)]
    while stack:
        node, ready = stack.pop()
        if ready:
            node.merge = None
            node.merge = _merged(node)
            total += len(node.merge)
            if total > MAX_YAML_MERGED:
                raise MergeLimit()
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_map(node):
            if any(_is_merge(k) for k, _ in node.value):
                stack.append((node, True))
                stack.extend((s, False) for s in reversed(_merge_sources(node)) if id(s) not in seen)
            stack.extend((c, False) for pair in reversed(node.value) for c in pair if id(c) not in seen)
        elif is_seq(node):
            stack.extend((c, False) for c in reversed(node.value) if id(c) not in seen)


def _is_merge(k) -> bool:
    return is_scalar(k) and (k.tag == "tag:yaml.org,2002:merge" or (k.value == "<<" and k.style is None))


def _pair(node, key: str) -> tuple[object, object] | None:
    """The pair of ``key``; of a key written twice, the last (what PyYAML and a JSON parser keep)."""
    if not is_map(node):
        return None
    if node.merge is not None:
        return node.merge.index.get(key)
    for k, v in reversed(node.value):
        if is_scalar(k) and k.value == key:
            return k, v
    return None


def get(node, key: str):
    """The value of ``key`` (:func:`_pair`)."""
    pair = _pair(node, key)
    return pair[1] if pair is not None else None


def key_node(node, key: str):
    """The key node of ``key`` (:func:`_pair`)."""
    pair = _pair(node, key)
    return pair[0] if pair is not None else None


def scalar_text(node) -> str | None:
    return node.value if is_scalar(node) else None


def node_span(node) -> Span:
    return Span(node.start_mark.index, max(node.start_mark.index, node.end_mark.index))


# ---------------------------------------------------------------------------
# Scalars -> offset maps

_DQ_ESC = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
           "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
           "P": "\u2029"}
_HEX = {"x": 2, "u": 4, "U": 8}


class ScalarMap(Record):
    """A scalar's value and how its characters sit in the file (``verbatim``: the file span of the whole value
    when it is written verbatim)."""

    __slots__ = ("value", "omap", "verbatim", "quote")

    def __init__(self, value: str, omap: OffsetMap, verbatim: Span | None, quote: str = "") -> None:
        self.value = value
        self.omap = omap
        self.verbatim = verbatim
        self.quote = quote


def _fallback(value: str, at: int) -> OffsetMap:
    b = TextBuilder()
    b.synthetic(value, at)
    return OffsetMap(b.outer + [at])


def scalar_map(text: str, node) -> ScalarMap:
    """Map a scalar node's value to the file (verbatim where it can)."""
    value = node.value
    s, e = node.start_mark.index, node.end_mark.index
    style = node.style
    omap: OffsetMap | None = None
    quote = ""
    try:
        if style in ("|", ">"):
            omap = _block_map(text, s, e, value, folded=style == ">")
        elif style in ("'", '"'):
            quote = style
            if text[s:s + 1] == style and text[e - 1:e] == style:
                omap = _flow_map(text, s + 1, e - 1, value, style)
        else:
            if text[s:e] == value:
                omap = OffsetMap.contiguous(s, len(value))
            else:
                omap = _flow_map(text, s, e, value, "")
    except (IndexError, ValueError):
        omap = None
    if omap is None:
        omap = _fallback(value, s)
    verbatim = omap.span(Span(0, len(value))) if value else None
    if verbatim is not None and text[verbatim.start:verbatim.end] != value:
        verbatim = None
    return ScalarMap(value, omap, verbatim, quote)


def _flow_map(text: str, s: int, e: int, value: str, style: str) -> OffsetMap | None:
    """Plain or quoted flow scalar between ``s`` and ``e``: fold lines, decode escapes."""
    b = TextBuilder()
    i = s
    pending_breaks: list[int] = []  # offsets of line breaks since the last content
    pending_space: list[tuple[str, int]] = []  # trailing white space of the current line (kept if no break follows)
    first = True
    while i < e:
        c = text[i]
        if c in "\r\n":
            pending_space.clear()
            pending_breaks.append(i)
            i += 2 if text[i:i + 2] == "\r\n" else 1
            while i < e and text[i] in " \t":  # leading white space of the next line
                i += 1
            continue
        if c in " \t":
            pending_space.append((c, i))
            i += 1
            continue
        # content character: flush pending folds/spaces
        if pending_breaks:
            if len(pending_breaks) == 1:
                b.synthetic(" ", pending_breaks[0])
            else:
                for off in pending_breaks[1:]:
                    b.synthetic("\n", off)
            pending_breaks.clear()
        for ch, off in pending_space:
            b.verbatim(ch, off)
        pending_space.clear()
        first = False
        if style == "'" and c == "'" and text[i + 1:i + 2] == "'":
            b.mapped("'", [None])  # two characters for one: not verbatim
            i += 2
            continue
        if style == '"' and c == "\\":
            nxt = text[i + 1:i + 2]
            if nxt in ("\n", "\r"):  # escaped line break: joined without a space
                i += 1
                i += 2 if text[i:i + 2] == "\r\n" else 1
                while i < e and text[i] in " \t":
                    i += 1
                continue
            if nxt in _DQ_ESC:
                b.mapped(_DQ_ESC[nxt], [None])  # an escape: not verbatim
                i += 2
                continue
            if nxt in _HEX:
                n = _HEX[nxt]
                digits = text[i + 2:i + 2 + n]
                if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                    return None
                b.mapped(chr(int(digits, 16)), [None])
                i += 2 + n
                continue
            return None
        b.verbatim(c, i)
        i += 1
    for ch, off in pending_space:
        b.verbatim(ch, off)
    del first
    decoded, omap = b.build(end=e)
    if decoded != value:
        return None
    return omap


def _lines(text: str, start: int, end: int):
    """(line_start, content_end, break_end) for each line in ``text[start:end]``."""
    i = start
    while i < end:
        j = text.find("\n", i, end)
        if j < 0:
            yield i, end, end
            return
        ce = j - 1 if j > i and text[j - 1] == "\r" else j
        yield i, ce, j + 1
        i = j + 1


def _block_map(text: str, s: int, e: int, value: str, *, folded: bool) -> OffsetMap | None:
    nl = text.find("\n", s, e)
    if nl < 0:
        return OffsetMap([s] * (len(value) + 1)) if value == "" else None
    body = list(_lines(text, nl + 1, e))
    contents = [(ls, ce) for ls, ce, _ in body]
    indents = []
    for ls, ce in contents:
        k = ls
        while k < ce and text[k] == " ":
            k += 1
        if k < ce:
            indents.append(k - ls)
    if not indents:
        return OffsetMap([s] * (len(value) + 1)) if value.strip("\n") == "" else None
    auto = indents[0]
    for indent in [auto] + [n for n in range(1, auto) if n not in (auto,)]:
        omap = _block_try(text, contents, indent, value, folded, e)
        if omap is not None:
            return omap
    return None


def _block_try(text, contents, indent, value, folded, e) -> OffsetMap | None:
    b = TextBuilder()
    lines: list[tuple[str, int, int]] = []  # (content, file offset of content, offset of its line break)
    for ls, ce in contents:
        start = min(ls + indent, ce)
        if text[ls:start].strip(" ") != "":
            return None  # less indented content: not this indentation
        lines.append((text[start:ce], start, ce))
    if not folded:
        for content, off, brk in lines:
            b.verbatim(content, off)
            if brk < len(text) and text[brk] == "\n":
                b.verbatim("\n", brk)
            else:
                b.synthetic("\n", brk)
    else:
        prev = None  # kind of the previous content line: "normal" | "more"
        breaks: list[int] = []
        for content, off, brk in lines:
            if content == "":
                breaks.append(brk)
                continue
            kind = "more" if content[:1] in (" ", "\t") else "normal"
            if prev is None:
                for o in breaks:
                    b.synthetic("\n", o)
            elif prev == "normal" and kind == "normal":
                if len(breaks) == 1:
                    b.synthetic(" ", breaks[0])
                else:
                    for o in breaks[1:]:
                        b.synthetic("\n", o)
            else:
                for o in breaks:
                    b.synthetic("\n", o)
            b.verbatim(content, off)
            breaks = [brk]
            prev = kind
        for o in breaks:
            b.synthetic("\n", o)
    full, omap = b.build(end=e)
    if not full.startswith(value):
        return None
    n = len(value)
    return OffsetMap(omap.outer[:n] + [omap.outer[n] if n < len(omap.outer) else e])


def word_of(text: str, node, *, remove: Span | None = None, provenance: Provenance = Provenance.LITERAL) -> Word:
    """A scalar as one argv word (span when verbatim)."""
    sm = scalar_map(text, node)
    v = Value(sm.value, sm.verbatim, provenance, use=None if sm.verbatim else node_span(node),
              remove=remove, quote=sm.quote)
    return Word(v, sm.omap)


# Between two items of a sequence: spaces, line breaks, commas, "-" markers and comments.
_BETWEEN = re.compile(r"(?:[ \t\r\n,]|-(?=[ \t\r\n])|#[^\n]*)*")
_OPENING = re.compile(r"(?:[&!][^ \t\r\n,\[\]{}]*[ \t\r\n]*)*\[?")
_ALIAS = re.compile(r"\*([^ \t\r\n,\[\]{}]+)")


def _places(text: str, node) -> list[tuple[int, int, bool]] | None:
    """Where each item of a sequence is written: ``(start, end, alias)``.

    An alias item (``*kv``) is the anchored node itself, whose marks are where the anchor is: its own
    place is the ``*name`` token after the previous item.  None when an item cannot be placed.
    """
    out: list[tuple[int, int, bool]] = []
    pos = node.start_mark.index
    end = node.end_mark.index
    for k, x in enumerate(node.value):
        s, e = x.start_mark.index, x.end_mark.index
        if pos <= s and e <= end:
            out.append((s, e, False))
            pos = e
            continue
        if k == 0:  # the sequence's own anchor, tag and "[" come before its first item
            pos = _OPENING.match(text, pos).end()
        pos = _BETWEEN.match(text, pos).end()
        m = _ALIAS.match(text, pos)
        if m is None or m.group(1) != str(x.anchor):
            return None
        out.append((m.start(), m.end(), True))
        pos = m.end()
    return out


def sequence_words(text: str, node) -> list[Word] | None:
    """A sequence of scalars as argv words, each removable with its separator; None if not all scalars.

    An alias item (``[python3, -m, sglang.launch_server, --kv-cache-dtype, *kv]``) is its anchor's value, a
    resolved value reported at the alias (its text is the anchor's, shared: not edited from here).
    """
    if not is_seq(node):
        return None
    elems = node.value
    if not all(is_scalar(x) for x in elems):
        return None
    places = _places(text, node)
    if places is None:
        return None
    flow = node.flow_style if hasattr(node, "flow_style") else None
    if flow is None:
        flow = text[node.start_mark.index:node.start_mark.index + 1] == "["
    extents = [(s, e) for s, e, _alias in places]
    removes = flow_removal_spans(text, extents) if flow else [_block_item_removal(text, s, e) for s, e in extents]
    out = []
    for x, r, (s, e, alias) in zip(elems, removes, places):
        if alias:
            out.append(Word(Value(x.value, None, Provenance.RESOLVED, use=Span(s, e), shared=True, remove=r)))
        else:
            out.append(word_of(text, x, remove=r))
    return out


def _block_item_removal(text: str, s: int, e: int) -> Span | None:
    """The whole ``- item`` line(s) of the item (or ``*alias``) at ``s``..``e``, when it is alone on them."""
    ls = text.rfind("\n", 0, s) + 1
    prefix = text[ls:s]
    if not re.fullmatch(r"[ \t]*-[ \t]+", prefix):
        return None
    le = text.find("\n", e)
    le = len(text) if le < 0 else le + 1
    rest = text[e:le].strip()
    if rest and not rest.startswith("#"):
        return None
    if rest:  # ``- item  # note``: the comment stays, on its own line at the item's indentation
        return Span(ls + prefix.index("-"), text.index("#", e))
    return Span(ls, le)


def flow_removal_spans(text: str, extents: list[tuple[int, int]]) -> list[Span | None]:
    """:func:`~kv4lint.frontends.argv_lists.removal_spans` for a YAML flow sequence, whose separators may
    hold comments (``[a, b,  # note`` newline ``c]``).

    A comment is never removed.  Up to the first comment, each element goes with the separator before it
    (as in JSON); after it, the separator before an element holds a comment, so each element goes with the
    separator after it, up to the comment on its line if there is one, and the last element alone (YAML
    allows the comma left before ``]``).  Removing any set of elements leaves a well-formed sequence.
    """
    spans = removal_spans(extents)
    n = len(extents)
    first = next((k for k in range(1, n) if "#" in text[extents[k - 1][1]:extents[k][0]]), None)
    if first is None:
        return spans
    for k in range(first, n):
        s, e = extents[k]
        if k == n - 1:
            spans[k] = Span(s, e)
            continue
        nxt = extents[k + 1][0]
        h = text.find("#", e, nxt)
        spans[k] = Span(s, h if h >= 0 else nxt)
    return spans


def mapping_entry_removal(text: str, key, value) -> Span | None:
    """The whole ``key: value`` line(s) of a block mapping entry, when alone on them."""
    s = key.start_mark.index
    e = value.end_mark.index
    if value.start_mark.index < key.end_mark.index:  # an alias: its anchor's node is written elsewhere
        return None
    ls = text.rfind("\n", 0, s) + 1
    if text[ls:s].strip(" \t") != "":
        return None
    le = text.find("\n", e)
    le = len(text) if le < 0 else le + 1
    rest = text[e:le].strip()
    if rest and not rest.startswith("#"):
        return None
    if e > s and text[e - 1] == "\n":  # a block scalar ends after its line break
        return Span(ls, e)
    return Span(ls, le)
