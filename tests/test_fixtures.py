"""Every fixture under fixtures/ against the findings written beside it.

``NAME.expected``: an optional ``# args: ...`` line (kv4lint check options), then
``LINE:COL CODE`` per expected finding.  No finding lines: the fixture is a decoy
and must stay silent.  ``NAME.fixed``: the file after ``kv4lint fix`` (same
args); fixing it again must change nothing.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from kv4lint.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SIDECARS = (".expected", ".fixed")


def fixture_files() -> list[Path]:
    out = []
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and p.suffix not in SIDECARS and Path(str(p) + ".expected").exists():
            if "repos" in p.relative_to(FIXTURES).parts[:1]:
                continue  # fixture repositories have their own tests
            out.append(p)
    return out


def read_expected(path: Path) -> tuple[list[str], list[str]]:
    args: list[str] = []
    found = []
    for line in Path(str(path) + ".expected").read_text().splitlines():
        line = line.strip()
        if line.startswith("# args:"):
            args = shlex.split(line[len("# args:"):])
        elif line and not line.startswith("#"):
            found.append(" ".join(line.split()))
    return args, sorted(found, key=_key)


def _key(s: str):
    pos, code = s.split()
    line, col = pos.split(":")
    return int(line), int(col), code


def run_json(args: list[str], target: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", "--isolated", "--jobs", "1", *args, str(target),
                 "--output-file", str(out)])
    assert code in (0, 1), f"exit {code}"
    return json.loads(out.read_text())


FILES = fixture_files()


def test_there_are_fixtures():
    assert len(FILES) > 0


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_fixture_findings(path: Path, tmp_path: Path):
    args, expected = read_expected(path)
    doc = run_json(args, path, tmp_path)
    assert doc["errors"] == [], doc["errors"]
    got = sorted((f"{f['line']}:{f['column']} {f['code']}" for f in doc["findings"]), key=_key)
    assert got == expected, "\n".join(f"{f['line']}:{f['column']} {f['code']} {f['message']}" for f in doc["findings"])


FIXED = [p for p in FILES if Path(str(p) + ".fixed").exists()]


@pytest.mark.parametrize("path", FIXED, ids=[str(p.relative_to(FIXTURES)) for p in FIXED])
def test_fixture_fix(path: Path, tmp_path: Path):
    args, _ = read_expected(path)
    work = tmp_path / "work"
    work.mkdir()
    target = work / path.name
    shutil.copy2(path, target)
    main(["fix", "--isolated", "--jobs", "1", *args, str(target)])
    want = Path(str(path) + ".fixed").read_bytes()
    assert target.read_bytes() == want
    # Idempotence: fixing the fixed file changes nothing, and nothing fixable remains.
    main(["fix", "--isolated", "--jobs", "1", *args, str(target)])
    assert target.read_bytes() == want
    doc = run_json(args, target, tmp_path)
    assert not [f for f in doc["findings"] if f["fix"] and f["fix"]["edits"] and f["fix"]["applicability"] == "safe"]
