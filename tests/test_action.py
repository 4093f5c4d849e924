"""The composite GitHub Action (``action.yml``) and the GitLab job of docs/ci.md, their steps run for real.

The action's ``run:`` steps are run in order in bash, as a GitHub runner runs them (``bash --noprofile --norc
-eo pipefail``), with the ``${{ ... }}`` of their ``env:`` filled in as GitHub would: ``github.action_path`` is a
copy of this working tree, ``runner.temp`` a temporary folder, ``inputs.*`` the defaults or what the test passes,
``steps.check.outputs.*`` what the step wrote to ``$GITHUB_OUTPUT``.  ``uses:`` steps (setup-python, the SARIF
upload) are not run: setup-python's ``python-path`` is this interpreter (and no ``python`` of it is put on the
``PATH``: the action must not need one), and the upload's input is checked to be the SARIF file the check step
wrote.  ``$GITHUB_ENV`` and ``$GITHUB_PATH`` are files the steps could write to change the job's later steps: they
must stay empty.  The install step really installs kv4lint into a fresh virtual environment (offline, from the
wheelhouse of tests/test_precommit.py): ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
import yaml

from test_precommit import BAD, GIT_ENV, _git, _wheelhouse
from test_reporters import GITLAB_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_shape():
    """Composite; setup-python, a pinned install, check, upload-sarif; no expression inside a script."""
    action = load_action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = [s["uses"] for s in steps if "uses" in s]
    # the current majors (setup-python 6 runs on Node 24; CodeQL Action 3 is deprecated in December 2026)
    assert uses == ["actions/setup-python@v6", "github/codeql-action/upload-sarif@v4"]
    setup = steps[0]
    # its Python is the action's own: the caller's python, pip and PATH stay as they were for later steps
    assert str(setup["with"]["update-environment"]).lower() == "false" and setup["id"] == "python"
    for s in steps:
        if "run" in s:
            assert s["shell"] == "bash"
            # inputs reach a script through env:, never pasted into it (script injection)
            assert "${{" not in s["run"], s["name"]
            assert "GITHUB_ENV" not in s["run"] and "GITHUB_PATH" not in s["run"], s["name"]
    install = next(s for s in steps if s.get("name", "").startswith("Install"))
    assert install["env"]["KV4LINT_SOURCE"] == "${{ github.action_path }}"  # the action's own commit
    assert install["env"]["KV4LINT_PYTHON"] == "${{ steps.python.outputs.python-path }}"
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"  # absolute, as the check wrote it
    # hashFiles() sees the workspace only: an absolute sarif-file made it skip the upload, silently
    assert "always()" in upload["if"] and "hashFiles" not in upload["if"]
    assert "steps.check.outputs.sarif-written == 'true'" in upload["if"]


class Runner:
    """Runs the action's ``run:`` steps as a GitHub runner would, in ``workspace``."""

    def __init__(self, tmp: Path, workspace: Path, env: dict):
        self.action = load_action()
        self.temp = tmp / "runner-temp"
        self.temp.mkdir(exist_ok=True)
        self.action_path = tmp / "action"
        if not self.action_path.exists():
            for name in ("pyproject.toml", "README.md", "action.yml"):
                self.action_path.mkdir(exist_ok=True)
                shutil.copy2(ROOT / name, self.action_path / name)
            shutil.copytree(ROOT / "kv4lint", self.action_path / "kv4lint",
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
        self.workspace = workspace
        self.env = env
        self.outputs: dict[str, dict] = {}  # steps.ID.outputs, kept from one run() to the next

    def value(self, expr: str, inputs: dict, outputs: dict) -> str:
        name = expr.strip()
        if name == "github.action_path":
            return str(self.action_path)
        if name == "steps.python.outputs.python-path":  # setup-python's interpreter, not on the PATH
            return sys.executable
        if name == "runner.temp":
            return str(self.temp)
        if name.startswith("inputs."):
            key = name[len("inputs."):]
            return inputs.get(key, self.action["inputs"][key].get("default", ""))
        if name.startswith("steps."):
            _, step, _, key = name.split(".")
            return outputs.get(step, {}).get(key, "")
        raise AssertionError(f"an expression the test does not know: {expr}")

    def run(self, inputs: dict | None = None, *, only: str | None = None) -> tuple[int, str, dict]:
        """Run the ``run:`` steps (those whose name starts with ``only``, when given); returns
        (the exit status of the first step that failed, else 0; the output; the steps' outputs)."""
        inputs = {k: str(v) for k, v in (inputs or {}).items()}
        outputs = self.outputs
        log = []
        for step in self.action["runs"]["steps"]:
            if "run" not in step or (only and not step["name"].startswith(only)):
                continue
            gh_out = self.temp / "github_output"
            gh_out.write_text("")
            env = {**self.env, "GITHUB_OUTPUT": str(gh_out), "RUNNER_TEMP": str(self.temp),
                   "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_ENV": str(self.temp / "github_env"),
                   "GITHUB_PATH": str(self.temp / "github_path")}
            for k, v in (step.get("env") or {}).items():
                env[k] = EXPR.sub(lambda m: self.value(m.group(1), inputs, outputs), str(v))
            script = self.temp / "step.sh"
            script.write_text(step["run"])
            r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                               cwd=self.workspace, env=env, capture_output=True, text=True, timeout=900)
            log.append(f"## {step['name']} -> {r.returncode}\n{r.stdout}{r.stderr}")
            if "id" in step:
                outputs[step["id"]] = dict(line.split("=", 1) for line in gh_out.read_text().splitlines() if line)
            for name in ("github_env", "github_path"):  # nothing the job's later steps would see
                assert not (self.temp / name).exists() or not (self.temp / name).read_text(), step["name"]
            if r.returncode != 0:
                return r.returncode, "\n".join(log), outputs
        return 0, "\n".join(log), outputs


