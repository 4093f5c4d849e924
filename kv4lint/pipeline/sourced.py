"""Settings read from other files of the repository: a shell script's ``source env.sh`` / ``. env.sh`` and
``docker run --env-file FILE``, compose's ``env_file:`` and the ``.env`` file beside a compose file, a
Makefile's ``include``, the constants a Python launcher imports from a sibling module.

A pipeline stage after the cache (the cache keys a file's scan on its own
text): when a script's scan names files it sources (``ScanResult.sources``),
each is read -- never run -- if it resolves inside the repository, the
variables it leaves set are taken (following the files it sources in turn,
each file once: a cycle ends there), and the script is read again with those
values bound where the ``source`` line stands.  Editing ``env.sh`` is thus
seen on the next run of ``serve.sh``.  A missing file, one outside the
repository, not a regular file, too large or not text leaves its variables
unknown, as before.

A value from another file is reported at its use in the launch.  Each value
is a :class:`~kv4lint.base.model.ForeignString` that knows where its characters
are written in that file, when they are written there verbatim: the fix
rewrites them there (inside their quotes, nothing else of the file touched),
as an *unsafe* fix, because other scripts may source the same file.
"""

from __future__ import annotations

import ast
import os

from kv4lint import frontends  # the frontends through the registry: each loads when a file refers to another
from kv4lint.base.model import ForeignString, ScanResult
from kv4lint.base.source import DecodeError, decode
from kv4lint.files.depends import look
from kv4lint.files.ignore import repository_root
from kv4lint.files.regular_file import read_bytes
from kv4lint.frontends.hints import NAME_WORD, PLATFORM_NAMES

MAX_BYTES = 256 * 1024
MAX_FILES = 32


def _root(path: str) -> str:
    """The directory a file's settings may come from: its repository (else its project), else its own directory."""
    here = os.path.dirname(os.path.abspath(path))
    root = repository_root(here, or_project=True) or here
    d = here
    while True:  # the markers that decided it: dependencies of the report too (kv4lint.files.depends)
        look(os.path.join(d, ".git"))
        look(os.path.join(d, "pyproject.toml"))
        if d == root or os.path.dirname(d) == d:
            return root
        d = os.path.dirname(d)


def resolve(ref: str, script: str, root: str) -> str | None:
    """The file a ``sources`` entry names, inside ``root``; None when there is none."""
    kind, _, name = ref.partition(":")
    here = os.path.dirname(os.path.abspath(script))
    bases = [here] if kind in ("script", "envfile") else [here, root]
    real_root = os.path.realpath(root)
    for base in bases:
        cand = os.path.realpath(look(os.path.join(base, name)))
        if os.path.commonpath([cand, real_root]) != real_root:
            continue  # outside the repository: not read
        if os.path.isfile(look(cand)):
            return cand
    return None


def _read(path: str, *, python: bool = False) -> str | None:
    """The text of a settings file, decoded as the fix engine decodes it (so that offsets agree), or None:
    not a regular file (never a FIFO or device: :mod:`kv4lint.files.regular_file`), too large, not text."""
    look(path)
    try:
        data = read_bytes(path, MAX_BYTES)
    except OSError:
        return None
    if len(data) > MAX_BYTES or b"\0" in data:
        return None
    try:
        return decode(data, python=python).text
    except DecodeError:
        return None


def _settings(path: str, root: str, seen: set[str], reader) -> dict[str, ForeignString | None]:
    """What a settings file leaves set, through the files it reads in turn (each once: a cycle ends there).

    ``reader(text, path, nested)`` gives the file's variables (with ``nested``: the variables of the files it
    reads, by reference) and the references it makes.
    """
    if path in seen or len(seen) >= MAX_FILES:
        return {}
    seen.add(path)
    text = _read(path)
    if text is None:
        return {}
    shown = _shown(path)
    values, refs = reader(text, shown, {})
    if not refs:
        return values
    nested = {}
    for ref in refs:
        target = resolve(ref, path, root)
        if target is not None:
            nested[ref] = _settings(target, root, seen, reader)
    return reader(text, shown, nested)[0]


