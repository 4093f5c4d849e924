"""A gate CI can trust (issue 15): the exit status contract, configuration per file, git's ignore rules,
stdin, output options that mean what they say, SARIF for GitHub code scanning, the cache folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint.cli import main

NVFP4_SH = ("#!/bin/bash\npython -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B \\\n"
            "  --kv-cache-dtype nvfp4\n")  # refused on Hopper (KV404), accepted on Blackwell
FP4_SH = ("#!/bin/bash\npython -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B \\\n"
          "  --kv-cache-dtype fp4_e2m1\n")  # KV406 on the newest release, safely fixable
BROKEN_PY = ('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", '
             '"fp8_e4m3",\n')  # an unclosed [


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def kv4lint(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kv4lint", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A git repository (a .git folder is what kv4lint looks for) with two services, each configured."""
    (tmp_path / ".git" / "info").mkdir(parents=True)
    for svc, gpu in (("svc_a", "h100"), ("svc_b", "b200")):
        write(tmp_path / svc / "pyproject.toml", f'[tool.kv4lint]\ngpu = "{gpu}"\n')
        write(tmp_path / svc / "run.sh", NVFP4_SH)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KV4LINT_NO_CACHE", "1")
    return tmp_path


def codes(out: str) -> list[tuple[str, str]]:
    return sorted((ln.split(":")[0], ln.split(": ")[1].split()[0]) for ln in out.splitlines() if ": KV4" in ln)


# ---------------------------------------------------------------------------
# 1. The exit status


def test_a_path_that_does_not_exist_is_a_usage_error(repo, capsys):
    assert main(["check", "nosuch/"]) == 2
    assert "nosuch/: error: no such file or directory" in capsys.readouterr().out
    # the other paths are still checked, and the run still fails
    assert main(["check", "nosuch/", "svc_a/run.sh"]) == 2
    out = capsys.readouterr().out
    assert "svc_a/run.sh:3:" in out and "nosuch/: error:" in out
    assert main(["fix", "--diff", "nosuch.sh"]) == 2


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"], ["fix"]])
@pytest.mark.parametrize("where, why", [
    ("nodir/report.txt", "cannot write 'nodir/report.txt': no folder 'nodir'"),
    ("svc_a", "cannot write 'svc_a': it is a folder"),
    ("svc_a/run.sh/report.txt", "cannot write 'svc_a/run.sh/report.txt': 'svc_a/run.sh' is not a folder"),
    ("dangling.txt", "cannot write 'dangling.txt': No such file or directory"),  # its folder exists: found at open
])
def test_an_output_file_that_cannot_be_written_is_a_usage_error(repo, capsys, command, where, why):
    os.symlink("gone/report.txt", repo / "dangling.txt")
    before = (repo / "svc_a" / "run.sh").read_text()
    try:
        rc = main([*command, "--output-file", where, "svc_a/run.sh"])
    except SystemExit as e:  # argparse's own exit, for a value its check refuses
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "--output-file" in err and why in err, err
    assert "internal error" not in err and "bug" not in err
    if where != "dangling.txt":  # refused before the run: nothing fixed
        assert (repo / "svc_a" / "run.sh").read_text() == before


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"], ["fix"]])
def test_a_fifo_named_on_the_command_line_could_not_be_read(repo, capsys, command):
    os.mkfifo(repo / "named.sh")  # never opened: a FIFO with no writer would block the run
    write(repo / "ok.sh", NVFP4_SH.replace("nvfp4", "fp8_e4m3"))
    assert main([*command, "named.sh", "ok.sh"]) == 1  # not everything named was checked
    cap = capsys.readouterr()  # (with --diff, the report goes to stderr)
    assert "named.sh: error: cannot read: a FIFO, not a regular file; not opened" in cap.out + cap.err


@pytest.mark.parametrize("typo", ["chek", "fxi", "explian"])
def test_a_mistyped_command_is_a_usage_error(repo, capsys, typo):
    assert main([typo]) == 2
    err = capsys.readouterr().err
    assert f"unknown command {typo!r}" in err and "did you mean" in err


def test_an_unparsable_launch_file_fails_the_run(repo, capsys):
    write(repo / "launch.py", BROKEN_PY)
    assert main(["check", "launch.py"]) == 1
    assert "launch.py:" in capsys.readouterr().out
    assert main(["check", "--exit-zero", "launch.py"]) == 1  # not checked: never green
    assert main(["fix", "launch.py"]) == 1
    assert main(["fix", "--diff", "launch.py"]) == 1


