"""The Python frontend: every launch form, the values it reads, their spans, and what stays silent."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kv4lint.base.model import Provenance
from kv4lint.base.source import OffsetMap
from kv4lint.frontends.python import complexity_error, decode_literal, scan_python

from conftest import FIXTURES


def scan(src: str, path: str = "t.py"):
    return scan_python(src, path)


def one(src: str):
    res = scan(src)
    assert res.errors == []
    assert len(res.launches) == 1, [(la.entry, la.argv, la.kwargs) for la in res.launches]
    return res.launches[0]


def at(src: str, span) -> str | None:
    return None if span is None else src[span.start:span.end]


def texts(values) -> list:
    return [v.text for v in values]


def src_of(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


# ---------------------------------------------------------------------------
# String literals


@pytest.mark.parametrize("token, text, verbatim", [
    ('"nvfp4"', "nvfp4", True),
    ("'nvfp4'", "nvfp4", True),
    ('r"a\\b"', "a\\b", True),
    ('b"nvfp4"', "nvfp4", True),
    ('"""nvfp4"""', "nvfp4", True),
    ('"nv\\x66p4"', "nvfp4", False),
    ('"nv\\u0066p4"', "nvfp4", False),
    ('"nv\\N{LATIN SMALL LETTER F}p4"', "nvfp4", False),
    ('"a\\\nb"', "ab", False),
    ('"\\d"', "\\d", True),  # an unknown escape keeps its backslash
])
def test_decode_literal(token, text, verbatim):
    got, offs, _q = decode_literal(token, 10)
    assert got == text
    # Verbatim: every character written where it stands, one after another (an editable span).
    assert all(o is not None and o == offs[0] + k for k, o in enumerate(offs)) == verbatim


def test_decode_literal_offsets_skip_escapes():
    got, offs, q = decode_literal('"a\\tb"', 0)
    assert got == "a\tb" and q == '"'
    assert offs == [1, None, 4]


# ---------------------------------------------------------------------------
# ServerArgs / Engine / Runtime


def test_server_args_kwargs_and_positional():
    src = src_of('''
        from sglang.srt.server_args import ServerArgs as SA

        args = SA("meta-llama/Llama-3.1-8B-Instruct", kv_cache_dtype="nvfp4", tp_size=2)
    ''')
    la = one(src)
    assert (la.form, la.entry, la.language) == ("kwargs", "ServerArgs", "python")
    assert at(src, la.anchor) == "SA"
    assert at(src, la.span).startswith("SA(") and at(src, la.span).endswith(")")
    assert texts(la.positional) == ["meta-llama/Llama-3.1-8B-Instruct"]
    assert at(src, la.positional[0].span) == "meta-llama/Llama-3.1-8B-Instruct"
    dt = la.kwargs["kv_cache_dtype"]
    assert dt.text == "nvfp4" and at(src, dt.span) == "nvfp4" and dt.provenance == Provenance.LITERAL
    assert dt.quote == '"'
    assert at(src, dt.remove) == 'kv_cache_dtype="nvfp4", '
    assert la.kwargs["tp_size"].text == "2"
    # The last keyword: its removal takes the comma before it.
    assert at(src, la.kwargs["tp_size"].remove) == ", tp_size=2"


@pytest.mark.parametrize("code, entry", [
    ("import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n", "Engine"),
    ("import sglang\nsglang.Engine(model_path='m', kv_cache_dtype='nvfp4')\n", "Engine"),
    ("from sglang import Engine\nEngine(model_path='m', kv_cache_dtype='nvfp4')\n", "Engine"),
    ("from sglang.srt.entrypoints.engine import Engine as E\nE(model_path='m', kv_cache_dtype='nvfp4')\n", "Engine"),
    ("import sglang as sgl\nsgl.Runtime(model_path='m', kv_cache_dtype='nvfp4')\n", "Runtime"),
    ("import sglang as sgl\nsgl.ServerArgs(model_path='m', kv_cache_dtype='nvfp4')\n", "ServerArgs"),
    ("def main():\n    import sglang as sgl\n    return sgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n",
     "Engine"),
])
def test_engine_spellings(code, entry):
    la = one(code)
    assert la.entry == entry and la.form == "kwargs"
    assert la.kwargs["kv_cache_dtype"].text == "nvfp4"
    assert la.kwargs["model_path"].text == "m"


def test_engine_given_server_args_is_one_launch():
    src = src_of('''
        import sglang as sgl
        from sglang.srt.server_args import ServerArgs

        engine = sgl.Engine(server_args=ServerArgs(model_path="m", kv_cache_dtype="fp4_e2m1"))
    ''')
    la = one(src)
    assert la.entry == "ServerArgs" and la.kwargs["kv_cache_dtype"].text == "fp4_e2m1"


def test_double_star_kwargs_from_dict_literal_name_and_dict_call():
    src = src_of('''
        import sglang as sgl

        BASE = {"model_path": "m", "tp_size": 4}

        def run(extra):
            opts = dict(kv_cache_dtype="nvfp4")
            opts["attention_backend"] = "triton"
            a = sgl.Engine(**BASE, **opts, mem_fraction_static=0.8)
            b = sgl.Engine(model_path="m", **extra)
            c = sgl.Engine(**{"model_path": "m", "kv_cache_dtype": "nvfp4"})
    ''')
    res = scan(src)
    a, b, c = res.launches
    assert set(a.kwargs) == {"model_path", "tp_size", "kv_cache_dtype", "attention_backend", "mem_fraction_static"}
    assert not a.unknown_kwargs
    assert a.kwargs["kv_cache_dtype"].provenance == Provenance.RESOLVED
    assert at(src, a.kwargs["kv_cache_dtype"].use) == "opts"
    assert at(src, a.kwargs["kv_cache_dtype"].span) == "nvfp4"
    assert at(src, a.kwargs["kv_cache_dtype"].remove) == 'kv_cache_dtype="nvfp4"'
    assert at(src, a.kwargs["attention_backend"].remove) == '    opts["attention_backend"] = "triton"\n'
    assert at(src, a.kwargs["model_path"].use) == "BASE"
    assert b.unknown_kwargs and texts(b.kwargs.values()) == ["m"]
    assert not c.unknown_kwargs and c.kwargs["kv_cache_dtype"].text == "nvfp4"
    assert at(src, c.kwargs["kv_cache_dtype"].remove) == ', "kv_cache_dtype": "nvfp4"'


def test_none_keyword_is_the_default():
    la = one("import sglang as sgl\nsgl.Engine(model_path='m', attention_backend=None, kv_cache_dtype='nvfp4')\n")
    assert "attention_backend" not in la.kwargs


def test_literal_kinds_of_keyword_values():
    la = one("import sglang as sgl\nsgl.Engine(model_path='m', enable_unified_memory=True, tp_size=0x2, "
             "mem_fraction_static=0.85, json_model_override_args=dict(a=1), kv_cache_dtype=DTYPE)\n")
    assert la.kwargs["enable_unified_memory"].text == "True"
    assert la.kwargs["tp_size"].text == "2" and la.kwargs["tp_size"].span is None  # written 0x2
    assert la.kwargs["mem_fraction_static"].text == "0.85"
    assert la.kwargs["json_model_override_args"].text is None
    assert la.kwargs["kv_cache_dtype"].text is None  # never assigned in this file


# ---------------------------------------------------------------------------
# prepare_server_args, from_cli_args


def test_prepare_server_args():
    src = src_of('''
        from sglang.srt.server_args import prepare_server_args

        server_args = prepare_server_args(["--model-path", "m", "--kv-cache-dtype", "nvfp4"])
    ''')
    la = one(src)
    assert (la.form, la.entry) == ("argv", "prepare_server_args")
    assert texts(la.argv) == ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]
    assert at(src, la.argv[3].span) == "nvfp4"
    assert at(src, la.argv[2].remove) == '"--kv-cache-dtype", '
    assert at(src, la.argv[3].remove) == '"nvfp4"'


def test_from_cli_args_with_a_literal_list():
    src = src_of('''
        import argparse
        from sglang.srt.server_args import ServerArgs

        def main():
            parser = argparse.ArgumentParser()
            ServerArgs.add_cli_args(parser)
            parser.add_argument("--kv-cache-dtype-note", default="nvfp4")
            ns = parser.parse_args(["--model-path", "m", "--kv-cache-dtype", "fp4_mx_block16"])
            return ServerArgs.from_cli_args(ns)

        def from_command_line():
            parser = argparse.ArgumentParser()
            return ServerArgs.from_cli_args(parser.parse_args())
    ''')
    la = one(src)
    assert la.entry == "ServerArgs.from_cli_args"
    assert texts(la.argv) == ["--model-path", "m", "--kv-cache-dtype", "fp4_mx_block16"]


# ---------------------------------------------------------------------------
# SGLang's test and docs helpers


def test_popen_launch_server_like_sglang_tests():
    src = src_of('''
        import unittest

        from sglang.test.test_utils import (
            DEFAULT_MODEL_NAME_FOR_TEST,
            DEFAULT_TIMEOUT_FOR_SERVER_LAUNCH,
            DEFAULT_URL_FOR_TEST,
            CustomTestCase,
            popen_launch_server,
        )


        class TestFP4KV(CustomTestCase):
            @classmethod
            def setUpClass(cls):
                cls.model = "meta-llama/Llama-3.1-8B-Instruct"
                cls.base_url = DEFAULT_URL_FOR_TEST
                cls.process = popen_launch_server(
                    cls.model,
                    cls.base_url,
                    timeout=DEFAULT_TIMEOUT_FOR_SERVER_LAUNCH,
                    other_args=[
                        "--kv-cache-dtype",
                        "nvfp4",
                        "--attention-backend", "triton",
                    ],
                )
    ''')
    la = one(src)
    assert (la.form, la.entry) == ("argv", "popen_launch_server")
    assert texts(la.argv) == ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "nvfp4",
                              "--attention-backend", "triton"]
    assert la.argv[0].span is None  # synthesised by the helper
    model = la.argv[1]
    assert model.provenance == Provenance.RESOLVED and at(src, model.use) == "cls.model"
    assert at(src, model.span) == "meta-llama/Llama-3.1-8B-Instruct"
    # One element per line: removal takes the whole line.
    assert at(src, la.argv[2].remove) == '                "--kv-cache-dtype",\n'
    assert at(src, la.argv[4].remove) == '"--attention-backend", '
    assert at(src, la.argv[5].remove) == '"triton",\n'


def test_popen_launch_server_device():
    base = ("from sglang.test.test_utils import popen_launch_server\n"
            "popen_launch_server('m', 'http://127.0.0.1:8000', 600, other_args=['--device', 'cpu', "
            "'--kv-cache-dtype', 'nvfp4']{})\n")
    auto = one(base.format(""))
    # device="auto" (the default) appends --device <detected> after other_args: unknown here.
    assert texts(auto.argv)[-2:] == ["--device", None]
    explicit = one(base.format(", device='cpu'"))
    assert texts(explicit.argv)[-2:] == ["--kv-cache-dtype", "nvfp4"]
    plain = one("from sglang.test.test_utils import popen_launch_server\n"
                "popen_launch_server('m', 'u', 600, other_args=['--kv-cache-dtype', 'nvfp4'])\n")
    assert texts(plain.argv) == ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]


def test_popen_launch_server_env_hint():
    la = one("from sglang.test.test_utils import popen_launch_server\n"
             "popen_launch_server('m', 'u', 600, other_args=['--kv-cache-dtype', 'nvfp4'],\n"
             "                    env={'HIP_VISIBLE_DEVICES': '0'})\n")
    assert [(h.kind, h.value) for h in la.hints] == [("platform", "rocm")]


@pytest.mark.parametrize("call, argv", [
    ("run_bench_serving('m', 100, 8, ['--kv-cache-dtype', 'nvfp4'])",
     ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]),
    ("run_bench_serving(model='m', num_prompts=1, request_rate=1, other_server_args=['--kv-cache-dtype', 'nvfp4'])",
     ["--model-path", "m", "--kv-cache-dtype", "nvfp4"]),
    ("run_embeddings_benchmark('m', other_server_args=['--kv-cache-dtype', 'nvfp4'])",
     ["--model-path", "m", "--is-embedding", "--kv-cache-dtype", "nvfp4"]),
    ("run_bench_one_batch('m', ['--kv-cache-dtype', 'nvfp4'])",
     ["--kv-cache-dtype", "nvfp4", "--model-path", "m"]),
    ("popen_launch_pd_server('m', 'u', 600, other_args=['--kv-cache-dtype', 'nvfp4', '--device', 'x'])",
     ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--device", "x"]),
])
def test_other_test_helpers(call, argv):
    la = one("from sglang.test.test_utils import *\n" + call + "\n")
    assert texts(la.argv) == argv
    assert la.entry == call.split("(")[0]


def test_launch_server_cmd_splits_like_sglang():
    src = src_of('''
        from sglang.utils import launch_server_cmd

        server_process, port = launch_server_cmd(
            """
        CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct \\
         --kv-cache-dtype nvfp4 --chat-template 'a b' --host 0.0.0.0
        """
        )
    ''')
    la = one(src)
    assert la.entry == "launch_server_cmd"
    # No shell quoting: 'a b' is two words with their quotes.
    assert texts(la.argv) == ["--model-path", "qwen/qwen2.5-0.5b-instruct", "--kv-cache-dtype", "nvfp4",
                              "--chat-template", "'a", "b'", "--host", "0.0.0.0"]
    dt = la.argv[3]
    assert at(src, dt.span) == "nvfp4"
    assert at(src, la.argv[2].remove) == "--kv-cache-dtype "
    assert at(src, dt.remove) == "nvfp4 "


def test_launch_server_cmd_env_words_and_backslashes():
    la = one("from sglang.utils import launch_server_cmd\n"
             "launch_server_cmd(r'HIP_VISIBLE_DEVICES=0 python -m sglang.launch_server\\\\--kv-cache-dtype nvfp4')\n")
    assert texts(la.argv) == ["--kv-cache-dtype", "nvfp4"]
    assert [(h.kind, h.value) for h in la.hints] == [("platform", "rocm")]


# ---------------------------------------------------------------------------
# subprocess / os / asyncio


def test_argv_list_built_in_steps():
    src = src_of('''
        import subprocess
        import sys

        def launch(model, extra_args):
            cmd = [sys.executable, "-m", "sglang.launch_server", "--model-path", model]
            cmd += ["--kv-cache-dtype", "nvfp4"]
            cmd.append("--prefill-kv-cache-dequant-dtype")
            cmd.append("fp8_e4m3")
            cmd.extend(["--tp", "2"])
            if extra_args:
                cmd += ["--attention-backend", "triton"]
            print(" ".join(cmd))
            return subprocess.Popen(cmd)
    ''')
    la = one(src)
    assert la.entry == "sglang.launch_server" and at(src, la.anchor) == "subprocess.Popen"
    assert texts(la.argv) == ["--model-path", None, "--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype",
                              "fp8_e4m3", "--tp", "2", "--attention-backend", "triton"]
    dt = la.argv[3]
    assert dt.provenance == Provenance.RESOLVED and at(src, dt.use) == "cmd" and not dt.shared
    assert at(src, dt.span) == "nvfp4"
    assert at(src, la.argv[4].remove) == '    cmd.append("--prefill-kv-cache-dequant-dtype")\n'
    assert at(src, la.argv[5].remove) == '    cmd.append("fp8_e4m3")\n'


def test_argv_list_loops_and_calls_make_it_open_ended():
    src = src_of('''
        import subprocess

        def launch(flags):
            cmd = ["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]
            for f in flags:
                cmd.append(f)
            add_more(cmd)
            subprocess.run(cmd)
    ''')
    la = one(src)
    assert texts(la.argv)[:2] == ["--kv-cache-dtype", "nvfp4"]
    assert all(v.text is None and v.splat for v in la.argv[2:]) and len(la.argv) == 4


def test_star_unpacking_and_concatenation():
    src = src_of('''
        import subprocess

        BASE = ["python3", "-m", "sglang.launch_server"]
        KV = ["--kv-cache-dtype", "nvfp4"]

        subprocess.run([*BASE, "--model-path", "m", *KV] + ["--tp", "2"])
        subprocess.run(BASE + KV)
    ''')
    a, b = scan(src).launches
    assert texts(a.argv) == ["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--tp", "2"]
    assert at(src, a.argv[3].use) == "KV" and a.argv[3].shared  # KV feeds two launches
    assert texts(b.argv) == ["--kv-cache-dtype", "nvfp4"]


def test_shell_strings():
    src = src_of('''
        import os
        import shlex
        import subprocess

        MODEL = "meta-llama/Llama-3.1-8B-Instruct"

        os.system(f"python -m sglang.launch_server --model-path {MODEL} --kv-cache-dtype nvfp4 --port 30000 &")
        subprocess.run("python -m sglang.launch_server --kv-cache-dtype " + "nvfp4", shell=True)
        subprocess.Popen(shlex.split("python3 -m sglang.launch_server --kv-cache-dtype 'nvfp4'"))
        subprocess.run("python -m sglang.launch_server --kv-cache-dtype nvfp4")  # no shell: a program name
    ''')
    res = scan(src)
    a, b, c = res.launches
    assert texts(a.argv) == ["--model-path", MODEL_, "--kv-cache-dtype", "nvfp4", "--port", "30000"]
    model = a.argv[1]
    assert at(src, model.use) == "MODEL" and model.provenance == Provenance.RESOLVED
    assert at(src, a.argv[3].span) == "nvfp4"
    assert texts(b.argv) == ["--kv-cache-dtype", "nvfp4"]
    assert at(src, b.argv[1].span) == "nvfp4"
    assert texts(c.argv) == ["--kv-cache-dtype", "nvfp4"]
    assert at(src, c.argv[1].span) == "nvfp4"


MODEL_ = "meta-llama/Llama-3.1-8B-Instruct"


def test_fstring_hole_is_unknown():
    src = src_of('''
        import os

        def run(dtype):
            os.system(f"python -m sglang.launch_server --kv-cache-dtype {dtype} --tp 2")
    ''')
    la = one(src)
    assert texts(la.argv) == ["--kv-cache-dtype", None, "--tp", "2"]
    assert at(src, la.argv[1].use) == "dtype"


def test_sh_c_and_wrappers_in_argv_lists():
    src = src_of('''
        import subprocess

        subprocess.run(["bash", "-lc", "python -m sglang.launch_server --kv-cache-dtype nvfp4"])
        subprocess.run(["env", "HIP_VISIBLE_DEVICES=0", "nohup", "python3", "-m", "sglang.launch_server",
                        "--kv-cache-dtype", "nvfp4"])
    ''')
    a, b = scan(src).launches
    assert texts(a.argv) == ["--kv-cache-dtype", "nvfp4"] and at(src, a.argv[1].span) == "nvfp4"
    assert texts(b.argv) == ["--kv-cache-dtype", "nvfp4"]
    assert [(h.kind, h.value) for h in b.hints] == [("platform", "rocm")]


def test_os_exec_spawn_and_asyncio():
    src = src_of('''
        import asyncio
        import os
        import sys

        os.execvp("python3", ["python3", "-m", "sglang.bench_one_batch", "--kv-cache-dtype", "nvfp4"])
        os.execl(sys.executable, sys.executable, "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4")

        async def main():
            await asyncio.create_subprocess_exec(sys.executable, "-m", "sglang.launch_server", "--kv-cache-dtype",
                                                 "nvfp4")
            await asyncio.create_subprocess_shell("python -m sglang.launch_server --kv-cache-dtype nvfp4")
    ''')
    entries = [(la.entry, texts(la.argv)) for la in scan(src).launches]
    assert entries == [("sglang.bench_one_batch", ["--kv-cache-dtype", "nvfp4"]),
                       ("sglang.launch_server", ["--kv-cache-dtype", "nvfp4"]),
                       ("sglang.launch_server", ["--kv-cache-dtype", "nvfp4"]),
                       ("sglang.launch_server", ["--kv-cache-dtype", "nvfp4"])]


def test_join_split_and_format():
    src = src_of('''
        import subprocess

        parts = ["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]
        subprocess.run(" ".join(parts), shell=True)
        subprocess.run("python -m sglang.launch_server --kv-cache-dtype nvfp4 --tp 2".split())
        subprocess.run("python -m sglang.launch_server --kv-cache-dtype {} --tp {}".format("nvfp4", 2).split())
    ''')
    a, b, c = scan(src).launches
    assert texts(a.argv) == ["--kv-cache-dtype", "nvfp4"]
    assert at(src, a.argv[1].span) == "nvfp4"
    assert texts(b.argv) == ["--kv-cache-dtype", "nvfp4", "--tp", "2"]
    assert at(src, b.argv[1].span) == "nvfp4"
    assert texts(c.argv) == ["--kv-cache-dtype", "nvfp4", "--tp", "2"]
    assert at(src, c.argv[1].span) == "nvfp4"


def test_os_environ_hint_before_the_launch_only():
    src = src_of('''
        import os
        import subprocess

        subprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"])
        os.environ["HIP_VISIBLE_DEVICES"] = "0"
        subprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"])
    ''')
    a, b = scan(src).launches
    assert a.hints == []
    assert [(h.kind, h.value) for h in b.hints] == [("platform", "rocm")]


# ---------------------------------------------------------------------------
# Names


def test_module_constant_resolved_and_shared():
    src = src_of('''
        import sglang as sgl

        DTYPE = "nvfp4"
        OTHER = "fp8_e4m3"

        a = sgl.Engine(model_path="m", kv_cache_dtype=DTYPE)
        b = sgl.Engine(model_path="m", kv_cache_dtype=OTHER)
        print(DTYPE)

        def f():
            return sgl.Engine(model_path="m", kv_cache_dtype=OTHER)
    ''')
    a, b, c = scan(src).launches
    v = a.kwargs["kv_cache_dtype"]
    assert v.text == "nvfp4" and v.provenance == Provenance.RESOLVED
    assert at(src, v.span) == "nvfp4" and at(src, v.use) == "DTYPE"
    assert not v.shared  # printing it does not make it shared
    assert b.kwargs["kv_cache_dtype"].shared and c.kwargs["kv_cache_dtype"].shared


@pytest.mark.parametrize("body", [
    # assigned on two paths to different values
    'if fast:\n        d = "nvfp4"\n    else:\n        d = "fp8_e4m3"',
    # assigned in a loop
    'for d in ["nvfp4", "fp8_e4m3"]:\n        pass',
    # reassigned after a branch
    'd = "nvfp4"\n    if fast:\n        d = "fp8_e4m3"',
    # a parameter
    'global_d = 1',
])
def test_names_that_are_not_one_value(body):
    src = (f"import sglang as sgl\n\ndef f(fast, d=None):\n    {body}\n"
           f"    return sgl.Engine(model_path='m', kv_cache_dtype=d)\n")
    la = one(src)
    assert la.kwargs["kv_cache_dtype"].text is None


def test_same_literal_on_every_path_is_known_but_not_editable():
    src = ("import sglang as sgl\n\ndef f(fast):\n    if fast:\n        d = 'nvfp4'\n    else:\n        d = 'nvfp4'\n"
           "    return sgl.Engine(model_path='m', kv_cache_dtype=d)\n")
    v = one(src).kwargs["kv_cache_dtype"]
    assert v.text == "nvfp4" and v.span is None


def test_straight_line_reassignment_uses_the_last_value():
    src = ("import sglang as sgl\n\ndef f():\n    d = 'fp8_e4m3'\n    d = 'nvfp4'\n"
           "    return sgl.Engine(model_path='m', kv_cache_dtype=d)\n")
    assert one(src).kwargs["kv_cache_dtype"].text == "nvfp4"


def test_escaped_and_concatenated_strings():
    src = src_of('''
        import sglang as sgl

        a = sgl.Engine(model_path="m", kv_cache_dtype="nv\\x66p4")
        b = sgl.Engine(model_path="m", kv_cache_dtype="nv" "fp4")
        c = sgl.Engine(model_path="m", kv_cache_dtype=f"nvfp{4}")
        d = sgl.Engine(model_path="m", kv_cache_dtype=rb"nvfp4".decode())
    ''')
    a, b, c, d = scan(src).launches
    assert a.kwargs["kv_cache_dtype"].text == "nvfp4" and a.kwargs["kv_cache_dtype"].span is None
    assert b.kwargs["kv_cache_dtype"].text == "nvfp4" and b.kwargs["kv_cache_dtype"].span is None
    assert c.kwargs["kv_cache_dtype"].text == "nvfp4" and c.kwargs["kv_cache_dtype"].span is None
    assert d.kwargs["kv_cache_dtype"].text is None


# ---------------------------------------------------------------------------
# Silence


def test_decoys_stay_silent():
    src = src_of('''
        """Launch with: python -m sglang.launch_server --kv-cache-dtype nvfp4"""
        import argparse
        import logging
        import subprocess
        import warnings

        # python -m sglang.launch_server --kv-cache-dtype nvfp4
        CMD = "python -m sglang.launch_server --kv-cache-dtype nvfp4"
        print("python -m sglang.launch_server --kv-cache-dtype nvfp4")
        logging.info("run %s", "python -m sglang.launch_server --kv-cache-dtype nvfp4")
        warnings.warn("python -m sglang.launch_server --kv-cache-dtype nvfp4")
        assert CMD, "python -m sglang.launch_server --kv-cache-dtype nvfp4"
        subprocess.run(["pkill", "-f", "sglang.launch_server"])
        subprocess.run(["grep", "--kv-cache-dtype nvfp4", "sglang.log"])

        parser = argparse.ArgumentParser()
        parser.add_argument("--kv-cache-dtype", default="nvfp4", choices=["auto", "nvfp4"])


        class ServerArgs:  # a project's own, not SGLang's
            def __init__(self, **kw):
                self.kw = kw


        ServerArgs(kv_cache_dtype="nvfp4")
    ''')
    res = scan(src)
    assert res.launches == [] and res.errors == []


def test_server_args_from_another_package_is_silent():
    src = "from vllm.engine.arg_utils import EngineArgs as ServerArgs\nServerArgs(kv_cache_dtype='nvfp4')\n" \
          "from mylib import Engine\nEngine(kv_cache_dtype='nvfp4')\nimport sglang\n"
    assert scan(src).launches == []


# ---------------------------------------------------------------------------
# Errors and cost


def test_syntax_error_is_a_file_error():
    res = scan("import sglang\n\ndef f(:\n    pass\n")
    assert res.launches == []
    assert len(res.errors) == 1
    assert res.errors[0].message.startswith("syntax error") and res.errors[0].line == 3


TOO_COMPLEX = [
    "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n",
    "x = " + "[" * 5000 + "\n",
    "x = " + " + ".join(["'a'"] * 20000) + "\n",
    "x = a" + "[0]" * 2000 + "\n",
]
A_LAUNCH = "import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n"


@pytest.mark.parametrize("code", TOO_COMPLEX)
def test_too_deep_or_too_complex_is_a_file_error(code):
    res = scan(A_LAUNCH + code)
    assert res.launches == [] and len(res.errors) == 1
    assert "too complex" in res.errors[0].message


def test_complexity_is_judged_only_where_the_screen_finds_a_launch():
    # ``x = a[0][0]...`` parses with ``ast`` and holds no launch: nothing to hand to libcst, so no error
    # (as under flake8, whose plugin screens first); the other three fail ``ast`` too, which passes them.
    res = scan("import sglang\n" + TOO_COMPLEX[3])
    assert res.launches == [] and res.errors == []


def test_complexity_guard_ignores_strings_and_comments():
    assert complexity_error("x = '" + "(" * 5000 + "'\n# " + "+" * 5000 + "\n") is None
    assert complexity_error("x = [" + ", ".join(["a + b"] * 5000) + "]\n") is None


def test_embedded_python_spans_map_through_origin():
    outer = "prefix text\n" + "import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n"
    inner = outer[12:]
    res = scan_python(inner, "doc.md", origin=OffsetMap.contiguous(12, len(inner)))
    (la,) = res.launches
    assert at(outer, la.kwargs["kv_cache_dtype"].span) == "nvfp4"
    assert at(outer, la.anchor) == "sgl.Engine"


def test_embedded_syntax_error_names_the_block_line():
    res = scan_python("import sglang\nx = (\n", "nb.ipynb", origin=OffsetMap.contiguous(100, 21))
    assert res.errors and res.errors[0].line is None and "embedded Python" in res.errors[0].message


def test_files_without_launches_do_not_import_libcst():
    code = ("import sys\nfrom kv4lint.frontends.python import scan_python\n"
            "r = scan_python('import os\\nos.system(\"ls\")\\n', 'x.py')\n"
            "assert r.launches == [] and r.errors == []\n"
            "print('libcst' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_crlf_spans():
    src = "import sglang as sgl\r\nsgl.Engine(model_path='m',\r\n           kv_cache_dtype='nvfp4')\r\n"
    la = one(src)
    assert at(src, la.kwargs["kv_cache_dtype"].span) == "nvfp4"
    assert at(src, la.kwargs["kv_cache_dtype"].remove) == ",\r\n           kv_cache_dtype='nvfp4'"


# ---------------------------------------------------------------------------
# Offsets computed one statement at a time equal those of the whole module


TRICKY = [
    "import os; import sys\nx = 1; y = 2\n",
    "@decorator\n@other(1)\ndef f():\n    return 1\n\n\n@dataclass\nclass C:\n    x: int = 0\n",
    "async def main():\n    await x\n# trailing comment\n",
    "if True:\n\tx = 'é' + \"ü\"\nelse:\n\tpass\n",
    "x = '''\nmulti\nline'''\ny = (1 +\n     2)\n",
    "x = 1\r\ny = 2\r\nz = 3\r\n",
    "\n\n# leading comment\n\nx = 1  # c\n\n\n",
    "x = '\\u00e9'\ndef f(a, *, b=2, **k): pass\n",
]


# The Python fixtures' texts, read once for the tests over every tricky source.
PYTHON_FIXTURES = [p.read_text() for p in sorted((FIXTURES / "python").glob("*.py"))]


@pytest.mark.parametrize("src", TRICKY + PYTHON_FIXTURES)
def test_statementwise_offsets_match_whole_module(src):
    import libcst

    from kv4lint.frontends.python.index import ModuleIndex as _Index, Positions as _Positions, \
        child_nodes as _children, node_offsets as _offsets

    module = libcst.parse_module(src)
    full, code = _offsets(module)
    assert code == src
    pos = _Positions(src, module, _Index(module).top)
    assert pos.starts is not None  # the fast path was taken
    stack = list(module.body)
    n = 0
    while stack:
        node = stack.pop()
        assert pos.get(node) == full[id(node)], libcst.Module([]).code_for_node(node)
        n += 1
        stack.extend(c for _f, c in _children(node))
    assert n > 0 or not module.body


@pytest.mark.parametrize("src", TRICKY + PYTHON_FIXTURES)
def test_node_offsets_are_libcsts_syntactic_positions(src):
    """node_offsets records each node where libcst's own PositionProvider puts it (the syntactic range: what
    ``record_syntactic_position`` marks, its start and end nodes included), as character offsets."""
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from kv4lint.base.source import LineIndex
    from kv4lint.frontends.python.index import node_offsets

    wrapper = MetadataWrapper(libcst.parse_module(src), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    spans, _code = node_offsets(wrapper.module)
    lines = LineIndex(src)
    at = {id(n): (lines.offset(r.start.line, r.start.column + 1), lines.offset(r.end.line, r.end.column + 1))
          for n, r in positions.items()}
    assert at and {i: spans[i] for i in at} == at


def test_telling_a_node_leaves_libcsts_abc_caches_alone():
    """Whether a field's value is a node is read from its type's MRO: a value of a type that is no node (here a new
    one) is not cached as a "no" in each of libcst's node classes (objects the collector walks, issue 37)."""
    import _abc

    import libcst

    from kv4lint.frontends.python.index import _kind

    class Fresh:
        pass

    class Node(libcst.Name):
        pass

    assert (_kind(Fresh), _kind(Node), _kind(libcst.Name), _kind(list), _kind(tuple), _kind(str)) == (0, 1, 1, 2, 2, 0)
    for cls in (libcst.CSTNode, libcst.Name, libcst.BaseExpression, libcst.SimpleWhitespace):
        _registry, cache, negative, _version = _abc._get_dump(cls)
        assert not any(r() in (Fresh, Node) for r in cache | negative), cls


