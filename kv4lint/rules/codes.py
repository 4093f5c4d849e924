"""kv4lint's rules: code, severity, and the text of ``kv4lint explain`` and the docs."""

from __future__ import annotations

from dataclasses import dataclass

from kv4lint.model import Severity


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fixed_example: str
    fix: str
    fix_safety: str
    since: str


RULES: dict[str, Rule] = {r.code: r for r in [
    Rule(
        "KV401", "kv4-backend", Severity.ERROR,
        "KV4 cache with an attention backend SGLang rejects for it",
        "Flags an FP4 KV cache (`--kv-cache-dtype fp4_e2m1` before 0.5.16, `nvfp4`/`fp4_mx_block16` from 0.5.16) "
        "combined with an attention backend that the target SGLang release refuses for FP4: the backend lists of "
        "SGLang's KV4 check (MHA, MLA, and the decode lists when prefill is `fa4`), the NVFP4 prefill/decode backend "
        "requirements (0.5.21+), and the backend rules that reject FP4 before the KV4 check runs (TRT-LLM MLA from "
        "0.5.16, CuteDSL MLA, `tokenspeed_mla` before 0.5.23, `fa4` as attention/decode backend in 0.5.7). The "
        "backend may be one you set or the one SGLang picks by default for the target GPU and model.",
        "SGLang's FP4 KV cache is implemented by a few attention kernels only. Its `ServerArgs` resolution asserts "
        "that the effective backend is one of them (`KV4 MHA expects attention_backend to be one of [...]`) and "
        "raises at server start, after the job was scheduled and the model loaded.",
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
        "    --kv-cache-dtype fp4_mx_block16 --attention-backend flashinfer",
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
        "    --kv-cache-dtype fp8_e4m3 --attention-backend flashinfer",
        "Set the KV cache to fp8 (`--kv-cache-dtype fp8_e4m3`, or `--fix-dtype`), or pick a backend from the list "
        "in the message.",
        "Safe when the dtype is written at the launch site; unsafe when it comes from a variable or constant that "
        "other code also uses.",
        "0.5.7",
    ),
    Rule(
        "KV402", "kv4-non-cuda", Severity.ERROR,
        "KV4 cache on a non-CUDA platform",
        "Flags an FP4 KV cache in a launch that targets ROCm, XPU, NPU, CPU, MPS, MUSA or HPU: from `--device`, "
        "platform environment variables (`HIP_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `ASCEND_RT_VISIBLE_DEVICES`, ...), "
        "container images (`...-rocm...`), or `--platform`/config.",
        "SGLang raises `RuntimeError: KV4 is not tested on non-CUDA platforms.` unless torch is a CUDA build on a CUDA "
        "machine (`torch.version.cuda` set). Its check reads the machine, not `--device`; kv4lint treats the launch's "
        "platform hints as the machine it will run on. From 0.5.21 an `nvfp4` launch off CUDA usually fails even "
        "earlier, in the TRT-LLM MHA platform rule that the NVFP4 prefill step triggers.",
        "HIP_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
        "--kv-cache-dtype fp4_mx_block16",
        "HIP_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
        "Use an fp8 KV cache (`--kv-cache-dtype fp8_e4m3`); FP4 KV caches exist only on CUDA.",
        "Safe when the dtype is written at the launch site (the only safe fix: the platform is not the launch's to "
        "change).",
        "0.5.7",
    ),
    Rule(
        "KV403", "kv4-mixed-backends", Severity.WARNING,
        "KV4 cache with different prefill and decode backends",
        "Flags an FP4 KV cache whose prefill and decode attention backends differ (and prefill is not `fa4`), except "
        "the NVFP4 recipe SGLang supports (prefill `flashinfer` with decode `trtllm_mha`, 0.5.21+).",
        "SGLang skips its backend check in this case and only logs `Attention: Using KV4 with PREFILL = ... and "
        "DECODE = .... Compatibility issues are unlikely, but may occur in rare edge cases.` The combination is "
        "untested with FP4.",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
        "    --prefill-attention-backend flashinfer --decode-attention-backend triton",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
        "    --attention-backend triton",
        "Use one backend for prefill and decode from the KV4 list, or an fp8 KV cache. No automatic fix: which "
        "backend is right is the user's call.",
        "No automatic fix.",
        "0.5.7",
    ),
    Rule(
        "KV404", "kv4-gpu-arch", Severity.ERROR,
        "KV4 dtype that needs a GPU arch the target lacks",
        "Flags `--kv-cache-dtype nvfp4` on a GPU that is not Blackwell SM100/SM103 or SM120/SM121 (0.5.16+), native "
        "NVFP4 prefill off SM100 (0.5.21+), and the TRT-LLM MHA arch rules an FP4 launch runs into.",
        "SGLang raises `RuntimeError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120.` (or the matching "
        "prefill/TRT-LLM error) at server start. The GPU comes from `--gpu`, config, or `--platform auto` on the host.",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4   # on an H100",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
        "Use an fp8 KV cache, or `fp4_mx_block16` where its backend rules allow it.",
        "Safe when the dtype is written at the launch site; unsafe otherwise.",
        "0.5.16",
    ),
    Rule(
        "KV405", "kv4-feature", Severity.ERROR,
        "KV4 cache with a feature SGLang refuses with it",
        "Flags an FP4 KV cache combined with a feature SGLang refuses with it: unified memory, PD disaggregation, "
        "hierarchical cache / LMCache and unsupported speculative-decoding settings with native NVFP4 on SM100 "
        "(0.5.21+), `--prefill-only-disable-kv-cache` (0.5.12+), DeepSeek sparse-attention (DSA/NSA) and DeepSeek-V4 "
        "models, and `--prefill-kv-cache-dequant-dtype` without `nvfp4`.",
        "SGLang raises a ValueError or AssertionError naming the feature at server start: the FP4 pool's block "
        "scales are not supported by these code paths yet.",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4 --enable-unified-memory",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 --enable-unified-memory",
        "Use an fp8 KV cache (the fix also drops `--prefill-kv-cache-dequant-dtype`, which exists only for NVFP4), or "
        "turn the feature off.",
        "Safe when the dtype is written at the launch site; unsafe otherwise.",
        "0.5.12",
    ),
    Rule(
        "KV406", "kv4-dtype-name", Severity.ERROR,
        "KV cache dtype the target release does not accept, or no longer treats as FP4",
        "Flags a `--kv-cache-dtype` value that is not a choice of the target SGLang release (`nvfp4` before 0.5.16, "
        "`fp4_e2m1` from 0.5.21), `fp4_e2m1` on 0.5.16–0.5.20 (accepted, then refused at model-runner start), and "
        "an FP4 dtype that 0.5.23 silently replaces with fp8 (`tokenspeed_mla`).",
        "SGLang renamed its FP4 KV cache: `fp4_e2m1` became `nvfp4` / `fp4_mx_block16` in 0.5.16, was deprecated "
        "(`--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.`) and removed from the "
        "choices in 0.5.21. argparse rejects an unknown choice; the Python API fails later with `Unsupported "
        "kv_cache_dtype`.",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_e2m1   # SGLang 0.5.21+",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
        "Use an fp8 KV cache, or the FP4 name of the target release (the message says which).",
        "Safe when the dtype is written at the launch site; unsafe otherwise. Values that are not FP4 names get no "
        "automatic fix.",
        "0.5.7",
    ),
    Rule(
        "KV408", "parser-refusal", Severity.ERROR,
        "An option or value the target release's argument parser refuses",
        "Checks every option and value of a launch that names a KV cache option or a `--config` file against the "
        "argument parser of the target SGLang release: an option the release does not have (with the nearest "
        "option it does have, and the releases that have it), a prefix of several options, a value outside an "
        "option's choices, an option without its value, a value given to an option that takes none. Prefixes "
        "that match one option are accepted, as SGLang's parser accepts them. `--kv-cache-dtype` values are "
        "KV406's. Launches of the bench scripts are checked for values only: they add options of their own.",
        "`python -m sglang.launch_server` and `sglang serve` read their arguments with argparse, which stops with "
        "`error: unrecognized arguments`, `invalid choice` or `expected one argument` before anything else runs: "
        "that is the error the user meets first, whatever the KV cache. KV cache findings for the same launch are "
        "reported only where they would still hold once the parser error is put right, and a fix that leaves a "
        "refused launch is not safe.",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 \\\n"
        "    --fp4-kv-cache-recipe nvfp4   # SGLang 0.5.23",
        "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
        "Spell the option as the release does (the message names the nearest one), remove an option the release "
        "does not have, or state the release the launch was written for (`--sglang-version`). No automatic fix: "
        "which correction is meant is the user's call.",
        "No automatic fix.",
        "0.5.5",
    ),
    Rule(
        "KV409", "unknown-build", Severity.WARNING,
        "Launch for an SGLang build kv4lint does not know",
        "When no SGLang release is stated (no `--sglang-version`, `sglang-version` setting, versioned image tag or "
        "pin, so kv4lint judges by its newest rule pack), reports once per launch that names a KV cache option "
        "the evidence that the launch was written for another build: options or values that no release kv4lint "
        "knows has, an SGLang image tagged `dev`, `nightly`, `latest` or `main`, and installs of SGLang from git "
        "or source in the repository. `--show-target` shows the same evidence.",
        "kv4lint's rules are SGLang's rules release by release. A launch written for a development build may use "
        "options the newest release lacks, and a dtype name that the newest release refuses may be right for that "
        "build: the findings hold for the newest release, not necessarily for the build. Spelling fixes (KV406) "
        "are therefore never safe while the release is inferred.",
        "docker run --gpus all lmsysorg/sglang:dev \\\n"
        "    python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --kv-cache-dtype fp8_e4m3",
        "docker run --gpus all lmsysorg/sglang:v0.5.23-cu129 \\\n"
        "    python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --kv-cache-dtype fp8_e4m3",
        "State the release the launch targets: `--sglang-version`, `sglang-version` in `[tool.kv4lint]`, a "
        "versioned image tag or a pin of sglang.",
        "No automatic fix.",
        "0.5.5",
    ),
]}

INTERNAL_CODE = "KV400"  # internal failures surfaced as a finding (flake8 plugin)
