"""Dockerfile frontend and the helpers shared by the container frontends (``frontends/embedded.py``)."""

from __future__ import annotations

import json

import pytest

from kv4lint.base.model import Span, Value
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.frontends import argv_lists, embedded
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.dockerfile import docker_words, parse, scan_dockerfile
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.pipeline import launch_configs
from kv4lint.pipeline.runner import lint_text

S23 = Settings(sglang_version="0.5.23")


def at(text: str, span: Span | None) -> str | None:
    return None if span is None else text[span.start:span.end]


def argv_of(text: str, launch) -> list[tuple[str | None, str | None]]:
    return [(v.text, at(text, v.span)) for v in launch.argv]


def dtype(launch) -> Value:
    k = [v.text for v in launch.argv].index("--kv-cache-dtype")
    return launch.argv[k + 1]


def findings(text: str, path: str = "Dockerfile", settings: Settings = S23):
    rep = lint_text(path, text, settings, language="dockerfile")
    assert rep.errors == []
    idx = LineIndex(text)
    return [(f.code, text[idx.offset(f.start.line, f.start.column):][:14]) for f in rep.findings], rep


# ---------------------------------------------------------------------------
# embedded / argv_lists: text builders, JSON strings, removal spans, argv words


def test_text_builder_maps_verbatim_pieces_and_never_joins_synthetic_ones():
    b = TextBuilder()
    b.verbatim("abc", 10)
    b.synthetic("  ", 20)
    b.verbatim("de", 30)
    text, omap = b.build()
    assert text == "abc  de"
    assert omap.span(Span(0, 3)) == Span(10, 13)
    assert omap.span(Span(5, 7)) == Span(30, 32)
    assert omap.span(Span(3, 5)) is None  # two synthetic characters
    assert omap.span(Span(2, 6)) is None  # across the gap


def test_json_string_maps_escapes_to_non_contiguous_offsets():
    doc = 'x = "a\\"b nvfp4\\n\\u00e9z"'
    value, outer, end = embedded.json_string_at(doc, 4)
    assert value == 'a"b nvfp4\né' + "z"
    assert end == len(doc)
    omap = OffsetMap(outer)
    k = value.index("nvfp4")
    assert at(doc, omap.span(Span(k, k + 5))) == "nvfp4"
    assert omap.span(Span(0, 3)) is None  # a"b: the quote is written \"
    assert omap.span(Span(k + 5, k + 7)) is None  # \n then é


def test_json_string_array_positions_and_rejects_non_strings():
    items, end = embedded.json_string_array('  ["python3", "-m",\n "x"] ')
    assert [i.value for i in items] == ["python3", "-m", "x"]
    assert end == len('  ["python3", "-m",\n "x"]')
    assert embedded.json_string_array('["a", 1]') is None
    assert embedded.json_string_array('python3 -m x') is None


@pytest.mark.parametrize("remove", [[0], [1], [2], [3], [1, 2], [2, 3], [0, 2], [1, 3]])
def test_removal_spans_leave_a_valid_json_array(remove):
    doc = '["a", "--b", "c",\n     "d"]'
    items, _ = embedded.json_string_array(doc)
    spans = argv_lists.removal_spans([(i.start, i.end) for i in items])
    out = doc
    for k in sorted(remove, reverse=True):
        s = spans[k]
        out = out[:s.start] + out[s.end:]
    assert json.loads(out) == [x for k, x in enumerate(["a", "--b", "c", "d"]) if k not in remove]


def _words(*texts: str) -> list[Word]:
    return [Word(Value(t, Span(k * 10, k * 10 + len(t)))) for k, t in enumerate(texts)]


def test_words_through_wrappers():
    words = _words("/usr/bin/tini", "--", "env", "HIP_VISIBLE_DEVICES=0", "nohup",
                   "python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4")
    res = argv_lists.launches_from_words(words, "f")
    (launch,) = res.launches
    assert launch.entry == "sglang.launch_server"
    assert [v.text for v in launch.argv] == ["--kv-cache-dtype", "nvfp4"]
    assert [(h.kind, h.value) for h in launch.hints] == [("platform", "rocm")]


def test_words_that_are_not_a_launch():
    assert argv_lists.launches_from_words(_words("vllm", "serve", "m", "--kv-cache-dtype", "fp8"), "f").launches == []
    assert argv_lists.launches_from_words(_words("bash", "serve.sh"), "f").launches == []
    assert argv_lists.launches_from_words([Word(Value.unknown())], "f").launches == []


