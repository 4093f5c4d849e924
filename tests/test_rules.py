"""Every rule: cases that must fire and cases that must not, through the public API.

The examples in each case are the ones `kv4lint explain` and docs/rules show.
"""

import itertools
import re

import pytest

import kv4lint
from kv4lint.rules.codes import RULES
from kv4lint.rules.engine import FP4_NAMES
from kv4lint.sglang.releases import FIRST_KV4, NEWEST

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
DSR1 = "deepseek-ai/DeepSeek-R1"
V2LITE = "deepseek-ai/DeepSeek-V2-Lite"


def codes(findings):
    return sorted(f.code for f in findings)


def argv(*words, model=LLAMA):
    return ["--model-path", model, *words]


FIRE = [
    # KV401: backend lists (0.5.23 MHA), default backend on Hopper, FA4 decode lists, NVFP4 prefill backends,
    # TRT-LLM MLA rule before the KV4 check, 0.5.7's FA4 rule, tokenspeed before 0.5.23.
    ("KV401", argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer"), {},
     "--attention-backend flashinfer"),
    ("KV401", argv("--kv-cache-dtype", "fp4_mx_block16"), {"gpu": "h100"},
     "SGLang's default backend fa3"),
    ("KV401", argv("--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend", "fa4",
                   "--decode-attention-backend", "flashinfer"), {},
     "prefill fa4 and decode flashinfer"),
    ("KV401", argv("--kv-cache-dtype", "nvfp4", "--attention-backend", "triton"), {"gpu": "b200"},
     "--attention-backend triton"),
    ("KV401", argv("--kv-cache-dtype", "nvfp4", model=DSR1), {"gpu": "b200"}, "SGLang's default backend trtllm_mla"),
    ("KV401", argv("--kv-cache-dtype", "fp4_mx_block16", model=DSR1), {"gpu": "b200"},
     "SGLang's default backend trtllm_mla"),
    # KV407 (0.5.7's FA4 rule refuses fa4 as attention backend whatever the KV cache dtype): a blocker
    ("KV407", argv("--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "fa4"), {"sglang_version": "0.5.7"},
     "FA4 backend is only supported for prefill"),
    ("KV401", argv("--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "fa3"), {"sglang_version": "0.5.14"},
     "--attention-backend fa3"),
    ("KV401", argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "tokenspeed_mla", model=DSR1),
     {"sglang_version": "0.5.20", "gpu": "b200"}, "--attention-backend tokenspeed_mla"),
    ("KV401", argv("--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "flashmla", model=V2LITE),
     {"sglang_version": "0.5.16"},
     "deprecated in SGLang 0.5.16"),  # fp4_e2m1 not KV4 any more -> KV406 first, see below
    # KV402: non-CUDA targets, from options and from --device
    ("KV402", argv("--kv-cache-dtype", "fp4_mx_block16"), {"platform": "rocm"}, "not rocm"),
    ("KV402", argv("--kv-cache-dtype", "nvfp4"), {"platform": "rocm"}, "not rocm"),
    ("KV402", argv("--kv-cache-dtype", "fp4_mx_block16", "--device", "xpu"), {}, "not xpu (--device xpu)"),
    ("KV402", argv("--kv-cache-dtype", "fp4_e2m1", "--device", "npu"), {"sglang_version": "0.5.10"},
     "not npu (--device npu)"),
    ("KV402", argv("--kv-cache-dtype", "fp4_mx_block16", "--device", "cpu"), {}, "not cpu (--device cpu)"),
    # KV403: mixed backends (warning only)
    ("KV403", argv("--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend", "flashinfer",
                   "--decode-attention-backend", "triton"), {}, "with prefill flashinfer, decode triton"),
    # KV404: nvfp4 off Blackwell; native NVFP4 prefill off SM100
    ("KV404", argv("--kv-cache-dtype", "nvfp4"), {"gpu": "h100"}, "sm90 (Hopper)"),
    ("KV404", argv("--kv-cache-dtype", "nvfp4"), {"gpu": "a100"}, "sm80 (Ampere)"),
    ("KV404", argv("--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "nvfp4"), {"gpu": "rtx5090"},
     "sm120"),
    # KV405: features refused with KV4
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--enable-unified-memory"), {"gpu": "b200"}, "--enable-unified-memory"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--disaggregation-mode", "prefill"), {"gpu": "b200"},
     "--disaggregation-mode prefill"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--enable-hierarchical-cache"), {"gpu": "gb200"},
     "--enable-hierarchical-cache"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--enable-lmcache"), {"gpu": "b200"}, "--enable-lmcache"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--speculative-algorithm", "DFLASH"), {"gpu": "b200"},
     "--speculative-algorithm DFLASH"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--speculative-algorithm", "STANDALONE"), {"gpu": "b200"},
     "--speculative-algorithm STANDALONE"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--speculative-algorithm", "NGRAM"), {"gpu": "b200"},
     "--speculative-ngram-max-bfs-breadth"),
    ("KV405", argv("--kv-cache-dtype", "nvfp4", "--speculative-algorithm", "EAGLE",
                   "--speculative-draft-attention-backend", "flashinfer"), {"gpu": "b200"},
     "--speculative-draft-attention-backend flashinfer"),
    ("KV405", argv("--kv-cache-dtype", "fp8_e4m3", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3"), {},
     "needs an nvfp4 KV cache"),
    ("KV405", argv("--kv-cache-dtype", "fp4_mx_block16", "--prefill-only-disable-kv-cache", "--is-embedding",
                   "--attention-backend", "triton"), {}, "--prefill-only-disable-kv-cache"),
    ("KV405", argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer",
                   model="deepseek-ai/DeepSeek-V3.2-Exp"), {"gpu": "b200"}, "DeepSeek sparse attention"),
    # KV406: names per release
    ("KV406", argv("--kv-cache-dtype", "fp4_e2m1"), {"sglang_version": "0.5.23"}, "not a choice in SGLang 0.5.23"),
    ("KV406", argv("--kv-cache-dtype", "nvfp4"), {"sglang_version": "0.5.12"}, "not a choice in SGLang 0.5.12"),
    ("KV406", argv("--kv-cache-dtype", "fp4_e2m1"), {"sglang_version": "0.5.18"}, "deprecated in SGLang 0.5.18"),
    ("KV406", argv("--kv-cache-dtype", "fp4_e2m1"), {"sglang_version": "0.5.4"}, "not a choice in SGLang 0.5.4"),
    ("KV406", argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "tokenspeed_mla", model=DSR1),
     {"sglang_version": "0.5.23", "gpu": "b200"}, "silently becomes fp8_e4m3"),
]
FIRE[9] = ("KV406",) + FIRE[9][1:]  # fp4_e2m1 in 0.5.16: deprecated, no longer KV4 (KV406)


