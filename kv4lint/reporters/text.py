"""``--format text`` (default): ``path:line:col: CODE (severity) [*] message``; ``concise``: ``path:line:col: CODE
message``; ``full``: each finding also with
its source line and a caret under the value, the fix, SGLang's side of it and a ``kv4lint explain CODE`` hint
(ruff's ``full`` against ``concise``)."""

from __future__ import annotations

from collections import Counter

from kv4lint.base.printable import printable
from kv4lint.reporters.result import RunResult

_RED, _YELLOW, _BOLD, _DIM, _RESET = "\033[31m", "\033[33m", "\033[1m", "\033[2m", "\033[0m"


def render(result: RunResult, *, color: bool = False, concise: bool = False, full: bool = False,
           statistics: bool = False, quiet: int = 0) -> str:
    """The findings, the files that could not be checked, then a summary.

    ``statistics``: one line per code instead of the findings.  ``quiet`` 1: findings and file
    errors only; 2: nothing.  After ``kv4lint fix`` (``result.fixed`` set) the summary counts the
    findings fixed and those remaining; a hint says when fixes were left because they are unsafe.
    """
    if quiet >= 2:
        return ""

    def c(code: str, s: str) -> str:
        return f"{code}{s}{_RESET}" if color else s

    lines = []
    sources: dict[str, list[str] | None] = {}
    # With --diff the diff shows the fixes, and the summary counts the rest.
    if not statistics and not result.would_fix:
        for f in result.findings:
            msg = _one_line(f.message)
            path = printable(f.path)
            if f.cell:
                pos = f"{path}:cell {f.cell[0]}:{f.cell[1]}"
            else:
                pos = f"{path}:{f.start.line}:{f.start.column}" if f.start else path
            sev = _RED if f.severity.value == "error" else _YELLOW
            if concise:
                lines.append(f"{pos}: {f.code} {msg}")
            else:
                lines.append(f"{c(_BOLD, pos)}: {c(sev, f.code)} ({f.severity.value}){' [*]' if _safe(f) else ''} "
                             f"{msg}")
                if full:
                    lines += _full(f, sources, lambda s, sev=sev: c(sev, s), lambda s: c(_DIM, s))
    for e in result.errors:
        loc = f"{printable(e.path)}:{e.line}" if e.line else printable(e.path)
        lines.append(f"{loc}: {c(_RED, 'error')}: {_one_line(e.message)}")
    if quiet:
        lines += _statistics(result) if statistics else []
        return "\n".join(lines) + ("\n" if lines else "")
    for n in result.notices:
        lines.append(c(_DIM, f"note: {_one_line(n)}"))
    if statistics:  # counts by code, no finding and no summary
        return "\n".join(lines + _statistics(result)) + "\n"
    if not concise and not statistics and result.fixed is None:  # kv4lint fix tells its own (stderr)
        lines.append(summary(result))
        hint = unsafe_hint(result)
        if hint:
            lines.append(hint)
    return "\n".join(lines) + ("\n" if lines else "")


def _safe(f) -> bool:
    return bool(f.fix and f.fix.edits and f.fix.applicability == "safe")


def _unsafe(f) -> bool:
    return bool(f.fix and f.fix.edits and f.fix.applicability == "unsafe")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{('es' if word.endswith('x') else 's') if n != 1 else ''}"


def summary(result: RunResult) -> str:
    """``Found N findings in M files ...``, or after a fix ``Fixed F findings in W files (R remaining)``."""
    nf = len(result.findings)
    if result.fixed is not None:
        verb = "Would fix" if result.would_fix else "Fixed"
        return (f"{verb} {_plural(result.fixed, 'finding')} in {_plural(result.fixed_files, 'file')} "
                f"({nf} remaining).")  # the errors are listed above it
    else:
        summary = f"Found {_plural(nf, 'finding')}{_by_severity(result)} in {_plural(result.files_scanned, 'file')}"
        fixable = sum(1 for f in result.findings if _safe(f))
        if fixable:
            summary += f" ({fixable} fixable with `kv4lint fix`)"
    if result.errors:
        summary += f"; {_plural(len(result.errors), 'file error')} (not fully checked)"
    return summary + "."


def _by_severity(result: RunResult) -> str:
    """`` (1 error, 1 warning)``: the findings by severity, errors first; nothing when there are none."""
    counts = Counter(f.severity.value for f in result.findings)
    parts = [_plural(counts[s], s) for s in ("error", "warning", "note") if counts[s]]
    parts += [_plural(k, s) for s, k in counts.items() if s not in ("error", "warning", "note")]
    return f" ({', '.join(parts)})" if parts else ""


def unsafe_hint(result: RunResult) -> str | None:
    if result.unsafe_fixes_applied:
        return None
    n = sum(1 for f in result.findings if _unsafe(f))
    if not n:
        return None
    return (f"{_plural(n, 'more fix')} {'is' if n == 1 else 'are'} available but unsafe (see each finding): "
            "review with `kv4lint fix --diff --unsafe-fixes`, apply with `kv4lint fix --unsafe-fixes`.")


def _statistics(result: RunResult) -> list[str]:
    """``--statistics``: one line per code: count, code, ``[*]`` when some are safely fixable, summary."""
    from kv4lint.rules.codes import RULES

    if not result.findings:
        return []
    counts = Counter(f.code for f in result.findings)
    fixable = {f.code for f in result.findings if f.fix and f.fix.edits and f.fix.applicability == "safe"}
    width = max(len(str(k)) for k in counts.values())
    out = []
    for code, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = RULES.get(code)
        mark = "[*]" if code in fixable else "   "
        out.append(f"{k:>{width}}  {code}  {mark} {rule.summary if rule else ''}".rstrip())
    return out


def _source_line(path: str, line: int, sources: dict) -> str | None:
    if path not in sources:
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                sources[path] = fh.read().splitlines()
        except OSError:
            sources[path] = None
    text = sources[path]
    return text[line - 1] if text is not None and 0 < line <= len(text) else None


def _full(f, sources: dict, mark, dim) -> list[str]:
    """The lines under a finding in ``--format full``."""
    out = []
    src = None if f.cell or not f.start else _source_line(f.path, f.start.line, sources)
    if src is not None:
        n = str(f.start.line)
        pad = " " * len(n)
        start = max(f.start.column - 1, 0)
        end = f.end.column - 1 if f.end and f.end.line == f.start.line and f.end.column > f.start.column \
            else len(src.rstrip())
        width = max(end - start, 1)
        lead = "".join(ch if ch == "\t" else " " for ch in src[:start])
        shown = printable(src.rstrip(), keep="\t")
        out += [dim(f"{pad} |"), f"{dim(n + ' |')} {shown}", f"{dim(pad + ' |')} {lead}{mark('^' * width)} "
                f"{mark(f.code)}", dim(f"{pad} |")]
    if f.fix is not None and f.fix.description:
        safety = "" if f.fix.applicability == "safe" else f" ({f.fix.applicability}: applied with --unsafe-fixes)"
        out.append(f"  = fix: {_one_line(f.fix.description)}{safety}")
    if getattr(f, "detail", None):
        out.append(f"  = detail: {_one_line(f.detail)}")
    out.append(f"  = help: kv4lint explain {f.code}")
    out.append("")
    return out


def _one_line(message: str) -> str:
    """One finding, one line (grep and editors' error parsers read lines), nothing a terminal obeys."""
    return printable(" ".join(message.split("\n")).replace("\r", ""))
