"""The flake8 plugin (``KV4`` codes): through real flake8, the same findings as ``kv4lint check``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

import snapshots
from kv4lint.flake8_plugin import Plugin

ROOT = Path(__file__).resolve().parents[1]
PY_FIXTURES = ROOT / "fixtures" / "python"

# kv4lint check option -> flake8 option
FLAKE8_FLAG = {
    "--sglang-version": "--kv4-sglang-version",
    "--platform": "--kv4-platform",
    "--gpu": "--kv4-gpu",
    "--model-attention": "--kv4-model-attention",
    "--fix-dtype": "--kv4-fix-dtype",
    "--strict": "--kv4-strict",
}

LAUNCH = textwrap.dedent('''\
    import subprocess

    subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
                    "--kv-cache-dtype", "fp4_e2m1"]){noqa}
''')


def flake8(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """flake8 without configuration files (``--isolated``: kv4lint's are not read either)."""
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "KV4", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


def flake8_lines(out: str) -> list[tuple[str, int, int, str]]:
    """``path:line:col: CODE message`` -> (path, line, col, code)."""
    rows = []
    for line in out.splitlines():
        path, ln, col, rest = line.split(":", 3)
        rows.append((str(Path(path).resolve()), int(ln), int(col), rest.split()[0]))
    return sorted(rows)


def to_flake8_args(args: list[str]) -> list[str]:
    out = []
    for a in args:
        out.append(FLAKE8_FLAG.get(a, a))
    return out


def fixture_args(path: Path) -> list[str]:
    return snapshots.read(path).args


# ---------------------------------------------------------------------------


def test_reports_at_the_value_and_noqa_works(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(LAUNCH.format(noqa=""))
    quiet = tmp_path / "quiet.py"
    quiet.write_text(LAUNCH.format(noqa="  # noqa: KV406"))
    other = tmp_path / "other_code.py"
    other.write_text(LAUNCH.format(noqa="  # noqa: KV401"))  # another code: still reported
    cp = flake8("--kv4-sglang-version", "0.5.23", str(tmp_path))
    assert cp.returncode == 1, cp.stderr
    rows = flake8_lines(cp.stdout)
    # The value fp4_e2m1 (inside its quotes) is on line 4, at column 38 (flake8 prints 1-based columns).
    assert rows == [(str(bad.resolve()), 4, 38, "KV406"), (str(other.resolve()), 4, 38, "KV406")], cp.stdout
    assert "KV406 --kv-cache-dtype fp4_e2m1 is not a choice in SGLang 0.5.23" in cp.stdout


def test_options_from_the_flake8_config(tmp_path):
    src = tmp_path / "serve.py"  # a name without a GPU: a file named h100.py would say H100 itself
    src.write_text('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path", '
                   '"meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "nvfp4"])\n')
    # Without a GPU, nvfp4 is refused on some of the GPUs kv4lint considers: warnings that say where.
    cp = subprocess.run([sys.executable, "-m", "flake8", "--select", "KV4", str(src)], capture_output=True,
                        text=True, cwd=tmp_path, timeout=600)
    assert cp.returncode == 1 and " KV404 refused on Ampere/Ada, Hopper and Thor: " in cp.stdout, cp.stdout + cp.stderr
    (tmp_path / "setup.cfg").write_text("[flake8]\nkv4-sglang-version = 0.5.23\nkv4-gpu = b200\n")
    cp = subprocess.run([sys.executable, "-m", "flake8", "--select", "KV4", str(src)], capture_output=True,
                        text=True, cwd=tmp_path, timeout=600)
    assert cp.returncode == 0 and cp.stdout == "", cp.stdout + cp.stderr
    (tmp_path / "setup.cfg").write_text("[flake8]\nkv4-sglang-version = 0.5.23\nkv4-gpu = h100\n")
    cp = subprocess.run([sys.executable, "-m", "flake8", "--select", "KV4", str(src)], capture_output=True,
                        text=True, cwd=tmp_path, timeout=600)
    assert cp.returncode == 1 and " KV404 --kv-cache-dtype nvfp4 needs " in cp.stdout, cp.stdout + cp.stderr


def test_syntax_error_is_flake8s_e999_only(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text(LAUNCH.format(noqa="") + "def broken(:\n")
    cp = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "KV4,E9", str(src)],
                        capture_output=True, text=True, timeout=600)
    assert [r[3] for r in flake8_lines(cp.stdout)] == ["E999"], cp.stdout + cp.stderr


def test_file_without_launch_is_not_parsed(monkeypatch):
    called = []
    import kv4lint.pipeline.runner

    monkeypatch.setattr(kv4lint.pipeline.runner, "lint_text", lambda *a, **k: called.append(a))
    p = Plugin(None, ["import os\n", "print('kv_cache_dtype')\n"], "x.py")
    assert list(p.run()) == [] and called == []


def test_a_file_without_a_launch_costs_the_pre_filter_alone(monkeypatch, tmp_path):
    """After the first file, a file without a launch neither cleans sys.path nor imports (issue 37)."""
    import kv4lint.flake8_plugin as plugin

    entered = []
    real = plugin.trusted_imports

    class counted(real):
        def __enter__(self):
            entered.append(self.roots)
            return super().__enter__()

    monkeypatch.setattr(plugin, "trusted_imports", counted)
    monkeypatch.setattr(plugin, "_loaded", {})
    assert list(Plugin(None, ["import os\n"], str(tmp_path / "first.py")).run()) == []
    assert entered  # the first file loads the pre-filter under the isolation
    del entered[:]
    assert list(Plugin(None, ["import sglang\n", "print('kv_cache_dtype')\n"], str(tmp_path / "b.py")).run()) == []
    assert entered == []


def test_a_file_with_a_launch_is_screened_once(monkeypatch, tmp_path):
    """flake8's syntax tree answers the Python frontend's screen, and gives its statement offsets
    (frontends/python/index.py): kv4lint's parses are libcst's only."""
    import ast

    parsed = []
    real = ast.parse

    def counting(text, *a, **k):
        parsed.append(len(text))
        return real(text, *a, **k)

    text = LAUNCH.format(noqa="")
    tree = ast.parse(text)
    monkeypatch.setattr(ast, "parse", counting)  # every ast.parse of kv4lint's, wherever it is called
    out = list(Plugin(tree, text.splitlines(keepends=True), str(tmp_path / "serve.py")).run())
    assert out and {m.split()[0] for _l, _c, m, _t in out} == {"KV401"}
    assert parsed == []


def test_the_plugin_hashes_no_fingerprint(monkeypatch, tmp_path):
    """flake8 shows no finding's fingerprint: the plugin computes none (hashlib stays unloaded, issue 37), while
    lint_text's other callers (SARIF, GitLab) still get one for each finding."""
    import kv4lint.pipeline.runner as runner

    text = LAUNCH.format(noqa="")
    real = runner.fingerprint
    hashed = []
    monkeypatch.setattr(runner, "fingerprint", lambda *a: hashed.append(a) or real(*a))
    out = list(Plugin(None, text.splitlines(keepends=True), str(tmp_path / "serve.py")).run())
    assert [m.split()[0] for _l, _c, m, _t in out] == ["KV401"] and hashed == []
    rep = runner.lint_text(str(tmp_path / "serve.py"), text, Plugin(filename=str(tmp_path / "serve.py"))._settings(),
                           language="python")
    assert [f.code for f in rep.findings] == ["KV401"] and len(hashed) == 1
    assert rep.findings[0].fingerprint == real(*hashed[0])


def test_the_isolation_resolves_sys_path_once_per_process(monkeypatch, tmp_path):
    from kv4lint.files import isolation

    resolved = []
    real = isolation._real
    monkeypatch.setattr(isolation, "_real", lambda p: resolved.append(p) or real(p))
    monkeypatch.setattr(isolation, "_reals", {})
    monkeypatch.setattr(isolation, "_installation", [])
    text = LAUNCH.format(noqa="")
    for d in ("a", "b", "c"):
        del resolved[:]
        (tmp_path / d).mkdir()
        list(Plugin(None, text.splitlines(keepends=True), str(tmp_path / d / "serve.py")).run())
        if d == "a":
            assert len(resolved) > 3  # every entry of sys.path, the installation's directories
        else:
            assert resolved == [str(tmp_path / d)]  # the new file's directory alone


def test_internal_failure_is_one_kv400_on_line_1(monkeypatch):
    import kv4lint.pipeline.runner

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(kv4lint.pipeline.runner, "lint_text", boom)
    lines = LAUNCH.format(noqa="").splitlines(keepends=True)
    out = list(Plugin(None, lines, "x.py").run())
    assert len(out) == 1
    line, col, msg, _cls = out[0]
    assert (line, col) == (1, 0) and msg.startswith("KV400 kv4lint internal error (RuntimeError: boom): a bug in "
                                                    "kv4lint ")
    from kv4lint.base.internal_error import report_to

    assert report_to() in msg and "--verbose" not in msg


NVFP4 = ('import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path", '
         '"meta-llama/Llama-3.1-8B", "--kv-cache-dtype", "nvfp4"])\n')  # refused on Hopper (KV404), not on B200


def flake8_here(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """flake8 reading the configuration files of ``cwd`` (no --isolated)."""
    return subprocess.run([sys.executable, "-m", "flake8", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.mark.parametrize("setup_cfg", ["kv4-gpu = h1OO", "kv4-sglang-version = latest", "kv4-strict = maybe"])
def test_a_bad_option_stops_flake8_whatever_select_says(tmp_path, setup_cfg):
    """A bad kv4 option is a usage error (exit 2, the option and value named), not a KV400 finding that
    ``select = KV401`` would hide."""
    (tmp_path / "setup.cfg").write_text(f"[flake8]\nselect = KV401\n{setup_cfg}\n")
    (tmp_path / "serve.py").write_text(NVFP4)
    cp = flake8_here("serve.py", cwd=tmp_path)
    key, value = (x.strip() for x in setup_cfg.split("="))
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert f"--{key}" in cp.stderr and value in cp.stderr and "Traceback" not in cp.stderr
    assert cp.stdout == ""


def test_a_bad_option_on_the_command_line_stops_flake8(tmp_path):
    (tmp_path / "serve.py").write_text(NVFP4)
    cp = flake8("--kv4-platform", "no-such-platform", "serve.py", cwd=tmp_path)
    assert cp.returncode == 2 and "--kv4-platform no-such-platform: unknown platform" in cp.stderr


def test_the_plugin_reads_the_nearest_tool_kv4lint_per_file(tmp_path):
    """Two services, two configurations: flake8 judges each file by its own, as ``kv4lint check`` does."""
    for svc, gpu in (("svc_a", "h100"), ("svc_b", "b200")):
        (tmp_path / svc).mkdir()
        (tmp_path / svc / "pyproject.toml").write_text(f'[tool.kv4lint]\ngpu = "{gpu}"\n')
        (tmp_path / svc / "serve.py").write_text(NVFP4)
    (tmp_path / ".git").mkdir()
    for order in (["svc_a/serve.py", "svc_b/serve.py"], ["svc_b/serve.py", "svc_a/serve.py"]):
        cp = flake8_here("--select", "KV4", *order, cwd=tmp_path)
        assert cp.returncode == 1, cp.stderr
        assert [ln.split(":")[0] for ln in cp.stdout.splitlines()] == ["svc_a/serve.py"]
        assert "KV404" in cp.stdout
        ck = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--no-cache", "--format", "concise", *order],
                            capture_output=True, text=True, cwd=tmp_path)
        assert [ln.split(":")[0] for ln in ck.stdout.splitlines()] == ["svc_a/serve.py"]


def test_flake8_options_override_tool_kv4lint(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kv4lint]\ngpu = "b200"\n')
    (tmp_path / "serve.py").write_text(NVFP4)
    assert flake8_here("--select", "KV4", "serve.py", cwd=tmp_path).returncode == 0
    cp = flake8_here("--select", "KV4", "--kv4-gpu", "h100", "serve.py", cwd=tmp_path)
    assert cp.returncode == 1 and "KV404" in cp.stdout and "not sm90 (Hopper)" in cp.stdout


def test_a_bad_tool_kv4lint_fails_flake8(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kv4lint]\ngpu = "h1OO"\n')
    (tmp_path / "serve.py").write_text(NVFP4)
    cp = flake8_here("--select", "KV401", "serve.py", cwd=tmp_path)
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "pyproject.toml: [tool.kv4lint] gpu: unknown GPU 'h1OO'" in cp.stderr


def test_a_bad_nested_tool_kv4lint_fails_flake8(tmp_path):
    """A configuration below the current directory is read when a file under it is checked: flake8 fails."""
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "kv4lint.toml").write_text('gpu = "h1OO"\n')
    (tmp_path / "svc" / "serve.py").write_text(NVFP4)
    cp = flake8_here("--select", "KV401", "svc/serve.py", cwd=tmp_path)
    assert cp.returncode != 0, (cp.stdout, cp.stderr)
    assert "kv4lint.toml: gpu: unknown GPU 'h1OO'" in cp.stdout + cp.stderr


def test_flake8_and_kv4lint_check_agree_on_the_python_fixtures(tmp_path):
    """``flake8 --select KV4 fixtures/python`` and ``kv4lint check fixtures/python`` agree line for line."""
    groups: dict[tuple[str, ...], list[Path]] = defaultdict(list)
    for p in sorted(PY_FIXTURES.glob("*.py")):
        if Path(str(p) + ".expected").exists():
            groups[tuple(fixture_args(p))].append(p)
    assert groups, "no Python fixtures"
    total = 0
    for args, files in groups.items():
        cp = flake8(*to_flake8_args(list(args)), *map(str, files))
        assert cp.returncode in (0, 1) and "Traceback" not in cp.stderr, cp.stderr
        got_flake8 = [(path, line, col, code) for path, line, col, code in flake8_lines(cp.stdout)]
        out = tmp_path / "out.json"
        ck = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--isolated", "--jobs", "1", "--format", "json",
                             "--output-file", str(out), *args, *map(str, files)],
                            capture_output=True, text=True, timeout=600)
        assert ck.returncode in (0, 1), ck.stderr
        doc = json.loads(out.read_text())
        assert doc["errors"] == []
        got_cli = sorted((str(Path(f["path"]).resolve()), f["line"], f["column"], f["code"]) for f in doc["findings"])
        assert got_flake8 == got_cli
        total += len(got_cli)
    assert total > 0  # the comparison saw findings, not only silence