def test_nothing_found_and_everything_checked_is_0(repo):
    write(repo / "ok.sh", NVFP4_SH.replace("nvfp4", "fp8_e4m3"))
    assert main(["check", "ok.sh"]) == 0
    assert main(["check", "svc_b"]) == 0  # b200: nvfp4 is fine


def test_help_states_the_contract(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "exit status:" in out and "0  everything named was checked and nothing was found" in out
    assert "2  usage errors" in out


def test_a_bad_configuration_is_a_usage_error(repo, capsys):
    write(repo / "svc_b" / "pyproject.toml", '[tool.kv4lint]\ngpu = "h1OO"\n')
    assert main(["check", "svc_a", "svc_b"]) == 2
    assert "svc_b/pyproject.toml: [tool.kv4lint] gpu: unknown GPU 'h1OO'" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# 2. Configuration per file


def test_each_file_is_judged_by_its_own_configuration_in_any_order(repo, capsys):
    results = []
    for order in (["svc_a/run.sh", "svc_b/run.sh"], ["svc_b/run.sh", "svc_a/run.sh"], ["."], ["svc_b", "svc_a"]):
        assert main(["check", "--format", "concise", *order]) == 1
        results.append(capsys.readouterr().out)
    assert codes(results[0]) == [("svc_a/run.sh", "KV404")]
    assert all(r == results[0] for r in results[:2])  # the same output, sorted
    assert all(codes(r) == codes(results[0]) for r in results)


def test_pre_commit_batches_give_the_findings_of_one_run(repo, capsys):
    main(["check", "--format", "concise", "svc_a/run.sh", "svc_b/run.sh"])
    together = codes(capsys.readouterr().out)
    apart = []
    for p in ("svc_b/run.sh", "svc_a/run.sh"):
        main(["check", "--format", "concise", p])
        apart += codes(capsys.readouterr().out)
    assert sorted(apart) == together


def test_config_overrides_every_files_configuration(repo, capsys):
    write(repo / "ci.toml", 'gpu = "b200"\n')
    assert main(["check", "--config", "ci.toml", "svc_a", "svc_b"]) == 0
    write(repo / "ci.toml", 'gpu = "h100"\n')
    assert main(["check", "--format", "concise", "--config", "ci.toml", "svc_a", "svc_b"]) == 1
    assert codes(capsys.readouterr().out) == [("svc_a/run.sh", "KV404"), ("svc_b/run.sh", "KV404")]


def test_show_target_names_the_configuring_file(repo, capsys):
    main(["check", "--show-target", "svc_b/run.sh", "svc_a/run.sh"])
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "sglang.launch_server:" in ln]
    assert any(ln.startswith("svc_a/run.sh:2:") and ln.endswith("configuration: svc_a/pyproject.toml")
               and "gpu=sm90 (svc_a/pyproject.toml [tool.kv4lint])" in ln for ln in lines)
    assert any(ln.startswith("svc_b/run.sh:2:") and ln.endswith("configuration: svc_b/pyproject.toml")
               for ln in lines)
    write(repo / "loose.sh", NVFP4_SH)
    main(["check", "--show-target", "loose.sh"])
    assert "configuration: none" in capsys.readouterr().out


def test_the_search_stops_at_the_repository_root(repo, capsys):
    write(repo.parent / "kv4lint.toml", 'gpu = "b200"\n')  # above the repository: not read
    write(repo / "loose.sh", NVFP4_SH)
    try:
        assert main(["check", "--gpu", "h100", "loose.sh"]) == 1
        capsys.readouterr()
        # b200 above the root is not read: the GPU stays unstated, refused on some GPUs only, a warning
        assert main(["check", "loose.sh"]) == 1
        assert "refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype nvfp4 needs Blackwell; set --gpu to decide" \
            in capsys.readouterr().out
        assert main(["check", "--show-target", "loose.sh"]) == 1
        assert "configuration: none" in capsys.readouterr().out
    finally:
        (repo.parent / "kv4lint.toml").unlink()


# ---------------------------------------------------------------------------
# 3. git's ignore rules


def test_a_named_folder_that_git_ignores_is_not_walked(repo, capsys):
    write(repo / ".gitignore", "scripts/\n")
    write(repo / "scripts" / "serve.sh", FP4_SH)
    assert main(["check", "scripts/"]) == 0
    assert "scripts/: skipped: ignored by git" in capsys.readouterr().out
    assert main(["check", "."]) == 1  # svc_a; scripts/ skipped as before
    assert "scripts/serve.sh" not in capsys.readouterr().out
    # a file named explicitly is checked, unless --force-exclude
    assert main(["check", "scripts/serve.sh"]) == 1
    assert main(["check", "--force-exclude", "scripts/serve.sh"]) == 0


