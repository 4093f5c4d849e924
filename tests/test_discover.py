"""Discovery: which files a walk yields, their language, and the exclude patterns."""

from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kv4lint.files.discover import DEFAULT_EXCLUDES, discover, excluded, language_of
from kv4lint.sglang.commands import SHELLS


def _names(disc) -> list[str]:
    return sorted(c.path for c in disc.files)


def _touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("echo\n")


@pytest.mark.parametrize("name,lang", [
    ("serve.sh", "shell"), ("run.py", "python"), ("Dockerfile", "dockerfile"), ("Dockerfile.prod", "dockerfile"),
    ("gpu.Dockerfile", "dockerfile"), ("Containerfile", "dockerfile"),
    # A known extension wins over the Dockerfile prefix: kv4lint's own frontends/dockerfile.py is Python.
    ("dockerfile.py", "python"), ("Dockerfile.yaml", "yaml"),
    ("Makefile", "makefile"), ("rules.mk", "makefile"), ("deploy.yml", "yaml"), ("README.md", "markdown"),
    ("demo.ipynb", "notebook"), (".sh", None), ("notes.txt", None),
])
def test_language_of_name(name, lang):
    assert language_of(name) == lang


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_a_shebang_naming_any_shell_the_readers_know_is_shell(shell):
    """Discovery and the readers share one list of shells (kv4lint.sglang.commands.SHELLS)."""
    assert language_of("tools/serve", f"#!/bin/{shell}\n".encode()) == "shell"
    assert language_of("tools/serve", f"#!/usr/bin/env {shell}\n".encode()) == "shell"


def test_default_excludes_apply_below_the_root(tmp_path):
    _touch(tmp_path, "a.sh", "build/b.sh", "sub/.venv/c.py", "sub/node_modules/x/d.sh", "sub/e.py")
    assert _names(discover([str(tmp_path)])) == [str(tmp_path / "a.sh"), str(tmp_path / "sub" / "e.py")]


def test_a_root_under_an_excluded_name_is_still_scanned(tmp_path):
    # ~/build/proj: the default exclude 'build' is about directories inside the tree, not above it.
    proj = tmp_path / "build" / "proj"
    _touch(proj, "serve.sh", "dist/x.sh")
    assert _names(discover([str(proj)])) == [str(proj / "serve.sh")]
    cwd = os.getcwd()
    os.chdir(proj)
    try:
        assert _names(discover(["."])) == ["serve.sh"]
    finally:
        os.chdir(cwd)


def test_force_exclude_applies_to_named_files_and_directories(tmp_path):
    _touch(tmp_path, "gen/a.sh", "keep/b.sh")
    paths = [str(tmp_path / "gen"), str(tmp_path / "gen" / "a.sh"), str(tmp_path / "keep")]
    named = [str(tmp_path / p) for p in ("gen/a.sh", "gen/a.sh", "keep/b.sh")]
    assert _names(discover(paths, exclude=["gen"])) == named
    assert _names(discover(paths, exclude=["gen"], force_exclude=True)) == [str(tmp_path / "keep" / "b.sh")]


def test_user_patterns_with_slashes_and_wildcards(tmp_path):
    _touch(tmp_path, "docs/gen/a.md", "docs/b.md", "x/y_test.sh", "x/z.sh")
    disc = discover([str(tmp_path)], exclude=["docs/gen", "*_test.sh"])
    assert _names(disc) == [str(tmp_path / "docs" / "b.md"), str(tmp_path / "x" / "z.sh")]


def test_hard_links_are_one_file(tmp_path):
    _touch(tmp_path, "a.sh")
    os.link(tmp_path / "a.sh", tmp_path / "b.sh")
    assert _names(discover([str(tmp_path)])) == [str(tmp_path / "a.sh")]


def _reference_excluded(path: str, patterns: list[str]) -> bool:
    """The documented semantics, spelled out with fnmatch (the implementation compiles them)."""
    name = os.path.basename(path)
    for pat in patterns:
        p = pat.rstrip("/")
        if fnmatch(name, p) or fnmatch(path, p) or fnmatch(path, f"*/{p}") or fnmatch(path, f"{p}/*"):
            return True
        if "/" not in p and any(fnmatch(part, p) for part in Path(path).parts):
            return True
    return False


_part = st.sampled_from(["build", "src", "a", "x.py", "b_test.sh", ".venv", "docs", "gen", "a.b", "[x]"])
_pattern = st.sampled_from(["build", "*.py", "docs/gen", "gen/", "*_test.sh", "a?b", "src/*", "*/a", "[x]",
                            ".venv", "x*", "docs/*.md", "[!a]"])


@given(parts=st.lists(_part, min_size=1, max_size=5), patterns=st.lists(_pattern, max_size=4),
       absolute=st.booleans())
def test_excluded_matches_the_fnmatch_semantics(parts, patterns, absolute):
    path = ("/" if absolute else "") + "/".join(parts)
    assert excluded(path, patterns) == _reference_excluded(path, patterns)
    assert excluded(path, DEFAULT_EXCLUDES + patterns) == _reference_excluded(path, DEFAULT_EXCLUDES + patterns)


def test_a_walk_and_named_files_choose_the_same(tmp_path, monkeypatch):
    """pre-commit names every text file: kv4lint's discovery keeps the ones a walk keeps (issue 29)."""
    monkeypatch.chdir(tmp_path)
    shebang = "#!/bin/bash\necho\n"
    files = {"serve.sh": "echo\n", "job": shebang, "notes.txt": shebang, "setup.cfg": "[x]\n",
             "supervisor/conf.d/sglang.conf": "[program:x]\ncommand=echo\n", "app.conf": "[program:x]\n",
             "deploy/sglang.service": "[Service]\nExecStart=echo\n", "Procfile": "web: echo\n",
             ".vscode/launch.json": "{}\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    walked = sorted(os.path.relpath(c.path) for c in discover(["."]).files)
    named = sorted(os.path.relpath(c.path) for c in discover(sorted(files)).files)
    assert walked == named == sorted(["serve.sh", "job", "supervisor/conf.d/sglang.conf", "deploy/sglang.service",
                                      "Procfile", ".vscode/launch.json"])
