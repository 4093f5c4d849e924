"""Forms real repositories use, round two: negative tests, dummy models, fork builds, SGLang's own test classes,
SGLang ``--config`` files read alone, launchers built from settings, the same launch on two paths."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kv4lint.base.settings import Settings
from kv4lint.cli import main
from kv4lint.frontends.python import scan_python
from kv4lint.pipeline.runner import lint_text


def src_of(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def lint(text: str, path: str = "t.py", **settings):
    return lint_text(path, src_of(text), Settings(**settings))


def codes(rep) -> list[str]:
    return [f.code for f in rep.findings]


# ---------------------------------------------------------------------------
# 1. A negative test is not a launch

REFUSED = 'ServerArgs(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4", attention_backend="fa3")'


@pytest.mark.parametrize("body, context", [
    (f"with pytest.raises(ValueError, match='KV4'):\n        {REFUSED}", "`with pytest.raises(ValueError, ...)`"),
    (f"with self.assertRaises(ValueError):\n        {REFUSED}", "`with self.assertRaises(ValueError)`"),
    (f"with self.assertRaisesRegex(ValueError, 'fa3'), patch('x'):\n        {REFUSED}",
     "`with self.assertRaisesRegex(ValueError, ...)`"),
    (f"pytest.raises(ValueError, lambda: {REFUSED})", "`pytest.raises(ValueError, ...)`"),
    (f"self.assertRaises(AssertionError, lambda: {REFUSED})", "`self.assertRaises(AssertionError, ...)`"),
    (f"try:\n        {REFUSED}\n        self.fail('refused')\n    except ValueError:\n        pass",
     "a `try` whose body ends in a failed test"),
    (f"try:\n        {REFUSED}\n        pytest.fail('refused')\n    except ValueError:\n        pass",
     "a `try` whose body ends in a failed test"),
    ("args = prepare_server_args(['--model-path', 'm', '--kv-cache-dtype', 'nvfp4', '--attention-backend', 'fa3'])"
     .replace("args = ", "with self.assertRaises(SystemExit):\n        "), "`with self.assertRaises(SystemExit)`"),
])
def test_a_launch_built_where_a_refusal_is_expected_is_not_judged(body, context):
    src = ("import pytest\nfrom sglang.srt.server_args import ServerArgs, prepare_server_args\n\n\n"
           f"def test_refused(self):\n    {body}\n")
    rep = lint_text("t.py", src, Settings())
    assert rep.findings == []
    assert rep.targets[0]["not_judged"] == f"a negative test: built inside {context}, where the code expects " \
                                           "SGLang to refuse it"
    positive = lint_text("t.py", src.replace("self.fail(", "print(").replace("pytest.fail(", "print(")
                         .replace("pytest.raises", "nullcontext").replace("self.assertRaisesRegex", "patch")
                         .replace("self.assertRaises", "patch"), Settings())
    assert [f.code for f in positive.findings] == ["KV401"]  # the same launch outside the context is judged


def test_the_refusal_asserted_right_after_makes_a_negative_test():
    """SGLang's own unit test: the ServerArgs is built, then its validation is expected to raise."""
    rep = lint("""
        from sglang.srt.server_args import ServerArgs

        class TestHiSparse(unittest.TestCase):
            def test_hisparse_rejects_unsupported_kv_cache_dtype(self):
                server_args = ServerArgs(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4",
                                         attention_backend="fa3")
                with self.assertRaisesRegex(ValueError, r"fp8_e4m3"):
                    server_args._validate_hisparse_kv_cache_dtype()

            def test_used_before_is_judged(self):
                server_args = ServerArgs(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4",
                                         attention_backend="fa3")
                server_args.check_server_args()
                self.assertRaises(ValueError, other)
        """)
    assert rep.targets[0]["not_judged"] == ("a negative test: `server_args` is used inside `with "
                                            "self.assertRaisesRegex(ValueError, ...)` (line 8), where the code "
                                            "expects SGLang to refuse it")
    assert "not_judged" not in rep.targets[1] and codes(rep) == ["KV401"]


