"""Settings a script sources from another file of the repository: read, never run; cycles, missing files, cache."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from kv4lint.cli import main
from kv4lint.pipeline import sourced

ARGS = ["--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]
# A compose service that reads B_KV from conf/b.env (`env_file:`) in its `sh -c` command.
SERVICE_WITH_ENV_FILE = (
    "  b:\n"
    "    env_file: [conf/b.env]\n"
    '    command: ["sh", "-c", "python3 -m sglang.launch_server --model-path m --kv-cache-dtype $$B_KV '
    '--attention-backend triton"]\n')
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


def fixed_in_settings_file(target: Path, settings: Path, want: str, lines: list[int], tmp_path: Path,
                           capsys) -> None:
    """The launch in ``target`` is reported on ``lines``, its fix rewrites the value in ``settings`` (an unsafe
    fix that says why), ``--diff`` shows that file's hunk, ``fix --unsafe-fixes`` leaves ``settings`` exactly
    ``want`` and ``target`` as it was, and the tree then checks clean."""
    found = check(target, tmp_path, "--isolated")
    assert [(f["line"], f["code"]) for f in found] == [(n, "KV401") for n in lines]
    assert all(f["message"].startswith("--kv-cache-dtype nvfp4") for f in found)
    for f in found:
        fix = f["fix"]
        assert fix["applicability"] == "unsafe"
        assert fix["description"] == (f"set --kv-cache-dtype fp8_e4m3 (unsafe: written in "
                                      f"{settings.name}, which other files may read too)")
        assert [(Path(e["path"]).resolve(), e["text"]) for e in fix["edits"]] == [(settings.resolve(), "fp8_e4m3")]
    before, settings_before = target.read_text(), settings.read_text()
    capsys.readouterr()
    assert main(["fix", *ARGS, "--isolated", "--diff", "--unsafe-fixes", str(target)]) == 1
    diff = capsys.readouterr().out
    rel = os.path.relpath(settings)
    removed = [ln for ln in settings_before.splitlines() if ln not in want.splitlines()]
    added = [ln for ln in want.splitlines() if ln not in settings_before.splitlines()]
    assert f"--- a/{rel}\n+++ b/{rel}\n" in diff and os.path.relpath(target) not in diff
    assert [ln[1:] for ln in diff.splitlines() if ln[:1] in "-+" and ln[:3] not in ("---", "+++")] == \
        removed + added
    assert settings.read_text() == settings_before  # --diff writes nothing
    main(["fix", *ARGS, "--isolated", str(target)])  # safe fixes only: the settings file is left alone
    assert settings.read_text() == settings_before
    main(["fix", *ARGS, "--isolated", "--unsafe-fixes", str(target)])
    assert settings.read_text() == want and target.read_text() == before
    assert check(target, tmp_path, "--isolated") == []


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


def test_a_cycle_of_two_files_reads_each_once(tmp_path: Path, monkeypatch):
    r = repo(tmp_path)
    (r / "scripts" / "a.sh").write_text(". ./b.sh\nKV=nvfp4\n")
    (r / "scripts" / "b.sh").write_text(". ./a.sh\nATTN=triton\n")
    (r / "scripts" / "serve.sh").write_text(". ./a.sh\n" + LAUNCH)
    reads: list[str] = []
    real = sourced._read

    def counting(path: str, **kw):
        reads.append(os.path.basename(path))
        return real(path, **kw)

    monkeypatch.setattr(sourced, "_read", counting)
    assert [f["line"] for f in check(r / "scripts" / "serve.sh", tmp_path, "--isolated")] == [2]
    assert sorted(reads) == ["a.sh", "b.sh"]


def test_a_file_outside_the_repository_is_not_read(tmp_path: Path):
    r = repo(tmp_path)
    (tmp_path / "outside.sh").write_text("KV=nvfp4\n")
    (r / "scripts" / "serve.sh").write_text(". ../../outside.sh\n" + LAUNCH)
    assert check(r / "scripts" / "serve.sh", tmp_path, "--isolated") == []


def test_outside_git_the_project_bounds_what_is_read(tmp_path: Path):
    """Not under git: the nearest ``pyproject.toml`` marks the repository (kv4lint.files.ignore.repository_root)."""
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
        "--attention-backend triton\n" + SERVICE_WITH_ENV_FILE)
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
    assert found[0]["message"].startswith("--kv-cache-dtype nvfp4")
    (r / "config.mk").write_text("KV_DTYPE := fp8_e4m3\ninclude backend.mk\n")
    assert check(mk, tmp_path, "--isolated") == []


def test_makefile_include_fixed_in_the_included_file(tmp_path: Path, capsys, monkeypatch):
    r = repo(tmp_path)
    monkeypatch.chdir(r)
    (r / "mk").mkdir()
    (r / "mk" / "config.mk").write_text("# Shared by every target.\nKV_DTYPE   :=   nvfp4   # FP4 on B200\n"
                                        "ATTN = triton\n")
    mk = r / "Makefile"
    mk.write_text("include mk/config.mk\n\nserve:\n\t@python -m sglang.launch_server --model-path m \\\n"
                  "\t\t--kv-cache-dtype $(KV_DTYPE) --attention-backend $(ATTN)\n")
    fixed_in_settings_file(mk, r / "mk" / "config.mk",
                           "# Shared by every target.\nKV_DTYPE   :=   fp8_e4m3   # FP4 on B200\nATTN = triton\n",
                           [5], tmp_path, capsys)


def test_compose_dotenv_fixed_in_the_env_file(tmp_path: Path, capsys, monkeypatch):
    """``${KV_DTYPE}`` from the ``.env`` beside the compose file, in a string command and in an exec-form list:
    both fixed by one edit of ``.env``, its quotes and comment kept (CRLF line endings too)."""
    r = repo(tmp_path)
    monkeypatch.chdir(r)
    (r / "docker-compose.yml").write_text(
        "services:\n"
        "  a:\n"
        "    command: python3 -m sglang.launch_server --model-path m --kv-cache-dtype ${KV_DTYPE} "
        "--attention-backend triton\n"
        "  b:\n"
        '    command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", '
        '"${KV_DTYPE}", "--attention-backend", "triton"]\n')
    (r / ".env").write_bytes(b'# models\r\nMODEL=m\r\nexport KV_DTYPE="nvfp4"  # FP4 on B200\r\n')
    fixed_in_settings_file(r / "docker-compose.yml", r / ".env",
                           '# models\nMODEL=m\nexport KV_DTYPE="fp8_e4m3"  # FP4 on B200\n', [3, 5], tmp_path, capsys)
    assert (r / ".env").read_bytes() == b'# models\r\nMODEL=m\r\nexport KV_DTYPE="fp8_e4m3"  # FP4 on B200\r\n'


def test_compose_env_file_fixed_in_the_env_file(tmp_path: Path, capsys, monkeypatch):
    r = repo(tmp_path)
    monkeypatch.chdir(r)
    (r / "docker-compose.yml").write_text("services:\n" + SERVICE_WITH_ENV_FILE)
    (r / "conf").mkdir()
    (r / "conf" / "b.env").write_text("# b\nexport B_KV='nvfp4'\n")
    fixed_in_settings_file(r / "docker-compose.yml", r / "conf" / "b.env", "# b\nexport B_KV='fp8_e4m3'\n", [4],
                           tmp_path, capsys)


def test_docker_run_env_file_fixed_in_the_env_file(tmp_path: Path, capsys, monkeypatch):
    r = repo(tmp_path)
    monkeypatch.chdir(r)
    (r / "scripts" / "serve.env").write_text("# shared by every run script\nSERVE_KV=nvfp4\nOTHER=1\n")
    script = r / "scripts" / "run.sh"
    script.write_text("docker run --gpus all --env-file serve.env lmsysorg/sglang:v0.5.23-cu129 \\\n"
                      "  bash -c 'python3 -m sglang.launch_server --model-path m --kv-cache-dtype \"$SERVE_KV\" "
                      "--attention-backend triton'\n")
    fixed_in_settings_file(script, r / "scripts" / "serve.env",
                           "# shared by every run script\nSERVE_KV=fp8_e4m3\nOTHER=1\n", [2], tmp_path, capsys)


def test_env_file_values_and_where_they_are_written(tmp_path: Path):
    """Compose reads quotes, ``export`` and comments; a value it would expand further (``$VAR``, an escape)
    is not written verbatim, so it is never offered for editing.  ``docker run --env-file`` takes the text
    as written."""
    env = tmp_path / ".env"
    env.write_text('A="nvfp4"  # c\nexport B = \'x y\'\nC=nv$X\nD="nv\\fp4"\n  E=nvfp4 # c\n')
    got = {k: (str(v), v.start) for k, v in sourced.dotenv(str(env)).items()}
    assert got == {"A": ("nvfp4", 3), "B": ("x y", 27), "C": ("nv$X", None), "D": ("nv\\fp4", None),
                   "E": ("nvfp4", 54)}
    text = env.read_text()
    assert all(text[start:start + len(value)] == value for value, start in got.values() if start is not None)
    got = {k: (str(v), v.start) for k, v in sourced.dotenv(str(env), compose=False).items()}
    assert got["A"] == ('"nvfp4"  # c', 2) and got["C"] == ("nv$X", 34) and got["E"] == ("nvfp4 # c", 54)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_never_read_as_a_settings_file(tmp_path: Path):
    """Settings files are read through kv4lint.files.regular_file: a FIFO is refused before it is opened, even with
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


