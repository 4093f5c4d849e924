"""``kv4lint`` (and ``python -m kv4lint``): check, fix, explain, matrix.

Exit codes: 0 nothing found, 1 findings, 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from kv4lint import __version__
from kv4lint.reporters import FORMATS, RunResult, render
from kv4lint.settings import Settings

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 2, as documented
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _target_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("target (what the launches are judged against)")
    g.add_argument("--sglang-version", metavar="V", help="SGLang release to check against (default: the "
                   "repository's pin, else the newest rule pack)")
    g.add_argument("--platform", metavar="P", help="cuda, rocm, xpu, cpu, npu, musa, mps, hpu, or auto (detect "
                   "this machine through torch)")
    g.add_argument("--gpu", metavar="G", help="GPU arch or name: sm90, sm100, sm120, h100, b200, rtx5090, gb10 ...")
    g.add_argument("--model-attention", choices=["mha", "mla"], help="the served model's attention (default: "
                   "inferred from the model path)")
    g.add_argument("--strict", action="store_true", default=None,
                   help="also report launches that fail for some unknown GPU arch / model attention")
    g.add_argument("--fix-dtype", metavar="DTYPE", help="KV cache dtype fixes use (default: fp8_e4m3)")
    s = p.add_argument_group("selection")
    s.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report (default: all)")
    s.add_argument("--extend-select", metavar="CODES")
    s.add_argument("--ignore", metavar="CODES")
    s.add_argument("--exclude", metavar="GLOBS", help="comma-separated globs of paths to skip")
    s.add_argument("--extend-exclude", metavar="GLOBS")
    s.add_argument("--force-exclude", action="store_true",
                   help="apply excludes to paths named on the command line too (for pre-commit)")
    s.add_argument("--config", dest="config_file", metavar="FILE", help="read settings from FILE "
                   "(pyproject.toml or kv4lint.toml) instead of searching for one")
    s.add_argument("--isolated", action="store_true", help="ignore configuration files")
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=FORMATS, default="text")
    o.add_argument("--output-file", "-o", metavar="FILE")
    o.add_argument("--statistics", action="store_true", help="count findings per code")
    o.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    o.add_argument("--show-target", action="store_true", help="print the target each launch was judged against")
    o.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    o.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="processes (default: all cores)")
    o.add_argument("-q", "--quiet", action="store_true", help="print findings only")
    o.add_argument("--verbose", action="store_true", help="print the traceback of an internal error")
    o.add_argument("--no-cache", action="store_true", help="parse every file afresh (also: KV4LINT_NO_CACHE=1)")
    o.add_argument("--cache-dir", metavar="DIR", help="where parse results are cached (default: $KV4LINT_CACHE_DIR, "
                   "else ~/.cache/kv4lint/scan)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kv4lint", description="Catch SGLang launches whose FP4 (KV4) KV cache SGLang will refuse.")
    p.add_argument("--version", action="version", version=f"kv4lint {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="report problems (default command)")
    c.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    _target_options(c)
    c.add_argument("--fix", action="store_true", help="apply safe fixes (same as `kv4lint fix`)")
    _fix_options(c)
    c.add_argument("--add-suppressions", action="store_true",
                   help="add a suppression comment for every finding (adopt kv4lint on an existing repository)")

    f = sub.add_parser("fix", help="rewrite FP4 KV caches that SGLang would refuse to an fp8 KV cache")
    f.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    _target_options(f)
    _fix_options(f)

    e = sub.add_parser("explain", help="what a code checks, why SGLang refuses it, and the fix")
    e.add_argument("code", nargs="?", help="KV401 ... (omit to list all codes)")

    m = sub.add_parser("matrix", help="print a release's KV4 support table (backends x MHA/MLA x FP4 dtype), "
                       "computed by check itself")
    m.add_argument("--sglang-version", metavar="V")
    m.add_argument("--gpu", metavar="G", action="append",
                   help="GPU arch or name (repeatable; default: sm90, sm100 and sm120)")
    m.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    return p


def _fix_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("fixing")
    g.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that edit shared values")
    g.add_argument("--diff", action="store_true", help="print a unified diff of the fixes; write nothing")
    g.add_argument("--show-fixes", action="store_true", help="list the fixes applied")
    g.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when a file was changed")


def main(argv: Sequence[str] | None = None) -> int:
    """The console script (and ``python -m kv4lint``): no module of the scanned tree is importable while
    it runs (kv4lint.isolation), and an unexpected exception exits 2 (kv4lint.internal_error)."""
    from kv4lint.internal_error import guarded
    from kv4lint.isolation import path_arguments, trusted_imports

    argv = list(sys.argv[1:] if argv is None else argv)
    with trusted_imports(path_arguments(argv)):
        return guarded(_main, argv)


def _main(argv: list[str]) -> int:
    parser = build_parser()
    commands = {"check", "fix", "explain", "matrix"}
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help", "--version")):
        argv = ["check", *argv]
    ns = parser.parse_args(argv)
    try:
        if ns.command == "explain":
            return _explain(ns)
        if ns.command == "matrix":
            return _matrix(ns)
        if ns.command == "fix" or getattr(ns, "fix", False) or getattr(ns, "diff", False):
            from kv4lint.fixer import run_fix

            return run_fix(ns)
        return _check(ns)
    except KeyboardInterrupt:
        print("kv4lint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except UsageError as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR


class UsageError(Exception):
    """A bad option value or configuration: exit 2 with a message, no traceback."""


def settings_for(ns: argparse.Namespace) -> Settings:
    from kv4lint.config import build_settings

    try:
        s = build_settings(ns, ns.paths)
    except ValueError as e:
        raise UsageError(str(e)) from None
    _validate(s)
    if not (ns.no_cache or os.environ.get("KV4LINT_NO_CACHE", "") not in ("", "0")):
        from kv4lint.cache import default_dir

        s.cache_dir = ns.cache_dir or os.environ.get("KV4LINT_CACHE_DIR") or default_dir()
    return s


def _validate(s: Settings) -> None:
    if not (s.sglang_version or s.gpu or (s.platform and s.platform != "auto")):
        return
    from kv4lint.target import normalise_gpu, normalise_platform, parse_version

    try:
        if s.sglang_version:
            parse_version(s.sglang_version)
        if s.platform and s.platform != "auto":
            normalise_platform(s.platform)
        if s.gpu:
            normalise_gpu(s.gpu)
    except ValueError as e:
        raise UsageError(str(e)) from None


def collect(ns: argparse.Namespace, settings: Settings) -> tuple[RunResult, list]:
    """Discover and lint every file; returns the run result and the per-file reports."""
    from kv4lint.discover import discover
    from kv4lint.model import FileError

    disc = discover(ns.paths, exclude=settings.exclude + settings.extend_exclude,
                    force_exclude=getattr(ns, "force_exclude", False))
    result = RunResult(root=settings.root or os.getcwd())
    result.errors.extend(FileError(p, m) for p, m in disc.errors)
    result.notices.extend(f"{p}: skipped: {why}" for p, why in disc.skipped)
    from kv4lint.progress import Progress

    index = None
    if settings.cache_dir and any(os.path.isdir(p) for p in ns.paths):  # a walk, not files named (pre-commit)
        from kv4lint.cache import FileIndex

        index = FileIndex(settings.cache_dir, list(ns.paths))
    with Progress(len(disc.files), enabled=False if getattr(ns, "quiet", False) else None) as prog:
        reports = _lint(disc.files, settings, index, getattr(ns, "jobs", 0), prog.advance)
    for rep in reports:
        if rep.scanned:
            result.files_scanned += 1
        result.findings.extend(rep.findings)
        result.errors.extend(rep.errors)
        if rep.targets:
            result.targets[rep.path] = rep.targets
    return result, reports


def _lint(files, settings: Settings, index, jobs: int, progress) -> list:
    """Reports for the discovered ``files``, in order; with a file index, unchanged files that held
    nothing are not read again, and the index learns this run's."""
    from kv4lint.parallel import is_empty, lint_many
    from kv4lint.runner import FileReport

    if index is None:
        return lint_many([(c.path, c.language) for c in files], settings, jobs=jobs, progress=progress)
    reports: list = [None] * len(files)
    todo = []
    for i, c in enumerate(files):
        lang = False if c.stat is None or c.stat.st_size > settings.max_file_bytes else \
            index.known(c.path, c.language, c.stat)
        if lang is False:
            todo.append(i)
        else:
            reports[i] = FileReport(c.path, lang, scanned=lang is not None)
    if len(todo) < len(files):
        progress(len(files) - len(todo))
    for i, rep in zip(todo, lint_many([(files[i].path, files[i].language) for i in todo], settings, jobs=jobs,
                                      progress=progress)):
        reports[i] = rep
        if is_empty(rep) or (not rep.scanned and rep.language is None and not rep.errors):
            index.add(files[i].path, rep.language, files[i].stat)
    index.save()
    return reports