WALKED = """\
import subprocess


class Cfg:
    gpu: str = "h100"


def helper():
    pass


total = 0
total += 1
port = 30000 if total else 30001
for dtype in ["fp8_e4m3", "fp4_e2m1"]:
    with open("log") as f:
        try:
            subprocess.run(["python", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", dtype,
                            "--port", str(port)])
        except OSError:
            pass
    if total:
        pass
"""


def test_the_module_walks_leave_libcsts_abc_caches_alone():
    """The walks over every node (the GPU evidence's, the negative tests', the loops') tell the statements they read
    by type: an isinstance against one of libcst's classes (abstract-based) caches each other type it meets in it
    (a weak reference and its callback, for the cyclic collector to walk: issue 37)."""
    import _abc

    import libcst

    from kv4lint.base.settings import Settings
    from kv4lint.pipeline.runner import lint_text

    walked = (libcst.If, libcst.IfExp, libcst.Assign, libcst.AnnAssign, libcst.AugAssign, libcst.With, libcst.Try,
              libcst.FunctionDef, libcst.ClassDef, libcst.For, libcst.CSTNode)
    for cls in walked:
        cls._abc_caches_clear()
    rep = lint_text("serve.py", WALKED, Settings(), language="python")
    assert rep.launches >= 2 and "KV401" in {f.code for f in rep.findings}  # judged: a launch for each loop value
    assert [cls.__name__ for cls in walked if _abc._get_dump(cls)[2]] == []


