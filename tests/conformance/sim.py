"""SGLang's resolution around the KV4 check, composed of SGLang's own steps.

For the simulation comparison (kv4lint ``simulate``), these steps of a release
run in SGLang's order, each one SGLang's code taken from the wheel:

1. the deprecated attention-backend aliases of ``handle_deprecated_args``
   (0.5.23: ``tokenspeed_mla`` -> ``cutedsl_mla`` with an FP8 KV cache; the
   statements of that block only, verbatim, with the function's first
   statement ``cfg = resolving_view(server_args)``);
2. the device handlers (``handle_{hpu,cpu,npu,mps,xpu}_backends``, methods up to
   0.5.18), in SGLang's order, with ``--device`` as ``get_device()`` detects it
   (``AUTO_DEVICE``) unless the arguments set it;
3. ``handle_nvfp4_prefill_kv_dequant_dtype`` (0.5.21+);
4. the whole attention-backend compatibility handler
   (``ServerArgs._handle_attention_backend_compatibility`` up to 0.5.18,
   ``attention_hook.handle_attention_backend_compatibility`` from 0.5.19),
   with every post-process pass and helper it calls (default backend choice,
   TRT-LLM MLA / tokenspeed / CuteDSL checks, TRT-LLM MHA platform rules, FA4,
   page-size snaps ...), linked from the wheel (see ``linker``);
5. the KV4 check.

Steps between them that the grid keeps inert are not run, and the grid is
restricted to keep them inert (documented in ``grid.SimRunner``): deprecated
arguments other than backend aliases, ``--prefill-only-disable-kv-cache``
(off), PD disaggregation (off), the CPU/NPU/HPU/XPU/MPS device handlers (the
grid's machines are CUDA and ROCm, whose device is ``cuda``), model-specific
adjustments (the grid's models have none: ``LlamaForCausalLM``,
``MistralForCausalLM``, ``MiniCPM3ForCausalLM``), deterministic inference (off)
and mamba/linear attention (not those models).

Stubs as in ``oracle`` (views, declarations, the recorder, platform probes on a
fake torch), plus: an x86-64 host (with Intel AMX on the CPU machine), no Intel XMX, no MLX, a 64 GiB NPU, a model config (architectures, MLA, no attention sinks, no
asymmetric K/V heads, 8 KV heads, context 4096, not encoder-decoder),
``is_flashinfer_available`` = CUDA (FlashInfer installed, the environment does
not disable it), no Intel AMX/XMX, no out-of-tree platform plugin, SGLang
environment variables unset.
"""

from __future__ import annotations

import ast
import functools
import types
from dataclasses import dataclass, field
from typing import Any

from . import extract, oracle, probes, wheels
from .linker import Linker
from .oracle import OracleError, Outcome, SERVER_ARGS, KV_CACHE_HOOK

ATTENTION_HOOK = "sglang/srt/arg_groups/attention_hook.py"
PLATFORM_HOOK = "sglang/srt/arg_groups/platform_hook.py"
PIPELINE = "sglang/srt/arg_groups/pipeline.py"
# What ``get_device()`` auto-detects on each machine (``--device`` unset).
AUTO_DEVICE = {"cuda": "cuda", "rocm": "cuda", "xpu": "xpu", "cpu": "cpu", "npu": "npu", "musa": "musa",
               "mps": "mps", "hpu": "hpu"}
SERVING_HOOK = "sglang/srt/arg_groups/serving_hook.py"


class FakeModelConfig:
    def __init__(self, architecture: str, mla: bool, kv_heads: int = 8):
        self.kv_heads = kv_heads
        self.hf_config = types.SimpleNamespace(architectures=[architecture], dual_chunk_attention_config=None)
        self.hf_text_config = self.hf_config
        self.is_encoder_decoder = False
        self.context_len = 4096
        self.has_asymmetric_kv = False
        self.has_attention_sinks = False
        self.is_hybrid_swa = False
        self.mla = mla

    def get_num_kv_heads(self, tp_size):
        return self.kv_heads


class _Inert:
    """Stands for objects outside the KV4 question (the CUDA-graph config): every attribute, call and
    assignment works and decides nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __call__(self, *a, **k):
        return _Inert()


class _Names:
    """Enum stand-in for the CUDA-graph enums: every member is its own name."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return name


class _Env:
    def __getattr__(self, name):
        return types.SimpleNamespace(get=lambda: None, value=None)


def _declare_resolution(server_args, source, **fields):
    """SGLang's declaration: appended to the record's stash (views read it), fields untouched."""
    oracle._REC.current.append(("rewrite", tuple(sorted(fields.items())), oracle._caller_where(), oracle._REC.step,
                                source))
    stash = server_args.__dict__.setdefault("_resolved_overrides", [])
    stash.append((source, dict(fields)))


def _current(server_args, name):
    """A field as resolution has decided it so far: the last declaration, else the field."""
    for _source, declared in reversed(server_args.__dict__.get("_resolved_overrides") or ()):
        if name in declared:
            return declared[name]
    return getattr(server_args, name)


