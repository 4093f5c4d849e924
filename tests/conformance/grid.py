"""The configurations compared, per release, and the comparison loop.

Axes (all taken from the release's own wheel, never from kv4lint):
* ``--kv-cache-dtype``: the release's argparse choices, plus the FP4 names of
  other releases and two Python-API spellings (``NVFP4``, ``mxfp4``);
* backends: the release's ``ATTENTION_BACKEND_CHOICES`` and ``None`` (unset),
  for ``attention_backend`` (A), ``prefill_attention_backend`` (P) and
  ``decode_attention_backend`` (D);
* MHA and MLA;
* machines: CUDA sm80, sm89, sm90, sm100, sm103, sm110, sm120, sm121, and ROCm,
  XPU, CPU, NPU, MUSA, MPS, HPU.

Reductions (documented; each keeps every value of every axis in the grid):
1. *Trigger dtypes* (the FP4 names SGLang's check function itself mentions)
   get the light grid on every machine and the **full product** A x P x D on
   one machine per equivalence class. Two machines are in the same class when
   every platform fact the check read (recorded while running the light grid
   for that dtype) has the same value on both: SGLang's function cannot tell
   them apart. Classes whose SGLang verdict does not vary over the light grid
   (e.g. non-CUDA: the check raises before it looks at a backend) get the light
   grid only.
2. *Other dtypes*: SGLang's check returns at its first statement, which reads
   only ``kv_cache_dtype``; they get a small backend grid on every machine.
3. The light grid: A, P, D each over ``None``, every backend the check
   function names, and one backend it does not name.
4. The 0.5.21+ flags (speculative decoding, PD disaggregation, hierarchical
   cache, LMCache, unified memory) are crossed in full with each other and
   with a set of backend triples that make the NVFP4 check native, mixed, both
   or neither, on the machines where the check reads them (SM100) and with a
   smaller triple set elsewhere. A flag left out of ``args`` stands for
   SGLang's default, and "left out" is one of each flag's values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from . import compare, oracle, probes

CUDA_MACHINES = tuple(("cuda", a) for a in ("sm80", "sm89", "sm90", "sm100", "sm103", "sm110", "sm120", "sm121"))
OTHER_MACHINES = tuple((p, None) for p in ("rocm", "xpu", "cpu", "npu", "musa", "mps", "hpu"))
MACHINES = CUDA_MACHINES + OTHER_MACHINES

EXTRA_FP4_NAMES = ("fp4_e2m1", "nvfp4", "fp4_mx_block16")
API_SPELLINGS = ("NVFP4", "mxfp4")

ABSENT = object()  # "key left out of args": SGLang's default applies


def dtypes(rel: oracle.Release) -> list[str]:
    out = list(rel.kv_cache_dtype_choices)
    for d in EXTRA_FP4_NAMES + API_SPELLINGS:
        if d not in out:
            out.append(d)
    return out


def trigger_dtypes(rel: oracle.Release) -> list[str]:
    lits = rel.kv4_literals()
    return [d for d in dtypes(rel) if d in lits]


def backends(rel: oracle.Release) -> list[str | None]:
    return [None, *rel.attention_backend_choices]


def light_backends(rel: oracle.Release, literals: set[str]) -> list[str | None]:
    named = [b for b in rel.attention_backend_choices if b in literals]
    other = next(b for b in rel.attention_backend_choices if b not in literals)
    return [None, *named, other]


def backend_args(A, P, D) -> dict:
    return {"attention_backend": A, "prefill_attention_backend": P, "decode_attention_backend": D}


@dataclass
class Diff:
    what: str
    version: str
    machine: tuple
    mla: bool | None
    args: dict
    sglang: list
    kv4lint: list
    where: str

    def size(self) -> int:
        return sum(1 for v in self.args.values() if v is not None and v is not False)

    def describe(self) -> str:
        plat = self.machine[0] + (f"/{self.machine[1]}" if self.machine[1] else "")
        mla = "" if self.mla is None else (" MLA" if self.mla else " MHA")
        return (f"{self.what} sglang=={self.version} {plat}{mla} args={self.args}\n"
                f"    SGLang  ({self.where}): {self.sglang}\n"
                f"    kv4lint: {self.kv4lint}")


@dataclass
class Tally:
    version: str
    compared: int = 0
    diffs: list[Diff] = field(default_factory=list)
    sglang_kinds: set = field(default_factory=set)  # exception types, "warning", "rewrite" SGLang produced

    def saw(self, norm: list) -> None:
        for kind, _step, _text, detail in norm:
            self.sglang_kinds.add(detail if kind == "error" else kind)

    def key(self, d: Diff):
        return (d.what, tuple(d.sglang), tuple(d.kv4lint))

    def smallest(self, limit: int = 12) -> list[Diff]:
        """One smallest config per distinct (SGLang, kv4lint) disagreement."""
        best: dict = {}
        for d in self.diffs:
            k = self.key(d)
            if k not in best or d.size() < best[k].size():
                best[k] = d
        return sorted(best.values(), key=lambda d: (d.size(), d.describe()))[:limit]


# ---- machine equivalence classes ---------------------------------------------------------

def fact_value(version: str, machine: tuple, fact: str) -> bool:
    p = probes.probes(version, *machine)
    if fact.startswith("get_platform()."):
        return bool(p.platform_context().fact(fact.split(".", 1)[1]))
    return bool(p.ns[fact]())


def machine_classes(version: str, machines: Iterable[tuple], facts: set[str]) -> dict[tuple, list[tuple]]:
    classes: dict[tuple, list[tuple]] = {}
    for m in machines:
        key = tuple(sorted((f, fact_value(version, m, f)) for f in facts))
        classes.setdefault(key, []).append(m)
    return classes


# ---- the comparison loops ---------------------------------------------------------------

def _clean(args: dict) -> dict:
    return {k: v for k, v in args.items() if v is not ABSENT}


class Kv4Runner:
    """Compares ``kv4lint.rules.engine.kv4_check`` with SGLang's check over the grid."""

    def __init__(self, version: str, engine):
        self.version = version
        self.rel = oracle.release(version)
        self.engine = engine
        self.tally = Tally(version)
        self._machines = {m: engine.Machine(*m) for m in MACHINES}

    def one(self, args: dict, machine: tuple, mla: bool) -> oracle.Verdict:
        args = _clean(args)
        v = self.rel.kv4_check(args, machine, mla)
        want = compare.normalise_sglang(v.outcomes)
        got = compare.normalise_kv4lint(self.engine.kv4_check(self.version, dict(args), self._machines[machine], mla))
        self.tally.compared += 1
        self.tally.saw(want)
        if want != got:
            exact = self.rel.kv4_check(args, machine, mla, memo=False)
            self.tally.diffs.append(Diff("kv4_check", self.version, machine, mla, args, want, got,
                                         compare.where_of(exact.outcomes)))
        return v

    def run(self) -> Tally:
        rel = self.rel
        lits = rel.kv4_literals()
        light = light_backends(rel, lits)
        tiny = [None, "flashinfer", "trtllm_mha", "fa4"]
        full = backends(rel)
        for d in dtypes(rel):
            if d not in trigger_dtypes(rel):
                for m, mla, (A, P, D) in itertools.product(MACHINES, (False, True), itertools.product(tiny, repeat=3)):
                    self.one({"kv_cache_dtype": d, **backend_args(A, P, D)}, m, mla)
                continue
            oracle.FACTS_READ.clear()
            verdicts: dict[tuple, set] = {}
            for m, mla, (A, P, D) in itertools.product(MACHINES, (False, True), itertools.product(light, repeat=3)):
                v = self.one({"kv_cache_dtype": d, **backend_args(A, P, D)}, m, mla)
                verdicts.setdefault(m, set()).add(tuple(compare.normalise_sglang(v.outcomes)))
            facts = set(oracle.FACTS_READ)
            for members in machine_classes(self.version, MACHINES, facts).values():
                rep = members[0]
                if len(verdicts[rep]) <= 1:
                    continue  # SGLang's verdict does not depend on the backends here
                for mla, (A, P, D) in itertools.product((False, True), itertools.product(full, repeat=3)):
                    if A in light and P in light and D in light:
                        continue  # already compared in the light grid
                    self.one({"kv_cache_dtype": d, **backend_args(A, P, D)}, rep, mla)
        if "speculative_algorithm" in rel.defaults and "enable_unified_memory" in rel.defaults and rel.has_dequant:
            self.run_extras()
        return self.tally

    # 0.5.21+: the speculative / disaggregation / cache flags
    SPEC_ALGS = (ABSENT, "EAGLE", "eagle", "EAGLE3", "NEXTN", "NGRAM", "ngram", "DFLASH", "dflash", "DSPARK",
                 "STANDALONE", "FROZEN_KV_MTP", "UNO")

    def extras(self) -> Iterator[dict]:
        axes = {
            "speculative_algorithm": self.SPEC_ALGS,
            "speculative_ngram_max_bfs_breadth": (ABSENT, 1, 10),
            "speculative_draft_attention_backend": (ABSENT, "trtllm_mha", "triton"),
            "speculative_attention_mode": (ABSENT, "decode"),
            "disaggregation_mode": (ABSENT, "prefill", "decode"),
            "enable_hierarchical_cache": (ABSENT, True),
            "enable_lmcache": (ABSENT, True),
            "enable_unified_memory": (ABSENT, True),
        }
        keys = list(axes)
        for combo in itertools.product(*axes.values()):
            yield dict(zip(keys, combo))

    def run_extras(self) -> None:
        native_triples = [  # (A, P, D)
            ("trtllm_mha", None, None),  # native, P = D
            ("triton", "flashinfer", "trtllm_mha"),  # native and mixed
            ("triton", "trtllm_mha", "triton"),  # native through P only
            ("triton", None, None),  # neither
        ]
        other_triples = native_triples[:2]
        plan = [(("cuda", "sm100"), native_triples, ("nvfp4", "fp4_mx_block16")),
                (("cuda", "sm120"), other_triples, ("nvfp4",)),
                (("cuda", "sm90"), other_triples, ("fp4_mx_block16",)),
                (("rocm", None), other_triples[:1], ("nvfp4",))]
        for machine, triples, dts in plan:
            for d, (A, P, D), extra in itertools.product(dts, triples, self.extras()):
                self.one({"kv_cache_dtype": d, **backend_args(A, P, D), **extra}, machine, False)