@pytest.mark.parametrize("src", TRICKY + PYTHON_FIXTURES)
def test_child_nodes_are_the_node_valued_fields_in_order(src):
    """``child_nodes`` remembers per type whether a value is a node, a sequence or neither: every node's children
    are still its node fields and the nodes in its sequence fields, in field order (a node, a list and a tuple
    of nodes, a sentinel, a string and None all meet the same node types)."""
    import dataclasses

    import libcst

    from kv4lint.frontends.python.index import _NO_CHILD_FIELDS, child_nodes

    def expected(node):
        for f in dataclasses.fields(node):
            if f.name.startswith(_NO_CHILD_FIELDS):
                continue
            v = getattr(node, f.name)
            for x in (v if isinstance(v, (tuple, list)) else [v]):
                if isinstance(x, libcst.CSTNode):
                    yield f.name, x

    stack = [libcst.parse_module(src + "\nx: list[int] = [a, *b] if c else (d, e)\nf(g, *h, k=1, **m)\n")]
    kinds = set()
    while stack:
        node = stack.pop()
        got = list(child_nodes(node))
        assert [(n, id(c)) for n, c in got] == [(n, id(c)) for n, c in expected(node)], type(node).__name__
        kinds.update(type(getattr(node, f.name)) for f in dataclasses.fields(node))
        stack.extend(c for _n, c in got)
    assert {tuple, str, type(None), libcst.Name, type(libcst.MaybeSentinel.DEFAULT)} <= kinds


