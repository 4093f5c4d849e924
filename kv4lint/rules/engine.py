"""SGLang's argument resolution, as far as it decides a KV4 launch's fate.

A pure simulation, release by release (docs/sglang-rules.md §2, §3, §7): given ServerArgs field
values, the machine and the model, it replays the resolution steps that run up
to and including SGLang's KV4 check, and returns what SGLang would do: raise
(``error``), log a warning (``warning``) or silently change a value
(``rewrite``).  The text of each event is SGLang's own message, so kv4lint can
quote it.

Unknown inputs are the :data:`UNKNOWN` sentinel.  Any decision that depends on
one raises :class:`Undetermined`, and the caller reports nothing for that
possibility: unknowns never produce a finding on their own.

No I/O, no parsing, no imports of SGLang: kv4lint's own code and data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kv4lint.base.record import Frozen, Record
from kv4lint.sglang.gpus import arch_major
from kv4lint.sglang.releases import (
    BACKEND_ALIASES, CUTEDSL_MLA, CUTLASS_MLA_DROPPED, DEEPSEEK_FAMILY_WIDENED,
    DEEPSEEK_V4, DEEPSEEK_V4_BF16, DETERMINISTIC_BEFORE_DEFAULT, DFLASH_TRTLLM_MHA_DEFAULT, DUMMY_MODEL_SKIPS_CHECKS,
    FA3_ALL_MODELS_SM90, FA4_DECODE, FIRST_KV4, FP4_E2M1_REMOVED, FP4_RENAMED, HOOKS, INTEL_XPU_MLA_DECODE_ONLY,
    INTEL_XPU_MLA_PREFILL, MPS_TORCH_NATIVE, NVFP4_PREFILL_STEP, PREFILL_ONLY_DISABLE_KV_CACHE,
    SM11X_BLACKWELL, TOKENSPEED_MLA, TRTLLM_FMHAV2_SM120, TRTLLM_MHA_PREFILL_SM90, TRTLLM_MHA_SPLIT, release,
)
from kv4lint.target import ModelInfo


class _Unknown:
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # truthiness of an unknown is unknown
        raise Undetermined("truth value of an unknown")


UNKNOWN: Any = _Unknown()


class Undetermined(Exception):
    """The outcome depends on a value kv4lint cannot know."""


class OneOf:
    """A value known to be one of a few candidates (e.g. ROCm's MLA default: aiter or triton)."""

    __slots__ = ("options",)

    def __init__(self, *options):
        self.options = frozenset(options)

    def __repr__(self) -> str:
        return "one of " + "/".join(sorted(map(str, self.options)))

    def __bool__(self) -> bool:
        if all(self.options) or not any(self.options):
            return all(self.options)
        raise Undetermined("truth value of a partly known value")


def _vague(x) -> bool:
    return x is UNKNOWN or isinstance(x, OneOf)


def _k(x):
    if _vague(x):
        raise Undetermined("unknown value")
    return x


def eq(x, y) -> bool:
    return isin(x, (y,)) if not _vague(y) else _k(x) == _k(y)


def isin(x, seq) -> bool:
    if isinstance(x, OneOf):
        inside = {o in seq for o in x.options}
        if len(inside) == 1:
            return inside.pop()
    return _k(x) in seq


def anyis(value, *xs) -> bool:
    """``value in xs`` where some of ``xs`` may be (partly) unknown: decided when the known ones decide."""
    hits = []
    for x in xs:
        try:
            hits.append(isin(x, (value,)))
        except Undetermined:
            hits.append(None)
    if True in hits:
        return True
    if None in hits:
        raise Undetermined("unknown value")
    return False


# ---------------------------------------------------------------------------
# Releases: kv4lint.sglang.releases (the known releases and the named gates tested below)


def kv4_dtypes(n: int) -> tuple[str, ...]:
    """The ``--kv-cache-dtype`` values release 0.5.n's KV4 check triggers on (docs/sglang-rules.md §1.1)."""
    if n < FIRST_KV4:
        return ()
    return ("fp4_e2m1",) if n < FP4_RENAMED else ("nvfp4", "fp4_mx_block16")


FP4_NAMES = ("fp4_e2m1", "nvfp4", "fp4_mx_block16", "mxfp4")


# Lists of release 0.5.n's KV4 check (docs/sglang-rules.md §2.2).
def fa4_mla_list(n: int) -> list[str]:
    return ["cutlass_mla", "flashinfer", "trtllm_mla"] if n < CUTLASS_MLA_DROPPED else ["flashinfer", "trtllm_mla"]


def fa4_mha_list(n: int) -> list[str]:
    return ["triton", "torch_native", "flex_attention"]


def mla_list(n: int) -> list[str]:
    if n < FP4_RENAMED:
        return ["cutlass_mla", "flashinfer", "trtllm_mla", "flashmla"]
    if n < CUTLASS_MLA_DROPPED:
        return ["cutlass_mla", "flashinfer", "trtllm_mla"]
    return ["flashinfer", "trtllm_mla"]


def mha_list(n: int) -> list[str]:
    return ["triton", "torch_native", "flex_attention", "trtllm_mha"]


# ---------------------------------------------------------------------------
# Inputs and outputs


class Machine(Frozen):
    """The machine SGLang runs on: what torch reports (docs/sglang-rules.md §2.1): ``platform`` (cuda, rocm,
    xpu, cpu, npu, musa, mps, hpu; None: unknown) and ``arch`` (sm90, sm100 ...; None: unknown, meaningful on
    cuda only).

    kv4lint assumes a torch CUDA build new enough for the arch (CUDA >= 12.8
    for Blackwell, >= 12.3 for Hopper), as SGLang's FP4 recipes require.
    """

    __slots__ = ("platform", "arch")

    def __init__(self, platform: str | None, arch: str | None = None) -> None:
        self._set("platform", platform)
        self._set("arch", arch)

    @property
    def is_cuda(self) -> bool:
        return eq(self.platform if self.platform is not None else UNKNOWN, "cuda")

    def _major(self) -> int:
        if not self.is_cuda:
            return -1
        m = arch_major(self.arch)
        if m is None:
            raise Undetermined("GPU arch unknown")
        return m

    @property
    def is_sm90(self) -> bool:
        return self._major() == 9

    @property
    def is_sm100(self) -> bool:
        return self._major() == 10

    @property
    def is_sm120(self) -> bool:
        return self._major() == 12

    def is_blackwell(self, n: int) -> bool:
        return self._major() in ((10, 12) if n < SM11X_BLACKWELL else (10, 11, 12))


EventKind = Literal["error", "warning", "rewrite"]


@dataclass(frozen=True)
class Event:
    kind: EventKind
    step: str  # SGLang's function (step of resolution) that produced it
    code: str | None  # kv4lint code, None for events that are not about KV4
    sglang: str  # SGLang's message text
    fields: tuple[str, ...] = ()  # the ServerArgs fields at fault (for anchoring findings)
    exc: str = ""  # exception type for errors: RuntimeError / ValueError / AssertionError
    # Extra facts for kv4lint's message (the list checked, the backend at fault ...)
    data: dict = field(default_factory=dict, compare=False, hash=False)


class Outcome(Record):
    """What SGLang's resolution did with a launch: its events, the (prefill, decode, attention) backends as the KV4
    check saw them, the fields it derived (field -> the step that set it), and why it could not be decided."""

    __slots__ = ("events", "backends", "derived", "undetermined")

    def __init__(self, events: list[Event] | None = None, backends: tuple[Any, Any, Any] | None = None,
                 derived: dict[str, str] | None = None, undetermined: str | None = None) -> None:
        self.events = [] if events is None else events
        self.backends = backends
        self.derived = {} if derived is None else derived
        self.undetermined = undetermined

    @property
    def error(self) -> Event | None:
        return next((e for e in self.events if e.kind == "error"), None)


class _Raise(Exception):
    def __init__(self, event: Event):
        self.event = event


# SGLang's defaults for the fields the steps read (all releases in range).
DEFAULTS: dict[str, Any] = {
    "model_path": "model",
    "kv_cache_dtype": "auto",
    "attention_backend": None,
    "prefill_attention_backend": None,
    "decode_attention_backend": None,
    "prefill_kv_cache_dequant_dtype": "auto",
    "device": None,
    "speculative_algorithm": None,
    "speculative_draft_attention_backend": None,
    "speculative_attention_mode": "prefill",
    "speculative_ngram_max_bfs_breadth": 10,
    "speculative_eagle_topk": None,
    "page_size": None,
    "disaggregation_mode": "null",
    "enable_hierarchical_cache": False,
    "enable_lmcache": False,
    "enable_unified_memory": False,
    "enable_deterministic_inference": False,
    "rl_on_policy_target": None,
    "prefill_only_disable_kv_cache": False,
    "is_embedding": False,
}

BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


class _Args(dict):
    """Field values with SGLang's defaults; records which step set what."""

    def __init__(self, args: dict, past: frozenset = frozenset()):
        super().__init__(DEFAULTS)
        self.update(args)
        self.derived: dict[str, str] = {}
        self.past = past  # refusals to step over: (step, SGLang's text) of blockers (see simulate)

    def set(self, name: str, value, step: str) -> None:
        self[name] = value
        self.derived[name] = step


def _error(step, code, exc, text, *fields, **data) -> _Raise:
    return _Raise(Event("error", step, code, text, tuple(fields), exc, data))


def _refuse(a: _Args, step, code, exc, text, *fields, **data) -> None:
    """SGLang raises here, unless the caller asked to step over this refusal (``simulate(past=...)``)."""
    if (step, text) not in a.past:
        raise _error(step, code, exc, text, *fields, **data)


def _int(x, default=None):
    x = _k(x)
    if x is None:
        return default
    try:
        return int(x)
    except (TypeError, ValueError):
        raise Undetermined(f"not an integer: {x!r}") from None


def _upper(x):
    x = _k(x)
    return x.upper() if isinstance(x, str) else x


# ---------------------------------------------------------------------------
# The KV4 check (docs/sglang-rules.md §0.1 rows 1-16, §2.2)


def _kv4(n: int, a: _Args, m: Machine, mla, events: list[Event]) -> None:
    step = "handle_kv4_compatibility" if n >= HOOKS else "_handle_kv4_compatibility"
    dtype = a["kv_cache_dtype"]
    if not isin(dtype, kv4_dtypes(n)):
        return
    A = a["attention_backend"]
    P = a["prefill_attention_backend"] if _k(a["prefill_attention_backend"]) else A
    D = a["decode_attention_backend"] if _k(a["decode_attention_backend"]) else A

    if not m.is_cuda:
        raise _error(step, "KV402", "RuntimeError", "KV4 is not tested on non-CUDA platforms.", "kv_cache_dtype")
    if n >= FP4_RENAMED and eq(dtype, "nvfp4") and not (m.is_sm100 or m.is_sm120):
        raise _error(step, "KV404", "RuntimeError",
                     "--kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use --kv-cache-dtype=fp4_mx_block16 "
                     "for the block-size-16 FP4 recipe.", "kv_cache_dtype")
    mixed = False
    if n >= NVFP4_PREFILL_STEP:
        if _k(a["enable_unified_memory"]):
            raise _error(step, "KV405", "ValueError",
                         "FP4 KV cache does not yet support --enable-unified-memory: the unified MHA pool does not "
                         "allocate FP4 block scales or the prefill dequant workspace.", "enable_unified_memory")
        native = eq(dtype, "nvfp4") and m.is_sm100 and anyis("trtllm_mha", P, D)
        mixed = eq(dtype, "nvfp4") and eq(P, "flashinfer") and eq(D, "trtllm_mha")
        alg = _upper(a["speculative_algorithm"])
        if native and alg in ("DFLASH", "DSPARK"):
            raise _error(step, "KV405", "ValueError",
                         f"SM100 native NVFP4 speculative decoding does not yet support {alg}; "
                         "use EAGLE/NEXTN or NGRAM.",
                         "speculative_algorithm")
        if native and alg is not None and alg not in ("EAGLE", "EAGLE3", "NEXTN", "NGRAM"):
            raise _error(step, "KV405", "ValueError",
                         f"SM100 native NVFP4 speculative decoding supports EAGLE, EAGLE3, NEXTN, and breadth-1 NGRAM; "
                         f"got {alg}.", "speculative_algorithm")
        if native and alg == "NGRAM":
            breadth = _k(a["speculative_ngram_max_bfs_breadth"])
            if _int(breadth) != 1:
                raise _error(step, "KV405", "ValueError",
                             "SM100 native NVFP4 NGRAM speculative decoding requires "
                             "--speculative-ngram-max-bfs-breadth=1 because trtllm_mha supports linear target "
                             f"verification only; got {breadth}.", "speculative_ngram_max_bfs_breadth")
        if native and alg not in (None, "NGRAM"):
            draft = _k(a["speculative_draft_attention_backend"])
            if draft is None:
                events.append(Event("rewrite", step, None,
                                    "SM100 native NVFP4 speculative decoding uses trtllm_mha for the draft worker.",
                                    ("speculative_draft_attention_backend",)))
                a.set("speculative_draft_attention_backend", "trtllm_mha", step)
            elif draft != "trtllm_mha":
                raise _error(step, "KV405", "ValueError",
                             "SM100 native NVFP4 speculative decoding requires --speculative-draft-attention-backend="
                             "trtllm_mha so the draft worker consumes its physical NVFP4 KV layout; got "
                             f"{draft!r}.", "speculative_draft_attention_backend")
        if (native and mixed and _k(a["speculative_algorithm"]) is not None
                and eq(a["speculative_attention_mode"], "prefill")):
            events.append(Event("rewrite", step, None,
                                "SM100 mixed NVFP4 speculative decoding routes target verify to trtllm_mha; overriding "
                                "--speculative-attention-mode=prefill to decode.", ("speculative_attention_mode",)))
            a.set("speculative_attention_mode", "decode", step)
        if native and not eq(a["disaggregation_mode"], "null"):
            raise _error(step, "KV405", "ValueError",
                         "SM100 native NVFP4 with trtllm_mha does not yet support PD disaggregation because its "
                         "physical block-scale layout is not implemented by the KV transfer path.",
                         "disaggregation_mode")
        if native and (_k(a["enable_hierarchical_cache"]) or _k(a["enable_lmcache"])):
            raise _error(step, "KV405", "ValueError",
                         "SM100 native NVFP4 with trtllm_mha does not yet support hierarchical KV cache or LMCache "
                         "because their host pools do not preserve the physical block-scale layout.",
                         "enable_hierarchical_cache" if _k(a["enable_hierarchical_cache"]) else "enable_lmcache")

    if not eq(P, D) and not eq(P, "fa4"):
        if not mixed:
            events.append(Event("warning", step, "KV403",
                                f"Attention: Using KV4 with PREFILL = {P} and DECODE = {D}. Compatibility issues are "
                                "unlikely, but may occur in rare edge cases.",
                                ("prefill_attention_backend", "decode_attention_backend"), data={"P": P, "D": D}))
        return
    # P = fa4 checks the decode backend against the FA4 lists, otherwise A against the plain lists.
    fa4 = eq(P, "fa4")
    att = "MLA" if _k(mla) else "MHA"
    lists = {(True, "MLA"): fa4_mla_list, (True, "MHA"): fa4_mha_list, (False, "MLA"): mla_list,
             (False, "MHA"): mha_list}
    lst = lists[(fa4, att)](n)
    checked, name = (D, "decode_attention_backend") if fa4 else (A, "attention_backend")
    if not isin(checked, lst):
        raise _error(step, "KV401", "AssertionError",
                     f"KV4 {'FA4 ' if fa4 else ''}{att} expects {name} to be one of {lst}, but got {checked}",
                     name, allowed=lst, backend=checked, which="decode" if fa4 else "attention",
                     attention=att.lower())


def kv4_check(version, args: dict, machine: Machine, mla) -> list[Event]:
    """Release ``version``'s KV4 check function alone, on backends as it sees them."""
    n = release(version)
    a = _Args(args)
    events: list[Event] = []
    try:
        _kv4(n, a, machine, mla, events)
    except _Raise as r:
        events.append(r.event)
    return events


# ---------------------------------------------------------------------------
# NVFP4 prefill dequantisation (0.5.21+, docs/sglang-rules.md §2.3)

_DEQUANT_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}
_BACKEND_DEQUANT = {v: k for k, v in _DEQUANT_BACKEND.items()}


