"""The tree's edges (issue 20, item 2): nothing outside the scanned tree is read through a symlink, no
FIFO, socket or device is opened, and no message quotes the lines of a file outside the repository.

A pull request can add symlinks (git stores them) under any name kv4lint reads: a script, a
``.gitignore``, a ``requirements.txt``, a model's ``config.json``.  Each link here points at a file
holding a secret, at ``/dev/zero`` (reading never ends) or at a FIFO (opening waits for a writer
forever): the runs must finish, name each link outside the tree once as skipped, and never print
the secret.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import hostile
from hostile import CLI_TARGET, GOOD_SH, GOOD_SH_FIXED

SECRET = "hunter2-do-not-print"
TIMEOUT = 60  # a FIFO or /dev/zero opened would block or read forever: the timeout is the failure


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    hostile.write(outside / "shadow", f"root:{SECRET}:19000:0:99999:7:::\n[section {SECRET}\n")
    hostile.write(outside / "serve.sh", GOOD_SH)
    os.mkfifo(outside / "fifo")
    root = tmp_path / "repo"
    hostile.write(root / "serve.sh", GOOD_SH)
    links = {"run.sh": outside / "shadow", "cfg.yaml": outside / "shadow", "notes.md": outside / "shadow",
             "zero.sh": "/dev/zero", "fifo.py": outside / "fifo", "other.sh": outside / "serve.sh",
             "outdir": outside}
    for name, target in links.items():
        os.symlink(target, root / name)
    return tmp_path, root, outside, sorted(links)


def _run(*args, cwd):
    cp = hostile.run([hostile.PY, "-m", "kv4lint", *args], cwd=cwd, timeout=TIMEOUT)
    return cp.returncode, *hostile.text(cp)


def _skipped(out: str, name: str) -> int:
    return sum(1 for line in out.splitlines()
               if line.startswith(f"note: {name}: skipped: a symlink to a path outside the tree"))


@pytest.mark.parametrize("command", ["check", "fix"])
def test_links_out_of_the_tree_are_skipped_once_and_never_read(tree, command):
    top, root, outside, links = tree
    before = hostile.snapshot(outside)
    rc, out, err = _run(command, *CLI_TARGET, "--jobs", "1", ".", cwd=root)
    assert "Traceback" not in err, err
    assert SECRET not in out + err
    assert {name: _skipped(out, name) for name in links} == {name: 1 for name in links}, out
    assert rc == (1 if command == "check" else 0), (rc, out, err)
    assert (root / "serve.sh").read_text() == (GOOD_SH if command == "check" else GOOD_SH_FIXED)
    assert hostile.snapshot(outside) == before


def test_links_named_on_the_command_line_as_pre_commit_does(tree):
    """pre-commit passes the pull request's file names: a link among them is not followed either."""
    top, root, outside, links = tree
    files = [n for n in links if n != "outdir"] + ["serve.sh"]
    rc, out, err = _run("fix", *CLI_TARGET, "--force-exclude", *files, cwd=root)
    assert SECRET not in out + err and "Traceback" not in err, err
    assert {n: _skipped(out, n) for n in files[:-1]} == {n: 1 for n in files[:-1]}, out
    assert rc == 0 and (root / "serve.sh").read_text() == GOOD_SH_FIXED
    assert (outside / "serve.sh").read_text() == GOOD_SH, "fixed through a link out of the tree"


def test_files_kv4lint_reads_besides_the_scripts(tmp_path):
    """.gitignore, requirements.txt, pyproject.toml, a model's config.json and a --config file that are
    devices, FIFOs or links to them: never opened, the launches are still checked."""
    root = tmp_path / "repo"
    hostile.write(root / "serve.sh", "#!/bin/bash\npython -m sglang.launch_server --model-path ./models/m "
                                     "--config ./sgl.yaml --kv-cache-dtype fp4_e2m1\n")
    (root / "models" / "m").mkdir(parents=True)
    os.symlink("/dev/zero", root / ".gitignore")
    os.symlink("/dev/zero", root / "requirements.txt")
    os.mkfifo(root / "pyproject.toml")
    os.mkfifo(root / "models" / "m" / "config.json")
    os.mkfifo(root / "sgl.yaml")
    rc, out, err = _run("check", "--sglang-version", "0.5.23", "--jobs", "1", ".", cwd=root)
    assert "Traceback" not in err, err
    assert "serve.sh:2:" in out and " KV406" in out, out + err
    rc, out, err = _run("check", "--config", "pyproject.toml", ".", cwd=root)
    assert rc == 2 and "pyproject.toml: cannot read: not a regular file" in err, (rc, out, err)


