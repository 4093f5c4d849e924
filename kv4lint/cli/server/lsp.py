"""``kv4lint server``: the language server's requests and notifications, on pygls.

- diagnostics pushed (``textDocument/publishDiagnostics``) for clients that do not pull, and pulled
  (``textDocument/diagnostic``) by those that do (current VS Code and Neovim): the client's capabilities
  decide, so that no client sees a finding twice; a saved configuration file judges every open buffer
  again (and asks a pulling client to pull again: ``workspace/diagnostic/refresh``);
- code actions (quick fixes, "disable for this line", ``source.fixAll.kv4lint``) and hovers
  (:mod:`kv4lint.cli.server.answers`), from the judgement of the buffer's current version;
- a bad configuration (a ``gpu`` kv4lint does not know in ``pyproject.toml``) is one message per save of a
  configuration file, not one per buffer, and the buffers keep their last good diagnostics;
- every request is answered: one whose params are null or not what its method takes gets JSON-RPC's
  "invalid params" error, one after ``shutdown`` "invalid request" (:class:`Protocol`); the server's own
  errors go to the client's log, not to a dialog;
- ``shutdown`` stops the check in flight at once.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading

from cattrs import transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from kv4lint.base.exit_status import EXIT_ERROR, EXIT_OK
from kv4lint.base.source import DecodeError, decode
from kv4lint.base.version import __version__
from kv4lint.cli.server import answers
from kv4lint.cli.server.buffer import Options, Positions
from kv4lint.cli.server.schedule import DEBOUNCE, Checks, Outcome
from kv4lint.cli.server.worker import Failed, Stopped, Worker
from kv4lint.files.discover import language_of
from kv4lint.settings.config import CONFIG_NAMES
from kv4lint.settings.options import ConfigError, Overrides, UsageError


class _Refused:
    """A request pygls could not read (null or ill-shaped params): answered with ``error``, never run."""

    jsonrpc = "2.0"

    def __init__(self, msg_id, method: str, error: JsonRpcException):
        self.id = msg_id
        self.method = method
        self.error = error


class Protocol(LanguageServerProtocol):
    """pygls's protocol, answering every request: JSON-RPC requires a reply to each, an error included."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if isinstance(data, dict) and "id" in data and "method" in data:  # a request: it gets an answer
                why = "; ".join(transform_error(e.__cause__)) if e.__cause__ is not None else str(e)
                return _Refused(data["id"], data["method"], JsonRpcInvalidParams(f"{data['method']}: {why}"))
            raise  # a notification: nothing to answer (pygls logs it)

    def handle_message(self, message):
        if isinstance(message, _Refused):
            self._send_response(message.id, error=message.error.to_response_error())
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            self._send_response(message.id, error=JsonRpcInvalidRequest(
                f"{method}: the server is shutting down").to_response_error())
            return
        super().handle_message(message)


class Server(LanguageServer):
    def report_server_error(self, error: Exception, source) -> None:
        """The server's own errors go to the client's log (a request's error is in its answer already)."""
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"kv4lint: {error}"))
        except Exception:  # noqa: BLE001 - the client may be gone
            logging.exception("kv4lint: could not report an error")


def _path(uri: str) -> str | None:
    return to_fs_path(uri) if uri.startswith("file:") else None


