"""Linear cost in the structured formats (issue 34): doubling a file at most about doubles its cost.

Each shape is a realistic way a file of its format grows (more services in a manifest, more rows in a JSON
Lines file, more fences in a README ...) with launches spread through it, run through the lint route every
command shares (:func:`linear_cost.lint`) at ``n`` and ``2 * n`` (:func:`linear_cost.assert_linear`: CPU
time and traced memory, ratio, never seconds).  The shell and Python shapes are in another file.
"""

from __future__ import annotations

import json

import pytest

from linear_cost import assert_linear, lint

LAUNCH = "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp4_e2m1"
ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
        "--kv-cache-dtype", "fp4_e2m1"]


def yaml_manifest(n: int) -> str:
    """A compose file of ``n`` services, each with its environment, an image and a launch."""
    out = ["services:"]
    for i in range(n):
        out += [f"  s{i}:", "    image: lmsysorg/sglang:v0.5.23", "    environment:", f"      PORT: '{i}'",
                "      HF_HOME: /cache", f"    command: {LAUNCH} --port {i}"]
    return "\n".join(out) + "\n"


def yaml_anchors(n: int) -> str:
    """One anchored base service and ``n`` services that alias its command and environment."""
    out = ["x-base: &base", "  image: lmsysorg/sglang:v0.5.23", f"  command: &cmd {json.dumps(ARGV)}",
           "  environment: &env {HF_HOME: /cache}", "services:"]
    for i in range(n):
        out += [f"  s{i}:", "    command: *cmd", "    environment: *env", f"    labels: {{n: '{i}'}}"]
    return "\n".join(out) + "\n"


def yaml_merge_chain(n: int) -> str:
    """A chain of ``n`` mappings, each merging the one before twice with ``<<`` (the shape that was
    exponential) and setting its own value of one key, and services merging the last.

    Each link sets the same key, so each mapping means two pairs whatever ``n``: a chain whose every link adds
    a key of its own means ``i`` pairs in its ``i``-th mapping, quadratic in the file for any YAML reader
    (PyYAML builds them all); kv4lint expands those within ``MAX_YAML_MERGED`` pairs
    (``tests/hostile.py``'s ``merge_chains``)."""
    out = ["x-0: &x0 {image: lmsysorg/sglang:v0.5.23}"]
    out += [f"x-{i}: &x{i}\n  <<: [*x{i - 1}, *x{i - 1}]\n  k: v{i}" for i in range(1, n)]
    out += ["services:"] + [f"  s{i}:\n    <<: *x{n - 1}\n    command: {LAUNCH}" for i in range(4)]
    return "\n".join(out) + "\n"


def json_tasks(n: int) -> str:
    """A VS Code ``tasks.json``-like file: ``n`` tasks, a launch in every fourth."""
    tasks = [{"label": f"t{i}", "shell": f"{LAUNCH} --port {i}" if i % 4 == 0 else f"echo step {i}",
              "env": {"PORT": str(i)}} for i in range(n)]
    return json.dumps({"version": "2.0.0", "tasks": tasks}, indent=2) + "\n"


def json_lines(n: int) -> str:
    """``n`` short rows of a JSON Lines file, a launch in every 50th (each row built a line index over the
    whole file: quadratic)."""
    return "".join(json.dumps({"id": i, "shell": f"{LAUNCH} --port {i}"} if i % 50 == 0 else {"id": i}) + "\n"
                   for i in range(n))


def markdown_fences(n: int) -> str:
    """A README of ``n`` sections, each with prose and a bash fence holding a launch."""
    return "".join(f"## Serving {i}\n\nStart the server:\n\n```bash\n{LAUNCH} \\\n  --port {i}\n```\n\n"
                   for i in range(n))


def notebook(n: int) -> str:
    """A notebook of ``n`` code cells, each a ``!`` launch and some Python."""
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": [f"port = {i}\n", f"!{LAUNCH} --port {i}\n"]} for i in range(n)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}, indent=1) + "\n"


