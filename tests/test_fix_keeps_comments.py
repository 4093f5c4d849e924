"""Fixes keep comments (issue 28, item 5; docs/fixing.md).

Removing an option element (``--prefill-kv-cache-dequant-dtype X`` with an
fp8 KV cache, KV405) from a Python list or a YAML sequence keeps the comment
at the end of its line, on its own line at the element's indentation, and
leaves the next line as it was.  Each case is a real ``kv4lint fix`` round
trip; the fixed text must still parse and be clean.
"""

from __future__ import annotations

import ast

import pytest
import yaml

from kv4lint.cli import main

TARGET = ["--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "b200"]
OPT = "--prefill-kv-cache-dequant-dtype"

CASES = {
    "list_comments.py": (
        "import subprocess\n"
        "cmd = [\n"
        '    "python", "-m", "sglang.launch_server",\n'
        '    "--model-path", "m",\n'
        '    "--kv-cache-dtype", "fp8_e4m3",  # the KV cache\n'
        f'    "{OPT}", "fp8_e4m3",  # dequantise prefill\n'
        '    "--attention-backend", "trtllm_mha",  # backend\n'
        "]\n"
        "subprocess.run(cmd)\n",
        "import subprocess\n"
        "cmd = [\n"
        '    "python", "-m", "sglang.launch_server",\n'
        '    "--model-path", "m",\n'
        '    "--kv-cache-dtype", "fp8_e4m3",  # the KV cache\n'
        "    # dequantise prefill\n"
        '    "--attention-backend", "trtllm_mha",  # backend\n'
        "]\n"
        "subprocess.run(cmd)\n"),
    # Without a comment, the line goes and the next one keeps its indentation.
    "list_plain.py": (
        "import subprocess\n"
        "subprocess.run([\n"
        '    "python", "-m", "sglang.launch_server", "--model-path", "m",\n'
        '    "--kv-cache-dtype", "fp8_e4m3",\n'
        f'    "{OPT}", "fp8_e4m3",\n'
        '    "--attention-backend", "trtllm_mha",\n'
        "])\n",
        "import subprocess\n"
        "subprocess.run([\n"
        '    "python", "-m", "sglang.launch_server", "--model-path", "m",\n'
        '    "--kv-cache-dtype", "fp8_e4m3",\n'
        '    "--attention-backend", "trtllm_mha",\n'
        "])\n"),
    # One element a line, each with its comment.
    "list_each.py": (
        "import subprocess\n"
        'subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m",\n'
        '                "--kv-cache-dtype", "fp8_e4m3",  # fp8\n'
        f'                "{OPT}",  # the option\n'
        '                "fp8_e4m3",  # its value\n'
        '                "--port", "1"])\n',
        "import subprocess\n"
        'subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m",\n'
        '                "--kv-cache-dtype", "fp8_e4m3",  # fp8\n'
        "                # the option\n"
        "                # its value\n"
        '                "--port", "1"])\n'),
    "block.yaml": (
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command:\n"
        "      - python3\n      - -m\n      - sglang.launch_server\n"
        "      - --kv-cache-dtype\n      - fp8_e4m3   # cache\n"
        f"      - {OPT}  # dequantise prefill\n      - fp8_e4m3  # its value\n"
        "      - --attention-backend\n      - trtllm_mha  # backend\n",
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command:\n"
        "      - python3\n      - -m\n      - sglang.launch_server\n"
        "      - --kv-cache-dtype\n      - fp8_e4m3   # cache\n"
        "      # dequantise prefill\n      # its value\n"
        "      - --attention-backend\n      - trtllm_mha  # backend\n"),
    "flow.yaml": (
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server,  # the server\n"
        "              --kv-cache-dtype, fp8_e4m3,  # fp8\n"
        f"              {OPT}, fp8_e4m3,  # dequantise prefill\n"
        "              --attention-backend, trtllm_mha]\n",
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server,  # the server\n"
        "              --kv-cache-dtype, fp8_e4m3,  # fp8\n"
        "              # dequantise prefill\n"
        "              --attention-backend, trtllm_mha]\n"),
    "flow_last.yaml": (
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, fp8_e4m3, # c1\n"
        f"       {OPT}, fp8_e4m3]\n",
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, fp8_e4m3, # c1\n"
        "       ]\n"),
    "flow_inline.yaml": (
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, fp8_e4m3, # c1\n"
        f"       {OPT}, fp8_e4m3, # c2\n"
        "       --attention-backend, trtllm_mha]\n",
        "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
        "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, fp8_e4m3, # c1\n"
        "       # c2\n"
        "       --attention-backend, trtllm_mha]\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fix_keeps_comments(tmp_path, capsys, name):
    before, after = CASES[name]
    path = tmp_path / name
    path.write_text(before)
    rc = main(["check", *TARGET, str(path)])
    out = capsys.readouterr().out
    assert rc == 1 and "KV405" in out, out
    rc = main(["fix", *TARGET, str(path)])
    capsys.readouterr()
    assert path.read_text() == after
    comments = [ln.split("#", 1)[1] for ln in before.splitlines() if "#" in ln]
    assert [ln.split("#", 1)[1] for ln in after.splitlines() if "#" in ln] == comments
    if name.endswith(".py"):
        ast.parse(after)
    else:
        cmd = yaml.safe_load(after)["services"]["s"]["command"]
        assert OPT not in cmd and cmd[-1] != "fp8_e4m3" or name == "flow_last.yaml"
    assert rc == 0
