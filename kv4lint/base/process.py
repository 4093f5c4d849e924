"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API), and what kv4lint does with the cyclic collector: its pause while a file is read, and
what the imports of its stages and parsers leave (and how ``dataclasses`` compiles the methods of the classes
they define).  A leaf: it imports nothing that Python has not loaded at start-up
(``kv4lint --version`` loads it: tests/test_startup.py).

In its own process kv4lint may act on what belongs to the whole process, such as the cyclic collector
(:func:`imports_kept`); in a host's it leaves all of that as it is.
"""

import contextlib
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
    for the same text.

    ``dataclasses`` writes every ``__init__``, ``__repr__``, ``__eq__``... as source and runs it through
    ``exec``, which compiles it each time: libcst's 196 dataclasses ask for 978 methods, 623 distinct (the same
    ``__eq__`` of the same fields, the same frozen ``__setattr__``), and that compiling is most of libcst's
    import (73 of 127 ms).  Here the module's ``exec`` is one that keeps each text's code object and runs that:
    what ``exec`` would have compiled (flags inherited from ``dataclasses``, which imports no future feature;
    file ``<string>``), so the classes are the same, only made sooner (libcst's import about 20 ms less).  It is
    put back when the imports are done, in a host's process too: a class defined meanwhile, by any thread, gets
    the same methods it would have.  Nothing is done where ``dataclasses`` is not loaded yet (kv4lint's own
    stages load it, as does flake8) or where its ``exec`` is replaced already (an import inside another)."""
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None or "exec" in vars(dataclasses):
        yield
        return
    compiled: dict[str, object] = {}

    def exec_compiled_once(source, globals=None, locals=None, /, **kw):
        if type(source) is str:
            code = compiled.get(source)
            if code is None:
                code = compiled[source] = compile(source, "<string>", "exec", dont_inherit=True)
            source = code
        return exec(source, globals, locals, **kw)

    dataclasses.exec = exec_compiled_once
    try:
        yield
    finally:
        if vars(dataclasses).get("exec") is exec_compiled_once:
            del dataclasses.exec