def test_a_use_in_another_function_or_before_the_launch_does_not_count():
    rep = lint("""
        from sglang.srt.server_args import ServerArgs

        def helper(self):
            with self.assertRaises(ValueError):
                server_args.check()

        def test_launch(self):
            with self.assertRaises(ValueError):
                server_args.check()
            server_args = ServerArgs(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4", attention_backend="fa3")
        """)
    assert codes(rep) == ["KV401"]


def test_a_negative_test_stays_visible_in_show_target(tmp_path: Path, capsys):
    (tmp_path / "test_hisparse.py").write_text(src_of("""
        import pytest
        from sglang.srt.server_args import ServerArgs

        def test_refused():
            with pytest.raises(ValueError):
                ServerArgs(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4", attention_backend="fa3")
        """))
    assert main(["check", "--no-cache", "-j", "1", "--show-target", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "test_hisparse.py:6: ServerArgs: not judged: a negative test: built inside `with " \
           "pytest.raises(ValueError)`" in out


# ---------------------------------------------------------------------------
# Dummy model paths: SGLang skips its resolution (every release kv4lint knows)


@pytest.mark.parametrize("version, fp4", [("0.5.7", "fp4_e2m1"), ("0.5.14", "fp4_e2m1"), ("0.5.18", "nvfp4"),
                                          ("0.5.23", "nvfp4")])
def test_a_dummy_model_path_is_judged_by_the_parser_alone(version, fp4):
    sh = "python -m sglang.launch_server --model-path dummy --kv-cache-dtype {d} --attention-backend fa3\n"
    rep = lint(sh.format(d=fp4), "run.sh", sglang_version=version)
    assert rep.findings == []
    assert rep.targets[0]["note"] == ("model path 'dummy': SGLang skips its argument resolution and loads no "
                                      "model, so only its argument parser's refusals are judged")
    real = lint(sh.format(d=fp4).replace("dummy", "Qwen/Qwen3-8B"), "run.sh", sglang_version=version)
    assert codes(real) == ["KV401"]
    refused = lint(sh.format(d="float16"), "run.sh", sglang_version=version)
    assert codes(refused) == ["KV406"]  # argparse still refuses a value that is not a choice


def test_a_dummy_model_in_the_python_api_is_not_judged():
    rep = lint("""
        from sglang.srt.server_args import ServerArgs
        server_args = ServerArgs(model_path="dummy", enable_hisparse=True, kv_cache_dtype="float16")
        """)
    assert rep.findings == [] and "loads no model" in rep.targets[0]["note"]


# ---------------------------------------------------------------------------
# 2. KV409 only where the build decides the verdict; a fork's options marked as its own

KT = ("python -m sglang.launch_server --model Qwen/Qwen3-30B-A3B --kt-weight-path /models/q --kt-method AMXINT4 "
      "--kt-cpuinfer 60 --kt-gpu-prefill-token-threshold 4096 --kt-enable-dynamic-expert-update "
      "--attention-backend {backend} --kv-cache-dtype {dtype}\n")


@pytest.mark.parametrize("dtype", ["bf16", "fp8_e4m3", "auto", "$KV_DTYPE"])
def test_a_fork_launch_with_nothing_fp4_gets_no_kv409(dtype):
    assert lint(KT.format(backend="flashinfer", dtype=dtype), "run.sh").findings == []


def test_a_fork_launch_with_an_fp4_cache_names_the_fork_setting_not_a_release():
    rep = lint(KT.format(backend="triton", dtype="fp4_mx_block16"), "run.sh")
    (f,) = rep.findings
    assert f.code == "KV409"
    assert f.message == "launch for an unknown SGLang build (`--kt-gpu-prefill-token-threshold`); set fork-options"
    # SGLang has --kt-method, --kt-cpuinfer ...: the setting names the fork's own options, not every --kt-* one.
    assert ('fork-options = ["--kt-gpu-prefill-token-threshold", "--kt-enable-dynamic-expert-update"] in '
            "[tool.kv4lint]") in f.detail
    assert "a release stated alone would report each of them as refused (KV408)" in f.detail
    # The advice followed: no KV409, and a stated release refuses none of the fork's options.
    forks = ["--kt-gpu-prefill-token-threshold", "--kt-enable-dynamic-expert-update"]
    assert lint(KT.format(backend="triton", dtype="fp4_mx_block16"), "run.sh", fork_options=forks).findings == []
    stated = lint(KT.format(backend="triton", dtype="fp4_mx_block16"), "run.sh", fork_options=forks,
                  sglang_version="0.5.23")
    assert stated.findings == []
    alone = lint(KT.format(backend="triton", dtype="fp4_mx_block16"), "run.sh", sglang_version="0.5.23")
    assert codes(alone) == ["KV408", "KV408"]  # what the advice avoids


def test_a_glob_marks_a_prefix_no_release_has():
    text = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --mf-offload 2 --mf-pin "
            "--kv-cache-dtype nvfp4 --attention-backend triton\n")
    (f,) = [f for f in lint(text, "run.sh").findings if f.code == "KV409"]
    assert f.message == 'launch for an unknown SGLang build (`--mf-offload`); set fork-options = ["--mf-*"]'
    rep = lint(text, "run.sh", fork_options=["--mf-*"])
    assert "KV409" not in codes(rep) and codes(rep) == ["KV401"]  # judged by the newest release: nvfp4 + triton
    assert rep.targets[0]["note"] == "the fork's own (fork-options), not judged: --mf-offload, --mf-pin"


def test_a_value_of_a_stock_option_marked_as_the_forks_is_unknown():
    text = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 "
            "--attention-backend kt_flash\n")
    (f,) = lint(text, "run.sh").findings
    assert f.code == "KV409" and "fork-options = [\"--attention-backend=kt_flash\"]" in f.message + f.detail
    from kv4lint.settings.options import check_fork_options

    for glob in ("--attention-backend=kt_*", "attention-backend=kt_*"):  # the dashes may be left out
        assert lint(text, "run.sh", fork_options=check_fork_options([glob])).findings == []
    inline = text.replace("--attention-backend kt_flash", "--attention-backend=kt_flash")
    assert lint(inline, "run.sh", fork_options=["--attention-backend=kt_*"]).findings == []


