"""A memo held for the process, bounded: past its limit it is emptied and fills again.

For the judges' answers that a file (or a run) asks again and again with the same key: the key holds everything
the answer reads, so an entry never goes stale; the limit keeps a long-lived process (the language server, a
flake8 run over a large tree) small."""

from __future__ import annotations


class Memo(dict):
    """A ``dict`` of answers, at most ``limit`` of them: :meth:`keep` empties it when it is full."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def keep(self, key, value):
        """Remember ``value`` for ``key`` (emptying the memo first when it is full) and return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
