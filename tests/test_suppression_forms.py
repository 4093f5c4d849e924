"""Every documented suppression comment works in every format, on the line and on the line above."""

from __future__ import annotations

import json
import shlex

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kv4lint.base.settings import Settings
from kv4lint.pipeline.runner import lint_text
from test_wrapped_launches import FORMATS, LAUNCH

S23 = Settings(sglang_version="0.5.23")
CODE = "KV406"

# The forms README/docs document (docs/configuration.md, docs/rules/*.md, docs/fixing.md), spelled the ways
# people write them.
ON_THE_LINE = ["# kv4lint: disable=KV406", "# kv4lint: disable = KV406", "# kv4lint:disable=KV406",
               "# kv4lint: disable=KV401, KV406", "# kv4lint: disable=kv406", "# kv4lint: disable=KV4",
               "# kv4lint: disable", "# KV4LINT: DISABLE=KV406"]
ABOVE = ON_THE_LINE
NOQA = ["# noqa: KV406", "# noqa:KV406", "# noqa: E501,KV406", "# noqa: E501 KV406", "# NOQA: KV406", "# noqa"]
FILE = ["# kv4lint: disable-file=KV406", "# kv4lint: disable-file = KV406", "# kv4lint: disable-file",
        "# KV4LINT: DISABLE-FILE=KV406", "# kv4lint: Disable-File=KV406"]
NOT_SUPPRESSING = ["# kv4lint: disable=KV401", "# kv4lint: disable-file=KV401", "# noqa: KV401",
                   "# kv4lint: enable=KV406"]

PYTHON_FORMATS = {"subprocess argv", "os.system", "notebook"}
# A Dockerfile comment is a whole line: after an exec-form CMD a "#" makes it a shell-form command.
LINE_END_FORMATS = [f for f in FORMATS if f != "Dockerfile CMD"]


def lint(fmt: str, edit) -> list[str]:
    """The codes found in the format's text after ``edit(lines, k)`` (``k``: the launch's line) changed it."""
    path, language, build = FORMATS[fmt]
    if language == "notebook":
        lines = ["!" + shlex.join(LAUNCH)]
        edit(lines, 0)
        text = nbformat.writes(new_notebook(cells=[new_code_cell("\n".join(lines))]))
    else:
        lines = build(LAUNCH).split("\n")
        k = next(i for i, ln in enumerate(lines) if "sglang.launch_server" in ln)
        edit(lines, k)
        text = "\n".join(lines)
    rep = lint_text(path, text, S23, language=language)
    assert rep.errors == []
    return [f.code for f in rep.findings]


def at_end(comment):
    def edit(lines, k):
        lines[k] += "  " + comment
    return edit


def above(comment):
    def edit(lines, k):
        line = lines[k]
        lines.insert(k, line[: len(line) - len(line.lstrip(" \t"))] + comment)
    return edit


def first_line(comment):
    def edit(lines, k):
        lines.insert(0, comment)
    return edit


def nothing(lines, k):
    pass


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_launch_is_found_without_comments(fmt):
    assert lint(fmt, nothing) == [CODE]


@pytest.mark.parametrize("fmt", LINE_END_FORMATS)
@pytest.mark.parametrize("comment", ON_THE_LINE)
def test_disable_at_the_end_of_the_line(fmt, comment):
    assert lint(fmt, at_end(comment)) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("comment", ABOVE)
def test_disable_on_the_line_above(fmt, comment):
    assert lint(fmt, above(comment)) == []


@pytest.mark.parametrize("fmt", sorted(PYTHON_FORMATS))
@pytest.mark.parametrize("comment", NOQA)
def test_noqa_on_the_line_in_python(fmt, comment):
    assert lint(fmt, at_end(comment)) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("comment", FILE)
def test_disable_file(fmt, comment):
    if fmt == "Markdown":
        comment = "<!-- " + comment[2:] + " -->"
    assert lint(fmt, first_line(comment)) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("comment", NOT_SUPPRESSING)
def test_other_codes_do_not_suppress(fmt, comment):
    if fmt in LINE_END_FORMATS:
        assert lint(fmt, at_end(comment)) == [CODE]
    assert lint(fmt, above(comment)) == [CODE]
    assert lint(fmt, first_line(comment)) == [CODE]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "notebook"])  # notebooks are left alone
@pytest.mark.parametrize("wrapped", [False, True])
def test_what_add_suppressions_writes_is_read_back(fmt, wrapped):
    from kv4lint.fixes.add_suppressions import suppress_text

    path, language, build = FORMATS[fmt]
    text = build((["srun", "-N1"] if wrapped else []) + LAUNCH)
    rep = lint_text(path, text, S23, language=language)
    assert [f.code for f in rep.findings] == [CODE]
    new, n, _ = suppress_text(text, rep.findings, language)
    assert n == 1 and new != text
    assert lint_text(path, new, S23, language=language).findings == []


