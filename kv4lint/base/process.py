"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API), and what kv4lint does with the cyclic collector: its pause while a file is read, and
what the imports of its stages and parsers leave.  A leaf: it imports nothing that Python has not loaded at start-up
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
    (flake8, the API) is left as it is: ``gc.freeze`` acts on all of its objects, not on kv4lint's alone."""
    loaded = len(sys.modules)
    yield
    if own and len(sys.modules) != loaded:
        import gc  # built in, but not loaded by ``kv4lint --version``

        gc.freeze()
