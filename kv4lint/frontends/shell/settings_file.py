"""What a settings file a script sources (``source env.sh``, ``. ./env.sh``) leaves set, and exports: read by
walking it as a script (:mod:`.walk`), never run.  :mod:`kv4lint.pipeline.sourced` reads each such file and the
script is walked again with its variables bound where the ``source`` line stands."""

from __future__ import annotations

from kv4lint.base.model import ForeignString, SourcedVariables
from kv4lint.frontends.shell.variables import SCALAR, UNSET, Variables
from kv4lint.frontends.shell.parse import ShellText
from kv4lint.frontends.shell.walk import Walker, _Scan


def shell_variables(text: str, path: str, sourced: dict | None = None) -> tuple[SourcedVariables, list[str]]:
    """What a sourced settings file leaves set, which of it it exports (``export``, ``declare -x``, set under
    ``set -a``), and the files it sources.

    Each variable's value is a :class:`~kv4lint.base.model.ForeignString` (None: set, not known statically)
    with, when it is written verbatim, the file and offset it is written at (``path`` for this file's own).
    """
    scan = _Scan(path, None)
    scan.sourced = dict(sourced or {})
    walker = Walker(scan, ShellText(text, None, None, None), Variables(), [])
    try:
        walker.walk()
    except (RecursionError, ValueError):
        return SourcedVariables(), scan.sources
    out: dict = {}
    for name, b in sorted(walker.env.vars.items(), key=lambda item: item[0]):  # (a map without an order)
        if b.kind == SCALAR and b.chars is not None:
            span = b.chars.span()
            where = b.assign.path if b.assign is not None and b.assign.path else path
            out[name] = ForeignString(b.chars.text, where, span.start) if span else ForeignString(b.chars.text)
        elif b.kind != UNSET:
            out[name] = None
    return SourcedVariables(out, frozenset(n for n in out if n in walker.env.exported)), scan.sources
