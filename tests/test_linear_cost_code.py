"""Cost linear in the input, shape by shape, for shell and Python (issues 34 and 37).

Each test doubles one shape of input (tests/large_inputs.py: shaped like real files) and asserts, with the shared
harness (tests/linear_cost.py), that CPU time and peak memory at most about double: never seconds. The shapes are
the ones that were quadratic or exponential before: variables merged at every branch (a 2 MB script of 9,200
blocks took 60 s), knobs multiplied out into every combination, an if/elif chain nested one level an arm, and
a long script's whole syntax tree kept at once.
"""

from __future__ import annotations

import ast
import tracemalloc

import pytest

import large_inputs
from linear_cost import assert_linear, lint

LAUNCH = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct"
SHELL = lint("shell", "serve.sh")
PYTHON = lint("python", "serve.py")


# ---------------------------------------------------------------------------
# Shell

def long_line(n: int) -> str:
    """A launch of ``n`` options on one line (each option judged)."""
    return f"#!/bin/bash\n{LAUNCH} --kv-cache-dtype nvfp4" + " --served-model-name m" * n + "\n"


def knobs(n: int) -> str:
    """``n`` independent knobs that each add an option, one that sets the KV cache dtype: 2 ** n combinations."""
    ifs = "".join(f'if [ "$K{k}" = 1 ]; then ARGS="$ARGS --tp {k % 8 + 1}"; fi\n' for k in range(n))
    return ("#!/bin/bash\nARGS=\"\"\n" + ifs + 'if [ "$FP4" = 1 ]; then ARGS="$ARGS --kv-cache-dtype nvfp4"; fi\n'
            + f"{LAUNCH} --attention-backend triton $ARGS\n")


def knob_blocks(n: int) -> str:
    """``n`` launches, each with its own knobs (three that add options, one that sets the dtype)."""
    return "".join(knobs(3).replace("ARGS", f"ARGS{k}").replace("$K", f"$B{k}K").replace("$FP4", f"$FP4_{k}")
                   for k in range(n))


def heredocs(n: int) -> str:
    """``n`` here-documents (configuration written at run time) before a launch."""
    return ("#!/bin/bash\n" + "".join(f"cat > /tmp/cfg{k}.yaml <<EOF\nmodel: m{k}\nport: $PORT\nkv: fp8_e4m3\nEOF\n"
                                      for k in range(n))
            + f"{LAUNCH} --kv-cache-dtype fp8_e4m3\n")


def variables(n: int) -> str:
    """``n`` variables, each set in a branch: every join used to merge every variable of the script."""
    return ("#!/bin/bash\n" + "".join(f'V{k}=a\nif [ "$X" = {k} ]; then V{k}=b; fi\necho "$V{k}"\n'
                                      for k in range(n))
            + f"{LAUNCH} --kv-cache-dtype fp8_e4m3\n")


def exported_settings(n: int) -> str:
    """``n`` exported settings, then ``n`` pipelines that use them: every pipeline's command runs in a subshell on a
    copy of the variables, which used to copy all of them (a 2 MB serving script of 8,000 variables spent a
    quarter of its walk copying)."""
    return ("#!/bin/bash\n" + "".join(f"export SETTING_{k}=value{k}\n" for k in range(n))
            + "".join(f'echo "$SETTING_{k}" | tr a-z A-Z\n' for k in range(n))
            + f"{LAUNCH} --kv-cache-dtype fp8_e4m3\n")


def exported_inner_shells(n: int) -> str:
    """``n`` exported settings, then ``n`` inner shells (``bash -c``): each used to be given every exported
    variable, read or not (4.2 s at 2,000)."""
    return ("#!/bin/bash\n" + "".join(f"export SETTING_{k}=value{k}\n" for k in range(n))
            + "".join(f"bash -c 'echo step {k}'\n" for k in range(n))
            + f"bash -c '{LAUNCH} --kv-cache-dtype fp8_e4m3 --served-model-name $SETTING_1'\n")


def case_arms(n: int) -> str:
    """A ``case`` of ``n`` arms, each setting its own variable: each variable became a choice of ``n`` paths
    (0.8 s at 2,000 arms)."""
    return ('#!/bin/bash\ncase "$1" in\n' + "".join(f"  a{k}) V{k}=x{k} ;;\n" for k in range(n))
            + f"esac\n{LAUNCH} --kv-cache-dtype fp8_e4m3\n")


def elif_arms(n: int) -> str:
    """An ``if`` of ``n`` ``elif`` branches, each setting its own variable (0.8 s at 2,000)."""
    return ('#!/bin/bash\nif [ "$1" = a ]; then V=1\n'
            + "".join(f'elif [ "$1" = a{k} ]; then V{k}=x{k}\n' for k in range(n))
            + f"fi\n{LAUNCH} --kv-cache-dtype fp8_e4m3\n")


