"""The Python frontend: SGLang launches in Python code, found with libcst.

Forms recognised (docs/sglang-rules.md §6), each becoming one :class:`~kv4lint.base.model.Launch`:

* ``ServerArgs(...)``, ``sgl.Engine(...)`` / ``Engine(...)``, ``sgl.Runtime(...)``
  (imported from ``sglang``): ``form="kwargs"``, keyword names as written;
  ``Engine(server_args=ServerArgs(...))`` is one launch, the ``ServerArgs`` call.
* ``prepare_server_args([...])`` and ``ServerArgs.from_cli_args(parser.parse_args([...]))``:
  ``form="argv"``.
* SGLang's test helpers (``popen_launch_server(model, url, timeout,
  other_args=[...])`` and the ``run_bench_*`` helpers built on it) and the docs
  helper ``launch_server_cmd("python -m sglang.launch_server ...")``.
* Commands run through ``subprocess``/``os``/``asyncio``: argv lists go through
  :func:`kv4lint.sglang.commands.unwrap`, shell strings and ``shlex.split``
  strings through the shell frontend, asked of the registry
  (:func:`kv4lint.frontends.nested`).
* Notebooks exported to Python: ``get_ipython().system("...")`` (a ``!`` line,
  ``{expr}`` unknown) and ``get_ipython().run_cell_magic("bash", "", "...")``.

What a launch is built from is evaluated partially, never executed: string
literals (escapes map to no span), concatenation, f-strings (a hole is
unknown unless it names a resolvable constant), ``" ".join``, ``str.split``,
list literals with ``+``/``+=``/``.append``/``.extend`` in the same scope,
``**kwargs`` from dict literals, and simple names resolved to their
assignment.  Whatever cannot be known is ``Value.unknown()``.

Cost: files that cannot hold a launch return before libcst is imported;
positions are computed only when a launch call is present.

The package: :mod:`.literals` (string literals and their offsets),
:mod:`.values` (the partial values a launch is built from), :mod:`.index`
(one walk of the module: imports, scopes, calls; positions), :mod:`.evaluate`
(partial evaluation of expressions) and :mod:`.scanner` (which calls are
launches, and the launches they make).
"""

from __future__ import annotations

import re
import warnings

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import ScanResult
from kv4lint.base.process import imports_kept
from kv4lint.base.source import OffsetMap
from kv4lint.files.prefilter import let_go_of_tree, python_may_launch, screened_tree
from kv4lint.frontends.python.literals import decode_body, decode_literal, split_literal

# A launch needs one of these words in the text (an import from sglang, a module
# name in a command, or one of SGLang's helpers used without an import).
_NEEDLES = ("sglang", "popen_launch", "launch_server_cmd", "run_bench_", "run_score_benchmark",
            "run_embeddings_benchmark")

# CPython refuses more than 200 nested brackets; libcst's native parser crashes the
# process (stack overflow) on a few thousand, and takes super-linear time on long
# left-recursive chains (a + a + ..., a.b.c..., a[0][0]...).  Both are refused before
# parsing, as a per-file error.
MAX_DEPTH = 200
MAX_CHAIN = 300
# Items of one bracket (list, tuple, call, dict...).  libcst and the scan cost about 0.1 ms and 5 kB an item
# (a 2 MB argv list of 140,000 items: 60 s and 3 GB); a real launch has at most a few hundred.  A file with
# more is a file error naming the limit, before libcst reads it (docs/security.md).
MAX_ITEMS = 10_000
# Arms of one if/elif chain: libcst nests each elif in the one before, and its parser crashes the process (stack
# overflow) near 9,000; kv4lint reads a chain as one branch point with an arm per test (a launch in a chain of
# 1,000 arms is read once per arm). A longer chain is a file error naming the bound, before libcst reads it.
MAX_ELIF = 1000
# libcst keeps about 400 bytes a byte of source (777 MB for 2 MB): a longer file that may launch is a file error
# naming the bound, before it is parsed at all (a real launcher is a few hundred kB at most).
MAX_BYTES = 2 * 1024 * 1024

