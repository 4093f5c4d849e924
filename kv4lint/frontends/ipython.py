"""IPython syntax inside Python code: ``!cmd`` shell lines, ``%magic`` lines, ``%env``.

Shared by the notebook reader (code cells) and the Markdown reader
(``ipython``/``pycon`` blocks): :func:`split_ipython` separates the shell
commands from the Python, each with the offsets of its characters in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kv4lint.base.model import Span
from kv4lint.base.source import OffsetMap
from kv4lint.frontends.embedded import TextBuilder

_ASSIGN_BANG = re.compile(r"^([ \t]*[A-Za-z_][A-Za-z0-9_., \t]*=[ \t]*)([!%])")
_ENV_MAGIC = re.compile(r"^[ \t]*%env[ \t]+([A-Za-z_][A-Za-z0-9_]*)(?:[ \t]*=[ \t]*|[ \t]+)(\S.*?)[ \t]*$")


# IPython expands ``{expr}`` and ``$name`` in a ``!`` line from the Python namespace before the shell
# reads it (``{{``/``}}`` and ``$$`` stand for themselves).  ``{expr}`` here: a name, attributes, subscripts
# or a call -- not shell brace expansion (``{a,b}``, ``{1..3}``), which IPython leaves alone.
_BRACE_EXPR = re.compile(r"(?<!\{)\{(?!\{)([A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]{}\n]*\]|\([^(){}\n]*\))*)\}(?!\})")
_DOLLAR_NAME = re.compile(r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# What a running kernel's interpreter is: ``!{sys.executable} -m sglang.launch_server`` launches.
_INTERPRETER = {"sys.executable": "python"}
# A module-level ``NAME = "literal"`` (the values a later ``!`` line can read).
_STR_ASSIGN = re.compile(r"""^([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(?:[rRuU]?)"""
                         r"""(?:"([^"\\\n]*)"|'([^'\\\n]*)')[ \t]*(?:#.*)?$""")
_ANY_ASSIGN = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:[-+*/%|&^@]|//|\*\*|<<|>>)?=(?!=)")


def python_strings(python: str, known: dict[str, str | None]) -> None:
    """Update ``known`` with the string constants ``python`` (one cell, run in order) leaves set.

    A name assigned anything else, or inside a block, becomes ``None`` (set, value not known).
    """
    for line in python.split("\n"):
        m = _STR_ASSIGN.match(line)
        if m:
            known[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
            continue
        a = _ANY_ASSIGN.match(line)
        if a:
            known[a.group(1)] = None


def interpolate(cmd: str, cmap: OffsetMap, known: dict[str, str | None]) -> tuple[str, OffsetMap]:
    """``cmd`` as the shell gets it after IPython's expansion of ``{expr}`` and ``$name``.

    A name with a known string value becomes that value (not written here: no fix edits it);
    ``sys.executable`` becomes ``python``; any other ``{expr}`` becomes a shell variable nothing sets (an
    unknown value, never the literal ``{expr}``); a ``$name`` Python does not set is left to the shell.
    """
    if "{" not in cmd and "$" not in cmd:
        return cmd, cmap
    b = TextBuilder()
    pos = 0
    n = 0
    for m in sorted(list(_BRACE_EXPR.finditer(cmd)) + list(_DOLLAR_NAME.finditer(cmd)), key=lambda m: m.start()):
        if m.start() < pos:
            continue
        if m.re is _DOLLAR_NAME:
            name = m.group(1) or m.group(2)
            if name not in known:
                continue  # a shell (environment) variable
            value = known[name]
        else:
            expr = m.group(1)
            value = _INTERPRETER.get(expr, known.get(expr))
        b.mapped(cmd[pos:m.start()], cmap.outer[pos:m.start()])
        if value is None:
            n += 1
            value = "${__kv4lint_ipython_%d}" % n
        b.synthetic(value, cmap.offset(m.start()))
        pos = m.end()
    if pos == 0:
        return cmd, cmap
    b.mapped(cmd[pos:], cmap.outer[pos:len(cmd)])
    return b.build(end=cmap.outer[len(cmd)] if len(cmap.outer) > len(cmd) else None)


@dataclass
class IPythonSplit:
    python: str
    omap: OffsetMap
    shell: list[tuple[str, OffsetMap, int]]  # (command, map, line in the source)
    env: dict[str, tuple[str, Span | None]]


def split_ipython(source: str, omap: OffsetMap) -> IPythonSplit:
    """Separate IPython's ``!cmd``/``%magic`` lines from the Python of a cell.

    ``!cmd`` (also ``x = !cmd``), with ``\\`` continuation lines, is a shell
    command; other ``%magic`` lines become ``pass`` (``x = %magic`` becomes
    ``x = None``); ``%env NAME=value`` is remembered for later shell commands.
    """
    b = TextBuilder()
    shell: list[tuple[str, OffsetMap, int]] = []
    env: dict[str, tuple[str, Span | None]] = {}
    lines = source.split("\n")
    pos = 0
    k = 0
    while k < len(lines):
        line = lines[k]
        start = pos
        pos += len(line) + 1
        nl = k < len(lines) - 1
        stripped = line.lstrip(" \t")
        indent = line[: len(line) - len(stripped)]
        m = _ASSIGN_BANG.match(line)
        if stripped.startswith("!") or (m and m.group(2) == "!"):
            cut = (len(indent) + 1) if not m else m.end()
            if line[cut:cut + 1] == "!":
                cut += 1  # !!cmd
            sb = TextBuilder()
            sb.mapped(line[cut:], omap.outer[start + cut:start + len(line)])
            first = k
            while line.rstrip().endswith("\\") and k + 1 < len(lines):
                sb.mapped("\n", [omap.outer[start + len(line)]])
                k += 1
                line = lines[k]
                start = pos
                pos += len(line) + 1
                sb.mapped(line, omap.outer[start:start + len(line)])
            cmd, cmap = sb.build(end=omap.outer[start + len(line)])
            shell.append((cmd, cmap, first + 1))
            replacement = (m.group(1) + "None") if m else (indent + "pass")
            b.synthetic(replacement, omap.offset(start))
            nl = k < len(lines) - 1
        elif stripped.startswith("%") or (m and m.group(2) == "%"):
            em = _ENV_MAGIC.match(line)
            if em:
                value = em.group(2)
                vs = start + em.start(2)
                env[em.group(1)] = (value, omap.span(Span(vs, vs + len(value))))
            b.synthetic((m.group(1) + "None") if m else (indent + "pass"), omap.offset(start))
        else:
            b.mapped(line, omap.outer[start:start + len(line)])
        if nl:
            b.mapped("\n", [omap.outer[start + len(line)]])
        k += 1
    text, pmap = b.build(end=omap.outer[-1] if omap.outer else 0)
    return IPythonSplit(text, pmap, shell, env)