@pytest.fixture(scope="module")
def runner_env() -> dict:
    wh = _wheelhouse()
    env = {**os.environ, **GIT_ENV, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wh),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "KV4LINT_NO_CACHE": "1"}
    for k in ("PIP_REQUIRE_VIRTUALENV", "PYTHONPATH", "VIRTUAL_ENV", "GITHUB_WORKSPACE", "CI_PROJECT_DIR"):
        env.pop(k, None)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory, runner_env) -> Runner:
    """The install step, run once: kv4lint from the action's own tree in a virtual environment of its own."""
    tmp = tmp_path_factory.mktemp("action")
    ws = tmp / "workspace"
    ws.mkdir()
    runner = Runner(tmp, ws, runner_env)
    code, log, _ = runner.run(only="Install")
    assert code == 0, log
    assert "kv4lint 0.1.0" in log
    return runner


def workspace(tmp: Path, script: str) -> Path:
    ws = tmp / "workspace"
    (ws / "scripts").mkdir(parents=True)
    (ws / "pyproject.toml").write_text('[tool.kv4lint]\nsglang-version = "0.5.23"\n')
    (ws / "scripts" / "serve.sh").write_text(script)
    _git("init", "-q", cwd=ws)
    return ws


@pytest.mark.slow
def test_action_steps_report_and_fail_on_a_refused_launch(installed, tmp_path):
    ws = workspace(tmp_path, BAD)
    runner = Runner(installed.temp.parent, ws, installed.env)
    code, log, outputs = runner.run(only="Check")
    assert code == 0, log  # the check step records the status, so that the upload runs
    assert outputs["check"]["exit-code"] == "1", log
    assert "::error file=scripts/serve.sh,line=3,col=20," in log and "title=KV406" in log
    sarif = json.loads((ws / "kv4lint.sarif").read_text())
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    (res,) = sarif["runs"][0]["results"]
    assert res["ruleId"] == "KV406"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "scripts/serve.sh"
    code, log, _ = runner.run(only="Fail")
    assert code == 1, log  # the job fails

    # fail-on-findings: false reports and passes
    code, log, outputs = runner.run({"fail-on-findings": "false", "sarif-file": "k.sarif", "paths": "scripts"},
                                    only="Check")
    assert outputs["check"]["exit-code"] == "0", log
    assert json.loads((ws / "k.sarif").read_text())["runs"][0]["results"]
    assert runner.run({"fail-on-findings": "false"}, only="Fail")[0] == 0


@pytest.mark.slow
def test_action_steps_pass_a_clean_tree_and_stop_on_a_bad_option(installed, tmp_path):
    ws = workspace(tmp_path, BAD.replace("fp4_e2m1", "fp8_e4m3"))
    runner = Runner(installed.temp.parent, ws, installed.env)
    code, log, outputs = runner.run(only="Check")
    assert outputs["check"]["exit-code"] == "0", log
    assert runner.run(only="Fail")[0] == 0
    code, log, outputs = runner.run({"args": "--gpu h1OO", "fail-on-findings": "false"}, only="Check")
    assert outputs["check"]["exit-code"] == "2", log  # a usage error is never turned into a pass
    assert runner.run({"fail-on-findings": "false"}, only="Fail")[0] == 2


