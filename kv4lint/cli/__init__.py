"""The ``kv4lint`` command (and ``python -m kv4lint``): check, fix, explain, matrix.

- :mod:`kv4lint.cli.app` -- the argument parser, the commands' dispatch and the exit status;
- :mod:`kv4lint.cli.check` -- ``kv4lint check``: discover, lint each file with its own settings,
  report;
- :mod:`kv4lint.cli.fix` -- ``kv4lint fix`` (``check --fix``, ``--diff``) over the fix engine
  (:mod:`kv4lint.pipeline.fix_engine`), which imports nothing of this package.

Exit status: 0 -- everything named was checked and nothing was found; 1 -- findings, or a file
that could not be read or parsed; 2 -- usage errors (an unknown option or command, a bad
configuration, a named path that does not exist) and internal errors.

The argument parser is built from the one table of options (:mod:`kv4lint.settings.options`, which
the flake8 plugin, the codemod and ``[tool.kv4lint]`` read too).  Importing this package costs
nothing: ``kv4lint --version`` loads only the version, the commands are imported when called.
"""

from __future__ import annotations

import os
import sys

from kv4lint.base import process
from kv4lint.base.version import VERSION_LINE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


# The commands are imported when run (kv4lint.cli.app): `kv4lint --version` needs none of them.
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (default: ``sys.argv[1:]``) and return its exit status; the console script
    and ``python -m kv4lint`` end the process with it through :func:`console`."""
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:  # the parser and the commands not needed
        print(VERSION_LINE)
        return 0
    process.keep_patterns()  # in kv4lint's own process: regular expressions compiled once per installation
    from kv4lint.cli.app import main as run

    return run(argv)


def console() -> None:
    """The ``kv4lint`` command (``[project.scripts]``) and ``python -m kv4lint``: :func:`main` in a process that is
    kv4lint's own (:mod:`kv4lint.base.process`: a parser's import may be frozen out of the cyclic collector's way,
    which a host's process such as flake8's is not), and the process ends with its exit status (:func:`exit_with`)."""
    process.claim()
    exit_with(main())


def exit_with(code: int) -> None:
    """End this process with ``code``, as ``sys.exit(code)`` does, without the interpreter's teardown.

    A normal exit runs the ``atexit`` functions, flushes standard output and error, then frees every object
    and module one by one: 40-50 ms of CPU after a run that loaded libcst and the rules, for nothing.  This
    does the first two and ends the process.  Where another thread is still running (the language server),
    the exit is the usual one (it waits for them); so it is when standard output cannot be flushed, so that the
    interpreter reports it as before.  Files kv4lint writes are closed when written (``writing``, the fix's
    atomic writes): nothing is left for the teardown to flush.
    """
    process.store_kept()  # what the run compiled, for the next one (nothing, once kept)
    threading = sys.modules.get("threading")  # not imported: no other thread
    if threading is not None and threading.active_count() > 1:
        raise SystemExit(code)
    atexit = sys.modules.get("atexit")  # not imported: nothing registered
    if atexit is not None:
        atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


def build_parser():
    from kv4lint.cli.app import build_parser as build

    return build()
