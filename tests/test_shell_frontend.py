"""The shell frontend: launches found (and not found), argv as bash builds it, exact spans."""

from __future__ import annotations

import re
import subprocess
import sys
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kv4lint.base.model import Hint, Launch, Provenance, ScanResult, Span, Value
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.frontends.hints import device_hints, env_hints, image_hints
from kv4lint.frontends.shell import scan_shell, split_words


# ---------------------------------------------------------------------------
# helpers


def scan(text: str, **kw) -> ScanResult:
    r = scan_shell(text, "t.sh", **kw)
    assert not [e for e in r.errors if "internal error" in e.message], r.errors
    return r


def launches(text: str, **kw) -> list[Launch]:
    return scan(text, **kw).launches


def one(text: str, **kw) -> Launch:
    ls = launches(text, **kw)
    assert len(ls) == 1, [texts(x) for x in ls]
    return ls[0]


def texts(launch: Launch) -> list[str | None]:
    return [v.text for v in launch.argv]


def at(text: str, span: Span | None):
    """(line, column, covered text) of a span, as a reporter would print it."""
    if span is None:
        return None
    p = LineIndex(text).position(span.start)
    return (p.line, p.column, text[span.start:span.end])


def value(launch: Launch, flag: str):
    """The Value right after ``flag`` in the launch's argv."""
    t = texts(launch)
    return launch.argv[t.index(flag) + 1]


# ---------------------------------------------------------------------------
# the basic launch: argv, spans, anchor, removal


SCRIPT = """\
#!/bin/bash
set -euo pipefail
python3 -m sglang.launch_server \\
  --model-path meta-llama/Llama-3.1-8B-Instruct \\
  --prefill-kv-cache-dequant-dtype fp8_e4m3 \\
  --kv-cache-dtype nvfp4 --port 30000
"""


def test_literal_launch_fields_and_spans():
    launch = one(SCRIPT)
    assert launch.form == "argv" and launch.entry == "sglang.launch_server" and launch.language == "shell"
    assert texts(launch) == ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--prefill-kv-cache-dequant-dtype",
                             "fp8_e4m3", "--kv-cache-dtype", "nvfp4", "--port", "30000"]
    assert at(SCRIPT, launch.anchor) == (3, 1, "python3 -m sglang.launch_server")
    assert at(SCRIPT, launch.span)[:2] == (3, 1)
    assert SCRIPT[launch.span.start:launch.span.end].endswith("--port 30000")
    v = value(launch, "--kv-cache-dtype")
    assert at(SCRIPT, v.span) == (6, 20, "nvfp4")
    assert v.provenance is Provenance.LITERAL and v.use is None and not v.shared
    assert all(x.provenance is Provenance.LITERAL for x in launch.argv)


def test_remove_spans_take_a_continuation_line_cleanly():
    launch = one(SCRIPT)
    flag = launch.argv[2]
    val = launch.argv[3]
    assert flag.text == "--prefill-kv-cache-dequant-dtype"
    # flag: the separator before it (the previous line's " \\\n  ") and the flag; value: " fp8_e4m3"
    assert SCRIPT[flag.remove.start:flag.remove.end] == " \\\n  --prefill-kv-cache-dequant-dtype"
    assert SCRIPT[val.remove.start:val.remove.end] == " fp8_e4m3"
    assert flag.remove.end == val.remove.start
    fixed = SCRIPT[:flag.remove.start] + SCRIPT[val.remove.end:]
    assert fixed == SCRIPT.replace("  --prefill-kv-cache-dequant-dtype fp8_e4m3 \\\n", "")


def test_quoted_word_span_is_inside_the_quotes():
    text = "python -m sglang.launch_server --kv-cache-dtype 'nvfp4' --model-path \"a b\" --x=\"y\"\n"
    launch = one(text)
    assert texts(launch) == ["--kv-cache-dtype", "nvfp4", "--model-path", "a b", "--x=y"]
    assert at(text, launch.argv[1].span) == (1, 50, "nvfp4")
    assert launch.argv[1].quote == "'"
    assert at(text, launch.argv[3].span) == (1, 71, "a b")
    assert launch.argv[3].quote == '"'
    assert launch.argv[4].span is None  # --x="y" is not written contiguously
    assert text[launch.argv[1].remove.start:launch.argv[1].remove.end] == " 'nvfp4'"
    assert text[launch.argv[3].remove.start:launch.argv[3].remove.end] == ' "a b"'


@pytest.mark.parametrize("word,text,quote", [
    ('""', "", '"'), ('"a b"', "a b", '"'), ('"a\nb"', "a\nb", '"'), ("\"a\\\"b\"", 'a"b', '"'),
    ('"$X"', None, '"'), ('"a$((1))"', None, '"'), ('"a`b`"', None, '"'), ("'a$b'", "a$b", "'"),
])
def test_a_double_quoted_word_is_its_inside_quoted(word, text, quote):
    launch = one(f"python -m sglang.launch_server --model-path {word} --port 1\n")
    assert texts(launch)[1] == text and launch.argv[1].quote == (quote if text is not None else "")


def test_escapes_and_ansi_c_strings():
    text = "python -m sglang.launch_server --a nv\\fp4 --b $'x\\ty' --c \"q\\\"r\" --d \"\\$HOME\"\n"
    launch = one(text)
    assert texts(launch) == ["--a", "nvfp4", "--b", "x\ty", "--c", 'q"r', "--d", "$HOME"]
    assert launch.argv[1].span is None and launch.argv[3].span is None


# ---------------------------------------------------------------------------
# entry points


@pytest.mark.parametrize("cmd,entry,argv", [
    ("python -m sglang.launch_server --a 1", "sglang.launch_server", ["--a", "1"]),
    ("python3.11 -u -m sglang.launch_server --a 1", "sglang.launch_server", ["--a", "1"]),
    ("/opt/venv/bin/python3 -msglang.launch_server --a 1", "sglang.launch_server", ["--a", "1"]),
    ("$PYTHON -m sglang.launch_server --a 1", "sglang.launch_server", ["--a", "1"]),
    ('"${PY}" -m sglang.launch_server --a 1', "sglang.launch_server", ["--a", "1"]),
    ("sglang serve --model-path m", "sglang serve", ["--model-path", "m"]),
    ("/usr/local/bin/sglang serve m", "sglang serve", ["m"]),
    ("python -m sglang.bench_one_batch --batch-size 1", "sglang.bench_one_batch", ["--batch-size", "1"]),
    ("python3 -m sglang.bench_offline_throughput --a", "sglang.bench_offline_throughput", ["--a"]),
    ("python -m sglang.benchmark.one_batch_server --a", "sglang.benchmark.one_batch_server", ["--a"]),
    ("torchrun --nproc-per-node 8 --standalone -m sglang.launch_server --a", "sglang.launch_server", ["--a"]),
    ("python -m torch.distributed.run --nnodes=1 -m sglang.launch_server --a", "sglang.launch_server", ["--a"]),
    ("uv run -m sglang.launch_server --a", "sglang.launch_server", ["--a"]),
    ("uv run --with sglang --python 3.12 python -m sglang.launch_server --a", "sglang.launch_server", ["--a"]),
])
def test_entry_points(cmd, entry, argv):
    launch = one(cmd + "\n")
    assert launch.entry == entry
    assert texts(launch) == argv


def test_python_from_a_variable_is_resolved():
    text = "PYTHON=/opt/conda/bin/python3.10\n$PYTHON -m sglang.launch_server --a 1\n"
    launch = one(text)
    assert at(text, launch.anchor) == (2, 1, "$PYTHON -m sglang.launch_server")


def test_torchrun_anchor_covers_launcher_to_module():
    text = "torchrun --nproc-per-node 8 -m sglang.launch_server --a\n"
    assert at(text, one(text).anchor) == (1, 1, "torchrun --nproc-per-node 8 -m sglang.launch_server")


# ---------------------------------------------------------------------------
# wrappers


@pytest.mark.parametrize("cmd", [
    "HF_HOME=/x CUDA_VISIBLE_DEVICES=0,1 {L}",
    "env -i -u FOO A=\"b c\" {L}",
    "env - A=1 {L}",
    "exec {L}",
    "exec -a srv {L}",
    "nohup {L} > log 2>&1 &",
    "timeout -s KILL --foreground 3600 {L}",
    "timeout 10m {L}",
    "numactl --cpunodebind=0 --membind 0 -C 0-7 {L}",
    "taskset -c 0-15 {L}",
    "taskset 0xff {L}",
    "srun --nodes=2 --ntasks-per-node 1 -N1 --gres=gpu:8 --exclusive --container-mounts=/a:/a {L}",
    "srun $SRUN_OPTS {L}",
    "mpirun -np 2 --allow-run-as-root -x NCCL_DEBUG=INFO --mca btl_tcp_if_include eth0 --bind-to none {L}",
    "mpiexec -n 2 -genv A 1 {L}",
    "stdbuf -oL -e L {L}",
    "nice -n 10 {L}",
    "nice -10 {L}",
    "chrt -f 50 {L}",
    "ionice -c2 -n0 {L}",
    "time {L}",
    "/usr/bin/time -v -o t.txt {L}",
    "sudo -E -u svc {L}",
    "sudo PATH=/x {L}",
    "conda run -n sglang --no-capture-output {L}",
    "micromamba run -n env {L}",
    "poetry run {L}",
    "setsid -f {L}",
    "command {L}",
    "$LAUNCHER {L}",
    "docker run --rm -it --gpus all --shm-size 32g --ipc=host -p 30000:30000 -v ~/.cache:/root/.cache "
    "-e HF_TOKEN=$HF_TOKEN --name srv --network host lmsysorg/sglang:latest {L}",
    "docker run -d --privileged -eA=1 -p8000:8000 nvcr.io/nvidia/pytorch:24.01-py3 {L}",
    "docker container run --runtime=nvidia img {L}",
    "podman run --replace --name x img {L}",
    "docker exec -it -e A=1 srv {L}",
    "docker compose run --rm -e A=1 sglang {L}",
    "apptainer exec --nv -B /data:/data sglang.sif {L}",
    "kubectl exec -it pod-0 -c main -- {L}",
    "ssh -p 2222 -o StrictHostKeyChecking=no node1 {L}",
    "screen -dmS srv {L}",
    "ray job submit --address http://h:8265 -- {L}",
])
def test_wrappers_are_unwrapped(cmd):
    text = cmd.replace("{L}", "python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --tp 2") + "\n"
    launch = one(text)
    assert texts(launch) == ["--kv-cache-dtype", "nvfp4", "--tp", "2"]
    assert at(text, launch.anchor)[2] == "python3 -m sglang.launch_server"
    assert at(text, launch.argv[1].span)[2] == "nvfp4"


