"""Settings a script sources from another file of the repository: read, never run; cycles, missing files, cache."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from kv4lint import sourced
from kv4lint.cli import main

ARGS = ["--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]
LAUNCH = ('python -m sglang.launch_server --model-path m --kv-cache-dtype "$KV" '
          '--attention-backend "${ATTN:-triton}"\n')


def check(target: Path, tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / "out.json"
    main(["check", "--format", "json", *ARGS, *extra, str(target), "--output-file", str(out)])
    doc = json.loads(out.read_text())
    assert doc["errors"] == []
    return doc["findings"]


def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / ".git").mkdir(parents=True)
    (r / "scripts").mkdir()
    return r


def test_sourced_value_is_found_at_the_launch(tmp_path: Path):
    r = repo(tmp_path)
    (r / "scripts" / "env.sh").write_text("export KV=nvfp4\n")
    for line in ('source "$(dirname "$0")/env.sh"', ". ./env.sh", '. "${SCRIPT_DIR}/env.sh"'):
        (r / "scripts" / "serve.sh").write_text(f"#!/bin/bash\n{line}\n" + LAUNCH)
        found = check(r / "scripts" / "serve.sh", tmp_path, "--isolated")
        assert [(f["line"], f["code"]) for f in found] == [(3, "KV401")], line
        assert found[0]["message"].startswith("--kv-cache-dtype nvfp4")
        # The value lives in env.sh, which other scripts may source too: the fix edits it there, as unsafe.
        fix = found[0]["fix"]
        assert fix["applicability"] == "unsafe"
        assert [(Path(e["path"]).name, e["text"]) for e in fix["edits"]] == [("env.sh", "fp8_e4m3")]


def test_sourced_value_fixed_in_the_settings_file_with_unsafe_fixes(tmp_path: Path):
    r = repo(tmp_path)
    env = r / "scripts" / "env.sh"
    env.write_text("# shared\nexport KV=nvfp4\n")
    script = r / "scripts" / "serve.sh"
    script.write_text('. "$(dirname "$0")/env.sh"\n' + LAUNCH)
    before = script.read_text()
    main(["fix", *ARGS, "--isolated", str(script)])  # safe fixes only: env.sh is left alone
    assert env.read_text() == "# shared\nexport KV=nvfp4\n"
    main(["fix", *ARGS, "--isolated", "--unsafe-fixes", str(script)])
    assert env.read_text() == "# shared\nexport KV=fp8_e4m3\n" and script.read_text() == before
    assert check(script, tmp_path, "--isolated") == []


def test_sourced_chain_cycle_and_missing_file(tmp_path: Path):
    r = repo(tmp_path)
    (r / "scripts" / "a.sh").write_text(". ./b.sh\nKV=nvfp4\n")
    (r / "scripts" / "b.sh").write_text(". ./a.sh\nATTN=triton\n. ./missing.sh\n")
    (r / "scripts" / "serve.sh").write_text(". ./a.sh\n" + LAUNCH)
    assert [f["line"] for f in check(r / "scripts" / "serve.sh", tmp_path, "--isolated")] == [2]
    (r / "scripts" / "serve.sh").write_text(". ./missing.sh\n" + LAUNCH)
    assert check(r / "scripts" / "serve.sh", tmp_path, "--isolated") == []


def test_a_file_outside_the_repository_is_not_read(tmp_path: Path):
    r = repo(tmp_path)
    (tmp_path / "outside.sh").write_text("KV=nvfp4\n")
    (r / "scripts" / "serve.sh").write_text(". ../../outside.sh\n" + LAUNCH)
    assert check(r / "scripts" / "serve.sh", tmp_path, "--isolated") == []


def test_outside_git_the_project_bounds_what_is_read(tmp_path: Path):
    """Not under git: the nearest ``pyproject.toml`` marks the repository (kv4lint.ignore.repository_root)."""
    proj = tmp_path / "proj"
    (proj / "scripts").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (proj / "env.sh").write_text("KV=nvfp4\n")
    (tmp_path / "shared.sh").write_text("KV=nvfp4\n")
    serve = proj / "scripts" / "serve.sh"
    serve.write_text(". ../env.sh\n" + LAUNCH)
    assert [f["line"] for f in check(serve, tmp_path, "--isolated")] == [2]
    serve.write_text(". ../../shared.sh\n" + LAUNCH)
    assert check(serve, tmp_path, "--isolated") == []


def test_editing_the_sourced_file_is_seen_through_the_cache(tmp_path: Path):
    r = repo(tmp_path)
    env = r / "scripts" / "env.sh"
    env.write_text("KV=fp8_e4m3\n")
    (r / "scripts" / "serve.sh").write_text(". ./env.sh\n" + LAUNCH)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert check(r / "scripts", tmp_path, *cache) == []
    env.write_text("KV=nvfp4\n")
    os.utime(env, ns=(1, 1))
    assert [f["line"] for f in check(r / "scripts", tmp_path, *cache)] == [2]
    env.write_text("KV=auto\n")
    assert check(r / "scripts", tmp_path, *cache) == []


def test_compose_env_file_and_dotenv(tmp_path: Path):
    r = repo(tmp_path)
    (r / "docker-compose.yml").write_text(
        "services:\n"
        "  a:\n"
        "    command: python3 -m sglang.launch_server --model-path m --kv-cache-dtype ${KV} "
        "--attention-backend triton\n"
        "  b:\n"
        "    env_file: [conf/b.env]\n"
        '    command: ["sh", "-c", "python3 -m sglang.launch_server --model-path m --kv-cache-dtype $$B_KV '
        '--attention-backend triton"]\n')
    (r / "conf").mkdir()
    (r / "conf" / "b.env").write_text("# b\nexport B_KV='nvfp4'\n")
    (r / ".env").write_text("KV=nvfp4 # the FP4 cache\n")
    found = check(r / "docker-compose.yml", tmp_path, "--isolated")
    assert [(f["line"], f["code"]) for f in found] == [(3, "KV401"), (6, "KV401")]
    assert all(f["message"].startswith("--kv-cache-dtype nvfp4") for f in found)
    (r / ".env").write_text("KV=fp8_e4m3\n")
    (r / "conf" / "b.env").unlink()
    assert check(r / "docker-compose.yml", tmp_path, "--isolated") == []


def test_docker_run_env_file(tmp_path: Path):
    r = repo(tmp_path)
    (r / "scripts" / "serve.env").write_text("SERVE_KV=nvfp4\n")
    script = r / "scripts" / "run.sh"
    script.write_text("docker run --gpus all --env-file serve.env lmsysorg/sglang:v0.5.23-cu129 \\\n"
                      "  bash -c 'python3 -m sglang.launch_server --model-path m --kv-cache-dtype \"$SERVE_KV\" "
                      "--attention-backend triton'\n")
    found = check(script, tmp_path, "--isolated")
    assert [(f["line"], f["code"]) for f in found] == [(2, "KV401")]
    (r / "scripts" / "serve.env").write_text("SERVE_KV=fp8_e4m3\n")
    assert check(script, tmp_path, "--isolated") == []
    # docker takes an env-file's value as written: quotes are part of it (not a KV cache dtype SGLang knows).
    (r / "scripts" / "serve.env").write_text('SERVE_KV="nvfp4"\n')
    assert [f["code"] for f in check(script, tmp_path, "--isolated")] != ["KV401"]


def test_makefile_include(tmp_path: Path):
    r = repo(tmp_path)
    (r / "config.mk").write_text("KV_DTYPE := nvfp4\ninclude backend.mk\n")
    (r / "backend.mk").write_text("ATTN = triton\n-include config.mk\n")  # a cycle: each file read once
    mk = r / "Makefile"
    mk.write_text("include config.mk missing.mk\n\nserve:\n\tpython -m sglang.launch_server --model-path m "
                  "--kv-cache-dtype $(KV_DTYPE) --attention-backend $(ATTN)\n")
    found = check(mk, tmp_path, "--isolated")
    assert [(f["line"], f["code"]) for f in found] == [(4, "KV401")]
    assert found[0]["message"].startswith("--kv-cache-dtype nvfp4") and found[0]["fix"] is None
    (r / "config.mk").write_text("KV_DTYPE := fp8_e4m3\ninclude backend.mk\n")
    assert check(mk, tmp_path, "--isolated") == []


def test_python_sibling_module_constants(tmp_path: Path):
    r = repo(tmp_path)
    (r / "serving").mkdir()
    (r / "serving" / "presets.py").write_text(
        'import os\nKV_DTYPE = "nvfp4"\nPRESETS = {"fast": {"kv_cache_dtype": "nvfp4"}}\n'
        'COMPUTED = os.environ["X"]\nprint("never run")\n')
    launcher = r / "serving" / "serve.py"
    launcher.write_text(
        "import sglang as sgl\nfrom . import presets\nfrom .presets import KV_DTYPE, COMPUTED\n"
        'sgl.Engine(model_path="m", kv_cache_dtype=KV_DTYPE, attention_backend="triton")\n'
        'sgl.Engine(model_path="m", attention_backend="triton", **presets.PRESETS["fast"])\n'
        'sgl.Engine(model_path="m", kv_cache_dtype=COMPUTED, attention_backend="triton")\n')
    found = check(launcher, tmp_path, "--isolated")
    assert [(f["line"], f["code"]) for f in found] == [(4, "KV401"), (5, "KV401")]
    # Written in presets.py, which other launchers may import: fixed there, as an unsafe fix.
    assert [(f["fix"]["applicability"], [Path(e["path"]).name for e in f["fix"]["edits"]]) for f in found] == \
        [("unsafe", ["presets.py"])] * 2
    main(["fix", *ARGS, "--isolated", "--unsafe-fixes", str(launcher)])
    assert (r / "serving" / "presets.py").read_text() == (
        'import os\nKV_DTYPE = "fp8_e4m3"\nPRESETS = {"fast": {"kv_cache_dtype": "fp8_e4m3"}}\n'
        'COMPUTED = os.environ["X"]\nprint("never run")\n')
    assert check(launcher, tmp_path, "--isolated") == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_never_read_as_a_settings_file(tmp_path: Path):
    """Settings files are read through kv4lint.regular_file: a FIFO is refused before it is opened, even with
    a writer waiting on it (a plain ``open`` would read what the writer writes, or wait for one forever)."""
    fifo = tmp_path / "serve.env"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("SERVE_KV=nvfp4\n"))
    writer.start()
    try:
        assert sourced.dotenv(str(fifo), compose=False) == {}
        assert sourced.python_constants(str(fifo)) == {}
    finally:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # let the writer finish
        writer.join()
        os.close(fd)
