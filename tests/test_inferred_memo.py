"""``rules.parser.infer_release`` holds what it found for the process, keyed on the launch's words as the parser
reads them and the newest release that counts (a file that repeats a launch infers its release once; issue 37):
each answer is that of its own words and ``upto``, whatever was asked before, and its arguments are the launch's own
Values (where they are written), never another launch's."""

from __future__ import annotations

from kv4lint.base.model import Launch, Provenance, Span, Value
from kv4lint.rules import parser
from kv4lint.sglang.options import literal_tokens, normalise

FP4 = ["--model-path", "m", "--kv-cache-dtype", "fp4_e2m1"]
# Each launch differs from the one before in one part of the key only; together they infer several releases.
CASES = [
    ("sglang.launch_server", FP4, [], None),
    ("sglang.launch_server", FP4, [], "0.5.14"),  # a nightly's next release: no later one counts
    ("sglang.launch_server", FP4 + ["--cuda-graph-max-bs", "8"], [], None),  # an option newer releases lack
    ("sglang.launch_server", FP4 + ["--cuda-graph-max-bs", "8"], [], "0.5.14"),
    ("sglang.launch_server", FP4 + ["--no-such-option"], [], None),  # no release takes it
    ("sglang.launch_server", FP4, ["--cuda-graph-max-bs", "8"], None),  # the same words in a config file
    ("sglang.bench_one_batch", FP4 + ["--no-such-option"], [], None),  # another entry point's parser
]


def _launch(entry: str, words: list[str], config: list[str], at: int = 0) -> Launch:
    argv = [Value(w, Span(at + 10 * i, at + 10 * i + len(w)), Provenance.LITERAL) for i, w in enumerate(words)]
    return Launch("x.sh", "argv", entry, Span(at, at + 1), Span(at, at + 1), argv=argv,
                  config_argv=literal_tokens(config))


def _answer(launch: Launch, upto: str | None):
    found = parser.infer_release(launch, normalise(launch, upto), upto=upto)
    return found.version, found.evidence, found.rejected, found.args


def test_each_answer_is_that_of_its_own_words_and_upto():
    parser._INFERRED.clear()
    fresh = []
    for entry, words, config, upto in CASES:
        parser._INFERRED.clear()
        fresh.append(_answer(_launch(entry, words, config), upto))
    assert len({(v, e) for v, e, _, _ in fresh}) > 3  # the cases infer different releases and evidence
    parser._INFERRED.clear()
    for _ in range(2):  # asked again and again, in one process
        for (entry, words, config, upto), want in zip(CASES, fresh):
            assert _answer(_launch(entry, words, config), upto) == want, (entry, words, config, upto)


def test_the_arguments_are_the_launchs_own_values():
    parser._INFERRED.clear()
    for entry, words, config, upto in CASES:
        for at in (0, 1000):  # the same words written elsewhere: read from the memo the second time
            launch = _launch(entry, words, config, at)
            args = _answer(launch, upto)[3]
            own = {id(v) for v in launch.argv}
            model = args.values["model_path"]
            assert id(model) in own and model.span == Span(at + 10, at + 11)
