"""Text embedded in another format: building it, scanning it, and what the outer format adds.

Each container format (Dockerfile, YAML, Markdown, notebooks, Makefiles)
finds the shell or Python text embedded in it, builds an
:class:`~kv4lint.base.source.OffsetMap` from the embedded text to the file
(:class:`TextBuilder`, JSON strings with positions), and hands the text to
the shell or Python frontend (:func:`scan_shell_text`,
:func:`scan_python_text`), with the environment the outer format sets
(:func:`with_prelude`) and the suppression comments written in it
(:func:`apply_disabled`).  Argument lists that are data rather than text are
read in :mod:`kv4lint.frontends.argv_lists`.
"""

from __future__ import annotations

import re

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import Hint, ScanResult, Span, Value
from kv4lint.base.record import Record, replace
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.base.suppression import codes_above, file_codes, names_kv4lint
from kv4lint.files.prefilter import shell_may_launch
from kv4lint.frontends import budget, nested
from kv4lint.frontends.hints import NAME_WORD, PLATFORM_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# ---------------------------------------------------------------------------
# Building embedded texts piece by piece


class TextBuilder:
    """Accumulate an embedded text from verbatim file pieces and synthetic characters.

    Verbatim pieces map character by character to their file offsets;
    synthetic characters map to a given file offset (usually where the
    character stands in for something: a folded line break, a removed prompt),
    and never extend a verbatim run, so no span that covers them is editable.
    The map is kept as its pieces (a range for a verbatim one) until it is read
    (:meth:`kv4lint.base.source.OffsetMap.of_parts`).
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.maps: list = []  # per piece: a range (verbatim) or a list of offsets (None: not verbatim)
        self.length = 0

    def verbatim(self, text: str, start: int) -> None:
        self.parts.append(text)
        self.maps.append(range(start, start + len(text)))
        self.length += len(text)

    def mapped(self, text: str, outer: Sequence[int | None]) -> None:
        """Characters with their own offsets (``len(outer) >= len(text)``; ``None``: not written verbatim)."""
        self.parts.append(text)
        self.maps.append(outer[: len(text)])
        self.length += len(text)

    def synthetic(self, text: str, at: int) -> None:
        self.parts.append(text)
        # A decreasing run (at, at-1, ...) can never pass OffsetMap's contiguity
        # test, so a span over two or more synthetic characters is not editable.
        self.maps.append([max(0, at - k) if k else at for k in range(len(text))])
        self.length += len(text)

    def __len__(self) -> int:
        return self.length

    @property
    def outer(self) -> list[int | None]:
        return [o for part in self.maps for o in part]

    def build(self, end: int | None = None) -> tuple[str, OffsetMap]:
        if end is None:
            end = next((o + 1 for part in reversed(self.maps) for o in reversed(part) if o is not None), 0)
        return "".join(self.parts), OffsetMap.of_parts(self.maps + [(end,)])


# ---------------------------------------------------------------------------
# JSON strings with positions (Dockerfile exec form, notebooks)

_JSON_STR = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.S)
_JSON_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_TOML_HEX = {"U": 8, "x": 2}  # TOML's escapes besides JSON's (``\x`` and ``\e``: TOML 1.1)
_WS = re.compile(r"[ \t\r\n]*")


class JSONStringError(ValueError):
    pass


def json_string_at(text: str, i: int, *, toml: bool = False) -> tuple[str, Sequence[int | None], int]:
    """Decode the JSON string literal starting at ``text[i] == '"'`` (``toml``: a TOML basic string, whose
    escapes add ``\\UXXXXXXXX``, ``\\xHH`` and ``\\e`` and lack ``\\/``).

    Returns ``(value, outer, end)``: ``outer[k]`` is the offset in ``text`` of
    the value's character ``k``, ``None`` for one written as an escape, plus one
    entry for the closing quote; ``end`` is the index after the closing quote.
    A span that covers an escaped character is not editable (:class:`OffsetMap`).
    """
    m = _JSON_STR.match(text, i)
    if m is None:
        raise JSONStringError(f"not a JSON string at offset {i}")
    raw = m.group()[1:-1]
    start = i + 1
    if "\\" not in raw:  # every character verbatim: a range, not a list of ints (a JSON file's strings, all of them)
        return raw, range(start, start + len(raw) + 1), m.end()
    out: list[str] = []
    outer: list[int | None] = []
    k = 0
    n = len(raw)
    while k < n:
        b = raw.find("\\", k)
        if b != k:  # the verbatim run up to the next escape, at once (a notebook's sources: every line has one)
            b = n if b < 0 else b
            out.append(raw[k:b])
            outer.extend(range(start + k, start + b))
            k = b
            continue
        e = raw[k + 1] if k + 1 < n else ""
        if toml and e in _TOML_HEX:
            width = _TOML_HEX[e]
            digits = raw[k + 2:k + 2 + width]
            if not re.fullmatch(r"[0-9a-fA-F]{%d}" % width, digits) or int(digits, 16) > 0x10FFFF:
                raise JSONStringError(f"bad escape at offset {start + k}")
            out.append(chr(int(digits, 16)))
            outer.append(None)
            k += 2 + width
        elif e in _JSON_ESC and not (toml and e == "/") or (toml and e == "e"):
            out.append(_JSON_ESC.get(e, "\x1b"))
            outer.append(None)
            k += 2
        elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", raw[k + 2:k + 6] or ""):
            cp = int(raw[k + 2:k + 6], 16)
            width = 6
            if (0xD800 <= cp < 0xDC00 and raw[k + 6:k + 8] == "\\u"
                    and re.fullmatch(r"[0-9a-fA-F]{4}", raw[k + 8:k + 12])):
                lo = int(raw[k + 8:k + 12], 16)
                if 0xDC00 <= lo < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    width = 12
            out.append(chr(cp))
            outer.append(None)
            k += width
        else:
            raise JSONStringError(f"bad escape at offset {start + k}")
    outer.append(start + n)
    return "".join(out), outer, m.end()


class JSONItem(Record):
    """A string element of a JSON array: its value, character map, and extent in the text (``start``: the opening
    quote; ``end``: after the closing quote)."""

    __slots__ = ("value", "outer", "start", "end")

    def __init__(self, value: str, outer: Sequence[int | None], start: int, end: int) -> None:
        self.value = value
        self.outer = outer
        self.start = start
        self.end = end


def json_string_array(text: str, i: int = 0) -> tuple[list[JSONItem], int] | None:
    """Parse a JSON array of strings at ``text[i]`` (after optional whitespace); None if it is not one."""
    i = _WS.match(text, i).end()
    if i >= len(text) or text[i] != "[":
        return None
    i += 1
    items: list[JSONItem] = []
    i = _WS.match(text, i).end()
    if i < len(text) and text[i] == "]":
        return items, i + 1
    while True:
        i = _WS.match(text, i).end()
        if i >= len(text) or text[i] != '"':
            return None
        try:
            value, outer, end = json_string_at(text, i)
        except JSONStringError:
            return None
        items.append(JSONItem(value, outer, i, end))
        i = _WS.match(text, end).end()
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "]":
            return items, i + 1
        return None


# ---------------------------------------------------------------------------
# Calling the shell and Python frontends


def _error(path: str, what: str, e: BaseException, line: int | None) -> FileError:
    return internal_error.scan_error(path, f"while scanning {what}", e, line)


def scan_shell_text(text: str, path: str, origin: OffsetMap | None, *, env: dict[str, str] | None = None,
                    hints: list[Hint] | None = None, what: str = "embedded shell",
                    line: int | None = None, file_text: str | None = None) -> ScanResult:
    """Scan embedded shell text (none that fails :func:`kv4lint.files.prefilter.shell_may_launch`); a failure is
    reported as a FileError, never raised."""
    if not shell_may_launch(text, env) or budget.spent():
        return ScanResult()
    try:
        scan_shell = nested("shell")
    except ImportError as e:  # pragma: no cover - the shell frontend is part of the package
        return ScanResult(errors=[_error(path, what, e, line)])
    try:
        res = scan_shell(text, path, origin=origin, env=env or None, hints=list(hints or []) or None,
                         file_text=file_text)
        budget.charge(res, path, line)
        return res
    except RecursionError:
        return ScanResult(errors=[FileError(path, f"{what} too deeply nested to scan", line)])
    except Exception as e:  # noqa: BLE001 - one bad block must not stop the others
        return ScanResult(errors=[_error(path, what, e, line)])


def scan_python_text(text: str, path: str, origin: OffsetMap | None, *, what: str = "embedded Python",
                     line: int | None = None) -> ScanResult:
    if budget.spent():
        return ScanResult()
    try:
        scan_python = nested("python")
    except ImportError as e:  # pragma: no cover
        return ScanResult(errors=[_error(path, what, e, line)])
    try:
        res = scan_python(text, path, origin=origin)
        if line is not None:
            for err in res.errors:
                if err.line is None:
                    err.line = line  # the embedded block's first line: the message names the line in the block
        budget.charge(res, path, line)
        return res
    except RecursionError:
        return ScanResult(errors=[FileError(path, f"{what} too deeply nested to scan", line)])
    except Exception as e:  # noqa: BLE001
        return ScanResult(errors=[_error(path, what, e, line)])


def split_shell_words(text: str, origin: OffsetMap | None) -> list[Value] | None:
    """Shell-like word splitting with spans (for compose ``command: "..."``), or None on failure."""
    try:
        split_words = nested("shell words")
    except ImportError:
        return None
    try:
        return split_words(text, origin=origin)
    except Exception:  # noqa: BLE001
        return None


def add_hints(result: ScanResult, hints: list[Hint]) -> None:
    """Append hints found around the embedded text to every launch (after the launch's own)."""
    if not hints:
        return
    for launch in result.launches:
        have = {(h.kind, h.value, h.reason) for h in launch.hints}
        launch.hints.extend(h for h in hints if (h.kind, h.value, h.reason) not in have)


def merge(into: ScanResult, other: ScanResult, *, text: str | None = None, index: LineIndex | None = None,
          opener: int | None = None) -> None:
    """Add an embedded scan's launches and errors; with ``text`` and ``opener``, apply the directives above
    the block's opening line."""
    if text is not None and opener is not None:
        apply_disabled(other, text, index, opener)
    if other.disabled:
        # A ``disable-file`` comment of embedded code (a script in a YAML value, a Markdown fence, a string)
        # covers that code's launches: the file around it is the container's, whose own comments decide.
        for launch in other.launches:
            launch.disabled = frozenset(launch.disabled) | other.disabled
    into.launches.extend(other.launches)
    into.errors.extend(other.errors)


# ---------------------------------------------------------------------------
# Suppression comments written in the container format itself

_last_text: str | None = None
_last_mentions = False


def _mentions_kv4lint(text: str) -> bool:
    """Whether ``text`` holds a suppression comment at all: asked for every block of a file (a Dockerfile's
    instructions, a README's fences), so the answer for the last text is kept (the text itself, so that
    ``is`` tells it): a search of the whole file per block made a file of many blocks quadratic (issue 34)."""
    global _last_text, _last_mentions
    if text is not _last_text:
        _last_text, _last_mentions = text, names_kv4lint(text)
    return _last_mentions


def disabled_above(text: str, index: LineIndex, offset: int) -> frozenset[str]:
    """Codes disabled by ``# kv4lint: disable[=CODES]`` comment lines right above the line of ``offset``."""
    return codes_above(index.line_text, index.position(offset).line)


def apply_disabled(result: ScanResult, text: str, index: LineIndex | None = None, opener: int | None = None,
                   comments=None) -> None:
    """Mark launches with the directives right above them, or above the line that opens their block
    (``opener``: a Dockerfile instruction, a YAML key, a Markdown fence); and the file's ``disable-file``
    (``comments``: the container's test of where its comments are, :func:`kv4lint.base.suppression.file_codes`)."""
    if not _mentions_kv4lint(text):
        return
    index = index or LineIndex(text)
    extra = disabled_above(text, index, opener) if opener is not None else frozenset()
    for launch in result.launches:
        codes = extra | disabled_above(text, index, launch.span.start)
        if codes:
            launch.disabled = frozenset(launch.disabled) | codes
    if opener is None:
        result.disabled = frozenset(result.disabled) | file_codes(text, comments)


# ---------------------------------------------------------------------------
# Environment given to embedded shell text

_SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SAFE_DQ = re.compile(r'^[^"\\`$\n]*$')  # fits between double quotes unchanged


class EnvDef(Record):
    """A variable a container sets for its command (``ENV``, ``env:``, ``variables:``, ``%env``).

    ``omap`` maps the value to the file when it is written there, so that a
    launch that reads ``$NAME`` gets a value whose span is the definition
    (reported at the use, fixed at the definition).
    """

    __slots__ = ("name", "value", "omap", "span")

    def __init__(self, name: str, value: str | None, omap: OffsetMap | None = None, span: Span | None = None) -> None:
        self.name = name
        self.value = value
        self.omap = omap
        self.span = span

    @property
    def value_span(self) -> Span | None:
        if self.value is None or self.omap is None or not self.value:
            return None
        return self.omap.span(Span(0, len(self.value)))


def names_read(body: str, defined, value_of=lambda v: v) -> set[str]:
    """The names of ``defined`` (a mapping: name -> what ``value_of`` turns into its value) that ``body`` may read:
    those it holds as a word (``$NAME``, ``${NAME:-x}``, ``${!REF}``'s ``REF="NAME"``, ``os.environ["NAME"]``),
    those their values name in turn, and the platform variables (a hint to any launch, named or not).

    A step, ``RUN``, cell or ``bash -c`` script is given what it may read, not the whole environment: one that
    reads none of 2,000 settings costs what its own text costs, not the settings' too."""
    wanted = {n for n in PLATFORM_NAMES if n in defined}
    todo = [w for w in set(NAME_WORD.findall(body)) if w in defined] + list(wanted)
    while todo:
        name = todo.pop()
        wanted.add(name)
        value = value_of(defined[name])
        if value:
            todo.extend(w for w in set(NAME_WORD.findall(value)) if w in defined and w not in wanted)
    return wanted


def read_by(defs: list[EnvDef], body: str) -> list[EnvDef]:
    """The definitions ``body`` may read (:func:`names_read`), in their order."""
    if not defs:
        return defs
    wanted = names_read(body, {d.name: d.value for d in defs})
    return [d for d in defs if d.name in wanted]


def with_prelude(defs: list[EnvDef], body: str, omap: OffsetMap) -> tuple[str, OffsetMap, dict[str, str]]:
    """Put ``NAME="value"`` lines before ``body`` for the definitions written verbatim; the rest as ``env``
    (``defs``: what ``body`` may read, :func:`read_by`)."""
    b = TextBuilder()
    env: dict[str, str] = {}
    for d in defs:
        if d.value is None:
            env.pop(d.name, None)
            continue
        vs = d.value_span
        if vs is not None and _SHELL_NAME.match(d.name) and _SAFE_DQ.match(d.value):
            b.synthetic(d.name + '="', vs.start)
            b.mapped(d.value, list(range(vs.start, vs.end)))
            b.synthetic('"\n', vs.end)
            env.pop(d.name, None)
        else:
            env[d.name] = d.value
    if not len(b):
        return body, omap, env
    b.mapped(body, omap.outer)
    text, fmap = b.build(end=omap.outer[-1] if omap.outer else 0)
    return text, fmap, env


_REFS = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)|\(([A-Za-z_][A-Za-z0-9_]*)\)|([A-Za-z_][A-Za-z0-9_]*))")


def mark_shared(result: ScanResult, text: str, defs: list[EnvDef]) -> None:
    """Values that resolve to a definition the file reads more than once are shared: their fix is unsafe."""
    spans = []
    counts: dict[str, int] | None = None
    for d in defs:
        vs = d.value_span
        if vs is None:
            continue
        if counts is None:
            counts = {}
            for m in _REFS.finditer(text):
                name = m.group(1) or m.group(2) or m.group(3)
                counts[name] = counts.get(name, 0) + 1
        if counts.get(d.name, 0) > 1:
            spans.append(vs)
    if not spans:
        return
    for launch in result.launches:
        for k, v in enumerate(launch.argv):
            if v.span is not None and not v.shared and any(s.start <= v.span.start and v.span.end <= s.end
                                                           for s in spans):
                launch.argv[k] = replace(v, shared=True)
