#!/usr/bin/env python3
"""Write docs/rules/KV40x.md (one page per rule) and docs/rules/README.md from kv4lint's rule data.

    python tools/gen_rule_docs.py           # write the pages
    python tools/gen_rule_docs.py --check   # exit 1 when a committed page is stale or missing

The text is the same as ``kv4lint explain CODE`` (``kv4lint.rules.codes.RULES``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kv4lint.reporters.ruledoc import index_markdown, rule_markdown  # noqa: E402
from kv4lint.rules.codes import RULES  # noqa: E402

DOCS = ROOT / "docs" / "rules"


def pages() -> dict[Path, str]:
    out = {DOCS / f"{code}.md": rule_markdown(RULES[code]) for code in sorted(RULES)}
    out[DOCS / "README.md"] = index_markdown()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the committed pages are up to date")
    ns = ap.parse_args(argv)
    want = pages()
    stale = [p for p, text in want.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    extra = [p for p in DOCS.glob("KV*.md") if p not in want] if DOCS.exists() else []
    if ns.check:
        for p in stale:
            print(f"stale or missing: {p.relative_to(ROOT)}", file=sys.stderr)
        for p in extra:
            print(f"no such rule: {p.relative_to(ROOT)}", file=sys.stderr)
        if stale or extra:
            print("run: python tools/gen_rule_docs.py", file=sys.stderr)
            return 1
        return 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for p in stale:
        p.write_text(want[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    for p in extra:
        p.unlink()
        print(f"removed {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