def _prefill_dequant(n: int, a: _Args, m: Machine, events: list[Event]) -> None:
    if n < NVFP4_PREFILL_STEP:
        return
    step = "handle_nvfp4_prefill_kv_dequant_dtype"
    requested = a["prefill_kv_cache_dequant_dtype"]
    if not eq(a["kv_cache_dtype"], "nvfp4"):
        if not eq(requested, "auto"):
            _refuse(a, step, "KV405", "ValueError",
                    "--prefill-kv-cache-dequant-dtype applies only with --kv-cache-dtype=nvfp4.",
                    "prefill_kv_cache_dequant_dtype")
        return
    if eq(requested, "auto"):
        explicit = _k(a["prefill_attention_backend"]) or _k(a["attention_backend"])
        if explicit in _BACKEND_DEQUANT:
            requested = _BACKEND_DEQUANT[explicit]
        else:
            if explicit is not None:
                fld = "prefill_attention_backend" if a["prefill_attention_backend"] else "attention_backend"
                _refuse(a, step, "KV401", "ValueError",
                        "NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend "
                        f"{explicit!r} provides neither.", fld, backend=explicit,
                        allowed=["flashinfer", "trtllm_mha"], which=fld.split("_")[0])
            requested = "nvfp4" if m.is_sm100 else "fp8_e4m3"
    if eq(requested, "nvfp4") and not m.is_sm100:
        _refuse(a, step, "KV404", "ValueError",
                "Native NVFP4 prefill currently requires SM100; use --prefill-kv-cache-dequant-dtype=fp8_e4m3 "
                "on this platform.", "prefill_kv_cache_dequant_dtype")
    if requested not in _DEQUANT_BACKEND:
        raise Undetermined(f"prefill dequant dtype {requested!r}")
    target = _DEQUANT_BACKEND[requested]
    explicit_prefill = _k(a["prefill_attention_backend"])
    if explicit_prefill is not None and explicit_prefill != target:
        _refuse(a, step, "KV401", "ValueError",
                f"--prefill-kv-cache-dequant-dtype={requested} requires prefill backend {target!r}, but "
                f"--prefill-attention-backend={explicit_prefill!r} was set. Remove the backend option and select "
                "the KV dtype only.", "prefill_attention_backend", backend=explicit_prefill, allowed=[target],
                which="prefill")
    explicit_decode = _k(a["decode_attention_backend"])
    if explicit_decode not in (None, "trtllm_mha"):
        _refuse(a, step, "KV401", "ValueError",
                f"NVFP4 decode requires --decode-attention-backend=trtllm_mha; got {explicit_decode!r}. "
                "Remove the backend option; NVFP4 selects the supported decode implementation automatically.",
                "decode_attention_backend", backend=explicit_decode, allowed=["trtllm_mha"], which="decode")
    rewritten = ["prefill_attention_backend", "decode_attention_backend"]
    a.set("prefill_attention_backend", target, step)
    a.set("decode_attention_backend", "trtllm_mha", step)
    if eq(a["prefill_kv_cache_dequant_dtype"], "auto"):
        a.set("prefill_kv_cache_dequant_dtype", requested, step)
        rewritten.append("prefill_kv_cache_dequant_dtype")
    events.append(Event("rewrite", step, None,
                        f"NVFP4 prefill dequant dtype: {requested}; prefill input: {requested}; decode input: nvfp4.",
                        tuple(rewritten)))


