"""The machine and model a launch is judged against: the target record, and the model's attention.

A :class:`Target` is the SGLang release, the platform, the GPU archs it may be (a candidate set) and the model's
attention, each with where it came from. Unknown stays unknown: a GPU that is not stated is every candidate, a
model whose attention is unknown is MHA and MLA, and the rules report what holds for every candidate (an error)
or for some (a warning naming where). The one resolver that decides them is :mod:`kv4lint.target.resolve`;
this package itself stays light (the command line's option checks import it).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from kv4lint.base.record import Frozen, replace
from kv4lint.files.depends import look, looked_again, recording
from kv4lint.files.regular_file import open_file
from kv4lint.sglang.gpus import ARCHS, representatives
from kv4lint.sglang.models import SpecialModel, recognise_architectures, recognise_path

PLATFORMS = ("cuda", "rocm", "xpu", "cpu", "npu", "musa", "mps", "hpu")


def normalise_platform(name: str) -> str:
    n = name.strip().lower()
    aliases = {"hip": "rocm", "amd": "rocm", "gpu": "cuda", "nvidia": "cuda", "intel": "xpu", "ascend": "npu",
               "gaudi": "hpu", "habana": "hpu", "metal": "mps", "apple": "mps", "moore": "musa"}
    n = aliases.get(n, n)
    n = n.split(":", 1)[0]
    if n not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r} (one of {', '.join(PLATFORMS)})")
    return n


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


class ModelInfo(Frozen):
    """What kv4lint knows of the served model: ``architecture`` (HF ``architectures[0]``, when known), ``mla``
    (None: unknown), ``dsa`` (DeepSeek sparse attention: ``index_topk`` in its config), where that came from
    (``source``), and ``kind``, the attention shown to users where SGLang has its own (``"dsv4"``,
    ``"mla+dsa"``)."""

    __slots__ = ("architecture", "mla", "dsa", "source", "kind")

    def __init__(self, architecture: str | None = None, mla: bool | None = None, dsa: bool = False,
                 source: str = "unknown", kind: str | None = None) -> None:
        self._set("architecture", architecture)
        self._set("mla", mla)
        self._set("dsa", dsa)
        self._set("source", source)
        self._set("kind", kind)

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


def model_dirs(model_path: str, base_dir: str | None) -> list[str]:
    """Where a model path may be on disk: beside the file that names it first (``base_dir``), then as written."""
    return ([os.path.join(base_dir, model_path)] if base_dir and not os.path.isabs(model_path) else []) + [model_path]


def read_json(path: str) -> dict | None:
    """A JSON object of the scanned tree (a model's ``config.json``), read as text only and recorded as a file the
    report depends on; None when it is absent, too big, unreadable or no object."""
    look(path)
    try:
        if os.path.isfile(path) and os.path.getsize(path) < 5_000_000:
            with open_file(path, "r", encoding="utf-8") as f:
                data = json.load(f)
            return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        pass
    return None


def recalled(memo, key, read):
    """``read()``, from ``memo`` (a run's :class:`kv4lint.base.memo.Memo`, or None) when the same run asked ``key``
    before: the files it looked at are recorded again (:func:`kv4lint.files.depends.looked_again`), as a report
    that depends on them must say."""
    if memo is None:
        return read()
    hit = memo.get(key)
    if hit is None:
        with recording() as looked:
            found = read()
        memo.keep(key, (found, tuple(looked)))
        return found
    looked_again(hit[1])
    return hit[0]


def infer_model(model_path: str | None, *, base_dir: str | None = None) -> ModelInfo:
    """Infer the model's architecture and attention from ``--model-path``.

    A local directory with a ``config.json`` is read (JSON only; nothing is
    imported or run); otherwise the Hugging Face id is matched by name.
    """
    if not model_path:
        return ModelInfo()
    for cand in model_dirs(model_path, base_dir):
        cfg_path = os.path.join(cand, "config.json")
        cfg = read_json(cfg_path)
        archs = cfg.get("architectures") if cfg is not None else None
        if archs and isinstance(archs, list):
            found = recognise_architectures(archs, cfg)
            if found is not None:
                return _special(found, f"{cfg_path} architectures")
            mla_arch = next((a for a in archs if a in MLA_ARCHITECTURES), None)
            return model_from_architecture(mla_arch or archs[0], f"{cfg_path} architectures", config=cfg)
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

    ``archs`` is the GPU's candidate set (CUDA archs, :data:`kv4lint.sglang.gpus.ARCHS` order): one arch when
    stated or when the file names one, several when the file names several or a guard leaves several, every arch
    kv4lint knows when nothing says, less those SGLang refuses the checkpoint's weights on
    (:mod:`kv4lint.target.weights`); empty off CUDA, and when the launch runs only on GPUs the target is not (a
    branch that tests for a B200 on an H100). ``arch`` is the one GPU, when there is one.

    ``sources`` maps each part (``"platform"``, ``"gpu"``, ``"model_attention"``, ``"sglang_version"``) to
    where its value came from, for messages and ``--show-target``; ``gpu_level`` says which rung of the
    precedence chose the GPU (``"stated"``, ``"file"``, ``"every"``). ``platform_reason`` is the phrase quoted in
    KV402 messages (``"--device xpu"``, ``"export HIP_VISIBLE_DEVICES"``).
    """

    platform: str | None = "cuda"
    archs: tuple[str, ...] = ARCHS
    model: ModelInfo = field(default_factory=ModelInfo)
    sglang_version: str | None = None  # None: the newest rule pack
    strict: bool = False
    sources: dict[str, str] = field(default_factory=dict)
    platform_reason: str | None = None
    gpu_level: str = "every"
    # The SGLang release was not stated (no --sglang-version, configuration, image tag or pin): kv4lint
    # judges by the newest release that takes every option and value of the launch, and ``build_evidence`` lists
    # what says the launch targets an SGLang build kv4lint does not know (an image of a development build, a git
    # install, an option no release has).
    version_inferred: bool = False
    build_evidence: tuple[str, ...] = ()
    build_words: tuple = ()  # the words no release takes together (kv4lint.rules.parser.Rejected), for KV409
    # A release inferred, not stated: the verdicts that hold from a release on, where older releases that take the
    # launch too judge it otherwise, as ((code, field, severity), first release, the older releases), for the
    # headline (``from SGLang 0.5.21: ...``). Filled by the rules once they judged the newest
    # (kv4lint.rules.parser.judge).
    verdict_since: tuple = ()

    @property
    def arch(self) -> str | None:
        """The GPU arch, when the target is one GPU."""
        return self.archs[0] if len(self.archs) == 1 else None

    @property
    def gpu_known(self) -> bool:
        """Whether the GPU is decided (one arch): else the rules name the candidates that refuse."""
        return len(self.archs) == 1

    @property
    def machines(self) -> tuple[tuple[str, str | None], ...]:
        """The machines to judge, as (platform, arch): one arch of each class SGLang tells apart among the
        candidates (:func:`kv4lint.sglang.gpus.representatives`), or the platform alone off CUDA."""
        if self.platform not in (None, "cuda"):
            return ((self.platform, None),)
        return tuple(("cuda", a) for a in representatives(self.archs))

    @property
    def models(self) -> tuple[ModelInfo, ...]:
        """The model's candidates: the model, or, its attention unknown, the same model as MHA and as MLA."""
        m = self.model
        if m.mla is not None:
            return (m,)
        return (ModelInfo(m.architecture, False, m.dsa, m.source), ModelInfo(m.architecture, True, m.dsa, m.source))

    def with_(self, **kw) -> "Target":
        return replace(self, **kw)

    def describe(self) -> dict:
        return {
            "platform": self.platform,
            "gpu": self.arch,
            "gpus": list(self.archs),
            "model_attention": self.model.shown_attention,
            "model_architecture": self.model.architecture,
            "sglang_version": self.sglang_version,
            "sources": dict(self.sources),
        }
