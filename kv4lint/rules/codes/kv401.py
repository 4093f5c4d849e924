"""KV401 (kv4-backend): FP4 (KV4) KV cache with an attention backend SGLang rejects for it."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import WARNING_FIX, Context, Example, Rule, Said, fp8_fix, join_sentences
from kv4lint.rules.phrases import backend_phrase, derived_by, derived_note
from kv4lint.sglang.releases import FIRST_KV4, label


def say(c: Context) -> Said:
    ev, args = c.event, c.args
    backend = ev.data.get("backend")
    allowed = ev.data.get("allowed")
    derived = derived_by(c.field, backend, args, ev)
    bp = backend_phrase(c.field, backend, args, derived, c.machine, c.model) if backend else \
        "its attention backend"
    notes = [derived_note(derived, backend, c.machine, c.model)] if backend and derived else []
    # Short, yet never the user's words for SGLang's pick: ``SGLang's default backend flashinfer`` when the launch
    # does not set it.
    short = f"{c.dflag} is refused with {bp if derived else backend}" if backend else ""
    if allowed and ev.step.endswith("kv4_compatibility"):
        att = ev.data.get("attention", c.model.attention or "")
        if ev.data.get("which") == "decode":
            pf = "--prefill-attention-backend fa4" if args.form == "argv" else "prefill_attention_backend='fa4'"
            bp = f"{pf} and decode backend {backend}"
            short = f"{c.dflag} is refused with prefill fa4 and decode {backend}"
        notes.append(f"{c.release} allows {', '.join(allowed)} for {att.upper()} models")
    elif allowed:
        notes.append(f"{c.release} allows {', '.join(allowed)} there")
    elif "dtype_allowed" in ev.data:
        notes.append("Or choose a backend that supports an FP4 KV cache")
    anchor = "kv_cache_dtype"
    if (c.field in args.values and not derived and c.field != "kv_cache_dtype"
            and not ev.step.endswith("kv4_compatibility")):
        anchor = c.field
    return Said(f"{c.dflag} is refused with {bp}", anchor, c.use_fix,
                join_sentences(*notes, "Or choose one of those backends" if allowed else ""),
                short=short, general=f"{c.dflag} is refused with {_picked(derived)}")


def _picked(derived: str | None) -> str:
    """The backends a launch runs on several GPUs, in one phrase true of each."""
    if not derived:
        return "its attention backends"
    return "SGLang's default backends" if derived == "default attention backend" else "the backends SGLang picks"


RULE = Rule(
    code="KV401",
    name="kv4-backend",
    severity=Severity.ERROR,
    summary="FP4 (KV4) KV cache with an attention backend SGLang rejects for it",
    what=(
        "Flags an FP4 KV cache (`--kv-cache-dtype fp4_e2m1` before 0.5.16, `nvfp4`/`fp4_mx_block16` from "
        "0.5.16) combined with an attention backend that the target SGLang release refuses for FP4: the "
        "backend lists of SGLang's KV4 check (MHA, MLA, and the decode lists when prefill is `fa4`), the "
        "NVFP4 prefill/decode backend requirements (0.5.21+), and the backend rules that reject FP4 before "
        "the KV4 check runs (TRT-LLM MLA from 0.5.16, CuteDSL MLA, `tokenspeed_mla` before 0.5.23, `fa4` as "
        "attention/decode backend in 0.5.7). The backend may be one you set or the one SGLang picks by "
        "default for the target GPU and model."
    ),
    why=(
        "SGLang's FP4 KV cache is implemented by a few attention kernels only. Its `ServerArgs` resolution "
        "asserts that the effective backend is one of them (`KV4 MHA expects attention_backend to be one of "
        "[...]`) and raises at server start, after the job was scheduled and the model loaded."
    ),
    fix=(
        "Set the KV cache to fp8 (`--kv-cache-dtype fp8_e4m3`, or `--fix-dtype`), or pick a backend from the "
        "list in the finding's detail (`--format full`, JSON/SARIF `detail`)."
    ),
    fix_safety=(
        "Safe when the dtype is written at the launch site; unsafe when it comes from a variable or constant "
        "that other code also uses." + WARNING_FIX
    ),
    since=label(FIRST_KV4),
    examples=(
        Example("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
                "    --kv-cache-dtype fp4_mx_block16 --attention-backend flashinfer", ("--gpu", "b200"),
                note="flashinfer is not on SGLang's KV4 list for MHA models"),
        Example("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
                "    --kv-cache-dtype fp4_mx_block16", ("--gpu", "h100"),
                note="no backend named: SGLang's default on Hopper (fa3) is not on the KV4 list"),
        Example("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
                "    --kv-cache-dtype fp8_e4m3 --attention-backend flashinfer", ("--gpu", "b200"), fires=False,
                note="fixed: an fp8 KV cache"),
        Example("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
                "    --kv-cache-dtype fp4_mx_block16 --attention-backend triton", ("--gpu", "b200"), fires=False,
                note="fixed: a backend from the KV4 list"),
    ),
    say=say,
    fix_for=fp8_fix,
)
