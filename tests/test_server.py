"""``kv4lint server``: the language server, end to end through a real LSP client (pytest-lsp) over stdio, and
its parts (a buffer's judgement, positions in UTF-16, code actions, hovers) on their own.

The end-to-end tests start ``python -m kv4lint server`` as an editor would, open buffers whose text is not on
disk, and read what the server publishes or answers: the findings ``kv4lint check`` reports for the same text,
in every format, with the nearest ``[tool.kv4lint]`` applied.  Where a test shows the server is not blocked
(responsiveness, debounce, stale checks dropped) it does so by the order of what arrives, never by seconds:
a large buffer's check takes seconds, a request on another buffer is answered before its diagnostics come.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402

from kv4lint.cli.server.answers import FIX_ALL, TITLE, code_actions, diagnostics, hover  # noqa: E402
from kv4lint.cli.server.buffer import fix_all, judge_buffer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAD = "#!/bin/bash\npython -m sglang.launch_server --model-path M \\\n  --kv-cache-dtype fp4_e2m1 \\\n  --port 30000\n"
GOOD = BAD.replace("fp4_e2m1", "fp8_e4m3")
CONFIG = '[tool.kv4lint]\nsglang-version = "0.5.23"\ngpu = "b200"\n'
# KV401 on b200: its squiggle is on the backend (triton), its fix edits the dtype (nvfp4)
BACKEND = ("#!/bin/bash\npython -m sglang.launch_server --model-path M --kv-cache-dtype nvfp4 "
           "--attention-backend triton\n")
# With no GPU stated: warnings only (refused on some GPUs), whose fixes fix-all never applies
WARNINGS = "#!/bin/bash\npython -m sglang.launch_server --model-path M --kv-cache-dtype nvfp4\n"
NO_GPU = '[tool.kv4lint]\nsglang-version = "0.5.23"\n'


def _cli(path: Path, text: str) -> list[str]:
    """What `kv4lint check --stdin-filename PATH -` reports for ``text``: `line:col: CODE` per finding."""
    r = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--format", "json", "--no-cache",
                        "--stdin-filename", str(path), "-"], input=text, capture_output=True, text=True,
                       cwd=next(p for p in path.parents if p.is_dir()), timeout=120)
    assert r.returncode in (0, 1), r.stderr
    return [f"{f['line']}:{f['column']}: {f['code']}" for f in json.loads(r.stdout)["findings"]]


def _as_cli(diags) -> list[str]:
    return [f"{d.range.start.line + 1}:{d.range.start.character + 1}: {d.code}" for d in diags if d.code]


def _apply(text: str, edits) -> str:
    """``edits`` (LSP TextEdits, one file) applied to ``text`` (lines and UTF-16 columns; ASCII here)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a = starts[e.range.start.line] + e.range.start.character
        b = starts[e.range.end.line] + e.range.end.character
        text = text[:a] + e.new_text + text[b:]
    return text


def _at(line: int, character: int) -> tuple[tuple[int, int], tuple[int, int]]:
    return (line, character), (line, character)


def _no_other_file(path):
    return None


# ---------------------------------------------------------------------------
# The parts