class DequantRunner:
    """Compares ``kv4lint.rules.engine.prefill_dequant`` with SGLang's handler (0.5.21+)."""

    def __init__(self, version: str, engine):
        self.version = version
        self.rel = oracle.release(version)
        self.engine = engine
        self.tally = Tally(version)
        self._machines = {m: engine.Machine(*m) for m in MACHINES}

    def one(self, args: dict, machine: tuple) -> oracle.Verdict:
        args = _clean(args)
        v = self.rel.prefill_dequant(args, machine)
        want = compare.normalise_sglang(v.outcomes)
        events, after = self.engine.prefill_dequant(self.version, dict(args), self._machines[machine])
        got = compare.normalise_kv4lint(events)
        self.tally.compared += 1
        self.tally.saw(want)
        # the values after the handler, for the fields SGLang's record has
        want_after = v.args_after
        got_after = {k: after.get(k, ABSENT) for k in want_after}
        after_differs = want_after != got_after and not any(o[0] == "error" for o in want)
        if want != got or after_differs:
            if after_differs:
                keys = [k for k in want_after if want_after[k] != got_after[k]]
                want = want + [("args_after", {k: want_after[k] for k in keys})]
                got = got + [("args_after", {k: got_after[k] for k in keys})]
            exact = self.rel.prefill_dequant(args, machine, memo=False)
            self.tally.diffs.append(Diff("prefill_dequant", self.version, machine, None, args, want, got,
                                         compare.where_of(exact.outcomes)))
        return v

    def run(self) -> Tally:
        rel = self.rel
        dq = [ABSENT, *(rel.prefill_kv_cache_dequant_dtype_choices or ())]
        full = backends(rel)
        tiny = [None, "flashinfer", "trtllm_mha", "triton"]
        for d in dtypes(rel):
            if d != "nvfp4" or not rel.has_dequant:
                for m, q, (A, P, D) in itertools.product(MACHINES, dq, itertools.product(tiny, repeat=3)):
                    self.one({"kv_cache_dtype": d, "prefill_kv_cache_dequant_dtype": q, **backend_args(A, P, D)}, m)
                continue
            lits = {s for s in oracle.extract.string_literals(rel._dequant)} | {"flashinfer", "trtllm_mha"}
            light = light_backends(rel, lits)
            oracle.FACTS_READ.clear()
            for m, q, (A, P, D) in itertools.product(MACHINES, dq, itertools.product(light, repeat=3)):
                self.one({"kv_cache_dtype": d, "prefill_kv_cache_dequant_dtype": q, **backend_args(A, P, D)}, m)
            facts = set(oracle.FACTS_READ)
            for members in machine_classes(self.version, MACHINES, facts).values():
                rep = members[0]
                for q, (A, P, D) in itertools.product(dq, itertools.product(full, repeat=3)):
                    if A in light and P in light and D in light:
                        continue
                    self.one({"kv_cache_dtype": d, "prefill_kv_cache_dequant_dtype": q, **backend_args(A, P, D)}, rep)
        return self.tally



