"""kv4lint as a flake8 plugin (codes ``KV4xx``).

Registered as ``KV4 = kv4lint.flake8_plugin:Plugin`` in the ``flake8.extension``
group.  The same frontend and rules as ``kv4lint check``; each finding is
reported at the line and column of the offending value, so ``# noqa: KV401``
on that line works as for any flake8 code.

Configuration: each file is judged with the nearest ``kv4lint.toml`` /
``pyproject.toml [tool.kv4lint]`` above it, as ``kv4lint check`` judges it, and
flake8's options override it (command line, or ``[flake8]`` in setup.cfg /
tox.ini / .flake8), built from kv4lint's one option table
(:mod:`kv4lint.settings.options`)::

    --kv4-sglang-version 0.5.23   the SGLang release the launches run on
    --kv4-platform rocm           cuda, rocm, xpu, cpu, npu, ... (default: hints, then cuda)
    --kv4-gpu b200                a GPU name or arch (sm90, sm100, sm120 ...)
    --kv4-model-attention mla     mha or mla, when the model cannot be told from its path
    --kv4-model-overrides G=mla   model path glob -> mha/mla
    --kv4-strict                  report what fails for some values of an unresolved backend too
    --kv4-fix-dtype fp8_e4m3      the dtype fixes suggest
    --kv4-severity error          report errors only, not warnings (default: warning, every finding)

A bad option value stops flake8 with a message naming the option and the value
and exit status 2, whatever ``select`` says (never a finding a selection could
hide); so does a bad ``[tool.kv4lint]`` above the current directory, and one
below it (read when a file under it is checked) fails the run (flake8 reports the
plugin's failure and exits 1).

Cost: a file without a launch costs the substring pre-filter alone (once it is
loaded, no isolation and no import per file).  For a file that passes it, flake8's
own syntax tree decides whether a launch call sets a KV option (the Python
frontend then reuses that answer instead of parsing the file again), and only
then is libcst imported and the file parsed, once; the parsers load once per
process, and the isolation below resolves ``sys.path`` once per process.
A file with a syntax error never reaches the plugin: flake8 reports E999.
flake8 runs in the repository it checks, and ``python -m flake8`` puts that
directory first on ``sys.path``: the plugin does its work with it (and any
entry inside it) removed, so a ``libcst.py`` of the repository is never
imported (:mod:`kv4lint.files.isolation`).
Any other internal failure becomes one ``KV400`` finding on line 1.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Iterator

from kv4lint.base.version import __version__  # a leaf: not the distribution's metadata, a search of sys.path
from kv4lint.files.isolation import trusted_imports


# What the plugin loaded under trusted_imports(), for the files after the first: the pre-filter, which a file
# without a launch then costs alone (no isolation, no import).
_loaded: dict[str, Any] = {}


class Plugin:
    name = "kv4lint"
    version = __version__

    # flake8 parses options once per process: the settings every file starts from (class-wide).
    _resolver: Any = None

    def __init__(self, tree: Any = None, lines: list[str] | None = None, filename: str = "stdin") -> None:
        self.tree = tree
        self.lines = lines or []
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        with trusted_imports():
            from kv4lint.settings.options import FLAKE8_OPTIONS, FLAKE8_PREFIX

        for opt in FLAKE8_OPTIONS:
            flag = f"--{FLAKE8_PREFIX}{opt.name}"
            if opt.flag:  # a value, not store_true: kv4lint checks "kv4-strict = maybe", not configparser
                option_manager.add_option(flag, default=None, nargs="?", const="true", metavar="BOOL",
                                          parse_from_config=True, help=opt.help)
            else:
                option_manager.add_option(flag, default=None, parse_from_config=True, help=opt.help)

    @classmethod
    def parse_options(cls, options: Any) -> None:
        """Check every kv4 option once; a bad one stops flake8 (exit 2), whatever ``select`` says."""
        with trusted_imports():
            from kv4lint.settings.config import ConfigResolver
            from kv4lint.settings.options import FLAKE8, FLAKE8_OPTIONS, FLAKE8_PREFIX, ConfigError, Overrides

        ns = types.SimpleNamespace(**{opt.key: _option_value(options, opt) for opt in FLAKE8_OPTIONS})
        try:
            with trusted_imports():
                overrides = Overrides.from_namespace(ns, FLAKE8, prefix=f"--{FLAKE8_PREFIX}")
                cls._resolver = ConfigResolver(overrides, isolated=bool(getattr(options, "isolated", False)))
                cls._resolver.check_config(os.getcwd())  # the configuration here, checked now
        except ConfigError as e:
            print(f"flake8: error: kv4lint: {e}", file=sys.stderr)
            raise SystemExit(2) from None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        screen = _loaded.get("might_launch")
        if screen is not None and not screen(text, "python"):
            return  # no launch: the pre-filter's cost, nothing else (it imports nothing once loaded)
        with trusted_imports():
            from kv4lint.settings.options import ConfigError

        try:
            with trusted_imports(self._roots()):
                results = self._run(text)
        except ConfigError:
            raise  # a bad kv4lint configuration file: flake8 fails, whatever select says
        except Exception as e:  # noqa: BLE001 - never raise into flake8
            from kv4lint.base.internal_error import describe

            yield 1, 0, f"KV400 kv4lint {describe(e, hint=False)}", type(self)
            return
        yield from results

    def _roots(self) -> list[str]:
        return [os.path.dirname(os.path.abspath(self.filename))] if self.filename not in ("stdin", "-") else []

    def _run(self, text: str) -> list[tuple[int, int, str, type]]:
        from kv4lint.files.prefilter import might_launch, python_may_launch

        _loaded["might_launch"] = might_launch
        if not might_launch(text, "python"):  # the test lint_text applies to Python
            return []
        # flake8's own syntax tree: no launch call with a KV option, or (remembered with the text) the
        # Python frontend's same test, without parsing the file again.
        if self.tree is not None and not python_may_launch(text, self.tree):
            return []
        return list(self._check(text, self._settings()))

    def _settings(self):
        from kv4lint.settings.config import ConfigResolver

        cls = type(self)
        if cls._resolver is None:  # run without flake8's option parsing (tests, the API)
            cls._resolver = ConfigResolver()
        name = self.filename if self.filename not in ("stdin", "-") else os.path.join(os.getcwd(), "stdin.py")
        return cls._resolver.settings_for(name)

    def _check(self, text: str, settings) -> Iterator[tuple[int, int, str, type]]:
        from kv4lint.pipeline.runner import lint_text

        report = lint_text(self.filename, text, settings, language="python", fingerprints=False)  # it shows none
        problems = [e for e in report.errors if not e.message.startswith("syntax error")]
        if problems:
            # kv4lint could not read all of this file (flake8 parsed it): say so once.
            e = problems[0]
            yield e.line or 1, 0, f"KV400 kv4lint could not scan this file fully: {_short(e.message)}", type(self)
        for f in report.findings:
            line = f.start.line if f.start else 1
            col = (f.start.column - 1) if f.start else 0
            yield line, col, f"{f.code} {f.message}", type(self)


def _option_value(options: Any, opt) -> Any:
    from kv4lint.settings.options import FLAKE8_PREFIX

    value = getattr(options, (FLAKE8_PREFIX + opt.name).replace("-", "_"), None)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return str(value).strip()


def _short(s: str, limit: int = 200) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."
