"""``kv4lint server``: a language server (LSP over stdio, on pygls) for every file kv4lint reads.

An editor sends each open buffer's text; the server judges it as ``kv4lint check`` judges the file on disk
and publishes the findings as diagnostics, on open, on every change and on save:

- the same pipeline: :func:`lint_buffer` is the stdin route's (``kv4lint check --stdin-filename PATH -``):
  the file's name and first line choose its language (:func:`kv4lint.discover.chosen`: a file ``kv4lint
  check .`` would skip gets no diagnostics), the nearest ``[tool.kv4lint]`` / ``kv4lint.toml`` above it its
  settings (read again for every buffer, and every open buffer is judged again when a configuration file
  is saved), and the runner
  (:func:`kv4lint.runner.lint_text`) its findings; a file the configuration excludes gets none;
- the unsaved text: what the editor holds, not the file on disk;
- fixes as code actions: a safe fix is a preferred quick fix (what an editor's "fix all" / "auto fix" applies),
  an unsafe one a quick fix labelled ``(unsafe)``, never preferred; an edit in another file (a sourced
  ``env.sh``) is part of the same workspace edit;
- a file kv4lint cannot read or parse is one error diagnostic naming the line, as ``check`` reports it;
- each code links to its rule page (``codeDescription``) where ``rule-docs-url`` (or the installed
  project's ``Rules`` URL) says where the pages are, as SARIF's ``helpUri``;
- nothing of the scanned tree runs: the server reads text only, as every kv4lint command.

Columns: kv4lint counts code points, LSP UTF-16 code units; :func:`_lsp_position` converts.
The command line's target and selection options (``kv4lint server --gpu h100``) apply over each file's
configuration, as for ``check``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from kv4lint.cli.check import _excluded_by_config
from kv4lint.cli.options import ConfigError, Overrides, UsageError
from kv4lint.config import CONFIG_NAMES, ConfigResolver
from kv4lint.discover import chosen, language_of
from kv4lint.exit_status import EXIT_ERROR, EXIT_OK
from kv4lint.file_report import FileReport
from kv4lint.model import Finding, Severity
from kv4lint.reporters.sarif import project_urls
from kv4lint.runner import lint_text
from kv4lint.source import DecodeError, LineIndex, decode
from kv4lint.version import __version__

SOURCE = "kv4lint"
INSTALL_HINT = "kv4lint server needs pygls: pip install 'kv4lint[server]'"


class Buffer:
    """What the server judged for one buffer: its findings and errors, with the text they point into."""

    __slots__ = ("path", "text", "findings", "errors", "rule_docs_url")

    def __init__(self, path: str, text: str, findings: list[Finding], errors: list,
                 rule_docs_url: str | None = None):
        self.path = path
        self.text = text
        self.findings = findings
        self.errors = errors
        self.rule_docs_url = rule_docs_url  # the rule pages' base URL (`rule-docs-url`), as for SARIF's helpUri


def lint_buffer(path: str, text: str, overrides: Overrides | None = None, *, config_file: str | None = None,
                isolated: bool = False) -> Buffer:
    """Judge an editor's buffer ``text`` as the file ``path`` (which need not be saved), as ``kv4lint check``
    judges the file: its language, configuration and exclusion come from the path."""
    empty = Buffer(path, text, [], [])
    resolver = ConfigResolver(overrides or Overrides(), config_file=config_file, isolated=isolated)
    wanted, language = chosen(path)
    if not wanted:
        return empty
    language = language or language_of(path, text[:256].encode("utf-8", "surrogatepass"))
    if language is None:
        return empty  # no name kv4lint reads and no shebang: `check .` skips it too
    settings = resolver.settings_for(path, is_dir=False)
    if _excluded_by_config(path, settings):
        return empty
    rep: FileReport = lint_text(path, text, settings, language)
    docs = settings.rule_docs_url or project_urls()[1]
    if docs and not docs.endswith("/"):
        docs += "/"
    return Buffer(path, text, sorted(rep.findings, key=lambda f: f.sort_key()), list(rep.errors), docs)


# ---------------------------------------------------------------------------
# Positions: kv4lint's 1-based lines and code-point columns -> LSP's 0-based lines and UTF-16 units


def _utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _lsp_position(index: LineIndex, line: int, column: int) -> tuple[int, int]:
    """(line, character) for LSP from kv4lint's 1-based line and 1-based code-point column."""
    line = max(1, min(line, len(index.starts)))
    text = index.line_text(line)
    return line - 1, _utf16(text[:max(0, column - 1)])


def _offset_position(index: LineIndex, offset: int) -> tuple[int, int]:
    p = index.position(offset)
    return _lsp_position(index, p.line, p.column)


# ---------------------------------------------------------------------------
# The LSP side (pygls is imported here only: the rest of kv4lint never needs it)


def _types():
    try:
        from lsprotocol import types
    except ImportError:  # pragma: no cover - the extra is not installed
        raise UsageError(INSTALL_HINT) from None
    return types


