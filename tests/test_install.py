"""The documented install routes, each run as someone outside this checkout would (issue 15):

- ``pip install PATH`` from a clone, and ``pip install "git+file://…@SHA"``, each into a fresh
  virtual environment: the console script, ``python -m kv4lint`` and the flake8 plugin work, and the
  package imported is the installed one, not a checkout; with no extras, ``kv4lint server`` answers an
  editor (the language server is part of the default install);
- pre-commit with ``repo:`` (a file URL to a clone) and ``rev:`` a commit that exists (what docs/ci.md
  documents: a commit sha, or a release tag once tags are published);
- the ``repo: local`` recipe of docs/ci.md (``language: system``: kv4lint installed in the environment
  pre-commit runs in).

The hook repository is a commit of this working tree (the tree may hold uncommitted work). pip is pointed
at a wheelhouse of the dependencies with ``--no-index`` (built once, shared with test_precommit), so the
routes run offline after the first time.  Each builds a fresh environment: ``slow``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml

from test_precommit import BAD, GIT_ENV, GOOD, _git, _wheelhouse

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, str]:
    """A git repository holding this working tree's package as one commit: (its path, the commit's sha)."""
    repo = tmp_path_factory.mktemp("kv4lint-clone")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(ROOT / "kv4lint", repo / "kv4lint",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "kv4lint under test", cwd=repo)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout.strip()
    return repo, sha


@pytest.fixture(scope="module")
def pip_env() -> dict:
    wh = _wheelhouse()
    e = {**os.environ, **GIT_ENV, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wh),
         "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for k in ("PIP_REQUIRE_VIRTUALENV", "PYTHONPATH", "VIRTUAL_ENV"):
        e.pop(k, None)
    return e


def fresh_venv(where: Path) -> Path:
    venv.create(where, with_pip=True, clear=True)
    return where / "bin"


def project(tmp: Path) -> Path:
    p = tmp / "project"
    p.mkdir()
    (p / "pyproject.toml").write_text('[tool.kv4lint]\nsglang-version = "0.5.23"\n')  # the release fixes are for
    (p / "serve.sh").write_text(BAD)
    (p / "launch.py").write_text('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", '
                                 '"--model-path", "m", "--kv-cache-dtype", "fp4_e2m1"])\n')
    return p


def assert_installed_works(bin_dir: Path, venv_dir: Path, cwd: Path, env: dict) -> None:
    env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "KV4LINT_NO_CACHE": "1"}
    r = subprocess.run([str(bin_dir / "kv4lint"), "check", "serve.sh"], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1 and "serve.sh:3:20: KV406" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(bin_dir / "python"), "-c", "import kv4lint; print(kv4lint.__file__)"], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120)
    assert Path(r.stdout.strip()).resolve().is_relative_to(venv_dir.resolve()), r.stdout + r.stderr
    r = subprocess.run([str(bin_dir / "python"), "-m", "flake8", "--select", "KV4", "launch.py"], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "launch.py:2:" in r.stdout and "KV406" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(bin_dir / "python"), "-m", "kv4lint", "chek"], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2


def lsp_session(command: list[str], cwd: Path, env: dict, path: Path, text: str) -> tuple[list, int]:
    """An editor's session with ``command`` (LSP over stdio): open ``path`` holding ``text``, read the
    diagnostics published for it, shut down.  Returns (the diagnostics, the server's exit status)."""
    def message(obj: dict) -> bytes:
        body = json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    session = b"".join(message(m) for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": path.as_uri(), "languageId": "shellscript", "version": 1, "text": text}}}])
    p = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(session)
    p.stdin.flush()
    diagnostics = None
    while diagnostics is None:  # the answer to initialize, then the diagnostics
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            c = p.stdout.read(1)
            assert c, p.stderr.read().decode()
            header += c
        body = json.loads(p.stdout.read(int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])))
        if body.get("method") == "textDocument/publishDiagnostics":
            diagnostics = body["params"]["diagnostics"]
    p.stdin.write(message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
                  + message({"jsonrpc": "2.0", "method": "exit"}))
    p.stdin.close()
    return diagnostics, p.wait(timeout=120)


def test_pip_install_from_a_clone(clone, pip_env, tmp_path):
    """No extras: the command line, the flake8 plugin and the language server all work."""
    repo, _ = clone
    bin_dir = fresh_venv(tmp_path / "venv")
    r = subprocess.run([str(bin_dir / "pip"), "install", "-q", str(repo)], env=pip_env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    cwd = project(tmp_path)
    assert_installed_works(bin_dir, tmp_path / "venv", cwd, pip_env)
    env = {**pip_env, "KV4LINT_NO_CACHE": "1"}
    diagnostics, status = lsp_session([str(bin_dir / "kv4lint"), "server"], cwd, env, cwd / "serve.sh", BAD)
    assert status == 0
    assert [(d["code"], d["range"]["start"]) for d in diagnostics] == [("KV406", {"line": 2, "character": 19})]


def test_pip_install_from_a_git_url_at_a_commit(clone, pip_env, tmp_path):
    repo, sha = clone
    bin_dir = fresh_venv(tmp_path / "venv")
    r = subprocess.run([str(bin_dir / "pip"), "install", "-q", f"git+{repo.as_uri()}@{sha}"],
                       env=pip_env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_installed_works(bin_dir, tmp_path / "venv", project(tmp_path), pip_env)


def pre_commit(cwd: Path, env: dict, *args: str) -> tuple[int, str]:
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=900)
    return r.returncode, r.stdout + r.stderr


def git_project(tmp: Path, config: dict) -> Path:
    p = project(tmp)
    (p / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    _git("init", "-q", cwd=p)
    _git("add", "-A", cwd=p)
    return p


def test_pre_commit_with_repo_url_and_a_commit_rev(clone, pip_env, tmp_path):
    repo, sha = clone
    env = {**pip_env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
    p = git_project(tmp_path, {"repos": [{"repo": repo.as_uri(), "rev": sha,
                                          "hooks": [{"id": "kv4lint"}, {"id": "kv4lint-fix"}]}]})
    code, out = pre_commit(p, env, "--all-files")
    assert code == 1, out
    assert "serve.sh:3:20: KV406" in out and "files were modified by this hook" in out
    assert (p / "serve.sh").read_text() == GOOD
    _git("add", "-A", cwd=p)
    code, out = pre_commit(p, env, "--all-files")
    assert code == 0, out


def test_pre_commit_local_hook_recipe(tmp_path):
    """docs/ci.md's ``repo: local`` recipe, with kv4lint installed where pre-commit runs (this environment)."""
    doc = (ROOT / "docs" / "ci.md").read_text()
    start = doc.index("```yaml\n# .pre-commit-config.yaml (repo: local)")
    recipe = yaml.safe_load(doc[start + len("```yaml\n"):doc.index("```", start + 7)])
    hook = recipe["repos"][0]["hooks"][0]
    assert recipe["repos"][0]["repo"] == "local" and hook["language"] == "system"
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PRE_COMMIT_COLOR": "never", "KV4LINT_NO_CACHE": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    p = git_project(tmp_path, recipe)
    code, out = pre_commit(p, env, "--all-files")
    assert code == 1 and "serve.sh:3:20: KV406" in out, out
    (p / "serve.sh").write_text(GOOD)
    (p / "launch.py").write_text("print('no launch')\n")
    code, out = pre_commit(p, env, "--all-files")
    assert code == 0, out
