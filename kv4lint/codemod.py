"""A libcst codemod command that applies kv4lint's safe fixes to Python files.

For people who already drive refactorings through ``libcst.tool``::

    python -m libcst.tool codemod -x kv4lint.codemod.FixKV4Cache --no-format PATH...

(``-x`` makes libcst import ``kv4lint.codemod`` as written; ``--no-format``
keeps libcst from running a formatter over the whole file; see
``docs/codemod.md`` for the variant with a ``.libcst.codemod.yaml``.)

The command does exactly what ``kv4lint fix`` does to a Python file: it lints
the module's code with kv4lint's pipeline, applies the safe fixes as text
edits through the same engine (:func:`kv4lint.pipeline.fix_engine.fix_text`: whole fixes,
re-lint until stable, fixes that break parsing rolled back), and returns the
re-parsed module; a file with nothing to fix is skipped.  Only the characters
of the fixed values change.
"""

from __future__ import annotations

import argparse
import os

import libcst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from kv4lint.base.settings import Settings
from kv4lint.files.isolation import trusted_imports


class FixKV4Cache(CodemodCommand):
    DESCRIPTION = ("Rewrite FP4 (KV4) KV caches that SGLang would refuse to an fp8 KV cache "
                   "(kv4lint's safe fixes).")

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        with trusted_imports():  # libcst.tool runs in the repository: kv4lint's imports must not come from it
            from kv4lint.settings.options import CODEMOD, add_to_parser

        g = arg_parser.add_argument_group("kv4lint")
        add_to_parser(g, CODEMOD)

    def __init__(self, context: CodemodContext, settings: Settings | None = None, **options) -> None:
        """``options``: the values of the codemod's options (:data:`kv4lint.settings.options.CODEMOD_OPTIONS`,
        by their argparse names: ``sglang_version="0.5.21"``, ``isolated=True`` ...)."""
        with trusted_imports():
            from kv4lint.settings.options import CODEMOD_OPTIONS

        super().__init__(context)
        known = {o.key for o in CODEMOD_OPTIONS}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"FixKV4Cache: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        self._options = argparse.Namespace(**{k: options.get(k) for k in known})
        self._settings = settings
        self._resolver = None

    def _settings_for(self, path: str | None) -> Settings:
        if self._settings is not None:
            return self._settings
        from kv4lint.settings.config import ConfigResolver
        from kv4lint.settings.options import CODEMOD, ConfigError, Overrides

        try:
            if self._resolver is None:
                self._resolver = ConfigResolver(Overrides.from_namespace(self._options, CODEMOD),
                                                isolated=bool(self._options.isolated))
            return self._resolver.settings_for(path or os.getcwd())
        except ConfigError as e:
            raise SkipFile(f"kv4lint configuration: {e}") from None

    def transform_module_impl(self, tree: libcst.Module) -> libcst.Module:
        # libcst.tool runs in the repository (``python -m`` puts it first on sys.path): kv4lint's own
        # imports (the shell parser, packaging, ...) must not come from there (kv4lint.files.isolation).
        path = self.context.filename
        with trusted_imports([os.path.dirname(os.path.abspath(path))] if path else []):
            return self._transform(tree, path)

    def _transform(self, tree: libcst.Module, path: str | None) -> libcst.Module:
        from kv4lint.pipeline.fix_engine import fix_text

        code = tree.code
        tf = fix_text(path or "<stdin>.py", code, self._settings_for(path), "python", unsafe=False)
        for e in tf.errors:
            self.warn(f"line {e.line}: {e.message}" if e.line else e.message)
        if not tf.changed:
            raise SkipFile("no fixable KV4 finding")
        for f in tf.fixed:
            if f.start is not None:
                self.context.scratch.setdefault("kv4lint_fixed", []).append(
                    (f.start.line, f.start.column, f.code, f.fix.description if f.fix else ""))
        try:
            return libcst.parse_module(
                tf.new_text,
                config=libcst.PartialParserConfig(encoding=tree.encoding, default_newline=tree.default_newline,
                                                  default_indent=tree.default_indent),
            )
        except libcst.ParserSyntaxError as e:  # the engine re-parses already; never hand libcst a broken file
            raise SkipFile(f"the fixed code would not parse ({e.message}); not changed") from None
