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
from kv4lint.discover import language_of

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
