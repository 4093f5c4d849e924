"""Settings from configuration files and the command line, per file (as ruff does).

kv4lint reads ``[tool.kv4lint]`` in ``pyproject.toml``, or the top level of
``kv4lint.toml`` / ``.kv4lint.toml``.  Each file is judged with the nearest
configuration above it: the walk up from the file's directory takes the first
file with kv4lint settings and stops at the repository's root (the directory
holding ``.git``).  In one directory ``.kv4lint.toml`` comes before
``kv4lint.toml`` before ``pyproject.toml``.  ``--config FILE`` names one file
for every path; ``--isolated`` reads none.  Command-line options override the
file.  So two services of one repository, each with its own configuration, get
the same findings whatever the order of the paths or the batch pre-commit makes.

Every key is checked (:mod:`kv4lint.settings.options`, the one table of options): an
unknown key or a bad value is a :class:`ConfigError`
``"<file>: [tool.kv4lint] <key>: <problem>"`` (the CLI turns it into exit 2).
"""

from __future__ import annotations

import argparse
import os

from kv4lint.settings.options import (  # noqa: F401 - re-exported: the names readers of settings know
    ATTENTIONS, FIX_DTYPES, TOML_KEYS as KEYS, ConfigError, Overrides, settings_from_mapping)
from kv4lint.base.record import Frozen
from kv4lint.base.settings import Settings
from kv4lint.files.ignore import repository_root
from kv4lint.files.regular_file import open_file
from kv4lint.settings.project import find_sglang_pin, sglang_source_installs

CONFIG_NAMES = (".kv4lint.toml", "kv4lint.toml", "pyproject.toml")


# ---------------------------------------------------------------------------
# Finding and reading the file


class ConfigFile(Frozen):
    """A configuration file: its ``path`` (absolute), its kv4lint settings (``table``), and whether it is a
    ``pyproject.toml`` (the settings under ``[tool.kv4lint]``)."""

    __slots__ = ("path", "table", "is_pyproject")

    def __init__(self, path: str, table: dict, is_pyproject: bool):
        self._set("path", path)
        self._set("table", table)
        self._set("is_pyproject", is_pyproject)

    @property
    def label(self) -> str:
        """How Settings.sources names it: ``pyproject.toml [tool.kv4lint]``, ``../kv4lint.toml``."""
        rel = _rel(self.path)
        return f"{rel} [tool.kv4lint]" if self.is_pyproject else rel

    @property
    def where(self) -> str:
        """How errors name it: ``/abs/pyproject.toml: [tool.kv4lint]`` (a key follows)."""
        return f"{_rel(self.path)}: [tool.kv4lint]" if self.is_pyproject else f"{_rel(self.path)}:"


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith(".." + os.sep + "..") else rel


def read_config(path: str, *, named: bool = False, memo=None) -> ConfigFile | None:
    """Read one configuration file; ``None`` when it is a pyproject.toml without ``[tool.kv4lint]``.

    ``named``: the user named the file (``--config``): a pyproject.toml without the
    table then gives empty settings, and a missing file is an error.
    ``memo``: what an earlier run read (the file index, :meth:`kv4lint.pipeline.cache.FileIndex.config`): an
    unchanged file is not read again.
    """
    path = os.path.abspath(path)
    st = None
    if memo is not None and not named:
        try:
            st = os.stat(path)
        except OSError:
            st = None
        known = memo.config(path, st) if st is not None else None
        if known is not None:
            return ConfigFile(path, known[0], known[1]) if known[0] is not None else None
    cf = _read_config(path, named)
    if st is not None:
        memo.add_config(path, st, cf.table if cf is not None else None, cf.is_pyproject if cf is not None else True)
    return cf


def _read_config(path: str, named: bool) -> ConfigFile | None:
    import tomllib

    try:
        with open_file(path) as f:  # never a FIFO or device (kv4lint.files.regular_file)
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{_rel(path)}: no such configuration file") from None
    except OSError as e:
        raise ConfigError(f"{_rel(path)}: cannot read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{_rel(path)}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{_rel(path)}: not valid TOML: not UTF-8") from None
    is_pyproject = os.path.basename(path) == "pyproject.toml" or (
        named and isinstance(data.get("tool"), dict) and "kv4lint" in data["tool"])
    if is_pyproject:
        tool = data.get("tool", {})
        table = tool.get("kv4lint") if isinstance(tool, dict) else None
        if table is None:
            return ConfigFile(path, {}, True) if named else None
        if not isinstance(table, dict):
            raise ConfigError(f"{_rel(path)}: [tool.kv4lint] must be a table")
        return ConfigFile(path, table, True)
    return ConfigFile(path, data, False)


def find_config(start: str) -> ConfigFile | None:
    """The first configuration file with kv4lint settings from ``start`` upwards (stops at ``.git``)."""
    return ConfigResolver().config_of(os.path.abspath(start))


def start_dir(paths: list[str] | None) -> str:
    """Where the configuration search starts: the first path's directory, or the current one."""
    if paths:
        p = os.path.abspath(paths[0])
        if os.path.isdir(p):
            return p
        if os.path.exists(p) or os.path.isdir(os.path.dirname(p)):
            return os.path.dirname(p)
    return os.getcwd()


# ---------------------------------------------------------------------------
# Settings per file: the nearest configuration, then the command line over it


