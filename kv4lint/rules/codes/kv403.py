"""KV403 (kv4-mixed-backends): FP4 (KV4) KV cache with different prefill and decode backends."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import Context, Example, Rule, Said, no_fix
from kv4lint.sglang.releases import FIRST_KV4, label


def say(c: Context) -> Said:
    P, D = c.event.data.get("P"), c.event.data.get("D")
    anchor = ("prefill_attention_backend" if "prefill_attention_backend" in c.args.values
              else "decode_attention_backend")
    if anchor not in c.args.values:
        anchor = "kv_cache_dtype"
    return Said(f"{c.dflag} with prefill {P}, decode {D} is untested", anchor, "use one backend",
                f"Different prefill and decode backends skip the KV4 backend check of {c.release}, which only warns "
                "that compatibility issues may occur in rare edge cases: the combination is untested with an FP4 KV "
                "cache. Use one backend from the KV4 list for both, or an fp8 KV cache",
                short=f"prefill {P}, decode {D} is untested with FP4")


RULE = Rule(
    code="KV403",
    name="kv4-mixed-backends",
    severity=Severity.WARNING,
    summary="FP4 (KV4) KV cache with different prefill and decode backends",
    what=(
        "Flags an FP4 KV cache whose prefill and decode attention backends differ (and prefill is not `fa4`),"
        " except the NVFP4 recipe SGLang supports (prefill `flashinfer` with decode `trtllm_mha`, 0.5.21+)."
    ),
    why=(
        "SGLang skips its backend check in this case and only logs `Attention: Using KV4 with PREFILL = ... "
        "and DECODE = .... Compatibility issues are unlikely, but may occur in rare edge cases.` The "
        "combination is untested with FP4."
    ),
    fix=(
        "Use one backend for prefill and decode from the KV4 list, or an fp8 KV cache. No automatic fix: "
        "which backend is right is the user's call."
    ),
    fix_safety="No automatic fix.",
    since=label(FIRST_KV4),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
                "    --prefill-attention-backend flashinfer --decode-attention-backend triton", ("--gpu", "b200")),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
                "    --attention-backend triton", ("--gpu", "b200"), fires=False,
                note="fixed: one backend from the KV4 list for prefill and decode"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--gpu", "rtx5090"), fires=False,
                note="SGLang's own NVFP4 recipe (prefill flashinfer, decode trtllm_mha) is not reported"),
    ),
    say=say,
    fix_for=no_fix,
)
