"""What one file gave: its report (its errors are :mod:`kv4lint.base.file_error`).

Every run makes a :class:`FileReport` per file, and most files of a tree end with an empty one (the
pre-filter found no launch in them), so it is apart from the rich model of a launch
(:mod:`kv4lint.base.model`: spans, values, launches, findings, fixes), which loads only when a file is
parsed or a stored report with findings is decoded.  Plain records (:mod:`kv4lint.base.record`).
"""

from __future__ import annotations

from kv4lint.base.file_error import FileError
from kv4lint.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kv4lint.base.model import Finding
    from kv4lint.base.source import Text


class FileReport(Record):
    """What one file gave: its findings and errors (the CLI, the fix engine and the reporters read it).

    ``text``: the decoded file (for the fix engine); ``targets``: per launch, for --show-target;
    ``scanned``: False when skipped before reading (size, not text); ``depends``: other files the report
    read (kv4lint.files.depends).
    """

    __slots__ = ("path", "language", "findings", "errors", "launches", "text", "targets", "scanned", "depends")

    def __init__(self, path: str, language: str | None = None, findings: list[Finding] | None = None,
                 errors: list[FileError] | None = None, launches: int = 0, text: Text | None = None,
                 targets: list[dict] | None = None, scanned: bool = True, depends: list[str] | None = None):
        self.path = path
        self.language = language
        self.findings = [] if findings is None else findings
        self.errors = [] if errors is None else errors
        self.launches = launches
        self.text = text
        self.targets = [] if targets is None else targets
        self.scanned = scanned
        self.depends = [] if depends is None else depends
