"""``--severity {warning,error}`` (issue 26): the least severity reported, applied where ``select``/``ignore``
are (kv4lint.base.settings.Settings.enabled), so every output, the summary, the exit status, the fixes and
``--add-suppressions`` agree; also ``severity =`` in ``[tool.kv4lint]`` / kv4lint.toml and flake8's
``--kv4-severity``.

The tree: SGLang 0.5.23 and no ``--gpu``. ``--kv-cache-dtype nvfp4`` is refused on some GPUs of the
platform (sm80, sm90) and not on Blackwell: KV404 warnings; ``fp4_e2m1`` is not a choice in 0.5.23 on any GPU:
a KV406 error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint.base.model import Severity
from kv4lint.base.settings import SEVERITIES, Settings
from kv4lint.cli import main
from kv4lint.settings.options import BY_NAME, FLAKE8, TOML, TOML_KEYS

LAUNCH = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype {}\n"
PY_LAUNCH = ('import subprocess\n\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path",\n'
             '                "meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "{}"])\n')


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """``err.sh`` (one KV406 error) and ``warn.sh`` (KV404 warnings), in a repository of their own."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "err.sh").write_text(LAUNCH.format("fp4_e2m1"))
    (tmp_path / "warn.sh").write_text(LAUNCH.format("nvfp4"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["check", "--sglang-version", "0.5.23", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def codes_and_severities(out: str) -> list[tuple[str, str]]:
    """``path:l:c: CODE (severity) ...`` lines -> (code, severity)."""
    rows = []
    for line in out.splitlines():
        parts = line.split(": ", 1)
        if len(parts) == 2 and parts[1].startswith("KV"):
            code, sev = parts[1].split()[:2]
            rows.append((code, sev.strip("()")))
    return rows


def test_the_tree_has_one_error_and_warnings_by_default(tree, capsys):
    rc, out, _ = check(capsys, ".")
    rows = codes_and_severities(out)
    warnings = [r for r in rows if r == ("KV404", "warning")]
    assert rc == 1
    assert ("KV406", "error") in rows and warnings and len(rows) == 1 + len(warnings), out
    said = f"{len(warnings)} warning" + ("s" if len(warnings) > 1 else "")
    assert f"Found {len(rows)} findings (1 error, {said}) in 2 files" in out


def test_severity_error_shows_and_counts_the_error_only(tree, capsys):
    rc, out, _ = check(capsys, "--severity", "error", ".")
    assert rc == 1
    assert codes_and_severities(out) == [("KV406", "error")], out
    assert "Found 1 finding (1 error) in 2 files" in out and "warning" not in out


def test_only_warnings_exit_0_under_severity_error(tree, capsys):
    rc, out, _ = check(capsys, "warn.sh")
    assert rc == 1 and "KV404" in out
    rc, out, _ = check(capsys, "--severity", "error", "warn.sh")
    assert rc == 0, out
    assert out.strip() == "Found 0 findings in 1 file."
    assert check(capsys, "--severity", "warning", "warn.sh")[0] == 1  # the default, said


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "gitlab", "concise", "full"])
def test_every_format_leaves_the_warnings_out(tree, capsys, fmt):
    rc, out, _ = check(capsys, "--format", fmt, "--severity", "error", ".")
    assert rc == 1
    if fmt == "json":
        data = json.loads(out)
        assert [(f["code"], f["severity"]) for f in data["findings"]] == [("KV406", "error")]
    elif fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert [(r["ruleId"], r["level"]) for r in results] == [("KV406", "error")]
    elif fmt == "gitlab":
        assert [f["check_name"] for f in json.loads(out)] == ["KV406"]
    else:
        assert "KV406" in out and "KV404" not in out, out


def test_json_output_by_default_has_both(tree, capsys):
    rc, out, _ = check(capsys, "--format", "json", ".")
    assert rc == 1
    found = {(f["code"], f["severity"]) for f in json.loads(out)["findings"]}
    assert found == {("KV406", "error"), ("KV404", "warning")}


def test_statistics_count_the_reported_findings_only(tree, capsys):
    rc, out, _ = check(capsys, "--statistics", "--severity", "error", ".")
    assert rc == 1 and "KV406" in out and "KV404" not in out


def test_a_cached_run_does_not_reuse_another_severitys_report(tree, capsys, tmp_path_factory, monkeypatch):
    from kv4lint.pipeline import cache as kv4lint_cache

    monkeypatch.setattr(kv4lint_cache, "RACY_S", 0.0)  # the files are seconds old: their reports are kept
    cache = str(tmp_path_factory.mktemp("cache"))
    for severity, want in (("warning", {"KV404", "KV406"}), ("error", {"KV406"}), ("warning", {"KV404", "KV406"})):
        rc, out, _ = check(capsys, "--cache-dir", cache, "--format", "json", "--severity", severity, ".")
        assert {f["code"] for f in json.loads(out)["findings"]} == want, severity


def test_fix_and_diff_leave_the_warnings_alone(tree, capsys):
    rc = main(["fix", "--diff", "--sglang-version", "0.5.23", "--severity", "error", "."])
    out, err = capsys.readouterr()
    assert rc == 1 and "err.sh" in out and "warn.sh" not in out
    assert "Would fix 1 finding in 1 file (0 remaining)." in err
    rc = main(["fix", "--sglang-version", "0.5.23", "--severity", "error", "."])
    capsys.readouterr()
    assert rc == 0
    assert "fp8_e4m3" in (tree / "err.sh").read_text()
    assert (tree / "warn.sh").read_text() == LAUNCH.format("nvfp4")


def test_add_suppressions_only_for_reported_findings(tree, capsys):
    rc, _, err = check(capsys, "--add-suppressions", "--severity", "error", ".")
    assert rc == 0 and "Added 1 suppression comment." in err
    assert "kv4lint: disable=KV406" in (tree / "err.sh").read_text()
    assert (tree / "warn.sh").read_text() == LAUNCH.format("nvfp4")


@pytest.mark.parametrize("name", ["kv4lint.toml", "pyproject.toml"])
def test_the_severity_key_of_the_configuration(tree, capsys, name):
    table = "[tool.kv4lint]\n" if name == "pyproject.toml" else ""
    (tree / name).write_text(f'{table}sglang-version = "0.5.23"\nseverity = "error"\n')
    rc, out, _ = check(capsys, ".")
    assert rc == 1 and codes_and_severities(out) == [("KV406", "error")], out
    assert check(capsys, "warn.sh")[0] == 0
    rc, out, _ = check(capsys, "--severity", "warning", ".")  # the command line over the file
    assert rc == 1 and ("KV404", "warning") in codes_and_severities(out)


@pytest.mark.parametrize("value", ['"fatal"', '"Error"', "1", "true", '["error"]'])
def test_a_bad_severity_in_the_configuration_is_a_usage_error(tree, capsys, value):
    (tree / "kv4lint.toml").write_text(f"severity = {value}\n")
    rc, out, err = check(capsys, ".")
    assert rc == 2 and out == ""
    assert "kv4lint.toml: severity: expected 'warning' or 'error', got" in err and "Traceback" not in err


def test_a_bad_severity_on_the_command_line_is_a_usage_error(tree, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", "--severity", "fatal", "."])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "kv4lint: error: --severity: expected 'warning' or 'error', got 'fatal'; see 'kv4lint check --help'" in err


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "KV4", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_flake8s_kv4_severity(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "err.py").write_text(PY_LAUNCH.format("fp4_e2m1"))
    (tmp_path / "warn.py").write_text(PY_LAUNCH.format("nvfp4"))
    cp = flake8("--kv4-sglang-version", "0.5.23", "err.py", "warn.py", cwd=tmp_path)
    assert cp.returncode == 1 and "err.py" in cp.stdout and "warn.py" in cp.stdout, (cp.stdout, cp.stderr)
    cp = flake8("--kv4-sglang-version", "0.5.23", "--kv4-severity", "error", "err.py", "warn.py", cwd=tmp_path)
    assert cp.returncode == 1, cp.stderr
    assert [ln.split(":")[0] for ln in cp.stdout.splitlines()] == ["err.py"] and "KV406" in cp.stdout
    cp = flake8("--kv4-sglang-version", "0.5.23", "--kv4-severity", "error", "warn.py", cwd=tmp_path)
    assert cp.returncode == 0 and cp.stdout == "", (cp.stdout, cp.stderr)
    (tmp_path / "setup.cfg").write_text("[flake8]\nkv4-severity = error\nkv4-sglang-version = 0.5.23\n")
    cp = flake8("warn.py", cwd=tmp_path)
    assert cp.returncode == 0 and cp.stdout == "", (cp.stdout, cp.stderr)
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "kv4lint.toml").write_text('sglang-version = "0.5.23"\nseverity = "error"\n')
    cp = flake8("warn.py", "err.py", cwd=tmp_path)  # flake8 reads [tool.kv4lint] / kv4lint.toml too
    assert cp.returncode == 1 and [ln.split(":")[0] for ln in cp.stdout.splitlines()] == ["err.py"], cp.stdout


def test_a_bad_kv4_severity_stops_flake8(tmp_path):
    (tmp_path / "warn.py").write_text(PY_LAUNCH.format("nvfp4"))
    cp = flake8("--kv4-severity", "fatal", "warn.py", cwd=tmp_path)
    assert cp.returncode == 2 and cp.stdout == ""
    assert "--kv4-severity fatal: expected 'warning' or 'error', got 'fatal'" in cp.stderr


def test_the_table_declares_it_for_the_cli_the_configuration_and_flake8():
    opt = BY_NAME["severity"]
    assert opt.where >= {TOML, FLAKE8} and "severity" in TOML_KEYS and opt.choices == SEVERITIES
    assert set(SEVERITIES) == {s.value for s in Severity}  # every severity a finding can have, least first
    assert Settings().severity == "warning"
    s = Settings(severity="error")
    assert s.enabled("KV401", "error") and not s.enabled("KV401", "warning") and s.enabled("KV401")
    assert Settings(severity="error", ignore=["KV401"]).enabled("KV401", "error") is False
