"""SGLang's own platform probes (``is_cuda``, ``is_sm100_supported``, ...), run on a fake torch.

The probes are taken from each wheel's ``sglang/srt/utils/common.py`` and
executed against a stand-in ``torch`` that describes one machine, so that the
arch facts (which GPU majors count as SM100, SM120, Blackwell, ...) come from
SGLang's code, not from kv4lint's idea of them.

Machine model (the test's assumptions, documented here once):
* cuda: ``torch.cuda.is_available()``, ``torch.version.cuda == "12.9"`` (>= 12.8,
  so every CUDA-version gate of the probes passes), capability from the arch
  name (``sm103`` -> (10, 3)).
* rocm: ``torch.cuda.is_available()`` with ``torch.version.hip`` set and no
  ``torch.version.cuda``.
* xpu, npu, hpu, mps: the matching ``torch.<dev>.is_available()``; no CUDA.
* musa: ``torch.version.musa`` set and the ``torchada`` shim importable; no CUDA.
* cpu: no accelerator; ``SGLANG_USE_CPU_ENGINE=1`` on an x86-64 host.
"""

from __future__ import annotations

import ast
import functools
import types
from functools import partial
from typing import Any, Dict, List, Optional, Tuple

from . import extract, wheels

PLATFORMS = ("cuda", "rocm", "xpu", "cpu", "npu", "musa", "mps", "hpu")
CUDA_ARCHS = ("sm80", "sm90", "sm100", "sm103", "sm120", "sm121")

UTILS = "sglang/srt/utils/common.py"
RUNTIME_CONTEXT = "sglang/srt/runtime_context.py"

# The probes read only these; more are added as the neighbouring steps need them.
PROBE_FUNCS = (
    "is_cuda", "is_hip", "is_xpu", "is_npu", "is_hpu", "is_musa", "is_mps", "is_cpu",
    "_check_cuda_device_version",
)
PROBE_ASSIGN_PREFIX = "is_"


class _Avail:
    def __init__(self, available: bool):
        self._a = available

    def is_available(self) -> bool:
        return self._a


def fake_torch(platform: str, arch: str | None) -> types.SimpleNamespace:
    cap = (0, 0)
    if platform == "cuda":
        if not arch or not arch.startswith("sm"):
            raise ValueError(f"cuda machine needs an smXY arch, got {arch!r}")
        digits = arch[2:]
        cap = (int(digits[:-1]), int(digits[-1]))
    cuda = types.SimpleNamespace(
        is_available=lambda: platform in ("cuda", "rocm"),
        is_initialized=lambda: True,
        get_device_capability=lambda *a: cap,
    )
    version = types.SimpleNamespace(
        cuda="12.9" if platform == "cuda" else None,
        hip="6.4" if platform == "rocm" else None,
    )
    if platform == "musa":
        version.musa = "4.0"
    t = types.SimpleNamespace(cuda=cuda, version=version, cpu=_Avail(True),
                              backends=types.SimpleNamespace(mps=_Avail(platform == "mps")))
    for dev in ("xpu", "npu", "hpu", "mps"):
        if platform == dev:
            setattr(t, dev, _Avail(True))
    return t


def _identity_cache(*args, **kwargs):
    if args and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


class Probes:
    """The probe functions of one release on one machine, by name."""

    def __init__(self, version: str, platform: str, arch: str | None):
        if platform not in PLATFORMS:
            raise ValueError(platform)
        self.version, self.platform, self.arch = version, platform, arch
        torch = fake_torch(platform, arch)
        cap = torch.cuda.get_device_capability()
        tree = extract.module_ast(version, UTILS)
        if tree is None:
            raise extract.ExtractError(f"sglang {version}: no {UTILS}")
        nodes: list[ast.stmt] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in PROBE_FUNCS:
                nodes.append(node)
            elif (
                isinstance(node, ast.Assign)
                and all(isinstance(t, ast.Name) and t.id.startswith(PROBE_ASSIGN_PREFIX) for t in node.targets)
                and "_check_cuda_device_version" in ast.unparse(node.value)
            ):
                nodes.append(node)
        env = {"SGLANG_USE_CPU_ENGINE": "1" if platform == "cpu" else "0"}
        fake_os = types.SimpleNamespace(getenv=lambda k, d=None: env.get(k, d), environ=env)
        torchada = types.SimpleNamespace()
        stubs: Dict[str, Any] = {
            "torch": torch,
            "lru_cache": _identity_cache,
            "partial": partial,
            "List": List, "Tuple": Tuple, "Optional": Optional, "Dict": Dict, "Any": Any, "bool": bool,
            "os": fake_os,
            "get_device_sm": lambda: cap[0] * 10 + cap[1] if platform == "cuda" else 0,
            "is_host_cpu_x86": lambda: True,
            "is_host_cpu_arm64": lambda: False,
        }
        import_stubs = {"torchada": torchada} if platform == "musa" else {"sglang.*": None}
        self.ns = extract.compile_defs(version, UTILS, nodes, stubs, import_stubs=import_stubs)

    def __getattr__(self, name: str):
        ns = self.__dict__.get("ns")
        if ns is not None and name in ns and callable(ns[name]):
            return ns[name]
        raise AttributeError(f"sglang {self.version} {UTILS}: no probe {name!r} extracted")

    @functools.cached_property
    def platform_probe_names(self) -> dict[str, str]:
        """0.5.19+: ``runtime_context._PLATFORM_PROBES`` (fact name -> probe name)."""
        found, value = extract.module_literal(self.version, RUNTIME_CONTEXT, "_PLATFORM_PROBES")
        return value if found else {}

    def platform_context(self, record: set | None = None) -> "PlatformFacts":
        return PlatformFacts(self, record)


class PlatformFacts:
    """Stand-in for 0.5.19+ ``get_platform()``: each fact calls the probe SGLang maps it to."""

    def __init__(self, probes: Probes, record: set | None = None):
        object.__setattr__(self, "_p", probes)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_record", record)

    def __getattr__(self, name: str):
        record = object.__getattribute__(self, "_record")
        if record is not None:
            record.add("get_platform()." + name)
        cache = object.__getattribute__(self, "_cache")
        if name in cache:
            return cache[name]
        p = object.__getattribute__(self, "_p")
        probe = p.platform_probe_names.get(name)
        if probe is None:
            raise AttributeError(f"sglang {p.version}: unknown platform fact {name!r}")
        value = getattr(p, probe)()
        cache[name] = value
        return value

    def fact(self, name: str):
        """A fact's value without recording the read."""
        p = object.__getattribute__(self, "_p")
        return getattr(p, p.platform_probe_names[name])()


@functools.lru_cache(maxsize=None)
def probes(version: str, platform: str, arch: str | None) -> Probes:
    return Probes(version, platform, arch)

