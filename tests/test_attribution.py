"""Issue 16's cases: a finding's code and first sentence name the cause SGLang would hit; the fix addresses
that cause or is not offered (docs/rules/README.md, the attribution rule)."""

import kv4lint

QWEN = ["--model-path", "Qwen/Qwen3-8B"]
MLA = ["--model-path", "deepseek-ai/DeepSeek-V2-Lite"]


def found(argv, **target):
    return [(f.code, f) for f in kv4lint.check_argv(argv, **target)]


def test_unknown_gpu_reports_the_cause_common_where_the_dtype_is_allowed():
    # 0.5.23, no GPU named: sm80/sm90 stop at the arch, sm100/sm120 at unified memory -> KV405, the arch
    # causes as secondary text, and no assumed arch printed as the target's.
    (code, f), = found(QWEN + ["--kv-cache-dtype", "nvfp4", "--enable-unified-memory"], sglang_version="0.5.23")
    assert code == "KV405"
    assert f.message.startswith("--kv-cache-dtype nvfp4 is refused with --enable-unified-memory")
    assert "On Ampere/Ada and Thor (sm8x, sm110) SGLang refuses it earlier" in f.detail and "Ampere" not in f.message
    assert "from unknown" not in f.message


def test_a_blocker_the_dtype_does_not_cause_is_kv407_without_a_dtype_fix():
    (code, f), = found(QWEN + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "trtllm_mha"],
                       sglang_version="0.5.7", gpu="h100")
    assert code == "KV407" and f.fix is None
    assert f.message == ("--attention-backend trtllm_mha fails on sm90 (Hopper) with any KV cache; "
                         "choose another backend")
    assert "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100)" in f.detail  # SGLang's words
    assert f.field == "attention_backend"


def test_the_kv4_refusal_behind_a_blocker_is_reported_too():
    # MLA: trtllm_mha is off 0.5.7's KV4 MLA list, so the KV4 check refuses once the blocker is gone.
    got = found(MLA + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "trtllm_mha"],
                sglang_version="0.5.7", gpu="h100")
    assert [c for c, _ in got] == ["KV407", "KV401"]


def test_intel_xpu_as_mla_prefill_backend_is_a_blocker_then_kv401():
    got = found(MLA + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "intel_xpu"],
                sglang_version="0.5.14", gpu="b200")
    assert [c for c, _ in got] == ["KV407", "KV401"]
    assert got[0][1].message.startswith("--attention-backend intel_xpu is refused with any KV cache")
    assert "intel_xpu backend is only supported on decode for MLA models" in got[0][1].detail


def test_cutedsl_mla_as_prefill_backend_is_a_blocker():
    got = found(MLA + ["--kv-cache-dtype", "fp4_e2m1", "--prefill-attention-backend", "cutedsl_mla"],
                sglang_version="0.5.15", gpu="b200")
    assert got[0][0] == "KV407" and "CuteDSL MLA only supports decoding" in got[0][1].detail


def test_xpu_without_xmx_falls_back_to_triton_then_refuses_kv4_off_cuda():
    got = found(MLA + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "intel_xpu"],
                sglang_version="0.5.15", platform="xpu")
    assert [c for c, _ in got] == ["KV402"]


def test_dequant_option_without_nvfp4_on_cpu_is_kv405_not_kv402():
    (code, f), = found(QWEN + ["--kv-cache-dtype", "fp8_e4m3", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3"],
                       platform="cpu")
    assert code == "KV405" and "needs CUDA" not in f.message
    assert f.fix.set == {} and f.fix.remove == ("prefill_kv_cache_dequant_dtype",)


def test_a_dtype_cause_keeps_its_kv4_code_and_fix():
    (code, f), = found(QWEN + ["--kv-cache-dtype", "nvfp4"], gpu="h100")
    assert code == "KV404" and f.fix.set == {"kv_cache_dtype": "fp8_e4m3"}


def test_the_kv4_refusal_behind_a_blocker_follows_the_every_possibility_rule():
    # Unknown model attention, 0.5.7 on sm90: trtllm_mla off Blackwell is a blocker for both; behind it the KV4
    # check refuses an MHA model only (trtllm_mla is on the MLA list), so only the blocker is certain ...
    private = ["--model-path", "my-org/private-model", "--kv-cache-dtype", "fp4_e2m1", "--attention-backend"]
    got = found(private + ["trtllm_mla"], sglang_version="0.5.7", gpu="h100")
    assert [c for c, _ in got] == ["KV407"]
    assert "MHA and MLA models" in got[0][1].detail  # the scope: in the headline where it fits
    # ... while a known MHA model has both.
    got = found(private + ["trtllm_mla"], sglang_version="0.5.7", gpu="h100", model_attention="mha")
    assert [c for c, _ in got] == ["KV407", "KV401"]
