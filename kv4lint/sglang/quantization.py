"""The quantization of a checkpoint's weights as SGLang reads it before loading, and the GPUs it refuses them on.

SGLang's model loader refuses the weights on a GPU whose compute capability is below what their quantization
method needs: ``model_loader/loader.py`` ``_get_quantization_config`` raises ``ValueError("The quantization method
... is not supported for the current GPU. Minimum capability: ...")`` when ``major * 10 + minor`` is below
``get_min_capability()`` of the method's config class (``layers/quantization/__init__.py``
``BASE_QUANTIZATION_METHODS``), on every CUDA GPU, in every wheel kv4lint reads (0.5.6.post2 ... 0.5.23). That
refusal is the one this module knows: an arch it refuses is no candidate for the launch (:mod:`kv4lint.target`).

The method is what ``ModelConfig._verify_quantization`` (``configs/model_config.py``) decides before loading,
from the checkpoint's own quantization config (:func:`checkpoint_method`: ``config.json``'s
``quantization_config`` or ``compression_config``, else ``hf_quant_config.json``, ModelOpt's ``quant_algo`` read by
``_parse_modelopt_quant_config``) and ``--quantization`` (:func:`launch_method`: a ModelOpt checkpoint overrides
it). A checkpoint kv4lint cannot read is unknown, and narrows nothing: a model id is evidence only where its
publisher names one format (:func:`named_checkpoints`: NVIDIA's ``nvidia/...-FP4`` are ModelOpt NVFP4).

Not modelled, so never a narrowing: refusals per layer (a compressed-tensors scheme, an MXFP4 MoE backend),
refusals that depend on other options (``--fp4-gemm-backend``, ``--moe-runner-backend``), and what SGLang does with
a warning or a fallback (NVFP4 on SM80-SM90 runs through Marlin from 0.5.13: ``ModelOptFp4Config`` asks for 80).

Checked on every wheel: ``tests/test_conformance.py`` (``test_weights_*``). A leaf: it imports nothing of kv4lint's.
"""

from __future__ import annotations

import re

# method -> ((first 0.5.N, minimum compute capability), ...), from 0.5.6 (0.5.6.post2, the oldest wheel read) on:
# ``get_min_capability()`` of the class ``BASE_QUANTIZATION_METHODS`` maps the method to, on CUDA. A method absent
# here asks for at most 80 (sm80, the oldest candidate) in every release kv4lint knows, or SGLang has no such
# method: it narrows nothing. So does a method in a release before its first entry (SGLang refuses a method it does
# not have on every GPU alike).
MIN_CAPABILITY: dict[str, tuple[tuple[int, int], ...]] = {
    "modelopt": ((6, 89),),  # ModelOptFp8Config (modelopt_quant.py): "modelopt" auto-detects, FP8 by default
    "modelopt_fp8": ((6, 89),),  # ModelOptFp8Config
    # ModelOptFp4Config: 100 until 0.5.12; from 0.5.13 SM80-SM90 run NVFP4 weight-only through Marlin
    # (fp4_utils.py initialize_fp4_gemm_config: "auto" -> "marlin" on (8, 0) <= capability < (10, 0)).
    "modelopt_fp4": ((6, 100), (13, 80)),
    "modelopt_mixed": ((10, 100), (13, 80)),  # ModelOptMixedPrecisionConfig: ModelOptFp4Config's
    "w8a8_fp8": ((6, 89),),  # W8A8Fp8Config (w8a8_fp8.py)
    "w4afp8": ((6, 90),),  # W4AFp8Config (w4afp8.py)
    "petit_nvfp4": ((6, 90),),  # PetitNvFp4Config (petit.py)
    "mxfp8": ((9, 100),),  # Fp8Config(use_mxfp8=True) (fp8.py; 94 with SGLANG_FORCE_MXFP8_BLOCK_CONVERT, same GPUs)
    "nvfp4_online": ((14, 100),),  # NvFp4OnlineConfig (nvfp4_online.py)
    "minimax_m3_nvfp4": ((23, 90),),  # MiniMaxM3Nvfp4Config (minimax_m3_nvfp4.py)
}

# The class each method of the table names in ``BASE_QUANTIZATION_METHODS``, for messages and the conformance test.
CONFIG_CLASS: dict[str, str] = {
    "modelopt": "ModelOptFp8Config", "modelopt_fp8": "ModelOptFp8Config", "modelopt_fp4": "ModelOptFp4Config",
    "modelopt_mixed": "ModelOptMixedPrecisionConfig", "w8a8_fp8": "W8A8Fp8Config", "w4afp8": "W4AFp8Config",
    "petit_nvfp4": "PetitNvFp4Config", "mxfp8": "Fp8Config", "nvfp4_online": "NvFp4OnlineConfig",
    "minimax_m3_nvfp4": "MiniMaxM3Nvfp4Config",
}

