"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API), and the cyclic collector's pause while a file is read.  A leaf: it imports nothing
that Python has not loaded at start-up (``kv4lint --version`` loads it: tests/test_startup.py).

In its own process kv4lint may act on what belongs to the whole process, such as the cyclic collector
(``kv4lint.frontends.imports_kept``); in a host's it leaves all of that as it is.
"""

import contextlib

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
    it leaves is collected after, as usual.  The frontends' scan (``kv4lint.frontends.gc_paused``) and the
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
