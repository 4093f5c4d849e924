"""GPU names a user types (``--gpu``, image tags, comments) and the arch SGLang's facts are keyed by.

A leaf: :func:`kv4lint.target.normalise_gpu` reads any spelling through it,
the frontends' image-tag hints (:mod:`kv4lint.frontends.hints`) take the arch
of the names they recognise from it.
"""

from __future__ import annotations

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
