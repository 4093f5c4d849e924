"""A hostile-input corpus, generated into temporary directories (never committed as files).

Each :class:`Case` builds one kind of hostile input into a tree that also holds a
good shell launch and a good Python launch, both of which must still be reported
whatever the hostile input does to the run.  Used by ``test_hostile_inputs.py``
(the CLI and flake8 over every case) and ``test_interrupt.py`` (big trees).

Why these inputs: kv4lint runs unattended in CI and pre-commit on repositories
it has never seen; one crash or hang there blocks a whole team.
"""

from __future__ import annotations

import codecs
import os
import random
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

PY = sys.executable  # the project venv's interpreter (kv4lint installed editable)
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
LAUNCH = f"python -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype fp4_e2m1"
FIXED_LAUNCH = LAUNCH.replace("fp4_e2m1", "fp8_e4m3")

# fp4_e2m1 is not a --kv-cache-dtype choice in SGLang 0.5.21+ (KV406, whatever the GPU): the
# verdict does not depend on the machine, and its fix (fp8_e4m3) is safe.
GOOD_SH = f"#!/bin/bash\n{LAUNCH} --port 30000\n"
GOOD_SH_FIXED = GOOD_SH.replace("fp4_e2m1", "fp8_e4m3")
GOOD_PY = ("import subprocess\n\n"
           "subprocess.run([\"python\", \"-m\", \"sglang.launch_server\", \"--model-path\", "
           f"\"{LLAMA}\", \"--kv-cache-dtype\", \"fp4_e2m1\"])\n")
GOOD_PY_FIXED = GOOD_PY.replace("fp4_e2m1", "fp8_e4m3")
CODE = "KV406"

# The target every run uses (the CLI; flake8 reads no kv4lint config: its run states the release as an option).
CLI_TARGET = ["--isolated", "--sglang-version", "0.5.23"]

TIMEOUT = 120  # seconds: generous for a loaded CI machine; a hang is what this bounds, not speed


@dataclass
class Case:
    name: str
    build: Callable[[Path], None]
    # Paths (relative to the tree) that must get a per-file message in `kv4lint check`'s output
    # (they could not be read, decoded or parsed, or were skipped for their size).
    messages: list[str] = field(default_factory=list)
    # Paths (relative) holding launches that must be reported too (with CODE), and, after
    # `kv4lint fix`, hold these exact bytes.
    reported: dict[str, bytes] = field(default_factory=dict)
    # Extra command-line paths (relative to the tree) named explicitly, besides the tree.
    explicit: list[str] = field(default_factory=list)
    # flake8 cannot run on this case for reasons of its own (documented per case), not kv4lint's.
    flake8: bool = True
    # Paths flake8 itself (its core, before any plugin runs) crashes on: excluded from the flake8 run.
    flake8_exclude: list[str] = field(default_factory=list)


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def good_tree(root: Path) -> Path:
    """The good files every hostile tree holds."""
    root.mkdir(parents=True, exist_ok=True)
    write(root / "good.sh", GOOD_SH)
    write(root / "good.py", GOOD_PY)
    return root


