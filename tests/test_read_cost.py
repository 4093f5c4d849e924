"""Structural costs of the cheap stages (issue 21): what reading one file and walking a tree ask of the
system. Counts, not timings (timing is bench/run.py's job)."""

from __future__ import annotations

import os

import pytest

from kv4lint.base.settings import Settings
from kv4lint.files import discover as discover_mod
from kv4lint.files import regular_file
from kv4lint.files.ignore import GitIgnore
from kv4lint.pipeline import read


class _Counting:
    """``os`` for kv4lint.files.regular_file and kv4lint.pipeline.read, counting the system calls made through it."""

    def __init__(self):
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in ("stat", "lstat", "open", "fstat", "read", "close"):
            return real

        def counted(*a, **k):
            self.calls[name] = self.calls.get(name, 0) + 1
            return real(*a, **k)

        return counted


@pytest.fixture
def counting(monkeypatch):
    c = _Counting()
    monkeypatch.setattr(regular_file, "os", c)
    monkeypatch.setattr(read, "os", c)
    return c


@pytest.mark.parametrize("content", [b"", b"print('hello')\n", b"x" * 100_000])
def test_reading_a_file_is_one_stat_open_fstat_read_close(tmp_path, counting, content):
    p = tmp_path / "app.py"
    p.write_bytes(content)
    rep, data = read.read_file(str(p), Settings())
    assert data == content and not rep.errors
    assert counting.calls == {"stat": 1, "open": 1, "fstat": 1, "read": 1, "close": 1}


def test_a_file_over_the_limit_is_not_read(tmp_path, counting):
    p = tmp_path / "big.py"
    p.write_bytes(b"x" * 2000)
    rep, data = read.read_file(str(p), Settings(max_file_bytes=1000))
    assert data is None and not rep.scanned
    assert "larger than" in rep.errors[0].message
    assert counting.calls.get("read", 0) == 0 and counting.calls["open"] == counting.calls["close"] == 1


def test_a_fifo_is_never_opened(tmp_path, counting):
    p = tmp_path / "pipe.sh"
    os.mkfifo(p)
    rep, data = read.read_file(str(p), Settings())
    assert data is None and not rep.scanned
    assert rep.errors[0].message == "not a regular file; skipped"
    assert counting.calls.get("open", 0) == 0


def test_a_file_that_grows_after_fstat_is_read_whole(tmp_path):
    p = tmp_path / "grows.sh"
    p.write_bytes(b"a" * 10)
    fd, st = regular_file.open_regular(str(p))
    try:
        with open(p, "ab") as f:
            f.write(b"b" * 5)
        assert regular_file.read_open(fd, st.st_size) == b"a" * 10 + b"b" * 5
    finally:
        os.close(fd)


def test_a_walk_without_ignore_files_asks_no_ignore_question_per_entry(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    for d in ("a", "a/b", "c"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
        for name in ("run.sh", "app.py", "README.md"):
            (tmp_path / d / name).write_text("ls\n")
    asked = []
    real = GitIgnore.entry_ignored
    monkeypatch.setattr(GitIgnore, "entry_ignored", lambda self, *a: asked.append(a) or real(self, *a))
    found = discover_mod.discover([str(tmp_path)])
    assert len(found.files) == 9
    assert [a[0] for a in asked] == [str(tmp_path)]  # the named directory itself, none of its entries
    # With a .gitignore (here: in a/), the entries below it are asked about, and it still decides.
    (tmp_path / "a" / ".gitignore").write_text("app.py\n")
    found = discover_mod.discover([str(tmp_path)])
    names = sorted(os.path.relpath(c.path, tmp_path) for c in found.files)
    assert "a/app.py" not in names and "a/b/app.py" not in names and "c/app.py" in names
    assert asked
