"""What the language server answers from a buffer's judgement (:class:`kv4lint.cli.server.buffer.Judged`):
diagnostics, code actions and hovers, as lsprotocol records.  Pure functions: the positions were worked out
where the buffer was judged, so nothing here reads the buffer's text.

- a diagnostic per finding: the code and one-line message ``check`` prints, red for an error, yellow for a
  warning, its ``codeDescription`` the rule's page where the pages' URL is known (``rule-docs-url``, as
  SARIF's ``helpUri``); a file kv4lint could not read or check is one error diagnostic at the line that
  stopped it;
- code actions at the cursor, wherever it meets a finding's refused values (its range, the values its fix
  edits, and the span between them in one launch): its fix as a quick fix (safe: preferred, what an
  editor's "auto fix" applies; unsafe, a warning's fix included: labelled, never preferred), and "Disable
  KVxxx for this line" (the suppression comment the format takes); titles of at most :data:`TITLE` characters
  (the reason a fix is unsafe is in the hover);
- ``source.fixAll.kv4lint``: every safe fix of an error, from the fix engine, as one edit;
- a hover over a finding: its headline, this launch's detail (SGLang's words, where the target came from), its
  target, its fix and why it is or is not safe, then the rule's explanation (``kv4lint explain CODE``).
"""

from __future__ import annotations

from lsprotocol import types

from kv4lint.cli.server.buffer import Item, Judged, Range
from kv4lint.reporters.ruledoc import sections
from kv4lint.rules.codes import RULES

SOURCE = "kv4lint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"  # source.fixAll.kv4lint
TITLE = 60  # characters of an action's title at most


def _range(r: Range) -> types.Range:
    return types.Range(types.Position(r[0], r[1]), types.Position(r[2], r[3]))


def _meets(r: Range, start: tuple[int, int], end: tuple[int, int]) -> bool:
    return not ((r[2], r[3]) < start or (r[0], r[1]) > end)


def _diagnostic(item: Item, docs: str | None) -> types.Diagnostic:
    severity = types.DiagnosticSeverity.Error if item.severity == "error" else types.DiagnosticSeverity.Warning
    return types.Diagnostic(
        range=_range(item.range), message=item.message, severity=severity, code=item.code, source=SOURCE,
        code_description=types.CodeDescription(href=f"{docs}{item.code}.md") if docs else None)


def diagnostics(judged: Judged) -> list[types.Diagnostic]:
    out = [_diagnostic(item, judged.docs) for item in judged.items]
    for message, line in judged.errors:
        at = max(0, (line or 1) - 1)
        out.append(types.Diagnostic(
            range=types.Range(types.Position(at, 0), types.Position(at, 0)),
            message=f"kv4lint could not check this file: {message}", severity=types.DiagnosticSeverity.Error,
            source=SOURCE))
    return out


def title(text: str, limit: int = TITLE) -> str:
    """``text`` in at most ``limit`` characters, cut at a word, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:(") + "…"


def fix_title(item: Item) -> str:
    """``KV401: set --kv-cache-dtype fp8_e4m3``: the fix's first words; the reason it is unsafe (a warning's
    fix, a value other code reads, SGLang's words about the result) is in the hover."""
    description = (item.fix or "").split(" (", 1)[0]
    return title(f"{item.code}: {description}" if item.safe else f"{item.code} (unsafe): {description}")


def _fix_action(item: Item, diag: types.Diagnostic, uri: str, open_text) -> types.CodeAction | None:
    changes: dict[str, list[types.TextEdit]] = {}
    for r, text in item.edits:
        changes.setdefault(uri, []).append(types.TextEdit(range=_range(r), new_text=text))
    for path, start, end, text in item.elsewhere:  # a sourced env.sh, a --config YAML: the same edit
        other = open_text(path)
        if other is None:
            return None
        uri_p, pos = other
        changes.setdefault(uri_p, []).append(types.TextEdit(range=_range(pos.range(start, end)), new_text=text))
    if not changes:
        return None
    return types.CodeAction(title=fix_title(item), kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            is_preferred=item.safe, edit=types.WorkspaceEdit(changes=changes))


def code_actions(judged: Judged, uri: str, start: tuple[int, int], end: tuple[int, int], open_text,
                 quick_fixes: bool = True) -> list[types.CodeAction]:
    """The quick fixes and "disable" actions of the findings whose refused values ``start``..``end`` (LSP
    positions) meets.  ``open_text(path)``: (its URI, :class:`Positions`) of another file an edit reaches (the
    editor's buffer when open, else the file), or None when it cannot be read."""
    if not quick_fixes:
        return []
    fixes, disables = [], []
    for item in judged.items:
        if not any(_meets(r, start, end) for r in item.hot):
            continue
        diag = _diagnostic(item, judged.docs)
        if item.fix is not None:
            action = _fix_action(item, diag, uri, open_text)
            if action is not None:
                fixes.append(action)
        if item.suppress is not None:
            r, text = item.suppress
            disables.append(types.CodeAction(
                title=title(f"Disable {item.code} for this line"), kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag], edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(_range(r), text)]})))
    fixes.sort(key=lambda a: not a.is_preferred)  # the safe fix first
    return fixes + disables


def fix_all_action(uri: str, edit: tuple[Range, str]) -> types.CodeAction:
    """``source.fixAll.kv4lint``: every safe fix of an error, as the one edit :func:`buffer.fix_all` made."""
    r, text = edit
    return types.CodeAction(title="kv4lint: apply every safe fix", kind=FIX_ALL,
                            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(_range(r), text)]}))


def hover(judged: Judged, line: int, character: int) -> types.Hover | None:
    """The findings under the cursor, explained: this finding, then the rule."""
    parts, where = [], None
    for item in judged.items:
        if not _meets(item.range, (line, character), (line, character)):
            continue
        where = where or item.range
        lines = [f"**{item.code}** ({item.severity}): {item.message}"]
        if item.detail:
            lines.append(item.detail)
        if item.target:
            lines.append("Judged for: " + _target(item.target))
        if item.fix is not None:
            safety = "safe" if item.safe else "unsafe, not applied by fix-all" + (
                "" if item.severity == "error" else ": a warning, refused only on some targets")
            lines.append(f"Fix ({safety}): {item.fix}")
        rule = RULES.get(item.code)
        if rule is not None:
            s = sections(rule)
            lines.append(f"*{rule.summary}* — {s['Why SGLang refuses it']}")
            lines.append(f"`kv4lint explain {item.code}`" + (f" · [rule page]({judged.docs}{item.code}.md)"
                                                             if judged.docs else ""))
        parts.append("\n\n".join(lines))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)),
                       range=_range(where))


def _target(t: dict) -> str:
    src = t.get("sources") or {}

    def part(name: str, key: str, value) -> str:
        how = src.get(key)
        return f"{name} {value if value is not None else 'unknown'}" + (f" ({how})" if how else "")

    return ", ".join([
        part("SGLang", "sglang_version", t.get("sglang_version") or "newest"),
        part("platform", "platform", t.get("platform")),
        part("GPU", "gpu", t.get("gpu")),
        part("model attention", "model_attention", t.get("model_attention")),
    ])