@pytest.mark.parametrize("cmd", [
    "bash -c '{L}'",
    'sh -c "{L}"',
    "bash -lc '{L}'",
    "/bin/bash -euxo pipefail -c '{L}'",
    "docker run --rm img bash -c '{L}'",
    "srun -N 2 bash -c \"cd /w && {L}\"",
    "ssh node1 '{L}'",
    "eval '{L}'",
    "tmux new-session -d -s srv '{L}'",
    "tmux send-keys -t srv '{L}' Enter",
    "sbatch -N 1 --wrap='{L}'",
])
def test_shell_strings_are_parsed_with_spans_mapped_back(cmd):
    text = cmd.replace("{L}", "python3 -m sglang.launch_server --kv-cache-dtype nvfp4") + "\n"
    launch = one(text)
    assert texts(launch) == ["--kv-cache-dtype", "nvfp4"]
    v = launch.argv[1]
    assert at(text, v.span)[2] == "nvfp4"
    assert text[v.remove.start:v.remove.end] == " nvfp4"
    assert at(text, launch.anchor)[2] == "python3 -m sglang.launch_server"


def test_docker_entrypoint_runs_python_with_the_words_after_the_image():
    text = "docker run --rm --entrypoint python3 lmsysorg/sglang:v0.5.23-cu129 -m sglang.launch_server --a 1\n"
    launch = one(text)
    assert texts(launch) == ["--a", "1"]
    assert launch.anchor.start == text.index("python3")


def test_docker_options_with_values_are_not_mistaken_for_the_image():
    text = ("docker run --gpus all -v /models:/models --env-file .env -w /work --ulimit memlock=-1 "
            "--cap-add SYS_PTRACE --group-add video --security-opt seccomp=unconfined img:tag "
            "python3 -m sglang.launch_server --a\n")
    launch = one(text)
    assert texts(launch) == ["--a"]
    assert [h.reason for h in launch.hints if h.kind == "platform"] == ["docker run --gpus all"]


def test_unknown_image_before_the_command():
    text = 'docker run --gpus all -p 30000:30000 $IMAGE python3 -m sglang.launch_server --a\n'
    assert texts(one(text)) == ["--a"]


@pytest.mark.parametrize("text", [
    "cd /srv && python -m sglang.launch_server --a 1 || exit 1\n",
    "python -m sglang.launch_server --a 1 2>&1 | tee server.log\n",
    "if [ -n \"$X\" ]; then\n  python -m sglang.launch_server --a 1\nfi\n",
    "if false; then :; elif true; then python -m sglang.launch_server --a 1; else :; fi\n",
    "while true; do python -m sglang.launch_server --a 1; sleep 1; done\n",
    "until false; do python -m sglang.launch_server --a 1; done\n",
    "case $1 in\n  serve) python -m sglang.launch_server --a 1 ;;\nesac\n",
    "serve() {\n  python -m sglang.launch_server --a 1\n}\nserve\n",
    "function serve { python -m sglang.launch_server --a 1; }\n",
    "( python -m sglang.launch_server --a 1 )\n",
    "{ python -m sglang.launch_server --a 1; } &\n",
    "PID=$(python -m sglang.launch_server --a 1 & echo $!)\n",
    "! python -m sglang.launch_server --a 1\n",
    "for ((i=0; i<2; i++)); do python -m sglang.launch_server --a 1; done\n",
])
def test_launches_inside_compound_statements(text):
    assert texts(one(text)) == ["--a", "1"]


# ---------------------------------------------------------------------------
# resolution


def test_variable_resolved_to_its_assignment():
    text = "DTYPE=nvfp4\npython -m sglang.launch_server --kv-cache-dtype $DTYPE\n"
    v = value(one(text), "--kv-cache-dtype")
    assert v.text == "nvfp4" and v.provenance is Provenance.RESOLVED
    assert at(text, v.span) == (1, 7, "nvfp4")
    assert at(text, v.use) == (2, 49, "$DTYPE")
    assert not v.shared
    assert text[v.remove.start:v.remove.end] == " $DTYPE"  # removing the use, not the assignment


@pytest.mark.parametrize("assign", ["export DTYPE=nvfp4", "readonly DTYPE='nvfp4'", "declare -r DTYPE=\"nvfp4\"",
                                    "declare DTYPE=nvfp4", "typeset DTYPE=nvfp4"])
def test_declarations(assign):
    text = f"{assign}\npython -m sglang.launch_server --kv-cache-dtype \"${{DTYPE}}\"\n"
    v = value(one(text), "--kv-cache-dtype")
    assert v.text == "nvfp4" and at(text, v.span)[2] == "nvfp4"
    assert at(text, v.use)[2] == "${DTYPE}"
    assert v.shared == assign.startswith("export")


@pytest.mark.parametrize("use", ["$D", "${D}", "${D:-x}"])
def test_shared_when_used_twice(use):
    text = f"D=nvfp4\necho \"using {use}\"\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    assert value(one(text), "--kv-cache-dtype").shared


@pytest.mark.parametrize("word,walked", [('"$M"', False), ('"${M}"', False), ('"x$M"', True), ('"${M:-m}"', False)])
def test_a_quoted_lone_expansion_is_read_without_walking_the_string(monkeypatch, word, walked):
    """``"$MODEL"``, the commonest word of a launch, is the quoted value of its one expansion: read without
    _string's walk over the string's pieces (Expander.fields_at), the same word, quote and span as through it."""
    from kv4lint.frontends.shell.expand import Expander

    strings = []
    real = Expander._string
    monkeypatch.setattr(Expander, "_string", lambda self, node: strings.append(node) or real(self, node))
    text = f"M=m\npython -m sglang.launch_server --model-path {word} --kv-cache-dtype fp4_e2m1\n"
    v = value(one(text), "--model-path")
    assert (v.text, v.quote) == ("xm" if word == '"x$M"' else "m", '"')
    assert bool(strings) == walked


def test_a_variable_an_inert_command_uses_is_looked_up_not_expanded(monkeypatch):
    """``echo "$D ${D}"`` runs nothing: its plain variables are only looked up, for where their assignments are
    used (Expander.touch_name), their values not built; one with an operator (``${D:-x}``) is expanded."""
    from kv4lint.frontends.shell.expand import Expander

    built = []
    real = Expander._expand_name
    monkeypatch.setattr(Expander, "_expand_name", lambda self, name, *a: built.append(name) or real(self, name, *a))
    launches('D=nvfp4\nE=x\necho "using $D ${D}" ${E:-y}\npython -m sglang.launch_server --kv-cache-dtype $D\n')
    assert built == ["E", "D"]  # ${E:-y} in the echo, $D in the launch


def test_last_assignment_wins_and_later_uses_still_count():
    text = "D=fp8_e4m3\nD=nvfp4\npython -m sglang.launch_server --kv-cache-dtype $D\nD=auto\n"
    v = value(one(text), "--kv-cache-dtype")
    assert at(text, v.span) == (2, 3, "nvfp4") and not v.shared


@pytest.mark.parametrize("text,expect,where", [
    ("python -m sglang.launch_server --kv-cache-dtype ${D:-nvfp4}\n", "nvfp4", (1, 54, "nvfp4")),
    ("D=${D:-nvfp4}\npython -m sglang.launch_server --kv-cache-dtype $D\n", "nvfp4", (1, 8, "nvfp4")),
    ("D=fp8_e4m3\npython -m sglang.launch_server --kv-cache-dtype ${D:-nvfp4}\n", "fp8_e4m3", (1, 3, "fp8_e4m3")),
    ("D=\npython -m sglang.launch_server --kv-cache-dtype ${D:-nvfp4}\n", "nvfp4", (2, 54, "nvfp4")),
    ("D=\npython -m sglang.launch_server --kv-cache-dtype \"${D-nvfp4}\"\n", "", None),
    (": \"${D:=nvfp4}\"\npython -m sglang.launch_server --kv-cache-dtype $D\n", "nvfp4", (1, 9, "nvfp4")),
    ("python -m sglang.launch_server --kv-cache-dtype ${1:-nvfp4}\n", "nvfp4", (1, 54, "nvfp4")),
    ("D=NVFP4\npython -m sglang.launch_server --kv-cache-dtype ${D,,}\n", "nvfp4", None),
])
def test_parameter_defaults(text, expect, where):
    v = value(one(text), "--kv-cache-dtype")
    assert v.text == expect
    assert at(text, v.span) == where
    if expect:
        assert v.provenance is Provenance.RESOLVED


def test_concatenated_word_is_resolved_but_not_editable_in_place():
    text = "D=nvfp4\npython -m sglang.launch_server --kv-cache-dtype=$D --model-path \"$ROOT/models/x\"\n"
    launch = one(text)
    v = launch.argv[0]
    assert v.text == "--kv-cache-dtype=nvfp4" and v.span is None and v.provenance is Provenance.RESOLVED
    assert at(text, v.use) == (2, 32, "--kv-cache-dtype=$D")
    assert launch.argv[2].text is None  # $ROOT is unknown, so the whole word is


def test_arrays():
    text = """\
ARGS=(
  --model-path m   # the model
  --kv-cache-dtype nvfp4
)
ARGS+=(--tp 2)
python -m sglang.launch_server "${ARGS[@]}" --port ${PORTS[0]}
"""
    launch = one(text)
    assert texts(launch) == ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--tp", "2", "--port", None]
    v = launch.argv[3]
    assert at(text, v.span) == (3, 20, "nvfp4")
    assert at(text, v.use) == (6, 33, "${ARGS[@]}")
    flag = launch.argv[2]
    assert text[flag.remove.start:flag.remove.end] == "\n  --kv-cache-dtype"
    assert text[v.remove.start:v.remove.end] == " nvfp4"
    assert texts(one(text.replace('"${ARGS[@]}"', "${ARGS[1]}")))[:1] == ["m"]