def snapshot(root: Path, *, follow: bool = False) -> dict[str, tuple]:
    """Every entry under ``root``: kind, mode and (regular files) bytes; symlinks by target."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(st.st_mode), f.read())
            else:
                out[rel] = ("other", stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return out


# ---------------------------------------------------------------------------
# The cases


def _empty(root: Path) -> None:
    for name in ("empty.sh", "empty.py", "empty.yaml", "empty.ipynb", "empty.md", "Dockerfile", "empty.mk"):
        write(root / name, b"")


def _binary(root: Path) -> None:
    rnd = random.Random(9)
    blob = bytes(rnd.randrange(256) for _ in range(64 * 1024))
    # The prefilter's needle inside binary noise, with NUL bytes around it.
    write(root / "blob.sh", b"#!/bin/bash\n" + blob[:1000] + b"\0sglang\0" + LAUNCH.encode() + b"\0" + blob)
    write(root / "nul.py", GOOD_PY.encode().replace(b"import subprocess", b"import sub\0process"))
    write(root / "model.bin.sh", blob + b"sglang.launch_server --kv-cache-dtype nvfp4")
    write(root / "nul_late.sh", b"#!/bin/sh\n" + LAUNCH.encode() + b"\n" + b"x" * 9000 + b"\0\0\0\n")


def _invalid_utf8(root: Path) -> None:
    write(root / "bad_utf8.sh", f"#!/bin/bash\n# caf\xe9\n{LAUNCH}\n".encode("latin-1"))
    write(root / "bad_utf8.py", b"# \xff\xfe\xfd\n" + GOOD_PY.encode())
    write(root / "truncated.sh", f"#!/bin/bash\n{LAUNCH} # \u00e9".encode()[:-1] + b"\n")


def _utf16(root: Path) -> None:
    text = f"#!/bin/bash\r\n{LAUNCH}\r\n"
    write(root / "wide.sh", codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    write(root / "wide_be.py", codecs.BOM_UTF16_BE + GOOD_PY.encode("utf-16-be"))


_UTF16_REPORTED = {
    "wide.sh": codecs.BOM_UTF16_LE + f"#!/bin/bash\r\n{FIXED_LAUNCH}\r\n".encode("utf-16-le"),
}


def _latin1(root: Path) -> None:
    src = "# -*- coding: latin-1 -*-\n# Caf\u00e9 cr\u00e8me\n" + GOOD_PY
    write(root / "latin.py", src.encode("latin-1"))


def _line_endings(root: Path) -> None:
    write(root / "crlf.sh", f"#!/bin/bash\r\n{LAUNCH} \\\r\n  --port 1\r\n")
    # CR alone ends no line for a shell: the whole file is one comment line, there is no launch.
    write(root / "cr.sh", f"#!/bin/bash\r{LAUNCH}\r")
    # For Python a lone CR is a line end (universal newlines).
    write(root / "cr.py", GOOD_PY.replace("\n", "\r"))
    write(root / "mixed.sh", f"#!/bin/bash\necho a\r\n{LAUNCH}\necho b\r\n")


_ENDINGS_REPORTED = {
    "crlf.sh": f"#!/bin/bash\r\n{FIXED_LAUNCH} \\\r\n  --port 1\r\n".encode(),
}


def _big(root: Path) -> None:
    # 50 MB of shell with a bad launch at the end: skipped with a notice (the limit is 10 MB).
    line = b"echo sglang kv-cache padding padding padding padding padding padding padding\n"
    n = 50 * 1024 * 1024 // len(line) + 1
    with open(root / "big.sh", "wb") as f:
        f.write(b"#!/bin/bash\n")
        f.write(line * n)
        f.write(LAUNCH.encode() + b"\n")


def _many_lines(root: Path) -> None:
    body = "".join(f"echo line {i}\n" for i in range(100_000))
    write(root / "long.sh", f"#!/bin/bash\n{body}{LAUNCH}\n")


def _deep_python(root: Path) -> None:
    n = 5000
    # Each with a launch, so that the prefilter hands it to the Python frontend.
    write(root / "deep_brackets.py", GOOD_PY + "x = " + "[" * n + "1" + "]" * n + "\n")
    write(root / "deep_parens.py", "x = " + "(" * n + "1" + ")" * n + "\n" + GOOD_PY)
    write(root / "deep_calls.py", GOOD_PY + "x = " + "f(" * n + "'--kv-cache-dtype'" + ")" * n + "\n")
    write(root / "deep_unclosed.py", GOOD_PY + "x = " + "{" * n + "\n")
    ops = " + ".join(["'a'"] * 20000)
    write(root / "long_binop.py", f"{GOOD_PY}x = {ops}\n")
    write(root / "deep_indent.py", GOOD_PY + "".join(" " * i + "if x:\n" for i in range(99)) + " " * 99 + "pass\n")
    write(root / "deep_launch.py", "import subprocess\nsubprocess.run(" + "(" * 3000 + "[\"python\", \"-m\", "
                                   "\"sglang.launch_server\", \"--kv-cache-dtype\", \"fp4_e2m1\"]" + ")" * 3000 + ")\n")


def _deep_shell(root: Path) -> None:
    n = 2000
    kv = " --kv-cache-dtype fp4_e2m1"
    write(root / "deep_subst.sh", "#!/bin/bash\nX=" + "$( echo " * n + "sglang" + kv + " )" * n + "\n")
    write(root / "deep_backticks.sh", f"#!/bin/bash\nX=`echo `echo sglang{kv}``\n" + "( " * 3000 + "true"
          + " )" * 3000 + "\n")
    write(root / "deep_launch.sh", "#!/bin/bash\n" + "$( " * 300 + LAUNCH + " )" * 300 + "\n")
    write(root / "deep_bash_c.sh", "#!/bin/bash\nbash -c '" + ("bash -c \\\"" * 200) + LAUNCH + "\\\"" * 200 + "'\n")
    write(root / "deep_braces.sh", "#!/bin/bash\n" + "{ " * 3000 + LAUNCH + "; }" * 3000 + "\n")
    write(root / "deep_if.sh", "#!/bin/bash\n" + "if true; then\n" * 3000 + LAUNCH + "\n" + "fi\n" * 3000)
    write(root / "deep_vars.sh", "#!/bin/bash\nV0=fp4_e2m1\n" + "".join(f"V{i}=$V{i - 1}\n" for i in range(1, 3000))
          + LAUNCH.replace("fp4_e2m1", "$V2999") + "\n")


def _depth_limits(root: Path) -> None:
    # Issue 28 item 7: a launch just past a depth limit is a file error, never a clean file.
    write(root / "subst30.sh", "#!/bin/bash\nX=" + "$( " * 30 + LAUNCH + " )" * 30 + "\n")
    write(root / "quotes20.md", "".join("> " * 20 + ln + "\n" for ln in ("```bash", LAUNCH, "```")))
    write(root / "lists10.md", "".join("  " * i + "- step\n" for i in range(10))
          + "".join("  " * 10 + ln + "\n" for ln in ("```bash", LAUNCH, "```")))
    # Python: the dtype through 45 names, and through names assigned in both branches of 30 ifs (2 ** 30
    # readings before the bound on expressions); a flow list past the YAML parser's separator bound.
    chain = ["import os", "import subprocess", 'kv0 = "fp4_e2m1"'] + [f"kv{i} = kv{i - 1}" for i in range(1, 45)]
    forks = ["import os", "import subprocess", 'kv0 = "fp4_e2m1"'] + [
        ln for i in range(1, 30) for ln in (f'if os.environ.get("S{i}"):', f"    kv{i} = kv{i - 1}", "else:",
                                            f"    kv{i} = kv{i - 1}")]
    for name, lines, last in (("aliases45.py", chain, "kv44"), ("forks30.py", forks, "kv29")):
        write(root / name, "\n".join(lines) + f'\nsubprocess.run(["python", "-m", "sglang.launch_server", '
                           f'"--kv-cache-dtype", {last}])\n')
    write(root / "list.yaml", "command: [python3, -m, sglang.launch_server, --kv-cache-dtype, fp4_e2m1, "
          + ", ".join(["--port, '1'"] * 60_000) + "]\n")


# The value is the anchor's, shared with every alias: reported, never edited from the launch (unsafe fix).
ALIAS_YAML = ("x-kv: &kv fp4_e2m1\nservices:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
              "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, *kv]\n")


def _lookalikes(root: Path) -> None:
    # Issue 28 items 4 and 9: a YAML alias inside a flow sequence; a disable-file "comment" inside a string.
    write(root / "alias.yaml", ALIAS_YAML)
    write(root / "help.py", 'import subprocess\nHELP = """\n# kv4lint: disable-file=KV406\n"""\n'
                            + GOOD_PY.split("\n", 2)[2])
    write(root / "usage.sh", f"#!/bin/bash\ncat <<'EOF'\n# kv4lint: disable-file=KV406\nEOF\n{LAUNCH}\n")


