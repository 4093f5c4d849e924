"""``kv4lint check --stdin-filename PATH -`` and ``kv4lint fix --stdin-filename PATH -``: one file read
from standard input (an editor's buffer, a pre-commit hook with ``pass_filenames: false``).

PATH need not exist: its name gives the language (else the first line's shebang), its directory the
configuration (the nearest one above it) and the repository's SGLang pin.  ``check`` reports as for a
file; ``fix`` writes the fixed text to stdout (the input unchanged when there is nothing to fix, in its
own encoding, BOM and line endings) and the findings left to stderr; with ``--diff``, the diff goes to
stdout instead.  With ``--force-exclude``, a PATH the configuration excludes or git ignores is not
checked (``fix`` echoes it).
"""

from __future__ import annotations

import argparse
import os
import sys

from kv4lint.settings.options import UsageError
from kv4lint.cli.check import emit, emit_fixed, exit_status, note_versions, settings_of, writing, \
    _excluded_by_config
from kv4lint.base.exit_status import EXIT_OK
from kv4lint.base.file_error import FileError
from kv4lint.base.source import DecodeError, decode
from kv4lint.files.discover import language_of
from kv4lint.files.ignore import GitIgnore
from kv4lint.pipeline.fix_engine import fix_text, unified_diff
from kv4lint.pipeline.runner import lint_text
from kv4lint.reporters import RunResult
from kv4lint.settings.config import ConfigResolver


def _read(ns: argparse.Namespace, resolver: ConfigResolver):
    name = ns.stdin_filename or "-"
    data = sys.stdin.buffer.read()
    s = settings_of(resolver, name if name != "-" else os.path.join(os.getcwd(), "-"))
    language = language_of(name, data[:256])
    if language is None:
        raise UsageError(f"--stdin-filename {name!r}: cannot tell the file's language from its name or first "
                         "line; name it with an extension kv4lint reads (.sh, .py, .yaml, Dockerfile ...)")
    skip = False
    if ns.force_exclude and name != "-":
        skip = _excluded_by_config(name, s) or GitIgnore().ignored(name, False)
    return name, data, s, language, skip


def _lint(name: str, data: bytes, s, language: str):
    """(report or None, decoded text or None, result)."""
    result = RunResult(root=s.root or os.getcwd())
    if len(data) > s.max_file_bytes:
        result.errors.append(FileError(name, f"skipped: {len(data) / 1e6:.1f} MB is larger than the "
                                             f"{s.max_file_bytes / 1e6:.0f} MB limit"))
        return None, None, result
    try:
        text = decode(data, python=language == "python")
    except DecodeError as e:
        result.errors.append(FileError(name, str(e), e.line))
        return None, None, result
    rep = lint_text(name, text.text, s, language, flake8_noqa=True)
    result.files_scanned = 1
    result.findings.extend(rep.findings)
    result.errors.extend(rep.errors)
    if rep.targets:
        for t in rep.targets:
            t["config"] = s.config_file
        result.targets[name] = rep.targets
    return rep, text, result


def check_stdin(ns: argparse.Namespace, resolver: ConfigResolver) -> int:
    name, data, s, language, skip = _read(ns, resolver)
    if skip:
        return EXIT_OK
    _, _, result = _lint(name, data, s, language)
    note_versions(resolver, result)
    emit(ns, result)
    return exit_status(ns, result)


def fix_stdin(ns: argparse.Namespace, resolver: ConfigResolver) -> int:
    name, data, s, language, skip = _read(ns, resolver)
    if skip:
        if not ns.diff:
            _write_bytes(data)
        return EXIT_OK
    rep, text, result = _lint(name, data, s, language)
    if rep is None:
        if not ns.diff:
            _write_bytes(data)  # never lose the input: an editor replaces its buffer with this
        emit_fixed(ns, result, stream=sys.stderr)
        return exit_status(ns, result)
    tf = fix_text(name, text.text, s, language, unsafe=bool(ns.unsafe_fixes), report=rep)
    note_versions(resolver, result)
    if ns.diff:
        _write_bytes(unified_diff(name, text.encode(text.text), text.encode(tf.new_text)))
    else:
        _write_bytes(text.encode(tf.new_text) if tf.changed else data)
    result.findings = sorted(tf.remaining, key=lambda f: f.sort_key())
    result.errors = list((tf.report or rep).errors) + tf.errors
    result.fixed = len(tf.fixed)
    result.fixed_files = int(tf.changed)
    result.would_fix = bool(ns.diff)
    result.unsafe_fixes_applied = bool(ns.unsafe_fixes)
    emit_fixed(ns, result, stream=sys.stderr, to_file=not ns.diff)
    return exit_status(ns, result, changed=tf.changed and (ns.diff or ns.exit_non_zero_on_fix))


def _write_bytes(data: bytes) -> None:
    with writing(None):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
