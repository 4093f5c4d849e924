"""The argument parser (built from :mod:`kv4lint.settings.options`), the commands' dispatch, the exit status."""

from __future__ import annotations

import argparse
import os
import sys

from kv4lint.base.exit_status import EXIT_ERROR, EXIT_OK
from kv4lint.base.internal_error import guarded
from kv4lint.base.version import VERSION_LINE
from kv4lint.files.isolation import path_arguments, trusted_imports
from kv4lint.settings.options import CLI, ConfigError, UsageError, add_to_parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

COMMANDS = ("check", "fix", "explain", "matrix", "server")

EXIT_STATUS_HELP = """\
exit status:
  0  everything named was checked and nothing was found
  1  findings, or a file that could not be read or parsed
  2  usage errors (an unknown option or command, a bad configuration, a path that
     does not exist) and internal errors
The same for `kv4lint fix`, `--diff` and the flake8 plugin."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """A usage error is one line and exit 2, as git's and ruff's: what is wrong, then where help is (not
        argparse's usage block, whose twenty lines pushed the one that matters off the screen)."""
        command = self.prog.split()[1] if " " in self.prog else None
        usage_error(message.removeprefix("argument "), command)
        self.exit(EXIT_ERROR)

    def _get_formatter(self):
        """argparse makes a formatter for every option it adds (to check its metavar); the default one asks
        ``shutil`` for the terminal's width, a 2 ms import (bz2, lzma) in every run: the width is asked here."""
        return self.formatter_class(prog=self.prog, width=_width())


def _width() -> int:
    """``shutil.get_terminal_size().columns - 2``, as argparse's help is wrapped: ``$COLUMNS``, else the terminal's,
    else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def usage_error(message: str, command: str | None = None) -> None:
    """``kv4lint: error: MESSAGE; see 'kv4lint COMMAND --help'`` on stderr."""
    where = f"kv4lint {command} --help" if command else "kv4lint --help"
    print(f"kv4lint: error: {message}; see '{where}'", file=sys.stderr)


def _unknown(extra: list[str], parser: argparse.ArgumentParser, command: str | None) -> str:
    """What is wrong with the words no option or argument of ``command`` took."""
    word = extra[0]
    if not word.startswith("-") or word == "-":
        return f"unexpected argument {word!r}"
    sub = parser
    if command and parser._subparsers is not None:
        sub = parser._subparsers._group_actions[0].choices.get(command, parser)  # type: ignore[attr-defined]
    known = [s for a in sub._actions for s in a.option_strings if s.startswith("--")]
    import difflib  # a mistyped option only

    near = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.8)
    return f"unknown option {word!r}" + (f" (did you mean {near[0]!r}?)" if near else "")


def _command_options(p: argparse.ArgumentParser, command: str) -> None:
    groups = {
        "target": p.add_argument_group("target (what the launches are judged against)"),
        "selection": p.add_argument_group("selection"),
        "output": p.add_argument_group("output"),
        "fixing": p.add_argument_group("fixing"),
    }
    add_to_parser(p, CLI, groups=groups, command=command)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with a ``command``, only that command's (a run parses one command's
    options, and building the others' costs a tenth of a cached run's start-up)."""
    p = _Parser(prog="kv4lint", description="Catch SGLang launches whose FP4 (KV4) KV cache SGLang will refuse.",
                epilog=EXIT_STATUS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=VERSION_LINE)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    kw = {"epilog": EXIT_STATUS_HELP, "formatter_class": argparse.RawDescriptionHelpFormatter}

    def wanted(name: str) -> bool:
        return command is None or command == name

    if wanted("check"):
        c = sub.add_parser("check", help="report problems (default command)", **kw)
        c.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files and directories (- : stdin)")
        _command_options(c, "check")
    if wanted("fix"):
        f = sub.add_parser("fix", help="rewrite FP4 KV caches that SGLang would refuse to an fp8 KV cache", **kw)
        f.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="files and directories (- : stdin, the fixed text goes to stdout)")
        _command_options(f, "fix")
    if wanted("server"):
        s = sub.add_parser("server", help="a language server (LSP on stdio) for editors: diagnostics for every file "
                           "kv4lint reads, fixes and suppressions as code actions, hovers (docs/editors.md)", **kw)
        _command_options(s, "server")
    if wanted("explain"):
        e = sub.add_parser("explain", help="what a code checks, why SGLang refuses it, and the fix")
        e.add_argument("code", nargs="?", help="KV401 ... (omit to list all codes)")
    if wanted("matrix"):
        m = sub.add_parser("matrix", help="print a release's KV4 support table (backends x MHA/MLA x FP4 dtype), "
                           "computed by check itself")
        m.add_argument("--sglang-version", metavar="V")
        m.add_argument("--gpu", metavar="G", action="append",
                       help="GPU arch or name (repeatable; default: sm90, sm100 and sm120)")
        m.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    return p