def test_fork_options_in_every_route(tmp_path: Path, capsys):
    (tmp_path / "run.sh").write_text(KT.format(backend="triton", dtype="fp4_mx_block16"))
    assert main(["check", "--no-cache", "-j", "1", str(tmp_path)]) == 1
    capsys.readouterr()
    forks = "kt-gpu-prefill-token-threshold,kt-enable-dynamic-expert-update"
    assert main(["check", "--no-cache", "-j", "1", "--fork-options", forks, str(tmp_path)]) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.kv4lint]\nfork-options = ["--kt-gpu-prefill-*", '
                                             '"--kt-enable-*"]\n')
    assert main(["check", "--no-cache", "-j", "1", str(tmp_path)]) == 0
    capsys.readouterr()
    (tmp_path / "pyproject.toml").write_text('[tool.kv4lint]\nfork-options = ["="]\n')
    assert main(["check", "--no-cache", "-j", "1", str(tmp_path)]) == 2
    assert "fork-options: expected option globs" in capsys.readouterr().err
    from kv4lint.settings.options import BY_NAME, CODEMOD, FLAKE8, TOML

    assert {TOML, FLAKE8, CODEMOD} <= BY_NAME["fork-options"].where


def test_fork_options_through_flake8(tmp_path: Path):
    import subprocess
    import sys

    script = tmp_path / "launch.py"
    script.write_text("import subprocess\nsubprocess.run(" + json.dumps(
        KT.format(backend="triton", dtype="fp4_mx_block16").split()) + ")\n")
    base = [sys.executable, "-m", "flake8", "--select", "KV4", str(script)]
    assert "KV409" in subprocess.run(base, capture_output=True, text=True).stdout
    marked = subprocess.run(base + ["--kv4-fork-options=--kt-gpu-prefill-*,--kt-enable-*"], capture_output=True,
                            text=True)
    assert marked.returncode == 0, marked.stdout + marked.stderr


