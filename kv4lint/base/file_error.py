"""A file kv4lint could not read or parse: the one error record every stage reports.

A leaf record (:mod:`kv4lint.base.record`) below both the rich model (a frontend's
:class:`~kv4lint.base.model.ScanResult` carries errors) and a file's report
(:mod:`kv4lint.base.file_report`, which carries findings), so that neither imports the other's module.
"""

from __future__ import annotations

from kv4lint.base.record import Record


class FileError(Record):
    """A file kv4lint could not read or parse (fully); the run goes on.

    ``internal``: a bug in kv4lint, not the file's fault: the run exits 2 (kv4lint.base.internal_error).
    """

    __slots__ = ("path", "message", "line", "internal")

    def __init__(self, path: str, message: str, line: int | None = None, internal: bool = False):
        self.path = path
        self.message = message
        self.line = line
        self.internal = internal

    def to_json(self) -> dict:
        d = {"path": self.path, "message": self.message}
        if self.line is not None:
            d["line"] = self.line
        if self.internal:
            d["internal"] = True
        return d
