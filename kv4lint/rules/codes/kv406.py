"""KV406 (kv4-dtype-name): KV cache dtype the target release does not accept, or no longer treats as FP4."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import WARNING_FIX, Context, Example, Rule, Said, fp8_fix, join_sentences
from kv4lint.rules.phrases import backend_phrase
from kv4lint.sglang.options import kv_cache_dtype_choices
from kv4lint.sglang.releases import FIRST_KV4, FP4_E2M1, FP4_E2M1_REMOVED, FP4_RENAMED, label, release, version_label


def say(c: Context) -> Said:
    bp = backend_phrase(c.event.data.get("field", "attention_backend"), "tokenspeed_mla", c.args, None, c.machine,
                        c.model)
    return Said(f"{c.dflag} silently becomes fp8_e4m3 with tokenspeed_mla", "kv_cache_dtype",
                "set fp8_e4m3", f"SGLang replaces it: {bp} requires fp8_e4m3. Or choose another backend",
                short=f"{c.dflag} silently becomes fp8_e4m3")


def name_refused(d: str, form: str, version: str | None, *, fp4_name: bool,
                 fix_dtype: str = "fp8_e4m3") -> Said | None:
    """What to say of a dtype ``version`` does not accept, or no longer treats as FP4; None when it does."""
    n = release(version)
    choices = kv_cache_dtype_choices(version)
    deprecated = FP4_RENAMED <= n < FP4_E2M1_REMOVED and d == "fp4_e2m1"
    if d in choices and not deprecated:
        return None  # (asked of every launch whose release is inferred: the words are made for a refusal only)
    label = version_label(version)
    if n >= FP4_RENAMED:
        other = f"{label} spells its FP4 KV cache fp4_mx_block16 (the same block-size-16 recipe, with its own " \
                "backend rules) or nvfp4"
    elif n >= FP4_E2M1:
        other = f"{label} spells its FP4 KV cache fp4_e2m1"
    else:
        other = f"{label} has no FP4 KV cache"
    advice = f"use {fix_dtype}"
    if d not in choices:
        if not fp4_name:
            advice, other = "use one of its choices", f"The choices of {label}: {', '.join(choices)}"
        if form == "argv":
            return Said(f"--kv-cache-dtype {d} is not a choice in {label}", "kv_cache_dtype", advice,
                        join_sentences("Its argument parser rejects it (invalid choice) before the server starts",
                                       other))
        return Said(f"kv_cache_dtype={d!r} is not a KV cache dtype of {label}", "kv_cache_dtype", advice,
                    join_sentences("The Python API does not check choices, so it fails at model-runner start "
                                   f"(Unsupported kv_cache_dtype: {d}.)", other))
    return Said(f"--kv-cache-dtype fp4_e2m1 is deprecated in {label}", "kv_cache_dtype", advice,  # (in its choices)
                join_sentences("Accepted by the parser, then refused at model-runner start (ValueError: "
                               "--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.)",
                               "It is no longer an FP4 KV cache there", other))


RULE = Rule(
    code="KV406",
    name="kv4-dtype-name",
    severity=Severity.ERROR,
    summary="KV cache dtype the target release does not accept, or no longer treats as FP4",
    what=(
        "Flags a `--kv-cache-dtype` value that is not a choice of the target SGLang release (`nvfp4` before "
        "0.5.16, `fp4_e2m1` from 0.5.21), `fp4_e2m1` on 0.5.16–0.5.20 (accepted, then refused at model-runner"
        " start), and an FP4 dtype that 0.5.23 silently replaces with fp8 (`tokenspeed_mla`)."
    ),
    why=(
        "SGLang renamed its FP4 KV cache: `fp4_e2m1` became `nvfp4` / `fp4_mx_block16` in 0.5.16, was "
        "deprecated (`--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.`) and "
        "removed from the choices in 0.5.21. argparse rejects an unknown choice; the Python API fails later "
        "with `Unsupported kv_cache_dtype`."
    ),
    fix="Use an fp8 KV cache, or the FP4 name of the target release (the finding's detail says which).",
    fix_safety=(
        "Safe when the dtype is written at the launch site; unsafe otherwise. Values that are not FP4 names "
        "get no automatic fix." + WARNING_FIX
    ),
    since=label(FIRST_KV4),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_e2m1",
                ("--sglang-version", "0.5.21"), note="fp4_e2m1 is no longer a choice from 0.5.21"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--sglang-version", "0.5.21", "--gpu", "b200"), fires=False,
                note="fixed: the FP4 name of the target release"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_e2m1 \\\n"
                "    --attention-backend triton", ("--sglang-version", "0.5.14", "--gpu", "b200"), fires=False,
                note="fp4_e2m1 is the FP4 name before 0.5.16"),
    ),
    say=say,
    fix_for=fp8_fix,
)
