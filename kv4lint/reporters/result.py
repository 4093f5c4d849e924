"""A run's results, as every reporter reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

from kv4lint.model import FileError, Finding


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files_scanned: int = 0
    notices: list[str] = field(default_factory=list)
    targets: dict[str, list[dict]] = field(default_factory=dict)  # path -> per-launch target descriptions
    root: str | None = None  # for repo-relative paths (SARIF)
    rule_docs_url: str | None = None  # SARIF helpUri base (None: the project's rule pages)
    # The command line's view of the run (text output and exit status):
    usage_errors: list[str] = field(default_factory=list)  # a named path that does not exist ...
    version_notes: list[str] = field(default_factory=list)  # an SGLang version kv4lint has no rule pack for
    fixed: int | None = None  # kv4lint fix: findings fixed (None: a check)
    fixed_files: int = 0
    would_fix: bool = False  # --diff: the fixes were shown, not written
    unsafe_fixes_applied: bool = False  # --unsafe-fixes
