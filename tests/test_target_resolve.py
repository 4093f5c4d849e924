"""Issue 33: the target is decided in one place (kv4lint/target/), axis by axis, from the evidence the frontends
report as :class:`kv4lint.base.model.Hint` records.

The GPU axis: what the user states > the file's own GPU hints, where the GPUs one scope names together are a
candidate set and a nearer scope (launch > section > file) narrows a farther one's set where they agree and
overrides it where they do not > every arch; each guard hint
narrows the set ("!" is every arch but these); a hint whose value is empty names a GPU kv4lint cannot map and is
no evidence. GPU evidence means something on CUDA only. The hints are built here directly, as a frontend reports
them (the frontends' readers of Slurm, Kubernetes, headings, comments and guards have tests of their own).
"""

from __future__ import annotations

import pytest

from kv4lint.base.model import Hint, Launch, Provenance, Span, Value
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.pipeline.runner import resolve_target
from kv4lint.rules.parser import judge
from kv4lint.sglang.gpus import ARCHS, CLASSES, describe, normalise_gpu, representatives
from kv4lint.target import Target
from kv4lint.target.gpu import candidates, choose

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
NVFP4 = ["--model-path", LLAMA, "--kv-cache-dtype", "nvfp4"]


def gpu(value: str, scope: str = "launch", reason: str = "", span: Span | None = None) -> Hint:
    return Hint("gpu", value, reason or f"{scope} {value or 'MI355X'}", span, scope)


# ---------------------------------------------------------------------------
# The candidate set


def test_a_hint_value_is_a_set_its_complement_or_nothing():
    assert candidates("sm90") == {"sm90"}
    assert candidates("sm90 sm100") == {"sm90", "sm100"}
    assert candidates("!sm100") == set(ARCHS) - {"sm100"}
    assert candidates("") is None and candidates("mi355x") is None


def test_nothing_said_is_every_arch():
    c = choose(None, [])
    assert (c.archs, c.level) == (ARCHS, "every")
    assert c.source.startswith("not stated: every GPU kv4lint knows, judged once per kind SGLang tells apart: "
                               "Ampere/Ada, Hopper, Blackwell, Thor and Blackwell RTX/GB10")


def test_the_nearest_scope_that_names_a_gpu_decides_and_its_gpus_are_the_set():
    hints = [gpu("sm100", "file"), gpu("sm120", "section"), gpu("sm90", "launch"), gpu("sm89", "launch")]
    assert choose(None, hints).archs == ("sm89", "sm90")
    assert choose(None, hints[:2]).archs == ("sm120",)  # a section beats the file
    assert choose(None, hints[:1]).archs == ("sm100",)
    assert choose(None, hints).level == "file"


def test_a_nearer_scope_narrows_a_farther_one_where_they_agree():
    # a comment "# Blackwell" above a launch in a file named for the B200: the B200, not every Blackwell (Thor ...)
    blackwell = "sm100 sm103 sm110 sm120 sm121"
    c = choose(None, [gpu("sm100", "file", "file name b200"), gpu(blackwell, "launch", "comment '# Blackwell'")])
    assert c.archs == ("sm100",)
    assert "file name b200" in c.source and "comment '# Blackwell'" in c.source
    # where they disagree, the nearer overrides: a comment naming an H100 in a file named for a B200
    c = choose(None, [gpu("sm100", "file", "file name b200"), gpu("sm90", "launch", "comment '# H100'")])
    assert c.archs == ("sm90",) and "file name b200" not in c.source


def test_what_the_user_states_beats_the_file():
    c = choose(("sm90", "--gpu"), [gpu("sm100", "launch")])
    assert (c.archs, c.level, c.source) == (("sm90",), "stated", "--gpu")


def test_a_guard_narrows_whichever_rung_chose_the_set():
    assert choose(None, [gpu("sm100 sm103", "guard")]).archs == ("sm100", "sm103")
    assert choose(None, [gpu("!sm100", "guard")]).archs == tuple(a for a in ARCHS if a != "sm100")
    assert choose(None, [gpu("sm90 sm100", "file"), gpu("sm100 sm120", "guard")]).archs == ("sm100",)
    assert choose(("sm75", "--gpu"), [gpu("!sm100", "guard")]).archs == ("sm75",)  # an arch kv4lint does not list
    # Inside a branch for a B200 on an H100 the launch never runs: nothing GPU-dependent is judged.
    c = choose(("sm90", "--gpu"), [gpu("sm100", "guard", "if nvidia-smi ... | grep -q B200")])
    assert c.archs == () and "never runs" in c.source and "if nvidia-smi ... | grep -q B200" in c.source


