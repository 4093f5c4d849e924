"""The repository explains itself (issue 29): no tracked file points outside it.

A maintainer has this repository and SGLang's wheels, nothing else: no document of a machine the project was
written on, no spec beside the checkout, no developer's directory. SGLang's rules are in docs/sglang-rules.md,
the option tables are generated from the wheels (tools/gen_options.py). Paths inside a scanned launch (a
container's ``/root/.cache``, ``-w /work``) are the launch's own and stay: the patterns name references, not
every absolute path.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What points outside the repository. Written so that this file does not match itself.
OUTSIDE = re.compile("|".join([
    r"/w" r"ork/",  # the machine the project was written on
    r"\.\./sha" r"red/", r"\bshared/sp" r"ec\b",  # the shared folder beside the checkout
    r"\bsp" r"ec §", r"\bsp" r"ec section",  # sections of a document that is not here
    r"sglang-kv4-rules\.md", r"sglang-cli-options\.json",  # that document and its option list
    r"/tmp/whe" r"els",  # a developer's wheel directory
    r"/home/[a-z][\w.-]*/", r"/Users/[A-Za-z][\w.-]*/",  # someone's home directory
]))


# What .gitignore keeps out of the repository: skipped when there is no git to ask (an unpacked archive).
UNTRACKED = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist", ".cache"}


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file but the ignored ones
        return [p for p in ROOT.rglob("*") if p.is_file() and not UNTRACKED & set(p.relative_to(ROOT).parts)
                and p.relative_to(ROOT).parts[:2] != ("bench", "out") and not p.name.endswith(".egg-info")]


def test_no_tracked_file_refers_outside_the_repository():
    found = []
    for path in tracked_files():
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):  # binary data (wheels, gzip): no references to read
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = OUTSIDE.search(line)
            if m:
                found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)!r} in {line.strip()[:120]!r}")
    assert not found, "references outside the repository:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_name():
    for line in ["see /w" "ork/shared/x", "(sp" "ec §2.3)", "python tools/gen_options.py ../sha" "red/x.json",
                 "cp /ho" "me/alice/wheels/x .", "the sglang-kv4-ru" "les.md table"]:
        assert OUTSIDE.search(line), line
    for line in ["docker run -w /work --ulimit", "-v ~/.cache:/root/.cache", ". ../../shared.sh",
                 "docs/sglang-rules.md §2.3", "~/.cache/kv4lint/sglang-wheels"]:
        assert not OUTSIDE.search(line), line
