"""Every fixture under fixtures/ against its snapshots: what a user sees, in full (format: tests/snapshots.py).

``NAME.expected``: the findings of ``kv4lint check`` (with the snapshot's ``# args:``), every block: span, code,
message, fix.  ``NAME.fixed``: the file after ``kv4lint fix`` (same args), fixing it again changes nothing; no
``.fixed``: ``kv4lint fix`` leaves the file as it is.

Regenerate every snapshot after an intended change of messages, spans or fixes, then review the diff::

    .venv/bin/pytest tests/test_fixtures.py --update-snapshots

A new fixture: add the file and a ``NAME.expected`` holding its ``# args:`` line, then run the command above.
"""

from __future__ import annotations

import collections
import json
import re
import shutil
from pathlib import Path

import pytest

import snapshots
from kv4lint.cli import main

FIXTURES = snapshots.FIXTURES


def run_json(args: list[str], target: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", "--isolated", "--jobs", "1", *args, str(target),
                 "--output-file", str(out)])
    assert code in (0, 1), f"exit {code}"
    return json.loads(out.read_text())


def _updating(request) -> bool:
    return bool(request.config.getoption("--update-snapshots"))


FILES = snapshots.snapshotted()
IDS = [str(p.relative_to(FIXTURES)) for p in FILES]


def test_every_fixture_is_snapshotted_and_every_snapshot_has_its_fixture():
    """A fixture without a snapshot would be skipped silently; a snapshot without its fixture is stale."""
    def referred_to(q: Path) -> bool:  # a file a fixture names (a --config file) belongs to that fixture
        return any(str(q.relative_to(p.parent)) in p.read_text(errors="replace")
                   for p in FILES if q.is_relative_to(p.parent) and q != p)

    unsnapshotted = [str(p.relative_to(FIXTURES)) for p in snapshots.fixture_files()
                     if not snapshots.sidecar(p, ".expected").exists() and not referred_to(p)]
    assert not unsnapshotted, f"fixtures without a .expected snapshot: {unsnapshotted}"
    orphans = [str(p.relative_to(FIXTURES)) for p in sorted(FIXTURES.rglob("*")) if p.suffix in snapshots.SIDECARS
               and "repos" not in p.relative_to(FIXTURES).parts[:1] and not Path(str(p)[:-len(p.suffix)]).exists()]
    assert not orphans, f"snapshots whose fixture is gone: {orphans}"
    silent = [p for p in FILES if not snapshots.read(p).findings]
    assert FILES and len(silent) < len(FILES), "no fixture has a finding"


def test_no_fixture_output_has_two_findings_with_one_place_and_code():
    """One finding per token and cause (issue 33): SGLang refusing one value on several GPUs, or on several paths
    of a script, is one finding that names them all, never two siblings at the same line, column and code."""
    twice = {str(p.relative_to(FIXTURES)): sorted(k for k, n in collections.Counter(snapshots.read(p).findings).items()
                                                  if n > 1) for p in FILES}
    assert {k: v for k, v in twice.items() if v} == {}


# A name that says the file is clean: a word `ok`, `clean` or `decoy` in the file's name or a folder's.
_CLEAN_WORD = re.compile(r"(?:^|[_.-])(?:ok|clean|decoy)(?:[_.-]|$)")
CLEAN = [p for p in FILES if any(_CLEAN_WORD.search(part) for part in p.relative_to(FIXTURES).parts)]


def test_the_clean_names_are_found():
    names = {str(p.relative_to(FIXTURES)) for p in CLEAN}
    assert {"shell/decoy_b200_ok.sh", "yaml/helm/decoy-values-fp8.yaml", "shell/sourced_settings_ok/serve.sh"} <= names
    assert not {"markdown/cookbook-tabs.mdx", "notebook/engine.ipynb", "shell/slurm_sbatch_h100.sh"} & names


@pytest.mark.parametrize("path", CLEAN, ids=[str(p.relative_to(FIXTURES)) for p in CLEAN])
def test_a_fixture_named_clean_is_clean(path: Path, tmp_path: Path):
    """A clean twin is clean in the way its name says (issue 36): no finding with its snapshot's options, and none
    where a user meets it, ``kv4lint check FILE`` with no option (a condition, such as a GPU, is in its name or
    its text: ``decoy_b200_ok.sh``). A decoy that warns by design needs a name that says so."""
    assert snapshots.read(path).findings == [], f"{path}: named clean, its snapshot has findings"
    doc = run_json([], path, tmp_path)
    assert doc["errors"] == [] and doc["findings"] == [], (
        f"{path}: named clean, `kv4lint check` with no option reports "
        + "; ".join(f"{f['line']}:{f['column']} {f['code']} {f['message']}" for f in doc["findings"]))


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_findings(path: Path, tmp_path: Path, request):
    snap = snapshots.read(path)
    doc = run_json(snap.args, path, tmp_path)
    assert doc["errors"] == [], doc["errors"]
    got = snapshots.render_findings(doc, path)
    if _updating(request):
        snapshots.write(path, snap.header, got)
        return
    assert got == snap.body, f"{path}: the findings differ from the snapshot (regenerate with --update-snapshots)"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_fix(path: Path, tmp_path: Path, request):
    args = snapshots.read(path).args
    work = tmp_path / "work"
    shutil.copytree(path.parent, work)  # the fixture's neighbours too: a fix may edit a file it refers to
    target = work / path.name
    main(["fix", "--isolated", "--jobs", "1", *args, str(target)])
    got = target.read_bytes()
    snapshot = snapshots.sidecar(path, ".fixed")
    if _updating(request):
        if got != path.read_bytes():
            snapshot.write_bytes(got)
        elif snapshot.exists():
            snapshot.unlink()
        return
    want = snapshot.read_bytes() if snapshot.exists() else path.read_bytes()
    assert got == want, f"{path}: " + ("the fixed file differs from its .fixed snapshot" if snapshot.exists()
                                       else "kv4lint fix changed a file that has no .fixed snapshot")
    # Idempotence: fixing the fixed file changes nothing, and nothing fixable remains.
    main(["fix", "--isolated", "--jobs", "1", *args, str(target)])
    assert target.read_bytes() == want
    doc = run_json(args, target, tmp_path)
    assert not [f for f in doc["findings"] if f["fix"] and f["fix"]["edits"] and f["fix"]["applicability"] == "safe"]
