"""``--diff`` output applies, and a file name never controls the terminal (issue 28, item 6).

The patch ``kv4lint fix --diff`` prints is checked with the real ``git apply``
in a temporary repository: whatever the file's line endings (a CR-only file is
one line for git) and whatever its name (git quotes a name with a tab, a
newline, a quote or a byte outside ASCII), it applies and gives the file
``kv4lint fix`` writes.  And no text format prints a control character of a
file name (or of a value) raw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from kv4lint.base.printable import printable
from kv4lint.cli import main
from kv4lint.pipeline.fix_engine import git_quote

TARGET = ["--isolated", "--no-cache", "--sglang-version", "0.5.23"]
LAUNCH = "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1 --port 1"
SCRIPT = f"#!/bin/bash\nset -e\n{LAUNCH}\necho done\n"
# Python reads CR, LF and CRLF as line ends (bash reads a CR-only file as one line: a comment).
PROGRAM = ("import subprocess\n\nsubprocess.run([\n    'python', '-m', 'sglang.launch_server',\n"
           "    '--kv-cache-dtype', 'fp4_e2m1',\n])\nprint('done')\n")

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
NAMES = {
    "plain": "serve.sh",
    "space": "dir with spaces/launch me.sh",
    "tab": "tab\there.sh",
    "newline": "new\nline.sh",
    "quote": 'say "hi".sh',
    "backslash": "back\\slash.sh",
    "escape": "evil\x1b[31mred\x1b[0m.sh",
    "non_ascii": "\u00e9t\u00e9 \U0001f680.sh",
}


def _git(cwd, *args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env, **kw)


def _diff(root, capsys) -> str:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        rc = main(["fix", "--diff", *TARGET, "."])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    assert rc == 1, (out, err)
    return out


def _round_trip(tmp_path, capsys, name: str, text: str) -> None:
    """The diff applies with git apply and gives what ``kv4lint fix`` writes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    assert _git(repo, "init", "-q").returncode == 0
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    patch = _diff(repo, capsys)
    assert patch.startswith("--- "), patch
    (tmp_path / "fix.patch").write_bytes(patch.encode("utf-8", "surrogateescape"))
    check = _git(repo, "apply", "--check", str(tmp_path / "fix.patch"))
    assert check.returncode == 0, (check.stderr.decode(errors="replace"), patch)
    assert _git(repo, "apply", str(tmp_path / "fix.patch")).returncode == 0
    assert path.read_bytes() == text.replace("fp4_e2m1", "fp8_e4m3").encode()


@needs_git
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_diff_applies_whatever_the_line_endings(tmp_path, capsys, ending):
    _round_trip(tmp_path, capsys, "serve.py", PROGRAM.replace("\n", ENDINGS[ending]))


@needs_git
def test_diff_of_a_cr_only_file_without_a_final_line_end_applies(tmp_path, capsys):
    _round_trip(tmp_path, capsys, "serve.py", PROGRAM.replace("\n", "\r").rstrip("\r"))


@needs_git
@pytest.mark.parametrize("kind", sorted(NAMES))
def test_diff_applies_whatever_the_name(tmp_path, capsys, kind):
    _round_trip(tmp_path, capsys, NAMES[kind], SCRIPT)


@pytest.mark.parametrize("name, quoted", [
    ("a/serve.sh", "a/serve.sh"),
    ("a/dir with spaces/x.sh", "a/dir with spaces/x.sh"),
    ("a/tab\there.sh", '"a/tab\\there.sh"'),
    ("a/new\nline.sh", '"a/new\\nline.sh"'),
    ('a/say "hi".sh', '"a/say \\"hi\\".sh"'),
    ("a/back\\slash.sh", '"a/back\\\\slash.sh"'),
    ("a/e\x1b.sh", '"a/e\\033.sh"'),
    ("a/\u00e9.sh", '"a/\\303\\251.sh"'),
])
def test_names_are_quoted_as_git_quotes_them(name, quoted):
    assert git_quote(name) == quoted


@needs_git
def test_git_quotes_names_the_same_way(tmp_path):
    """The quoting is git's own: compare with ``git diff`` on the same names."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    names = [n for n in NAMES.values() if "/" not in n]
    for n in names:
        (repo / n).write_text("a\n")
    _git(repo, "add", "-A")
    for n in names:
        (repo / n).write_text("b\n")
    out = _git(repo, "diff", "--no-color").stdout.decode("utf-8", "surrogateescape")
    for n in names:
        # (git ends a name holding a space with a tab, which git apply does not need)
        assert f"--- {git_quote('a/' + n)}\n" in out.replace("\t\n", "\n"), (n, out)


# ---------------------------------------------------------------------------
# Terminal control characters in names never reach the terminal raw

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\u202e.sh"


@pytest.mark.parametrize("fmt", ["text", "full", "concise", "github"])
def test_no_text_format_prints_a_control_character_of_a_name(tmp_path, capsys, fmt):
    (tmp_path / EVIL).write_text(SCRIPT)
    (tmp_path / "bad\x1b[31m.sh").write_text(f"#!/bin/bash\n{LAUNCH} 'unterminated\n")
    rc = main(["check", *TARGET, "--format", fmt, "--show-target", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 1
    for stream in (out, err):
        bad = [c for c in stream if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 or c == "\u202e"]
        assert not bad, (bad, stream)
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202e.sh" in out, out
    assert "bad\\x1b[31m.sh" in out, out


def test_show_fixes_and_diff_print_no_control_character(tmp_path, capsys):
    (tmp_path / EVIL).write_text(SCRIPT)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["fix", "--diff", *TARGET, "."])
        diff, err = capsys.readouterr()
        main(["fix", "--show-fixes", *TARGET, "."])
        out, err2 = capsys.readouterr()
    finally:
        os.chdir(cwd)
    headers = "".join(ln for ln in diff.splitlines(True) if ln.startswith(("---", "+++")))
    for stream in (headers, err, out, err2):
        assert "\x1b" not in stream and "\x07" not in stream, stream
    assert '--- "a/evil\\033]0;pwned\\a\\033[2J\\342\\200\\256.sh"' in diff


def test_json_keeps_the_real_name(tmp_path, capsys):
    """Machine formats are not escaped for a terminal: JSON escapes control characters itself."""
    (tmp_path / EVIL).write_text(SCRIPT)
    main(["check", *TARGET, "--format", "json", str(tmp_path)])
    out = capsys.readouterr().out
    assert "\x1b" not in out
    doc = json.loads(out)

    def strings(x):
        if isinstance(x, dict):
            x = list(x.values())
        if isinstance(x, list):
            return [s for v in x for s in strings(v)]
        return [x] if isinstance(x, str) else []
    assert any(s.endswith(EVIL) for s in strings(doc)), out


def test_printable():
    assert printable("a\tb\nc\x1b[0m\x7f\x85\udcff\u202e") == "a\\tb\\nc\\x1b[0m\\x7f\\x85\\xff\\u202e"
    assert printable("a\tb", keep="\t") == "a\tb"
    assert printable("plain \u00e9t\u00e9 \\ name") == "plain \u00e9t\u00e9 \\ name"