# ---------------------------------------------------------------------------
# The instruction splitter


def test_continuations_drop_comment_and_blank_lines_and_keep_offsets():
    text = ("FROM x\n"
            "RUN python3 -m sglang.launch_server \\\n"
            "    # a comment\n"
            "\n"
            "    --kv-cache-dtype nvfp4\n")
    instrs, escape = parse(text)
    assert escape == "\\"
    run = instrs[1]
    assert run.keyword == "RUN" and run.line == 2
    assert run.args == "python3 -m sglang.launch_server     --kv-cache-dtype nvfp4"
    k = run.args.index("nvfp4")
    assert at(text, run.omap.span(Span(k, k + 5))) == "nvfp4"
    # the joint is not editable as one span
    j = run.args.index("server ") + len("server ")  # where the next line's text starts
    assert run.omap.span(Span(j - 1, j + 1)) is None


def test_escape_directive_backtick():
    text = "# escape=`\nFROM x\nRUN echo a `\n  b\\c\n"
    instrs, escape = parse(text)
    assert escape == "`"
    assert instrs[1].args == "echo a   b\\c"


def test_directive_only_at_the_top():
    text = "FROM x\n# escape=`\nRUN echo a `\n"
    _, escape = parse(text)
    assert escape == "\\"


def test_heredoc_body_is_mapped_line_by_line():
    text = "FROM x\nRUN <<EOF\nset -e\necho nvfp4\nEOF\nCMD [\"a\"]\n"
    instrs, _ = parse(text)
    run = instrs[1]
    (hd,) = run.heredocs
    assert hd.delim == "EOF" and hd.body == "set -e\necho nvfp4\n"
    k = hd.body.index("nvfp4")
    assert at(text, hd.omap.span(Span(k, k + 5))) == "nvfp4"
    assert instrs[2].keyword == "CMD"


def test_docker_words_quotes_and_escapes():
    ws = docker_words('A="x y" B=\'z\' C=a\\ b', "\\")
    assert [(w.raw, w.value) for w in ws] == [('A="x y"', "A=x y"), ("B='z'", "B=z"), ("C=a\\ b", "C=a b")]


# ---------------------------------------------------------------------------
# Launches


def test_shell_form_with_env_resolved_to_the_env_line():
    text = ("FROM lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
            "ENV KV=fp4_mx_block16 PORT=30000\n"
            "CMD python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV --port $PORT\n")
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    v = dtype(launch)
    assert v.text == "fp4_mx_block16"
    assert at(text, v.span) == "fp4_mx_block16" and text.index("fp4_mx_block16") == v.span.start
    assert at(text, v.use) == "$KV"
    assert not v.shared
    got, rep = findings(text)
    assert got == [("KV402", "$KV --port $PO")]
    (f,) = rep.findings
    assert [e.text for e in f.fix.edits] == ["fp8_e4m3"] and f.fix.applicability == "safe"
    assert at(text, f.fix.edits[0].span) == "fp4_mx_block16"


def test_a_launch_whose_options_come_from_the_environment_is_still_parsed():
    # Embedded shell goes through the pre-filter with its environment's values
    # (kv4lint.files.prefilter.shell_may_launch).
    text = ("FROM lmsysorg/sglang:v0.5.23\n"
            "ENV SGLANG_ARGS=\"--model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 "
            "--attention-backend flashinfer\"\n"
            "CMD sglang serve $SGLANG_ARGS\n")
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    assert dtype(launch).text == "fp4_mx_block16"