@pytest.mark.slow
def test_action_takes_lists_safely_and_an_absolute_sarif_file(installed, tmp_path):
    """``paths`` one per line (a name with spaces is one path), ``args`` split as a shell splits words (quotes
    keep spaces, nothing is expanded), and an absolute ``sarif-file`` is written and uploaded."""
    ws = workspace(tmp_path, BAD)
    (ws / "my scripts").mkdir()
    (ws / "my scripts" / "serve.sh").write_text(BAD)
    (ws / "conf dir").mkdir()
    (ws / "conf dir" / "kv4lint.toml").write_text('sglang-version = "0.5.23"\n')
    (ws / "$(touch pwned)").mkdir()
    sarif = tmp_path / "reports" / "kv4lint.sarif"  # outside the workspace: hashFiles() would not see it
    sarif.parent.mkdir()
    runner = Runner(installed.temp.parent, ws, installed.env)
    paths = "my scripts\n\n  scripts  \n$(touch pwned)\n"
    code, log, outputs = runner.run({"paths": paths, "args": "--gpu \"$(id)\"", "sarif-file": str(sarif)},
                                    only="Check")
    assert outputs["check"]["exit-code"] == "2" and "unknown GPU '$(id)'" in log, log  # one word, never run
    code, log, outputs = runner.run({"paths": paths, "args": "--config 'conf dir/kv4lint.toml'",
                                     "sarif-file": str(sarif)}, only="Check")
    assert outputs["check"]["exit-code"] == "1", log
    assert not (ws / "pwned").exists()
    found = sorted(unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                   for r in json.loads(sarif.read_text())["runs"][0]["results"])
    assert found == ["my scripts/serve.sh", "scripts/serve.sh"]
    assert outputs["check"]["sarif-file"] == str(sarif) and outputs["check"]["sarif-written"] == "true"
    # the relative default is made absolute too, so the upload finds it wherever it runs
    code, log, outputs = runner.run({"paths": "scripts"}, only="Check")
    assert outputs["check"]["sarif-file"] == str(ws / "kv4lint.sarif")


@pytest.mark.slow
def test_action_fails_loudly_where_it_cannot_upload(installed, tmp_path):
    """No SARIF report to upload (kv4lint could not run, the args do not parse): an error annotation says so,
    and the job fails, whatever fail-on-findings says."""
    ws = workspace(tmp_path, BAD.replace("fp4_e2m1", "fp8_e4m3"))
    runner = Runner(installed.temp.parent, ws, installed.env)
    for args in ("--severity fatal", "--gpu 'h100"):  # a usage error; a quote never closed
        code, log, outputs = runner.run({"args": args, "fail-on-findings": "false"}, only="Check")
        assert code == 0 and outputs["check"]["exit-code"] == "2", log
        assert "sarif-written" not in outputs["check"]
        code, log, _ = runner.run({"fail-on-findings": "false"}, only="Fail")
        assert code == 2, log
        assert "::error title=kv4lint::no SARIF report" in log and "nothing was uploaded" in log
    code, log, _ = runner.run({"upload-sarif": "false"}, only="Fail")  # no upload asked for: the status alone
    assert code == 2 and "no SARIF report" not in log, log


def test_the_documented_workflow_can_upload_in_a_private_repository():
    """docs/ci.md's workflow: the permissions the SARIF upload needs, public or private (actions: read), and the
    note that code scanning in a private repository needs GitHub's code security feature."""
    doc = (ROOT / "docs" / "ci.md").read_text()
    start = doc.index("```yaml\n# .github/workflows/kv4lint.yml")
    workflow = yaml.safe_load(doc[start + len("```yaml\n"):doc.index("```", start + 7)])
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    steps = workflow["jobs"]["kv4lint"]["steps"]
    assert steps[0] == {"uses": "actions/checkout@v6"} and steps[1]["uses"] == "<owner>/kv4lint@<commit sha>"
    assert "GitHub Code Security" in doc and "upload-sarif: false" in doc


def gitlab_job() -> dict:
    doc = (ROOT / "docs" / "ci.md").read_text()
    start = doc.index("```yaml\n# .gitlab-ci.yml")
    return yaml.safe_load(doc[start + len("```yaml\n"):doc.index("```", start + 7)])


@pytest.mark.slow
def test_gitlab_job_of_the_docs(installed, tmp_path):
    """docs/ci.md's GitLab job: its script (the install aside: kv4lint is installed) writes a Code Quality
    report GitLab accepts, with repository paths."""
    job = gitlab_job()["kv4lint"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert job["artifacts"]["when"] == "always"
    ws = workspace(tmp_path, BAD)
    env = {**installed.env, "CI_PROJECT_DIR": str(ws),
           "PATH": f"{installed.temp / 'kv4lint-venv' / 'bin'}{os.pathsep}{installed.env['PATH']}"}
    for k, v in (job.get("variables") or {}).items():
        env[k] = str(v)
    lines = [line for line in job["script"] if not line.startswith("pip install")]
    r = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=ws, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr  # the job fails on findings, the report is kept (when: always)
    report = json.loads((ws / "gl-code-quality-report.json").read_text())
    jsonschema.validate(report, GITLAB_SCHEMA)
    assert [(i["check_name"], i["location"]) for i in report] == [
        ("KV406", {"path": "scripts/serve.sh", "lines": {"begin": 3, "end": 3}})]
