"""Value sets through the CLI: every value a script may give a launch is judged, with the condition that selects it.

Each form: the finding is on the launch line and names the value and its condition; ``kv4lint fix`` rewrites the
value where it is assigned and the file then checks clean; a value shared with other code gets no safe fix; the
variant whose values are all accepted stays silent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kv4lint.cli import main

ARGS = ["--isolated", "--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]
LAUNCH = ("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
          "--kv-cache-dtype {v} --attention-backend triton")


def check(path: Path, tmp_path: Path) -> tuple[int, list[dict]]:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", *ARGS, str(path), "--output-file", str(out)])
    doc = json.loads(out.read_text())
    assert doc["errors"] == []
    return code, doc["findings"]


SHELL = {
    "if": ('KV=fp8_e4m3\nif [ "${USE_FP4_KV:-0}" = 1 ]; then\n  KV=nvfp4\nfi\n' + LAUNCH.format(v='"$KV"') + "\n",
           "when USE_FP4_KV=1: --kv-cache-dtype nvfp4", "  KV=fp8_e4m3\n"),
    "case": ('case "$MODE" in\n  fp4) KV=nvfp4;;\n  *) KV=fp8_e4m3;;\nesac\n' + LAUNCH.format(v="$KV") + "\n",
             "when MODE=fp4: --kv-cache-dtype nvfp4", "  fp4) KV=fp8_e4m3;;\n"),
    "and-or": ('[ "$FP4" = 1 ] && KV=nvfp4 || KV=fp8_e4m3\n' + LAUNCH.format(v="$KV") + "\n",
               "when FP4=1: --kv-cache-dtype nvfp4", '[ "$FP4" = 1 ] && KV=fp8_e4m3 || KV=fp8_e4m3\n'),
    "loop": ("for kv in fp8_e4m3 nvfp4; do\n  " + LAUNCH.format(v="$kv") + "\ndone\n",
             "--kv-cache-dtype nvfp4", "for kv in fp8_e4m3 fp8_e4m3; do\n"),
    "elif": ('if [[ $GPU == h100 ]]; then KV=fp8_e4m3\nelif [ -n "$FP4" ]; then KV=nvfp4\nelse KV=auto; fi\n'
             + LAUNCH.format(v="$KV") + "\n",
             "when GPU!=h100 and FP4 is not empty: --kv-cache-dtype nvfp4", 'elif [ -n "$FP4" ]; then KV=fp8_e4m3\n'),
}


@pytest.mark.parametrize("form", sorted(SHELL))
def test_shell_value_set_found_on_the_launch_line_and_fixed(form: str, tmp_path: Path):
    text, message, fixed_line = SHELL[form]
    path = tmp_path / "serve.sh"
    path.write_text(text)
    launch_line = next(i for i, line in enumerate(text.splitlines(), 1) if "sglang.launch_server" in line)
    code, found = check(path, tmp_path)
    assert code == 1
    assert [(f["line"], f["code"]) for f in found] == [(launch_line, "KV401")]
    assert found[0]["message"].startswith(message)
    assert found[0]["fix"]["applicability"] == "safe"
    assert main(["fix", *ARGS, str(path)]) == 0
    assert fixed_line in path.read_text()
    assert check(path, tmp_path) == (0, [])


@pytest.mark.parametrize("form", sorted(SHELL))
def test_shell_value_set_whose_values_are_accepted_is_silent(form: str, tmp_path: Path):
    text = SHELL[form][0].replace("nvfp4", "fp8_e5m2")
    path = tmp_path / "serve.sh"
    path.write_text(text)
    assert check(path, tmp_path) == (0, [])


def test_shell_value_shared_with_another_use_has_no_safe_fix(tmp_path: Path):
    path = tmp_path / "serve.sh"
    path.write_text('[ "$FP4" = 1 ] && KV=nvfp4 || KV=fp8_e4m3\n' + LAUNCH.format(v="$KV") + ' > "log-$KV.txt"\n')
    code, found = check(path, tmp_path)
    assert code == 1 and [f["line"] for f in found] == [2]
    assert found[0]["message"].startswith("when FP4=1: --kv-cache-dtype nvfp4")
    assert found[0]["fix"] is None or found[0]["fix"]["applicability"] == "unsafe"
    before = path.read_text()
    main(["fix", *ARGS, str(path)])
    assert path.read_text() == before


def test_shell_unknown_value_stays_unknown(tmp_path: Path):
    path = tmp_path / "serve.sh"
    path.write_text('KV=$1\nif [ -n "$X" ]; then KV=$KV_FROM_ENV; fi\n' + LAUNCH.format(v="$KV") + "\n")
    assert check(path, tmp_path) == (0, [])


ENGINE = 'import sglang as sgl\n'
PY = {
    "ifexp": ('import sys\nimport sglang as sgl\nkv = "nvfp4" if "--fp4" in sys.argv else "fp8_e4m3"\n'
              'sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n',
              "when \"--fp4\" in sys.argv: kv_cache_dtype='nvfp4'", 'kv = "fp8_e4m3" if'),
    "if-else": ('import os\nimport sglang as sgl\nif os.environ.get("FP4"):\n    kv = "nvfp4"\nelse:\n'
                '    kv = "fp8_e4m3"\nsgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n',
                "when os.environ.get(\"FP4\"): kv_cache_dtype='nvfp4'", '    kv = "fp8_e4m3"\nelse'),
    "elif": ('import sglang as sgl\ndef serve(mode):\n    kv = "auto"\n    if mode == "fp8":\n        kv = "fp8_e4m3"\n'
             '    elif mode == "fp4":\n        kv = "nvfp4"\n'
             '    return sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n',
             "when mode == \"fp4\": kv_cache_dtype='nvfp4'", '        kv = "fp8_e4m3"\n    return'),
    "presets": ('import sys\nimport sglang as sgl\nP = {"fast": {"kv_cache_dtype": "nvfp4"}, "ok": {"kv_cache_dtype": '
                '"auto"}}\nsgl.Engine(model_path="m", attention_backend="triton", **P[sys.argv[1]])\n',
                "when sys.argv[1] == 'fast': kv_cache_dtype='nvfp4'", '"fast": {"kv_cache_dtype": "fp8_e4m3"}'),
    "loop": ('import sglang as sgl\nfor kv in ["fp8_e4m3", "nvfp4"]:\n'
             '    sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n',
             "kv_cache_dtype='nvfp4'", 'for kv in ["fp8_e4m3", "fp8_e4m3"]:'),
    "argv-list": ('import subprocess, sys\nkv = "nvfp4" if sys.argv[1:] == ["fp4"] else "auto"\n'
                  'subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m",\n'
                  '                "--kv-cache-dtype", kv, "--attention-backend", "triton"])\n',
                  'when sys.argv[1:] == ["fp4"]: --kv-cache-dtype nvfp4', 'kv = "fp8_e4m3" if'),
}


@pytest.mark.parametrize("form", sorted(PY))
def test_python_value_set_found_on_the_launch_line_and_fixed(form: str, tmp_path: Path):
    text, message, fixed = PY[form]
    path = tmp_path / "serve.py"
    path.write_text(text)
    lines = text.splitlines()
    launch_line = next(i for i, line in enumerate(lines, 1) if "Engine(" in line or "subprocess.run" in line)
    code, found = check(path, tmp_path)
    assert code == 1
    assert [(f["line"], f["code"]) for f in found] in ([(launch_line, "KV401")], [(launch_line + 1, "KV401")])
    assert found[0]["message"].startswith(message)
    assert found[0]["fix"]["applicability"] == "safe"
    assert main(["fix", *ARGS, str(path)]) == 0
    assert fixed in path.read_text()
    assert check(path, tmp_path) == (0, [])


@pytest.mark.parametrize("form", sorted(PY))
def test_python_value_set_whose_values_are_accepted_is_silent(form: str, tmp_path: Path):
    path = tmp_path / "serve.py"
    path.write_text(PY[form][0].replace("nvfp4", "fp8_e5m2"))
    assert check(path, tmp_path) == (0, [])


def test_python_value_shared_or_unknown(tmp_path: Path):
    path = tmp_path / "serve.py"
    path.write_text('import sys\nimport sglang as sgl\nkv = "nvfp4" if sys.argv[1] else "auto"\n'
                    'settings = {"dtype": kv}\n'
                    'sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n')
    code, found = check(path, tmp_path)
    assert code == 1 and [f["line"] for f in found] == [5]
    assert found[0]["fix"] is None or found[0]["fix"]["applicability"] == "unsafe"
    path.write_text('import sys\nimport sglang as sgl\nkv = sys.argv[1] if sys.argv[2:] else "auto"\n'
                    'sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton")\n')
    assert check(path, tmp_path) == (0, [])


def test_value_sets_are_bounded(tmp_path: Path):
    """Thirty-one independent choices on one launch: too many combinations to read them all (2 ** 31), so each
    choice is read on its own with the others unknown: the nvfp4 of one branch is still judged, with the condition
    of its own path, and its fix is safe."""
    lines = [f'if [ "$C{i}" = 1 ]; then V{i}=a; else V{i}=b; fi' for i in range(30)]
    lines.append('KV=fp8_e4m3; [ -n "$FP4" ] && KV=nvfp4')
    lines.append(LAUNCH.format(v="$KV") + " " + " ".join(f"--tp $V{i}" for i in range(30)))
    path = tmp_path / "serve.sh"
    path.write_text("\n".join(lines) + "\n")
    code, found = check(path, tmp_path)
    assert code == 1
    assert [(f["line"], f["code"]) for f in found] == [(32, "KV401")]
    assert found[0]["message"].startswith("when FP4 is not empty: --kv-cache-dtype nvfp4 is refused")
    assert found[0]["fix"]["applicability"] == "safe"


def test_the_same_test_in_two_places_is_taken_the_same_way(tmp_path: Path):
    """KV and the backend are chosen by two ifs on the same test: no run mixes the nvfp4 of one with the
    triton of the other's else (an MHA model: trtllm_mha is refused for MLA)."""
    path = tmp_path / "serve.sh"
    path.write_text('if grep -q B200 /etc/gpu; then KV=nvfp4; else KV=fp8_e4m3; fi\n'
                    'if grep -q B200 /etc/gpu; then A=trtllm_mha; else A=triton; fi\n'
                    "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B --kv-cache-dtype $KV "
                    "--attention-backend $A\n")
    assert check(path, tmp_path) == (0, [])
    py = tmp_path / "serve.py"
    py.write_text('import sys\nimport sglang as sgl\nkv = "nvfp4" if sys.argv[1:] else "fp8_e4m3"\n'
                  'backend = "trtllm_mha" if sys.argv[1:] else "triton"\n'
                  'sgl.Engine(model_path="meta-llama/Llama-3.1-8B", kv_cache_dtype=kv, attention_backend=backend)\n')
    assert check(py, tmp_path) == (0, [])


