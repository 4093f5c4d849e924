"""``--platform auto``: which machine kv4lint runs on, through torch when it is installed.

For a deployment host or a launch template: the platform SGLang would see here
and, on CUDA, the GPU arch of device 0.  torch is imported lazily and only
here (``pip install 'kv4lint[torch]'``); kv4lint never imports SGLang.

SGLang's KV4 check asks ``torch.cuda.is_available() and torch.version.cuda``:
a ROCm build (``torch.version.hip``), XPU, NPU, HPU, MUSA, MPS and a CPU-only
build all fail it (``KV4 is not tested on non-CUDA platforms.``, KV402).  A
CUDA build that sees no GPU is reported as ``cuda`` with an unknown arch and a
reason that says so: the launch is judged for the CUDA machine it targets.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from dataclasses import dataclass

INSTALL_HINT = "pip install 'kv4lint[torch]'"


@dataclass(frozen=True)
class Detected:
    platform: str | None  # a kv4lint platform name, or None when it cannot be told
    arch: str | None  # "sm90", "sm100" ... on CUDA with a visible GPU
    reason: str  # what was seen, for --show-target and messages
    device_name: str | None = None


def _import_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "Failed to initialize NumPy"
        return importlib.import_module("torch")


def _call(f, default=None):
    try:
        return f()
    except Exception:  # a broken driver or runtime must not crash the run
        return default


def _available(torch, name: str) -> bool:
    mod = getattr(torch, name, None)
    fn = getattr(mod, "is_available", None)
    return bool(fn and _call(fn, False))


@functools.lru_cache(maxsize=1)
def detect() -> Detected:
    """The platform and GPU arch of this machine (cached: torch is asked once per process)."""
    try:
        torch = _import_torch()
    except ImportError:
        return Detected(None, None, f"torch is not installed, so the platform cannot be detected ({INSTALL_HINT}, "
                                    "or name it with --platform)")
    except Exception as e:  # torch present but broken (missing shared library ...)
        return Detected(None, None, f"torch failed to import ({type(e).__name__}: {e}); the platform cannot be "
                                    "detected (name it with --platform)")
    return detect_from(torch)


def detect_from(torch) -> Detected:
    """:func:`detect` on a given torch module (tests pass stand-ins)."""
    ver = getattr(torch, "__version__", "?")
    tv = getattr(torch, "version", None)
    hip = getattr(tv, "hip", None)
    cuda = getattr(tv, "cuda", None)
    if hip:
        return Detected("rocm", None, f"torch {ver} is a ROCm build (HIP {hip})")
    if cuda:
        if not _available(torch, "cuda"):
            return Detected("cuda", None, f"torch {ver} is a CUDA {cuda} build but sees no CUDA device: GPU arch "
                                          "unknown")
        cap = _call(lambda: torch.cuda.get_device_capability(0))
        name = _call(lambda: torch.cuda.get_device_name(0))
        if cap is None:
            return Detected("cuda", None, f"torch {ver} (CUDA {cuda}), device capability unreadable: GPU arch "
                                          "unknown", name)
        major, minor = cap
        arch = f"sm{major}{minor}"
        where = f"{name}, " if name else ""
        return Detected("cuda", arch, f"torch {ver} on {where}compute capability {major}.{minor}", name)
    if _available(torch, "xpu"):
        return Detected("xpu", None, f"torch {ver} sees an Intel XPU")
    for attr, plat, what in (("npu", "npu", "an Ascend NPU"), ("hpu", "hpu", "a Gaudi HPU"),
                             ("musa", "musa", "a Moore Threads MUSA GPU")):
        if _available(torch, attr):
            return Detected(plat, None, f"torch {ver} sees {what}")
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    if mps is not None and _call(mps.is_available, False):
        return Detected("mps", None, f"torch {ver} sees Apple MPS")
    return Detected("cpu", None, f"torch {ver} is a CPU-only build")
