"""Fixes as text edits: plan them from a finding's abstract Fix and the launch's spans.

The fix engine proper (applying edits, re-linting until stable, writing files
atomically) builds on :func:`plan` and :func:`apply_edits`.
"""

from __future__ import annotations

import os
import re

from kv4lint.base.model import Edit, Fix, Launch, Provenance, Span, Value
from kv4lint.base.record import replace
from kv4lint.sglang.options import Args


def _editable(v: Value) -> bool:
    return v.span is not None and v.known


def plan(fix: Fix, args: Args, launch: Launch) -> Fix | None:
    """Realise ``fix`` as edits on the launch's source, or ``None`` when it cannot be done in place.

    Safe: every edited value is written at the launch site (or in a variable
    used only by this launch) in the same file.  Unsafe: an edited value is
    shared with other code or lives in another file.
    """
    edits: list[Edit] = []
    unsafe = False
    elsewhere: list[str] = []  # the other files a value is rewritten in (a sourced script, an env file, ...)
    for name, new in fix.set.items():
        occs = args.occurrences.get(name)
        if not occs:
            return None
        occ = occs[-1]
        v = occ.values[0] if occ.values else None
        if v is None or not _editable(v):
            return None
        path = launch.config_path if occ.from_config else v.path
        edits.append(Edit(v.span, new, path))
        if v.path and not occ.from_config and v.path not in elsewhere:
            elsewhere.append(v.path)
        if v.shared or v.provenance not in (Provenance.LITERAL, Provenance.RESOLVED) or path:
            unsafe = True
    for name in fix.remove:
        for occ in args.occurrences.get(name, []):
            path = launch.config_path if occ.from_config else None
            tokens = [occ.option] + ([] if occ.inline or args.form == "kwargs" else occ.values)
            for t in tokens:
                if t.remove is None:
                    return None
                if t.shared:
                    unsafe = True
                edits.append(Edit(t.remove, "", path))
            if path:
                unsafe = True
    if not edits:
        return None
    unsafe = unsafe or fix.applicability == "unsafe"  # the rules may already know the result is refused
    description = fix.description
    if elsewhere:  # say why it is unsafe: the edit reaches every file that reads these settings
        names = ", ".join(dict.fromkeys(os.path.basename(p) for p in elsewhere))
        description += f" (unsafe: written in {names}, which other files may read too)"
    return replace(fix, edits=tuple(_dedupe(edits)), applicability="unsafe" if unsafe else "safe",
                   description=description)


def _dedupe(edits: list[Edit]) -> list[Edit]:
    out: list[Edit] = []
    seen = set()
    for e in sorted(edits, key=lambda e: (e.path or "", e.span.start, e.span.end)):
        key = (e.path, e.span, e.text)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits to ``text`` (sorted; an edit overlapping an earlier one is skipped).

    Returns the new text and the edits that were skipped.
    """
    chosen: list[Edit] = []
    skipped: list[Edit] = []
    last_end = -1
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        if e.span.start < last_end or (chosen and e.span.start == last_end == chosen[-1].span.start
                                       and e.span.start == e.span.end):
            skipped.append(e)
            continue
        chosen.append(e)
        last_end = e.span.end
    parts = []
    pos = 0
    for e in chosen:
        parts.append(text[pos:e.span.start])
        parts.append(e.text)
        pos = e.span.end
    parts.append(text[pos:])
    return "".join(parts), skipped


_REST_OF_LINE = re.compile(r"[ \t]*(?:\r\n|\r|\n)")
_CLOSERS = "]}"  # not ")": ("a", "b") without the comma before its last element would be a string, not a tuple


def merge_overlapping_removals(edits: list[Edit]) -> list[Edit]:
    """Removals (edits to nothing) that overlap as one removal of their union.

    Two removals of one fix may share a separator (an option that takes the blanks after it, because a
    comment stands before it, and its value that takes the blanks before it): applied one by one, the
    second would be skipped as overlapping and the value left behind as a stray argument.
    """
    rm = sorted((e for e in edits if not e.text), key=lambda e: (e.path or "", e.span.start, e.span.end))
    merged: list[Edit] = []
    for e in rm:
        last = merged[-1] if merged else None
        if last is not None and last.path == e.path and e.span.start < last.span.end:
            merged[-1] = Edit(Span(last.span.start, max(last.span.end, e.span.end)), "", last.path)
        else:
            merged.append(e)
    return [e for e in edits if e.text] + merged


def tidy_removals(text: str, edits: list[Edit]) -> list[Edit]:
    """Python: the removals of adjacent elements of a list as one edit, without the separators they leave.

    A removed element's span takes its own separator, so removing the last
    elements of ``["a", "--x", "y"]`` would leave ``["a", ]``, and a last
    element alone on its line a blank line.  Here, removals that touch are
    merged; a removal that ends before a closing ``]`` / ``}`` on its line
    takes the comma before it, and one that leaves only blanks on its line
    takes the whole line (as does one that ends where a line starts: the next
    line keeps its indentation).  Only blanks and that one comma are ever added
    to a removal; a comment is never in one (the frontends end a removal before
    a comment at the end of its line).
    """
    rm = sorted((e for e in edits if not e.text), key=lambda e: (e.path or "", e.span.start, e.span.end))
    if not rm:
        return edits
    merged: list[Edit] = []
    for e in rm:
        last = merged[-1] if merged else None
        if last is not None and last.path == e.path and e.span.start <= last.span.end:
            merged[-1] = Edit(Span(last.span.start, max(last.span.end, e.span.end)), "", last.path)
        else:
            merged.append(e)
    out = [e for e in edits if e.text]
    for e in merged:
        a, b = e.span.start, e.span.end
        j = b
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] in _CLOSERS:
            i = a
            while i > 0 and text[i - 1] in " \t":
                i -= 1
            if i > 0 and text[i - 1] == ",":
                a = i - 1
        else:
            line_start = max(text.rfind("\n", 0, a), text.rfind("\r", 0, a)) + 1
            if not text[line_start:a].strip(" \t") and line_start < a:
                m = _REST_OF_LINE.match(text, b)
                if m:
                    a, b = line_start, m.end()
                elif b > a and text[b - 1] in "\r\n":
                    a = line_start  # whole lines go: the next line keeps its own indentation
        out.append(Edit(Span(a, b), "", e.path))
    return out
