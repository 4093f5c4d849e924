"""Jupyter notebooks: code cells as Python, ``!cmd`` lines and ``%%bash`` cells as shell.

Offsets are into the ``.ipynb`` JSON text itself: each cell's ``source``
strings are found in the JSON with their positions and decoded character by
character, so a value's span is inside the JSON string and a fix rewrites the
notebook's text in place (outputs and metadata untouched).  Characters written
with a JSON escape (``\\n``, ``\\"``, ``\\u00e9``) break a span's contiguity:
such a value is reported but not edited.

:func:`cell_position` turns an offset into ``(cell number, line in cell)``
for the text reporter (``notebook.ipynb:cell 3:2``).
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass, field

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import Hint, ScanResult, Span
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.base.suppression import codes_above, file_codes, trailing_codes
from kv4lint.files.discover import language_of
from kv4lint.frontends import budget, embedded
from kv4lint.frontends.comments import python_comments
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.hints import env_hints
from kv4lint.frontends.ipython import interpolate, python_strings, split_ipython

_DEC = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")


@dataclass
class Cell:
    number: int  # 1-based position among all cells
    cell_type: str
    source: str
    omap: OffsetMap
    pieces: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each source string, quotes included
    line: int | None = None  # the file's line of the first source string


class NotebookError(ValueError):
    pass


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _members(text: str, i: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object at ``text[i] == '{'``."""
    if text[i:i + 1] != "{":
        raise NotebookError("expected an object")
    out = []
    i = _ws(text, i + 1)
    if text[i:i + 1] == "}":
        return out
    while True:
        i = _ws(text, i)
        key, _, kend = embedded.json_string_at(text, i)
        i = _ws(text, kend)
        if text[i:i + 1] != ":":
            raise NotebookError("expected ':'")
        vs = _ws(text, i + 1)
        _, ve = _DEC.raw_decode(text, vs)
        out.append((key, vs, ve))
        i = _ws(text, ve)
        c = text[i:i + 1]
        if c == ",":
            i += 1
            continue
        if c == "}":
            return out
        raise NotebookError("expected ',' or '}'")


def _elements(text: str, i: int) -> list[tuple[int, int]]:
    if text[i:i + 1] != "[":
        raise NotebookError("expected an array")
    out = []
    i = _ws(text, i + 1)
    if text[i:i + 1] == "]":
        return out
    while True:
        vs = _ws(text, i)
        _, ve = _DEC.raw_decode(text, vs)
        out.append((vs, ve))
        i = _ws(text, ve)
        c = text[i:i + 1]
        if c == ",":
            i += 1
            continue
        if c == "]":
            return out
        raise NotebookError("expected ',' or ']'")


def read_cells(text: str) -> tuple[list[Cell], dict]:
    """The notebook's cells with their source maps, and its top-level metadata."""
    i = _ws(text, 0)
    if text.startswith("\ufeff", i):
        i += 1
    top = _members(text, i)
    cells: list[Cell] = []
    metadata: dict = {}
    at, line = 0, 1  # the lines counted so far (cells in order: once over the file, not once per cell)
    for key, vs, ve in top:
        if key == "metadata":
            try:
                m = json.loads(text[vs:ve])
                metadata = m if isinstance(m, dict) else {}
            except ValueError:
                metadata = {}
        if key != "cells" or text[vs:vs + 1] != "[":
            continue
        for n, (cs, _) in enumerate(_elements(text, vs), 1):
            if text[cs:cs + 1] != "{":
                continue
            ctype = ""
            src_at = None
            for k2, s2, e2 in _members(text, cs):
                if k2 == "cell_type":
                    try:
                        ctype = json.loads(text[s2:e2])
                    except ValueError:
                        ctype = ""
                elif k2 == "source":
                    src_at = (s2, e2)
            if src_at is None or not isinstance(ctype, str):
                continue
            b = TextBuilder()
            pieces = []
            s2, e2 = src_at
            if text[s2:s2 + 1] == '"':
                strings = [(s2, e2)]
            elif text[s2:s2 + 1] == "[":
                strings = [(a, z) for a, z in _elements(text, s2) if text[a:a + 1] == '"']
            else:
                strings = []
            for a, z in strings:
                value, outer, _ = embedded.json_string_at(text, a)
                b.mapped(value, outer)
                pieces.append((a, z))
            end = strings[-1][1] - 1 if strings else s2
            src, omap = b.build(end=end)
            first = None
            if pieces and pieces[0][0] >= at:
                line += text.count("\n", at, pieces[0][0])
                at, first = pieces[0][0], line
            elif pieces:
                first = text.count("\n", 0, pieces[0][0]) + 1
            cells.append(Cell(n, ctype, src, omap, pieces, first))
    return cells, metadata


