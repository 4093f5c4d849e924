"""Issue 35: the weights narrow the machine.

SGLang's loader refuses quantized weights on a GPU below their method's minimum compute capability
(``kv4lint/sglang/quantization.py``, read from every wheel by ``tests/test_conformance.py::test_weights_*``), so an
arch the weights cannot load on is no candidate for the launch: ``--show-target`` says so, and the KV cache is
judged where the launch can run. Only where SGLang's code refuses; a stated or named GPU stays the target; unknown
stays unknown (a model kv4lint cannot read, a ``--quantization`` it cannot see, a build it does not know).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kv4lint.cli import main
from kv4lint.sglang.gpus import ARCHS
from kv4lint.sglang.quantization import (Checkpoint, checkpoint_method, launch_method, min_capability,
                                         named_checkpoints)

DSR1_FP4 = "nvidia/DeepSeek-R1-0528-FP4"
BLACKWELL_UP = "sm100,sm103,sm110,sm120,sm121"


def target(tmp_path: Path, capsys, text: str, *args: str, name: str = "serve.sh") -> tuple[str, list[str]]:
    """``kv4lint check --show-target`` on one file: the launch's ``gpu=...`` and its evidence, and the findings."""
    (tmp_path / name).write_text(text)
    main(["check", "--isolated", "--no-cache", "-j", "1", "--show-target", *args, str(tmp_path / name)])
    out = capsys.readouterr().out.splitlines()
    shown = [ln for ln in out if ": sglang.launch_server" in ln or ": Engine" in ln or ": sgl.Engine" in ln]
    assert len(shown) == 1, out
    gpu = shown[0].split(" gpu=", 1)[1].split(", model_attention=", 1)[0]
    return gpu, [ln.split(f"{name}:", 1)[1] for ln in out if f"{name}:" in ln and " sglang" not in ln
                 and ": sglang." not in ln]


def launch(model: str, *options: str) -> str:
    return f"python3 -m sglang.launch_server --model-path {model} {' '.join(options)}\n"


# ---------------------------------------------------------------------------
# What SGLang's code says (the leaf)


def test_nvfp4_weights_need_blackwell_until_0_5_12_and_run_on_sm80_through_marlin_after():
    assert min_capability("modelopt_fp4", 12) == 100
    assert min_capability("modelopt_fp4", 13) == 80  # fp4_utils.py: "auto" is Marlin on SM80-SM90
    assert min_capability("modelopt_fp8", 23) == 89 and min_capability("w4afp8", 23) == 90
    assert min_capability("nvfp4_online", 13) is None and min_capability("nvfp4_online", 14) == 100
    # methods that ask for no more than sm80 anywhere narrow nothing: they are not in the table
    assert min_capability("fp8", 23) is None and min_capability("mxfp4", 23) is None
    assert min_capability("compressed-tensors", 12) is None and min_capability(None, 12) is None


