"""Issue 33: a fix removes a refusal, never a choice that works where the launch runs.

With no GPU stated, ``--kv-cache-dtype nvfp4`` is refused on Ampere, Hopper and Thor and accepted on Blackwell: a
warning. Its fix (fp8_e4m3) would take the FP4 KV cache away from a Blackwell team on a guess about a machine it
never uses, so it is offered as unsafe, and no route applies it unasked: ``kv4lint fix``, the libcst codemod and the
language server's preferred quick fix (the pre-commit fix hook: tests/test_precommit.py, slow). ``--unsafe-fixes``
applies it: the user has decided. An error's fix (refused on every candidate) stays safe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kv4lint.cli import main

LLAMA = "meta-llama/Llama-3.1-8B"
WARNED = ("#!/bin/bash\r\n# Serve on the team's nodes\r\npython -m sglang.launch_server --model-path " + LLAMA
          + " \\\r\n  --kv-cache-dtype nvfp4 --port 30000\r\n").encode()
PY_WARNED = ('import subprocess\n\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path", '
             f'"{LLAMA}",\n                "--kv-cache-dtype", "nvfp4"], check=True)\n')


def fix(tmp_path: Path, name: str, data: bytes, *args: str) -> tuple[int, bytes]:
    p = tmp_path / name
    p.write_bytes(data)
    code = main(["fix", "--isolated", "--no-cache", "-j", "1", "--sglang-version", "0.5.23", *args, str(p)])
    return code, p.read_bytes()


def test_kv4lint_fix_leaves_a_file_whose_findings_are_warnings_byte_identical(tmp_path, capsys):
    code, after = fix(tmp_path, "serve.sh", WARNED)
    assert (code, after) == (1, WARNED)
    err = capsys.readouterr().err
    assert "1 more fix is available but unsafe" in err and "--unsafe-fixes" in err
    code, after = fix(tmp_path, "serve.sh", WARNED, "--diff")
    assert (code, after) == (1, WARNED) and capsys.readouterr().out.strip() == ""


def test_unsafe_fixes_apply_a_warnings_fix_and_a_stated_gpu_makes_it_safe(tmp_path):
    fixed = WARNED.replace(b"nvfp4", b"fp8_e4m3")
    assert fix(tmp_path, "serve.sh", WARNED, "--unsafe-fixes")[1] == fixed
    assert fix(tmp_path, "serve.sh", WARNED, "--gpu", "h100")[1] == fixed  # an error on Hopper: safe
    assert fix(tmp_path, "serve.sh", WARNED, "--gpu", "b200") == (0, WARNED)  # accepted on Blackwell


def test_the_codemod_leaves_a_module_whose_findings_are_warnings_alone():
    import libcst as cst
    from libcst.codemod import CodemodContext, SkipFile

    from kv4lint.codemod import FixKV4Cache

    with pytest.raises(SkipFile):
        FixKV4Cache(CodemodContext(filename="serve.py"), isolated=True, sglang_version="0.5.23").transform_module(
            cst.parse_module(PY_WARNED))
    new = FixKV4Cache(CodemodContext(filename="serve.py"), isolated=True, sglang_version="0.5.23",
                      gpu="h100").transform_module(cst.parse_module(PY_WARNED))
    assert new.code == PY_WARNED.replace('"nvfp4"', '"fp8_e4m3"')


def test_the_language_server_offers_a_warnings_fix_labelled_unsafe_never_preferred(tmp_path):
    pytest.importorskip("pygls")
    from kv4lint.cli.server.answers import code_actions, hover
    from kv4lint.cli.server.buffer import fix_all, judge_buffer

    path = tmp_path / "serve.sh"
    (tmp_path / "pyproject.toml").write_text('[tool.kv4lint]\nsglang-version = "0.5.23"\n')
    judged = judge_buffer(str(path), WARNED.decode())
    fixes = [a for a in code_actions(judged, path.as_uri(), (0, 0), (9, 0), lambda u: None)
             if not a.title.startswith("Disable")]
    assert fixes and all(a.is_preferred is False and "(unsafe)" in a.title for a in fixes)
    (item,) = judged.items
    line, character = item.range[:2]
    assert "state the GPU to decide" in hover(judged, line, character).contents.value  # why, in the hover
    assert fix_all(str(path), WARNED.decode()) is None  # source.fixAll leaves a warning's fix alone
