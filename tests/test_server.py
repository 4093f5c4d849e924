"""``kv4lint server``: the language server, end to end through a real LSP client (pytest-lsp) over stdio, and
its parts (the buffer's judgement, positions in UTF-16, code actions) on their own.

The end-to-end tests start ``python -m kv4lint server`` as an editor would, open buffers whose text is not on
disk, and read what the server publishes: the findings ``kv4lint check`` reports for the same text, in every
format (a shell script, a VS Code launch.json, a systemd unit), with the nearest ``[tool.kv4lint]`` applied.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from kv4lint.cli.server import code_actions, diagnostics, lint_buffer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAD = "#!/bin/bash\npython -m sglang.launch_server --model-path M \\\n  --kv-cache-dtype fp4_e2m1 \\\n  --port 30000\n"
GOOD = BAD.replace("fp4_e2m1", "fp8_e4m3")
CONFIG = '[tool.kv4lint]\nsglang-version = "0.5.23"\ngpu = "b200"\n'


def _cli(path: Path, text: str) -> list[str]:
    """What `kv4lint check --stdin-filename PATH -` reports for ``text``: `line:col: CODE` per finding."""
    r = subprocess.run([sys.executable, "-m", "kv4lint", "check", "--format", "json", "--no-cache",
                        "--stdin-filename", str(path), "-"], input=text, capture_output=True, text=True,
                       cwd=next(p for p in path.parents if p.is_dir()), timeout=120)
    assert r.returncode in (0, 1), r.stderr
    return [f"{f['line']}:{f['column']}: {f['code']}" for f in json.loads(r.stdout)["findings"]]


def _as_cli(diags) -> list[str]:
    return [f"{d.range.start.line + 1}:{d.range.start.character + 1}: {d.code}" for d in diags if d.code]


# ---------------------------------------------------------------------------
# The parts


def test_lint_buffer_is_check_on_the_unsaved_text(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    path.write_text(GOOD)  # on disk: nothing to report; the buffer holds the bad launch
    buf = lint_buffer(str(path), BAD)
    assert [f.code for f in buf.findings] == ["KV406"]
    assert _as_cli(diagnostics(buf)) == _cli(path, BAD) == ["3:20: KV406"]
    assert "0.5.23" in buf.findings[0].message  # the configuration's release


def test_lint_buffer_skips_what_check_skips(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG + 'extend-exclude = ["vendor"]\n')
    assert lint_buffer(str(tmp_path / "notes.txt"), BAD).findings == []  # not a file kv4lint reads
    assert lint_buffer(str(tmp_path / "vendor" / "serve.sh"), BAD).findings == []  # excluded
    assert [f.code for f in lint_buffer(str(tmp_path / "job"), BAD).findings] == ["KV406"]  # its shebang


def test_positions_are_utf16(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    # U+1F680 before the value: 1 code point (kv4lint's columns), 2 UTF-16 units (LSP's)
    text = ("#!/bin/bash\npython -m sglang.launch_server --model-path M --served-model-name 🚀 "
            "--kv-cache-dtype fp4_e2m1\n")
    buf = lint_buffer(str(tmp_path / "serve.sh"), text)
    (d,) = diagnostics(buf)
    line = text.splitlines()[d.range.start.line]
    before = line[: line.index("fp4_e2m1")]
    assert "🚀" in before
    assert d.range.start.character == len(before.encode("utf-16-le")) // 2 == len(before) + 1
    assert d.range.end.character - d.range.start.character == len("fp4_e2m1")


def test_code_actions_safe_preferred_unsafe_labelled(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    uri = (tmp_path / "serve.sh").as_uri()
    buf = lint_buffer(str(tmp_path / "serve.sh"), BAD)
    (action,) = code_actions(buf, uri, (0, 0), (9, 0), lambda u: None)
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred is True
    assert "(unsafe" not in action.title and action.title.startswith("KV406: ")
    (edit,) = action.edit.changes[uri]
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (2, 19, "fp8_e4m3")
    # A value also used elsewhere: the fix is unsafe, offered labelled, never preferred.
    shared = "#!/bin/bash\nDT=fp4_e2m1\necho $DT\npython -m sglang.launch_server --model-path M --kv-cache-dtype $DT\n"
    buf = lint_buffer(str(tmp_path / "serve.sh"), shared)
    acts = code_actions(buf, uri, (0, 0), (9, 0), lambda u: None)
    assert acts and all(a.is_preferred is False and "(unsafe: review it)" in a.title for a in acts)
    # a range that meets no finding: no action
    assert code_actions(lint_buffer(str(tmp_path / "serve.sh"), BAD), uri, (0, 0), (0, 5), lambda u: None) == []


# ---------------------------------------------------------------------------
# End to end: a real LSP client over stdio


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "kv4lint", "server"],
                                              server_env={**os.environ, "KV4LINT_NO_CACHE": "1"}))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def _until(condition, timeout: float = 30.0) -> None:
    """Wait for the notifications that make ``condition`` true (several may arrive in one read)."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        assert loop.time() < end, "the server did not publish it"
        await asyncio.sleep(0.05)