def test_a_checkpoint_is_read_as_sglang_reads_it():
    nvfp4 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}
    assert checkpoint_method({}, nvfp4, 12).method == "modelopt_fp4"
    in_config = {"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    assert checkpoint_method(in_config, None, 9).method == "modelopt"  # 0.5.9 reads quant_algo only without a method
    assert checkpoint_method(in_config, None, 10).method == "modelopt_fp4"
    assert checkpoint_method({"quantization_config": {"quant_method": "fp8"}}, nvfp4, 12).method == "fp8"
    mixed = {"quantization": {"quant_algo": "MIXED_PRECISION",
                              "quantized_layers": {"x": {"quant_algo": "NVFP4"}}}}
    assert checkpoint_method({}, mixed, 9).method == "w4afp8"
    assert checkpoint_method({}, mixed, 12).method == "w4afp8"
    assert checkpoint_method({"model_type": "nemotron_h"}, mixed, 12).method == "modelopt_mixed"
    assert checkpoint_method({}, mixed, 15).method == "modelopt_mixed"
    assert checkpoint_method({"model_type": "llama"}, None, 12) is None  # no quantization config: unquantized


def test_a_modelopt_checkpoint_overrides_quantization_and_others_keep_it():
    fp4 = Checkpoint("modelopt_fp4", "NVFP4")
    assert launch_method(fp4, None, 12) == "modelopt_fp4"
    assert launch_method(fp4, "fp8", 12) == "modelopt_fp4"  # override_quantization_method
    assert launch_method(fp4, "quark_mxfp4", 17) == "modelopt_fp4"
    assert launch_method(fp4, "quark_mxfp4", 18) == "quark_mxfp4"  # a requantization is not overridden
    assert launch_method(Checkpoint("modelopt", "NVFP4"), "modelopt", 8) == "modelopt_fp4"  # by quant_algo
    assert launch_method(Checkpoint("w4afp8"), "modelopt_fp4", 12) == "modelopt_fp4"  # a mismatch SGLang refuses
    assert launch_method(None, "modelopt_fp4", 12) == "modelopt_fp4"  # online quantization of a bf16 checkpoint
    assert launch_method(None, None, 12) is None


@pytest.mark.parametrize("model, named", [
    ("nvidia/Llama-3.3-70B-Instruct-FP4", True), ("nvidia/DeepSeek-R1-0528-FP4-v2", True),
    ("nvidia/Qwen3-30B-A3B-NVFP4", True), ("NVIDIA/DeepSeek-R1-FP4", True),
    ("/models/hub/nvidia/Llama-3.3-70B-Instruct-FP4", True),  # a local copy under the publisher's name
    ("nvidia/gpt-oss-120b-MXFP4", False), ("nvidia/Llama-3.1-8B-Instruct-FP8", False),
    ("RedHatAI/Qwen3-8B-NVFP4", False),  # compressed-tensors: a format per layer, not read from a name
    ("/models/Llama-3.3-70B-FP4", False), ("nvidia/FP4-tools/model", False), ("nvidia/Nemotron-FP48", False),
])
def test_only_a_model_id_whose_publisher_names_one_format_is_evidence(model, named):
    assert (named_checkpoints(model) is not None) is named


# ---------------------------------------------------------------------------
# The target


def test_nvfp4_weights_narrow_an_unstated_gpu_to_where_they_load(tmp_path, capsys):
    text = launch(DSR1_FP4, "--quantization modelopt_fp4 --tp 8 --attention-backend trtllm_mla "
                            "--kv-cache-dtype fp4_e2m1")
    gpu, found = target(tmp_path, capsys, text, "--sglang-version", "0.5.9")
    assert gpu.startswith(f"{BLACKWELL_UP} (not stated")
    assert ("the weights narrow it to Blackwell, Thor and Blackwell RTX/GB10 (sm10x, sm110, sm12x): model id "
            f"'{DSR1_FP4}', an NVIDIA ModelOpt NVFP4 checkpoint (quant_algo NVFP4 or MIXED_PRECISION) and "
            "--quantization modelopt_fp4, which SGLang 0.5.9 loads as modelopt_fp4: on sm100 and newer only "
            "(get_min_capability(): ModelOptFp4Config 100)") in gpu
    assert found == []  # before: KV407 "refused on Ampere/Ada and Hopper: --attention-backend trtllm_mla ..."
    # from 0.5.13 NVFP4 loads on SM80-SM90 (Marlin): nothing narrows, the warning is SGLang's
    gpu, found = target(tmp_path, capsys, text, "--sglang-version", "0.5.13")
    assert gpu.startswith("any (") and "weights" not in gpu
    assert [f for f in found if "KV407" in f and "Ampere/Ada and Hopper" in f]


def test_the_name_alone_keeps_every_method_the_checkpoint_may_be(tmp_path, capsys):
    # a MIXED_PRECISION checkpoint is w4afp8 in 0.5.9-0.5.14 for all but Nemotron-H: sm90 stays a candidate
    gpu, _ = target(tmp_path, capsys, launch(DSR1_FP4, "--kv-cache-dtype fp4_e2m1"), "--sglang-version", "0.5.12")
    assert gpu.startswith("sm90,sm100,sm103,sm110,sm120,sm121 (")
    assert "loads as modelopt_fp4, modelopt_mixed or w4afp8: on sm90 and newer only" in gpu


def test_a_stated_gpu_stays_the_target_where_the_weights_do_not_load(tmp_path, capsys):
    text = launch(DSR1_FP4, "--quantization modelopt_fp4 --attention-backend trtllm_mla --kv-cache-dtype fp4_e2m1")
    gpu, found = target(tmp_path, capsys, text, "--sglang-version", "0.5.9", "--gpu", "h100")
    assert gpu.startswith("sm90 (--gpu; the weights do not load there: model id")
    assert gpu.endswith("SGLang refuses them at load, which kv4lint does not judge)")
    assert [f for f in found if "KV407 (error)" in f]  # the KV cache on an H100, as SGLang's check says it


def test_a_gpu_the_file_names_stays_the_target_or_is_narrowed(tmp_path, capsys):
    body = launch(DSR1_FP4, "--quantization modelopt_fp4 --kv-cache-dtype fp4_e2m1")
    gpu, _ = target(tmp_path, capsys, "# 8x H100\n" + body, "--sglang-version", "0.5.9")
    assert gpu.startswith("sm90 (line 1: ") and "the weights do not load there" in gpu
    gpu, _ = target(tmp_path, capsys, "# H200/B200\n" + body, "--sglang-version", "0.5.9")
    assert gpu.startswith("sm100 (line 1: ") and "the weights narrow it to Blackwell (sm100)" in gpu


OLD = ("--sglang-version", "0.5.12")  # a release in which NVFP4 weights load on sm100 and newer only


@pytest.mark.parametrize("text, args", [
    (launch(DSR1_FP4, "--quantization $QUANT --kv-cache-dtype fp4_e2m1"), OLD),  # a --quantization unseen
    (launch(DSR1_FP4, '--kv-cache-dtype fp4_e2m1 "$@"'), OLD),  # ... or one the caller may add
    (launch("$MODEL", "--quantization modelopt_fp4 --kv-cache-dtype fp4_e2m1"), OLD),  # a model unseen
    (launch("/models/DeepSeek-R1-FP4", "--quantization modelopt_fp4 --kv-cache-dtype fp4_e2m1"), OLD),  # a path
    (launch("RedHatAI/DeepSeek-R1-0528-NVFP4", "--kv-cache-dtype fp4_e2m1"), OLD),  # compressed-tensors
    (launch(DSR1_FP4, "--quantization fp8 --kv-cache-dtype fp4_e2m1"), ("--sglang-version", "0.5.13")),
    # releases kv4lint does not know: their loaders are not read (an FP8 ModelOpt checkpoint needs sm89 in all)
    (launch("ckpt/fp8", "--kv-cache-dtype fp8_e4m3"), ("--sglang-version", "0.6.0")),
    (launch("ckpt/fp8", "--kv-cache-dtype fp8_e4m3"), ("--sglang-version", "0.5.4")),
    (launch("ckpt/fp8", "--kv-cache-dtype fp8_e4m3 --no-such-option"), ()),  # a build kv4lint does not know
])
def test_unknown_stays_unknown(tmp_path, capsys, text, args):
    checkpoint(tmp_path, "fp8", {}, {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}})
    gpu, _ = target(tmp_path, capsys, text.replace("ckpt/fp8", "checkpoints/fp8"), *args)
    assert gpu.startswith("any (") and "weights" not in gpu, gpu
    gpu, _ = target(tmp_path, capsys, launch("checkpoints/fp8", "--kv-cache-dtype fp8_e4m3"))  # the newest: known
    assert gpu.startswith("sm89,"), gpu