class SimArgs:
    """A ServerArgs record: given fields, then the wheel's literal defaults, then ServerArgs methods."""

    _release: oracle.Release
    _linker: Linker
    _missing_ok = {"model_path": "model", "_cuda_graph_config_locked": frozenset()}
    _inert = ("cuda_graph_config",)

    def __init__(self, values: dict[str, Any], model: FakeModelConfig):
        self.__dict__.update(values)
        self._resolved_overrides = []
        self._model_config = model
        self.model_config = model

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        d = self._release.all_defaults
        if name in self._inert:
            value = _Inert()
        elif name in d:
            value = d[name]
        elif name in self._missing_ok:
            value = self._missing_ok[name]
        else:
            try:
                fn = self._linker.function(SERVER_ARGS, name, cls="ServerArgs")
            except KeyError:
                if name.startswith("_"):  # private bookkeeping probed with getattr(..., default)
                    raise AttributeError(name) from None
                raise OracleError(f"the simulation read {name!r}, which it does not model") from None
            return types.MethodType(fn, self)
        self.__dict__[name] = value
        return value

    # stubs for methods that build heavy objects
    def get_model_config(self):
        return self._model_config

    def use_mla_backend(self):
        return self._model_config.mla


@dataclass
class SimVerdict:
    outcomes: list[Outcome] = field(default_factory=list)
    backends: tuple | None = None  # (P, D, A) as the KV4 check saw them, if it ran
    kv4_reached: bool = False


