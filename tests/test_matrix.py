"""`kv4lint matrix` is computed by check: every cell equals check_argv on that launch (issue 16)."""

import json

import pytest

import kv4lint
from kv4lint.cli import main


def matrix_json(capsys, *args):
    assert main(["matrix", "--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("version", ["0.5.7", "0.5.14", "0.5.23"])
def test_every_cell_equals_check(version, capsys):
    doc = matrix_json(capsys, "--sglang-version", version)
    assert doc["gpus"] == ["sm90", "sm100", "sm120"]
    assert len(doc["cells"]) > 100
    for c in doc["cells"]:
        found = kv4lint.check_argv(c["argv"], sglang_version=version, gpu=c["gpu"], model_attention=c["attention"])
        assert c["codes"] == list(dict.fromkeys(f.code for f in found)), c
        assert c["verdict"] == ("yes" if not found else "no"), c


def test_nvfp4_flashinfer_mha_on_sm100_agrees_with_check(capsys):
    # SGLang's NVFP4 steps route it to a native backend: check finds nothing, so the matrix says yes.
    doc = matrix_json(capsys, "--sglang-version", "0.5.23", "--gpu", "b200")
    cell, = [c for c in doc["cells"] if (c["backend"], c["kv_cache_dtype"], c["attention"]) ==
             ("flashinfer", "nvfp4", "mha")]
    assert cell["verdict"] == "yes"
    assert kv4lint.check_argv(["--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "nvfp4",
                               "--attention-backend", "flashinfer"], gpu="b200") == []


def test_intel_xpu_mla_on_0_5_14_names_the_blocker_and_the_kv4_refusal(capsys):
    doc = matrix_json(capsys, "--sglang-version", "0.5.14", "--gpu", "sm100")
    cell, = [c for c in doc["cells"] if (c["backend"], c["attention"]) == ("intel_xpu", "mla")]
    assert cell["codes"] == ["KV407", "KV401"]


def test_text_table_shows_the_same_verdicts(capsys):
    doc = matrix_json(capsys, "--sglang-version", "0.5.23", "--gpu", "sm100")
    assert main(["matrix", "--sglang-version", "0.5.23", "--gpu", "sm100"]) == 0
    text = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split()[1:] for ln in text.splitlines()[3:] if ln and not ln.startswith(" ")}
    for c in doc["cells"]:
        col = ["nvfp4", "fp4_mx_block16"].index(c["kv_cache_dtype"]) * 2 + ["mha", "mla"].index(c["attention"])
        assert rows[c["backend"]][col] == ("yes" if not c["codes"] else "+".join(c["codes"])), c


def test_releases_without_a_kv4_check(capsys):
    assert main(["matrix", "--sglang-version", "0.5.6"]) == 0
    assert "has no KV4 check" in capsys.readouterr().out