def checkpoint(root: Path, name: str, config: dict, hf_quant: dict | None = None) -> None:
    d = root / "checkpoints" / name
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                               **config}))
    if hf_quant is not None:
        (d / "hf_quant_config.json").write_text(json.dumps(hf_quant))


def test_a_local_checkpoint_is_read_from_its_files(tmp_path, capsys):
    checkpoint(tmp_path, "fp8", {}, {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}})
    gpu, found = target(tmp_path, capsys, launch("./checkpoints/fp8", "--kv-cache-dtype nvfp4"),
                        "--sglang-version", "0.5.23")
    assert gpu.startswith("sm89,sm90,sm100,sm103,sm110,sm120,sm121 (")
    assert "/checkpoints/fp8/hf_quant_config.json, which SGLang 0.5.23 loads as modelopt_fp8: on sm89" in gpu
    assert [f for f in found if "KV404 (warning) refused on Ada, Hopper and Thor" in f]
    checkpoint(tmp_path, "nvfp4", {"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}})
    gpu, _ = target(tmp_path, capsys, launch("checkpoints/nvfp4", "--kv-cache-dtype fp4_e2m1"),
                    "--sglang-version", "0.5.12")
    assert gpu.startswith(f"{BLACKWELL_UP} (") and "/checkpoints/nvfp4/config.json, which SGLang" in gpu
    checkpoint(tmp_path, "bf16", {})  # no quantization config: --quantization quantizes it online
    gpu, _ = target(tmp_path, capsys, launch("checkpoints/bf16", "--quantization w4afp8 --kv-cache-dtype fp4_e2m1"),
                    "--sglang-version", "0.5.12")
    assert gpu.startswith("sm90,") and "loads as w4afp8" in gpu
    gpu, _ = target(tmp_path, capsys, launch("checkpoints/bf16", "--kv-cache-dtype fp4_e2m1"),
                    "--sglang-version", "0.5.12")
    assert gpu.startswith("any (")


def test_every_candidate_kv4lint_knows_is_a_cuda_arch_with_a_capability():
    from kv4lint.target.weights import _number

    assert [_number(a) for a in ARCHS] == [80, 86, 89, 90, 100, 103, 110, 120, 121]


def test_a_file_naming_a_checkpoint_again_and_again_reads_it_once(tmp_path, monkeypatch):
    """A run reads a checkpoint's files once (kv4lint.target.recalled, the run's memo), however many launches
    name it; every launch is narrowed as the first, and the report still depends on the files."""
    import os

    import kv4lint.target
    from kv4lint.pipeline.runner import lint_text
    from kv4lint.settings.options import Settings

    checkpoint(tmp_path, "fp8", {}, {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}})
    opened: list[str] = []
    real = kv4lint.target.open_file
    monkeypatch.setattr(kv4lint.target, "open_file",
                        lambda path, *a, **kw: opened.append(os.path.normpath(path)) or real(path, *a, **kw))
    path = tmp_path / "serve.sh"
    text = "".join(launch("./checkpoints/fp8", f"--kv-cache-dtype fp8_e4m3 --port {30000 + i}") for i in range(5))
    rep = lint_text(str(path), text, Settings())
    assert [t["gpus"][0] for t in rep.targets] == ["sm89"] * 5  # each narrowed to where FP8 weights load
    hf_quant = str(tmp_path / "checkpoints" / "fp8" / "hf_quant_config.json")
    assert opened.count(hf_quant) == 1  # the weights' (the model's attention reads config.json only)
    assert hf_quant in rep.depends and str(tmp_path / "checkpoints" / "fp8" / "config.json") in rep.depends
    from kv4lint.base.source import LineIndex
    from kv4lint.files.depends import recording
    from kv4lint.frontends import scan
    from kv4lint.pipeline.runner import resolve_target

    index = LineIndex(text)
    for one in scan(str(path), text, "shell").launches:  # each launch of one run (one index) records the files
        with recording() as looked:
            resolve_target(one, Settings(), base_dir=str(tmp_path), index=index)
        assert hf_quant in looked