# ---------------------------------------------------------------------------
# 3. SGLang's own test classes

DEFAULT_BASE = "from sglang.test.server_fixtures.default_fixture import DefaultServerBase\n"


def test_a_default_server_test_class_is_a_launch_reported_where_its_args_are_written():
    src = src_of('''
        import unittest

        from sglang.test.kits.eval_accuracy_kit import GSM8KMixin
        from sglang.test.server_fixtures.default_fixture import DefaultServerBase


        class TestLlama8BNVFP4KVCache(GSM8KMixin, DefaultServerBase):
            model = "nvidia/Llama-3.1-8B-Instruct-NVFP4"
            other_args = [
                "--kv-cache-dtype",
                "nvfp4",
                "--attention-backend",
                "fa3",
            ]


        class TestNoArgs(GSM8KMixin, DefaultServerBase):
            gsm8k_num_questions = 10
        ''')
    (launch,) = scan_python(src, "t.py").launches
    assert launch.entry == "popen_launch_server" and launch.config_via == "sglang.launch_server"
    assert [v.text for v in launch.argv] == ["--model-path", "nvidia/Llama-3.1-8B-Instruct-NVFP4",
                                             "--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"]
    assert src[launch.anchor.start:launch.anchor.end] == "TestLlama8BNVFP4KVCache"
    rep = lint_text("t.py", src, Settings())
    (f,) = rep.findings
    assert (f.code, f.start.line, src.splitlines()[f.start.line - 1].strip()) == ("KV401", 13, '"fa3",')
    assert f.fix.applicability == "safe"


def test_args_shared_by_test_classes_are_fixed_unsafely():
    src = src_of('''
        from sglang.test.server_fixtures.default_fixture import DefaultServerBase

        COMMON_ARGS = ["--tp-size", "4", "--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"]


        class TestA(DefaultServerBase):
            model = "Qwen/Qwen3-8B"
            other_args = COMMON_ARGS + ["--page-size", "16"]


        class TestB(DefaultServerBase):
            model = "Qwen/Qwen3-8B"
            other_args = COMMON_ARGS + ["--page-size", "64"]
        ''')
    rep = lint_text("t.py", src, Settings())
    # One finding per launch, at its use of the constant (the classes run apart); each fix edits the constant.
    assert [(f.code, f.start.line) for f in rep.findings] == [("KV401", 8), ("KV401", 13)]
    assert {f.fix.applicability for f in rep.findings} == {"unsafe"}  # the constant feeds two launches


def test_attributes_come_from_the_class_its_bases_and_the_fixture():
    src = src_of('''
        from sglang.test.server_fixtures.eagle_fixture import EagleServerBase
        from sglang.test.server_fixtures.mmmu_fixture import MMMUServerBase


        class NVFP4Base(MMMUServerBase):
            other_args = ["--kv-cache-dtype", "nvfp4"]


        class TestQwenVL(NVFP4Base):
            model = "Qwen/Qwen2.5-VL-7B-Instruct"


        class TestEagleNVFP4(EagleServerBase):
            target_model = "meta-llama/Llama-3.1-8B-Instruct"
            spec_topk = 1
            extra_args = ["--kv-cache-dtype", "nvfp4"]
        ''')
    base, vl, eagle = scan_python(src, "t.py").launches
    assert [v.text for v in vl.argv] == ["--model-path", "Qwen/Qwen2.5-VL-7B-Instruct", "--trust-remote-code",
                                         "--cuda-graph-max-bs", "64", "--enable-multimodal", "--mem-fraction-static",
                                         "0.8", "--kv-cache-dtype", "nvfp4"]
    assert vl.argv[-1].shared  # NVFP4Base's list: TestQwenVL and NVFP4Base itself run with it
    assert base.argv[1].text is None  # NVFP4Base sets no model: unknown
    assert [v.text for v in eagle.argv] == [
        "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm=EAGLE", None,
        "--speculative-num-steps=5", "--speculative-eagle-topk=1", "--speculative-num-draft-tokens=64",
        "--mem-fraction-static=0.7", "--kv-cache-dtype", "nvfp4"]


