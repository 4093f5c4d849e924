"""Facts the docs state about kv4lint, checked against the code that makes them true (issue 29, item 7).

The console examples run in tests/test_docs_examples.py; what is here are sentences: the codes a
configuration accepts, and when SARIF output has a ``helpUri``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kv4lint.cli import main
from kv4lint.rules.codes import INTERNAL_CODE, RULES

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _paragraphs(path: Path) -> list[str]:
    return re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))


def test_configuration_lists_every_code():
    """docs/configuration.md names the codes `select`/`ignore` accept: every rule of the registry and the
    internal code, no other (it once said KV401 ... KV406 when there were nine)."""
    para = next(p for p in _paragraphs(ROOT / "docs" / "configuration.md") if p.startswith("Codes are"))
    assert set(re.findall(r"KV\d{3}", para)) == {*RULES, INTERNAL_CODE}, para
    assert "…" not in para and "..." not in para, "list the codes, a range hides how many there are"


def test_help_uri_is_promised_only_with_a_url():
    """A ``helpUri`` exists only where a URL for the rule pages is configured: every sentence of the docs
    that mentions it says so (names ``rule-docs-url`` in the same paragraph)."""
    said = [(doc.relative_to(ROOT), p) for doc in DOCS for p in _paragraphs(doc) if "helpUri" in p]
    assert said
    for doc, para in said:
        assert "rule-docs-url" in para, f"{doc}: promises a helpUri without saying when:\n{para}"


def test_sarif_has_no_help_uri_without_a_url(tmp_path, monkeypatch, capsys):
    """What those sentences describe: this installation declares no rule-pages URL, so without
    ``--rule-docs-url`` no rule gets a ``helpUri``; with it, every rule does."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4 "
                                     "--attention-backend triton\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "--format", "sarif", "run.sh"]) == 1
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert rules and not any("helpUri" in r for r in rules)
    assert main(["check", "--isolated", "--format", "sarif", "--rule-docs-url", "https://x.test/r/", "run.sh"]) == 1
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["helpUri"] == f"https://x.test/r/{r['id']}.md" for r in rules)
