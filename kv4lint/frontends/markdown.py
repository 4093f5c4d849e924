"""Markdown (and reStructuredText) code blocks: shell and Python examples in documentation.

Markdown is parsed with markdown-it-py (CommonMark), so fences inside list
items and block quotes are found as a renderer finds them.  Each content line
of a block is located in its file line (the block's text is the line's tail
once the container's prefix and the fence indentation are gone), which gives
the offset map; a line that is not found verbatim (tabs expanded by the
parser) is reported but not edited.

* ``bash``/``sh``/``shell``/``zsh`` blocks are shell; when their lines start
  with a ``$ `` prompt they are read as a console session.
* ``console``/``shell-session``/``terminal`` blocks: only prompted lines
  (``$ ``, ``# ``, ``(venv) $ ``, ``user@host:~$ ``) and their ``\\``
  continuation lines are commands; the other lines are output and stay silent.
* ``python``/``py``/``python3``/``ipython`` blocks are Python (``!cmd`` lines
  as shell, IPython magics skipped); ``pycon`` blocks keep the ``>>>``/``...``
  lines.
* Blocks without a language, ``text``/``output`` blocks, indented code blocks
  and inline code are not scanned; neither are tables or prose.

reStructuredText: ``.. code-block:: LANG`` / ``.. code:: LANG`` /
``.. sourcecode:: LANG`` / ``.. prompt:: bash`` directives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import ScanResult
from kv4lint.base.process import imports_kept
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.frontends import budget, embedded, sections
from kv4lint.frontends.comments import outside
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.hints import dedupe_hints
from kv4lint.frontends.ipython import interpolate, python_strings, split_ipython

SHELL = {"bash", "sh", "shell", "zsh", "ksh", "dash", "shellscript", "bash-script", "sh-script"}
CONSOLE = {"console", "shell-session", "shellsession", "sh-session", "bash-session", "terminal", "shell-console"}
PYTHON = {"python", "py", "python3", "py3", "ipython", "ipython3", "jupyter"}
PYCON = {"pycon", "python-console", "pycon3", "pytb-console"}

# markdown-it's own bound (its CommonMark preset's ``maxNesting``): content nested deeper is not parsed.
MARKDOWN_MAX_NESTING = 20

_PROMPT = re.compile(r"^[ \t]*(?:\([^)\n]*\)[ \t]*)?(?:[\w.-]+@[\w.-]+(?::[^\s$#]*)?[ \t]*)?([$#%])[ \t]+")
_DOLLAR = re.compile(r"^[ \t]*\$[ \t]+\S")
# A document's placeholder (``--model-path <model_path>``): the reader fills it in, so it is a value kv4lint cannot
# know, not bash's redirections (``<model_path`` in, ``>`` out to the next word, which would swallow the next
# option). Never ``<<EOF``, ``<(cmd)``, ``2>&1`` or ``< file``.
_PLACEHOLDER = re.compile(r"(?<![<>\w$&|])<([A-Za-z_][\w.\-/:]*)>(?![>&\w])")


def _placeholders(body: str) -> str:
    """``body`` with each ``<name>`` as ``$name_``: an unset variable of the same length (offsets kept)."""
    return _PLACEHOLDER.sub(lambda m: f"${m.group(1)}_", body) if "<" in body else body


@dataclass
class Line:
    text: str  # the content line as the block holds it
    start: int | None  # file offset of its first character when found verbatim
    brk: int  # file offset of its line break (or the end of the file line)
    number: int  # 1-based file line


@dataclass
class Block:
    lang: str
    lines: list[Line]
    line: int  # 1-based line of the block's first content line


def _info_lang(info: str) -> str:
    info = info.strip()
    if not info:
        return ""
    m = re.match(r"^\{(?:code-block|code|sourcecode|code-cell)\}\s*(\S*)", info)
    if m:
        return m.group(1).lower()
    m = re.match(r"^\{\.?([\w+-]+)", info)  # pandoc {.bash}
    if m:
        return m.group(1).lower()
    return re.split(r"[\s{,;]", info, maxsplit=1)[0].lower()


def _locate(index: LineIndex, text: str, number: int, content: str) -> Line:
    ls = index.starts[number - 1] if number - 1 < len(index.starts) else len(text)
    le = index.starts[number] if number < len(index.starts) else len(text)
    full = text[ls:le].rstrip("\r\n")
    brk = ls + len(full)
    if full.endswith(content):
        return Line(content, brk - len(content), brk, number)
    return Line(content, None, brk, number)


def markdown_blocks(text: str, errors: list[int] | None = None, outline: "Outline | None" = None) -> list[Block]:
    """The code blocks of a Markdown text, those in MkDocs tabs and admonitions (``=== "B200"``, ``!!! note``:
    an indented body, Markdown of its own) included.

    markdown-it stops reading a container nested ``maxNesting`` deep (20 block
    quotes or list items) without a word: the 1-based line of the first such
    container is appended to ``errors``, so that the caller reports what was
    not read.  ``outline`` collects the headings and where code blocks are (for the sections of
    :mod:`kv4lint.frontends.sections`).
    """
    with imports_kept():
        from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").disable("inline")  # fences are block tokens: inline parsing is half the cost
    md.options["maxNesting"] = MARKDOWN_MAX_NESTING
    index = LineIndex(text)
    out: list[Block] = []
    _read_markdown(md, text, 0, 0, index, text, out, errors, outline if outline is not None else Outline())
    out.sort(key=lambda b: b.line)
    return out


class Outline:
    """What the sections of a Markdown text need: its headings ``(line, level, title)`` and the lines of its code
    blocks (where a ``=== "tab"`` line is code, not a tab)."""

    def __init__(self):
        self.headings: list[tuple[int, int, str]] = []
        self.code: set[int] = set()


_MKDOCS_CONTAINER = re.compile(r"^([ \t]*)(?:===[+!]?|(?:!!!|\?\?\?)\+?[ \t]+[\w-]+)(?:[ \t].*)?$")
_MAX_CONTAINER_DEPTH = 8


def _read_markdown(md, part: str, offset: int, depth: int, index: LineIndex, text: str, out: list[Block],
                   errors: list[int] | None, outline: Outline) -> None:
    """The blocks of ``part``: lines ``offset + 1 ...`` of the file, ``depth`` MkDocs containers deep."""
    limit = md.options["maxNesting"]
    tokens = md.parse(part)
    if errors is not None:
        # A container opened at level limit - 1 holds its content at the limit, where nothing is read.
        deep = next((t for t in tokens if t.nesting == 1 and t.level >= limit - 1 and t.map is not None), None)
        if deep is not None:
            errors.append(deep.map[0] + 1 + offset)
    code: set[int] = set()
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None and k + 1 < len(tokens):
            outline.headings.append((tok.map[0] + 1 + offset, int(tok.tag[1:]), tokens[k + 1].content.strip()))
        if tok.type in ("fence", "code_block") and tok.map is not None:
            code.update(range(tok.map[0] + 1, tok.map[1] + 1))
        if tok.type != "fence" or tok.map is None:
            continue
        outline.code.update(range(tok.map[0] + 1 + offset, tok.map[1] + 1 + offset))
        lang = _info_lang(tok.info)
        if not lang:
            continue
        contents = tok.content.split("\n")
        if contents and contents[-1] == "":
            contents.pop()
        first = tok.map[0] + 2 + offset  # 1-based number of the first content line
        lines = [_locate(index, text, first + k, c) for k, c in enumerate(contents)]
        if lang.startswith("{") or not lines:
            continue
        # MyST directive options (":caption: x") at the top of a {code-block}
        if tok.info.strip().startswith("{"):
            while lines and re.match(r"^:[\w-]+:", lines[0].text):
                lines.pop(0)
        out.append(Block(lang, lines, first))
    if depth >= _MAX_CONTAINER_DEPTH or ("===" not in part and "!!!" not in part and "???" not in part):
        return
    rows = part.split("\n")
    k = 0
    while k < len(rows):  # MkDocs containers: their indented body is Markdown of its own
        m = _MKDOCS_CONTAINER.match(rows[k])
        if m is None or (k + 1) in code:
            k += 1
            continue
        indent = len(m.group(1).expandtabs())
        body = k + 1
        end = body
        while end < len(rows) and (not rows[end].strip() or len(rows[end]) - len(rows[end].lstrip()) > indent):
            end += 1
        cut = indent + 4
        inner = "\n".join(r.expandtabs()[cut:] if r.strip() else "" for r in rows[body:end])
        if inner.strip():
            _read_markdown(md, inner, offset + body, depth + 1, index, text, out, errors, outline)
        k = end


_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+(code-block|code|sourcecode|prompt)::[ \t]*([\w+-]*)")


def rst_blocks(text: str) -> list[Block]:
    index = LineIndex(text)
    raw = [index.line_text(n) for n in range(1, len(index.starts) + 1)]
    out: list[Block] = []
    k = 0
    while k < len(raw):
        m = _RST_DIRECTIVE.match(raw[k])
        if not m:
            k += 1
            continue
        base = len(m.group(1).expandtabs())
        lang = m.group(3).lower() or ("bash" if m.group(2) == "prompt" else "")
        prompt = m.group(2) == "prompt"
        k += 1
        # options (":linenos:") then the indented body
        while k < len(raw) and raw[k].strip().startswith(":") and _indent(raw[k]) > base:
            k += 1
        body: list[int] = []
        while k < len(raw) and (not raw[k].strip() or _indent(raw[k]) > base):
            body.append(k)
            k += 1
        while body and not raw[body[-1]].strip():
            body.pop()
        while body and not raw[body[0]].strip():
            body.pop(0)
        if not body or not lang:
            continue
        ind = min(_indent(raw[n]) for n in body if raw[n].strip())
        lines = []
        for n in body:
            content = raw[n][ind:] if raw[n].strip() else ""
            lines.append(_locate(index, text, n + 1, content))
        out.append(Block("bash" if prompt and lang in SHELL else lang, lines, body[0] + 1))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _build(lines: list[tuple[Line, int]]) -> tuple[str, OffsetMap]:
    """Text of the given lines (each from a column on), with its map."""
    b = TextBuilder()
    for ln, col in lines:
        piece = ln.text[col:]
        if ln.start is not None:
            b.verbatim(piece, ln.start + col)
        else:
            b.synthetic(piece, ln.brk - len(piece) if ln.brk >= len(piece) else 0)
        b.synthetic("\n", ln.brk)
    return b.build()


def console_commands(lines: list[Line], prompts: str = "$#%") -> list[tuple[Line, int]]:
    """The command lines of a console session: prompted lines and their continuations."""
    out: list[tuple[Line, int]] = []
    k = 0
    while k < len(lines):
        ln = lines[k]
        m = _PROMPT.match(ln.text)
        if not m or m.group(1) not in prompts:
            k += 1
            continue
        out.append((ln, m.end()))
        while ln.text.rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            ln = lines[k]
            cont = re.match(r"^[ \t]*>[ \t]", ln.text)  # PS2 prompt
            out.append((ln, cont.end() if cont else 0))
        k += 1
    return out


def pycon_lines(lines: list[Line]) -> list[tuple[Line, int]]:
    out = []
    for ln in lines:
        if ln.text.startswith((">>> ", "... ")):
            out.append((ln, 4))
        elif ln.text in (">>>", "..."):
            out.append((ln, 3))
    return out


def scan_markdown(text: str, path: str) -> ScanResult:
    """Launches in a Markdown or reStructuredText file's code blocks (see the module docstring)."""
    result = ScanResult()
    deep: list[int] = []
    outline = Outline()
    rst = path.lower().endswith((".rst", ".rest"))
    try:
        blocks = rst_blocks(text) if rst else markdown_blocks(text, deep, outline)
    except Exception as e:  # noqa: BLE001 - never raise on any input
        result.errors.append(FileError(path, f"cannot read the document ({type(e).__name__}: {e})"))
        return result
    for line in deep:
        result.errors.append(FileError(path, f"Markdown nested {MARKDOWN_MAX_NESTING} levels deep (block quotes, "
                                             f"lists) near line {line}: not scanned further", line))
    index = LineIndex(text)
    parts = None  # the document's sections, read for the first block that launches
    for block in blocks:
        if budget.spent():  # the file's launches passed their bound (kv4lint.frontends.budget): read no further
            break
        try:
            sub = ScanResult()
            _block(sub, block, path, text)
            if sub.launches:
                if parts is None:
                    if rst:
                        found = sections.rst_sections(index)
                    else:
                        found = (sections.headings(index, outline.headings, len(index.starts))
                                 + sections.containers(index, outline.code.__contains__))
                    parts = sections.Around(found)
                named = parts.at(block.line, sections.lead_in(index, block.line - 1) if not rst else None)
                for launch in sub.launches:  # after the launch's own hints: the section is farther
                    launch.hints = dedupe_hints(list(launch.hints) + sections.agrees(launch.hints, named))
            embedded.merge(result, sub, text=text, index=index, opener=index.offset(max(1, block.line - 1), 1))
        except Exception as e:  # noqa: BLE001 - one block must not stop the others
            result.errors.append(internal_error.scan_error(path, f"while scanning a {block.lang} block", e,
                                                           block.line))
    # A "# kv4lint: disable-file" line in a code block is the block's (its launches only, through merge):
    # the document's own comments are outside its blocks.
    embedded.apply_disabled(result, text, index, comments=lambda: outside(
        [(index.starts[b.lines[0].number - 1], b.lines[-1].brk) for b in blocks if b.lines]))
    result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return result