def test_a_fifo_swapped_in_after_the_stat_is_not_opened(tmp_path):
    """The race: a regular file when stat() looked, a FIFO when it is opened (a fresh process: a
    blocking open would hang it, and the timeout fails the test)."""
    fifo = tmp_path / "serve.sh"
    os.mkfifo(fifo)
    code = (
        "import os, stat, sys\n"
        "from kv4lint.pipeline import read; from kv4lint.files import regular_file\n"
        "from kv4lint.base.settings import Settings\n"
        "real = os.stat\n"
        "def lying_stat(p, *a, **k):\n"
        "    st = real(p, *a, **k)\n"
        "    return os.stat_result((stat.S_IFREG | 0o644,) + tuple(st)[1:]) if str(p) == sys.argv[1] else st\n"
        "os.stat = lying_stat\n"
        "rep = read.lint_file(sys.argv[1], Settings(), 'shell')\n"
        "print([e.message for e in rep.errors])\n"
        "try:\n"
        "    regular_file.read_bytes(sys.argv[1])\n"
        "except OSError as e:\n"
        "    print('refused:', e.strerror)\n")
    cp = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=TIMEOUT)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.splitlines() == ["['cannot read: not a regular file']", "refused: not a regular file"]


def test_the_walks_stat_stands_for_the_stat_before_the_open(tmp_path, monkeypatch):
    """A walk's ``stat`` of a file (``walked``) is the check before the open: no second ``stat``; the ``fstat``
    after the open still refuses a FIFO swapped in since the walk, and a walked ``stat`` that is not a regular
    file is refused unopened."""
    from kv4lint.base.settings import Settings
    from kv4lint.files import regular_file
    from kv4lint.pipeline import read

    script = tmp_path / "serve.sh"
    script.write_text("echo hello\n")
    walked = os.stat(script)
    fifo = tmp_path / "swapped.sh"
    os.mkfifo(fifo)
    fifo_st = os.stat(fifo)
    real = os.stat

    def no_stat(p, *a, **k):
        if str(p) in (str(script), str(fifo)):
            raise AssertionError(f"stat({p}) again")
        return real(p, *a, **k)

    monkeypatch.setattr(os, "stat", no_stat)
    rep = read.lint_file(str(script), Settings(), "shell", walked)
    assert rep.errors == [] and rep.scanned
    rep = read.lint_file(str(fifo), Settings(), "shell", walked)  # regular when walked, a FIFO when opened
    assert [e.message for e in rep.errors] == ["cannot read: not a regular file"]
    opened = []
    monkeypatch.setattr(os, "open", lambda *a, **k: opened.append(a) or -1)
    with pytest.raises(regular_file.NotRegularFile) as e:
        regular_file.open_regular(str(fifo), fifo_st)
    assert not e.value.opened and opened == []


def test_messages_quote_no_line_of_a_file_outside_the_repository(tree):
    """A --config that is not a configuration file, and a launch's --config outside the repository
    that is not YAML: the messages name the file and the position, never its lines."""
    top, root, outside, _ = tree
    rc, out, err = _run("check", "--config", str(outside / "shadow"), ".", cwd=root)
    assert rc == 2 and "shadow" in err, err
    assert SECRET not in out + err
    hostile.write(root / "launch.sh", "#!/bin/bash\npython -m sglang.launch_server --model-path m "
                                      f"--config {outside / 'shadow'} --kv-cache-dtype fp4_e2m1\n")
    rc, out, err = _run("check", *CLI_TARGET, "--jobs", "1", "launch.sh", cwd=root)
    assert "Traceback" not in err and "launch.sh:2:" in out, out + err
    assert SECRET not in out + err


@pytest.mark.parametrize("size", [0, 1, 5, 1000, 3 << 20])
def test_read_bytes_reads_the_whole_file_or_one_byte_over_the_limit(tmp_path, size):
    from kv4lint.files.regular_file import read_bytes

    p = hostile.write(tmp_path / "f.sh", b"x" * size)
    assert read_bytes(str(p)) == b"x" * size
    for limit in (0, 3, 5, 999, 1000, 1001, 4 << 20):
        assert read_bytes(str(p), limit) == b"x" * min(size, limit + 1), limit
