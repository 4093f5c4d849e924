"""Service and task files through the CLI: systemd, supervisord, Procfile, justfile, tox.ini, pyproject tasks, Ray.

Each form is found by discovery (by its name or extension), its finding is on the launch line, ``kv4lint fix``
rewrites the value in place and the file then checks clean; the variant with an accepted KV cache stays silent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kv4lint.cli import main
from kv4lint.files.discover import language_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "services"
ARGS = ["--isolated", "--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]
# fixture directory -> (file, launch lines)
FORMS = {
    "sglang_service": ("sglang.service", [9]),
    "supervisord_conf": ("supervisord.conf", [6]),
    "procfile": ("Procfile", [1]),
    "justfile": ("justfile", [6]),
    "tox_ini": ("tox.ini", [7]),
    "pyproject_toml": ("pyproject.toml", [6, 10, 13, 14]),
    "ray_job_yaml": ("ray_job.yaml", [1]),
}


def check(target: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", *ARGS, str(target), "--output-file", str(out)])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("form", sorted(FORMS))
def test_service_form_found_on_the_launch_line_and_fixed(form: str, tmp_path: Path):
    name, lines = FORMS[form]
    work = tmp_path / "repo"
    shutil.copytree(FIXTURES / form, work, ignore=shutil.ignore_patterns("*.expected", "*.fixed"))
    code, doc = check(work, tmp_path)  # the directory: discovery must pick the file by its name
    assert code == 1 and doc["errors"] == [] and doc["files_scanned"] == 1
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(n, "KV401") for n in lines]
    assert all(f["message"].startswith("--kv-cache-dtype nvfp4") for f in doc["findings"])
    before = (work / name).read_text()
    assert main(["fix", *ARGS, str(work)]) == 0
    after = (work / name).read_text()
    assert after == before.replace("nvfp4", "fp8_e4m3")
    code, doc = check(work, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


@pytest.mark.parametrize("form", sorted(FORMS))
def test_service_form_with_an_accepted_kv_cache_is_silent(form: str, tmp_path: Path):
    code, doc = check(FIXTURES / f"{form}_ok" / FORMS[form][0], tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


@pytest.mark.parametrize("path,language", [
    ("deploy/sglang.service", "systemd"), ("etc/supervisor/conf.d/sglang.conf", "supervisord"),
    ("supervisord.conf", "supervisord"), ("Procfile", "procfile"), ("Justfile", "justfile"),
    (".justfile", "justfile"), ("tox.ini", "tox"), ("pyproject.toml", "pyproject"), ("setup.cfg", None),
    ("nginx/site.conf", None),
])
def test_discovery_names_the_service_formats(path: str, language: str | None):
    assert language_of(path) == language


def fix_and_recheck(target: Path, tmp_path: Path, lines: list[int], want: str) -> None:
    code, doc = check(target, tmp_path)
    assert code == 1 and doc["errors"] == []
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(n, "KV401") for n in lines]
    assert main(["fix", *ARGS, str(target)]) == 0
    assert target.read_text() == want
    code, doc = check(target, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


def test_justfile_recipe_lines_with_quiet_and_ignore_error_markers(tmp_path: Path):
    """``@`` (quiet) and ``-`` (ignore errors) before a recipe line are just's, not part of the command."""
    launch = "python3 -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4 --attention-backend triton"
    text = f"serve:\n    @{launch}\n\t-{launch} --port 1\n    -@{launch} --port 2\n"
    (tmp_path / "repo").mkdir()
    target = tmp_path / "repo" / "justfile"
    target.write_text(text)
    fix_and_recheck(target, tmp_path, [2, 3, 4], text.replace("nvfp4", "fp8_e4m3"))


def test_ray_job_entrypoint_reads_its_runtime_env(tmp_path: Path):
    """A Ray job's ``entrypoint:`` runs with ``runtime_env.env_vars``: the value is known there and fixed there."""
    text = ("entrypoint: python -m sglang.launch_server --model-path m --kv-cache-dtype \"$KV_DTYPE\" "
            "--attention-backend triton\n"
            "runtime_env:\n  env_vars:\n    KV_DTYPE: nvfp4\n")
    (tmp_path / "repo").mkdir()
    target = tmp_path / "repo" / "ray_job.yaml"
    target.write_text(text)
    fix_and_recheck(target, tmp_path, [1], text.replace("KV_DTYPE: nvfp4", "KV_DTYPE: fp8_e4m3"))
