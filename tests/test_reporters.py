"""Reporters: text, concise, json, sarif (validated against the official SARIF 2.1.0 schema), github."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import jsonschema
import pytest

from kv4lint.base.file_error import FileError
from kv4lint.base.model import Edit, Finding, Fix, Position, Severity, Span
from kv4lint.base.source import LineIndex
from kv4lint.cli import main
from kv4lint.cli.progress import Progress
from kv4lint.reporters import RunResult, render
from kv4lint.reporters.github import escape_data, escape_property
from kv4lint.rules.codes import RULES

SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

SCRIPT = (
    "#!/bin/bash\n"
    "# serve — the café's model\n"
    "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 \\\n"
    "    --attention-backend flashinfer\n"
)


def finding_at(path: str, text: str, needle: str, code: str, *, occurrence: int = 0, end_needle: str | None = None,
               fix_text: str | None = None, severity=Severity.ERROR, applicability="safe",
               message: str = "msg") -> Finding:
    idx = LineIndex(text)
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(needle, start + 1)
    end = start + len(needle) if end_needle is None else text.index(end_needle, start) + len(end_needle)
    span = Span(start, end)
    fix = None
    if fix_text is not None:
        fix = Fix("set --kv-cache-dtype fp8_e4m3", {"kv_cache_dtype": "fp8_e4m3"},
                  edits=(Edit(span, fix_text),), applicability=applicability)
    return Finding(code, severity, message, path, span, idx.position(span.start), idx.position(span.end), fix)


@pytest.fixture
def run(tmp_path):
    """A realistic run: two files under the root, one outside, a multi-line finding, a warning, file errors."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    serve = root / "scripts" / "serve.sh"
    serve.write_text(SCRIPT, encoding="utf-8")
    other = root / "deploy dir" / "run, now.sh"
    other.parent.mkdir()
    other.write_text(SCRIPT, encoding="utf-8")
    outside = tmp_path / "elsewhere.sh"
    outside.write_text(SCRIPT, encoding="utf-8")
    f1 = finding_at(str(serve), SCRIPT, "fp4_mx_block16", "KV401", fix_text="fp8_e4m3",
                    message="--kv-cache-dtype fp4_mx_block16 is not supported with --attention-backend flashinfer")
    f2 = finding_at(str(serve), SCRIPT, "python -m", "KV403", end_needle="flashinfer", severity=Severity.WARNING,
                    message="prefill and decode backends differ: 100% untested,\nsee KV403")
    f3 = finding_at(str(other), SCRIPT, "fp4_mx_block16", "KV404", fix_text="fp8_e4m3", applicability="unsafe",
                    message="needs sm100: the target is h100")
    f4 = finding_at(str(outside), SCRIPT, "fp4_mx_block16", "KV402")
    return RunResult(findings=[f1, f2, f3, f4],
                     errors=[FileError(str(root / "broken.py"), "cannot parse: unexpected indent", 7),
                             FileError(str(root / "big.yaml"), "skipped: 12.0 MB is larger than the 10 MB limit")],
                     files_scanned=3, notices=["judged by SGLang 0.5.23 (pyproject.toml)"], root=str(root))


# ---------------------------------------------------------------------------
# SARIF


def sarif_of(result: RunResult) -> dict:
    return json.loads(render("sarif", result))


