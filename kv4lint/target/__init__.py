"""The machine and model a launch is judged against.

A :class:`Target` is platform + GPU arch + model attention (+ architecture
name) + SGLang version, each with where it came from.  Unknown stays unknown
(``None``): the rules then report only what holds for every possibility.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace

from kv4lint.sglang import releases

from kv4lint.depends import look
from kv4lint.regular_file import open_file
from kv4lint.sglang.gpus import GPU_ARCH
from kv4lint.sglang.models import SpecialModel, recognise_architectures, recognise_path

PLATFORMS = ("cuda", "rocm", "xpu", "cpu", "npu", "musa", "mps", "hpu")

_SM = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})[af]?$")


def normalise_gpu(name: str) -> str:
    """``"H100"``, ``"sm_90a"``, ``"9.0"``, ``"gb200"`` -> ``"sm90"``/``"sm100"``; ValueError otherwise."""
    n = name.strip().lower().replace(" ", "").replace("_", "-")
    if n in GPU_ARCH:
        return GPU_ARCH[n]
    n2 = n.replace("-", "")
    for k, v in GPU_ARCH.items():
        if k.replace("-", "") == n2:
            return v
    m = re.match(r"^(\d+)\.(\d)$", n)  # compute capability "9.0", "12.1"
    if m:
        return f"sm{int(m.group(1))}{m.group(2)}"
    m = _SM.match(n2)
    if m:
        return f"sm{m.group(1)}"
    # nvidia-h100-80gb-hbm3, "NVIDIA B200", "RTX PRO 6000" ...
    toks = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]
    flat = {k.replace("-", ""): v for k, v in GPU_ARCH.items()}
    for size in (3, 2, 1):
        for i in range(len(toks) - size + 1):
            joined = "".join(toks[i:i + size])
            if joined in flat and len(joined) >= 3:
                return flat[joined]
    raise ValueError(f"unknown GPU {name!r} (use an arch like sm90/sm100/sm120, or a name like h100, b200, rtx5090)")


def arch_major(arch: str | None) -> int | None:
    if not arch:
        return None
    m = re.match(r"^sm(\d+?)(\d)$", arch)
    return int(m.group(1)) if m else None


def normalise_platform(name: str) -> str:
    n = name.strip().lower()
    aliases = {"hip": "rocm", "amd": "rocm", "gpu": "cuda", "nvidia": "cuda", "intel": "xpu", "ascend": "npu",
               "gaudi": "hpu", "habana": "hpu", "metal": "mps", "apple": "mps", "moore": "musa"}
    n = aliases.get(n, n)
    n = n.split(":", 1)[0]
    if n not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r} (one of {', '.join(PLATFORMS)})")
    return n


parse_version = releases.parse  # "0.5.23", "v0.5.21.post1", "0.5.23rc1" -> Version; ValueError otherwise


# ---------------------------------------------------------------------------
# Model attention (docs/sglang-rules.md §4)

# Architectures SGLang runs as MLA, and the release that added each (docs/sglang-rules.md §4).
MLA_ARCHITECTURES: dict[str, str] = {
    **dict.fromkeys([
        "DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV3ForCausalLMNextN",
        "DeepseekVL2ForCausalLM", "DotsVLMForCausalLM", "KimiLinearForCausalLM", "KimiVLForConditionalGeneration",
        "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "MiniCPM3ForCausalLM"], "0.5.5"),
    **dict.fromkeys(["MistralLarge3ForCausalLM", "MistralLarge3ForCausalLMEagle", "PixtralForConditionalGeneration"],
                    "0.5.6.post1"),
    "Glm4MoeLiteForCausalLM": "0.5.8",
    **dict.fromkeys(["BailingMoeV2_5ForCausalLM", "BailingMoeForCausalLMNextN", "GlmMoeDsaForCausalLM",
                     "KimiK25ForConditionalGeneration"], "0.5.9"),
    "SarvamMLAForCausalLM": "0.5.10",
    "Eagle3DeepseekV2ForCausalLM": "0.5.12",
    "Glm4MoeLiteForCausalLMNextN": "0.5.13",
    "GlmMoeDsaForCausalLMNextN": "0.5.16",
    "KimiK3ForConditionalGeneration": "0.5.17",
    **dict.fromkeys(["BailingMoeV3ForCausalLM", "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN",
                     "KimiK3LinearForCausalLM"], "0.5.19"),
    **dict.fromkeys(["Glm5NextForConditionalGeneration", "Glm5NextForConditionalGenerationNextN", "HYV4ForCausalLM",
                     "HYV4ForCausalLMNextN"], "0.5.20"),
    **dict.fromkeys(["BailingMoeV3VLForConditionalGeneration", "GigaChat35ForCausalLM",
                     "GigaChat35ForCausalLMNextN"], "0.5.21"),
}

# Hugging Face ids (lower-cased, without the org where unambiguous) -> architecture.
# Patterns are matched against the last path component(s) of the model path.
_ID_PATTERNS: list[tuple[re.Pattern, str | None]] = [
    # Name traps first: these are *not* MLA.
    (re.compile(r"deepseek-r1-distill", re.I), None),
    (re.compile(r"deepseek-(?:llm|coder-(?:1\.3|6\.7|33)b|math|moe-16b)", re.I), None),
    (re.compile(r"deepseek-vl2-tiny", re.I), None),
    (re.compile(r"deepseek-(?:v3|r1|prover-v2)", re.I), "DeepseekV3ForCausalLM"),
    (re.compile(r"deepseek-(?:v2|coder-v2)", re.I), "DeepseekV2ForCausalLM"),
    (re.compile(r"deepseek-vl2", re.I), "DeepseekVL2ForCausalLM"),
    (re.compile(r"kimi-k2\.[5-9]", re.I), "KimiK25ForConditionalGeneration"),
    (re.compile(r"kimi-k2", re.I), "DeepseekV3ForCausalLM"),
    (re.compile(r"kimi-k3", re.I), "KimiK3ForConditionalGeneration"),
    (re.compile(r"kimi-linear", re.I), "KimiLinearForCausalLM"),
    (re.compile(r"kimi-vl", re.I), "KimiVLForConditionalGeneration"),
    (re.compile(r"minicpm3", re.I), "MiniCPM3ForCausalLM"),
    (re.compile(r"glm-4\.7-flash", re.I), "Glm4MoeLiteForCausalLM"),
    (re.compile(r"longcat-flash", re.I), "LongcatFlashForCausalLM"),
    (re.compile(r"sarvam2?-", re.I), "SarvamMLAForCausalLM"),
    (re.compile(r"mistral-large-3", re.I), "MistralLarge3ForCausalLM"),
    (re.compile(r"gpt-oss", re.I), "GptOssForCausalLM"),
    (re.compile(r"llama-4", re.I), "Llama4ForConditionalGeneration"),
    (re.compile(r"whisper", re.I), "WhisperForConditionalGeneration"),
    # Well-known MHA families (GQA/MQA count as MHA for SGLang): attention known, architecture not needed.
    (re.compile(r"(?:^|/)(?:meta-)?llama|llama-?[23]|tinyllama|codellama|vicuna", re.I), "mha"),
    (re.compile(r"qwen|qwq", re.I), "mha"),
    (re.compile(r"mistral|mixtral|ministral|codestral|devstral", re.I), "mha"),
    (re.compile(r"gemma|phi-?[1-4]|olmo|granite|internlm|baichuan|falcon|command-r|smollm|yi-|exaone|glm-4", re.I),
     "mha"),
]


@dataclass(frozen=True)
class ModelInfo:
    """What kv4lint knows of the served model."""

    architecture: str | None = None  # HF architectures[0], when known
    mla: bool | None = None  # None: unknown
    dsa: bool = False  # DeepSeek sparse attention (index_topk in config)
    source: str = "unknown"
    kind: str | None = None  # the attention shown to users where SGLang has its own ("dsv4", "mla+dsa")

    @property
    def attention(self) -> str | None:
        return None if self.mla is None else ("mla" if self.mla else "mha")

    @property
    def shown_attention(self) -> str | None:
        return self.kind or self.attention


def _special(found: SpecialModel, source: str) -> ModelInfo:
    return ModelInfo(found.architecture, found.mla, found.dsa, f"{source}: {found.family}", found.attention)


def model_from_architecture(arch: str | None, source: str, *, config: dict | None = None) -> ModelInfo:
    if arch is None:
        return ModelInfo(source=source)
    mla = arch in MLA_ARCHITECTURES
    cfg = config or {}
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    if arch == "PixtralForConditionalGeneration" and config is not None:
        mla = "kv_lora_rank" in text
    if arch == "DeepseekVL2ForCausalLM" and text.get("use_mla") is False:
        mla = False
    dsa = "index_topk" in text and mla
    return ModelInfo(arch, mla, dsa, source)


def infer_model(model_path: str | None, *, base_dir: str | None = None) -> ModelInfo:
    """Infer the model's architecture and attention from ``--model-path``.

    A local directory with a ``config.json`` is read (JSON only; nothing is
    imported or run); otherwise the Hugging Face id is matched by name.
    """
    if not model_path:
        return ModelInfo()
    candidates = [model_path]
    if base_dir and not os.path.isabs(model_path):
        candidates.insert(0, os.path.join(base_dir, model_path))
    for cand in candidates:
        cfg_path = look(os.path.join(cand, "config.json"))
        try:
            if os.path.isfile(cfg_path) and os.path.getsize(cfg_path) < 5_000_000:
                with open_file(cfg_path, "r", encoding="utf-8") as f:
                    cfg = json.load(f)
                archs = cfg.get("architectures") or []
                if archs and isinstance(archs, list):
                    found = recognise_architectures(archs, cfg)
                    if found is not None:
                        return _special(found, f"{cfg_path} architectures")
                    mla_arch = next((a for a in archs if a in MLA_ARCHITECTURES), None)
                    return model_from_architecture(mla_arch or archs[0], f"{cfg_path} architectures", config=cfg)
        except (OSError, ValueError):
            pass
    name = model_path.rstrip("/")
    found = recognise_path(name)
    if found is not None:
        return _special(found, f"model id {model_path!r}")
    for pat, arch in _ID_PATTERNS:
        if pat.search(name):
            if arch is None or arch == "mha":
                return ModelInfo(None, False, False, f"model id {model_path!r}")
            return model_from_architecture(arch, f"model id {model_path!r}")
    return ModelInfo(source="unknown")


# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """Everything a rule needs to know besides the launch's arguments.

    ``sources`` maps each part (``"platform"``, ``"gpu"``, ``"model_attention"``,
    ``"sglang_version"``) to where its value came from, for messages and
    ``--show-target``.  ``platform_reason`` is the phrase quoted in KV402
    messages (``"--device xpu"``, ``"export HIP_VISIBLE_DEVICES"``).
    """

    platform: str | None = "cuda"
    arch: str | None = None
    model: ModelInfo = field(default_factory=ModelInfo)
    sglang_version: str | None = None  # None: the newest rule pack
    strict: bool = False
    sources: dict[str, str] = field(default_factory=dict)
    platform_reason: str | None = None
    # The SGLang release was not stated (no --sglang-version, configuration, image tag or pin): kv4lint
    # judges by its newest rule pack, and ``build_evidence`` lists what says the launch targets an SGLang
    # build kv4lint does not know (an image of a development build, a git install, an option no release has).
    version_inferred: bool = False
    build_evidence: tuple[str, ...] = ()
    build_words: tuple = ()  # the words no release takes together (kv4lint.rules.parser.Rejected), for KV409

    def with_(self, **kw) -> "Target":
        return replace(self, **kw)

    def describe(self) -> dict:
        return {
            "platform": self.platform,
            "gpu": self.arch,
            "model_attention": self.model.shown_attention,
            "model_architecture": self.model.architecture,
            "sglang_version": self.sglang_version,
            "sources": dict(self.sources),
        }
