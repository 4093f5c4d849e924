"""Settings from configuration files and the command line.

kv4lint reads ``[tool.kv4lint]`` in ``pyproject.toml``, or the top level of
``kv4lint.toml`` / ``.kv4lint.toml``.  The file is found by walking up from the
first path argument (or the current directory); the first file with kv4lint
settings wins, and the walk stops at a directory holding ``.git``.  In one
directory ``.kv4lint.toml`` comes before ``kv4lint.toml`` before
``pyproject.toml``.  ``--config FILE`` names the file; ``--isolated`` reads
none.  Command-line options override the file.

Every key is checked: an unknown key or a bad value is a :class:`ValueError`
``"<file>: [tool.kv4lint] <key>: <problem>"`` (the CLI turns it into exit 2).
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from kv4lint.rules.codes import INTERNAL_CODE, RULES
from kv4lint.settings import Settings

CONFIG_NAMES = (".kv4lint.toml", "kv4lint.toml", "pyproject.toml")

# kv4lint's KV cache fixes may use one of SGLang's non-FP4 dtypes.
FIX_DTYPES = ("fp8_e4m3", "fp8_e5m2", "bf16", "bfloat16", "auto")
ATTENTIONS = ("mha", "mla")


class ConfigError(ValueError):
    """A bad configuration file, key or value (message names the file and key)."""


# ---------------------------------------------------------------------------
# Value checkers: each takes the raw value and returns the Settings value or
# raises ValueError with the problem (without the file and key; added later).


def _str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"expected a non-empty string, got {_show(v)}")
    return v.strip()


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return repr(v)


def _list(v: Any) -> list[str]:
    """An array of strings, or (as flake8's options come) one comma/space-separated string."""
    if isinstance(v, str):
        return [p for p in re.split(r"[,\s]+", v) if p]
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            if not isinstance(x, str):
                raise ValueError(f"expected an array of strings, found {_show(x)} in it")
            if x.strip():
                out.append(x.strip())
        return out
    raise ValueError(f"expected an array of strings, got {_show(v)}")


_KNOWN_CODES = sorted({*RULES, INTERNAL_CODE})


def _code(c: str) -> str:
    u = c.strip().upper()
    if u == "ALL":
        return "KV"
    if not re.fullmatch(r"[A-Z]+[0-9]*", u) or not any(k.startswith(u) for k in _KNOWN_CODES):
        raise ValueError(f"unknown code {c!r} (codes: {', '.join(sorted(RULES))}, or a prefix such as KV40)")
    return u


def _codes(v: Any) -> list[str]:
    return [_code(c) for c in _list(v)]


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return v.strip().lower() in ("true", "yes", "on", "1")
    raise ValueError(f"expected true or false, got {_show(v)}")


def _version(v: Any) -> str:
    from kv4lint.target import parse_version

    s = _str(v)
    parse_version(s)  # ValueError: not a version
    return s


def _platform(v: Any) -> str:
    from kv4lint.target import normalise_platform

    s = _str(v)
    if s.lower() == "auto":
        return "auto"
    return normalise_platform(s)


def _gpu(v: Any) -> str:
    from kv4lint.target import normalise_gpu

    s = _str(v)
    normalise_gpu(s)  # ValueError: unknown GPU
    return s


def _attention(v: Any) -> str:
    s = _str(v).lower()
    if s not in ATTENTIONS:
        raise ValueError(f"expected \"mha\" or \"mla\", got {v!r}")
    return s


def _fix_dtype(v: Any) -> str:
    s = _str(v)
    if s not in FIX_DTYPES:
        raise ValueError(f"{v!r} is not a KV cache dtype fixes can use (one of {', '.join(FIX_DTYPES)}; "
                         "FP4 dtypes are what the fixes replace)")
    return s


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "ki": 1024, "kib": 1024, "mi": 1024**2, "mib": 1024**2, "gi": 1024**3, "gib": 1024**3}


def _size(v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError(f"expected a size in bytes (or like \"10MB\"), got {_show(v)}")
    if isinstance(v, int):
        n = v
    elif isinstance(v, str) and _SIZE.match(v):
        m = _SIZE.match(v)
        n = int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])
    else:
        raise ValueError(f"expected a size in bytes (or like \"10MB\"), got {_show(v)}")
    if n <= 0:
        raise ValueError(f"expected a positive size, got {v!r}")
    return n


