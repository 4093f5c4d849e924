"""A wrapped launch is found in every format the unwrapped one is (one ``unwrap`` for every reader)."""

from __future__ import annotations

import json
import shlex

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.pipeline.runner import lint_text

S23 = Settings(sglang_version="0.5.23")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", "fp4_e2m1",
          "--device", "cpu"]

WRAPPERS = {
    "none": [],
    "srun": ["srun", "-N1", "--gres=gpu:8"],
    "srun-t": ["srun", "-N", "1", "-t", "60"],
    "uv run": ["uv", "run"],
    "uv run --with": ["uv", "run", "--with", "sglang"],
    "sudo -E": ["sudo", "-E"],
    "numactl": ["numactl", "--cpunodebind=0", "--membind=0"],
    "numactl -N": ["numactl", "-N", "0", "-m", "0"],
    "docker run": ["docker", "run", "--rm", "--gpus", "all", "-v", "/models:/models", "myorg/app:1"],
    "podman run": ["podman", "run", "-e", "X=1", "myorg/app:1"],
    "env": ["env", "FOO=1"],
    "nohup": ["nohup"],
    "exec": ["exec"],
    "timeout": ["timeout", "-s", "KILL", "3600"],
    "taskset": ["taskset", "-c", "0-7"],
    "poetry run": ["poetry", "run"],
    "conda run": ["conda", "run", "-n", "sgl", "--no-capture-output"],
    "nice": ["nice", "-n", "5"],
    "tini": ["tini", "--"],
    "mpirun": ["mpirun", "-np", "1"],
    "nested": ["sudo", "-E", "env", "A=1", "numactl", "-N", "0", "timeout", "60"],
    # programs kv4lint does not know that pass their arguments on (issue 27)
    "image entrypoint": ["/opt/nvidia/nvidia_entrypoint.sh"],
    "exec \"$@\" script": ["./docker-entrypoint.sh"],
    "profiler": ["nsys", "profile", "-o", "/tmp/trace", "--trace", "cuda,nvtx"],
    "retry helper": ["with-retries", "--attempts", "3"],
}


def _shell(argv: list[str]) -> str:
    return shlex.join(argv)


def _nb(argv: list[str]) -> str:
    nb = new_notebook(cells=[new_code_cell("!" + _shell(argv))])
    return nbformat.writes(nb)


FORMATS = {
    "shell": ("run.sh", "shell", lambda a: _shell(a) + "\n"),
    "subprocess argv": ("run.py", "python", lambda a: f"import subprocess\nsubprocess.run({json.dumps(a)})\n"),
    "os.system": ("run.py", "python", lambda a: f"import os\nos.system({_shell(a)!r})\n"),
    "Dockerfile CMD": ("Dockerfile", "dockerfile", lambda a: f"FROM x\nCMD {json.dumps(a)}\n"),
    "Dockerfile RUN": ("Dockerfile", "dockerfile", lambda a: f"FROM x\nRUN {_shell(a)}\n"),
    "compose list": ("compose.yaml", "yaml",
                     lambda a: f"services:\n  s:\n    image: myorg/app:1\n    command: {json.dumps(a)}\n"),
    "compose string": ("compose.yaml", "yaml",
                       lambda a: f"services:\n  s:\n    image: myorg/app:1\n    command: {_shell(a)}\n"),
    "Makefile": ("Makefile", "makefile", lambda a: f"serve:\n\t{_shell(a)}\n"),
    "Markdown": ("README.md", "markdown", lambda a: f"# Serve\n\n```bash\n{_shell(a)}\n```\n"),
    "notebook": ("serve.ipynb", "notebook", _nb),
}