def test_a_branch_that_exits_gives_no_value_to_the_launch(tmp_path: Path):
    path = tmp_path / "serve.sh"
    path.write_text('case "$MODE" in\n  fp8) KV=fp8_e4m3 ;;\n'
                    '  fp4) KV=nvfp4; echo "FP4 needs flashinfer" >&2; exit 1 ;;\n'
                    'esac\nif [ -n "$OLD" ]; then\n  KV=nvfp4\n  return 1\nfi\n' + LAUNCH.format(v="$KV") + "\n")
    assert check(path, tmp_path) == (0, [])


# ---------------------------------------------------------------------------
# Past the old caps (issue 34, item 1): a bound is never a pass

KNOBS = [("BIG", "--tp 8"), ("PUBLIC", "--host 0.0.0.0"), ("PROD", "--log-level warning"),
         ("BUSY", "--max-running-requests 256"), ("MEM", "--mem-fraction-static 0.9")]
SHELL_KNOBS = "".join(f'if [ "${name}" = 1 ]; then ARGS="$ARGS {opt}"; fi\n' for name, opt in KNOBS)


@pytest.mark.parametrize("how", ["in ARGS", "in its own variable", "in an array"])
def test_six_knobs_judge_the_one_that_sets_fp4_and_name_only_it(how: str, tmp_path: Path):
    """Six independent knobs are 64 combinations (more than a command is read whole): the nvfp4 of one is still
    judged, its headline names only the knob that decides it, and its fix rewrites it where it is written."""
    base = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --attention-backend triton"
    if how == "in ARGS":
        text = ('ARGS=""\n' + SHELL_KNOBS + 'if [ "$FP4" = 1 ]; then ARGS="$ARGS --kv-cache-dtype nvfp4"; fi\n'
                + f"{base} $ARGS\n")
    elif how == "in its own variable":
        text = ('ARGS=""\nKV=fp8_e4m3\n' + SHELL_KNOBS + 'if [ "$FP4" = 1 ]; then KV=nvfp4; fi\n'
                + f'{base} --kv-cache-dtype "$KV" $ARGS\n')
    else:
        text = ("ARGS=()\n" + "".join(f'if [ "${name}" = 1 ]; then ARGS+=({opt}); fi\n' for name, opt in KNOBS)
                + 'if [ "$FP4" = 1 ]; then ARGS+=(--kv-cache-dtype nvfp4); fi\n' + f'{base} "${{ARGS[@]}}"\n')
    path = tmp_path / "serve.sh"
    path.write_text(text)
    code, found = check(path, tmp_path)
    assert code == 1
    assert [(f["line"], f["code"]) for f in found] == [(len(text.splitlines()), "KV401")]
    assert found[0]["message"].startswith("when FP4=1: --kv-cache-dtype nvfp4 is refused with --attention-backend "
                                          "triton")
    assert found[0]["fix"]["applicability"] == "safe"
    assert main(["fix", *ARGS, str(path)]) == 0
    assert "nvfp4" not in path.read_text() and path.read_text().count("fp8_e4m3") == 1 + text.count("fp8_e4m3")