@pytest.mark.parametrize("code,args,target,cause", FIRE, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(FIRE)])
def test_fires(code, args, target, cause):
    """The finding names what the user wrote, the cause SGLang hits and the release; its fix is an fp8 KV cache."""
    found = kv4lint.check_argv(args, **target)
    assert code in codes(found), [f.message for f in found]
    f = next(f for f in found if f.code == code)
    assert f.severity == RULES[code].severity
    flag, value = re.sub(r"^from SGLang [\d.]+: ", "", f.message).split()[:2]  # a release the verdict holds from
    assert flag in args and args[args.index(flag) + 1] == value, f"not the user's words first: {f.message}"
    said = f"{f.message} {f.detail}"  # the headline, then SGLang's words and the alternatives (issue 29)
    assert cause in said, f"the cause {cause!r} is not named: {said}"
    release = re.escape(target["sglang_version"]) if "sglang_version" in target else r"\d+\.\d+\.\d+"
    assert re.search(rf"SGLang {release}\b", said), f"the release is not named: {said}"
    if code in ("KV403", "KV407"):  # a warning (SGLang starts), or a cause the dtype does not change: no fix
        assert f.fix is None
    else:  # the fixed launch has an fp8 KV cache (set, or already there when only an FP4-only option goes)
        assert f.fix is not None, f.message
        dtype = args[args.index("--kv-cache-dtype") + 1]
        assert f.fix.set.get("kv_cache_dtype", dtype) == "fp8_e4m3", f.fix