def test_env_read_by_two_instructions_is_shared():
    text = ("FROM lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
            "ENV KV=fp4_mx_block16\n"
            "RUN echo $KV > /etc/kv\n"
            "CMD python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    assert dtype(launch).shared
    _, rep = findings(text)
    assert rep.findings[0].fix.applicability == "unsafe"


B200 = Settings(sglang_version="0.5.23", gpu="b200")


@pytest.mark.parametrize("lines, values, codes", [
    # ``ENV KV`` twice, the second written with an escape (no line a shell reads the same): the script reads the
    # second. The first used to be put before the script after the second's value, and read instead (a false error).
    (["ENV KV=fp4_e2m1", "ENV KV=fp8\\_e4m3", "RUN $LAUNCH $KV"], ["fp8_e4m3"], []),
    # ``ENV DTYPE=$KV`` is put before the script as written: the script is given KV too. Given DTYPE alone (round
    # 12), it read DTYPE as unknown, and a refused launch passed.
    (["ENV KV=fp4_e2m1", "ENV DTYPE=$KV", "CMD $LAUNCH $DTYPE"], ["fp4_e2m1"], ["KV406"]),
    # Docker: "Environment variables defined using the ENV instruction always override an ARG instruction of the
    # same name", in a RUN and in what a later ENV substitutes (the ARG used to win both: a false error), with a
    # line a shell reads the same and one it does not.
    (["ARG KV=fp4_e2m1", "ENV KV=fp8_e4m3", "ENV DTYPE=$KV", "RUN $LAUNCH $KV", "CMD $LAUNCH $DTYPE"],
     ["fp8_e4m3", "fp8_e4m3"], []),
    (["ARG KV=fp4_e2m1", "ENV KV=fp8\\_e4m3", "ENV DTYPE=$KV", "RUN $LAUNCH $KV", "CMD $LAUNCH $DTYPE"],
     ["fp8_e4m3", "fp8_e4m3"], []),
], ids=["last-env", "env-naming-env", "env-over-arg", "env-over-arg-escaped"])
def test_a_script_reads_the_value_docker_gives(lines, values, codes):
    launch = "python -m sglang.launch_server --model-path m --kv-cache-dtype"
    text = "".join(line.replace("$LAUNCH", launch) + "\n" for line in ["FROM lmsysorg/sglang:v0.5.23", *lines])
    assert [dtype(x).text for x in scan_dockerfile(text, "Dockerfile").launches] == values
    got, _ = findings(text, settings=B200)
    assert [code for code, _ in got] == codes


def test_legacy_env_form_and_arg_only_in_run():
    text = ("FROM lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
            "ENV KV fp4_mx_block16\n"
            "ARG BUILD_KV=nvfp4\n"
            "RUN python3 -m sglang.compile_deep_gemm --model-path m --kv-cache-dtype $BUILD_KV\n"
            "CMD python3 -m sglang.launch_server --model-path m --kv-cache-dtype $BUILD_KV\n"
            "ENTRYPOINT python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    launches = scan_dockerfile(text, "Dockerfile").launches
    by_entry = {launch.entry: launch for launch in launches}
    assert at(text, dtype(by_entry["sglang.compile_deep_gemm"]).span) == "nvfp4"  # ARG: build time
    (serve,) = [x for x in launches if x.entry == "sglang.launch_server"]
    # shell-form ENTRYPOINT ignores CMD; ARG is not there at run time, ENV is
    assert at(text, dtype(serve).span) == "fp4_mx_block16"
    assert text.index("fp4_mx_block16") == dtype(serve).span.start


def test_exec_form_entrypoint_plus_cmd_and_image_hints_per_stage():
    text = ('FROM lmsysorg/sglang:v0.5.23-cu129-b200 AS base\n'
            'ENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n'
            'FROM base AS serve\n'
            'CMD ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]\n'
            'FROM rocm/sgl-dev:v0.5.23-rocm700-mi30x\n'
            'CMD ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]\n')
    launches = scan_dockerfile(text, "Dockerfile").launches
    assert len(launches) == 3  # base (no CMD), serve (inherits ENTRYPOINT), the ROCm stage
    base, serve, rocm = launches
    assert [v.text for v in base.argv] == []
    assert argv_of(text, serve) == [("--model-path", "--model-path"), ("m", "m"),
                                    ("--kv-cache-dtype", "--kv-cache-dtype"), ("nvfp4", "nvfp4")]
    assert text.index('"nvfp4"') + 1 == dtype(serve).span.start
    assert ("gpu", "sm100") in [(h.kind, h.value) for h in serve.hints]
    assert ("platform", "rocm") in [(h.kind, h.value) for h in rocm.hints]
    assert ("gpu", "sm100") not in [(h.kind, h.value) for h in rocm.hints]


def test_entrypoint_resets_an_inherited_cmd():
    text = ('FROM x AS a\n'
            'CMD ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]\n'
            'FROM a\n'
            'ENTRYPOINT ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp8_e4m3"]\n')
    launches = scan_dockerfile(text, "Dockerfile").launches
    assert [[v.text for v in x.argv] for x in launches] == [["--kv-cache-dtype", "nvfp4"],
                                                            ["--kv-cache-dtype", "fp8_e4m3"]]


def test_entrypoint_script_then_cmd_launch():
    text = 'FROM x\nENTRYPOINT ["/docker-entrypoint.sh"]\nCMD ["python3", "-m", "sglang.launch_server", "--tp", "2"]\n'
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    assert [v.text for v in launch.argv] == ["--tp", "2"]


def test_exec_form_sh_c_script_spans_inside_the_json_string():
    text = 'FROM x\nCMD ["sh", "-c", "python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --tp \\"2\\""]\n'
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    v = dtype(launch)
    assert at(text, v.span) == "nvfp4"
    # the quotes are written \" in JSON, the value itself is verbatim between them
    assert launch.argv[-1].text == "2" and at(text, launch.argv[-1].span) == "2"


def test_exec_form_string_with_escapes_is_reported_not_edited():
    text = 'FROM x\nCMD ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "nv\\u0066p4"]\n'
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    v = dtype(launch)
    assert v.text == "nvfp4" and v.span is None and at(text, v.anchor) == '"nv\\u0066p4"'


def test_run_heredoc_as_script():
    text = ("FROM rocm/sgl-dev:v0.5.23-rocm700-mi30x\n"
            "RUN <<EOF\n"
            "python3 -m sglang.launch_server --model-path m \\\n"
            "  --kv-cache-dtype nvfp4 &\n"
            "EOF\n")
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    assert at(text, dtype(launch).span) == "nvfp4"
    assert ("platform", "rocm") in [(h.kind, h.value) for h in launch.hints]


def test_non_posix_shell_is_not_read_as_sh():
    text = ('FROM mcr.microsoft.com/windows/servercore\n'
            'SHELL ["powershell", "-Command"]\n'
            'RUN python -m sglang.launch_server --kv-cache-dtype nvfp4\n')
    assert scan_dockerfile(text, "Dockerfile").launches == []


def test_from_image_through_global_arg():
    text = ("ARG TAG=v0.5.23-rocm700-mi30x\n"
            "FROM lmsysorg/sglang:${TAG}\n"
            "CMD python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n")
    (launch,) = scan_dockerfile(text, "Dockerfile").launches
    kinds = {(h.kind, h.value) for h in launch.hints}
    assert ("platform", "rocm") in kinds and ("sglang_version", "0.5.23") in kinds


def test_config_file_copied_into_the_image(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "serve.yaml").write_text("model-path: m\nkv-cache-dtype: nvfp4\n")
    text = ("FROM lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
            "COPY configs/serve.yaml /app/serve.yaml\n"
            'CMD ["python3", "-m", "sglang.launch_server", "--config", "/app/serve.yaml"]\n')
    path = str(tmp_path / "Dockerfile")
    res = scan_dockerfile(text, path)
    launch_configs.attach_configs(res, path)  # the pipeline stage after the frontend (and its cache)
    (launch,) = res.launches
    assert launch.config_path is not None and launch.config_path.endswith("configs/serve.yaml")
    assert [v.text for v in launch.config_argv] == ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]
    # reported at the file name in the Dockerfile, edited in the YAML file
    cfg = (tmp_path / "configs" / "serve.yaml").read_text()
    v = launch.config_argv[3]
    assert at(text, v.use) == "/app/serve.yaml" and at(cfg, v.span) == "nvfp4"


@pytest.mark.parametrize("text", [
    "", "\n\n", "FROM", "RUN \\", "RUN <<EOF\nno end", 'CMD ["unterminated', "CMD [1, 2]", "# escape=\n",
    "ENV =x\nENV\nARG\nFROM --platform=x\n", "\x00\x01 RUN sglang", "FROM a AS\nCMD sglang serve \\\n",
    'ENTRYPOINT ["python3", "-m", "sglang.launch_server"]\n',
])
def test_never_raises(text):
    res = scan_dockerfile(text, "Dockerfile")
    assert isinstance(res.launches, list)


def test_suppression_comments_above_an_instruction_and_for_the_file():
    text = ("FROM lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
            "# kv4lint: disable=KV402\n"
            "RUN python3 -m sglang.launch_server --model-path m \\\n"
            "      --kv-cache-dtype nvfp4\n"
            "CMD python3 -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    got, _ = findings(text)
    assert got == [("KV402", "nvfp4\n")]
    assert findings("# kv4lint: disable-file=KV4\n" + text)[0] == []