_GUARD = re.compile(r"""
 (?P<str>[rRbBuUfFtT]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
|(?P<com>\#[^\n]*)
|(?P<open>[(\[{])
|(?P<close>[)\]}])
|(?P<sep>[,;:]|(?<!\\)\n|(?<![=!<>+\-*/%@&|^])=(?!=))
|(?P<op>\*\*=?|//=?|<<=?|>>=?|->|[-+*/%@&|^~<>!]=?|==|\.(?!\d))
|(?P<kw>\b(?:not|and|or|if|elif|else|lambda|await|is|in)\b)
|(?P<word>[^\W\d]\w*|\d[\w.]*)
""", re.X)


def complexity_error(text: str) -> str | None:
    """Why ``text`` is too deep or too complex to hand to libcst, or None.

    A regular-expression scan (strings and comments skipped): the bracket
    depth, and per bracket level the longest run of operators, attribute dots,
    calls and subscripts without a separator between them.
    """
    depth = 0
    chains = [0]
    items = [0]
    operand = False
    elifs: dict[int, int] = {}  # indentation -> elif arms in a row there
    line_start = 0  # where the line being read starts, until its first token
    for m in _GUARD.finditer(text):
        kind = m.lastgroup
        if line_start >= 0 and kind != "com" and not (kind == "sep" and m.group() == "\n"):
            col = m.start() - line_start
            line_start = -1
            if kind == "kw" and m.group() == "elif":
                elifs[col] = elifs.get(col, 0) + 1
                if elifs[col] >= MAX_ELIF:
                    return f"an if/elif chain of more than {MAX_ELIF} arms (the limit kv4lint reads)"
            elif not (kind == "kw" and m.group() == "else"):
                for c in [c for c in elifs if c >= col]:
                    del elifs[c]
        if kind == "word" or kind == "str":
            operand = True
            continue
        if kind == "com":
            continue
        if kind == "open":
            if operand:
                chains[-1] += 1
                if chains[-1] > MAX_CHAIN:
                    return f"an expression chains more than {MAX_CHAIN} operations"
            depth += 1
            if depth > MAX_DEPTH:
                return f"more than {MAX_DEPTH} nested brackets (Python allows {MAX_DEPTH})"
            chains.append(0)
            items.append(0)
            operand = False
            continue
        if kind == "close":
            if depth > 0:
                depth -= 1
                chains.pop()
                items.pop()
            operand = True
            continue
        operand = False
        if kind == "sep":
            if m.group() != "\n" or depth == 0:
                chains[-1] = 0
            if m.group() == ",":
                items[-1] += 1
                if items[-1] >= MAX_ITEMS:
                    return f"more than {MAX_ITEMS} items in one bracket (the limit kv4lint reads)"
            elif m.group() == "\n" and depth == 0:
                items[0] = 0
                line_start = m.end()
            continue
        chains[-1] += 1
        if chains[-1] > MAX_CHAIN:
            return f"an expression chains more than {MAX_CHAIN} operations"
    return None


def might_hold_launch(text: str) -> bool:
    return any(n in text for n in _NEEDLES)