def prefill_dequant(version, args: dict, machine: Machine) -> tuple[list[Event], dict]:
    n = release(version)
    a = _Args(args)
    events: list[Event] = []
    try:
        _prefill_dequant(n, a, machine, events)
    except _Raise as r:
        events.append(r.event)
    return events, dict(a)


# ---------------------------------------------------------------------------
# Default attention backend (docs/sglang-rules.md §3.2, §3.3)

FA3_ARCHITECTURES_057 = frozenset({
    "Llama4ForConditionalGeneration", "LlamaForCausalLM", "Olmo2ForCausalLM", "Gemma2ForCausalLM",
    "Gemma3ForConditionalGeneration", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration", "Glm4MoeForCausalLM",
    "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration", "Step3VLForConditionalGeneration",
})

DEEPSEEK_FAMILY = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm5NextForConditionalGeneration", "HYV4ForCausalLM",
    "HYV4ForCausalLMNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
})
DEEPSEEK_FAMILY_057 = frozenset({"DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM",
                                 "PixtralForConditionalGeneration"})


def _topk_one(a: _Args) -> bool:
    topk = _int(a["speculative_eagle_topk"])
    if topk is None:
        return True
    return topk == 1 and _int(a["page_size"]) in (None, 1)


def default_backend(n: int, a: _Args, m: Machine, model: ModelInfo, mla) -> Any:
    """The attention backend SGLang picks when none is set (UNKNOWN when it depends on what kv4lint can't see)."""
    platform = m.platform
    if platform is None:
        return UNKNOWN
    if platform == "rocm":
        return "aiter" if not _k(mla) else OneOf("aiter", "triton")  # MLA: depends on kv heads per TP rank
    if platform == "mps" and n >= MPS_TORCH_NATIVE:
        return "torch_native"
    if platform != "cuda":
        return "triton"  # the "other" row: FlashInfer needs CUDA
    arch = model.architecture
    if n >= MPS_TORCH_NATIVE and arch == "WhisperForConditionalGeneration":
        return "flashinfer"

    def other_cuda():
        return "triton" if _k(mla) else "flashinfer"  # flashinfer assumed installed (it ships with SGLang on CUDA)

    major = m._major()
    if major == 9:
        if _k(mla):
            return "fa3"
        if _topk_one(a):
            if n >= FA3_ALL_MODELS_SM90:
                return "fa3"
            if arch is None:
                return UNKNOWN
            if arch in FA3_ARCHITECTURES_057:
                return "fa3"
        return other_cuda()
    if major == 10:
        if _k(mla):
            return "flashinfer"
        alg = _upper(a["speculative_algorithm"])
        if _topk_one(a) and (alg is None or _k(a["speculative_eagle_topk"]) is not None
                             or (n >= DFLASH_TRTLLM_MHA_DEFAULT and alg == "DFLASH")):
            return "trtllm_mha"  # fa4 for asymmetric K/V head dims (0.5.17+), not visible from the id
        return other_cuda()
    return other_cuda()


