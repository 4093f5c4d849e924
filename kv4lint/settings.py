"""Run settings: what the user chose (CLI, config files, flake8 options)."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_FIX_DTYPE = "fp8_e4m3"
MAX_FILE_BYTES = 10 * 1024 * 1024  # files larger than this are skipped with a notice


@dataclass
class Settings:
    sglang_version: str | None = None
    platform: str | None = None  # a platform name, "auto" (detect via torch), or None (hints, then cuda)
    gpu: str | None = None
    model_attention: str | None = None  # "mha" | "mla" | None
    model_overrides: dict[str, str] = field(default_factory=dict)  # model path glob -> "mha"/"mla"
    strict: bool = False
    fix_dtype: str = DEFAULT_FIX_DTYPE
    select: list[str] | None = None  # None: all codes
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    max_file_bytes: int = MAX_FILE_BYTES
    # Where each setting came from, for --show-target and messages ("--gpu", "pyproject.toml").
    sources: dict[str, str] = field(default_factory=dict)
    # SGLang version pinned by the repository (requirements, lock files, images), with its source.
    repo_sglang_version: str | None = None
    repo_sglang_version_source: str | None = None
    # Where the repository installs SGLang from git or source (a build kv4lint does not know).
    repo_sglang_source_installs: list[str] = field(default_factory=list)
    root: str | None = None  # the project root (where the config was found), for relative paths
    cache_dir: str | None = None  # kv4lint.cache's directory; None: no cache (the CLI turns it on)
    config_file: str | None = None  # the configuration file these settings came from (--show-target)
    rule_docs_url: str | None = None  # SARIF helpUri base (None: the project's docs/rules/)

    def enabled(self, code: str) -> bool:
        def match(prefixes):
            return any(code.startswith(p) for p in prefixes)

        selected = match(self.select) if self.select is not None else True
        selected = selected or match(self.extend_select)
        return selected and not match(self.ignore)
