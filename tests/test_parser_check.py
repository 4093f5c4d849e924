"""Issue 22 through the real CLI: the parser comes first (KV408), launches for an SGLang build kv4lint
does not know (KV409), no fix that leaves a refused launch, and the models SGLang treats specially.

Each test runs ``python -m kv4lint`` in a fresh process on files in a temporary directory (no
configuration, no pin: the release is inferred unless the test states it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint.rules.codes import RULES
from kv4lint.rules.engine import (
    DEFAULTS, FIRST_KV4, fa4_mha_list, fa4_mla_list, kv4_dtypes, mha_list, mla_list, release,
)
from kv4lint.base.settings import DEFAULT_FIX_DTYPE
from kv4lint.rules.check import FP4_ONLY_FIELDS
from kv4lint.sglang.options import flag_for, known_releases, literal_tokens, normalise_argv, table

ROOT = Path(__file__).resolve().parents[1]
ISSUE = ("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --attention-backend dsv4 \\\n"
         "    --kv-cache-dtype fp4_e2m1 --fp4-kv-cache-recipe nvfp4 --page-size 256\n")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def kv4lint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KV4LINT_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kv4lint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def check_json(cwd: Path, *args: str) -> list[dict]:
    r = kv4lint(cwd, "check", "--format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)["findings"]


def brief(findings: list[dict]) -> list[tuple[str, int, int, str]]:
    return [(f["path"], f["line"], f["column"], f["code"]) for f in findings]


def by_code(findings: list[dict], code: str) -> dict:
    (f,) = [f for f in findings if f["code"] == code]
    return f


# ---------------------------------------------------------------------------
# The issue's launch, release inferred


def test_issue_launch_for_an_unknown_build_is_kv409_only(tmp_path):
    # No release stated and none kv4lint knows takes `--fp4-kv-cache-recipe` with fp4_e2m1: a build kv4lint
    # does not know. KV409 says so; no KV406/KV408 claims to know that build's parser.
    (tmp_path / "serve.sh").write_text(ISSUE)
    found = check_json(tmp_path, "serve.sh")
    assert brief(found) == [("serve.sh", 2, 31, "KV409")]  # at the word no release takes
    (build,) = found
    assert build["severity"] == "warning"
    # The option no release has is the build's own: stating a stock release would refuse it (KV408), so the advice
    # is to mark it as the fork's.
    assert build["message"] == "launch for an unknown SGLang build (`--fp4-kv-cache-recipe`); set fork-options"
    assert "`--fp4-kv-cache-recipe` (it exists in no release kv4lint knows), `--kv-cache-dtype fp4_e2m1`" in \
        build["detail"]
    # SGLang has --fp4-gemm-backend: the glob names the option itself, not every --fp4-* one.
    assert ('Mark what the fork adds as its own with fork-options = ["--fp4-kv-cache-recipe"] in [tool.kv4lint]'
            in build["detail"])


def test_issue_launch_parser_first_and_no_safe_spelling_fix(tmp_path):
    (tmp_path / "serve.sh").write_text(ISSUE)
    found = check_json(tmp_path, "--sglang-version", "0.5.23", "serve.sh")
    assert brief(found) == [("serve.sh", 2, 22, "KV406"), ("serve.sh", 2, 31, "KV408")]
    refusal = by_code(found, "KV408")
    assert refusal["message"] == "`--fp4-kv-cache-recipe` is not an option of SGLang 0.5.23; remove it"
    assert "unrecognized arguments: --fp4-kv-cache-recipe nvfp4. It exists in no release kv4lint knows." in \
        refusal["detail"]
    assert refusal["fix"] is None
    spelling = by_code(found, "KV406")["fix"]
    assert spelling["applicability"] == "unsafe"
    assert "parser would still refuse the fixed launch: `--fp4-kv-cache-recipe` is not an option" in \
        spelling["description"]


def test_issue_launch_in_a_dev_image(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM lmsysorg/sglang:dev\nCMD " + ISSUE)
    found = check_json(tmp_path, "Dockerfile")
    assert [f["code"] for f in found] == ["KV409"]
    assert "image lmsysorg/sglang:dev (a dev build, not a release)" in by_code(found, "KV409")["detail"]
    # --show-target says it too.
    r = kv4lint(tmp_path, "check", "--show-target", "Dockerfile")
    assert "evidence of an SGLang build kv4lint does not know: no release kv4lint knows takes all its options " \
           "and values: `--fp4-kv-cache-recipe`" in r.stdout
    assert "image lmsysorg/sglang:dev (a dev build, not a release)" in r.stdout


def test_fix_leaves_the_refused_launch_and_counts_it(tmp_path):
    p = tmp_path / "serve.sh"
    p.write_text(ISSUE)
    r = kv4lint(tmp_path, "fix", "--sglang-version", "0.5.23", "serve.sh")
    assert p.read_text() == ISSUE  # the only fix is unsafe: nothing applied
    assert r.returncode == 1 and "Fixed 0 findings in 0 files (2 remaining)." in r.stderr
    # Forced, the dtype is rewritten, yet SGLang still refuses the launch: it is never "0 remaining".
    r = kv4lint(tmp_path, "fix", "--sglang-version", "0.5.23", "--unsafe-fixes", "serve.sh")
    assert "--kv-cache-dtype fp8_e4m3 --fp4-kv-cache-recipe nvfp4" in p.read_text()
    assert r.returncode == 1 and "Fixed 1 finding in 1 file (1 remaining)." in r.stderr
    # With no release stated, nothing is offered for a build kv4lint does not know.
    p.write_text(ISSUE)
    r = kv4lint(tmp_path, "fix", "serve.sh")
    assert p.read_text() == ISSUE and r.returncode == 1 and "Fixed 0 findings in 0 files (1 remaining)." in r.stderr


def test_unknown_option_with_an_accepted_dtype(tmp_path):
    (tmp_path / "serve.sh").write_text("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash "
                                       "--attention-backend dsv4 --kv-cache-dtype fp8_e4m3 --bogus-flag 1\n")
    found = check_json(tmp_path, "--sglang-version", "0.5.23", "serve.sh")
    assert brief(found) == [("serve.sh", 1, 127, "KV408")]  # stated release: no KV409
    assert found[0]["message"] == "`--bogus-flag` is not an option of SGLang 0.5.23; remove it"
    assert "unrecognized arguments: --bogus-flag 1" in found[0]["detail"]  # the parser's words


def test_close_match_and_prefixes(tmp_path):
    (tmp_path / "a.sh").write_text(f"sglang serve --model-path {LLAMA} --kv-cache-dtpye fp8_e4m3\n")
    (tmp_path / "b.sh").write_text(f"sglang serve --model-path {LLAMA} --kv-cache-dtyp fp8_e4m3\n")
    (tmp_path / "c.sh").write_text(f"sglang serve --model-path {LLAMA} --kv-cache-dtype fp8_e4m3 --attention "
                                   "triton\n")
    found = check_json(tmp_path, "--sglang-version", "0.5.23", ".")
    assert brief(found) == [("a.sh", 1, 60, "KV408"), ("c.sh", 1, 86, "KV408")]  # a unique prefix is accepted
    assert "did you mean `--kv-cache-dtype`?" in found[0]["message"]
    assert found[1]["message"] == "`--attention` is ambiguous in SGLang 0.5.23; write the option in full"
    assert found[1]["detail"].startswith("It could be --attention-backend, --attention-context-parallel-size")


def test_choice_and_missing_value_and_attribution(tmp_path):
    # A refused backend value: the KV4 verdict depends on the backend the user will pick, so no KV401.
    (tmp_path / "a.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} "
                                   "--kv-cache-dtype fp4_mx_block16 --attention-backend flashinfr\n")
    # An unknown option changes nothing the KV4 check reads: KV401 holds, and its fix is unsafe.
    (tmp_path / "b.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} "
                                   "--kv-cache-dtype fp4_mx_block16 --attention-backend flashinfer --tpp 2\n")
    (tmp_path / "c.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype "
                                   "fp8_e4m3 --page-size\n")
    found = check_json(tmp_path, "--sglang-version", "0.5.23", ".")
    assert [(f["path"], f["code"]) for f in found] == [("a.sh", "KV408"), ("b.sh", "KV401"), ("b.sh", "KV408"),
                                                       ("c.sh", "KV408")]
    assert "`--attention-backend flashinfr` is not a choice of SGLang 0.5.23" in found[0]["message"]
    assert "did you mean `flashinfer`?" in found[0]["message"]
    assert found[1]["fix"]["applicability"] == "unsafe"
    assert "`--page-size` needs a value in SGLang 0.5.23, but it is the last argument" in found[3]["message"]


def test_spelling_fix_is_safe_only_for_a_stated_release(tmp_path):
    (tmp_path / "serve.sh").write_text(f"python -m sglang.launch_server --model-path {LLAMA} --kv-cache-dtype "
                                       "fp4_e2m1 --attention-backend triton\n")
    # No release stated: fp4_e2m1 is the spelling of SGLang <= 0.5.15.post1, so that is the release it is for.
    assert check_json(tmp_path, "serve.sh") == []
    r = kv4lint(tmp_path, "check", "--show-target", "serve.sh")
    assert "sglang=0.5.15.post1 (inferred: 0.5.15.post1" in r.stdout
    assert "`--kv-cache-dtype fp4_e2m1`: last taken by 0.5.15.post1" in r.stdout
    (stated,) = check_json(tmp_path, "--sglang-version", "0.5.23", "serve.sh")
    assert stated["code"] == "KV406" and stated["fix"]["applicability"] == "safe"


def test_git_install_is_evidence_of_another_build(tmp_path):
    (tmp_path / "requirements.txt").write_text("sglang @ git+https://github.com/sgl-project/sglang.git"
                                               "#subdirectory=python\n")
    (tmp_path / "serve.sh").write_text(f"sglang serve --model-path {LLAMA} --kv-cache-dtype fp8_e4m3\n")
    assert check_json(tmp_path, "serve.sh") == []  # no KV4 verdict on any build: the build decides nothing
    (tmp_path / "serve.sh").write_text(f"sglang serve --model-path {LLAMA} --kv-cache-dtype fp4_mx_block16 "
                                       "--attention-backend triton\n")
    (f,) = check_json(tmp_path, "serve.sh")
    assert f["code"] == "KV409" and f["message"].startswith("launch for an unknown SGLang build")
    assert "requirements.txt:1" in f["detail"] and "SGLang installed from git or source" in f["detail"]
    (tmp_path / "requirements.txt").unlink()
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.9.1-devel-ubuntu24.04\n"
                                         "RUN git clone https://github.com/sgl-project/sglang.git && "
                                         "pip install -e 'sglang/python[all]'\n")
    (f,) = check_json(tmp_path, "serve.sh")
    assert "Dockerfile:2 (git clone https://github.com/sgl-project/sglang.git)" in f["detail"]


def test_entry_points_with_options_of_their_own(tmp_path):
    # Bench scripts add options kv4lint's tables do not list; sglang serve takes --model-type itself.
    (tmp_path / "a.sh").write_text(f"python -m sglang.bench_one_batch --model-path {LLAMA} --kv-cache-dtype "
                                   "fp8_e4m3 --batch-size 1\n")
    (tmp_path / "b.sh").write_text(f"sglang serve --model-type llm --model-path {LLAMA} --kv-cache-dtype "
                                   "fp8_e4m3\n")
    assert check_json(tmp_path, "--sglang-version", "0.5.23", ".") == []


def test_config_file_keys(tmp_path):
    (tmp_path / "cfg.yaml").write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp8_e4m3\n"
                                       "fp4-kv-cache-recipe: nvfp4\n")
    (tmp_path / "serve.sh").write_text("python -m sglang.launch_server --config cfg.yaml\n")
    found = check_json(tmp_path, "--sglang-version", "0.5.23", "serve.sh")
    assert [f["code"] for f in found] == ["KV408"]
    assert found[0]["message"].startswith("config key `fp4-kv-cache-recipe` is not an option of SGLang 0.5.23")


# ---------------------------------------------------------------------------
# Models SGLang treats specially


def _attention(tmp_path: Path, model: str) -> str:
    (tmp_path / "serve.sh").write_text(f"sglang serve --model-path {model} --kv-cache-dtype fp8_e4m3\n")
    r = kv4lint(tmp_path, "check", "--sglang-version", "0.5.23", "--show-target", "serve.sh")
    line = next(ln for ln in r.stdout.splitlines() if "model_attention=" in ln)
    return line.split("model_attention=", 1)[1].split(" (", 1)[0]


@pytest.mark.parametrize("model,attention", [
    ("deepseek-ai/DeepSeek-V4-Flash", "dsv4"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", "mla+dsa"),
    ("someone/DeepSeek-V3_2-AWQ", "mla+dsa"),  # was read as DeepSeek-V3 (MLA without DSA)
    ("zai-org/GLM-5.1-FP8", "mla+dsa"),
    ("deepseek-ai/DeepSeek-V3", "mla"),
    ("acme/house-model-7b", "None"),  # unrecognised: unknown, not MHA
])
def test_model_recognised_from_the_path(tmp_path, model, attention):
    assert _attention(tmp_path, model) == attention


def test_model_recognised_from_config_json(tmp_path):
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps({"architectures": ["DeepseekV4ForCausalLM"]}))
    assert _attention(tmp_path, "ckpt") == "dsv4"
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"],
                                                               "index_topk": 2048}))
    assert _attention(tmp_path, "ckpt") == "mla+dsa"


def test_v4_with_fp4_is_refused_by_its_dtype_rule(tmp_path):
    (tmp_path / "serve.sh").write_text("sglang serve --model-path deepseek-ai/DeepSeek-V4-Flash --kv-cache-dtype "
                                       "fp4_mx_block16\n")
    (f,) = check_json(tmp_path, "--sglang-version", "0.5.23", "serve.sh")
    assert f["code"] == "KV405" and "fp4_mx_block16 is not supported for DeepseekV4ForCausalLM" in f["detail"]
    assert f["message"] == ("--kv-cache-dtype fp4_mx_block16 is refused with DeepSeek-V4 "
                            "(DeepseekV4ForCausalLM); use fp8_e4m3")


# ---------------------------------------------------------------------------
# Release data in one place: what kv4lint's rules and fixes name exists in the releases they apply to


@pytest.mark.parametrize("version", [r for r in known_releases() if release(r) >= FIRST_KV4])
def test_rules_and_fixes_name_only_what_the_release_has(version):
    n = release(version)
    tbl = table(version)
    dtypes = tbl["--kv-cache-dtype"].choices
    assert DEFAULT_FIX_DTYPE in dtypes
    assert set(kv4_dtypes(n)) <= set(dtypes)
    backends = set(tbl["--attention-backend"].choices) & set(tbl["--decode-attention-backend"].choices)
    for lst in (mla_list(n), mha_list(n), fa4_mla_list(n), fa4_mha_list(n)):
        assert set(lst) <= backends, (version, set(lst) - backends)
    # The fields the engine reads and the fixes remove have an option in every release whose rules read them
    # (present from the release the field first appears in, never removed later).
    for name in list(DEFAULTS) + list(FP4_ONLY_FIELDS):
        have = [r for r in known_releases() if flag_for(name, r) in table(r)]
        assert have, name
        assert have == [r for r in known_releases() if release(r) >= release(have[0])], name


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_examples_parse_in_their_release(code):
    # The examples `explain` and the rule pages show are judged by the release their target names (else the
    # newest rule pack): only KV408's must-fire example and KV409's (a fork's options) may hold an option the parser
    # refuses.
    for example in RULES[code].examples:
        t = list(example.target)
        version = t[t.index("--sglang-version") + 1] if "--sglang-version" in t else None
        words = example.launch.replace("\\\n", " ").split("#", 1)[0].split()
        assert "sglang.launch_server" in words, example.launch
        args = normalise_argv(literal_tokens(words[words.index("sglang.launch_server") + 1:]), version)
        refused = [p for p in args.problems if p.kind != "choice" or p.option != "--kv-cache-dtype"]
        if code == "KV408" and example.fires:
            assert [p.kind for p in refused] == ["unknown"]
        elif code == "KV409":  # a build kv4lint does not know: its own options are what the rule is about
            assert all(p.kind == "unknown" for p in refused), (code, version, example.launch)
        else:
            assert refused == [], (code, version, example.launch)


def test_release_tables_share_one_option_per_spec():
    # 26 releases hold about 8,800 options and fewer than 800 distinct specs: one Option object per spec keeps
    # the cyclic collector's work small (the flake8 plugin runs inside flake8's process).
    tables = [table(r) for r in known_releases()]
    options = [o for t in tables for o in t.values()]
    distinct = {id(o) for o in options}
    assert len(options) > 5 * len(distinct)
    old, new = table(known_releases()[0]), table(known_releases()[-1])
    assert old["--tp-size"] is new["--tp-size"]  # the same spec in the oldest and newest release: one object
    assert old["--kv-cache-dtype"].choices != new["--kv-cache-dtype"].choices  # specs that differ stay apart
    assert all(type(o).__name__ == "Option" for o in options)


def test_a_value_is_a_choice_as_argparse_converts_it_whatever_was_asked_before():
    """Int choices take a word argparse converts first (``--fuseep-mode 02`` is 2), string choices the word as
    written: each asked after the other, in either order (``options._STRINGS`` keeps, per choices tuple, whether
    it holds strings only)."""
    from kv4lint.sglang import options

    asks = [(("1", "2"), "02", False), ((1, 2), "02", True), (("1", "2"), "2", True), ((1, 2), "x", False),
            ((0, 2, 4), "4", True), (("0", "2", "4"), "04", False)]
    for order in (asks, asks[::-1]):
        options._STRINGS.clear()
        assert [options._is_choice(text, choices) for choices, text, _ in order] == [want for *_, want in order]
    problems = normalise_argv(literal_tokens(["--fuseep-mode", "02", "--fuseep-mode", "3"]), None).problems
    assert [(p.kind, p.value.text) for p in problems] == [("choice", "3")]
