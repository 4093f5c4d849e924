"""kv4lint's options, once: the table that argparse, the flake8 plugin, the codemod and the
``[tool.kv4lint]`` keys are built from, and the one check of each value.

Every entry of :data:`OPTIONS` names where it applies:

- ``cli``: ``kv4lint check`` / ``fix`` take ``--NAME``;
- ``toml``: ``[tool.kv4lint]`` in ``pyproject.toml`` and ``kv4lint.toml`` take ``NAME = ...``;
- ``flake8``: flake8 takes ``--kv4-NAME`` (and ``kv4-NAME =`` in its configuration);
- ``codemod``: ``python -m libcst.tool codemod kv4lint.codemod.FixKV4Cache`` takes ``--NAME``.

A value is checked by the same function wherever it comes from (argparse calls it as the
option's ``type``; a configuration file's value and a flake8 option go through
:func:`settings_from_mapping`), so a bad value reads the same everywhere and is always a
usage error (exit 2), never a finding.

At import time this module loads only kv4lint's settings record and the import guard (the flake8
plugin imports it in every flake8 run); the checks that need kv4lint's tables import them when called.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping

from kv4lint.base.record import Frozen, Record
from kv4lint.base.settings import SEVERITIES, Settings
from kv4lint.files.isolation import trusted_imports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

# kv4lint's KV cache fixes may use one of SGLang's non-FP4 dtypes.
FIX_DTYPES = ("fp8_e4m3", "fp8_e5m2", "bf16", "bfloat16", "auto")
ATTENTIONS = ("mha", "mla")
FLAKE8_PREFIX = "kv4-"


class ConfigError(ValueError):
    """A bad configuration file, key or option value (the message names where and which)."""


class UsageError(Exception):
    """A bad option value, path or configuration: exit 2 with a message, no traceback."""


# ---------------------------------------------------------------------------
# Value checks: each takes the raw value (a TOML value or, from a command line or flake8, a
# string) and returns the Settings value, or raises ValueError saying what is wrong with it.


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return repr(v)


def check_str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"expected a non-empty string, got {_show(v)}")
    return v.strip()


def check_list(v: Any) -> list[str]:
    """An array of strings, or (as a command line and flake8 give them) one comma/space-separated string."""
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


def known_codes() -> list[str]:
    from kv4lint.rules.codes import INTERNAL_CODE, RULES

    return sorted({*RULES, INTERNAL_CODE})


def _code(c: str) -> str:
    u = c.strip().upper()
    if u == "ALL":
        return "KV"
    known = known_codes()
    if not re.fullmatch(r"[A-Z]+[0-9]*", u) or not any(k.startswith(u) for k in known):
        from kv4lint.rules.codes import RULES

        raise ValueError(f"unknown code {c!r} (codes: {', '.join(sorted(RULES))}, or a prefix such as KV40)")
    return u


def check_codes(v: Any) -> list[str]:
    return [_code(c) for c in check_list(v)]


def check_select(v: Any) -> list[str]:
    """``select``: at least one code. An empty selection (``--select ""``, ``select = []``) would check nothing
    and exit 0 whatever the launches: a usage error, never a silent pass (issue 34)."""
    codes = check_codes(v)
    if not codes:
        shown = repr(v) if isinstance(v, str) else "an empty array"
        raise ValueError(f"{shown} selects no code, so nothing would be checked: name codes or prefixes (KV401, "
                         "KV40) or ALL")
    return codes


def check_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return v.strip().lower() in ("true", "yes", "on", "1")
    raise ValueError(f"expected true or false, got {_show(v)}")


def check_severity(v: Any) -> str:
    """The least severity reported: "warning" (every finding) or "error" (errors only)."""
    if not isinstance(v, str) or v.strip() not in SEVERITIES:
        raise ValueError(f"expected {' or '.join(repr(x) for x in SEVERITIES)}, got {_show(v)}")
    return v.strip()


def check_version(v: Any) -> str:
    from kv4lint.sglang.releases import parse as parse_version

    s = check_str(v)
    parse_version(s)  # ValueError: not a version
    return s


def version_note(text: str) -> str | None:
    """What kv4lint tells about an SGLang version newer than every release it knows, else None: such a
    release is judged by the newest rule pack (:mod:`kv4lint.sglang.releases`), and the user is told which."""
    from kv4lint.sglang.releases import NEWEST_LABEL, beyond_newest

    if beyond_newest(text):
        return (f"SGLang {text} is newer than the releases kv4lint knows (up to {NEWEST_LABEL}); "
                f"its launches are judged by the {NEWEST_LABEL} rule pack")
    return None


def check_output_file(v: Any) -> str:
    """A file the report can be written to: its folder exists (checked before the run, not after it)."""
    s = check_str(v)
    folder = os.path.dirname(s) or "."
    if not os.path.isdir(folder):
        why = f"{folder!r} is not a folder" if os.path.exists(folder) else f"no folder {folder!r}"
        raise ValueError(f"cannot write {s!r}: {why}")
    if os.path.isdir(s):
        raise ValueError(f"cannot write {s!r}: it is a folder")
    return s


def check_platform(v: Any) -> str:
    from kv4lint.target import normalise_platform

    s = check_str(v)
    if s.lower() == "auto":
        return "auto"
    return normalise_platform(s)


def check_gpu(v: Any) -> str:
    from kv4lint.sglang.gpus import normalise_gpu

    s = check_str(v)
    normalise_gpu(s)  # ValueError: unknown GPU
    return s


def check_attention(v: Any) -> str:
    s = check_str(v).lower()
    if s not in ATTENTIONS:
        raise ValueError(f"expected \"mha\" or \"mla\", got {v!r}")
    return s


def check_fix_dtype(v: Any) -> str:
    s = check_str(v)
    if s not in FIX_DTYPES:
        raise ValueError(f"{v!r} is not a KV cache dtype fixes can use (one of {', '.join(FIX_DTYPES)}; "
                         "FP4 dtypes are what the fixes replace)")
    return s


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "ki": 1024, "kib": 1024, "mi": 1024**2, "mib": 1024**2, "gi": 1024**3, "gib": 1024**3}


def check_size(v: Any) -> int:
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


def check_url(v: Any) -> str:
    s = check_str(v)
    if not re.match(r"^[a-z][a-z0-9+.-]*://", s):
        raise ValueError(f"expected a URL such as https://example.org/rules/, got {v!r}")
    return s


def _table(v: Any, what: str) -> dict:
    if not isinstance(v, dict):
        raise ValueError(f"expected a table of {what}, got {_show(v)}")
    return v


def _pair(text: str, sep: str) -> tuple[str, str]:
    k, s, val = text.rpartition(sep)
    if not s or not k:
        raise ValueError(f"expected GLOB{sep}VALUE, got {text!r}")
    return k, val


def check_model_overrides(v: Any) -> dict[str, str]:
    if isinstance(v, str):  # flake8: "glob=mla, glob2=mha"
        v = dict(_pair(p, "=") for p in re.split(r"[,\s]+", v) if p)
    out = {}
    for k, att in _table(v, "model path globs to \"mha\"/\"mla\"").items():
        try:
            out[k] = check_attention(att)
        except ValueError as e:
            raise ValueError(f"{k!r}: {e}") from None
    return out


def check_fork_options(v: Any) -> list[str]:
    """Globs of a fork's own options (``--kt-*``) or of its values of a stock option (``--attention-backend=kt_*``);
    the leading ``--`` may be left out (``kt-*``: a command line takes it as a value then)."""
    out = []
    for g in check_list(v):
        g = g if g.startswith("-") else "--" + g
        if g.lstrip("-").startswith("=") or g.strip("-") == "":
            raise ValueError(f"expected option globs such as \"--kt-*\" or \"--attention-backend=kt_*\", got {g!r}")
        out.append(g)
    return out


def check_per_file_ignores(v: Any) -> dict[str, list[str]]:
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
            out[k] = check_codes(codes)
        except ValueError as e:
            raise ValueError(f"{k!r}: {e}") from None
    return out


# ---------------------------------------------------------------------------
# The table

CLI, TOML, FLAKE8, CODEMOD = "cli", "toml", "flake8", "codemod"
EVERYWHERE = frozenset({CLI, TOML, FLAKE8, CODEMOD})
FILES_AND_CLI = frozenset({CLI, TOML})


class Option(Frozen):
    """One option of the table.

    ``name``: kebab-case: --NAME, NAME = in TOML, --kv4-NAME in flake8; ``attr``: the Settings field it sets
    (None: the command's own option); ``check``: the value's check (None: a flag or a plain string);
    ``where``: CLI, TOML, FLAKE8, CODEMOD; ``group``: --help group: target, selection, output, fixing;
    ``flag``: takes no value (store_true); ``extends``: on the command line, adds to the configuration's list
    instead of replacing it; ``short``: -o, -j; ``dest``: argparse's name, when not the option's;
    ``codemod_flag``: the codemod's flag, when libcst's own options could clash; ``commands``: the kv4lint
    commands that take it (default: check and fix, and server for a target or selection option); ``count``:
    how many times it was given (-q, -qq).
    """

    __slots__ = ("name", "help", "attr", "check", "where", "group", "metavar", "flag", "extends", "choices",
                 "default", "short", "dest", "codemod_flag", "commands", "count")

    def __init__(self, name: str, help: str, attr: str | None = None, check: Callable[[Any], Any] | None = None,
                 where: frozenset = EVERYWHERE, group: str = "target", metavar: str | None = None,
                 flag: bool = False, extends: bool = False, choices: tuple[str, ...] | None = None,
                 default: Any = None, short: str | None = None, dest: str | None = None,
                 codemod_flag: str | None = None, commands: frozenset | None = None,
                 count: bool = False):
        if commands is None:  # `kv4lint server` takes what says how to judge a file, not how to report or fix
            commands = frozenset({"check", "fix", "server"} if group in ("target", "selection") else {"check", "fix"})
        self._set("name", name)
        self._set("help", help)
        self._set("attr", attr)
        self._set("check", check)
        self._set("where", where)
        self._set("group", group)
        self._set("metavar", metavar)
        self._set("flag", flag)
        self._set("extends", extends)
        self._set("choices", choices)
        self._set("default", default)
        self._set("short", short)
        self._set("dest", dest)
        self._set("codemod_flag", codemod_flag)
        self._set("commands", commands)
        self._set("count", count)

    @property
    def key(self) -> str:
        """The argparse / flake8 attribute name."""
        return self.dest or self.name.replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    # What the launches are judged against
    Option("sglang-version", "SGLang release to check against (default: the repository's pin, else the newest "
           "rule pack)", "sglang_version", check_version, metavar="V"),
    Option("platform", "cuda, rocm, xpu, cpu, npu, musa, mps, hpu, or auto (detect this machine through torch)",
           "platform", check_platform, metavar="P"),
    Option("gpu", "GPU arch or name: sm90, sm100, sm120, h100, b200, rtx5090, gb10 ...", "gpu", check_gpu,
           metavar="G"),
    Option("model-attention", "the served model's attention, mha or mla (default: inferred from the model path)",
           "model_attention", check_attention, metavar="mha|mla"),
    Option("model-overrides", "model path glob -> \"mha\"/\"mla\"", "model_overrides", check_model_overrides,
           where=frozenset({TOML, FLAKE8})),
    Option("fork-options", "globs of the options an SGLang fork adds (--kt-*) or of its values of an SGLang option "
           "(--attention-backend=kt_*): neither refused nor evidence of an unknown build", "fork_options",
           check_fork_options, metavar="GLOBS"),
    Option("strict", "also report launches that fail for some values of a backend kv4lint cannot resolve", "strict",
           check_bool, flag=True),
    Option("fix-dtype", "the KV cache dtype fixes write (default: fp8_e4m3)", "fix_dtype", check_fix_dtype,
           metavar="DTYPE"),
    # Selection
    Option("select", "comma-separated codes or prefixes to report (default: all)", "select", check_select,
           where=FILES_AND_CLI, group="selection", metavar="CODES"),
    Option("extend-select", "codes added to select", "extend_select", check_codes, where=FILES_AND_CLI,
           group="selection", metavar="CODES", extends=True),
    Option("ignore", "codes or prefixes not to report", "ignore", check_codes, where=FILES_AND_CLI,
           group="selection", metavar="CODES", extends=True),
    Option("severity", "the least severity reported: warning (default: every finding) or error (errors only; "
           "warnings are not shown, counted, fixed or in the exit status)", "severity", check_severity,
           where=frozenset({CLI, TOML, FLAKE8}), group="selection", choices=SEVERITIES),
    Option("per-file-ignores", "path glob -> codes not to report there", "per_file_ignores",
           check_per_file_ignores, where=frozenset({TOML})),
    Option("exclude", "comma-separated globs of paths to skip", "exclude", check_list, where=FILES_AND_CLI,
           group="selection", metavar="GLOBS"),
    Option("extend-exclude", "path globs to skip, added to exclude", "extend_exclude", check_list,
           where=FILES_AND_CLI, group="selection", metavar="GLOBS", extends=True),
    Option("force-exclude", "apply excludes and .gitignore to paths named on the command line too (for "
           "pre-commit)", where=frozenset({CLI}), group="selection", flag=True),
    Option("max-file-size", "files larger than this are skipped (bytes, or \"10MB\")", "max_file_bytes",
           check_size, where=frozenset({TOML})),
    Option("rule-docs-url", "where the rule pages are, for SARIF's helpUri (a URL ending in /)",
           "rule_docs_url", check_url, where=FILES_AND_CLI, group="output", metavar="URL"),
    Option("config", "read settings from FILE (pyproject.toml or kv4lint.toml) for every file instead of the "
           "nearest one above each", where=frozenset({CLI}), group="selection", metavar="FILE",
           dest="config_file"),
    Option("isolated", "ignore kv4lint configuration files", where=frozenset({CLI, CODEMOD}), group="selection",
           flag=True, codemod_flag="--kv4lint-isolated"),
    Option("stdin-filename", "read the file from standard input (PATH `-`) and judge it as FILE: its language, "
           "configuration and target come from that name", where=frozenset({CLI}), group="selection",
           metavar="FILE", commands=frozenset({"check", "fix"})),
    # Output
    Option("format", "output format (full: each finding with its source line, the fix and SGLang's side)",
           where=frozenset({CLI}), group="output", default="text",
           choices=("text", "full", "concise", "json", "sarif", "github", "gitlab")),  # = kv4lint.reporters.FORMATS
    Option("output-file", "write the report to FILE", check=check_output_file, where=frozenset({CLI}),
           group="output", metavar="FILE", short="-o"),
    Option("statistics", "print how many findings of each code, not the findings", where=frozenset({CLI}),
           group="output", flag=True),
    Option("exit-zero", "exit 0 even when there are findings", where=frozenset({CLI}), group="output", flag=True),
    Option("show-target", "print the target each launch was judged against and the configuration file that "
           "set it", where=frozenset({CLI}), group="output", flag=True),
    Option("color", "color the text output", where=frozenset({CLI}), group="output", default="auto",
           choices=("auto", "always", "never")),
    Option("jobs", "processes (default: all cores)", where=frozenset({CLI}), group="output", metavar="N",
           default=0, check=int, short="-j"),
    Option("verbose", "print the traceback of an internal error", where=frozenset({CLI}), group="output",
           flag=True),
    Option("no-cache", "parse every file afresh (also: KV4LINT_NO_CACHE=1)", where=frozenset({CLI}),
           group="output", flag=True),
    Option("cache-dir", "where parse results are cached (default: $KV4LINT_CACHE_DIR, else "
           "~/.cache/kv4lint/scan)", where=frozenset({CLI}), group="output", metavar="DIR"),
    Option("quiet", "-q: print findings only; -qq: print nothing (the exit status tells)", where=frozenset({CLI}),
           group="output", short="-q", count=True),
    # Fixing
    Option("fix", "apply safe fixes (same as `kv4lint fix`)", where=frozenset({CLI}), group="fixing", flag=True,
           commands=frozenset({"check"})),
    Option("unsafe-fixes", "also apply fixes that edit shared values", where=frozenset({CLI}), group="fixing",
           flag=True),
    Option("diff", "print a unified diff of the fixes; write nothing", where=frozenset({CLI}), group="fixing",
           flag=True),
    Option("show-fixes", "list the fixes applied", where=frozenset({CLI}), group="fixing", flag=True),
    Option("exit-non-zero-on-fix", "exit 1 when a file was changed", where=frozenset({CLI}), group="fixing",
           flag=True),
    Option("add-suppressions", "add a suppression comment for every finding (adopt kv4lint on an existing "
           "repository)", where=frozenset({CLI}), group="fixing", flag=True, commands=frozenset({"check"})),
)

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
# The keys of [tool.kv4lint] (pyproject.toml, kv4lint.toml).
TOML_KEYS: dict[str, Option] = {o.name: o for o in OPTIONS if TOML in o.where}
FLAKE8_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if FLAKE8 in o.where)
CODEMOD_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if CODEMOD in o.where)


def argparse_type(opt: Option) -> Callable[[str], Any]:
    """``opt``'s check as an argparse ``type``: a bad value is argparse's usage error (exit 2)."""
    def convert(text: str) -> Any:
        try:
            with trusted_imports():  # the codemod's parser runs in the scanned repository (libcst.tool)
                return opt.check(text)  # type: ignore[misc]
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = opt.name  # argparse names the type in "invalid <name> value"
    return convert


def add_to_parser(parser: Any, where: str, *, prefix: str = "", groups: dict[str, Any] | None = None,
                  command: str | None = None) -> None:
    """Add the table's options for ``where`` (``cli``/``codemod``) to an argparse parser.

    ``groups`` maps a group name to an argument group (default: the parser itself);
    ``command``: only the options that kv4lint command takes.
    """
    for opt in OPTIONS:
        if where not in opt.where or (command is not None and command not in opt.commands):
            continue
        target = (groups or {}).get(opt.group, parser)
        flags = [opt.codemod_flag if where == CODEMOD and opt.codemod_flag else f"--{prefix}{opt.name}"]
        flags += [opt.short] if opt.short else []
        kw: dict[str, Any] = {"dest": opt.key, "help": opt.help}
        if opt.count:
            kw.update(action="count", default=0)
        elif opt.flag:
            kw.update(action="store_true", default=None)
        else:
            kw.update(default=opt.default, metavar=opt.metavar)
            if opt.choices:  # listed in --help; a checked option's check runs first, so a bad value reads the
                kw["choices"] = opt.choices  # same as from a configuration file or flake8
            if opt.check is int:
                kw["type"] = int
            elif opt.check is not None:
                kw["type"] = argparse_type(opt)
        target.add_argument(*flags, **kw)


def settings_from_mapping(d: Mapping[str, Any], source: str, *, base: Any = None, where: str | None = None,
                          keys: Mapping[str, Option] | None = None, toml: bool = False):
    """Settings from a mapping of kebab-case keys (a ``[tool.kv4lint]`` table, flake8 options).

    ``source`` is recorded in ``Settings.sources`` for every key set (e.g.
    ``"pyproject.toml [tool.kv4lint]"``); errors read ``"<where or source>: <key>: <problem>"``.
    Values may be TOML types or, as flake8 hands them over, strings (lists comma-separated,
    tables as ``glob:CODES`` / ``glob=mla``).  ``None`` values are skipped (an unset option).
    ``toml``: the values come from a TOML file, whose booleans are TOML booleans (``strict = "yes"``
    is an error there, though flake8's ``kv4-strict = yes`` is a string by necessity).
    """
    keys = TOML_KEYS if keys is None else keys
    s = base if base is not None else Settings()
    where = where or f"{source}:"
    if not isinstance(d, Mapping):
        raise ConfigError(f"{where} expected a table of settings")
    for key, raw in d.items():
        if raw is None:
            continue
        spec = keys.get(key)
        if spec is None:
            import difflib

            hint = difflib.get_close_matches(str(key).replace("_", "-"), keys, n=1)
            msg = f"{where} {key}: unknown key"
            msg += f" (did you mean {hint[0]!r}?)" if hint else f" (known keys: {', '.join(keys)})"
            raise ConfigError(msg)
        if toml and spec.flag and not isinstance(raw, bool):
            raise ConfigError(f"{where} {key}: expected a TOML boolean, true or false (unquoted), got {_show(raw)}")
        try:
            value = spec.check(raw) if spec.check is not None else raw
        except ValueError as e:
            raise ConfigError(f"{where} {key}: {e}") from None
        setattr(s, spec.attr, value)
        s.sources[spec.attr] = source
    return s


class Overrides(Record):
    """Values given on a command line (already checked), applied over each file's configuration:
    single values and ``select``/``exclude`` replace, ``extend-select``/``ignore``/``extend-exclude``
    add to the configuration's lists.

    ``values``: option name -> checked value; ``prefix``: how messages name an option: --gpu, --kv4-gpu.
    """

    __slots__ = ("values", "prefix")

    def __init__(self, values: dict[str, Any] | None = None, prefix: str = "--"):
        self.values = {} if values is None else values
        self.prefix = prefix

    @classmethod
    def from_namespace(cls, ns: Any, where: str = CLI, prefix: str = "--") -> "Overrides":
        """The table's options for ``where`` that ``ns`` sets; a string value is checked here (argparse
        checked it already: the checks take their own results back unchanged)."""
        vals = {}
        for opt in OPTIONS:
            if opt.attr is None or where not in opt.where:
                continue
            v = getattr(ns, opt.key, None)
            if v is None or (opt.flag and not v):
                continue
            if isinstance(v, str) and opt.check is not None:
                try:
                    v = opt.check(v)
                except ValueError as e:
                    raise ConfigError(f"{prefix}{opt.name} {v}: {e}") from None
            vals[opt.name] = v
        return cls(vals, prefix)

    def label(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def apply(self, s: Any) -> Any:
        for name, v in self.values.items():
            opt = BY_NAME[name]
            attr = opt.attr
            if opt.extends:
                have = list(getattr(s, attr))
                setattr(s, attr, have + [c for c in v if c not in have])
                s.sources[attr] = f"{s.sources[attr]} and {self.label(name)}" if attr in s.sources \
                    else self.label(name)
            else:
                setattr(s, attr, list(v) if isinstance(v, list) else v)
                s.sources[attr] = self.label(name)
        return s