def _block(result: ScanResult, block: Block, path: str, text: str) -> None:
    lang = block.lang
    what = f"{lang} block"
    if lang in SHELL or lang in CONSOLE:
        if lang in CONSOLE:
            chosen = console_commands(block.lines)
        elif any(_DOLLAR.match(ln.text) for ln in block.lines):
            chosen = console_commands(block.lines, prompts="$")
        else:
            chosen = [(ln, 0) for ln in block.lines]
        if not chosen:
            return
        body, omap = _build(chosen)
        embedded.merge(result, embedded.scan_shell_text(_placeholders(body), path, omap, what=what, line=block.line,
                                                        file_text=text))
        return
    if lang in PYTHON or lang in PYCON:
        chosen = pycon_lines(block.lines) if lang in PYCON else [(ln, 0) for ln in block.lines]
        if not chosen:
            return
        body, omap = _build(chosen)
        split = split_ipython(body, omap)
        strings: dict[str, str | None] = {}
        python_strings(split.python, strings)
        for cmd, cmap, _ in split.shell:
            cmd, cmap = interpolate(cmd, cmap, strings)  # IPython's {expr} and $name, before the shell
            embedded.merge(result, embedded.scan_shell_text(cmd, path, cmap, what=what, line=block.line,
                                                            file_text=text))
        if "sglang" in split.python or "ServerArgs" in split.python or "kv_cache" in split.python:
            embedded.merge(result, embedded.scan_python_text(split.python, path, split.omap, what=what,
                                                             line=block.line))
