"""Bounded cost per file (issue 28, item 1; docs/security.md).

A file under the size limit must not take minutes and gigabytes: a shell line
of repeated options (1 MB: 87,000 words) or a Python argv list of 140,000 items
was read word by word, at about 0.1 ms and a few kB each, and the Python scan
was quadratic in a long line.  Now a shell command or array of more than
``MAX_WORDS`` words, a list given as data (YAML, JSON) with more, or a Python bracket with
more than ``MAX_ITEMS`` items is a file error naming the limit (exit 1), read
no further.  These tests count words and items (the limits are lowered to keep
them fast) and measure memory with tracemalloc; they never time anything.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

import kv4lint.frontends.argv_lists as argv_lists
import kv4lint.frontends.python as python_frontend
import kv4lint.frontends.shell.walk as walk
from kv4lint.base import model
from kv4lint.cli import main

TARGET = ["--isolated", "--no-cache", "--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]
OPTS = " --kv-cache-dtype nvfp4 --attention-backend triton"
LAUNCH = "python -m sglang.launch_server --model-path m"


def _check(tmp_path, capsys, name: str, text: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text)
    rc = main(["check", *TARGET, str(path)])
    return rc, capsys.readouterr().out


@pytest.fixture
def small_limits(monkeypatch):
    """The limits at 100, so a test reads hundreds of words, not tens of thousands."""
    monkeypatch.setattr(walk, "MAX_WORDS", 100)
    monkeypatch.setattr(argv_lists, "MAX_WORDS", 100)
    monkeypatch.setattr(python_frontend, "MAX_ITEMS", 100)


def test_limits_are_one_model():
    assert walk.MAX_WORDS is model.MAX_WORDS and argv_lists.MAX_WORDS is model.MAX_WORDS
    assert 10_000 <= model.MAX_WORDS <= 100_000 and python_frontend.MAX_ITEMS >= 1_000


def test_shell_words_over_the_limit_are_a_file_error(tmp_path, capsys, small_limits):
    # 2 + 3 + 48 * 2 = 101 words in the command
    rc, out = _check(tmp_path, capsys, "long.sh", LAUNCH + OPTS + " --x y" * 46 + "\n")
    assert rc == 1
    assert ("long.sh:1: error: a command or array of more than 100 words (the limit kv4lint reads) at line 1: "
            "not scanned further") in out
    assert "KV401" not in out


def test_shell_words_under_the_limit_are_judged(tmp_path, capsys, small_limits):
    rc, out = _check(tmp_path, capsys, "ok.sh", LAUNCH + OPTS + " --port 1" * 40 + "\n")
    assert rc == 1 and "KV401" in out and "error:" not in out, out


def test_the_shell_limit_is_per_command(tmp_path, capsys, small_limits):
    """Many short commands are read (the file size bounds them); only a long one is refused."""
    rc, out = _check(tmp_path, capsys, "many.sh", "echo a b c d e f g h i\n" * 40 + LAUNCH + OPTS + "\n")
    assert rc == 1 and "KV401" in out and "error:" not in out, out


def test_the_launches_of_a_file_share_one_budget(tmp_path, capsys, small_limits):
    """Judging costs ~0.1 ms a word: many launches under the limit each still add up to it."""
    rc, out = _check(tmp_path, capsys, "launches.sh", (LAUNCH + OPTS + " --port 1" * 15 + "\n") * 4)
    assert rc == 1 and "launches.sh:3: error: launches of more than 100 words" in out, out
    assert out.count("KV401") == 2, out


def test_shell_array_elements_count(tmp_path, capsys, small_limits):
    rc, out = _check(tmp_path, capsys, "arr.sh", "ARGS=(" + " --x y" * 60 + ")\n" + LAUNCH + OPTS + ' "${ARGS[@]}"\n')
    assert rc == 1 and "error: a command or array of more than 100 words" in out, out


def test_python_items_over_the_limit_are_a_file_error(tmp_path, capsys, small_limits):
    items = ", ".join(['"--port", "1"'] * 50)
    text = ('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", '
            f'"nvfp4", {items}])\n')
    rc, out = _check(tmp_path, capsys, "long.py", text)
    assert rc == 1
    assert "long.py: error: too complex to scan: more than 100 items in one bracket" in out, out


def test_python_items_under_the_limit_are_judged(tmp_path, capsys, small_limits):
    items = ", ".join(['"--port", "1"'] * 45)
    text = ('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", '
            f'"nvfp4", "--attention-backend", "triton", {items}])\n')
    rc, out = _check(tmp_path, capsys, "ok.py", text)
    assert rc == 1 and "KV401" in out and "error:" not in out, out


@pytest.mark.parametrize("name, text", [
    ("compose.yaml", "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command: [python3, -m, "
                     "sglang.launch_server, --kv-cache-dtype, nvfp4" + ", --port, 1" * 60 + "]\n"),
    ("launch.json", json.dumps({"command": ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]
                               + ["--port", "1"] * 60})),
])
def test_data_lists_over_the_limit_are_a_file_error(tmp_path, capsys, small_limits, name, text):
    rc, out = _check(tmp_path, capsys, name, text)
    assert rc == 1 and "more than 100 (the limit kv4lint reads per list): not scanned" in out, out


@pytest.mark.parametrize("name, make", [
    # the shapes of the issue, at 1 MB: a shell line of repeated options, a Python argv list
    ("line.sh", lambda: LAUNCH + " --kv-cache-dtype nvfp4" * 45_000 + "\n"),
    ("argv.py", lambda: 'import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", '
                        + ", ".join(['"--kv-cache-dtype", "nvfp4"'] * 36_000) + "])\n"),
])
def test_a_megabyte_past_the_limit_stays_within_the_memory_bound(tmp_path, capsys, name, make):
    """With the real limits: the file is refused, and Python's peak allocation stays in the tens of MB
    (it was 0.5 GB for the shell line and 1.5 GB for the list; docs/security.md states the bound)."""
    text = make()
    assert len(text) > 1_000_000
    path = tmp_path / name
    path.write_text(text)
    tracemalloc.start()
    try:
        rc = main(["check", *TARGET, str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert rc == 1 and "error:" in out and ("50000" in out or "10000" in out), out
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MB"


def test_yaml_past_the_separator_limit_is_a_file_error_not_parsed(tmp_path, capsys, monkeypatch):
    import kv4lint.frontends.yaml_nodes as yaml_nodes

    monkeypatch.setattr(yaml_nodes, "MAX_YAML_SEPARATORS", 100)
    items = ", ".join(["--port, '1'"] * 60)  # 120 commas
    text = f"command: [python3, -m, sglang.launch_server, --kv-cache-dtype, nvfp4, {items}]\n"
    composed = []
    monkeypatch.setattr("ruamel.yaml.YAML.compose_all", lambda self, t: composed.append(t) or iter(()))
    rc, out = _check(tmp_path, capsys, "big.yaml", text)
    assert rc == 1 and composed == []  # never parsed
    assert "big.yaml: error: YAML of more than 100 line breaks, commas and colons (the limit kv4lint reads): " \
           "not scanned" in out
    monkeypatch.undo()
    monkeypatch.setattr(yaml_nodes, "MAX_YAML_SEPARATORS", 200)
    rc, out = _check(tmp_path, capsys, "big.yaml", text)
    assert rc == 1 and "KV401" in out and "error:" not in out


def _aliases(n: int, *, branches: bool) -> str:
    """A launch whose dtype passes through ``n`` names, each assigned in both branches of an ``if`` or once."""
    lines = ["import os", "import subprocess", 'kv0 = "nvfp4"']
    for i in range(1, n):
        lines += ([f'if os.environ.get("SWITCH_{i}"):', f"    kv{i} = kv{i - 1}", "else:", f"    kv{i} = kv{i - 1}"]
                  if branches else [f"kv{i} = kv{i - 1}"])
    lines.append(f'subprocess.run(["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", kv{n - 1}, '
                 '"--attention-backend", "triton"])')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("n, branches, error", [
    (20, False, None),
    (50, False, "is nested more than 40 levels deep in names, calls and operations"),
    (10, True, None),
    # Each name read in both branches doubled the work per level: 2 ** 25 readings (minutes) before the bound.
    (25, True, "needs more than 20000 expressions evaluated"),
])
def test_python_values_past_a_bound_are_a_file_error(tmp_path, capsys, n, branches, error):
    rc, out = _check(tmp_path, capsys, "serve.py", _aliases(n, branches=branches))
    assert rc == 1
    if error is None:
        assert "KV401 (error)" in out and "error:" not in out.replace("(error)", "")
    else:
        line = 3 + (n - 1) * (4 if branches else 1) + 1
        assert f"serve.py:{line}: error: a value of this launch {error} (the limit kv4lint reads): not resolved" \
            in out and "KV401" not in out
