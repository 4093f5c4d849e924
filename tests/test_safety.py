"""Safety: kv4lint never runs, imports or evaluates what it scans, never uses the network, and
``kv4lint fix`` writes only the files it was asked to fix, inside the tree it was given.

Every planted file below would leave a marker file behind if anything executed,
imported, sourced, built or evaluated it (Python top-level code, a conftest.py,
shell, a Dockerfile RUN, YAML ``!!python/`` tags, a Markdown fence, a notebook
cell, Makefile recipes and ``$(shell ...)``, a model directory's remote code);
each also holds a bad launch, and the test first shows kv4lint did scan the
file (its launch is reported), so "nothing ran" is not vacuous.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import hostile
from hostile import CLI_TARGET, CODE, LLAMA

PY_LAUNCH = ("import subprocess\nsubprocess.run([\"python\", \"-m\", \"sglang.launch_server\", \"--model-path\", "
             f"\"{LLAMA}\", \"--kv-cache-dtype\", \"fp4_e2m1\"])\n")
SH_LAUNCH = hostile.LAUNCH


def _touch(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('ran')"


def plant(root: Path, markers: Path) -> dict[str, bool]:
    """Write the planted files; returns {relative path: whether its launch must be reported}."""
    m = lambda name: markers / name  # noqa: E731
    files: dict[str, bool] = {}

    def put(rel: str, text: str, reported: bool = True) -> None:
        hostile.write(root / rel, text)
        files[rel] = reported

    put("evil.py", f"import os\n{_touch(m('evil.py'))}\nos.system('touch {m('evil.py.system')}')\n{PY_LAUNCH}")
    put("conftest.py", f"{_touch(m('conftest'))}\n{PY_LAUNCH}")
    put("pkg/__init__.py", f"{_touch(m('pkg_init'))}\n{PY_LAUNCH}")
    put("setup.py", f"{_touch(m('setup.py'))}\n{PY_LAUNCH}")
    put("pkg/launch.py", "from . import nothing_here\nimport evil\n"
        f"__import__('os').system('touch {m('import')}')\n{PY_LAUNCH}")
    put("evil.sh", f"#!/bin/bash\ntouch {m('evil.sh')}\n{SH_LAUNCH} --served-model-name \"$(touch {m('subst')})\" "
        f"--chat-template `touch {m('backtick')}`\n"
        f"python - <<EOF\n{_touch(m('heredoc_py'))}\nEOF\npython -c \"{_touch(m('python_c'))}\"\n"
        f"source ./evil.env\n. ./evil.env\neval \"touch {m('eval')}\"\n")
    put("evil.env", f"touch {m('sourced')}\n", reported=False)
    put("Dockerfile", f"FROM lmsysorg/sglang:latest\nRUN touch {m('docker_run')}\n"
        f"RUN python -c \"{_touch(m('docker_py'))}\"\nCMD {SH_LAUNCH}\n")
    put("compose.yaml", "services:\n  sglang:\n    image: lmsysorg/sglang:latest\n"
        f"    command: {SH_LAUNCH}\n    healthcheck:\n      test: [\"CMD\", \"touch\", \"{m('compose')}\"]\n")
    put("tags.yaml", "a: !!python/object/apply:os.system [\"touch " + str(m("yaml_apply")) + "\"]\n"
        "b: !!python/object/new:subprocess.Popen [[\"touch\", \"" + str(m("yaml_new")) + "\"]]\n"
        "c: !!python/name:os.system\n"
        f"command: {SH_LAUNCH}\n", reported=False)
    put("workflow.yml", "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: touch {m('workflow')}\n      - run: {SH_LAUNCH}\n")
    put("README.md", f"# Serving\n\n```python\n{_touch(m('md_fence'))}\n{PY_LAUNCH}```\n\n"
        f"```bash\ntouch {m('md_bash')}\n"
        f"{SH_LAUNCH}\n```\n")
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                     "source": [_touch(m("notebook")) + "\n", *PY_LAUNCH.splitlines(keepends=True)]},
                    {"cell_type": "code", "execution_count": None, "id": "c2", "metadata": {}, "outputs": [],
                     "source": [f"!touch {m('nb_bang')}\n", f"!{SH_LAUNCH}\n"]}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    put("serve.ipynb", json.dumps(nb, indent=1) + "\n")
    put("Makefile", f"X := $(shell touch {m('make_shell')})\ninclude evil.mk\n\nserve:\n\ttouch {m('make_recipe')}\n"
        f"\t{SH_LAUNCH}\n")
    put("evil.mk", f"$(shell touch {m('make_include')})\n", reported=False)
    # A local model directory whose config asks for remote code (transformers' auto_map): kv4lint reads
    # config.json as JSON to tell MHA from MLA, and must never import configuration_evil.py.
    put("models/evil/config.json", json.dumps({"architectures": ["DeepseekV3ForCausalLM"],
                                               "auto_map": {"AutoConfig": "configuration_evil.EvilConfig"},
                                               "model_type": "evil"}), reported=False)
    put("models/evil/configuration_evil.py", f"{_touch(m('remote_code'))}\n", reported=False)
    put("local_model.sh", "#!/bin/bash\npython -m sglang.launch_server --model-path ./models/evil --trust-remote-code "
        "--kv-cache-dtype fp4_e2m1\n")
    return files


@pytest.fixture
def planted(tmp_path):
    root = tmp_path / "repo"
    markers = tmp_path / "markers"
    markers.mkdir()
    files = plant(root, markers)
    return root, markers, files


def _reported(out: str, path: Path, code: str = CODE) -> bool:
    return any(line.startswith(f"{path}:") and f" {code}" in line for line in out.splitlines())


def test_nothing_runs_check_fix_flake8(planted):
    root, markers, files = planted
    cp = hostile.kv4lint("check", *CLI_TARGET, "--jobs", "1", str(root), cwd=root)
    out, err = hostile.text(cp)
    assert cp.returncode == 1 and "Traceback" not in err, err
    missing = [rel for rel, rep in files.items() if rep and not _reported(out, root / rel)]
    assert not missing, f"not scanned (so the test would prove nothing): {missing}\n{out}"
    assert sorted(os.listdir(markers)) == [], "kv4lint check ran scanned code"

    cp = hostile.kv4lint("fix", *CLI_TARGET, "--jobs", "1", str(root), cwd=root)
    out, err = hostile.text(cp)
    assert cp.returncode in (0, 1) and "Traceback" not in err, err
    assert "fp4_e2m1" not in (root / "evil.py").read_text(), "fix did not run on the planted files"
    assert sorted(os.listdir(markers)) == [], "kv4lint fix ran scanned code"

    cp = hostile.flake8(str(root), cwd=root)
    out, err = hostile.text(cp)
    assert "Traceback" not in err, err
    assert sorted(os.listdir(markers)) == [], "flake8 with the kv4lint plugin ran scanned code"


def test_nothing_runs_with_the_process_pool(planted):
    """Many files: the process-pool path must not import the scanned tree either (cwd = the tree)."""
    root, markers, files = planted
    for i in range(80):
        hostile.write(root / "pad" / f"p{i}.py", f"{_touch(markers / f'pad{i}')}\n{PY_LAUNCH}")
    cp = hostile.kv4lint("check", *CLI_TARGET, "--jobs", "2", ".", cwd=root)
    out, err = hostile.text(cp)
    assert cp.returncode == 1 and "Traceback" not in err, err
    assert sorted(os.listdir(markers)) == []


def test_console_script_in_the_tree(planted):
    """The ``kv4lint`` console script, run at the repository root as pre-commit does."""
    root, markers, _ = planted
    exe = Path(sys.executable).with_name("kv4lint")
    if not exe.exists():
        pytest.fail(f"the kv4lint console script is not installed next to {sys.executable}")
    for cmd in ("check", "fix"):
        cp = hostile.run([str(exe), cmd, *CLI_TARGET, "--jobs", "1", "."], cwd=root)
        assert cp.returncode in (0, 1), hostile.text(cp)
    assert sorted(os.listdir(markers)) == []


# ---------------------------------------------------------------------------
# No network


class _NoNetwork(Exception):
    pass


@pytest.fixture
def no_network(monkeypatch):
    calls = []

    def refuse(*a, **k):
        calls.append(a)
        raise _NoNetwork(f"network access attempted: {a!r}")

    class Socket(socket.socket):
        def __init__(self, family=-1, *a, **k):
            if family in (socket.AF_INET, socket.AF_INET6, -1):
                refuse("socket", family)
            super().__init__(family, *a, **k)

    monkeypatch.setattr(socket, "socket", Socket)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)
    return calls


def test_no_network_in_process(planted, no_network, monkeypatch, capsys):
    """check and fix in this process (jobs=1, so the monkeypatched socket module is the one used)."""
    from kv4lint.cli import main

    root, markers, files = planted
    # HF model ids, local model dirs and a version pin that an online tool would look up.
    hostile.write(root / "requirements.txt", "sglang==0.5.23\n")
    hostile.write(root / "hf.sh", "#!/bin/bash\npython -m sglang.launch_server --model-path "
                                  "some-org/never-heard-of-it-7B --kv-cache-dtype nvfp4\n")
    monkeypatch.chdir(root)
    assert main(["check", "--isolated", "--jobs", "1", "."]) == 1
    assert main(["fix", "--isolated", "--jobs", "1", "."]) in (0, 1)
    out = capsys.readouterr()
    assert no_network == [], out
    assert "network access attempted" not in out.out + out.err
    assert sorted(os.listdir(markers)) == []


def test_no_network_flake8_in_process(planted, no_network, monkeypatch, capsys):
    from flake8.main.cli import main as flake8_main

    root, markers, _ = planted
    monkeypatch.chdir(root)
    assert flake8_main(["--select", "KV4,E9", "--kv4-sglang-version", "0.5.23", "--jobs", "1", "."]) == 1
    out = capsys.readouterr().out
    assert no_network == []
    assert "KV406" in out, out
    assert sorted(os.listdir(markers)) == []


# ---------------------------------------------------------------------------
# Fix writes only what it was asked to fix


def _state(top: Path) -> dict[str, tuple]:
    """Every entry under ``top``: (kind, mtime_ns, sha256 or link target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                out[rel] = ("file", st.st_mtime_ns, hashlib.sha256(Path(p).read_bytes()).hexdigest())
            else:
                out[rel] = ("dir",)
    return out


@pytest.fixture
def two_trees(tmp_path):
    """``target/`` (what is fixed) and ``outside/`` (bad launches kv4lint must not touch), side by side."""
    target, outside = tmp_path / "target", tmp_path / "outside"
    hostile.write(target / "serve.sh", hostile.GOOD_SH)
    hostile.write(target / "sub" / "serve.py", hostile.GOOD_PY)
    hostile.write(target / "clean.sh", "#!/bin/sh\npython -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n")
    hostile.write(outside / "bad.sh", hostile.GOOD_SH)
    hostile.write(outside / "dir" / "bad.py", hostile.GOOD_PY)
    hostile.write(outside / "sgl.yaml", "model-path: meta-llama/Llama-3.1-8B-Instruct\nkv-cache-dtype: nvfp4\n")
    os.symlink(outside / "bad.sh", target / "link_out.sh")  # a symlink to a file outside
    os.symlink("../outside/dir", target / "linkdir")  # a symlinked directory outside
    os.symlink(target / "serve.sh", target / "link_in.sh")  # a symlink inside the tree
    # A launch whose --config names a YAML outside the tree: its fix would edit that file.
    hostile.write(target / "compose.yaml", "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
                                           "    command: python3 -m sglang.launch_server --config ../outside/sgl.yaml "
                                           "--port 1\n")
    hostile.write(target / "with_config.sh", "#!/bin/bash\npython -m sglang.launch_server --config ../outside/sgl.yaml "
                                             "--port 1\n")
    return tmp_path, target, outside


def test_fix_writes_only_inside_the_tree(two_trees):
    top, target, outside = two_trees
    before = _state(top)
    cp = hostile.kv4lint("check", *CLI_TARGET, "--gpu", "h100", "--jobs", "1", str(target))
    out, err = hostile.text(cp)
    assert "Traceback" not in err, err
    assert not any(line.startswith((f"{target / 'link_out.sh'}:", f"{target / 'linkdir'}"))
                   for line in out.splitlines()), "a symlink out of the tree was followed:\n" + out
    assert _reported(out, target / "serve.sh")

    cp = hostile.kv4lint("fix", *CLI_TARGET, "--gpu", "h100", "--jobs", "1", str(target))
    out, err = hostile.text(cp)
    assert "Traceback" not in err, err
    after = _state(top)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert changed == ["target/serve.sh", "target/sub/serve.py"], (changed, out, err)
    assert (target / "serve.sh").read_text() == hostile.GOOD_SH_FIXED
    assert os.path.islink(target / "link_out.sh") and os.path.islink(target / "link_in.sh")


def test_symlink_inside_the_tree_is_one_file(tmp_path):
    """serve.sh and link.sh -> serve.sh are one file: reported once, fixed once, exit 0 (bug R4)."""
    root = hostile.good_tree(tmp_path / "t")
    (root / "good.py").unlink()
    os.symlink("good.sh", root / "link.sh")
    cp = hostile.kv4lint("check", *CLI_TARGET, "--jobs", "1", str(root))
    out, _ = hostile.text(cp)
    assert sum(1 for line in out.splitlines() if f" {CODE}" in line) == 1, out
    cp = hostile.kv4lint("fix", *CLI_TARGET, "--jobs", "1", str(root))
    out, err = hostile.text(cp)
    assert cp.returncode == 0, out + err
    assert " error:" not in out, out
    assert (root / "good.sh").read_text() == hostile.GOOD_SH_FIXED and os.path.islink(root / "link.sh")


def test_fix_of_an_explicit_symlink_out_of_the_tree(two_trees):
    """Named on the command line, a symlink to a file elsewhere is not rewritten through the link."""
    top, target, outside = two_trees
    before = _state(top)
    cp = hostile.kv4lint("fix", *CLI_TARGET, "--jobs", "1", str(target / "link_out.sh"), str(target / "serve.sh"))
    out, err = hostile.text(cp)
    assert "Traceback" not in err, err
    after = _state(top)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert changed == ["target/serve.sh"], (changed, out, err)
    assert "link_out.sh" in out + err  # the user is told it was not fixed


@pytest.mark.parametrize("launcher", ["compose.yaml", "with_config.sh"])
def test_fix_config_file_outside_the_tree_is_not_edited(two_trees, monkeypatch, launcher):
    """A ``--config`` YAML outside the tree: the launch is reported, the YAML is never rewritten."""
    top, target, outside = two_trees
    monkeypatch.chdir(target)  # SGLang reads --config relative to the server's working directory
    yaml_before = (outside / "sgl.yaml").read_bytes()
    cp = hostile.kv4lint("check", *CLI_TARGET, "--gpu", "h100", "--jobs", "1", str(target / launcher), cwd=target)
    out, err = hostile.text(cp)
    assert _reported(out, target / launcher, "KV404"), "precondition: the config is read\n" + out + err
    cp = hostile.kv4lint("fix", *CLI_TARGET, "--gpu", "h100", "--unsafe-fixes", "--jobs", "1",
                         str(target / launcher), cwd=target)
    out, err = hostile.text(cp)
    assert "Traceback" not in err, err
    assert (outside / "sgl.yaml").read_bytes() == yaml_before, out + err
    assert not [p for p in outside.rglob("*") if p.name.endswith(".kv4lint-tmp")]


def test_fix_leaves_unchanged_files_untouched(two_trees):
    """Files with nothing to fix keep their mtime (no rewrite with the same bytes)."""
    top, target, _ = two_trees
    st = os.stat(target / "clean.sh").st_mtime_ns
    cp = hostile.kv4lint("fix", *CLI_TARGET, "--jobs", "1", str(target))
    assert "Traceback" not in hostile.text(cp)[1]
    assert os.stat(target / "clean.sh").st_mtime_ns == st


def test_yaml_python_tags_construct_nothing_in_process(tmp_path, monkeypatch):
    """The YAML frontend, called directly, on tags that name callables: nothing is called."""
    import os as os_mod

    called = []
    monkeypatch.setattr(os_mod, "system", lambda *a: called.append(a) or 0)
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: called.append(a))
    from kv4lint.base.settings import Settings
    from kv4lint.pipeline.runner import lint_text

    text = ("a: !!python/object/apply:os.system [\"echo hi\"]\n"
            "b: !!python/object/new:subprocess.Popen [[\"echo\"]]\n"
            "c: !!python/name:os.system\n"
            "d: !!python/module:os\n"
            f"command: {SH_LAUNCH}\n"
            "e: !custom {x: 1}\n")
    rep = lint_text("tags.yaml", text, Settings(sglang_version="0.5.23"), "yaml")
    assert called == []
    assert all("internal error" not in e.message for e in rep.errors), rep.errors