@functools.lru_cache(maxsize=8)
def _cells_cached(text: str) -> tuple[tuple[Cell, ...], list[int]]:
    """The cells that have a source, and where each begins (in file order: bisected per finding)."""
    try:
        cells = tuple(c for c in read_cells(text)[0] if c.pieces)
    except (ValueError, IndexError):
        cells = ()
    return cells, [c.pieces[0][0] for c in cells]


def cell_position(text: str, offset: int) -> tuple[int, int] | None:
    """``(cell number, line in the cell)`` (both 1-based) of a file offset inside a cell's source, else None."""
    cells, starts = _cells_cached(text)
    k = bisect.bisect_right(starts, offset) - 1
    if k < 0 or not offset < cells[k].pieces[-1][1]:
        return None
    cell = cells[k]
    line = 1
    outer = cell.omap.outer
    for i, ch in enumerate(cell.source):
        if outer[i] is not None and outer[i] >= offset:
            break
        if ch == "\n":
            line += 1
    return cell.number, line


# ---------------------------------------------------------------------------

_SHELL_MAGICS = re.compile(r"^%%(?:bash|sh|script[ \t]+(?:ba|z|k|da)?sh|system)\b[^\n]*\n?")
_PY_CELL_MAGICS = {"time", "timeit", "capture", "prun", "python", "python3", "debug"}


def scan_notebook(text: str, path: str) -> ScanResult:
    """Launches in a notebook's code cells (see the module docstring)."""
    result = ScanResult()
    try:
        json.loads(text)
    except ValueError as e:
        line = getattr(e, "lineno", None)
        result.errors.append(FileError(path, f"not a notebook: invalid JSON ({getattr(e, 'msg', e)})", line))
        return result
    try:
        cells, metadata = read_cells(text)
    except (ValueError, IndexError) as e:
        result.errors.append(FileError(path, f"not a notebook: {e}"))
        return result
    lang = ""
    ks = metadata.get("kernelspec") if isinstance(metadata.get("kernelspec"), dict) else {}
    li = metadata.get("language_info") if isinstance(metadata.get("language_info"), dict) else {}
    lang = str(ks.get("language") or li.get("name") or "python").lower()
    env: dict[str, tuple[str, Span | None]] = {}
    strings: dict[str, str | None] = {}  # the Python string constants the cells run so far set
    for cell in cells:
        if budget.spent():  # the file's launches passed their bound (kv4lint.frontends.budget): read no further
            break
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        try:
            _cell(result, cell, path, text, lang, env, strings)
        except Exception as e:  # noqa: BLE001 - one cell must not stop the others
            result.errors.append(internal_error.scan_error(path, f"while scanning cell {cell.number}", e,
                                                           cell.line))
    result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return result


def _shell(result: ScanResult, cmd: str, cmap: OffsetMap, path: str, text: str,
           env: dict[str, tuple[str, Span | None]], what: str, line: int | None) -> None:
    """Shell text of a cell, with the ``%env`` values set so far mapped to where they are written."""
    defs = [embedded.EnvDef(k, v, OffsetMap.contiguous(sp.start, sp.end - sp.start) if sp is not None else None)
            for k, (v, sp) in env.items()]
    full, fmap, values = embedded.with_prelude(embedded.read_by(defs, cmd), cmd, cmap)
    embedded.merge(result, embedded.scan_shell_text(full, path, fmap, env=values, hints=_env_hints(env), what=what,
                                                    line=line, file_text=text))