def test_judge_buffer_is_check_on_the_unsaved_text(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    path.write_text(GOOD)  # on disk: nothing to report; the buffer holds the bad launch
    judged = judge_buffer(str(path), BAD)
    assert [f.code for f in judged.items] == ["KV406"]
    assert _as_cli(diagnostics(judged)) == _cli(path, BAD) == ["3:20: KV406"]
    assert "0.5.23" in judged.items[0].message  # the configuration's release


def test_judge_buffer_skips_what_check_skips(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG + 'extend-exclude = ["vendor"]\n')
    assert judge_buffer(str(tmp_path / "notes.txt"), BAD).items == []  # not a file kv4lint reads
    assert judge_buffer(str(tmp_path / "vendor" / "serve.sh"), BAD).items == []  # excluded
    assert [f.code for f in judge_buffer(str(tmp_path / "job"), BAD).items] == ["KV406"]  # its shebang


def test_positions_are_utf16(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    # U+1F680 before the value: 1 code point (kv4lint's columns), 2 UTF-16 units (LSP's)
    text = ("#!/bin/bash\npython -m sglang.launch_server --model-path M --served-model-name 🚀 "
            "--kv-cache-dtype fp4_e2m1\n")
    (d,) = diagnostics(judge_buffer(str(tmp_path / "serve.sh"), text))
    line = text.splitlines()[d.range.start.line]
    before = line[: line.index("fp4_e2m1")]
    assert "🚀" in before
    assert d.range.start.character == len(before.encode("utf-16-le")) // 2 == len(before) + 1
    assert d.range.end.character - d.range.start.character == len("fp4_e2m1")


def test_a_buffer_past_the_size_limit_is_one_error_naming_it(tmp_path):
    """The CLI's bound holds for buffers: past ``max-file-size`` nothing is parsed (issue 34 item 5: a 20 MB
    buffer took two minutes and 4.9 GB); the buffer gets one error naming the limit."""
    (tmp_path / "pyproject.toml").write_text(CONFIG + 'max-file-size = "1KB"\n')
    text = BAD + "# " + "x" * 2000 + "\n"
    judged = judge_buffer(str(tmp_path / "serve.sh"), text)
    (d,) = diagnostics(judged)
    assert judged.items == [] and d.severity == types.DiagnosticSeverity.Error
    size = len(text.encode())
    assert d.message == (f"kv4lint could not check this file: not checked: {size} bytes is larger than the "
                         "1000 bytes limit (max-file-size)")
    assert fix_all(str(tmp_path / "serve.sh"), text) is None  # nothing of it is rewritten either
    (tmp_path / "pyproject.toml").write_text(CONFIG)  # within the default limit: judged
    assert [f.code for f in judge_buffer(str(tmp_path / "serve.sh"), text).items] == ["KV406"]


def test_code_actions_safe_preferred_unsafe_labelled(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    uri = (tmp_path / "serve.sh").as_uri()
    judged = judge_buffer(str(tmp_path / "serve.sh"), BAD)
    fix, disable = code_actions(judged, uri, (0, 0), (9, 0), _no_other_file)
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred is True
    assert fix.title == "KV406: set --kv-cache-dtype fp8_e4m3"
    (edit,) = fix.edit.changes[uri]
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (2, 19, "fp8_e4m3")
    assert disable.title == "Disable KV406 for this line" and not disable.is_preferred
    # A value also used elsewhere: the fix is unsafe, offered labelled, never preferred.
    shared = "#!/bin/bash\nDT=fp4_e2m1\necho $DT\npython -m sglang.launch_server --model-path M --kv-cache-dtype $DT\n"
    acts = code_actions(judge_buffer(str(tmp_path / "serve.sh"), shared), uri, (0, 0), (9, 0), _no_other_file)
    fixes = [a for a in acts if not a.title.startswith("Disable")]
    assert fixes and all(a.is_preferred is False and a.title.startswith("KV406 (unsafe): ") for a in fixes)
    # a range that meets no finding: no action
    assert code_actions(judged, uri, (0, 0), (0, 5), _no_other_file) == []


def test_a_warnings_fix_is_never_preferred(tmp_path):
    """A warning is refused on some targets only: its fix would remove a choice that works elsewhere."""
    (tmp_path / "pyproject.toml").write_text(NO_GPU)
    judged = judge_buffer(str(tmp_path / "serve.sh"), WARNINGS)
    assert judged.items and {f.severity for f in judged.items} == {"warning"}
    fixes = [a for a in code_actions(judged, "file:///x", (0, 0), (9, 0), _no_other_file)
             if not a.title.startswith("Disable")]
    assert fixes and not any(a.is_preferred for a in fixes) and all("(unsafe)" in a.title for a in fixes)


def test_action_titles_are_short():
    """An unsafe fix's description quotes SGLang's ValueError (200 characters): the title keeps the fix's
    first words; the rest is in the hover."""
    path = ROOT / "fixtures" / "python" / "test_server_args_kv4.py"
    judged = judge_buffer(str(path), path.read_text())
    long = [f for f in judged.items if f.fix and len(f.fix) > 150]
    assert long, "the fixture no longer has a fix with a long description"
    titles = [a.title for a in code_actions(judged, path.as_uri(), (0, 0), (999, 0), _no_other_file)]
    assert titles and max(len(t) for t in titles) <= TITLE
    assert "KV401 (unsafe): set --kv-cache-dtype fp8_e4m3" in titles
    h = hover(judged, long[0].range[0], long[0].range[1])
    assert "TRTLLM MLA backend is only supported on Blackwell" in h.contents.value  # the whole reason, there


def test_a_long_fix_title_is_cut_at_a_word(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG.replace("b200", "h100"))
    text = ("#!/bin/bash\npython -m sglang.launch_server --model-path M --kv-cache-dtype nvfp4 "
            "--prefill-kv-cache-dequant-dtype fp8_e4m3\n")
    judged = judge_buffer(str(tmp_path / "serve.sh"), text)
    (item,) = judged.items
    assert item.fix == "set --kv-cache-dtype fp8_e4m3 and remove --prefill-kv-cache-dequant-dtype"
    fix, _ = code_actions(judged, "file:///x", (0, 0), (9, 0), _no_other_file)
    assert fix.title == "KV404: set --kv-cache-dtype fp8_e4m3 and remove…" and len(fix.title) <= TITLE


def test_the_fix_is_offered_on_the_refused_values_and_between(tmp_path):
    """KV401's squiggle is on the backend; its fix changes the dtype: the action is at either and between."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    uri = (tmp_path / "serve.sh").as_uri()
    judged = judge_buffer(str(tmp_path / "serve.sh"), BACKEND)
    (d,) = diagnostics(judged)
    line = BACKEND.splitlines()[1]
    assert d.code == "KV401" and d.range.start.character == line.index("triton")
    for col in (line.index("nvfp4") + 2, line.index("--attention-backend"), line.index("triton") + 1):
        (fix, _) = code_actions(judged, uri, *_at(1, col), _no_other_file)
        assert fix.is_preferred and fix.edit.changes[uri][0].new_text == "fp8_e4m3", col
    assert code_actions(judged, uri, *_at(1, line.index("--model-path")), _no_other_file) == []


@pytest.mark.parametrize("name,text,comment", [
    ("serve.sh", BAD, "# kv4lint: disable=KV406\n"),
    ("launch.py", 'import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m", '
                  '"--kv-cache-dtype", "fp4_e2m1"])\n', "  # noqa: KV406"),
    ("compose.yaml", "services:\n  s:\n    command: python3 -m sglang.launch_server --model-path M "
                     "--kv-cache-dtype fp4_e2m1\n", "    # kv4lint: disable=KV406\n"),
    (".vscode/launch.json", '{"configurations": [{"module": "sglang.launch_server", "args": ["--model-path", "m", '
                            '"--kv-cache-dtype", "fp4_e2m1"]}]}\n', "  // kv4lint: disable=KV406"),
])
def test_disable_for_this_line_writes_the_formats_comment(tmp_path, name, text, comment):
    """The comment each format takes (kv4lint.fixes.add_suppressions, the one writer): applied, the finding is gone."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    uri = path.as_uri()
    judged = judge_buffer(str(path), text)
    assert len(judged.items) == 1
    (disable,) = [a for a in code_actions(judged, uri, (0, 0), (99, 0), _no_other_file)
                  if a.title.startswith("Disable")]
    (edit,) = disable.edit.changes[uri]
    assert edit.new_text == comment
    assert judge_buffer(str(path), _apply(text, [edit])).items == []


def test_strict_json_gets_no_disable_action(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "task.json"
    text = '{"command": ["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp4_e2m1"]}\n'
    judged = judge_buffer(str(path), text)
    assert judged.items
    assert not [a for a in code_actions(judged, path.as_uri(), (0, 0), (9, 0), _no_other_file)
                if a.title.startswith("Disable")]  # its readers refuse comments: per-file-ignores instead


def test_fix_all_applies_safe_fixes_of_errors_only(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = str(tmp_path / "serve.sh")
    r, text = fix_all(path, BAD)
    assert (r, text) == ((2, 21, 2, 27), "8_e4m3")  # one edit, of the part that changed: fp[4_e2m1] -> fp[8_e4m3]
    (tmp_path / "pyproject.toml").write_text(NO_GPU)
    assert judge_buffer(path, WARNINGS).items  # warnings, whose fixes are marked safe by the rules ...
    assert fix_all(path, WARNINGS) is None  # ... and never applied by fix-all
    assert fix_all(path, GOOD) is None


def test_hover_explains_the_finding_and_its_rule(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    judged = judge_buffer(str(tmp_path / "serve.sh"), BAD)
    assert hover(judged, 2, 5) is None  # on the flag, not the value: nothing
    h = hover(judged, 2, 21)
    text = h.contents.value
    assert h.contents.kind == types.MarkupKind.Markdown
    assert (h.range.start.line, h.range.start.character) == (2, 19)
    f = judged.items[0]
    assert text.startswith(f"**KV406** (error): {f.message}")
    assert f.detail and f.detail in text  # this launch: SGLang's words, where the target came from
    assert "SGLang 0.5.23 (" in text and "GPU sm100" in text  # what it was judged for, and why
    assert "Fix (safe): set --kv-cache-dtype fp8_e4m3" in text
    assert "`kv4lint explain KV406`" in text


def test_codes_link_to_the_rule_pages_when_configured(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG + 'rule-docs-url = "https://example.org/kv4lint/rules"\n')
    judged = judge_buffer(str(tmp_path / "serve.sh"), BAD)
    (d,) = diagnostics(judged)
    assert d.code_description.href == "https://example.org/kv4lint/rules/KV406.md"
    assert "[rule page](https://example.org/kv4lint/rules/KV406.md)" in hover(judged, 2, 21).contents.value


# ---------------------------------------------------------------------------
# The scheduling of checks, with a checking process that answers when told to


class _Worker:
    """A checking process stand-in: each call waits until released, or until killed (then Stopped)."""

    def __init__(self):
        import threading

        self.calls: list[tuple[str, str]] = []  # (kind, text) of each job, as it started
        self.release = threading.Semaphore(0)
        self.killed = threading.Event()
        self.kills = 0

    def call(self, kind, path, text):
        from kv4lint.cli.server.buffer import Judged
        from kv4lint.cli.server.worker import Stopped

        self.calls.append((kind, text))
        while not self.release.acquire(timeout=0.01):
            if self.killed.is_set():
                self.killed.clear()
                raise Stopped("killed")
        return Judged(path)

    def kill(self):
        self.kills += 1
        self.killed.set()

    def close(self):
        self.kill()


class _Docs:
    def __init__(self):
        self.version, self.text, self.judged = 1, "v1", []

    def source(self, uri):
        return "/x/serve.sh", self.version, self.text

    def edit(self, checks, delay):
        self.version += 1
        self.text = f"v{self.version}"
        checks.touch("u", delay)


@pytest.mark.asyncio
async def test_checks_are_debounced():
    """Five edits closer together than the debounce: one check, of the last text."""
    from kv4lint.cli.server.schedule import Checks

    worker, docs = _Worker(), _Docs()
    checks = Checks(worker, docs.source, lambda uri, out: docs.judged.append(out.version))
    for _ in range(5):
        docs.edit(checks, 1.0)  # 1 s of debounce; the edits come 10 ms apart
        await asyncio.sleep(0.01)
    assert worker.calls == []
    worker.release.release()
    out = await checks.settled("u")  # a request waits for the current version: no debounce for it
    assert (out.version, worker.calls, docs.judged) == (6, [("check", "v6")], [6])
    checks.close()


@pytest.mark.asyncio
async def test_a_stale_check_is_dropped_and_a_long_one_stopped(monkeypatch):
    from kv4lint.cli.server import schedule

    worker, docs = _Worker(), _Docs()
    checks = schedule.Checks(worker, docs.source, lambda uri, out: docs.judged.append(out.version))
    checks.touch("u")
    await _until(lambda: worker.calls)  # the check of v1 runs ...
    docs.edit(checks, 0.0)  # ... and goes stale: short so far, so it is let run
    worker.release.release()
    await _until(lambda: len(worker.calls) == 2)
    assert docs.judged == [] and worker.kills == 0  # v1's outcome dropped, not published
    monkeypatch.setattr(schedule, "STALE_KILL", 0.0)  # a stale check that has run long: stopped at once
    docs.edit(checks, 0.0)
    await _until(lambda: len(worker.calls) == 3)
    assert worker.kills == 1 and checks.stopped == 1 and docs.judged == []
    worker.release.release()
    assert (await checks.settled("u")).version == 3 and docs.judged == [3]
    assert [text for _, text in worker.calls] == ["v1", "v2", "v3"]
    checks.close()


# ---------------------------------------------------------------------------
# End to end: a real LSP client over stdio


def _client_factory() -> LanguageClient:
    """pytest-lsp's client, keeping every publishDiagnostics (``client.published``), not only the last."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "kv4lint", "server"],
                            server_env={**os.environ, "KV4LINT_NO_CACHE": "1"}, client_factory=_client_factory)
PULL = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
    workspace=types.WorkspaceClientCapabilities(diagnostics=types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True)))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def puller(lsp_client: LanguageClient):
    """A client that pulls diagnostics (textDocument/diagnostic), as current VS Code and Neovim do."""
    await lsp_client.initialize_session(types.InitializeParams(capabilities=PULL))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def ending(lsp_client: LanguageClient):
    """A client whose test ends the session itself."""
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield


async def _until(condition, timeout: float = 120.0) -> None:
    """Wait for the notifications that make ``condition`` true (several may arrive in one read)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        assert loop.time() < end, "the server did not publish it"
        await asyncio.sleep(0.05)


def _send_open(client: LanguageClient, path: Path, text: str, language: str = "shellscript", version: int = 1):
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=path.as_uri(), language_id=language, version=version, text=text)))


async def _open(client: LanguageClient, path: Path, text: str, language: str = "shellscript") -> list:
    uri = path.as_uri()
    n = len(client.published)
    _send_open(client, path, text, language)
    await _until(lambda: any(p.uri == uri for p in client.published[n:]))
    return list(client.diagnostics[uri])


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


async def _actions(client: LanguageClient, uri: str, start: tuple[int, int], end: tuple[int, int] | None = None,
                   only: list[str] | None = None) -> list:
    end = end or start
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(types.Position(*start), types.Position(*end)),
        context=types.CodeActionContext([], only=only))) or []


def _big(n: int = 2500) -> str:
    """A script whose check takes seconds: many launches, each with a finding."""
    return "#!/bin/bash\n" + "".join(f"python -m sglang.launch_server --model-path m{i} --kv-cache-dtype fp4_e2m1 "
                                     f"--port {i}\n" for i in range(n))


@pytest.mark.asyncio
async def test_server_diagnostics_fixes_and_changes(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    uri = path.as_uri()
    diags = await _open(client, path, BAD)  # never saved: the server reads the buffer
    assert _as_cli(diags) == _cli(path, BAD) == ["3:20: KV406"]
    (d,) = diags
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "kv4lint" and "0.5.23" in d.message

    fix, _disable = await _actions(client, uri, (d.range.start.line, d.range.start.character))
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    (edit,) = fix.edit.changes[uri]
    assert edit.new_text == "fp8_e4m3"

    # the user applies it: the change clears the diagnostic
    _change(client, uri, 2, GOOD)
    await _until(lambda: client.published[-1].version == 2)
    assert list(client.diagnostics[uri]) == []

    # the bad text again, then the configuration is edited and saved in the editor: serve.sh is judged again
    _change(client, uri, 3, BAD)
    await _until(lambda: client.published[-1].version == 3)
    assert _as_cli(client.diagnostics[uri]) == ["3:20: KV406"]
    config = tmp_path / "pyproject.toml"
    await _open(client, config, CONFIG, "toml")
    config.write_text(CONFIG + 'ignore = ["KV406"]\n')
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(config.as_uri())))
    await _until(lambda: list(client.diagnostics[uri]) == [])


