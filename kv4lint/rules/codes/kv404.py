"""KV404 (kv4-gpu-arch): KV4 dtype that needs a GPU arch the target lacks."""

from __future__ import annotations

from kv4lint.model import Severity
from kv4lint.rules.codes.base import Context, Example, Rule, Said
from kv4lint.rules.phrases import arch_name


def say(c: Context) -> Said:
    src = c.target.sources.get("gpu")
    gpu = arch_name(c.machine.arch)
    msg = (f"{c.dflag} needs a GPU this target lacks ({gpu}{', from ' + src if src else ''}); {c.label} "
           f"{c.event.step} raises {c.sglang} Use an fp8 KV cache")
    anchor = "kv_cache_dtype"
    if c.event.data.get("platform_rule") and c.field in c.args.values:
        anchor = c.field
    return Said(msg, anchor)


RULE = Rule(
    code="KV404",
    name="kv4-gpu-arch",
    severity=Severity.ERROR,
    summary="KV4 dtype that needs a GPU arch the target lacks",
    what=(
        "Flags `--kv-cache-dtype nvfp4` on a GPU that is not Blackwell SM100/SM103 or SM120/SM121 (0.5.16+), "
        "native NVFP4 prefill off SM100 (0.5.21+), and the TRT-LLM MHA arch rules an FP4 launch runs into."
    ),
    why=(
        "SGLang raises `RuntimeError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120.` (or the "
        "matching prefill/TRT-LLM error) at server start. The GPU comes from `--gpu`, config, or `--platform "
        "auto` on the host."
    ),
    fix="Use an fp8 KV cache, or `fp4_mx_block16` where its backend rules allow it.",
    fix_safety="Safe when the dtype is written at the launch site; unsafe otherwise.",
    since="0.5.16",
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--gpu", "h100"), note="nvfp4 needs a Blackwell GPU"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--gpu", "b200"), fires=False, note="the same launch on a Blackwell GPU"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
                ("--gpu", "h100"), fires=False, note="fixed: an fp8 KV cache"),
    ),
    say=say,
)
