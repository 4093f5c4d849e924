"""The SGLang release a repository pins: one fixture repository per kind of pin (fixtures/repos/)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from kv4lint.settings import project
from kv4lint.settings.project import find_sglang_pin, image_version, sglang_pins

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"

EXPECTED = {  # fixture repository -> (version, where the source says it came from)
    "requirements": ("0.5.23", "requirements/base.txt:3 (sglang[all]==0.5.23)"),
    "pyproject": ("0.5.22", "pyproject.toml [project] dependencies (sglang[srt]==0.5.22)"),
    "pyproject-optional": ("0.5.21.post1", "pyproject.toml [project.optional-dependencies] serve"),
    "dependency-groups": ("0.5.20", "pyproject.toml [dependency-groups] serve (sglang===0.5.20)"),
    "poetry": ("0.5.19", "pyproject.toml [tool.poetry.dependencies]"),
    "uv-lock": ("0.5.18", "uv.lock (sglang 0.5.18)"),
    "poetry-lock": ("0.5.14", "poetry.lock (sglang 0.5.14)"),
    "pipfile-lock": ("0.5.12", "Pipfile.lock [default]"),
    "dockerfile": ("0.5.23", "Dockerfile:3 (image lmsysorg/sglang:v0.5.23-cu129)"),
    "compose": ("0.5.21.post1", "compose.yaml:3 (image docker.io/lmsysorg/sglang:v0.5.21.post1-cu128)"),
    "dockerfile-pip": ("0.5.17", "Dockerfile:3 (sglang[all]==0.5.17)"),
    "compatible-release": ("0.5.22", "~= admits later releases"),
}


def test_every_fixture_repository_is_tested():
    assert {p.name for p in REPOS.iterdir() if p.is_dir()} == set(EXPECTED) | {"requirements-range"}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_pin_per_kind(kind):
    version, source = EXPECTED[kind]
    got = find_sglang_pin(str(REPOS / kind), installed=False)
    assert got is not None, kind
    assert got[0] == version
    assert source in got[1]


def test_a_range_is_not_a_pin():
    root = str(REPOS / "requirements-range")
    assert find_sglang_pin(root, installed=False) is None
    pins = sglang_pins(root, installed=False)
    assert [p.version for p in pins] == [None]  # sglang-router is another package
    assert "a range, not a pin" in pins[0].source and "requirements.txt:2" in pins[0].source


def test_ranges_in_pyproject_yield_to_the_lock_file():
    pins = sglang_pins(str(REPOS / "uv-lock"), installed=False)
    assert [p.version for p in pins] == [None, "0.5.18"]
    pins = sglang_pins(str(REPOS / "poetry-lock"), installed=False)
    assert [p.version for p in pins] == [None, "0.5.14"]  # ^0.5.10 is a range
    assert "^0.5.10" in pins[0].source


def test_commented_out_image_is_not_read():
    pins = sglang_pins(str(REPOS / "dockerfile"), installed=False)
    assert [p.version for p in pins] == ["0.5.23"]


def test_requirements_include_cycle_and_options(tmp_path):
    (tmp_path / "requirements.txt").write_text("-r requirements-dev.txt\n")
    (tmp_path / "requirements-dev.txt").write_text(
        "--requirement=requirements.txt\n-e .\n--index-url https://example.invalid/simple\n"
        "SGLang==0.5.16 ; python_version >= '3.10'  # the serving image\n")
    assert find_sglang_pin(str(tmp_path), installed=False) == (
        "0.5.16", "requirements-dev.txt:4 (SGLang==0.5.16 ; python_version >= '3.10')")


@pytest.mark.parametrize("line,version", [
    ("sglang==0.5.23", "0.5.23"),
    ("sglang[all]==0.5.23", "0.5.23"),
    ("sglang == 0.5.23.post1", "0.5.23.post1"),
    ("sglang===0.5.7", "0.5.7"),
    ("sglang>=0.5.16,==0.5.20", "0.5.20"),
    ("sglang~=0.5.21", "0.5.21"),
    ("sglang==0.5.*", None),
    ("sglang>=0.5.21,<0.6", None),
    ("sglang", None),
    ("sglang @ https://example.invalid/wheels/sglang-0.5.22-py3-none-any.whl", "0.5.22"),
    ("sglang @ git+https://github.com/sgl-project/sglang@v0.5.21#subdirectory=python", "0.5.21"),
    ("sglang @ git+https://github.com/sgl-project/sglang@main#subdirectory=python", None),
])
def test_requirement_lines(tmp_path, line, version):
    (tmp_path / "requirements.txt").write_text(line + "\n")
    got = find_sglang_pin(str(tmp_path), installed=False)
    assert (got[0] if got else None) == version


@pytest.mark.parametrize("spec,version", [
    ('"0.5.19"', "0.5.19"), ('"==0.5.19"', "0.5.19"), ('"^0.5.19"', None), ('"~0.5.19"', None),
    ('">=0.5.19"', None), ('{version = "0.5.19", extras = ["all"]}', "0.5.19"),
    ('{git = "https://github.com/sgl-project/sglang", tag = "v0.5.20", subdirectory = "python"}', "0.5.20"),
    ('[{version = "0.5.18", markers = "sys_platform == \'linux\'"}]', "0.5.18"),
])
def test_poetry_specs(tmp_path, spec, version):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.poetry]\nname = "x"\n\n[tool.poetry.group.serve.dependencies]\nsglang = {spec}\n')
    got = find_sglang_pin(str(tmp_path), installed=False)
    assert (got[0] if got else None) == version


@pytest.mark.parametrize("text,version", [
    ("FROM lmsysorg/sglang:v0.5.23-cu129", "0.5.23"),
    ("FROM lmsysorg/sglang:v0.5.21.post1-rocm700-mi30x AS base", "0.5.21.post1"),
    ("image: registry.example.com:5000/mirror/lmsysorg/sglang:0.5.20-cu126", "0.5.20"),
    ('image: "lmsysorg/sglang:latest"', None),
    ("FROM lmsysorg/sglang:dev", None),
    ("FROM myorg/sglang-custom:0.5.23", None),
    ("FROM python:3.11-slim", None),
])
def test_image_tags(text, version):
    got = image_version(text)
    assert (got[0] if got else None) == version


def test_installed_distribution_is_the_last_resort(monkeypatch, tmp_path):
    site = tmp_path / "site"  # an installed distribution, as pip leaves it
    (site / "sglang-0.5.15.dist-info").mkdir(parents=True)
    (site / "sglang-0.5.15.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.15\n")
    monkeypatch.syspath_prepend(str(site))
    repo = tmp_path / "repo"
    repo.mkdir()
    assert find_sglang_pin(str(repo)) == ("0.5.15", "the installed sglang distribution (0.5.15)")
    # a pin in the repository wins over what happens to be installed
    (repo / "requirements.txt").write_text("sglang==0.5.23\n")
    assert find_sglang_pin(str(repo))[0] == "0.5.23"


def test_installed_distribution_absent(monkeypatch, tmp_path):
    from importlib import metadata

    def distribution(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.distribution", distribution)
    assert find_sglang_pin(str(tmp_path)) is None


def test_broken_files_are_not_fatal(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\n")
    (tmp_path / "uv.lock").write_text('name = "sglang" [[[')
    (tmp_path / "Pipfile.lock").write_text("{not json")
    assert find_sglang_pin(str(tmp_path), installed=False) is None


def _ns(**kw):
    base = dict(sglang_version=None, platform=None, gpu=None, model_attention=None, fix_dtype=None, strict=None,
                select=None, extend_select=None, ignore=None, exclude=None, extend_exclude=None, config_file=None,
                isolated=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_build_settings_fills_the_repository_pin_and_it_reaches_the_target(tmp_path):
    from kv4lint.base.model import Launch, Span, Value
    from kv4lint.pipeline.runner import resolve_target
    from kv4lint.settings.config import build_settings

    repo = tmp_path / "repo"
    shutil.copytree(REPOS / "dockerfile", repo)
    (repo / ".git").mkdir()
    (repo / "scripts").mkdir()
    s = build_settings(_ns(), [str(repo / "scripts")])
    assert s.root == str(repo)
    assert (s.repo_sglang_version, s.repo_sglang_version_source) == (
        "0.5.23", "Dockerfile:3 (image lmsysorg/sglang:v0.5.23-cu129)")
    launch = Launch("serve.sh", "argv", "sglang.launch_server", Span(0, 10), Span(0, 10),
                    argv=[Value("--model-path", Span(11, 23)), Value("Qwen/Qwen3-8B", Span(24, 37))])
    target, _ = resolve_target(launch, s)
    assert target.sglang_version == "0.5.23"
    assert target.sources["sglang_version"] == "Dockerfile:3 (image lmsysorg/sglang:v0.5.23-cu129)"
    # the command line beats the repository, and the repository is then not even read
    s = build_settings(_ns(sglang_version="0.5.14"), [str(repo)])
    assert s.repo_sglang_version is None
    assert resolve_target(launch, s)[0].sglang_version == "0.5.14"


def test_repository_is_the_config_files_directory(tmp_path):
    from kv4lint.settings.config import build_settings

    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("sglang==0.5.10\n")
    sub = tmp_path / "services" / "chat"
    sub.mkdir(parents=True)
    (sub / "kv4lint.toml").write_text('gpu = "h100"\n')
    (sub / "requirements.txt").write_text("sglang==0.5.22\n")
    s = build_settings(_ns(), [str(sub)])
    assert s.root == str(sub) and s.repo_sglang_version == "0.5.22"
    s = build_settings(_ns(isolated=True), [str(sub)])
    assert s.root == str(tmp_path) and s.repo_sglang_version == "0.5.10"


def test_no_sglang_anywhere(tmp_path, monkeypatch):
    monkeypatch.setattr(project, "_installed", lambda: [])
    (tmp_path / "requirements.txt").write_text("numpy==2.0\n")
    assert find_sglang_pin(str(tmp_path)) is None
    assert find_sglang_pin(None) is None
