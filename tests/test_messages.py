"""Messages for people (issues 16 and 29): the one-line form (the *headline*: text output, flake8, editors) is the
user's flag and value, the cause and the one fix, within about 100 characters; SGLang's own words, its function
names, the resolution steps and the alternatives are in the *detail* (JSON/SARIF ``detail``, ``--format full``,
``--show-target``). The full text format shows the source line with a caret under the value and ends with a
``kv4lint explain`` hint; the default text format shows each finding's severity and counts them by severity."""

import json
import re

import pytest

import kv4lint
import snapshots
from kv4lint.cli import main
from kv4lint.rules.codes import RULES
from kv4lint.rules.codes.base import HEADLINE, join_clauses, join_sentences

QWEN = ["--model-path", "Qwen/Qwen3-8B"]
STEPS = ("handle_", "_handle_", "validate_", "apply_deepseek")

CASES = [
    (QWEN + ["--kv-cache-dtype", "nvfp4"], {"gpu": "h100"}),
    (QWEN + ["--kv-cache-dtype", "nvfp4"], {"gpu": "a100"}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--device", "xpu"], {}),
    (QWEN + ["--kv-cache-dtype", "nvfp4", "--enable-unified-memory"], {}),
    (QWEN + ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"], {"gpu": "b200"}),
    (QWEN + ["--kv-cache-dtype", "fp8_e4m3", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3"], {}),
    (QWEN + ["--kv-cache-dtype", "fp4_e2m1", "--attention-backend", "trtllm_mha"],
     {"sglang_version": "0.5.7", "gpu": "h100"}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "tokenspeed_mla"],
     {"gpu": "b200", "model_attention": "mla"}),
    (QWEN + ["--kv-cache-dtype", "nvfp4", "--device", "rocm"], {}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--prefill-attention-backend", "flashinfer",
             "--decode-attention-backend", "triton"], {"gpu": "b200"}),
    (QWEN + ["--kv-cache-dtype", "fp4_mx_block16"], {"gpu": "h100"}),
    (QWEN + ["--kv-cache-dtype", "nvfp4"], {}),
]

# A fix is an imperative clause at the end of the headline, and there is one: no "... or ..." alternatives.
ADVICE = re.compile(r"; (use|set|remove|write|state|choose|give|fix|did you mean) [^;]*$")
# Punctuation run together: a period before a semicolon or another period, a doubled separator, a separator
# without its space, a space before one, a sentence that starts after a parenthesis without its period.
MANGLED = re.compile(r"\.\.|\.;|;;|;\.|,[.;]|\s[.,;](?:\s|$)|[;,][A-Za-z(`]|[^.]\) [A-Z][a-z]")
CONDITION = re.compile(r"^when .*?: (?=--|[a-z_]+=|\[strict\]|on |for an |`|config key|launch )")


def headline_problems(message: str) -> list[str]:
    """What is wrong with a headline, as readable reasons (empty: nothing)."""
    own = CONDITION.sub("", message)  # the script's own condition (``when MODE=fp4:``) is the user's words
    out = []
    if len(own) > HEADLINE:
        out.append(f"{len(own)} characters (at most {HEADLINE})")
    if MANGLED.search(own):
        out.append(f"mangled punctuation at {MANGLED.search(own).group()!r}")
    advice = ADVICE.search(own)
    if not advice:
        out.append("no fix at its end")
    elif " or " in advice.group():
        out.append(f"more than one fix: {advice.group()!r}")
    if own.count("; ") > 1:
        out.append("more than a cause and a fix")
    if any(s in message for s in STEPS) or " says: " in message:
        out.append("SGLang's function or words (they go to the detail)")
    return out


def _fixture_headlines():
    for path in snapshots.snapshotted():
        for line in snapshots.sidecar(path, ".expected").read_text().splitlines():
            head = re.match(r"\d+:\d+-\d+:\d+ (KV\d+) \w+: (.*)", line)
            if head:
                yield str(path.relative_to(snapshots.FIXTURES)), head[1], head[2]


FIXTURE_HEADLINES = list(_fixture_headlines())


def test_the_fixtures_have_headlines_to_check():
    assert len(FIXTURE_HEADLINES) > 50 and {c for _, c, _ in FIXTURE_HEADLINES} >= {
        "KV401", "KV402", "KV403", "KV404", "KV405", "KV406", "KV408"}


@pytest.mark.parametrize("where,code,message", FIXTURE_HEADLINES,
                         ids=[f"{p}-{c}-{i}" for i, (p, c, _) in enumerate(FIXTURE_HEADLINES)])
def test_every_fixture_headline_is_short_clean_and_names_one_fix(where, code, message):
    """Over every finding the fixture snapshots hold (what the user sees, regenerated with --update-snapshots)."""
    assert not headline_problems(message), f"{where} {code}: {message}"


@pytest.mark.parametrize("argv,target", CASES)
def test_headline_is_short_and_detail_has_sglangs_words(argv, target):
    found = kv4lint.check_argv(argv, **target)
    assert found
    for f in found:
        assert not headline_problems(f.message), f.message
        assert f.detail and any(s in f.detail for s in STEPS), f.detail
        assert not re.search(r"\.;|;;|\.\.(?!\.)|[^.]\) [A-Z][a-z]", f.detail), f.detail


@pytest.mark.parametrize("bad", ["x..", "a.; b", "a;; b", "a; . b", "a;b", "(arch) On sm100", "x , y"])
def test_the_punctuation_check_can_fail(bad):
    assert MANGLED.search(bad)


def test_the_headline_check_can_fail():
    assert headline_problems("--kv-cache-dtype nvfp4 is refused; use fp8_e4m3 or one of those backends")
    assert headline_problems("--kv-cache-dtype nvfp4 is refused. SGLang 0.5.23 says: ValueError: x; use fp8_e4m3")
    assert headline_problems("--kv-cache-dtype nvfp4 is refused")
    assert headline_problems("--kv-cache-dtype nvfp4 " + "x" * 100 + "; use fp8_e4m3")
    assert not headline_problems("when MODE=fp4: --kv-cache-dtype nvfp4 is refused with --attention-backend triton; "
                                 "use fp8_e4m3")


def test_join_sentences_and_clauses_punctuate_once():
    assert join_sentences("SGLang says: X failed.", "resolution: a set by b") == \
        "SGLang says: X failed. resolution: a set by b."
    assert join_sentences("(on sm100 (arch)", "", "On sm90 it fails;") == "(on sm100 (arch). On sm90 it fails."
    assert join_sentences("It says (\"x.\")", "Done!") == "It says (\"x.\"). Done!"
    assert join_clauses("a backend.", "", "use fp8_e4m3") == "a backend; use fp8_e4m3"
    assert join_clauses("a;", " use  b ") == "a; use b"


def test_kv404_names_what_the_gpu_needs_and_the_target_in_user_terms():
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4"], gpu="h100")
    assert f.message == "--kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120), not sm90 (Hopper); use fp8_e4m3"
    # one fix in the headline; SGLang's own (fp4_mx_block16) stays in its words, in the detail
    assert "fp4_mx_block16" not in f.message
    assert ("RuntimeError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use "
            "--kv-cache-dtype=fp4_mx_block16 for the block-size-16 FP4 recipe.") in f.detail
    assert "for the block-size-16 FP4 recipe. The GPU comes from gpu= argument. Resolution: " in f.detail


def test_a_non_cuda_finding_names_the_platform_and_leaves_sglangs_backend_words_to_the_detail():
    """SGLang refuses nvfp4 on ROCm in the TRT-LLM MHA decode rule (the backend the FP4 cache makes it pick): the
    headline says what the user must know, the detail what SGLang says and why."""
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4", "--device", "rocm"])
    assert f.code == "KV402"
    assert f.message == "--kv-cache-dtype nvfp4 needs CUDA, not rocm (--device rocm); use fp8_e4m3"
    assert "TRTLLM MHA backend for decode is only supported on Hopper" in f.detail
    assert "pick a backend that runs only on NVIDIA GPUs" in f.detail
    assert "SGLang checks the machine's torch build, not --device" in f.detail


def test_a_long_platform_reason_moves_to_the_detail():
    found = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "fp4_mx_block16"], platform="rocm")
    assert found
    for f in found:
        assert len(f.message) <= HEADLINE


