"""Fixture snapshots: ``NAME.expected`` beside each fixture under fixtures/, read and written here only.

A snapshot is header lines starting with ``#`` (an optional ``# args: ...`` line holds the kv4lint check options;
other comment lines are kept as written), then one block per finding, as :func:`render_findings` writes it::

    11:25-11:39 KV402 error: --kv-cache-dtype fp4_mx_block16 needs CUDA, but ... Use an fp8 KV cache
      fix (safe): set --kv-cache-dtype fp8_e4m3
        11:25-11:39 'fp4_mx_block16' -> 'fp8_e4m3'

(span, code, severity, message; the fix's applicability and description, and each edit: its span, the text it
replaces, the new text, and the file when it is another one).  No blocks: the fixture is a decoy and must stay
silent.  Regenerate after an intended change, then review the diff::

    .venv/bin/pytest tests/test_fixtures.py --update-snapshots
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from kv4lint.base.source import decode

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SIDECARS = (".expected", ".fixed")
_HEAD = re.compile(r"(\d+):(\d+)-(\d+):(\d+) (KV\d+) (\w+): ")
_BODY = re.compile(r"  (?:no fix|fix \((?:safe|unsafe)\): .*|  \S.*)")


@dataclass
class Snapshot:
    args: list[str]  # kv4lint check options
    header: list[str]  # the '#' lines, as written
    body: str  # the rendered findings
    findings: list[tuple[int, int, str]]  # (line, column, code) of each finding, in order


def sidecar(path: Path, suffix: str) -> Path:
    return Path(str(path) + suffix)


def fixture_files() -> list[Path]:
    """Every fixture file (not a snapshot) outside fixtures/repos/ (fixture repositories have their own tests)."""
    return [p for p in sorted(FIXTURES.rglob("*"))
            if p.is_file() and p.suffix not in SIDECARS and "repos" not in p.relative_to(FIXTURES).parts[:1]]


def snapshotted() -> list[Path]:
    """The fixtures with a ``.expected`` snapshot (the others are files a fixture names, e.g. a --config file)."""
    return [p for p in fixture_files() if sidecar(p, ".expected").exists()]


def read(path: Path) -> Snapshot:
    """``path``'s snapshot; a line that is neither header nor finding block fails loudly (no silent drift)."""
    args: list[str] = []
    header: list[str] = []
    lines = sidecar(path, ".expected").read_text().splitlines()
    while lines and lines[0].startswith("#"):
        line = lines.pop(0)
        header.append(line)
        if line.startswith("# args:"):
            args = shlex.split(line[len("# args:"):])
    findings = []
    for line in lines:
        head = _HEAD.match(line)
        if head:
            findings.append((int(head[1]), int(head[2]), head[5]))
        elif line and not _BODY.fullmatch(line):
            raise ValueError(f"{sidecar(path, '.expected')}: not a snapshot line: {line!r}")
    return Snapshot(args, header, "\n".join(lines).strip("\n"), findings)


def write(path: Path, header: list[str], body: str) -> None:
    sidecar(path, ".expected").write_text("\n".join(header) + "\n" + (f"\n{body}\n" if body else ""))


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def render_findings(doc: dict, target: Path) -> str:
    """The findings of a ``kv4lint check --format json`` document on ``target`` as snapshot blocks."""
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