@pytest.mark.asyncio
async def test_the_action_at_the_dtype_token_and_suppress(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    uri = path.as_uri()
    (d,) = await _open(client, path, BACKEND)
    line = BACKEND.splitlines()[1]
    assert d.code == "KV401" and d.range.start.character == line.index("triton")
    fix, disable = await _actions(client, uri, (1, line.index("nvfp4") + 1))  # the cursor on the dtype
    assert fix.title == "KV401: set --kv-cache-dtype fp8_e4m3" and fix.is_preferred
    assert _apply(BACKEND, fix.edit.changes[uri]) == BACKEND.replace("nvfp4", "fp8_e4m3")
    assert disable.title == "Disable KV401 for this line"
    suppressed = _apply(BACKEND, disable.edit.changes[uri])
    assert suppressed.splitlines()[1] == "# kv4lint: disable=KV401"
    _change(client, uri, 2, suppressed)
    await _until(lambda: client.published[-1].version == 2)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_fix_all(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    uri = path.as_uri()
    await _open(client, path, BAD + BACKEND.split("\n", 1)[1])
    (action,) = await _actions(client, uri, (0, 0), only=[types.CodeActionKind.SourceFixAll])
    assert action.kind == FIX_ALL == "source.fixAll.kv4lint"
    fixed = _apply(BAD + BACKEND.split("\n", 1)[1], action.edit.changes[uri])
    assert fixed == (BAD + BACKEND.split("\n", 1)[1]).replace("fp4_e2m1", "fp8_e4m3").replace("nvfp4", "fp8_e4m3")
    # a buffer whose only findings are warnings: fix-all leaves it unchanged (no action)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "pyproject.toml").write_text(NO_GPU)
    warn = tmp_path / "conf" / "serve.sh"
    diags = await _open(client, warn, WARNINGS)
    assert diags and all(d.severity == types.DiagnosticSeverity.Warning for d in diags)
    assert await _actions(client, warn.as_uri(), (0, 0), only=[FIX_ALL]) == []
    # quick fixes only: no fix-all among them
    assert all(a.kind == types.CodeActionKind.QuickFix
               for a in await _actions(client, uri, (0, 0), (9, 0), only=[types.CodeActionKind.QuickFix]))


@pytest.mark.asyncio
async def test_hover(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    await _open(client, path, BAD)
    h = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(path.as_uri()), types.Position(2, 22)))
    assert h.contents.value.startswith("**KV406** (error): ") and "kv4lint explain KV406" in h.contents.value
    assert await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(path.as_uri()), types.Position(0, 0))) is None