@pytest.mark.parametrize("path", sorted(p for p in PY_FIXTURES.glob("*.py") if Path(str(p) + ".expected").exists()),
                         ids=lambda p: p.name)
def test_flake8_reports_each_fixtures_expected_findings(path):
    args = fixture_args(path)
    expected = snapshots.read(path).findings
    cp = flake8(*to_flake8_args(args), str(path))
    assert cp.returncode == (1 if expected else 0), cp.stdout + cp.stderr
    assert [(ln, col, code) for _p, ln, col, code in flake8_lines(cp.stdout)] == sorted(expected)


@pytest.mark.conformance
def test_the_plugin_agrees_with_kv4lint_check_on_sglangs_own_sources(monkeypatch):
    """SGLang 0.5.23's own Python files (the hard tree: most name sglang and its KV cache options): the plugin,
    on flake8's syntax tree, reports what ``kv4lint check`` reports with every syntax-tree screen switched off,
    and hands kv4lint's frontend only the files that hold a launch."""
    import ast
    import zipfile

    from conformance.wheels import wheel_path
    from kv4lint.files import prefilter
    from kv4lint.files.prefilter import might_launch
    from kv4lint.pipeline import runner
    from kv4lint.settings.config import ConfigResolver

    with zipfile.ZipFile(wheel_path("0.5.23")) as z:
        files = {n: z.read(n).decode("utf-8", "replace") for n in z.namelist() if n.endswith(".py")}
    assert len(files) > 2000
    linted = []
    real_lint_text = runner.lint_text

    def lint_text(path, *args, **kw):
        linted.append(path)
        return real_lint_text(path, *args, **kw)

    def plugin(name: str, text: str) -> list[tuple[int, int, str]]:
        lines = text.splitlines(keepends=True)
        tree = ast.parse(text) if might_launch(text, "python") else None  # flake8's tree; unused before this test
        return [(ln, col, msg) for ln, col, msg, _ in Plugin(tree, lines, name).run()]

    resolver = ConfigResolver(isolated=True)  # as flake8 --isolated: another test may have left its own options
    monkeypatch.setattr(Plugin, "_resolver", resolver)
    monkeypatch.setattr(runner, "lint_text", lint_text)
    got = {n: plugin(n, t) for n, t in files.items()}
    monkeypatch.setattr(runner, "lint_text", real_lint_text)
    import kv4lint.frontends.python  # noqa: F401 - loaded, so that its binding is found
    for m in [m for m in list(sys.modules.values())
              if getattr(m, "python_may_launch", None) is prefilter.python_may_launch]:
        monkeypatch.setattr(m, "python_may_launch", lambda text, tree=None: True)
    truth, launches = {}, []
    for n, t in files.items():
        rep = real_lint_text(n, t, resolver.settings_for(n), language="python")
        truth[n] = [(f.start.line, f.start.column - 1, f"{f.code} {f.message}") for f in rep.findings]
        if rep.launches:
            launches.append(n)
    assert got == truth
    assert sorted(linted) == sorted(launches) and len(launches) >= 4, (linted, launches)


