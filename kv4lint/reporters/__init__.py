"""Reporters: render a run's results for people and machines."""

from __future__ import annotations

from kv4lint.reporters.result import RunResult


FORMATS = ("text", "full", "concise", "json", "sarif", "github", "gitlab")


# Each format loads when asked for (sarif loads the rule docs).
def render(fmt: str, result: RunResult, *, color: bool = False, statistics: bool = False, quiet: int = 0) -> str:
    if fmt == "json":
        from kv4lint.reporters.json_ import render as r
        return r(result)
    if fmt == "sarif":
        from kv4lint.reporters.sarif import render as r
        return r(result)
    if fmt == "github":
        from kv4lint.reporters.github import render as r
        return r(result)
    if fmt == "gitlab":
        from kv4lint.reporters.gitlab import render as r
        return r(result)
    from kv4lint.reporters.text import render as r
    return r(result, color=color, concise=fmt == "concise", full=fmt == "full", statistics=statistics, quiet=quiet)
