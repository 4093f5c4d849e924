"""KV408 (parser-refusal): an option or value the target release's argument parser refuses."""

from __future__ import annotations

from kv4lint.base.model import Severity
from kv4lint.rules.codes.base import Example, Rule, no_fix
from kv4lint.sglang.releases import FIRST_KV4, label

RULE = Rule(
    code="KV408",
    name="parser-refusal",
    severity=Severity.ERROR,
    summary="An option or value the target release's argument parser refuses",
    what=(
        "Checks every option and value of a launch that names a KV cache option or a `--config` file against the "
        "argument parser of the target SGLang release: an option the release does not have (with the nearest "
        "option it does have, and the releases that have it), a prefix of several options, a value outside an "
        "option's choices, an option without its value, a value given to an option that takes none. Prefixes "
        "that match one option are accepted, as SGLang's parser accepts them. `--kv-cache-dtype` values are "
        "KV406's. Launches of the bench scripts are checked for values only: they add options of their own."
    ),
    why=(
        "`python -m sglang.launch_server` and `sglang serve` read their arguments with argparse, which stops with "
        "`error: unrecognized arguments`, `invalid choice` or `expected one argument` before anything else runs: "
        "that is the error the user meets first, whatever the KV cache. KV cache findings for the same launch are "
        "reported only where they would still hold once the parser error is put right, and a fix that leaves a "
        "refused launch is not safe."
    ),
    fix=(
        "Spell the option as the release does (the message names the nearest one), remove an option the release "
        "does not have, or state the release the launch was written for (`--sglang-version`). No automatic fix: "
        "which correction is meant is the user's call."
    ),
    fix_safety="No automatic fix.",
    since=label(FIRST_KV4),
    examples=(
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 \\\n"
                "    --fp4-kv-cache-recipe nvfp4", ("--sglang-version", "0.5.23"),
                note="an option no release kv4lint knows has"),
        Example("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3",
                ("--sglang-version", "0.5.23"), fires=False, note="fixed: the option removed"),
    ),
    fix_for=no_fix,
)
