"""The pre-filter's Python entry points are kv4lint.sglang.commands' tables, not a second list."""

from __future__ import annotations

import re

from kv4lint import prefilter
from kv4lint.sglang.commands import DOC_HELPERS, HELPERS, PY_API, SERVER_MODULES


def test_the_entry_needles_find_every_entry_word():
    """The fast path looks for these substrings, then compares the whole identifier with PY_ENTRY_WORDS."""
    missed = [w for w in prefilter.PY_ENTRY_WORDS if not any(n in w for n in prefilter._PY_ENTRY_NEEDLES)]
    assert missed == []


def test_the_entry_words_are_the_api_and_the_helpers():
    assert {*PY_API, *HELPERS, *DOC_HELPERS} <= set(prefilter.PY_ENTRY_WORDS)


def test_every_server_module_is_an_entry_for_python_files():
    for module in SERVER_MODULES:
        text = f'import subprocess\nsubprocess.run(["python", "-m", "{module}", "--kv-cache-dtype", "fp4_e2m1"])\n'
        assert re.search(prefilter.SPEC["py_entry"], text), module
        assert prefilter.might_launch(text, "python"), module
        assert prefilter.might_launch_bytes(text.encode(), "python"), module
