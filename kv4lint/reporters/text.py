"""``--format text`` (default) and ``concise``: ``path:line:col: CODE message``."""

from __future__ import annotations

from collections import Counter

from kv4lint.reporters import RunResult

_RED, _YELLOW, _BOLD, _DIM, _RESET = "\033[31m", "\033[33m", "\033[1m", "\033[2m", "\033[0m"


def render(result: RunResult, *, color: bool = False, concise: bool = False, statistics: bool = False) -> str:
    def c(code: str, s: str) -> str:
        return f"{code}{s}{_RESET}" if color else s

    lines = []
    for f in result.findings:
        msg = _one_line(f.message)
        if f.cell:
            pos = f"{f.path}:cell {f.cell[0]}:{f.cell[1]}"
        else:
            pos = f"{f.path}:{f.start.line}:{f.start.column}" if f.start else f.path
        sev = _RED if f.severity.value == "error" else _YELLOW
        if concise:
            lines.append(f"{pos}: {f.code} {msg}")
        else:
            fixable = " [*]" if f.fix and f.fix.edits and f.fix.applicability == "safe" else ""
            lines.append(f"{c(_BOLD, pos)}: {c(sev, f.code)}{fixable} {msg}")
    for e in result.errors:
        loc = f"{e.path}:{e.line}" if e.line else e.path
        lines.append(f"{loc}: {c(_RED, 'error')}: {_one_line(e.message)}")
    for n in result.notices:
        lines.append(c(_DIM, f"note: {n}"))
    if statistics and result.findings:
        lines += _statistics(result)
    if not concise:
        nf = len(result.findings)
        fixable = sum(1 for f in result.findings if f.fix and f.fix.edits and f.fix.applicability == "safe")
        summary = (f"Found {nf} finding{'s' if nf != 1 else ''} in {result.files_scanned} "
                   f"file{'s' if result.files_scanned != 1 else ''}")
        if fixable:
            summary += f" ({fixable} fixable with `kv4lint fix`)"
        if result.errors:
            summary += f"; {len(result.errors)} file error{'s' if len(result.errors) != 1 else ''}"
        lines.append(summary + ".")
    return "\n".join(lines) + ("\n" if lines else "")


def _statistics(result: RunResult) -> list[str]:
    """``--statistics``: one line per code: count, code, ``[*]`` when some are safely fixable, summary."""
    from kv4lint.rules.codes import RULES

    counts = Counter(f.code for f in result.findings)
    fixable = {f.code for f in result.findings if f.fix and f.fix.edits and f.fix.applicability == "safe"}
    width = max(len(str(k)) for k in counts.values())
    out = []
    for code, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = RULES.get(code)
        mark = "[*]" if code in fixable else "   "
        out.append(f"{k:>{width}}  {code}  {mark} {rule.summary if rule else ''}".rstrip())
    return out


def _one_line(message: str) -> str:
    """One finding, one line (grep and editors' error parsers read lines)."""
    return " ".join(message.split("\n")).replace("\r", "")
