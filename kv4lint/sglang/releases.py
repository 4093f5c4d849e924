"""SGLang's releases as kv4lint knows them, and the named version gates of its rules.

The one place a release lives: the engine (``kv4lint.rules.engine``), the
messages, the docs generator, the tests and ``tools/fetch_sglang_wheels.py``
read the releases and gates from here. A gate is the 0.5.N patch number of the
first release where SGLang behaves the new way; the engine tests
``n >= GATE`` (or ``n < GATE`` for the old way). Adding a release is described
step by step in ``docs/adding-a-release.md``.

A leaf module: it imports nothing of kv4lint's.
"""

from __future__ import annotations

import functools

from packaging.version import InvalidVersion, Version

# ---------------------------------------------------------------------------
# The releases

SERIES = (0, 5)  # every release kv4lint has rules for is 0.5.N
FIRST_KV4 = 7  # 0.5.7: the first release with a KV4 check
NEWEST = 23  # 0.5.23: the newest release kv4lint has rules for (its rule pack judges newer versions)
KV4_RELEASES: tuple[str, ...] = tuple(f"0.5.{n}" for n in range(FIRST_KV4, NEWEST + 1))
# Every wheel the conformance tests read: the last release without a KV4 check, then every one with it.
WHEEL_RELEASES: tuple[str, ...] = ("0.5.6.post2", *KV4_RELEASES)


def label(n: int) -> str:
    """``23`` -> ``"0.5.23"``."""
    return f"{SERIES[0]}.{SERIES[1]}.{n}"


NEWEST_LABEL = label(NEWEST)

# ---------------------------------------------------------------------------
# Named gates: the first release (0.5.N) where each change holds

FP4_E2M1 = 5  # --kv-cache-dtype fp4_e2m1 (the first FP4 KV cache) is a choice
FA4_DECODE = 8  # 0.5.7's rule "FA4 is only supported for prefill" is gone
DEEPSEEK_FAMILY_WIDENED = 8  # the DeepSeek model overrides cover the wider family
FA3_ALL_MODELS_SM90 = 8  # Hopper's default is fa3 for every MHA model (0.5.7: a list of architectures)
SM11X_BLACKWELL = 9  # is_blackwell() includes SM110; TRT-LLM MLA's message says (SM100/SM12x)
TRTLLM_MHA_SPLIT = 10  # TRT-LLM MHA's arch rules read the resolved prefill and decode backends separately
MPS_TORCH_NATIVE = 10  # MPS defaults to torch_native; Whisper defaults to flashinfer on CUDA
INTEL_XPU_MLA_DECODE_ONLY = 11  # intel_xpu refused as an MLA prefill backend ...
INTEL_XPU_MLA_PREFILL = 20  # ... until this release
PREFILL_ONLY_DISABLE_KV_CACHE = 12  # --prefill-only-disable-kv-cache and its FP4 refusal
DEEPSEEK_V4 = 12  # DeepseekV4ForCausalLM's defaults (dsv4 backend, its KV cache dtypes)
DEEPSEEK_V4_BF16 = 14  # DeepSeek-V4 accepts bfloat16 as well as fp8_e4m3
DETERMINISTIC_BEFORE_DEFAULT = 12  # deterministic inference picks the backend before the default
TOKENSPEED_MLA = 12  # the tokenspeed_mla backend (Blackwell, fp8_e4m3 only) ...
CUTEDSL_MLA = 13  # the CuteDSL MLA backend (decode only, SM100, no FP4; an unset prefill backend becomes trtllm_mla)
FP4_RENAMED = 16  # fp4_e2m1 -> nvfp4 / fp4_mx_block16; nvfp4 needs Blackwell; flashmla off the MLA list; NSA -> DSA
HOOKS = 19  # resolution steps are module functions (handle_...), no longer ServerArgs methods (_handle_...)
TRTLLM_MHA_PREFILL_SM90 = 19  # TRT-LLM MHA prefill runs on SM90/SM100/SM120 (before: SM100 only)
TRTLLM_FMHAV2_SM120 = 19  # TRT-LLM FMHAv2 prefill on SM120 refuses an fp8_e4m3 KV cache
DUMMY_MODEL_SKIPS_CHECKS = 0  # --model-path none/dummy skips the resolution checks (every wheel, 0.5.5.post3 on)
CUTLASS_MLA_DROPPED = 20  # cutlass_mla is off the KV4 MLA lists
NVFP4_PREFILL_STEP = 21  # the NVFP4 prefill dequant step, native SM100 NVFP4 feature checks, unified memory
FP4_E2M1_REMOVED = 21  # fp4_e2m1 is no longer a choice (and TRT-LLM MLA no longer accepts it)
BACKEND_ALIASES = 23  # deprecated backend aliases: tokenspeed_mla -> cutedsl_mla (fp8), compressed -> dsv4
DFLASH_TRTLLM_MHA_DEFAULT = 23  # SM100's default stays trtllm_mha with DFLASH speculative decoding


