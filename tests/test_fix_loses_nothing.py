"""``kv4lint fix`` loses nothing (issue 20, item 3), through the real CLI.

The writer's own tests (test_writer.py) cover each refusal one by one; here the
user's view: an executable script stays executable (and keeps its owner, its
BOM and CRLF line endings), a full disk leaves the original intact and says so
with exit 1, and two ``kv4lint fix`` runs at once over one tree leave every file
either untouched or wholly fixed by one of them -- never torn, never a
temporary file left behind.
"""

from __future__ import annotations

import codecs
import os
import stat
import subprocess

import pytest

import hostile
from hostile import CLI_TARGET, GOOD_SH, GOOD_SH_FIXED, LAUNCH
from kv4lint.cli import main
from kv4lint.fixes import writer


def _temp_files(root) -> list[str]:
    return [n for _, _, names in os.walk(root) for n in names if n.endswith(writer.TEMP_SUFFIX)]


def test_fixed_script_keeps_mode_owner_bom_and_line_endings(tmp_path):
    root = tmp_path / "repo"
    serve = hostile.write(root / "serve.sh", GOOD_SH)
    os.chmod(serve, 0o751)
    crlf = hostile.write(root / "crlf.sh", codecs.BOM_UTF8 + GOOD_SH.replace("\n", "\r\n").encode())
    os.chmod(crlf, 0o700)
    owner = None
    if os.geteuid() == 0:  # only root can give a file to another owner
        owner = (4321, 1234)
        os.chown(serve, *owner)
    cp = hostile.kv4lint("fix", *CLI_TARGET, "--jobs", "1", ".", cwd=root)
    assert cp.returncode == 0, hostile.text(cp)
    st = os.stat(serve)
    assert serve.read_text() == GOOD_SH_FIXED
    assert stat.S_IMODE(st.st_mode) == 0o751 and os.access(serve, os.X_OK)
    if owner:
        assert (st.st_uid, st.st_gid) == owner
    assert crlf.read_bytes() == codecs.BOM_UTF8 + GOOD_SH_FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(crlf).st_mode) == 0o700
    assert _temp_files(root) == []


def test_full_disk_leaves_the_original_and_names_the_file(tmp_path, monkeypatch, capsys):
    """The temporary file's writes go to /dev/full: the kernel's own ENOSPC."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    full = hostile.write(tmp_path / "full.sh", GOOD_SH)
    other = hostile.write(tmp_path / "other" / "ok.sh", GOOD_SH)
    real_mkstemp = writer.tempfile.mkstemp

    def mkstemp(*a, dir=None, **k):
        fd, name = real_mkstemp(*a, dir=dir, **k)
        if os.path.samefile(dir, tmp_path):
            dev = os.open("/dev/full", os.O_WRONLY)
            os.dup2(dev, fd)
            os.close(dev)
        return fd, name

    monkeypatch.setattr(writer.tempfile, "mkstemp", mkstemp)
    rc = main(["fix", *CLI_TARGET, "--no-cache", "--jobs", "1", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 1, (rc, out, err)
    assert full.read_text() == GOOD_SH, "the original was lost"
    assert other.read_text() == GOOD_SH_FIXED, "the other file is still fixed"
    assert f"{full}: error: cannot write: No space left on device; not rewritten" in out, out
    assert _temp_files(tmp_path) == []


@pytest.mark.parametrize("round_", range(3))
def test_two_fix_runs_at_once(tmp_path, round_):
    """Two runs with different fixes (fp8_e4m3, fp8_e5m2) over the same 40 files of three launches each:
    every file ends as it was, or as one run's whole fix -- never a mix, never torn."""
    root = tmp_path / "repo"
    src = "#!/bin/bash\n" + "".join(f"{LAUNCH} --port {i}\n" for i in range(3))
    for i in range(40):
        hostile.write(root / f"d{i % 4}" / f"serve{i}.sh", src)
    allowed = {src, src.replace("fp4_e2m1", "fp8_e4m3"), src.replace("fp4_e2m1", "fp8_e5m2")}
    procs = [subprocess.Popen([hostile.PY, "-m", "kv4lint", "fix", *CLI_TARGET, "--no-cache", "--jobs", "1",
                               "--fix-dtype", dtype, "."], cwd=root, env=hostile.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
             for dtype in ("fp8_e4m3", "fp8_e5m2")]
    results = [p.communicate(timeout=hostile.TIMEOUT) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode in (0, 1), (p.returncode, out, err)
        assert b"Traceback" not in err, err
    texts = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.sh")}
    assert len(texts) == 40
    torn = {k: v for k, v in texts.items() if v not in allowed}
    assert torn == {}, torn
    assert any(v != src for v in texts.values()), "neither run fixed anything"
    assert _temp_files(root) == []
