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


_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCED = re.compile(r"^```.*?^```", re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCED.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def test_every_link_of_the_docs_leads_somewhere():
    """A relative link of the README or docs/ names a file or folder of the repository, and its ``#anchor`` a
    heading of that page (issue 36 moved the README's depth into docs/: no link may be left behind)."""
    broken = []
    for doc in [*DOCS, ROOT / "bench" / "README.md"]:
        for target in _LINK.findall(_FENCED.sub("", doc.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            path = (doc.parent / name).resolve() if name else doc
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_slugs_are_githubs():
    assert _slug("The performance table (issue 37)") == "the-performance-table-issue-37"
    assert _slug("An SGLang `--config` file read alone") == "an-sglang---config-file-read-alone"
    assert _slug("Latest figures: the table") == "latest-figures-the-table"