def test_flags_in_a_string_variable_are_word_split_with_their_own_spans():
    text = 'EXTRA_ARGS="--kv-cache-dtype nvfp4  --prefill-kv-cache-dequant-dtype fp8_e4m3"\n' \
           "python -m sglang.launch_server --model-path m $EXTRA_ARGS\n"
    launch = one(text)
    assert texts(launch) == ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype",
                             "fp8_e4m3"]
    for v in launch.argv[2:]:
        assert v.provenance is Provenance.RESOLVED
        assert at(text, v.use) == (2, 47, "$EXTRA_ARGS")
        assert at(text, v.span)[:1] == (1,)
    assert at(text, launch.argv[3].span) == (1, 30, "nvfp4")
    first, second = launch.argv[2], launch.argv[4]
    assert text[first.remove.start:first.remove.end] == "--kv-cache-dtype "
    assert text[second.remove.start:second.remove.end] == "  --prefill-kv-cache-dequant-dtype"
    # quoted, the string is one argument
    quoted = one(text.replace("$EXTRA_ARGS", '"$EXTRA_ARGS"'))
    assert texts(quoted)[2:] == ["--kv-cache-dtype nvfp4  --prefill-kv-cache-dequant-dtype fp8_e4m3"]


@pytest.mark.parametrize("word,splat", [
    ("$FROM_ENV", True), ('"$FROM_ENV"', False), ("$(cat dtype.txt)", True), ('"$(cat dtype.txt)"', False),
    ("$1", True), ('"$@"', True), ('"${UNKNOWN_ARR[@]}"', True), ("`cat f`", True), ("$((1+2))", False),
    ('"$*"', False),
])
def test_unknown_values(word, splat):
    text = f"python -m sglang.launch_server --kv-cache-dtype {word}\n"
    v = one(text).argv[1]
    assert v.text is None and v.provenance is Provenance.UNKNOWN and v.splat is splat
    assert at(text, v.use)[2] == word


def _paths(text: str) -> list[tuple[str | None, str | None]]:
    """(condition, --kv-cache-dtype value) of each launch the script may run."""
    return [(launch.condition, value(launch, "--kv-cache-dtype").text) for launch in launches(text)]


def test_branches_that_disagree_give_one_launch_per_path_with_its_condition():
    text = ("if [ \"$GPU\" = b200 ]; then D=nvfp4; else D=fp8_e4m3; fi\n"
            "python -m sglang.launch_server --kv-cache-dtype $D\n")
    assert _paths(text) == [("GPU=b200", "nvfp4"), ("GPU!=b200", "fp8_e4m3")]
    nv = launches(text)[0]
    v = value(nv, "--kv-cache-dtype")
    assert text[v.span.start:v.span.end] == "nvfp4" and not v.shared  # edited where it is assigned
    assert text[v.use.start:v.use.end] == "$D"  # reported where it is used
    # A path that assigns nothing keeps the value from before: here, the environment's (unknown).
    text2 = "if [ -z \"$D\" ]; then D=nvfp4; fi\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    assert _paths(text2) == [("D is empty", "nvfp4"), ("D is not empty", None)]
    text3 = "[ -n \"$X\" ] && D=nvfp4\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    assert _paths(text3) == [("X is empty", None), ("X is not empty", "nvfp4")]
    text4 = "case $1 in a) D=nvfp4;; *) D=nvfp4;; esac\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    v = value(one(text4), "--kv-cache-dtype")
    assert v.text == "nvfp4" and v.span is None  # same text on every path, from two places
    assert one(text4).condition is None


def test_the_same_launch_on_every_path_is_one_launch_that_holds_only_the_guards_they_share():
    text = ("GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)\n"
            "if [[ \"$GPU\" == *B200* ]]; then D=nvfp4; else D=fp8_e4m3; fi\n"
            "CUDA_VISIBLE_DEVICES=$D python -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n"  # read per path
            "python -m sglang.launch_server --kv-cache-dtype $D\n")
    got = [(launch.condition, texts(launch), [(h.kind, h.value) for h in launch.hints if h.scope == "guard"])
           for launch in launches(text)]
    assert got == [("GPU=*B200* or GPU!=*B200*", ["--kv-cache-dtype", "fp4_e2m1"], []),
                   ("GPU=*B200*", ["--kv-cache-dtype", "nvfp4"], [("gpu", "sm100")]),
                   ("GPU!=*B200*", ["--kv-cache-dtype", "fp8_e4m3"], [])]


def test_conditions_of_case_elif_and_or_chains():
    text = ('case "$MODE" in fp4|nv) D=nvfp4;; fp8) D=fp8_e4m3;; esac\n'
            "python -m sglang.launch_server --kv-cache-dtype $D\n")
    assert _paths(text) == [("MODE=fp4|nv", "nvfp4"), ("MODE=fp8", "fp8_e4m3"), ("MODE is none of fp4, nv, fp8", None)]
    text2 = ("if [ \"${USE_FP4_KV:-0}\" = 1 ]; then D=nvfp4; elif grep -q h100 /etc/gpu; then D=fp8_e4m3; "
             "else D=auto; fi\npython -m sglang.launch_server --kv-cache-dtype \"$D\"\n")
    assert _paths(text2) == [("USE_FP4_KV=1", "nvfp4"),
                             ("USE_FP4_KV!=1 and `grep -q h100 /etc/gpu` succeeds", "fp8_e4m3"),
                             ("USE_FP4_KV!=1 and `grep -q h100 /etc/gpu` fails", "auto")]
    text3 = '[ "$FP4" = 1 ] && D=nvfp4 || D=fp8_e4m3\npython -m sglang.launch_server --kv-cache-dtype $D\n'
    assert _paths(text3) == [("FP4=1", "nvfp4"), ("FP4!=1", "fp8_e4m3")]


