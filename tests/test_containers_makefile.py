"""Makefile frontend: recipes as shell, make variables, continuation lines."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from kv4lint.base.model import Span
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.fixes.edits import apply_edits
from kv4lint.frontends.makefile import parse, scan_makefile
from kv4lint.pipeline.runner import lint_text

S23 = Settings(sglang_version="0.5.23")


def at(text: str, span: Span | None) -> str | None:
    return None if span is None else text[span.start:span.end]


def dtype(launch):
    toks = [v.text for v in launch.argv]
    for k, t in enumerate(toks):
        if t == "--kv-cache-dtype":
            return launch.argv[k + 1]
        if t and t.startswith("--kv-cache-dtype="):
            return launch.argv[k]
    raise AssertionError(toks)


def lint(text: str):
    rep = lint_text("Makefile", text, S23, language="makefile")
    assert rep.errors == []
    idx = LineIndex(text)
    return [(f.code, text[idx.offset(f.start.line, f.start.column):][:10]) for f in rep.findings], rep


def test_parse_variables_and_recipes():
    mk = ("A = 1\nB := two words\nC ?= x\nC ?= y\nD = $(A)\nE = 1\nE += 2\n"
          "export F = 0\n"
          "define G\nbody\nendef\n"
          "t: ; echo inline\n"
          "u: dep\n\t@echo one \\\n\t  two\n\n\t-echo three\nV = 2\n")
    variables, recipes, oneshell = parse(mk)
    assert {k: v.value for k, v in variables.items()} == {
        "A": "1", "B": "two words", "C": "x", "D": None, "E": None, "F": "0", "G": None, "V": "2"}
    assert variables["F"].exported and not oneshell
    texts = [[mk[s:e] for s, e in r.lines] for r in recipes]
    assert texts == [[" echo inline"], ["\t@echo one \\", "\t  two"], ["\t-echo three"]]


def test_make_variable_is_resolved_to_its_assignment():
    mk = ("KV ?= fp4_mx_block16\n"
          "export HIP_VISIBLE_DEVICES = 0\n"
          "serve:\n"
          "\tpython3 -m sglang.launch_server --model-path m --kv-cache-dtype $(KV)\n")
    (launch,) = scan_makefile(mk, "Makefile").launches
    v = dtype(launch)
    assert at(mk, v.span) == "fp4_mx_block16" and at(mk, v.use) == "$(KV)"
    assert not v.shared
    assert ("platform", "rocm") in [(h.kind, h.value) for h in launch.hints]
    got, rep = lint(mk)
    assert got == [("KV402", "$(KV)\n")]
    fixed, _ = apply_edits(mk, list(rep.findings[0].fix.edits))
    assert fixed.startswith("KV ?= fp8_e4m3\n")


def test_variable_used_by_two_recipes_is_shared():
    mk = ("KV = nvfp4\nexport HIP_VISIBLE_DEVICES = 0\n"
          "a:\n\tpython3 -m sglang.launch_server --kv-cache-dtype $(KV)\n"
          "b:\n\techo ${KV} > kv.txt\n")
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert dtype(launch).shared
    _, rep = lint(mk)
    assert rep.findings[0].fix.applicability == "unsafe"


def test_unknown_make_references_are_unknown():
    mk = ("serve:\n\tpython3 -m sglang.launch_server --kv-cache-dtype $(shell cat kv) --tp $(TP) --x $@\n"
          "TP := 2\nTP := 4\n")
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert [v.text for v in launch.argv] == ["--kv-cache-dtype", None, "--tp", None, "--x", None]


def test_dollar_dollar_continuations_and_prefixes():
    mk = ("serve:\n"
          "\t@-KV=nvfp4; HIP_VISIBLE_DEVICES=0 python3 -m sglang.launch_server \\\n"
          "\t    --kv-cache-dtype $$KV --model-path $${MODEL:-m}\n")
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert [v.text for v in launch.argv] == ["--kv-cache-dtype", "nvfp4", "--model-path", "m"]
    assert at(mk, dtype(launch).span) == "nvfp4"
    got, _ = lint(mk)
    # the use as written: make's $$ (the shell's $) is two characters for one, reported whole, never edited
    assert got == [("KV402", "$$KV --mod")]


def test_value_with_words_is_pasted_like_make_does():
    mk = ('ARGS = --model-path m --kv-cache-dtype nvfp4 --device rocm\n'
          'serve:\n\tpython3 -m sglang.launch_server $(ARGS) --port 1\n')
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert [v.text for v in launch.argv][:6] == ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--device",
                                                 "rocm"]
    assert at(mk, dtype(launch).span) == "nvfp4"


def test_oneshell_joins_a_rules_lines():
    mk = ".ONESHELL:\nserve:\n\tKV=nvfp4\n\tpython3 -m sglang.launch_server --kv-cache-dtype $$KV\n"
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert at(mk, dtype(launch).span) == "nvfp4"
    # without .ONESHELL each line is its own shell: KV is not set on the second
    (launch,) = scan_makefile(mk.replace(".ONESHELL:\n", ""), "Makefile").launches
    assert dtype(launch).text is None


def test_target_specific_variable_is_not_the_global_value():
    mk = "KV = nvfp4\nfp8: KV = fp8_e4m3\nfp8 serve:\n\tpython3 -m sglang.launch_server --kv-cache-dtype $(KV)\n"
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert dtype(launch).text is None


def test_recipe_prefix():
    mk = ".RECIPEPREFIX = >\nserve:\n> python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    (launch,) = scan_makefile(mk, "Makefile").launches
    assert at(mk, dtype(launch).span) == "nvfp4"


def test_lines_outside_rules_are_not_recipes():
    mk = "\tpython3 -m sglang.launch_server --kv-cache-dtype nvfp4\nX = 1\n"
    assert scan_makefile(mk, "Makefile").launches == []


@pytest.mark.parametrize("mk", ["", "\\", "a:\n\t\\", "define X\n", "$(", "a: b: c\n\t$(\n", "x\x00y:\n\tsglang"])
def test_odd_makefiles(mk):
    assert isinstance(scan_makefile(mk, "Makefile").launches, list)


@given(st.text(max_size=300))
def test_never_raises(text):
    res = scan_makefile("serve:\n\tsglang serve " + text, "Makefile")
    assert isinstance(res.errors, list)


def test_suppression_comment_above_a_recipe_line():
    mk = ("export HIP_VISIBLE_DEVICES = 0\nserve:\n"
          "\t# kv4lint: disable=KV402\n"
          "\tpython3 -m sglang.launch_server --kv-cache-dtype nvfp4\n"
          "\tpython3 -m sglang.launch_server --kv-cache-dtype fp4_mx_block16\n")
    got, _ = lint(mk)
    assert got == [("KV402", "fp4_mx_blo")]
