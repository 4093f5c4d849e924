"""SGLang's reading of a checkpoint's quantization and its loader's minimum compute capability, run from a wheel.

Three things kv4lint's leaf (``kv4lint/sglang/quantization.py``) claims, each taken from SGLang's code here:

* ``min_capability(version)``: ``get_min_capability()`` of the config class ``BASE_QUANTIZATION_METHODS`` maps each
  method to, compiled from the class's module and run on CUDA (every platform flag of it false: no NPU, MUSA, ROCm).
* ``loader_refuses(version)``: the loader's ``_get_quantization_config`` raises when the GPU's capability is below it.
* ``verify(version, config, hf_quant_config, stated)``: the method ``ModelConfig._verify_quantization`` settles on for
  a checkpoint written to a temporary directory (``_parse_quant_hf_config`` and ``_parse_modelopt_quant_config`` of
  the wheel read it there) and a ``--quantization``, or the exception it raises.

``override_quantization_method`` of the ModelOpt classes is compiled from the wheel (``base_config.py``'s shared
``_modelopt_override_quantization_method``, ``ModelOptMixedPrecisionConfig``'s own); every other class's answers
None, which is what they answer for the checkpoints the test writes (none is GPTQ-, AWQ- or MLX-shaped, Petit's is
ROCm only, MoE WNA16's and Humming's need their own ``--quantization``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import os
import tempfile
import types
from typing import Any

from . import extract

INIT = "sglang/srt/layers/quantization/__init__.py"
BASE_CONFIG = "sglang/srt/layers/quantization/base_config.py"
MODELOPT = "sglang/srt/layers/quantization/modelopt_quant.py"
MODEL_CONFIG = "sglang/srt/configs/model_config.py"
MODELOPT_UTILS = "sglang/srt/layers/modelopt_utils.py"
LOADER = "sglang/srt/model_loader/loader.py"


class _Logger:
    def __getattr__(self, name):
        return lambda *a, **k: None


LOGGER = _Logger()

# The names the compiled functions read besides their module's constants: CUDA, not ROCm, NPU or MUSA.
CUDA_STUBS: dict[str, Any] = {
    "is_npu": lambda: False, "_is_npu": False, "_is_musa": False, "_is_hip": False, "is_hip": lambda: False,
    "_is_gfx95_supported": False, "_mxfp8_to_block_fp8_required": False, "logger": LOGGER,
    "get_device_capability": lambda *a: (10, 0), "is_cuda": lambda: True, "_is_cuda": True,
}


def config_classes(version: str) -> dict[str, str]:
    """``BASE_QUANTIZATION_METHODS``: method -> config class name."""
    node = extract.find_assign(version, INIT, "BASE_QUANTIZATION_METHODS")
    assert node is not None and isinstance(node.value, ast.Dict), version
    return {ast.literal_eval(k): v.id for k, v in zip(node.value.keys, node.value.values)
            if isinstance(v, ast.Name)}


def _defines(version: str, member: str, cls: str) -> bool:
    tree = extract.module_ast(version, member)
    return tree is not None and any(isinstance(n, ast.ClassDef) and n.name == cls for n in tree.body)


@functools.lru_cache(maxsize=None)
def _class_module(version: str, cls: str, member: str = INIT) -> str:
    """The wheel member that defines ``cls``, following the imports from ``member`` (a package re-exports)."""
    if _defines(version, member, cls):
        return member
    for node in ast.walk(extract.module_ast(version, member)):
        if isinstance(node, ast.ImportFrom) and any(a.name == cls for a in node.names):
            package = member.rsplit("/", 1)[0].split("/")
            base = package[:len(package) - node.level + 1] if node.level else []
            path = "/".join(base + (node.module.split(".") if node.module else []))
            for where in (path + ".py", path + "/__init__.py"):
                if extract.module_ast(version, where) is not None:
                    return _class_module(version, cls, where)
    raise AssertionError(f"sglang {version}: {cls} is not defined or imported in {member}")


def _find_method(version: str, member: str, cls: str, name: str) -> tuple[str, ast.FunctionDef]:
    """``cls.name``, from ``cls`` or the first base class (in the same module or imported) that defines it."""
    tree = extract.module_ast(version, member)
    klass = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    assert klass is not None, (version, member, cls)
    node = extract.find_def(version, member, name, cls=cls)
    if node is not None:
        return member, node
    for base in klass.bases:
        if isinstance(base, ast.Name) and base.id != "QuantizationConfig":
            return _find_method(version, _class_module(version, base.id, member), base.id, name)
    raise AssertionError(f"sglang {version}: {cls}.{name} not found")


def min_capability(version: str) -> dict[str, int]:
    """Every method's minimum compute capability on CUDA, from its class's ``get_min_capability()``."""
    out = {}
    for method, cls in config_classes(version).items():
        out[method] = _run_min_capability(version, _class_module(version, cls), cls, method == "mxfp8")
    return out


def _run_min_capability(version: str, member: str, cls: str, use_mxfp8: bool) -> int:
    where, node = _find_method(version, member, cls, "get_min_capability")
    stubs = dict(CUDA_STUBS)
    # get_min_capability may return another class's (ModelOptMixedPrecisionConfig: ModelOptFp4Config's)
    for name in extract.free_names(node) - set(stubs):
        if name[:1].isupper() and name not in extract.TYPING_NAMES and not hasattr(builtins, name):
            cap = _run_min_capability(version, _class_module(version, name, where), name, use_mxfp8)
            stubs[name] = types.SimpleNamespace(get_min_capability=lambda cap=cap: cap)
    fn = extract.compile_defs(version, where, [node], stubs)[node.name]
    return fn(types.SimpleNamespace(use_mxfp8=use_mxfp8))


def loader_refuses(version: str) -> bool:
    """Whether the loader raises ValueError where ``capability < quant_config.get_min_capability()``."""
    node = extract.find_def(version, LOADER, "_get_quantization_config")
    if node is None:
        return False
    for test in ast.walk(node):
        if isinstance(test, ast.If) and "capability < quant_config.get_min_capability()" in ast.unparse(test.test):
            return any(isinstance(s, ast.Raise) and "ValueError" in ast.unparse(s) for s in test.body)
    return False


# ---------------------------------------------------------------------------
# ModelConfig._verify_quantization, on a checkpoint in a temporary directory


class _Method:
    def __init__(self, override):
        self.override_quantization_method = override


@functools.lru_cache(maxsize=None)
def _registry(version: str) -> dict[str, Any]:
    """``QUANTIZATION_METHODS`` as ``_verify_quantization`` reads it: each method's override."""
    shared = extract.find_def(version, BASE_CONFIG, "_modelopt_override_quantization_method",
                              cls="QuantizationConfig")
    assert shared is not None, version
    model_config_stub = types.SimpleNamespace(REQUANTIZATION_METHODS=requantization(version))
    stubs = dict(CUDA_STUBS)
    canonical = extract.find_def(version, MODELOPT_UTILS, "canonicalize_modelopt_quant_algo")
    if canonical is not None:  # 0.5.23: ModelOpt's quant_algo names, an exact list
        stubs[canonical.name] = extract.compile_defs(version, MODELOPT_UTILS, [canonical],
                                                     {"ModelOptQuantMethod": str})[canonical.name]
    ns = extract.compile_defs(version, BASE_CONFIG, [shared], stubs,
                              import_stubs={"sglang.srt.configs.model_config": model_config_stub,
                                            "sglang.*": types.SimpleNamespace()})
    modelopt = classmethod(ns[shared.name]).__get__(None, object)
    mixed = extract.find_def(version, MODELOPT, "override_quantization_method", cls="ModelOptMixedPrecisionConfig")
    mixed_fn = None
    if mixed is not None:
        mixed_fn = classmethod(extract.compile_defs(version, MODELOPT, [mixed], dict(CUDA_STUBS))[mixed.name]
                               ).__get__(None, object)
    out = {}
    for method, cls in config_classes(version).items():
        if cls in ("ModelOptFp8Config", "ModelOptFp4Config"):
            out[method] = _Method(modelopt)
        elif cls == "ModelOptMixedPrecisionConfig" and mixed_fn is not None:
            out[method] = _Method(mixed_fn)
        else:
            out[method] = _Method(lambda cfg, user: None)
    return out


