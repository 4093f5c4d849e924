"""``kv4lint check --add-suppressions``: a suppression comment for every finding.

For adopting kv4lint on a repository with known findings:

* Python (``.py``): ``# noqa: KV401`` at the end of the finding's line, as
  flake8 reads it.  When that line ends inside a multi-line string or with a
  backslash continuation, the comment goes at the end of the statement's last
  line instead (a comment there cannot change the code).  An existing
  ``# noqa: X`` gets the new codes added; a bare ``# noqa`` already covers all.
* Shell, Dockerfile, Makefile, YAML and shell code in Markdown: a comment line
  ``# kv4lint: disable=KV401`` right above the command, with the command's
  indentation, above the command's *first* line (a comment cannot follow a
  ``\\`` continuation); an existing ``# kv4lint: disable=...`` line in the
  comments right above gets the new codes added.
* Python code in Markdown: ``# kv4lint: disable=KV401`` at the end of the line.
* JSON with comments (``.jsonc``, VS Code's ``launch.json``, devcontainers:
  :func:`kv4lint.base.suppression.leader_for`), and a ``.json`` that already holds
  comments or trailing commas: ``// kv4lint: disable=KV401`` at the end of the
  finding's line (a JSON string never spans lines).
* Strict JSON (an ECS task definition, ``docker inspect`` output) has no
  comments: it is left alone and its findings are listed (``per-file-ignores``
  in the configuration ignores them), as are notebooks (the JSON holds cells as
  strings).

Adding is idempotent: codes already there are not added again.  Files are
written with :mod:`kv4lint.fixes.writer` (atomic, same encoding and line endings).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tokenize
from collections import defaultdict

from kv4lint import frontends
from kv4lint.base import suppression
from kv4lint.base.model import Edit, Finding, Span
from kv4lint.base.printable import printable
from kv4lint.base.source import DecodeError, LineIndex, decode
from kv4lint.files.discover import language_of
from kv4lint.fixes import writer
from kv4lint.fixes.edits import apply_edits

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*\{?\.?([\w+-]*)")
_RST_CODE = re.compile(r"^\s*\.\.\s+(?:code-block|code|sourcecode)::\s*([\w+-]*)")
_PY_INFO = {"python", "py", "python3", "py3", "ipython", "ipython3", "pycon", "pyi"}
_EOL = re.compile(r"\r\n|\r|\n")


class _Lines:
    """Lines of a text with their offsets (content end, line end) and line endings kept."""

    def __init__(self, text: str):
        self.text = text
        self.index = LineIndex(text)
        self.n = len(self.index.starts)

    def start(self, line: int) -> int:
        return self.index.starts[line - 1]

    def end(self, line: int) -> int:
        """Offset just past the line's content (before its line ending)."""
        s = self.start(line)
        nxt = self.index.starts[line] if line < self.n else len(self.text)
        seg = self.text[s:nxt]
        return s + len(seg.rstrip("\r\n"))

    def content(self, line: int) -> str:
        return self.text[self.start(line):self.end(line)]

    def eol(self, line: int) -> str:
        s, e = self.end(line), self.index.starts[line] if line < self.n else len(self.text)
        if e > s:
            return self.text[s:e]
        m = _EOL.search(self.text)  # the last line has none: use the file's first one
        return m.group(0) if m else "\n"


# ---------------------------------------------------------------------------
# Where a comment may go


