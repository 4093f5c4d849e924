"""GPU names a user types (``--gpu``, image tags, comments) and the arch SGLang's facts are keyed by; the archs
SGLang tells apart, and how messages name a set of them.

A leaf: every reader of a GPU name (the command line's ``--gpu``, the frontends' hints, the target's resolver,
the messages) reads it through :func:`normalise_gpu` and names archs through :func:`describe`.
"""

from __future__ import annotations

import functools
import re

# Names a user types for a GPU -> SGLang's arch facts (docs/sglang-rules.md §2.1).
GPU_ARCH: dict[str, str] = {
    # Ampere / Ada
    "a100": "sm80", "a800": "sm80", "a10": "sm86", "a10g": "sm86", "a40": "sm86", "a6000": "sm86",
    "rtx3090": "sm86", "l4": "sm89", "l40": "sm89", "l40s": "sm89", "rtx4090": "sm89", "rtx6000ada": "sm89",
    # Hopper
    "h100": "sm90", "h800": "sm90", "h200": "sm90", "h20": "sm90", "gh200": "sm90",
    # Blackwell datacenter
    "b100": "sm100", "b200": "sm100", "gb200": "sm100", "b300": "sm103", "gb300": "sm103",
    # Thor
    "thor": "sm110", "jetson-thor": "sm110",
    # Blackwell consumer / workstation
    "rtx5090": "sm120", "rtx5080": "sm120", "rtx5070": "sm120", "rtx5060": "sm120",
    "rtxpro6000": "sm120", "rtx-pro-6000": "sm120", "rtx6000pro": "sm120",
    "gb10": "sm121", "dgx-spark": "sm121", "dgxspark": "sm121", "spark": "sm121",
}

# Every CUDA arch kv4lint knows, oldest first: a GPU that is not stated may be any of them.
ARCHS: tuple[str, ...] = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121")

# The archs SGLang's checks cannot tell apart, each class under its first arch (its representative). SGLang
# decides by probes that compare the GPU's major version only (``_check_cuda_device_version``: is_sm90,
# is_sm100, is_sm120, is_blackwell ...); the checks kv4lint reproduces read no probe of a minor version (0.5.23's
# is_sm120()/is_sm121() and ``device_sm`` serve model overrides kv4lint does not judge). Measured on every
# release's wheel: tests/test_conformance.py::test_gpu_classes (docs/sglang-rules.md §2.1).
CLASSES: dict[str, tuple[str, ...]] = {
    "sm80": ("sm80", "sm86", "sm89"),
    "sm90": ("sm90",),
    "sm100": ("sm100", "sm103"),
    "sm110": ("sm110",),
    "sm120": ("sm120", "sm121"),
}
_CLASS_OF = {a: rep for rep, members in CLASSES.items() for a in members}

# The family of each arch, in the words GPU makers use; and of each class as a whole.
FAMILY: dict[str, str] = {"sm80": "Ampere", "sm86": "Ampere", "sm89": "Ada", "sm90": "Hopper", "sm100": "Blackwell",
                          "sm103": "Blackwell Ultra", "sm110": "Thor", "sm120": "Blackwell RTX", "sm121": "GB10"}
CLASS_NAME: dict[str, tuple[str, str]] = {  # representative -> (the class's families, its archs in brief)
    "sm80": ("Ampere/Ada", "sm8x"), "sm90": ("Hopper", "sm90"), "sm100": ("Blackwell", "sm10x"),
    "sm110": ("Thor", "sm110"), "sm120": ("Blackwell RTX/GB10", "sm12x"),
}

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
    """``"sm90"`` -> 9, ``"sm103"`` -> 10; None for None or a name that is no arch."""
    if not arch:
        return None
    m = re.match(r"^sm(\d+?)(\d)$", arch)
    return int(m.group(1)) if m else None


def class_of(arch: str) -> str:
    """The representative of the archs SGLang treats like ``arch`` (``"sm103"`` -> ``"sm100"``); an arch kv4lint
    does not know is a class of its own."""
    return _CLASS_OF.get(arch, arch)


def representatives(archs) -> tuple[str, ...]:
    """One arch per class among ``archs`` (the first of each, in :data:`ARCHS` order): the archs to judge."""
    return _representatives(ordered(archs))


@functools.lru_cache(maxsize=1024)
def _representatives(archs: tuple[str, ...]) -> tuple[str, ...]:
    out: dict[str, str] = {}
    for a in archs:
        out.setdefault(class_of(a), a)
    return tuple(out.values())


def members(rep: str, archs) -> tuple[str, ...]:
    """The archs of ``archs`` that ``rep`` stands for (those of its class)."""
    return _members(class_of(rep), ordered(archs))


@functools.lru_cache(maxsize=1024)
def _members(cls: str, archs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for a in archs if class_of(a) == cls)


def ordered(archs) -> tuple[str, ...]:
    """``archs`` without repeats, known archs in :data:`ARCHS` order, then the others by name."""
    return _ordered(frozenset(archs))


@functools.lru_cache(maxsize=1024)
def _ordered(archs: frozenset[str]) -> tuple[str, ...]:
    return tuple(a for a in ARCHS if a in archs) + tuple(sorted(archs - set(ARCHS)))


def arch_name(arch: str | None) -> str:
    """``"sm90"`` -> ``"sm90 (Hopper)"``."""
    if not arch:
        return "unknown"
    return f"{arch} ({FAMILY[arch]})" if arch in FAMILY else arch


def _groups(archs) -> list[tuple[str, str]]:
    """(family, archs in brief) per class of ``archs``: a whole class by its name, a part by its archs."""
    out: list[tuple[str, str]] = []
    for rep in representatives(archs):
        part = members(rep, archs)
        whole = CLASSES.get(class_of(rep))
        if whole is not None and set(whole) <= set(part) and len(whole) > 1:
            out.append(CLASS_NAME[class_of(rep)])
        else:
            families = "/".join(dict.fromkeys(FAMILY.get(a, a) for a in part))
            out.append((families, ", ".join(part)))
    return out


def and_list(items, conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``conj``: ``or``)."""
    items = list(items)
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conj} " + items[-1]


def describe(archs, *, names: bool = False, brief: bool = False, conj: str = "and") -> str:
    """A set of archs in plain words first: ``Ampere/Ada and Hopper (sm8x, sm90)``, ``Hopper (sm90)``;
    ``names``: the families alone (``Ampere/Ada and Hopper``); ``brief``: the archs alone (``sm8x and sm90``);
    ``conj`` joins the last two (``or``)."""
    return _describe(ordered(archs), names, brief, conj)


@functools.lru_cache(maxsize=1024)
def _describe(archs: tuple[str, ...], names: bool, brief: bool, conj: str) -> str:
    groups = _groups(archs)
    if brief:
        return and_list([g[1] for g in groups], conj)
    families = and_list(dict.fromkeys(g[0] for g in groups), conj)
    return families if names else f"{families} ({', '.join(g[1] for g in groups)})"


def every(archs) -> bool:
    """Whether ``archs`` is every arch kv4lint knows: a GPU that is not stated."""
    return set(ARCHS) <= set(archs)
