"""The per-release verdict walk of an unpinned launch (``rules.parser._since``) reads each older release's
findings by code and severity only, and so asks ``check`` not to replay their fixes (issue 37): the replay settles
a fix's safety, never a finding's code or severity. This holds that on every fixture shell script."""

from __future__ import annotations

from pathlib import Path

from kv4lint.base.settings import Settings
from kv4lint.pipeline.runner import lint_text
from kv4lint.rules import parser

ROOT = Path(__file__).resolve().parents[1]


def test_checks_without_the_fix_replay_keep_every_code_and_severity(monkeypatch):
    calls = []
    real = parser.check

    def both(args, target, **kw):
        quick = real(args, target, **kw)
        if kw.get("replay_fixes", True) is False:
            calls.append(1)
            full = real(args, target, **{**kw, "replay_fixes": True})
            assert [parser._key(f) for f in quick] == [parser._key(f) for f in full]
        return quick

    monkeypatch.setattr(parser, "check", both)
    for path in sorted((ROOT / "fixtures").rglob("*.sh")):
        lint_text(str(path), path.read_text(encoding="utf-8", errors="replace"), Settings(), language="shell")
    assert calls  # the fixtures hold unpinned launches whose verdict depends on the release
