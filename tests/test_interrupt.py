"""Concurrency and interruption: no partial file, no temporary file left, the user told what changed.

* two ``kv4lint fix`` runs on the same tree at the same time;
* a file modified by someone else between kv4lint's read and its write (refused, content kept);
* SIGINT (Ctrl-C: to the whole process group, as a terminal sends it) during ``kv4lint fix`` and
  ``kv4lint check`` on a large tree, sequential and with the process pool.

No timing thresholds: the tests wait for states (a file changed, the process started) with a
generous bound, and every assertion holds whenever the signal lands.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hostile
from hostile import CLI_TARGET, GOOD_SH, GOOD_SH_FIXED
from kv4lint import writer
from kv4lint.cli import main

TMP_SUFFIX = writer.TEMP_SUFFIX


def big_tree(root: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        p = root / f"d{i // 100:02d}" / f"serve{i:05d}.sh"
        hostile.write(p, GOOD_SH)
        paths.append(p)
    return paths


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(TMP_SUFFIX)]


def states(paths: list[Path]) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {"original": [], "fixed": [], "other": []}
    for p in paths:
        data = p.read_text()
        out["original" if data == GOOD_SH else "fixed" if data == GOOD_SH_FIXED else "other"].append(p)
    return out


# ---------------------------------------------------------------------------
# Two runs at once


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_two_fix_runs_at_once(tmp_path, jobs):
    root = tmp_path / "tree"
    paths = big_tree(root, 300)
    args = [hostile.PY, "-m", "kv4lint", "fix", *CLI_TARGET, "--jobs", jobs, str(root)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=hostile.env(),
                              stdin=subprocess.DEVNULL) for _ in range(2)]
    results = [p.communicate(timeout=hostile.TIMEOUT * 3) for p in procs]
    for p, (out, err) in zip(procs, results):
        out, err = out.decode(), err.decode()
        assert "Traceback" not in err, err
        assert p.returncode in (0, 1, 2), (p.returncode, err)
        if p.returncode == 2:
            # The only acceptable error: the other run wrote the file first; the message names it.
            errors = [ln for ln in out.splitlines() if " error:" in ln]
            assert errors and all("changed on disk since it was read" in ln for ln in errors), out
    st = states(paths)
    assert not st["other"], f"partial or corrupt files: {st['other'][:5]}"
    assert not st["original"], f"files neither run fixed: {st['original'][:5]}"
    assert leftovers(root) == []


# ---------------------------------------------------------------------------
# Modified between read and write (in process, through the writer's seam and the fixer)


def _fix_in_process(*paths) -> int:
    return main(["fix", *CLI_TARGET, "--jobs", "1", *map(str, paths)])


@pytest.mark.parametrize("how", ["append", "same_size_same_mtime", "replace_file", "delete"])
def test_modified_between_read_and_write(tmp_path, monkeypatch, capsys, how):
    p = hostile.write(tmp_path / "serve.sh", GOOD_SH)
    other = hostile.write(tmp_path / "other.sh", GOOD_SH)
    theirs = GOOD_SH.replace("--port 30000", "--port 30001")
    assert len(theirs) == len(GOOD_SH)

    def meddle(real):
        if os.path.basename(real) != "serve.sh":
            return
        st = os.stat(real)
        if how == "append":
            with open(real, "a") as f:
                f.write("echo someone else\n")
        elif how == "same_size_same_mtime":
            with open(real, "r+") as f:
                f.write(theirs)
            os.utime(real, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif how == "replace_file":
            tmp = real + ".editor-swap"
            Path(tmp).write_text(theirs)
            os.replace(tmp, real)
        elif how == "delete":
            os.unlink(real)

    monkeypatch.setattr(writer, "_before_replace", meddle)
    rc = _fix_in_process(p, other)
    out = capsys.readouterr()
    assert rc == 2, out
    lines = [ln for ln in out.out.splitlines() if ln.startswith(f"{p}:") and " error:" in ln]
    assert lines and "changed on disk" in lines[0], out.out
    expected = {"append": GOOD_SH + "echo someone else\n", "same_size_same_mtime": theirs, "replace_file": theirs}
    if how == "delete":
        assert not p.exists()
    else:
        assert p.read_text() == expected[how], "someone else's change was lost"
    assert other.read_text() == GOOD_SH_FIXED, "the other file is still fixed"
    assert leftovers(tmp_path) == []
    assert "Fixed 1 finding in 1 file" in out.err, out.err


def test_modified_after_lint_before_fix_read(tmp_path, monkeypatch, capsys):
    """Changed after it was linted and before the fix engine reads it: fixed from the new content, or refused."""
    from kv4lint import fixer

    p = hostile.write(tmp_path / "serve.sh", GOOD_SH)
    real_fix_text = fixer.fix_text
    seen = []

    def fix_text(path, text, *a, **k):
        if not seen:
            seen.append(path)
            Path(path).write_text(GOOD_SH + "echo later edit\n")  # after fix_text read its text
        return real_fix_text(path, text, *a, **k)

    monkeypatch.setattr(fixer, "fix_text", fix_text)
    rc = _fix_in_process(p)
    out = capsys.readouterr()
    assert p.read_text() in (GOOD_SH + "echo later edit\n", GOOD_SH_FIXED + "echo later edit\n"), "edit lost"
    if p.read_text() == GOOD_SH + "echo later edit\n":
        assert rc == 2 and "changed on disk" in out.out, out
    assert leftovers(tmp_path) == []


# ---------------------------------------------------------------------------
# Ctrl-C


def _ctrl_c(args: list[str], root: Path, paths: list[Path], when: str) -> tuple[int, str, str]:
    """Start kv4lint in its own process group; send SIGINT to the group at ``when``; return the outcome."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=hostile.env(),
                            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + hostile.TIMEOUT * 3
    try:
        if when == "first_write":
            first = paths[0]
            while proc.poll() is None and first.read_text() == GOOD_SH and time.monotonic() < deadline:
                time.sleep(0.005)
        else:  # "started": the interpreter is up and kv4lint imported (it has opened the tree)
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    if any(str(root) in os.readlink(f"/proc/{proc.pid}/fd/{fd}")
                           for fd in os.listdir(f"/proc/{proc.pid}/fd")):
                        break
                except OSError:
                    pass
                time.sleep(0.005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=hostile.TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out.decode(), err.decode()


_UNCHANGED = re.compile(r"not (?:been )?(?:changed|fixed|written|rewritten)|unchanged|left as (?:it was|they were)"
                        r"|no files? (?:was |were )?(?:changed|fixed|written)|\b0 files", re.I)


def _check_interrupted_fix(rc: int, out: str, err: str, root: Path, paths: list[Path]) -> None:
    st = states(paths)
    assert not st["other"], f"partial files after Ctrl-C: {st['other'][:5]}"
    assert leftovers(root) == [], "temporary files left after Ctrl-C"
    assert "Traceback" not in err, err[-3000:]
    text = out + err
    if rc == 0 or rc == 1:
        return  # finished before the signal landed: the normal report was printed
    assert rc == 130, (rc, err[-2000:])
    assert "interrupted" in text, text[-2000:]
    # The user is told which files were changed (every one of them), and that the others were not.
    unnamed = [str(p) for p in st["fixed"] if str(p) not in text]
    assert not unnamed, (f"{len(st['fixed'])} files were changed before Ctrl-C, {len(unnamed)} not named in the "
                         f"output, e.g. {unnamed[:3]}\n--- output tail ---\n{text[-1500:]}")
    if st["original"]:
        assert _UNCHANGED.search(text), f"nothing says the other files were not changed:\n{text[-1500:]}"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_writes(tmp_path, jobs):
    root = tmp_path / "tree"
    paths = big_tree(root, 1500)
    args = [hostile.PY, "-m", "kv4lint", "fix", *CLI_TARGET, "--jobs", jobs, str(root)]
    rc, out, err = _ctrl_c(args, root, sorted(paths), "first_write")
    _check_interrupted_fix(rc, out, err, root, paths)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_before_writes(tmp_path, jobs):
    root = tmp_path / "tree"
    paths = big_tree(root, 1500)
    args = [hostile.PY, "-m", "kv4lint", "fix", *CLI_TARGET, "--jobs", jobs, str(root)]
    rc, out, err = _ctrl_c(args, root, sorted(paths), "started")
    _check_interrupted_fix(rc, out, err, root, paths)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_check(tmp_path, jobs):
    root = tmp_path / "tree"
    paths = big_tree(root, 1500)
    before = {p: p.read_bytes() for p in paths}
    args = [hostile.PY, "-m", "kv4lint", "check", *CLI_TARGET, "--jobs", jobs, str(root)]
    rc, out, err = _ctrl_c(args, root, sorted(paths), "started")
    assert "Traceback" not in err, err[-3000:]
    assert rc in (1, 130), (rc, err[-2000:])
    assert all(p.read_bytes() == b for p, b in before.items())


def test_keyboard_interrupt_inside_the_writer_leaves_no_temp_file(tmp_path, monkeypatch):
    """KeyboardInterrupt between the temporary file and the replace (the writer's seam): file intact, no temp."""
    p = hostile.write(tmp_path / "serve.sh", GOOD_SH)

    def interrupt(real):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "_before_replace", interrupt)
    rc = _fix_in_process(p)
    assert rc == 130
    assert p.read_text() == GOOD_SH
    assert leftovers(tmp_path) == []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
