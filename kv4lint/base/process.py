"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API), and what kv4lint does with the cyclic collector: its pause while a file is read, and
what the imports of its stages and parsers leave (and how ``dataclasses`` compiles the methods of the classes
they define).  A leaf: it imports nothing that Python has not loaded at start-up (``kv4lint --version`` loads it:
tests/test_startup.py).

In its own process kv4lint may act on what belongs to the whole process, such as the cyclic collector
(:func:`imports_kept`) and how regular expressions are compiled (:func:`keep_patterns`); in a host's it leaves all
of that as it is.
"""

import contextlib
import marshal
import os
import sys

own = False  # kv4lint's own process: set by the kv4lint command (kv4lint.cli.console); forked children inherit it


def claim() -> None:
    """Say that this process is kv4lint's own (the ``kv4lint`` command and ``python -m kv4lint``)."""
    global own
    own = True


@contextlib.contextmanager
def gc_paused():
    """Reading a file makes objects by the million and frees none until it is judged: the cyclic collector would
    walk them all again and again (a third of a 2 MB Python file's time, a quarter of a 2 MB script's, growing
    with the file).  Paused while a file is read and judged (in any process: the pause ends with the file); what
    it leaves is collected after, as usual.  The frontends' scan (:func:`kv4lint.frontends.scan`) and the
    Python screen before it (:mod:`kv4lint.pipeline.read`) use it."""
    import gc  # built in, but not loaded by ``kv4lint --version``

    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@contextlib.contextmanager
def imports_kept():
    """Around the imports of a stage or a parser, in kv4lint's own process: when they load modules, every object the
    process tracks is frozen out of the cyclic collector's way (``gc.freeze``), once.  Modules' classes and
    functions live as long as the process, and libcst's (about 100,000 objects, made while a file's scan has the
    collector paused: :func:`gc_paused`) would all be walked by the first collection after the file (20 ms), then
    again by the next older one; the runner's and the frontends' with Markdown's parser, 10 ms.  Used before the
    file's own cycles are made (they are not frozen: the collector frees them as usual).  A host's process
    (flake8, the API) is left as it is: ``gc.freeze`` acts on all of its objects, not on kv4lint's alone.

    In any process, the methods ``dataclasses`` writes for the classes these imports define are compiled once per
    distinct text (:func:`_dataclass_methods_compiled_once`)."""
    loaded = len(sys.modules)
    with _dataclass_methods_compiled_once():
        yield
    if own and len(sys.modules) != loaded:
        import gc  # built in, but not loaded by ``kv4lint --version``

        gc.freeze()


@contextlib.contextmanager
def _dataclass_methods_compiled_once():
    """While it lasts, ``dataclasses`` compiles the source of each method it writes once, however many classes ask
    for the same text, and once for all processes of the same installation.

    ``dataclasses`` writes every ``__init__``, ``__repr__``, ``__eq__``... as source and runs it through
    ``exec``, which compiles it each time: libcst's 196 dataclasses ask for 978 methods, 623 distinct (the same
    ``__eq__`` of the same fields, the same frozen ``__setattr__``).  Compiling those 623 texts is 50-80 ms of
    libcst's 110-180 ms import, paid by every process that reads a Python launch: the first run, each pre-commit
    hook run, flake8 with the plugin.  Here the module's ``exec`` is one that runs each text's code object, made
    once: what ``exec`` would have compiled (flags inherited from ``dataclasses``, which imports no future
    feature; file ``<string>``), so the classes are the same, only made sooner.  The code objects are kept, keyed
    by their texts, beside this module's own bytecode (:func:`_methods_file`), as Python keeps a module's: the
    next process loads them (3 ms) instead of compiling.  The module's ``exec`` is put back when the imports are
    done, in a host's process too: a class defined meanwhile, by any thread, gets the same methods it would have.
    Nothing is done where ``dataclasses`` is not loaded yet (kv4lint's own stages load it, as does flake8) or where
    its ``exec`` is replaced already (an import inside another)."""
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None or "exec" in vars(dataclasses):
        yield
        return
    added = []

    def exec_compiled_once(source, globals=None, locals=None, /, **kw):
        if type(source) is str:
            compiled = _Methods.table
            if compiled is None:  # the first class: the kept methods are read (not by imports that define none)
                compiled = _Methods.table = _load_methods()
            code = compiled.get(source)
            if code is None:
                code = compiled[source] = compile(source, "<string>", "exec", dont_inherit=True)
                added.append(source)
            source = code
        return exec(source, globals, locals, **kw)

    dataclasses.exec = exec_compiled_once
    try:
        yield
    finally:
        if vars(dataclasses).get("exec") is exec_compiled_once:
            del dataclasses.exec
        if added:
            _store_methods(_Methods.table)


