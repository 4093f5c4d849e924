"""Issue 26: a launch is judged against the set of targets it can be for, and the verdict says where it holds.

Stated facts are the target; an unstated release is inferred from the launch's own options (the newest release
that takes them all); an unstated GPU, or a model whose attention is unknown, is every candidate: an error only
when every candidate refuses, a warning naming where when some do. The launches are shaped like the public
repositories that run SGLang (benchmark scripts written for 0.5.1x, deployment recipes, RL launchers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kv4lint
from kv4lint.cli import main

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def run(tmp_path: Path, capsys, name: str, text: str, *args: str) -> tuple[int, list[str]]:
    """``kv4lint check`` on one file: its exit status and its text output's finding lines."""
    (tmp_path / name).write_text(text)
    code = main(["check", "--isolated", "--no-cache", "-j", "1", *args, str(tmp_path / name)])
    out = capsys.readouterr().out
    return code, [ln.split(f"{name}:", 1)[1] for ln in out.splitlines() if f"{name}:" in ln]


def findings(tmp_path: Path, name: str, text: str, *args: str) -> list[dict]:
    (tmp_path / name).write_text(text)
    out = tmp_path / "out.json"
    main(["check", "--isolated", "--no-cache", "-j", "1", "--format", "json", "--output-file", str(out), *args,
          str(tmp_path / name)])
    return json.loads(out.read_text())["findings"]


# ---------------------------------------------------------------------------
# An unstated release: inferred from the launch's own options

# A benchmark script written for 0.5.19 (sglang's own benchmark/ scripts and forks use these options).
OLD_OPTIONS = ("#!/bin/bash\n"
               "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code \\\n"
               "  --cuda-graph-max-bs 128 --disable-piecewise-cuda-graph --kv-cache-dtype fp8_e4m3\n")


def test_an_old_launch_is_judged_by_the_newest_release_that_takes_its_options(tmp_path, capsys):
    # 0.5.23 refuses --cuda-graph-max-bs (KV408 when 0.5.23 is stated); with no release stated it is evidence.
    assert run(tmp_path, capsys, "bench.sh", OLD_OPTIONS) == (0, [])
    code, lines = run(tmp_path, capsys, "bench.sh", OLD_OPTIONS, "--sglang-version", "0.5.23")
    assert code == 1 and [ln.split()[1] for ln in lines] == ["KV408", "KV408"]
    # --show-target says which evidence chose the release.
    main(["check", "--isolated", "--no-cache", "--show-target", str(tmp_path / "bench.sh")])
    out = capsys.readouterr().out
    assert "sglang=0.5.19 (inferred: 0.5.19, the newest release that takes every option and value of the " \
           "launch (`--cuda-graph-max-bs`: last taken by 0.5.19; `--disable-piecewise-cuda-graph`: last taken " \
           "by 0.5.19))" in out


def test_fp4_e2m1_points_to_the_releases_that_had_it(tmp_path, capsys):
    # fp4_e2m1 left the choices in 0.5.16's rename: the launch is judged by 0.5.15.post1, where triton takes it.
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_e2m1 "
            "--attention-backend triton --cuda-graph-max-bs 256\n")
    assert run(tmp_path, capsys, "serve.sh", text) == (0, [])
    main(["check", "--isolated", "--no-cache", "--show-target", str(tmp_path / "serve.sh")])
    assert "`--kv-cache-dtype fp4_e2m1`: last taken by 0.5.15.post1" in capsys.readouterr().out
    # ... and judged there: flashinfer is refused for FP4 on every GPU of that release, and of every release from
    # 0.5.7, the first with a KV4 check; 0.5.5.post3-0.5.6.post2 take the launch and check nothing.
    code, lines = run(tmp_path, capsys, "serve.sh", text.replace("triton", "flashinfer"))
    assert (code, lines) == (1, ["1:96: KV401 (error) [*] from SGLang 0.5.7: --kv-cache-dtype fp4_e2m1 is refused "
                                 "with flashinfer; use fp8_e4m3"])
    (f,) = findings(tmp_path, "serve.sh", text.replace("triton", "flashinfer"))
    assert ("SGLang 0.5.7 and newer refuse the launch so; the older releases that take its options too (SGLang "
            "0.5.5.post3-0.5.6.post2) do not.") in f["detail"]