# ---------------------------------------------------------------------------
# The pipeline


_ALIASES = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}


def _deprecated_aliases(a: _Args, events: list[Event]) -> None:
    """0.5.23's ``handle_deprecated_args`` for backends: renames, and tokenspeed_mla's fp8 rewrite."""
    step = "handle_deprecated_args"
    renamed: dict = {}
    warnings: list[str] = []
    original = (a["attention_backend"], a["decode_attention_backend"])
    for attr in ("attention_backend", "decode_attention_backend", "prefill_attention_backend",
                 "speculative_draft_attention_backend"):
        v = a[attr]
        if not _vague(v) and v in _ALIASES:
            warnings.append(f"--{attr.replace('_', '-')}={v} is deprecated; use '{_ALIASES[v]}' instead.")
            renamed[attr] = _ALIASES[v]
    if renamed.get("prefill_attention_backend") == "cutedsl_mla":
        renamed["prefill_attention_backend"] = "trtllm_mla"
    code = None
    if anyis("tokenspeed_mla", *original):
        if not eq(a["kv_cache_dtype"], "fp8_e4m3"):
            warnings.append("tokenspeed_mla required FP8 KV; setting --kv-cache-dtype=fp8_e4m3.")
            renamed["kv_cache_dtype"] = "fp8_e4m3"
            code = "KV406"
        if _k(a["speculative_algorithm"]) is not None and eq(a["speculative_attention_mode"], "prefill"):
            renamed["speculative_attention_mode"] = "decode"
    if not renamed:
        return
    for w in warnings[:-1]:
        events.append(Event("warning", step, None, w))
    fld = "attention_backend" if eq(original[0], "tokenspeed_mla") else "decode_attention_backend"
    events.append(Event("rewrite", step, code, warnings[-1], tuple(sorted(renamed)),
                        data={"backend": "tokenspeed_mla", "field": fld}))
    for k, v in renamed.items():
        a.set(k, v, step)