def test_the_model_kind_is_said_once():
    """Unknown model, refused for both kinds: the scope says so once, the cause does not repeat it."""
    (f,) = kv4lint.check_argv(["--model-path", "acme/house-7b", "--kv-cache-dtype", "nvfp4",
                               "--attention-backend", "triton"], gpu="b200", sglang_version="0.5.23")
    assert f.message == ("--kv-cache-dtype nvfp4 is refused with --attention-backend triton (MHA and MLA models); "
                         "use fp8_e4m3")
    (f,) = kv4lint.check_argv(["--model-path", "acme/house-7b", "--kv-cache-dtype", "fp4_mx_block16",
                               "--attention-backend", "flashinfer"], gpu="b200")
    # a warning: refused for MHA models only; in fewer words where the full ones pass 100 characters
    assert f.message == ("for an MHA model: --kv-cache-dtype fp4_mx_block16 is refused with flashinfer; "
                         "set --model-attention")
    assert "SGLang refuses the launch for an MHA model and accepts it for an MLA model. To decide, state the " \
           "model's attention: --model-attention mla" in f.detail


def test_a_scope_that_does_not_fit_moves_to_the_detail():
    (f,) = kv4lint.check_argv(["--model-path", "m", "--kv-cache-dtype", "nvfp4"], gpu="h100",
                              sglang_version="0.5.23")
    assert f.message == "--kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120), not sm90 (Hopper); use fp8_e4m3"
    assert "Refused for every target kv4lint considers: MHA and MLA models." in f.detail


