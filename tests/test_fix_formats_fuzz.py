"""A fuzz pass over the fix engine in every format it fixes (issue 34): escaped, encoded and odd-spaced values.

Hypothesis draws one launch of a refused dtype (``fp4_e2m1``: not a choice of SGLang 0.5.23, a safe fix to
``fp8_e4m3`` on every GPU) written in one format -- a shell script, a shell string in Python, a YAML command
(a string or a list), a JSON task, JSON Lines, a ``pyproject.toml`` task, a notebook's ``!`` line, a Markdown
fence, a Dockerfile (shell or exec form), a Makefile recipe -- with odd blanks between the words (tabs, runs
of spaces, continuation lines where the format has them), shell quotes around the value (themselves written
with an escape of the outer format where it has one), line endings (LF, CRLF), and an encoding (UTF-8, with
a BOM, UTF-16 with a BOM); and the value itself spelled verbatim or with one character written as an escape
of the outer format (``\\u0034``, ``\\x34``).

The file goes through what ``kv4lint fix`` does (decode its bytes, fix, encode): a verbatim value comes back
exactly as the file with the value replaced, nothing else; a value with an escape is reported and left alone
(no edit can replace the raw text by the decoded length). Either way the fixed file parses as the original
did, ``check`` finds nothing fixable in it, and fixing it again changes nothing.

Example counts come from the Hypothesis profile (tests/conftest.py); a longer run is under the ``slow`` marker.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings, strategies as st

from kv4lint.base.settings import Settings
from kv4lint.base.source import decode
from kv4lint.pipeline.fix_engine import fix_text, fixable
from kv4lint.pipeline.runner import lint_text

OLD, NEW = "fp4_e2m1", "fp8_e4m3"
SETTINGS = Settings(sglang_version="0.5.23", cache_dir=None)
MODEL = "meta-llama/Llama-3.1-8B-Instruct"

# format -> (file name, language, how a character of the value may be written as an escape of the outer
# format, whether the command is shell text that may continue over lines with a backslash)
FORMATS = {
    "shell": ("serve.sh", "shell", (), True),
    "python": ("serve.py", "python", ("x", "u"), False),
    "yaml": ("compose.yaml", "yaml", ("x", "u"), False),
    "yaml-list": ("compose.yaml", "yaml", ("x", "u"), False),
    "json": ("tasks.json", "json", ("u",), False),
    "jsonl": ("runs.jsonl", "json", ("u",), False),
    "toml": ("pyproject.toml", "pyproject", ("u", "U"), False),
    "notebook": ("serve.ipynb", "notebook", ("u",), False),
    "markdown": ("README.md", "markdown", (), True),
    "dockerfile": ("Dockerfile", "dockerfile", (), True),
    "dockerfile-exec": ("Dockerfile", "dockerfile", ("u",), False),
    "makefile": ("Makefile", "makefile", (), True),
}


def _escape(ch: str, kind: str) -> str:
    return {"x": f"\\x{ord(ch):02x}", "u": f"\\u{ord(ch):04x}", "U": f"\\U{ord(ch):08x}"}[kind]


@dataclass
class Case:
    fmt: str
    path: str
    language: str
    data: bytes  # the file
    fixed: bytes  # what kv4lint fix must write (the file itself when the value is written with an escape)
    escaped: bool


@st.composite
def cases(draw, fmt: str | None = None) -> Case:
    fmt = fmt or draw(st.sampled_from(sorted(FORMATS)))
    path, language, escapes, continues = FORMATS[fmt]
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    # The value: verbatim, or one of its characters written as an escape of the outer format.
    escaped = bool(escapes) and draw(st.booleans())
    old_raw = OLD
    if escaped:
        # The first and the last character are where a map by each character's start went wrong (issue 34).
        k = draw(st.one_of(st.sampled_from([0, len(OLD) - 1]), st.integers(0, len(OLD) - 1)))
        old_raw = OLD[:k] + _escape(OLD[k], draw(st.sampled_from(escapes))) + OLD[k + 1:]
    seps = [" ", "  ", "\t", " \t "] + ([" \\" + eol + "    ", " \\" + eol + "\t"] if continues else [])
    if fmt in ("json", "jsonl", "notebook"):
        seps = [x.replace("\t", "\\t") for x in seps]  # no raw tab in a JSON string: its escape

    def sep() -> str:
        return draw(st.sampled_from(seps))

    if fmt in ("yaml-list", "dockerfile-exec"):
        words = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--kv-cache-dtype", None]
        if draw(st.booleans()):
            words += ["--port", "30000"]
        spaces = [draw(st.sampled_from([" ", "", "  "])) for _ in words]
        quoted = [f'"{w}"' if fmt == "dockerfile-exec" or draw(st.booleans()) else w for w in words if w]

        def command(value: str) -> str:
            items, it = [], iter(quoted)
            for w in words:
                items.append(f'"{value}"' if w is None else next(it))
            return "[" + ",".join(s + i for s, i in zip(spaces, items)) + "]"
    else:
        # Shell text. The value's quotes, written with the outer format's escape where a bare one would
        # end the string (JSON, TOML, YAML double quotes, a Python "..." literal).
        q = draw(st.sampled_from(["", "'", '"']))
        if q == '"' and fmt in ("json", "jsonl", "toml", "notebook", "yaml", "python"):
            q = '\\"'
        args = [f"--model-path{sep()}{MODEL}", "--kv-cache-dtype{s}{{V}}".format(s=sep())]
        if draw(st.booleans()):
            args.append(f"--port{sep()}{draw(st.integers(1024, 65535))}")
        order = draw(st.permutations(args))
        line = "python3 -m sglang.launch_server" + "".join(sep() + a for a in order)
        line = line.replace("{V}", q + "{V}" + q)

        def command(value: str) -> str:
            return line.replace("{V}", value)

    def file(value: str) -> str:
        c = command(value)
        if fmt == "shell":
            return f"#!/bin/bash{eol}set -e{eol}{c}{eol}"
        if fmt == "python":
            return f'import os{eol}{eol}os.system("{c}"){eol}'
        if fmt in ("yaml", "yaml-list"):
            v = f'"{c}"' if fmt == "yaml" else c
            return f"services:{eol}  s:{eol}    image: lmsysorg/sglang:v0.5.23{eol}    command: {v}{eol}"
        if fmt == "json":
            return f'{{"version": "2.0.0",{eol} "tasks": [{{"label": "serve", "shell": "{c}"}}]}}{eol}'
        if fmt == "jsonl":
            return f'{{"id": 1, "cmd": "echo sglang"}}{eol}{{"id": 2, "shell": "{c}"}}{eol}'
        if fmt == "toml":
            return f'[project]{eol}name = "x"{eol}{eol}[tool.poe.tasks]{eol}serve = "{c}"{eol}'
        if fmt == "notebook":
            return ('{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], '
                    f'"source": ["import os\\n", "!{c}\\n"]}}], "metadata": {{}}, "nbformat": 4, '
                    f'"nbformat_minor": 5}}{eol}')
        if fmt == "markdown":
            return f"# Serve{eol}{eol}```bash{eol}{c}{eol}```{eol}"
        if fmt in ("dockerfile", "dockerfile-exec"):
            return f"FROM lmsysorg/sglang:v0.5.23{eol}CMD {c}{eol}"
        return f"serve:{eol}\t{c}{eol}"  # makefile

    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
    data = file(old_raw).encode(encoding)
    fixed = data if escaped else file(NEW).encode(encoding)
    return Case(fmt, path, language, data, fixed, escaped)


def _fixable(findings) -> list:
    return [f for f in findings if fixable(f)]


def check(case: Case) -> None:
    text = decode(case.data, python=case.language == "python")
    before = lint_text(case.path, text.text, SETTINGS, case.language)
    assert before.errors == [], (case, before.errors)
    assert [f.code for f in before.findings] == ["KV406"], (case, before.findings)
    assert bool(_fixable(before.findings)) != case.escaped, (case, before.findings)
    tf = fix_text(case.path, text.text, SETTINGS, case.language, report=before)
    assert tf.errors == []
    out = text.encode(tf.new_text)
    assert out == case.fixed, (case.data, out, case.fixed)  # only the value changed, or nothing at all
    after = lint_text(case.path, tf.new_text, SETTINGS, case.language)
    assert after.errors == [] and after.launches == before.launches == 1, (case, after.errors)
    assert _fixable(after.findings) == []
    assert not fix_text(case.path, tf.new_text, SETTINGS, case.language).changed


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=5)
@given(data=st.data())
def test_fix_round_trips_in_each_format(fmt: str, data):
    """A few examples of each format, whatever the profile: every format is seen in the fast loop."""
    check(data.draw(cases(fmt)))


@given(cases())
def test_fix_round_trips_in_every_format(case: Case):
    check(case)


@pytest.mark.slow
@settings(max_examples=1000)
@given(cases())
def test_fix_round_trips_in_every_format_long(case: Case):
    check(case)
