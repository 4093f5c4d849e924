"""The fix engine (kv4lint.pipeline.fix_engine): rounds, rollback, overlaps, other files, the CLI's outputs and exit
codes.

Most tests run the engine over a tiny stand-in scanner (tests/fakefront.py) so that
they test the engine alone; tests through the real frontends are at the end.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import fakefront
from kv4lint.base.model import Edit, Finding, Fix, Severity, Span
from kv4lint.base.settings import Settings
from kv4lint.cli import main
from kv4lint.fixes import writer
from kv4lint.fixes.edits import apply_edits
from kv4lint.pipeline import fix_engine
from kv4lint.pipeline.runner import lint_text

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
HEAD = f"#!/bin/bash\npython -m sglang.launch_server --model-path {LLAMA}"
COL = len(HEAD.split("\n")[1]) + len(" --kv-cache-dtype ") + 1  # of the value after HEAD + " --kv-cache-dtype "


@pytest.fixture
def fake(monkeypatch):
    fakefront.install(monkeypatch)
    monkeypatch.setattr(fakefront, "SHARED", set())
    return fakefront


def write(path, text, mode=0o644, newline=""):
    path.write_bytes(text.encode("utf-8"))
    path.chmod(mode)
    return path


# The release is stated: a KV406 spelling fix is never safe while it is inferred (issue 22).
S23 = ["--sglang-version", "0.5.23"]


def run(*args):
    return main(["fix", "--isolated", "--jobs", "1", *S23, *map(str, args)])


# ---------------------------------------------------------------------------
# The loop


def test_fix_replaces_only_the_value(fake, tmp_path, capsys):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1 --port 30000\n")
    assert run(p) == 0
    assert p.read_text() == HEAD + " --kv-cache-dtype fp8_e4m3 --port 30000\n"
    err = capsys.readouterr().err
    assert "Fixed 1 finding in 1 file (0 remaining)." in err


def test_fix_dtype_option(fake, tmp_path):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert run("--fix-dtype", "fp8_e5m2", p) == 0
    assert p.read_text() == HEAD + " --kv-cache-dtype fp8_e5m2\n"


def test_inline_value(fake, tmp_path):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype=nvfp4 --port 1\n")
    assert run("--gpu", "h100", p) == 0
    assert p.read_text() == HEAD + " --kv-cache-dtype=fp8_e4m3 --port 1\n"


def test_removes_fp4_only_flag_on_its_own_continuation_line(fake, tmp_path):
    src = (HEAD + " \\\n  --kv-cache-dtype nvfp4 \\\n  --prefill-kv-cache-dequant-dtype nvfp4 \\\n  --port 30000\n")
    p = write(tmp_path / "serve.sh", src)
    assert run("--gpu", "rtx5090", p) == 0
    assert p.read_text() == HEAD + " \\\n  --kv-cache-dtype fp8_e4m3 \\\n  --port 30000\n"
    # The result passes every rule.
    rep = lint_text(str(p), p.read_text(), Settings(gpu="rtx5090"), "shell")
    assert rep.findings == [] and rep.errors == []


def test_fix_is_idempotent_and_leaves_nothing_fixable(fake, tmp_path):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype nvfp4 --prefill-kv-cache-dequant-dtype nvfp4\n")
    assert run("--gpu", "h100", p) == 0
    once = p.read_bytes()
    st = os.stat(p)
    assert run("--gpu", "h100", p) == 0
    assert p.read_bytes() == once
    assert os.stat(p).st_mtime_ns == st.st_mtime_ns  # not even rewritten
    rep = lint_text(str(p), p.read_text(), Settings(gpu="h100"), "shell")
    assert not [f for f in rep.findings if fix_engine.fixable(f, unsafe=True)]


def test_several_launches_in_one_file(fake, tmp_path):
    src = (HEAD + " --kv-cache-dtype fp4_e2m1\n" + "echo between\n" + HEAD.split("\n", 1)[1] +
           " --kv-cache-dtype fp4_e2m1 --port 2\n")
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 0
    assert p.read_text() == src.replace("fp4_e2m1", "fp8_e4m3")


def test_fix_text_in_memory(fake):
    text = HEAD + " --kv-cache-dtype fp4_e2m1\n"
    tf = fix_engine.fix_text("x.sh", text, Settings(sglang_version="0.5.23"), "shell")
    assert tf.changed and tf.new_text == text.replace("fp4_e2m1", "fp8_e4m3")
    assert [f.code for f in tf.fixed] == ["KV406"]
    assert tf.remaining == [] and tf.errors == []


# ---------------------------------------------------------------------------
# Overlapping fixes are taken whole, one of them per round


def _finding(code, edits, path="x.sh", applicability="safe"):
    return Finding(code, Severity.ERROR, "m", path, edits[0].span,
                   fix=Fix("d", edits=tuple(edits), applicability=applicability))


def test_select_takes_whole_fixes_without_overlap():
    text = "0123456789"
    a = _finding("KV401", [Edit(Span(2, 4), "ab"), Edit(Span(6, 7), "")])
    b = _finding("KV402", [Edit(Span(3, 5), "zz")])  # overlaps a's first edit
    c = _finding("KV403", [Edit(Span(8, 9), "c")])
    same = _finding("KV406", [Edit(Span(2, 4), "ab")])  # identical edit: shares a's, no conflict
    chosen, edits = fix_engine._select(text, [b, c, a, same], "x.sh", False, set(), False)
    assert chosen == [a, same, c]
    new, skipped = apply_edits(text, edits)
    assert skipped == [] and new == "01ab45789"[:4] + "45" + "7c9"


def test_select_skips_unsafe_unless_asked():
    text = "0123456789"
    u = _finding("KV401", [Edit(Span(1, 2), "x")], applicability="unsafe")
    assert fix_engine._select(text, [u], "x.sh", False, set(), False) == ([], [])
    assert fix_engine._select(text, [u], "x.sh", True, set(), False)[0] == [u]


def test_edits_in_another_file_are_not_local():
    f = _finding("KV401", [Edit(Span(1, 2), "x", path="cfg.yaml"), Edit(Span(5, 6), "", path=None)])
    assert fix_engine._local_edits(f, "x.sh") == [Edit(Span(5, 6), "", None)]
    assert fix_engine._external_edits(f, "x.sh") == [Edit(Span(1, 2), "x", "cfg.yaml")]


# ---------------------------------------------------------------------------
# Rollback: a fix that makes the file unparsable is not applied


def test_fix_that_breaks_parsing_is_rolled_back(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fake, "BREAK_ON", "fp8_e4m3")
    src = HEAD + " --kv-cache-dtype fp4_e2m1\n"
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1
    assert p.read_text() == src
    out = capsys.readouterr()
    assert f"the fix for KV406 at 2:{COL} (set --kv-cache-dtype fp8_e4m3) was rolled back" in out.out
    assert "syntax error near the fixed text" in out.out
    assert "Fixed 0 findings in 0 files (1 remaining)." in out.err


def test_only_the_breaking_fix_is_rolled_back(fake, tmp_path, capsys, monkeypatch):
    # Both fixes are tried together, the result breaks, so they are retried one at a time.
    monkeypatch.setattr(fake, "BREAK_ON", "fp8_e4m3 --port 666")
    line = HEAD.split("\n", 1)[1]
    src = f"{line} --kv-cache-dtype fp4_e2m1 --port 666\n{line} --kv-cache-dtype fp4_e2m1 --port 777\n"
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1
    assert p.read_text() == src.replace("fp4_e2m1 --port 777", "fp8_e4m3 --port 777")
    out = capsys.readouterr()
    assert out.out.count("rolled back") == 1 and f"KV406 at 1:{COL}" in out.out
    assert "Fixed 1 finding in 1 file (1 remaining)." in out.err


def test_preexisting_syntax_error_does_not_block_fixes(fake, tmp_path):
    src = 'echo "unterminated\n' + HEAD.split("\n", 1)[1] + " --kv-cache-dtype fp4_e2m1\n"
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1  # fixed, but the file could not be parsed in full: not everything was checked
    assert p.read_text() == src.replace("fp4_e2m1", "fp8_e4m3")


# ---------------------------------------------------------------------------
# Safe and unsafe, other files


def test_unsafe_fix_needs_unsafe_fixes(fake, tmp_path, capsys):
    fake.SHARED.add("fp4_e2m1")
    src = HEAD + " --kv-cache-dtype fp4_e2m1\n"
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1  # the finding remains
    assert p.read_text() == src
    assert "KV406" in capsys.readouterr().out
    assert run("--unsafe-fixes", p) == 0
    assert p.read_text() == src.replace("fp4_e2m1", "fp8_e4m3")


def test_edit_in_config_file_is_applied_to_that_file(fake, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("kv-cache-dtype: fp4_e2m1\nport: 30000\n")
    src = HEAD + " --config cfg.yaml\n"
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1  # a fix in another file is unsafe: not applied by default
    assert cfg.read_text() == "kv-cache-dtype: fp4_e2m1\nport: 30000\n"
    assert run("--unsafe-fixes", "--show-fixes", p) == 0
    assert cfg.read_text() == "kv-cache-dtype: fp8_e4m3\nport: 30000\n"
    assert p.read_text() == src


def test_config_edit_and_local_removal_together(fake, tmp_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("kv-cache-dtype: nvfp4\n")
    src = HEAD + " --config cfg.yaml --prefill-kv-cache-dequant-dtype nvfp4\n"
    p = write(tmp_path / "serve.sh", src)
    assert run("--unsafe-fixes", "--gpu", "rtx5090", p) == 0
    assert cfg.read_text() == "kv-cache-dtype: fp8_e4m3\n"
    assert p.read_text() == HEAD + " --config cfg.yaml\n"
    assert "Fixed 1 finding in 2 files (0 remaining)." in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Output and exit codes


def test_diff_writes_nothing(fake, tmp_path, capsys):
    src = "#!/bin/bash\r\npython -m sglang.launch_server --kv-cache-dtype fp4_e2m1"  # CRLF, no final newline
    p = write(tmp_path / "serve.sh", src)
    before = os.stat(p)
    code = run("--diff", p)
    assert code == 1  # there is a diff
    assert p.read_bytes() == src.encode() and os.stat(p).st_mtime_ns == before.st_mtime_ns
    out, err = capsys.readouterr()
    name = str(p).lstrip("/") if os.path.relpath(p).startswith("..") else os.path.relpath(p)
    assert out == (f"--- a/{name}\n+++ b/{name}\n@@ -1,2 +1,2 @@\n #!/bin/bash\r\n"
                   "-python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n\\ No newline at end of file\n"
                   "+python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n\\ No newline at end of file\n")
    assert "Would fix 1 finding in 1 file (0 remaining)." in err


def test_diff_applies_with_git_apply(fake, tmp_path, capsys, monkeypatch):
    src = "#!/bin/bash\npython -m sglang.launch_server \\\n  --kv-cache-dtype fp4_e2m1 \\\n  --port 1\n"
    p = write(tmp_path / "serve.sh", src)
    monkeypatch.chdir(tmp_path)
    assert run("--diff", "serve.sh") == 1
    patch = capsys.readouterr().out
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert p.read_text() == src.replace("fp4_e2m1", "fp8_e4m3")


def test_diff_nothing_to_fix_exits_zero(fake, tmp_path, capsys):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp8_e4m3\n")
    assert run("--diff", p) == 0
    assert capsys.readouterr().out == ""


def test_show_fixes_lists_what_was_fixed(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert run("--show-fixes", "serve.sh") == 0
    out = capsys.readouterr().out
    assert f"serve.sh:2:{COL}: KV406 fixed (set --kv-cache-dtype fp8_e4m3)" in out


def test_exit_non_zero_on_fix(fake, tmp_path):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert run("--exit-non-zero-on-fix", p) == 1
    assert "fp8_e4m3" in p.read_text()
    assert run("--exit-non-zero-on-fix", p) == 0  # nothing changed this time


def test_unfixable_findings_remain_exit_one(fake, tmp_path, capsys):
    # KV403 (mixed prefill/decode backends) is a warning without an automatic fix.
    src = (HEAD + " --kv-cache-dtype fp4_mx_block16 --prefill-attention-backend flashinfer"
           " --decode-attention-backend triton\n")
    p = write(tmp_path / "serve.sh", src)
    assert run(p) == 1
    assert p.read_text() == src
    assert "KV403" in capsys.readouterr().out


def test_check_fix_is_an_alias(fake, tmp_path):
    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert main(["check", "--fix", "--isolated", *S23, str(p)]) == 0
    assert "fp8_e4m3" in p.read_text()


def test_json_format_keeps_stdout_json(fake, tmp_path, capsys):
    import json

    p = write(tmp_path / "serve.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert run("--format", "json", "--show-fixes", p) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["findings"] == []
    assert "KV406 fixed" in err


# ---------------------------------------------------------------------------
# A file that cannot be written is an error; the other files are still fixed


def test_read_only_file_refused_others_fixed(fake, tmp_path, capsys):
    ro = write(tmp_path / "a.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n", mode=0o444)
    ok = write(tmp_path / "b.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n")
    assert run(tmp_path) == 1
    assert "fp4_e2m1" in ro.read_text()
    assert "fp8_e4m3" in ok.read_text()
    out, err = capsys.readouterr()
    assert f"{ro}: error: read-only; not rewritten" in out
    assert f"{ro}:2:{COL}: KV406" in out  # its finding is still reported
    assert "Fixed 1 finding in 1 file (1 remaining)." in err
    assert not [n for n in os.listdir(tmp_path) if n.endswith(writer.TEMP_SUFFIX)]


def test_file_changed_on_disk_is_refused(fake, tmp_path, capsys, monkeypatch):
    src = HEAD + " --kv-cache-dtype fp4_e2m1\n"
    p = write(tmp_path / "a.sh", src)

    def meddle(real):
        with open(real, "a") as f:
            f.write("# someone else's edit\n")

    monkeypatch.setattr(writer, "_before_replace", meddle)
    assert run(p) == 1
    assert p.read_text() == src + "# someone else's edit\n"
    assert "changed on disk since it was read" in capsys.readouterr().out
    assert not [n for n in os.listdir(tmp_path) if n.endswith(writer.TEMP_SUFFIX)]


def test_executable_bit_kept(fake, tmp_path):
    p = write(tmp_path / "a.sh", HEAD + " --kv-cache-dtype fp4_e2m1\n", mode=0o751)
    assert run(p) == 0
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o751


def test_crlf_bom_preserved_through_cli(fake, tmp_path):
    src = "\ufeff#!/bin/bash\r\npython -m sglang.launch_server \\\r\n  --kv-cache-dtype fp4_e2m1\r\n\r\n"
    p = tmp_path / "a.sh"
    p.write_bytes(src.encode("utf-8"))
    assert run(p) == 0
    assert p.read_bytes() == src.replace("fp4_e2m1", "fp8_e4m3").encode("utf-8")
    assert p.read_bytes().startswith(b"\xef\xbb\xbf")


def test_cli_subprocess(tmp_path):
    """The installed entry point runs the engine end to end (no fake: whatever frontends exist)."""
    p = tmp_path / "nothing.sh"
    p.write_text("echo hello\n")
    r = subprocess.run([sys.executable, "-m", "kv4lint", "fix", "--isolated", *S23, str(p)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "Fixed 0 findings in 0 files (0 remaining)." in r.stderr
    assert p.read_text() == "echo hello\n"


# ---------------------------------------------------------------------------
# Through the real shell frontend


SHELL_CASES = [
    # (options, before, after)
    ([], "python -m sglang.launch_server --model-path M --kv-cache-dtype fp4_e2m1 --port 1\n",
     "python -m sglang.launch_server --model-path M --kv-cache-dtype fp8_e4m3 --port 1\n"),
    (["--gpu", "h100"], "python3 -m sglang.launch_server --kv-cache-dtype=nvfp4 --port 1\n",
     "python3 -m sglang.launch_server --kv-cache-dtype=fp8_e4m3 --port 1\n"),
    (["--gpu", "h100"], "python3 -m sglang.launch_server --kv-cache-dtype 'nvfp4'\n",
     "python3 -m sglang.launch_server --kv-cache-dtype 'fp8_e4m3'\n"),
    (["--gpu", "h100"], 'python3 -m sglang.launch_server --kv-cache-dtype "nvfp4" &\n',
     'python3 -m sglang.launch_server --kv-cache-dtype "fp8_e4m3" &\n'),
    (["--gpu", "h100"], 'python3 -m sglang.launch_server "--kv-cache-dtype=nvfp4"\n',
     'python3 -m sglang.launch_server "--kv-cache-dtype=fp8_e4m3"\n'),
    (["--gpu", "h100"], "python3 -m sglang.launch_server --kv-cache nvfp4\n",
     "python3 -m sglang.launch_server --kv-cache fp8_e4m3\n"),
    (["--gpu", "rtx5090"],
     "python -m sglang.launch_server \\\n  --kv-cache-dtype nvfp4 \\\n  --prefill-kv-cache-dequant-dtype nvfp4 \\\n"
     "  --port 30000\n",
     "python -m sglang.launch_server \\\n  --kv-cache-dtype fp8_e4m3 \\\n  --port 30000\n"),
    (["--gpu", "rtx5090"],
     "python -m sglang.launch_server --kv-cache-dtype nvfp4 \\\n  --prefill-kv-cache-dequant-dtype nvfp4\n",
     "python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n"),
    (["--gpu", "rtx5090"],
     "python -m sglang.launch_server --kv-cache-dtype nvfp4 --prefill-kv-cache-dequant-dtype=nvfp4 "
     "--tp 2\n", "python -m sglang.launch_server --kv-cache-dtype fp8_e4m3 --tp 2\n"),
    ([], 'DTYPE="fp4_e2m1"\nnohup python -m sglang.launch_server --kv-cache-dtype "$DTYPE" > log 2>&1 &\n',
     'DTYPE="fp8_e4m3"\nnohup python -m sglang.launch_server --kv-cache-dtype "$DTYPE" > log 2>&1 &\n'),
    ([], "env CUDA_VISIBLE_DEVICES=0 timeout 600 sglang serve --model-path M --kv-cache-dtype fp4_e2m1\n",
     "env CUDA_VISIBLE_DEVICES=0 timeout 600 sglang serve --model-path M --kv-cache-dtype fp8_e4m3\n"),
]


@pytest.mark.parametrize("opts,before,after", SHELL_CASES, ids=[c[1].split("\n")[-2][-40:] for c in SHELL_CASES])
def test_shell_forms(tmp_path, opts, before, after):
    p = tmp_path / "serve.sh"
    p.write_bytes(before.encode())
    assert run(*opts, p) == 0
    assert p.read_bytes() == after.encode()
    assert run(*opts, p) == 0  # idempotent
    assert p.read_bytes() == after.encode()
    rep = lint_text(str(p), after, Settings(gpu=opts[1] if opts else None, sglang_version="0.5.23"), "shell")
    assert rep.errors == [] and not [f for f in rep.findings if fix_engine.fixable(f, unsafe=True)]


def test_shell_shared_variable_is_unsafe(tmp_path, capsys):
    src = ('DTYPE=fp4_e2m1\npython -m sglang.launch_server --kv-cache-dtype $DTYPE --port 1\n'
           'python -m sglang.launch_server --kv-cache-dtype $DTYPE --port 2\n')
    p = tmp_path / "serve.sh"
    p.write_text(src)
    assert run(p) == 1
    assert p.read_text() == src
    assert run("--unsafe-fixes", p) == 0
    assert p.read_text() == src.replace("DTYPE=fp4_e2m1", "DTYPE=fp8_e4m3")


def test_shell_fixtures_style_crlf_bom_executable(tmp_path):
    src = "\ufeff#!/bin/bash\r\nexec python3 -m sglang.launch_server \\\r\n  --kv-cache-dtype fp4_e2m1 \\\r\n  --port 1"
    p = tmp_path / "serve.sh"
    p.write_bytes(src.encode())
    p.chmod(0o755)
    assert run(p) == 0
    assert p.read_bytes() == src.replace("fp4_e2m1", "fp8_e4m3").encode()
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o755


# ---------------------------------------------------------------------------
# Through the real Python frontend


PY_CASES = [
    ([], 'args = ServerArgs(model_path="M", kv_cache_dtype="fp4_e2m1")\n',
     'args = ServerArgs(model_path="M", kv_cache_dtype="fp8_e4m3")\n'),
    ([], "engine = sgl.Engine(model_path='M', kv_cache_dtype='fp4_e2m1')  # keep\n",
     "engine = sgl.Engine(model_path='M', kv_cache_dtype='fp8_e4m3')  # keep\n"),
    ([], 'subprocess.Popen(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp4_e2m1", "--port", "1"])\n',
     'subprocess.Popen(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp8_e4m3", "--port", "1"])\n'),
    (["--gpu", "rtx5090"],
     'engine = sgl.Engine(model_path="M", kv_cache_dtype="nvfp4", prefill_kv_cache_dequant_dtype="nvfp4")\n',
     'engine = sgl.Engine(model_path="M", kv_cache_dtype="fp8_e4m3")\n'),
    (["--gpu", "h100"], 'os.system("python -m sglang.launch_server --kv-cache-dtype=nvfp4 --port 1")\n',
     'os.system("python -m sglang.launch_server --kv-cache-dtype=fp8_e4m3 --port 1")\n'),
    # Removing the last elements of a list: no separator left behind (kv4lint.fixes.edits.tidy_removals) ...
    (["--gpu", "rtx5090"],
     'subprocess.Popen(["sglang", "serve", "--kv-cache-dtype", "nvfp4", '
     '"--prefill-kv-cache-dequant-dtype", "nvfp4"])\n',
     'subprocess.Popen(["sglang", "serve", "--kv-cache-dtype", "fp8_e4m3"])\n'),
    (["--gpu", "rtx5090"],
     'subprocess.Popen(["sglang", "serve", "--kv-cache-dtype", "nvfp4", '
     '"--prefill-kv-cache-dequant-dtype", "nvfp4",])\n',
     'subprocess.Popen(["sglang", "serve", "--kv-cache-dtype", "fp8_e4m3"])\n'),
    (["--gpu", "rtx5090"],
     'cmd = [\n    "sglang", "serve",\n    "--kv-cache-dtype", "nvfp4",\n'
     '    "--prefill-kv-cache-dequant-dtype", "nvfp4"\n]\n'
     'subprocess.Popen(cmd)\n',
     'cmd = [\n    "sglang", "serve",\n    "--kv-cache-dtype", "fp8_e4m3",\n]\nsubprocess.Popen(cmd)\n'),
    (["--gpu", "rtx5090"],
     'sgl.Engine(**{"model_path": "M", "kv_cache_dtype": "nvfp4", "prefill_kv_cache_dequant_dtype": "nvfp4"})\n',
     'sgl.Engine(**{"model_path": "M", "kv_cache_dtype": "fp8_e4m3"})\n'),
    # ... but a tuple keeps the comma that makes it one
    (["--gpu", "rtx5090"],
     'cmd = ("sglang", "serve", "--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "nvfp4")\n'
     'subprocess.Popen(cmd)\n',
     'cmd = ("sglang", "serve", "--kv-cache-dtype", "fp8_e4m3", )\nsubprocess.Popen(cmd)\n'),
]
PY_HEAD = "import os\nimport subprocess\n\nimport sglang as sgl\nfrom sglang.srt.server_args import ServerArgs\n\n"


@pytest.mark.parametrize("opts,before,after", PY_CASES, ids=[c[1][:40] for c in PY_CASES])
def test_python_forms(tmp_path, opts, before, after):
    p = tmp_path / "serve.py"
    p.write_bytes((PY_HEAD + before).encode())
    assert run(*opts, p) == 0
    assert p.read_bytes() == (PY_HEAD + after).encode()
    assert run(*opts, p) == 0
    assert p.read_bytes() == (PY_HEAD + after).encode()
    rep = lint_text(str(p), PY_HEAD + after, Settings(gpu=opts[1] if opts else None, sglang_version="0.5.23"), "python")
    assert rep.errors == [] and not [f for f in rep.findings if fix_engine.fixable(f, unsafe=True)]


def test_python_removal_from_a_multiline_argv_list(tmp_path):
    before = PY_HEAD + ('subprocess.Popen(\n    [\n        "python3", "-m", "sglang.launch_server",\n'
                        '        "--kv-cache-dtype", "nvfp4",\n'
                        '        "--prefill-kv-cache-dequant-dtype", "nvfp4",\n'
                        '        "--port", "1",\n    ]\n)\n')
    p = tmp_path / "serve.py"
    p.write_text(before)
    assert run("--gpu", "rtx5090", p) == 0
    out = p.read_text()
    assert '"--kv-cache-dtype", "fp8_e4m3",' in out and "prefill-kv-cache-dequant" not in out
    compile(out, "serve.py", "exec")  # still Python
    assert out.startswith(before.split('"--kv-cache-dtype"')[0])
    assert out.endswith('"--port", "1",\n    ]\n)\n')


def test_python_latin1_cookie_crlf_preserved(tmp_path):
    src = ("# -*- coding: latin-1 -*-\r\n# d\u00e9j\u00e0 vu\r\nfrom sglang.srt.server_args import ServerArgs\r\n"
           "args = ServerArgs(model_path='M', kv_cache_dtype='fp4_e2m1')  # caf\u00e9")
    p = tmp_path / "serve.py"
    p.write_bytes(src.encode("latin-1"))
    assert run(p) == 0
    assert p.read_bytes() == src.replace("fp4_e2m1", "fp8_e4m3").encode("latin-1")


def test_python_module_constant_shared_is_unsafe(tmp_path):
    src = PY_HEAD + ('DTYPE = "fp4_e2m1"\na = ServerArgs(model_path="M", kv_cache_dtype=DTYPE)\n'
                     'b = ServerArgs(model_path="N", kv_cache_dtype=DTYPE)\n')
    p = tmp_path / "serve.py"
    p.write_text(src)
    assert run(p) == 1
    assert p.read_text() == src
    assert run("--unsafe-fixes", p) == 0
    assert p.read_text() == src.replace('DTYPE = "fp4_e2m1"', 'DTYPE = "fp8_e4m3"')


def test_symlink_out_of_tree_named_on_the_command_line_is_refused(fake, tmp_path, capsys):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    src = HEAD + " --kv-cache-dtype fp4_e2m1\n"
    target = write(outside / "real.sh", src)
    (tree / "link.sh").symlink_to(target)
    inside = write(tree / "inside.sh", src)
    (tree / "link-in.sh").symlink_to("inside.sh")
    assert run(tree / "link.sh", tree / "link-in.sh") == 0
    assert target.read_text() == src  # the file outside was not touched (not even read: issue 20)
    assert inside.read_text() == src.replace("fp4_e2m1", "fp8_e4m3")  # the link inside was followed
    assert (tree / "link-in.sh").is_symlink()
    out = capsys.readouterr().out
    assert f"note: {tree / 'link.sh'}: skipped: a symlink to a path outside the tree being checked" in out, out
    # Walking the directory never even reads the link to outside.
    target.write_text(src)
    assert run(tree) == 0
    assert target.read_text() == src


def _tidy(text: str, *spans: tuple[int, int]) -> str:
    from kv4lint.fixes.edits import tidy_removals

    return apply_edits(text, tidy_removals(text, [Edit(Span(a, b), "") for a, b in spans]))[0]


def _span(text: str, part: str) -> tuple[int, int]:
    i = text.index(part)
    return i, i + len(part)


@pytest.mark.parametrize("text,parts,after", [
    ('["a", "b", "c"]', ['"b", ', '"c"'], '["a"]'),  # touching removals merged, the comma before taken
    ('["a", "b", "c" ]', ['"b", ', '"c"'], '["a" ]'),
    ('["b", "c"]', ['"b", ', '"c"'], '[]'),  # nothing before: no comma to take
    ('{"a": 1, "b": 2}', [', "b": 2'], '{"a": 1}'),
    ('("a", "b")', ['"b"'], '("a", )'),  # a tuple keeps its comma
    ('[\r\n    "a",\r\n    "b"\r\n]', ['"b"'], '[\r\n    "a",\r\n]'),  # a line left blank goes, CRLF or not
    ('[\n    "a",\n    "b"  # why\n]', ['"b"'], '[\n    "a",\n      # why\n]'),  # a comment stays
    ('["a", "b"]  # x, ]', ['"b"'], '["a"]  # x, ]'),
    ('f("a", "b")', ['"b"'], 'f("a", )'),
])
def test_tidy_removals(text, parts, after):
    assert _tidy(text, *(_span(text, p) for p in parts)) == after


def test_tidy_removals_keeps_replacements_and_other_files():
    from kv4lint.fixes.edits import tidy_removals

    text = '["a", "b", "c"]'
    edits = [Edit(Span(1, 4), '"x"'), Edit(Span(6, 11), "", "other.yaml"), Edit(Span(11, 14), "")]
    out = tidy_removals(text, edits)
    assert Edit(Span(1, 4), '"x"') in out and Edit(Span(6, 11), "", "other.yaml") in out
    assert Edit(Span(9, 14), "") in out  # not merged with another file's edit; the comma before taken
