"""Models SGLang treats specially for the KV cache, recognised from a model path or a ``config.json``.

DeepSeek-V4 (its own ``dsv4`` attention and dtype rule), DeepSeek-V3.2 and the GLM-5 class (DeepSeek
sparse attention, DSA: MLA with an indexer, ``index_topk`` in the config) decide a launch's fate before
SGLang's KV4 check runs (docs/sglang-rules.md §3.4, §4, §7).  Each is recognised from the ``architectures`` of a local
``config.json`` (preferred: SGLang reads exactly that) or, failing that, from the model path's name.

A name that only resembles a family is not guessed: :func:`recognise_path` returns None and the caller
keeps the model unknown.  A leaf module: it imports nothing of kv4lint's.
"""

from __future__ import annotations

import re

from kv4lint.base.record import Frozen


class SpecialModel(Frozen):
    """A model family SGLang serves with its own attention: ``family`` (``"DeepSeek-V4"``, ``"DeepSeek-V3.2"``,
    ``"GLM-5"``), ``architecture`` (the one SGLang dispatches on), ``mla`` (SGLang's ``use_mla_backend()``;
    DeepSeek-V4 is not MLA, it has its own dsv4 attention), ``dsa`` (DeepSeek sparse attention: the DSA/NSA dtype
    rule applies) and ``attention`` (the kind shown to users: ``"dsv4"`` or ``"mla+dsa"``)."""

    __slots__ = ("family", "architecture", "mla", "dsa", "attention")

    def __init__(self, family: str, architecture: str, mla: bool, dsa: bool, attention: str) -> None:
        self._set("family", family)
        self._set("architecture", architecture)
        self._set("mla", mla)
        self._set("dsa", dsa)
        self._set("attention", attention)


_FAMILIES: list[tuple[str, frozenset[str], re.Pattern, bool, bool, str]] = [
    # family, architectures, name pattern, mla, dsa, attention kind
    ("DeepSeek-V4",
     frozenset({"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "DeepseekV4ForCausalLMDSpark"}),
     re.compile(r"deepseek[-_ ]?v4(?![\d])", re.I), False, False, "dsv4"),
    ("DeepSeek-V3.2",
     frozenset({"DeepseekV32ForCausalLM"}),
     re.compile(r"deepseek[-_ ]?v3(?:\.|_|-)?2(?![\d])", re.I), True, True, "mla+dsa"),
    ("GLM-5",
     frozenset({"GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGeneration",
                "Glm5NextForConditionalGenerationNextN"}),
     re.compile(r"(?<![a-z0-9])glm[-_ ]?5(?![\d])", re.I), True, True, "mla+dsa"),
]

# The architecture each family's name stands for when no config.json says (docs/sglang-rules.md §4: the ids SGLang's
# DSA models publish).
_NAMED_ARCHITECTURE = {"DeepSeek-V4": "DeepseekV4ForCausalLM", "DeepSeek-V3.2": "DeepseekV32ForCausalLM",
                       "GLM-5": "GlmMoeDsaForCausalLM"}

# DeepSeek-V3-family architectures that become DSA models when their config has an indexer (index_topk).
_DSA_CAPABLE = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM",
                          "Glm5NextForConditionalGeneration"})


def recognise_architectures(architectures: list, config: dict | None = None) -> SpecialModel | None:
    """The special model a ``config.json``'s ``architectures`` (and its ``index_topk``) name, if any."""
    names = [a for a in architectures if isinstance(a, str)]
    for family, archs, _, mla, dsa, kind in _FAMILIES:
        arch = next((a for a in names if a in archs), None)
        if arch is not None:
            return SpecialModel(family, arch, mla, dsa, kind)
    cfg = config or {}
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    arch = next((a for a in names if a in _DSA_CAPABLE), None)
    if arch is not None and isinstance(text, dict) and "index_topk" in text:
        return SpecialModel("DeepSeek DSA", arch, True, True, "mla+dsa")
    return None


def recognise_path(model_path: str) -> SpecialModel | None:
    """The special model a model path's name says (``deepseek-ai/DeepSeek-V4-Flash``), if any."""
    for family, _, pattern, mla, dsa, kind in _FAMILIES:
        if pattern.search(model_path):
            return SpecialModel(family, _NAMED_ARCHITECTURE[family], mla, dsa, kind)
    return None
