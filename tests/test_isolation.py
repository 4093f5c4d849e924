"""No module of the scanned tree is ever imported, on any entry route (issue 20, item 1).

Python puts the working directory first on ``sys.path`` under ``python -m``
and ``python -c``; kv4lint imports most of what it uses lazily.  Each test
plants, in the repository being checked, modules named like kv4lint's
dependencies and the standard-library modules it imports after start-up
(``pathspec.py``, ``tree_sitter.py``, ``libcst.py``, ``torch.py``, ``ruamel/``,
``markdown_it/``, ``json.py``, ``sitecustomize.py`` ...); each writes a marker
file when imported.  Every route then runs inside that repository -- ``python -m
kv4lint`` (check, ``fix --diff``, fix, ``--platform auto``), the console script,
the pre-commit hooks' commands, flake8 and ``python -m flake8``, the libcst
codemod and the Python API -- and must leave no marker, with the same findings
(and fixed bytes) as in the same repository without the planted modules.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import hostile

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
BIN = Path(PY).parent

# Modules the third-party libraries kv4lint uses are imported as (a package directory for some).
DEPENDENCIES = ["pathspec", "immutables/", "tree_sitter", "tree_sitter_bash", "libcst", "torch", "ruamel/",
                "markdown_it/", "packaging/", "nbformat", "mdurl/", "typing_extensions", "numpy/"]
# Standard-library modules kv4lint imports after start-up (measured with -X importtime), and the
# files Python itself runs at start-up, which kv4lint's imports must not bring in either.
STDLIB = ["json/", "difflib", "hashlib", "tempfile", "tomllib/", "glob", "html/", "argparse", "dataclasses",
          "subprocess", "shutil", "textwrap", "tokenize", "ast", "typing", "signal", "multiprocessing/",
          "concurrent/", "logging/", "__future__", "contextlib", "sitecustomize", "usercustomize"]
# `python -m flake8` and `python -m libcst.tool` import these themselves, from the working directory,
# before kv4lint's code runs (measured: planted one by one, each of these fired with kv4lint's plugin
# and codemod already guarded): the tool's own exposure, which kv4lint cannot change
# (docs/security.md: run them as console scripts or `python -P`).  Everything else stays planted.
FLAKE8_OWN = {"argparse", "ast", "json/", "logging/", "multiprocessing/", "shutil", "signal", "subprocess",
              "tempfile", "textwrap", "tokenize", "typing"}
LIBCST_TOOL_OWN = {"argparse", "ast", "concurrent/", "dataclasses", "difflib", "json/", "libcst", "logging/",
                   "multiprocessing/", "shutil", "signal", "subprocess", "textwrap", "tokenize", "typing"}

LAUNCHES = {
    "serve.sh": hostile.GOOD_SH,
    "launch.py": hostile.GOOD_PY,
    "README.md": f"# Serving\n\n```bash\n{hostile.LAUNCH}\n```\n",
    "compose.yaml": f"services:\n  s:\n    image: lmsysorg/sglang:latest\n    command: {hostile.LAUNCH}\n",
    "Dockerfile": f"FROM lmsysorg/sglang:latest\nCMD {hostile.LAUNCH}\n",
    "Makefile": f"serve:\n\t{hostile.LAUNCH}\n",
    ".gitignore": "*.log\n",
}
FINDING = re.compile(r"^(\./)?[^:\s]+:\d+:\d+: KV4\d\d\b.*$", re.M)


def plant(root: Path, markers: Path, names: list[str]) -> None:
    for name in names:
        mod = name.rstrip("/")
        rel = f"{mod}/__init__.py" if name.endswith("/") else f"{mod}.py"
        hostile.write(root / rel, f"open({str(markers / mod)!r}, 'w').write('imported')\n")


def repo(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    for rel, text in LAUNCHES.items():
        hostile.write(root / rel, text)
    return root


@pytest.fixture
def trees(tmp_path):
    """(clean, hostile, markers): the same launches; ``hostile`` also holds the planted modules."""
    markers = tmp_path / "markers"
    markers.mkdir()
    clean, bad = repo(tmp_path, "clean"), repo(tmp_path, "hostile")
    return clean, bad, markers


def _run(args, cwd: Path, **env) -> subprocess.CompletedProcess:
    e = hostile.env()
    e.pop("PYTHONSAFEPATH", None)
    e.update(env)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=e, stdin=subprocess.DEVNULL,
                          timeout=hostile.TIMEOUT)


def _findings(cp: subprocess.CompletedProcess) -> list[str]:
    return sorted(m.group(0).removeprefix("./") for m in FINDING.finditer(cp.stdout))


def _outcome(cp: subprocess.CompletedProcess) -> tuple[list[str], str]:
    """The findings reported, or (none: fix, --diff) the whole output."""
    found = _findings(cp)
    return (found, "") if found else ([], re.sub(r" in \d+ files?", "", cp.stdout + cp.stderr))


def _launch_bytes(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in LAUNCHES}


def _same_run(trees, planted: list[str], args: list[str], **env) -> subprocess.CompletedProcess:
    """Run ``args`` in the clean tree and in the hostile one; same exit, findings and files, no marker."""
    clean, bad, markers = trees
    plant(bad, markers, planted)
    want = _run(args, clean, **env)
    got = _run(args, bad, **env)
    assert "Traceback" not in got.stderr, got.stderr
    assert sorted(os.listdir(markers)) == [], f"imported from the scanned tree: {os.listdir(markers)}\n{got.stderr}"
    assert got.returncode == want.returncode, (got.returncode, want.returncode, got.stdout, got.stderr)
    assert _outcome(got) == _outcome(want) and _outcome(want) != ([], ""), (got.stdout, want.stdout)
    assert got.stderr.splitlines()[-1:] == want.stderr.splitlines()[-1:], (got.stderr, want.stderr)
    assert _launch_bytes(bad) == _launch_bytes(clean)
    return got


KV4LINT = [PY, "-m", "kv4lint"]
TARGET = ["--isolated", "--no-cache", "--sglang-version", "0.5.23", "--jobs", "1"]


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"], ["fix"], ["check", "--platform", "auto"]],
                         ids=["check", "fix-diff", "fix", "platform-auto"])
def test_python_m_kv4lint(trees, command):
    cp = _same_run(trees, DEPENDENCIES + STDLIB, [*KV4LINT, *command, *TARGET, "."])
    if command == ["fix", "--diff"]:
        assert "+++ " in cp.stdout


def test_python_m_kv4lint_with_the_process_pool(trees):
    """Enough files for worker processes (forked, or spawned with PYTHONSAFEPATH where fork is missing)."""
    clean, bad, _ = trees
    for root in (clean, bad):
        for i in range(300):
            hostile.write(root / "pad" / f"p{i}.sh", f"#!/bin/sh\necho {i}\n")
    _same_run(trees, DEPENDENCIES + STDLIB, [*KV4LINT, "check", *TARGET[:-2], "--jobs", "2", "."])


def test_tree_named_on_the_command_line_from_elsewhere(trees, tmp_path):
    """`python -m kv4lint check REPO` run from above it, with REPO/src on PYTHONPATH."""
    clean, bad, markers = trees
    plant(bad / "src", markers, DEPENDENCIES)
    runs = {}
    for root in (clean, bad):
        runs[root] = _run([*KV4LINT, "check", *TARGET, root.name], tmp_path, PYTHONPATH=str(root / "src"))
    assert sorted(os.listdir(markers)) == [], runs[bad].stderr
    assert runs[bad].returncode == runs[clean].returncode == 1, runs[bad].stderr
    strip = lambda cp, r: sorted(f.replace(r.name + "/", "", 1) for f in _findings(cp))  # noqa: E731
    assert strip(runs[bad], bad) == strip(runs[clean], clean)


@pytest.mark.parametrize("command", [["check"], ["fix"]])
def test_console_script_with_the_tree_on_pythonpath(trees, command):
    """The console script has no working directory on sys.path, unless PYTHONPATH puts a tree directory
    there (a CI job's PYTHONPATH=src): those entries go too.  (Start-up names -- sitecustomize, the
    editable install's __future__ -- are Python's own, read before any package's code runs.)"""
    clean, bad, markers = trees
    plant(bad / "src", markers, DEPENDENCIES)
    (clean / "src").mkdir()
    _same_run(trees, [], [str(BIN / "kv4lint"), *command, *TARGET, "."], PYTHONPATH="src")


@pytest.mark.parametrize("hook", ["kv4lint", "kv4lint-fix"])
def test_pre_commit_hook_commands(trees, hook):
    """What pre-commit runs: the hook's entry (from .pre-commit-hooks.yaml) with the staged files."""
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    entry = hooks[hook]["entry"].split()
    assert entry[0] == "kv4lint"
    files = sorted(LAUNCHES)
    _same_run(trees, DEPENDENCIES + STDLIB, [str(BIN / "kv4lint"), *entry[1:], *TARGET, *files])


@pytest.mark.parametrize("how", ["console", "python-m"])
def test_flake8(trees, how):
    cmd = [str(BIN / "flake8")] if how == "console" else [PY, "-m", "flake8"]
    planted = DEPENDENCIES + STDLIB if how == "console" else \
        [n for n in DEPENDENCIES + STDLIB if n not in FLAKE8_OWN]
    cp = _same_run(trees, planted, [*cmd, "--select", "KV4", "--jobs", "1", "--kv4-sglang-version", "0.5.23", "."])
    assert "KV400" not in cp.stdout, cp.stdout


def test_libcst_codemod(trees):
    clean, bad, markers = trees
    args = [PY, "-m", "libcst.tool", "codemod", "-x", "kv4lint.codemod.FixKV4Cache", "--no-format", "-j", "1",
            "--sglang-version", "0.5.23", "--kv4lint-isolated", "launch.py"]
    plant(bad, markers, [n for n in DEPENDENCIES + STDLIB if n not in LIBCST_TOOL_OWN])
    want, got = _run(args, clean), _run(args, bad)
    assert sorted(os.listdir(markers)) == [], got.stderr
    assert got.returncode == want.returncode == 0, got.stderr
    assert (bad / "launch.py").read_text() == (clean / "launch.py").read_text() == hostile.GOOD_PY_FIXED


def test_python_api(trees):
    """A program run in the repository (`python -c`: its directory first on sys.path) calls the API
    with --platform auto; the caller's sys.path is back afterwards."""
    clean, bad, markers = trees
    code = ("import sys, kv4lint\nbefore = list(sys.path)\n"
            "fs = kv4lint.check_argv(['--model-path', 'm', '--kv-cache-dtype', 'fp4_e2m1'], platform='auto', "
            "sglang_version='0.5.23')\n"
            "fs += kv4lint.check_server_args({'kv_cache_dtype': 'fp4_e2m1'}, sglang_version='0.5.23')\n"
            "assert sys.path == before, (sys.path, before)\n"
            "print('\\n'.join(f'x:1:1: {f.code} {f.message}' for f in fs))\n")
    _same_run(trees, DEPENDENCIES + STDLIB, [PY, "-c", code])


# ---------------------------------------------------------------------------
# The modules that run before sys.path is clean


@pytest.mark.parametrize("module", ["kv4lint/__init__.py", "kv4lint/__main__.py", "kv4lint/files/__init__.py",
                                    "kv4lint/files/isolation.py", "kv4lint/base/__init__.py",
                                    "kv4lint/base/version.py"])
def test_nothing_is_imported_before_sys_path_is_clean(module):
    """Under `python -m kv4lint` these run with the working directory first on sys.path: they may import
    only os and sys (loaded by every interpreter before any code of kv4lint's runs) and kv4lint's own
    modules, until __main__ has dropped the untrusted entries.  (Not even `from __future__`: with a
    regular install __future__ is not loaded at start-up, and a __future__.py there would run.)"""
    tree = ast.parse((ROOT / module).read_text())
    body = tree.body
    if module.endswith("__main__.py"):
        cut = next(i for i, n in enumerate(body) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                   and getattr(n.value.func, "id", "") == "drop_untrusted")
        body = body[:cut]
    bad = []
    for node in body:
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name not in ("os", "sys")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module != "kv4lint.files.isolation":
                bad.append(node.module)
    assert bad == [], f"{module} imports {bad} before sys.path is clean"


def test_untrusted_entries(tmp_path, monkeypatch):
    from kv4lint.files import isolation

    tree = tmp_path / "repo"
    (tree / "src").mkdir(parents=True)
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(tree)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    entries = ["", ".", str(tree), "src", str(tree / "src"), str(other), site, os.path.dirname(os.__file__)]
    assert isolation.untrusted(entries) == ["", ".", str(tree), "src", str(tree / "src")]
    assert isolation.untrusted(entries, [str(other)]) == ["", ".", str(tree), "src", str(tree / "src"), str(other)]


def test_trusted_imports_restores_the_callers_path(tmp_path, monkeypatch):
    from kv4lint.files.isolation import trusted_imports

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), *sys.path])
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    before = list(sys.path)
    with trusted_imports():
        assert "" not in sys.path and str(tmp_path) not in sys.path
        assert os.environ["PYTHONSAFEPATH"] == "1"
        sys.path.append("/added/meanwhile")
    assert sys.path == before + ["/added/meanwhile"]
    assert "PYTHONSAFEPATH" not in os.environ


