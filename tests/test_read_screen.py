"""The Python ``ast`` screen asked in kv4lint.pipeline.read, before the runner is loaded (issue 37): a Python file
it rules out ends with the report the frontend would give it, and loads none of the stages past it; a file it
passes, or text it cannot parse, goes on to the frontend, which judges and reports it as before."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from kv4lint.base.settings import Settings
from kv4lint.files import prefilter
from kv4lint.frontends.python import MAX_BYTES
from kv4lint.pipeline import read

# Passes the pre-filter on its bytes (sglang, a call of ServerArgs, kv_cache_dtype= ...), but only in a comment and
# a docstring: no launch.
MENTIONS = ('"""Start it with ServerArgs(model_path=..., kv_cache_dtype="fp4_e2m1")."""\n'
            "import sglang\n\n"
            "# ServerArgs(kv_cache_dtype='fp4_e2m1') is the launch this helper stands for\n"
            "def version():\n    return sglang.__version__\n")
LAUNCH = ("from sglang.srt.server_args import ServerArgs\n\n"
          "args = ServerArgs(model_path='m', kv_cache_dtype='fp4_e2m1', attention_backend='triton')\n")


def _in_a_fresh_interpreter(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_python_file_the_screen_rules_out_loads_no_stage_past_it(tmp_path):
    p = tmp_path / "helper.py"
    p.write_text(MENTIONS)
    assert prefilter.might_launch_bytes(MENTIONS.encode(), "python")  # the screen, not the pre-filter, rules it out
    out = _in_a_fresh_interpreter(f"""
        import sys
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline.read import lint_file
        rep = lint_file({str(p)!r}, Settings(), "python")
        assert rep.scanned and not rep.findings and not rep.errors and not rep.launches, rep
        print(",".join(m for m in sys.modules if m.startswith(("kv4lint.pipeline.runner", "kv4lint.frontends"))))
    """)
    assert out == ""


def test_a_file_the_screen_passes_is_judged_by_the_frontend(tmp_path):
    p = tmp_path / "launch.py"
    p.write_text(LAUNCH)
    rep = read.lint_file(str(p), Settings(sglang_version="0.5.23"), "python")
    assert rep.launches == 1 and rep.findings
    assert prefilter._last_screen[1] is None  # the screen's tree is let go of with the file


def test_the_tree_of_a_file_the_frontend_skips_is_let_go_of(tmp_path):
    """The screen passes it, and the runner skips it before the frontend (flake8's ``noqa`` line): the tree the
    screen made is let go of all the same."""
    p = tmp_path / "skipped.py"
    p.write_text("# flake8: noqa\n" + LAUNCH)
    rep = read.lint_file(str(p), Settings(sglang_version="0.5.23"), "python")
    assert not rep.launches and not rep.findings and not rep.errors
    assert prefilter._last_screen[1] is None


def test_the_tree_of_a_file_ruled_out_is_let_go_of(tmp_path):
    p = tmp_path / "helper.py"
    p.write_text(MENTIONS)
    rep = read.lint_file(str(p), Settings(), "python")
    assert not rep.launches and not rep.errors
    assert prefilter._last_screen[1] is None


def test_a_syntax_error_is_still_reported(tmp_path):
    """Text ``ast`` cannot parse passes the screen: the frontend reports it (here: exit 1, the file's error)."""
    p = tmp_path / "broken.py"
    p.write_text(LAUNCH + "def broken(:\n")
    rep = read.lint_file(str(p), Settings(), "python")
    assert [e.message for e in rep.errors] == ["syntax error: invalid syntax"]
    assert rep.errors[0].line == 4


def test_text_over_the_frontends_bound_is_the_frontends_to_report(tmp_path):
    """The frontend reports a Python text over its bound before it screens: such text never meets the screen
    here."""
    assert read.SCREEN_MAX <= MAX_BYTES
    p = tmp_path / "huge.py"
    p.write_text(MENTIONS + "#" * MAX_BYTES + "\n")
    rep = read.lint_file(str(p), Settings(max_file_bytes=4 * MAX_BYTES), "python")
    assert len(rep.errors) == 1 and "more than 2 MB" in rep.errors[0].message


def test_the_screen_runs_with_the_collector_paused_and_restores_it(tmp_path, monkeypatch):
    """The screen's tree is a hundred thousand objects for 200 kB: the cyclic collector is paused while it is
    made and walked, and runs again after."""
    import gc

    seen = []
    real = read.python_may_launch
    monkeypatch.setattr(read, "python_may_launch", lambda text: seen.append(gc.isenabled()) or real(text))
    p = tmp_path / "helper.py"
    p.write_text(MENTIONS)
    assert gc.isenabled()
    read.lint_file(str(p), Settings(), "python")
    assert seen == [False] and gc.isenabled()


def test_the_tree_of_a_file_handed_back_is_let_go_of(tmp_path):
    """A forked child refuses the runner's import (kv4lint.pipeline.parallel) for a file the screen passes: the file
    goes back to the parent, and the child lets go of the screen's tree all the same."""
    p = tmp_path / "launch.py"
    p.write_text(LAUNCH)
    out = _in_a_fresh_interpreter(f"""
        import sys
        from kv4lint.base.settings import Settings
        from kv4lint.files import prefilter
        from kv4lint.pipeline import parallel
        from kv4lint.pipeline.read import lint_file
        sys.meta_path.insert(0, parallel._ParentOnly(1))
        try:
            lint_file({str(p)!r}, Settings(), "python")
        except parallel._Deferred:
            print("handed back", prefilter._last_screen[1] is None)
    """)
    assert out == "handed back True"
