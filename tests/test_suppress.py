"""kv4lint check --add-suppressions (kv4lint.fixes.add_suppressions)."""

from __future__ import annotations

import os
import re
import stat

import pytest

import fakefront
from kv4lint.base.model import Finding, Position, Severity, Span
from kv4lint.base.source import LineIndex
from kv4lint.cli import main
from kv4lint.fixes.add_suppressions import add_suppressions, suppress_text


def at(text: str, needle: str, code: str = "KV401", path: str = "x", nth: int = 0) -> Finding:
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    pos = LineIndex(text).position(i)
    return Finding(code, Severity.ERROR, "m", path, Span(i, i + len(needle)), pos, pos)


# ---------------------------------------------------------------------------
# Python: # noqa at the end of the line


def test_python_noqa_appended():
    src = "from sglang import ServerArgs\nargs = ServerArgs(kv_cache_dtype='nvfp4')\n"
    new, n, _ = suppress_text(src, [at(src, "'nvfp4'", "KV404")], "python")
    assert n == 1
    assert new == "from sglang import ServerArgs\nargs = ServerArgs(kv_cache_dtype='nvfp4')  # noqa: KV404\n"


def test_python_codes_on_one_line_merged_and_sorted():
    src = "ServerArgs(kv_cache_dtype='nvfp4', attention_backend='fa3')\r\n"
    fs = [at(src, "'fa3'", "KV406"), at(src, "'nvfp4'", "KV401"), at(src, "'nvfp4'", "KV401")]
    new, n, _ = suppress_text(src, fs, "python")
    assert (new, n) == ("ServerArgs(kv_cache_dtype='nvfp4', attention_backend='fa3')  # noqa: KV401,KV406\r\n", 1)


def test_python_existing_noqa_extended_and_bare_noqa_kept():
    src = "a = ServerArgs(kv_cache_dtype='nvfp4')  # noqa: E501\nb = Engine(kv_cache_dtype='nvfp4')  # noqa\n"
    new, n, _ = suppress_text(src, [at(src, "'nvfp4'"), at(src, "'nvfp4'", nth=1)], "python")
    assert n == 1
    assert new == ("a = ServerArgs(kv_cache_dtype='nvfp4')  # noqa: E501,KV401\n"
                   "b = Engine(kv_cache_dtype='nvfp4')  # noqa\n")


def test_python_idempotent():
    src = "x = ServerArgs(kv_cache_dtype='nvfp4')\n"
    f = at(src, "'nvfp4'")
    once, _, _ = suppress_text(src, [f], "python")
    twice, n, _ = suppress_text(once, [at(once, "'nvfp4'")], "python")
    assert (twice, n) == (once, 0)


def test_python_inside_multiline_string_goes_after_the_string():
    src = ('launch_server_cmd("""\n'
           'python -m sglang.launch_server \\\\\n'
           '  --kv-cache-dtype nvfp4\n'
           '""", port=1)\n')
    new, n, _ = suppress_text(src, [at(src, "nvfp4")], "python")
    assert n == 1
    assert new == src.replace('""", port=1)\n', '""", port=1)  # noqa: KV401\n')


def test_python_backslash_continuation_goes_to_the_last_line():
    src = "args = ServerArgs(kv_cache_dtype='nvfp4') if x \\\n    else None\nnext_line = 1\n"
    new, _, _ = suppress_text(src, [at(src, "'nvfp4'")], "python")
    assert new == "args = ServerArgs(kv_cache_dtype='nvfp4') if x \\\n    else None  # noqa: KV401\nnext_line = 1\n"


def test_python_line_without_final_newline():
    src = "x = ServerArgs(kv_cache_dtype='nvfp4')"
    new, _, _ = suppress_text(src, [at(src, "'nvfp4'")], "python")
    assert new == src + "  # noqa: KV401"


# ---------------------------------------------------------------------------
# Shell and friends: a comment line above the command's first line


def test_shell_comment_line_above_first_line_of_continued_command():
    src = ("#!/bin/bash\n"
           "if true; then\n"
           "    srun --nodes 1 \\\n"
           "      python -m sglang.launch_server \\\n"
           "        --kv-cache-dtype nvfp4 \\\n"
           "        --attention-backend fa3\n"
           "fi\n")
    fs = [at(src, "nvfp4", "KV404"), at(src, "fa3", "KV401")]
    new, n, _ = suppress_text(src, fs, "shell")
    assert n == 1
    assert new == src.replace("    srun", "    # kv4lint: disable=KV401,KV404\n    srun")