def test_options_no_release_has_give_kv409_only(tmp_path, capsys):
    # No KV408/KV406 claims to know the parser of a build kv4lint does not know.
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_mx_block16 "
            "--attention-backnd triton\n")
    code, lines = run(tmp_path, capsys, "serve.sh", text)
    assert code == 1 and ("1:111: KV409 (warning) `--attention-backnd` is in no SGLang release kv4lint knows; did "
                          "you mean --attention-backend?") in lines
    # With a KV cache that is FP4 on no build, the build decides nothing: no KV409.
    assert run(tmp_path, capsys, "serve.sh", text.replace("fp4_mx_block16", "fp8_e4m3")) == (0, [])
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_e2m1 "
            "--fp4-kv-cache-recipe nvfp4\n")
    (f,) = findings(tmp_path, "serve.sh", text)
    assert (f["code"], f["severity"]) == ("KV409", "warning")
    assert f["message"] == "launch for an unknown SGLang build (`--fp4-kv-cache-recipe`); set fork-options"
    assert "`--fp4-kv-cache-recipe` (it exists in no release kv4lint knows), `--kv-cache-dtype fp4_e2m1`" in \
        f["detail"]


# ---------------------------------------------------------------------------
# An unstated GPU: every candidate arch


NVFP4_TRITON = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4 "
                "--attention-backend triton --cuda-graph-max-bs 256\n")  # written for 0.5.19


def test_a_refusal_on_some_gpus_is_a_warning_that_names_them(tmp_path, capsys):
    code, lines = run(tmp_path, capsys, "serve.sh", NVFP4_TRITON)
    assert (code, lines) == (1, ["1:96: KV404 (warning) refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype "
                                 "nvfp4 needs Blackwell; set --gpu to decide"])
    (f,) = findings(tmp_path, "serve.sh", NVFP4_TRITON)
    assert ("SGLang refuses the launch on Ampere/Ada, Hopper and Thor (sm8x, sm90, sm110) and accepts it on "
            "Blackwell and Blackwell RTX/GB10 (sm10x, sm12x). To decide, state the GPU: --gpu h100") in f["detail"]
    assert f["detail"].startswith("SGLang 0.5.19 (inferred from its options): ")
    # Stated, the GPU decides: an error on Hopper, nothing on Blackwell.
    code, lines = run(tmp_path, capsys, "serve.sh", NVFP4_TRITON, "--gpu", "h100")
    assert code == 1 and lines[0].startswith("1:96: KV404 (error) [*] --kv-cache-dtype nvfp4 needs Blackwell")
    assert run(tmp_path, capsys, "serve.sh", NVFP4_TRITON, "--gpu", "b200") == (0, [])


def test_nvfp4_mixed_backends_warn_where_accepted_and_fail_where_refused(tmp_path, capsys):
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4 \\\n"
            "  --prefill-attention-backend flashinfer --decode-attention-backend trtllm_mha\n")
    code, lines = run(tmp_path, capsys, "serve.sh", text, "--sglang-version", "0.5.19")
    assert code == 1 and lines == [
        "1:96: KV404 (warning) refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype nvfp4 needs Blackwell; "
        "set --gpu to decide",
        # SGLang's mixed-backend warning where it accepts the launch; the decode backend where it cannot run.
        "2:31: KV403 (warning) on sm10x and sm12x: prefill flashinfer, decode trtllm_mha is untested with FP4; "
        "use one backend",
        "2:69: KV407 (warning) refused on sm8x and sm110: --decode-attention-backend trtllm_mha needs Hopper, "
        "Blackwell or SM120; set --gpu"]
    code, lines = run(tmp_path, capsys, "serve.sh", text, "--sglang-version", "0.5.19", "--gpu", "h100")
    assert code == 1 and [ln.split()[1:3] for ln in lines] == [["KV404", "(error)"]]


