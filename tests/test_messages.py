"""Messages for people (issue 16): the first sentence in the user's terms, SGLang's own words after it, SGLang's
function names and the resolution trace only in the detail (JSON, SARIF, --format full, --show-target); the full
text format shows the source line with a caret under the value and ends with a `kv4lint explain` hint."""

import json

import pytest

import kv4lint
from kv4lint.cli import main
from kv4lint.rules.codes import RULES

QWEN = ["--model-path", "Qwen/Qwen3-8B"]
STEPS = ("handle_", "_handle_", "validate_", "apply_deepseek")

CASES = [
    (QWEN + ["--kv-cache-dtype", "nvfp4"], {"gpu": "h100"}),
    (QWEN + ["--kv-cache-dtype", "nvfp4"], {"gpu": "a100"}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--device", "xpu"], {}),
    (QWEN + ["--kv-cache-dtype", "nvfp4", "--enable-unified-memory"], {}),
    (QWEN + ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"], {"gpu": "b200"}),
    (QWEN + ["--kv-cache-dtype", "fp8_e4m3", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3"], {}),
    (QWEN + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "trtllm_mha"],
     {"sglang_version": "0.5.7", "gpu": "h100"}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "tokenspeed_mla"],
     {"gpu": "b200", "model_attention": "mla"}),
]


@pytest.mark.parametrize("argv,target", CASES)
def test_headline_has_no_sglang_function_names_and_detail_has_them(argv, target):
    found = kv4lint.check_argv(argv, **target)
    assert found
    for f in found:
        assert not any(s in f.message for s in STEPS), f.message
        assert f.detail and any(s in f.detail for s in STEPS), f.detail


def test_kv404_names_what_the_gpu_needs_and_the_target_in_user_terms():
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4"], gpu="h100")
    assert f.message.startswith("--kv-cache-dtype nvfp4 needs a Blackwell GPU (SM100/SM120); this launch targets "
                                "sm90 (Hopper), from gpu= argument. SGLang 0.5.23 says: RuntimeError: "
                                "--kv-cache-dtype=nvfp4 ")


def test_no_assumed_arch_is_printed_as_the_targets():
    found = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"],
                               sglang_version="0.5.19")
    assert found
    for f in found:
        assert "this launch targets sm" not in f.message and "from unknown" not in f.message


def test_kv4_is_spelled_out():
    for code in ("KV401", "KV402", "KV403", "KV404", "KV405"):
        assert "FP4 (KV4)" in RULES[code].summary
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--device", "xpu"])
    assert f.message.startswith("--kv-cache-dtype fp4_mx_block16 needs an NVIDIA GPU (CUDA) for an FP4 (KV4) KV cache")


def _script(tmp_path, text):
    p = tmp_path / "run.sh"
    p.write_text(text, encoding="utf-8")
    return p


def test_full_format_shows_the_source_line_a_caret_and_the_explain_hint(tmp_path, capsys):
    p = _script(tmp_path, "#!/bin/sh\npython -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
                          "    --kv-cache-dtype nvfp4 --port 30000\n")
    assert main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--format", "full", str(p)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{p}:3:22: KV404 [*] --kv-cache-dtype nvfp4 needs a Blackwell GPU")
    assert out[1:5] == ["  |", "3 |     --kv-cache-dtype nvfp4 --port 30000",
                        "  |                      ^^^^^ KV404", "  |"]
    assert out[5] == "  = fix: set --kv-cache-dtype fp8_e4m3"
    assert out[6].startswith("  = sglang: SGLang 0.5.23: handle_kv4_compatibility raises RuntimeError: ")
    assert out[7] == "  = help: kv4lint explain KV404"


def test_full_format_caret_under_a_blocker_value(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1 "
                          "--attention-backend trtllm_mha\n")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--sglang-version", "0.5.7", "--format", "full",
          str(p)])
    out = capsys.readouterr().out.splitlines()
    line = "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1 --attention-backend trtllm_mha"
    assert out[2] == "1 | " + line
    assert out[3] == "  | " + " " * line.index("trtllm_mha") + "^" * len("trtllm_mha") + " KV407"
    assert "  = help: kv4lint explain KV407" in out and not any(x.startswith("  = fix:") for x in out)


def test_default_text_stays_one_line_per_finding(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", str(p)])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith(f"{p}:1:") and out[1].startswith("Found 1 finding")


def test_json_and_sarif_carry_the_detail(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--format", "json", str(p)])
    (f,) = json.loads(capsys.readouterr().out)["findings"]
    assert f["detail"].startswith("SGLang 0.5.23: handle_kv4_compatibility raises RuntimeError")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--format", "sarif", str(p)])
    (r,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert r["properties"]["detail"] == f["detail"]


def test_show_target_prints_the_detail(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--show-target", str(p)])
    out = capsys.readouterr().out
    assert f"{p}:1: KV404 sglang: SGLang 0.5.23: handle_kv4_compatibility raises" in out
