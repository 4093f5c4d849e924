"""Run settings: what the user chose (CLI, config files, flake8 options)."""

from __future__ import annotations

from kv4lint.base.record import Record

DEFAULT_FIX_DTYPE = "fp8_e4m3"
MAX_FILE_BYTES = 10 * 1024 * 1024  # files larger than this are skipped with a notice
# The severities of findings (kv4lint.base.model.Severity's values), least severe first: ``severity`` is the least
# one reported.
SEVERITIES = ("warning", "error")


class Settings(Record):
    """What one file is judged with: the command line over the nearest configuration (kv4lint.settings.config).

    - ``platform``: a platform name, "auto" (detect via torch), or None (hints, then cuda);
      ``model_attention``: "mha" | "mla" | None; ``model_overrides``: model path glob -> "mha"/"mla";
    - ``select``: None: all codes; ``severity``: the least severity reported ("warning": every finding,
      "error": errors only); files larger than ``max_file_bytes`` are skipped with a notice;
    - ``sources``: where each setting came from, for --show-target and messages ("--gpu", "pyproject.toml");
    - ``repo_sglang_version`` (and its ``_source``): the SGLang version pinned by the repository (requirements,
      lock files, images); ``repo_sglang_source_installs``: where it installs SGLang from git or source (a build
      kv4lint does not know);
    - ``fork_options``: globs of the options a fork of SGLang adds (``--kt-*``), or of a stock option's values it
      adds (``--attention-backend=kt_*``): kv4lint neither refuses them nor takes them as evidence of a build it
      does not know (the options are left out of the launch, the values are unknown to it);
    - ``root``: the project root (where the config was found), for relative paths; ``cache_dir``:
      kv4lint.pipeline.cache's directory (None: no cache; the CLI turns it on); ``config_file``: the configuration file
      these settings came from (--show-target); ``rule_docs_url``: SARIF helpUri base (None: the project's
      docs/rules/).
    """

    __slots__ = ("sglang_version", "platform", "gpu", "model_attention", "model_overrides", "strict", "fix_dtype",
                 "select", "extend_select", "ignore", "per_file_ignores", "severity", "exclude",
                 "extend_exclude", "max_file_bytes", "sources", "repo_sglang_version", "repo_sglang_version_source",
                 "repo_sglang_source_installs", "root", "cache_dir", "config_file", "rule_docs_url", "fork_options")

    def __init__(self, sglang_version: str | None = None, platform: str | None = None, gpu: str | None = None,
                 model_attention: str | None = None, model_overrides: dict[str, str] | None = None,
                 strict: bool = False, fix_dtype: str = DEFAULT_FIX_DTYPE, select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 per_file_ignores: dict[str, list[str]] | None = None, severity: str = SEVERITIES[0],
                 exclude: list[str] | None = None, extend_exclude: list[str] | None = None,
                 max_file_bytes: int = MAX_FILE_BYTES,
                 sources: dict[str, str] | None = None, repo_sglang_version: str | None = None,
                 repo_sglang_version_source: str | None = None, repo_sglang_source_installs: list[str] | None = None,
                 root: str | None = None, cache_dir: str | None = None, config_file: str | None = None,
                 rule_docs_url: str | None = None, fork_options: list[str] | None = None):
        self.sglang_version = sglang_version
        self.platform = platform
        self.gpu = gpu
        self.model_attention = model_attention
        self.model_overrides = {} if model_overrides is None else model_overrides
        self.strict = strict
        self.fix_dtype = fix_dtype
        self.select = select  # None: all codes
        self.extend_select = [] if extend_select is None else extend_select
        self.ignore = [] if ignore is None else ignore
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.severity = severity  # the least severity reported
        self.exclude = [] if exclude is None else exclude
        self.extend_exclude = [] if extend_exclude is None else extend_exclude
        self.max_file_bytes = max_file_bytes
        self.sources = {} if sources is None else sources
        self.repo_sglang_version = repo_sglang_version
        self.repo_sglang_version_source = repo_sglang_version_source
        self.repo_sglang_source_installs = [] if repo_sglang_source_installs is None else repo_sglang_source_installs
        self.root = root
        self.cache_dir = cache_dir
        self.config_file = config_file
        self.rule_docs_url = rule_docs_url
        self.fork_options = [] if fork_options is None else fork_options

    def enabled(self, code: str, severity: str | None = None) -> bool:
        """Whether a finding of ``code`` (and ``severity``, a :class:`kv4lint.base.model.Severity` value) is reported:
        its code is selected and not ignored, and it is at least as severe as ``self.severity``.  The one
        test every output, the exit status, the fixes and ``--add-suppressions`` go by (kv4lint.pipeline.runner)."""
        if severity is not None and SEVERITIES.index(severity) < SEVERITIES.index(self.severity):
            return False

        def match(prefixes):
            return any(code.startswith(p) for p in prefixes)

        selected = match(self.select) if self.select is not None else True
        selected = selected or match(self.extend_select)
        return selected and not match(self.ignore)
