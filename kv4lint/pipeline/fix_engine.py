"""The fix engine: apply the findings' fixes (``kv4lint fix``, ``check --fix`` / ``--diff``, the
codemod and the stdin mode use it; the command itself is :mod:`kv4lint.cli.fix`).

One engine for every language.  Per file:

1. take the fixable findings (safe fixes; unsafe ones too with ``--unsafe-fixes``);
2. choose fixes whose edits do not overlap (a fix is taken whole or not at all),
   apply their edits to the decoded text (:func:`kv4lint.fixes.edits.apply_edits`);
3. re-lint the result in memory with the same settings and language
   (:func:`kv4lint.pipeline.runner.lint_text`); if the frontend reports a syntax error
   it did not report before, the round is rolled back (retried one fix at a
   time, and a fix that still breaks the file is reported and left out);
4. repeat until nothing fixable remains (at most :data:`MAX_ROUNDS` rounds that
   change the text).

Edits whose ``Edit.path`` names another file (a ``--config`` YAML read by the
launch) are applied to that file in the same run.  Files are written by
:mod:`kv4lint.fixes.writer` (atomic, same encoding, BOM and line endings, same
mode), or shown as a unified diff with ``--diff`` (nothing written).

This module imports nothing of the command line (:mod:`kv4lint.cli`).
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.file_report import FileReport
from kv4lint.base.model import Edit, Finding, Span
from kv4lint.base.settings import Settings
from kv4lint.base.source import DecodeError, Text, decode
from kv4lint.files.discover import language_of
from kv4lint.files.regular_file import open_file
from kv4lint.fixes import writer
from kv4lint.fixes.edits import apply_edits, merge_overlapping_removals, tidy_removals
from kv4lint.pipeline.runner import lint_text

MAX_ROUNDS = 5  # rounds that change the text; real launches need one, a fix that exposes another two


def fixable(f: Finding, unsafe: bool = False) -> bool:
    """Whether ``f`` has edits this run may apply."""
    return f.fix is not None and bool(f.fix.edits) and (unsafe or f.fix.applicability == "safe")


def _same_file(edit_path: str | None, path: str) -> bool:
    if edit_path is None:
        return True
    return os.path.abspath(edit_path) == os.path.abspath(path)


def _local_edits(f: Finding, path: str) -> list[Edit]:
    return [e for e in f.fix.edits if _same_file(e.path, path)]  # type: ignore[union-attr]


def _external_edits(f: Finding, path: str) -> list[Edit]:
    return [e for e in f.fix.edits if not _same_file(e.path, path)]  # type: ignore[union-attr]


def _dedupe(edits: list[Edit]) -> list[Edit]:
    seen: set = set()
    out = []
    for e in edits:
        k = (e.path, e.span, e.text)
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out


def _fix_key(f: Finding) -> tuple:
    return (f.code, f.span, f.fix.edits if f.fix else ())


_DIGITS = re.compile(r"\d+")


def _error_keys(errors: list[FileError]) -> Counter:
    # Line numbers move when a fix removes a line: compare messages without numbers.
    return Counter(_DIGITS.sub("N", e.message) for e in errors)


def _new_errors(before: Counter, errors: list[FileError]) -> list[FileError]:
    left = Counter(before)
    out = []
    for e in errors:
        k = _DIGITS.sub("N", e.message)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(e)
    return out


def _select(text: str, findings: list[Finding], path: str, unsafe: bool, excluded: set,
            single: bool) -> tuple[list[Finding], list[Edit]]:
    """Fixes to apply together (whole fixes, no overlapping edits), and their deduplicated local edits."""
    cands = []
    for f in findings:
        if not fixable(f, unsafe) or _fix_key(f) in excluded:
            continue
        local = _local_edits(f, path)
        if local:
            cands.append((min(e.span.start for e in local), f, local))
    cands.sort(key=lambda c: (c[0], c[1].sort_key()))
    chosen: list[Finding] = []
    taken = _Intervals()
    for _, f, local in cands:
        if any(e.span.end > len(text) for e in local):
            continue
        if any(taken.conflicts(e) for e in local):
            continue  # overlaps a fix already chosen: next round, on the new text
        for e in local:
            taken.add(e)
        chosen.append(f)
        if single:
            break
    return chosen, _dedupe(taken.edits())


class _Intervals:
    """Chosen edits, sorted and non-overlapping: checking a new one costs a bisect, not a rebuild of the text."""

    def __init__(self):
        self.keys: list[tuple[int, int, str]] = []

    def conflicts(self, e: Edit) -> bool:
        key = (e.span.start, e.span.end, e.text)
        i = bisect.bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            return False  # the same edit, proposed by another finding
        for j in (i - 1, i):
            if 0 <= j < len(self.keys):
                s, t, _ = self.keys[j]
                if s < e.span.end and e.span.start < t:
                    return True
                if s == e.span.start and (s == t or e.span.start == e.span.end):
                    return True  # two edits at one point: their order would be a guess
        return False

    def add(self, e: Edit) -> None:
        key = (e.span.start, e.span.end, e.text)
        i = bisect.bisect_left(self.keys, key)
        if i >= len(self.keys) or self.keys[i] != key:
            self.keys.insert(i, key)

    def edits(self) -> list[Edit]:
        return [Edit(Span(s, t), text) for s, t, text in self.keys]


@dataclass
class TextFix:
    """The outcome of fixing one file's text in memory."""

    path: str
    text: str
    new_text: str
    fixed: list[Finding] = field(default_factory=list)  # positions as in the round that fixed them
    remaining: list[Finding] = field(default_factory=list)  # the findings of new_text
    errors: list[FileError] = field(default_factory=list)  # fixes that were rolled back, rounds exhausted
    # Edits in other files (a --config YAML), applied by the caller: each with the findings they fix
    # (a fix chosen in a round with edits here and there, and the finding that stays until the other
    # file is written).
    external: list[tuple[list[Finding], list[Edit]]] = field(default_factory=list)
    report: FileReport | None = None  # the last lint of new_text

    @property
    def changed(self) -> bool:
        return self.new_text != self.text