def _shown(path: str) -> str:
    """``path`` as edits and messages name it: relative to the current directory when it is below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith(".." + os.sep) or rel == ".." else rel


def _makefile_settings(text: str, path: str, nested: dict) -> tuple[dict[str, ForeignString | None], list[str]]:
    refs: list[str] = []
    variables = frontends.settings_reader("makefile")(text, nested, refs)[0]
    return {name: v.value if v.value is None or v.foreign else ForeignString(v.value, path, v.value_start)
            for name, v in variables.items()}, refs


def _module_file(module: str, script: str, root: str) -> str | None:
    """The file of a module the script imports, beside it (or from the repository root), inside the repository."""
    dots = len(module) - len(module.lstrip("."))
    parts = module.lstrip(".").split(".")
    here = os.path.dirname(os.path.abspath(script))
    for _ in range(max(0, dots - 1)):
        here = os.path.dirname(here)
    bases = [here] if dots else [here, root]
    real_root = os.path.realpath(root)
    for base in bases:
        for cand in (os.path.join(base, *parts) + ".py", os.path.join(base, *parts, "__init__.py")):
            cand = os.path.realpath(look(cand))
            if os.path.commonpath([cand, real_root]) == real_root and os.path.isfile(look(cand)):
                return cand
    return None


def python_constants(path: str) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` of a Python file: parsed, never imported or run.

    Strings are :class:`~kv4lint.base.model.ForeignString` s: with the file and offset their characters are
    written at when the literal is plain (``"nvfp4"``), so a fix can edit them there.
    """
    text = _read(path, python=True)
    if text is None:
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    lines = text.splitlines(keepends=True)
    shown = _shown(path)

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "replace"))

    def literal(node, depth: int = 0):
        if depth > 20:
            raise ValueError("too deep")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            s = offset(node.lineno, node.col_offset)
            v = node.value
            plain = text[s:s + 1] in "\"'" and text[s + 1:s + 1 + len(v)] == v and text[s + 1 + len(v):s + 2 + len(v)] \
                == text[s]
            return ForeignString(v, shown, s + 1) if plain else ForeignString(v)
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float))):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [literal(e, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                              for k in node.keys):
            return {k.value: literal(v, depth + 1) for k, v in zip(node.keys, node.values)}
        raise ValueError("not a literal")

    out: dict[str, object] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for t in targets:
            if not isinstance(t, ast.Name):
                continue
            try:
                out[t.id] = literal(node.value)  # literals only: nothing is run
            except ValueError:
                out.pop(t.id, None)
    return out


def dotenv(path: str, *, compose: bool = True) -> dict[str, ForeignString]:
    """``KEY=VALUE`` lines: ``compose`` as docker compose reads them (``export``, quotes and comments), else as
    ``docker run --env-file`` does (the value as written, quotes included).

    Each value is a :class:`~kv4lint.base.model.ForeignString` with its offset in the file when its characters
    are the value (not one compose would expand further: ``$VAR``, escapes), so a fix edits them there,
    inside their quotes.
    """
    text = _read(path)
    shown = _shown(path)
    out: dict[str, ForeignString] = {}
    at = 0
    for raw in (text or "").splitlines(keepends=True):
        off, at = at, at + len(raw)
        line = raw.rstrip("\r\n")
        off += len(line) - len(line.lstrip())
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if compose and line.startswith("export "):
            line, off = line[len("export "):], off + len("export ")
        name, _, value = line.partition("=")
        off += len(name) + 1
        name = name.strip()
        if compose:
            off += len(value) - len(value.lstrip())
            value = value.strip()
            close = value.find(value[0], 1) if value[:1] in ("'", '"') else -1
            if close > 0:  # KEY="value"  # a comment
                value, off = value[1:close], off + 1
            elif " #" in value:
                value = value.split(" #", 1)[0].rstrip()
        if name.isidentifier():
            plain = not compose or not any(c in value for c in "$\\")
            out[name] = ForeignString(value, shown, off) if plain else ForeignString(value)
    return out


def _may_read(text: str, sourced: dict[str, dict]) -> bool:
    """Whether a script may read a variable the files it sources set: it names one (a whole word, continued
    lines joined: a use, an assignment, a string an inner script or Python code reads it by), or one is a
    variable the shell frontend reads from a launch's environment without its name in the script
    (:data:`~kv4lint.frontends.hints.PLATFORM_NAMES`).
    Where it reads none, reading the script again with them bound gives what its first reading gave."""
    names = {name for values in sourced.values() for name in values}
    if not names.isdisjoint(PLATFORM_NAMES):
        return True
    joined = text.replace("\\\r\n", "").replace("\\\n", "")
    if len(names) > _FEW_NAMES:
        return not names.isdisjoint(NAME_WORD.findall(joined))  # the script's words once: linear in it, whatever names
    return any(_is_word(joined, name) for name in names)


# At most this many names are looked for one by one (str.find: a 2 MB script's words made into strings cost 40 ms,
# a find through it well under 1 ms); more are looked for among the script's words, read once (linear in the
# script whatever the number of names, tests/test_linear_cost_code.py).
_FEW_NAMES = 16
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _is_word(text: str, name: str) -> bool:
    """Whether ``name`` is one of ``NAME_WORD.findall(text)``: written where the run of word characters around it
    (``[A-Za-z0-9_]``) ends with it and has only digits before it (the digits a run starts with are no part of
    the word ``NAME_WORD`` finds in it)."""
    if not NAME_WORD.fullmatch(name):
        return False
    i = text.find(name)
    while i >= 0:
        end = i + len(name)
        if end == len(text) or text[end] not in _WORD:
            k = i
            while k > 0 and text[k - 1] in "0123456789":
                k -= 1
            if k == 0 or text[k - 1] not in _WORD:
                return True
        i = text.find(name, i + 1)
    return False


def attach_sourced(scan: ScanResult, path: str, text: str, language: str) -> ScanResult:
    """``scan`` read again with the variables of the files it reads settings from (or ``scan`` itself)."""
    if not scan.sources or not path or path.startswith("<"):
        return scan
    if language == "yaml":
        root = _root(path)
        files = {}
        for ref in scan.sources:
            target = resolve(ref, path, root) if ref.startswith("envfile:") else None
            if target is not None:
                files[ref] = dotenv(target)
        if not any(files.values()):
            return scan
        again = frontends.again("yaml")(text, path, env_files=files)
        return again
    if language == "makefile":
        root = _root(path)
        files = {}
        for ref in scan.sources:
            target = resolve(ref, path, root)
            if target is not None:
                files[ref] = _settings(target, root, {os.path.realpath(path)}, _makefile_settings)
        if not any(files.values()):
            return scan
        return frontends.again("makefile")(text, path, included=files)
    if language == "python":
        root = _root(path)
        modules = {}
        for ref in scan.sources:
            target = _module_file(ref.partition(":")[2], path, root) if ref.startswith("pyimport:") else None
            if target is not None and target != os.path.realpath(path):
                modules[ref.partition(":")[2]] = python_constants(target)
        if not any(modules.values()):
            return scan
        return frontends.again("python")(text, path, imported=modules)
    if language != "shell":
        return scan
    root = _root(path)
    me = os.path.realpath(path)
    sourced = {}
    for ref in scan.sources:
        target = resolve(ref, path, root)
        if target is not None and target != me:
            values = dotenv(target, compose=False) if ref.startswith("dockerenv:") else \
                _settings(target, root, {me}, frontends.settings_reader("shell"))
            if values:
                sourced[ref] = values
    if not sourced or not _may_read(text, sourced):
        return scan
    again = frontends.again("shell")(text, path, sourced=sourced)
    again.errors = scan.errors if not again.errors else again.errors
    return again