def _table(v: Any, what: str) -> dict:
    if not isinstance(v, dict):
        raise ValueError(f"expected a table of {what}, got {_show(v)}")
    return v


def _model_overrides(v: Any) -> dict[str, str]:
    if isinstance(v, str):  # flake8: "glob=mla, glob2=mha"
        v = dict(_pair(p, "=") for p in re.split(r"[,\s]+", v) if p)
    out = {}
    for k, att in _table(v, "model path globs to \"mha\"/\"mla\"").items():
        try:
            out[k] = _attention(att)
        except ValueError as e:
            raise ValueError(f"{k!r}: {e}") from None
    return out


def _pair(text: str, sep: str) -> tuple[str, str]:
    k, s, val = text.rpartition(sep)
    if not s or not k:
        raise ValueError(f"expected GLOB{sep}VALUE, got {text!r}")
    return k, val


def _per_file_ignores(v: Any) -> dict[str, list[str]]:
    if isinstance(v, str):  # flake8's format: "glob:CODE,CODE glob2:CODE"
        d: dict[str, list[str]] = {}
        for p in re.split(r"\s+", v.strip()):
            if p:
                k, codes = _pair(p, ":")
                d.setdefault(k, []).extend(c for c in codes.split(",") if c)
        v = d
    out = {}
    for k, codes in _table(v, "path globs to arrays of codes").items():
        try:
            out[k] = _codes(codes)
        except ValueError as e:
            raise ValueError(f"{k!r}: {e}") from None
    return out


@dataclass(frozen=True)
class _Key:
    attr: str  # the Settings field
    check: Callable[[Any], Any]
    doc: str


KEYS: dict[str, _Key] = {
    "sglang-version": _Key("sglang_version", _version, "SGLang release to check against"),
    "platform": _Key("platform", _platform, "cuda, rocm, xpu, cpu, npu, musa, mps, hpu, or auto"),
    "gpu": _Key("gpu", _gpu, "GPU arch or name (sm90, h100, b200, rtx5090 ...)"),
    "model-attention": _Key("model_attention", _attention, "\"mha\" or \"mla\" for every launch"),
    "model-overrides": _Key("model_overrides", _model_overrides, "model path glob -> \"mha\"/\"mla\""),
    "strict": _Key("strict", _bool, "also report launches that fail for some unknown GPU / attention"),
    "select": _Key("select", _codes, "codes or prefixes to report"),
    "extend-select": _Key("extend_select", _codes, "codes added to select"),
    "ignore": _Key("ignore", _codes, "codes or prefixes not to report"),
    "per-file-ignores": _Key("per_file_ignores", _per_file_ignores, "path glob -> codes not to report there"),
    "exclude": _Key("exclude", _list, "path globs to skip"),
    "extend-exclude": _Key("extend_exclude", _list, "path globs to skip, added to exclude"),
    "fix-dtype": _Key("fix_dtype", _fix_dtype, "the KV cache dtype fixes write"),
    "max-file-size": _Key("max_file_bytes", _size, "files larger than this are skipped (bytes, or \"10MB\")"),
}


def settings_from_mapping(d: Mapping[str, Any], source: str, *, base: Settings | None = None,
                          where: str | None = None) -> Settings:
    """Settings from a mapping of kebab-case keys (a ``[tool.kv4lint]`` table, flake8 options).

    ``source`` is recorded in ``Settings.sources`` for every key set (e.g.
    ``"pyproject.toml [tool.kv4lint]"``); errors read ``"<where or source>: <key>: <problem>"``.
    Values may be TOML types or, as flake8 hands them over, strings (lists comma-separated,
    tables as ``glob:CODES`` / ``glob=mla``).  ``None`` values are skipped (an unset option).
    """
    s = base if base is not None else Settings()
    where = where or f"{source}:"
    if not isinstance(d, Mapping):
        raise ConfigError(f"{where}: expected a table of settings")
    for key, raw in d.items():
        if raw is None:
            continue
        spec = KEYS.get(key)
        if spec is None:
            import difflib

            hint = difflib.get_close_matches(str(key).replace("_", "-"), KEYS, n=1)
            msg = f"{where} {key}: unknown key"
            if hint:
                msg += f" (did you mean {hint[0]!r}?)"
            else:
                msg += f" (known keys: {', '.join(KEYS)})"
            raise ConfigError(msg)
        try:
            value = spec.check(raw)
        except ValueError as e:
            raise ConfigError(f"{where} {key}: {e}") from None
        setattr(s, spec.attr, value)
        s.sources[spec.attr] = source
    return s