# flake8 skips a file for a line that starts with "# flake8: noqa" (flake8 7: FileProcessor.should_ignore_file,
# also with codes after it, also inside a string); kv4lint check reads it the same way (issue 28 item 9).
FLAKE8_NOQA_HEADERS = {
    "bare": ("# flake8: noqa\n", True),
    "with codes": ("# flake8: noqa: E501\n", True),
    "kv4lint's code": ("# flake8: noqa: KV406\n", True),
    "indented, upper case, =": ("    # FLAKE8=NOQA\n", True),
    "in a string": ('HELP = """\n# flake8: noqa\n"""\n', True),
    "no space after #": ("#flake8: noqa\n", False),
    "after code": ("X = 1  # flake8: noqa\n", False),
    "line noqa": ("# noqa\n", False),
}


def test_flake8_and_kv4lint_check_agree_on_flake8_noqa(tmp_path):
    names = []
    for k, (header, _skipped) in enumerate(FLAKE8_NOQA_HEADERS.values()):
        (tmp_path / f"h{k}.py").write_text(header + LAUNCH.format(noqa=""))
        names.append(f"h{k}.py")
    cp = flake8("--kv4-sglang-version", "0.5.23", *names, cwd=tmp_path)
    assert cp.returncode == 1 and "Traceback" not in cp.stderr, cp.stderr
    by_flake8 = {Path(r[0]).name for r in flake8_lines(cp.stdout)}
    ck = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--isolated", "--sglang-version", "0.5.23",
                         "--format", "concise", *names], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert ck.returncode == 1, ck.stderr
    by_check = {line.split(":")[0] for line in ck.stdout.splitlines() if " KV406 " in line}
    expected = {n for n, (_h, skipped) in zip(names, FLAKE8_NOQA_HEADERS.values()) if not skipped}
    assert by_flake8 == expected
    assert by_check == expected
    # standard input, named as a Python file, is read the same way
    for n in (names[1], names[-1]):
        sd = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--isolated", "--sglang-version", "0.5.23",
                             "--stdin-filename", n, "-"], input=(tmp_path / n).read_text(), capture_output=True,
                            text=True, cwd=tmp_path, timeout=600)
        assert sd.returncode == (1 if n in expected else 0), (n, sd.stdout, sd.stderr)
