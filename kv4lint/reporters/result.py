"""A run's results, as every reporter reads them."""

from __future__ import annotations

from kv4lint.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kv4lint.base.file_error import FileError
    from kv4lint.base.model import Finding


class RunResult(Record):
    """``targets``: path -> per-launch target descriptions; ``root``: for repo-relative paths (SARIF);
    ``rule_docs_url``: SARIF helpUri base (None: the project's rule pages).

    The command line's view of the run (text output and exit status): ``usage_errors``: a named path that
    does not exist ...; ``version_notes``: an SGLang version kv4lint has no rule pack for; ``fixed``: kv4lint
    fix: findings fixed (None: a check); ``would_fix``: --diff: the fixes were shown, not written;
    ``unsafe_fixes_applied``: --unsafe-fixes.
    """

    __slots__ = ("findings", "errors", "files_scanned", "notices", "targets", "root", "rule_docs_url",
                 "usage_errors", "version_notes", "fixed", "fixed_files", "would_fix", "unsafe_fixes_applied")

    def __init__(self, findings: list[Finding] | None = None, errors: list[FileError] | None = None,
                 files_scanned: int = 0, notices: list[str] | None = None,
                 targets: dict[str, list[dict]] | None = None, root: str | None = None,
                 rule_docs_url: str | None = None, usage_errors: list[str] | None = None,
                 version_notes: list[str] | None = None, fixed: int | None = None, fixed_files: int = 0,
                 would_fix: bool = False, unsafe_fixes_applied: bool = False):
        self.findings = [] if findings is None else findings
        self.errors = [] if errors is None else errors
        self.files_scanned = files_scanned
        self.notices = [] if notices is None else notices
        self.targets = {} if targets is None else targets
        self.root = root
        self.rule_docs_url = rule_docs_url
        self.usage_errors = [] if usage_errors is None else usage_errors
        self.version_notes = [] if version_notes is None else version_notes
        self.fixed = fixed
        self.fixed_files = fixed_files
        self.would_fix = would_fix
        self.unsafe_fixes_applied = unsafe_fixes_applied