def test_a_base_of_the_same_file_runs_as_each_subclass():
    """CustomTestCase subclasses that launch in setUpClass with cls.other_args (SGLang's suites, forks' mixins)."""
    src = src_of('''
        from sglang.test.test_utils import DEFAULT_URL_FOR_TEST, CustomTestCase, popen_launch_server


        class GSM8KAscendMixin:
            model = ""
            other_args = ["--trust-remote-code", "--attention-backend", "ascend"]

            @classmethod
            def setUpClass(cls):
                cls.process = popen_launch_server(cls.model, DEFAULT_URL_FOR_TEST, other_args=cls.other_args)


        class TestQwen(GSM8KAscendMixin, CustomTestCase):
            model = "Qwen/Qwen3-8B"
            other_args = ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"]


        class TestQwenInherited(TestQwen):
            accuracy = 0.5
        ''')
    rep = lint_text("t.py", src, Settings())
    assert [(t["line"], t["entry"]) for t in rep.targets] == [(10, "popen_launch_server"), (13, "popen_launch_server")]
    (f,) = rep.findings
    assert f.code == "KV401" and f.start.line == 15  # at the subclass's value
    assert f.fix.applicability == "unsafe"  # TestQwenInherited runs with the same list


@pytest.mark.parametrize("src", [
    # A class of the same name that is not SGLang's.
    "class DefaultServerBase:\n    pass\n\n\nclass T(DefaultServerBase):\n"
    "    other_args = ['--kv-cache-dtype', 'nvfp4']\n",
    "from mytests import DefaultServerBase\n\n\nclass T(DefaultServerBase):\n"
    "    other_args = ['--kv-cache-dtype', 'nvfp4']\n",
    # SGLang's base with nothing set: the fixture's own launch has no model, nothing to judge.
    DEFAULT_BASE + "\n\nclass T(DefaultServerBase):\n    timeout = 60\n",
])
def test_only_sglangs_own_test_bases_with_attributes_set_are_launches(src):
    assert scan_python(src, "t.py").launches == []


def test_a_test_class_file_passes_the_prefilter():
    from kv4lint.files.prefilter import might_launch, python_may_launch

    src = DEFAULT_BASE + "\n\nclass T(DefaultServerBase):\n    other_args = ['--kv-cache-dtype', 'nvfp4']\n"
    assert might_launch(src, "python") and python_may_launch(src)
    other = src.replace("sglang.test.server_fixtures.default_fixture", "mytests")
    assert not python_may_launch(other)


# ---------------------------------------------------------------------------
# 4. An SGLang --config file read alone

NOT_SGLANG_YAML = {
    "vllm serve --config, nvfp4 KV cache": """
        # vllm serve --config vllm.yaml
        model: nvidia/Llama-3.3-70B-Instruct-FP4
        tensor-parallel-size: 4
        kv-cache-dtype: nvfp4
        quantization: modelopt_fp4
        served-model-name: llama-70b
        port: 8000
        """,
    "vllm config, its backend names": """
        model: Qwen/Qwen3-8B
        kv-cache-dtype: fp8_e4m3
        attention-backend: FLASHINFER
        """,
    "vllm config, lower-case backend": ("model: Qwen/Qwen3-8B\nkv-cache-dtype: fp8_e4m3\n"
                                        "attention-backend: flashinfer\n"),
    "vllm config, its own keys": """
        model: deepseek-ai/DeepSeek-R1
        tensor-parallel-size: 8
        kv-cache-dtype: fp8
        max-model-len: 32768
        gpu-memory-utilization: 0.92
        enable-expert-parallel: true
        """,
    "a single shared key": "kv-cache-dtype: nvfp4\n",
    "compose": """
        services:
          sglang:
            image: lmsysorg/sglang:latest
            environment:
              KV_CACHE_DTYPE: nvfp4
            command: python3 -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3
        """,
    "kubernetes": """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: sglang}
        spec:
          template:
            spec:
              containers:
                - name: server
                  image: lmsysorg/sglang:v0.5.23-cu129
                  args: ["--kv-cache-dtype", "fp8_e4m3"]
        """,
    "ci workflow": """
        name: bench
        on: [push]
        jobs:
          bench:
            runs-on: gpu
            steps:
              - run: echo kv-cache-dtype nvfp4
        """,
    "hydra rollout config": """
        actor_rollout_ref:
          rollout:
            name: sglang
            engine_kwargs:
              sglang:
                kv_cache_dtype: nvfp4
                attention_backend: fa3
        """,
    "omegaconf flat config": "model_path: Qwen/Qwen3-8B\nkv_cache_dtype: nvfp4\nattention_backend: triton\n",
    "trtllm extra options": """
        kv_cache_config:
          dtype: fp8
          free_gpu_memory_fraction: 0.9
        cuda_graph_config:
          enable_padding: true
        """,
}