def test_a_refusal_on_every_candidate_stays_an_error(tmp_path, capsys):
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_mx_block16 "
            "--attention-backend fa3\n")
    code, lines = run(tmp_path, capsys, "serve.sh", text)
    assert (code, lines) == (1, ["1:96: KV401 (error) [*] --kv-cache-dtype fp4_mx_block16 is refused with "
                                 "--attention-backend fa3 (any GPU); use fp8_e4m3"])


def test_an_unknown_model_is_mha_and_mla():
    args = ["--model-path", "my-org/private-model", "--kv-cache-dtype", "fp4_mx_block16", "--attention-backend",
            "flashinfer"]  # refused for MHA, accepted for MLA
    (f,) = kv4lint.check_argv(args, gpu="b200", sglang_version="0.5.23")
    assert (f.code, f.severity.value) == ("KV401", "warning") and f.message.startswith("for an MHA model: ")


def test_the_api_and_the_cli_use_the_same_target_sets(tmp_path, capsys):
    argv = NVFP4_TRITON.split()[3:]
    (f,) = kv4lint.check_argv(argv)
    code, lines = run(tmp_path, capsys, "serve.sh", NVFP4_TRITON)
    assert lines == [f"1:96: KV404 ({f.severity.value}) {f.message}"]


# ---------------------------------------------------------------------------
# Fixes: safe only where SGLang refuses the launch on every candidate, and the fixed launch on none


@pytest.mark.parametrize("text, gpu, applied", [
    # Refused on Ampere, Hopper and Thor, accepted on Blackwell: a warning, whose fix is never applied by `fix`.
    (NVFP4_TRITON, None, False),
    # Stated Hopper: an error, and fp8 with triton runs there: the fix is safe and applied.
    (NVFP4_TRITON, "h100", True),
    # Refused on every GPU (fa3 is not on the KV4 list), and fp8 with fa3 is accepted everywhere: safe.
    (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_mx_block16 "
     "--attention-backend fa3\n", None, True),
    # An RTX 5090 refuses native NVFP4 prefill, and fp8 with TRT-LLM's FMHAv2 prefill as well: unsafe.
    (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4 "
     "--attention-backend trtllm_mha\n", "rtx5090", False),
])
def test_a_fix_is_safe_only_for_an_error_whose_fixed_launch_every_candidate_accepts(tmp_path, text, gpu, applied):
    p = tmp_path / "serve.sh"
    p.write_text(text)
    main(["fix", "--isolated", "--no-cache", "-j", "1", *(["--gpu", gpu] if gpu else []), str(p)])
    fixed = text.replace("nvfp4", "fp8_e4m3").replace("fp4_mx_block16", "fp8_e4m3")
    assert (p.read_text() == fixed) is applied
    assert (p.read_text() == text) is not applied


# ---------------------------------------------------------------------------
# One finding per cause


def test_one_cause_across_shell_paths_is_one_finding(tmp_path, capsys):
    text = ("#!/bin/bash\n"
            'case "$MODE" in\n  a) BACKEND=fa3 ;;\n  b) BACKEND=fa3 ;;\n  c) BACKEND=triton ;;\nesac\n'
            f"python3 -m sglang.launch_server --model-path {LLAMA} \\\n"
            '  --kv-cache-dtype fp4_mx_block16 --attention-backend "$BACKEND"\n')
    code, lines = run(tmp_path, capsys, "serve.sh", text, "--gpu", "b200", "--sglang-version", "0.5.23")
    assert (code, lines) == (1, ["8:20: KV401 (error) [*] when MODE=a or MODE=b: --kv-cache-dtype fp4_mx_block16 "
                                 "is refused with --attention-backend fa3; use fp8_e4m3"])
    # --show-target: one line per path, each saying which.
    main(["check", "--isolated", "--no-cache", "--show-target", "--gpu", "b200", "--sglang-version", "0.5.23",
          str(tmp_path / "serve.sh")])
    heads = [ln.split(": platform=")[0].split("serve.sh:")[1] for ln in capsys.readouterr().out.splitlines()
             if ": platform=" in ln]
    assert heads == ["7: sglang.launch_server (when MODE=a)", "7: sglang.launch_server (when MODE=b)",
                     "7: sglang.launch_server (when MODE=c)", "7: sglang.launch_server (when MODE is none of a, b, c)"]
    # The case has no `*)`: with MODE unset, SGLang's default (trtllm_mha on b200) takes FP4. A cause on every
    # path names no condition.
    text = ("#!/bin/bash\n"
            'if [ "$LARGE" = 1 ]; then PORT=30000; else PORT=30001; fi\n'
            "BACKEND=fa3\n\n\n\n"
            f"python3 -m sglang.launch_server --model-path {LLAMA} --port $PORT \\\n"
            '  --kv-cache-dtype fp4_mx_block16 --attention-backend "$BACKEND"\n')
    code, lines = run(tmp_path, capsys, "serve.sh", text, "--gpu", "b200", "--sglang-version", "0.5.23")
    assert (code, lines) == (1, ["8:20: KV401 (error) [*] --kv-cache-dtype fp4_mx_block16 is refused with "
                                 "--attention-backend fa3; use fp8_e4m3"])