def test_the_backend_list_and_alternatives_are_in_the_detail():
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "fp4_mx_block16", "--attention-backend", "flashinfer"],
                              gpu="b200", model_attention="mha", sglang_version="0.5.23")
    assert f.message == "--kv-cache-dtype fp4_mx_block16 is refused with --attention-backend flashinfer; use fp8_e4m3"
    assert ("SGLang 0.5.23 allows triton, torch_native, flex_attention, trtllm_mha for MHA models. Or choose one of "
            "those backends.") in f.detail
    assert "KV4 MHA expects attention_backend to be one of" in f.detail


def test_a_backend_sglang_picks_is_named_as_its_choice():
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "fp4_mx_block16"], gpu="h100", model_attention="mha")
    assert f.message == "--kv-cache-dtype fp4_mx_block16 is refused with SGLang's default backend fa3; use fp8_e4m3"
    assert "SGLang runs fa3 (SGLang's default for sm90 (Hopper) and an MHA model)" in f.detail


def test_the_resolution_steps_are_the_last_sentence_of_the_detail():
    (f,) = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4", "--device", "rocm"])
    assert f.detail.startswith("SGLang 0.5.23 (no release stated): handle_attention_backend_compatibility raises "
                               "ValueError: TRTLLM MHA backend for decode")
    assert "KV4 check (\"KV4 is not tested on non-CUDA platforms\"). Resolution: prefill_attention_backend set by " \
        "handle_nvfp4" in f.detail
    assert f.detail.endswith("attention_backend set by default attention backend.")


def test_no_assumed_arch_is_printed_as_the_targets():
    found = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"],
                               sglang_version="0.5.19")
    assert found
    for f in found:
        assert "not sm" not in f.message and "from unknown" not in f.message


def test_kv4_is_spelled_out():
    for code in ("KV401", "KV402", "KV403", "KV404", "KV405"):
        assert "FP4 (KV4)" in RULES[code].summary


def test_parser_refusals_say_the_option_the_cause_and_the_fix():
    found = kv4lint.check_argv(QWEN + ["--kv-cache-dtype", "fp8_e4m3", "--cuda-graph-max-bs", "8"],
                               sglang_version="0.5.23")
    (f,) = [f for f in found if f.code == "KV408"]
    assert f.message == "`--cuda-graph-max-bs` is ambiguous in SGLang 0.5.23; write the option in full"
    assert "It could be --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill." in f.detail
    assert "ambiguous option" in f.detail


def _script(tmp_path, text):
    p = tmp_path / "run.sh"
    p.write_text(text, encoding="utf-8")
    return p


