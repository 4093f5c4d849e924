"""KV404 (kv4-gpu-arch): FP4 (KV4) KV cache dtype that needs a GPU arch the target lacks."""

from __future__ import annotations

import re

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import WARNING_FIX, Context, Example, Rule, Said, fp8_fix, join_sentences
from kv4lint.rules.phrases import arch_name
from kv4lint.sglang.gpus import arch_major
from kv4lint.sglang.releases import FP4_RENAMED, label


# What each of SGLang's GPU-arch refusals needs, in the user's terms (by the start of SGLang's message): the GPU
# for the headline, and why for the detail.
# The GPU majors each one accepts.
NEEDS = (
    ("--kv-cache-dtype=nvfp4 requires", "Blackwell (SM100/SM120)", "", (10, 12)),
    ("Native NVFP4 prefill currently requires SM100", "SM100 (B200, GB200) for native NVFP4 prefill", "", (10,)),
    ("TRTLLM MHA backend for decode", "Hopper, Blackwell or SM120",
     "Its decode runs on the TRT-LLM MHA backend {via}", (9, 10, 12)),
    ("TRTLLM MHA backend for prefill requires", "Hopper, Blackwell or SM120",
     "Its prefill runs on the TRT-LLM MHA backend {via}", (9, 10, 12)),
    ("TRTLLM MHA backend", "SM100 (B200, GB200)", "It runs on the TRT-LLM MHA backend {via}", (10,)),
    ("TRTLLM MLA backend is only supported on Blackwell GPUs (SM100)", "SM100 (B200, GB200)", "", (10,)),
    ("TRTLLM MLA backend is only supported on Blackwell", "Blackwell (SM100, SM110, SM12x)", "", (10, 11, 12)),
    ("tokenspeed_mla backend is only supported on Blackwell", "Blackwell (SM100, SM110, SM12x)", "", (10, 11, 12)),
    ("CuteDSL MLA backend is only supported on Blackwell GPUs (SM100)", "SM100 (B200, GB200)", "", (10,)),
)


def needs(c: Context) -> tuple[str, str]:
    """What the launch needs, in the user's terms, from SGLang's refusal; and why, for the detail."""
    via = "(SGLang's choice for this FP4 KV cache)" if c.field not in c.args.values else "(set by this launch)"
    for start, phrase, why, _majors in NEEDS:
        if c.event.sglang.startswith(start):
            return phrase, why.format(via=via)
    return "a GPU arch this target lacks", ""


def needs_holds(c: Context) -> bool:
    """Whether what this refusal needs rules out every arch in ``c.refused`` (it is true of all of them)."""
    majors = next((m for start, _p, _w, m in NEEDS if c.event.sglang.startswith(start)), None)
    return majors is not None and all(arch_major(a) not in majors for a in c.refused)


def say(c: Context) -> Said:
    src = c.target.sources.get("gpu")
    need, why = needs(c)
    notes = [why]
    if c.target.arch:  # never print an assumed arch as the target's
        msg = f"{c.dflag} needs {need}, not {arch_name(c.machine.arch)}"
        if src:
            notes.append(f"The GPU comes from {src}")
    else:
        msg = f"{c.dflag} needs {need}"
    anchor = "kv_cache_dtype"
    if c.event.data.get("platform_rule") and c.field in c.args.values:
        anchor = c.field
    return Said(msg, anchor, c.use_fix, join_sentences(*notes),
                short=f"{c.dflag} needs {re.sub(r' [(][^()]*[)]', '', need)}"
                      + (f", not {c.machine.arch}" if c.target.arch and c.machine.arch else ""),
                **_general(c, need))


def _general(c: Context, need: str) -> dict:
    """What the launch needs on every arch ``c.refused``: this refusal's need where it rules them all out, else
    the GPUs that accept the launch."""
    if needs_holds(c):
        return {"general": f"{c.dflag} needs {need}"}
    return {"general": f"{c.dflag} needs {c.accepted}", "general_own": False} if c.accepted else {}


RULE = Rule(
    code="KV404",
    name="kv4-gpu-arch",
    severity=Severity.ERROR,
    summary="FP4 (KV4) KV cache dtype that needs a GPU arch the target lacks",
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
    fix_safety="Safe when the dtype is written at the launch site; unsafe otherwise." + WARNING_FIX,
    since=label(FP4_RENAMED),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--gpu", "h100"), note="nvfp4 needs a Blackwell GPU"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4",
                ("--gpu", "b200"), fires=False, note="the same launch on a Blackwell GPU"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
                ("--gpu", "h100"), fires=False, note="fixed: an fp8 KV cache"),
    ),
    say=say,
    fix_for=fp8_fix,
)
