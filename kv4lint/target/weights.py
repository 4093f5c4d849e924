"""The weights narrow the GPU axis: an arch SGLang refuses the checkpoint's quantization on is no candidate.

SGLang's loader refuses quantized weights on a GPU below their method's minimum compute capability
(:mod:`kv4lint.sglang.quantization`), so a launch of such a checkpoint runs only where they load: an
``nvidia/...-FP4`` checkpoint under SGLang 0.5.12 is a Blackwell launch, and its KV cache is judged there. The
method is known from the model's own files (a local directory's ``config.json`` ``quantization_config``, or its
``hf_quant_config.json``), or from a model id whose publisher names one format, reconciled with the launch's
``--quantization`` as SGLang does. Unknown stays unknown: a model kv4lint cannot read, a ``--quantization`` it
cannot see, a release it does not know, or a method that loads somewhere on sm80, narrow nothing.

The GPU the user states, or the file names, is the target even where the weights do not load: that refusal is not
one kv4lint reports (it has no rule for it), so the candidates stay and ``--show-target`` says the weights do not
run there.
"""

from __future__ import annotations

import os

from kv4lint.sglang.gpus import CUDA_ARCHS, and_list, capability
from kv4lint.sglang.options import Args
from kv4lint.sglang.quantization import (CONFIG_CLASS, Checkpoint, checkpoint_method, launch_method,
                                         min_capability, named_checkpoints)
from kv4lint.sglang.releases import label
from kv4lint.target import model_dirs, read_json, recalled


class Weights:
    """Where the weights load: the archs (``archs``) and why, as ``--show-target`` says it (``why``)."""

    __slots__ = ("archs", "why")

    def __init__(self, archs: frozenset[str], why: str) -> None:
        self.archs, self.why = archs, why


def weights(args: Args, n: int, base_dir: str | None, memo=None) -> Weights | None:
    """Where SGLang 0.5.``n`` loads the launch's weights, when their quantization says (an arch below its minimum
    compute capability is out); None when nothing is known, or they load on every candidate. ``memo``: a run's
    (:func:`kv4lint.target.recalled`), from which a checkpoint the run read before is read again."""
    mp = args.get("model_path")
    if mp is None or not mp.known or not mp.text:
        return None
    q = args.get("quantization")
    if q is not None and not q.known or q is None and args.open_ended:
        return None  # a --quantization kv4lint cannot see
    stated = q.text if q is not None else None
    model_path = mp.text
    read = recalled(memo, ("weights", model_path, base_dir, n), lambda: _checkpoints(model_path, base_dir, n))
    if read is None:
        return None
    checkpoints, evidence = read[0], list(read[1])
    methods = sorted({launch_method(c, stated, n) or "" for c in checkpoints})
    caps = [min_capability(m, n) for m in methods]
    if not methods or None in caps:
        return None  # one way or another, they load on sm80 too
    cap = min(c for c in caps if c is not None)
    archs = frozenset(a for a in CUDA_ARCHS if _number(a) >= cap)
    if stated is not None:
        evidence.append(f"--quantization {stated}")
    classes = ", ".join(dict.fromkeys(f"{CONFIG_CLASS[m]} {min_capability(m, n)}" for m in methods))
    return Weights(archs, f"{' and '.join(evidence)}, which SGLang {label(n)} loads as {and_list(methods, 'or')}: on "
                          f"sm{cap} and newer only (get_min_capability(): {classes})")


def _number(arch: str) -> int:
    """The compute capability as SGLang's loader compares it: ``major * 10 + minor`` (sm103: 103)."""
    major, minor = capability(arch)
    return major * 10 + minor


def _checkpoints(model_path: str, base_dir: str | None,
                 n: int) -> tuple[tuple[Checkpoint | None, ...], tuple[str, ...]] | None:
    """The quantization methods the checkpoint may have (SGLang's reading of its config), and the evidence; None
    for a checkpoint kv4lint cannot read (a path not in the tree, an id that names no format)."""
    for d in model_dirs(model_path, base_dir):
        cfg_path = os.path.join(d, "config.json")
        config = read_json(cfg_path)
        if config is None:
            continue
        hf_path = os.path.join(d, "hf_quant_config.json")
        hf_quant = None if "quantization_config" in config or "compression_config" in config else read_json(hf_path)
        said = hf_path if hf_quant is not None else cfg_path
        return (checkpoint_method(config, hf_quant, n),), (f"the checkpoint's {said}",)
    named = named_checkpoints(model_path)
    if named is None:
        return None
    return (tuple(checkpoint_method(c, h, n) for c, h in named),
            (f"model id {model_path!r}, an NVIDIA ModelOpt NVFP4 checkpoint (quant_algo NVFP4 or MIXED_PRECISION)",))
