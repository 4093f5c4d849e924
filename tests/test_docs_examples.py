"""Docs that run: every console example of README.md and docs/*.md is run against the fixtures, so a
documented command cannot drift from the code (issue 15).

The convention the docs follow (stated here and in docs/contributing.md, "Docs that run"):

- A ``console`` / ``sh`` / ``shell`` / ``bash`` code block is an example to run. Its commands start with
  ``$ ``; a command states the exit status it documents with a trailing ``# exit N``.  The lines that
  follow a command are its output: each must appear, as a line, in what the command prints (stdout or
  stderr), except a line holding ``…`` (an elision).
- A block that cannot run here (an install, the test suite, the benchmark, a ``git commit``) is marked
  ``<!-- docs-test: illustrative -->`` on the line before it.

Each block runs in a fresh copy of the repository's fixtures, README and docs (a git repository of its
own, so no configuration above it is read), with ``kv4lint``, ``flake8`` and ``python`` from this
environment, no cache, no colour.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ILLUSTRATIVE = "<!-- docs-test: illustrative -->"
_FENCE = re.compile(r"^```(console|sh|shell|bash)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


@dataclass
class Command:
    line: str  # as written, without "$ "
    exit: int | None
    output: list[str] = field(default_factory=list)


@dataclass
class Example:
    doc: Path
    lineno: int
    illustrative: bool
    commands: list[Command]

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.lineno}"


def examples(doc: Path) -> list[Example]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        lineno = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        cmds: list[Command] = []
        for raw in m.group(2).splitlines():
            if raw.startswith("$ "):
                e = _EXIT.search(raw)
                cmds.append(Command(raw[2:e.start()] if e else raw[2:], int(e.group(1)) if e else None))
            elif cmds and raw.strip():
                cmds[-1].output.append(raw.rstrip())
        out.append(Example(doc, lineno, before == ILLUSTRATIVE, cmds))
    return out


ALL = [ex for doc in DOCS for ex in examples(doc)]


def test_the_docs_have_runnable_examples():
    runnable = [ex for ex in ALL if not ex.illustrative]
    assert len(runnable) >= 4 and sum(len(ex.commands) for ex in runnable) >= 15


@pytest.mark.parametrize("example", ALL, ids=lambda ex: ex.id)
def test_console_example(example: Example, tmp_path):
    if example.illustrative:
        assert example.commands, f"{example.id}: an illustrative block shows commands too (`$ ...`)"
        return
    assert example.commands, f"{example.id}: no `$ ` command (mark it {ILLUSTRATIVE} if it is not one)"
    for cmd in example.commands:
        assert cmd.exit is not None, (f"{example.id}: `{cmd.line}` does not say its exit status (`# exit N`); "
                                      f"or mark the block {ILLUSTRATIVE}")
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("fixtures", "docs"):
        shutil.copytree(ROOT / name, work / name)
    shutil.copy2(ROOT / "README.md", work / "README.md")
    (work / ".git").mkdir()  # the top of the repository: no configuration above it is read
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "KV4LINT_NO_CACHE": "1", "NO_COLOR": "1", "NO_PROGRESS": "1"}
    env.pop("PYTHONPATH", None)
    tracked = _contents(work)
    for cmd in example.commands:
        r = subprocess.run(["bash", "-c", cmd.line], cwd=work, env=env, capture_output=True, text=True,
                           timeout=600)
        said = f"{example.id}: `{cmd.line}`\n--- stdout ---\n{r.stdout[-3000:]}\n--- stderr ---\n{r.stderr[-3000:]}"
        assert r.returncode == cmd.exit, f"exit {r.returncode}, the doc says {cmd.exit}: {said}"
        printed = set((r.stdout + r.stderr).splitlines())
        for want in cmd.output:
            if "…" not in want:
                assert want in printed, f"the doc shows {want!r}, not printed: {said}"
    # Running the docs in a checkout must leave it as it was (issue 29): an example that fixes or writes
    # works on a copy of its own (a temporary directory), never on a file of the repository.
    after = _contents(work)
    changed = sorted(name for name, data in tracked.items() if after.get(name) != data)
    assert not changed, f"{example.id}: running the example changed the repository's files {changed}"


def _contents(top: Path) -> dict[str, bytes]:
    return {str(p.relative_to(top)): p.read_bytes() for p in top.rglob("*") if p.is_file()}