def requantization(version: str) -> list[str]:
    """``REQUANTIZATION_METHODS`` of ``configs/model_config.py`` (0.5.17 on; none before)."""
    found, value = extract.module_literal(version, MODEL_CONFIG, "REQUANTIZATION_METHODS")
    return list(value) if found else []


# What _verify_quantization imports inside its body: DeepGEMM's scale format (a warning only).
_IMPORTED = types.SimpleNamespace(deep_gemm_wrapper=types.SimpleNamespace(DEEPGEMM_SCALE_UE8M0=False))


class _Refused(Exception):
    pass


@functools.lru_cache(maxsize=None)
def _model_config_class(version: str) -> type:
    names = ["_verify_quantization", "_parse_quant_hf_config", "_parse_modelopt_quant_config"]
    stubs = dict(CUDA_STUBS)
    stubs.update({
        "QUANTIZATION_METHODS": _registry(version), "REQUANTIZATION_METHODS": requantization(version),
        "get_platform": lambda: types.SimpleNamespace(is_sm100=False, is_blackwell=False),
        "is_sm100_supported": lambda *a: False, "is_qwen3_5_mtp_draft": lambda cfg: False,
        "_quant_config_to_dict": lambda q: q if q is None or isinstance(q, dict) else q.to_dict(),
        "envs": types.SimpleNamespace(SGLANG_USE_MODELSCOPE=types.SimpleNamespace(get=lambda: False)),
        "retry": lambda *a, **k: (_ for _ in ()).throw(_Refused("the hub is not asked: the model is local")),
        "os": os, "json": json,
    })
    for fname in ("unwrap_modelopt_quantization_config", "canonicalize_modelopt_quant_algo"):
        node = extract.find_def(version, MODEL_CONFIG, fname)
        if node is not None:
            stubs[fname] = extract.compile_defs(version, MODEL_CONFIG, [node], dict(CUDA_STUBS))[fname]
    methods = {}
    for name in names:
        node = extract.find_def(version, MODEL_CONFIG, name, cls="ModelConfig")
        assert node is not None, (version, name)
        methods[name] = extract.compile_defs(version, MODEL_CONFIG, [node], stubs,
                                             import_stubs={"sglang.*": _IMPORTED})[name]
    methods["_find_quant_modelslim_config"] = lambda self: None
    return type("ModelConfig", (), methods)


def verify(version: str, config: dict, hf_quant_config: dict | None, stated: str | None) -> str | None | Exception:
    """The method SGLang ``version`` loads a checkpoint with (``config.json`` = ``config``, and its
    ``hf_quant_config.json`` when given) under ``--quantization stated``; the exception where it refuses."""
    config = json.loads(json.dumps(config))  # SGLang updates the config it parses: the caller's stays as it was
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
        if hf_quant_config is not None:
            with open(os.path.join(d, "hf_quant_config.json"), "w") as f:
                json.dump(hf_quant_config, f)
        mc = _model_config_class(version)()
        mc.hf_config = types.SimpleNamespace(**config)
        mc.model_path, mc.revision, mc.quantization = d, None, stated
        mc.is_draft_model, mc.is_draft_quantization_explicit = False, False
        try:
            mc._verify_quantization()
        except (ValueError, KeyError, _Refused) as e:
            return e
        return mc.quantization
