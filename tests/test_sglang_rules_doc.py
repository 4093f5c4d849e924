"""docs/sglang-rules.md cites SGLang's own functions: each `file.py::function` it names exists in the wheels.

The document is kv4lint's account of SGLang's resolution steps (issue 29): a maintainer checks a statement
by opening the function it cites. A citation that names no function of any release's file is an error of the
document (a renamed hook, a typo), found here rather than by the next reader. Reads the wheels
(tests/conformance/wheels.py), hence marked ``conformance``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from conformance import wheels
from kv4lint.sglang.releases import WHEEL_RELEASES

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "sglang-rules.md"
# `sglang/srt/server_args.py::ServerArgs._handle_kv4_compatibility`, `overrides.py::_attention_backend_default`
CITATION = re.compile(r"`((?:[\w.]+/)*\w+\.py)::([\w.]+)`")


def citations() -> list[tuple[str, str]]:
    return sorted(set(CITATION.findall(DOC.read_text(encoding="utf-8"))))


@functools.lru_cache(maxsize=None)
def _defined(version: str, member: str) -> frozenset[str]:
    """``name`` and ``Class.name`` of every function and class a wheel's file defines (any depth of class)."""
    tree = ast.parse(wheels.read_source(version, member) or "")
    out: set[str] = set()

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body, prefix)
    walk(tree.body, "")
    return frozenset(out)


def _found(path: str, name: str) -> list[str]:
    """The releases whose file ending in ``path`` defines ``name`` (``Class.method`` or a bare function)."""
    suffix = path if path.startswith("sglang/") else "/" + path
    hits = []
    for version in WHEEL_RELEASES:
        for member in wheels.members(version):
            if member.endswith(suffix) and (name in _defined(version, member)
                                            or any(d.endswith("." + name) for d in _defined(version, member))):
                hits.append(version)
                break
    return hits


def test_the_document_cites_functions():
    assert len(citations()) >= 25


@pytest.mark.parametrize("path,name", citations(), ids=lambda x: x)
def test_citation_names_a_function_of_the_wheels(path, name):
    assert _found(path, name), f"docs/sglang-rules.md cites `{path}::{name}`, which no release {WHEEL_RELEASES[0]}-" \
                               f"{WHEEL_RELEASES[-1]} defines"
