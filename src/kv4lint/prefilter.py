"""The cheap test every file goes through before it is decoded or parsed.

A file can only produce a finding if it sets SGLang's KV cache dtype (or the
NVFP4 prefill dequant dtype, the other option the rules read) in a launch, or
hands a launch a ``--config`` file that may set it.  So a candidate must hold:

1. ``sglang`` (lower case): every entry point is spelled with it -- the
   modules (``python -m sglang.launch_server``), the CLI (``sglang serve``),
   the imports of the Python API (``from sglang import Engine``), the images
   (``lmsysorg/sglang``).  The one exception is an SGLang ``--config`` YAML
   file, which holds only keys (``kv-cache-dtype: nvfp4``);
2. and a spelling of one of the two options: ``kv_cache_dtype`` /
   ``prefill_kv_cache_dequant_dtype`` (Python keywords, dict keys), their flags
   and every prefix argparse accepts for them (``--kv-c`` is the shortest
   unique prefix of ``--kv-cache-dtype`` in any release, ``--prefill-k`` of
   ``--prefill-kv-cache-dequant-dtype``), config keys (``kv-cache-dtype:``,
   abbreviated ``kv-c:``) -- or ``--config``.

Python files (``language="python"``) must also name an entry point a launch
is made with (``ServerArgs(``, ``Engine(``, ``popen_launch_server(``, a
``sglang.launch_server`` / ``sglang serve`` string ...) and set the dtype the
way a launch does (a keyword or an assignment, a dict key, a flag string) rather
than only reading ``x.kv_cache_dtype``: SGLang's own sources and their
forks mention ``kv_cache_dtype`` everywhere without launching anything.

The test is a few ``bytes.__contains__`` scans (the fastest search Python
has) on the raw bytes; the regular expressions run only on the rare files
that pass them.  False positives cost a parse; false negatives would hide
findings, so every test here is a necessary condition, never a guess.

``GREP_PATTERN`` is the same substrings for ``grep -E`` (the benchmark's
floor).
"""

from __future__ import annotations

import functools
import re

# Stage 1 needles (plain substrings).
ENTRY_NEEDLE = "sglang"
OPTION_NEEDLES = ("kv_cache_d", "kv-c", "prefill-k")  # every spelling of the two options contains one
CONFIG_NEEDLE = "--config"
NEEDLES = (ENTRY_NEEDLE, *OPTION_NEEDLES, CONFIG_NEEDLE)

GREP_PATTERN = "|".join(NEEDLES)  # no regex metacharacters in the needles

# Stage 2: where an option is *spelled as an option* (not "the kv-cache is ...").
_OPTION = (
    r"(?:prefill_)?kv_cache_d"  # Python keywords, dict keys, attributes
    r"|--kv-c|--prefill-k"  # flags and their argparse prefixes
    r"|(?:kv-c|prefill-k)[\w-]*[\"']?[ \t]*:"  # config keys, full or abbreviated (kv-c: nvfp4)
)
# An SGLang --config file (block or flow mapping): one of the two keys.
_CONFIG_KEY = r"(?:kv-c|prefill-k)[\w-]*[\"']?[ \t]*:"

# Python: how a launch sets the option -- a keyword or an assignment (not
# ``self.kv_cache_dtype = ...`` inside a class, not ``==``), a dict key or a
# setattr name, a flag in a string.
_PY_OPTION = (
    r"(?<!\w)(?<!self\.)(?:prefill_)?kv_cache_d\w*\s*=(?!=)"
    r"|[\"'](?:prefill_)?kv_cache_d"
    r"|--kv-c|--prefill-k"
)
# Python: the entry points of spec section 6, as calls or as command strings.
_PY_ENTRY = (
    r"(?:ServerArgs|Engine|Runtime|prepare_server_args|from_cli_args|launch_server\w*|run_server)\s*\("
    r"|sglang(?:\.[\w.]+)?[\"',\s-]+serve\b"  # sglang serve, ["sglang", "serve"], -m sglang.cli.main serve
    r"|sglang\.(?:launch_server|bench_|benchmark\.|compile_deep_gemm)"  # -m MODULE, as one string or a list item
)


class _Flavour:
    """The same tests for ``bytes`` and ``str``; regular expressions compiled on first use."""

    def __init__(self, conv):
        self.conv = conv
        self.entry = conv(ENTRY_NEEDLE)
        self.options = tuple(conv(n) for n in OPTION_NEEDLES)
        self.kv_c, self.prefill_k = conv("kv-c"), conv("prefill-k")
        self.config = conv(CONFIG_NEEDLE)

    def _re(self, pattern: str):
        return re.compile(self.conv(pattern))

    @functools.cached_property
    def option(self):
        return self._re(_OPTION)

    @functools.cached_property
    def config_key(self):
        return self._re(_CONFIG_KEY)

    @functools.cached_property
    def py_option(self):
        return self._re(_PY_OPTION)

    @functools.cached_property
    def py_entry(self):
        return self._re(_PY_ENTRY)

    def test(self, data, language: str | None) -> bool:
        if self.entry not in data:
            # No entry point: only an SGLang --config file (keys only) can hold a finding.
            return (language is None or language == "yaml") and (self.kv_c in data or self.prefill_k in data) \
                and self.config_key.search(data) is not None
        o1, o2, o3 = self.options
        if o1 in data or o2 in data or o3 in data:
            if language == "python":
                if self.py_option.search(data) is None and self.config not in data:
                    return False
            elif self.option.search(data) is None and self.config not in data:
                return False
        elif self.config not in data:
            return False
        if language == "python":
            return self.py_entry.search(data) is not None
        return True


_BYTES = _Flavour(lambda s: s.encode("ascii"))
_STR = _Flavour(lambda s: s)


def might_launch(text: str, language: str | None = None) -> bool:
    """Whether decoded ``text`` may hold a launch kv4lint can report on.

    ``language`` (kv4lint's language name) enables the tighter tests for
    Python; ``None`` applies the tests that hold for every language.
    """
    return _STR.test(text, language)


def might_launch_bytes(data: bytes, language: str | None = None) -> bool:
    """:func:`might_launch` on raw bytes (ASCII-compatible encodings; UTF-16 must be decoded first)."""
    return _BYTES.test(data, language)