def test_shell_existing_directive_extended_and_crlf_kept():
    src = "# start the server\r\n# kv4lint: disable=KV404\r\npython -m sglang.launch_server --kv-cache-dtype nvfp4\r\n"
    new, n, _ = suppress_text(src, [at(src, "nvfp4", "KV401"), at(src, "nvfp4", "KV404")], "shell")
    assert n == 1
    assert new == src.replace("disable=KV404", "disable=KV404,KV401")


def test_shell_directive_without_codes_covers_all():
    src = "# kv4lint: disable\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    assert suppress_text(src, [at(src, "nvfp4")], "shell") == (src, 0, [])


def test_shell_new_line_uses_crlf_of_the_file():
    src = "a\r\n  python -m sglang.launch_server --kv-cache-dtype nvfp4"  # last line has no ending
    new, _, _ = suppress_text(src, [at(src, "nvfp4")], "shell")
    assert new == "a\r\n  # kv4lint: disable=KV401\r\n  python -m sglang.launch_server --kv-cache-dtype nvfp4"


def test_two_commands_two_comments():
    src = ("python -m sglang.launch_server --kv-cache-dtype nvfp4\n"
           "\tpython -m sglang.launch_server --kv-cache-dtype nvfp4\n")
    new, n, _ = suppress_text(src, [at(src, "nvfp4"), at(src, "nvfp4", nth=1)], "makefile")
    assert n == 2
    assert new == ("# kv4lint: disable=KV401\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n"
                   "\t# kv4lint: disable=KV401\n\tpython -m sglang.launch_server --kv-cache-dtype nvfp4\n")


def test_dockerfile_run_with_continuations():
    src = ("FROM lmsysorg/sglang:v0.5.23\nRUN pip install x && \\\n"
           "    python -m sglang.launch_server --kv-cache-dtype nvfp4\n")
    new, _, _ = suppress_text(src, [at(src, "nvfp4")], "dockerfile")
    assert new == src.replace("RUN pip", "# kv4lint: disable=KV401\nRUN pip")


def test_yaml_keeps_indentation():
    src = "services:\n  server:\n    command: python -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    new, _, _ = suppress_text(src, [at(src, "nvfp4")], "yaml")
    assert new == src.replace("    command", "    # kv4lint: disable=KV401\n    command")


def test_markdown_shell_and_python_fences():
    src = ("# Serving\n\n```bash\npython -m sglang.launch_server \\\n  --kv-cache-dtype nvfp4\n```\n\n"
           "```python\nServerArgs(kv_cache_dtype='nvfp4')\n```\n")
    new, n, _ = suppress_text(src, [at(src, "nvfp4"), at(src, "'nvfp4'")], "markdown")
    assert n == 2
    assert new == ("# Serving\n\n```bash\n# kv4lint: disable=KV401\npython -m sglang.launch_server \\\n"
                   "  --kv-cache-dtype nvfp4\n```\n\n"
                   "```python\nServerArgs(kv_cache_dtype='nvfp4')  # kv4lint: disable=KV401\n```\n")


def test_markdown_continuation_does_not_leave_the_fence():
    src = "```bash\n\\\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n```\n"
    # The line above the command ends in a backslash but is inside the fence: the comment goes above it.
    new, _, _ = suppress_text(src, [at(src, "nvfp4")], "markdown")
    assert new == "```bash\n# kv4lint: disable=KV401\n\\\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n```\n"


def test_notebook_is_left_alone_with_a_note():
    src = '{"cells": []}\n'
    f = Finding("KV401", Severity.ERROR, "m", "n.ipynb", Span(0, 1), Position(1, 1), Position(1, 2))
    new, n, notes = suppress_text(src, [f], "notebook")
    assert (new, n) == (src, 0) and "notebooks get no suppression comment" in notes[0]


# ---------------------------------------------------------------------------
# Files


