"""IPython's interpolation in ``!`` lines (issue 28, item 3).

IPython expands ``{expr}`` and ``$name`` from the kernel's namespace before the
shell reads a ``!`` line.  kv4lint resolves them from the string constants the
notebook's cells set (in order) where it can, and otherwise treats the value as
unknown: never a KV406 about the literal ``{kv}``, and
``!{sys.executable} -m sglang.launch_server ...`` is a launch, not a syntax
error.
"""

from __future__ import annotations

import json

import pytest

from kv4lint.base.source import OffsetMap
from kv4lint.cli import main
from kv4lint.frontends.ipython import interpolate, python_strings

TARGET = ["--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "b200"]
SERVE = "python -m sglang.launch_server --model-path m"


def _notebook(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                   "source": c.splitlines(True)} for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _check(tmp_path, capsys, name: str, text: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text)
    rc = main(["check", *TARGET, str(path)])
    return rc, capsys.readouterr().out


def test_braces_resolved_from_an_earlier_cell(tmp_path, capsys):
    nb = _notebook('kv = "nvfp4"\nbackend = \'triton\'\n',
                   f"!{SERVE} --kv-cache-dtype {{kv}} --attention-backend $backend\n")
    rc, out = _check(tmp_path, capsys, "serve.ipynb", nb)
    assert rc == 1 and "serve.ipynb:cell 2:" in out and "KV401" in out, out
    assert "--kv-cache-dtype nvfp4 is refused with --attention-backend triton" in out, out


def test_an_unresolved_brace_is_unknown_not_a_dtype(tmp_path, capsys):
    nb = _notebook("import os\nkv = os.environ['KV']\n",
                   f"!{SERVE} --kv-cache-dtype {{kv}} --attention-backend triton\n",
                   f"!{SERVE} --kv-cache-dtype {{CONFIG['kv']}} --attention-backend triton\n")
    rc, out = _check(tmp_path, capsys, "serve.ipynb", nb)
    assert "{kv}" not in out and "KV406" not in out and "error:" not in out, out
    assert rc == 0, out


def test_sys_executable_is_a_launch(tmp_path, capsys):
    nb = _notebook("import sys\n!{sys.executable} -m sglang.launch_server --model-path m "
                   "--kv-cache-dtype fp4_e2m1\n")
    rc, out = _check(tmp_path, capsys, "serve.ipynb", nb)
    assert rc == 1 and "error:" not in out, out
    assert "serve.ipynb:cell 1:2:" in out and "KV406" in out, out


def test_a_dollar_name_python_does_not_set_is_the_shells(tmp_path, capsys):
    """``$KV`` set by ``%env`` (not Python): the shell's variable, as before."""
    nb = _notebook("%env KV=fp4_e2m1\n", f"!{SERVE} --kv-cache-dtype $KV\n")
    rc, out = _check(tmp_path, capsys, "serve.ipynb", nb)
    assert rc == 1 and "KV406 (error) [*] --kv-cache-dtype fp4_e2m1" in out, out


def test_the_fix_never_edits_an_interpolated_value(tmp_path, capsys):
    nb = _notebook('kv = "fp4_e2m1"\n', f"!{SERVE} --kv-cache-dtype {{kv}} --port 1\n")
    path = tmp_path / "serve.ipynb"
    path.write_text(nb)
    main(["fix", *TARGET, str(path)])
    capsys.readouterr()
    assert "{kv}" in path.read_text()


def test_markdown_ipython_blocks_too(tmp_path, capsys):
    md = ("# Serve\n\n```ipython\nimport sys\n"
          "!{sys.executable} -m sglang.launch_server --model-path m --kv-cache-dtype {dtype}\n```\n")
    rc, out = _check(tmp_path, capsys, "README.md", md)
    assert rc == 0 and "error:" not in out and "KV406" not in out, out


@pytest.mark.parametrize("cmd, want", [
    ("echo {kv}", "echo nvfp4"),
    ("echo $kv ${kv} $$kv $HOME", "echo nvfp4 nvfp4 $$kv $HOME"),
    ("echo {a,b} {1..3} {{kv}}", "echo {a,b} {1..3} {{kv}}"),  # brace expansion and IPython's escape
    ("{sys.executable} -m x", "python -m x"),
    ("echo {other} {d['k']}", "echo ${__kv4lint_ipython_1} ${__kv4lint_ipython_2}"),
])
def test_interpolate(cmd, want):
    known: dict = {}
    python_strings('kv = "nvfp4"\nother = f(x)\n', known)
    got, omap = interpolate(cmd, OffsetMap.contiguous(100, len(cmd)), known)
    assert got == want
    assert len(omap.outer) == len(got) + 1