# ---------------------------------------------------------------------------
# When each release whose options kv4lint has read was published (its first file on PyPI, UTC day): a dated
# nightly image (``lmsysorg/sglang:nightly-dev-cu13-20260901-07c8f729``) is a build between two of them.

RELEASE_DATES: dict[str, str] = {
    "0.5.5.post3": "2025-11-17", "0.5.6": "2025-12-03", "0.5.6.post1": "2025-12-08", "0.5.6.post2": "2025-12-11",
    "0.5.7": "2026-01-01", "0.5.8": "2026-01-23", "0.5.8.post1": "2026-02-05", "0.5.9": "2026-02-23",
    "0.5.10": "2026-04-05", "0.5.10.post1": "2026-04-08", "0.5.11": "2026-05-05", "0.5.12": "2026-05-16",
    "0.5.12.post1": "2026-05-23", "0.5.13": "2026-06-11", "0.5.13.post1": "2026-06-15", "0.5.14": "2026-06-26",
    "0.5.15": "2026-07-10", "0.5.15.post1": "2026-07-14", "0.5.16": "2026-07-25", "0.5.17": "2026-08-08",
    "0.5.18": "2026-08-21", "0.5.19": "2026-09-04", "0.5.20": "2026-09-18", "0.5.21": "2026-10-01",
    "0.5.22": "2026-10-16", "0.5.23": "2026-10-30",
}


def nightly_between(day: str) -> tuple[str | None, str | None]:
    """The releases a nightly built on ``day`` (``YYYY-MM-DD``) lies between: the last one published by that day
    and the first one after it (None where there is none: older or newer than every release kv4lint knows)."""
    by_day = sorted(RELEASE_DATES.items(), key=lambda kv: (kv[1], parse(kv[0])))
    before = [r for r, d in by_day if d <= day]
    after = [r for r, d in by_day if d > day]
    return (before[-1] if before else None), (after[0] if after else None)


# ---------------------------------------------------------------------------
# A version's rule pack


def parse(text: str) -> Version:
    """``"0.5.23"``, ``"v0.5.21.post1"``, ``"0.5.23rc1"`` -> Version; ValueError otherwise."""
    t = text.strip().lstrip("vV=")
    try:
        return Version(t)
    except InvalidVersion:
        raise ValueError(f"not a version: {text!r}") from None


@functools.lru_cache(maxsize=256)
def release(version: str | Version | None) -> int:
    """The 0.5.N rule pack for ``version`` (post/dev/rc releases use their base).

    Versions before 0.5 map to 0, after 0.5.x to :data:`NEWEST` (see :func:`beyond_newest`:
    such a version is judged by the newest rules, and kv4lint says so).
    """
    if version is None:
        return NEWEST
    v = version if isinstance(version, Version) else parse(str(version))
    major, minor, patch = (list(v.release) + [0, 0, 0])[:3]
    if (major, minor) < SERIES:
        return 0
    if (major, minor) > SERIES:
        return NEWEST
    if v.pre is not None and patch > 0:
        # 0.5.21rc1 is before 0.5.21
        return min(patch - 1, NEWEST)
    return min(patch, NEWEST)


def beyond_newest(version: str | Version | None) -> bool:
    """A version newer than every release kv4lint knows (0.5.24, 0.6.0 ...): judged by the newest rules."""
    if version is None:
        return False
    try:
        v = version if isinstance(version, Version) else parse(str(version))
    except ValueError:
        return False
    return tuple((list(v.release) + [0, 0, 0])[:3]) > (*SERIES, NEWEST)


def version_label(version: str | None) -> str:
    """How messages name the release a launch is judged against."""
    if not version:
        return f"SGLang {NEWEST_LABEL}"
    if beyond_newest(version):  # never silently: a newer release may have changed the rules
        return f"SGLang {version} (judged by {NEWEST_LABEL}'s rules, the newest kv4lint knows)"
    return f"SGLang {version}"


BEYOND_NEWEST_NOTE = f"newer than the newest rule pack, judged by {NEWEST_LABEL}'s rules"