class _Methods:
    """The methods' code objects of this process, by their texts: the file's (:func:`_load_methods`, read when the
    first class asks) and those compiled since (as :class:`_Patterns` holds the patterns' programs)."""

    table: "dict[str, object] | None" = None


# The file of kept methods: its format, the most texts it keeps (libcst's and Markdown's parsers' are 700; more
# come only from a host's own classes, defined while kv4lint imports), and the most bytes read of it (and of the
# patterns' file).
_METHODS_FORMAT = 1
_MAX_METHODS = 4096
_MAX_KEPT_BYTES = 16 << 20


def _kept_file(name: str) -> "str | None":
    """Where a table kv4lint keeps for the next process is kept: in the folder Python keeps this module's bytecode
    in (its ``__pycache__``, or the same folder under ``sys.pycache_prefix``), named for the table and the
    interpreter, so only the installation's own code and Python's bytecode share its trust.  None where Python
    keeps no bytecode (no cache tag); the file is written only where Python would write bytecode (not with
    ``PYTHONDONTWRITEBYTECODE``)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    import importlib.util

    try:
        folder = os.path.dirname(importlib.util.cache_from_source(__file__))
    except (NotImplementedError, ValueError):
        return None
    return os.path.join(folder, f"{name}.{tag}.marshal")


def _load_table(path: "str | None", form: object, most: int, valid) -> dict:
    """The table kept in ``path``; empty where the file is missing, larger than :data:`_MAX_KEPT_BYTES` or ``most``
    entries, of another interpreter's bytecode (its magic number) or another ``form``, or holds an entry ``valid``
    refuses (what the table would have given is then made as without it)."""
    try:
        if path is None:
            return {}
        with open(path, "rb") as f:
            data = f.read(_MAX_KEPT_BYTES + 1)
        if len(data) > _MAX_KEPT_BYTES:
            return {}
        magic, got, table = marshal.loads(data)
    except Exception:  # noqa: BLE001 - missing, unreadable or not this shape: made as without it
        return {}
    import importlib.util

    if magic != importlib.util.MAGIC_NUMBER or got != form or type(table) is not dict or len(table) > most or \
            not all(valid(k, v) for k, v in table.items()):
        return {}
    return table


def _store_table(path: "str | None", form: object, table: dict, most: int) -> None:
    """Keep ``table`` in ``path`` for the next process (written whole, then renamed over the file: a reader sees
    the old file or the new one).  Nothing is written where Python writes no bytecode, past ``most`` entries, or
    where the folder cannot be written (a read-only installation): the next process makes it all as this one did."""
    if sys.dont_write_bytecode or len(table) > most or path is None:
        return
    import importlib.util

    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        data = marshal.dumps((importlib.util.MAGIC_NUMBER, form, table))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _methods_file() -> "str | None":
    """Where the methods' code objects are kept (:func:`_kept_file`)."""
    return _kept_file("dataclass-methods")


def _load_methods() -> "dict[str, object]":
    """The kept methods, by their texts; none where the file is not a table of texts to code objects of this
    interpreter (:func:`_load_table`: a text met then is compiled, as without it)."""
    code = type(_load_methods.__code__)
    return _load_table(_methods_file(), _METHODS_FORMAT, _MAX_METHODS,
                       lambda k, v: type(k) is str and type(v) is code)


