"""The package's layout: docs/architecture.md lists every module, once, and only modules that exist; no module
is longer than a maintainer can hold (about 1,200 lines: split it along its seams)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "kv4lint"  # the checkout's sources, whichever kv4lint is installed
# One line per module: "- `kv4lint/path/to/module.py` — what it is".
MAX_LINES = 1200
LINE = re.compile(r"^- `(kv4lint/[\w/]+\.py)` — \S", re.M)


def _listed() -> list[str]:
    return LINE.findall(DOC.read_text(encoding="utf-8"))


def _modules() -> set[str]:
    return {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py")}


def test_every_module_is_listed():
    assert sorted(_modules() - set(_listed())) == []


def test_every_listed_module_exists():
    assert sorted(set(_listed()) - _modules()) == []


def test_each_module_is_listed_once():
    assert [m for m, n in Counter(_listed()).items() if n > 1] == []


def test_the_readme_links_the_architecture():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_no_module_is_over_1200_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
