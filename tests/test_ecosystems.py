"""SGLang's ecosystem formats (issue 27): OME runtimes and InferenceServices, RoleBasedGroup, Helm values, KServe,
srt-slurm recipes.

Each form, through the CLI: the finding is where the value is written, ``kv4lint fix`` edits it in place and the
file then checks clean; its clean twin (``decoy-…``) stays silent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kv4lint.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "yaml"
ARGS = ["--isolated", "--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]

FORMS = {
    # fixture: (its clean twin, the (line, code) of each finding)
    "ome/srt-llama-3-1-8b-nvfp4-rt.yaml": ("ome/decoy-srt-llama-3-1-8b-fp8-rt.yaml", [(58, "KV401"), (88, "KV401")]),
    "ome/isvc-llama-3-1-8b-override.yaml": ("ome/decoy-isvc-llama-3-1-8b-override-fp8.yaml", [(22, "KV401")]),
    "rbg/sglang-pd-rolebasedgroup.yaml": ("rbg/decoy-sglang-pd-rolebasedgroup-fp8.yaml", [(45, "KV401")]),
    "helm/values.yaml": ("helm/decoy-values-fp8.yaml", [(20, "KV401")]),
    "kserve/inferenceservice-sglang.yaml": ("kserve/decoy-inferenceservice-sglang-fp8.yaml",
                                            [(18, "KV401"), (34, "KV401")]),
    "srt-slurm/llama-8b-b200-disagg.yaml": ("srt-slurm/decoy-llama-8b-b200-disagg-fp8.yaml",
                                            [(35, "KV401"), (43, "KV401")]),
}


def check(path: Path, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", *ARGS, *extra, str(path), "--output-file", str(out)])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("name", sorted(FORMS))
def test_ecosystem_form_found_and_fixed_in_place(name: str, tmp_path: Path):
    twin, expected = FORMS[name]
    path = tmp_path / Path(name).name
    shutil.copy(FIXTURES / name, path)
    code, doc = check(path, tmp_path)
    assert code == 1 and doc["errors"] == []
    assert [(f["line"], f["code"]) for f in doc["findings"]] == expected
    before = path.read_text()
    for f in doc["findings"]:
        assert "--kv-cache-dtype nvfp4" in f["message"]
        (edit,) = f["fix"]["edits"]
        assert before[edit["start"]:edit["end"]] == "nvfp4" and edit["text"] == "fp8_e4m3"
    assert main(["fix", *ARGS, str(path)]) == 0
    assert path.read_text() == before.replace("nvfp4", "fp8_e4m3")
    code, doc = check(path, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


@pytest.mark.parametrize("name", sorted(FORMS))
def test_ecosystem_form_with_an_accepted_kv_cache_is_silent(name: str, tmp_path: Path):
    code, doc = check(FIXTURES / FORMS[name][0], tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


def test_helm_image_map_states_the_release(tmp_path: Path):
    path = tmp_path / "values.yaml"
    shutil.copy(FIXTURES / "helm/values.yaml", path)
    out = tmp_path / "out.json"
    assert main(["check", "--format", "json", "--isolated", "--jobs", "1", str(path), "--output-file", str(out)]) == 1
    (f,) = json.loads(out.read_text())["findings"]
    assert f["detail"].startswith("SGLang 0.5.23: ")  # the image's release, not "(no release stated)"


KSERVE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: m
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      runtime: {runtime}
      args: ["--kv-cache-dtype", "nvfp4", "--attention-backend", "triton"]
"""


@pytest.mark.parametrize("runtime, found", [("kserve-sglang", 1), ("sglang-runtime", 1),
                                            ("kserve-huggingfaceserver", 0), ("vllm-runtime", 0)])
def test_kserve_model_args_are_server_args_only_for_an_sglang_runtime(runtime: str, found: int, tmp_path: Path):
    path = tmp_path / "isvc.yaml"
    path.write_text(KSERVE.format(runtime=runtime))
    code, doc = check(path, tmp_path)
    assert (code, len(doc["findings"]), doc["errors"]) == (found, found, [])


def test_srt_slurm_modes_become_options_as_srtctl_builds_them():
    from kv4lint.frontends.yaml import scan_yaml

    text = (FIXTURES / "srt-slurm/llama-8b-b200-disagg.yaml").read_text()
    res = scan_yaml(text, "recipe.yaml")
    assert [la.location for la in res.launches] == ["backend.sglang_config.prefill", "backend.sglang_config.decode"]
    decode = [v.text for v in res.launches[1].argv]
    assert decode[:4] == ["--served-model-name", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "8"]
    assert ["--kv-cache-dtype", "nvfp4"] == decode[decode.index("--kv-cache-dtype"):][:2]  # kv_cache_dtype: nvfp4
    assert "--enable-metrics" not in decode  # false: no flag
    assert "--trust-remote-code" in [v.text for v in res.launches[0].argv]  # true: the bare flag
    hints = {(h.kind, h.value) for h in res.launches[0].hints}
    assert {("gpu", "sm100"), ("platform", "cuda")} <= hints


