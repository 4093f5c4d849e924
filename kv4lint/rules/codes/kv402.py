"""KV402 (kv4-non-cuda): FP4 (KV4) KV cache on a non-CUDA platform."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import HEADLINE, WARNING_FIX, Context, Example, Rule, Said, fp8_fix, join_sentences
from kv4lint.sglang.releases import FIRST_KV4, label


def say(c: Context) -> Said:
    reason = c.target.platform_reason or c.target.sources.get("platform", "")
    notes = []
    if "device" in reason:
        notes.append("SGLang checks the machine's torch build, not --device; kv4lint takes the launch's device as "
                     "its target")
    if not c.event.step.endswith("kv4_compatibility"):
        notes.append(f"The FP4 KV cache makes {c.release} pick a backend that runs only on NVIDIA GPUs, which it "
                     "refuses before its KV4 check (\"KV4 is not tested on non-CUDA platforms\")")
    said = Said(f"{c.dflag} needs CUDA, not {c.machine.platform} ({reason})" if reason else
                f"{c.dflag} needs CUDA, not {c.machine.platform}", "kv_cache_dtype", c.use_fix)
    if reason and len(said.headline()) > HEADLINE:
        said.message = f"{c.dflag} needs CUDA, not {c.machine.platform}"
        notes.insert(0, f"The platform comes from {reason}")
    said.detail = join_sentences(*notes)
    return said


RULE = Rule(
    code="KV402",
    name="kv4-non-cuda",
    severity=Severity.ERROR,
    summary="FP4 (KV4) KV cache on a non-CUDA platform",
    what=(
        "Flags an FP4 KV cache in a launch that targets ROCm, XPU, NPU, CPU, MPS, MUSA or HPU: from "
        "`--device`, platform environment variables (`HIP_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, "
        "`ASCEND_RT_VISIBLE_DEVICES`, ...), container images (`...-rocm...`), or `--platform`/config."
    ),
    why=(
        "SGLang raises `RuntimeError: KV4 is not tested on non-CUDA platforms.` unless torch is a CUDA build "
        "on a CUDA machine (`torch.version.cuda` set). Its check reads the machine, not `--device`; kv4lint "
        "treats the launch's platform hints as the machine it will run on. From 0.5.21 an `nvfp4` launch off "
        "CUDA usually fails even earlier, in the TRT-LLM MHA platform rule that the NVFP4 prefill step "
        "triggers."
    ),
    fix="Use an fp8 KV cache (`--kv-cache-dtype fp8_e4m3`); FP4 KV caches exist only on CUDA.",
    fix_safety=(
        "Safe when the dtype is written at the launch site (the only safe fix: the platform is not the "
        "launch's to change)." + WARNING_FIX
    ),
    since=label(FIRST_KV4),
    examples=(
        Example("HIP_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
                "    --kv-cache-dtype fp4_mx_block16", ("--sglang-version", "0.5.23"),
                note="the platform comes from the launch: HIP_VISIBLE_DEVICES means ROCm"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
                "    --device xpu", ("--sglang-version", "0.5.23")),
        Example("HIP_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
                "    --kv-cache-dtype fp8_e4m3", ("--sglang-version", "0.5.23"), fires=False,
                note="fixed: an fp8 KV cache"),
    ),
    say=say,
    fix_for=fp8_fix,
)