def _unterminated(root: Path) -> None:
    write(root / "unterm_dq.sh", f"#!/bin/bash\n{LAUNCH} --served-model-name \"oops\n")
    write(root / "unterm_sq.sh", f"#!/bin/bash\necho 'sglang\n{LAUNCH}\n")
    write(root / "unterm_heredoc.sh", f"#!/bin/bash\ncat <<EOF > run.sh\n{LAUNCH}\n")
    write(root / "unterm_heredoc2.sh", f"#!/bin/bash\nbash <<'END'\n{LAUNCH}\nEN\n")
    write(root / "unterm_subst.sh", f"#!/bin/bash\nX=$({LAUNCH}\n")
    write(root / "unterm.py", GOOD_PY + "x = 'unterminated\n")
    write(root / "unterm_triple.py", GOOD_PY + 'x = """never closed\n')
    write(root / "unterm.yaml", "cmd: \"python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n")
    write(root / "unterm.md", "```bash\n" + LAUNCH + "\n")  # fence never closed


# Python that does not parse, each with a launch after it (so that the prefilter lets it through).
_SYNTAX_ERRORS = {
    "syn_indent.py": "def f():\nreturn 1\n",
    "syn_unindent.py": "if x:\n        a = 1\n    b = 2\n",
    "syn_tab.py": "if x:\n\ta = 1\n        b = 2\n",
    "syn_paren.py": "f(1, 2\n",
    "syn_close.py": "f(1, 2]]\n",
    "syn_print2.py": "print 'hello'\n",
    "syn_except2.py": "try:\n    pass\nexcept Exception, e:\n    pass\n",
    "syn_fstring.py": "x = f'{'\n",
    "syn_fstring_nested.py": "x = f'{f\"{1 +}\"}'\n",
    "syn_assign.py": "f() = 1\n",
    "syn_keyword.py": "class = 1\n",
    "syn_walrus.py": "x := 1\n",
    "syn_await.py": "def f():\n    await x\n",  # a compile-time error, not a parse error
    "syn_return.py": "return 1\n",  # ditto
    "syn_star.py": "*a = 1\n",
    "syn_lambda.py": "x = lambda x=1, y: x\n",
    "syn_decorator.py": "@\ndef f(): pass\n",
    "syn_bytes.py": "x = b'\u00e9'\n",
    "syn_escape.py": "x = '\\N{NOT A NAME}'\n",
    "syn_number.py": "x = 1__0 + 0x + 09\n",
    "syn_continuation.py": "x = 1 + \\\n\n",
    "syn_eof.py": "class A:\n",
    "syn_match.py": "match x:\n    case 1 if:\n        pass\n",
    "syn_soft_kw.py": "type X[ = int\n",
    "syn_nonlocal.py": "nonlocal x\n",  # compile-time
    "syn_dup_arg.py": "def f(a, a): pass\n",  # compile-time
    "syn_stray_dedent.py": "    x = 1\n",
    "syn_ellipsis_call.py": "f(**)\n",
    "syn_generator.py": "f(x for x in y, 1)\n",
    "syn_global_annot.py": "def f():\n    global x\n    x: int = 1\n",
    "syn_null_cookie.py": "# coding: no-such-codec\n",
}


def _python_syntax(root: Path) -> None:
    for name, bad in _SYNTAX_ERRORS.items():
        if name == "syn_null_cookie.py":
            write(root / "syntax" / name, bad + GOOD_PY)
        else:
            write(root / "syntax" / name, GOOD_PY + bad)
    write(root / "syntax" / "launch_then_error.py", GOOD_PY + "def broken(:\n")
    write(root / "syntax" / "error_then_launch.py", "def broken(:\n" + GOOD_PY)


def parse_failures() -> list[str]:
    """The Python files above that neither CPython's parser nor libcst accepts: each must get a message."""
    import ast

    import libcst

    out = []
    for name, bad in _SYNTAX_ERRORS.items():
        src = bad + GOOD_PY if name == "syn_null_cookie.py" else GOOD_PY + bad
        fails = 0
        try:
            ast.parse(src.encode())
        except (SyntaxError, ValueError):
            fails += 1
        try:
            libcst.parse_module(src.encode())
        except Exception:
            fails += 1
        if fails == 2:
            out.append(f"syntax/{name}")
    return out + ["syntax/launch_then_error.py", "syntax/error_then_launch.py"]


