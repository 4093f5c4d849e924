"""One editor buffer judged as ``kv4lint check`` judges the file, with everything the editor's requests need
worked out at once, in the checking process (:mod:`kv4lint.cli.server.worker`): the request loop then only
looks things up.

- the same pipeline as the stdin route (``kv4lint check --stdin-filename PATH -``): the file's name and first
  line choose its language (a file ``kv4lint check .`` would skip gets nothing), the nearest ``[tool.kv4lint]``
  / ``kv4lint.toml`` above it its settings (read again for every buffer) and its exclusion, the runner its
  findings;
- the CLI's bounds: a buffer larger than ``max-file-size`` is not parsed; it gets one error naming the limit,
  as ``check`` reports such a file;
- positions in LSP's terms (0-based lines, UTF-16 code units), for each finding: its range, where its
  actions are offered (its range, the values its fix edits, and, within one launch, the span between
  them: the dtype, the backend and what lies between), its fix's edits, and the edit that disables its code
  for that line (:class:`kv4lint.fixes.add_suppressions.Placer`, the one writer of suppression comments);
- fix-all: the fix engine (:func:`kv4lint.pipeline.fix_engine.fix_text`) with the safe fixes of errors only, never a
  warning's.

Nothing here imports pygls: the checking process never loads it.
"""

from __future__ import annotations

import copy
import os

from kv4lint import frontends
from kv4lint.base.model import Finding, Severity, Span
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.cli.check import _excluded_by_config
from kv4lint.files.discover import chosen, language_of
from kv4lint.fixes.add_suppressions import Placer, no_comment_reason
from kv4lint.pipeline.fix_engine import fix_text
from kv4lint.pipeline.runner import lint_text
from kv4lint.reporters.sarif import project_urls
from kv4lint.settings.config import ConfigResolver
from kv4lint.settings.options import Overrides

Range = tuple[int, int, int, int]  # LSP: start line, start character, end line, end character (UTF-16)


class Item:
    """One finding as the editor shows it, in plain values (a large buffer's thousands of findings cross from
    the checking process in milliseconds; the rich model would take a second to unpickle).

    ``code``, ``severity`` ("error" or "warning"), ``message``, ``detail``, ``target`` (what it was judged
    for, with the sources) and ``fix`` (the fix's description, or None) are the finding's; then, in LSP
    positions: ``range`` (the squiggle), ``hot`` (where its actions are offered), ``edits`` (its fix's edits in
    this buffer: range, new text), ``elsewhere`` (its fix's edits in other files: path, start and end offset,
    new text; the other file's text is the editor's or the disk's, read when the action is asked for),
    ``safe`` (the fix is an error's and safe), ``suppress`` (the edit that disables its code for its line).
    """

    __slots__ = ("code", "severity", "message", "detail", "target", "fix", "range", "hot", "edits", "elsewhere",
                 "safe", "suppress")

    def __init__(self, code: str, severity: str, message: str, detail: str | None, target: dict | None,
                 fix: str | None, range: Range, hot: list[Range], edits: list[tuple[Range, str]],
                 elsewhere: list[tuple[str, int, int, str]], safe: bool, suppress: tuple[Range, str] | None):
        self.code = code
        self.severity = severity
        self.message = message
        self.detail = detail
        self.target = target
        self.fix = fix
        self.range = range
        self.hot = hot
        self.edits = edits
        self.elsewhere = elsewhere
        self.safe = safe
        self.suppress = suppress

    def __reduce__(self):
        return Item, tuple(getattr(self, f) for f in self.__slots__)


class Judged:
    """A buffer's judgement: an :class:`Item` per finding (sorted, as ``check`` prints them), the errors of a
    file kv4lint could not read or check ((message, line or None) each), and the base URL of the rule pages
    (or None)."""

    __slots__ = ("path", "items", "errors", "docs")

    def __init__(self, path: str, items: list[Item] | None = None, errors: list[tuple[str, int | None]] | None = None,
                 docs: str | None = None):
        self.path = path
        self.items = items or []
        self.errors = errors or []
        self.docs = docs

    def __reduce__(self):
        return Judged, (self.path, self.items, self.errors, self.docs)


