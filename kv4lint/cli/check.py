"""``kv4lint check``: discover the files, lint each with its own settings, report, and say by the
exit status whether everything named was checked.

Each file is judged with the nearest configuration above it (:class:`kv4lint.settings.config.ConfigResolver`),
the command line over it, so the findings do not depend on the order of the paths or on how
pre-commit batches them.  ``PATH`` ``-`` (with ``--stdin-filename``) reads one file from stdin.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from kv4lint.base.exit_status import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from kv4lint.base.file_error import FileError
from kv4lint.base.file_report import FileReport
from kv4lint.base.internal_error import has_internal
from kv4lint.base.printable import printable
from kv4lint.base.process import gc_paused
from kv4lint.base.settings import Settings
from kv4lint.cli.progress import Progress
from kv4lint.files.discover import WalkMemo, discover, excluded
from kv4lint.reporters import RunResult, render
from kv4lint.reporters.text import summary, unsafe_hint
from kv4lint.settings.config import CONFIG_NAMES, ConfigResolver
from kv4lint.settings.options import ConfigError, Overrides, UsageError, version_note


def resolver_for(ns: argparse.Namespace) -> ConfigResolver:
    """The settings of every file of this run: configuration files, then the command line."""
    cache_dir = None
    if not (ns.no_cache or os.environ.get("KV4LINT_NO_CACHE", "") not in ("", "0")):
        from kv4lint.pipeline.cache import default_dir

        cache_dir = ns.cache_dir or os.environ.get("KV4LINT_CACHE_DIR") or default_dir()
    try:
        return ConfigResolver(Overrides.from_namespace(ns), config_file=ns.config_file,
                              isolated=bool(ns.isolated), cache_dir=cache_dir)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def settings_of(resolver: ConfigResolver, path: str, *, is_dir: bool | None = None) -> Settings:
    try:
        return resolver.settings_for(path, is_dir=is_dir)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def reads_stdin(ns: argparse.Namespace) -> bool:
    """``PATH`` ``-``, or ``--stdin-filename`` with no path: the file comes on stdin."""
    if "-" in ns.paths:
        if len(ns.paths) > 1:
            raise UsageError("`-` (standard input) cannot be checked together with other paths")
        return True
    return bool(ns.stdin_filename) and ns.paths == ["."]


def quiet(ns: argparse.Namespace) -> int:
    return int(getattr(ns, "quiet", 0) or 0)


# ---------------------------------------------------------------------------
# Discovery and linting


def collect(ns: argparse.Namespace, resolver: ConfigResolver, *,
            reuse_reports: bool = False) -> tuple[RunResult, list]:
    """Discover and lint every file named; returns the run result and the reports of the files read (a file
    the index knows as unchanged and empty has none).

    A named path that does not exist is a usage error (``RunResult.usage_errors``); the other
    paths are still checked.  ``reuse_reports``: a file's report may come from the file index without
    its text (``check`` only: the fix engine and --add-suppressions need the text).
    """
    result = RunResult(root=os.getcwd())
    force = bool(ns.force_exclude)
    existing = []
    for p in ns.paths:
        if not os.path.lexists(p):  # reported as a file error, and the run exits 2
            result.usage_errors.append(p)
            result.errors.append(FileError(p, "no such file or directory (named on the command line)"))
        else:
            existing.append(p)
    index = memo = None
    cache_dir = resolver.cache_dir
    if cache_dir and any(os.path.isdir(p) for p in existing):  # a walk, not files named (pre-commit)
        from kv4lint.pipeline import cache

        index = cache.FileIndex(cache_dir, existing, reuse_reports=reuse_reports)
        memo = WalkMemo(index.old_walk, cache.RACY_S)  # a second walk lists only the directories that changed
        resolver.memo = index  # and reads no configuration file that did not change
    # pre-commit names files the configuration excludes
    paths = [p for p in existing if not (force and _excluded_by_config(p, settings_of(resolver, p)))]
    if not paths:
        return result, []
    # The walk prunes with the excludes of the configuration the named paths share; files below a
    # nested configuration are judged by its excludes too (below).
    roots = {id(s): s for s in (settings_of(resolver, p) for p in paths)}
    prune = next(iter(roots.values())) if len(roots) == 1 else Settings(**_cli_excludes(resolver))
    disc = discover(paths, exclude=prune.exclude + prune.extend_exclude, force_exclude=force,
                    repository_roots=resolver.repository_roots, listings=resolver.listings, memo=memo,
                    listed=CONFIG_NAMES)
    if index is not None:
        index.new_walk = memo.dump()
    result.errors.extend(FileError(p, m) for p, m in disc.errors)
    result.notices.extend(f"{p}: skipped: {why}" for p, why in disc.skipped)
    named = set(paths)
    files, per_file = [], []
    where, s = None, prune  # a walk lists a directory's files together: one look-up per directory
    for c in disc.files:
        here = c.path[:c.path.rfind(os.sep) + 1]  # the directory as written, "" for the working directory
        if here != where:
            where, s = here, settings_of(resolver, c.path, is_dir=False)
        if c.path not in named and s is not prune and _excluded_by_config(c.path, s):
            continue
        files.append(c)
        per_file.append(s)
    result.root = (per_file[0].root if per_file else None) or os.getcwd()
    result.rule_docs_url = next((s.rule_docs_url for s in [*per_file, prune] if s.rule_docs_url), None)

    with Progress(len(files), enabled=False if quiet(ns) else None) as prog:
        reports = lint_files(files, per_file, index, ns.jobs, prog.advance)
    kept = []
    for rep, s in zip(reports, per_file):
        if rep is None:  # unchanged and empty, as the file index recorded it
            result.files_scanned += 1
            continue
        kept.append(rep)
        if rep.scanned:
            result.files_scanned += 1
        if rep.findings:
            result.findings.extend(rep.findings)
        if rep.errors:
            result.errors.extend(rep.errors)
        if rep.targets:
            for t in rep.targets:
                t["config"] = s.config_file
            result.targets[rep.path] = rep.targets
    result.findings.sort(key=lambda f: f.sort_key())  # the same report whatever the order of the paths
    return result, kept


def _cli_excludes(resolver: ConfigResolver) -> dict:
    v = resolver.overrides.values
    return {"exclude": list(v.get("exclude", [])), "extend_exclude": list(v.get("extend-exclude", []))}


def _excluded_by_config(path: str, s: Settings) -> bool:
    pats = s.exclude + s.extend_exclude
    if not pats:
        return False
    if excluded(os.path.normpath(path), pats):
        return True
    if s.root:  # the configuration's globs are relative to its directory, as ruff reads them
        rel = os.path.relpath(os.path.abspath(path), s.root)
        return not rel.startswith("..") and excluded(rel, pats)
    return False


def lint_files(files, settings, index, jobs: int, progress) -> list:
    """Reports for the discovered ``files``, in order (``settings``: one, or each file's own); with a
    file index, unchanged files that held nothing are not read again (their report is None: nearly every
    file of a second run, which then costs a look-up each), and the index learns this run's."""
    per_file = [settings] * len(files) if isinstance(settings, Settings) else list(settings)
    if index is None:
        from kv4lint.pipeline.parallel import lint_many

        return lint_many([(c.path, c.language, c.stat) for c in files], per_file, jobs=jobs, progress=progress)
    from kv4lint.pipeline.cache import settings_key  # the index is there: kv4lint.pipeline.cache is loaded already

    keys: dict[int, str | None] = {}  # id(settings) -> settings_key: files of one configuration share one

    def key(i: int) -> str | None:
        s = per_file[i]
        if id(s) not in keys:
            keys[id(s)] = settings_key(s)
        return keys[id(s)]

    reports: list = [None] * len(files)
    todo = []
    for i, c in enumerate(files):
        lang = False if c.stat is None or c.stat.st_size > per_file[i].max_file_bytes else \
            index.known(c.path, c.language, c.stat)
        if lang is not False:
            if lang is None:  # read before, and of no language kv4lint scans
                reports[i] = FileReport(c.path, None, scanned=False)
        elif index.reuse_reports and (old := index.report(c.path, c.language, c.stat, key(i))) is not None:
            reports[i] = FileReport(**old)
        else:
            todo.append(i)
    if len(todo) < len(files):
        progress(len(files) - len(todo))
    if todo:  # the readers, the pre-filter and the parsers: for the files that changed only
        from kv4lint.pipeline.parallel import is_empty, lint_many

        for i, rep in zip(todo, lint_many([(files[i].path, files[i].language, files[i].stat) for i in todo],
                                          [per_file[i] for i in todo], jobs=jobs, progress=progress)):
            reports[i] = rep
            if is_empty(rep) or (not rep.scanned and rep.language is None and not rep.errors):
                index.add(files[i].path, rep.language, files[i].stat)
            elif index.reuse_reports and (rep.launches or rep.findings):
                index.add_report(rep, files[i].stat, key(i))
    index.save()
    return reports


# ---------------------------------------------------------------------------
# Output and exit status


def _use_color(ns, stream) -> bool:
    if ns.color == "always":
        return True
    if ns.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


@contextlib.contextmanager
def writing(where: str | None, stream=None):
    """Writing the report (or the diff, the fixed text) to the file ``where``, else to ``stream`` (standard
    output when None): a write the environment refuses (a full disk, a read-only file system, a closed pipe,
    a device that fails) is a usage error naming where (exit 2, one line), never an internal error, which is
    for kv4lint's own defects (issue 34).  Standard output is flushed here, so that no write is left for the
    interpreter's exit to fail."""
    stream = stream or sys.stdout
    if stream is None:  # started with standard output closed (``>&-``): Python has no stream for it
        raise UsageError("cannot write to standard output: it is closed")
    try:
        yield
        if where is None:
            stream.flush()
    except OSError as e:
        if where is None and stream is sys.stdout:
            _drop_stdout()
        target = where if where is not None else "standard error" if stream is sys.stderr else "standard output"
        raise UsageError(f"cannot write to {target}: {e.strerror or e}") from None


def _drop_stdout() -> None:
    """Standard output failed: what is left in its buffer goes nowhere, so that the interpreter's exit does
    not fail on it again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):  # not a real file (a test's capture): nothing is flushed at exit
        pass


def open_output_file(path: str, newline: str | None = None, *, binary: bool = False):
    """``--output-file``, opened for writing (``binary``: bytes); a file that cannot be written is a usage error
    (exit 2), never an internal one (its folder is checked before the run:
    kv4lint.settings.options.check_output_file)."""
    try:
        if binary:
            return open(path, "wb")
        return open(path, "w", encoding="utf-8", newline=newline)
    except OSError as e:
        raise UsageError(f"argument --output-file: cannot write {path!r}: {e.strerror or e}") from None


def emit(ns: argparse.Namespace, result: RunResult, stream=None, *, to_file: bool = True) -> None:
    """Write the report (``-q``: findings and file errors only; ``-qq``: nothing but an ``--output-file``).

    ``stream``: where the report goes instead of stdout; ``to_file``: False when ``--output-file``
    holds something else (the diff)."""
    q = quiet(ns)
    for note in result.version_notes:
        if q < 1:
            print(printable(f"kv4lint: note: {note}"), file=sys.stderr)
    out_file = ns.output_file if to_file else None
    if q >= 2 and not out_file:
        return
    stream = open_output_file(out_file) if out_file else (stream or sys.stdout)
    # The report's records (a dict per finding, by the thousand) free nothing until it is written: with the cyclic
    # collector on, it would walk the run's results again (kv4lint.base.process.gc_paused).
    with gc_paused():
        text = render(ns.format, result, color=_use_color(ns, stream) and not out_file,
                      statistics=bool(ns.statistics), quiet=q)
    with writing(out_file, stream):
        try:
            stream.write(text)
            if ns.show_target and q < 1:
                show = stream if ns.format in ("text", "full", "concise") else sys.stderr
                for path, targets in result.targets.items():
                    for t in targets:
                        print(printable(describe_target(path, t)), file=show)
                for f in result.findings:  # SGLang's side of each finding: its function and the resolution trace
                    if f.detail:
                        print(printable(f"{f.path}:{f.start.line if f.start else 0}: {f.code} sglang: {f.detail}"),
                              file=show)
        finally:
            if out_file:
                stream.close()


def emit_fixed(ns: argparse.Namespace, result: RunResult, stream=None, *, to_file: bool = True) -> None:
    """:func:`emit` after ``kv4lint fix``, then (stderr) how many findings were fixed and remain, and a hint
    when fixes were left because they are unsafe."""
    emit(ns, result, stream, to_file=to_file)
    if quiet(ns) < 1:
        print(summary(result), file=sys.stderr)
        hint = unsafe_hint(result)
        if hint:
            print(hint, file=sys.stderr)


def describe_target(path: str, t: dict) -> str:
    """One ``--show-target`` line: what the launch was judged against, why, and the configuration file."""
    src = t.get("sources", {})
    cfg = t.get("config")
    cfg_text = _display(cfg) if cfg else "none (no kv4lint.toml or [tool.kv4lint] above it)"
    when = f" (when {t['when']})" if t.get("when") else ""  # one line per path of the script that runs it
    if t.get("not_judged"):
        return f"{path}:{t['line']}: {t['entry']}{when}: not judged: {t['not_judged']}"
    note = f"; {t['note']}" if t.get("note") else ""
    return (f"{path}:{t['line']}: {t['entry']}{when}: platform={t['platform']} ({src.get('platform')}), "
            f"gpu={_gpus(t)} ({src.get('gpu')}), model_attention={t['model_attention']} "
            f"({src.get('model_attention')}), sglang={t['sglang_version'] or 'newest'} "
            f"({src.get('sglang_version')}){note}; configuration: {cfg_text}")


def _gpus(t: dict) -> str:
    """The GPU candidates as ``--show-target`` names them: ``sm90``, ``sm90,sm100``, ``any`` (every arch), ``none``
    (off CUDA, or a launch that never runs on the GPU the target is)."""
    gpus = t.get("gpus")
    if gpus is None:  # a description cached before the candidate sets
        return str(t.get("gpu"))
    from kv4lint.sglang.gpus import every  # the GPU tables: for --show-target only

    return "any" if every(gpus) else ",".join(gpus) or "none"


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith(".." + os.sep + "..") else rel


def note_versions(resolver: ConfigResolver, result: RunResult) -> None:
    """A note for each SGLang version set (command line, configuration) that kv4lint has no rule pack of
    its own for."""
    seen = set()
    for s in resolver.all_settings():
        v = s.sglang_version
        if v and v not in seen:
            seen.add(v)
            note = version_note(v)
            if note:
                where = s.sources.get("sglang_version", "--sglang-version")
                result.version_notes.append(f"{note} ({where})")


def exit_status(ns: argparse.Namespace, result: RunResult, *, changed: bool = False) -> int:
    """2 usage and internal errors; 1 a file not read or parsed, or findings (unless ``--exit-zero``); else 0."""
    if result.usage_errors or has_internal(result.errors):
        return EXIT_ERROR
    if result.errors:
        return EXIT_FINDINGS  # not everything was checked: never green, even with --exit-zero
    if result.findings and not ns.exit_zero:
        return EXIT_FINDINGS
    if changed:
        return EXIT_FINDINGS
    return EXIT_OK


def run_check(ns: argparse.Namespace, resolver: ConfigResolver) -> int:
    """``kv4lint check`` over the paths named (standard input: :mod:`kv4lint.cli.stdin`)."""
    result, _ = collect(ns, resolver, reuse_reports=not getattr(ns, "add_suppressions", False))
    note_versions(resolver, result)
    if getattr(ns, "add_suppressions", False):
        from kv4lint.fixes.add_suppressions import add_suppressions

        left: list = []
        n = add_suppressions(result.findings, left=left)
        print(f"Added {n} suppression comment{'s' if n != 1 else ''}.", file=sys.stderr)
        if left:  # a format without comments (strict JSON, a notebook), or a file that could not be written
            print(f"{len(left)} finding{'s' if len(left) != 1 else ''} could not be suppressed by a comment.",
                  file=sys.stderr)
        result.findings = left
        return exit_status(ns, result)
    emit(ns, result)
    return exit_status(ns, result)