class Simulation:
    def __init__(self, version: str):
        self.version = version
        self.rel = oracle.release(version)
        self._linkers: dict[tuple, Linker] = {}
        self._cls: dict[tuple, type] = {}

    # ---- the steps ----------------------------------------------------------------------
    @functools.cached_property
    def handler(self) -> tuple[str, str, str | None]:
        if extract.find_def(self.version, ATTENTION_HOOK, "handle_attention_backend_compatibility") is not None:
            return ATTENTION_HOOK, "handle_attention_backend_compatibility", None
        if extract.find_def(self.version, SERVER_ARGS, "_handle_attention_backend_compatibility", "ServerArgs"):
            return SERVER_ARGS, "_handle_attention_backend_compatibility", "ServerArgs"
        raise OracleError(f"sglang {self.version}: no attention-backend compatibility handler")

    @functools.cached_property
    def device_handlers(self) -> list[tuple[str, str, str | None]]:
        """(member, name, class) of the device handlers (hpu, cpu, npu, mps, xpu), in SGLang's call order."""
        found = []
        pipeline = wheels.read_source(self.version, PIPELINE) or ""
        post_init = wheels.read_source(self.version, SERVER_ARGS) or ""
        for dev in ("hpu", "cpu", "npu", "mps", "xpu"):
            fn = f"handle_{dev}_backends"
            node = extract.find_def(self.version, PLATFORM_HOOK, fn)
            if node is not None:
                pos = pipeline.find(fn)
                found.append((pos, (PLATFORM_HOOK, fn, None)))
                continue
            node = extract.find_def(self.version, SERVER_ARGS, "_" + fn, "ServerArgs")
            if node is not None:
                pos = post_init.find(f"self._{fn}()")
                found.append((pos, (SERVER_ARGS, "_" + fn, "ServerArgs")))
        if any(pos < 0 for pos, _ in found):
            raise OracleError(f"sglang {self.version}: cannot place the device handlers in the pipeline")
        return [h for _, h in sorted(found)]

    @functools.cached_property
    def alias_block(self) -> tuple[str, str, list[ast.stmt]] | None:
        """The backend-alias statements of the deprecated-argument handler, if it has any."""
        for member, name, cls in ((SERVING_HOOK, "handle_deprecated_args", None),
                                  (SERVER_ARGS, "_handle_deprecated_args", "ServerArgs")):
            node = extract.find_def(self.version, member, name, cls)
            if node is None:
                continue
            body = node.body
            picked = [st for st in body if "tokenspeed_mla" in ast.unparse(st)]
            if not picked:
                return None
            # the block: from the `aliases = {...}` assignment to the `if renamed:` declaration
            start = next(i for i, st in enumerate(body) if isinstance(st, ast.Assign)
                         and any(isinstance(t, ast.Name) and t.id == "aliases" for t in st.targets))
            end = next(i for i, st in enumerate(body) if isinstance(st, ast.If)
                       and ast.unparse(st.test) == "renamed")
            first = body[0]
            if ast.unparse(first) != "cfg = resolving_view(server_args)":
                raise OracleError(f"sglang {self.version}: unexpected start of {name}: {ast.unparse(first)}")
            return member, name, [first, *body[start:end + 1]]
        return None

    def _linker(self, machine: tuple) -> Linker:
        lk = self._linkers.get(machine)
        if lk is not None:
            return lk
        p = probes.probes(self.version, *machine)
        is_cuda = p.ns["is_cuda"]
        p.ns.setdefault("is_flashinfer_available", lambda: bool(is_cuda()))
        has_amx = machine[0] == "cpu"  # a CPU server is a Xeon with AMX (SGLang's CPU backend targets it)
        p.ns.setdefault("cpu_has_amx_support", lambda: has_amx)
        p.ns.setdefault("get_device_sm", lambda: 0)
        facts = p.platform_context()
        stubs: dict[str, Any] = {
            "logger": oracle.LOGGER,
            "validate_declarations": lambda *a, **k: None,
            # no published runtime context during resolution
            "get_context": lambda: types.SimpleNamespace(server_args=None),
            "declare_resolution": _declare_resolution,
            "model_config_of": lambda sa: sa._model_config,
            "use_mla_backend": lambda sa: sa._model_config.mla,
            "get_platform": lambda: facts,
            "current_platform": types.SimpleNamespace(is_out_of_tree=lambda: False),
            "envs": _Env(),
            "with_phase": lambda *a, **k: _Inert(),
            "Phase": _Names(),
            "Backend": _Names(),
            "SpeculativeAlgorithm": types.SimpleNamespace(DFLASH=types.SimpleNamespace(name="DFLASH")),
            "xpu_has_xmx_support": lambda: False,
            "cpu_has_amx_support": lambda: has_amx,
            "get_bool_env_var": lambda name, default="false": str(default).lower() in ("true", "1"),
            "is_host_cpu_arm64": lambda: False,  # an x86-64 host
            "use_mlx": lambda: False,
            "get_npu_memory_capacity": lambda: 64 * 1024,
        }
        for k, v in p.ns.items():
            if callable(v) and (k.startswith("is_") or k in ("is_flashinfer_available", "cpu_has_amx_support")):
                stubs.setdefault(k, v)
        lk = self._linkers[machine] = Linker(self.version, stubs)
        return lk

    def _args_class(self, machine: tuple) -> type:
        cls = self._cls.get(machine)
        if cls is None:
            cls = self._cls[machine] = type("ServerArgs", (SimArgs,),
                                            {"_release": self.rel, "_linker": self._linker(machine)})
        return cls

    @property
    def kept_steps(self) -> set[str]:
        """Steps whose warnings and rewrites kv4lint reports (errors count from every step)."""
        keep = {self.rel.kv4_step, "handle_nvfp4_prefill_kv_dequant_dtype"}
        if self.alias_block is not None:
            keep.add(self.alias_block[1])
        return keep

    def run(self, args: dict[str, Any], machine: tuple, architecture: str, mla: bool,
            kv_heads: int = 8) -> SimVerdict:
        lk = self._linker(machine)
        values = dict(args)
        if values.get("device") is None:  # handle_missing_default_values: device = get_device()
            values["device"] = AUTO_DEVICE[machine[0]]
        sa = self._args_class(machine)(values, FakeModelConfig(architecture, mla, kv_heads))
        rec: list[tuple] = []
        oracle._REC.current = rec
        verdict = SimVerdict()
        steps = []
        if self.alias_block is not None:
            member, name, stmts = self.alias_block
            fn = lk.statements(member, f"{name}__backend_aliases", ["server_args"], stmts)
            steps.append((name, lambda: fn(sa)))
        for member, name, cls in self.device_handlers:
            fn_dev = lk.function(member, name, cls)
            steps.append((name, (lambda f: lambda: f(sa))(fn_dev)))
        if self.rel.has_dequant:
            fn_dq = lk.function(KV_CACHE_HOOK, "handle_nvfp4_prefill_kv_dequant_dtype")
            steps.append(("handle_nvfp4_prefill_kv_dequant_dtype", lambda: fn_dq(sa)))
        hmember, hname, hcls = self.handler
        fn_h = lk.function(hmember, hname, hcls)
        steps.append((hname, lambda: fn_h(sa)))
        kmember, knode, is_method = self.rel._kv4
        fn_k = lk.function(kmember, knode.name, "ServerArgs" if is_method else None)

        def kv4():
            verdict.kv4_reached = True
            A = _current(sa, "attention_backend")
            verdict.backends = (_current(sa, "prefill_attention_backend") or A,
                                _current(sa, "decode_attention_backend") or A, A)
            fn_k(sa)

        steps.append((knode.name, kv4))
        try:
            for name, call in steps:
                oracle._REC.step = name
                try:
                    call()
                except OracleError:
                    raise
                except (RuntimeError, ValueError, AssertionError) as e:
                    rec.append(("error", str(e), oracle._tb_where(e), name, type(e).__name__))
                    break
                except Exception as e:
                    raise OracleError(f"sglang {self.version} step {name} raised {type(e).__name__}: {e}") from e
        finally:
            oracle._REC.current = None
            oracle._REC.step = ""
        for r in rec:
            kind = r[0]
            if kind == "error":
                verdict.outcomes.append(Outcome("error", r[1], r[4], where=r[2], step=r[3]))
            elif kind == "rewrite":
                verdict.outcomes.append(Outcome("rewrite", "", fields=r[1], where=r[2], step=r[3]))
            else:
                verdict.outcomes.append(Outcome(kind, r[1], where=r[2], step=r[3]))
        return verdict


@functools.lru_cache(maxsize=None)
def simulation(version: str) -> Simulation:
    return Simulation(version)