def test_variables_set_in_one_branch_are_chosen_together():
    text = ("if [ \"$GPU\" = b200 ]; then D=nvfp4; B=trtllm_mha; else D=fp8_e4m3; B=triton; fi\n"
            "ARGS=\"--kv-cache-dtype $D\"\n"
            "python -m sglang.launch_server $ARGS --attention-backend $B\n")
    got = [(launch.condition, texts(launch)) for launch in launches(text)]
    assert got == [("GPU=b200", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha"]),
                   ("GPU!=b200", ["--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "triton"])]


def test_each_value_set_on_paths_counts_its_own_uses():
    """A use of a variable set differently on different paths is a use of each path's value (found once per
    binding in a walk, then reused): D's uses are not E's."""
    text = """\
if [ "$X" = 1 ]; then D=nvfp4; E=fp8_e4m3; else D=fp8_e4m3; E=nvfp4; fi
echo "$D"
echo "$E"
python -m sglang.launch_server --kv-cache-dtype "$E"
python -m sglang.launch_server --kv-cache-dtype "$D" --x "$D"
"""
    assert [value(launch, "--kv-cache-dtype").shared for launch in launches(text)] == [True] * 4


def test_a_value_used_by_two_launches_is_shared_and_an_argument_stays_unknown():
    text = ("if [ \"$GPU\" = b200 ]; then D=nvfp4; else D=fp8_e4m3; fi\n"
            "python -m sglang.launch_server --kv-cache-dtype $D\n"
            "python -m sglang.launch_server --kv-cache-dtype $D --port 2\n")
    assert all(value(launch, "--kv-cache-dtype").shared for launch in launches(text))
    assert _paths("D=$1\npython -m sglang.launch_server --kv-cache-dtype $D\n") == [(None, None)]


def test_read_and_subshell_assignments():
    text = "read -r D < dtype.txt\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    assert value(one(text), "--kv-cache-dtype").text is None
    text2 = "D=nvfp4\n( D=fp8_e4m3 )\necho x | D=auto\npython -m sglang.launch_server --kv-cache-dtype $D\n"
    assert value(one(text2), "--kv-cache-dtype").text == "nvfp4"
    text3 = "D=nvfp4\nunset D\npython -m sglang.launch_server --kv-cache-dtype \"$D\" --a ${D:-x}\n"
    assert texts(one(text3)) == ["--kv-cache-dtype", "", "--a", "x"]


def test_for_loop_sweep_gives_one_launch_per_value():
    text = """\
for dt in nvfp4 fp4_mx_block16 fp8_e4m3; do
  python -m sglang.bench_one_batch --kv-cache-dtype "$dt" --batch-size 1
done
"""
    ls = launches(text)
    assert [value(x, "--kv-cache-dtype").text for x in ls] == ["nvfp4", "fp4_mx_block16", "fp8_e4m3"]
    spans = [at(text, value(x, "--kv-cache-dtype").span) for x in ls]
    assert spans == [(1, 11, "nvfp4"), (1, 17, "fp4_mx_block16"), (1, 32, "fp8_e4m3")]
    assert {at(text, value(x, "--kv-cache-dtype").use) for x in ls} == {(2, 54, "$dt")}


def test_for_loop_over_an_array_and_identical_iterations_collapse():
    text = 'DTYPES=(nvfp4 fp8_e4m3)\nfor d in "${DTYPES[@]}"; do\n  for i in 1 2; do\n' \
           '    python -m sglang.launch_server --kv-cache-dtype $d\n  done\ndone\n'
    ls = launches(text)
    assert [value(x, "--kv-cache-dtype").text for x in ls] == ["nvfp4", "fp8_e4m3"]
    assert at(text, value(ls[0], "--kv-cache-dtype").span) == (1, 9, "nvfp4")


def test_unknown_loop_list_leaves_the_variable_unknown():
    text = "for d in $(cat dtypes); do python -m sglang.launch_server --kv-cache-dtype $d; done\n"
    assert value(one(text), "--kv-cache-dtype").text is None


def test_functions_see_globals_at_call_time_and_locals():
    text = """\
serve() {
  local dtype="$1"
  python -m sglang.launch_server --kv-cache-dtype "$DTYPE" --x "$dtype"
}
DTYPE=nvfp4
serve fp8
"""
    launch = one(text)
    assert value(launch, "--kv-cache-dtype").text == "nvfp4"
    assert value(launch, "--x").text == "fp8"  # $1 of the call
    assert at(text, value(launch, "--x").span) == (6, 7, "fp8")


def test_a_helper_that_changed_nothing_is_walked_again_only_where_what_it_reads_differs():
    """A call that found and changed nothing is counted, not walked again, where the same values are passed and the
    variables its body names hold the same bindings: any other call is walked (a launch there is found)."""
    text = """\
run() { $CMD "$@" --kv-cache-dtype fp4_e2m1; }
CMD=echo
run -m sglang.launch_server
run -m sglang.launch_server
CMD=python
run -m sglang.launch_server
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]  # CMD differs: walked again
    text = """\
run() { "$@" --kv-cache-dtype fp4_e2m1; }
run echo a
run echo a
run python -m sglang.launch_server
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]  # the words differ: walked again


def test_a_helper_called_alike_from_many_places_is_walked_once_or_twice(monkeypatch):
    """An install script computes versions through ``$(helper "$PLATFORM" "$V")`` from hundreds of places: a call
    with the values of an earlier one that found and changed nothing is counted instead of walked."""
    from kv4lint.frontends.shell.walk import Walker

    walked = []  # the joins after the helper's case statement
    real = Walker._join
    monkeypatch.setattr(Walker, "_join", lambda self, *a: (walked.append(a), real(self, *a))[1])
    text = 'version_of() {\n  case "$1" in\n    a) echo 2.6 ;;\n    *) echo "${2:-}" ;;\n  esac\n}\n' + "".join(
        f'V{k}="x-$(version_of nvidia "$(uname -r)")"\n' for k in range(50)) + \
        'python -m sglang.launch_server --x "$V0" --kv-cache-dtype fp8_e4m3\n'
    assert texts(one(text)) == ["--x", None, "--kv-cache-dtype", "fp8_e4m3"]
    assert 1 <= len(walked) <= 2


def test_a_log_helper_called_with_many_messages_is_walked_once_per_level(monkeypatch):
    """A log function called from thousands of places (av/harbor's ``harbor.sh``: ``log_error "..."`` 4,400 times)
    reads its level and only echoes the message: a call with another message is counted, not walked, through the
    wrapper, the helpers it calls in ``$(...)`` and the ``eval`` they run."""
    from kv4lint.frontends.shell.walk import Walker

    walked = []
    real = Walker.stmt
    monkeypatch.setattr(Walker, "stmt", lambda self, n, **kw: (walked.append(self.src.nt(n)), real(self, n, **kw))[1])
    text = """\
level_of() {
  local name="levels_$1"
  eval echo \\$$name
}
log() {
  local level="$1"
  shift
  local current
  current=$(level_of "$level")
  if [[ $current -ge 1 ]]; then
    echo "$(date +%T) [$level] $*" >&2
  fi
}
log_error() { log ERROR "$@"; }
levels_ERROR=3
""" + "".join(f'log_error "step {k} failed: $STEP_{k}"\n' for k in range(40)) + \
        "python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n"
    assert texts(one(text)) == ["--kv-cache-dtype", "fp8_e4m3"]
    assert walked.count("shift") <= 2  # log's body: walked once (twice at most), not once per message


@pytest.mark.parametrize("text", [
    # the argument's value is read (a command word): every value is walked
    'run() { local what="$1"; shift; echo "running $*"; $what -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\n'
    "run echo a\nrun echo b\nrun python x\n",
    # passed on with "$@": the call within reads it
    'inner() { "$1" -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\nouter() { inner "$@"; }\n'
    "outer echo\nouter python\n",
    # inside $(...) in a word that is only echoed: the call within reads it
    'g() { "$1" -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\nf() { echo "$(g "$1")"; }\n'
    "f echo\nf python\n",
    # ${1:-...}: whether the rest is read depends on the value
    'f() { echo "${1:-$(python -m sglang.launch_server --kv-cache-dtype fp4_e2m1)}"; }\nf x\nf ""\n',
    # ${X:=$1} in a word only echoed: the value is assigned, and read after
    'f() { local X; echo "${X:=$1}"; $X -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\nf echo\nf python\n',
    # a variable named only by a function called within
    'helper() { $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\nouter() { helper; }\n'
    "CMD=echo\nouter\nCMD=python\nouter\n",
    # a variable named only by the text an eval runs
    'run() { local v="CMD_$1"; eval "\\$$v -m sglang.launch_server --kv-cache-dtype fp4_e2m1"; }\n'
    "export CMD_a=echo\nrun a\nexport CMD_a=python\nrun a\n",
    # a local whose value reads the variable it shadows
    'f() { local CMD="$CMD"; $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }\n'
    "CMD=echo\nf\nCMD=python\nf\n",
    # a local made after a statement that reads the variable it shadows
    'f() { $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; local CMD=x; }\nCMD=echo\nf\nCMD=python\nf\n',
    'f() { if true; then $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; fi; local CMD=x; }\n'
    "CMD=echo\nf\nCMD=python\nf\n",
])
def test_a_call_that_found_nothing_is_walked_again_where_what_it_read_differs(text):
    """A call counted instead of walked must have read the same values: the arguments whose values it read, the
    variables of its body, of the functions it called and of the text it ran. Each script finds its launch on
    the last call, after calls alike that found nothing."""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]


def test_a_call_counted_instead_of_walked_is_not_counted_where_its_walk_would_differ():
    """Where a function the first walk called is being walked around the call (recursion, not walked again), or
    the calls within would go past the bound on calls within calls, the call is walked: a launch found, a file
    error said, as when every call is walked."""
    text = """\
X() { "$@"; V=echo; }
g() { local V=python; X; $V -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }
g
X g
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]  # inside X, g's call of X is not walked: V=python
    text = """\
X() { "$@"; V=python; }
g() { local V=echo; X; $V -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }
( X g )
g
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]  # not walked inside X: not counted for g alone
    chain = "".join(f"f{k}() {{ f{k + 1}; }}\n" for k in range(1, 9)) + "f9() { echo; }\n"
    found = scan(chain + "f1\ng() { f1; }\ng\npython -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n")
    assert [e.message for e in found.errors] == ["a shell script of function calls nested more than 8 deep (the "
                                                 "limit kv4lint reads), near line 9: later calls are not walked"]


def test_a_call_that_read_a_variable_of_several_paths_is_counted_only_on_the_same_path():
    """A helper that read a variable set differently on different paths walked differently on each: counted
    again only where the same paths are chosen around it."""
    text = """\
helper() { $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }
if [ "$X" = 1 ]; then CMD=echo; else CMD=python; fi
helper "$CMD"
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]
    # read per path inside the helper: which of its paths can run depends on the conditions of the path around it
    text = """\
helper() { $CMD -m sglang.launch_server --kv-cache-dtype fp4_e2m1; }
if [ "$X" = 1 ]; then A=a1; else A=a2; fi
if [ "$X" = 1 ]; then CMD=echo; else CMD=python; fi
helper "$A"
"""
    assert texts(one(text)) == ["--kv-cache-dtype", "fp4_e2m1"]
    # through a helper it calls, counted there: the call around it depends on the paths that one read, and on
    # the conditions of the paths around it where that one read a command per path
    for ifs in ["", 'if [ "$X" = 1 ]; then A=a1; else A=a2; fi\n']:
        text = ('inner() { $CMD -m sglang.launch_server --kv-cache-dtype "$1"; }\nouter() { inner fp4_e2m1 x; }\n'
                + ifs + 'if [ "$X" = 1 ]; then CMD=echo; else CMD=python; fi\n'
                + ('inner fp4_e2m1 "$A"\nouter "$A"\n' if ifs else 'inner fp4_e2m1 "$CMD"\nouter "$CMD"\n'))
        found = [(texts(x), at(text, value(x, "--kv-cache-dtype").span)) for x in launches(text)]
        assert sorted(found) == [(["--kv-cache-dtype", "fp4_e2m1"], (2, 17, "fp4_e2m1")),
                                 (["--kv-cache-dtype", "fp4_e2m1"], (len(text.splitlines()) - 1, 7, "fp4_e2m1"))]


def test_a_call_counted_instead_of_walked_meets_the_choices_its_walk_met(monkeypatch):
    """A helper that reads a variable set differently on different paths makes the command around it read once per
    path, whether it is walked or counted."""
    from kv4lint.frontends.shell.walk import Walker

    per_path = []
    real = Walker._every_combination
    monkeypatch.setattr(Walker, "_every_combination", lambda self, *a: (per_path.append(1), real(self, *a))[1])
    text = """\
get() { echo "$DTYPE"; }
if [ "$X" = 1 ]; then DTYPE=fp4_e2m1; else DTYPE=fp8_e4m3; fi
python -m sglang.launch_server --kv-cache-dtype fp8_e4m3 --x "$(get)"
python -m sglang.launch_server --kv-cache-dtype fp8_e4m3 --y "$(get)"
"""
    assert len(launches(text)) == 2
    assert len(per_path) == 2


def test_a_join_holds_only_what_each_path_changed():
    """After a ``case`` or ``if`` (the state every path began from, and the names each path set), each variable a
    path set is a choice holding only the paths that changed it; each path reads the binding the full form gives
    (a ``case`` of n arms each setting its own variable holds n bindings, not n times n)."""
    from kv4lint.frontends.shell.choices import merge_choices
    from kv4lint.frontends.shell.variables import SCALAR, Alts, Assignment, Binding
    from kv4lint.frontends.shell.parse import Chars
    from kv4lint.frontends.shell.variables import Variables

    def scalar(name: str, text: str) -> Binding:
        return Binding(SCALAR, Chars(text), assign=Assignment(name, None))

    base = Variables()
    base.set("V", scalar("V", "base"))
    ends = []
    for k in range(4):
        ends.append(base.copy())
        ends[k].set(f"W{k}", scalar(f"W{k}", f"w{k}"))
    ends[1].set("V", scalar("V", "x"))
    written = [{"W0"}, {"W1", "V"}, {"W2"}, {"W3"}]
    names = {"V", "W0", "W1", "W2", "W3"}
    sparse = merge_choices(ends, list("abcd"), names, base=base, written=written)
    full = merge_choices(ends, list("abcd"), names)
    for n in sorted(names):
        got, want = sparse.vars.get(n), full.vars.get(n)
        assert isinstance(got.alts, Alts) and len(got.alts.own) == 1, n
        assert all(got.alts[k] is want.alts[k] for k in range(4)), n
        assert (got.known, got.size) == (want.known, want.size), n


def test_a_command_substitution_leaves_the_assignment_around_it_as_it_was():
    """``ARGS="$(f) $ARGS"``: an assignment inside the substitution (a call of ``f``) does not end the reading of
    the value around it, so a call counted instead of walked leaves it as a walk does."""
    from kv4lint.frontends.shell.parse import ShellText, parse_shell
    from kv4lint.frontends.shell.variables import Variables
    from kv4lint.frontends.shell.walk import Walker, _Scan

    src = ShellText('x="$1"\ny="$x"\n')
    walker = Walker(_Scan("t.sh", None), src, Variables(), [])
    walker.src, tree = parse_shell(src)
    walker.x.src = walker.src
    x = walker.x
    x.lazy, x.lazy_target, x.lazy_unresolved = True, "ARGS", True
    walker.subshell(tree.root_node.named_children)
    assert (x.lazy, x.lazy_target, x.lazy_unresolved) == (True, "ARGS", True)


def test_a_helper_counted_again_still_meets_the_depth_bound_where_a_walk_would():
    """A helper walked first near the top is walked again (not counted) where its body would go past the depth
    kv4lint reads: the file says so, as when every call is walked."""
    helper = "helper() {\n" + "{ " * 35 + 'echo "$1"' + " ; }" * 35 + "\n}\n"
    deep = "if true; then " * 25 + 'helper "$V"' + "; fi" * 25 + "\n"
    found = scan(helper + 'helper "$V"\n' + deep + "python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n")
    assert [e.message for e in found.errors] == \
        ["shell text nested more than 60 levels deep near line 2: not scanned further"]


def test_a_plain_word_is_read_directly_as_the_general_route_reads_it():
    """fields() reads a plain word (or number) from its text directly, and split() known, unsplit text (a literal,
    a quoted string, their concatenation) as one field at once: the same fields as the general route makes."""
    from kv4lint.base.model import Span as S
    from kv4lint.frontends.shell.expand import _Lit
    from kv4lint.frontends.shell.variables import Variables
    from kv4lint.frontends.shell.parse import ShellText, parse_shell
    from kv4lint.frontends.shell.walk import Walker, _Scan

    def seen_as(fields):
        return [(f.chars.text, f.chars.pos, f.chars.res, f.full.text, f.full.pos, f.full.res, f.unknown, f.splat,
                 f.rm, f.s, f.e) for f in fields]

    text = 'A=x\npython -m sglang.launch_server --tp 8 a\\ b --x=$A "q" 0x1f ./r\\\n -- w/ü é "a"\'b\'c --y="$A"z\n'
    for src in (ShellText(text), ShellText(text, list(range(100, 100 + len(text) + 1)), None, S(0, 1))):
        walker = Walker(_Scan("t.sh", None), src, Variables(), [])
        walker.src, tree = parse_shell(src)
        walker.x.src = walker.src
        stack, plain, joined = [tree.root_node], 0, 0
        while stack:
            n = stack.pop()
            stack.extend(n.children)
            if n.type not in ("word", "number", "string", "raw_string", "concatenation"):
                continue
            parts = walker.x.parts(n, False)
            general = seen_as(walker.x._split_all(parts, *walker.src.ns(n)))
            if all(type(p) is _Lit and not p.split for p in parts):  # known text, not split: split()'s own route
                assert seen_as(walker.x.split(parts, *walker.src.ns(n))) == general, walker.src.nt(n)
                joined += len(parts) > 1
            if n.type in ("word", "number"):
                plain += 1
                assert seen_as(walker.x.fields(n)) == general, walker.src.nt(n)
        assert plain >= 10 and joined >= 1


def test_function_dispatched_through_args_is_walked_with_the_final_state():
    text = 'start() { python -m sglang.launch_server --kv-cache-dtype $D; }\nD=nvfp4\n"$@"\n'
    assert value(one(text), "--kv-cache-dtype").text == "nvfp4"


def test_line_continuation_pitfalls():
    text = """\
python -m sglang.launch_server --model-path a \\
  --tp 2 \\ # a comment after the backslash ends the command
  --kv-cache-dtype nvfp4
python -m sglang.launch_server --model-path b \\

  --kv-cache-dtype nvfp4
python -m sglang.launch_server --model-path c \\
#  --kv-cache-dtype nvfp4 \\
  --port 1
"""
    ls = launches(text)
    assert [texts(x)[:2] for x in ls] == [["--model-path", "a"], ["--model-path", "b"], ["--model-path", "c"]]
    assert all("--kv-cache-dtype" not in texts(x) for x in ls)


def test_crlf_and_non_ascii_offsets_are_characters():
    text = "# ünïcödé ✓\r\nD=nvfp4 # ✓\r\npython -m sglang.launch_server \\\r\n  --kv-cache-dtype $D\r\n"
    v = value(one(text), "--kv-cache-dtype")
    assert text[v.span.start:v.span.end] == "nvfp4"
    assert at(text, v.use) == (4, 20, "$D")


# ---------------------------------------------------------------------------
# hints


def hints(launch: Launch) -> list[tuple[str, str, str]]:
    return [(h.kind, h.value, h.reason) for h in launch.hints]


@pytest.mark.parametrize("line,platform", [
    ("export HIP_VISIBLE_DEVICES=0,1", "rocm"),
    ("export ROCR_VISIBLE_DEVICES=0", "rocm"),
    ("export ZE_AFFINITY_MASK=0", "xpu"),
    ("export ASCEND_RT_VISIBLE_DEVICES=0,1", "npu"),
    ("export SGLANG_USE_CPU_ENGINE=1", "cpu"),
    ("HIP_VISIBLE_DEVICES=0", "rocm"),
    ("export HIP_VISIBLE_DEVICES", "rocm"),
])
def test_env_platform_hints(line, platform):
    text = f"{line}\npython -m sglang.launch_server --a\n"
    launch = one(text)
    [h] = [h for h in launch.hints if h.kind == "platform"]
    assert h.value == platform
    assert at(text, h.span)[:2] == (1, 1)
    assert h.reason.split("=")[0] == line.split("=")[0]


def test_env_hint_on_the_command_and_no_hint_for_false_switch():
    text = "HIP_VISIBLE_DEVICES=0 python -m sglang.launch_server --a\n"
    assert hints(one(text)) == [("platform", "rocm", "HIP_VISIBLE_DEVICES=0")]
    assert one("export SGLANG_USE_CPU_ENGINE=0\npython -m sglang.launch_server\n").hints == []
    # an export after the launch does not apply to it
    assert one("python -m sglang.launch_server\nexport HIP_VISIBLE_DEVICES=0\n").hints == []


def test_container_hints():
    text = ("docker run --device=/dev/kfd --device /dev/dri --group-add video "
            "lmsysorg/sglang:v0.5.23-rocm700-mi30x python3 -m sglang.launch_server --device cuda\n")
    launch = one(text)
    assert hints(launch) == [
        ("platform", "rocm", "image lmsysorg/sglang:v0.5.23-rocm700-mi30x"),
        ("sglang_version", "0.5.23", "image lmsysorg/sglang:v0.5.23-rocm700-mi30x"),
        ("platform", "rocm", "docker run --device /dev/kfd"),
    ]
    assert at(text, launch.hints[0].span)[2] == "lmsysorg/sglang:v0.5.23-rocm700-mi30x"
    assert texts(launch) == ["--device", "cuda"]  # a server argument, left to the rules
    xpu = one("docker run --device /dev/dri intel/img python3 -m sglang.launch_server\n")
    assert ("platform", "xpu", "docker run --device /dev/dri") in hints(xpu)


def test_hints_reach_nested_shells_and_outer_hints_are_attached():
    text = "export HIP_VISIBLE_DEVICES=0\nbash -c 'python -m sglang.launch_server'\n"
    assert hints(one(text)) == [("platform", "rocm", "export HIP_VISIBLE_DEVICES=0")]
    # docker does not pass the script's environment into the container
    text2 = "export HIP_VISIBLE_DEVICES=0\ndocker run img python -m sglang.launch_server\n"
    assert hints(one(text2)) == []
    extra = Hint("platform", "xpu", "FROM intel/x", Span(0, 4))
    assert one("python -m sglang.launch_server\n", hints=[extra]).hints == [extra]


def test_image_hints():
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:v0.5.23-cu129", None)] == \
        [("platform", "cuda"), ("sglang_version", "0.5.23")]
    assert [(h.kind, h.value) for h in image_hints("rocm/sgl-dev:v0.5.6.post2-rocm630-mi30x", None)] == \
        [("platform", "rocm"), ("sglang_version", "0.5.6.post2")]
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:v0.5.21-xpu", None)] == \
        [("platform", "xpu"), ("sglang_version", "0.5.21")]
    # A tag naming a moving development build, not a release: a build kv4lint does not know (issue 22).
    assert [(h.kind, h.value) for h in image_hints("ascend/sglang:npu-latest", None)] == \
        [("platform", "npu"), ("sglang_build", "latest")]
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:dev", None)] == [("sglang_build", "dev")]
    # A dated nightly names its build day (issue 26): the releases around it decide.
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:nightly-dev-cu13-20261201", None)] == \
        [("platform", "cuda"), ("sglang_nightly", "2026-12-01")]
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:nightly-dev-cu13", None)] == \
        [("platform", "cuda"), ("sglang_build", "nightly")]
    assert [h.value for h in image_hints("lmsysorg/sglang:v0.5.20-cpu", None)][0] == "cpu"
    assert [(h.kind, h.value) for h in image_hints("docker://lmsysorg/sglang:v0.5.16-cu129-b200", None)] == \
        [("platform", "cuda"), ("sglang_version", "0.5.16"), ("gpu", "sm100")]
    assert [(h.kind, h.value) for h in image_hints("lmsysorg/sglang:latest", None)] == [("sglang_build", "latest")]
    assert image_hints("lmsysorg/sglang", None) == []  # no tag: kv4lint does not guess
    assert image_hints("ubuntu:22.04", None) == []
    assert image_hints("python:3.11.9-slim", None) == []  # a version, but not SGLang's


def test_env_and_device_hint_helpers():
    assert env_hints("HIP_VISIBLE_DEVICES", None, None, how="export")[0].reason == "export HIP_VISIBLE_DEVICES"
    assert env_hints("SGLANG_USE_CPU_ENGINE", "true", None)[0].value == "cpu"
    assert env_hints("SGLANG_USE_CPU_ENGINE", None, None) == []
    assert env_hints("CUDA_VISIBLE_DEVICES", "0", None) == []
    assert [h.value for h in device_hints([("/dev/dri", None), ("/dev/kfd", None)])] == ["rocm"]
    assert [h.value for h in device_hints([("/dev/dri/renderD128", None)])] == ["xpu"]
    assert device_hints([("/dev/infiniband", None)]) == []


# ---------------------------------------------------------------------------
# what must stay silent


@pytest.mark.parametrize("text", [
    "echo python -m sglang.launch_server --kv-cache-dtype nvfp4\n",
    "echo \"run: python -m sglang.launch_server --kv-cache-dtype nvfp4\"\n",
    "printf '%s\\n' 'python3 -m sglang.launch_server --kv-cache-dtype nvfp4'\n",
    "# python -m sglang.launch_server --kv-cache-dtype nvfp4\n",
    "cat <<EOF\npython -m sglang.launch_server --kv-cache-dtype nvfp4\nEOF\n",
    "cat > run.sh <<'EOF'\npython -m sglang.launch_server --kv-cache-dtype nvfp4\nEOF\n",
    "pkill -f \"sglang.launch_server --kv-cache-dtype nvfp4\"\n",
    "pgrep -f 'python -m sglang.launch_server' || true\n",
    "grep -r 'python -m sglang.launch_server' .\n",
    "ps aux | grep sglang.launch_server | grep -v grep\n",
    "python train.py --note sglang.launch_server\n",
    "python -m sglang.check_env\n",
    "sglang version\n",
    "pip install 'sglang[all]>=0.5.23'\n",
    "command -v sglang\n",
    "x=\"python -m sglang.launch_server --kv-cache-dtype nvfp4\"\necho \"$x\"\n",
    "docker pull lmsysorg/sglang:v0.5.23-rocm700-mi30x\n",
    "kill $(pgrep -f sglang.launch_server)\n",
])
def test_not_a_launch(text):
    r = scan(text)
    assert r.launches == [] and r.errors == []


def test_quick_reject_does_not_import_tree_sitter():
    code = ("import sys; from kv4lint.frontends.shell import scan_shell; "
            "r = scan_shell('echo hello\\npython train.py\\n', 'x.sh'); "
            "assert r.launches == []; assert 'tree_sitter' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# embedded Python


@pytest.fixture
def fake_python(monkeypatch):
    """A stand-in for kv4lint.frontends.python that records what it was given."""
    calls = []
    mod = types.ModuleType("kv4lint.frontends.python")

    def scan_python(text, path, *, origin=None):
        calls.append((text, origin))
        span = Span(origin.offset(0), origin.offset(len(text)))
        kwargs = {}
        if "nvfp4" in text:  # a literal in the Python text, spanned as the Python frontend would
            k = text.index("nvfp4")
            kwargs["kv_cache_dtype"] = Value("nvfp4", origin.span(Span(k, k + 5)))
        return ScanResult(launches=[Launch(path, "kwargs", "Engine", span, span, kwargs=kwargs,
                                           language="python")])
    mod.scan_python = scan_python
    monkeypatch.setitem(sys.modules, "kv4lint.frontends.python", mod)
    return calls


@pytest.mark.parametrize("text,code", [
    ("python3 - <<'EOF'\nimport sglang as sgl\nsgl.Engine(kv_cache_dtype='nvfp4')\nEOF\n",
     "import sglang as sgl\nsgl.Engine(kv_cache_dtype='nvfp4')\n"),
    ("python <<EOF\nimport sglang as sgl\nsgl.Engine(kv_cache_dtype='nvfp4')\nEOF\n",
     "import sglang as sgl\nsgl.Engine(kv_cache_dtype='nvfp4')\n"),
    ("cat <<EOF | python3 -\nimport sglang\nEOF\n", "import sglang\n"),
    ("python3 -c 'import sglang; sglang.Engine()'\n", "import sglang; sglang.Engine()"),
    ("python3 <<< 'import sglang'\n", "import sglang"),
])
def test_python_code_goes_to_the_python_frontend(fake_python, text, code):
    ls = launches("export HIP_VISIBLE_DEVICES=0\n" + text)
    assert [c[0] for c in fake_python] == [code]
    inner, origin = fake_python[0]
    full = "export HIP_VISIBLE_DEVICES=0\n" + text
    k = inner.index("sglang")
    assert full[origin.offset(k):origin.offset(k) + 6] == "sglang"
    assert [x.language for x in ls] == ["python"]
    assert ("platform", "rocm", "export HIP_VISIBLE_DEVICES=0") in hints(ls[0])


def test_unquoted_python_heredoc_is_expanded(fake_python):
    text = 'D=nvfp4\npython3 - <<EOF\nimport sglang\nsglang.Engine(kv_cache_dtype="$D", x="\\$y")\nEOF\n'
    [launch] = launches(text)
    assert fake_python[0][0] == 'import sglang\nsglang.Engine(kv_cache_dtype="nvfp4", x="$y")\n'
    # the value came through $D: resolved, reported at the use, editable at the assignment
    v = launch.kwargs["kv_cache_dtype"]
    assert v.provenance is Provenance.RESOLVED and not v.shared
    assert at(text, v.span) == (1, 3, "nvfp4") and at(text, v.use) == (4, 31, "$D")
    [again] = launches(text + "echo $D\n")
    assert again.kwargs["kv_cache_dtype"].shared
    [literal] = launches("python3 - <<EOF\nimport sglang\nsglang.Engine(kv_cache_dtype='nvfp4')\nEOF\n")
    assert literal.kwargs["kv_cache_dtype"].provenance is Provenance.LITERAL


def test_missing_python_frontend_is_tolerated(monkeypatch):
    monkeypatch.setitem(sys.modules, "kv4lint.frontends.python", None)  # import fails
    r = scan("python3 - <<'EOF'\nimport sglang\nEOF\n")
    assert r.launches == [] and r.errors == []


def test_shell_heredoc_is_walked():
    text = "D=nvfp4\nbash <<EOF\npython -m sglang.launch_server --kv-cache-dtype $D\nEOF\n"
    v = value(one(text), "--kv-cache-dtype")
    assert at(text, v.span) == (1, 3, "nvfp4") and v.provenance is Provenance.RESOLVED
    text2 = "ssh node bash -s <<'EOF'\npython -m sglang.launch_server --kv-cache-dtype nvfp4\nEOF\n"
    assert at(text2, value(one(text2), "--kv-cache-dtype").span) == (2, 49, "nvfp4")


# ---------------------------------------------------------------------------
# suppressions


def test_disable_comment_above_the_command():
    text = """\
# kv4lint: disable=KV402, KV401
# (ROCm box; we know)
nohup python -m sglang.launch_server --a &

python -m sglang.launch_server --b
# kv4lint: disable
cd x &&
  python -m sglang.launch_server --c
"""
    ls = launches(text)
    assert [(texts(x), set(x.disabled)) for x in ls] == [
        (["--a"], {"KV401", "KV402"}), (["--b"], set()), (["--c"], {"ALL"})]


def test_disable_does_not_cross_blank_lines_or_reach_into_blocks():
    text = "# kv4lint: disable=KV402\n\npython -m sglang.launch_server\n" \
           "# kv4lint: disable=KV402\nif true; then\n  python -m sglang.launch_server\nfi\n"
    assert [x.disabled for x in launches(text)] == [frozenset(), frozenset()]


def test_disable_file():
    r = scan("#!/bin/sh\n# kv4lint: disable-file=KV402,KV404\npython -m sglang.launch_server\n")
    assert r.disabled == frozenset({"KV402", "KV404"})
    assert scan("# kv4lint: disable-file\necho\n").disabled == frozenset({"ALL"})
    assert scan("echo '# kv4lint: disable-file'\n").disabled == frozenset()


def test_disable_applies_to_launches_inside_a_shell_string():
    text = "# kv4lint: disable=KV402\nbash -c 'python -m sglang.launch_server'\n"
    assert one(text).disabled == frozenset({"KV402"})


# ---------------------------------------------------------------------------
# syntax errors and hostile input


def test_syntax_error_is_reported_and_the_rest_scanned():
    text = "if true; then\n  python -m sglang.launch_server --kv-cache-dtype nvfp4 --a \"b\nfi\n"
    r = scan(text)
    assert [e.line for e in r.errors] == [2]
    assert r.errors[0].message.startswith("shell syntax error near line 2")
    assert [texts(x) for x in r.launches] == [["--kv-cache-dtype", "nvfp4", "--a"]]
    text2 = "foo ) bar\npython3 -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    r2 = scan(text2)
    assert [e.line for e in r2.errors] == [1] and len(r2.launches) == 1


def test_unterminated_heredoc():
    r = scan("python -m sglang.launch_server --a\ncat <<EOF\nno end\n")
    assert len(r.launches) == 1
    assert r.errors and "heredoc" in r.errors[0].message


DEEP = "shell text nested more than 60 levels deep near line 1: not scanned further"


# (hostile text, the launches found as their words (None: a value kv4lint cannot know), the errors reported).
# A launch kv4lint cannot reach is reported as an error naming the line, never silently dropped.
@pytest.mark.parametrize("text,found,errors", [
    # A value nested past the limit is unknown, and the text in it unread: a file error, never "clean".
    ("python -m sglang.launch_server --x " + "$( " * 3000 + "x" + " )" * 3000, [["--x", None]], [DEEP]),
    ("python -m sglang.launch_server --x " + '"$(' * 3000 + "x" + ')"' * 3000, [["--x", None]], [DEEP]),
    ("python -m sglang.launch_server --x " + "${A:-" * 3000 + "x" + "}" * 3000, [["--x", None]], [DEEP]),
    # The same in a launch read once per path of a knob: the reading that learns the knob is undone, and the error
    # with it; the readings kept say it again (a flag left set would have said it never).
    ('[ "$B" = 1 ] && X=2\npython -m sglang.launch_server --tp "${X:-1}" --x ' + "${A:-" * 70 + "x" + "}" * 70,
     [["--tp", "1", "--x", None], ["--tp", "2", "--x", None]], [DEEP.replace("line 1", "line 2")]),
    # A launch inside 30 nested command substitutions (each a statement in a substitution: 2 levels).
    ("X=" + "$( " * 30 + "python -m sglang.launch_server --x" + " )" * 30, [], [DEEP]),
    ("X=" + "$( " * 25 + "python -m sglang.launch_server --x" + " )" * 25, [["--x"]], []),
    ("bash -c " + "\"$( " * 30 + "python -m sglang.launch_server" + " )\"" * 30, [], [DEEP]),
    ("{ " * 2000 + "python -m sglang.launch_server" + "; }" * 2000, [], [DEEP]),
    ("if x; then " * 400 + "python -m sglang.launch_server" + "; fi" * 400, [], [DEEP]),
    ("python -m sglang.launch_server 'unterminated\n" * 50,
     [["unterminated\npython -m sglang.launch_server unterminated"]] * 25, []),
    ("python -m sglang.launch_server --a \"$(", [["--a"]], ['shell syntax error near line 1: unterminated "']),
    ("python -m sglang.launch_server <<EOF", [[]], ["shell syntax error near line 1: cannot parse '<<EOF'"]),
    ("sglang \x00\x01\x02 $'\\x", [], ["shell syntax error near line 1: cannot parse \"\\x00\\x01\\x02 $'\\\\x\""]),
    # Calls within calls past the bound are not walked (each function is walked once), and the file says so.
    ("\n".join(f"f{i}() {{ f{i + 1}; f{i + 1}; }}" for i in range(40))
     + "\nf40() { python -m sglang.launch_server; }\nf0\n", [[]],
     ["a shell script of function calls nested more than 8 deep (the limit kv4lint reads), near line 10: later "
      "calls are not walked"]),
    # Nested loops past the bound on iterations walked: the innermost is walked once, its variable a choice of
    # its items, so every value is still judged.
    ("for a in 1 2 3 4 5 6 7 8; do for b in 1 2 3 4 5 6 7 8; do for c in 1 2 3 4 5 6 7 8; do "
     "python -m sglang.launch_server --a $a$b$c; done; done; done\n",
     [["--a", f"{a}{b}{c}"] for a in range(1, 9) for b in range(1, 9) for c in range(1, 9)], []),
    ("f() { f; }; f; python -m sglang.launch_server\n", [[]], []),
    ("eval \"$(echo python -m sglang.launch_server)\"\n", [], []),  # a command's output: not a launch kv4lint sees
])
def test_hostile_input_is_scanned_or_reported(text, found, errors):
    r = scan_shell(text, "x.sh")
    assert [texts(launch) for launch in r.launches] == found
    assert [e.message for e in r.errors] == errors


def test_many_commands():
    text = " && ".join("python -m sglang.launch_server --a %d" % i for i in range(2000)) + "\n"
    ls = launches(text)
    assert len(ls) == 2000 and texts(ls[-1]) == ["--a", "1999"]


_SHELLISH = st.lists(st.sampled_from(list("abc $'\"\\`(){}[];&|<>#=\n\t-:!*@0") + [
    "sglang", "python -m sglang.launch_server ", "<<EOF\n", "EOF\n", "${", "$(", "\\\n", "bash -c ", "X=", "$X",
    "--kv-cache-dtype ", "nvfp4", "for x in a b; do ", "; done", "if x; then ", "; fi", "ü"]), max_size=60).map("".join)


@given(_SHELLISH)
def test_fuzz_never_raises_and_spans_stay_in_the_text(text):
    r = scan_shell(text, "f.sh")
    assert not [e for e in r.errors if "internal error" in e.message], r.errors
    for launch in r.launches:
        for s in (launch.span, launch.anchor, *(v.span for v in launch.argv), *(v.remove for v in launch.argv)):
            if s is not None:
                assert 0 <= s.start <= s.end <= len(text)
        for v in launch.argv:
            if v.span is not None and v.text is not None:
                assert text[v.span.start:v.span.end] == v.text
    split_words(text)


# ---------------------------------------------------------------------------
# embedded shell (origin), split_words


def test_origin_maps_spans_into_the_file():
    # A Python string holding the shell text; one character is written as an escape.
    outer = 'cmd = "python -m sglang.launch_server --kv-cache-dtype nvfp4 --x a\\x62c"\n'
    inner = "python -m sglang.launch_server --kv-cache-dtype nvfp4 --x abc"
    esc = outer.index("\\x62")
    starts = list(range(7, esc)) + [esc, esc + 4]
    origin = OffsetMap(starts + [esc + 5])
    assert len(starts) == len(inner)
    launch = one(inner, origin=origin)
    v = value(launch, "--kv-cache-dtype")
    assert outer[v.span.start:v.span.end] == "nvfp4"
    assert outer[v.remove.start:v.remove.end] == " nvfp4"
    assert outer[launch.anchor.start:launch.anchor.end] == "python -m sglang.launch_server"
    x = value(launch, "--x")
    assert x.text == "abc" and x.span is None  # "b" is written as an escape
    assert x.remove is None


def test_syntax_error_line_in_an_embedded_text():
    file_text = "line one\nline two\nRUN python -m sglang.launch_server 'x\n"
    inner = "python -m sglang.launch_server 'x\n"
    origin = OffsetMap.contiguous(file_text.index("python"), len(inner))
    r = scan(inner, origin=origin, file_text=file_text)
    assert [e.line for e in r.errors] == [3]


def test_env_seeds_variables():
    text = "python -m sglang.launch_server --kv-cache-dtype $DTYPE --m ${MODEL:-x}\n"
    launch = one(text, env={"DTYPE": "nvfp4"})
    v = value(launch, "--kv-cache-dtype")
    assert v.text == "nvfp4" and v.span is None and v.provenance is Provenance.RESOLVED
    assert at(text, v.use)[2] == "$DTYPE"
    assert one("$CMD --a\n", env={"CMD": "python -m sglang.launch_server"}).entry == "sglang.launch_server"


def test_split_words():
    text = "A=1 python -m sglang.launch_server --kv-cache-dtype 'nv fp4' $Y \"$@\" --z=\"q\""
    vs = split_words(text)
    assert [v.text for v in vs] == ["A=1", "python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nv fp4",
                                    None, None, "--z=q"]
    assert text[vs[5].span.start:vs[5].span.end] == "nv fp4"
    assert text[vs[5].remove.start:vs[5].remove.end] == " 'nv fp4'"
    assert vs[6].splat and vs[7].splat and vs[8].span is None
    assert split_words("") == [] and split_words("  \n") == []
    base = 10
    ws = split_words("python -m x --a b", origin=OffsetMap.contiguous(base, 17))
    assert ws[4].span == Span(base + 16, base + 17)
    assert [v.text for v in split_words("python -m x 'unterminated")][:3] == ["python", "-m", "x"]


def test_wrapper_option_with_an_unknown_value():
    text = ("node=$(( gpu / 4 ))\nnumactl --cpunodebind=$node --membind=$node -C$cpus "
            "python3 -m sglang.launch_server --a\n")
    assert texts(one(text)) == ["--a"]


def test_nearest_hint_comes_first():
    outer = Hint("platform", "cuda", "FROM nvidia/cuda", Span(0, 1))
    text = "export HIP_VISIBLE_DEVICES=0\nZE_AFFINITY_MASK=0 python -m sglang.launch_server\n"
    assert [h.value for h in one(text, hints=[outer]).hints] == ["xpu", "rocm", "cuda"]


def test_function_arguments_are_the_call_sites_words():
    text = """\
launch() {
  local model=$1
  shift
  python -m sglang.launch_server --model-path "$model" "$@" --n $# --rest "${@:2}" --x ${3:-dflt}
}
launch meta-llama/Llama-3.1-8B --kv-cache-dtype nvfp4 \\
  --port 1
launch other "$@"
"""
    first, second = launches(text)
    assert texts(first) == ["--model-path", "meta-llama/Llama-3.1-8B", "--kv-cache-dtype", "nvfp4", "--port", "1",
                            "--n", "4", "--rest", "nvfp4", "--port", "1", "--x", "--port"]
    v = first.argv[3]  # the literal written at the call site: reported and edited there
    assert v.provenance is Provenance.LITERAL and at(text, v.span) == (6, 49, "nvfp4")
    assert text[v.remove.start:v.remove.end] == " nvfp4"
    assert at(text, value(first, "--model-path").use) == (4, 48, "$model")
    # called with the script's own (unknown) arguments: everything after $1 is unknown
    assert texts(second) == ["--model-path", "other", None, "--n", None, "--rest", None, "--x", None]
    assert second.argv[2].splat


def test_set_positional_parameters():
    text = "set -- --kv-cache-dtype nvfp4\nf() { python -m sglang.launch_server \"$@\"; }\nf \"$@\"\n"
    assert texts(one(text)) == ["--kv-cache-dtype", "nvfp4"]


# ---------------------------------------------------------------------------
# tree-sitter-bash reads outside the C library's ctype table for a non-ASCII
# character after "{" (its scanner calls isdigit on it): a segmentation fault
# for some inputs, depending on the process's memory layout.

_BRACE_HAZARDS = ["{", "${", "{1", "{1..", "{12..3", "x{", "a.", "9"]
_FAR_CODE_POINTS = [0x80, 0x7FF, 0xFFFF, 0x30000, 0xC3086, 0xF0000, 0x10FFFF]


def test_parser_never_sees_a_non_ascii_character_after_a_brace(monkeypatch):
    import kv4lint.frontends.shell.parse as shell

    seen = []

    class Recorder:
        def parse(self, data):
            seen.append(data)
            return shell.__dict__["_REAL_PARSER"].parse(data)

    monkeypatch.setitem(shell.__dict__, "_REAL_PARSER", shell._parser())
    monkeypatch.setattr(shell, "_parser", lambda: Recorder())
    for h in _BRACE_HAZARDS:
        text = "".join(f"sglang serve --model-path {h}{chr(c)}\u00a0z\n" for c in _FAR_CODE_POINTS)
        scan_shell(text, "x.sh")
    text = "python -m sglang.launch_server --model-path {\U000f0000}/m --kv-cache-dtype nvfp4\n"
    r = scan_shell(text, "x.sh")
    assert len(seen) == len(_BRACE_HAZARDS) + 1 and len(seen[-1]) == len(text.encode())  # byte offsets kept
    for data in seen:
        assert not re.search(rb"[{.0-9][\x80-\xff]", data)
    # kv4lint reads its own text, not the parser's: the launch's values are the file's
    (launch,) = r.launches
    assert [v.text for v in launch.argv] == ["--model-path", "{\U000f0000}/m", "--kv-cache-dtype", "nvfp4"]
    assert text[launch.argv[3].span.start:launch.argv[3].span.end] == "nvfp4"


def test_brace_then_far_code_point_does_not_crash_the_process():
    # the crash depends on the memory layout (about half of the processes on
    # glibc, unpatched): several fresh processes make a regression show
    code = ("from kv4lint.frontends.shell import scan_shell\n"
            "from kv4lint.frontends.makefile import scan_makefile\n"
            f"for h in {_BRACE_HAZARDS!r}:\n"
            f"    for c in range(0x80, 0x110000, 0x800):\n"
            "        if not 0xD800 <= c < 0xE000:\n"
            "            scan_shell('sglang serve ' + h + chr(c) + '\\n', 'x.sh')\n"
            "scan_makefile('serve:\\n\\tsglang serve {\\U000c3086', 'Makefile')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(8)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 8


# ---------------------------------------------------------------------------
# A command whose words as written run nothing kv4lint follows is not read further (kv4lint.frontends.shell.inert);
# what unwrap told of the same words is remembered for the process (inert._UNWRAPPED), by all it reads of them.

# (the module through a variable: a command that names sglang as written is read whole, never asked of unwrap)
_SERVE = "-m $M --model-path m --kv-cache-dtype fp4_e2m1\n"
_CHOSEN = "if [ -x /usr/bin/python3 ]; then P=python3; else P=python; fi\n"


@pytest.mark.parametrize("before,script", [
    ("nohup $CMD " + _SERVE, "nohup $PYTHON " + _SERVE),  # an unknown word as written: $PYTHON runs Python
    ('nohup "$P" ' + _SERVE, _CHOSEN + 'nohup "$P" ' + _SERVE),  # $P from the environment; $P chosen: read it
    (_CHOSEN + 'nohup "$P" ' + _SERVE, _CHOSEN + 'nohup "$P" ' + _SERVE),  # the same words again
])
def test_a_command_is_read_as_its_own_words_say_after_others_like_it(before, script):
    from kv4lint.frontends.shell import inert

    module = "M=sglang.launch_server\n"
    inert._UNWRAPPED.clear()
    alone = [texts(launch) for launch in launches(module + script)]
    assert alone  # each of these launches
    inert._UNWRAPPED.clear()
    launches(module + before)
    assert [texts(launch) for launch in launches(module + script)] == alone


def test_a_command_that_names_an_sglang_module_is_read_whole_without_asking_unwrap_first(monkeypatch):
    """Most commands whose words name one of sglang's modules launch: they are read whole at once, their words not
    first given to unwrap as written (inert._follows) and then again as expanded. An installer's commands that name
    sglang otherwise are still told inert on their words."""
    from kv4lint.frontends.shell import inert

    asked = []
    real = inert._follows
    monkeypatch.setattr(inert, "_follows", lambda key, *a: asked.append(key) or real(key, *a))
    script = ("P=python\n$P -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1\ntimeout 5 curl x\n"
              'uv pip install "sglang[all]==0.5.23"\n')
    (launch,) = launches(script)
    assert texts(launch)[-1] == "fp4_e2m1"
    assert asked == [("timeout", "5", "curl", "x"), ("uv", "pip", "install", ('"sglang[all]==0.5.23"', False, False))]
    # the text looked for is the one all of SGLang's server modules start with (kv4lint.sglang.commands)
    from kv4lint.sglang.commands import SERVER_MODULES

    assert inert.SERVER_MODULE_PREFIX == "sglang." and all(m.startswith("sglang.") for m in SERVER_MODULES)


def test_a_command_read_per_path_expands_again_only_the_words_that_differ(monkeypatch):
    """A command read once per path of a knob (``[ "$BIG" = 1 ] && TP=8`` before it) is expanded again on each
    path. The words that read no variable set differently on different paths, change nothing and run nothing
    expand the same on every path, and are expanded once (Walker._command_words); a word whose substitution
    runs a command, or that assigned (``${KV:=...}``), is expanded again, as is the word that differs."""
    from collections import Counter

    from kv4lint.frontends.shell.expand import Expander

    expanded: Counter = Counter()
    real = Expander.fields_at
    monkeypatch.setattr(Expander, "fields_at",
                        lambda self, node, t, s, e: expanded.update([self.src.text[s:e]]) or real(self, node, t, s, e))
    script = ('M=m\nTP=2\n[ "$BIG" = 1 ] && TP=8\npython -m sglang.launch_server --model-path "$M" --tp "$TP" '
              '--served-model-name "$(echo x)" --kv-cache-dtype ${KV:=fp4_e2m1}\n')
    found = sorted(texts(launch) for launch in launches(script))
    assert found == [["--model-path", "m", "--tp", tp, "--served-model-name", None, "--kv-cache-dtype", "fp4_e2m1"]
                     for tp in ("2", "8")]
    # once to learn that the command reads a knob, then once on each of its two paths; ${KV:=...} assigned the
    # first time, and is kept from the first path on, where it found KV set
    assert {w: expanded[w] for w in ('"$TP"', '"$(echo x)"', "${KV:=fp4_e2m1}")} == {
        '"$TP"': 3, '"$(echo x)"': 3, "${KV:=fp4_e2m1}": 2}
    assert {w: expanded[w] for w in ("python", "--model-path", '"$M"', "--kv-cache-dtype")} == dict.fromkeys(
        ("python", "--model-path", '"$M"', "--kv-cache-dtype"), 1)
    # and the launches of the two paths share the records of those words (launches.build_launches)
    two, eight = sorted(launches(script), key=lambda launch: texts(launch)[3])
    assert [a is b for a, b in zip(two.argv, eight.argv)] == [True, True, True, False, True, False, True, True]


_FP4 = [["--kv-cache-dtype", "fp4_e2m1"]]


@pytest.mark.parametrize("command,inert,found", [
    ('curl -sf "http://127.0.0.1:${PORT}/health"', True, []),  # ends in /health whatever PORT holds
    ('wget -q -O /dev/null "http://$HOST:$PORT/v1/models"', True, []),
    ("nohup $DIR/python -m $M --kv-cache-dtype fp4_e2m1", False, _FP4),  # ends in /python: read, and it launches
    ('nohup "${DIR}/python3.11" -m $M --kv-cache-dtype fp4_e2m1', False, _FP4),
    ("nohup ${DIR}/$PY -m $M --kv-cache-dtype fp4_e2m1", False, []),  # ends unknown: read (PY may be python)
    ("/entrypoint.sh $DIR/python -m $M --kv-cache-dtype fp4_e2m1", False, _FP4),  # the command it runs
])
def test_an_unknown_word_that_ends_in_a_path_is_told_by_its_name_without_reading_it(monkeypatch, command, inert,
                                                                                    found):
    """An unknown program's arguments may be the command it runs (unwrap's _passed_on); a word whose value ends
    in ``/NAME`` whatever its expansions give (its suffix: ``/health`` of ``"http://$HOST/health"``) is such a
    command only when NAME is a program kv4lint follows, and is told so without being read: the command stays
    inert (Walker._inert), its words not built."""
    from kv4lint.frontends.shell import walk

    built = []
    real = walk.Walker._command_words
    monkeypatch.setattr(walk.Walker, "_command_words", lambda self, n, *a: built.append(n) or real(self, n, *a))
    got = launches(f"M=sglang.launch_server\n{command}\n")
    assert (not built) == inert
    assert [texts(launch) for launch in got] == found


@pytest.mark.parametrize("line,inert", [
    ("set -euo pipefail", True),  # shell options only: runs nothing, sets nothing the walk reads
    ("set -e -o pipefail +x", True),
    ("set -ex  # trace", True),
    ("set '-e' -o pipefail", True),  # quoted, as bash reads it
    ("set -ae", False),  # allexport on: what is set after it reaches inner shells (inert.allexport)
    ("set -o allexport", False),
    ("set +o allexport", False),
    ("set -- a b", False),  # the positional parameters
    ("set -e $FLAGS", False),  # a word as written tells nothing
    ("set -e*", False),
])
def test_a_set_of_shell_options_only_is_inert(monkeypatch, line, inert):
    """``set -euo pipefail`` (in most scripts, often several times in a long one) runs nothing and sets nothing the
    walk reads: its words are not built (Walker._inert). A ``set`` that may turn allexport on or off, or set the
    positional parameters, is read in full; the launch after it is read as before."""
    from kv4lint.frontends.shell import walk

    built = []
    real = walk.Walker._command_words
    monkeypatch.setattr(walk.Walker, "_command_words",
                        lambda self, n, *a: built.append(self.src.text[n.start_byte:n.end_byte]) or real(self, n, *a))
    got = launches(f"{line}\npython -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1\n")
    assert (line.split("  #")[0] not in built) == inert
    assert [texts(launch)[-2:] for launch in got] == _FP4


def test_an_inner_shell_sees_the_exported_variables_it_names_and_the_platform_ones():
    """``bash -c`` is given the exported variables its text names (Walker._child_env), not all of them: what it
    names keeps its value and its definition's span, what is not exported stays unset there, and an exported
    platform variable it never names still says where it runs."""
    text = ("export HIP_VISIBLE_DEVICES=0\nexport KV=fp4_e2m1\nLOCAL=fp8_e4m3\nexport UNUSED=x\n"
            "bash -c 'python -m sglang.launch_server --model-path m --kv-cache-dtype $KV'\n"
            "bash -c 'python -m sglang.launch_server --model-path m --kv-cache-dtype ${LOCAL:-auto}'\n")
    first, second = scan_shell(text, "serve.sh").launches
    assert (first.argv[-1].text, first.argv[-1].span) == ("fp4_e2m1", Span(39, 47))
    assert second.argv[-1].text == "auto"
    for launch in (first, second):
        assert [(h.value, h.reason) for h in launch.hints] == [("rocm", "export HIP_VISIBLE_DEVICES=0")]