def test_options_that_come_whole_from_a_sourced_file(tmp_path: Path):
    # serve.sh names no KV cache option itself: every option comes from env.sh. The script is still a
    # candidate (it sources a file), and an edit of env.sh is seen through the cache.
    r = repo(tmp_path)
    env = r / "scripts" / "env.sh"
    env.write_text('EXTRA="--kv-cache-dtype fp8_e4m3 --attention-backend triton"\n')
    (r / "scripts" / "serve.sh").write_text("#!/bin/bash\nsource ./env.sh\n"
                                            "python -m sglang.launch_server --model-path m $EXTRA\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert check(r / "scripts", tmp_path, *cache) == []
    env.write_text('EXTRA="--kv-cache-dtype nvfp4 --attention-backend triton"\n')
    os.utime(env, ns=(1, 1))
    found = check(r / "scripts", tmp_path, *cache)
    assert [(f["path"].endswith("serve.sh"), f["line"], f["code"]) for f in found] == [(True, 3, "KV401")]
    assert found[0]["message"].startswith("--kv-cache-dtype nvfp4 is refused with --attention-backend triton")


def test_a_sourced_name_is_read_where_it_is_one_of_the_scripts_words():
    """Whether the script names a sourced variable: a few names are looked for one by one, many among the script's
    words; both answer as the words ``[A-Za-z_][A-Za-z0-9_]*`` finds (continued lines joined), at the edges of
    runs of word characters too (``9PATH`` names PATH, ``_PATH``, ``xPATH`` and ``PATH9`` do not)."""
    import random
    import re

    word = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    rnd = random.Random(37)
    names = ["P", "PA", "P9", "_P", "A_P", "P-A", "9P", "é"]
    for _ in range(4000):
        text = "".join(rnd.choice("PA_9 -é\\\n") for _ in range(rnd.randrange(12)))
        name = rnd.choice(names)
        expected = name in word.findall(text.replace("\\\n", ""))
        assert sourced._may_read(text, {"script:env.sh": {name: None}}) == expected, (text, name)
        many = {name: None, **{f"UNUSED_{k}": None for k in range(sourced._FEW_NAMES)}}  # the other route
        assert sourced._may_read(text, {"script:env.sh": many}) == expected, (text, name)
    assert sourced._may_read("x=9PATH", {"e": {"PATH": None}}) and sourced._may_read("$P", {"e": {"P": None}})
    assert not any(sourced._may_read(t, {"e": {"PATH": None}}) for t in ("_PATH", "xPATH", "PATH9", "PA\\\nTHS"))


def test_a_script_is_read_again_only_when_it_may_read_what_it_sources(tmp_path: Path, monkeypatch):
    """The script is read again with the sourced values bound only where it may read one: it names one (here
    only inside the Python code of a here-document), or one is a variable the shell frontend reads from a launch's
    environment by itself (HIP_VISIBLE_DEVICES: the platform). A file that sets only what the script never reads
    (a virtualenv's activate script) leaves the first reading as it was."""
    from kv4lint import frontends

    again = []
    real = frontends.again
    monkeypatch.setattr(frontends, "again", lambda language: again.append(language) or real(language))
    r = repo(tmp_path)
    script, env = r / "scripts" / "serve.sh", r / "scripts" / "env.sh"

    def found() -> list[tuple[str, str]]:
        out = tmp_path / "out.json"
        main(["check", "--format", "json", "--jobs", "1", "--isolated", "--sglang-version", "0.5.10", str(script),
              "--output-file", str(out)])
        return [(f["code"], f["message"].split(";")[0]) for f in json.loads(out.read_text())["findings"]]

    env.write_text('export VIRTUAL_ENV=/opt/venv\nexport PATH="$VIRTUAL_ENV/bin:$PATH"\nMODEL_PATH_OLD=x\n')
    script.write_text(". ./env.sh\nMODEL_PATH=m\n" + LAUNCH.replace('"$KV"', "fp4_e2m1"))
    assert found() == [("KV401", "for an MLA model: --kv-cache-dtype fp4_e2m1 is refused with triton")]
    assert again == []
    env.write_text("export HIP_VISIBLE_DEVICES=0\n")
    assert found() == [("KV402", "--kv-cache-dtype fp4_e2m1 needs CUDA, not rocm (export HIP_VISIBLE_DEVICES=0)")]
    assert again == ["shell"]
    env.write_text("export KV=fp4_e2m1\n")
    script.write_text(". ./env.sh\npython - <<EOF\nimport subprocess\nsubprocess.run(['python', '-m', "
                      "'sglang.launch_server', '--kv-cache-dtype', '$KV', '--attention-backend', 'triton'])\nEOF\n")
    assert found() == [("KV401", "for an MLA model: --kv-cache-dtype fp4_e2m1 is refused with triton")]
    assert again == ["shell", "shell"]


# An inner shell (``bash -c '...'``, as srun, tmux and nohup run one) sees what the script exports: a variable a
# sourced file exports, or sets under ``set -a``, reaches it; one it only sets does not.
INNER = ("bash -c 'python -m sglang.launch_server --model-path m --kv-cache-dtype $KV "
         "--attention-backend triton'\n")


@pytest.mark.parametrize("env, script, found", [
    ("export KV=nvfp4\n", ". ./env.sh\n", True),
    ("KV=nvfp4\nexport KV\n", ". ./env.sh\n", True),
    ("declare -x KV=nvfp4\n", ". ./env.sh\n", True),
    ("set -a\nKV=nvfp4\nset +a\n", ". ./env.sh\n", True),
    ("KV=nvfp4\n", "set -a\n. ./env.sh\nset +a\n", True),
    ("KV=nvfp4\n", "set -o allexport\nsource ./env.sh\nset +o allexport\n", True),
    ("KV=nvfp4\n", "set -ae\n. ./env.sh\n", True),
    ("KV=nvfp4\n", "set -euo allexport\n. ./env.sh\n", True),  # an ``o`` in a cluster names the option after it
    ("KV=nvfp4\n", ". ./env.sh\n", False),  # set, not exported: the inner shell's $KV is empty
    ("set -a\nset +a\nKV=nvfp4\n", ". ./env.sh\n", False),  # set after allexport is off again
    ("KV=nvfp4\n", "set -a\nset +a\n. ./env.sh\n", False),
])
def test_what_a_sourced_file_exports_reaches_an_inner_shell(tmp_path: Path, env: str, script: str, found: bool):
    r = repo(tmp_path)
    (r / "scripts" / "env.sh").write_text(env)
    serve = r / "scripts" / "serve.sh"
    serve.write_text("#!/bin/bash\n" + script + INNER)
    got = check(serve, tmp_path, "--isolated")
    line = 2 + script.count("\n")
    assert [(f["line"], f["code"]) for f in got] == ([(line, "KV401")] if found else [])
    if found:
        assert got[0]["message"].startswith("--kv-cache-dtype nvfp4")


def test_set_a_in_the_script_exports_its_own_assignments(tmp_path: Path):
    r = repo(tmp_path)
    serve = r / "scripts" / "serve.sh"
    serve.write_text("#!/bin/bash\nset -a\nKV=nvfp4\nset +a\n" + INNER)
    assert [(f["line"], f["code"]) for f in check(serve, tmp_path, "--isolated")] == [(5, "KV401")]
    serve.write_text("#!/bin/bash\nset -a\nset +a\nKV=nvfp4\n" + INNER)
    assert check(serve, tmp_path, "--isolated") == []