def _env_hints(env: dict[str, tuple[str, Span | None]]) -> list[Hint]:
    out: list[Hint] = []
    for name, (value, span) in env.items():
        out.extend(env_hints(name, value, span, how="%env"))
    return out


def _cell(result: ScanResult, cell: Cell, path: str, text: str, lang: str,
          env: dict[str, tuple[str, Span | None]], strings: dict[str, str | None] | None = None) -> None:
    src, omap = cell.source, cell.omap
    line = cell.line
    what = f"cell {cell.number}"
    python = (lang.startswith("python") or lang in ("ipython", "")) and not _SHELL_MAGICS.match(src)
    if python:  # a Python cell's comments are the notebook's; a shell cell's cover its own launches (merge)
        result.disabled = frozenset(result.disabled) | file_codes(src, lambda: python_comments(src))
    if lang in ("bash", "sh", "shell", "zsh"):
        _shell(result, src, omap, path, text, env, what, line)
        return
    if not lang.startswith("python") and lang not in ("ipython", ""):
        return
    m = _SHELL_MAGICS.match(src)
    if m:
        body = src[m.end():]
        bmap = OffsetMap(omap.outer[m.end():])
        _shell(result, body, bmap, path, text, env, what, line)
        return
    if src.startswith("%%"):
        name = re.match(r"%%(\w+)", src)
        if not name or name.group(1) not in _PY_CELL_MAGICS:
            if name and name.group(1) == "writefile":
                _writefile(result, src, omap, path, text, env, line)
            return  # %%html, %%javascript, ...: not Python
        nl = src.find("\n")
        if nl < 0:
            return
        src, omap = src[nl + 1:], OffsetMap(omap.outer[nl + 1:])
    split = split_ipython(src, omap)
    env.update(split.env)
    if strings is None:
        strings = {}
    python_strings(split.python, strings)
    lines = LineIndex(src)
    for cmd, cmap, first in split.shell:
        cmd, cmap = interpolate(cmd, cmap, strings)  # IPython's {expr} and $name, before the shell
        sub = ScanResult()
        _shell(sub, cmd, cmap, path, text, env, what, line)
        # The cell's own comments: right above the ! line, or at its end (the file's lines are JSON).
        codes = codes_above(lines.line_text, first) | trailing_codes(lines.line_text(first))
        for launch in sub.launches:
            launch.disabled = frozenset(launch.disabled) | codes
        embedded.merge(result, sub)
    if "sglang" in split.python or "ServerArgs" in split.python or "kv_cache" in split.python:
        sub = embedded.scan_python_text(split.python, path, split.omap, what=what, line=line)
        embedded.add_hints(sub, _env_hints(env))
        embedded.merge(result, sub)


def _writefile(result: ScanResult, src: str, omap: OffsetMap, path: str, text: str,
               env: dict[str, tuple[str, Span | None]], line: int | None) -> None:
    """``%%writefile serve.sh``: the body is that file; scanned as its language when it is shell or Python."""
    nl = src.find("\n")
    if nl < 0:
        return
    args = src[len("%%writefile"):nl].split()
    target = next((a for a in args if not a.startswith("-")), "")
    body, bmap = src[nl + 1:], OffsetMap(omap.outer[nl + 1:])
    lang = language_of(target, body[:256].encode("utf-8", "replace"))
    if lang == "shell":
        embedded.merge(result, embedded.scan_shell_text(body, path, bmap, hints=_env_hints(env),
                                                        what=f"%%writefile {target}", line=line, file_text=text))
    elif lang == "python":
        embedded.merge(result, embedded.scan_python_text(body, path, bmap, what=f"%%writefile {target}", line=line))
