"""``--format json``: ``{"findings": [...], "errors": [...], "files_scanned": N}``."""

from __future__ import annotations

import json

from kv4lint.base.printable import json_text
from kv4lint.reporters.result import RunResult


def render(result: RunResult) -> str:
    doc = {
        "findings": [f.to_json() for f in result.findings],
        "errors": [e.to_json() for e in result.errors],
        "files_scanned": result.files_scanned,
    }
    return json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