def test_sarif_validates_against_the_official_schema(run):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = sarif_of(run)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_sarif_schema_catches_a_broken_document(run):
    """The validation test can fail: a result without a message is rejected."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = sarif_of(run)
    del doc["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_sarif_empty_run_validates():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = sarif_of(RunResult(root=os.getcwd()))
    jsonschema.validate(doc, schema)
    assert doc["runs"][0]["results"] == []


def test_sarif_driver_and_rules(run, monkeypatch):
    from kv4lint import __version__
    from kv4lint.reporters import sarif

    monkeypatch.setattr(sarif, "project_urls", lambda: (None, None))  # no URL declared: none invented
    driver = sarif_of(run)["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and not any("helpUri" in r for r in driver["rules"])
    monkeypatch.setattr(sarif, "project_urls", lambda: ("https://example.org/kv4lint", "https://example.org/r/"))
    driver = sarif_of(run)["runs"][0]["tool"]["driver"]
    assert driver["name"] == "kv4lint" and driver["version"] == __version__
    assert driver["informationUri"] == "https://example.org/kv4lint"
    assert all(r["helpUri"] == f"https://example.org/r/{r['id']}.md" for r in driver["rules"])
    assert [r["id"] for r in driver["rules"]] == sorted(RULES)
    for r in driver["rules"]:
        rule = RULES[r["id"]]
        assert r["shortDescription"]["text"] == rule.summary
        assert r["fullDescription"]["text"] == rule.what
        assert r["defaultConfiguration"]["level"] == rule.severity.value
        assert "### Why SGLang refuses it" in r["help"]["markdown"] and rule.why.replace("`", "") in r["help"]["text"]


def test_sarif_results(run):
    sarif_run = sarif_of(run)["runs"][0]
    rules = sarif_run["tool"]["driver"]["rules"]
    res = sarif_run["results"]
    assert [r["ruleId"] for r in res] == ["KV401", "KV403", "KV404", "KV402"]
    for r in res:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    r1, r2, r3, r4 = res
    assert r1["level"] == "error" and r2["level"] == "warning"
    loc = r1["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "scripts/serve.sh", "uriBaseId": "%SRCROOT%"}
    # line 3, "fp4_mx_block16" starts at column 76; endColumn is the column after its last character
    assert loc["region"] == {"startLine": 3, "startColumn": 76, "endLine": 3, "endColumn": 90}
    assert r2["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3, "startColumn": 1, "endLine": 4, "endColumn": 35}
    assert r2["message"]["text"] == "prefill and decode backends differ: 100% untested,\nsee KV403"
    # percent-encoded, forward slashes
    assert r3["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy%20dir/run%2C%20now.sh"
    # outside the root: an absolute file URI, no base
    out = r4["locations"][0]["physicalLocation"]["artifactLocation"]
    assert out["uri"].startswith("file:///") and out["uri"].endswith("/elsewhere.sh") and "uriBaseId" not in out
    assert sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path(run.root).as_uri() + "/"
    assert sarif_run["columnKind"] == "unicodeCodePoints"


def test_sarif_fixes_apply_to_the_file(run):
    res = sarif_of(run)["runs"][0]["results"]
    fix = res[0]["fixes"][0]
    assert fix["description"]["text"] == "Set --kv-cache-dtype fp8_e4m3"
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "scripts/serve.sh", "uriBaseId": "%SRCROOT%"}
    text = (Path(run.root) / "scripts" / "serve.sh").read_text(encoding="utf-8")
    for rep in sorted(change["replacements"], key=lambda r: -r["deletedRegion"]["charOffset"]):
        off, n = rep["deletedRegion"]["charOffset"], rep["deletedRegion"]["charLength"]
        text = text[:off] + rep.get("insertedContent", {}).get("text", "") + text[off + n:]
    # offsets are character offsets: the non-ASCII "—" and "é" before the edit do not shift it
    assert text == SCRIPT.replace("fp4_mx_block16", "fp8_e4m3")
    assert "fixes" not in res[1] and "fixes" not in res[3]
    assert "unsafe" in res[2]["fixes"][0]["description"]["text"]
    assert res[2]["properties"]["fixApplicability"] == "unsafe"


def test_sarif_deletion_has_no_inserted_content(tmp_path):
    text = "python -m sglang.launch_server --kv-cache-dtype nvfp4 --prefill-kv-cache-dequant-dtype nvfp4\n"
    f = finding_at(str(tmp_path / "a.sh"), text, "nvfp4", "KV405")
    gone = text.index(" --prefill")
    f.fix = Fix("drop it", edits=(Edit(Span(gone, len(text) - 1), ""), Edit(f.span, "fp8_e4m3")))
    reps = sarif_of(RunResult([f], root=str(tmp_path)))["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0][
        "replacements"]
    assert reps[0] == {"deletedRegion": {"charOffset": f.span.start, "charLength": 5},
                       "insertedContent": {"text": "fp8_e4m3"}}
    assert reps[1] == {"deletedRegion": {"charOffset": gone, "charLength": len(text) - 1 - gone}}


def test_sarif_file_errors_are_notifications(run):
    inv = sarif_of(run)["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is True
    n = inv["toolExecutionNotifications"]
    assert n[0]["level"] == "error" and n[0]["message"]["text"] == "cannot parse: unexpected indent"
    assert n[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 7}}
    assert "region" not in n[1]["locations"][0]["physicalLocation"]
    assert n[2] == {"level": "note", "message": {"text": "judged by SGLang 0.5.23 (pyproject.toml)"}}


def test_sarif_paths_are_relative_to_the_repository_top(tmp_path, monkeypatch):
    """A kv4lint.toml in a sub-project makes that the run's root; GitHub still needs repo-relative paths."""
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "services" / "chat"
    sub.mkdir(parents=True)
    f = Finding("KV401", Severity.ERROR, "m", str(sub / "serve.sh"), None, Position(1, 1), Position(1, 5))
    result = RunResult([f], root=str(sub))
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    run = sarif_of(result)["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "services/chat/serve.sh"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    assert render("github", result).startswith("::error file=services/chat/serve.sh,")


def test_sarif_unknown_code_gets_a_rule(tmp_path):
    f = Finding("KV400", Severity.ERROR, "internal error", str(tmp_path / "x.py"), None, Position(1, 1),
                Position(1, 1))
    driver = sarif_of(RunResult([f], root=str(tmp_path)))["runs"][0]["tool"]["driver"]
    res = sarif_of(RunResult([f], root=str(tmp_path)))["runs"][0]["results"][0]
    assert driver["rules"][res["ruleIndex"]]["id"] == "KV400"


# ---------------------------------------------------------------------------
# github


def test_github_lines(run, monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    lines = render("github", run).splitlines()
    assert lines == [
        "::error file=scripts/serve.sh,line=3,col=76,endLine=3,endColumn=90,title=KV401::"
        "--kv-cache-dtype fp4_mx_block16 is not supported with --attention-backend flashinfer",
        # a multi-line span: no col/endColumn
        "::warning file=scripts/serve.sh,line=3,endLine=4,title=KV403::"
        "prefill and decode backends differ: 100%25 untested,%0Asee KV403",
        # ',' in a property is escaped; ':' in the message is not
        "::error file=deploy dir/run%2C now.sh,line=3,col=76,endLine=3,endColumn=90,title=KV404::"
        "needs sm100: the target is h100",
        # outside the root: the path as it is (escaped)
        f"::error file={escape_property(str(Path(run.root).parent / 'elsewhere.sh'))},line=3,col=76,endLine=3,"
        "endColumn=90,title=KV402::msg",
        "::error file=broken.py,line=7,title=kv4lint::cannot parse: unexpected indent",
        "::error file=big.yaml,title=kv4lint::skipped: 12.0 MB is larger than the 10 MB limit",
        "::notice title=kv4lint::judged by SGLang 0.5.23 (pyproject.toml)",
    ]


def test_github_paths_relative_to_the_workspace(run, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(Path(run.root) / "scripts"))
    first = render("github", run).splitlines()[0]
    assert first.startswith("::error file=serve.sh,line=3,")


def test_github_escapes(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    f = Finding("KV401", Severity.ERROR, "x", str(tmp_path / "a,b:c.sh"), None, Position(2, 3), Position(2, 9))
    assert render("github", RunResult([f], root=str(tmp_path))) == (
        "::error file=a%2Cb%3Ac.sh,line=2,col=3,endLine=2,endColumn=9,title=KV401::x\n")


def test_github_nothing_found_prints_nothing():
    assert render("github", RunResult()) == ""


# ---------------------------------------------------------------------------
# json


def test_json_shape(run):
    doc = json.loads(render("json", run))
    assert set(doc) == {"findings", "errors", "files_scanned"}
    assert doc["files_scanned"] == 3
    f = doc["findings"][0]
    assert set(f) == {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "fix"}
    assert (f["line"], f["column"], f["end_line"], f["end_column"], f["code"], f["severity"]) == (
        3, 76, 3, 90, "KV401", "error")
    start = SCRIPT.index("fp4_mx_block16")
    assert f["fix"]["applicability"] == "safe"
    assert f["fix"]["edits"] == [{"start": start, "end": start + 14, "text": "fp8_e4m3"}]
    assert doc["findings"][1]["fix"] is None
    assert doc["findings"][2]["fix"]["applicability"] == "unsafe"
    assert doc["errors"][0] == {"path": run.errors[0].path, "message": "cannot parse: unexpected indent", "line": 7}
    assert doc["errors"][1] == {"path": run.errors[1].path, "message": run.errors[1].message}


# ---------------------------------------------------------------------------
# text and concise


def test_text(run):
    out = render("text", run).splitlines()
    serve = run.findings[0].path
    assert out[0] == (f"{serve}:3:76: KV401 (error) [*] --kv-cache-dtype fp4_mx_block16 is not supported with "
                      "--attention-backend flashinfer")
    assert out[1].endswith(": KV403 (warning) prefill and decode backends differ: 100% untested, see KV403")
    assert out[2].endswith(": KV404 (error) needs sm100: the target is h100")  # an unsafe fix is not marked [*]
    assert out[4] == f"{run.errors[0].path}:7: error: cannot parse: unexpected indent"
    assert out[-3] == "note: judged by SGLang 0.5.23 (pyproject.toml)"
    assert out[-2] == ("Found 4 findings (3 errors, 1 warning) in 3 files (1 fixable with `kv4lint fix`); "
                       "2 file errors "
                       "(not fully checked).")
    # KV404's fix is unsafe: one line says it exists and how to apply it
    assert out[-1] == ("1 more fix is available but unsafe (see each finding): review with "
                       "`kv4lint fix --diff --unsafe-fixes`, apply with `kv4lint fix --unsafe-fixes`.")
    run.unsafe_fixes_applied = True
    assert render("text", run).splitlines()[-1].startswith("Found 4 findings")
    assert "\033[" not in render("text", run)
    assert "\033[31mKV401\033[0m" in render("text", run, color=True)


def test_quiet(run):
    """-q: the findings and the files not checked, nothing else; -qq: nothing."""
    out = render("text", run, quiet=1).splitlines()
    assert len(out) == len(run.findings) + len(run.errors)
    assert not any(ln.startswith(("note:", "Found", "1 more fix")) for ln in out)
    assert render("text", run, quiet=2) == ""
    assert render("text", run, quiet=1, statistics=True).splitlines()[-1].startswith("1  KV404")


def test_concise(run):
    out = render("concise", run).splitlines()
    assert out[0] == f"{run.findings[0].path}:3:76: KV401 --kv-cache-dtype fp4_mx_block16 is not supported with " \
                     "--attention-backend flashinfer"
    assert not any(line.startswith("Found") for line in out)


def test_statistics(run):
    out = render("text", run, statistics=True).splitlines()
    stats = out[out.index("note: judged by SGLang 0.5.23 (pyproject.toml)") + 1:]
    assert not any(ln.startswith(run.findings[0].path + ":") for ln in out)  # counts only: no finding ...
    assert not any(ln.startswith("Found") for ln in out)  # ... and no summary
    assert stats == [
        f"1  KV401  [*] {RULES['KV401'].summary}",
        f"1  KV402      {RULES['KV402'].summary}",
        f"1  KV403      {RULES['KV403'].summary}",
        f"1  KV404      {RULES['KV404'].summary}",
    ]
    assert "KV401  [*]" not in render("text", run)


# ---------------------------------------------------------------------------
# The CLI end to end (shell frontend): formats, --output-file, --statistics, --exit-zero


SERVE = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 "
         "--attention-backend flashinfer\n")


@pytest.fixture
def cli_repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "serve.sh").write_text(SERVE)
    (tmp_path / "kv4lint.toml").write_text('sglang-version = "0.5.23"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return tmp_path


def test_cli_sarif_output_file(cli_repo, capsys):
    from kv4lint.cli import main

    assert main(["check", "--format", "sarif", "--output-file", "out.sarif", "-j", "1", "scripts"]) == 1
    assert capsys.readouterr().out == ""
    doc = json.loads((cli_repo / "out.sarif").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (res,) = doc["runs"][0]["results"]
    assert res["ruleId"] == "KV401"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "scripts/serve.sh", "uriBaseId": "%SRCROOT%"}
    assert res["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "fp8_e4m3"


def test_cli_github_and_exit_zero(cli_repo, capsys):
    from kv4lint.cli import main

    assert main(["check", "--format", "github", "--exit-zero", "-j", "1", "scripts"]) == 0
    out = capsys.readouterr().out.splitlines()
    col = SERVE.index("fp4_mx_block16") + 1
    assert out == [f"::error file=scripts/serve.sh,line=1,col={col},endLine=1,endColumn={col + 14},title=KV401::"
                   + out[0].split("title=KV401::", 1)[1]]
    assert "fp4_mx_block16" in out[0]


def test_cli_statistics(cli_repo, capsys):
    from kv4lint.cli import main

    assert main(["check", "--statistics", "-j", "1", "scripts"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert f"1  KV401  [*] {RULES['KV401'].summary}" in out


def test_cli_config_error_is_exit_2(cli_repo, capsys):
    from kv4lint.cli import main

    (cli_repo / "kv4lint.toml").write_text('sglang-version = "0.5.23"\nfix-dtype = "nvfp4"\n')
    assert main(["check", "scripts"]) == 2
    assert "kv4lint.toml: fix-dtype: 'nvfp4' is not a KV cache dtype" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


class _Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_progress_waits_then_draws_and_erases(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream, clock = _Tty(), _Clock()
    with Progress(200, stream, clock=clock, delay=2.0, interval=0.1) as p:
        assert p.enabled
        p.advance()
        assert stream.getvalue() == ""  # a short run prints nothing
        clock.t += 2.5
        p.advance()
        assert stream.getvalue() == "\rkv4lint: 2/200 files (1%)"
        p.advance()  # within the redraw interval: nothing new
        assert stream.getvalue() == "\rkv4lint: 2/200 files (1%)"
        clock.t += 0.2
        p.advance(196)
        assert stream.getvalue().endswith("\rkv4lint: 199/200 files (99%)")
        p.advance()  # the last one is always drawn
        assert stream.getvalue().endswith("\rkv4lint: 200/200 files (100%)")
    assert stream.getvalue().endswith("\r" + " " * len("kv4lint: 200/200 files (100%)") + "\r")


def test_progress_off_when_not_a_terminal_or_in_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream, clock = io.StringIO(), _Clock()
    p = Progress(10, stream, clock=clock)
    clock.t += 10
    p.advance()
    p.close()
    assert not p.enabled and stream.getvalue() == ""
    monkeypatch.setenv("CI", "true")
    assert not Progress(10, _Tty()).enabled
    monkeypatch.delenv("CI")
    assert Progress(10, _Tty()).enabled
    monkeypatch.setenv("NO_PROGRESS", "1")
    assert not Progress(10, _Tty()).enabled


# ---------------------------------------------------------------------------
# gitlab (Code Quality): the fields GitLab reads, as its documentation lists them

GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object", "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "not": {"pattern": "^/"}},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1},
                                             "end": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def gitlab_of(result: RunResult) -> list:
    doc = json.loads(render("gitlab", result))
    jsonschema.validate(doc, GITLAB_SCHEMA)
    return doc


def test_gitlab_issues(run, monkeypatch):
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    run.findings = run.findings[:3]  # the three under the repository (GitLab shows repository paths only)
    doc = gitlab_of(run)
    assert [(i["check_name"], i["severity"], i["location"]) for i in doc] == [
        ("KV401", "major", {"path": "scripts/serve.sh", "lines": {"begin": 3, "end": 3}}),
        ("KV403", "minor", {"path": "scripts/serve.sh", "lines": {"begin": 3, "end": 4}}),
        ("KV404", "major", {"path": "deploy dir/run, now.sh", "lines": {"begin": 3, "end": 3}}),
        ("kv4lint", "critical", {"path": "broken.py", "lines": {"begin": 7}}),
        ("kv4lint", "critical", {"path": "big.yaml", "lines": {"begin": 1}}),
    ]
    assert doc[0]["description"] == ("KV401 --kv-cache-dtype fp4_mx_block16 is not supported with "
                                     "--attention-backend flashinfer")
    assert doc[3]["description"] == "kv4lint could not check this file: cannot parse: unexpected indent"
    assert len({i["fingerprint"] for i in doc}) == len(doc)


def test_gitlab_paths_relative_to_the_project_dir(run, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(Path(run.root) / "scripts"))
    assert gitlab_of(RunResult(run.findings[:1], root=run.root))[0]["location"]["path"] == "serve.sh"


def test_gitlab_nothing_found_is_an_empty_array():
    assert render("gitlab", RunResult()) == "[]\n"


def test_cli_gitlab_fingerprints_survive_moved_lines(cli_repo, capsys):
    """The CLI writes a valid report; a finding keeps its fingerprint when lines above it move."""
    from kv4lint.cli import main

    assert main(["check", "--format", "gitlab", "--output-file", "gl.json", "-j", "1", "--no-cache", "scripts"]) == 1
    before = json.loads((cli_repo / "gl.json").read_text())
    jsonschema.validate(before, GITLAB_SCHEMA)
    assert [(i["check_name"], i["location"]) for i in before] == [
        ("KV401", {"path": "scripts/serve.sh", "lines": {"begin": 1, "end": 1}})]
    (cli_repo / "scripts" / "serve.sh").write_text("#!/bin/bash\n# moved\n" + SERVE)
    assert main(["check", "--format", "gitlab", "--output-file", "gl.json", "-j", "1", "--no-cache", "scripts"]) == 1
    after = json.loads((cli_repo / "gl.json").read_text())
    assert after[0]["location"]["lines"]["begin"] == 3
    assert after[0]["fingerprint"] == before[0]["fingerprint"]


# ---------------------------------------------------------------------------
# Names that are not UTF-8 (issue 34, item 7)


def test_every_format_is_valid_for_a_name_that_is_not_utf8(tmp_path):
    """A file system keeps any bytes in a name; Python gives the ones that are not UTF-8 as lone surrogates
    (os.fsdecode). Every format stays valid UTF-8 (JSON that parses, SARIF that validates): the text formats
    and JSON strings write such a byte as ``\\xNN``, a SARIF URI percent-encodes it."""
    root = tmp_path / "repo"
    root.mkdir()
    odd = os.path.join(str(root), os.fsdecode(b"d\xe9"), os.fsdecode(b"\xff\xfe.sh"))
    f = finding_at(odd, SCRIPT, "fp4_mx_block16", "KV401", fix_text="fp8_e4m3",
                   message=f"named {os.path.basename(odd)}")
    run = RunResult(findings=[f], errors=[FileError(odd, "cannot parse: unexpected indent", 7)], files_scanned=1,
                    root=str(root))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    for fmt in ("text", "concise", "full", "json", "sarif", "github", "gitlab", "statistics"):
        out = render("text" if fmt == "statistics" else fmt, run, statistics=fmt == "statistics")
        out.encode("utf-8")  # strict: no lone surrogate reaches the output
        if fmt in ("text", "concise", "full", "github", "statistics"):
            assert "d\\xe9/\\xff\\xfe.sh" in out, (fmt, out)
        else:
            doc = json.loads(out)
            if fmt in ("json", "gitlab"):
                assert "d\\xe9/\\xff\\xfe.sh" in out.replace("\\\\", "\\"), (fmt, out)
            if fmt == "json":
                assert doc["findings"][0]["path"].endswith("d\\xe9/\\xff\\xfe.sh")
                assert doc["findings"][0]["message"] == "named \\xff\\xfe.sh"
            if fmt == "sarif":
                jsonschema.Draft7Validator(schema).validate(doc)
                loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
                assert loc["uri"] == "d%E9/%FF%FE.sh"


@pytest.mark.parametrize("fails", [False, True])
def test_the_report_is_rendered_with_the_collector_paused_and_restores_it(tmp_path, monkeypatch, fails):
    """The report's records (a dict per finding, by the thousand) free nothing until it is written: the cyclic
    collector is paused while it is rendered (else it walks the run's results again, a twentieth of a 2 MB
    script's run), and runs again after, whether the rendering ends or fails."""
    import gc

    from kv4lint.cli import check as cli_check

    seen = []
    real = cli_check.render

    def render(*args, **kwargs):
        seen.append(gc.isenabled())
        if fails:
            raise RuntimeError("render failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(cli_check, "render", render)
    (tmp_path / "serve.sh").write_text(SCRIPT, encoding="utf-8")
    assert gc.isenabled()
    rc = main(["check", "--isolated", "--no-cache", "--format", "json", "--output-file",
               str(tmp_path / "out.json"), str(tmp_path)])
    assert seen == [False] and gc.isenabled()
    assert rc == (2 if fails else 1)