@pytest.mark.parametrize("name", NOT_SGLANG_YAML)
def test_other_frameworks_yaml_is_no_sglang_config(name):
    rep = lint(NOT_SGLANG_YAML[name], "config.yaml")
    assert not any(t["entry"] == "sglang config" for t in rep.targets), rep.targets
    assert rep.findings == [] or name in ("compose", "kubernetes")


@pytest.mark.parametrize("text", [
    # No model-path (it comes on the command line, in a unit file elsewhere), SGLang's own keys with it.
    "tp-size: 2\nkv-cache-dtype: nvfp4\nmem-fraction-static: 0.85\n",
    "kv-cache-dtype: nvfp4\nattention-backend: fa3\n",
    "kv-cache-dtype: nvfp4\ndecode-attention-backend: trtllm_mha\nprefill-attention-backend: flashinfer\n",
    "model: Qwen/Qwen3-8B\nkv-cache-dtype: nvfp4\ncontext-length: 32768\n",
    "model-path: Qwen/Qwen3-8B\nkv-cache-dtype: nvfp4\n",
])
def test_an_sglang_config_read_alone_is_judged(text):
    rep = lint(text, "serve.yaml", gpu="h100")
    assert [t["entry"] for t in rep.targets] == ["sglang config"]
    assert "KV404" in codes(rep) or "KV401" in codes(rep)


# ---------------------------------------------------------------------------
# 5. Launchers built from settings

WORKER_ENV = {"MODEL_NAME": "Qwen/Qwen3-8B", "KV_CACHE_DTYPE": "nvfp4", "ATTENTION_BACKEND": "fa3",
              "TRUST_REMOTE_CODE": "true"}


def worker_files(image: str = "runpod/worker-sglang:latest") -> dict[str, str]:
    env_list = "".join(f"      - {k}={v}\n" for k, v in WORKER_ENV.items())
    k8s_env = "".join(f"            - name: {k}\n              value: {v}\n" for k, v in WORKER_ENV.items())
    return {
        "docker-compose.yml": f"services:\n  worker:\n    image: {image}\n    environment:\n{env_list}",
        "Dockerfile": f"FROM {image}\nENV " + " \\\n    ".join(f"{k}={v}" for k, v in WORKER_ENV.items()) + "\n",
        "k8s.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n"
                     f"      containers:\n        - name: w\n          image: {image}\n          env:\n{k8s_env}"),
        "template.json": json.dumps({"name": "w", "imageName": image,
                                     "env": [{"key": k, "value": v} for k, v in WORKER_ENV.items()]}, indent=2),
    }


