"""KV407 (launch-blocker): SGLang refuses the launch for a reason an fp8 KV cache does not change."""

from __future__ import annotations

import re

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import Context, Example, Rule, Said, no_fix
from kv4lint.rules.codes.kv404 import needs
from kv4lint.rules.phrases import arch_name, feature_phrase
from kv4lint.sglang.releases import FIRST_KV4, label


def say(c: Context) -> Said:
    args, field = c.args, c.field
    own = field in args.values and field != "kv_cache_dtype"  # the launch sets what SGLang refuses
    advice = "choose another backend" if "attention_backend" in field else "fix the cause SGLang names"
    if not own:
        return Said(f"{c.dflag} is not the cause: SGLang refuses this launch with any KV cache",
                    "kv_cache_dtype", "fix the cause SGLang names")
    feature = feature_phrase(field, args)
    general = f"{feature} is refused with any KV cache"
    if c.event.data.get("platform_rule") and (c.target.arch or c.machine.platform != "cuda"):
        where = arch_name(c.machine.arch) if c.target.arch else c.machine.platform
        return Said(f"{feature} fails on {where} with any KV cache", field, advice,
                    short=f"{feature} fails on {c.machine.arch or where} with any KV cache", general=general)
    if c.event.data.get("platform_rule"):  # one of the GPUs the target may be: the rules name which
        need = needs(c)[0]
        return Said(f"{feature} needs {need}, with any KV cache", field, advice,
                    short=f"{feature} needs {re.sub(r' [(][^()]*[)]', '', need)}", general=general)
    return Said(general, field, advice)


RULE = Rule(
    code="KV407",
    name="launch-blocker",
    severity=Severity.ERROR,
    summary="SGLang refuses the launch for a reason an fp8 KV cache does not change",
    what=(
        "Flags a launch with an FP4 KV cache that SGLang refuses before or beside its KV4 check for a reason the "
        "KV cache dtype does not cause: an attention backend the target GPU or platform cannot run (TRT-LLM MHA "
        "off SM100 before 0.5.19, TRT-LLM MLA or `tokenspeed_mla` off Blackwell, CuteDSL MLA off SM100 or as a "
        "prefill backend), `intel_xpu` as an MLA prefill backend (0.5.11-0.5.19), `fa4` as attention/decode "
        "backend in 0.5.7, `--prefill-only-disable-kv-cache` without `--is-embedding`. kv4lint finds these by "
        "replaying the launch with an fp8 KV cache: a refusal that stays is reported here. When SGLang's KV4 "
        "check would also refuse the launch once that cause is removed, that KV4 finding (KV401-KV406) is "
        "reported as well."
    ),
    why=(
        "SGLang stops at the first refusal in its argument resolution. An FP4 launch that fails there fails "
        "with an fp8 KV cache too, so rewriting the dtype (what KV401-KV406 offer) would not make it start; "
        "the cause SGLang names has to be fixed."
    ),
    fix=(
        "Fix the cause SGLang names: pick an attention backend the target runs (or leave the option out so that "
        "SGLang picks one), or target the GPU the backend needs. kv4lint offers no automatic fix: which "
        "backend is right is the user's call."
    ),
    fix_safety="No automatic fix.",
    since=label(FIRST_KV4),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_e2m1 "
                "--attention-backend trtllm_mha", ("--sglang-version", "0.5.7", "--gpu", "h100"),
                note="TRT-LLM MHA needs SM100 in 0.5.7, whatever the KV cache dtype"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_e2m1 "
                "--attention-backend trtllm_mha", ("--sglang-version", "0.5.7", "--gpu", "b200"), fires=False,
                note="the same launch on a B200"),
    ),
    say=say,
    fix_for=no_fix,
)