def _multiline_tokens(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of every token that spans lines (strings, mostly)."""
    try:
        return [(t.start[0], t.end[0]) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.start[0] < t.end[0] and t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError):
        return []


def _python_comment_line(spans: list[tuple[int, int]], line: int, lines: _Lines) -> int:
    """The line whose end may take a comment for ``line``: not inside a string, not continued."""
    target = line
    for _ in range(lines.n):
        moved = False
        for a, b in spans:
            if a <= target < b:
                target, moved = b, True
        if target < lines.n and _continued(lines.content(target)):
            target, moved = target + 1, True
        if not moved:
            break
    return min(target, lines.n)


def _continued(content: str) -> bool:
    """A line ending in an odd number of backslashes continues on the next line."""
    k = len(content) - len(content.rstrip("\\"))
    return k % 2 == 1


def _command_first_line(lines: _Lines, line: int, floor: int = 1) -> int:
    k = line
    while k > floor and _continued(lines.content(k - 1)):
        k -= 1
    return k


def _block_language(lines: _Lines, line: int) -> tuple[str | None, int]:
    """The language of the Markdown fence (or rST code block) holding ``line``, and its first content line."""
    fence = None
    info, first = None, 1
    for k in range(1, line):
        c = lines.content(k)
        m = _FENCE.match(c)
        if m:
            if fence is None:
                fence, info, first = m.group(1), m.group(2).lower(), k + 1
            elif m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence) and not m.group(2):
                fence, info = None, None
            continue
        r = _RST_CODE.match(c)
        if r and fence is None:
            info, first = r.group(1).lower(), k + 1
    return info, first


def _block_python_line(lines: _Lines, first: int, line: int) -> int:
    """:func:`_python_comment_line` for Python code in a Markdown fence starting at line ``first``."""
    last = first
    while last <= lines.n and not _FENCE.match(lines.content(last)):
        last += 1
    code = "".join(lines.content(k) + "\n" for k in range(first, min(last, lines.n + 1)))
    spans = [(a + first - 1, b + first - 1) for a, b in _multiline_tokens(code)]
    return min(_python_comment_line(spans, line, lines), max(first, last - 1))


# ---------------------------------------------------------------------------
# Edits


def _noqa_edit(lines: _Lines, line: int, codes: list[str], marker: str = "noqa") -> Edit | None:
    """``# noqa: CODES`` (or ``LEADER kv4lint: disable=CODES``, ``marker`` being the leader) at the end of
    the line, or its codes added."""
    content = lines.content(line)
    d = suppression.find_noqa(content) if marker == "noqa" else suppression.find_disable(content)
    if d is not None and d.kind != "disable-file":
        add = suppression.missing(codes, d.codes)
        if not add:
            return None  # a bare comment covers everything
        at = lines.start(line) + d.codes_end
        return Edit(Span(at, at), "," + ",".join(add))
    at = lines.start(line) + len(content.rstrip())
    comment = suppression.noqa_comment(codes) if marker == "noqa" else suppression.disable_comment(codes, marker)
    return Edit(Span(at, at), "  " + comment)


def _disable_line_edit(lines: _Lines, first: int, codes: list[str]) -> Edit | None:
    """A ``# kv4lint: disable=CODES`` line above the command, or the codes added to one already there."""
    k = first - 1
    while k >= 1:
        content = lines.content(k)
        if not content.strip().startswith("#"):
            break
        d = suppression.leading_directive(content)
        if d is not None and d.kind == "disable":
            add = suppression.missing(codes, d.codes)
            if not add:
                return None
            at = lines.start(k) + len(content) - len(content.lstrip()) + d.codes_end
            return Edit(Span(at, at), "," + ",".join(add))
        k -= 1
    content = lines.content(first)
    indent = content[: len(content) - len(content.lstrip(" \t"))]
    at = lines.start(first)
    return Edit(Span(at, at), f"{indent}{suppression.disable_comment(codes)}{lines.eol(first)}")


_YAML_KEY = re.compile(r"""^\s*(?:-\s+)?(?:[\w.$/-]+|"[^"]*"|'[^']*')\s*:(?:\s|$)""")


def _indent(content: str) -> int:
    return len(content) - len(content.lstrip(" \t"))


def _yaml_owner(lines: _Lines, line: int) -> int:
    """The line of the YAML key that holds ``line`` (a sequence item or a block scalar's line)."""
    content = lines.content(line)
    if _YAML_KEY.match(content):
        return line
    ind = _indent(content)
    item = content.lstrip().startswith("- ") or content.strip() == "-"
    for k in range(line - 1, 0, -1):
        c = lines.content(k)
        if not c.strip() or c.lstrip().startswith("#"):
            continue
        if _indent(c) < ind:
            return k
        if item and _indent(c) == ind and c.rstrip().endswith(":") and _YAML_KEY.match(c) \
                and not c.lstrip().startswith("-"):
            return k
    return line


def _launch_line(lines: _Lines, f: Finding, launches: list[Span]) -> int:
    """The first line of the launch holding ``f`` (frontends read directives above it), else ``f``'s line."""
    at = f.span.start if f.span is not None else lines.index.offset(f.start.line, f.start.column)  # type: ignore
    best = None
    for sp in launches:
        if sp.start <= at <= sp.end and (best is None or sp.end - sp.start < best.end - best.start):
            best = sp
    return lines.index.position(best.start).line if best is not None else f.start.line  # type: ignore


class Placer:
    """Where the suppression comments for one file's findings go, and the edits that write them.

    ``launches`` are the spans of the file's launches (from its frontend), when known: a directive line
    goes above the launch that holds the finding.  The file's lines (and, for Python, its multi-line
    tokens) are read once, so that one placer answers for each finding in turn (the language server's
    "disable for this line" action) as for all of them at once (``--add-suppressions``).
    """

    def __init__(self, text: str, language: str | None, launches: list[Span] | None = None):
        self.text = text
        self.language = language
        self.lines = _Lines(text)
        self.launches = launches or []
        self._spans: list[tuple[int, int]] | None = None

    def _py_line(self, line: int) -> int:
        if self._spans is None:
            self._spans = _multiline_tokens(self.text)
        return _python_comment_line(self._spans, line, self.lines)

    def edits(self, findings: list[Finding]) -> tuple[list[Edit], list[str]]:
        """The edits that suppress ``findings`` (comments added, or codes added to comments already there),
        and notes about findings that can get none."""
        text, language, lines, launches = self.text, self.language, self.lines, self.launches
        eol_comments: dict[tuple[int, str], list[str]] = defaultdict(list)  # (line, marker) -> codes
        line_comments: dict[int, list[str]] = defaultdict(list)  # command's first line -> codes
        notes: list[str] = []
        for f in findings:
            if f.start is None:
                continue
            line = min(max(1, f.start.line), lines.n)
            if language == "notebook":
                notes.append(f"{f.path}:{f.start.line}: {f.code}: notebooks get no suppression comment; "
                             f"add `# noqa: {f.code}` to the cell by hand")
                continue
            if language == "python":
                key = (self._py_line(line), "noqa")
                codes = eol_comments[key]
            elif language == "json":
                if _in_block_comment(text, lines.end(line)):
                    notes.append(f"{f.path}:{f.start.line}: {f.code}: the line ends inside a /* */ comment; "
                                 f"no suppression comment added")
                    continue
                # JSONC by name, or a .json already holding comments (no_comment_reason): its readers take ``//``
                codes = eol_comments[(line, suppression.leader_for(language, f.path) or "//")]
            elif language == "markdown":
                info, block_start = _block_language(lines, line)
                if info in _PY_INFO:
                    codes = eol_comments[(_block_python_line(lines, block_start, line), "#")]
                else:
                    start = max(block_start, min(line, _launch_line(lines, f, launches)))
                    codes = line_comments[_command_first_line(lines, start, block_start)]
            else:
                start = min(line, _launch_line(lines, f, launches))
                if language == "yaml":
                    start = _yaml_owner(lines, start)
                    while not _YAML_KEY.match(lines.content(start)) and start > 1:  # "- |": up to its key
                        up = _yaml_owner(lines, start)
                        if up == start:
                            break
                        start = up
                codes = line_comments[_command_first_line(lines, start)]
            if f.code not in codes:
                codes.append(f.code)
        edits = []
        for (line, marker), codes in sorted(eol_comments.items()):
            e = _noqa_edit(lines, line, sorted(codes), marker)
            if e:
                edits.append(e)
        for line, codes in sorted(line_comments.items()):
            e = _disable_line_edit(lines, line, sorted(codes))
            if e:
                edits.append(e)
        return edits, notes


def suppress_text(text: str, findings: list[Finding], language: str | None,
                  launches: list[Span] | None = None) -> tuple[str, int, list[str]]:
    """Add suppression comments for ``findings`` (all of one file) to ``text`` (``launches``: see
    :class:`Placer`).  Returns the new text, the number of comments added or extended, and notes
    about findings that could not get one.
    """
    edits, notes = Placer(text, language, launches).edits(findings)
    new, skipped = apply_edits(text, edits)
    return new, len(edits) - len(skipped), notes


_JSON_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)


