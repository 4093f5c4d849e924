"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

    ::error file=scripts/serve.sh,line=3,col=5,endLine=3,endColumn=19,title=KV401::message

``warning`` for warnings.  A span over several lines gets no ``col``/``endColumn``
(GitHub then marks the lines).  Paths are relative to ``$GITHUB_WORKSPACE`` (the
checkout) when set, else to the git repository holding the run's root.  The message escapes ``%``, CR and
LF; properties also escape ``:`` and ``,``.
"""

from __future__ import annotations

import os

from kv4lint.base.model import Severity
from kv4lint.base.printable import printable
from kv4lint.reporters.paths import relative, repository_root
from kv4lint.reporters.result import RunResult


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, props: list[tuple[str, object]], message: str) -> str:
    # A control character (a file name's escape sequence) is written as an escape, never raw.
    message = printable(message, keep="\r\n")
    p = ",".join(f"{k}={escape_property(printable(str(v)))}" for k, v in props)
    return f"::{kind} {p}::{escape_data(message)}" if p else f"::{kind}::{escape_data(message)}"


def render(result: RunResult) -> str:
    base = os.environ.get("GITHUB_WORKSPACE") or repository_root(result.root)
    lines = []
    for f in result.findings:
        path = relative(f.path, base) or f.path
        props: list[tuple[str, object]] = [("file", path)]
        if f.start is not None:
            end = f.end or f.start
            props.append(("line", f.start.line))
            if end.line == f.start.line:
                end_col = max(end.column, f.start.column)
                props += [("col", f.start.column), ("endLine", end.line), ("endColumn", end_col)]
            else:
                props.append(("endLine", end.line))
        props.append(("title", f.code))
        kind = "error" if f.severity is Severity.ERROR else "warning"
        lines.append(_command(kind, props, f.message))
    for e in result.errors:
        props = [("file", relative(e.path, base) or e.path)]
        if e.line:
            props.append(("line", e.line))
        props.append(("title", "kv4lint"))
        lines.append(_command("error", props, e.message))
    for n in result.notices:
        lines.append(_command("notice", [("title", "kv4lint")], n))
    return "\n".join(lines) + ("\n" if lines else "")