# ---------------------------------------------------------------------------
# Dated nightly images: a build between two releases


def nightly(day: str, options: str) -> str:
    return ("#!/bin/bash\n"
            f"IMG=lmsysorg/sglang:nightly-dev-cu13-{day}-07c8f729\n"
            f"docker run --gpus all $IMG python3 -m sglang.launch_server --model-path {LLAMA} {options}\n")


def test_the_release_dates_are_those_of_the_releases_kv4lint_knows():
    from kv4lint.sglang.options import known_releases
    from kv4lint.sglang.releases import RELEASE_DATES, nightly_between

    assert list(RELEASE_DATES) == known_releases()
    assert nightly_between("2026-09-01") == ("0.5.18", "0.5.19")
    assert nightly_between("2026-09-04") == ("0.5.19", "0.5.20")  # published that day: the nightly is after it
    assert nightly_between("2026-11-20") == ("0.5.23", None)


def test_a_dated_nightly_is_judged_by_the_releases_around_it(tmp_path, capsys):
    # A nightly of 2026-08-01 lies between 0.5.16 and 0.5.17: nothing after 0.5.17 is in it, and no KV409.
    text = nightly("20260801", "--kv-cache-dtype nvfp4 --attention-backend triton --disable-piecewise-cuda-graph")
    code, lines = run(tmp_path, capsys, "serve.sh", text)
    assert code == 1 and [ln.split()[1:3] for ln in lines] == [["KV404", "(warning)"]]
    main(["check", "--isolated", "--no-cache", "--show-target", str(tmp_path / "serve.sh")])
    assert ("sglang=0.5.17 (inferred: 0.5.17, the newest release up to 0.5.17 (image lmsysorg/sglang:nightly-dev-"
            "cu13-20260801-07c8f729: a nightly of 2026-08-01, after 0.5.16 and before 0.5.17) that takes every "
            "option and value of the launch)") in capsys.readouterr().out
    # An option that only came after the nightly's next release: a build kv4lint does not know.
    options = "--kv-cache-dtype fp4_mx_block16 --attention-backend triton --attn-dp-size 2"
    (f,) = findings(tmp_path, "serve.sh", nightly("20260901", options))
    assert f["code"] == "KV409" and f["message"].startswith("launch for an unknown SGLang build (`--attn-dp-size`")
    assert "no release up to 0.5.19, the release after the nightly, takes all its options" in f["detail"]


def test_a_nightly_newer_than_every_release_is_a_build_kv4lint_does_not_know(tmp_path, capsys):
    options = "--kv-cache-dtype fp4_mx_block16 --attention-backend triton"
    code, lines = run(tmp_path, capsys, "serve.sh", nightly("20261120", options))
    assert (code, lines) == (1, ["3:28: KV409 (warning) launch for an unknown SGLang build (a nightly of "
                                 "2026-11-20); set --sglang-version"])
    assert run(tmp_path, capsys, "serve.sh", nightly("20261120", "--kv-cache-dtype fp8_e4m3")) == (0, [])