def fix_text(path: str, text: str, settings: Settings, language: str | None, *, unsafe: bool = False,
             report: FileReport | None = None, max_rounds: int = MAX_ROUNDS) -> TextFix:
    """Fix ``text`` (the decoded content of ``path``) in memory until nothing fixable remains.

    ``report`` is the lint of ``text`` when the caller has it already.
    """
    rep = report if report is not None else lint_text(path, text, settings, language)
    language = language or rep.language
    base = _error_keys(rep.errors)
    out = TextFix(path, text, text)
    current = text
    excluded: set = set()
    single = False
    progress = 0
    ext: dict[tuple, list[Finding]] = {}

    def record(f: Finding) -> None:
        edits = _external_edits(f, path)
        if edits:
            ext.setdefault(tuple(edits), []).append(f)
    budget = max_rounds + 2 * sum(1 for f in rep.findings if fixable(f, unsafe)) + 2
    while budget > 0:
        budget -= 1
        chosen, edits = _select(current, rep.findings, path, unsafe, excluded, single)
        if not edits:
            break
        if progress >= max_rounds:
            f = chosen[0]
            out.errors.append(FileError(path, f"{f.code} is still fixable after {max_rounds} rounds of fixes; "
                                              "left as it is", f.start.line if f.start else None))
            break
        if language == "python":
            edits = tidy_removals(current, edits)
        else:
            edits = merge_overlapping_removals(edits)
        new, _ = apply_edits(current, edits)
        if new == current:
            excluded.update(_fix_key(f) for f in chosen)
            continue
        new_rep = lint_text(path, new, settings, language)
        broken = _new_errors(base, new_rep.errors)
        if broken:
            if len(chosen) > 1:
                single = True  # find the fix that breaks the file: one at a time from now on
                continue
            f = chosen[0]
            where = f"{f.start.line}:{f.start.column}" if f.start else "?"
            out.errors.append(FileError(
                path,
                f"the fix for {f.code} at {where} ({f.fix.description}) was rolled back: "  # type: ignore[union-attr]
                f"the fixed file would not parse ({broken[0].message})", f.start.line if f.start else None))
            excluded.add(_fix_key(f))
            continue
        for f in chosen:
            if _external_edits(f, path):
                record(f)  # fixed once the other file is written
            else:
                out.fixed.append(f)
        current, rep = new, new_rep
        progress += 1
    out.new_text = current
    out.report = rep
    for f in rep.findings:
        if fixable(f, unsafe) and _fix_key(f) not in excluded and not _local_edits(f, path):
            record(f)
    out.external = [(fs, list(edits)) for edits, fs in ext.items()]
    out.remaining = list(rep.findings)
    return out


# ---------------------------------------------------------------------------
# Files: read, fix, write (or diff)


def _display(path: str) -> str:
    p = os.path.normpath(path)
    if os.path.isabs(p):
        rel = os.path.relpath(p)
        if not rel.startswith(".."):
            p = rel
    return p


# git and patch read a patch's lines up to LF only: a CR is part of a line (a CR-only file is one line for them).
_LINES = re.compile(rb"[^\n]*\n|[^\n]+\Z")
_GIT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
                0x22: '\\"', 0x5C: "\\\\"}