def _store_methods(methods: "dict[str, object]") -> None:
    """Keep ``methods`` for the next process (:func:`_store_table`)."""
    _store_table(_methods_file(), _METHODS_FORMAT, methods, _MAX_METHODS)


# ---------------------------------------------------------------------------------------------------------------
# Regular expressions compiled once per installation

_PATTERNS_FORMAT = 1
_MAX_PATTERNS = 4096  # a run over SGLang's sources compiles 290; more come only from patterns built from data


class _Patterns:
    """The programs of the regular expressions this process compiled or loaded, by (pattern, flags): what
    :func:`keep_patterns` hands ``_sre.compile`` instead of parsing and compiling the pattern again."""

    table: "dict | None" = None  # loaded with the first pattern not in ``re``'s own cache
    added: list = []  # the keys of the entries compiled here, not yet written
    compile = None  # re's own compiler (``re._compiler.compile``) while ours stands in for it


def keep_patterns() -> None:
    """In kv4lint's own process (a host's keeps its ``re`` as it is), for the rest of its life: each regular
    expression not in ``re``'s own cache is made from the program kept for its (pattern, flags) by an earlier
    process of this installation, instead of being parsed and compiled again (:func:`_compile_kept`); what is
    compiled here is kept for the next one when the process ends (:func:`store_kept`).  A check of one Python
    launcher compiles 165 patterns (kv4lint's own, the argument parser's, libcst's), of a Markdown file 248, a run
    over SGLang's sources 282 (Markdown's and YAML's parsers' too): 16-45 ms, against under 2 ms to load the
    programs and make them.  A host's process is left alone: used while kv4lint imports in flake8's, the programs
    cost it more than they saved (+0.1 % of its instructions).  Nothing is done where ``re`` is not the one this
    knows (:func:`_program_form`) or the compiler is replaced already.  Imports ``re`` (the command's parser needs
    it next)."""
    if not own:
        return
    import re  # (loaded by most starts; the command's parser imports it next)

    compiler = getattr(re, "_compiler", None)
    if compiler is None or getattr(compiler, "compile", None) is _compile_kept or _program_form() is None:
        return
    _Patterns.compile = compiler.compile
    compiler.compile = _compile_kept


def _program_form() -> "tuple | None":
    """What a kept program is made for: its format, ``_sre``'s magic number and code size and the byte order (a
    program is its code's words as bytes); None where the words are not the size of a C ``unsigned int`` (what
    ``memoryview.cast('I')`` reads).  Asked where ``re`` is loaded (``_sre`` with it)."""
    sre = sys.modules.get("_sre")
    if sre is None or memoryview(bytes(4)).cast("I").itemsize != getattr(sre, "CODESIZE", None):
        return None
    return (_PATTERNS_FORMAT, sre.MAGIC, sre.CODESIZE, sys.byteorder)


def _compile_kept(p, flags=0):
    """``re._compiler.compile``, from the kept program of (``p``, ``flags``) where there is one; else compiled as
    ``re`` does, and its program kept (:func:`_program`)."""
    compile_ = _Patterns.compile
    if (type(p) is not str and type(p) is not bytes) or flags & 128:  # (128: re.DEBUG prints as it compiles)
        return compile_(p, flags)
    table = _Patterns.table
    if table is None:
        table = _Patterns.table = _load_patterns()
    key = (p, flags)
    kept = table.get(key)
    if kept is not None:
        final, code, groups, groupindex, indexgroup = kept
        try:
            return sys.modules["_sre"].compile(p, final, list(memoryview(code).cast("I")), groups, groupindex,
                                               indexgroup)
        except Exception:  # noqa: BLE001 - a program _sre refuses: compiled, and kept again
            del table[key]
    pattern = compile_(p, flags)
    if len(table) < _MAX_PATTERNS and type(flags) is int:
        program = _program(p, flags, pattern)
        if program is not None:
            table[key] = program
            _Patterns.added.append(key)
    return pattern


