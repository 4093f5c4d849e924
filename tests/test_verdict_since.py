"""The per-release verdict walk of an unpinned launch (``rules.parser._since``) reads each older release's
findings by code and severity only, and so asks ``check`` for those only (issue 37): it replays no fix (the replay
settles a fix's safety) and looks for no words a warning's candidates share (they say how it is worded), neither a
finding's code nor its severity. This holds that on every fixture shell script."""

from __future__ import annotations

from pathlib import Path

from kv4lint.base.settings import Settings
from kv4lint.pipeline.runner import lint_text
from kv4lint.rules import parser

ROOT = Path(__file__).resolve().parents[1]


def test_checks_for_the_keys_only_keep_every_code_and_severity(monkeypatch):
    calls = []
    real = parser.check

    def both(args, target, **kw):
        quick = real(args, target, **kw)
        if kw.get("keys_only"):
            calls.append(1)
            full = real(args, target, **{**kw, "keys_only": False})
            assert [parser._key(f) for f in quick] == [parser._key(f) for f in full]
        return quick

    monkeypatch.setattr(parser, "check", both)
    parser._JUDGED.clear()  # (a launch judged before, by another test, would be read from the memos)
    parser._SINCE.clear()
    for path in sorted((ROOT / "fixtures").rglob("*.sh")):
        lint_text(str(path), path.read_text(encoding="utf-8", errors="replace"), Settings(), language="shell")
    assert calls  # the fixtures hold unpinned launches whose verdict depends on the release


def test_the_walk_is_shared_only_for_the_same_words_and_target():
    """``_since`` holds each walk for the process (a file that repeats a launch walks it once): each answer is the
    walk of those words on that target, whatever was asked before. Each pair below has the same verdict on its
    inferred release and another walk: an option older releases lack, the model's attention, the GPU."""
    from kv4lint.base.model import Launch, Span
    from kv4lint.sglang.options import literal_tokens, normalise
    from kv4lint.target import ModelInfo, Target

    fp4 = ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend"]
    pairs = [((fp4 + ["triton"], Target()), (fp4 + ["triton", "--disable-priority-preemption"], Target())),
             ((fp4 + ["fa4"], Target()), (fp4 + ["fa4"], Target(model=ModelInfo(mla=True)))),
             ((fp4 + ["trtllm_mla"], Target(archs=("sm100",))), (fp4 + ["trtllm_mla"], Target(archs=("sm110",))))]
    parser._SINCE.clear()
    for pair in pairs:
        walks = []
        for words, target in pair:
            launch = Launch("x.sh", "argv", "sglang.launch_server", Span(0, 1), Span(0, 1),
                            argv=literal_tokens(["--model-path", "m", *words]))
            inferred = parser.infer_release(launch, normalise(launch, None))
            target = target.with_(sglang_version=inferred.version, version_inferred=True)
            found = parser._checked(launch, inferred.args, [], target, "fp8_e4m3", None)
            walks.append((parser._since(launch, target, found, "fp8_e4m3", None),
                          parser._judged_since(launch, target, found, "fp8_e4m3", None), found))
        (first, want_first, found_first), (second, want_second, found_second) = walks
        assert [parser._key(f) for f in found_first] == [parser._key(f) for f in found_second]
        assert (first, second) == (want_first, want_second) and first != second


def test_the_walk_reads_no_part_of_where_the_target_comes_from(monkeypatch):
    """``_since`` keys its memo on the target without ``sources`` (where each part is written: a GPU named on line
    40 or 80): the walk reads codes and severities only, which never quote them. Held on every fixture script, each
    walk against the same walk with no sources at all."""
    calls = []
    real = parser._judged_since

    def both(launch, target, found, fix_dtype, strict):
        got = real(launch, target, found, fix_dtype, strict)
        calls.append(target.sources)
        assert got == real(launch, target.with_(sources={}), found, fix_dtype, strict)
        return got

    monkeypatch.setattr(parser, "_judged_since", both)
    parser._JUDGED.clear()
    parser._SINCE.clear()
    for path in sorted((ROOT / "fixtures").rglob("*.sh")):
        lint_text(str(path), path.read_text(encoding="utf-8", errors="replace"), Settings(), language="shell")
    assert any("line" in s.get("gpu", "") for s in calls)  # GPUs named somewhere in the scripts were walked


def test_the_same_launch_with_its_gpu_named_elsewhere_is_walked_once(monkeypatch):
    from kv4lint.base.model import Launch, Span
    from kv4lint.sglang.options import literal_tokens, normalise
    from kv4lint.target import Target

    walks = []
    real = parser._judged_since
    monkeypatch.setattr(parser, "_judged_since", lambda *a: walks.append(a[1].sources) or real(*a))
    launch = Launch("x.sh", "argv", "sglang.launch_server", Span(0, 1), Span(0, 1), argv=literal_tokens(
        ["--model-path", "m", "--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "trtllm_mla"]))
    inferred = parser.infer_release(launch, normalise(launch, None))
    parser._SINCE.clear()
    answers = []
    for line in (3, 30):
        target = Target(archs=("sm100",), sglang_version=inferred.version, version_inferred=True,
                        sources={"gpu": f"line {line}: comment '# B200' = Blackwell (sm100)"})
        found = parser._checked(launch, inferred.args, [], target, "fp8_e4m3", None)
        answers.append(parser._since(launch, target, found, "fp8_e4m3", None))
    assert answers[0] == answers[1] and answers[0]  # a verdict that depends on the release
    assert len(walks) == 1