def _use_color(ns, stream) -> bool:
    if ns.color == "always":
        return True
    if ns.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def emit(ns: argparse.Namespace, result: RunResult) -> None:
    out_file = getattr(ns, "output_file", None)
    stream = open(out_file, "w", encoding="utf-8") if out_file else sys.stdout
    try:
        text = render(ns.format, result, color=_use_color(ns, stream) and not out_file,
                      statistics=getattr(ns, "statistics", False))
        stream.write(text)
        if getattr(ns, "show_target", False):
            where = stream if ns.format in ("text", "full") else sys.stderr
            for path, targets in result.targets.items():
                for t in targets:
                    src = t.get("sources", {})
                    print(f"{path}:{t['line']}: {t['entry']}: platform={t['platform']} ({src.get('platform')}), "
                          f"gpu={t['gpu']} ({src.get('gpu')}), model_attention={t['model_attention']} "
                          f"({src.get('model_attention')}), sglang={t['sglang_version'] or 'newest'} "
                          f"({src.get('sglang_version')})", file=where)
            for f in result.findings:  # SGLang's side of each finding: its function and the resolution trace
                if f.detail:
                    print(f"{f.path}:{f.start.line if f.start else 0}: {f.code} sglang: {f.detail}", file=where)
    finally:
        if out_file:
            stream.close()