def _half_shell(root: Path) -> None:
    write(root / "half.sh", f"#!/bin/bash\nif then fi }}}} ;; esac done (( ]] \n{LAUNCH}\ncase in esac\n"
                            "function { ( ; } )\n")
    write(root / "half2.sh", f"#!/bin/bash\nfor ((;;;;)) do\n  {LAUNCH}\n<<<<< >>>>> &&& |||\n")
    rnd = random.Random(3)
    noise = "".join(rnd.choice("(){}[]$`'\"\\;|&<>#\n ") for _ in range(20000))
    write(root / "garbage.sh", "#!/bin/bash\n" + noise + "\n" + LAUNCH + "\n")
    write(root / "zsh.zsh", f"#!/bin/zsh\nfor f (*.txt) {{ echo $f }}\narr=(${{(s/,/)x}})\n{LAUNCH}\n")


def _symlinks(root: Path) -> None:
    (root / "loops").mkdir()
    os.symlink("self.sh", root / "loops" / "self.sh")
    os.symlink("b.sh", root / "loops" / "a.sh")
    os.symlink("a.sh", root / "loops" / "b.sh")
    os.symlink("..", root / "loops" / "up")  # a directory loop back to the tree
    os.symlink(".", root / "loops" / "here")
    os.symlink("nowhere.sh", root / "dangling.sh")
    os.symlink("/nonexistent/dir/x.py", root / "dangling.py")
    os.symlink("missing_dir", root / "dangling_dir")


def _devices(root: Path) -> None:
    os.mkfifo(root / "fifo.sh")
    os.mkfifo(root / "fifo.py")
    os.symlink("/dev/null", root / "null.sh")  # out of the tree too
    os.symlink("/dev/zero", root / "zero.yaml")  # reading it never ends
    os.symlink("/dev/urandom", root / "random.py")
    if os.geteuid() == 0:
        # A character device in the tree (as root): /dev/zero's numbers.
        os.mknod(root / "zero_dev.sh", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    import socket

    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(root / "sock.sh"))
    except OSError:
        pass
    finally:
        s.close()


def _names(root: Path) -> None:
    write(root / "dir with spaces" / "launch me.sh", GOOD_SH)
    write(root / "n\u00f6n-\u00e4scii \u540d\u524d" / "\u00e9t\u00e9 \U0001f680.sh", GOOD_SH)
    write(root / "-rf.sh", GOOD_SH)  # looks like an option
    write(root / "new\nline.sh", GOOD_SH)
    write(root / "tab\tand;semicolon$(touch pwned).sh", GOOD_SH)


_NAME_REPORTED = {
    "dir with spaces/launch me.sh": GOOD_SH_FIXED.encode(),
    "n\u00f6n-\u00e4scii \u540d\u524d/\u00e9t\u00e9 \U0001f680.sh": GOOD_SH_FIXED.encode(),
    "-rf.sh": GOOD_SH_FIXED.encode(),
    "tab\tand;semicolon$(touch pwned).sh": GOOD_SH_FIXED.encode(),
}


def _many_args(root: Path) -> None:
    args = " ".join(f"--arg-{i} v{i}" for i in range(10_000))
    write(root / "many_args.sh", f"#!/bin/bash\n{LAUNCH} {args}\n")
    cont = " \\\n".join(f"  --opt-{i}=x{i}" for i in range(10_000))
    write(root / "many_lines_args.sh", f"#!/bin/bash\n{LAUNCH} \\\n{cont}\n")
    pyargs = ", ".join(f'"--a{i}", "{i}"' for i in range(10_000))
    write(root / "many_args.py", "import subprocess\nsubprocess.run([\"python\", \"-m\", \"sglang.launch_server\", "
                                 f"\"--kv-cache-dtype\", \"fp4_e2m1\", {pyargs}])\n")


_MANY_REPORTED = {
    # 10,000 options no release has: SGLang's parser refuses the launch (KV408), so the KV406 fix cannot
    # produce an accepted launch, is unsafe, and kv4lint fix leaves the file as it is (issue 22).
    "many_args.sh": f"#!/bin/bash\n{LAUNCH} ".encode() + b" ".join(
        f"--arg-{i} v{i}".encode() for i in range(10_000)) + b"\n",
}


def _metachars(root: Path) -> None:
    marker = root.parent / "PWNED"
    evil = f"$(touch {marker})"
    write(root / "meta.sh", f"#!/bin/bash\n{LAUNCH} --served-model-name \"a;b|c&d>e<f{evil}`touch {marker}`\" "
                            f"--chat-template 'x\ny\nz' --tokenizer-path $'a\\nb'\n")
    write(root / "meta.py", "import os\nos.system(\"python -m sglang.launch_server --kv-cache-dtype fp4_e2m1 "
                            f"--served-model-name '$(touch {marker})'; touch {marker}\")\n")
    write(root / "newline_value.sh", f"#!/bin/bash\nDTYPE='fp4_e2m1\n'\n{LAUNCH.replace('fp4_e2m1', '$DTYPE')}\n")
    write(root / "glob.sh", f"#!/bin/bash\n{LAUNCH} --model-path /models/* --host {{a,b}} ~root/x\n")


def _exponential(root: Path) -> None:
    # Loop-free doubling: 2**64 characters if evaluated naively.  The launch must still be reported,
    # quickly (the doubled value is only a served model name).
    write(root / "double.sh", "#!/bin/bash\nA=x\n" + "A=$A$A\n" * 64 + f"{LAUNCH} --served-model-name $A\n")
    write(root / "double.py", "import subprocess\nx = 'a'\n" + "x = x + x\n" * 64 + "args = ['--x']\n"
          + "args = args + args\n" * 64 + "subprocess.run([\"python\", \"-m\", \"sglang.launch_server\", "
          "\"--kv-cache-dtype\", \"fp4_e2m1\", \"--served-model-name\", x])\n")