def test_nbconvert_shell_magics():
    src = src_of('''
        MODEL = "m"
        get_ipython().system('python -m sglang.launch_server --model-path {MODEL} --kv-cache-dtype nvfp4 &')
        get_ipython().run_cell_magic('bash', '', 'python3 -m sglang.launch_server --kv-cache-dtype fp4_e2m1\\n')
        get_ipython().run_cell_magic('writefile', 'x.sh', 'python3 -m sglang.launch_server --kv-cache-dtype nvfp4\\n')
        get_ipython().system('echo {{literal}} python -m sglang.launch_server')
    ''')
    a, b = scan(src).launches
    # IPython substitutes {MODEL} before the shell sees the command: unknown here, never "{MODEL}".
    assert texts(a.argv) == ["--model-path", None, "--kv-cache-dtype", "nvfp4"]
    assert at(src, a.argv[3].span) == "nvfp4"
    assert texts(b.argv) == ["--kv-cache-dtype", "fp4_e2m1"] and at(src, b.argv[1].span) == "fp4_e2m1"


def test_class_attributes_and_subclasses():
    src = src_of('''
        from sglang.test.test_utils import CustomTestCase, popen_launch_server


        class ServerBase(CustomTestCase):
            model = None
            other_args = ["--kv-cache-dtype", "fp8_e4m3"]

            @classmethod
            def setUpClass(cls):
                cls.process = popen_launch_server(cls.model, "u", 600, other_args=cls.other_args)


        class TestNVFP4(ServerBase):
            model = "meta-llama/Llama-3.1-8B-Instruct"
            other_args = ["--kv-cache-dtype", "nvfp4"]


        class TestOwn(CustomTestCase):
            @classmethod
            def setUpClass(cls):
                cls.model = "Qwen/Qwen3-8B"
                cls.process = popen_launch_server(cls.model, "u", 600, other_args=["--kv-cache-dtype", "nvfp4"])
    ''')
    base, sub, own = scan(src).launches
    # The base class's launch runs with each subclass's values: unknown here, never the base's ...
    assert texts(base.argv) == ["--model-path", None, None, "--device", None]
    assert base.argv[2].splat
    # ... and once as each subclass that sets them, reported at that class.
    assert texts(sub.argv) == ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "nvfp4"]
    assert src[sub.anchor.start:sub.anchor.end] == "TestNVFP4"
    assert src[sub.argv[3].span.start:sub.argv[3].span.end] == "nvfp4" and not sub.argv[3].shared
    assert texts(own.argv) == ["--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "nvfp4"]


def test_multimodal_gen_server_args_is_not_the_llm_server():
    src = ("from sglang.multimodal_gen.runtime.server_args import ServerArgs\n"
           "ServerArgs(model_path='x', kv_cache_dtype='nvfp4')\n")
    assert scan(src).launches == []


def test_a_frontend_bug_is_a_file_error_not_an_exception(monkeypatch):
    from kv4lint.frontends.python import scanner as _pycst

    def boom(self):
        raise KeyError("boom")

    monkeypatch.setattr(_pycst.Scanner, "scan", boom)
    res = scan("import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n")
    assert res.launches == [] and len(res.errors) == 1
    assert "internal error in the Python frontend (KeyError" in res.errors[0].message


def test_one_bad_launch_does_not_hide_the_others(monkeypatch):
    from kv4lint.frontends.python import scanner as _pycst

    def boom(self, call, env, entry):
        raise ValueError("boom")

    monkeypatch.setattr(_pycst.Scanner, "kwargs_launch", boom)
    res = scan("import sglang as sgl, subprocess\n\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n"
               "subprocess.run(['python', '-m', 'sglang.launch_server', '--kv-cache-dtype', 'nvfp4'])\n")
    assert [la.entry for la in res.launches] == ["sglang.launch_server"]
    assert len(res.errors) == 1 and res.errors[0].line == 3 and "ValueError: boom" in res.errors[0].message


def test_a_shell_string_that_cannot_launch_is_not_parsed_nor_its_syntax_reported():
    # The shell frontend's own pre-filter (sglang and an option or --config), as for every embedded snippet.
    res = scan(textwrap.dedent("""\
        import os
        os.system("export HF_TOKEN=<your_token>; python3 -c 'import sglang'")
        os.system("export HF_TOKEN=<your_token>; python -m sglang.launch_server --kv-cache-dtype nvfp4")
        os.system("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16")
        """))
    assert [e.line for e in res.errors] == [3]  # the launch that could not be checked is still reported
    assert [launch.argv[-1].text for launch in res.launches] == ["fp4_mx_block16"]


def test_star_arguments_and_dict_merges_are_read():
    # *argv of a known list is spliced into exec-style and create_subprocess_exec argv; dict(**d)-style
    # positional dicts and .update(d) merge their entries into a launch's kwargs.
    src = src_of('''
        import asyncio
        import os
        import sys

        import sglang as sgl

        ARGS = ["-m", "sglang.launch_server", "--kv-cache-dtype", "nvfp4"]
        os.execl(sys.executable, sys.executable, *ARGS)

        async def main():
            await asyncio.create_subprocess_exec(sys.executable, *ARGS)

        BASE = {"model_path": "m", "kv_cache_dtype": "nvfp4"}
        a = sgl.Engine(**dict(BASE, tp_size=2))
        opts = {}
        opts.update(BASE)
        b = sgl.Engine(**opts)
    ''')
    res = scan(src)
    entries = [(la.entry, texts(la.argv)[:2]) for la in res.launches if la.argv]
    assert entries == [("sglang.launch_server", ["--kv-cache-dtype", "nvfp4"])] * 2
    a, b = [la for la in res.launches if la.kwargs]
    assert set(a.kwargs) == {"model_path", "kv_cache_dtype", "tp_size"} and not a.unknown_kwargs
    assert set(b.kwargs) == {"model_path", "kv_cache_dtype"} and not b.unknown_kwargs
    assert at(src, a.kwargs["kv_cache_dtype"].span) == "nvfp4"


def test_a_launch_file_is_parsed_by_ast_once(monkeypatch):
    """The pre-filter's screen and the statement offsets (index.py) read one ``ast`` tree of the text (issue 37)."""
    import ast

    parsed = []
    real = ast.parse

    def counting(text, *a, **k):
        parsed.append(len(text))
        return real(text, *a, **k)

    monkeypatch.setattr(ast, "parse", counting)
    text = "import sglang as sgl\n\nx = 1\nengine = sgl.Engine(model_path='m', kv_cache_dtype='fp4_e2m1')\n"
    result = scan_python(text, "serve.py")
    assert len(result.launches) == 1 and result.errors == []
    assert parsed == [len(text)]


@pytest.mark.parametrize("text", [
    "import sglang as sgl\nengine = sgl.Engine(model_path='m', kv_cache_dtype='fp4_e2m1')\n",  # a launch
    "import sglang\nclass ServerArgs:\n    kv_cache_dtype: str = 'auto'\n",  # names both, launches nothing
])
def test_the_screens_tree_is_let_go_with_the_scan(text):
    """The screen's ``ast`` tree is not kept after the scan that read it (its answer is): a tree that lives on is
    walked by the cyclic collector after the file, a 180 kB file's 100,000 nodes twice (issue 37)."""
    from kv4lint.files.prefilter import python_may_launch, screened_tree

    expected = python_may_launch(text)
    scan_python(text, "serve.py")
    assert screened_tree(text) is None
    assert python_may_launch(text) == expected


def test_libcsts_import_is_frozen_out_of_the_collectors_way():
    """In kv4lint's own process (the ``kv4lint`` command: ``kv4lint.base.process``), the first file that needs
    libcst imports it with the cyclic collector paused (kv4lint.base.process.gc_paused): what the import made is
    frozen (``gc.freeze``), so that the first collection after the file does not walk libcst's 100,000 objects
    (issue 37); the file's own cycles are still collected."""
    code = textwrap.dedent("""
        import gc, sys
        from kv4lint.base import process
        from kv4lint.frontends.python import scan_python
        process.claim()
        assert "libcst" not in sys.modules
        text = "import sglang as sgl\\nengine = sgl.Engine(model_path='m', kv_cache_dtype='fp4_e2m1')\\n"
        assert len(scan_python(text, "serve.py").launches) == 1
        import libcst
        from kv4lint.frontends.python.scanner import Scanner
        tracked = gc.get_objects()  # the collector's generations, not the frozen objects
        assert not any(o is libcst.Module or o is Scanner for o in tracked), "libcst's classes are walked"
        frozen = gc.get_freeze_count()
        assert len(scan_python(text, "serve.py").launches) == 1
        assert gc.get_freeze_count() == frozen, "a second file froze its objects"
        class Cycle:
            pass
        c = Cycle(); c.self = c; del c
        assert gc.collect() >= 1  # the collector still frees what is made after
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_a_hosts_collector_is_left_as_it_is():
    """flake8 with the plugin (or a script using the API) is not kv4lint's process: ``gc.freeze`` would act on
    all of the host's objects, so nothing is frozen there, libcst's import included."""
    code = textwrap.dedent("""
        import ast, gc
        from kv4lint.flake8_plugin import Plugin
        text = "import sglang as sgl\\nengine = sgl.Engine(model_path='m', kv_cache_dtype='fp4_e2m1')\\n"
        found = list(Plugin(ast.parse(text), text.splitlines(True), "serve.py").run())
        assert [m.split()[0] for _, _, m, _ in found] == ["KV401"], found
        import libcst
        assert gc.get_freeze_count() == 0, "the plugin froze flake8's objects"
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_kv4lint_command_owns_its_process():
    """The console script (and ``python -m kv4lint``) says the process is kv4lint's own; a call of ``main``
    (a host's process: a test, a script) does not."""
    code = textwrap.dedent("""
        from unittest import mock
        import kv4lint.cli as cli
        from kv4lint.base import process
        cli.main(["--version"])
        assert not process.own
        with mock.patch.object(cli, "exit_with"), mock.patch.object(cli, "main", return_value=0):
            cli.console()
        assert process.own
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "ok", r.stderr


_FP8_THEN = 'import subprocess\nKV = "fp8_e4m3"\n'
_LAUNCH_KV = 'subprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", KV])\n'


@pytest.mark.parametrize("block", [
    "while ready():\n    KV = 'fp4_e2m1'\n",
    "while ready():\n    pass\nelse:\n    KV = 'fp4_e2m1'\n",
    "for x in y:\n    KV = 'fp4_e2m1'\n",
    "try:\n    import z\nexcept ImportError:\n    pass\nelse:\n    KV = 'fp4_e2m1'\n",
    "try:\n    import z\nexcept ImportError:\n    KV = 'fp4_e2m1'\n",
    "match MODE:\n    case 'fp4':\n        KV = 'fp4_e2m1'\n",
])
def test_an_assignment_in_a_loop_handler_arm_or_else_may_not_run(block):
    """A loop's body or else, an except handler, a try's else and a match case may not run: the value assigned
    there is one of several, unknown, never taken as the only one (each kind of node opens its frame)."""
    launches = scan(_FP8_THEN + block + _LAUNCH_KV).launches
    assert [(la.condition, la.argv[-1].text) for la in launches] == [(None, None)]


def test_an_assignment_in_an_if_chain_arm_is_a_condition_of_the_launch():
    launches = scan(_FP8_THEN + "if A:\n    pass\nelif FP4:\n    KV = 'fp4_e2m1'\n" + _LAUNCH_KV).launches
    assert sorted((la.condition, la.argv[-1].text) for la in launches) == [
        ("A or not A and not FP4", "fp8_e4m3"), ("not A and FP4", "fp4_e2m1")]
    assert [la.argv[-1].text for la in scan(_FP8_THEN + "KV = 'fp4_e2m1'\n" + _LAUNCH_KV).launches] == ["fp4_e2m1"]


def test_a_scan_leaves_no_cycle_holding_the_module_tree():
    """The scan's working state is freed as it returns (kv4lint.base.process.gc_paused pauses the cyclic collector
    while a file is read: a script's Python heredocs were a third of what it walked after the file): no libcst node
    is left to the collector, with scopes, a class, GPU evidence and node offsets all used."""
    import gc

    import libcst

    src = textwrap.dedent("""\
        import subprocess
        import modal
        GPU = "B200:8"
        app = modal.App("serve")

        class Serve:
            @app.function(gpu=GPU)
            def run(self, kv="fp4_e2m1"):
                subprocess.run(["python", "-m", "sglang.launch_server", "--kv-cache-dtype", kv])
        """)
    gc.collect()
    gc.disable()
    try:
        res = scan(src)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if type(o).__module__.startswith(("libcst", "kv4lint"))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert len(res.launches) == 1 and res.launches[0].hints  # the GPU evidence was read
    assert left == [] and libcst  # (the parser was loaded)