def git_quote(name: str) -> str:
    """``name`` as git writes it in a patch header (``core.quotePath``, its default): as it is, or in double
    quotes with C escapes when it holds a control character, ``"``, ``\\`` or a byte outside ASCII."""
    raw = os.fsencode(name)
    if all(0x20 <= b < 0x7F and b not in (0x22, 0x5C) for b in raw):
        return name
    return '"' + "".join(_GIT_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in raw) + '"'


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff (``a/PATH`` ``b/PATH``) of a file's bytes, which ``git apply`` and ``patch -p1`` apply.

    Made from the bytes, not the decoded text, so that it applies to the file as it is on disk: its BOM, a
    coding cookie's encoding, UTF-16, CRLF or CR-only line endings (issue 34).  Lines are split where git
    and patch split them (LF), and a name git would quote is quoted as git does (a control character in a
    name never reaches the terminal raw)."""
    name = _display(path).lstrip("/")
    out = []
    for line in difflib.diff_bytes(difflib.unified_diff, _LINES.findall(old), _LINES.findall(new),
                                   git_quote(f"a/{name}").encode("ascii"), git_quote(f"b/{name}").encode("ascii"),
                                   lineterm=b"\n"):
        if line.endswith(b"\n"):
            out.append(line)
        else:
            out.append(line + b"\n\\ No newline at end of file\n")
    return b"".join(out)


@dataclass
class _Change:
    path: str
    original: Text
    snap: writer.Snapshot
    new_text: str
    fixed: list[Finding]


def _resolve_external(edit_path: str, referrer: str) -> str:
    if os.path.isabs(edit_path) or os.path.exists(edit_path):
        return edit_path
    beside = os.path.join(os.path.dirname(referrer), edit_path)
    return beside if os.path.exists(beside) else edit_path


def _read_text(path: str, language: str | None = None) -> tuple[Text, writer.Snapshot]:
    data, snap = writer.read(path)
    try:
        text = decode(data, python=(language or language_of(path, data[:256])) == "python")
    except DecodeError as e:
        raise writer.WriteError(path, str(e)) from None
    return text, snap


def _on_disk(ch) -> bool:
    """Did the interrupted write already replace the file (the signal came after os.replace)?"""
    try:
        with open_file(ch.path) as f:
            return f.read() == ch.original.encode(ch.new_text)
    except OSError:
        return False


def _write(changes: list, run: FixRun, roots: list[str]) -> None:
    """Write each change, in order; ``run.written`` the ones replaced.  A Ctrl-C anywhere in the loop (in a write,
    or delivered by Python between two: after a file was replaced, on the way to the next) is
    :class:`FixInterrupted` naming every file replaced, the one in hand included when it reached the disk."""
    ch = None
    try:
        for ch in changes:
            try:
                writer.write_text(ch.path, ch.original, ch.new_text, ch.snap, roots=roots)
            except writer.WriteError as e:
                run.errors.append(FileError(ch.path, e.reason))
                continue
            run.written.append(ch)
    except KeyboardInterrupt:
        done = [c.path for c in run.written]
        if ch is not None and (not run.written or run.written[-1] is not ch) and _on_disk(ch):
            done.append(ch.path)
        raise FixInterrupted(done, len(changes) - len(done)) from None


class FixInterrupted(KeyboardInterrupt):
    """Ctrl-C while files were being written: ``done`` were replaced, ``left`` others were not.

    The writer never leaves a partial file, so this is exactly what changed."""

    def __init__(self, done: list[str], left: int) -> None:
        super().__init__()
        self.done, self.left = done, left


@dataclass
class FixRun:
    """What :func:`fix_files` did: the files changed (or, with ``diff_only``, that would change)."""

    written: list[_Change] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)  # the findings fixed, in the order of the files
    remaining: list[Finding] = field(default_factory=list)  # sorted
    errors: list[FileError] = field(default_factory=list)  # fixes that could not be applied or written
    diff: bytes = b""  # with diff_only: the unified diff of every change, of the files' bytes


def fix_files(reports: list[FileReport], settings_of, *, unsafe: bool = False, diff_only: bool = False,
              roots: list[str] | None = None) -> FixRun:
    """Fix the files of a run's ``reports`` (their findings and decoded text): plan every file's
    fixes, apply edits in other files (``--config`` YAMLs) once, and write each changed file
    (:mod:`kv4lint.fixes.writer`), or with ``diff_only`` only describe the changes.

    ``settings_of(path)``: the settings that file is judged with (for re-linting).  Raises
    :class:`FixInterrupted` on Ctrl-C during the writes.
    """
    remaining: list[Finding] = []
    fix_errors: list[FileError] = []
    changes: list[_Change] = []
    # resolved path of another file -> [(referring file, the findings fixed, their edits in that file)]
    external: dict[str, list[tuple[str, list[Finding], list[Edit]]]] = {}

    for rep in reports:
        internal_error.current_file = rep.path  # named by an exception that escapes (kv4lint.base.internal_error)
        if rep.text is None or not any(fixable(f, unsafe) for f in rep.findings):
            remaining.extend(rep.findings)
            continue
        try:
            original, snap = _read_text(rep.path, rep.language)
        except writer.WriteError as e:
            fix_errors.append(FileError(rep.path, e.reason))
            remaining.extend(rep.findings)
            continue
        same = original.text == rep.text.text and original.encoding == rep.text.encoding
        tf = fix_text(rep.path, original.text, settings_of(rep.path), rep.language, unsafe=unsafe,
                      report=rep if same else None)
        fix_errors.extend(tf.errors)
        for fs, edits in tf.external:
            target = _resolve_external(edits[0].path or "", rep.path)
            external.setdefault(os.path.abspath(target), []).append((rep.path, fs, edits))
        if tf.changed:
            changes.append(_Change(rep.path, original, snap, tf.new_text, tf.fixed))
            remaining.extend(tf.remaining)
        else:
            remaining.extend(tf.remaining if not same else rep.findings)

    internal_error.current_file = None
    ext_changes = _external_changes(external, changes, fix_errors)

    # Write (or show) the changes.
    run = FixRun(errors=fix_errors)
    diffs: list[bytes] = []
    if diff_only:
        for ch in changes:
            diffs.append(unified_diff(ch.path, ch.original.encode(ch.original.text), ch.original.encode(ch.new_text)))
            run.written.append(ch)
    else:
        _write(changes, run, roots or writer.roots_of(["."]))
    run.diff = b"".join(diffs)
    written_ids = {id(ch) for ch in run.written}

    # Findings of files that could not be written stay as they were.
    final: list[Finding] = []
    failed = {os.path.abspath(ch.path) for ch in changes if id(ch) not in written_ids}
    by_path: dict[str, list[Finding]] = {}
    for rep in reports:
        by_path.setdefault(os.path.abspath(rep.path), []).extend(rep.findings)
    for f in remaining:
        if os.path.abspath(f.path) in failed:
            continue
        final.append(f)
    for p in failed:
        final.extend(by_path.get(p, []))
    run.fixed = [f for ch in run.written for f in ch.fixed]
    applied_external = {id(f) for ch, groups in ext_changes if id(ch) in written_ids for fs in groups for f in fs}
    final = [f for f in final if id(f) not in applied_external]
    final.sort(key=Finding.sort_key)
    run.remaining = final
    return run


def _external_changes(external: dict, changes: list[_Change], fix_errors: list[FileError]
                      ) -> list[tuple[_Change, list[list[Finding]]]]:
    """Edits in other files (--config YAMLs): applied to that file's text as read now (appended to
    ``changes``); returns each such change with the groups of findings it fixes."""
    changed_paths = {os.path.abspath(c.path) for c in changes}
    ext_changes: list[tuple[_Change, list[list[Finding]]]] = []
    for target, items in external.items():
        shown = _display(target)
        if target in changed_paths:
            for ref, fs, _ in items:
                f = fs[0]
                fix_errors.append(FileError(ref, f"the fix for {f.code} edits {shown}, which this run also fixes "
                                                 "on its own; run kv4lint fix again to apply it",
                                            f.start.line if f.start else None))
            continue
        try:
            original, snap = _read_text(target)
        except writer.WriteError as e:
            fix_errors.append(FileError(target, e.reason))
            continue
        edits: list[Edit] = []
        fixed: list[list[Finding]] = []
        for ref, fs, fe in items:
            f = fs[0]
            trial = _dedupe(edits + [Edit(e.span, e.text) for e in fe])
            if any(e.span.end > len(original.text) for e in trial):
                fix_errors.append(FileError(ref, f"the fix for {f.code} does not fit {shown} (changed since it "
                                                 "was read?); not applied", f.start.line if f.start else None))
                continue
            _, skipped = apply_edits(original.text, trial)
            if skipped:
                continue
            edits = trial
            fixed.append(fs)
        new_text, _ = apply_edits(original.text, edits)
        if new_text != original.text:
            ch = _Change(target, original, snap, new_text, [fs[0] for fs in fixed])
            changes.append(ch)
            ext_changes.append((ch, fixed))
    return ext_changes
