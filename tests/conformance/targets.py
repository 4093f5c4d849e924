"""Launches with no GPU stated: kv4lint's verdict over its candidate set against SGLang's own code on every arch.

kv4lint judges a launch whose GPU is not stated on one arch of each kind SGLang tells apart
(:data:`kv4lint.sglang.gpus.CLASSES`) and aggregates: refused on every candidate is an error, refused on some (or
warned of: SGLang's mixed-backend KV4 warning, a rewrite that takes the FP4 KV cache away) a warning, else
nothing. Here the same launches go through SGLang's own resolution (``sim``, from each release's wheel) on each
of the nine archs kv4lint knows, and the three verdicts are compared:

* SGLang ``error``: every arch refuses the launch; ``warning``: some refuse, or some warn; ``clean``: none does
  either;
* kv4lint ``error``: a finding of severity error; ``warning``: findings, all warnings; ``clean``: no finding.

The launches are seeded: a release kv4lint knows, an FP4 KV cache dtype of it (kv4lint judges FP4 launches only), each
attention backend flag unset half of the time or any choice of the release, an MHA (Llama) or MLA (MiniCPM3)
model, and, where the release has it, ``--prefill-kv-cache-dequant-dtype`` sometimes. The release is stated
(``--sglang-version``): the GPU is what is not.

Also: :func:`class_differences`, SGLang's verdicts on every arch against those on its class's representative.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from kv4lint.sglang.gpus import ARCHS, CLASSES
from kv4lint.sglang.options import flag_for
from kv4lint.sglang.releases import KV4_RELEASES

from . import compare, grid, sim

MODELS = {  # the sim's architecture and MLA flag, and the model path kv4lint reads the same from
    "LlamaForCausalLM": (False, "meta-llama/Llama-3.1-8B-Instruct"),
    "MiniCPM3ForCausalLM": (True, "openbmb/MiniCPM3-4B"),
}


@dataclass
class Launch:
    version: str
    args: dict
    architecture: str

    @property
    def mla(self) -> bool:
        return MODELS[self.architecture][0]

    def argv(self) -> list[str]:
        out = ["--model-path", MODELS[self.architecture][1]]
        for field, value in self.args.items():
            if value is not None:
                out += [flag_for(field), str(value)]
        return out

    def describe(self) -> str:
        return f"sglang=={self.version} {self.architecture}: {' '.join(self.argv()[2:])}"


def launches(n: int = 400, seed: int = 33) -> list[Launch]:
    r = random.Random(f"target-sets-{seed}")
    out = []
    for _ in range(n):
        version = r.choice(KV4_RELEASES)
        s = sim.simulation(version)
        trig = grid.trigger_dtypes(s.rel)
        args: dict = {"kv_cache_dtype": r.choice(trig)}
        for f in grid.BACKEND_FIELDS:
            args[f] = None if r.random() < 0.5 else r.choice(s.rel.attention_backend_choices)
        if s.rel.has_dequant and r.random() < 0.2:
            args["prefill_kv_cache_dequant_dtype"] = r.choice(s.rel.prefill_kv_cache_dequant_dtype_choices)
        out.append(Launch(version, args, r.choice(sorted(MODELS))))
    return out


def _outcomes(launch: Launch, arch: str, *, every_step: bool = False) -> list:
    """SGLang's outcomes on ``arch``: its errors, and the warnings and rewrites of the steps kv4lint reports
    (``every_step``: of every step)."""
    s = sim.simulation(launch.version)
    args = {k: v for k, v in launch.args.items() if v is not None}
    v = s.run(args, ("cuda", arch), launch.architecture, launch.mla)
    keep = s.kept_steps
    return compare.normalise_sglang(o for o in v.outcomes if every_step or o.kind == "error" or o.step in keep)


def _warns(s, norm: list) -> bool:
    """SGLang warns of what kv4lint reports on a launch it accepts: its KV4 check's warning (mixed prefill and
    decode backends), or a rewrite that takes the FP4 KV cache away."""
    return any((kind == "warning" and step == s.rel.kv4_step) or (kind == "rewrite" and "kv_cache_dtype" in detail)
               for kind, step, _text, detail in norm)


def sglang_verdict(launch: Launch) -> tuple[str, dict[str, str]]:
    """``error``, ``warning`` or ``clean``, and what SGLang does on each arch (``refuses``, ``warns``, ``accepts``)."""
    s = sim.simulation(launch.version)
    per_arch = {}
    for arch in ARCHS:
        norm = _outcomes(launch, arch)
        per_arch[arch] = ("refuses" if any(o[0] == "error" for o in norm) else
                          "warns" if _warns(s, norm) else "accepts")
    kinds = set(per_arch.values())
    if kinds == {"refuses"}:
        return "error", per_arch
    return ("warning" if kinds & {"refuses", "warns"} else "clean"), per_arch


def kv4lint_verdict(launch: Launch, check_argv) -> tuple[str, list]:
    found = check_argv(launch.argv(), sglang_version=launch.version)
    if any(f.severity.value == "error" for f in found):
        return "error", found
    return ("warning" if found else "clean"), found


def _class_grid(version: str):
    """The launches :func:`class_differences` compares: the trigger dtypes and fp8_e4m3 x an MHA and an MLA
    model x (A x P x D over unset and the backends the neighbouring rules name; each of A, P, D alone over every
    choice of the release; no backend flag with each speculative decoding setting and page size that steer
    SGLang's default, as ``grid.SimRunner`` sweeps them)."""
    s = sim.simulation(version)
    choices = s.rel.attention_backend_choices
    core = [None, *(b for b in grid.SIM_CORE_BACKENDS if b in choices)]
    dtypes = [*grid.trigger_dtypes(s.rel), "fp8_e4m3"]
    spec = [{}, {"speculative_algorithm": "EAGLE"}, {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4},
            {"speculative_algorithm": "NGRAM", "speculative_ngram_max_bfs_breadth": 1}, {"page_size": 16}]
    for d, model in itertools.product(dtypes, sorted(MODELS)):
        for A, P, D in itertools.product(core, repeat=3):
            backends = {k: v for k, v in grid.backend_args(A, P, D).items() if v is not None}
            yield Launch(version, {"kv_cache_dtype": d, **backends}, model)
        for f, b in itertools.product(grid.BACKEND_FIELDS, choices):
            yield Launch(version, {"kv_cache_dtype": d, f: b}, model)
        for extra in spec:
            if all(k in s.rel.all_defaults for k in extra):
                yield Launch(version, {"kv_cache_dtype": d, **extra}, model)


def class_differences(version: str) -> tuple[int, list[str]]:
    """SGLang's outcomes (every step's) on each arch against those on the representative of its class, over
    :func:`_class_grid`: how many launches were compared, and those where an arch behaves unlike the arch kv4lint
    judges in its place."""
    out = []
    n = 0
    for launch in _class_grid(version):
        n += 1
        for rep, members in CLASSES.items():
            want = _outcomes(launch, rep, every_step=True)
            for arch in members[1:]:
                got = _outcomes(launch, arch, every_step=True)
                if got != want:
                    out.append(f"{launch.describe()}: {arch} {got} but {rep} {want}")
    return n, out