def _effective_device(a: _Args, m: Machine):
    dev = _k(a["device"])
    if dev is None:
        if m.platform is None:
            return UNKNOWN
        return "cuda" if m.platform in ("cuda", "rocm") else m.platform
    return str(dev).split(":", 1)[0].lower()


def _steps(n: int, a: _Args, m: Machine, model: ModelInfo, events: list[Event], backends: list | None = None) -> tuple:
    dtype = a["kv_cache_dtype"]
    mla = UNKNOWN if model.mla is None else model.mla
    mp = a["model_path"]
    # An unknown model path is taken to be a real model: launch helpers pass it as a parameter.
    if not _vague(mp) and mp is not None and str(mp).lower() in ("none", "dummy") and n >= DUMMY_MODEL_SKIPS_CHECKS:
        return None, None, None  # no resolution checks for dummy models

    # 1. deprecated-argument aliases (0.5.23: tokenspeed_mla -> cutedsl_mla, compressed -> dsv4)
    if n >= BACKEND_ALIASES:
        _deprecated_aliases(a, events)
        dtype = a["kv_cache_dtype"]

    # 2. --prefill-only-disable-kv-cache (0.5.12+)
    if n >= PREFILL_ONLY_DISABLE_KV_CACHE and _k(a["prefill_only_disable_kv_cache"]):
        if not _k(a["is_embedding"]):
            _refuse(a, "validate_prefill_only_disable_kv_cache_args", None, "ValueError",
                    "--prefill-only-disable-kv-cache requires --is-embedding.", "prefill_only_disable_kv_cache")
        if isin(dtype, kv4_dtypes(n)):
            names = ("--kv-cache-dtype=fp4_e2m1" if n < FP4_RENAMED
                     else "--kv-cache-dtype=nvfp4 or --kv-cache-dtype=fp4_mx_block16")
            _refuse(a, "validate_prefill_only_disable_kv_cache_args", "KV405", "ValueError",
                    f"--prefill-only-disable-kv-cache does not currently support {names} because the FP4 pool "
                    "uses a separate allocation path.", "prefill_only_disable_kv_cache")

    # 3. device handlers
    dev = _effective_device(a, m)
    if dev == "hpu":
        a.set("attention_backend", "torch_native", "handle_hpu_backends")
    elif dev == "cpu" and _k(a["attention_backend"]) is None:
        a.set("attention_backend", "intel_amx", "handle_cpu_backends")
    elif dev == "npu":  # NPU defaults set all three, whatever the user chose
        for f in BACKEND_FIELDS:
            a.set(f, "ascend", "handle_npu_backends")
    elif dev is UNKNOWN and _k(a["attention_backend"]) is None:
        a["attention_backend"] = UNKNOWN

    # 4. model-specific adjustments
    arch = model.architecture
    no_flags = all(_k(a[f]) is None for f in BACKEND_FIELDS)
    family = DEEPSEEK_FAMILY if n >= DEEPSEEK_FAMILY_WIDENED else DEEPSEEK_FAMILY_057
    if arch in family and m.platform in ("cuda", "rocm"):
        if model.dsa:
            if no_flags:
                a.set("attention_backend", "dsa" if n >= FP4_RENAMED else "nsa", "handle_model_specific_adjustments")
            d = _k(dtype)
            if d == "auto":
                d = "fp8_e4m3" if m._major() >= 10 else "bfloat16"
            elif d == "bf16":
                d = "bfloat16"
            if d not in ("bfloat16", "fp8_e4m3"):
                name = "DSA" if n >= FP4_RENAMED else "NSA"
                _refuse(a, "handle_model_specific_adjustments", "KV405", "AssertionError",
                        f"DeepSeek {name} only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype",
                        "kv_cache_dtype",
                        feature=f"the DeepSeek sparse attention ({name}) of {arch}")
        elif no_flags and m.is_sm100:
            a.set("attention_backend", "trtllm_mla", "handle_model_specific_adjustments")
    elif arch == "DeepseekV4ForCausalLM" and n >= DEEPSEEK_V4:
        a.set("attention_backend", "dsv4", "apply_deepseek_v4_defaults")
        d = _k(dtype)
        if d == "auto":
            d = "fp8_e4m3"
        allowed = ("fp8_e4m3",) if n < DEEPSEEK_V4_BF16 else ("fp8_e4m3", "bfloat16")
        if d not in allowed:
            _refuse(a, "apply_deepseek_v4_defaults", "KV405", "AssertionError",
                    f"{d} is not supported for DeepseekV4ForCausalLM", "kv_cache_dtype",
                    feature="DeepSeek-V4 (DeepseekV4ForCausalLM)")
    elif arch == "GptOssForCausalLM" and no_flags:
        a.set("attention_backend", _by_machine(m, sm100="trtllm_mha", sm90="fa3", rocm="aiter", xpu="intel_xpu",
                                               cpu="intel_amx", other="triton"), "handle_model_specific_adjustments")
    elif arch in ("Llama4ForConditionalGeneration", "Llama4ForCausalLM") and _k(a["attention_backend"]) is None \
            and m.platform != "cpu":
        a.set("attention_backend", _by_machine(m, sm100="trtllm_mha", sm90="fa3", rocm="aiter", xpu="intel_xpu",
                                               cpu="triton", other="triton"), "handle_model_specific_adjustments")

    # 5. deterministic inference (before the default from 0.5.12)
    if n >= DETERMINISTIC_BEFORE_DEFAULT and (
            _k(a["enable_deterministic_inference"]) or _k(a["rl_on_policy_target"]) is not None) \
            and _k(a["attention_backend"]) is None:
        if m.is_sm100 or m.is_sm120:
            det = "triton" if arch in DEEPSEEK_FAMILY else "flashinfer"
        else:
            det = "fa3"
        a.set("attention_backend", det, "handle_deterministic_inference")

    # 6. NVFP4 prefill dequant (0.5.21+)
    _prefill_dequant(n, a, m, events)

    # 7. attention-backend compatibility: default fill and backend/platform rules
    P0, D0 = a["prefill_attention_backend"], a["decode_attention_backend"]
    if _k(P0) is not None and eq(P0, D0):
        a.set("attention_backend", P0, "handle_attention_backend_compatibility")
    elif _k(a["attention_backend"]) is None:
        a.set("attention_backend", default_backend(n, a, m, model, mla), "default attention backend")
    A = a["attention_backend"]
    P = P0 if _k(P0) else A
    D = D0 if _k(D0) else A
    step = "handle_attention_backend_compatibility" if n >= HOOKS else "_handle_attention_backend_compatibility"

    # torch Flex Attention (right after the default fill): no speculative decoding, whatever the KV cache
    if eq(A, "flex_attention") and _k(a["speculative_algorithm"]) is not None:
        _refuse(a, step, None, "AssertionError",
                "Speculative decoding is currently not supported with Flex Attention backend", "speculative_algorithm")

    if anyis("trtllm_mla", A, D):
        fld = "attention_backend" if eq(A, "trtllm_mla") else "decode_attention_backend"
        if not m.is_blackwell(n):
            gpus = "(SM100)" if n < SM11X_BLACKWELL else "(SM100/SM12x)"
            _refuse(a, step, "KV401", "ValueError",
                    f"TRTLLM MLA backend is only supported on Blackwell GPUs {gpus}. "
                    "Please use a different backend.",
                    fld, backend="trtllm_mla", platform_rule=True)
        allowed = ["fp8_e4m3", "fp4_e2m1", "bf16", "auto"] if n < FP4_E2M1_REMOVED else ["fp8_e4m3", "bf16", "auto"]
        if not isin(dtype, allowed):
            listed = "fp8_e4m3, fp4_e2m1, bf16, or auto" if n < FP4_E2M1_REMOVED else "fp8_e4m3, bf16, or auto"
            _refuse(a, step, "KV401", "ValueError",
                    f"TensorRT-LLM MLA backend only supports kv-cache-dtype of {listed}.", fld,
                    backend="trtllm_mla", dtype_allowed=allowed)
    if TOKENSPEED_MLA <= n < BACKEND_ALIASES and anyis("tokenspeed_mla", A, D):
        fld = "attention_backend" if eq(A, "tokenspeed_mla") else "decode_attention_backend"
        if not m.is_blackwell(n):
            _refuse(a, step, "KV401", "ValueError",
                    "tokenspeed_mla backend is only supported on Blackwell GPUs (SM100/SM12x).", fld,
                    backend="tokenspeed_mla", platform_rule=True)
        if not eq(dtype, "fp8_e4m3"):
            _refuse(a, step, "KV401", "ValueError",
                    f"tokenspeed_mla backend requires kv-cache-dtype=fp8_e4m3, got {dtype}.", fld,
                    backend="tokenspeed_mla", dtype_allowed=["fp8_e4m3"])
    if n >= CUTEDSL_MLA and anyis("cutedsl_mla", A, P0, D0):  # the raw fields, as SGLang reads them
        fld = next(f for f, x in (("attention_backend", A), ("prefill_attention_backend", P0),
                                  ("decode_attention_backend", D0)) if x == "cutedsl_mla")
        if eq(P0, "cutedsl_mla"):
            _refuse(a, step, None, "AssertionError", "CuteDSL MLA only supports decoding for now", fld)
        if not m.is_sm100:
            _refuse(a, step, "KV401", "ValueError",
                    "CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). Please use a different "
                    "backend.", fld, backend="cutedsl_mla", platform_rule=True)
        if not isin(dtype, ("fp8_e4m3", "bf16", "bfloat16", "auto")):
            _refuse(a, step, "KV401", "ValueError",
                    "CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.", fld,
                    backend="cutedsl_mla", dtype_allowed=["fp8_e4m3", "bf16", "bfloat16", "auto"])
        if _k(P0) is None:  # CuteDSL MLA decodes only: an unset prefill backend becomes trtllm_mla
            a.set("prefill_attention_backend", "trtllm_mla", "CuteDSL MLA prefill fill")
            P0 = P = "trtllm_mla"
    if n < TRTLLM_MHA_SPLIT:
        if anyis("trtllm_mha", A, P0, D0) and not m.is_sm100:  # 0.5.7-0.5.9 read the raw fields, A included
            fld = _field_of("trtllm_mha", a)
            _refuse(a, step, "KV404", "ValueError",
                    "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). "
                    "Please use a different backend.",
                    fld, backend="trtllm_mha", platform_rule=True)
    else:
        if eq(P, "trtllm_mha"):
            ok = m.is_sm100 if n < TRTLLM_MHA_PREFILL_SM90 else (m.is_sm90 or m.is_sm100 or m.is_sm120)
            if not ok:
                text = ("TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). Please use a "
                        "different prefill backend.") if n < TRTLLM_MHA_PREFILL_SM90 else (
                        "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
                        "Please use a different prefill backend.")
                _refuse(a, step, "KV404", "ValueError", text, _field_of("trtllm_mha", a, prefer="prefill"),
                        backend="trtllm_mha", platform_rule=True)
        if eq(D, "trtllm_mha") and not (m.is_sm90 or m.is_sm100 or m.is_sm120):
            _refuse(a, step, "KV404", "ValueError",
                    "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and "
                    "(SM120) GPUs. Please use a different decode backend.",
                    _field_of("trtllm_mha", a, prefer="decode"), backend="trtllm_mha", platform_rule=True)
        if n >= TRTLLM_FMHAV2_SM120 and eq(P, "trtllm_mha") and m.is_sm120 and eq(dtype, "fp8_e4m3"):
            _refuse(a, step, None, "ValueError",
                    "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.",
                    _field_of("trtllm_mha", a, prefer="prefill"))
    # The platform fallback pass: intel_xpu on an XPU machine without Intel XMX runs triton (kv4lint assumes
    # no XMX, as the conformance simulation's probe does; with XMX the launch fails on the same KV4 check).
    if eq(A, "intel_xpu") and dev == "xpu":
        a.set("attention_backend", "triton", step)
        A = "triton"
        P = P0 if _k(P0) else A
        D = D0 if _k(D0) else A
    if INTEL_XPU_MLA_DECODE_ONLY <= n < INTEL_XPU_MLA_PREFILL and _k(mla) and eq(P, "intel_xpu"):
        _refuse(a, step, None, "ValueError",
                "intel_xpu backend is only supported on decode for MLA models, please set "
                "--decode-attention-backend to intel_xpu and do not set --attention-backend or "
                "--prefill-attention-backend to intel_xpu for prefill instead use triton.",
                _field_of("intel_xpu", a, prefer="prefill"))
    if n < FA4_DECODE and anyis("fa4", A, D0):  # 0.5.7 only, after the TRT-LLM rules
        _refuse(a, step, "KV401", "ValueError",
                "FA4 backend is only supported for prefill. Please use `--prefill-attention-backend fa4` instead.",
                "attention_backend" if eq(A, "fa4") else "decode_attention_backend", backend="fa4")
    if backends is not None:
        backends[:] = [P, D, A]

    # 8. the KV4 check
    _kv4(n, a, m, mla, events)
    return P, D, A


