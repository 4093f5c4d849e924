"""Valid shell is never a syntax error (issue 28, item 2).

Each input is a shape real scripts use that ``bash -n`` accepts but
tree-sitter-bash cannot parse: the launch in it must be judged (a KV401 for
nvfp4 with a backend SGLang refuses for it), with no file error, at the span
the user wrote.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kv4lint.cli import main

TARGET = ["--isolated", "--no-cache", "--sglang-version", "0.5.19", "--gpu", "b200", "--model-attention", "mla"]
LAUNCH = "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4 --attention-backend triton"
CODE = "KV401"


def _where(text: str) -> str:
    """line:column of the (first) nvfp4, where the finding must point."""
    i = text.index("nvfp4")
    return f"{text.count(chr(10), 0, i) + 1}:{i - text.rfind(chr(10), 0, i)}"


CASES = {
    # A comment in backquotes between continued arguments (a common way to annotate them).
    "backquote_comment.sh": ("#!/bin/bash\npython -m sglang.launch_server --model-path m \\\n"
                             "  `# the FP4 cache` --kv-cache-dtype nvfp4 \\\n"
                             "  `# backend` --attention-backend triton\n"),
    # A here-document redirection before the command.
    "heredoc_first.sh": ("#!/bin/bash\n<<EOT bash\n" + LAUNCH + "\nEOT\n"),
    "heredoc_first_launch.sh": ("#!/bin/bash\n<<'EOT' " + LAUNCH + " --port 1\nhello\nEOT\necho done\n"),
    # A bare here-document (a block comment some scripts use).
    "heredoc_alone.sh": ("#!/bin/bash\n<<'COMMENT'\nnot run\nCOMMENT\n" + LAUNCH + "\n"),
    # Docker's documented form.
    "Dockerfile": ("FROM lmsysorg/sglang:v0.5.19\nRUN <<EOT bash\nset -e\n" + LAUNCH + "\nEOT\n"),
    # An alternative value with parentheses and an expansion inside it.
    "alternative.sh": ('#!/bin/bash\necho "starting ${MODEL:+(model: $MODEL)}"\n' + LAUNCH + "\n"),
    "alternative_arg.sh": ('#!/bin/bash\n' + LAUNCH + ' --served-model-name "x${TAG:+(tag: $TAG)}"\n'),
    # Parentheses in an array subscript inside arithmetic (av/harbor's harbor.sh, a Levenshtein distance).
    "subscript_parens.sh": ("#!/bin/bash\nd[0]=1\nn=2\nx=$((d[(0 * (n + 1) + 0)] + 1))\necho \"$x\"\n" + LAUNCH + "\n"),
    # A substring whose offset is a variable (the same script).
    "substring_var.sh": ('#!/bin/bash\nkey=HARBOR_X\nn=7\nshort="${key:$n}"\necho "${key:$n:1}"\n' + LAUNCH + "\n"),
}
# A continued line just before a Markdown fence ends: bash reads the ``\`` at the end as nothing.
MARKDOWN = ("# Serve\n\n```bash\n" + LAUNCH + " \\\n```\n")


def _check(tmp_path, capsys, name: str, text: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text)
    rc = main(["check", *TARGET, str(path)])
    out = capsys.readouterr().out
    return rc, out


@pytest.mark.parametrize("name", sorted(CASES))
def test_valid_shell_is_judged(tmp_path, capsys, name):
    text = CASES[name]
    where = _where(text)
    if name.endswith(".sh") and shutil.which("bash"):
        cp = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert cp.returncode == 0, f"not valid bash: {cp.stderr}"
    rc, out = _check(tmp_path, capsys, name, text)
    assert "error:" not in out, out
    assert f"{name}:{where}: {CODE} " in out, out
    assert rc == 1


def test_continued_line_before_a_fence_end_is_judged(tmp_path, capsys):
    text = MARKDOWN
    where = _where(text)
    if shutil.which("bash"):
        body = text.split("```bash\n", 1)[1].split("```", 1)[0]
        assert subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True).returncode == 0
    rc, out = _check(tmp_path, capsys, "README.md", text)
    assert "error:" not in out, out
    assert f"README.md:{where}: {CODE} " in out, out


def test_a_real_syntax_error_is_still_reported(tmp_path, capsys):
    rc, out = _check(tmp_path, capsys, "broken.sh", "#!/bin/bash\n" + LAUNCH + ' "unterminated\n')
    assert rc == 1 and "broken.sh:2: error: shell syntax error" in out, out


def test_the_fix_edits_what_the_user_wrote(tmp_path, capsys):
    """A launch moved for the parser (redirection first) is fixed at its own characters."""
    text = CASES["heredoc_first_launch.sh"]
    path = tmp_path / "run.sh"
    path.write_text(text)
    main(["fix", *TARGET, str(path)])
    capsys.readouterr()
    assert path.read_text() == text.replace("nvfp4", "fp8_e4m3")


def test_removing_an_option_after_a_backquote_comment_removes_its_value_too(tmp_path, capsys):
    """The option takes the blanks after it (a comment stands before it), its value those before it: the
    two removals overlap and are applied as one, never leaving the value behind as a stray argument."""
    text = ("#!/bin/bash\npython -m sglang.launch_server --model-path m \\\n  --kv-cache-dtype fp8_e4m3 \\\n"
            "  `# dequant` --prefill-kv-cache-dequant-dtype fp8_e4m3 \\\n  `# port` --port 1\n")
    path = tmp_path / "run.sh"
    path.write_text(text)
    main(["fix", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "b200", str(path)])
    capsys.readouterr()
    assert path.read_text() == text.replace(" --prefill-kv-cache-dequant-dtype fp8_e4m3", " ")
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
