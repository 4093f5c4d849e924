"""The libcst codemod command kv4lint.codemod.FixKV4Cache (libcst's own CodemodTest harness)."""

from __future__ import annotations

import pytest
from libcst.codemod import CodemodContext, CodemodTest

import fakefront
from kv4lint.codemod import FixKV4Cache
from kv4lint.settings import Settings

LAUNCH = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture(autouse=True)
def _fake_python_scanner(request, monkeypatch):
    """The engine tests here run over the stand-in scanner (also for Python files)."""
    if "real_frontend" not in request.keywords:
        fakefront.install(monkeypatch, languages=("python", "shell"))
        monkeypatch.setattr(fakefront, "SHARED", set())


class TestFixKV4CacheEngine(CodemodTest):
    TRANSFORM = FixKV4Cache

    def test_fixes_the_value_only(self):
        before = f"""
            import os

            os.system("{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 30000")  # keep me
        """
        after = f"""
            import os

            os.system("{LAUNCH} --kv-cache-dtype fp8_e4m3 --port 30000")  # keep me
        """
        self.assertCodemod(before, after, settings=Settings())

    def test_fix_dtype_argument(self):
        before = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
        after = f'cmd = "{LAUNCH} --kv-cache-dtype fp8_e5m2 --port 1"\n'
        self.assertCodemod(before, after, fix_dtype="fp8_e5m2", isolated=True)

    def test_nothing_to_fix_is_skipped(self):
        code = f'cmd = "{LAUNCH} --kv-cache-dtype fp8_e4m3 --port 1"\n'
        self.assertCodemod(code, code, settings=Settings(), expected_skip=True)

    def test_no_launch_is_skipped(self):
        self.assertCodemod("x = 1\n", "x = 1\n", settings=Settings(), expected_skip=True)

    def test_unsafe_fix_not_applied(self):
        fakefront.SHARED.add("fp4_e2m1")
        code = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
        self.assertCodemod(code, code, settings=Settings(), expected_skip=True)

    def test_fix_that_breaks_parsing_is_rolled_back_with_a_warning(self):
        fakefront.BREAK_ON = "fp8_e4m3"
        try:
            code = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
            self.assertCodemod(code, code, settings=Settings(), expected_skip=True)
        finally:
            fakefront.BREAK_ON = None

    def test_records_fixes_in_context_scratch(self):
        import libcst

        ctx = CodemodContext(filename="serve.py")
        mod = libcst.parse_module(f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n')
        out = FixKV4Cache(ctx, settings=Settings()).transform_module(mod)
        assert "fp8_e4m3" in out.code
        col = len('cmd = "') + len(LAUNCH) + len(" --kv-cache-dtype ") + 1
        assert [(line, c, code) for line, c, code, _ in ctx.scratch["kv4lint_fixed"]] == [(1, col, "KV406")]

    def test_crlf_and_bom_survive(self):
        import libcst

        src = ("\ufeff# -*- coding: utf-8 -*-\r\n" f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\r\n').encode()
        mod = libcst.parse_module(src)
        out = FixKV4Cache(CodemodContext(filename="serve.py"), settings=Settings()).transform_module(mod)
        assert out.bytes == src.replace(b"fp4_e2m1", b"fp8_e4m3")

    def test_latin1_module_keeps_its_encoding(self):
        import libcst

        src = ("# -*- coding: latin-1 -*-\n# d\u00e9j\u00e0\n"
               f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n').encode("latin-1")
        mod = libcst.parse_module(src)
        out = FixKV4Cache(CodemodContext(filename="serve.py"), settings=Settings()).transform_module(mod)
        assert out.bytes == src.replace(b"fp4_e2m1", b"fp8_e4m3")


def test_add_args_reach_the_constructor():
    import argparse

    p = argparse.ArgumentParser()
    FixKV4Cache.add_args(p)
    ns = p.parse_args(["--gpu", "h100", "--sglang-version", "0.5.23", "--fix-dtype", "fp8_e5m2"])
    cmd = FixKV4Cache(CodemodContext(), **vars(ns))
    s = cmd._settings_for(None)
    assert (s.gpu, s.sglang_version, s.fix_dtype) == ("h100", "0.5.23", "fp8_e5m2")