_EXPONENTIAL_REPORTED = {"double.sh": None, "double.py": None}


def _expansion_bombs(root: Path) -> None:
    write(root / "brace.sh", f"#!/bin/bash\n{LAUNCH} --port {{1..100000000}} " + "{a..z}" * 8 + "\n")
    write(root / "loops.sh", "#!/bin/bash\n" + "".join(f"for v{i} in 1 2 3 4 5 6 7 8 9; do " for i in range(8))
          + f"{LAUNCH} --port $v0$v1$v2$v3$v4$v5$v6$v7" + "; done" * 8 + "\n")
    write(root / "selfref.sh", f"#!/bin/bash\nA='$B'\nB='$A'\nf() {{ f; }}\nf\ng() {{ h; }}\nh() {{ g; }}\ng\n"
                               f"{LAUNCH} --served-model-name \"$A\"\n")
    write(root / "Makefile", "A = $(A) x\nB = $(B)$(B)\nC = $(D)\nD = $(C)\nX := $(shell yes)\n\nserve:\n"
                             f"\t{LAUNCH} --served-model-name $(A) $(B) $(C)\n")
    # A YAML "billion laughs": 9 levels of 9 aliases (387 million leaves if expanded).
    bomb = 'x-a: &a ["--kv-cache-dtype", "nvfp4"]\n' + "".join(
        f"x-{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9))
    write(root / "compose.yaml", bomb + "services:\n  s:\n    image: lmsysorg/sglang\n"
          "    command: [\"python3\", \"-m\", "
          "\"sglang.launch_server\", \"--kv-cache-dtype\", \"fp4_e2m1\"]\n    environment: *j\n    labels: *j\n")
    write(root / "recursive_heredoc.sh", "#!/bin/bash\n" + "bash <<'E0'\n" + "".join(
        f"bash <<'E{i}'\n" for i in range(1, 50)) + LAUNCH + "\n" + "".join(f"E{i}\n" for i in reversed(range(50))))


_BOMBS_REPORTED = {"brace.sh": None, "selfref.sh": None, "compose.yaml": None}


def _notebooks_odd(root: Path) -> None:
    import json

    nb_launch = "!" + LAUNCH
    write(root / "bad_json.ipynb", '{"cells": [{"cell_type": "code", "source": "' + nb_launch + '"')
    write(root / "v3.ipynb", json.dumps({"nbformat": 3, "worksheets": [{"cells": [
        {"cell_type": "code", "input": nb_launch, "language": "python"}]}]}))
    write(root / "source_str.ipynb", json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": nb_launch, "metadata": {}, "outputs": [], "execution_count": None}]}))
    cells = [{"cell_type": "code", "source": 5}, None, [], {"source": [nb_launch]}, "x"]
    write(root / "weird.ipynb", json.dumps({"nbformat": 4, "cells": cells}))
    write(root / "not_object.ipynb", json.dumps([nb_launch]))
    write(root / "huge_output.ipynb", json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": [nb_launch], "metadata": {}, "execution_count": 1,
         "outputs": [{"output_type": "stream", "name": "stdout",
                      "text": ["sglang --kv-cache-dtype nvfp4\n"] * 50000}]}]}))


_NOTEBOOKS_REPORTED = {"source_str.ipynb": None, "huge_output.ipynb": None}


def _many_launches(root: Path) -> None:
    # 1000 each: fixing is quadratic in the fixes of one file (bug R8: 2000 took > 120 s on a loaded
    # machine); this size keeps a wide margin under the hang bound while R8 is open.
    write(root / "many.sh", "#!/bin/bash\n" + f"{LAUNCH}\n" * 1000)
    write(root / "fences.md", f"```bash\n{LAUNCH}\n```\n" * 1000)


def _issue28(root: Path) -> None:
    """Valid shapes that were syntax errors, IPython interpolation, and files past the cost limits."""
    import json

    write(root / "backquote.sh", f"#!/bin/bash\n{LAUNCH} \\\n  `# the port` --port 1 \\\n  `# done`\n")
    write(root / "heredoc_first.sh", f"#!/bin/bash\n<<EOT bash\n{LAUNCH}\nEOT\n")
    write(root / "alternative.sh", f'#!/bin/bash\necho "${{MODEL:+(model: $MODEL)}}"\n{LAUNCH}\n')
    write(root / "fence.md", f"# Serve\n\n```bash\n{LAUNCH} \\\n```\n")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["import sys\n", "kv = 'nvfp4'\n",
                    "!{sys.executable} -m sglang.launch_server --kv-cache-dtype fp4_e2m1 --port {port}\n"]}]}
    write(root / "interp.ipynb", json.dumps(nb))
    # Past the cost limits (docs/security.md): a file error naming the limit, quickly.
    write(root / "words.sh", f"#!/bin/bash\n{LAUNCH}" + " --port 1" * 30_000 + "\n")
    write(root / "items.py", "import subprocess\nsubprocess.run([\"python\", \"-m\", \"sglang.launch_server\", "
                             "\"--kv-cache-dtype\", \"fp4_e2m1\", " + "\"--port\", \"1\", " * 6_000 + "])\n")


_ISSUE28_REPORTED = {
    "backquote.sh": f"#!/bin/bash\n{FIXED_LAUNCH} \\\n  `# the port` --port 1 \\\n  `# done`\n".encode(),
    "heredoc_first.sh": f"#!/bin/bash\n<<EOT bash\n{FIXED_LAUNCH}\nEOT\n".encode(),
    "alternative.sh": f'#!/bin/bash\necho "${{MODEL:+(model: $MODEL)}}"\n{FIXED_LAUNCH}\n'.encode(),
    "fence.md": f"# Serve\n\n```bash\n{FIXED_LAUNCH} \\\n```\n".encode(),
    "interp.ipynb": None,
}


