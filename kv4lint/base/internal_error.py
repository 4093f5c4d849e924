"""Internal errors are not findings.

A CI job reads exit status 1 as "the code has a bad launch".  An unexpected
exception in kv4lint is a bug in kv4lint, so it says so in one line -- kv4lint's
version, the file being read, where to report it -- and the run exits 2.  The
traceback is printed only with ``--verbose``.

- An exception while one file is linted (:func:`file_error`; a frontend's
  exception in one block, recipe or cell: :func:`scan_error`) stops only that
  file (or part): the others are still checked and reported, the file gets that one line
  (``path: error: internal error ...``) and the run's exit status is 2.
- An exception anywhere else in a CLI run (:func:`guarded`) ends the run with
  that one line on stderr and exit status 2.
- The flake8 plugin reports the same line as ``KV400`` on line 1 of the file
  (flake8, not the plugin, decides its exit status).
"""

from __future__ import annotations

import sys

from kv4lint.base.exit_status import EXIT_ERROR
from kv4lint.base.file_error import FileError
from kv4lint.base.version import __version__

# Where to report a bug when the installed metadata names no tracker (``[project.urls]`` "Issues").
REPORT_FALLBACK = "the issue tracker of the repository kv4lint was installed from"
EXIT_INTERNAL = EXIT_ERROR  # an internal error exits as a usage error does: 2, never "findings"

# Set by the CLI from --verbose; worker processes are forked after it is set.
verbose = False
# The file being linted in this process, for an exception that escapes the per-file guard.
current_file: str | None = None


def report_to() -> str:
    """Where to report a bug: the installed distribution's "Issues" / "Bug Tracker" URL, else
    :data:`REPORT_FALLBACK`. Read only when an error is reported (importlib.metadata costs start-up time)."""
    try:
        from importlib.metadata import metadata

        for entry in metadata("kv4lint").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("issues", "bug tracker", "tracker") and url.strip():
                return url.strip()
    except Exception:  # noqa: BLE001 - not installed, or odd metadata: the fallback
        pass
    return REPORT_FALLBACK


def _short(text: str, limit: int = 120) -> str:
    # One line, and short: an exception's text may quote the scanned file.
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(exc: BaseException, path: str | None = None, *, during: str | None = None, hint: bool = True) -> str:
    """The one line for ``exc``: what failed (``during``: "while scanning a bash block"), kv4lint's
    version and where to report it (and, with ``hint``, that ``--verbose`` prints the traceback)."""
    detail = _short(str(exc))
    what = type(exc).__name__ + (f": {detail}" if detail else "")
    where = f" while reading {path}" if path else ""
    where += f" {during}" if during else ""
    hint = " (--verbose prints the traceback)" if hint and not verbose else ""
    return (f"internal error{where} ({what}): a bug in kv4lint {__version__}, not a finding; "
            f"please report it to {report_to()}{hint}")


def traceback_if_verbose(exc: BaseException) -> None:
    """With ``--verbose``, the traceback of an internal error, on stderr: every place that turns an exception
    into an internal error calls this (:func:`file_error`, :func:`scan_error`, the frontends' own)."""
    if not verbose:
        return
    import traceback  # only with --verbose, when something failed: 2 ms (textwrap, linecache) no run needs

    traceback.print_exception(exc, file=sys.stderr)


def file_error(path: str, exc: BaseException):
    """The per-file error for an exception raised while ``path`` was linted (the run goes on)."""
    traceback_if_verbose(exc)
    return FileError(path, describe(exc), internal=True)


def scan_error(path: str, during: str, exc: BaseException, line: int | None = None):
    """The error a frontend records when part of a file (a block, a recipe, a cell) raised: the rest of
    the file is still scanned, and the run exits 2."""
    traceback_if_verbose(exc)
    return FileError(path, describe(exc, during=during), line, internal=True)


def has_internal(errors) -> bool:
    """Whether any of ``errors`` (FileError) is an internal error: the run exits 2."""
    return any(getattr(e, "internal", False) for e in errors)


def guarded(main, argv: list[str]) -> int:
    """``main(argv)``, with an unexpected exception turned into one line on stderr and exit 2."""
    global verbose
    verbose = "--verbose" in argv[: argv.index("--")] if "--" in argv else "--verbose" in argv
    try:
        return main(argv)
    except Exception as e:  # noqa: BLE001 - the last guard: anything here is a bug in kv4lint
        print(f"kv4lint: {describe(e, current_file)}", file=sys.stderr)
        traceback_if_verbose(e)
        return EXIT_INTERNAL
