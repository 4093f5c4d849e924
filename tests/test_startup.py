"""Start-up: a run imports what it uses and nothing more (issue 21; timing is the benchmark's job, bench/run.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kv4lint.base.version import __version__

PARSERS = ("libcst", "tree_sitter", "tree_sitter_bash", "ruamel", "markdown_it", "nbformat")

# The console script's own entry point (kv4lint.cli.console), its exit (which ends the process) replaced by a report.
SCRIPT = (
    "import json, sys\n"
    "import kv4lint.cli as cli\n"
    "cli.exit_with = lambda code: print(json.dumps({'exit': code, 'modules': sorted(sys.modules)}))\n"
    "sys.argv[0] = 'kv4lint'\n"
    "cli.console()\n"
)


def _run(cwd: Path, *argv: str, prelude: str = "") -> tuple[int, list[str]]:
    """The exit status of ``kv4lint ARGV`` run in a fresh interpreter (after ``prelude``), and the modules it
    imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KV4LINT")}
    cp = subprocess.run([sys.executable, "-c", prelude + SCRIPT, *argv], cwd=cwd, capture_output=True, text=True,
                        env=env, timeout=300)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout.strip().splitlines()[-1])
    return doc["exit"], doc["modules"]


def _modules(tmp_path: Path, *args: str) -> list[str]:
    code, modules = _run(tmp_path, "check", "--isolated", "--no-cache", "-j", "1", *args)
    assert code in (0, 1)
    return modules


def _python_alone(cwd: Path) -> set[str]:
    """What this interpreter imports before kv4lint's code runs (site, the editable install's finder ...)."""
    cp = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
                        cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(cp.stdout))


# What no run over files without launches uses: dataclasses (inspect, ast, dis, tokenize ...) and typing cost
# ~12 ms a start, and the rich model serves launches and findings only; traceback and difflib serve an error and a typo
# only.
UNUSED = ("dataclasses", "typing", "inspect", "traceback", "difflib", "kv4lint.base.model")


def _top(modules: list[str], names) -> list[str]:
    """The top-level packages of ``names`` among ``modules``."""
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in names})


def test_a_tree_without_launches_imports_no_parser_and_no_rules(tmp_path):
    (tmp_path / "app.py").write_text("import subprocess\nsubprocess.run(['ls'])\n")
    (tmp_path / "README.md").write_text("# App\n\n```bash\nls\n```\n")
    (tmp_path / "ci.yaml").write_text("steps:\n  - run: ls\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\nls\n")
    modules = _modules(tmp_path, ".")
    assert _top(modules, PARSERS + ("packaging",)) == []
    assert [m for m in modules if m.startswith(("kv4lint.rules", "kv4lint.frontends", "kv4lint.sglang.options",
                                                "kv4lint.target"))] == []
    assert "ast" not in modules  # the pre-filter's syntax-tree screen: for Python files that pass its byte test


def test_files_that_pass_the_pre_filter_without_a_launch_load_no_rules(tmp_path):
    """Most files that pass the pre-filter hold no launch (SGLang's own sources: its docs, its argument parser): the
    frontends read them, and the target, the rules and the fixes load with the first launch found, not before."""
    (tmp_path / "doc.py").write_text('"""Example: ServerArgs(model_path="m", kv_cache_dtype="fp8_e4m3"), from '
                                     'sglang."""\n')
    (tmp_path / "README.md").write_text("# Setup\n\n```bash\npip install sglang  # see --kv-cache-dtype\n```\n")
    modules = _modules(tmp_path, ".")
    assert "kv4lint.pipeline.runner" in modules and "markdown_it" in modules  # past the pre-filter, read
    assert [m for m in modules if m.startswith(("kv4lint.rules", "kv4lint.target", "kv4lint.fixes",
                                                "kv4lint.pipeline.launch_configs"))] == []
    (tmp_path / "serve.sh").write_text("python -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3\n")
    assert "kv4lint.rules.engine" in _modules(tmp_path, ".")  # a launch: judged