def test_full_format_shows_the_source_line_a_caret_and_the_explain_hint(tmp_path, capsys):
    p = _script(tmp_path, "#!/bin/sh\npython -m sglang.launch_server --model-path Qwen/Qwen3-8B \\\n"
                          "    --kv-cache-dtype nvfp4 --port 30000\n")
    assert main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", "--format", "full",
                 str(p)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{p}:3:22: KV404 (error) [*] --kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120), not sm90 "
                      "(Hopper); use fp8_e4m3")
    assert out[1:5] == ["  |", "3 |     --kv-cache-dtype nvfp4 --port 30000",
                        "  |                      ^^^^^ KV404", "  |"]
    assert out[5] == "  = fix: set --kv-cache-dtype fp8_e4m3"
    assert out[6].startswith("  = detail: SGLang 0.5.23: handle_kv4_compatibility raises RuntimeError: ")
    assert "Use --kv-cache-dtype=fp4_mx_block16 for the block-size-16 FP4 recipe." in out[6]
    assert out[7] == "  = help: kv4lint explain KV404"


def test_full_format_caret_under_a_blocker_value(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1 "
                          "--attention-backend trtllm_mha\n")
    main(["check", "--isolated", "--no-cache", "--gpu", "h100", "--sglang-version", "0.5.7", "--format", "full",
          str(p)])
    out = capsys.readouterr().out.splitlines()
    line = "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1 --attention-backend trtllm_mha"
    assert out[0].endswith("KV407 (error) --attention-backend trtllm_mha fails on sm90 (Hopper) with any KV cache; "
                           "choose another backend")
    assert out[2] == "1 | " + line
    assert out[3] == "  | " + " " * line.index("trtllm_mha") + "^" * len("trtllm_mha") + " KV407"
    assert "  = help: kv4lint explain KV407" in out and not any(x.startswith("  = fix:") for x in out)
    assert any("TRTLLM MHA backend is only supported on Blackwell GPUs (SM100)." in x for x in out)


def test_default_text_is_one_line_per_finding_with_its_severity(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", str(p)])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith(f"{p}:1:") and " KV404 (error) [*] --kv-cache-dtype" in out[0]
    assert out[1] == "Found 1 finding (1 error) in 1 file (1 fixable with `kv4lint fix`)."


def test_the_summary_counts_errors_and_warnings(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n"
                          "python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_mx_block16 "
                          "--prefill-attention-backend flashinfer --decode-attention-backend triton\n")
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", str(p)])
    out = capsys.readouterr().out.splitlines()
    assert " KV403 (warning) " in out[1]
    assert out[-1].startswith("Found 2 findings (1 error, 1 warning) in 1 file")


def test_json_and_sarif_carry_the_detail(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", "--format", "json",
          str(p)])
    (f,) = json.loads(capsys.readouterr().out)["findings"]
    assert f["detail"].startswith("SGLang 0.5.23: handle_kv4_compatibility raises RuntimeError")
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", "--format", "sarif",
          str(p)])
    (r,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert r["properties"]["detail"] == f["detail"]
    assert r["message"]["text"] == f["message"]


def test_a_structured_files_launch_location_is_in_the_detail(tmp_path):
    p = tmp_path / "task.json"
    p.write_text(json.dumps({"containerDefinitions": [{"command": [
        "python3", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", "nvfp4",
        "--attention-backend", "triton"]}]}), encoding="utf-8")
    out = tmp_path / "out.json"
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "b200", "--format", "json",
          str(p), "--output-file",
          str(out)])
    (f,) = json.loads(out.read_text())["findings"]
    assert f["message"].startswith("--kv-cache-dtype nvfp4 ")
    assert f["detail"].startswith("The launch at $.containerDefinitions[0].command. SGLang 0.5.23: ")


def test_show_target_prints_the_detail(tmp_path, capsys):
    p = _script(tmp_path, "python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4\n")
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "h100", "--show-target", str(p)])
    out = capsys.readouterr().out
    assert f"{p}:1: KV404 sglang: SGLang 0.5.23: handle_kv4_compatibility raises" in out


