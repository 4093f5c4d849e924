"""KV406 (kv4-dtype-name): KV cache dtype the target release does not accept, or no longer treats as FP4."""

from __future__ import annotations

from kv4lint.model import Severity
from kv4lint.rules.codes.base import Context, Example, Rule, Said, fp8_fix
from kv4lint.rules.phrases import backend_phrase
from kv4lint.sglang.options import kv_cache_dtype_choices
from kv4lint.sglang.releases import FIRST_KV4, FP4_E2M1, FP4_E2M1_REMOVED, FP4_RENAMED, label, release, version_label


def say(c: Context) -> Said:
    bp = backend_phrase(c.event.data.get("field", "attention_backend"), "tokenspeed_mla", c.args, None, c.machine,
                        c.model)
    return Said(f"{c.dflag} is not an FP4 KV cache in {c.label} with {bp}: SGLang silently replaces it with "
                "fp8_e4m3 (tokenspeed_mla requires fp8_e4m3); set fp8_e4m3 explicitly or choose another backend")


def name_refused(d: str, form: str, version: str | None, *, fp4_name: bool) -> str | None:
    """The message for a dtype ``version`` does not accept, or no longer treats as FP4; None when it does."""
    n = release(version)
    label = version_label(version)
    choices = kv_cache_dtype_choices(version)
    if n >= FP4_RENAMED:
        suggest = ("use fp4_mx_block16 (the same block-size-16 FP4 recipe, with its own backend rules) "
                   "or an fp8 KV cache")
    elif n >= FP4_E2M1:
        suggest = f"{label} spells its FP4 KV cache fp4_e2m1; use that or an fp8 KV cache"
    else:
        suggest = f"{label} has no FP4 KV cache; use an fp8 KV cache"
    if d not in choices:
        if not fp4_name:
            suggest = "use one of " + ", ".join(choices)
        if form == "argv":
            return (f"--kv-cache-dtype {d} is not a choice in {label}: its argument parser rejects it (invalid "
                    f"choice) before the server starts; {suggest}")
        return (f"kv_cache_dtype={d!r} is not a KV cache dtype of {label}: the Python API does not check choices, "
                f"so it fails at model-runner start (Unsupported kv_cache_dtype: {d}.); {suggest}")
    if FP4_RENAMED <= n < FP4_E2M1_REMOVED and d == "fp4_e2m1":
        return (f"--kv-cache-dtype fp4_e2m1 is deprecated in {label}: accepted by the parser, then refused at "
                "model-runner start (ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use "
                f"--kv-cache-dtype=fp4_mx_block16.); it is no longer an FP4 KV cache there; {suggest}")
    return None


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
    fix="Use an fp8 KV cache, or the FP4 name of the target release (the message says which).",
    fix_safety=(
        "Safe when the dtype is written at the launch site; unsafe otherwise. Values that are not FP4 names "
        "get no automatic fix."
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