def findings(argv: list[str], fmt: str) -> list[tuple[str, str]]:
    path, language, build = FORMATS[fmt]
    text = build(argv)
    rep = lint_text(path, text, S23, language=language)
    assert rep.errors == []
    if language == "notebook":
        return [(f.code, f.message.split(":")[0]) for f in rep.findings]
    idx = LineIndex(text)
    return [(f.code, text[idx.offset(f.start.line, f.start.column):][:8]) for f in rep.findings]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_wrapped_launch_is_found_like_the_bare_one(wrapper: str, fmt: str):
    bare = findings(LAUNCH, fmt)
    assert [c for c, _ in bare] == ["KV406"]
    assert findings(WRAPPERS[wrapper] + LAUNCH, fmt) == bare


@pytest.mark.parametrize("fmt", FORMATS)
def test_bash_c_runs_its_string_in_every_format(fmt: str):
    assert findings(["bash", "-c", shlex.join(LAUNCH)], fmt) == findings(LAUNCH, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("argv", [["srun", "--pid", "4"], ["docker", "run", "myorg/app:1"], ["uv", "pip", "list"],
                                  ["sudo", "-E", "ls"], ["taskset", "-p", "3"]])
def test_a_wrapper_running_something_else_is_no_launch(argv: list[str], fmt: str):
    assert findings(argv, fmt) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("program", [["/opt/nvidia/nvidia_entrypoint.sh"], ["nsys", "profile", "-o", "out"]])
def test_an_unknown_program_passing_bash_lc_on_runs_its_string(program: list[str], fmt: str):
    assert findings(program + ["bash", "-lc", "cd /x && " + shlex.join(LAUNCH)], fmt) == findings(LAUNCH, fmt)


RECORDERS = {
    "echo": ["echo"],
    "printf": ["printf", "%s "],
    "logger": ["logger", "-t", "sglang"],
    "git commit": ["git", "commit", "-m", "serve"],
    "record script": ["./record_launch.sh", "--tag", "nightly"],
    "log helper": ["log_cmd"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("recorder", RECORDERS)
def test_a_program_that_records_its_arguments_is_no_launch(recorder: str, fmt: str):
    assert findings(RECORDERS[recorder] + LAUNCH, fmt) == []
    assert findings(RECORDERS[recorder] + ["bash", "-c", shlex.join(LAUNCH)], fmt) == []


@pytest.mark.parametrize("fmt", ["shell", "Makefile", "Markdown", "Dockerfile RUN"])
def test_a_no_op_builtin_is_no_launch(fmt: str):
    assert findings([":"] + LAUNCH, fmt) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_recorders_own_kv_cache_option_is_no_launch(fmt: str):
    assert findings(["./record_run.sh", "--kv-cache-dtype", "fp4_e2m1", "--device", "cpu"], fmt) == []


ROCM = "lmsysorg/sglang:v0.5.23-rocm700-mi30x"


@pytest.mark.parametrize("fmt", ["shell", "subprocess argv", "os.system", "compose list", "Makefile"])
@pytest.mark.parametrize("argv, platforms", [
    (["docker", "run", "--gpus", "all", ROCM], ["rocm"]),  # the image says ROCm: --gpus does not make it CUDA
    (["docker", "run", "--gpus", "all", "myorg/app:1"], ["cuda"]),
    (["docker", "run", "--device", "/dev/kfd", "--gpus", "all", "myorg/app:1"], ["rocm"]),
    (["docker", "run", "-e", "HIP_VISIBLE_DEVICES=0", "--runtime", "nvidia", "myorg/app:1"], ["rocm"]),
    (["srun", "--export=ALL,HIP_VISIBLE_DEVICES=0", "-N1"], ["rocm"]),
])
def test_wrapper_hints_are_the_same_in_every_format(fmt: str, argv: list[str], platforms: list[str]):
    from kv4lint.frontends import scan

    path, language, build = FORMATS[fmt]
    res = scan(path, build(argv + LAUNCH), language)
    assert len(res.launches) == 1
    assert sorted({h.value for h in res.launches[0].hints if h.kind == "platform"}) == platforms
