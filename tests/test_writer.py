"""kv4lint.fixes.writer: atomic, lossless file writing, and every refusal."""

from __future__ import annotations

import os
import stat

import pytest

from kv4lint.base.model import Edit, Span
from kv4lint.base.source import decode
from kv4lint.fixes import writer
from kv4lint.fixes.edits import apply_edits
from kv4lint.fixes.writer import WriteError

OLD, NEW = "fp4_e2m1", "fp8_e4m3"


def temps(d) -> list[str]:
    return [n for n in os.listdir(d) if n.endswith(writer.TEMP_SUFFIX)]


def fix_file(path, *, python=False, roots=None, new=NEW):
    """Read, replace every OLD by ``new`` as edits at their offsets, write; returns the edit count."""
    data, snap = writer.read(str(path))
    text = decode(data, python=python)
    edits, i = [], text.text.find(OLD)
    while i >= 0:
        edits.append(Edit(Span(i, i + len(OLD)), new))
        i = text.text.find(OLD, i + 1)
    new_text, skipped = apply_edits(text.text, edits)
    assert not skipped
    writer.write_text(str(path), text, new_text, snap, roots=roots)
    return len(edits)


# ---------------------------------------------------------------------------
# Byte-for-byte preservation


CASES = {
    "lf": b"#!/bin/sh\npython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n",
    "crlf": b"#!/bin/sh\r\npython -m sglang.launch_server \\\r\n  --kv-cache-dtype fp4_e2m1 \\\r\n  --port 1\r\n",
    "cr": b"a\rpython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\r",
    "mixed": b"a\r\nb\nc\rpython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n\r\n",
    "no-final-newline": b"python -m sglang.launch_server --kv-cache-dtype fp4_e2m1",
    "bom": b"\xef\xbb\xbfpython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\r\n",
    "utf8": ("# caf\u00e9 \u2014 \U0001f680\n"
             "python -m sglang.launch_server --kv-cache-dtype fp4_e2m1 # \u00fc\n").encode(),
    "utf16": b"\xff\xfe" + "python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\r\n".encode("utf-16-le"),
    "utf16-be-without-bom": "python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n".encode("utf-16-be"),
    "utf32-without-bom": "python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n".encode("utf-32-le"),
    "trailing-blanks": b"python -m sglang.launch_server --kv-cache-dtype fp4_e2m1   \t\n\n\n",
    "nul-free-controls": b"\x0c\x0bpython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\x1c\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bytes_outside_the_edit_are_kept(tmp_path, name):
    data = CASES[name]
    p = tmp_path / "serve.sh"
    p.write_bytes(data)
    assert fix_file(p) == 1
    enc = {"utf16": "utf-16-le", "utf16-be-without-bom": "utf-16-be",
           "utf32-without-bom": "utf-32-le"}.get(name, "utf-8")
    assert p.read_bytes() == data.replace(OLD.encode(enc), NEW.encode(enc))
    assert temps(tmp_path) == []


def test_utf16_and_utf32_without_a_bom_are_told_by_their_nul_bytes():
    """Issue 34: such text read as UTF-8 decodes (NUL is UTF-8) to characters between NULs, with no option in
    it to find; its NUL bytes tell the encoding. Binary data, UTF-8 with a stray NUL, do not."""
    from kv4lint.base.source import DecodeError, wide_encoding

    text = "a: [sglang, --kv-cache-dtype, fp4_e2m1]  # caf\u00e9\n"
    for enc in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        assert wide_encoding(text.encode(enc)) == enc
        got = decode(text.encode(enc))
        assert (got.text, got.encoding, got.bom) == (text, enc, b"")
    import random

    noise = bytes(random.Random(1).randrange(256) for _ in range(4096))
    for data in (noise, text.encode() + b"\0" + text.encode(), b"", b"\0", "\u4e2d\u6587".encode("utf-16-le")):
        assert wide_encoding(data) is None
    with pytest.raises(DecodeError, match="UTF-16-LE without a byte order mark"):
        decode(text.encode("utf-16-le") + b"\x00\xd8")


def test_latin1_with_coding_cookie(tmp_path):
    src = "# -*- coding: latin-1 -*-\n# Gr\u00fc\u00dfe\r\nServerArgs(kv_cache_dtype='fp4_e2m1')  # \u00e9\n"
    p = tmp_path / "serve.py"
    p.write_bytes(src.encode("latin-1"))
    fix_file(p, python=True)
    assert p.read_bytes() == src.replace(OLD, NEW).encode("latin-1")


def test_text_the_encoding_cannot_hold_is_refused(tmp_path):
    src = "# -*- coding: latin-1 -*-\nServerArgs(kv_cache_dtype='fp4_e2m1')\n".encode("latin-1")
    p = tmp_path / "serve.py"
    p.write_bytes(src)
    with pytest.raises(WriteError, match="cannot be written in the file's encoding"):
        fix_file(p, python=True, new="fp8\u20ac")
    assert p.read_bytes() == src and temps(tmp_path) == []


def test_bytes_that_do_not_round_trip_are_refused(tmp_path):
    # ISO-2022-JP with a redundant escape sequence decodes fine but would come back without it.
    src = b"# coding: iso2022_jp\nx = 'fp4_e2m1'  # \x1b(B\x1b(B\n"
    p = tmp_path / "serve.py"
    p.write_bytes(src)
    with pytest.raises(WriteError, match="round trip"):
        fix_file(p, python=True)
    assert p.read_bytes() == src


def test_notebook_json_offsets(tmp_path):
    src = ('{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": [\n    "!python -m sglang.launch_server '
           '--kv-cache-dtype fp4_e2m1\\n"\n   ]\n  }\n ],\n "nbformat": 4\n}\n')
    p = tmp_path / "demo.ipynb"
    p.write_text(src)
    fix_file(p)
    assert p.read_text() == src.replace(OLD, NEW)


# ---------------------------------------------------------------------------
# Metadata


@pytest.mark.parametrize("mode", [0o755, 0o700, 0o640, 0o600, 0o775])
def test_mode_is_kept(tmp_path, mode):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    os.chmod(p, mode)
    fix_file(p)
    assert stat.S_IMODE(os.stat(p).st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_owner_is_kept_when_allowed(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    os.chown(p, 1234, 4321)
    fix_file(p)
    st = os.stat(p)
    assert (st.st_uid, st.st_gid) == (1234, 4321)


def test_replaced_atomically_new_inode(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    ino = os.stat(p).st_ino
    fix_file(p)
    assert os.stat(p).st_ino != ino  # a new file swapped in, never a half-written old one


# ---------------------------------------------------------------------------
# Refusals (the file stays as it was, no temporary file is left)


def test_read_only_refused(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    os.chmod(p, 0o444)
    with pytest.raises(WriteError, match="read-only"):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"] and temps(tmp_path) == []


def test_changed_between_read_and_write_refused(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    data, snap = writer.read(str(p))
    text = decode(data)
    p.write_bytes(CASES["lf"] + b"echo more\n")
    with pytest.raises(WriteError, match="changed on disk"):
        writer.write_text(str(p), text, text.text.replace(OLD, NEW), snap)
    assert p.read_bytes() == CASES["lf"] + b"echo more\n"


def test_same_size_and_mtime_but_other_content_refused(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    data, snap = writer.read(str(p))
    text = decode(data)
    st = os.stat(p)
    other = CASES["lf"].replace(b"fp4_e2m1", b"fp4_e2m2")
    p.write_bytes(other)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(WriteError, match="changed on disk"):
        writer.write_text(str(p), text, text.text.replace(OLD, NEW), snap)
    assert p.read_bytes() == other


def test_changed_just_before_replace_refused(tmp_path, monkeypatch):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])

    def meddle(real):
        with open(real, "ab") as f:
            f.write(b"# late edit\n")

    monkeypatch.setattr(writer, "_before_replace", meddle)
    with pytest.raises(WriteError, match="changed on disk"):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"] + b"# late edit\n" and temps(tmp_path) == []


def test_keyboard_interrupt_leaves_no_temp_file(tmp_path, monkeypatch):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])

    def interrupt(real):
        assert len(temps(tmp_path)) == 1  # the temporary file exists at this point
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "_before_replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"] and temps(tmp_path) == []


def test_ctrl_c_while_the_temp_file_exists_waits_for_the_replacement(tmp_path, monkeypatch):
    import signal

    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    monkeypatch.setattr(writer, "_before_replace", lambda real: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"].replace(OLD.encode(), NEW.encode()) and temps(tmp_path) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_right_after_the_temp_file_is_created_leaves_none(tmp_path, monkeypatch):
    import signal
    import tempfile

    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # before the writer's try: block is entered
        return made

    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    with pytest.raises(KeyboardInterrupt):
        fix_file(p)
    assert temps(tmp_path) == []


def test_sigterm_during_a_write_ends_the_process_after_it(tmp_path):
    import signal
    import subprocess
    import sys

    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    code = ("import os, signal, sys\n"
            "sys.path.insert(0, sys.argv[2])\n"
            "import test_writer as t\n"
            "from kv4lint.fixes import writer\n"
            "writer._before_replace = lambda real: os.kill(os.getpid(), signal.SIGTERM)\n"
            "t.fix_file(sys.argv[1])\n"
            "print('went on after SIGTERM')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(p), os.path.dirname(__file__)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert "went on" not in proc.stdout
    assert p.read_bytes() == CASES["lf"].replace(OLD.encode(), NEW.encode()) and temps(tmp_path) == []


def test_replace_failure_leaves_no_temp_file(tmp_path, monkeypatch):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer.os, "replace", fail)
    with pytest.raises(WriteError, match="No space left on device"):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"] and temps(tmp_path) == []


def test_no_temp_file_possible_refused(tmp_path, monkeypatch):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])

    def deny(**kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writer.tempfile, "mkstemp", deny)
    with pytest.raises(WriteError, match="cannot create a temporary file"):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"]


def test_fifo_refused(tmp_path):
    f = tmp_path / "pipe.sh"
    os.mkfifo(f)
    with pytest.raises(WriteError, match="not a regular file"):
        writer.read(str(f))


def test_replaced_by_fifo_refused(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    data, snap = writer.read(str(p))
    p.unlink()
    os.mkfifo(p)
    with pytest.raises(WriteError, match="not a regular file"):
        writer.write_text(str(p), decode(data), decode(data).text.replace(OLD, NEW), snap)
    assert stat.S_ISFIFO(os.lstat(p).st_mode)


def test_directory_refused(tmp_path):
    with pytest.raises(WriteError, match="not a regular file"):
        writer.read(str(tmp_path))


def test_hard_linked_file_refused(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_bytes(CASES["lf"])
    os.link(p, tmp_path / "other-name.sh")
    with pytest.raises(WriteError, match="hard links"):
        fix_file(p)
    assert p.read_bytes() == CASES["lf"]


def test_symlink_out_of_tree_refused(tmp_path):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    target = outside / "real.sh"
    target.write_bytes(CASES["lf"])
    link = tree / "serve.sh"
    link.symlink_to(target)
    with pytest.raises(WriteError, match="outside the tree"):
        fix_file(link, roots=writer.roots_of([str(tree)]))
    assert target.read_bytes() == CASES["lf"] and link.is_symlink()
    assert temps(outside) == [] and temps(tree) == []


def test_symlink_inside_tree_writes_target_keeps_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "serve.sh"
    target.write_bytes(CASES["crlf"])
    os.chmod(target, 0o755)
    link = tmp_path / "link.sh"
    link.symlink_to("real/serve.sh")
    fix_file(link, roots=writer.roots_of([str(tmp_path)]))
    assert link.is_symlink() and os.readlink(link) == "real/serve.sh"
    assert target.read_bytes() == CASES["crlf"].replace(OLD.encode(), NEW.encode())
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755


def test_link_retargeted_since_read_refused(tmp_path):
    a, b = tmp_path / "a.sh", tmp_path / "b.sh"
    a.write_bytes(CASES["lf"])
    b.write_bytes(CASES["lf"])
    link = tmp_path / "serve.sh"
    link.symlink_to(a)
    data, snap = writer.read(str(link))
    link.unlink()
    link.symlink_to(b)
    with pytest.raises(WriteError, match="points elsewhere"):
        writer.write_text(str(link), decode(data), decode(data).text.replace(OLD, NEW), snap)
    assert a.read_bytes() == b.read_bytes() == CASES["lf"]


def test_roots_of_file_argument_is_its_directory(tmp_path):
    f = tmp_path / "x.sh"
    f.write_text("")
    assert writer.roots_of([str(f), str(tmp_path)]) == [os.path.realpath(tmp_path)] * 2
