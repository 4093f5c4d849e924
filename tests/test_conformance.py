"""kv4lint's rule engine against SGLang's own code, release by release.

SGLang's KV4 check (and the NVFP4 prefill-dequant handler of 0.5.21+) is read
from the published wheel of each release, compiled and run on stand-in
arguments (tests/conformance/oracle.py); kv4lint's engine is run on the same
inputs, and both verdicts must agree exactly: the same errors (exception type
and message), warnings and rewrites, in the same order. The grid and its
documented reductions are in tests/conformance/grid.py.

Wheels are downloaded once into ``$KV4LINT_WHEEL_CACHE`` (default
``~/.cache/kv4lint/sglang-wheels``); see tests/conformance/wheels.py.

Every difference fails the test with the smallest configuration per distinct
disagreement. There are no tolerated exceptions at present; one would be listed
in ``KNOWN_EXCEPTIONS`` below with SGLang's line and the reason.
"""

from __future__ import annotations

import pytest

from conformance import compare, grid, oracle, probes, targets
from kv4lint.rules import engine
from kv4lint.sglang import options
from kv4lint.sglang import releases
from kv4lint.sglang.releases import KV4_RELEASES

pytestmark = pytest.mark.conformance

# Every release with a KV4 check (0.5.7 is the first; 0.5.6.post2 has none).
RELEASES = list(KV4_RELEASES)

# (what, version, SGLang's line) -> why kv4lint may differ there. Empty: full agreement.
KNOWN_EXCEPTIONS: dict[tuple[str, str, str], str] = {}


def _report(request, version: str, what: str, tally: grid.Tally) -> None:
    line = f"conformance {what} sglang=={version}: {tally.compared} configurations compared, {len(tally.diffs)} differ"
    request.node.user_properties.append(("conformance", line))
    # Shown at once without xdist; under xdist (workers have no terminal) the line travels in the
    # report's user_properties for a terminal-summary hook.
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    capman = request.config.pluginmanager.get_plugin("capturemanager")
    if tr is not None and capman is not None and not hasattr(request.config, "workerinput"):
        with capman.global_and_fixture_disabled():
            tr.write_line("")
            tr.write_line(line)


def _fail_on(tally: grid.Tally) -> None:
    diffs = [d for d in tally.diffs if (d.what, d.version, d.where) not in KNOWN_EXCEPTIONS]
    if diffs:
        tally.diffs = diffs
        shown = "\n".join(d.describe() for d in tally.smallest())
        pytest.fail(f"{len(diffs)} of {tally.compared} configurations differ from SGLang {tally.version}; "
                    f"smallest per distinct disagreement:\n{shown}", pytrace=False)


# ---------------------------------------------------------------------------------------------


def test_normalisation_pairs_each_rewrite_with_its_log_line():
    Outcome = oracle.Outcome
    sglang = [
        Outcome("warning", "alias A", step="s"),
        Outcome("warning", "reason", step="s"),
        Outcome("rewrite", "", fields=(("b", 1), ("a", 2)), step="s"),
        Outcome("rewrite", "", fields=(("c", 3),), step="t"),
        Outcome("info", "what t did", step="t"),
        Outcome("info", "unrelated", step="t"),
        Outcome("error", "boom", "ValueError", step="u"),
    ]
    assert compare.normalise_sglang(sglang) == [
        ("warning", "s", "alias A", ()),
        ("rewrite", "s", "reason", ("a", "b")),
        ("rewrite", "t", "what t did", ("c",)),
        ("error", "u", "boom", "ValueError"),
    ]


def test_oracle_runs_sglang_text():
    """A known verdict of 0.5.23's own function, end to end through the wheel."""
    rel = oracle.release("0.5.23")
    v = rel.kv4_check({"kv_cache_dtype": "fp4_mx_block16", "attention_backend": "flashinfer"}, ("cuda", "sm90"), False)
    assert [(o.kind, o.exc_type, o.message) for o in v.outcomes] == [
        ("error", "AssertionError",
         "KV4 MHA expects attention_backend to be one of ['triton', 'torch_native', 'flex_attention', "
         "'trtllm_mha'], but got flashinfer")]
    assert v.outcomes[0].where.startswith("sglang/srt/arg_groups/kv_cache_hook.py:")
    assert rel.kv4_check({"kv_cache_dtype": "nvfp4"}, ("rocm", None), True).error.message == \
        "KV4 is not tested on non-CUDA platforms."