def test_kv409_names_the_word_no_release_has_and_never_the_opposite_switch(tmp_path, capsys):
    # `--cuda-graph-max-bs` is 0.5.19's; `--enable-flashinfer-trtllm-moe` no release kv4lint knows has (it is
    # older): the headline and the span name the latter, and nothing suggests a rename of the former.
    text = (f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_mx_block16 --attention-backend "
            "triton --cuda-graph-max-bs 8 --enable-flashinfer-trtllm-moe\n")
    code, lines = run(tmp_path, capsys, "serve.sh", text)
    assert (code, lines) == (1, ["1:160: KV409 (warning) launch for an unknown SGLang build "
                                 "(`--enable-flashinfer-trtllm-moe`); set fork-options"])
    # A fork's `--enable-radix-cache` is no misspelling of `--disable-radix-cache`, the opposite switch.
    code, lines = run(tmp_path, capsys, "serve.sh", text.replace("--enable-flashinfer-trtllm-moe",
                                                                 "--enable-radix-cache"))
    assert "--disable-radix-cache" not in "".join(lines) and "`--enable-radix-cache`" in lines[0]


# ---------------------------------------------------------------------------
# Issue 33: every code follows the set rule. The nine launches of the differential (no GPU stated, judged by
# SGLang on sm80 ... sm121) that SGLang refuses or warns of on some GPUs where kv4lint used to say nothing.

MINICPM3 = "openbmb/MiniCPM3-4B"  # MLA


