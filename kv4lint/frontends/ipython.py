"""IPython syntax inside Python code: ``!cmd`` shell lines, ``%magic`` lines, ``%env``.

Shared by the notebook reader (code cells) and the Markdown reader
(``ipython``/``pycon`` blocks): :func:`split_ipython` separates the shell
commands from the Python, each with the offsets of its characters in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kv4lint.frontends.embedded import TextBuilder
from kv4lint.model import Span
from kv4lint.source import OffsetMap

_ASSIGN_BANG = re.compile(r"^([ \t]*[A-Za-z_][A-Za-z0-9_., \t]*=[ \t]*)([!%])")
_ENV_MAGIC = re.compile(r"^[ \t]*%env[ \t]+([A-Za-z_][A-Za-z0-9_]*)(?:[ \t]*=[ \t]*|[ \t]+)(\S.*?)[ \t]*$")


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
            b.synthetic(replacement, omap.outer[start])
            nl = k < len(lines) - 1
        elif stripped.startswith("%") or (m and m.group(2) == "%"):
            em = _ENV_MAGIC.match(line)
            if em:
                value = em.group(2)
                vs = start + em.start(2)
                env[em.group(1)] = (value, omap.span(Span(vs, vs + len(value))))
            b.synthetic((m.group(1) + "None") if m else (indent + "pass"), omap.outer[start])
        else:
            b.mapped(line, omap.outer[start:start + len(line)])
        if nl:
            b.mapped("\n", [omap.outer[start + len(line)]])
        k += 1
    text, pmap = b.build(end=omap.outer[-1] if omap.outer else 0)
    return IPythonSplit(text, pmap, shell, env)