def test_a_shell_launch_script_imports_only_the_shell_parser(tmp_path):
    (tmp_path / "serve.sh").write_text("python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                                       "--kv-cache-dtype fp4_mx_block16 --attention-backend flashinfer\n")
    modules = _modules(tmp_path, "serve.sh")
    assert "kv4lint.rules.engine" in modules  # the launch was judged
    assert _top(modules, PARSERS) == ["tree_sitter", "tree_sitter_bash"]


def test_a_walk_looks_for_each_directorys_repository_root_once(tmp_path, monkeypatch):
    """The settings of every file of a walk: the search up to the repository's root (a ``stat`` per
    directory above) looks at each directory once, not once per file nor once per directory below it."""
    from collections import Counter

    from kv4lint.cli import main

    for d in ("a", "b", "a/c"):
        (tmp_path / d).mkdir()
        for k in range(5):
            (tmp_path / d / f"f{k}.py").write_text("print('no launch here')\n")
    looked = Counter()
    real = os.path.exists

    def exists(p):
        if str(p).endswith(os.sep + ".git"):
            looked[os.path.dirname(str(p))] += 1
        return real(p)

    monkeypatch.setattr(os.path, "exists", exists)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "--no-cache", "-j", "1", "-q", "."]) == 0
    below = {os.path.relpath(d, tmp_path): n for d, n in looked.items() if d.startswith(str(tmp_path) + os.sep)}
    assert below == {}  # the walk listed each of them: whether it holds .git is known without a look


def test_a_walk_looks_for_configuration_files_only_where_its_listings_show_one(tmp_path, monkeypatch):
    """kv4lint.toml, .kv4lint.toml and pyproject.toml are looked for in each directory a file's settings come
    from; in the directories the walk listed, the listing answers (nothing is asked of the file system there)."""
    from collections import Counter

    from kv4lint.cli import main

    for d in ("a", "b", "a/c"):
        (tmp_path / d).mkdir()
        for k in range(3):
            (tmp_path / d / f"f{k}.py").write_text("print('no launch here')\n")
    (tmp_path / "a" / "kv4lint.toml").write_text('gpu = "h100"\n')
    looked = Counter()
    real = os.path.isfile

    def isfile(p):
        if sys._getframe(1).f_code.co_filename.endswith(os.path.join("kv4lint", "settings", "config.py")):  # the search
            looked[os.path.relpath(str(p), tmp_path)] += 1
        return real(p)

    monkeypatch.setattr(os.path, "isfile", isfile)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "-j", "1", "-q", "."]) == 0
    below = {p: n for p, n in looked.items() if not p.startswith("..") and os.sep in p}
    assert below == {os.path.join("a", "kv4lint.toml"): 1}  # read once; no other name looked for below the root


def test_a_walk_knows_nested_repositories_and_ignore_files_from_its_listings(tmp_path, monkeypatch):
    """What the walk's listings tell (a nested checkout's .git, its .gitignore, directories without either)
    gives the answers the look-ups did: the nested checkout is its own repository (the configuration above it
    does not apply), and its .gitignore holds there."""
    import json

    from kv4lint.cli import main

    launch = ("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
              "--kv-cache-dtype fp4_e2m1 --attention-backend triton\n")
    (tmp_path / "kv4lint.toml").write_text('ignore = ["KV4"]\n')  # the outer project ignores everything
    (tmp_path / "outer" / "deep").mkdir(parents=True)
    (tmp_path / "outer" / "deep" / "serve.sh").write_text(launch)
    inner = tmp_path / "outer" / "checkout"
    (inner / ".git").mkdir(parents=True)
    (inner / ".gitignore").write_text("ignored.sh\n")
    (inner / "scripts").mkdir()
    (inner / "scripts" / "serve.sh").write_text(launch)
    (inner / "scripts" / "ignored.sh").write_text(launch)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "-j", "1", "-q", "--sglang-version", "0.5.23", "--format", "json",
                 "--output-file", "out.json", "."]) == 1
    found = {f["path"] for f in json.loads((tmp_path / "out.json").read_text())["findings"]}
    assert found == {os.path.join("outer", "checkout", "scripts", "serve.sh")}


