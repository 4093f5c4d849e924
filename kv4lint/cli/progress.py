"""A progress line on stderr for long runs: ``kv4lint: 1234/5678 files``.

Shown only when the stream is a terminal, and only once the run has taken
``delay`` seconds (short runs print nothing); redrawn at most ``interval``
times a second, and erased when the run ends, so that the report that follows
starts on a clean line.  ``NO_PROGRESS`` / ``CI`` in the environment, a dumb
terminal, or ``enabled=False`` turn it off.

    with Progress(len(files)) as progress:
        for rep in lint_many(files, settings, progress=progress.advance): ...
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, *, enabled: bool | None = None,
                 delay: float = 2.0, interval: float = 0.1, label: str = "files",
                 clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _wanted(self.stream) if enabled is None else enabled
        self.delay = delay
        self.interval = interval
        self.label = label
        self.clock = clock
        self.done = 0
        self._start = clock()
        self._last_draw: float | None = None
        self._width = 0  # characters of the line on screen, to erase it

    def advance(self, n: int = 1, *_ignored) -> None:
        """Count ``n`` finished items (extra arguments, such as the report, are ignored)."""
        self.done += n
        if not self.enabled:
            return
        now = self.clock()
        if now - self._start < self.delay:
            return
        if self._last_draw is not None and now - self._last_draw < self.interval and self.done < self.total:
            return
        self._last_draw = now
        self._draw()

    def _draw(self) -> None:
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        line = f"kv4lint: {self.done}/{self.total} {self.label}{pct}"
        pad = max(0, self._width - len(line))
        try:
            self.stream.write("\r" + line + " " * pad)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
            return
        self._width = len(line)

    def close(self) -> None:
        """Erase the progress line, if one was drawn."""
        if self._width:
            try:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self._width = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _wanted(stream: TextIO) -> bool:
    if os.environ.get("NO_PROGRESS") or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False