NOT_FIRE = [
    argv("--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "flashinfer"),
    argv("--kv-cache-dtype", "auto"),
    argv(),
    argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "triton"),
    argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer", model=V2LITE),
    argv("--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend", "fa4",
         "--decode-attention-backend", "triton"),
]
NOT_FIRE_TARGETS = [
    {}, {"gpu": "b200"}, {"gpu": "h100"}, {"gpu": "rtx5090"}, {"sglang_version": "0.5.21"},
]


@pytest.mark.parametrize("args", NOT_FIRE)
@pytest.mark.parametrize("target", NOT_FIRE_TARGETS)
def test_does_not_fire(args, target):
    assert kv4lint.check_argv(args, **target) == []


@pytest.mark.parametrize("gpu", ["h100", "b200", "rtx5090"])
def test_trtllm_mha_takes_fp4_where_it_runs(gpu):
    # Off Hopper/Blackwell/SM120 (Ampere, Thor) SGLang refuses trtllm_mha whatever the KV cache: with no GPU stated
    # that is a KV407 warning (tests/test_target_sets.py).
    assert kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "trtllm_mha"),
                              gpu=gpu) == []


@pytest.mark.parametrize("target", [{"gpu": "b200"}, {"gpu": "gb300"}, {"gpu": "rtx5090"}, {"gpu": "dgx-spark"}])
def test_nvfp4_on_blackwell_with_defaults_is_fine(target):
    assert kv4lint.check_argv(argv("--kv-cache-dtype", "nvfp4"), **target) == []


def test_mixed_nvfp4_recipe_is_not_kv403():
    # SGLang 0.5.21+ picks prefill flashinfer + decode trtllm_mha itself on SM120: supported, silent.
    assert kv4lint.check_argv(argv("--kv-cache-dtype", "nvfp4"), gpu="rtx5090") == []


def test_unknown_values_never_fire_alone():
    # The attention backend is unknown on ROCm for an MLA model (depends on kv heads): the platform still decides.
    assert codes(kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", model=DSR1),
                                    platform="rocm")) == ["KV402"]
    # No GPU stated: SGLang's default backend is refused on Ampere/Ada, Thor and SM120 (flashinfer) and Hopper (fa3),
    # accepted on SM100 (trtllm_mha): one warning naming where, never an error; each GPU's cause in the detail.
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16"))
    assert f.severity.value == "warning"
    assert f.message == ("on every GPU but sm10x: --kv-cache-dtype fp4_mx_block16 is refused with SGLang's default "
                         "backends; set --gpu")
    assert "SGLang refuses the launch on Ampere/Ada, Hopper, Thor and Blackwell RTX/GB10 (sm8x, sm90, sm110, sm12x) " \
           "and accepts it on Blackwell (sm10x)" in f.detail
    assert "On Hopper (sm90): --kv-cache-dtype fp4_mx_block16 is refused with SGLang's default backend fa3" \
        in f.detail
    assert kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16"), gpu="b200") == []


def test_strict_names_the_backend_values_that_fail(tmp_path):
    # A backend kv4lint cannot read ($BACKEND): refused for some of its values only, so nothing by default ...
    from kv4lint.base.settings import Settings
    from kv4lint.pipeline.runner import lint_text

    text = ("#!/bin/bash\npython -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B "
            "--kv-cache-dtype fp4_mx_block16 --attention-backend $BACKEND\n")
    loose = Settings(gpu="b200", sglang_version="0.5.23")
    assert lint_text("serve.sh", text, loose).findings == []
    # ... and --strict says which possibility fails.
    (f,) = lint_text("serve.sh", text, Settings(gpu="b200", sglang_version="0.5.23", strict=True)).findings
    assert f.code == "KV401" and f.message.startswith("[strict] may fail for some backend value: ")