def test_a_walk_resolves_settings_once_per_directory(tmp_path, monkeypatch):
    """Per-file configuration costs a dictionary lookup per file of a directory already resolved."""
    from collections import Counter

    from kv4lint.cli import main
    from kv4lint.settings.config import ConfigResolver

    for d in ("a", "b", "a/c"):
        (tmp_path / d).mkdir()
        for k in range(5):
            (tmp_path / d / f"f{k}.py").write_text("print('no launch here')\n")
    resolved = Counter()
    real = ConfigResolver._settings_of_directory

    def counted(self, directory):
        resolved[os.path.relpath(directory, tmp_path)] += 1
        return real(self, directory)

    monkeypatch.setattr(ConfigResolver, "_settings_of_directory", counted)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "--no-cache", "-j", "1", "-q", "."]) == 0
    assert {d: n for d, n in resolved.items() if d != "."} == {"a": 1, "b": 1, os.path.join("a", "c"): 1}


def _tree_without_launches(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import subprocess\nsubprocess.run(['ls'])\n")
    (root / "README.md").write_text("# App\n\n```bash\nls\n```\n")
    (root / "ci.yaml").write_text("steps:\n  - run: ls\n")
    (root / "run.sh").write_text("#!/bin/sh\nls\n")
    (root / "tool").write_text("#!/usr/bin/env bash\necho hi\n")  # a shell script named by its shebang only


def test_a_run_over_files_without_launches_imports_neither_dataclasses_nor_typing(tmp_path):
    """Cold (no cache), then twice with the file index (the first writes it, the second reads no file): only
    what the run uses."""
    tree = tmp_path / "tree"
    tree.mkdir()
    _tree_without_launches(tree)
    alone = _python_alone(tree)
    # The files were written just now: the index records them all the same (kv4lint.pipeline.cache.RACY_S).
    prelude = "import kv4lint.pipeline.cache\nkv4lint.pipeline.cache.RACY_S = -60\n"
    runs = {"cold": ("--no-cache",), "first cached": ("--cache-dir", str(tmp_path / "cache")),
            "second cached": ("--cache-dir", str(tmp_path / "cache"))}
    for name, options in runs.items():
        code, modules = _run(tree, "check", "--isolated", "-j", "1", *options, ".", prelude=prelude)
        assert code == 0, name
        assert ("kv4lint.pipeline.read" in modules) == (name != "second cached"), name  # read, then stat-ed
        assert ("kv4lint.fixes.writer" in modules) == (name == "first cached"), name  # the index written once
        assert sorted(set(UNUSED) & (set(modules) - alone)) == [], name


# What a second run over an unchanged tree does not use (issue 37): the readers, the pre-filter, the workers, git's
# pattern matching, ``ast`` (the first run's readers load it).
NOT_WARM = ("kv4lint.pipeline.read", "kv4lint.files.prefilter", "kv4lint.pipeline.parallel", "ast", "pathspec")


def test_a_second_run_imports_only_what_a_stat_walk_needs(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    _tree_without_launches(tree)
    (tree / ".git").mkdir()
    (tree / ".gitignore").write_text("*.log\nbuild/\n")
    (tree / "src" / ".gitignore").write_text("generated.py\n")
    (tree / "src" / "generated.py").write_text("import sglang\n")
    prelude = "import kv4lint.pipeline.cache\nkv4lint.pipeline.cache.RACY_S = -60\n"
    for name in ("first", "second"):
        code, modules = _run(tree, "check", "--isolated", "-j", "1", "--cache-dir", str(tmp_path / "cache"), ".",
                             prelude=prelude)
        assert code == 0
        used = sorted(set(NOT_WARM) & set(modules))
        if name == "first":
            assert used == sorted(NOT_WARM), name  # all of them are used when the files are read
        else:
            assert used == [], name


def test_a_second_run_prints_stored_findings_without_dataclasses_or_toml(tmp_path):
    """The findings a second run prints come from the file index: the rich model loads to decode them, and with it
    neither ``dataclasses`` nor ``inspect`` (~13 ms of a ~90 ms run), nor a reader or a parser; the configuration
    file is known unchanged, and not parsed again (``tomllib``, ~5 ms)."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / ".git").mkdir()
    (tree / "kv4lint.toml").write_text('sglang-version = "0.5.23"\n')
    (tree / "scripts" / "serve.sh").write_text("python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                                               "--kv-cache-dtype fp4_e2m1 --attention-backend triton\n")
    (tree / "notes.md").write_text("nothing here\n")
    prelude = "import kv4lint.pipeline.cache\nkv4lint.pipeline.cache.RACY_S = -60\n"
    first_only = set(NOT_WARM + ("dataclasses", "inspect", "tree_sitter", "tomllib")) - {"pathspec"}
    for name in ("first", "second"):
        code, modules = _run(tree, "check", "-j", "1", "--cache-dir", str(tmp_path / "cache"), ".", prelude=prelude)
        assert code == 1, name  # the finding, both times
        assert "kv4lint.base.model" in modules, name
        used = sorted((first_only | set(NOT_WARM)) & set(modules))
        assert used == ([] if name == "second" else sorted(first_only)), name


def test_version_imports_next_to_nothing(tmp_path):
    code, modules = _run(tmp_path, "--version")
    assert code == 0
    assert sorted(set(modules) - _python_alone(tmp_path)) == ["kv4lint", "kv4lint.base", "kv4lint.base.process",
                                                              "kv4lint.base.version", "kv4lint.cli"]
    for argv in (["--version"], ["--version", "--version"]):  # the second through the argument parser
        cp = subprocess.run([sys.executable, "-m", "kv4lint", *argv], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
        assert (cp.returncode, cp.stdout, cp.stderr) == (0, f"kv4lint {__version__}\n", "")


# The end of a run: kv4lint.cli.exit_with ends the process without the interpreter's teardown (freeing libcst's
# classes and every table costs 40-50 ms of CPU), and does what a normal exit does before it.

EXIT_SCRIPT = (
    "import atexit, sys, threading, time\n"
    "from kv4lint.cli import exit_with\n"
    "atexit.register(lambda: print('atexit ran', flush=True))\n"
    "sys.stdout.write('x' * 100000)  # buffered, not flushed\n"
    "sys.stdout.write('\\nend\\n')\n"
    "if sys.argv[1] == 'thread':\n"
    "    def late():\n"
    "        time.sleep(0.5)\n"
    "        print('thread done')\n"
    "    threading.Thread(target=late).start()\n"
    "exit_with(int(sys.argv[2]))\n"
)


def test_the_fast_exit_keeps_the_exit_status_the_output_and_the_atexit_functions(tmp_path):
    cp = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, "alone", "3"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=60)
    assert (cp.returncode, cp.stderr) == (3, "")
    assert cp.stdout == "x" * 100000 + "\nend\natexit ran\n"


def test_the_exit_waits_for_a_thread_still_running(tmp_path):
    cp = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, "thread", "1"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 1
    assert cp.stdout.endswith("\nend\nthread done\natexit ran\n")  # threads, then atexit, as sys.exit does


def test_python_m_kv4lint_and_the_command_end_through_the_fast_exit():
    import tomllib

    main_py = (Path(__file__).resolve().parents[1] / "kv4lint" / "__main__.py").read_text()
    assert main_py.rstrip().endswith("console()")
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["kv4lint"] == "kv4lint.cli:console"
