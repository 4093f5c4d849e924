"""``rules.parser.judge`` reads a launch it judged before from its memo (``_JUDGED``, issue 37): a file that repeats
a launch is judged once. Each answer is what judging that launch afresh gives, each finding reported at that
launch's own Value."""

from __future__ import annotations

from pathlib import Path

from kv4lint.base.model import Launch, Span, Value
from kv4lint.base.record import fields, replace
from kv4lint.base.settings import Settings
from kv4lint.pipeline.runner import lint_text
from kv4lint.rules import parser
from kv4lint.sglang.options import Occurrence, normalise
from kv4lint.target import ModelInfo, Target

ROOT = Path(__file__).resolve().parents[1]


def test_every_fixture_script_twice_over_is_judged_as_afresh(monkeypatch):
    """Each fixture script written twice in one file: the second copy's launches come from the memo (at their own
    words), and every answer equals judging afresh."""
    real, fresh = parser.judge, parser._judge
    calls = {"judge": 0, "afresh": 0}

    def counted(*a, **kw):
        calls["afresh"] += 1
        return fresh(*a, **kw)

    def both(launch, args, target, **kw):
        calls["judge"] += 1
        got = real(launch, args, target, **kw)
        assert got == fresh(launch, args, target, fix_dtype=kw.get("fix_dtype", "fp8_e4m3"), strict=kw.get("strict"))
        return got

    monkeypatch.setattr(parser, "_judge", counted)
    monkeypatch.setattr(parser, "judge", both)
    for settings in (Settings(), Settings(sglang_version="0.5.10", gpu="h100")):
        parser._JUDGED.clear()
        for path in sorted((ROOT / "fixtures").rglob("*.sh")):
            text = path.read_text(encoding="utf-8", errors="replace")
            lint_text(str(path), text + "\n" + text, settings, language="shell")
    assert calls["afresh"] < calls["judge"] / 2  # most were read from the memo


def _launch(words: list[str], at: int) -> Launch:
    argv = [Value(w, Span(at + 40 * k, at + 40 * k + len(w))) for k, w in enumerate(words)]
    return Launch("x.sh", "argv", "sglang.launch_server", Span(at, at + 1), Span(at, at + 1), argv=argv)


def test_a_launch_is_read_from_the_memo_only_for_the_same_words_and_target():
    """The same words at other places are read from the memo, reported at their own Values; other words, or the same
    words on another target, are not (each pair below differs in one of them, and in its findings)."""
    fp4 = ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--attention-backend"]
    stated = Target(sglang_version="0.5.23")
    cases = [(fp4 + ["triton"], stated), (fp4 + ["fa4"], stated), (fp4 + ["triton", "--no-such-option"], stated),
             (fp4 + ["fa4"], stated.with_(model=ModelInfo(mla=True))), (fp4 + ["fa4"], stated.with_(archs=("sm90",))),
             (fp4 + ["triton"], stated.with_(platform="rocm", archs=()))]
    parser._JUDGED.clear()
    answers = set()
    for at in (0, 10_000):  # the second round: every launch from the memo
        for words, target in cases:
            launch = _launch(words, at)
            args = normalise(launch, target.sglang_version)
            got = parser.judge(launch, args, target)
            assert got == parser._judge(launch, args, target, fix_dtype="fp8_e4m3", strict=None)
            assert all(f.value is None or any(f.value is v for v in [*launch.argv, *args.values.values()])
                       for f in got)
            answers.add(tuple((f.code, f.message, f.detail) for f in got))
    assert len(answers) == len(cases) and len(parser._JUDGED) == len(cases)


def test_the_key_reads_every_field_of_an_occurrence():
    launch = _launch(["--model-path", "m", "--kv-cache-dtype", "nvfp4"], 0)
    args = normalise(launch, "0.5.23")
    target = Target(sglang_version="0.5.23")

    def key(a) -> tuple:
        return parser._judge_key(launch, a, target, "fp8_e4m3", None, parser._Tokens())

    occ = args.occurrences["kv_cache_dtype"][0]
    other = {"option": Value("--kv-cache-dtype"), "values": [Value("fp8_e4m3")], "inline": not occ.inline,
             "spelled": "--kv-cache-d", "from_config": not occ.from_config}
    assert set(other) == set(fields(Occurrence))
    for name, value in other.items():  # each field, changed alone, makes another key
        changed = replace(occ, **{name: value})
        assert key(replace(args, occurrences=dict(args.occurrences, kv_cache_dtype=[changed]))) != key(args), name


def test_the_judges_memos_are_bounded():
    from kv4lint.base.memo import Memo
    from kv4lint.rules import check

    memo = Memo(3)
    for k in range(7):
        assert memo.keep(k, str(k)) == str(k)
        assert len(memo) <= 3 and memo[k] == str(k)  # full: emptied, then the new answer kept
    assert memo == {6: "6"}
    assert [m.limit for m in (check._VERDICTS, parser._SINCE, parser._JUDGED)] == [8192, 1024, 1024]


def test_the_key_says_which_of_a_launchs_values_are_one_record():
    """The launch's Values are numbered by their first position (in bulk, not one by one): a launch that holds one
    record twice keys apart from one that holds two records of the same words (a fix removes a record wherever it is
    in argv), and each finding is reported at its own launch's Value."""
    words = ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "stray", "stray"]  # (words the arguments do not hold)
    twice = _launch(words, 0)
    twice.argv[5] = twice.argv[4]  # the same record at two places
    apart = _launch(words, 0)
    target = Target(sglang_version="0.5.23")

    def key(launch: Launch) -> tuple:
        return parser._judge_key(launch, normalise(launch, "0.5.23"), target, "fp8_e4m3", None, parser._Tokens())

    assert key(twice) != key(apart) and key(apart) == key(_launch(words, 500))
    parser._JUDGED.clear()
    for launch in (twice, apart, _launch(words, 500)):
        args = normalise(launch, "0.5.23")
        got = parser.judge(launch, args, target)
        assert got and got == parser._judge(launch, args, target, fix_dtype="fp8_e4m3", strict=None)
        assert all(f.value is None or any(f.value is v for v in [*launch.argv, *args.values.values()]) for f in got)