# Gates (0.5.N) of ModelConfig's reading of a checkpoint and of --quantization.
CONFIG_JSON_MODELOPT = 9  # config.json's quantization_config without a quant_method is read by its quant_algo ...
CONFIG_JSON_MODELOPT_METHOD = 10  # ... and one whose quant_method is "modelopt" too
MIXED_NEMOTRON_H = 10  # MIXED_PRECISION is modelopt_mixed for Nemotron-H (before: w4afp8 always); its override
MIXED_NVFP4_LAYERS = 15  # ... for any checkpoint with NVFP4 layers (quantized_layers' quant_algo)
MODELOPT_EXACT_FP8 = 18  # quant_algo "FP8" exactly is modelopt_fp8, "MXFP8" mxfp8 (before: "FP8" in quant_algo)
# hf_quant_config.json's "quantization" may be flat or nested (unwrap_modelopt_quantization_config)
MODELOPT_UNWRAP = 20
REQUANTIZE = 18  # a requantization (quark_mxfp4) or nvfp4_online is not overridden by a ModelOpt checkpoint
PARSED_ALGO = 10  # hf_quant_config.json's parsed config keeps quant_algo (before: the method alone)

REQUANTIZATION_METHODS = ("quark_mxfp4",)  # model_config.py REQUANTIZATION_METHODS (0.5.17 on)


def min_capability(method: str | None, n: int) -> int | None:
    """The compute capability (``major * 10 + minor``) SGLang 0.5.``n``'s loader needs for weights quantized by
    ``method``; None where it needs no more than 80 in any release, or kv4lint does not know."""
    found = None
    for first, cap in MIN_CAPABILITY.get(method or "", ()):
        if n >= first:
            found = cap
    return found


# ---------------------------------------------------------------------------
# The checkpoint's quantization config, as ModelConfig reads it


def _modelopt(quant: dict, config: dict, n: int) -> str | None:
    """``_parse_modelopt_quant_config``: the method of a ModelOpt config (``{"quantization": {...}}``)."""
    if n >= MODELOPT_UNWRAP:
        inner = quant.get("quantization", quant)
        if not isinstance(inner, dict):
            return None
        nested = inner.get("quantization")
        inner = nested if isinstance(nested, dict) else inner
    else:
        inner = quant.get("quantization")
        if not isinstance(inner, dict):
            return None
    algo = inner.get("quant_algo")
    if algo is not None and not isinstance(algo, str):
        return ""  # SGLang fails on it: unknown here
    if algo == "MIXED_PRECISION":
        if n >= MIXED_NVFP4_LAYERS:
            layers = inner.get("quantized_layers") or {}
            nvfp4 = isinstance(layers, dict) and any(
                str(info.get("quant_algo", "")).upper() in ("NVFP4", "W4A16_NVFP4")
                for info in layers.values() if isinstance(info, dict))
            return "modelopt_mixed" if nvfp4 else "w4afp8"
        if n >= MIXED_NEMOTRON_H:
            archs = config.get("architectures") or []
            nemotron = config.get("model_type") == "nemotron_h" or any(
                isinstance(a, str) and a.startswith("NemotronH") for a in archs if isinstance(archs, list))
            return "modelopt_mixed" if nemotron else "w4afp8"
        return "w4afp8"
    if algo and ("FP4" in algo or "NVFP4" in algo):
        return "modelopt_fp4"
    if n >= MODELOPT_EXACT_FP8:
        return {"FP8": "modelopt_fp8", "MXFP8": "mxfp8"}.get(algo or "")
    return "modelopt_fp8" if algo and "FP8" in algo else None


class Checkpoint:
    """A checkpoint's quantization as ModelConfig holds it: the method (``""``: its config names none) and
    ModelOpt's ``quant_algo``, where the parsed config keeps it."""

    __slots__ = ("method", "algo")

    def __init__(self, method: str, algo: str | None = None) -> None:
        self.method, self.algo = method, algo

    def __repr__(self) -> str:
        return f"Checkpoint({self.method!r}, {self.algo!r})"