@pytest.mark.asyncio
async def test_pull_diagnostics(puller: LanguageClient, tmp_path):
    """A client that pulls gets the findings from textDocument/diagnostic, and none pushed (never twice)."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    uri = path.as_uri()
    _send_open(puller, path, BAD)

    async def pull(previous: str | None = None):
        return await puller.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri), previous_result_id=previous))

    report = await pull()  # waits for the buffer's check
    assert report.kind == "full" and _as_cli(report.items) == ["3:20: KV406"]
    assert (await pull(report.result_id)).kind == "unchanged"
    _change(puller, uri, 2, GOOD)
    report = await pull(report.result_id)
    assert report.kind == "full" and list(report.items) == []
    assert puller.published == []  # nothing pushed to a client that pulls
    # a saved configuration: the client is asked to pull again
    config = tmp_path / "pyproject.toml"
    _send_open(puller, config, CONFIG, "toml")
    puller.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(config.as_uri())))
    await _until(lambda: puller.diagnostic_refresh_count >= 1)


@pytest.mark.asyncio
async def test_one_message_for_a_bad_configuration_and_the_diagnostics_stay(client: LanguageClient, tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text(CONFIG)
    await _open(client, config, CONFIG, "toml")  # the configuration is open in the editor too
    paths = [tmp_path / f"serve{i}.sh" for i in range(3)]
    for p in paths:
        assert _as_cli(await _open(client, p, BAD)) == ["3:20: KV406"]
    n = len(client.published)
    for _ in range(2):  # each save of a bad configuration: one message, whatever the number of buffers
        before = len(client.messages)
        config.write_text(CONFIG.replace("b200", "h1OO"))  # a GPU kv4lint does not know
        client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(config.as_uri())))
        for p in [config, *paths]:  # a request waits for the buffer's judgement: every buffer was judged again
            assert await _actions(client, p.as_uri(), (2, 21)) == []
        assert len(client.messages) == before + 1, client.messages
        (m,) = client.messages[before:]
        assert m.type == types.MessageType.Error and "gpu: unknown GPU 'h1OO'" in m.message
    assert client.published[n:] == []  # nothing cleared: the last good diagnostics stay
    assert all(_as_cli(client.diagnostics[p.as_uri()]) == ["3:20: KV406"] for p in paths)


async def _raw(client: LanguageClient, method: str, params=..., msg_id: str = "raw"):
    """Send a request as raw JSON (``params``: left out when ``...``) and return its answer; an error answer
    raises the JsonRpcException it names."""
    from concurrent.futures import Future

    fut: Future = Future()
    client.protocol._request_futures[msg_id] = fut
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                **({} if params is ... else {"params": params})})
    return await asyncio.wait_for(asyncio.wrap_future(fut), 60)


@pytest.mark.asyncio
async def test_invalid_params_are_answered(client: LanguageClient):
    """JSON-RPC requires an answer to every request: null, missing or ill-shaped params get "invalid params"."""
    for i, (method, params) in enumerate([
            (types.TEXT_DOCUMENT_HOVER, None), (types.TEXT_DOCUMENT_HOVER, ...),
            (types.TEXT_DOCUMENT_CODE_ACTION, None), (types.TEXT_DOCUMENT_CODE_ACTION, {"textDocument": 3}),
            (types.TEXT_DOCUMENT_DIAGNOSTIC, {"textDocument": {}})]):
        with pytest.raises(JsonRpcInvalidParams, match=method):
            await _raw(client, method, params, f"bad-{i}")
    # the server goes on; a document never opened: an empty answer, not a read of the disk
    assert await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier("file:///nowhere/serve.sh"), types.Position(0, 0))) is None
    assert await _actions(client, "file:///nowhere/serve.sh", (0, 0)) == []


@pytest.mark.asyncio
async def test_a_buffer_past_the_size_limit_gets_one_diagnostic(client: LanguageClient, tmp_path):
    """20 MB, past the default 10 MB ``max-file-size``: one error naming the limit, nothing parsed."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    text = BAD * (20_000_000 // len(BAD) + 1)
    (d,) = await _open(client, tmp_path / "huge.sh", text)
    assert d.severity == types.DiagnosticSeverity.Error
    assert "20.0 MB is larger than the 10 MB limit (max-file-size)" in d.message


