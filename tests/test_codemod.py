"""The libcst codemod command kv4lint.codemod.FixKV4Cache (libcst's own CodemodTest harness)."""

from __future__ import annotations

import pytest
from libcst.codemod import CodemodContext, CodemodTest

import fakefront
from kv4lint.base.settings import Settings
from kv4lint.codemod import FixKV4Cache

# The release is stated: a KV406 spelling fix is never safe while it is inferred (issue 22).
S23 = Settings(sglang_version="0.5.23")

LAUNCH = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture
def fake_scanner(monkeypatch):
    """The engine tests run over the stand-in scanner (also for Python files)."""
    fakefront.install(monkeypatch, languages=("python", "shell"))
    monkeypatch.setattr(fakefront, "SHARED", set())
    monkeypatch.setattr(fakefront, "BREAK_ON", None)


@pytest.mark.usefixtures("fake_scanner")
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
        self.assertCodemod(before, after, settings=S23)

    def test_fix_dtype_argument(self):
        before = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
        after = f'cmd = "{LAUNCH} --kv-cache-dtype fp8_e5m2 --port 1"\n'
        self.assertCodemod(before, after, fix_dtype="fp8_e5m2", isolated=True, sglang_version="0.5.23")

    def test_nothing_to_fix_is_skipped(self):
        code = f'cmd = "{LAUNCH} --kv-cache-dtype fp8_e4m3 --port 1"\n'
        self.assertCodemod(code, code, settings=S23, expected_skip=True)

    def test_no_launch_is_skipped(self):
        self.assertCodemod("x = 1\n", "x = 1\n", settings=S23, expected_skip=True)

    def test_unsafe_fix_not_applied(self):
        fakefront.SHARED.add("fp4_e2m1")
        code = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
        self.assertCodemod(code, code, settings=S23, expected_skip=True)

    def test_fix_that_breaks_parsing_is_rolled_back_with_a_warning(self):
        import libcst
        from libcst.codemod import SkipFile

        fakefront.BREAK_ON = "fp8_e4m3"  # reset by the fixture
        code = f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n'
        self.assertCodemod(code, code, settings=S23, expected_skip=True)
        ctx = CodemodContext(filename="serve.py")
        with pytest.raises(SkipFile):
            FixKV4Cache(ctx, settings=S23).transform_module(libcst.parse_module(code))
        assert len(ctx.warnings) == 1 and "rolled back" in ctx.warnings[0]

    def test_records_fixes_in_context_scratch(self):
        import libcst

        ctx = CodemodContext(filename="serve.py")
        mod = libcst.parse_module(f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n')
        out = FixKV4Cache(ctx, settings=S23).transform_module(mod)
        assert "fp8_e4m3" in out.code
        col = len('cmd = "') + len(LAUNCH) + len(" --kv-cache-dtype ") + 1
        assert [(line, c, code) for line, c, code, _ in ctx.scratch["kv4lint_fixed"]] == [(1, col, "KV406")]

    def test_crlf_and_bom_survive(self):
        import libcst

        src = ("\ufeff# -*- coding: utf-8 -*-\r\n" f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\r\n').encode()
        mod = libcst.parse_module(src)
        out = FixKV4Cache(CodemodContext(filename="serve.py"), settings=S23).transform_module(mod)
        assert out.bytes == src.replace(b"fp4_e2m1", b"fp8_e4m3")

    def test_latin1_module_keeps_its_encoding(self):
        import libcst

        src = ("# -*- coding: latin-1 -*-\n# d\u00e9j\u00e0\n"
               f'cmd = "{LAUNCH} --kv-cache-dtype fp4_e2m1 --port 1"\n').encode("latin-1")
        mod = libcst.parse_module(src)
        out = FixKV4Cache(CodemodContext(filename="serve.py"), settings=S23).transform_module(mod)
        assert out.bytes == src.replace(b"fp4_e2m1", b"fp8_e4m3")


def test_add_args_reach_the_constructor():
    import argparse

    p = argparse.ArgumentParser()
    FixKV4Cache.add_args(p)
    ns = p.parse_args(["--gpu", "h100", "--sglang-version", "0.5.23", "--fix-dtype", "fp8_e5m2"])
    cmd = FixKV4Cache(CodemodContext(), **vars(ns))
    s = cmd._settings_for(None)
    assert (s.gpu, s.sglang_version, s.fix_dtype) == ("h100", "0.5.23", "fp8_e5m2")


# ---------------------------------------------------------------------------
# Through the real Python frontend, and the documented command line


class TestFixKV4CacheRealFrontend(CodemodTest):
    TRANSFORM = FixKV4Cache

    def test_server_args_keyword(self):
        before = """
            from sglang.srt.server_args import ServerArgs

            args = ServerArgs(
                model_path="meta-llama/Llama-3.1-8B-Instruct",
                kv_cache_dtype="fp4_e2m1",  # FP4 KV cache
            )
        """
        self.assertCodemod(before, before.replace('"fp4_e2m1"', '"fp8_e4m3"'), isolated=True, sglang_version="0.5.23")

    def test_engine_removes_fp4_only_keyword(self):
        before = """
            import sglang as sgl

            engine = sgl.Engine(model_path="M", kv_cache_dtype='nvfp4', prefill_kv_cache_dequant_dtype="nvfp4")
        """
        after = """
            import sglang as sgl

            engine = sgl.Engine(model_path="M", kv_cache_dtype='fp8_e4m3')
        """
        self.assertCodemod(before, after, gpu="rtx5090", isolated=True)

    def test_argv_list(self):
        before = """
            import subprocess

            subprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"], check=True)
        """
        self.assertCodemod(before, before.replace('"nvfp4"', '"fp8_e4m3"'), gpu="h100", isolated=True)

    def test_shared_constant_is_left_alone(self):
        code = """
            from sglang.srt.server_args import ServerArgs

            DTYPE = "fp4_e2m1"
            a = ServerArgs(model_path="M", kv_cache_dtype=DTYPE)
            b = ServerArgs(model_path="N", kv_cache_dtype=DTYPE)
        """
        self.assertCodemod(code, code, isolated=True, expected_skip=True)

    def test_fine_launch_is_skipped(self):
        code = """
            from sglang.srt.server_args import ServerArgs

            args = ServerArgs(model_path="M", kv_cache_dtype="fp8_e4m3")
        """
        self.assertCodemod(code, code, isolated=True, expected_skip=True)


@pytest.mark.parametrize("how", ["external", "config"])
def test_documented_libcst_tool_command(tmp_path, how):
    import subprocess
    import sys

    src = ("# -*- coding: latin-1 -*-\r\n# caf\u00e9\r\nfrom sglang.srt.server_args import ServerArgs\r\n"
           "args = ServerArgs(model_path='M', kv_cache_dtype='fp4_e2m1')\r\n")
    fine = "from sglang.srt.server_args import ServerArgs\nargs = ServerArgs(model_path='M', kv_cache_dtype='auto')\n"
    (tmp_path / "serve.py").write_bytes(src.encode("latin-1"))
    (tmp_path / "fine.py").write_text(fine)
    if how == "external":  # docs/codemod.md, first command
        cmd = ["-x", "--no-format", "kv4lint.codemod.FixKV4Cache"]
    else:  # docs/codemod.md, with a .libcst.codemod.yaml listing kv4lint
        (tmp_path / ".libcst.codemod.yaml").write_text("modules:\n  - kv4lint\nformatter: []\n")
        cmd = ["--no-format", "codemod.FixKV4Cache"]
    r = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", *cmd, "--hide-progress", "--kv4lint-isolated",
                        "--sglang-version", "0.5.23",
                        "serve.py", "fine.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Transformed 1 files successfully." in r.stderr and "Skipped 1 files." in r.stderr
    assert (tmp_path / "serve.py").read_bytes() == src.replace("fp4_e2m1", "fp8_e4m3").encode("latin-1")
    assert (tmp_path / "fine.py").read_text() == fine


def test_plain_command_without_x_is_not_found(tmp_path):
    """Why the docs say -x: libcst looks commands up inside its configured modules."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "kv4lint.codemod.FixKV4Cache", "."],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Could not find kv4lint.codemod in any configured modules" in r.stderr