def test_a_combination_of_two_knobs_is_judged(tmp_path: Path):
    """nvfp4 from one knob and the backend that refuses it from another: refused only when both are on (the
    second append used to replace the array a first knob had built)."""
    path = tmp_path / "serve.sh"
    path.write_text("ARGS=(--model-path meta-llama/Llama-3.1-8B-Instruct)\n"
                    'if [ "$A" = 1 ]; then ARGS+=(--kv-cache-dtype nvfp4); fi\n'
                    'if [ "$B" = 1 ]; then ARGS+=(--attention-backend triton); fi\n'
                    'python -m sglang.launch_server "${ARGS[@]}"\n')
    code, found = check(path, tmp_path)
    assert [f["message"].split(":")[0] for f in found if f["severity"] == "error"] == ["when A=1 and B=1"]


def test_seventeen_presets_and_seventeen_loop_items_are_each_judged(tmp_path: Path):
    presets = "".join(f"  p{i}) KV=fp8_e4m3; TP={i % 8 + 1} ;;\n" for i in range(16))
    path = tmp_path / "serve.sh"
    path.write_text(f'case "$PRESET" in\n{presets}  fp4) KV=nvfp4; TP=1 ;;\nesac\n'
                    + LAUNCH.format(v="$KV") + " --tp $TP\n"
                    + "for kv in " + " ".join(["fp8_e4m3"] * 16 + ["nvfp4"]) + "; do\n  " + LAUNCH.format(v="$kv")
                    + "\ndone\n")
    code, found = check(path, tmp_path)
    assert [(f["line"], f["message"].split(" is refused")[0]) for f in found] == [
        (20, "when PRESET=fp4: --kv-cache-dtype nvfp4"), (22, "--kv-cache-dtype nvfp4")]