def scan_python(text: str, path: str, *, origin: OffsetMap | None = None,
                imported: dict[str, dict[str, object]] | None = None) -> ScanResult:
    """The SGLang launches in Python source ``text`` (a file, or Python embedded in one).

    ``origin`` maps offsets in ``text`` to offsets in the enclosing file when
    the Python is embedded (a notebook cell, a Markdown fence, a ``python -``
    heredoc): spans are then file spans.  Never raises: a syntax error or an
    input too deep to parse is a :class:`~kv4lint.base.file_error.FileError` (its line is
    the line in ``text``; for embedded text it is given in the message only).
    ``imported`` gives the module-level constants of the sibling modules the
    code imports (read by :mod:`kv4lint.pipeline.sourced`, keyed as ``ScanResult.sources``
    names them without their ``pyimport:``).
    """
    if not might_hold_launch(text):
        return ScanResult()
    if len(text) > MAX_BYTES:
        return ScanResult(errors=[_error(path, f"a Python text of more than {MAX_BYTES // (1024 * 1024)} MB that "
                                               "names SGLang (the limit kv4lint reads): not scanned", None, origin)])
    tree = screened_tree(text)  # the pre-filter's screen (or flake8's tree) parsed this text already
    if tree is None:
        tree = _ast(text)
    may_launch = python_may_launch(text, tree)
    let_go_of_tree()  # freed with this text's scan, not kept for the collector to walk (kv4lint.base.process.gc_paused)
    if not may_launch:
        return ScanResult()  # no launch call with a KV option (stdlib ast: ~6x cheaper than the libcst parse)
    # Where the top-level statements start, from the same parse (Positions), and the tree let go before libcst's.
    lines = [st.lineno for st in tree.body] if tree is not None else None
    del tree
    # Only libcst needs the guard: ``ast`` survives any depth (text it cannot parse passes the screen).
    why = complexity_error(text)
    if why is not None:
        return ScanResult(errors=[_error(path, f"too complex to scan: {why}", None, origin)])
    try:
        with imports_kept():
            import libcst
    except ImportError as e:  # pragma: no cover - libcst is a dependency
        return ScanResult(errors=[FileError(path, f"cannot scan Python: libcst is not installed ({e})")])
    try:
        module = libcst.parse_module(text)
    except libcst.ParserSyntaxError as e:
        msg, line = _syntax_error(text, e)
        return ScanResult(errors=[_error(path, msg, line, origin)])
    except RecursionError:
        return ScanResult(errors=[_error(path, "too deeply nested to parse", None, origin)])
    except (MemoryError, ValueError, SyntaxError) as e:
        return ScanResult(errors=[_error(path, f"cannot parse: {type(e).__name__}: {e}", None, origin)])
    try:
        with imports_kept():  # the file's libcst tree is made already, but holds no cycle
            from kv4lint.frontends.python.scanner import Scanner

        scanner = Scanner(text, path, module, origin, imported, top_lines=lines)
        try:
            return scanner.scan()
        finally:
            scanner.release()
    except RecursionError:
        return ScanResult(errors=[_error(path, "too deeply nested to scan", None, origin)])
    except Exception as e:  # noqa: BLE001 - a frontend bug must not stop the run
        err = _error(path, internal_error.scan_error(path, "in the Python frontend", e).message, None, origin)
        err.internal = True  # a bug in kv4lint: the run exits 2 (kv4lint.base.internal_error)
        return ScanResult(errors=[err])


def _ast(text: str):
    """CPython's syntax tree of ``text``, or None (a newer syntax, an error: the frontend decides and reports)."""
    import ast

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _syntax_error(text: str, e) -> tuple[str, int | None]:
    """The message and line to report: CPython's own words when it rejects the code too."""
    import ast

    try:
        ast.parse(text)
    except SyntaxError as se:
        return f"syntax error: {se.msg}", se.lineno
    except (RecursionError, MemoryError, ValueError) as other:
        return f"cannot parse: {type(other).__name__}", None
    msg = (e.message or "").strip().splitlines()[0] if (e.message or "").strip() else "invalid syntax"
    msg = re.sub(r"^parser error: (?:error at \d+:\d+: )?", "", msg)
    if len(msg) > 120:
        msg = msg[:117] + "..."
    return f"cannot scan: libcst cannot parse this file (Python itself can): {msg}", e.raw_line


def _error(path: str, message: str, line: int | None, origin: OffsetMap | None) -> FileError:
    if origin is None:
        return FileError(path, message, line)
    where = f" (line {line} of the embedded Python)" if line else ""
    return FileError(path, f"embedded Python: {message}{where}")


__all__ = ["scan_python", "complexity_error", "decode_literal", "decode_body", "split_literal"]