def checkpoint_method(config: dict, hf_quant_config: dict | None, n: int) -> Checkpoint | None:
    """The quantization of a checkpoint whose ``config.json`` is ``config`` (and ``hf_quant_config.json``, when it
    has one), as SGLang 0.5.``n``'s ``ModelConfig._parse_quant_hf_config`` reads it: None for a checkpoint without
    one."""
    quant = config.get("quantization_config")
    if isinstance(quant, dict):
        method = quant.get("quant_method")
        algo = quant.get("quant_algo")
        if n >= CONFIG_JSON_MODELOPT and method is None or n >= CONFIG_JSON_MODELOPT_METHOD and method == "modelopt":
            parsed = _modelopt({"quantization": quant}, config, n)
            if parsed is not None:
                return Checkpoint(parsed, algo if isinstance(algo, str) else None)
        return Checkpoint(method.lower() if isinstance(method, str) else "", algo if isinstance(algo, str) else None)
    compression = config.get("compression_config")
    if isinstance(compression, dict):
        method = compression.get("quant_method")
        return Checkpoint(method.lower() if isinstance(method, str) else "")
    if isinstance(hf_quant_config, dict):
        parsed = _modelopt(hf_quant_config, config, n)
        if parsed is None:
            return None
        algo = None
        if n >= PARSED_ALGO:  # the parsed config keeps quant_algo
            inner = hf_quant_config.get("quantization", hf_quant_config)
            inner = inner.get("quantization", inner) if isinstance(inner, dict) else {}
            algo = inner.get("quant_algo") if isinstance(inner, dict) else None
        return Checkpoint(parsed, algo if isinstance(algo, str) else None)
    return None


def _by_algo(algo: str | None, n: int) -> str | None:
    """The ModelOpt method ``--quantization modelopt`` becomes for a checkpoint's ``quant_algo``."""
    if not algo:
        return None
    a = algo.upper()
    # 0.5.19's exact list (canonicalize_modelopt_quant_algo) decides as 0.5.18's tests do: any other FP4 name is
    # modelopt_fp4 by the parsed method the override reads next.
    if n >= MODELOPT_EXACT_FP8 and a in ("FP8", "MXFP8"):
        return {"FP8": "modelopt_fp8", "MXFP8": "mxfp8"}[a]
    if n < MODELOPT_EXACT_FP8 and "FP8" in a:
        return "modelopt_fp8"
    return "modelopt_fp4" if "NVFP4" in a or "FP4" in a else None


def launch_method(checkpoint: Checkpoint | None, stated: str | None, n: int) -> str | None:
    """The method SGLang 0.5.``n`` loads the weights with: the checkpoint's (:func:`checkpoint_method`) and the
    launch's ``--quantization`` (``stated``) reconciled as ``ModelConfig._verify_quantization`` does. A ModelOpt
    checkpoint overrides ``--quantization`` (``override_quantization_method``); otherwise ``--quantization`` is
    kept, or refused as a mismatch on every GPU alike, so it decides where the weights can load. None:
    unquantized."""
    stated = stated.lower() if stated else None
    if checkpoint is None:
        return stated
    requantize = n >= REQUANTIZE and stated in REQUANTIZATION_METHODS
    if not requantize:  # the override loop (0.5.18 on: not run for a requantization)
        override = None
        if not (n >= REQUANTIZE and stated == "nvfp4_online"):  # ModelOpt's shared override
            if stated == "modelopt":
                override = _by_algo(checkpoint.algo, n)
            if override is None and checkpoint.method in ("modelopt_fp8", "modelopt_fp4"):
                override = checkpoint.method
        if override is None and n >= MIXED_NEMOTRON_H and checkpoint.method == "modelopt_mixed":
            override = "modelopt_mixed"
        if override is not None:
            return override
    return stated or checkpoint.method  # the same, compatible, a requantization, or a mismatch refused everywhere


# ---------------------------------------------------------------------------
# Model ids that name their format

# NVIDIA publishes its FP4 checkpoints made with Model Optimizer (``hf_quant_config.json``, ``quant_algo`` NVFP4, or
# MIXED_PRECISION with NVFP4 layers, in config.json too in newer exports): ``nvidia/Llama-3.3-70B-Instruct-FP4``,
# ``nvidia/DeepSeek-R1-0528-FP4-v2``, ``nvidia/Qwen3-30B-A3B-NVFP4``. MXFP4 names (``-MXFP4``) are not these.
_NVIDIA_FP4 = re.compile(r"(?:^|/)nvidia/[^/]*?(?<![A-Za-z0-9])(?:nv)?fp4(?![A-Za-z0-9])[^/]*$", re.I)


def named_checkpoints(model_path: str) -> tuple[tuple[dict, dict | None], ...] | None:
    """The checkpoints a model id stands for, as (``config.json``, ``hf_quant_config.json``) pairs: every form the
    publisher uses (where the config lives, Nemotron-H or not); None for an id that names no format kv4lint
    knows."""
    if not _NVIDIA_FP4.search(model_path.rstrip("/")):
        return None
    layers = {"quantized_layers": {"layers.0.mlp.experts": {"quant_algo": "NVFP4"}}}
    out = []
    for quant in ({"quant_algo": "NVFP4"}, {"quant_algo": "MIXED_PRECISION", **layers}):
        for model_type in (None, "nemotron_h"):
            base = {"model_type": model_type} if model_type else {}
            out.append((base, {"producer": {"name": "modelopt"}, "quantization": dict(quant)}))
            out.append(({**base, "quantization_config": {"quant_method": "modelopt", **quant}}, None))
    return tuple(out)