def test_oracle_finds_no_check_before_0_5_7():
    with pytest.raises(oracle.OracleError):
        oracle.Release("0.5.6.post2")


@pytest.mark.parametrize("version", RELEASES)
def test_platform_facts(version):
    """kv4lint's machine facts are SGLang's probes (utils/common.py) on the same machine."""
    n = releases.release(version)
    for machine in grid.MACHINES:
        p = probes.probes(version, *machine)
        m = engine.Machine(*machine)
        want = {
            "is_cuda": bool(p.ns["is_cuda"]()),
            "is_sm90": bool(p.ns["is_sm90_supported"]()),
            "is_sm100": bool(p.ns["is_sm100_supported"]()),
            "is_sm120": bool(p.ns["is_sm120_supported"]()),
            "is_blackwell": bool(p.ns["is_blackwell"]()),
        }
        got = {"is_cuda": m.is_cuda, "is_sm90": m.is_sm90, "is_sm100": m.is_sm100, "is_sm120": m.is_sm120,
               "is_blackwell": m.is_blackwell(n)}
        assert got == want, f"{machine}"


@pytest.mark.parametrize("version", RELEASES)
def test_option_choices(version):
    """The choices kv4lint ships for the flags the checks read are the wheel's."""
    rel = oracle.release(version)
    tbl = options.table(version)
    assert list(tbl["--kv-cache-dtype"].choices) == rel.kv_cache_dtype_choices
    for flag in ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend"):
        assert list(tbl[flag].choices) == rel.attention_backend_choices, flag
    dq = tbl.get("--prefill-kv-cache-dequant-dtype")
    want = rel.prefill_kv_cache_dequant_dtype_choices
    assert (list(dq.choices) if dq else None) == want


@pytest.mark.parametrize("version", RELEASES)
def test_kv4_check(version, request):
    tally = grid.Kv4Runner(version, engine).run()
    _report(request, version, "kv4_check", tally)
    # the oracle really exercised SGLang's function: each of its outcomes was produced
    seen = tally.sglang_kinds
    assert {"RuntimeError", "AssertionError", "warning"} <= seen, seen
    if releases.release(version) >= releases.NVFP4_PREFILL_STEP:
        assert {"ValueError", "rewrite"} <= seen, seen
    _fail_on(tally)


@pytest.mark.parametrize("version", RELEASES)
def test_simulate(version, request):
    """The resolution around the check: SGLang's own steps (tests/conformance/sim.py) vs kv4lint's simulate."""
    runner = grid.SimRunner(version, engine)
    tally = runner.run()
    _report(request, version, "simulate", tally)
    assert {"AssertionError", "ValueError"} <= tally.sglang_kinds, tally.sglang_kinds
    _fail_on(tally)


@pytest.mark.parametrize("version", RELEASES)
def test_prefill_dequant(version, request):
    rel = oracle.release(version)
    tally = grid.DequantRunner(version, engine).run()
    _report(request, version, "prefill_dequant", tally)
    if rel.has_dequant:
        assert {"ValueError", "rewrite"} <= tally.sglang_kinds, tally.sglang_kinds
    else:
        assert tally.sglang_kinds == set()  # no handler before 0.5.21: nothing happens
    _fail_on(tally)


@pytest.mark.parametrize("version", RELEASES)
def test_random_configurations(version, request):
    """Random configurations (speculative decoding, disaggregation, hierarchical cache, LMCache, unified memory,
    the prefill dequant option, every platform): SGLang's steps vs simulate, and the code kv4lint gives SGLang's
    first refusal vs SGLang's own chain replayed with an fp8 KV cache (tests/conformance/grid.RandomRunner)."""
    runner = grid.RandomRunner(version, engine)
    tally = runner.run()
    _report(request, version, f"random ({runner.codes_compared} codes)", tally)
    assert runner.codes_compared > grid.RandomRunner.SAMPLES // 2
    _fail_on(tally)