def _in_block_comment(text: str, offset: int) -> bool:
    """Does ``offset`` of a JSON text lie inside a ``/* */`` comment?"""
    for m in _JSON_TOKENS.finditer(text, 0, offset + 1):
        if m.start() >= offset:
            break
        if m.group().startswith("/*") and m.start() < offset < m.end():
            return True
    return False


def no_comment_reason(path: str, text: str, language: str | None) -> str | None:
    """Why a file of ``language`` can take no suppression comment, or ``None`` when it can."""
    if language == "notebook":
        return "notebooks get no suppression comment; add `# noqa: CODE` to the cell by hand"
    if suppression.leader_for(language, path) is not None:
        return None
    if language == "json":
        try:
            json.loads(text)
        except ValueError:
            return None  # comments or trailing commas already: its readers take JSON with comments
        return ("strict JSON has no comments, so no suppression comment was added; ignore it in the "
                f"configuration: per-file-ignores = {{\"{os.path.basename(path)}\" = [\"CODE\"]}}")
    return "this format has no comments"


def _launch_spans(path: str, text: str, language: str | None) -> list[Span]:
    if language in (None, "python", "notebook"):
        return []
    try:
        return [launch.span for launch in frontends.scan(path, text, language).launches]
    except Exception:  # noqa: BLE001 - a frontend problem only costs the precise placement
        return []


