"""docs/rules/: one page per code with every section, generated from the rule data and up to date."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint.reporters.ruledoc import SECTIONS, rule_markdown, sections
from kv4lint.rules.codes import RULES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "rules"


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_data_has_every_section(code):
    got = sections(RULES[code])
    assert list(got) == list(SECTIONS)
    missing = [h for h, body in got.items() if not body.strip()]
    assert not missing, f"{code} lacks: {', '.join(missing)}"


@pytest.mark.parametrize("code", sorted(RULES))
def test_committed_page_has_every_section_with_text(code):
    page = DOCS / f"{code}.md"
    assert page.exists(), f"{page} missing: run python tools/gen_rule_docs.py"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {code}: {RULES[code].name}\n")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    found = dict(zip(parts[1::2], parts[2::2]))
    for heading in SECTIONS:
        assert heading in found, f"{code}: no '## {heading}' section"
        assert found[heading].strip(), f"{code}: '## {heading}' is empty"
    assert "```shell\n# " in found["Example"] and "```shell\n# " in found["Not reported"]
    assert "# target: " in found["Example"] and "# target: " in found["Not reported"]
    assert RULES[code].since in found["Since which SGLang release"]


def test_a_rule_without_a_section_is_caught():
    import dataclasses

    r = dataclasses.replace(RULES["KV401"], fix_safety="  ")
    assert not sections(r)["Fix safety"]
    assert "## Fix safety\n\n\n" in rule_markdown(r)


def test_committed_docs_are_not_stale():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rule_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_no_page_for_an_unknown_code():
    assert {p.stem for p in DOCS.glob("KV*.md")} == set(RULES)


def test_index_links_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for code in RULES:
        assert f"[{code}]({code}.md)" in index


def test_pages_match_explain(capsys):
    """The docs and `kv4lint explain` say the same thing."""
    from kv4lint.cli import main

    for code, r in RULES.items():
        assert main(["explain", code]) == 0
        out = capsys.readouterr().out
        page = (DOCS / f"{code}.md").read_text(encoding="utf-8")
        for part in (r.what, r.why, r.fix, r.fix_safety):
            assert part.strip() in out and part.strip() in page