# ---------------------------------------------------------------------------------------------
# Launches with no GPU stated: kv4lint's candidate set against SGLang on every arch (tests/conformance/targets.py)


@pytest.mark.parametrize("version", RELEASES)
def test_gpu_classes(version, request):
    """The archs kv4lint judges once per class (kv4lint.sglang.gpus.CLASSES) are alike in SGLang's code: every
    platform probe of the wheel's utils/common.py has one value across a class, and SGLang's resolution (every
    step, every outcome) is the same on each arch as on its class's representative."""
    from kv4lint.sglang.gpus import ARCHS, CLASSES

    for rep, members in CLASSES.items():
        # fresh probes: the simulation adds stand-ins to the cached ones of the machines it runs on
        facts = {a: {k: bool(f()) for k, f in probes.Probes(version, "cuda", a).ns.items()
                     if k.startswith("is_") and callable(f)} for a in members}
        assert all(facts[a] == facts[rep] for a in members), (rep, facts)
    assert sorted(a for m in CLASSES.values() for a in m) == sorted(ARCHS)
    n, differ = targets.class_differences(version)
    line = f"conformance gpu classes sglang=={version}: {n} launches x {len(ARCHS)} archs, {len(differ)} differ"
    request.node.user_properties.append(("conformance", line))
    assert differ == [], "\n".join(differ[:12])


def test_launches_with_no_gpu_stated(request):
    """400 seeded FP4 launches with no GPU stated: kv4lint's verdict (error / warning / clean) is SGLang's over
    the nine archs sm80 ... sm121 (refused on all / refused or warned of on some / neither)."""
    import collections

    import kv4lint

    tally: collections.Counter = collections.Counter()
    differ = []
    for launch in targets.launches(400):
        want, per_arch = targets.sglang_verdict(launch)
        got, found = targets.kv4lint_verdict(launch, kv4lint.check_argv)
        tally[want] += 1
        if want != got:
            differ.append(f"{launch.describe()}\n    SGLang {want}: {per_arch}\n    kv4lint {got}: "
                          f"{[(f.code, f.severity.value, f.message) for f in found]}")
    line = (f"conformance no GPU stated: 400 launches ({tally['error']} errors, {tally['warning']} warnings, "
            f"{tally['clean']} clean in SGLang), {len(differ)} differ")
    request.node.user_properties.append(("conformance", line))
    assert {"error", "warning", "clean"} <= set(tally), tally
    assert differ == [], "\n".join(differ[:12])


# ---------------------------------------------------------------------------------------------
# The weights narrow the machine: kv4lint.sglang.quantization against SGLang's loader and ModelConfig

WHEEL_RELEASES = list(releases.WHEEL_RELEASES)

# Checkpoints as written to disk: (config.json, hf_quant_config.json or None). ModelOpt's forms (where the config
# lives, NVFP4, FP8, MXFP8, MIXED_PRECISION with and without NVFP4 layers, Nemotron-H or not), the forms of other
# producers (DeepSeek's fp8, gpt-oss' mxfp4, compressed-tensors, a w4afp8 checkpoint), and none.
_MODELOPT = {"producer": {"name": "modelopt", "version": "0.29.0"}}
_NVFP4_LAYERS = {"quantized_layers": {"model.layers.0.mlp.experts.0": {"quant_algo": "NVFP4", "group_size": 16}}}
_FP8_LAYERS = {"quantized_layers": {"model.layers.0.mlp.experts.0": {"quant_algo": "FP8"}}}