@pytest.mark.parametrize("name", list(worker_files()))
def test_a_runpod_worker_environment_is_the_launch_and_is_fixed_where_set(name, tmp_path: Path):
    text = worker_files()[name]
    rep = lint_text(name, text, Settings())
    (f,) = rep.findings
    assert (f.code, text[f.span.start:f.span.end]) == ("KV401", "fa3")  # the backend the variable selects
    assert f.message == "--kv-cache-dtype nvfp4 is refused with --attention-backend fa3 (any GPU); use fp8_e4m3"
    assert rep.targets[0]["sglang_version"] is None  # the worker's tag is the worker's release, not SGLang's
    (tmp_path / name).write_text(text)
    assert main(["fix", "--no-cache", "-j", "1", str(tmp_path / name)]) == 0
    assert "KV_CACHE_DTYPE" in (fixed := (tmp_path / name).read_text()) and "fp8_e4m3" in fixed and "nvfp4" not in fixed


def test_a_worker_env_file_is_read_and_fixed_there(tmp_path: Path, capsys):
    (tmp_path / "compose.yaml").write_text("services:\n  w:\n    image: runpod/worker-sglang:v2\n"
                                           "    env_file: worker.env\n")
    (tmp_path / "worker.env").write_text("".join(f"{k}={v}\n" for k, v in WORKER_ENV.items()))
    assert main(["check", "--no-cache", "-j", "1", str(tmp_path)]) == 1
    assert "compose.yaml:4:15: KV401" in capsys.readouterr().out  # at the env_file entry that reads it
    assert main(["fix", "--no-cache", "-j", "1", "--unsafe-fixes", str(tmp_path)]) == 0
    assert "KV_CACHE_DTYPE=fp8_e4m3\n" in (tmp_path / "worker.env").read_text()


@pytest.mark.parametrize("name, text", [
    # An image kv4lint does not know as a launcher: its variables are no launch.
    ("docker-compose.yml", worker_files("runpod/worker-v1-vllm:stable")["docker-compose.yml"]),
    ("Dockerfile", worker_files("myorg/sglang-server:1")["Dockerfile"]),
    # The worker's own command replaced: the command is the launch, not the variables.
    ("docker-compose.yml", worker_files()["docker-compose.yml"] + "    command: python3 handler.py\n"),
    ("Dockerfile", worker_files()["Dockerfile"] + 'CMD ["python3", "my_handler.py"]\n'),
    # Variables the worker does not map.
    ("docker-compose.yml", "services:\n  w:\n    image: runpod/worker-sglang:1\n    environment:\n"
                           "      - SGLANG_KV_DTYPE=nvfp4\n      - KV_DTYPE=nvfp4\n"),
])
def test_a_mapping_kv4lint_does_not_know_is_no_launch(name, text):
    assert lint_text(name, text, Settings()).findings == []


def test_the_worker_without_an_fp4_cache_is_clean():
    files = worker_files()
    for name, text in files.items():
        assert lint_text(name, text.replace("nvfp4", "fp8_e4m3"), Settings()).findings == [], name


@pytest.mark.parametrize("name, text", [
    ("profiles.json", json.dumps({"profiles": {"qwen3": {
        "server_executable": ["python3", "-m", "sglang.launch_server"],
        "base_args": ["--model-path", "Qwen/Qwen3-8B", "--port", "30000"],
        "extra_args": ["--kv-cache-dtype", "nvfp4", "--attention-backend", "fa3"],
        "client_args": ["--kv-cache-dtype", "fp8_e4m3"]}}}, indent=2)),
    ("engines.yaml", "engines:\n  sglang:\n    command: [python3, -m, sglang.launch_server]\n"
                     "    model_flag: --model-path\n    base_args: [--host, 0.0.0.0, --kv-cache-dtype, nvfp4,\n"
                     "                --attention-backend, fa3]\n    bench_args: [--num-prompts, '10']\n"),
])
def test_a_profile_with_an_executable_and_argument_lists_is_a_launch(name, text):
    rep = lint_text(name, text, Settings())
    (f,) = rep.findings
    assert f.code == "KV401" and text[f.span.start:f.span.end] == "fa3"
    # Without the server's command the lists are some other program's.
    other = text.replace("sglang.launch_server", "vllm.entrypoints.openai.api_server")
    assert lint_text(name, other, Settings()).findings == []


# ---------------------------------------------------------------------------
# 6. The same launch on two paths (docs/ and docs_new/) is two places