def diagnostics(buf: Buffer) -> list:
    types = _types()
    index = LineIndex(buf.text)
    out = []
    for i, f in enumerate(buf.findings):
        start = f.start or index.position(0)
        end = f.end or start
        s = _lsp_position(index, start.line, start.column)
        e = _lsp_position(index, end.line, end.column)
        if e < s:
            e = s
        severity = types.DiagnosticSeverity.Error if f.severity is Severity.ERROR else \
            types.DiagnosticSeverity.Warning
        out.append(types.Diagnostic(
            range=types.Range(types.Position(*s), types.Position(*e)), message=f.message, severity=severity,
            code=f.code, source=SOURCE, data={"finding": i, "fix": f.fix.applicability if f.fix else None},
            code_description=types.CodeDescription(href=f"{buf.rule_docs_url}{f.code}.md")
            if buf.rule_docs_url else None))
    for err in buf.errors:
        line = max(0, (err.line or 1) - 1)
        out.append(types.Diagnostic(
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            message=f"kv4lint could not check this file: {err.message}", severity=types.DiagnosticSeverity.Error,
            source=SOURCE))
    return out


def _uri_of(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(os.path.abspath(path)) or path


def _text_of(path: str, open_text) -> str | None:
    """The text an edit in another file applies to: the editor's buffer when open, else the file."""
    t = open_text(_uri_of(path))
    if t is not None:
        return t
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return decode(data, python=language_of(path) == "python").text
    except (OSError, DecodeError):
        return None


def code_actions(buf: Buffer, uri: str, start: tuple[int, int], end: tuple[int, int], open_text) -> list:
    """A quick fix for each finding with a fix whose range meets ``start``..``end`` (LSP positions)."""
    types = _types()
    index = LineIndex(buf.text)
    actions = []
    for diag in diagnostics(buf):
        if diag.data is None or diag.data.get("fix") is None:
            continue
        s, e = (diag.range.start.line, diag.range.start.character), (diag.range.end.line, diag.range.end.character)
        if e < start or s > end:
            continue
        f = buf.findings[diag.data["finding"]]
        changes: dict[str, list] = {}
        ok = True
        for edit in f.fix.edits:  # type: ignore[union-attr]
            if edit.path is None or os.path.abspath(edit.path) == os.path.abspath(buf.path):
                target_uri, idx = uri, index
            else:
                other = _text_of(edit.path, open_text)
                if other is None:
                    ok = False
                    break
                target_uri, idx = _uri_of(edit.path), LineIndex(other)
            a, b = _offset_position(idx, edit.span.start), _offset_position(idx, edit.span.end)
            changes.setdefault(target_uri, []).append(
                types.TextEdit(range=types.Range(types.Position(*a), types.Position(*b)), new_text=edit.text))
        if not ok or not changes:
            continue
        safe = f.fix.applicability == "safe"  # type: ignore[union-attr]
        title = f"{f.code}: {f.fix.description}" + ("" if safe else " (unsafe: review it)")  # type: ignore
        actions.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=safe,
            edit=types.WorkspaceEdit(changes=changes)))
    return actions


def build_server(overrides: Overrides, *, config_file: str | None = None, isolated: bool = False) -> Any:
    """The pygls server, its handlers bound to the command line's ``overrides``."""
    try:
        from pygls.lsp.server import LanguageServer
        from pygls.uris import to_fs_path
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    types = _types()

    server = LanguageServer("kv4lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)

    def open_text(uri: str) -> str | None:
        doc = server.workspace.text_documents.get(uri)
        return doc.source if doc is not None else None

    def judge(uri: str) -> Buffer | None:
        doc = server.workspace.get_text_document(uri)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:
            return None
        try:
            return lint_buffer(path, doc.source, overrides, config_file=config_file, isolated=isolated)
        except (ConfigError, UsageError) as e:  # a bad [tool.kv4lint]: say so, where the user looks
            server.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"kv4lint: {e}"))
        except Exception as e:  # noqa: BLE001 - an internal error must not stop the editor's server
            logging.exception("kv4lint: internal error on %s", path)
            server.window_log_message(types.LogMessageParams(
                types.MessageType.Error, f"kv4lint {__version__}: internal error on {path}: {e!r}"))
        return None

    def publish(uri: str, version: int | None = None) -> None:
        buf = judge(uri)
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=diagnostics(buf) if buf is not None else []))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        publish(uri)
        if os.path.basename(to_fs_path(uri) or "") in CONFIG_NAMES:  # a saved configuration: judge again
            for other in list(server.workspace.text_documents):
                if other != uri:
                    publish(other)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls, params: types.CodeActionParams) -> list:
        uri = params.text_document.uri
        buf = judge(uri)
        if buf is None:
            return []
        r = params.range
        return code_actions(buf, uri, (r.start.line, r.start.character), (r.end.line, r.end.character), open_text)

    return server


def run_server(ns: argparse.Namespace) -> int:
    """``kv4lint server``: serve LSP on stdin/stdout until the editor ends the session."""
    try:
        overrides = Overrides.from_namespace(ns)
        server = build_server(overrides, config_file=getattr(ns, "config_file", None),
                              isolated=bool(getattr(ns, "isolated", False)))
    except (ConfigError, UsageError) as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    server.start_io()
    return EXIT_OK
