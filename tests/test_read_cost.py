"""Structural costs of the cheap stages (issue 21): what reading one file and walking a tree ask of the
system. Counts, not timings (timing is bench/run.py's job)."""

from __future__ import annotations

import os

from kv4lint import discover as discover_mod
from kv4lint.ignore import GitIgnore


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