# ---- the resolution around the check (kv4lint ``simulate``) ----------------------------------

SIM_CORE_MACHINES = (("cuda", "sm90"), ("cuda", "sm100"), ("cuda", "sm120"), ("rocm", None))
SIM_ALL_MACHINES = (("cuda", "sm80"), ("cuda", "sm89"), ("cuda", "sm90"), ("cuda", "sm100"), ("cuda", "sm103"),
                    ("cuda", "sm110"), ("cuda", "sm120"), ("cuda", "sm121"), ("rocm", None))
SIM_MODELS = (("LlamaForCausalLM", False), ("MiniCPM3ForCausalLM", True))
SIM_DEFAULT_MODELS = SIM_MODELS + (("MistralForCausalLM", False),)  # Mistral: not on 0.5.7's FA3 list
SIM_OTHER_MACHINES = (("xpu", None), ("cpu", None), ("npu", None), ("hpu", None), ("mps", None), ("musa", None))
SIM_SWEEP_MACHINES = (("cuda", "sm90"), ("cuda", "sm100"), ("cuda", "sm120"))
SIM_CORE_BACKENDS = ("trtllm_mha", "trtllm_mla", "fa4", "flashinfer", "triton")


class SimRunner:
    """Compares ``kv4lint.rules.engine.simulate`` with SGLang's steps around the check (``sim``).

    Grid (a documented reduction; running SGLang's whole attention handler costs
    about a millisecond per configuration):
    * core: A x P x D over unset and the backends the neighbouring rules name
      (trtllm_mha, trtllm_mla, fa4, flashinfer, triton) x the trigger dtypes and
      fp8_e4m3 x sm90/sm100/sm120/ROCm x an MHA and an MLA model;
    * sweeps: each of A, P, D alone over every choice of the release, on
      sm90, sm100 and sm120, both models, trigger dtypes;
    * defaults: no backend flag, every machine (sm80 ... sm121, ROCm) x three
      models x speculative algorithm / EAGLE top-k / page size, which steer
      SGLang's default choice;
    * other platforms (XPU, CPU, NPU, HPU, MPS, MUSA; their device handlers run):
      A x P x D over unset/trtllm_mha/flashinfer/triton/intel_xpu/intel_amx, trigger dtypes and
      fp8_e4m3, both models;
    * 0.5.21+: ``--prefill-kv-cache-dequant-dtype`` unset/fp8_e4m3/nvfp4 x P, D
      over the core set x A over unset/trtllm_mha/flashinfer/triton, for nvfp4 on
      sm100/sm120, both models.
    Compared: the error (step, exception type, message), the warnings and
    rewrites of the steps kv4lint reports (alias, prefill dequant, KV4 check),
    and (P, D, A) as the KV4 check saw them.
    """

    def __init__(self, version: str, engine):
        from . import sim
        from kv4lint.target import ModelInfo

        self.version = version
        self.rel = oracle.release(version)
        self.sim = sim.simulation(version)
        self.engine = engine
        self.ModelInfo = ModelInfo
        self.tally = Tally(version)
        self.undetermined_ok = 0

    def _filter(self, outcomes) -> list:
        keep = self.sim.kept_steps
        return [o for o in outcomes if o.kind == "error" or o.step in keep]

    def one(self, args: dict, machine: tuple, model: tuple) -> None:
        args = _clean(args)
        arch, mla = model
        v = self.sim.run(args, machine, arch, mla)
        want = compare.normalise_sglang(self._filter(v.outcomes))
        out = self.engine.simulate(self.version, dict(args), self.engine.Machine(*machine), self.ModelInfo(arch, mla))
        self.tally.compared += 1
        self.tally.saw(want)
        if out.undetermined:
            # kv4lint may only be undetermined where SGLang's verdict depends on what it cannot see:
            # the KV heads per TP rank on ROCm MLA (the aiter/triton default).
            alt = self.sim.run(args, machine, arch, mla, kv_heads=16)
            if compare.normalise_sglang(self._filter(alt.outcomes)) != want:
                self.undetermined_ok += 1
                return
            got = [("undetermined", "", out.undetermined, ())]
        else:
            got = compare.normalise_kv4lint(out.events)
        if want == got and v.kv4_reached:
            kv4_error = bool(want) and want[-1][0] == "error" and want[-1][1] == self.rel.kv4_step
            if out.backends is None and not kv4_error:
                got = got + [("backends", "", None, ())]
                want = want + [("backends", "", v.backends, ())]
            elif out.backends is not None and not self._same_backends(tuple(out.backends), v, args, machine, model):
                got = got + [("backends", "", tuple(out.backends), ())]
                want = want + [("backends", "", v.backends, ())]
        if want != got:
            self.tally.diffs.append(Diff("simulate", self.version, machine, mla, {"model": arch, **args}, want, got,
                                         compare.where_of(self._filter(v.outcomes))))

    def _same_backends(self, got: tuple, v, args, machine, model) -> bool:
        """kv4lint's (P, D, A) against SGLang's; a ``OneOf`` must name exactly the values SGLang takes
        across what kv4lint cannot see (the KV heads per rank: 8 and 16 in the simulation)."""
        vague = [i for i, x in enumerate(got) if isinstance(x, self.engine.OneOf)]
        if not vague:
            return got == v.backends
        alt = self.sim.run(args, machine, model[0], model[1], kv_heads=16)
        for i, x in enumerate(got):
            if i in vague:
                if set(x.options) != {v.backends[i], alt.backends[i]}:
                    return False
            elif x != v.backends[i] or x != alt.backends[i]:
                return False
        return True

    def run(self) -> Tally:
        rel = self.rel
        choices = rel.attention_backend_choices
        core = [None, *(b for b in SIM_CORE_BACKENDS if b in choices)]
        trig = trigger_dtypes(rel)
        for d, m, model, (A, P, D) in itertools.product([*trig, "fp8_e4m3"], SIM_CORE_MACHINES, SIM_MODELS,
                                                         itertools.product(core, repeat=3)):
            self.one({"kv_cache_dtype": d, **backend_args(A, P, D)}, m, model)
        for d, m, model, field_, b in itertools.product(trig, SIM_SWEEP_MACHINES, SIM_MODELS,
                                                        BACKEND_FIELDS, choices):
            if b in core:
                continue
            self.one({"kv_cache_dtype": d, field_: b}, m, model)
        spec = [{}, {"speculative_algorithm": "EAGLE"}, {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1},
                {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4},
                {"speculative_algorithm": "NGRAM", "speculative_ngram_max_bfs_breadth": 1},
                {"speculative_algorithm": "DFLASH"}]
        for d, m, model, sp, page in itertools.product(trig, SIM_ALL_MACHINES, SIM_DEFAULT_MODELS, spec,
                                                       (ABSENT, 16)):
            self.one({"kv_cache_dtype": d, "page_size": page, **sp}, m, model)
        small = [None, *(b for b in ("trtllm_mha", "flashinfer", "triton", "intel_xpu", "intel_amx") if b in choices)]
        for d, m, model, (A, P, D) in itertools.product([*trig, "fp8_e4m3"], SIM_OTHER_MACHINES, SIM_MODELS,
                                                         itertools.product(small, repeat=3)):
            self.one({"kv_cache_dtype": d, **backend_args(A, P, D)}, m, model)
        if rel.has_dequant and "nvfp4" in trig:
            for q, m, model, A, P, D in itertools.product(
                    (ABSENT, "fp8_e4m3", "nvfp4"), (("cuda", "sm100"), ("cuda", "sm120")), SIM_MODELS,
                    (None, "trtllm_mha", "flashinfer", "triton"), core, core):
                self.one({"kv_cache_dtype": "nvfp4", "prefill_kv_cache_dequant_dtype": q, **backend_args(A, P, D)},
                         m, model)
        return self.tally


BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


# ---- random configurations: verdicts and codes ---------------------------------------------------

class RandomRunner(SimRunner):
    """Random configurations over every axis the engine reads, compared as ``SimRunner`` compares (SGLang's
    steps vs ``simulate``), and the code kv4lint gives SGLang's first refusal checked against SGLang itself.

    Axes: the trigger dtypes and fp8_e4m3; A, P, D over unset (half the time) and every choice; every machine
    of the simulation (CUDA sm80 ... sm121, ROCm, XPU, CPU, NPU, HPU, MPS, MUSA); an MHA and an MLA model;
    speculative decoding (algorithm, EAGLE top-k, NGRAM breadth, draft backend, attention mode), PD
    disaggregation, hierarchical cache, LMCache, unified memory, ``--prefill-kv-cache-dequant-dtype`` and the
    page size, each left out (SGLang's default) or set, where the release has the option.

    The code check (the attribution rule): SGLang's own chain is run again with an fp8 KV cache and the
    FP4-only option removed. When SGLang then refuses with the same error, the dtype is not the cause and
    kv4lint must say KV407; when it does not, kv4lint must give a KV4 code (KV401-KV406); when SGLang accepts
    the launch, kv4lint must report no refusal.
    """

    SAMPLES = 1500

    def __init__(self, version: str, engine, seed: int = 16):
        super().__init__(version, engine)
        import random

        from kv4lint.rules import check

        self.random = random.Random(f"{seed}-{version}")
        self.check = check
        self.codes_compared = 0

    def _pick(self, values):
        return self.random.choice(list(values))

    def config(self) -> tuple[dict, tuple, tuple]:
        rel, r = self.rel, self.random
        choices = rel.attention_backend_choices
        trig = trigger_dtypes(rel)
        args: dict = {"kv_cache_dtype": self._pick([*trig, *trig, "fp8_e4m3"])}
        for f in BACKEND_FIELDS:
            args[f] = None if r.random() < 0.5 else self._pick(choices)
        d = rel.defaults
        optional = {
            "speculative_algorithm": ("EAGLE", "EAGLE3", "NEXTN", "NGRAM", "DFLASH", "STANDALONE"),
            "speculative_eagle_topk": (1, 4),
            "speculative_ngram_max_bfs_breadth": (1, 10),
            "speculative_draft_attention_backend": ("trtllm_mha", "triton"),
            "speculative_attention_mode": ("decode",),
            "disaggregation_mode": ("prefill", "decode"),
            "enable_hierarchical_cache": (True,),
            "enable_lmcache": (True,),
            "enable_unified_memory": (True,),
            "page_size": (16, 64),
        }
        for k, values in optional.items():
            if (k in d or k in rel.all_defaults) and r.random() < 0.25:
                args[k] = self._pick(values)
        if rel.has_dequant and r.random() < 0.3:
            args["prefill_kv_cache_dequant_dtype"] = self._pick(rel.prefill_kv_cache_dequant_dtype_choices)
        machine = self._pick(SIM_ALL_MACHINES + SIM_OTHER_MACHINES)
        model = self._pick(SIM_MODELS)
        return args, machine, model

    def code_check(self, args: dict, machine: tuple, model: tuple) -> None:
        arch, mla = model
        v = self.sim.run(args, machine, arch, mla)
        first = next((o for o in v.outcomes if o.kind == "error"), None)
        fixed = {k: x for k, x in args.items() if k not in self.check.FP4_ONLY_FIELDS}
        fixed["kv_cache_dtype"] = self.check.ATTRIBUTION_DTYPE
        again = next((o for o in self.sim.run(fixed, machine, arch, mla).outcomes if o.kind == "error"), None)
        if first is None:
            want = "accepted"
        elif again is not None and (again.step, again.message) == (first.step, first.message):
            want = "KV407"
        else:
            want = "a KV4 code"
        m, info = self.engine.Machine(*machine), self.ModelInfo(arch, mla)
        out = self.engine.simulate(self.version, dict(args), m, info)
        if out.undetermined:
            return  # compared (or excused) by the verdict comparison
        got_events = self.check.refusals(self.version, dict(args), m, info, out)
        got = "accepted" if not got_events else ("KV407" if got_events[0].code == "KV407" else "a KV4 code")
        self.codes_compared += 1
        if got != want:
            self.tally.diffs.append(Diff("code", self.version, machine, mla, {"model": arch, **args},
                                         [(want, first and first.message)], [(got, tuple(e.code for e in got_events))],
                                         first.where if first else ""))

    def run(self) -> Tally:
        for _ in range(self.SAMPLES):
            args, machine, model = self.config()
            self.one(dict(args), machine, model)
            self.code_check(args, machine, model)
        return self.tally