@pytest.mark.parametrize("make,n", [
    (long_line, 800),
    (large_inputs.short_lines, 8000),
    (knob_blocks, 12),
    (heredocs, 2400),
    (variables, 400),
    (exported_settings, 2000),
    (exported_inner_shells, 1000),
    (case_arms, 1000),
    (elif_arms, 1000),
    (large_inputs.launch_script, 20),
    (large_inputs.install_script, 2),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_shell_cost_is_linear(make, n):
    assert_linear(make, SHELL, n, what=make.__name__)


def test_many_knobs_of_one_launch_are_read_once_per_path(monkeypatch):
    """Knobs on one launch are 2 ** n combinations: past 64 each knob is read on its own, once per path (each such
    reading walks the chain of values the knobs built, so the cost grows with n * n, bounded by the readings a
    command may take: MAX_CANDIDATES)."""
    from kv4lint.frontends.shell import branches
    from kv4lint.frontends.shell.walk import scan_shell

    readings = []
    real = branches.Branches._act

    def act(self, *a):
        if self.scan.partial:  # (the readings of every combination before: given up past the budget)
            readings.append(a[-1])
        return real(self, *a)

    monkeypatch.setattr(branches.Branches, "_act", act)
    for n in (20, 40):
        readings.clear()
        found = scan_shell(knobs(n), "serve.sh")
        assert len(readings) == 2 * (n + 1)
        assert [launch.condition for launch in found.launches if any(v.text == "nvfp4" for v in launch.argv)] == \
            ["FP4=1"]


def test_a_long_shell_script_is_read_a_piece_at_a_time(monkeypatch):
    """Its syntax tree is not kept whole: the peak memory of a script four times as long as a piece is about
    that of one piece (it was four times more), and what is found is the same as in one parse."""
    from kv4lint.frontends.shell import parse
    from kv4lint.frontends.shell.walk import scan_shell

    piece = 64 * 1024
    text = large_inputs.short_lines(piece // 8)  # about one piece
    longer = large_inputs.short_lines(piece // 2) + f"{LAUNCH} --kv-cache-dtype nvfp4 \\\n  --port 1\n"
    monkeypatch.setattr(parse, "PIECE", piece)
    scan_shell(text[:1000], "warm.sh")

    def peak(t: str) -> int:
        tracemalloc.start()
        try:
            scan_shell(t, "serve.sh")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    one, four = peak(text), peak(longer)
    assert four <= 2 * one, f"peak {four} bytes for 4 pieces, {one} for one"
    found = scan_shell(longer, "serve.sh")
    monkeypatch.setattr(parse, "PIECE", 1 << 30)
    whole = scan_shell(longer, "serve.sh")
    assert [[v.text for v in launch.argv] for launch in found.launches] == \
        [[v.text for v in launch.argv] for launch in whole.launches] == \
        [["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "nvfp4", "--port", "1"]]


def sourced_settings(n: int) -> str:
    """A script of ``n`` lines that sources a settings file of ``n`` variables (made from the script's length by
    the route below: ``SETTING_k_OF_THE_SWEEP``) and reads none of them, only longer names that start alike."""
    lines = (f"echo step {k}: ${{SETTING_{k}_OF_THE_SWEEP_DIR}}/run.log\n" for k in range(n))
    return "#!/bin/bash\n. ./env.sh\n" + "".join(lines)


def test_deciding_whether_a_script_reads_what_it_sources_is_linear():
    """``attach_sourced`` reads a script again only when it names a sourced variable: deciding that reads the
    script's words once, whatever the number of names (an alternation of every name at every character of the
    script would cost their product)."""
    from kv4lint.pipeline.sourced import _may_read

    def run(text: str) -> None:
        names = {f"SETTING_{k}_OF_THE_SWEEP": None for k in range(text.count("\n"))}
        assert not _may_read(text, {"script:env.sh": names})

    assert_linear(sourced_settings, run, 4000, what="sourced_settings")


# ---------------------------------------------------------------------------
# Python

def call_list(n: int) -> str:
    """One launch whose argv list has ``n`` options."""
    opts = ", ".join(f'"--served-model-name", "m{k}"' for k in range(n))
    return ("import subprocess\nsubprocess.run([\"python\", \"-m\", \"sglang.launch_server\", \"--kv-cache-dtype\", "
            f"\"fp8_e4m3\", {opts}])\n")


@pytest.mark.parametrize("make,n", [
    (large_inputs.elif_chain, 60),
    (call_list, 400),
    (large_inputs.python_launches, 12),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_python_cost_is_linear(make, n):
    assert_linear(make, PYTHON, n, what=make.__name__)


def test_python_cost_is_linear_under_flake8():
    """The flake8 plugin's route: flake8's own syntax tree and lines, the plugin's settings."""
    from kv4lint.flake8_plugin import Plugin

    def run(text: str) -> object:
        return list(Plugin(ast.parse(text), text.splitlines(keepends=True), "serve.py").run())

    assert_linear(large_inputs.python_launches, run, 12, what="python_launches under flake8")
