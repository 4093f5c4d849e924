"""One file on disk into the pipeline: read it (a regular file, within the size limit), the pre-filter on
its bytes, decode it.

Most files of a tree stop here, so this stage imports only what reading and
the pre-filter need; a file that may launch goes on to :mod:`kv4lint.pipeline.runner`,
which is imported then (the frontends, the rules and SGLang's option tables
load on the first such file, not at start-up).  A Python file meets the Python
frontend's ``ast`` screen here, before the runner (:func:`_python_may_launch`).
"""

from __future__ import annotations

import codecs
import os

from kv4lint.base.file_error import FileError
from kv4lint.base.file_report import FileReport
from kv4lint.base.process import gc_paused
from kv4lint.base.settings import Settings
from kv4lint.base.source import DecodeError, decode, wide_encoding
from kv4lint.files.discover import language_of
from kv4lint.files.prefilter import let_go_of_tree, might_launch, might_launch_bytes, python_may_launch
from kv4lint.files.regular_file import NotRegularFile, open_regular, read_open

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
# Python texts up to this many characters meet the ast screen before the runner; longer ones go to the runner as
# they are: the Python frontend reports a text over its own bound (kv4lint.frontends.python.MAX_BYTES, which
# tests/test_read_screen.py holds above this) before it screens.
SCREEN_MAX = 1 << 20


def read_file(path: str, settings: Settings, language: str | None = None,
              walked: os.stat_result | None = None) -> tuple[FileReport, bytes | None]:
    """Read a file's bytes with the checks every reader needs (regular file, size); ``walked``: the walk's
    ``stat`` of it (:func:`kv4lint.files.regular_file.open_regular`)."""
    rep = FileReport(path, language)
    try:
        fd, st = open_regular(path, walked)  # stat, open, fstat: never a FIFO or device, even one swapped in
    except NotRegularFile as e:
        if e.opened:  # swapped in after the stat: refused, unread
            rep.errors.append(FileError(path, f"cannot read: {e.strerror}"))
        else:
            rep.errors.append(FileError(path, "not a regular file; skipped"))
            rep.scanned = False
        return rep, None
    except OSError as e:
        rep.errors.append(FileError(path, f"cannot read: {e.strerror or e}"))
        return rep, None
    try:
        if st.st_size > settings.max_file_bytes:
            if language is None and language_of(path, os.pread(fd, 256, 0)) is None:
                rep.scanned = False  # no extension and no shebang (a binary in bin/): not read at any size
                return rep, None
            rep.errors.append(FileError(path, f"skipped: {st.st_size / 1e6:.1f} MB is larger than the "
                                              f"{settings.max_file_bytes / 1e6:.0f} MB limit"))
            rep.scanned = False
            return rep, None
        data = read_open(fd, st.st_size, settings.max_file_bytes)
    except OSError as e:
        rep.errors.append(FileError(path, f"cannot read: {e.strerror or e}"))
        return rep, None
    finally:
        os.close(fd)
    return rep, data


def lint_file(path: str, settings: Settings, language: str | None = None,
              walked: os.stat_result | None = None) -> FileReport:
    """The whole pipeline for the file at ``path`` (``language``: as discovery told it, else from its name
    and first bytes; ``walked``: the walk's ``stat`` of it)."""
    rep, data = read_file(path, settings, language, walked)
    if data is None:
        return rep
    if rep.language is None:
        rep.language = language_of(path, data[:256])
        if rep.language is None:
            rep.scanned = False
            return rep
    wide = data.startswith(_UTF16_BOMS) or wide_encoding(data) is not None  # the pre-filter reads its text
    if not wide and not might_launch_bytes(data, rep.language):
        return rep
    if data.find(b"\0", 0, 8192) >= 0 and not wide and rep.language != "notebook":
        rep.errors.append(FileError(path, "binary file (NUL bytes); skipped"))
        return rep
    try:
        text = decode(data, python=rep.language == "python")
    except DecodeError as e:
        rep.errors.append(FileError(path, str(e), e.line))
        return rep
    if wide and not might_launch(text.text, rep.language):
        return rep
    if rep.language == "python" and not _python_may_launch(text.text):
        return rep
    try:
        from kv4lint.pipeline import runner  # the stages past the pre-filter: loaded for a file that may launch

        out = runner.lint_text(path, text.text, settings, language=rep.language, flake8_noqa=True)
    finally:
        let_go_of_tree()  # the screen's tree, where the frontend did not take it (or a forked child hands it back)
    out.text = text
    return out


def _python_may_launch(text: str) -> bool:
    """The Python frontend's ``ast`` screen (:func:`kv4lint.files.prefilter.python_may_launch`), asked before the
    runner is loaded: a file it rules out ends here with the empty report the frontend would give it, and a process
    that meets no Python launch loads neither the runner nor the frontends (a forked child hands a file that needs
    them to its parent: kv4lint.pipeline.parallel).  The screen keeps its answer and its tree for the frontend,
    which parses nothing again.  A text over ``SCREEN_MAX``, or a screen that fails, is the frontend's to judge and
    report, as before."""
    if len(text) > SCREEN_MAX:
        return True
    try:
        with gc_paused():  # the tree is a hundred thousand objects for 200 kB: freed before the collector runs again
            answer = python_may_launch(text)
            if not answer:
                let_go_of_tree()
    except Exception:  # noqa: BLE001 - the frontend meets it again and reports it
        return True
    return answer