# Issue 34, item 1: a bound on paths, selections or loop items is never a pass. Each launch's fp4_e2m1 is set on
# one path among more than the old caps allowed (six independent knobs: 64 combinations; 17 presets; 17 loop
# items; Python's 32 selections and 16 loop items); each was read as an unknown value and the run exited 0.
_KNOBS = [("BIG", "--tp 8"), ("PUBLIC", "--host 0.0.0.0"), ("PROD", "--log-level warning"),
          ("BUSY", "--max-running-requests 256"), ("MEM", "--mem-fraction-static 0.9")]


def _many_paths(root: Path) -> None:
    knobs = "".join(f'if [ "${name}" = 1 ]; then ARGS="$ARGS {opt}"; fi\n' for name, opt in _KNOBS)
    base = f"python -m sglang.launch_server --model-path {LLAMA}"
    write(root / "knobs.sh", "#!/bin/bash\nARGS=\"\"\n" + knobs
          + 'if [ "$FP4" = 1 ]; then ARGS="$ARGS --kv-cache-dtype fp4_e2m1"; fi\n' + f"{base} $ARGS\n")
    write(root / "knobs_kv.sh", "#!/bin/bash\nARGS=\"\"\nKV=fp8_e4m3\n" + knobs
          + 'if [ "$FP4" = 1 ]; then KV=fp4_e2m1; fi\n' + f"{base} --kv-cache-dtype $KV $ARGS\n")
    presets = "".join(f"  p{i}) KV=fp8_e4m3; TP={i % 8 + 1} ;;\n" for i in range(16))
    write(root / "presets.sh", f'#!/bin/bash\ncase "$PRESET" in\n{presets}  fp4) KV=fp4_e2m1; TP=1 ;;\nesac\n'
          f"{base} --kv-cache-dtype $KV --tp $TP\n")
    items = " ".join(["fp8_e4m3"] * 16 + ["fp4_e2m1"])
    write(root / "loop.sh", f"#!/bin/bash\nfor kv in {items}; do\n  {base} --kv-cache-dtype $kv\ndone\n")
    other = ["1", "127.0.0.1", "info", "64", "0.8"]  # each knob's value when it is off
    py_knobs = "".join(f'if os.environ.get("{name}") == "1":\n    opt{k} = "{opt.split()[1]}"\nelse:\n'
                       f'    opt{k} = "{other[k]}"\n' for k, (name, opt) in enumerate(_KNOBS))
    write(root / "knobs.py", "import os\nimport subprocess\n\nkv = 'fp8_e4m3'\n" + py_knobs
          + 'if os.environ.get("FP4") == "1":\n    kv = "fp4_e2m1"\n'
          "subprocess.run([\"python\", \"-m\", \"sglang.launch_server\", \"--kv-cache-dtype\", kv, "
          + ", ".join(f'"{opt.split()[0]}", opt{k}' for k, (_, opt) in enumerate(_KNOBS)) + "])\n")
    py_items = ", ".join(["'fp8_e4m3'"] * 16 + ["'fp4_e2m1'"])
    write(root / "loop.py", f"import subprocess\n\nfor kv in [{py_items}]:\n"
          "    subprocess.run([\"python\", \"-m\", \"sglang.launch_server\", \"--kv-cache-dtype\", kv])\n")


_MANY_PATHS_REPORTED = {name: None for name in ("knobs.sh", "knobs_kv.sh", "presets.sh", "loop.sh", "knobs.py",
                                                "loop.py")}


def _elif_chains(root: Path) -> None:
    """Issue 34, item 8: a valid if/elif chain of 480 arms was an internal error, of 450 a pass."""
    from large_inputs import elif_chain

    write(root / "elif480.py", elif_chain(480, "fp4_e2m1"))
    write(root / "elif450.py", elif_chain(450, "fp4_e2m1"))
    write(root / "elif1200.py", elif_chain(1200, "fp4_e2m1"))  # past the bound: a file error naming it


def _short_lines_10mb(root: Path) -> None:
    """Issue 34, item 6: 10 MB of short lines naming sglang in a comment cost 28 s and 2.3 GB, then exited 0."""
    from large_inputs import short_lines

    write(root / "short_lines.sh", short_lines(870_000))  # 10.3 MB: just under the 10 MiB file size limit


def _explicit(root: Path) -> None:
    os.mkfifo(root / "named_fifo.sh")
    os.symlink("gone.sh", root / "named_dangling.sh")


# ---------------------------------------------------------------------------
# Issue 34, round two: values written with escapes, merge-key chains, JSON Lines, names, encodings

_ESCAPED_DTYPE = "fp4_e2m\\u0031"  # fp4_e2m1 with its last character written as a JSON (TOML) escape


