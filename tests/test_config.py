"""Configuration: pyproject.toml [tool.kv4lint], kv4lint.toml, .kv4lint.toml, the command line over them."""

from __future__ import annotations

import argparse

import pytest

from kv4lint.base.settings import DEFAULT_FIX_DTYPE, MAX_FILE_BYTES
from kv4lint.cli import build_parser, main
from kv4lint.settings.config import ConfigError, build_settings, find_config, settings_from_mapping

FULL = """\
sglang-version = "0.5.21"
platform = "rocm"
gpu = "h100"
model-attention = "mla"
strict = true
select = ["KV40"]
extend-select = ["KV406"]
ignore = ["KV403"]
exclude = ["vendor"]
extend-exclude = ["third_party/*"]
fix-dtype = "fp8_e5m2"
max-file-size = "2MB"

[model-overrides]
"*DeepSeek*" = "mla"
"./models/llama*" = "mha"

[per-file-ignores]
"tests/*" = ["KV401", "KV402"]
"docs/*.md" = ["KV4"]
"""


def ns_for(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(["check", *argv])


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    return tmp_path


def _pyproject(body: str) -> str:
    """``body`` (kv4lint.toml syntax) as a pyproject.toml's [tool.kv4lint] table."""
    lines = [f"[tool.kv4lint.{ln[1:]}" if ln.startswith("[") else ln for ln in body.splitlines()]
    return '[project]\nname = "x"\nversion = "0"\n\n[tool.kv4lint]\n' + "\n".join(lines) + "\n"


def _check_full(s, label):
    assert s.sglang_version == "0.5.21"
    assert s.platform == "rocm"
    assert s.gpu == "h100"
    assert s.model_attention == "mla"
    assert s.strict is True
    assert s.select == ["KV40"] and s.extend_select == ["KV406"] and s.ignore == ["KV403"]
    assert s.exclude == ["vendor"] and s.extend_exclude == ["third_party/*"]
    assert s.fix_dtype == "fp8_e5m2"
    assert s.max_file_bytes == 2_000_000
    assert s.model_overrides == {"*DeepSeek*": "mla", "./models/llama*": "mha"}
    assert s.per_file_ignores == {"tests/*": ["KV401", "KV402"], "docs/*.md": ["KV4"]}
    for attr in ("sglang_version", "platform", "gpu", "model_attention", "strict", "select", "extend_select",
                 "ignore", "exclude", "extend_exclude", "fix_dtype", "max_file_bytes", "model_overrides",
                 "per_file_ignores"):
        assert s.sources[attr] == label, attr
    assert s.enabled("KV401") and not s.enabled("KV403") and s.enabled("KV406")


def test_every_key_from_kv4lint_toml(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text(FULL)
    s = build_settings(ns_for([]), ["."])
    _check_full(s, "kv4lint.toml")
    assert s.root == str(repo)


def test_every_key_from_dot_kv4lint_toml(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / ".kv4lint.toml").write_text(FULL)
    _check_full(build_settings(ns_for([]), ["."]), ".kv4lint.toml")


def test_every_key_from_pyproject(repo, monkeypatch):
    monkeypatch.chdir(repo)
    text = _pyproject(FULL)
    assert "[tool.kv4lint.model-overrides]" in text and "[tool.kv4lint.per-file-ignores]" in text
    (repo / "pyproject.toml").write_text(text)
    _check_full(build_settings(ns_for([]), ["."]), "pyproject.toml [tool.kv4lint]")


def test_defaults_without_a_file(repo, monkeypatch):
    monkeypatch.chdir(repo)
    s = build_settings(ns_for([]), ["."])
    assert s.sglang_version is None and s.platform is None and s.gpu is None and s.select is None
    assert s.fix_dtype == DEFAULT_FIX_DTYPE and s.max_file_bytes == MAX_FILE_BYTES and not s.strict
    assert s.sources == {}
    assert s.root == str(repo)  # the git root


def test_cli_overrides_the_file(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text(FULL)
    s = build_settings(ns_for(["--sglang-version", "0.5.23", "--platform", "cuda", "--gpu", "b200",
                               "--model-attention", "mha", "--fix-dtype", "bf16", "--select", "KV401,KV404",
                               "--extend-select", "KV405", "--ignore", "KV404", "--exclude", "build",
                               "--extend-exclude", "gen/*"]), ["."])
    assert (s.sglang_version, s.platform, s.gpu, s.model_attention, s.fix_dtype) == (
        "0.5.23", "cuda", "b200", "mha", "bf16")
    assert s.sources["gpu"] == "--gpu" and s.sources["sglang_version"] == "--sglang-version"
    assert s.select == ["KV401", "KV404"] and s.sources["select"] == "--select"  # replaces
    assert s.extend_select == ["KV406", "KV405"]  # adds
    assert s.ignore == ["KV403", "KV404"] and s.sources["ignore"] == "kv4lint.toml and --ignore"
    assert s.exclude == ["build"] and s.extend_exclude == ["third_party/*", "gen/*"]
    assert s.strict is True  # from the file; the CLI has no --no-strict
    assert s.sources["strict"] == "kv4lint.toml"


def test_walks_up_from_the_first_path(repo, monkeypatch, tmp_path_factory):
    (repo / "pyproject.toml").write_text(_pyproject('gpu = "sm120"'))
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "run.sh").write_text("echo\n")
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    s = build_settings(ns_for([]), [str(deep / "run.sh"), "/nonexistent"])
    assert s.gpu == "sm120" and s.root == str(repo)
    assert s.sources["gpu"].endswith("pyproject.toml [tool.kv4lint]")


def test_pyproject_without_the_table_is_passed_over(repo):
    (repo / "kv4lint.toml").write_text('gpu = "h100"\n')
    sub = repo / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "pkg"\n[tool.ruff]\nline-length = 100\n')
    cf = find_config(str(sub))
    assert cf is not None and cf.path == str(repo / "kv4lint.toml")


def test_the_walk_stops_at_the_git_root(tmp_path):
    (tmp_path / "kv4lint.toml").write_text('gpu = "h100"\n')
    inner = tmp_path / "checkout"
    (inner / ".git").mkdir(parents=True)
    assert find_config(str(inner)) is None


def test_nearest_file_wins_and_dot_file_first(repo):
    (repo / "kv4lint.toml").write_text('gpu = "h100"\n')
    sub = repo / "svc"
    sub.mkdir()
    (sub / "pyproject.toml").write_text(_pyproject('gpu = "b200"'))
    assert find_config(str(sub)).path == str(sub / "pyproject.toml")
    (sub / "kv4lint.toml").write_text('gpu = "rtx5090"\n')
    assert find_config(str(sub)).path == str(sub / "kv4lint.toml")
    (sub / ".kv4lint.toml").write_text('gpu = "gb10"\n')
    assert find_config(str(sub)).path == str(sub / ".kv4lint.toml")


def test_config_option_names_the_file(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text('gpu = "h100"\n')
    other = repo / "ci" / "kv4lint-ci.toml"
    other.parent.mkdir()
    other.write_text('gpu = "b200"\nstrict = true\n')
    s = build_settings(ns_for(["--config", str(other)]), ["."])
    assert s.gpu == "b200" and s.strict and s.root == str(other.parent)
    pp = repo / "ci" / "pyproject.toml"
    pp.write_text(_pyproject('platform = "xpu"'))
    assert build_settings(ns_for(["--config", str(pp)]), ["."]).platform == "xpu"
    with pytest.raises(ConfigError, match="no such configuration file"):
        build_settings(ns_for(["--config", str(repo / "missing.toml")]), ["."])


def test_isolated_ignores_files(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text('gpu = "h100"\nbogus = 1\n')
    s = build_settings(ns_for(["--isolated"]), ["."])
    assert s.gpu is None


@pytest.mark.parametrize("body,message", [
    ('sglang_version = "0.5.23"', "kv4lint.toml: sglang_version: unknown key (did you mean 'sglang-version'?)"),
    ("colour = true", "kv4lint.toml: colour: unknown key (known keys: sglang-version"),
    ('sglang-version = "latest"', "kv4lint.toml: sglang-version: not a version: 'latest'"),
    ("sglang-version = 0.5", "kv4lint.toml: sglang-version: expected a non-empty string, got 0.5"),
    ('platform = "tpu"', "kv4lint.toml: platform: unknown platform 'tpu'"),
    ('gpu = "voodoo3"', "kv4lint.toml: gpu: unknown GPU 'voodoo3'"),
    ('model-attention = "gqa"', 'kv4lint.toml: model-attention: expected "mha" or "mla", got \'gqa\''),
    ('strict = "maybe"', "kv4lint.toml: strict: expected a TOML boolean, true or false (unquoted), got 'maybe'"),
    # booleans are TOML booleans: a string that reads as one is still a string (issue 29)
    ('strict = "yes"', "kv4lint.toml: strict: expected a TOML boolean, true or false (unquoted), got 'yes'"),
    ('strict = "true"', "kv4lint.toml: strict: expected a TOML boolean, true or false (unquoted), got 'true'"),
    ("strict = 1", "kv4lint.toml: strict: expected a TOML boolean, true or false (unquoted), got 1"),
    ('select = ["KV499"]', "kv4lint.toml: select: unknown code 'KV499'"),
    ('ignore = ["E501"]', "kv4lint.toml: ignore: unknown code 'E501'"),
    ("extend-select = [401]", "kv4lint.toml: extend-select: expected an array of strings, found 401 in it"),
    ('fix-dtype = "nvfp4"', "kv4lint.toml: fix-dtype: 'nvfp4' is not a KV cache dtype fixes can use"),
    ('fix-dtype = "fp8"', "kv4lint.toml: fix-dtype: 'fp8' is not a KV cache dtype fixes can use"),
    ("max-file-size = -1", "kv4lint.toml: max-file-size: expected a positive size"),
    ('max-file-size = "huge"', "kv4lint.toml: max-file-size: expected a size in bytes"),
    ('exclude = "a b"\nper-file-ignores = ["x"]', "kv4lint.toml: per-file-ignores: expected a table"),
    ('[model-overrides]\n"*llama*" = "gqa"', "kv4lint.toml: model-overrides: '*llama*': expected \"mha\" or \"mla\""),
    ('[per-file-ignores]\n"t/*" = ["KV9"]', "kv4lint.toml: per-file-ignores: 't/*': unknown code 'KV9'"),
    ("[tool.kv4lint]\ngpu = 'h100'", "kv4lint.toml: tool: unknown key"),
    ("gpu = ", "kv4lint.toml: not valid TOML"),
])
def test_bad_kv4lint_toml(repo, monkeypatch, body, message):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text(body + "\n")
    with pytest.raises(ValueError) as e:
        build_settings(ns_for([]), ["."])
    assert message in str(e.value)


def test_bad_pyproject_names_the_table(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "pyproject.toml").write_text(_pyproject('gpu = "voodoo3"'))
    with pytest.raises(ValueError, match=r"^pyproject.toml: \[tool.kv4lint\] gpu: unknown GPU 'voodoo3'"):
        build_settings(ns_for([]), ["."])
    (repo / "pyproject.toml").write_text('[tool]\nkv4lint = "yes"\n')
    with pytest.raises(ValueError, match=r"pyproject.toml: \[tool.kv4lint\] must be a table"):
        build_settings(ns_for([]), ["."])


def test_bad_config_exits_2_with_the_message(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    (repo / "pyproject.toml").write_text(_pyproject('select = ["KV4O1"]'))
    (repo / "run.sh").write_text("echo hi\n")
    assert main(["check", "run.sh"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml: [tool.kv4lint] select: unknown code 'KV4O1'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv,message", [
    (["--fix-dtype", "nvfp4"], "--fix-dtype: 'nvfp4' is not a KV cache dtype"),
    (["--select", "KV4,XYZ1"], "--select: unknown code 'XYZ1'"),
    (["--ignore", "KV4O1"], "--ignore: unknown code 'KV4O1'"),
    (["--platform", "tpu"], "--platform: unknown platform 'tpu'"),
    (["--sglang-version", "latest"], "--sglang-version: not a version: 'latest'"),
])
def test_bad_cli_values_name_the_option(repo, monkeypatch, capsys, argv, message):
    """A bad value is a usage error of the command line (exit 2), checked by the option table's check."""
    monkeypatch.chdir(repo)
    with pytest.raises(SystemExit) as exc:
        main(["check", *argv, "."])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_codes_all_and_prefixes(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text('select = ["ALL"]\nignore = ["kv403"]\n')
    s = build_settings(ns_for([]), ["."])
    assert s.select == ["KV"] and s.ignore == ["KV403"]
    assert s.enabled("KV401") and not s.enabled("KV403")


def test_sizes():
    for raw, n in [(1024, 1024), ("512KB", 512_000), ("1MiB", 1024**2), ("10 MB", 10_000_000), ("3", 3)]:
        assert settings_from_mapping({"max-file-size": raw}, "x").max_file_bytes == n


def test_mapping_from_flake8_strings():
    s = settings_from_mapping({"sglang-version": "0.5.23", "strict": "true", "select": "KV401, KV404",
                               "per-file-ignores": "tests/*:KV401,KV402 docs/*:KV4",
                               "model-overrides": "*DeepSeek*=mla,*llama*=mha", "gpu": None},
                              "setup.cfg [flake8]")
    assert s.sglang_version == "0.5.23" and s.strict is True and s.select == ["KV401", "KV404"]
    assert s.per_file_ignores == {"tests/*": ["KV401", "KV402"], "docs/*": ["KV4"]}
    assert s.model_overrides == {"*DeepSeek*": "mla", "*llama*": "mha"}
    assert s.gpu is None and "gpu" not in s.sources
    assert s.sources["select"] == "setup.cfg [flake8]"
    with pytest.raises(ValueError, match=r"^setup.cfg \[flake8\]: gpu: unknown GPU"):
        settings_from_mapping({"gpu": "nope"}, "setup.cfg [flake8]")


def test_per_file_ignores_from_config_suppress_findings(repo, monkeypatch):
    """End to end through the runner's suppression, with a hand-made launch (no frontend needed)."""
    from kv4lint.base.model import Finding, Launch, ScanResult, Severity, Span
    from kv4lint.base.source import LineIndex
    from kv4lint.pipeline.runner import _suppressed

    monkeypatch.chdir(repo)
    (repo / "kv4lint.toml").write_text('[per-file-ignores]\n"examples/*" = ["KV401"]\n')
    s = build_settings(ns_for([]), ["."])
    launch = Launch("examples/a.sh", "argv", "sglang.launch_server", Span(0, 1), Span(0, 1))
    idx = LineIndex("x\n")
    f = Finding("KV401", Severity.ERROR, "m", "examples/a.sh")
    assert _suppressed(f, launch, ScanResult(), idx, "shell", s)
    g = Finding("KV402", Severity.ERROR, "m", "examples/a.sh")
    assert not _suppressed(g, launch, ScanResult(), idx, "shell", s)
    h = Finding("KV401", Severity.ERROR, "m", "scripts/a.sh")
    assert not _suppressed(h, launch, ScanResult(), idx, "shell", s)
