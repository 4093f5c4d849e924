"""``kv4lint server``: a language server (LSP over stdio, on pygls) for every file kv4lint reads.

An editor sends each open buffer's text; the server judges it as ``kv4lint check`` judges the file on disk
(the unsaved text, the same pipeline, the nearest configuration) and answers with diagnostics, code actions
and hovers.  Its parts:

- :mod:`kv4lint.cli.server.lsp` -- the requests and notifications (pygls), and ``kv4lint server`` itself;
- :mod:`kv4lint.cli.server.schedule` -- when a buffer is judged: debounced, one at a time, stale work dropped;
- :mod:`kv4lint.cli.server.worker` -- the checking process: judgements never run on the request loop;
- :mod:`kv4lint.cli.server.buffer` -- one buffer's judgement, with LSP positions for every request;
- :mod:`kv4lint.cli.server.answers` -- diagnostics, code actions and hovers from a judgement.

Nothing of the scanned tree runs: the server reads text only, as every kv4lint command.  Importing this
package loads nothing (the checking process imports :mod:`kv4lint.cli.server.worker` without pygls).
"""