def _escaped_values(root: Path) -> None:
    """Item 2: the dtype written with an escape of the outer format.  The decoded value is judged (KV406); the
    fix would replace the raw text by the decoded length (``fp8_e4m3u0031``), so it is not offered."""
    cmd = LAUNCH.replace("fp4_e2m1", _ESCAPED_DTYPE)
    write(root / "tasks.json", '{"tasks": [{"label": "serve", "shell": "%s"}]}\n' % cmd)
    write(root / "lines.jsonl", '{"shell": "%s"}\n' % cmd)
    write(root / "inspect.json", '{"Config": {"Image": "lmsysorg/sglang:v0.5.23", "Cmd": ["python3", "-m", '
          '"sglang.launch_server", "--kv-cache-dtype", "%s"]}}\n' % _ESCAPED_DTYPE)
    write(root / "compose.yaml", "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command: \"%s\"\n"
          % LAUNCH.replace("fp4_e2m1", "fp4_e2m\\x31"))
    write(root / "compose_list.yaml", "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command: [python3, "
          "-m, sglang.launch_server, --kv-cache-dtype, \"%s\"]\n" % _ESCAPED_DTYPE)
    write(root / "pyproject.toml", '[tool.poe.tasks]\nserve = "%s"\nwide = "%s"\n'
          % (cmd, LAUNCH.replace("fp4_e2m1", "fp4_e2m\\U00000031")))
    write(root / "Dockerfile", 'FROM lmsysorg/sglang:v0.5.23\nCMD ["python3", "-m", "sglang.launch_server", '
          '"--kv-cache-dtype", "%s"]\n' % _ESCAPED_DTYPE)
    import json

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["!" + LAUNCH + "\n"]}]}
    write(root / "nb.ipynb", json.dumps(nb).replace("fp4_e2m1", _ESCAPED_DTYPE))


_ESCAPED_NAMES = ("tasks.json", "lines.jsonl", "inspect.json", "compose.yaml", "compose_list.yaml", "pyproject.toml",
                  "Dockerfile", "nb.ipynb")


def _merge_chains(root: Path) -> None:
    """Item 3: ``<<: [*a, *a]`` chained 30 deep (2 ** 30 merges when expanded naively: it took 25 s at 1 KB), and
    a chain whose merged pairs grow with every link past the bound (a file error naming it)."""
    doubling = ["x-a0: &a0 {image: lmsysorg/sglang:v0.5.23}"] + [
        f"x-a{i}: &a{i}\n  <<: [*a{i - 1}, *a{i - 1}]\n  k{i}: v" for i in range(1, 30)]
    write(root / "compose.yaml", "\n".join(doubling) + "\nservices:\n  s:\n    <<: *a29\n    command: "
          + LAUNCH + "\n")
    growing = ["x-a0: &a0 {k0: v}"] + [f"x-a{i}: &a{i} {{<<: *a{i - 1}, k{i}: v}}" for i in range(1, 600)]
    write(root / "growing.yaml", "\n".join(growing) + "\nservices:\n  s:\n    <<: *a599\n    command: "
          + LAUNCH + "\n")


def _json_lines(root: Path) -> None:
    """Item 4: 40,000 JSON Lines (1.9 MB), a launch on every 100th: each value built a line index over the whole
    file (20,000 lines took 53 s)."""
    rows = [f'{{"id": {i}, "shell": "{LAUNCH}"}}' if i % 100 == 0 else f'{{"id": {i}, "cmd": "echo sglang {i}"}}'
            for i in range(40_000)]
    write(root / "runs.jsonl", "\n".join(rows) + "\n")


_WIDE_JSON = '{"tasks": [{"label": "serve", "shell": "%s"}]}\n'
_WIDE_YAML = "services:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    command: %s\n"
_WIDE = {"tasks.json": (_WIDE_JSON, "utf-16-le"), "compose.yaml": (_WIDE_YAML, "utf-16-le"),
         "compose_be.yaml": (_WIDE_YAML, "utf-16-be"), "run.sh": ("#!/bin/bash\n%s\n", "utf-16-be"),
         "tasks32.json": (_WIDE_JSON, "utf-32-le")}