@pytest.mark.parametrize("version", ["0.5.20", "0.5.23"])
def test_trtllm_mha_refused_off_hopper_and_blackwell_is_a_kv407_warning(version):
    # The attention-backend handler refuses prefill trtllm_mha off SM90/SM100/SM120, whatever the KV cache.
    argv = ["--model-path", LLAMA, "--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "trtllm_mha"]
    (f,) = kv4lint.check_argv(argv, sglang_version=version)
    assert (f.code, f.severity.value, f.field, f.fix) == ("KV407", "warning", "attention_backend", None)
    assert f.message == ("refused on sm8x and sm110: --attention-backend trtllm_mha needs Hopper, Blackwell or "
                         "SM120; set --gpu")
    assert "SGLang refuses the launch on Ampere/Ada and Thor (sm8x, sm110) and accepts it on Hopper, Blackwell " \
           "and Blackwell RTX/GB10 (sm90, sm10x, sm12x)" in f.detail
    assert [f.severity.value for f in kv4lint.check_argv(argv, sglang_version=version, gpu="a100")] == ["error"]
    assert kv4lint.check_argv(argv, sglang_version=version, gpu="h100") == []


def test_prefill_trtllm_mha_at_0_5_16_is_refused_except_on_sm100():
    argv = ["--model-path", LLAMA, "--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend", "trtllm_mha"]
    (f,) = kv4lint.check_argv(argv, sglang_version="0.5.16")
    assert (f.code, f.severity.value, f.field) == ("KV407", "warning", "prefill_attention_backend")
    assert f.message == ("refused on every GPU but Blackwell: --prefill-attention-backend trtllm_mha needs SM100; "
                         "set --gpu")
    assert "(sm8x, sm90, sm110, sm12x) and accepts it on Blackwell (sm10x)" in f.detail
    assert kv4lint.check_argv(argv, sglang_version="0.5.16", gpu="b300") == []


def test_prefill_flashinfer_for_mla_at_0_5_19_is_sglangs_mixed_backend_warning_where_it_warns():
    argv = ["--model-path", MINICPM3, "--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend",
            "flashinfer"]
    (f,) = kv4lint.check_argv(argv, sglang_version="0.5.19")
    assert (f.code, f.severity.value) == ("KV403", "warning")
    assert f.message == ("on every GPU but Blackwell: prefill flashinfer, decode triton is untested with FP4; "
                         "use one backend")
    assert "SGLang warns of the launch on Ampere/Ada, Hopper, Thor and Blackwell RTX/GB10" in f.detail
    assert kv4lint.check_argv(argv, sglang_version="0.5.19", gpu="b200") == []
    assert [f.code for f in kv4lint.check_argv(argv, sglang_version="0.5.19", gpu="h100")] == ["KV403"]


# ---------------------------------------------------------------------------
# Issue 33: one finding per token and cause, in plain words first


def test_refusals_of_one_dtype_on_several_gpus_are_one_finding_that_never_contradicts_itself():
    # 0.5.23, no backend: Ampere/Ada and Thor stop at TRT-LLM's decode rule ("needs Hopper, Blackwell or SM120"),
    # Hopper at "nvfp4 requires Blackwell": one finding, whose need is true of all three.
    (f,) = kv4lint.check_argv(["--model-path", LLAMA, "--kv-cache-dtype", "nvfp4"], sglang_version="0.5.23")
    assert (f.code, f.severity.value) == ("KV404", "warning")
    assert f.message == ("refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype nvfp4 needs Blackwell; "
                         "set --gpu to decide")
    assert "Hopper, Blackwell or SM120" not in f.message
    # each GPU's own cause is in the detail
    assert "On Ampere/Ada (sm8x): --kv-cache-dtype nvfp4 needs Hopper, Blackwell or SM120" in f.detail
    assert "On Hopper (sm90): --kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120)" in f.detail


# ---------------------------------------------------------------------------
# Issue 33: a verdict that depends on the release names the releases it holds for


def test_a_verdict_of_the_newest_releases_only_names_them(tmp_path, capsys):
    # Unpinned: judged by the newest release that takes the launch (0.5.23); NVFP4's prefill step (0.5.21+) refuses
    # triton on every GPU, while 0.5.16-0.5.20 take the same launch and refuse it on some GPUs only.
    text = f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4 --attention-backend triton\n"
    code, lines = run(tmp_path, capsys, "serve.sh", text)
    assert (code, lines) == (1, ["1:122: KV401 (error) [*] from SGLang 0.5.21: --kv-cache-dtype nvfp4 is refused with "
                                 "--attention-backend triton; use fp8_e4m3"])
    (f,) = findings(tmp_path, "serve.sh", text)
    assert "(SGLang 0.5.16-0.5.20) do not" in f["detail"] and "State the release to decide" in f["detail"]
    # Stated, the release decides: no lead.
    code, lines = run(tmp_path, capsys, "serve.sh", text, "--sglang-version", "0.5.23")
    assert lines[0].startswith("1:122: KV401 (error) [*] --kv-cache-dtype nvfp4 is refused with")
    # A verdict every release that takes the launch shares names none.
    code, lines = run(tmp_path, capsys, "serve.sh", text.replace("nvfp4 --attention-backend triton",
                                                                 "fp4_mx_block16 --attention-backend fa3"))
    assert lines == ["1:96: KV401 (error) [*] --kv-cache-dtype fp4_mx_block16 is refused with --attention-backend "
                     "fa3 (any GPU); use fp8_e4m3"]
    # Nor does one an older release reports at another token: 0.5.20 refuses nvfp4 with fa3 at the dtype,
    # 0.5.21 at the backend, and both refuse it on every GPU.
    code, lines = run(tmp_path, capsys, "serve.sh", text.replace("triton", "fa3"))
    assert lines == ["1:122: KV401 (error) [*] --kv-cache-dtype nvfp4 is refused with --attention-backend fa3 "
                     "(any GPU); use fp8_e4m3"]


def test_a_cause_only_some_gpus_have_beside_one_every_gpu_has_is_a_warning_beside_the_error():
    # trtllm_mla runs on Blackwell only (KV407 off it), and takes no FP4 KV cache anywhere (KV401): the launch is
    # refused on every GPU (an error), and the backend's own refusal holds on some GPUs only (a warning naming them).
    argv = ["--model-path", LLAMA, "--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "trtllm_mla"]
    found = {f.code: f for f in kv4lint.check_argv(argv, sglang_version="0.5.23")}
    assert (found["KV401"].severity.value, found["KV407"].severity.value) == ("error", "warning")
    assert found["KV407"].message == ("refused on Ampere/Ada and Hopper: --attention-backend trtllm_mla needs "
                                      "Blackwell; set --gpu")
    assert "this GPU" not in found["KV407"].message