def test_unknown_model_attention_is_a_candidate_set():
    # flashinfer is accepted for MLA, refused for MHA: an unknown model gets a warning that says so ...
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer",
                                   model="my-org/private-model"), gpu="b200")
    assert f.code == "KV401" and f.severity.value == "warning"
    assert f.message == ("for an MHA model: --kv-cache-dtype fp4_mx_block16 is refused with flashinfer; "
                         "set --model-attention")
    # ... fa3 is refused for both: an error.
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "fa3",
                                   model="my-org/private-model"), gpu="b200")
    assert (f.code, f.severity.value) == ("KV401", "error") and "every target kv4lint considers: MHA and MLA models" \
        in f.detail
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer",
                                   model="my-org/private-model"), gpu="b200", model_attention="mha")
    assert (f.code, f.severity.value) == ("KV401", "error")


def test_message_names_values_lists_and_version():
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer"),
                              sglang_version="0.5.23")
    assert f.message.startswith("--kv-cache-dtype fp4_mx_block16 is refused with --attention-backend flashinfer")
    assert f.message.endswith("; use fp8_e4m3")  # the one fix; the list and the other choice are in the detail
    assert "allows triton, torch_native, flex_attention, trtllm_mha for MHA models. Or choose one of those " \
        "backends." in f.detail
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--device", "xpu"))
    assert "not tested on non-CUDA platforms" in f.detail and "xpu" in f.message and "--device" in f.message


def test_cli_spellings():
    base = ["--model", LLAMA, "--kv-cache=fp4_mx_block16", "--attention-backend=flashinfer"]
    assert codes(kv4lint.check_argv(base)) == ["KV401"]
    # The last repeated flag wins.
    assert kv4lint.check_argv(base + ["--attention-backend", "triton"]) == []
    # Underscore spellings are not options: SGLang's parser refuses them (KV408), kv4lint sees no dtype.
    (f,) = kv4lint.check_argv(["--model", LLAMA, "--kv_cache_dtype", "nvfp4"], gpu="h100", sglang_version="0.5.23")
    assert f.code == "KV408" and f.message.startswith("`--kv_cache_dtype` is not an option of SGLang 0.5.23")
    assert "did you mean `--kv-cache-dtype`?" in f.message
    # A unique prefix works; an ambiguous one (`--attention`, 0.5.23) sets nothing.
    assert codes(kv4lint.check_argv(["--model", LLAMA, "--kv-cache-dtype", "fp4_mx_block16", "--attention-b",
                                     "fa3"])) == ["KV401"]


def test_server_args_mapping():
    found = kv4lint.check_server_args({"model_path": LLAMA, "kv_cache_dtype": "fp4_mx_block16",
                                       "attention_backend": "fa3"})
    assert codes(found) == ["KV401"] and "kv_cache_dtype='fp4_mx_block16'" in found[0].message
    # The Python API takes no aliases and validates no choices: NVFP4 is not KV4 and fails later.
    found = kv4lint.check_server_args({"model_path": LLAMA, "kv_cache_dtype": "NVFP4"}, gpu="b200")
    assert codes(found) == ["KV406"] and "Unsupported kv_cache_dtype" in found[0].detail
    assert kv4lint.check_server_args({"model_path": LLAMA, "kv_cache_dtype": None}) == []


def test_releases_before_the_first_check_have_no_kv4_rules():
    # 0.5.5/0.5.6 accept fp4_e2m1 everywhere.
    assert kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "fa3"),
                              sglang_version="0.5.6") == []


def test_newer_version_uses_newest_pack():
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "fa3"),
                              sglang_version="0.6.2")
    assert f.code == "KV401" and f.target["sources"]["sglang_version"].endswith("judged by 0.5.23's rules")
    # ... and the detail says so, not silently
    assert "SGLang 0.6.2 (judged by 0.5.23's rules, the newest kv4lint knows)" in f.detail


