"""kv4lint as a flake8 plugin (codes ``KV4xx``).

Registered as ``KV4 = kv4lint.flake8_plugin:Plugin`` in the ``flake8.extension``
group.  The same frontend and rules as ``kv4lint check``; each finding is
reported at the line and column of the offending value, so ``# noqa: KV401``
on that line works as for any flake8 code.

Options (command line, or ``[flake8]`` in setup.cfg / tox.ini / .flake8)::

    --kv4-sglang-version 0.5.23   the SGLang release the launches run on
    --kv4-platform rocm           cuda, rocm, xpu, cpu, npu, ... (default: hints, then cuda)
    --kv4-gpu b200                a GPU name or arch (sm90, sm100, sm120 ...)
    --kv4-model-attention mla     mha or mla, when the model cannot be told from its path
    --kv4-strict                  report what fails on some possible target too
    --kv4-fix-dtype fp8_e4m3      the dtype fixes suggest

Cost: flake8 builds the AST for its own checks; this plugin ignores it (it asks
for ``tree`` only because flake8 needs one of tree/logical_line/physical_line
to run a plugin once per file).  The file's text goes through kv4lint's
substring pre-filter first; libcst is imported only for files that pass it.
A file with a syntax error never reaches the plugin: flake8 reports E999.
flake8 runs in the repository it checks, and ``python -m flake8`` puts that
directory first on ``sys.path``: the plugin does its work with it (and any
entry inside it) removed, so a ``libcst.py`` of the repository is never
imported (:mod:`kv4lint.isolation`).
Any internal failure becomes one ``KV400`` finding on line 1; nothing is raised
into flake8.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

from kv4lint.isolation import trusted_imports

try:
    with trusted_imports():
        from importlib.metadata import version as _dist_version

        __version__ = _dist_version("kv4lint")
except Exception:  # pragma: no cover - not installed as a distribution
    __version__ = "0"

OPTIONS = (
    # (flag, Settings field, help)
    ("--kv4-sglang-version", "sglang_version", "SGLang release the launches run on (e.g. 0.5.23)"),
    ("--kv4-platform", "platform", "platform the launches run on: cuda, rocm, xpu, cpu, npu, ... or auto"),
    ("--kv4-gpu", "gpu", "GPU the launches run on: a name (h100, b200, rtx5090) or an arch (sm90, sm100)"),
    ("--kv4-model-attention", "model_attention", "attention of the served model when kv4lint cannot tell: "
                                                 "mha or mla"),
    ("--kv4-fix-dtype", "fix_dtype", "KV cache dtype suggested by fixes (default fp8_e4m3)"),
)


class Plugin:
    name = "kv4lint"
    version = __version__

    # Settings from flake8's options (class-wide, as flake8 parses options once).
    _options: dict[str, Any] = {}
    _option_error: str | None = None

    def __init__(self, tree: Any = None, lines: list[str] | None = None, filename: str = "stdin") -> None:
        self.tree = tree
        self.lines = lines or []
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        for flag, _field, help_ in OPTIONS:
            option_manager.add_option(flag, default=None, parse_from_config=True, help=help_)
        option_manager.add_option("--kv4-strict", default=False, action="store_true", parse_from_config=True,
                                  help="also report launches that fail on some possible target (unknown GPU/model)")

    @classmethod
    def parse_options(cls, options: Any) -> None:
        opts: dict[str, Any] = {}
        for flag, field, _help in OPTIONS:
            value = getattr(options, flag[2:].replace("-", "_"), None)
            if value not in (None, ""):
                opts[field] = str(value).strip()
        if "model_attention" in opts:
            opts["model_attention"] = opts["model_attention"].lower()
        if getattr(options, "kv4_strict", False):
            opts["strict"] = True
        cls._options = opts
        with trusted_imports():
            cls._option_error = _check_options(opts)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            with trusted_imports(self._roots()):
                results = self._run()
        except Exception as e:  # noqa: BLE001 - never raise into flake8
            from kv4lint.internal_error import describe

            yield 1, 0, f"KV400 kv4lint {describe(e, hint=False)}", type(self)
            return
        yield from results

    def _roots(self) -> list[str]:
        return [os.path.dirname(os.path.abspath(self.filename))] if self.filename not in ("stdin", "-") else []

    def _run(self) -> list[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        from kv4lint.prefilter import might_launch

        if not might_launch(text, "python"):  # the test lint_text applies to Python
            return []
        from kv4lint.prefilter import python_may_launch

        if self.tree is not None and not python_may_launch(text, self.tree):
            return []  # flake8's own syntax tree: no launch call with a KV option
        if self._option_error:
            return [(1, 0, f"KV400 kv4lint: {self._option_error}", type(self))]
        return list(self._check(text))

    def _check(self, text: str) -> Iterator[tuple[int, int, str, type]]:
        from kv4lint.runner import lint_text
        from kv4lint.settings import Settings

        settings = Settings(**self._options)
        settings.sources.update({f: flag for flag, f, _h in OPTIONS if f in self._options})
        report = lint_text(self.filename, text, settings, language="python")
        problems = [e for e in report.errors if not e.message.startswith("syntax error")]
        if problems:
            # kv4lint could not read all of this file (flake8 parsed it): say so once.
            e = problems[0]
            yield e.line or 1, 0, f"KV400 kv4lint could not scan this file fully: {_short(e.message)}", type(self)
        for f in report.findings:
            line = f.start.line if f.start else 1
            col = (f.start.column - 1) if f.start else 0
            yield line, col, f"{f.code} {f.message}", type(self)


def _check_options(opts: dict[str, Any]) -> str | None:
    """A message for an option value kv4lint cannot use, else None (checked once, not per file)."""
    try:
        from kv4lint.target import normalise_gpu, normalise_platform, parse_version

        if opts.get("platform") and opts["platform"] != "auto":
            normalise_platform(opts["platform"])
        if opts.get("gpu"):
            normalise_gpu(opts["gpu"])
        if opts.get("sglang_version"):
            parse_version(opts["sglang_version"])
        if opts.get("model_attention") and opts["model_attention"].lower() not in ("mha", "mla"):
            raise ValueError(f"unknown model attention {opts['model_attention']!r} (mha or mla)")
    except ValueError as e:
        return f"bad option value: {e}"
    except Exception as e:  # noqa: BLE001
        return f"cannot read the kv4 options: {type(e).__name__}: {e}"
    return None


def _short(s: str, limit: int = 200) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."