def _command_argv(argv: list[str]) -> list[str]:
    """``kv4lint PATH...`` means ``kv4lint check PATH...``; a word that is neither a command nor an
    existing path but looks like a mistyped command (``kv4lint chek``) is a usage error."""
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version")):
        return argv
    if argv and not argv[0].startswith("-") and not os.path.lexists(argv[0]) and os.sep not in argv[0] \
            and "." not in argv[0]:
        import difflib  # a mistyped command only

        near = difflib.get_close_matches(argv[0], COMMANDS, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UsageError(f"unknown command {argv[0]!r}{hint}; commands: {', '.join(COMMANDS)} "
                         f"(a path that does not exist is an error too)")
    return ["check", *argv]


def main(argv: Sequence[str] | None = None) -> int:
    """The console script (and ``python -m kv4lint``): no module of the scanned tree is importable while
    it runs (kv4lint.files.isolation), and an unexpected exception exits 2 (kv4lint.base.internal_error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with trusted_imports(path_arguments(argv)):
        return guarded(_main, argv)


def _main(argv: list[str]) -> int:
    try:
        argv = _command_argv(argv)
    except UsageError as e:
        usage_error(str(e))
        return EXIT_ERROR
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(command)
    ns, extra = parser.parse_known_args(argv)
    if extra:
        usage_error(_unknown(extra, parser, command), command)
        return EXIT_ERROR
    try:
        if ns.command in ("explain", "matrix"):
            from kv4lint.cli.check import writing

            with writing(None):
                return _explain(ns) if ns.command == "explain" else _matrix(ns)
        # Each command loads when run: `kv4lint --version`, `--help` and `explain` load none of them.
        if ns.command == "server":
            try:
                from kv4lint.cli.server.lsp import run_server
            except ImportError as e:  # an install without kv4lint's own dependencies (pygls, lsprotocol)
                if (e.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
                    raise
                raise UsageError(f"kv4lint server needs {e.name}, which installing kv4lint brings: install "
                                 "kv4lint again the way you installed it (docs/editors.md)") from None
            return run_server(ns)
        if ns.command == "fix" or getattr(ns, "fix", False) or getattr(ns, "diff", False):
            from kv4lint.cli.fix import run_fix

            return run_fix(ns)
        from kv4lint.cli import check

        resolver = check.resolver_for(ns)
        if check.reads_stdin(ns):
            from kv4lint.cli.stdin import check_stdin

            return check_stdin(ns, resolver)
        return check.run_check(ns, resolver)
    except KeyboardInterrupt:
        print("kv4lint: interrupted", file=sys.stderr)
        return 130
    except (UsageError, ConfigError) as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR


def _explain(ns: argparse.Namespace) -> int:
    from kv4lint.rules.codes import RULES

    if not ns.code:
        for r in RULES.values():
            print(f"{r.code}  {r.severity.value:7}  {r.summary}")
        return EXIT_OK
    code = ns.code.upper()
    r = RULES.get(code)
    if r is None:
        print(f"kv4lint: error: unknown code {ns.code!r}; known: {', '.join(RULES)}", file=sys.stderr)
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
    from kv4lint.cli.matrix import matrix

    try:
        print(matrix(ns.sglang_version, gpus=ns.gpu, fmt=ns.format), end="")
    except ValueError as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