PY_KNOBS = "".join(f'if os.environ.get("{name}") == "1":\n    opt{k} = "{opt.split()[1]}"\nelse:\n    opt{k} = "x{k}"\n'
                   for k, (name, opt) in enumerate(KNOBS))


def test_python_past_its_caps(tmp_path: Path):
    """Six knobs (64 readings, more than a launch is read whole) and a loop of 17 items: judged; a loop over more
    items than the bound is a file error naming it, never a pass."""
    path = tmp_path / "serve.py"
    path.write_text("import os\nimport sglang as sgl\nkv = 'fp8_e4m3'\n" + PY_KNOBS
                    + 'if os.environ.get("FP4") == "1":\n    kv = "nvfp4"\n'
                    'sgl.Engine(model_path="m", kv_cache_dtype=kv, attention_backend="triton", '
                    + ", ".join(f"x{k}=opt{k}" for k in range(len(KNOBS))) + ")\n"
                    "for kv2 in [" + ", ".join(['"fp8_e4m3"'] * 16 + ['"nvfp4"']) + "]:\n"
                    '    sgl.Engine(model_path="m", kv_cache_dtype=kv2, attention_backend="triton")\n')
    code, found = check(path, tmp_path)
    assert [(f["line"], f["message"].split(" is refused")[0]) for f in found] == [
        (26, "when os.environ.get(\"FP4\") == \"1\": kv_cache_dtype='nvfp4'"), (28, "kv_cache_dtype='nvfp4'")]
    from kv4lint.frontends.python.evaluate import MAX_LOOP_ITEMS

    path.write_text("import sglang as sgl\nfor kv in [" + ", ".join(['"fp8_e4m3"'] * MAX_LOOP_ITEMS + ['"nvfp4"'])
                    + "]:\n    sgl.Engine(model_path=\"m\", kv_cache_dtype=kv, attention_backend=\"triton\")\n")
    out = tmp_path / "out.json"
    assert main(["check", "--format", "json", *ARGS, str(path), "--output-file", str(out)]) == 1
    assert [e["message"] for e in json.loads(out.read_text())["errors"]] == [
        f"a value of this launch is a loop variable over more than {MAX_LOOP_ITEMS} items (the limit kv4lint "
        "reads): not resolved"]


