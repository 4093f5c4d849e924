"""``--format gitlab``: a GitLab Code Quality report (``artifacts: reports: codequality``).

A JSON array, one issue per finding and per file that could not be checked::

    [{"description": "KV401 --kv-cache-dtype nvfp4 cannot be used with ...",
      "check_name": "KV401", "fingerprint": "9f2c...", "severity": "major",
      "location": {"path": "scripts/serve.sh", "lines": {"begin": 3, "end": 3}}}]

``severity``: ``major`` for an error (SGLang refuses the launch), ``minor`` for
a warning, ``critical`` for a file kv4lint could not check.  Paths are relative
to ``$CI_PROJECT_DIR`` (the checkout) when set, else to the git repository
holding the run's root, as GitLab resolves them.  ``fingerprint`` is stable
when lines above a finding move: the launch's text and the code (SARIF's
``partialFingerprints``), with the path and the occurrence among equal ones.
"""

from __future__ import annotations

import hashlib
import json
import os

from kv4lint.base.model import Severity
from kv4lint.base.printable import json_text
from kv4lint.reporters.paths import relative, repository_root
from kv4lint.reporters.result import RunResult

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor"}


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\0".join(str(p) for p in parts).encode("utf-8", "surrogatepass")).hexdigest()


def to_gitlab(result: RunResult) -> list[dict]:
    base = os.environ.get("CI_PROJECT_DIR") or repository_root(result.root)
    issues = []
    seen: dict[tuple, int] = {}
    for f in result.findings:
        path = relative(f.path, base) or f.path
        begin = f.start.line if f.start is not None else 1
        end = max(begin, (f.end or f.start).line) if f.start is not None else begin
        key = (path, f.code, f.fingerprint or f"{begin}:{f.message}")
        seen[key] = seen.get(key, 0) + 1
        issues.append({
            "description": f"{f.code} {f.message}",
            "check_name": f.code,
            "fingerprint": _fingerprint(*key, seen[key]),
            "severity": _SEVERITY.get(f.severity, "minor"),
            "location": {"path": path, "lines": {"begin": begin, "end": end}},
        })
    for e in result.errors:
        path = relative(e.path, base) or e.path
        issues.append({
            "description": f"kv4lint could not check this file: {e.message}",
            "check_name": "kv4lint",
            "fingerprint": _fingerprint(path, "error", e.message),
            "severity": "critical",
            "location": {"path": path, "lines": {"begin": e.line or 1}},
        })
    return issues


def render(result: RunResult) -> str:
    return json_text(json.dumps(to_gitlab(result), indent=2, ensure_ascii=False)) + "\n"