def test_release_gates_come_from_one_module():
    from kv4lint.sglang import releases

    assert releases.KV4_RELEASES[0] == f"0.5.{releases.FIRST_KV4}"
    assert releases.KV4_RELEASES[-1] == releases.NEWEST_LABEL
    assert releases.release("0.6.0") == releases.NEWEST and releases.beyond_newest("0.6.0")
    assert releases.release("0.5.24") == releases.NEWEST and releases.beyond_newest("0.5.24")
    assert not releases.beyond_newest(releases.NEWEST_LABEL) and not releases.beyond_newest("0.5.23.post1")
    assert releases.release("0.5.21rc1") == 20 and releases.release("0.4.9") == 0


def test_bad_target_values_raise():
    with pytest.raises(ValueError):
        kv4lint.check_argv(argv(), gpu="potato")


# ---------------------------------------------------------------------------
# Every proposed fix leaves a launch with no KV4 error.

GRID_DTYPES = ["nvfp4", "fp4_mx_block16", "fp4_e2m1"]
GRID_BACKENDS = [None, "flashinfer", "fa3", "fa4", "triton", "trtllm_mha", "trtllm_mla", "tokenspeed_mla"]
GRID_EXTRA = [[], ["--enable-unified-memory"], ["--prefill-kv-cache-dequant-dtype", "nvfp4"],
              ["--speculative-algorithm", "DFLASH"], ["--prefill-attention-backend", "fa4"]]
GRID_TARGETS = [{"gpu": "b200"}, {"gpu": "h100"}, {"gpu": "rtx5090"}, {"platform": "rocm"},
                {"gpu": "b200", "sglang_version": "0.5.14"}, {"gpu": "b200", "sglang_version": "0.5.18"}]


def _apply(argv_, fix):
    out, i = [], 0
    flags = {"kv_cache_dtype": "--kv-cache-dtype", "prefill_kv_cache_dequant_dtype": "--prefill-kv-cache-dequant-dtype"}
    removed = {flags[f] for f in fix.remove}
    while i < len(argv_):
        w = argv_[i]
        if w in removed:
            i += 2
            continue
        if w == flags["kv_cache_dtype"] and "kv_cache_dtype" in fix.set:
            out += [w, fix.set["kv_cache_dtype"]]
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def test_every_proposed_fix_leaves_no_kv4_error():
    checked = 0
    for dtype, backend, extra, target in itertools.product(GRID_DTYPES, GRID_BACKENDS, GRID_EXTRA, GRID_TARGETS):
        for model in (LLAMA, V2LITE):
            a = argv("--kv-cache-dtype", dtype, *(["--attention-backend", backend] if backend else []), *extra,
                     model=model)
            found = kv4lint.check_argv(a, **target)
            refused = [f for f in found if f.code == "KV408"]  # an option the release lacks: no fix is safe
            for f in found:
                if f.fix is None:
                    # no dtype rewrite: the dtype is not the cause
                    assert f.code in ("KV403", "KV407", "KV408", "KV409")
                    continue
                fixed = _apply(a, f.fix)
                # what remains is at most the blockers (KV407) the dtype does not cause, reported already
                after = [g for g in kv4lint.check_argv(fixed, **target) if g.severity.value == "error"
                         and g.code != "KV407"]
                if refused:
                    assert f.fix.applicability == "unsafe" and "parser would still refuse" in f.fix.description
                    assert [g.code for g in after] == ["KV408"] * len(refused)
                else:
                    assert after == [], (a, target, f.message, fixed, [g.message for g in after])
                checked += 1
    assert checked > 300


def test_fix_dtype_is_configurable():
    (f,) = kv4lint.check_argv(argv("--kv-cache-dtype", "nvfp4"), gpu="h100", fix_dtype="fp8_e5m2")
    assert f.fix.set == {"kv_cache_dtype": "fp8_e5m2"}


def test_fp4_names_cover_every_release():
    from kv4lint.rules.engine import kv4_dtypes

    for n in range(FIRST_KV4, NEWEST + 1):
        assert set(kv4_dtypes(n)) <= set(FP4_NAMES)


