"""The quick start (issue 36): two commands, the first a short lesson in what kv4lint catches, the second CI's.

- README.md's quick start is exactly two commands, and the second is .ci/run's, character for character.
- The first installs kv4lint and checks fixtures/examples/ (a few launches as a project holds them; fixtures/ stays the
  tests' corpus). What it prints fits on a screen and teaches the three verdicts: an error with a safe fix, a
  warning that says how to decide, and a launch that is clean because its file names its GPU.
- The README shows that output whole, in a block tests/test_docs_examples.py runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCREEN = 15  # lines: what a new user reads without scrolling
_FINDING = re.compile(r"^(fixtures/examples/\S+):\d+:\d+: KV\d{3} \((error|warning)\)( \[\*\])? (.*)$")
_TARGET = re.compile(r"^(fixtures/examples/\S+):\d+: .*?, gpu=(\S+) ")


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert m, f"README.md has no '## {title}' section"
    return m.group(1)


def _blocks(text: str) -> list[list[str]]:
    return [body.splitlines() for body in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S)]


def _quick_start() -> list[str]:
    first = _blocks(_section("Quick start"))[0]
    return [line[2:] for line in first if line.startswith("$ ")]


def _ci_command() -> str:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if line.startswith("python3 -m venv"))


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "NO_PROGRESS": "1", "KV4LINT_NO_CACHE": "1"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "kv4lint", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_quick_start_is_two_commands_and_the_second_is_ci():
    setup, tests = _quick_start()
    assert tests == _ci_command()
    assert setup.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/kv4lint check ")


def _first_argv() -> list[str]:
    """The first command's kv4lint arguments (what it runs after its install)."""
    return _quick_start()[0].rsplit("&& .venv/bin/kv4lint ", 1)[1].split()


def _first_check() -> list[str]:
    r = _run(*_first_argv())
    assert r.returncode == 1 and not r.stderr, (r.returncode, r.stderr)
    return r.stdout.splitlines()


def test_the_first_command_shows_a_handful_of_findings_that_teach():
    out = _first_check()
    assert 3 <= len(out) <= SCREEN, "\n".join(out)
    found = [m.groups() for m in map(_FINDING.match, out) if m]
    assert any(sev == "error" and safe for _, sev, safe, _ in found), "no error with a safe fix"
    assert any(sev == "warning" and "set --gpu" in msg for _, sev, _, msg in found), "no warning saying what decides"
    # A launch judged on the GPU its file names, with nothing to report: the clean verdict.
    targets = [m.groups() for m in map(_TARGET.match, _run(*_first_argv(), "--show-target").stdout.splitlines()) if m]
    flagged = {path for path, *_ in found}
    named = {path for path, gpu in targets if gpu != "any"} - flagged
    assert named, "no file whose launch is clean because the file names its GPU"
    assert {path for path, _ in targets} - flagged - named == set(), "a clean launch that names no GPU teaches nothing"


def test_the_readme_shows_the_first_commands_whole_output():
    check = _quick_start()[0].rsplit("&& .venv/bin/", 1)[1]
    shown = next(block for block in _blocks(_section("Quick start")) if block[0].startswith(f"$ {check} "))
    assert shown[1:] == _first_check()