class ConfigResolver:
    """The settings each file is judged with: the nearest configuration file above it (or the one
    ``config_file`` names), with ``overrides`` (the command line) over it.

    Directories and configuration files are each looked at once per run; files configured by
    the same configuration file share one :class:`Settings` object (the linter groups files by it).
    """

    def __init__(self, overrides: Overrides | None = None, *, config_file: str | None = None,
                 isolated: bool = False, cache_dir: str | None = None) -> None:
        self.overrides = overrides or Overrides()
        self.isolated = isolated
        self.cache_dir = cache_dir
        self.named = read_config(config_file, named=True) if config_file and not isolated else None
        self._dirs: dict[str, ConfigFile | None] = {}
        self.repository_roots: dict[str, str | None] = {}  # directory -> its repository's root: each looked at once
        self.listings: dict[str, set[str]] = {}  # directory -> its entries' names, as a walk saw them (discover)
        self._settings: dict[tuple, Settings] = {}
        self._by_dir: dict[str, Settings] = {}  # a file's directory, as its path spells it -> its settings
        self.memo = None  # the file index, when the run keeps one: configuration files it knows are not read again

    def config_of(self, directory: str) -> ConfigFile | None:
        """The configuration file that governs ``directory`` (absolute), or None."""
        if self.isolated:
            return None
        if self.named is not None:
            return self.named
        walked = []
        d = directory
        found: ConfigFile | None = None
        top = repository_root(directory, known=self.repository_roots) if directory not in self._dirs else None
        while True:
            if d in self._dirs:
                found = self._dirs[d]
                break
            walked.append(d)
            found = _config_in(d, self.listings.get(d), self.memo)
            if found is not None or d == top:
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for w in walked:
            self._dirs[w] = found
        return found

    def check_config(self, directory: str) -> None:
        """Read and check the configuration that governs ``directory`` (ConfigError when it is bad)."""
        cfg = self.config_of(os.path.abspath(directory))
        if cfg is not None:
            settings_from_mapping(cfg.table, cfg.label, where=cfg.where, toml=True)

    def settings_for(self, path: str, *, is_dir: bool | None = None) -> Settings:
        """The settings of the file (or directory) ``path`` (``is_dir``: known already, no ``stat``)."""
        if is_dir is False:  # a walk's files: one answer per directory as written, no abspath per file
            written = os.path.dirname(path)
            s = self._by_dir.get(written)
            if s is None:
                s = self._by_dir[written] = self._settings_of_directory(os.path.dirname(os.path.abspath(path)))
            return s
        full = os.path.abspath(path)
        return self._settings_of_directory(full if (os.path.isdir(full) if is_dir is None else is_dir)
                                           else os.path.dirname(full))

    def _settings_of_directory(self, directory: str) -> Settings:
        cfg = self.config_of(directory)
        if cfg is not None:
            root = os.path.dirname(cfg.path)
        else:
            # A walk asks for every file: each directory up to the repository's root looked at once.
            root = repository_root(directory, known=self.repository_roots) or os.getcwd()
        key = (cfg.path if cfg is not None else None, root)
        s = self._settings.get(key)
        if s is None:
            s = self._settings[key] = self._build(cfg, root)
        return s

    def _build(self, cfg: ConfigFile | None, root: str) -> Settings:
        s = Settings()
        if cfg is not None:
            settings_from_mapping(cfg.table, cfg.label, base=s, where=cfg.where, toml=True)
            s.config_file = cfg.path
        s.root = root
        self.overrides.apply(s)
        if s.platform == "auto":
            _resolve_auto(s)
        if not s.sglang_version:
            pin = find_sglang_pin(root)
            if pin is not None:
                s.repo_sglang_version, s.repo_sglang_version_source = pin
            else:
                s.repo_sglang_source_installs = sglang_source_installs(root)
        s.cache_dir = self.cache_dir
        return s

    def all_settings(self) -> list[Settings]:
        return list(self._settings.values())


def _config_in(directory: str, names: set[str] | None = None, memo=None) -> ConfigFile | None:
    """The configuration file in ``directory``; ``names``: its entries' names when a walk listed it; ``memo``:
    :func:`read_config`'s."""
    for name in CONFIG_NAMES:
        if names is not None and name not in names:
            continue
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            cf = read_config(p, memo=memo)
            if cf is not None:
                return cf
    return None


def build_settings(ns: argparse.Namespace, paths: list[str]) -> Settings:
    """Settings for the first of ``paths`` (or the current directory): its nearest configuration file
    (or ``ns.config_file``), then the options ``ns`` sets over it.

    Also fills the repository's SGLang pin (``repo_sglang_version``) and the project root,
    and resolves ``platform = auto`` once, here, through torch.
    """
    resolver = ConfigResolver(Overrides.from_namespace(ns), config_file=getattr(ns, "config_file", None),
                              isolated=bool(getattr(ns, "isolated", False)))
    return resolver.settings_for(start_dir(paths))


def _resolve_auto(s: Settings) -> None:
    """``platform = "auto"``: detect this machine through torch (once, not per launch)."""
    src = s.sources.get("platform", "--platform")
    said = f"{src} auto" if src.startswith("--") else f"{src}: platform = \"auto\""
    from kv4lint.target import platform_detect  # --platform auto only

    det = platform_detect.detect()
    if det.platform is None:
        raise ConfigError(f"{said}: {det.reason}")
    s.platform = det.platform
    s.sources["platform"] = f"{said}: {det.reason}"
    if det.arch and not s.gpu:
        s.gpu = det.arch
        s.sources["gpu"] = f"{said}: {det.reason}"