def test_the_option_data_and_the_releases_leaf_agree_on_the_newest_release():
    # Adding a release touches the option data (tools/gen_options.py) and sglang/releases.py; the parser check
    # reads the one, the engine the other, so they must name the same newest release.
    from kv4lint.sglang import releases
    from kv4lint.sglang.options import known_releases

    newest = known_releases()[-1]
    assert releases.release(newest) == releases.NEWEST and not releases.beyond_newest(newest), newest


# The API is called by code: a wrong argument is the caller's bug, raised at once, never an empty list that
# reads as "this launch is fine" (issue 28 item 10).
@pytest.mark.parametrize("kw, message", [
    ({"sglang_version": "banana"}, "sglang_version=: not a version: 'banana'"),
    ({"platform": "tpu-ish"}, "platform=: unknown platform 'tpu-ish'"),
    ({"gpu": "h1000"}, "gpu=: unknown GPU 'h1000'"),
    ({"model_attention": "gqa"}, "model_attention=: expected \"mha\" or \"mla\", got 'gqa'"),
    ({"fix_dtype": "nvfp4"}, "fix_dtype=: 'nvfp4' is not a KV cache dtype fixes can use"),
])
def test_the_api_refuses_a_target_the_command_line_refuses(kw, message):
    for call in (lambda: kv4lint.check_argv(["--kv-cache-dtype", "fp4_e2m1"], **kw),
                 lambda: kv4lint.check_server_args({"kv_cache_dtype": "fp4_e2m1"}, **kw)):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value).startswith(message)


@pytest.mark.parametrize("bad", ["python -m sglang.launch_server --kv-cache-dtype fp4_e2m1",
                                 b"--kv-cache-dtype fp4_e2m1", None, 5, {"--kv-cache-dtype": "fp4_e2m1"}])
def test_the_api_refuses_an_argv_that_is_not_a_list(bad):
    with pytest.raises(TypeError, match="argv must be a list of arguments"):
        kv4lint.check_argv(bad)


def test_the_api_refuses_a_mapping_that_is_not_one_and_a_target_that_is_not_a_string():
    with pytest.raises(TypeError, match="mapping must be a mapping"):
        kv4lint.check_server_args([("kv_cache_dtype", "fp4_e2m1")])
    with pytest.raises(TypeError, match="sglang_version= must be a string, not float"):
        kv4lint.check_argv(["--kv-cache-dtype", "fp4_e2m1"], sglang_version=0.5)
    # what the command line accepts, the API accepts: a tuple, a GPU name, "auto", an upper-case platform
    assert codes(kv4lint.check_argv(("--kv-cache-dtype", "fp4_e2m1"), sglang_version="0.5.23", gpu="H100",
                                    platform="CUDA")) == ["KV406"]


def test_the_engines_verdicts_are_shared_only_for_the_same_release_machine_model_and_values():
    """kv4lint.rules.check.verdict holds the engine's verdict on a possibility for the process: each answer is
    what the engine gives on those inputs, whatever was asked before (the release's rules, the machine, the
    model, the values: every part of its key)."""
    from kv4lint.rules import check
    from kv4lint.rules.engine import Machine, simulate
    from kv4lint.target import ModelInfo

    cases = [(version, {"model_path": "m", "kv_cache_dtype": dtype, "attention_backend": backend},
              Machine("cuda", arch), ModelInfo(mla=mla))
             for version in ("0.5.7", "0.5.10", "0.5.10.post1", "0.5.23") for arch in ("sm90", "sm100")
             for mla in (False, True) for dtype in ("fp4_e2m1", "nvfp4") for backend in ("trtllm_mha", "triton")]
    check._VERDICTS.clear()
    seen = set()
    for _ in range(2):
        for version, a, m, model in cases:
            fresh = simulate(version, a, m, model)
            assert check.verdict(version, a, m, model) == (fresh, check.refusals(version, a, m, model, fresh))
            seen.add((tuple(fresh.events), fresh.backends))
    assert len(seen) > 8  # the cases differ: a key that left a part out would answer one with another's verdict