def _program(p, flags: int, pattern) -> "tuple | None":
    """What ``_sre.compile`` made ``pattern`` of: the flags, the code's words as bytes, the groups and their names;
    made as ``re._compiler.compile`` makes them, and kept only when ``_sre.compile`` makes of them a pattern equal
    to ``pattern`` (the same flags, code and text) with the same groups.  None where ``re`` is not the one this
    knows (its parser's or compiler's names), or the pattern depends on the locale (``re.LOCALE``)."""
    sre = sys.modules["_sre"]
    try:
        parsed = sys.modules["re._parser"].parse(p, flags)
        code = sys.modules["re._compiler"]._code(parsed, flags)
        state = parsed.state
        groupindex = dict(state.groupdict)
        indexgroup = [None] * state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        final = flags | state.flags
        args = (final, code, state.groups - 1, groupindex, tuple(indexgroup))
        again = sre.compile(p, *args)
        words = b"".join(w.to_bytes(4, sys.byteorder) for w in code)
    except Exception:  # noqa: BLE001 - another re than this one's: compiled as it does, not kept
        return None
    if final & 4 or again != pattern or again.groups != pattern.groups or \
            again.groupindex != pattern.groupindex:  # (4: re.LOCALE)
        return None
    return final, words, args[2], groupindex, args[4]


def _valid_program(key, value) -> bool:
    return type(key) is tuple and len(key) == 2 and type(key[0]) in (str, bytes) and type(key[1]) is int and \
        type(value) is tuple and len(value) == 5 and type(value[0]) is int and type(value[1]) is bytes and \
        type(value[2]) is int and type(value[3]) is dict and type(value[4]) is tuple and \
        all(type(k) is str and type(v) is int for k, v in value[3].items()) and \
        all(n is None or type(n) is str for n in value[4])


def _patterns_file() -> "str | None":
    """Where the patterns' programs are kept (:func:`_kept_file`)."""
    return _kept_file("regex-programs")


def _load_patterns() -> dict:
    form = _program_form()
    return {} if form is None else _load_table(_patterns_file(), form, _MAX_PATTERNS, _valid_program)


def store_kept() -> None:
    """Keep for the next process the patterns this one compiled (with those another process of the same run kept
    meanwhile: a forked child, its parent).  A pattern whose characters are a kept one's in another order, with
    the same flags, is not kept: one made of a set's items (Markdown's parser joins its terminators so) is
    another string in each process, and would be written again by every run.  Never an error (it runs as a
    process ends, a forked child's too)."""
    added, table = _Patterns.added, _Patterns.table
    if not added or table is None:
        return
    _Patterns.added = []
    try:
        _store_patterns(added, table)
    except Exception:  # noqa: BLE001 - the next process compiles what this one could not keep
        pass


def _store_patterns(added: list, table: dict) -> None:
    fresh = set(added)
    shapes = {_shape(key) for key in table if key not in fresh}
    fresh = [key for key in added if _shape(key) not in shapes]
    if not fresh:
        return  # (no file read: most runs of a set's pattern)
    path, form = _patterns_file(), _program_form()
    kept = _load_table(path, form, _MAX_PATTERNS, _valid_program)
    shapes = {_shape(key) for key in kept}
    new = 0
    for key in fresh:
        if key in kept:  # a program _sre refused, compiled again
            new += kept[key] != table[key]
            kept[key] = table[key]
        elif len(kept) < _MAX_PATTERNS and _shape(key) not in shapes:
            kept[key] = table[key]
            shapes.add(_shape(key))
            new += 1
    if new:
        _store_table(path, form, kept, _MAX_PATTERNS)


def _shape(key: tuple) -> tuple:
    """A pattern's characters in order, its type and flags (:func:`store_kept`)."""
    pattern, flags = key
    return type(pattern), flags, "".join(sorted(pattern)) if type(pattern) is str else bytes(sorted(pattern))


def _forked() -> None:
    _Patterns.added = []  # the parent keeps what it compiled before the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)