# Suppressions are comments (issue 28 item 9): a line of a string, a here-document or a value that only looks
# like a disable-file comment silences nothing.  Each text holds one launch, reported (KV406).
_L = shlex.join(LAUNCH)
DIRECTIVE = "# kv4lint: disable-file=KV406"
IN_A_STRING = {
    # a script's help text, as argparse epilogs and templates are written
    "Python string": ("serve.py", "python", f'import subprocess\nEPILOG = """\n{DIRECTIVE}\n"""\n'
                                            f"subprocess.run({LAUNCH!r})\n"),
    "Python f-string": ("serve.py", "python", f'import subprocess\nNOTE = f"""{{1}}\n  {DIRECTIVE}\n"""\n'
                                              f"subprocess.run({LAUNCH!r})\n"),
    "shell string": ("serve.sh", "shell", f'#!/bin/bash\nUSAGE="usage: serve.sh\n{DIRECTIVE}\n"\n{_L}\n'),
    "shell here-document": ("serve.sh", "shell", f"#!/bin/bash\ncat > notes.txt <<'EOF'\n{DIRECTIVE}\nEOF\n{_L}\n"),
    "YAML block value": ("ci.yaml", "yaml", f"jobs:\n  serve:\n    steps:\n      - env:\n          NOTE: |\n"
                                            f"            {DIRECTIVE}\n        run: {_L}\n"),
    "Dockerfile here-document": ("Dockerfile", "dockerfile", f"FROM x\nCOPY <<EOF /etc/notes.txt\n{DIRECTIVE}\nEOF\n"
                                                             f"RUN {_L}\n"),
    "Markdown other fence": ("README.md", "markdown", f"```bash\n{DIRECTIVE}\necho old\n```\n\n```bash\n{_L}\n```\n"),
    "JSON other script": ("devcontainer.json", "json", '{"postCreateCommand": {"a": ["bash", "-c", '
                                                       + json.dumps(f"echo hi\n{DIRECTIVE}\n") + '], "b": '
                                                       + json.dumps(["bash", "-c", _L]) + "}}\n"),
    "notebook string": ("serve.ipynb", "notebook", nbformat.writes(new_notebook(cells=[
        new_code_cell(f'NOTE = """\n{DIRECTIVE}\n"""\n!{_L}')]))),
    "Makefile recipe string": ("Makefile", "makefile", f'serve:\n\techo "usage: make serve \\\n{DIRECTIVE}"\n'
                                                       f"\t{_L}\n"),
    "notebook %%bash here-document": ("serve.ipynb", "notebook", nbformat.writes(new_notebook(cells=[
        new_code_cell(f"%%bash\ncat > notes.txt <<'EOF'\n{DIRECTIVE}\nEOF\n"), new_code_cell(f"!{_L}")]))),
}


@pytest.mark.parametrize("name", IN_A_STRING)
def test_a_directive_in_a_string_silences_nothing(name):
    path, language, text = IN_A_STRING[name]
    rep = lint_text(path, text, S23, language=language)
    assert rep.errors == []
    assert [f.code for f in rep.findings] == [CODE]


# The twins: the same files with the directive as a comment of the file (or of the launch's own script).
AS_A_COMMENT = {
    "Python": ("serve.py", "python", f"import subprocess\n{DIRECTIVE}\nsubprocess.run({LAUNCH!r})\n"),
    "shell": ("serve.sh", "shell", f"#!/bin/bash\ncat > notes.txt <<'EOF'\nnotes\nEOF\n{DIRECTIVE}\n{_L}\n"),
    "YAML": ("ci.yaml", "yaml", f"{DIRECTIVE}\njobs:\n  serve:\n    steps:\n      - run: {_L}\n"),
    "Dockerfile": ("Dockerfile", "dockerfile", f"FROM x\n{DIRECTIVE}\nCOPY <<EOF /etc/notes.txt\nnotes\nEOF\n"
                                               f"RUN {_L}\n"),
    "Markdown fence of the launch": ("README.md", "markdown", f"```bash\n{DIRECTIVE}\n{_L}\n```\n"),
    "JSON script of the launch": ("devcontainer.json", "json", '{"postCreateCommand": '
                                  + json.dumps(["bash", "-c", f"{DIRECTIVE}\n{_L}"]) + "}\n"),
    "notebook comment": ("serve.ipynb", "notebook", nbformat.writes(new_notebook(cells=[
        new_code_cell(f"{DIRECTIVE}\n!{_L}")]))),
}


@pytest.mark.parametrize("name", AS_A_COMMENT)
def test_the_same_directive_as_a_comment_silences(name):
    path, language, text = AS_A_COMMENT[name]
    rep = lint_text(path, text, S23, language=language)
    assert rep.errors == []
    assert [f.code for f in rep.findings] == []