@pytest.mark.asyncio
async def test_requests_are_answered_while_a_big_buffer_is_checked(client: LanguageClient, tmp_path):
    """A large buffer is judged in the checking process: a hover and code actions on another buffer are answered
    before the large one's diagnostics arrive (its check takes seconds)."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    small = tmp_path / "serve.sh"
    await _open(client, small, BAD)
    big = tmp_path / "big.sh"
    _send_open(client, big, _big())
    h = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(small.as_uri()), types.Position(2, 22)))
    fixes = await _actions(client, small.as_uri(), (2, 22))
    assert h is not None and fixes
    assert big.as_uri() not in client.diagnostics  # answered while the big one is still being checked
    await _until(lambda: big.as_uri() in client.diagnostics)
    assert len(client.diagnostics[big.as_uri()]) == 2500


@pytest.mark.asyncio
async def test_changes_are_debounced_and_stale_checks_dropped(client: LanguageClient, tmp_path):
    """Five quick edits of a large buffer: diagnostics are published once, for the last version; the checks of
    the versions before it are dropped (the one in flight stopped)."""
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "big.sh"
    uri = path.as_uri()
    _send_open(client, path, _big())
    for version in range(2, 7):
        _change(client, uri, version, _big(2500 - version))
    await _until(lambda: any(p.uri == uri for p in client.published))
    await _actions(client, uri, (0, 0))  # waits for the current version's judgement: every check is done
    assert [p.version for p in client.published if p.uri == uri] == [6]
    assert len(client.diagnostics[uri]) == 2494


@pytest.mark.asyncio
async def test_shutdown_is_answered_while_a_big_buffer_is_checked(ending: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    big = tmp_path / "big.sh"
    _send_open(ending, big, _big())
    await ending.shutdown_async(None)
    assert big.as_uri() not in ending.diagnostics  # the check in flight was stopped, not waited for
    with pytest.raises(JsonRpcInvalidRequest):  # after shutdown, a request is refused, and answered
        await _raw(ending, types.TEXT_DOCUMENT_HOVER, {"textDocument": {"uri": big.as_uri()},
                                                       "position": {"line": 0, "character": 0}})
    ending.exit(None)
    assert await ending._server.wait() == 0


@pytest.mark.slow  # about 8 s: kv4lint check runs once per format to compare
@pytest.mark.asyncio
async def test_server_reads_every_format(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    fixtures = ROOT / "fixtures"
    cases = [
        (tmp_path / ".vscode" / "launch.json", (fixtures / "json" / "vscode_launch.json").read_text(), "jsonc"),
        (tmp_path / "deploy" / "sglang.service", (fixtures / "services" / "sglang_service" / "sglang.service")
         .read_text(), "systemd"),
        (tmp_path / "compose.yaml", "services:\n  s:\n    command: python3 -m sglang.launch_server --model-path M "
                                    "--kv-cache-dtype fp4_e2m1\n", "yaml"),
        (tmp_path / "README.md", "# Serve\n\n```bash\n" + BAD.split("\n", 1)[1] + "```\n", "markdown"),
    ]
    for path, text, language in cases:
        diags = await _open(client, path, text, language)
        assert diags, path.name
        assert _as_cli(diags) == _cli(path, text), path.name
    # a file that cannot be parsed: one error diagnostic naming the problem, at its line
    broken = tmp_path / "broken.json"
    diags = await _open(client, broken, '{"module": "sglang.launch_server", "args": ["--kv-cache-dtype", \n', "json")
    (d,) = diags
    assert d.severity == types.DiagnosticSeverity.Error and "could not check" in d.message and d.code is None


def test_editor_setups_in_the_docs_parse():
    """docs/editors.md: the VS Code settings are JSON, the Helix configuration TOML naming `kv4lint server`; the
    set-ups use the fix-all kind the server offers."""
    import re
    import tomllib

    doc = (ROOT / "docs" / "editors.md").read_text()
    (vscode,) = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", doc, re.S)]
    assert (vscode["glspc.server.command"], vscode["glspc.server.commandArguments"]) == ("kv4lint", ["server"])
    assert vscode["editor.codeActionsOnSave"] == {FIX_ALL: "explicit"}
    assert f'only = {{ "{FIX_ALL}" }}' in doc  # Neovim's keymap
    assert "kv4lint[server]" not in doc and "pip install" not in doc  # nothing to install beside kv4lint
    (helix,) = [tomllib.loads(b) for b in re.findall(r"```toml\n(.*?)```", doc, re.S)]
    assert helix["language-server"]["kv4lint"] == {"command": "kv4lint", "args": ["server"]}
    assert all("kv4lint" in lang["language-servers"] for lang in helix["language"])
    assert doc.count('cmd = { "kv4lint", "server" }') == 2  # Neovim: vim.lsp.config and lspconfig


def test_without_pygls_the_server_names_no_install_command_that_cannot_work(monkeypatch, capsys):
    """pygls comes with kv4lint; an install without it exits 2 and says to install kv4lint again."""
    from kv4lint.cli import main

    monkeypatch.delitem(sys.modules, "kv4lint.cli.server.lsp", raising=False)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # import fails as when not installed
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    assert "pygls" in err and "install kv4lint again" in err and "pip install" not in err
