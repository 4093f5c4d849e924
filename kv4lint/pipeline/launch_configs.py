"""The ``--config`` files launches name: read after the parse cache and merged into the launches.

A pipeline stage between the frontends and the rules.  Frontends read only
the text they are given, so their results can be cached on that text; the
files a launch refers to are read here, on every run, so an edited or a new
config file is always seen.

SGLang (``prepare_server_args``: ``python -m sglang.launch_server``,
``sglang serve`` and the test helpers that run them) reads the file named by
the exact token ``--config`` (docs/sglang-rules.md §5.3); its arguments go before the command
line's.  A launch that passes ``--config FILE`` gets that file's arguments in
``Launch.config_argv`` (reported where the launch names the file, fixed in
the file: ``Launch.config_path``).  The file is looked for relative to the
launching file's directory, then its parents up to the repository root; a
path inside a container image is also looked for at the sources the
Dockerfile copied there (``ScanResult.copies``).
"""

from __future__ import annotations

import os

from kv4lint.base.file_error import FileError
from kv4lint.base.model import Launch, ScanResult, Value
from kv4lint.base.record import replace
from kv4lint.base.source import DecodeError, decode
from kv4lint.files.depends import look
from kv4lint.files.ignore import repository_root
from kv4lint.files.regular_file import open_file
from kv4lint.frontends.sglang_config import config_tokens
from kv4lint.frontends.yaml_nodes import compose
from kv4lint.sglang.commands import CONFIG_ENTRIES

__all__ = ["attach_configs", "config_token_index", "load_config_argv", "reads_config"]

MAX_CONFIG_BYTES = 1_000_000


def reads_config(launch: Launch) -> bool:
    """Does SGLang read ``--config`` for this launch (its entry point, or the one its helper runs)?"""
    return launch.form == "argv" and (launch.config_via or launch.entry) in CONFIG_ENTRIES


def config_token_index(argv: list[Value]) -> int | None:
    """Index of the value after the one exact ``--config`` token (SGLang's own detection), else None."""
    idx = [k for k, t in enumerate(argv) if t.text == "--config"]
    if len(idx) != 1 or idx[0] + 1 >= len(argv):
        return None
    return idx[0] + 1


def _candidates(config_path: str, base_dir: str | None) -> list[str]:
    if os.path.isabs(config_path):
        return [look(config_path)]
    out = []
    d = os.path.abspath(base_dir or ".")
    top = repository_root(d, or_project=True)
    for _ in range(8):  # the launching file's directory, then its parents up to the repository root
        out.append(look(os.path.join(d, config_path)))
        look(os.path.join(d, ".git"))  # what decides where the search ends (repository_root): a dependency too
        look(os.path.join(d, "pyproject.toml"))
        if d == top:
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return out


def load_config_argv(config_path: str, base_dir: str | None) -> tuple[list[Value], str] | None:
    """Read ``config_path`` (relative to ``base_dir``, then its parents up to the repository root).

    Returns the argv tokens SGLang would build from it, with spans in that
    file, and the path the file was found at (relative to the current
    directory when ``base_dir`` is relative); None when it is not a readable
    YAML mapping (SGLang itself would refuse to start then, which is not a KV4
    matter).
    """
    if not config_path or "$" in config_path or not config_path.lower().endswith((".yaml", ".yml")):
        return None
    for cand in _candidates(config_path, base_dir):
        try:
            if not os.path.isfile(cand) or os.path.getsize(cand) > MAX_CONFIG_BYTES:
                continue
            with open_file(cand) as f:
                data = f.read(MAX_CONFIG_BYTES + 1)
        except OSError:
            continue
        try:
            text = decode(data).text
        except DecodeError:
            return None
        docs, errors = compose(text, cand)
        if errors or len(docs) != 1:
            return None
        tokens = config_tokens(text, docs[0])
        if tokens is None:
            return None
        shown = cand
        if base_dir is None or not os.path.isabs(base_dir):
            rel = os.path.relpath(cand)
            if not rel.startswith(".." + os.sep):
                shown = rel
        return tokens, shown
    return None


def _copied_from(copies: list[tuple[str, str]], container_path: str) -> list[str]:
    """The sources a Dockerfile's ``COPY src dst`` put at ``container_path``."""
    out = []
    for src, dst in copies:
        if "$" in src or "*" in src:
            continue
        if container_path == dst or (dst.endswith("/") and container_path == dst + os.path.basename(src)):
            out.append(src)
        elif container_path.startswith(dst.rstrip("/") + "/"):
            out.append(os.path.join(src, container_path[len(dst.rstrip("/")) + 1:]))
    return out


def attach_configs(result: ScanResult, path: str) -> None:
    """Merge the ``--config`` file of each launch that SGLang would read it for.

    The file's tokens are reported at the file name on the launch (``use``),
    and edited in the file itself (``Launch.config_path``).  A problem reading
    a file is a FileError in ``result``, never raised.
    """
    base_dir = os.path.dirname(path) if path and not path.startswith("<") else None
    for launch in result.launches:
        if not reads_config(launch) or launch.config_argv:
            continue
        k = config_token_index(launch.argv)
        if k is None:
            continue
        name = launch.argv[k]
        if not name.known:
            continue
        try:
            loaded = load_config_argv(name.text, base_dir if base_dir else ".")
            for other in (_copied_from(result.copies, name.text) if loaded is None else []):
                loaded = load_config_argv(other, base_dir if base_dir else ".")
                if loaded is not None:
                    break
        except Exception as e:  # noqa: BLE001 - never stop the run for a config file
            result.errors.append(FileError(path, f"cannot read config file {name.text} ({type(e).__name__}: {e})"))
            continue
        if loaded is None:
            continue
        tokens, where = loaded
        use = name.anchor or launch.anchor
        launch.config_argv = [replace(t, use=use) for t in tokens]
        launch.config_path = where