def test_the_headline_names_only_the_knob_that_decides(tmp_path: Path):
    """Three knobs and FP4 (16 readings, all read): the finding holds on the 8 with FP4=1 whatever the others; its
    headline said "when FP4=1 and MEM=1 and BUSY!=1 and..." where only FP4=1 decides."""
    path = tmp_path / "serve.sh"
    path.write_text('ARGS=""\n' + "".join(SHELL_KNOBS.splitlines(keepends=True)[2:])
                    + 'if [ "$FP4" = 1 ]; then ARGS="$ARGS --kv-cache-dtype nvfp4"; fi\n'
                    "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                    "--attention-backend triton $ARGS\n")
    code, found = check(path, tmp_path)
    assert [f["message"].split(": --")[0] for f in found] == ["when FP4=1"]
    assert "The launch runs when" not in (found[0]["detail"] or "")


def test_past_the_readings_of_one_launch_is_a_file_error(tmp_path: Path):
    """More paths than a launch is read for, one choice at a time (MAX_CANDIDATES): a file error naming the bound,
    never a pass (shell: a case of 1,100 presets; Python: a dict of 1,100 presets picked by a name)."""
    from kv4lint.frontends.python.paths import MAX_CANDIDATES as PY_MAX
    from kv4lint.frontends.shell.choices import MAX_CANDIDATES

    n = max(MAX_CANDIDATES, PY_MAX) + 76
    arms = "".join(f"  p{i}) KV=fp8_e4m3 ;;\n" for i in range(n))
    path = tmp_path / "serve.sh"
    path.write_text(f'case "$PRESET" in\n{arms}  fp4) KV=nvfp4 ;;\nesac\n' + LAUNCH.format(v="$KV") + "\n")
    out = tmp_path / "out.json"
    assert main(["check", "--format", "json", *ARGS, str(path), "--output-file", str(out)]) == 1
    assert [e["message"] for e in json.loads(out.read_text())["errors"]] == [
        f"a command whose values take more than {MAX_CANDIDATES} readings, one choice at a time (the limit kv4lint "
        f"reads) at line {n + 4}: the other values are not judged"]
    path = tmp_path / "serve.py"
    presets = ", ".join(f'"p{i}": {{"kv_cache_dtype": "fp8_e4m3"}}' for i in range(n))
    path.write_text(f'import sys\nimport sglang as sgl\nP = {{{presets}, "fp4": {{"kv_cache_dtype": "nvfp4"}}}}\n'
                    'sgl.Engine(model_path="m", attention_backend="triton", **P[sys.argv[1]])\n')
    assert main(["check", "--format", "json", *ARGS, str(path), "--output-file", str(out)]) == 1
    assert [e["message"] for e in json.loads(out.read_text())["errors"]] == [
        f"a value of this launch depends on more than {PY_MAX} paths of the code (the limit kv4lint reads): not "
        "resolved"]
