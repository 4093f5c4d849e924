"""The second run is a stat walk (issue 37): a walk that reuses what the last one learned finds exactly what a
walk from scratch finds, after every kind of change, and lists again only the directories that changed.

The oracle: after each change, ``discover`` with the memo of the walk before gives the same files (paths,
languages), skips and errors as ``discover`` without one.  Tests of what a record saves assert which
directories were listed (``Walks.listed``), so that they cannot pass by listing everything again.  The racy
rule is off (``racy_s=0``: the tree was written seconds ago) except where a test turns it on; a change shows
because ``_age`` moved every time an hour back.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kv4lint.files import discover as walk
from kv4lint.files.discover import WalkMemo, discover
from kv4lint.settings.config import CONFIG_NAMES

HOUR_AGO = time.time() - 3600


def _age(root: Path) -> None:
    """Every entry's modification time an hour back: a change made now shows in it."""
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            if not os.path.islink(p):
                os.utime(p, (HOUR_AGO, HOUR_AGO))
    os.utime(root, (HOUR_AGO, HOUR_AGO))


def _write(root: Path, rel: str, text: str = "echo\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    for rel in ("serve.sh", "a/run.py", "a/b/deep.sh", "a/b/c/deeper.yaml", "docs/x.md", "gen/made.sh",
                "tools/script"):
        _write(root, rel)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


class Walks:
    """Walk ``paths`` twice over: with the memo of the walk before, and from scratch; compare."""

    def __init__(self, monkeypatch, paths=(".",), **kw):
        self.paths, self.kw, self.data, self.listed = list(paths), kw, None, []
        real = os.scandir

        def scandir(d="."):
            self.listed.append(os.fspath(d))
            return real(d)

        monkeypatch.setattr(walk.os, "scandir", scandir)

    def __call__(self, racy_s: float = 0.0):
        memo = WalkMemo(json.loads(json.dumps(self.data)), racy_s)  # as saved in the index and read back
        self.listed.clear()
        self.listings = {}  # the warm walk's
        warm = discover(self.paths, memo=memo, listed=CONFIG_NAMES, listings=self.listings, **self.kw)
        warm_listed = list(self.listed)
        self.data = memo.dump()
        cold = discover(self.paths, **self.kw)
        assert _seen(warm) == _seen(cold)
        self.listed = warm_listed
        return _seen(warm)


def _seen(disc):
    return ([(c.path, c.language) for c in disc.files], sorted(disc.skipped), sorted(disc.errors))


@pytest.fixture
def walks(monkeypatch):
    def make(*paths, **kw):
        return Walks(monkeypatch, paths or (".",), **kw)
    return make


def _files(seen) -> list[str]:
    return sorted(p for p, _ in seen[0])


def test_an_unchanged_tree_lists_no_directory_again(tree, walks):
    _age(tree)
    w = walks()
    first = w()
    assert len(w.listed) == 7  # ., a, a/b, a/b/c, docs, gen, tools: every directory
    assert w() == first
    assert w.listed == []  # only stats


def test_a_new_file_is_found_in_its_directory_alone(tree, walks):
    _age(tree)
    w = walks()
    w()
    _write(tree, "a/b/new.sh")
    assert "a/b/new.sh" in _files(w())
    assert w.listed == ["a/b"]


def test_a_new_file_is_found_when_the_directory_keeps_its_modification_time(tree, walks):
    """``touch -r``, a restore from a backup: the change time still moves."""
    _age(tree)
    w = walks()
    w()
    time.sleep(0.05)  # the next timestamp tick
    _write(tree, "a/b/new.sh")
    os.utime(tree / "a" / "b", (HOUR_AGO, HOUR_AGO))
    assert "a/b/new.sh" in _files(w())


def test_a_file_replaced_by_a_directory(tree, walks):
    _age(tree)
    w = walks()
    w()
    (tree / "a" / "run.py").unlink()
    _write(tree, "a/run.py/inner.sh")
    assert "a/run.py/inner.sh" in _files(w())


def test_a_record_whose_file_is_no_longer_a_file_is_not_used(tree, walks, monkeypatch):
    """Should a directory's signature not move (a file system that does not update it), a recorded file
    that is now a directory sends the walk back to listing it."""
    _age(tree)
    monkeypatch.setattr(walk, "_dir_sig", lambda st: "the same")
    w = walks()
    w()
    (tree / "a" / "run.py").unlink()
    _write(tree, "a/run.py/inner.sh")
    assert "a/run.py/inner.sh" in _files(w())


