"""The launches one file may hold in all, and their words, across the blocks of a container format.

A container (a Dockerfile's instructions, a README's fences, a notebook's cells, a Makefile's recipes, a YAML
or JSON file's commands) hands each block to the shell or Python frontend as a text of its own, and each
text's launches are bounded (:data:`~kv4lint.base.model.MAX_WORDS` words).  Reading and judging a launch costs
about 0.1 ms a word and a few tenths of a millisecond a launch, so a 10 MB file of many blocks, each under the
bound, took minutes (issue 34: 2 MB of Dockerfile stages, 30 s).  The registry opens a budget per file
(:func:`opened`) of :data:`MAX_LAUNCHES` launches and :data:`~kv4lint.base.model.MAX_WORDS` words of their
arguments; the embedded readers charge each block's launches to it (:func:`charge`), and once it is spent the
file gets one error naming the limit and its other blocks are not scanned (:func:`spent`): never a file read
for minutes, never one passed as clean.  Real files hold a few launches; the bounds cost about 2 s (launches)
and 5 s (words) at most.

The budget is a context variable: each thread and task (the language server) has its own.
"""

from __future__ import annotations

import contextlib
import contextvars

from kv4lint.base.file_error import FileError
from kv4lint.base.model import MAX_WORDS, ScanResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable


# Launches of one file, across its blocks: each costs about 0.4 ms to read and judge, whatever its words.
MAX_LAUNCHES = 5_000


class _Budget:
    __slots__ = ("launches", "words", "spent")

    def __init__(self) -> None:
        self.launches = 0
        self.words = 0
        self.spent = False


_current: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("kv4lint_launch_words", default=None)


@contextlib.contextmanager
def opened():
    """One file's budget, while its frontend runs."""
    token = _current.set(_Budget())
    try:
        yield
    finally:
        _current.reset(token)


def spent() -> bool:
    """Whether this file's launches have already passed the bound: its further blocks are not scanned."""
    b = _current.get()
    return b is not None and b.spent


def charge(result: ScanResult, path: str, line: int | Callable[[], int | None] | None = None) -> None:
    """Count a block's launches; the block that passes the bound gets the file's one error naming it (at
    ``line``: a number, or a function giving it, asked only then)."""
    b = _current.get()
    if b is None or b.spent or not result.launches:
        return
    b.launches += len(result.launches)
    b.words += sum(len(la.argv) + len(la.config_argv) for la in result.launches)
    if b.launches > MAX_LAUNCHES:
        what = f"more than {MAX_LAUNCHES} launches"
    elif b.words > MAX_WORDS:
        what = f"launches of more than {MAX_WORDS} words"
    else:
        return
    b.spent = True
    result.errors.append(FileError(path, f"{what} in one file (the limit kv4lint reads): not scanned further",
                                   line() if callable(line) else line))