def add_suppressions(findings: list[Finding], *, roots: list[str] | None = None,
                     left: list[Finding] | None = None) -> int:
    """Add a suppression comment for every finding, file by file; returns the comments added or extended.

    A file that cannot be read or written, or whose format has no comments (strict JSON, a notebook), is
    reported on stderr and left alone; its findings are appended to ``left``.
    ``roots`` are the trees that may be written (see :func:`kv4lint.fixes.writer.roots_of`); by
    default a file reached through a symlink must lie under the link's directory.
    """
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if f.start is not None and f.path and not f.path.startswith("<"):
            by_path[f.path].append(f)
    total = 0
    for path, fs in by_path.items():
        try:
            data, snap = writer.read(path)
            language = language_of(path, data[:256])
            text = decode(data, python=language == "python")
        except writer.WriteError as e:
            print(printable(f"kv4lint: {path}: no suppressions added: {e.reason}"), file=sys.stderr)
            _extend(left, fs)
            continue
        except DecodeError as e:
            print(printable(f"kv4lint: {path}: no suppressions added: {e}"), file=sys.stderr)
            _extend(left, fs)
            continue
        reason = no_comment_reason(path, text.text, language)
        if reason is not None:
            for f in fs:
                print(printable(f"kv4lint: {path}:{f.start.line}: {f.code}: {reason.replace('CODE', f.code)}"),
                      file=sys.stderr)
            _extend(left, fs)
            continue
        new, n, notes = suppress_text(text.text, fs, language, _launch_spans(path, text.text, language))
        for note in notes:
            print(printable(f"kv4lint: {note}"), file=sys.stderr)
        if not n or new == text.text:
            continue
        r = roots if roots is not None else writer.roots_of([os.path.dirname(os.path.abspath(path))])
        try:
            writer.write_text(path, text, new, snap, roots=r)
        except writer.WriteError as e:
            print(printable(f"kv4lint: {path}: no suppressions added: {e.reason}"), file=sys.stderr)
            _extend(left, fs)
            continue
        total += n
    return total


def _extend(left: list[Finding] | None, fs: list[Finding]) -> None:
    if left is not None:
        left.extend(fs)