def test_a_named_file_of_another_format_is_skipped_with_a_note(repo, capsys):
    write(repo / "notes.txt", "python -m sglang.launch_server --kv-cache-dtype nvfp4\n")
    assert main(["check", "notes.txt"]) == 0
    assert "note: notes.txt: skipped: not a format kv4lint reads (its extension names another)" in \
        capsys.readouterr().out
    # pre-commit names every text file (--force-exclude): no note for each one kv4lint does not read
    assert main(["check", "--force-exclude", "notes.txt"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_nested_gitignore_and_info_exclude(repo, capsys):
    write(repo / "svc_a" / ".gitignore", "gen/\n!keep.sh\n*.sh\n")
    write(repo / "svc_a" / "gen" / "x.sh", FP4_SH)
    write(repo / "svc_a" / "keep.sh", FP4_SH)
    write(repo / "svc_b" / "local.sh", FP4_SH)
    (repo / ".git" / "info" / "exclude").write_text("/svc_b/local.sh\n")
    main(["check", "--format", "concise", "."])
    out = capsys.readouterr().out
    assert "svc_a/gen/x.sh" not in out and "svc_b/local.sh" not in out
    assert "svc_a/run.sh" not in out  # *.sh after !keep.sh: the last matching line wins, as in git
    assert "svc_a/keep.sh" not in out
    write(repo / "svc_a" / ".gitignore", "gen/\n*.sh\n!keep.sh\n")
    write(repo / ".gitignore", "keep.sh\n")  # the deeper file's !keep.sh decides, as in git
    main(["check", "--format", "concise", "svc_a"])
    out = capsys.readouterr().out
    assert "svc_a/keep.sh" in out and "svc_a/run.sh" not in out
    main(["check", "--format", "concise", "--force-exclude", "svc_b/local.sh", "svc_a/gen/x.sh"])
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------
# 4. stdin


def test_check_stdin_takes_language_and_configuration_from_the_name(repo):
    r = kv4lint("check", "--stdin-filename", "svc_a/new.sh", "-", cwd=repo, stdin=NVFP4_SH)
    assert r.returncode == 1 and "svc_a/new.sh:3:" in r.stdout and "KV404" in r.stdout
    r = kv4lint("check", "--stdin-filename", "svc_b/new.sh", "-", cwd=repo, stdin=NVFP4_SH)
    assert r.returncode == 0, r.stdout + r.stderr
    r = kv4lint("check", "--stdin-filename", "svc_a/new.sh", "--show-target", "-", cwd=repo, stdin=NVFP4_SH)
    assert "configuration: svc_a/pyproject.toml" in r.stdout


def test_fix_stdin_writes_the_fixed_text_to_stdout(repo):
    r = kv4lint("fix", "--sglang-version", "0.5.23", "--stdin-filename", "svc_b/serve.sh", "-", cwd=repo, stdin=FP4_SH)
    assert r.returncode == 0, r.stderr
    assert r.stdout == FP4_SH.replace("fp4_e2m1", "fp8_e4m3")
    assert "Fixed 1 finding in 1 file (0 remaining)." in r.stderr
    r = kv4lint("fix", "--sglang-version", "0.5.23", "--stdin-filename", "svc_b/serve.sh", "--diff", "-", cwd=repo,
                stdin=FP4_SH)
    assert r.returncode == 1 and "+  --kv-cache-dtype fp8_e4m3" in r.stdout
    r = kv4lint("fix", "--stdin-filename", "svc_b/serve.sh", "-", cwd=repo, stdin="echo hi\n")
    assert (r.returncode, r.stdout) == (0, "echo hi\n")


def test_stdin_with_force_exclude_and_unknown_language(repo):
    write(repo / ".gitignore", "vendor/\n")
    r = kv4lint("fix", "--force-exclude", "--stdin-filename", "vendor/serve.sh", "-", cwd=repo, stdin=FP4_SH)
    assert (r.returncode, r.stdout) == (0, FP4_SH)  # ignored: echoed unchanged
    r = kv4lint("check", "--stdin-filename", "notes.txt", "-", cwd=repo, stdin="python -m sglang.launch_server\n")
    assert r.returncode == 2 and "cannot tell the file's language" in r.stderr
    r = kv4lint("check", "-", "svc_a", cwd=repo, stdin=FP4_SH)
    assert r.returncode == 2


# ---------------------------------------------------------------------------
# 5. Output options


def test_quiet_levels(repo, capsys):
    assert main(["check", "-q", "svc_a"]) == 1
    out = capsys.readouterr()
    assert out.out.count("\n") == 1 and "KV404" in out.out and "Found" not in out.out
    assert main(["check", "-qq", "svc_a"]) == 1
    assert capsys.readouterr() == ("", "")
    assert main(["check", "-qq", "nosuch"]) == 2
    assert capsys.readouterr() == ("", "")
    assert main(["check", "-qq", "--format", "json", "svc_a"]) == 1  # nothing, whatever the format
    assert capsys.readouterr() == ("", "")


def test_statistics_counts_by_code_only(repo, capsys):
    main(["check", "--statistics", "--gpu", "h100", "."])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2  KV404") and len(out) == 1


def test_fix_reports_fixed_and_remaining_and_unsafe_hint(repo, capsys):
    write(repo / "svc_b" / "serve.sh", FP4_SH)
    assert main(["fix", "--sglang-version", "0.5.23", "svc_b"]) == 0  # a fix needs the release it fixes for
    err = capsys.readouterr().err
    assert "Fixed 1 finding in 1 file (0 remaining)." in err and "Found 0" not in err
    # a shared value: the fix is unsafe, so it is left, and a hint says so
    write(repo / "svc_b" / "shared.sh", "#!/bin/bash\nDT=fp4_e2m1\necho $DT\n"
                                        "python -m sglang.launch_server --model-path m --kv-cache-dtype $DT\n")
    assert main(["fix", "--sglang-version", "0.5.23", "svc_b/shared.sh"]) == 1
    err = capsys.readouterr().err
    assert "Fixed 0 findings in 0 files (1 remaining)." in err
    assert "1 more fix is available but unsafe" in err
    assert main(["check", "--sglang-version", "0.5.23", "svc_b/shared.sh"]) == 1
    assert "1 more fix is available but unsafe" in capsys.readouterr().out
    assert main(["fix", "--sglang-version", "0.5.23", "--unsafe-fixes", "svc_b/shared.sh"]) == 0
    assert "unsafe" not in capsys.readouterr().err


def test_unknown_sglang_version(repo, capsys):
    assert main(["check", "--sglang-version", "9.9", "--format", "full", "svc_a"]) == 1
    out, err = capsys.readouterr()
    assert "note: SGLang 9.9 is newer than the releases kv4lint knows" in err and "0.5.23 rule pack" in err
    assert "judged by 0.5.23's rules" in out  # the details say which rules judged a release never seen
    with pytest.raises(SystemExit) as e:
        main(["check", "--sglang-version", "nine", "svc_a"])
    assert e.value.code == 2 and "not a version: 'nine'" in capsys.readouterr().err
    assert main(["check", "--sglang-version", "0.5.21", "svc_a"]) == 1
    assert "note:" not in capsys.readouterr().err


# ---------------------------------------------------------------------------
# 6. SARIF for GitHub code scanning


def sarif(repo: Path, capsys, *args: str) -> dict:
    main(["check", "--format", "sarif", *args])
    return json.loads(capsys.readouterr().out)["runs"][0]


def test_sarif_fingerprints_survive_moved_lines(repo, capsys):
    first = sarif(repo, capsys, "svc_a")["results"]
    write(repo / "svc_a" / "run.sh", "#!/bin/bash\n# a comment\n\necho start\n" + NVFP4_SH.split("\n", 1)[1])
    moved = sarif(repo, capsys, "svc_a")["results"]
    assert first[0]["locations"][0]["physicalLocation"]["region"]["startLine"] != \
        moved[0]["locations"][0]["physicalLocation"]["region"]["startLine"]
    fp = first[0]["partialFingerprints"]["kv4lint/v1"]
    assert fp == moved[0]["partialFingerprints"]["kv4lint/v1"] and fp.endswith(":1")
    write(repo / "svc_a" / "run.sh", NVFP4_SH.replace("Llama-3.1-8B", "Llama-3.1-70B"))
    assert sarif(repo, capsys, "svc_a")["results"][0]["partialFingerprints"]["kv4lint/v1"] != fp
    write(repo / "svc_a" / "run.sh", NVFP4_SH + NVFP4_SH.split("\n", 1)[1])  # the same launch twice
    twice = [r["partialFingerprints"]["kv4lint/v1"] for r in sarif(repo, capsys, "svc_a")["results"]]
    assert twice == [fp, fp[:-1] + "2"]


def test_sarif_help_uri_per_rule(repo, capsys):
    run = sarif(repo, capsys, "--rule-docs-url", "https://example.org/kv4lint/docs/rules", "svc_a")
    rules = run["tool"]["driver"]["rules"]
    assert rules and all(r["helpUri"] == f"https://example.org/kv4lint/docs/rules/{r['id']}.md" for r in rules)
    assert run["tool"]["driver"]["informationUri"].startswith("https://")
    write(repo / "svc_a" / "pyproject.toml", '[tool.kv4lint]\ngpu = "h100"\nrule-docs-url = "https://x.test/r/"\n')
    rules = sarif(repo, capsys, "svc_a")["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == f"https://x.test/r/{rules[0]['id']}.md"
    with pytest.raises(SystemExit):
        main(["check", "--rule-docs-url", "docs/rules", "svc_a"])


# ---------------------------------------------------------------------------
# 7. The cache folder stays out of git status


def test_the_cache_folder_ignores_itself(repo, monkeypatch):
    monkeypatch.delenv("KV4LINT_NO_CACHE")
    assert main(["check", "--cache-dir", ".kv4lint_cache", "."]) == 1
    cache = repo / ".kv4lint_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    if subprocess.run(["git", "--version"], capture_output=True).returncode == 0:
        os.rmdir(repo / ".git" / "info")
        os.rmdir(repo / ".git")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
        assert ".kv4lint_cache" not in st and "svc_a/run.sh" in st


# ---------------------------------------------------------------------------
# One option table (issue 17, item 4): argparse, flake8, the codemod and the TOML keys come from it


def test_every_front_door_takes_the_tables_options():
    import argparse

    from kv4lint.cli import build_parser
    from kv4lint.codemod import FixKV4Cache
    from kv4lint.flake8_plugin import Plugin
    from kv4lint.settings.config import KEYS
    from kv4lint.settings.options import CLI, CODEMOD, FLAKE8, OPTIONS, TOML, TOML_KEYS

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("check", "fix"):
        flags = {s for a in sub.choices[command]._actions for s in a.option_strings}
        want = {f"--{o.name}" for o in OPTIONS if CLI in o.where and command in o.commands}
        assert want <= flags and flags - want <= {"-h", "--help", "-o", "-j", "-q"}, command

    class Manager:
        def __init__(self):
            self.flags = []

        def add_option(self, flag, **kw):
            self.flags.append(flag)

    m = Manager()
    Plugin.add_options(m)
    assert m.flags == [f"--kv4-{o.name}" for o in OPTIONS if FLAKE8 in o.where]

    p = argparse.ArgumentParser()
    FixKV4Cache.add_args(p)
    codemod = {s for a in p._actions for s in a.option_strings} - {"-h", "--help"}
    assert codemod == {o.codemod_flag or f"--{o.name}" for o in OPTIONS if CODEMOD in o.where}

    assert set(TOML_KEYS) == set(KEYS) == {o.name for o in OPTIONS if TOML in o.where}

    from kv4lint.reporters import FORMATS
    from kv4lint.settings.options import BY_NAME

    assert BY_NAME["format"].choices == FORMATS


def test_a_bad_value_reads_the_same_from_every_front_door(repo, capsys):
    """One check per option: the command line, [tool.kv4lint] and flake8 name the same problem."""
    with pytest.raises(SystemExit):
        main(["check", "--gpu", "h1OO", "svc_a"])
    cli = capsys.readouterr().err
    write(repo / "svc_a" / "pyproject.toml", '[tool.kv4lint]\ngpu = "h1OO"\n')
    assert main(["check", "svc_a"]) == 2
    toml = capsys.readouterr().err
    write(repo / "svc_a" / "pyproject.toml", '[tool.kv4lint]\n')
    r = subprocess.run([sys.executable, "-m", "flake8", "--kv4-gpu", "h1OO", "svc_a"], cwd=repo, capture_output=True,
                       text=True)
    problem = "unknown GPU 'h1OO'"
    assert problem in cli and problem in toml and problem in r.stderr and r.returncode == 2


@pytest.mark.parametrize("argv", [
    ["check", "."], ["check", "--format", "json", "-q", "--gpu", "h100", "a.sh"], ["fix", "--diff", "x.py"],
    ["fix", "--unsafe-fixes", "."], ["explain", "KV401"], ["matrix", "--gpu", "sm90", "--format", "json"],
])
def test_a_run_parses_its_command_as_the_whole_parser_does(argv):
    """A run builds only its command's parser; it must read the command line exactly as the whole one."""
    from kv4lint.cli.app import COMMANDS, build_parser

    assert vars(build_parser(argv[0]).parse_args(argv)) == vars(build_parser().parse_args(argv))
    assert build_parser(argv[0])._subparsers._group_actions[0].choices.keys() == {argv[0]}
    assert build_parser()._subparsers._group_actions[0].choices.keys() == set(COMMANDS)