DOC = ("# Serving\n\n```bash\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype nvfp4 "
       "--attention-backend fa3\n```\n")


def test_the_same_launch_on_two_paths_is_counted_and_fingerprinted_apart(tmp_path: Path, capsys):
    for folder in ("docs", "docs_new"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "serving.md").write_text(DOC)
    (tmp_path / "pyproject.toml").write_text("[tool.kv4lint]\n")
    assert main(["check", "--no-cache", "-j", "1", "--statistics", str(tmp_path)]) == 1
    assert capsys.readouterr().out.split()[:2] == ["2", "KV401"]
    main(["check", "--no-cache", "-j", "1", "--format", "sarif", str(tmp_path)])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    places = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert places == {"docs/serving.md", "docs_new/serving.md"}
    # GitHub code scanning matches an alert by its file and fingerprint (CodeQL's own line hashes repeat across
    # files the same way): each file's launch is its own alert, the first of its kind in its file.
    prints = [r["partialFingerprints"]["kv4lint/v1"] for r in results]
    assert len(prints) == 2 and all(p.endswith(":1") for p in prints)
    main(["check", "--no-cache", "-j", "1", "--format", "gitlab", str(tmp_path)])
    issues = json.loads(capsys.readouterr().out)
    assert len({i["fingerprint"] for i in issues}) == 2  # GitLab keys on the fingerprint alone: the path is in it


BENTO = (Path(__file__).parent.parent / "fixtures" / "python" / "bentoml_sglang_service.py").read_text()


def test_a_bentoml_service_command_is_a_launch_with_its_declared_environment():
    rep = lint_text("service.py", BENTO, Settings())
    (f,) = rep.findings
    assert f.code == "KV401" and rep.targets[0]["entry"] == "sglang.launch_server"
    assert f.fix is not None and {e.text for e in f.fix.edits} == {"fp8_e4m3"}
    assert BENTO[f.fix.edits[0].span.start:f.fix.edits[0].span.end] == "nvfp4"  # in the decorator's envs
    # Not declared: set at deployment, unknown here; nothing to judge.
    undeclared = BENTO.replace('{"name": "KV_CACHE_DTYPE", "value": "nvfp4"},', "")
    assert lint_text("service.py", undeclared, Settings()).findings == []
    # os.environ.get outside a service's command stays unknown.
    assert lint_text("service.py", BENTO.replace("@bentoml.service(", "@other.service("), Settings()).findings == []


# ---------------------------------------------------------------------------
# Cost: linear in the number of test classes, subclasses and negative tests


def _test_classes(n: int) -> str:
    head = ("from sglang.test.test_utils import CustomTestCase, popen_launch_server\n\n\n"
            "class Base(CustomTestCase):\n    other_args = ['--kv-cache-dtype', 'fp8_e4m3']\n\n    @classmethod\n"
            "    def setUpClass(cls):\n"
            "        cls.p = popen_launch_server(cls.model, 'u', other_args=cls.other_args)\n")
    # Launches without a KV cache option are read, not judged: the classes, their bases and subclasses dominate;
    # every other class derives from the one before it (deep orders).
    classes = "".join(f"\n\nclass T{k}({'Base' if k % 2 or not k else f'T{k - 1}'}):\n"
                      f"    model = 'Qwen/Qwen3-8B'\n    other_args = ['--page-size', '{k}']\n" for k in range(n))
    return head + classes


def _negative_tests(n: int) -> str:
    return "from sglang.srt.server_args import ServerArgs\n\n\ndef test_all(self):\n" + "".join(
        f"    server_args = ServerArgs(model_path='m', kv_cache_dtype='nvfp4', page_size={k})\n"
        f"    with self.assertRaises(ValueError):\n        server_args.check_server_args()\n" for k in range(n))


@pytest.mark.parametrize("make, n", [(_test_classes, 40), (_negative_tests, 40)])
def test_the_cost_of_class_and_negative_test_forms_is_linear(make, n):
    from linear_cost import assert_linear, lint

    assert_linear(make, lint("python", "test_x.py"), n)