def test_a_gpu_kv4lint_cannot_map_is_no_evidence_and_is_said():
    c = choose(None, [gpu("", "launch", "comment '# 8x MI355X'")])
    assert c.archs == ARCHS and c.level == "every"
    assert "comment '# 8x MI355X': not mapped, no evidence" in c.source
    # ... and does not hide the evidence of a farther scope
    assert choose(None, [gpu("", "launch"), gpu("sm90", "file")]).archs == ("sm90",)


def test_the_judged_archs_are_one_per_class_and_named_in_plain_words():
    assert representatives(ARCHS) == tuple(CLASSES)
    assert Target(archs=ARCHS).machines == tuple(("cuda", a) for a in CLASSES)
    assert Target(archs=("sm100", "sm103", "sm120")).machines == (("cuda", "sm100"), ("cuda", "sm120"))
    assert Target(platform="rocm").machines == (("rocm", None),)
    assert describe(("sm80", "sm86", "sm89", "sm90")) == "Ampere/Ada and Hopper (sm8x, sm90)"
    assert describe(("sm80", "sm86")) == "Ampere (sm80, sm86)"
    assert describe(("sm103",)) == "Blackwell Ultra (sm103)"
    assert normalise_gpu("GB300") == "sm103" and normalise_gpu("12.1") == "sm121"


# ---------------------------------------------------------------------------
# Through the resolver and the rules


def launch(hints: list[Hint], argv=NVFP4) -> Launch:
    tokens = [Value(w, None, Provenance.LITERAL) for w in argv]
    return Launch("serve.sh", "argv", "sglang.launch_server", Span(0, 0), Span(0, 0), argv=tokens, hints=hints)


def verdict(hints: list[Hint], **settings) -> list[tuple[str, str, str]]:
    s = Settings(sglang_version="0.5.23", **settings)
    target, args = resolve_target(launch(hints), s)
    return [(f.code, f.severity.value, f.message) for f in judge(launch(hints), args, target)]


def test_the_file_names_its_gpu_an_h100_twin_gets_an_error_a_b200_twin_nothing():
    assert [v[:2] for v in verdict([gpu("sm90", "file")])] == [("KV404", "error")]
    assert verdict([gpu("sm100", "file")]) == []
    # a list that names H100 and H200 is one candidate set (both Hopper): an error
    assert [v[:2] for v in verdict([gpu("sm90 sm90", "launch")])] == [("KV404", "error")]


def test_gpus_named_in_two_places_are_a_candidate_set():
    (f,) = verdict([gpu("sm90", "launch"), gpu("sm100", "launch")])
    assert f[:2] == ("KV404", "warning")
    assert f[2] == "refused on Hopper (sm90): --kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120); set --gpu to decide"


def test_a_guard_for_a_b200_is_clean_and_its_else_branch_is_judged_on_the_rest():
    assert verdict([gpu("sm100", "guard")]) == []
    (f,) = verdict([gpu("!sm100", "guard")])
    assert f[:2] == ("KV404", "warning")  # a B300 takes nvfp4 too: not every GPU but a B200 refuses it
    assert f[2].startswith("refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype nvfp4 needs Blackwell")
    assert verdict([gpu("sm100", "guard")], gpu="h100") == []  # the branch never runs on the stated H100


@pytest.mark.parametrize("platform", ["rocm", "xpu"])
def test_gpu_evidence_applies_on_cuda_only(platform):
    s = Settings(sglang_version="0.5.23", platform=platform)
    target, _ = resolve_target(launch([gpu("sm90", "file")]), s)
    assert target.archs == () and target.arch is None
    assert target.sources["gpu"].startswith(f"none: the platform is {platform} (the GPU named by file sm90")


def test_the_evidence_names_its_line_and_form():
    text = "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\npython3 -m sglang.launch_server ...\n"
    start = text.index("#SBATCH")
    h = gpu("sm90", "file", "#SBATCH --gres=gpu:h100:8", Span(start, start + 25))
    target, _ = resolve_target(launch([h, gpu("", "section", "heading '### MI355X'", Span(0, 2))]),
                               Settings(sglang_version="0.5.23"), index=LineIndex(text))
    assert target.archs == ("sm90",) and target.gpu_level == "file"
    assert target.sources["gpu"] == ("line 2: #SBATCH --gres=gpu:h100:8 = Hopper (sm90); "
                                     "line 1: heading '### MI355X': not mapped, no evidence")
    assert target.describe()["gpus"] == ["sm90"]