def test_a_recipe_for_another_backend_is_no_launch(tmp_path: Path):
    path = tmp_path / "recipe.yaml"
    path.write_text("name: x\nbackend:\n  type: trtllm\n  sglang_config:\n    prefill:\n"
                    "      kv-cache-dtype: nvfp4\n      attention-backend: triton\n")
    code, doc = check(path, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


SHELL = FIXTURES.parent / "shell"


def fixed_in_place(fixture: str, name: str, twin: str, tmp_path: Path) -> tuple[dict, str, dict]:
    """The one finding of the shell fixture ``fixture`` (copied as ``name``), the text before the fix and the
    fix's one edit; after ``kv4lint fix`` the file checks clean, and so does its clean ``twin``."""
    path = tmp_path / name
    shutil.copy(SHELL / fixture, path)
    code, doc = check(path, tmp_path)
    assert code == 1 and doc["errors"] == []
    (f,) = doc["findings"]
    before = path.read_text()
    (edit,) = f["fix"]["edits"]
    assert main(["fix", *ARGS, str(path)]) == 0
    for clean in (path, SHELL / twin):
        code, doc = check(clean, tmp_path)
        assert (code, doc["findings"], doc["errors"]) == (0, [], [])
    return f, before, edit


def test_a_trainer_with_prefixed_sglang_options_is_judged_and_fixed(tmp_path: Path):
    f, before, edit = fixed_in_place("slime_grpo_qwen3_4b.sh", "run-qwen3-4B.sh", "decoy_slime_grpo_qwen3_4b_ok.sh",
                                     tmp_path)
    assert (f["line"], f["code"]) == (50, "KV401") and "--attention-backend triton" in f["message"]
    assert before[edit["start"]:edit["end"]] == "nvfp4"
    assert before[:edit["start"]].endswith("--sglang-kv-cache-dtype ")


@pytest.mark.parametrize("script, found", [
    # the trainer's own options are not SGLang's: Megatron's --attention-backend flash is no refused choice
    ("python3 train.py --attention-backend flash --sglang-kv-cache-dtype fp8_e4m3\n", 0),
    ("python3 train_async.py --sglang-kv-cache-dtype nvfp4 --sglang-attention-backend triton\n", 1),
    ("python3 train.py --kv-cache-dtype nvfp4 --attention-backend triton\n", 0),  # no --sglang- option: unknown
    ("python3 my_train.py --sglang-kv-cache-dtype nvfp4 --sglang-attention-backend triton\n", 0),
])
def test_prefixed_options_count_only_for_a_trainer_that_passes_them_on(script: str, found: int, tmp_path: Path):
    path = tmp_path / "run.sh"
    path.write_text(script)
    code, doc = check(path, tmp_path)
    assert (code, len(doc["findings"]), doc["errors"]) == (found, found, [])


def test_verl_engine_kwargs_overrides_are_server_args_and_fixed_in_place(tmp_path: Path):
    f, before, edit = fixed_in_place("verl_grpo_gsm8k_sglang.sh", "run_qwen2_5-7b_gsm8k_sglang.sh",
                                     "decoy_verl_grpo_gsm8k_sglang_ok.sh", tmp_path)
    assert f["code"] == "KV401" and f["message"].startswith("kv_cache_dtype='nvfp4' is refused with "
                                                            "attention_backend='triton'")
    assert before[:edit["end"]].endswith("+actor_rollout_ref.rollout.engine_kwargs.sglang.kv_cache_dtype=nvfp4")


VERL = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang "
        "{a}actor_rollout_ref.rollout.engine_kwargs.sglang.kv_cache_dtype=nvfp4 "
        "++actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=triton{rest}\n")


@pytest.mark.parametrize("script, found", [
    (VERL.format(a="", rest=""), 1),
    (VERL.format(a="+", rest=" trainer.nnodes=1"), 1),
    (VERL.format(a="", rest=' "$@"'), 0),  # a later override may change either value: unknown
    (VERL.format(a="", rest="").replace("engine_kwargs.sglang.", "engine_kwargs.vllm."), 0),
    (VERL.format(a="", rest="").replace("verl.trainer.main_ppo", "my_trainer"), 0),
])
def test_verl_overrides_count_only_under_the_sglang_engine_kwargs(script: str, found: int, tmp_path: Path):
    path = tmp_path / "run.sh"
    path.write_text(script)
    code, doc = check(path, tmp_path)
    assert (code, len(doc["findings"]), doc["errors"]) == (found, found, [])