class Options:
    """The command line's part of every judgement: ``kv4lint server --gpu h100 --config FILE --isolated``."""

    __slots__ = ("overrides", "config_file", "isolated")

    def __init__(self, overrides: Overrides | None = None, config_file: str | None = None, isolated: bool = False):
        self.overrides = overrides or Overrides()
        self.config_file = config_file
        self.isolated = isolated

    def __reduce__(self):  # sent to the checking process
        return Options, (self.overrides, self.config_file, self.isolated)


def settings_for(path: str, text: str, options: Options) -> tuple[Settings, str] | None:
    """The settings and language ``check`` would judge the file ``path`` with, or None where ``check .``
    reads no such file (its name, no shebang, excluded).  A bad configuration raises ConfigError."""
    resolver = ConfigResolver(options.overrides, config_file=options.config_file, isolated=options.isolated)
    wanted, language = chosen(path)
    if not wanted:
        return None
    language = language or language_of(path, text[:256].encode("utf-8", "surrogatepass"))
    if language is None:
        return None  # no name kv4lint reads and no shebang: `check .` skips it too
    settings = resolver.settings_for(path, is_dir=False)
    if _excluded_by_config(path, settings):
        return None
    return settings, language


def too_large(text: str, limit: int) -> int | None:
    """The buffer's size in bytes (UTF-8, as it would be saved) when it exceeds ``limit``, else None."""
    if len(text) <= limit // 4:  # at most 4 bytes a character: no need to count
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > limit else None


def _size(n: int, form: str) -> str:
    return f"{n / 1e6:{form}} MB" if n >= 1_000_000 else f"{n} bytes"


def judge_buffer(path: str, text: str, options: Options | None = None) -> Judged:
    """Judge an editor's buffer ``text`` as the file ``path`` (which need not be saved)."""
    options = options or Options()
    chose = settings_for(path, text, options)
    if chose is None:
        return Judged(path)
    settings, language = chose
    docs = settings.rule_docs_url or project_urls()[1]
    if docs and not docs.endswith("/"):
        docs += "/"
    size = too_large(text, settings.max_file_bytes)
    if size is not None:  # as `check` skips such a file: named, never parsed
        limit = _size(settings.max_file_bytes, ".0f")
        return Judged(path, errors=[(f"not checked: {_size(size, '.1f')} is larger than the {limit} limit "
                                     "(max-file-size)", None)], docs=docs)
    rep = lint_text(path, text, settings, language, flake8_noqa=True)  # as `check` reads a file
    findings = sorted(rep.findings, key=lambda f: f.sort_key())
    items = _items(path, text, language, findings) if findings else []
    return Judged(path, items, [(e.message, e.line) for e in rep.errors], docs)


def fix_all(path: str, text: str, options: Options | None = None) -> tuple[Range, str] | None:
    """Every safe fix of an error applied to the buffer (the fix engine's rounds, re-linted), as one edit of
    the part that changed (its range in ``text``, the new text), or None when nothing changes.  A warning's
    fix is never applied: it removes a choice that works on some targets."""
    chose = settings_for(path, text, options or Options())
    if chose is None:
        return None
    settings, language = chose
    if too_large(text, settings.max_file_bytes) is not None:
        return None
    errors_only = copy.copy(settings)
    errors_only.severity = Severity.ERROR.value  # warnings are neither reported nor fixed
    fixed = fix_text(path, text, errors_only, language, unsafe=False)
    if not fixed.changed:
        return None
    new = fixed.new_text
    a = _common(text, new, lambda s, k: s[:k])
    b = _common(text[a:], new[a:], lambda s, k: s[len(s) - k:])
    return Positions(text).range(a, len(text) - b), new[a:len(new) - b]