def test_show_target_names_the_gpu_and_its_evidence(tmp_path, capsys):
    from kv4lint.cli import main

    p = tmp_path / "serve.sh"
    p.write_text("#!/bin/bash\ndocker run --gpus all lmsysorg/sglang:v0.5.23-cu129-b200 \\\n"
                 f"  python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4\n"
                 f"python3 -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--show-target", str(p)])
    out = capsys.readouterr().out
    assert "serve.sh:3: sglang.launch_server: platform=cuda (image lmsysorg/sglang:v0.5.23-cu129-b200), gpu=sm100 " \
           "(line 2: image lmsysorg/sglang:v0.5.23-cu129-b200 = Blackwell (sm100))," in out
    assert "serve.sh:4: sglang.launch_server: platform=cuda (default (cuda)), gpu=any (not stated: every GPU " \
           "kv4lint knows" in out
    main(["check", "--isolated", "--no-cache", "--show-target", "--gpu", "gb300", str(p)])
    assert "gpu=sm103 (--gpu)" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# The model a path names, read once per file's run (kv4lint.target.resolve._RUN)


def _model_launch(path: str) -> Launch:
    argv = [Value(w, None, Provenance.LITERAL) for w in ["--model-path", path, "--kv-cache-dtype", "nvfp4"]]
    return Launch(path="serve.sh", form="argv", entry="sglang.launch_server", span=Span(0, 1), anchor=Span(0, 1),
                  argv=argv)


def test_a_run_reads_a_model_once_and_records_its_files_on_every_launch(tmp_path):
    import json

    from kv4lint.files.depends import recording

    for name, arch in (("mha", "LlamaForCausalLM"), ("mla", "DeepseekV3ForCausalLM")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps({"architectures": [arch]}))
    index, s = LineIndex("x\n"), Settings()
    attention = {}
    for name in ("mha", "mla", "mha", "mla"):  # the same run (one index): a path's model read again from the memo
        with recording() as looked:
            target, _ = resolve_target(_model_launch(f"./{name}"), s, base_dir=str(tmp_path), index=index)
        with recording() as unmemoised:
            resolve_target(_model_launch(f"./{name}"), s, base_dir=str(tmp_path))
        # what a cached report depends on (the model's config.json), recorded on every launch as without the memo
        assert looked == unmemoised and str(tmp_path / name / "config.json") in looked
        attention.setdefault(name, set()).add(target.model.attention)
    assert attention == {"mha": {"mha"}, "mla": {"mla"}}  # each path its own model
    other = tmp_path / "other"
    other.mkdir()  # another folder (base_dir) with no model there: not the model of the first
    target, _ = resolve_target(_model_launch("./mla"), s, base_dir=str(other), index=index)
    assert target.model.attention is None


def test_a_memo_hit_records_the_paths_the_first_read_recorded(monkeypatch):
    """kv4lint.target.recalled records again, as they are, the absolute paths its first read recorded (in every
    enclosing recording, as look does), without making them absolute again; outside a recording, nothing."""
    import os

    from kv4lint.base.memo import Memo
    from kv4lint.files.depends import look, recording
    from kv4lint.target import recalled

    memo, reads = Memo(8), []

    def read():
        reads.append(1)
        look("models/m/config.json")
        return "answer"

    with recording() as first:
        assert recalled(memo, "k", read) == "answer"
    monkeypatch.setattr(os.path, "abspath", lambda p: f"not made absolute again: {p}")
    with recording() as outer:
        with recording() as inner:
            assert recalled(memo, "k", read) == "answer"
    assert reads == [1] and first == inner == outer == [os.path.join(os.getcwd(), "models/m/config.json")]
    assert recalled(memo, "k", read) == "answer"


def test_a_new_run_reads_the_model_again(tmp_path):
    import json

    (tmp_path / "m").mkdir()
    config = tmp_path / "m" / "config.json"
    config.write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    s = Settings()
    first, _ = resolve_target(_model_launch("./m"), s, base_dir=str(tmp_path), index=LineIndex("x\n"))
    config.write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
    second, _ = resolve_target(_model_launch("./m"), s, base_dir=str(tmp_path), index=LineIndex("x\n"))
    assert (first.model.attention, second.model.attention) == ("mha", "mla")