async def _open(client: LanguageClient, path: Path, text: str, language: str = "shellscript") -> list:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


@pytest.mark.asyncio
async def test_server_diagnostics_fixes_and_changes(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    path = tmp_path / "serve.sh"
    uri = path.as_uri()
    diags = await _open(client, path, BAD)  # never saved: the server reads the buffer
    assert _as_cli(diags) == _cli(path, BAD) == ["3:20: KV406"]
    (d,) = diags
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "kv4lint" and "0.5.23" in d.message

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=d.range, context=types.CodeActionContext([d])))
    (action,) = actions
    assert action.is_preferred and action.kind == types.CodeActionKind.QuickFix
    (edit,) = action.edit.changes[uri]
    assert edit.new_text == "fp8_e4m3"

    # the user applies it: the change clears the diagnostic
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangeWholeDocument(text=GOOD)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri]) == []

    # the bad text again, then the configuration is edited and saved in the editor: serve.sh is judged again
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        [types.TextDocumentContentChangeWholeDocument(text=BAD)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert _as_cli(client.diagnostics[uri]) == ["3:20: KV406"]
    config = tmp_path / "pyproject.toml"
    await _open(client, config, CONFIG, "toml")
    config.write_text(CONFIG + 'ignore = ["KV406"]\n')
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(config.as_uri())))
    await _until(lambda: list(client.diagnostics[uri]) == [])  # its own diagnostics come first, then serve.sh's


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
    """docs/editors.md: the VS Code settings are JSON, the Helix configuration TOML naming `kv4lint server`."""
    import re
    import tomllib

    doc = (ROOT / "docs" / "editors.md").read_text()
    (vscode,) = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", doc, re.S)]
    assert (vscode["glspc.server.command"], vscode["glspc.server.commandArguments"]) == ("kv4lint", ["server"])
    (helix,) = [tomllib.loads(b) for b in re.findall(r"```toml\n(.*?)```", doc, re.S)]
    assert helix["language-server"]["kv4lint"] == {"command": "kv4lint", "args": ["server"]}
    assert all("kv4lint" in lang["language-servers"] for lang in helix["language"])
    assert doc.count('cmd = { "kv4lint", "server" }') == 2  # Neovim: vim.lsp.config and lspconfig


def test_codes_link_to_the_rule_pages_when_configured(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG + 'rule-docs-url = "https://example.org/kv4lint/rules"\n')
    (d,) = diagnostics(lint_buffer(str(tmp_path / "serve.sh"), BAD))
    assert d.code_description.href == "https://example.org/kv4lint/rules/KV406.md"


def test_without_pygls_the_server_says_what_to_install(monkeypatch, capsys):
    """pygls is an optional extra: without it, `kv4lint server` exits 2 naming it (a usage error)."""
    from kv4lint.cli import main

    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # import fails as when not installed
    assert main(["server"]) == 2
    assert "pip install 'kv4lint[server]'" in capsys.readouterr().err
