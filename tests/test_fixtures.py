"""Every fixture under fixtures/ against the snapshots written beside it: what a user sees, in full.

``NAME.expected``: header lines starting with ``#`` (an optional ``# args: ...`` line holds the kv4lint check
options; other comment lines are kept as written), then one block per finding, as
:func:`render_findings` writes it::

    11:25-11:39 KV402 error: --kv-cache-dtype fp4_mx_block16 needs CUDA, but ... Use an fp8 KV cache
      fix (safe): set --kv-cache-dtype fp8_e4m3
        11:25-11:39 'fp4_mx_block16' -> 'fp8_e4m3'

(span, code, severity, message; the fix's applicability and description, and each edit: its span, the text it
replaces, the new text).  No blocks: the fixture is a decoy and must stay silent.  ``NAME.fixed``: the file after
``kv4lint fix`` (same args), fixing it again changes nothing; no ``.fixed``: ``kv4lint fix`` leaves the file as
it is.

Regenerate every snapshot after an intended change of messages, spans or fixes, then review the diff::

    .venv/bin/pytest tests/test_fixtures.py --update-snapshots

A new fixture: add the file and a ``NAME.expected`` holding its ``# args:`` line, then run the command above.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from kv4lint.cli import main
from kv4lint.source import decode

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SIDECARS = (".expected", ".fixed")


def _sidecar(path: Path, suffix: str) -> Path:
    return Path(str(path) + suffix)


def fixture_files() -> list[Path]:
    """Every fixture file (not a snapshot) outside fixtures/repos/ (fixture repositories have their own tests)."""
    return [p for p in sorted(FIXTURES.rglob("*"))
            if p.is_file() and p.suffix not in SIDECARS and "repos" not in p.relative_to(FIXTURES).parts[:1]]


def snapshotted() -> list[Path]:
    """The fixtures with a ``.expected`` snapshot (others are files a fixture refers to, e.g. a --config file)."""
    return [p for p in fixture_files() if _sidecar(p, ".expected").exists()]


def read_expected(path: Path) -> tuple[list[str], list[str], str]:
    """(kv4lint check options, the header lines, the rendered findings) of ``path``'s snapshot."""
    args: list[str] = []
    header: list[str] = []
    lines = _sidecar(path, ".expected").read_text().splitlines()
    while lines and lines[0].startswith("#"):
        line = lines.pop(0)
        header.append(line)
        if line.startswith("# args:"):
            args = shlex.split(line[len("# args:"):])
    return args, header, "\n".join(lines).strip("\n")


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def render_findings(doc: dict, target: Path) -> str:
    """The findings of a ``--format json`` document as the snapshot blocks (see the module's docstring)."""
    texts: dict[Path, str] = {}

    def text_of(path: Path) -> str:
        if path not in texts:
            texts[path] = decode(path.read_bytes(), python=path.suffix == ".py").text
        return texts[path]

    blocks = []
    for f in sorted(doc["findings"], key=lambda f: (f["line"], f["column"], f["code"], f["message"])):
        block = [f"{f['line']}:{f['column']}-{f['end_line']}:{f['end_column']} {f['code']} {f['severity']}: "
                 f"{f['message']}"]
        fix = f.get("fix")
        if not fix:
            block.append("  no fix")
        else:
            block.append(f"  fix ({fix['applicability']}): {fix['description']}")
            for e in fix["edits"]:
                where = Path(e["path"]).resolve() if e.get("path") else target
                text = text_of(where)
                prefix = "" if where == target else f"{where.relative_to(target.parent.resolve())}:"
                block.append(f"    {prefix}{_position(text, e['start'])}-{_position(text, e['end'])} "
                             f"{text[e['start']:e['end']]!r} -> {e['text']!r}")
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def run_json(args: list[str], target: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", "--isolated", "--jobs", "1", *args, str(target),
                 "--output-file", str(out)])
    assert code in (0, 1), f"exit {code}"
    return json.loads(out.read_text())


def _updating(request) -> bool:
    return bool(request.config.getoption("--update-snapshots"))


FILES = snapshotted()
IDS = [str(p.relative_to(FIXTURES)) for p in FILES]


def test_every_fixture_is_snapshotted_and_every_snapshot_has_its_fixture():
    """A fixture without a snapshot would be skipped silently; a snapshot without its fixture is stale."""
    def referred_to(q: Path) -> bool:  # a file a fixture names (a --config file) belongs to that fixture
        return any(str(q.relative_to(p.parent)) in p.read_text(errors="replace")
                   for p in FILES if q.is_relative_to(p.parent) and q != p)

    unsnapshotted = [str(p.relative_to(FIXTURES)) for p in fixture_files()
                     if not _sidecar(p, ".expected").exists() and not referred_to(p)]
    assert not unsnapshotted, f"fixtures without a .expected snapshot: {unsnapshotted}"
    orphans = [str(p.relative_to(FIXTURES)) for p in sorted(FIXTURES.rglob("*")) if p.suffix in SIDECARS
               and "repos" not in p.relative_to(FIXTURES).parts[:1] and not Path(str(p)[:-len(p.suffix)]).exists()]
    assert not orphans, f"snapshots whose fixture is gone: {orphans}"
    silent = [p for p in FILES if not read_expected(p)[2]]
    assert FILES and len(silent) < len(FILES), "no fixture has a finding"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_findings(path: Path, tmp_path: Path, request):
    args, header, expected = read_expected(path)
    doc = run_json(args, path, tmp_path)
    assert doc["errors"] == [], doc["errors"]
    got = render_findings(doc, path)
    if _updating(request):
        _sidecar(path, ".expected").write_text("\n".join(header) + "\n" + (f"\n{got}\n" if got else ""))
        return
    assert got == expected, f"{path}: the findings differ from the snapshot (regenerate with --update-snapshots)"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_fix(path: Path, tmp_path: Path, request):
    args, _, _ = read_expected(path)
    work = tmp_path / "work"
    shutil.copytree(path.parent, work)  # the fixture's neighbours too: a fix may edit a file it refers to
    target = work / path.name
    main(["fix", "--isolated", "--jobs", "1", *args, str(target)])
    got = target.read_bytes()
    snapshot = _sidecar(path, ".fixed")
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
