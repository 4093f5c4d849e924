"""SGLang's entry points that take server arguments (spec §6).

Shared by every frontend: given the words of a command (as a shell or
``subprocess`` would run it), find where SGLang's server arguments start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# python -m MODULE ...   (modules that parse ServerArgs.add_cli_args; spec §6)
SERVER_MODULES: dict[str, str] = {
    "sglang.launch_server": "sglang.launch_server",
    "sglang.bench_one_batch": "sglang.bench_one_batch",
    "sglang.bench_offline_throughput": "sglang.bench_offline_throughput",
    "sglang.bench_one_batch_server": "sglang.bench_one_batch_server",
    "sglang.benchmark.one_batch": "sglang.benchmark.one_batch",
    "sglang.benchmark.offline_throughput": "sglang.benchmark.offline_throughput",
    "sglang.benchmark.one_batch_server": "sglang.benchmark.one_batch_server",
    "sglang.compile_deep_gemm": "sglang.compile_deep_gemm",
}

# Entry points that honour --config (spec §5.3): only prepare_server_args users.
CONFIG_ENTRIES = frozenset({"sglang.launch_server", "sglang serve"})

_PYTHON = re.compile(r"^(?:.*/)?(?:python(?:[23](?:\.\d+)?)?|pypy3?)(?:\.exe)?$")
_PYTHON_VAR = re.compile(r"^\$\{?(?:PYTHON|PY|PYTHON_BIN|PYTHON_EXE|PYTHON_EXECUTABLE|PYBIN|PY_BIN|INTERPRETER)\}?$",
                         re.I)
_SGLANG_CLI = re.compile(r"^(?:.*/)?sglang$")

# Interpreter options that take a value (python -X opt, -W arg, ...).
_PY_OPTS_WITH_VALUE = {"-X", "-W", "-Q"}


def is_python(word: str | None) -> bool:
    """``python``, ``python3``, ``python3.11``, ``/usr/bin/python3``, ``$PYTHON``, ``sys.executable``."""
    if word is None:
        return False
    return bool(_PYTHON.match(word) or _PYTHON_VAR.match(word) or word == "sys.executable")


@dataclass(frozen=True)
class EntryMatch:
    entry: str  # "sglang.launch_server", "sglang serve", ...
    start: int  # index of the first server argument in the word list


def match_entry(words: list[str | None]) -> EntryMatch | None:
    """Match the start of a command's words (wrappers already removed).

    ``words[i]`` is ``None`` where the word is unknown.  Recognises
    ``python[3[.x]] [interpreter options] -m MODULE ...``, ``-mMODULE``,
    ``sglang serve ...`` (also ``/path/to/sglang serve``), and
    ``python -m sglang.cli.main serve`` / ``python -m sglang serve``.
    """
    if not words:
        return None
    w0 = words[0]
    if w0 is not None and _SGLANG_CLI.match(w0):
        if len(words) > 1 and words[1] == "serve":
            return EntryMatch("sglang serve", 2)
        return None
    if not is_python(w0):
        return None
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w == "-m" and i + 1 < len(words):
            mod = words[i + 1]
            return _module(mod, words, i + 2)
        if w.startswith("-m") and len(w) > 2:
            return _module(w[2:], words, i + 1)
        if w in _PY_OPTS_WITH_VALUE:
            i += 2
            continue
        if w.startswith("-") and w != "-":
            i += 1
            continue
        return None  # a script path: not an SGLang module
    return None


def _module(mod: str | None, words: list[str | None], nxt: int) -> EntryMatch | None:
    if mod is None:
        return None
    if mod in SERVER_MODULES:
        return EntryMatch(SERVER_MODULES[mod], nxt)
    if mod in ("sglang", "sglang.cli.main", "sglang.cli") and nxt < len(words) and words[nxt] == "serve":
        return EntryMatch("sglang serve", nxt + 1)
    return None
