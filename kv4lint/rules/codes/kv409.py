"""KV409 (unknown-build): a launch written for an SGLang build kv4lint does not know."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import Example, Rule, no_fix
from kv4lint.sglang.releases import FIRST_KV4, label

RULE = Rule(
    code="KV409",
    name="unknown-build",
    severity=Severity.WARNING,
    summary="Launch for an SGLang build kv4lint does not know",
    what=(
        "When no SGLang release is stated (no `--sglang-version`, `sglang-version` setting, versioned image tag or "
        "pin, so kv4lint judges by its newest rule pack), reports once per launch whose KV4 verdict depends on the "
        "build (an FP4 KV cache dtype of any release, a dtype no release has, `--prefill-kv-cache-dequant-dtype`, "
        "or an option no release has that names the KV cache; a bf16 or fp8 KV cache has no KV4 verdict on any "
        "build, so it gets nothing) the evidence that the launch was written for another build: options or values "
        "that no release kv4lint "
        "knows has, an SGLang image tagged `dev`, `nightly`, `latest` or `main` (a dated nightly, "
        "`nightly-dev-cu13-20260901-…`, is judged by the releases published around its day; only one newer than "
        "every release kv4lint knows is evidence), and installs of SGLang from git or source in the repository. "
        "`--show-target` shows the same evidence."
    ),
    why=(
        "kv4lint's rules are SGLang's rules release by release. A launch written for a development build may use "
        "options the newest release lacks, and a dtype name that the newest release refuses may be right for that "
        "build: the findings hold for the newest release, not necessarily for the build. Spelling fixes (KV406) "
        "are therefore never safe while the release is inferred."
    ),
    fix=(
        "State the release the launch targets: `--sglang-version`, `sglang-version` in `[tool.kv4lint]`, a "
        "versioned image tag or a pin of sglang. Options or values no release has are a fork's own (ktransformers' "
        "`sglang-kt` adds `--kt-*` options): mark them with `fork-options` in `[tool.kv4lint]` (`fork-options = "
        "[\"--kt-*\"]`, `\"--attention-backend=kt_*\"` for a value), and state the release the fork is based on if "
        "it is known; a stock release stated alone would report each of them as refused (KV408)."
    ),
    fix_safety="No automatic fix.",
    since=label(FIRST_KV4),
    examples=(
        Example("docker run --gpus all lmsysorg/sglang:dev \\\n"
                "    python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                "--kv-cache-dtype fp4_mx_block16 --attention-backend triton",
                note="a development image, no release stated, an FP4 KV cache"),
        Example("docker run --gpus all lmsysorg/sglang:v0.5.23-cu129 \\\n"
                "    python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                "--kv-cache-dtype fp4_mx_block16 --attention-backend triton", fires=False,
                note="fixed: a versioned image states the release"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kt-cpuinfer 60 "
                "--kt-gpu-prefill-token-threshold 4096 --kv-cache-dtype bf16", fires=False,
                note="a fork's options with a bf16 KV cache: no KV4 verdict on any build"),
    ),
    fix_for=no_fix,
)
