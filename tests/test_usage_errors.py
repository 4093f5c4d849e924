"""A usage error is one line and exit status 2, as git's and ruff's: what is wrong, then where help is.

argparse printed its usage block (twenty lines for ``check``) before the line that matters; every route of a
command line kv4lint refuses now prints ``kv4lint: error: WHAT; see 'kv4lint COMMAND --help'`` alone.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kv4lint.cli import main


def _run(argv: list[str], capsys) -> tuple[int, list[str]]:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own exit, for a value its check refuses
        code = e.code
    cap = capsys.readouterr()
    assert cap.out == ""
    return code, cap.err.splitlines()


@pytest.mark.parametrize("argv,what,command", [
    # bad option values, checked by the option table
    (["check", "--sglang-version", "banana", "x.sh"], "--sglang-version: not a version: 'banana'", "check"),
    (["check", "--severity", "fatal"], "--severity: expected 'warning' or 'error', got 'fatal'", "check"),
    (["fix", "--gpu", "h1OO"], "--gpu: unknown GPU 'h1OO'", "fix"),
    (["server", "--select", "XYZ1"], "--select: unknown code 'XYZ1'", "server"),
    (["matrix", "--format", "html"], "--format: invalid choice: 'html'", "matrix"),
    (["check", "--format"], "--format: expected one argument", "check"),
    # unknown options, with the nearest one when it is near
    (["check", "--sglang-versoin", "0.5.23"],
     "unknown option '--sglang-versoin' (did you mean '--sglang-version'?)", "check"),
    (["fix", "--frobnicate"], "unknown option '--frobnicate'", "fix"),
    (["--frobnicate"], "unknown option '--frobnicate'", "check"),  # `kv4lint ARGS` is `kv4lint check ARGS`
    (["explain", "KV401", "KV402"], "unexpected argument 'KV402'", "explain"),
    # unknown commands
    (["chek"], "unknown command 'chek' (did you mean 'check'?)", None),
])
def test_a_usage_error_is_one_line_and_exit_2(argv, what, command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _run(argv, capsys)
    assert code == 2 and len(err) == 1, err
    (line,) = err
    assert line.startswith(f"kv4lint: error: {what}"), line
    assert line.endswith(f"; see 'kv4lint {command} --help'" if command else "; see 'kv4lint --help'"), line


def test_the_console_script_prints_no_usage_block():
    r = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--severity", "bogus"], capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr.count("\n")) == (2, "", 1)
    assert "usage:" not in r.stderr and r.stderr.endswith("; see 'kv4lint check --help'\n")


def test_help_is_still_the_whole_usage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", "--help"])
    assert e.value.code == 0 and "usage: kv4lint check" in capsys.readouterr().out