# ---------------------------------------------------------------------------
# Finding and reading the file


@dataclass(frozen=True)
class ConfigFile:
    path: str  # absolute
    table: dict  # the kv4lint settings
    is_pyproject: bool

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


def read_config(path: str, *, named: bool = False) -> ConfigFile | None:
    """Read one configuration file; ``None`` when it is a pyproject.toml without ``[tool.kv4lint]``.

    ``named``: the user named the file (``--config``): a pyproject.toml without the
    table then gives empty settings, and a missing file is an error.
    """
    import tomllib

    path = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
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
    d = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                cf = read_config(p)
                if cf is not None:
                    return cf
        if os.path.exists(os.path.join(d, ".git")):
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def git_root(start: str) -> str | None:
    d = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


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
# The CLI: file settings, then the command line over them


_CLI_SINGLE = {  # argparse attribute -> config key (the option is --KEY)
    "sglang_version": "sglang-version", "platform": "platform", "gpu": "gpu",
    "model_attention": "model-attention", "fix_dtype": "fix-dtype",
}


def build_settings(ns: argparse.Namespace, paths: list[str]) -> Settings:
    """Settings for a CLI run: the configuration file, then command-line options over it.

    Also fills the repository's SGLang pin (``repo_sglang_version``) and the project root,
    and resolves ``--platform auto`` once, here, through torch.
    """
    start = start_dir(paths)
    cfg: ConfigFile | None = None
    config_file = getattr(ns, "config_file", None)
    if config_file and not getattr(ns, "isolated", False):
        cfg = read_config(config_file, named=True)
    elif not getattr(ns, "isolated", False):
        cfg = find_config(start)
    s = Settings()
    if cfg is not None:
        settings_from_mapping(cfg.table, cfg.label, base=s, where=cfg.where)
        s.root = os.path.dirname(cfg.path)
    else:
        s.root = git_root(start)

    _apply_cli(ns, s)

    if s.platform == "auto":
        _resolve_auto(s)

    if not s.sglang_version:
        from kv4lint.project import find_sglang_pin

        pin = find_sglang_pin(s.root or start)
        if pin is not None:
            s.repo_sglang_version, s.repo_sglang_version_source = pin
        else:
            from kv4lint.project import sglang_source_installs

            s.repo_sglang_source_installs = sglang_source_installs(s.root or start)
    return s


def _cli_value(key: str, raw: Any) -> Any:
    try:
        return KEYS[key].check(raw)
    except ValueError as e:
        raise ConfigError(f"--{key}: {e}") from None


def _apply_cli(ns: argparse.Namespace, s: Settings) -> None:
    """Command-line options over the file: single values and ``--select``/``--exclude`` replace,
    ``--extend-select``/``--ignore``/``--extend-exclude`` add to the file's lists."""
    for attr, key in _CLI_SINGLE.items():
        v = getattr(ns, attr, None)
        if v is not None:
            setattr(s, KEYS[key].attr, _cli_value(key, v))
            s.sources[KEYS[key].attr] = f"--{key}"
    if getattr(ns, "strict", None):
        s.strict = True
        s.sources["strict"] = "--strict"
    for key in ("select", "exclude"):
        v = getattr(ns, key, None)
        if v is not None:
            setattr(s, key, _cli_value(key, v))
            s.sources[key] = f"--{key}"
    for key in ("extend-select", "ignore", "extend-exclude"):
        v = getattr(ns, key.replace("-", "_"), None)
        if v:
            attr = KEYS[key].attr
            have = list(getattr(s, attr))
            setattr(s, attr, have + [c for c in _cli_value(key, v) if c not in have])
            s.sources[attr] = f"{s.sources[attr]} and --{key}" if attr in s.sources else f"--{key}"


def _resolve_auto(s: Settings) -> None:
    """``platform = "auto"``: detect this machine through torch (once, not per launch)."""
    from kv4lint import platform_detect

    src = s.sources.get("platform", "--platform")
    said = f"{src} auto" if src.startswith("--") else f"{src}: platform = \"auto\""
    det = platform_detect.detect()
    if det.platform is None:
        raise ConfigError(f"{said}: {det.reason}")
    s.platform = det.platform
    s.sources["platform"] = f"{said}: {det.reason}"
    if det.arch and not s.gpu:
        s.gpu = det.arch
        s.sources["gpu"] = f"{said}: {det.reason}"