def test_directories_changed_just_before_the_walk_are_listed_again(tree, walks):
    w = walks()
    w(racy_s=3600)
    assert w.data and all(rec[0] == "" for rec in w.data["dirs"].values())  # no signature: never matched
    w(racy_s=3600)
    assert len(w.listed) == 7


def test_a_directory_changed_just_before_the_walk_is_listed_again_alone(tree, walks, monkeypatch):
    """An editor's save in the repository's root just before a run: the root is listed again next time, and
    the directories below keep their records (its .gitignore did not change)."""
    _write(tree, ".gitignore", "*.log\n")
    _age(tree)
    w = walks()
    w()
    _write(tree, "new.sh")
    young = {os.stat(tree).st_ino}  # the root changed just now
    real = WalkMemo.fresh
    monkeypatch.setattr(WalkMemo, "fresh", lambda self, st: st.st_ino not in young and real(self, st))
    assert "new.sh" in _files(w())
    assert w.listed == ["."]
    young.clear()
    w()
    assert w.listed == ["."]  # the root, recorded without a signature; nothing below it
    w()
    assert w.listed == []


@pytest.mark.parametrize("where", [".gitignore", "a/.gitignore", "a/b/.gitignore"])
def test_an_edited_gitignore_decides_again_below_it(tree, walks, where):
    _write(tree, where, "# nothing yet\n")
    _age(tree)
    w = walks()
    assert "a/b/c/deeper.yaml" in _files(w())
    _write(tree, where, "deeper.yaml\n")
    os.utime(tree / where, (HOUR_AGO + 1, HOUR_AGO + 1))  # a new time, its directory's untouched
    assert "a/b/c/deeper.yaml" not in _files(w())


def test_a_new_gitignore_above_decides_again_in_unchanged_directories(tree, walks):
    _age(tree)
    w = walks()
    w()
    _write(tree, "a/.gitignore", "*.yaml\n")
    seen = _files(w())
    assert "a/b/c/deeper.yaml" not in seen and "a/b/deep.sh" in seen


def test_info_exclude_decides_again(tree, walks):
    _age(tree)
    w = walks()
    w()
    _write(tree, ".git/info/exclude", "gen/\n")
    assert "gen/made.sh" not in _files(w())


def test_a_gitignore_above_the_named_directory(tree, walks):
    _write(tree, ".gitignore", "# nothing yet\n")
    _age(tree)
    w = walks("a")
    assert "a/b/deep.sh" in _files(w())
    _write(tree, ".gitignore", "a/b/\n")
    assert _files(w()) == ["a/run.py"]
    _write(tree, ".gitignore", "a/\n")
    assert w() == ([], [("a", "ignored by git (.gitignore or .git/info/exclude)")], [])


def test_other_excludes_are_another_walk(tree, walks):
    _age(tree)
    w = walks()
    w()
    w.kw = {"exclude": ["gen"]}
    assert "gen/made.sh" not in _files(w())
    w.kw = {}
    assert "gen/made.sh" in _files(w())


def test_the_listings_name_the_configuration_files(tree, walks):
    """The configuration's look-up asks the walk's listings which configuration files a directory holds."""
    _write(tree, "a/pyproject.toml", "[tool.kv4lint]\n")
    _age(tree)
    w = walks()
    w()
    _write(tree, "a/b/kv4lint.toml", "[tool]\n")
    w()
    assert w.listed == ["a/b"]
    assert "kv4lint.toml" in w.listings[str(tree / "a" / "b")]
    assert "pyproject.toml" in w.listings[str(tree / "a")]  # from the record
    assert ".git" in w.listings[str(tree)]


def test_a_symlink_is_decided_afresh(tree, walks, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.sh").write_text("echo secret\n")
    os.symlink("../gen/made.sh", tree / "a" / "link.sh")
    _age(tree)
    w = walks()
    assert "a/link.sh" not in _files(w())  # the file it points to, under its own name
    # The target becomes a link out of the tree; the link's own directory is unchanged.
    (tree / "gen" / "made.sh").unlink()
    os.symlink(str(outside / "secret.sh"), tree / "gen" / "made.sh")
    seen = w()
    assert ("a/link.sh", walk.OUT_OF_TREE) in seen[1] and "gen/made.sh" not in _files(seen)


def test_a_damaged_memo_is_ignored(tree, walks):
    _age(tree)
    w = walks()
    w()
    good = w.data
    for junk in ({"dirs": {".": 5, "a": [5, 5, 5, 5]}}, {"dirs": {".": ["x"] * 4, "a": ["", "", "", "f"]}},
                 {"dirs": []}, {"roots": {".": [5]}}, {"roots": []}):
        w.data = dict(good, **junk)
        w()
    for junk in ([], None, "x"):
        w.data = junk
        w()
