"""One model of each concept: the readers take SGLang's entry points and the GPU names from the leaves
(kv4lint.sglang.commands, kv4lint.sglang.gpus), not from a second list."""

from __future__ import annotations

import re

import pytest

from kv4lint.files import prefilter
from kv4lint.frontends.hints import image_hints
from kv4lint.sglang.commands import DOC_HELPERS, HELPERS, PY_API, SERVER_MODULES
from kv4lint.sglang.gpus import GPU_ARCH
from kv4lint.sglang.gpus import normalise_gpu


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


@pytest.mark.parametrize("name", ["b200", "h100", "gb300", "rtx5090", "spark", "l40s"])
def test_a_gpu_in_an_image_tag_means_what_gpu_means(name):
    """``lmsysorg/sglang:...-b200`` and ``--gpu b200`` name the same arch."""
    hints = [h for h in image_hints(f"lmsysorg/sglang:v0.5.23-cu129-{name}", None) if h.kind == "gpu"]
    assert [h.value for h in hints] == [normalise_gpu(name)] == [GPU_ARCH[name]]
