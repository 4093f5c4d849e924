"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API), and what kv4lint does with the cyclic collector: its pause while a file is read, and
what the imports of its stages and parsers leave (and how ``dataclasses`` compiles the methods of the classes
they define).  A leaf: it imports nothing that Python has not loaded at start-up
(``kv4lint --version`` loads it: tests/test_startup.py).

In its own process kv4lint may act on what belongs to the whole process, such as the cyclic collector
(:func:`imports_kept`); in a host's it leaves all of that as it is.
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
            global _kept
            compiled = _kept
            if compiled is None:  # the first class: the kept methods are read (not by imports that define none)
                compiled = _kept = _load_methods()
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
            _store_methods(_kept)


# The methods' code objects of this process, by their texts: the file's (_load_methods, read when the first class
# asks) and those compiled since.
_kept: "dict[str, object] | None" = None


# The file of kept methods: its format, the most texts it keeps (libcst's and Markdown's parsers' are 700; more
# come only from a host's own classes, defined while kv4lint imports), and the most bytes read of it.
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