def test_a_virtual_environment_inside_the_tree_is_kept(tmp_path, monkeypatch):
    """Running from REPO/.venv: its site-packages is the installation, not the scanned code."""
    from kv4lint.files import isolation

    site = next(p for p in sys.path if p.endswith("site-packages"))
    monkeypatch.chdir(Path(site).parent)
    assert site not in isolation.untrusted(sys.path)


def test_path_arguments_are_the_named_directories(tmp_path, monkeypatch):
    from kv4lint.files.isolation import path_arguments

    monkeypatch.chdir(tmp_path)
    hostile.write(tmp_path / "a" / "b.sh", "")
    hostile.write(tmp_path / "a" / "c.sh", "")
    hostile.write(tmp_path / "top.sh", "")
    (tmp_path / "d").mkdir()
    argv = ["check", "--jobs", "1", "a/b.sh", "a/c.sh", "top.sh", "d", "missing.sh", "-"]
    assert path_arguments(argv) == ["a", ".", "d"]


def _message(m: dict) -> bytes:
    import json

    body = json.dumps(m).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _lsp_session(command: list[str], root: Path, env: dict) -> subprocess.CompletedProcess:
    """An editor's whole session: open serve.sh (unsaved text), wait for its diagnostics (the server judges it in
    its checking process, and stops what is left at shutdown), then end.  Returns what the server wrote."""
    uri = (root / "serve.sh").as_uri()
    p = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"".join(_message(m) for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "shellscript", "version": 1, "text": hostile.GOOD_SH}}}]))
    p.stdin.flush()
    import select
    import time

    out, end = b"", time.monotonic() + hostile.TIMEOUT
    while b"textDocument/publishDiagnostics" not in out and time.monotonic() < end:
        if select.select([p.stdout], [], [], max(0.0, end - time.monotonic()))[0]:
            chunk = p.stdout.read1(65536)
            if not chunk:
                break
            out += chunk
    rest, err = p.communicate(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
                              + _message({"jsonrpc": "2.0", "method": "exit", "params": None}), timeout=hostile.TIMEOUT)
    return subprocess.CompletedProcess(command, p.returncode, out + rest, err)


