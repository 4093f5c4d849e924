"""KV405 (kv4-feature): FP4 (KV4) KV cache with a feature SGLang refuses with it."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import WARNING_FIX, Context, Example, Rule, Said, fp8_fix
from kv4lint.rules.phrases import feature_phrase
from kv4lint.sglang.releases import PREFILL_ONLY_DISABLE_KV_CACHE, label


def say(c: Context) -> Said:
    ev, args = c.event, c.args
    if ev.step == "handle_nvfp4_prefill_kv_dequant_dtype":
        anchor = "prefill_kv_cache_dequant_dtype"
        dtype = c.dflag.split(' ', 1)[-1] if args.form == 'argv' else c.dflag
        return Said(f"{feature_phrase(anchor, args)} needs an nvfp4 KV cache, not {dtype}", anchor, "remove it")
    feature = ev.data.get("feature") or feature_phrase(c.field, args)
    dtype = c.dflag.split(" ", 1)[-1] if args.form == "argv" else c.dflag.split("=", 1)[-1].strip("'")
    anchor = c.field if c.field in args.values and c.field != "kv_cache_dtype" else "kv_cache_dtype"
    return Said(f"{c.dflag} is refused with {feature}", anchor, c.use_fix, "Or turn the feature off",
                short=f"{feature} is refused with an {dtype} KV cache" if anchor != "kv_cache_dtype" else "")


RULE = Rule(
    code="KV405",
    name="kv4-feature",
    severity=Severity.ERROR,
    summary="FP4 (KV4) KV cache with a feature SGLang refuses with it",
    what=(
        "Flags an FP4 KV cache combined with a feature SGLang refuses with it: unified memory, PD "
        "disaggregation, hierarchical cache / LMCache and unsupported speculative-decoding settings with "
        "native NVFP4 on SM100 (0.5.21+), `--prefill-only-disable-kv-cache` (0.5.12+), DeepSeek sparse-"
        "attention (DSA/NSA) and DeepSeek-V4 models, and `--prefill-kv-cache-dequant-dtype` without `nvfp4`."
    ),
    why=(
        "SGLang raises a ValueError or AssertionError naming the feature at server start: the FP4 pool's "
        "block scales are not supported by these code paths yet."
    ),
    fix=(
        "Use an fp8 KV cache (the fix also drops `--prefill-kv-cache-dequant-dtype`, which exists only for "
        "NVFP4), or turn the feature off."
    ),
    fix_safety="Safe when the dtype is written at the launch site; unsafe otherwise." + WARNING_FIX,
    since=label(PREFILL_ONLY_DISABLE_KV_CACHE),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4 \\\n"
                "    --enable-unified-memory", ("--gpu", "b200")),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4 \\\n"
                "    --enable-unified-memory", ("--sglang-version", "0.5.23"),
                note="no GPU named: on every GPU where nvfp4 is possible, unified memory is the cause"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 \\\n"
                "    --prefill-kv-cache-dequant-dtype fp8_e4m3", ("--platform", "cpu"),
                note="the prefill dequant option exists only for nvfp4, on any platform"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 \\\n"
                "    --enable-unified-memory", ("--gpu", "b200"), fires=False, note="fixed: an fp8 KV cache"),
    ),
    say=say,
    fix_for=fp8_fix,
)