def _common(x: str, y: str, part) -> int:
    """The length of the longest common prefix (or suffix: ``part``) of ``x`` and ``y``, by bisection (each
    comparison at C speed)."""
    lo, hi = 0, min(len(x), len(y))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if part(x, mid) == part(y, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# ---------------------------------------------------------------------------
# Positions: kv4lint's offsets -> LSP's 0-based lines and UTF-16 units


class Positions:
    """Character offsets of one text as LSP positions (0-based line, UTF-16 code units into the line)."""

    def __init__(self, text: str):
        self.index = LineIndex(text)

    def at(self, offset: int) -> tuple[int, int]:
        p = self.index.position(offset)
        return p.line - 1, utf16(self.index.line_text(p.line)[:p.column - 1])

    def range(self, start: int, end: int) -> Range:
        return (*self.at(start), *self.at(max(start, end)))


def utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


# ---------------------------------------------------------------------------
# The checking process scans a buffer once: its launches' spans come from the runner's own scan


_last_scan: list = [None, None]  # (text, ScanResult) of the last top-level scan (remember_scans)


def remember_scans() -> None:
    """In the checking process: keep the last scan the runner made, so that the launches' spans (where a
    finding's actions are offered, where a directive line goes) cost no second parse.  Elsewhere each
    judgement scans again."""
    scan = frontends.scan

    def remembering(path, text, language):
        result = scan(path, text, language)
        _last_scan[:] = [text, result]  # a nested scan finishes first: the buffer's is the last one
        return result

    frontends.scan = remembering


def _launch_spans(path: str, text: str, language: str) -> list[Span]:
    held, result = _last_scan
    _last_scan[:] = [None, None]
    if held is not text:
        try:
            result = frontends.scan(path, text, language)
        except Exception:  # noqa: BLE001 - a frontend problem only costs the launches' spans
            return []
    return [launch.span for launch in result.launches]


def _items(path: str, text: str, language: str, findings: list[Finding]) -> list[Item]:
    pos = Positions(text)
    launches = _launch_spans(path, text, language)
    placer = Placer(text, language, launches) if no_comment_reason(path, text, language) is None else None
    here = os.path.abspath(path)
    out = []
    for f in findings:
        if f.span is not None:
            span = f.span
        else:
            start = f.start or pos.index.position(0)
            a = pos.index.offset(start.line, start.column)
            b = pos.index.offset(f.end.line, f.end.column) if f.end else a
            span = Span(a, max(a, b))
        edits: list[tuple[Range, str]] = []
        elsewhere: list[tuple[str, int, int, str]] = []
        spans = [span]
        for e in f.fix.edits if f.fix else ():
            if e.path is None or os.path.abspath(e.path) == here:
                edits.append((pos.range(e.span.start, e.span.end), e.text))
                spans.append(e.span)
            else:
                elsewhere.append((e.path, e.span.start, e.span.end, e.text))
        hot = [pos.range(s.start, s.end) for s in spans]
        launch = min((sp for sp in launches if sp.start <= span.start and span.end <= sp.end),
                     key=lambda sp: sp.end - sp.start, default=None)
        if launch is not None and len(spans) > 1:  # the refused values and what lies between, in one launch
            inside = [s for s in spans if launch.start <= s.start and s.end <= launch.end]
            hot.append(pos.range(min(s.start for s in inside), max(s.end for s in inside)))
        suppress = None
        if placer is not None:
            written, _ = placer.edits([f])
            if written:  # none where a comment already covers the code
                suppress = (pos.range(written[0].span.start, written[0].span.end), written[0].text)
        safe = f.fix is not None and f.fix.applicability == "safe" and f.severity is Severity.ERROR
        out.append(Item(f.code, f.severity.value, f.message, f.detail, f.target, f.fix.description if f.fix else None,
                        pos.range(span.start, span.end), hot, edits, elsewhere, safe, suppress))
    return out