def _weights_checkpoints() -> list[tuple[dict, dict | None]]:
    from kv4lint.sglang.quantization import named_checkpoints

    out: list[tuple[dict, dict | None]] = [({"model_type": "llama"}, None)]
    for model_type, archs in (("llama", ["LlamaForCausalLM"]), ("nemotron_h", ["NemotronHForCausalLM"])):
        base = {"model_type": model_type, "architectures": archs}
        for algo in ({"quant_algo": "NVFP4", "group_size": 16}, {"quant_algo": "FP8"}, {"quant_algo": "MXFP8"},
                     {"quant_algo": "W4A16_NVFP4"}, {"quant_algo": "NVFP4_AWQ"}, {"quant_algo": "W4A8_NVFP4_FP8"},
                     {"quant_algo": "MIXED_PRECISION", **_NVFP4_LAYERS},
                     {"quant_algo": "MIXED_PRECISION", **_FP8_LAYERS}):
            out.append((base, {**_MODELOPT, "quantization": dict(algo)}))
            out.append(({**base, "quantization_config": {"quant_method": "modelopt", **algo}}, None))
            out.append(({**base, "quantization_config": dict(algo)}, None))
    for method in ("fp8", "mxfp4", "w4afp8", "compressed-tensors"):
        out.append(({"model_type": "llama", "quantization_config": {"quant_method": method}}, None))
    out.append(({"model_type": "llama", "compression_config": {"quant_method": "compressed-tensors"}}, None))
    out += list(named_checkpoints("nvidia/Llama-3.3-70B-Instruct-FP4") or ())
    return out


_STATED = (None, "modelopt", "modelopt_fp4", "modelopt_fp8", "modelopt_mixed", "fp8", "mxfp8", "w4afp8",
           "nvfp4_online", "quark_mxfp4")


@pytest.mark.parametrize("version", WHEEL_RELEASES)
def test_weights_min_capability(version):
    """The minimum compute capability kv4lint's table gives each quantization method is the one SGLang's loader
    asks of it on CUDA (``get_min_capability()`` of the class ``BASE_QUANTIZATION_METHODS`` names), and a method
    the table leaves out asks for no more than sm80; the loader raises below it."""
    from conformance import quantization
    from kv4lint.sglang.quantization import CONFIG_CLASS, MIN_CAPABILITY, REQUANTIZATION_METHODS, min_capability

    n = releases.release(version)
    assert quantization.loader_refuses(version)
    caps = quantization.min_capability(version)
    classes = quantization.config_classes(version)
    for method, cap in caps.items():
        if method in MIN_CAPABILITY:
            assert min_capability(method, n) == cap, (method, cap)
            assert classes[method] == CONFIG_CLASS[method], method
        else:
            assert cap <= 80, (method, cap)
    for method in MIN_CAPABILITY:
        if method not in caps:
            assert min_capability(method, n) is None, method
    assert set(quantization.requantization(version)) <= set(REQUANTIZATION_METHODS)


@pytest.mark.parametrize("version", WHEEL_RELEASES)
def test_weights_method(version, request):
    """The method kv4lint says a checkpoint loads with (its config read as SGLang reads it, reconciled with
    ``--quantization``) is the one SGLang's ``ModelConfig._verify_quantization`` settles on, run from the wheel on
    the checkpoint written to a directory; where SGLang refuses the pair on every GPU, kv4lint may say anything."""
    from conformance import quantization
    from kv4lint.sglang.quantization import checkpoint_method, launch_method

    n = releases.release(version)
    compared, refused, differ = 0, 0, []
    for config, hf_quant in _weights_checkpoints():
        for stated in _STATED:
            want = quantization.verify(version, config, hf_quant, stated)
            if isinstance(want, Exception):
                refused += 1
                continue
            compared += 1
            got = launch_method(checkpoint_method(config, hf_quant, n), stated, n)
            if (got or None) != (want or None):
                differ.append(f"{config} {hf_quant} --quantization {stated}: SGLang {want!r}, kv4lint {got!r}")
    line = (f"conformance weights sglang=={version}: {compared} checkpoint x --quantization pairs compared, "
            f"{refused} refused by SGLang, {len(differ)} differ")
    request.node.user_properties.append(("conformance", line))
    assert differ == [], "\n".join(differ[:12])