def _utf16_without_bom(root: Path) -> None:
    """Item 11: UTF-16 (and UTF-32) text without a byte order mark decodes as UTF-8 to characters separated by
    NULs, where no option is found: it passed as clean. Told by its NUL bytes and read in its encoding (fixed
    in it, still without a mark); one that does not decode in the encoding its NULs say is a file error."""
    for name, (template, enc) in _WIDE.items():
        write(root / name, (template % LAUNCH).encode(enc))
    write(root / "broken.json", (_WIDE_JSON % LAUNCH).encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate


_WIDE_REPORTED = {name: (template % FIXED_LAUNCH).encode(enc) for name, (template, enc) in _WIDE.items()}


def _many_blocks(root: Path) -> None:
    """Launches past the bound of one file, in blocks each under the bound of one text: 5,001 fences, 5,001
    Dockerfile stages (2 MB of stages took 30 s), and launches of 60,000 words in four fences. A file error
    naming the limit, quickly; a file just under the bound is read whole."""
    write(root / "fences.md", f"```bash\n{LAUNCH}\n```\n" * 5001)
    write(root / "under.md", f"```bash\n{LAUNCH}\n```\n" * 4999)
    write(root / "Dockerfile", "".join(f"FROM lmsysorg/sglang:v0.5.23 AS s{i}\nCMD {LAUNCH} --port {i}\n"
                                       for i in range(5001)))
    write(root / "words.md", f"```bash\n{LAUNCH}{' --port 1' * 15_000}\n```\n" * 4)


CASES: list[Case] = [
    Case("empty", _empty),
    Case("binary", _binary, messages=["blob.sh", "nul.py"]),
    Case("invalid_utf8", _invalid_utf8, messages=["bad_utf8.sh", "bad_utf8.py", "truncated.sh"]),
    Case("utf16_bom", _utf16, reported=_UTF16_REPORTED),
    Case("latin1_cookie", _latin1, reported={"latin.py": ("# -*- coding: latin-1 -*-\n# Caf\u00e9 cr\u00e8me\n"
                                                          + GOOD_PY_FIXED).encode("latin-1")}),
    Case("line_endings", _line_endings, reported={
        **_ENDINGS_REPORTED,
        "cr.py": GOOD_PY_FIXED.replace("\n", "\r").encode(),
        "mixed.sh": f"#!/bin/bash\necho a\r\n{FIXED_LAUNCH}\necho b\r\n".encode(),
    }),
    Case("big_50mb", _big, messages=["big.sh"]),
    Case("100k_lines", _many_lines, reported={"long.sh": None}),
    # flake8's core builds the file's AST for pyflakes and dies with RecursionError "during ast
    # construction" on 20000 chained additions, before any plugin runs (flake8 7.x; CPython's ast).
    Case("deep_python", _deep_python, messages=["deep_unclosed.py"], flake8_exclude=["long_binop.py"]),
    Case("deep_shell", _deep_shell, messages=["deep_subst.sh", "deep_launch.sh", "deep_braces.sh", "deep_if.sh"]),
    Case("depth_limits", _depth_limits, messages=["subst30.sh", "quotes20.md", "lists10.md", "aliases45.py",
                                                  "forks30.py", "list.yaml"]),
    Case("lookalikes", _lookalikes, reported={"alias.yaml": ALIAS_YAML.encode(), "help.py": None, "usage.sh": None}),
    Case("unterminated", _unterminated, messages=["unterm_dq.sh", "unterm_heredoc.sh", "unterm.py",
                                                  "unterm_triple.py"]),
    Case("python_syntax_errors", _python_syntax, messages=parse_failures()),
    Case("half_recovered_shell", _half_shell, messages=["half.sh"]),
    Case("symlinks", _symlinks),
    # flake8 itself opens every *.py it is given: a FIFO named *.py would block flake8 before any plugin
    # runs, so flake8 is not run on this case (kv4lint's own CLI must not block).
    Case("fifo_and_devices", _devices, flake8=False),
    Case("names", _names, reported=_NAME_REPORTED),
    Case("10000_args", _many_args, reported=_MANY_REPORTED),
    Case("metacharacters", _metachars, reported={"meta.sh": None}),
    # flake8 opens every path named on its command line, whatever its name: a FIFO blocks it in its core.
    Case("exponential", _exponential, reported=_EXPONENTIAL_REPORTED),
    Case("expansion_bombs", _expansion_bombs, reported=_BOMBS_REPORTED),
    Case("notebooks_odd", _notebooks_odd, messages=["bad_json.ipynb", "not_object.ipynb"],
         reported=_NOTEBOOKS_REPORTED),
    Case("many_launches", _many_launches, reported={"many.sh": None, "fences.md": None}),
    Case("issue28_shapes", _issue28, reported=_ISSUE28_REPORTED, messages=["words.sh", "items.py"]),
    Case("many_paths", _many_paths, reported=_MANY_PATHS_REPORTED),
    # pyflakes (flake8's core, before any plugin) recurses once per elif and dies with RecursionError on these.
    Case("elif_chains", _elif_chains, reported={"elif480.py": None, "elif450.py": None}, messages=["elif1200.py"],
         flake8_exclude=["elif480.py", "elif450.py", "elif1200.py"]),
    Case("short_lines_10mb", _short_lines_10mb),
    Case("explicit_paths", _explicit, flake8=False,
         explicit=["named_fifo.sh", "named_dangling.sh", "does_not_exist.sh"],
         messages=["named_fifo.sh", "named_dangling.sh", "does_not_exist.sh"]),
    # None: the file after `kv4lint fix` is the file with fp4_e2m1 fixed, which these files spell only with an escape:
    # they must be left as they are.
    Case("escaped_values", _escaped_values, reported={name: None for name in _ESCAPED_NAMES}),
    Case("merge_chains", _merge_chains, reported={"compose.yaml": None}, messages=["growing.yaml"]),
    Case("json_lines", _json_lines, reported={"runs.jsonl": None}),
    Case("utf16_without_bom", _utf16_without_bom, reported=_WIDE_REPORTED, messages=["broken.json"]),
    Case("many_blocks", _many_blocks, reported={"under.md": None}, messages=["fences.md", "Dockerfile", "words.md"]),
]


def build_case(case: Case, root: Path) -> Path:
    good_tree(root)
    case.build(root)
    return root


# ---------------------------------------------------------------------------
# Running kv4lint and flake8


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.pop("PYTHONOPTIMIZE", None)
    e["NO_COLOR"] = "1"
    e["PYTHONFAULTHANDLER"] = "1"  # a hang killed by the timeout leaves its stack
    return e


MEMORY_LIMIT = 3 * 1024 ** 3  # bytes of address space: an exponential blow-up fails here, not the machine


def limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(args: list[str], cwd: Path | None = None, timeout: float = TIMEOUT, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("preexec_fn", limit_memory)
    return subprocess.run(args, cwd=cwd, capture_output=True, timeout=timeout, env=env(), stdin=subprocess.DEVNULL,
                          **kw)


def kv4lint(*args: str, cwd: Path | None = None, timeout: float = TIMEOUT, **kw) -> subprocess.CompletedProcess:
    return run([PY, "-m", "kv4lint", *args], cwd=cwd, timeout=timeout, **kw)


def flake8(*args: str, cwd: Path | None = None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return run([PY, "-m", "flake8", "--select", "KV4,E9", "--jobs", "1", "--kv4-sglang-version", "0.5.23", *args],
               cwd=cwd, timeout=timeout)


def text(cp: subprocess.CompletedProcess) -> tuple[str, str]:
    return (cp.stdout.decode("utf-8", "replace"), cp.stderr.decode("utf-8", "replace"))
