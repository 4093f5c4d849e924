"""``--format sarif``: SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

One run: ``tool.driver`` with every rule (descriptions and help from the rule
data), one result per finding with a repo-relative URI (``uriBaseId
%SRCROOT%``: the top of the git repository holding the run's root, else that
root) and a 1-based region (``endColumn`` is the column
after the last character, as SARIF wants), fixes as ``artifactChanges`` whose
replacements delete a ``charOffset``/``charLength`` region of the decoded text
(columns and offsets count Unicode code points: ``columnKind``
``unicodeCodePoints``), and files that could not be read as
``toolExecutionNotifications``.

For GitHub code scanning: every result has ``partialFingerprints``
(``kv4lint/v1``: the launch's text and the code hashed, with the occurrence
number among equal ones in its file), so an alert keeps its identity when
lines above it move. Where a URL is configured, every rule has a ``helpUri``
(its page, ``CODE.md`` under ``rule-docs-url``, else under the installed
distribution's ``Rules`` project URL) and the tool an ``informationUri`` (its
``Homepage``); none is invented when no URL is known.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from kv4lint.base.model import Finding, Position, Severity
from kv4lint.base.printable import json_text
from kv4lint.base.version import __version__
from kv4lint.reporters.paths import relative, repository_root
from kv4lint.reporters.result import RunResult
from kv4lint.reporters.ruledoc import rule_markdown, rule_text
from kv4lint.rules.codes import RULES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "kv4lint/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def project_urls() -> tuple[str | None, str | None]:
    """(the project's home, its rule pages' base URL) from the installed distribution's metadata
    (``[project.urls]`` ``Homepage`` and ``Rules``), each None when not declared."""
    try:
        from importlib.metadata import metadata

        urls = {}
        for entry in metadata("kv4lint").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            urls[label.strip().lower()] = url.strip()
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return None, None
    return urls.get("homepage"), urls.get("rules")


def _rule(code: str, docs: str | None) -> dict:
    r = RULES.get(code)
    help_uri = {"helpUri": f"{docs}{code}.md"} if docs else {}
    if r is None:  # e.g. KV400, an internal failure surfaced as a finding
        return {"id": code, "name": "kv4lint-internal", **help_uri,
                "shortDescription": {"text": "kv4lint could not check this launch"},
                "fullDescription": {"text": "An internal error of kv4lint while checking a launch."},
                "help": {"text": "Report it with the file that triggers it."},
                "defaultConfiguration": {"level": "error"}}
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.what},
        "help": {"text": rule_text(r), "markdown": rule_markdown(r, title=False)},
        **help_uri,
        "defaultConfiguration": {"level": _LEVEL[r.severity]},
        "properties": {"tags": ["sglang", "kv-cache", "fp4"], "precision": "very-high",
                       "problem.severity": "error" if r.severity is Severity.ERROR else "warning"},
    }


def _artifact(path: str, root: str | None) -> dict:
    rel = relative(path, root)
    if rel is not None:
        # A name's bytes, percent-encoded (RFC 3986), also those that are not UTF-8 (os.fsdecode's surrogates).
        return {"uri": quote(rel, safe="/", errors="surrogateescape"), "uriBaseId": SRCROOT}
    if path.startswith("<"):
        return {"uri": quote(path, safe="", errors="surrogateescape")}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


def _region(f: Finding) -> dict:
    s = f.start or Position(1, 1)
    e = f.end or s
    region = {"startLine": s.line, "startColumn": s.column, "endLine": e.line, "endColumn": e.column}
    if e.line < s.line or (e.line == s.line and e.column < s.column):  # never an inverted region
        region.update(endLine=s.line, endColumn=s.column)
    return region


def _fixes(f: Finding, root: str | None) -> list[dict]:
    if f.fix is None or not f.fix.edits:
        return []
    by_file: dict[str, list] = {}
    for e in f.fix.edits:
        by_file.setdefault(e.path or f.path, []).append(e)
    changes = []
    for path, edits in by_file.items():
        reps = [{"deletedRegion": {"charOffset": e.span.start, "charLength": e.span.end - e.span.start},
                 **({"insertedContent": {"text": e.text}} if e.text else {})}
                for e in sorted(edits, key=lambda e: e.span)]
        changes.append({"artifactLocation": _artifact(path, root), "replacements": reps})
    desc = f.fix.description[:1].upper() + f.fix.description[1:]
    if f.fix.applicability == "unsafe":
        desc += " (unsafe: review it; `kv4lint fix --unsafe-fixes` applies it)"
    return [{"description": {"text": desc}, "artifactChanges": changes}]


def _result(f: Finding, index: dict[str, int], root: str | None, occurrence: int) -> dict:
    res = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": _LEVEL.get(f.severity, "warning"),
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(f.path, root), "region": _region(f)}}],
    }
    if f.fingerprint:
        res["partialFingerprints"] = {FINGERPRINT: f"{f.fingerprint}:{occurrence}"}
    fixes = _fixes(f, root)
    if fixes:
        res["fixes"] = fixes
    props = {}
    if f.fix is not None:
        props["fixApplicability"] = f.fix.applicability
    if f.target:
        props["target"] = f.target
    if f.detail:
        props["detail"] = f.detail
    if props:
        res["properties"] = props
    return res


def _notification(path: str, message: str, line: int | None, root: str | None, level: str) -> dict:
    loc: dict = {"artifactLocation": _artifact(path, root)}
    if line:
        loc["region"] = {"startLine": line}
    return {"level": level, "message": {"text": message}, "locations": [{"physicalLocation": loc}]}


def to_sarif(result: RunResult) -> dict:
    root = repository_root(result.root)
    codes = sorted(RULES)
    codes += sorted({f.code for f in result.findings} - set(codes))
    index = {c: i for i, c in enumerate(codes)}
    notes = [_notification(e.path, e.message, e.line, root, "error") for e in result.errors]
    notes += [{"level": "note", "message": {"text": n}} for n in result.notices]
    home, docs = project_urls()
    docs = result.rule_docs_url or docs
    if docs and not docs.endswith("/"):
        docs += "/"
    driver = {"name": "kv4lint", "version": __version__, "semanticVersion": __version__}
    if home or docs:
        driver["informationUri"] = home or docs
    driver["rules"] = [_rule(c, docs) for c in codes]
    seen: dict[tuple[str, str], int] = {}
    results = []
    for f in result.findings:
        k = (f.path, f.fingerprint or "")
        seen[k] = seen.get(k, 0) + 1
        results.append(_result(f, index, root, seen[k]))
    run: dict = {
        "tool": {"driver": driver},
        "invocations": [{"executionSuccessful": not result.usage_errors, "toolExecutionNotifications": notes}],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: RunResult) -> str:
    return json_text(json.dumps(to_sarif(result), indent=2, ensure_ascii=False)) + "\n"