def build_server(options: Options) -> LanguageServer:
    """The pygls server, its handlers bound to the command line's ``options``."""
    server = Server("kv4lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                    protocol_cls=Protocol)
    worker = Worker(options)
    shown: set[str] = set()  # configuration errors shown since the last save of a configuration file
    last_good: dict[str, tuple[str, list[types.Diagnostic]]] = {}  # uri -> (result id, diagnostics)
    serial = [0]

    def pulls() -> bool:
        td = server.client_capabilities.text_document
        return td is not None and td.diagnostic is not None

    def source(uri: str):
        doc = server.workspace.text_documents.get(uri)
        path = _path(uri)
        if doc is None or path is None:
            return None
        return path, doc.version, doc.source

    def judged(uri: str, out: Outcome) -> None:
        if out.judged is not None:
            serial[0] += 1
            diags = answers.diagnostics(out.judged)
            last_good[uri] = (str(serial[0]), diags)
            if not pulls():
                server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                    uri=uri, version=out.version, diagnostics=diags))
        elif isinstance(out.failed, Failed) and out.failed.kind == "config":
            if out.failed.message not in shown:  # once, not once per open buffer; the diagnostics stay
                shown.add(out.failed.message)
                server.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                                   f"kv4lint: {out.failed.message}"))
        else:
            what = out.failed.message if isinstance(out.failed, Failed) else "its checking process stopped"
            logging.error("kv4lint: internal error on %s: %s", uri, what)
            server.window_log_message(types.LogMessageParams(
                types.MessageType.Error, f"kv4lint {__version__}: internal error on {_path(uri)}: {what}"))

    checks = Checks(worker, source, judged)

    def open_text(path: str):
        """(URI, positions) of another file an edit reaches: the editor's buffer when open, else the file."""
        uri = from_fs_path(os.path.abspath(path)) or path
        doc = server.workspace.text_documents.get(uri)
        if doc is not None:
            return uri, Positions(doc.source)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            return uri, Positions(decode(data, python=language_of(path) == "python").text)
        except (OSError, DecodeError):
            return None

    @server.feature(types.INITIALIZED)
    def initialized(ls, params) -> None:  # the checking process's imports, before the first buffer comes
        threading.Thread(target=worker.start, name="kv4lint-check-start", daemon=True).start()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        checks.touch(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        checks.touch(params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        checks.touch(uri)
        if os.path.basename(_path(uri) or "") in CONFIG_NAMES:  # a saved configuration: judge every buffer again
            shown.clear()
            for other in list(server.workspace.text_documents):
                if other != uri:
                    checks.invalidate(other)
            refresh = server.client_capabilities.workspace
            if pulls() and refresh is not None and refresh.diagnostics is not None and \
                    refresh.diagnostics.refresh_support:
                server.workspace_diagnostic_refresh(None)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        checks.forget(uri)
        last_good.pop(uri, None)
        if not pulls():
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier=answers.SOURCE, inter_file_dependencies=True, workspace_diagnostics=False))
    async def diagnostic(ls, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        await checks.settled(uri)
        result_id, diags = last_good.get(uri, (None, []))  # a bad configuration: the last good ones stay
        if result_id is not None and params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=diags, result_id=result_id)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, answers.FIX_ALL]))
    async def code_action(ls, params: types.CodeActionParams) -> list:
        uri = params.text_document.uri
        only = params.context.only
        wants = (lambda kind: True) if not only else \
            (lambda kind: any(kind == k or kind.startswith(f"{k}.") for k in only))
        out = await checks.settled(uri)
        if out is None or out.judged is None:
            return []
        r = params.range
        actions = answers.code_actions(out.judged, uri, (r.start.line, r.start.character),
                                       (r.end.line, r.end.character), open_text,
                                       quick_fixes=wants(types.CodeActionKind.QuickFix))
        asked = only and wants(answers.FIX_ALL)
        invoked = params.context.trigger_kind == types.CodeActionTriggerKind.Invoked and not only
        if (asked or invoked) and any(item.safe for item in out.judged.items):
            version, edit = await checks.call("fix-all", uri)
            src = source(uri)
            if edit is not None and not isinstance(edit, (Failed, Stopped)) and src is not None and \
                    src[1] == version:
                actions.append(answers.fix_all_action(uri, edit))
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: types.HoverParams):
        out = checks.current(params.text_document.uri)  # never waits: the last judgement, if still current
        if out is None or out.judged is None:
            return None
        return answers.hover(out.judged, params.position.line, params.position.character)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls, params) -> None:
        checks.close()

    return server


def run_server(ns: argparse.Namespace) -> int:
    """``kv4lint server``: serve LSP on stdin/stdout until the editor ends the session."""
    try:
        options = Options(Overrides.from_namespace(ns), getattr(ns, "config_file", None),
                          bool(getattr(ns, "isolated", False)))
    except (ConfigError, UsageError) as e:
        print(f"kv4lint: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    build_server(options).start_io()  # the checking process is a daemon: it ends with the server
    return EXIT_OK