def dockerfile(n: int) -> str:
    """A Dockerfile of ``n`` stages, each with ENV, ARG, a RUN and a CMD launch."""
    out = []
    for i in range(n):
        out += [f"FROM lmsysorg/sglang:v0.5.23 AS s{i}", f"ARG PORT{i}={i}", f"ENV HF_HOME=/cache{i}",
                f"RUN pip install x{i} && echo done", f"CMD {json.dumps(ARGV + ['--port', str(i)])}"]
    return "\n".join(out) + "\n"


def dockerfile_env(n: int) -> str:
    """One stage of ``n`` ENV lines, then a launch: each ENV used to rebuild the stage's values so far (2.6 s at
    8,000 lines)."""
    return ("FROM lmsysorg/sglang:v0.5.23\n" + "".join(f"ENV SETTING_{i}=value{i}\n" for i in range(n))
            + f"CMD {json.dumps(ARGV)}\n")


def dockerfile_env_runs(n: int) -> str:
    """One stage of ``n`` ENV and RUN pairs, each RUN reading its ENV: each RUN used to look through every ENV
    for what it reads (6.2 s at 8,000 pairs)."""
    pairs = "".join(f"ENV SETTING_{i}=value{i}\nRUN echo $SETTING_{i}\n" for i in range(n))
    return f"FROM lmsysorg/sglang:v0.5.23\n{pairs}CMD {json.dumps(ARGV)}\n"


def dockerfile_stages_on_one_base(n: int) -> str:
    """A base stage of ``n`` ENV and COPY lines and ``n`` stages built on it, then a launch: each stage used to copy
    the base's ENV and COPY lines (1.3 s at 4,000, ``ScanResult.copies`` 16 million entries long)."""
    return ("FROM lmsysorg/sglang:v0.5.23 AS base\n"
            + "".join(f"ENV SETTING_{i}=value{i}\nCOPY f{i} /f{i}\n" for i in range(n))
            + "".join(f"FROM base AS s{i}\n" for i in range(n)) + f"CMD {json.dumps(ARGV)}\n")


def github_workflow(n: int) -> str:
    """A GitHub workflow job of ``n`` settings (``env:``) and ``n`` steps, the last a launch: each step's script
    used to be given every setting, read or not (27 s at 2,000)."""
    return ("on: push\njobs:\n  serve:\n    runs-on: [self-hosted, h100]\n    env:\n"
            + "".join(f"      SETTING_{i}: value{i}\n" for i in range(n)) + "    steps:\n"
            + "".join(f"      - run: echo step {i}\n" for i in range(n))
            + f"      - run: {LAUNCH} --served-model-name $SETTING_1\n")


def makefile(n: int) -> str:
    """A Makefile of ``n`` variables and ``n`` targets, each recipe a launch reading them."""
    out = [f"PORT{i} = {i}" for i in range(n)]
    for i in range(n):
        out += [f"serve{i}:", f"\t{LAUNCH} --port $(PORT{i})"]
    return "\n".join(out) + "\n"


SHAPES = [
    # (make, language, path, n): n large enough that the work dominates, small enough for the fast loop
    (yaml_manifest, "yaml", "compose.yaml", 45),
    (yaml_anchors, "yaml", "compose.yaml", 65),
    (yaml_merge_chain, "yaml", "compose.yaml", 130),
    (json_tasks, "json", "tasks.json", 250),
    (json_lines, "json", "runs.jsonl", 2000),
    (markdown_fences, "markdown", "README.md", 100),
    (notebook, "notebook", "serve.ipynb", 90),
    (dockerfile, "dockerfile", "Dockerfile", 100),
    (dockerfile_env, "dockerfile", "Dockerfile", 2000),
    (dockerfile_env_runs, "dockerfile", "Dockerfile", 1500),
    (dockerfile_stages_on_one_base, "dockerfile", "Dockerfile", 2000),
    (makefile, "makefile", "Makefile", 90),
    (github_workflow, "yaml", ".github/workflows/serve.yml", 300),
]


@pytest.mark.parametrize("make, language, path, n", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_cost_is_linear(make, language, path, n):
    assert_linear(make, lint(language, path), n, what=make.__name__)