def test_add_suppressions_writes_files_losslessly(tmp_path):
    p = tmp_path / "serve.sh"
    src = "\ufeff#!/bin/bash\r\n  python -m sglang.launch_server --kv-cache-dtype nvfp4\r\n"
    p.write_bytes(src.encode("utf-8"))
    os.chmod(p, 0o755)
    q = tmp_path / "serve.py"
    q.write_bytes("# -*- coding: latin-1 -*-\n# \u00e9\nServerArgs(kv_cache_dtype='nvfp4')\n".encode("latin-1"))
    text = src[1:]
    fs = [at(text, "nvfp4", path=str(p)), at(q.read_bytes().decode("latin-1"), "'nvfp4'", path=str(q))]
    assert add_suppressions(fs) == 2
    assert p.read_bytes() == ("\ufeff#!/bin/bash\r\n  # kv4lint: disable=KV401\r\n"
                              "  python -m sglang.launch_server --kv-cache-dtype nvfp4\r\n").encode("utf-8")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o755
    assert q.read_bytes() == ("# -*- coding: latin-1 -*-\n# \u00e9\nServerArgs(kv_cache_dtype='nvfp4')  # noqa: KV401\n"
                              ).encode("latin-1")
    again = p.read_bytes().decode("utf-8-sig")
    assert add_suppressions([at(again, "nvfp4", path=str(p))]) == 0  # idempotent
    assert p.read_bytes().decode("utf-8-sig") == again


def test_add_suppressions_read_only_file_reported(tmp_path, capsys):
    p = tmp_path / "serve.sh"
    src = "python -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    p.write_text(src)
    os.chmod(p, 0o444)
    assert add_suppressions([at(src, "nvfp4", path=str(p))]) == 0
    assert p.read_text() == src
    assert "read-only" in capsys.readouterr().err


def test_cli_add_suppressions_then_check_is_clean(tmp_path, monkeypatch, capsys):
    fakefront.install(monkeypatch)
    monkeypatch.chdir(tmp_path)
    src = ("#!/bin/bash\nexport X=1\npython -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
           "  --kv-cache-dtype fp4_e2m1\n")
    (tmp_path / "serve.sh").write_text(src)
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", "serve.sh"]) == 1
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", "--add-suppressions", "serve.sh"]) == 0
    assert (tmp_path / "serve.sh").read_text() == src.replace("python -m", "# kv4lint: disable=KV406\npython -m")
    assert "Added 1 suppression comment." in capsys.readouterr().err
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", "serve.sh"]) == 0


@pytest.mark.parametrize("lang", ["shell", "python", "yaml"])
def test_finding_past_the_end_is_clamped(lang):
    src = "x\n"
    f = Finding("KV401", Severity.ERROR, "m", "p", Span(0, 1), Position(9, 1), Position(9, 1))
    new, n, _ = suppress_text(src, [f], lang)
    assert n == 1 and "KV401" in new


# ---------------------------------------------------------------------------
# End to end through the real frontends: after --add-suppressions, check is clean


E2E = {
    "serve.sh": ("#!/bin/bash\nif true; then\n  srun -N1 \\\n    python -m sglang.launch_server --model-path M \\\n"
                 "      --kv-cache-dtype fp4_e2m1\nfi\n"
                 "nohup python3 -m sglang.launch_server --kv-cache-dtype fp4_e2m1 &\n"),
    "serve.py": ('from sglang.srt.server_args import ServerArgs\nimport subprocess\n'
                 'args = ServerArgs(model_path="M", kv_cache_dtype="fp4_e2m1")  # the server\n'
                 'subprocess.run(["python", "-m", "sglang.launch_server",\n'
                 '                "--kv-cache-dtype", "fp4_e2m1"])\n'),
    "Dockerfile": ("FROM lmsysorg/sglang:v0.5.23\nRUN pip install x && \\\n"
                   "    python3 -m sglang.launch_server --model-path M --kv-cache-dtype fp4_e2m1\n"),
    "compose.yaml": ("services:\n  a:\n    image: lmsysorg/sglang:v0.5.23\n"
                     "    command: python3 -m sglang.launch_server --model-path M --kv-cache-dtype fp4_e2m1\n"
                     "  b:\n    command:\n      - python3\n      - -m\n      - sglang.launch_server\n"
                     "      - --kv-cache-dtype\n      - fp4_e2m1\n"
                     "  c:\n    command:\n    - python3\n    - -m\n    - sglang.launch_server\n"
                     "    - --kv-cache-dtype\n    - fp4_e2m1\n"
                     "  d:\n    entrypoint: [\"/bin/bash\", \"-c\"]\n    command:\n      - |\n"
                     "        python3 -m sglang.launch_server \\\n          --kv-cache-dtype fp4_e2m1\n"),
    "README.md": ("# Serve\n\n```bash\npython -m sglang.launch_server --model-path M \\\n"
                  "  --kv-cache-dtype fp4_e2m1\n```\n\n"
                  "```python\nfrom sglang.srt.server_args import ServerArgs\n"
                  "args = ServerArgs(model_path='M', kv_cache_dtype='fp4_e2m1')\n```\n"),
    "Makefile": "serve:\n\tpython -m sglang.launch_server --model-path M \\\n\t  --kv-cache-dtype fp4_e2m1\n",
}


