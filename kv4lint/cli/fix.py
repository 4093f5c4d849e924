"""``kv4lint fix`` (and ``kv4lint check --fix`` / ``--diff``): the command over the fix engine
(:func:`kv4lint.pipeline.fix_engine.fix_files`), with the same exit status as ``check``: 0 nothing remains, 1
findings remain or a file could not be read, parsed or written (or, with ``--exit-non-zero-on-fix``,
a file changed; with ``--diff``, there is a diff), 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys

from kv4lint.fixes import writer
from kv4lint.cli.check import collect, emit_fixed, exit_status, note_versions, open_output_file, quiet, \
    reads_stdin, resolver_for, settings_of, writing
from kv4lint.base.model import Finding
from kv4lint.base.printable import printable
from kv4lint.cli.stdin import fix_stdin
from kv4lint.pipeline.fix_engine import FixInterrupted, fix_files


def run_fix(ns: argparse.Namespace) -> int:
    try:
        return _run_fix(ns)
    except FixInterrupted as e:
        msg = "kv4lint: interrupted; "
        if e.done:
            msg += "fixed before the interrupt: " + ", ".join(e.done)
            msg += f"; {e.left} other file{'s' if e.left != 1 else ''} not changed"
        else:
            msg += "no file was changed"
        print(printable(msg), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        if not ns.diff:
            print("kv4lint: interrupted before any file was written; no file was changed", file=sys.stderr)
        return 130


def _run_fix(ns: argparse.Namespace) -> int:
    resolver = resolver_for(ns)
    if reads_stdin(ns):
        return fix_stdin(ns, resolver)
    result, reports = collect(ns, resolver)
    note_versions(resolver, result)
    run = fix_files(reports, lambda path: settings_of(resolver, path), unsafe=bool(ns.unsafe_fixes),
                    diff_only=bool(ns.diff), roots=writer.roots_of([p for p in ns.paths] or ["."]))
    if run.diff:
        _write_diff(ns, run.diff)
    if ns.show_fixes and quiet(ns) < 2:
        stream = sys.stdout if ns.format in ("text", "concise") and not ns.diff else sys.stderr
        with writing(None, stream):
            for f in sorted(run.fixed, key=Finding.sort_key):
                pos = f"{f.path}:{f.start.line}:{f.start.column}" if f.start else f.path
                print(printable(f"{pos}: {f.code} fixed ({f.fix.description})"),  # type: ignore[union-attr]
                      file=stream)

    result.findings = run.remaining
    result.errors.extend(run.errors)
    result.fixed = len(run.fixed)
    result.fixed_files = len(run.written)
    result.would_fix = bool(ns.diff)
    result.unsafe_fixes_applied = bool(ns.unsafe_fixes)
    # With --diff, stdout holds the diff: the report goes to stderr.
    emit_fixed(ns, result, stream=sys.stderr if ns.diff else None, to_file=not ns.diff)
    return exit_status(ns, result, changed=bool(run.written) and (ns.diff or ns.exit_non_zero_on_fix))


def _write_diff(ns: argparse.Namespace, diff: bytes) -> None:
    """The diff's bytes as they are (the files' own encodings), to ``--output-file`` or standard output."""
    if ns.output_file:
        with writing(ns.output_file), open_output_file(ns.output_file, binary=True) as f:
            f.write(diff)
        return
    with writing(None):
        sys.stdout.flush()
        sys.stdout.buffer.write(diff)
        sys.stdout.buffer.flush()