def _published(stdout: bytes) -> list[str]:
    """The codes of the diagnostics the server published, from its stdout."""
    import json

    codes = []
    for body in re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n", stdout)[1:]:
        m = json.loads(body)
        if m.get("method") == "textDocument/publishDiagnostics":
            codes += [f"{d['range']['start']['line'] + 1}: {d.get('code')}" for d in m["params"]["diagnostics"]]
    return codes


def test_language_server(trees):
    """`python -m kv4lint server` run in the repository, as an editor starts it: nothing of the tree is
    imported (pygls and its dependencies included, in the server and in its checking process), and the same
    diagnostics as in the clean tree."""
    pytest.importorskip("pygls")
    clean, bad, markers = trees
    plant(bad, markers, DEPENDENCIES + STDLIB + ["pygls/", "lsprotocol/", "cattrs/", "attrs/", "asyncio/"])
    runs = {}
    for root in (clean, bad):
        e = hostile.env()
        e.pop("PYTHONSAFEPATH", None)
        runs[root] = _lsp_session([*KV4LINT, "server", "--isolated", "--sglang-version", "0.5.23"], root, e)
    assert sorted(os.listdir(markers)) == [], runs[bad].stderr.decode()
    assert runs[bad].returncode == runs[clean].returncode == 0, runs[bad].stderr.decode()
    assert _published(runs[bad].stdout) == _published(runs[clean].stdout) == ["2: KV406"]
