"""Whose process kv4lint runs in: its own (the ``kv4lint`` command) or a host's (flake8 with the plugin, an editor
or a script using the API).  A leaf: it imports nothing and costs nothing at start-up.

In its own process kv4lint may act on what belongs to the whole process, such as the cyclic collector
(``kv4lint.frontends.imports_kept``); in a host's it leaves all of that as it is.
"""

own = False  # kv4lint's own process: set by the kv4lint command (kv4lint.cli.console); forked children inherit it


def claim() -> None:
    """Say that this process is kv4lint's own (the ``kv4lint`` command and ``python -m kv4lint``)."""
    global own
    own = True