def _field_of(backend: str, a: _Args, prefer: str = "") -> str:
    order = [f"{prefer}_attention_backend"] if prefer else []
    order += ["attention_backend", "prefill_attention_backend", "decode_attention_backend"]
    for f in order:
        if a.get(f) == backend:
            return f
    return "attention_backend"


def _by_machine(m: Machine, *, sm100, sm90, rocm, xpu, cpu, other):
    if m.platform == "rocm":
        return rocm
    if m.platform == "xpu":
        return xpu
    if m.platform == "cpu":
        return cpu
    if m.platform == "cuda":
        if m.is_sm100:
            return sm100
        if m.is_sm90:
            return sm90
    if m.platform is None:
        return UNKNOWN
    return other


def simulate(version, args: dict, machine: Machine, model: ModelInfo | None = None, *,
             past: frozenset = frozenset()) -> Outcome:
    """Replay release ``version``'s resolution up to its KV4 check (docs/sglang-rules.md §2.4).

    Stops at the first error, as SGLang does.  ``Outcome.undetermined`` is set
    (and the events so far kept) when the outcome depends on an unknown.
    ``past`` names refusals, as ``(step, SGLang's text)``, to step over: what
    SGLang would do once those blockers were removed (kv4lint's attribution
    asks whether the KV4 check would refuse the launch too).
    """
    n = release(version)
    model = model or ModelInfo()
    a = _Args(args, past)
    out = Outcome()
    if n < FIRST_KV4:
        return out
    seen: list = []
    try:
        out.backends = _steps(n, a, machine, model, out.events, seen)
    except _Raise as r:
        out.events.append(r.event)
        if seen:
            out.backends = tuple(seen)
    except Undetermined as u:
        out.undetermined = str(u) or "unknown"
    out.derived = dict(a.derived)
    return out