def _check(ns: argparse.Namespace) -> int:
    from kv4lint.internal_error import has_internal

    settings = settings_for(ns)
    result, _ = collect(ns, settings)
    if getattr(ns, "add_suppressions", False):
        from kv4lint.suppress import add_suppressions

        n = add_suppressions(result.findings)
        print(f"Added {n} suppression comment{'s' if n != 1 else ''}.", file=sys.stderr)
        return EXIT_OK
    emit(ns, result)
    if has_internal(result.errors):
        return EXIT_ERROR
    if result.findings and not ns.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _explain(ns: argparse.Namespace) -> int:
    from kv4lint.rules.codes import RULES

    if not ns.code:
        for r in RULES.values():
            print(f"{r.code}  {r.severity.value:7}  {r.summary}")
        return EXIT_OK
    code = ns.code.upper()
    r = RULES.get(code)
    if r is None:
        print(f"kv4lint: unknown code {ns.code!r}; known: {', '.join(RULES)}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{r.code} ({r.name}, {r.severity.value}): {r.summary}\n")
    print(f"What it does\n  {r.what}\n")
    print(f"Why SGLang refuses it\n  {r.why}\n")
    print("Example (reported)\n" + "\n".join(("  " + ln).rstrip() for ln in r.example.splitlines()) + "\n")
    print("Fix\n  " + r.fix + "\n\nNot reported\n"
          + "\n".join(("  " + ln).rstrip() for ln in r.fixed_example.splitlines()) + "\n")
    print(f"Fix safety\n  {r.fix_safety}\n")
    print(f"Since\n  SGLang {r.since}")
    return EXIT_OK


def _matrix(ns: argparse.Namespace) -> int:
    from kv4lint.matrix import matrix

    try:
        print(matrix(ns.sglang_version, gpus=ns.gpu, fmt=ns.format), end="")
    except ValueError as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