@pytest.mark.parametrize("name", sorted(E2E))
def test_add_suppressions_silences_every_finding(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(E2E[name])
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", name]) == 1
    before = capsys.readouterr().out.count("KV406")
    assert before >= 1
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", "--add-suppressions", name]) == 0
    assert f"Added {before} suppression comment" in capsys.readouterr().err
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", name]) == 0, capsys.readouterr().out
    once = (tmp_path / name).read_text()
    # nothing left to add
    assert main(["check", "--isolated", "--sglang-version", "0.5.23", "--add-suppressions", name]) == 0
    assert (tmp_path / name).read_text() == once
    # Only comments were added: dropping them gives the original back.
    stripped = re.sub(r"(?m)^[ \t]*# kv4lint: disable=KV406\n", "", once)
    stripped = stripped.replace("  # noqa: KV406", "").replace("  # kv4lint: disable=KV406", "")
    assert stripped == E2E[name]


# ---------------------------------------------------------------------------
# Round trip per format, on the fixtures' real shapes: after --add-suppressions, check finds nothing and the
# file still parses as its format; a format without comments is left byte for byte and its findings listed.

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures")
ROUND_TRIP_ARGS = ["--isolated", "--sglang-version", "0.5.23", "--gpu", "b200"]


def _parses_jsonc(text: str) -> None:
    from kv4lint.frontends.json_ import parse  # VS Code's reading: comments and trailing commas

    parse(text)


def _parses_ini(text: str) -> None:
    import configparser

    configparser.ConfigParser(interpolation=None).read_string(text)


def _parses_toml(text: str) -> None:
    import tomllib

    tomllib.loads(text)


def _parses_yaml(text: str) -> None:
    from ruamel.yaml import YAML

    YAML(typ="safe").load(text)


def _no_parse(text: str) -> None:
    pass


# (fixture, name in the repository, how its format is parsed)
ROUND_TRIP = {
    "vscode launch.json (JSONC)": ("json/vscode_launch.json", ".vscode/launch.json", _parses_jsonc),
    "devcontainer.json (JSONC)": ("json/devcontainer.json", ".devcontainer/devcontainer.json", _parses_jsonc),
    "systemd unit": ("services/sglang_service/sglang.service", "sglang.service", _no_parse),
    "supervisord": ("services/supervisord_conf/supervisord.conf", "supervisord.conf", _parses_ini),
    "tox.ini": ("services/tox_ini/tox.ini", "tox.ini", _parses_ini),
    "pyproject tasks": ("services/pyproject_toml/pyproject.toml", "pyproject.toml", _parses_toml),
    "Procfile": ("services/procfile/Procfile", "Procfile", _no_parse),
    "justfile": ("services/justfile/justfile", "justfile", _no_parse),
    "ray job yaml": ("services/ray_job_yaml/ray_job.yaml", "ray_job.yaml", _parses_yaml),
}


def _install(tmp_path, fixture: str, name: str) -> str:
    dest = tmp_path / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(os.path.join(FIXTURES, fixture), "rb") as f:
        dest.write_bytes(f.read())
    return name


@pytest.mark.parametrize("fmt", sorted(ROUND_TRIP))
def test_add_suppressions_round_trip(tmp_path, monkeypatch, capsys, fmt):
    fixture, name, parses = ROUND_TRIP[fmt]
    monkeypatch.chdir(tmp_path)
    _install(tmp_path, fixture, name)
    assert main(["check", *ROUND_TRIP_ARGS, name]) == 1
    capsys.readouterr()
    assert main(["check", *ROUND_TRIP_ARGS, "--add-suppressions", name]) == 0
    assert "could not be suppressed" not in capsys.readouterr().err
    assert main(["check", *ROUND_TRIP_ARGS, name]) == 0, capsys.readouterr().out
    parses((tmp_path / name).read_text())


def test_add_suppressions_writes_jsonc_comments(tmp_path, monkeypatch):
    """A launch.json gets ``//`` (JSONC) at the end of the finding's line, never ``#``."""
    monkeypatch.chdir(tmp_path)
    _install(tmp_path, "json/vscode_launch.json", ".vscode/launch.json")
    assert main(["check", *ROUND_TRIP_ARGS, "--add-suppressions", ".vscode/launch.json"]) == 0
    text = (tmp_path / ".vscode/launch.json").read_text()
    assert '"--attention-backend", "triton",  // kv4lint: disable=KV401\n' in text
    assert "#" not in text


@pytest.mark.parametrize("fixture,name", [("json/ecs_task_definition.json", "task-definition.json"),
                                          ("json/docker_inspect.json", "inspect.json"),
                                          ("notebook/engine.ipynb", "engine.ipynb")])
def test_add_suppressions_leaves_a_format_without_comments(tmp_path, monkeypatch, capsys, fixture, name):
    """Strict JSON (an ECS task, docker inspect) and notebooks: nothing written, each finding listed, exit 1."""
    monkeypatch.chdir(tmp_path)
    _install(tmp_path, fixture, name)
    before = (tmp_path / name).read_bytes()
    assert main(["check", *ROUND_TRIP_ARGS, name]) == 1
    n = capsys.readouterr().out.count(f"{name}:")
    assert n >= 1
    assert main(["check", *ROUND_TRIP_ARGS, "--add-suppressions", name]) == 1
    err = capsys.readouterr().err
    assert (tmp_path / name).read_bytes() == before
    assert f"{n} finding{'s' if n != 1 else ''} could not be suppressed by a comment." in err
    if name.endswith(".json"):
        import json

        json.loads(before)
        hint = f'per-file-ignores = {{"{name}" = ["KV401"]}}'
        assert hint in err
        # the hint, pasted into [tool.kv4lint], does what it says
        (tmp_path / "pyproject.toml").write_text(f"[tool.kv4lint]\n{hint}\n")
        assert main(["check", *ROUND_TRIP_ARGS[1:], name]) == 0


def test_strict_json_already_holding_comments_takes_them(tmp_path, monkeypatch):
    """A ``.json`` that already holds comments is read by JSONC readers: it gets ``//`` too."""
    monkeypatch.chdir(tmp_path)
    src = open(os.path.join(FIXTURES, "json/ecs_task_definition.json")).read().replace("{", "{ // task", 1)
    (tmp_path / "task.json").write_text(src)
    assert main(["check", *ROUND_TRIP_ARGS, "--add-suppressions", "task.json"]) == 0
    assert main(["check", *ROUND_TRIP_ARGS, "task.json"]) == 0
    _parses_jsonc((tmp_path / "task.json").read_text())


@pytest.mark.parametrize("path,leader", [(".vscode/launch.json", "//"), ("x/.vscode/settings.json", "//"),
                                         (".devcontainer/devcontainer.json", "//"), ("tsconfig.base.json", "//"),
                                         ("a.jsonc", "//"), ("ecs/task-definition.json", None),
                                         ("inspect.json", None)])
def test_json_leader(path, leader):
    from kv4lint.base.suppression import leader_for

    assert leader_for("json", path) == leader
    assert leader_for("shell", path) == "#"


def test_jsonc_comment_not_put_inside_a_block_comment():
    src = '{"args": ["--kv-cache-dtype", "nvfp4"] /* start\n end */}\n'
    new, n, notes = suppress_text(src, [at(src, "nvfp4", path=".vscode/launch.json")], "json")
    assert n == 0 and new == src and "inside a /* */ comment" in notes[0]


def test_jsonc_disable_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _install(tmp_path, "json/vscode_launch.json", ".vscode/launch.json")
    assert main(["check", *ROUND_TRIP_ARGS, ".vscode/launch.json"]) == 1
    p = tmp_path / ".vscode/launch.json"
    p.write_text(p.read_text().replace("{", "{\n    // kv4lint: disable-file=KV401", 1))
    assert main(["check", *ROUND_TRIP_ARGS, ".vscode/launch.json"]) == 0