def test_an_unknown_build_names_its_first_evidence_and_the_option_that_states_the_release(tmp_path):
    p = _script(tmp_path, "docker run --gpus all lmsysorg/sglang:dev python3 -m sglang.launch_server "
                          "--model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 --attention-backend triton\n")
    out = tmp_path / "out.json"
    main(["check", "--isolated", "--no-cache", "--format", "json", str(p), "--output-file", str(out)])
    (f,) = json.loads(out.read_text())["findings"]
    assert f["code"] == "KV409"
    assert f["message"] == "launch for an unknown SGLang build (image lmsysorg/sglang:dev); set --sglang-version"
    assert f["detail"].startswith("Evidence: image lmsysorg/sglang:dev (a dev build, not a release). No release "
                                  "was stated, so it is judged by SGLang 0.5.23")


def test_a_long_condition_is_cut_in_the_headline_and_whole_in_the_detail(tmp_path):
    """Cut after the last test that fits (a word boundary, never inside a test or its quotes); whole in the
    detail."""
    fp4 = 'os.environ.get("SERVE_WITH_FP4_KV") == "yes"'
    gpu = 'os.environ.get("GPU") == "b200"'
    p = tmp_path / "serve.py"
    p.write_text('import os\nimport subprocess\nkv = "fp8_e4m3"\n'
                 f'if {fp4}:\n    if {gpu}:\n        kv = "nvfp4"\n'
                 'subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m", '
                 '"--kv-cache-dtype", kv, "--attention-backend", "triton"])\n', encoding="utf-8")
    out = tmp_path / "out.json"
    main(["check", "--isolated", "--no-cache", "--sglang-version", "0.5.23", "--gpu", "b200", "--format", "json",
          str(p), "--output-file", str(out)])
    (f,) = json.loads(out.read_text())["findings"]
    assert f["message"] == (f'when {fp4}...: --kv-cache-dtype nvfp4 is refused with '
                            '--attention-backend triton (MHA and MLA models); use fp8_e4m3')
    assert f["detail"].startswith(f"The launch runs when {fp4} and {gpu}. SGLang 0.5.23: ")


def test_a_headline_never_cuts_a_test_a_backtick_span_or_a_quoted_value():
    from kv4lint.pipeline.runner import _brief

    long_test = 'os.environ.get("SERVE_WITH_FP4_KV_CACHE_ON_BLACKWELL") == "yes"'
    assert _brief(long_test) == long_test  # one test longer than the limit: whole
    command = "`grep -q 'B200 and H200' /etc/gpu-inventory` succeeds"
    assert _brief(f"{command} and FP4=1") == f"{command}..."
    assert _brief(f"FP4=1 and {command}") == "FP4=1..."
    assert _brief("MODE='a b c d e f g h' and FP4=1 and BIG=1 and X=2") == "MODE='a b c d e f g h' and FP4=1..."


def test_a_long_pipeline_test_keeps_the_command_that_decides_it():
    """`nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100`: the grep decides, and stays whole."""
    from kv4lint.frontends.shell.choices import describe

    ok, fails = describe("nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100")
    assert (ok, fails) == ("`nvidia-smi ... | grep -q H100` succeeds", "`nvidia-smi ... | grep -q H100` fails")
    assert describe("some_long_command --with-many --options --that-go-on-and-on --forever")[0] == \
        "`some_long_command --with-many --options --that-...` succeeds"


# Unpinned launches with no GPU stated, over the backends and models: the headlines that say the most (a release's
# lead, the GPUs that refuse, what decides). Each stays within about HEADLINE characters: the scope in fewer
# words, then a shorter advice, and far past it the advice moves to the detail.
UNSTATED = [["--model-path", model, "--kv-cache-dtype", dtype] + (["--attention-backend", backend] if backend else [])
            for model in ("meta-llama/Llama-3.1-8B", "deepseek-ai/DeepSeek-V3", "some/unknown-model")
            for dtype in ("nvfp4", "fp4_mx_block16", "fp4_e2m1")
            for backend in (None, "triton", "flashinfer", "fa3", "trtllm_mha", "trtllm_mla", "flashmla", "fa4")]


def test_headlines_of_unstated_targets_stay_about_headline_long():
    lengths = [(len(f.message), f.message) for argv in UNSTATED for f in kv4lint.check_argv(argv)]
    assert len(lengths) > 50 and any(m.startswith("from SGLang") for _, m in lengths)
    assert max(lengths)[0] <= HEADLINE + 10, max(lengths)
