"""The pre-filter: every launch kv4lint can report on passes it; files without one mostly do not."""

from __future__ import annotations

import codecs
import json
import re
import sys
from pathlib import Path

import pytest
import snapshots
import test_fuzz  # the property tests' generators of launches (tests/test_fuzz.py)
from hypothesis import given
from hypothesis import strategies as st

from kv4lint.files.discover import language_of
from kv4lint.files.prefilter import GREP_PATTERN, NEEDLES, SPEC, might_launch, might_launch_bytes, python_may_launch

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": ["!python -m sglang.launch_server --model-path m \\\n",
                                             "    --kv-cache-dtype nvfp4\n"]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)

# (language, text): launches with a KV cache option, which must all pass.
MUST_PASS = [
    # a shell script whose options come from a file it sources (kv4lint.pipeline.sourced)
    ("shell", "source ./env.sh\npython -m sglang.launch_server --model-path m $EXTRA\n"),
    ("shell", ". \"$(dirname \"$0\")/env.sh\" && sglang serve $ARGS\n"),
    ("shell", "docker run --env-file prod.env img python3 -m sglang.launch_server $ARGS\n"),
    ("shell", "python3 -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1\n"),
    ("shell", "sglang serve --model-path m --kv-c nvfp4\n"),  # shortest argparse prefix
    ("shell", "python -m sglang.launch_server --model-path m --kv-cache=nvfp4\n"),
    ("shell", "python -m sglang.launch_server --model-path m --prefill-k fp8_e4m3\n"),
    ("shell", "python -m sglang.launch_server --config cfg.yaml\n"),  # the dtype is in the config file
    ("shell", "ARGS='--kv-cache-dtype nvfp4'\nexec python -m sglang.launch_server $ARGS\n"),
    # quotes and backslashes inside a word (the shell removes them)
    ("shell", "python -m sglang.launch_server --kv-\"cache-dtype\" nvfp4\n"),
    ("shell", "python -m sglang.launch_server -\"-kv-cache-dtype=nvfp4\"\n"),
    ("shell", "python -m sglang.launch_server --k'v'-cache-dtype nvfp4\n"),
    ("shell", "python -m sglang.launch_server --kv\\-cache-dtype nvfp4\n"),
    ("shell", "python -m sglang.launch_server --kv-\\\ncache-dtype nvfp4\n"),
    ("dockerfile", "FROM lmsysorg/sglang\n"
                   "RUN python3 -m sglang.launch_server --prefill-\"kv-cache-dequant-dtype\" x\n"),
    # the option after mentions that are not one: every occurrence counts, not only the first
    ("shell", "# the kv-cache and prefill-kv notes\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n"),
    ("yaml", "# kv-cache, prefill-kv (see the docs)\nmodel-path: m\nkv-cache-dtype: nvfp4\n"),
    ("python", "from sglang import Engine\nif args.kv_cache_dtype == 'auto':  # kv-cache\n"
               "    Engine(model_path='m', kv_cache_dtype='nvfp4')\n"),
    ("yaml", "model-path: meta-llama/Llama-3.1-8B-Instruct\nkv-cache-dtype: nvfp4\n"),  # --config file
    ("yaml", "model-path: m\nkv-c: nvfp4\n"),
    ("yaml", "{model-path: m, \"kv-cache-dtype\": nvfp4}\n"),
    ("yaml", "model-path: m\nprefill-kv-cache-dequant-dtype: fp8_e4m3\n"),
    ("yaml", "services:\n  llm:\n    image: lmsysorg/sglang:v0.5.23\n    command: >\n"
             "      python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n"),
    ("dockerfile", "FROM lmsysorg/sglang:v0.5.23-rocm\n"
                   "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--kv-cache-dtype\", \"nvfp4\"]\n"),
    ("markdown", "# Serve\n\n```bash\npython -m sglang.launch_server --kv-cache-dtype fp4_e2m1\n```\n"),
    ("notebook", NOTEBOOK),
    ("makefile", "serve:\n\tpython -m sglang.launch_server --model-path $(MODEL) --kv-cache-dtype nvfp4\n"),
    ("python", "import sglang as sgl\nllm = sgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n"),
    ("python", "from sglang.srt.server_args import ServerArgs\nargs = ServerArgs(**{'kv_cache_dtype': 'fp4_e2m1'})\n"),
    ("python", "from sglang.test.test_utils import popen_launch_server\n"
               "proc = popen_launch_server(MODEL, URL, timeout=600,\n"
               "                           other_args=['--kv-cache-dtype', 'nvfp4'])\n"),
    ("python", "import subprocess, sys\n"
               "subprocess.Popen([sys.executable, '-m', 'sglang.launch_server', '--kv-cache-dtype', DTYPE])\n"),
    ("python", "import subprocess\nsubprocess.run(['sglang', 'serve', '--kv-c', 'nvfp4'])\n"),
    ("python", "import os\nos.system('python -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4')\n"),
    ("python", "import sglang\nKV = dict(kv_cache_dtype='nvfp4')\nengine = sglang.Engine(model_path='m', **KV)\n"),
    ("python", "from sglang.srt.server_args import ServerArgs\nargs = ServerArgs(model_path='m')\n"
               "args.kv_cache_dtype = 'nvfp4'\n"),
    ("python", "from sglang.srt.server_args import prepare_server_args\n"
               "args = prepare_server_args(['--model-path', 'm', '--config', 'cfg.yaml'])\n"),
    ("python", "from sglang.utils import launch_server_cmd\n"
               "proc, port = launch_server_cmd('python -m sglang.launch_server --kv-cache-dtype nvfp4')\n"),
    ("python", "import sglang as sgl\nsgl.Engine(model_path='m', prefill_kv_cache_dequant_dtype='fp8_e4m3')\n"),
    ("python", "import sglang as sgl\nkv_cache_dtype = 'nvfp4'\nsgl.Engine(model_path='m',\n"
               "           kv_cache_dtype = kv_cache_dtype)\n"),
    ("python", "import subprocess\ncmd = f'python3 -msglang.launch_server --kv-cache-dtype {dtype}'\n"
               "subprocess.run(cmd, shell=True)\n"),
    # an alias is imported under the entry point's own name
    ("python", "from sglang.srt.server_args import ServerArgs as SA\n"
               "args = SA(model_path='m', kv_cache_dtype='nvfp4')\n"),
    ("python", "from sglang import Engine as LLM\nllm = LLM(model_path='m', kv_cache_dtype='nvfp4')\n"),
    ("python", "from sglang.test.test_utils import popen_launch_server as launch\n"
               "launch(MODEL, URL, other_args=['--kv-cache-dtype', 'nvfp4'])\n"),
    # a flag built by concatenation, as the Python frontend evaluates it
    ("python", "from sglang.test.test_utils import popen_launch_server\n"
               "popen_launch_server(M, U, other_args=['--' + 'kv-cache-dtype', 'nvfp4'])\n"),
    ("python", "import sglang as sgl\nflag = 'kv-cache-dtype'\nsgl.Engine(**parse([f'--{flag}', 'nvfp4']))\n"),
    # the CLI's words apart
    ("python", "import subprocess\nSGLANG = '/opt/venv/bin/sglang'\n"
               "subprocess.run([SGLANG, 'serve', '--model-path', 'm', '--kv-cache-dtype', 'nvfp4'])\n"),
    # SGLang's helpers re-exported by a project module, or used in a doc without their import
    ("python", "from tests.common import *\nrun_bench_serving(MODEL, 100, 1, other_server_args=['--kv-c', 'nvfp4'])\n"),
    ("markdown", "```python\nproc = popen_launch_server(MODEL, URL, other_args=['--kv-cache-dtype', 'nvfp4'])\n```\n"),
]

# (language, text): files that cannot hold a launch kv4lint reports on.
MUST_FAIL = [
    ("shell", "pip install sglang\nsource .venv/bin/activate\n"),  # sources a file, but launches nothing
    ("markdown", "source ./env.sh\npython -m sglang.launch_server --model-path <model>\n"),  # docs: not followed
    ("shell", "python train.py --kv-cache-dtype fp8\n"),  # no SGLang entry point
    ("shell", "pip install 'sglang[all]==0.5.23'\n"),  # SGLang, but no KV option
    ("markdown", "SGLang's KV cache (see the kv-cache docs) is fast.\n"),  # capitalised brand only
    ("markdown", "sglang notes: the kv-cache can be quantised.\n"),  # prose, not an option
    ("yaml", "# tune the kv-cache\nbatch: 8\n"),
    ("yaml", "name: ci\non: push\n"),
    ("python", "import sglang\nif server_args.kv_cache_dtype == 'fp8_e4m3':\n    pass\n"),  # a read
    ("python", "from sglang.srt.server_args import ServerArgs\nclass Pool:\n"
               "    def __init__(self, server_args: ServerArgs):\n        self.kv_cache_dtype = 'auto'\n"),
    ("python", "import sglang\nbuild_pool(kv_cache_dtype='nvfp4')\n"),  # a keyword, but no entry point
    ("python", "import sglang\nMyEngine(kv_cache_dtype='nvfp4')\nrun_serverless(x)\n"),  # not SGLang's names
    ("python", "import sglang\n# this kernel can serve every layer\nrun(kv_cache_dtype='nvfp4')\n"),  # prose
    ("python", "from sglang.srt.server_args import ServerArgs\n\n"  # named, never called
               "def pool(server_args: ServerArgs, kv_cache_dtype='auto'):\n    return kv_cache_dtype\n"),
    ("python", "import numpy as np\nx = np.zeros(3)\n"),
    ("python", "from tests.common import run_bench_serving\n"
               "run_bench_serving(M, 1, 1, other_server_args=['--kv-c', 'x'])\n"),
]


def _both(text: str, language: str | None) -> bool:
    a = might_launch(text, language)
    b = might_launch_bytes(text.encode("utf-8"), language)
    assert a == b, f"str and bytes flavours disagree on {text!r}"
    return a


@pytest.mark.parametrize("language,text", MUST_PASS)
def test_launches_pass(language, text):
    assert _both(text, language)
    assert _both(text, None), "the language-blind test must be at least as permissive"
    assert re.search(GREP_PATTERN, text), "the benchmark's grep floor must see every candidate"


@pytest.mark.parametrize("language,text", MUST_FAIL)
def test_non_launches_fail(language, text):
    assert not _both(text, language)


_SPEC = {k: re.compile(v) for k, v in SPEC.items()}


def _py_entry(text: str) -> bool:
    return bool(_SPEC["py_entry"].search(text)
                or (_SPEC["sglang_word"].search(text) and _SPEC["serve_string"].search(text)))


def reference(text: str, language: str | None) -> bool:
    """The definition: SPEC's regular expressions searched over the whole text."""
    if "sglang" not in text:
        if language == "python":
            return "import *" in text and bool((_SPEC["py_option"].search(text) or "--config" in text)
                                               and _py_entry(text))
        if language in (None, "markdown", "notebook") and (_SPEC["option"].search(text) or "--config" in text) \
                and _py_entry(text):
            return True
        return language in (None, "yaml") and bool(_SPEC["config_key"].search(text))
    if language == "python":
        return bool((_SPEC["py_option"].search(text) or "--config" in text) and _py_entry(text))
    plain = re.sub(r"[\"'\\]", "", text.replace("\\\n", ""))  # as a shell removes quotes inside a word
    command = _SPEC["command"].search(text) or (_SPEC["sglang_word"].search(text)
                                                and _SPEC["serve_string"].search(text))
    if language in (None, "shell") and _SPEC["sources"].search(text) and command:
        return True
    if _SPEC["launcher"].search(text) and _SPEC["launcher_env"].search(text):
        return True
    return any(bool(_SPEC["option"].search(t) or "--config" in t) for t in (text, plain))


LANGUAGES = (None, "python", "shell", "yaml", "markdown", "notebook")


# Needles that share their k: each is judged on its own ("--prefill-kv_cache_d" is a flag, not a keyword).
SHARED_K = [
    ("python", "from sglang import Engine\nEngine(model_path='m')\nflag = '--prefill-kv_cache_dtype'\n"),
    ("python", "from sglang import Engine\nEngine(model_path='m')\nflag = '--prefill-kv-c'\n"),
    ("yaml", "prefill-kv_cache_dtype: x\n"),
]


@pytest.mark.parametrize("language,text", MUST_PASS + MUST_FAIL + SHARED_K)
def test_cases_agree_with_the_definition(language, text):
    for lang in LANGUAGES:
        assert _both(text, lang) == reference(text, lang), (lang, text)


PIECES = ["sglang", "kv_cache_d", "kv_cache_dtype", "kv-c", "kv-cache-dtype", "--", "-", "prefill_", "prefill-k",
          "prefill-kv-cache-dequant-dtype", "self.", "x.", "=", "==", " ", "\n", "\t", '"', "'", ":", "(", ",", ".",
          "ServerArgs", "Engine", "Runtime", "run_server", "from_cli_args", "prepare_server_args", "launch_server",
          "popen_", "_cmd", "serve", "server", "--config", "bench_", "benchmark.", "compile_deep_gemm", "x", "_", "9",
          " as ", "My", "less", "sglang.cli", "/sglang", ".serve", "serves", "sglang.x", "import *", "run_bench_",
          "one_batch", "popen_launch_pd_server", "_multi", "{x}", "can serve", "] ", "\\", "\\\n", "k'v", 'v"-c',
          " as X", "from_cli_args("]


@given(st.lists(st.sampled_from(PIECES), max_size=14), st.sampled_from(LANGUAGES))
def test_fast_scans_agree_with_the_definition(pieces, language):
    text = "".join(pieces)
    assert _both(text, language) == reference(text, language)


def test_python_is_tighter_than_the_generic_test():
    # SGLang's own sources mention the option everywhere without launching.
    text = "from sglang.srt.server_args import get_global_server_args\nx = y.kv_cache_dtype\n"
    assert _both(text, None)
    assert not _both(text, "python")


def test_grep_pattern_is_the_needles():
    assert GREP_PATTERN.split("|") == list(NEEDLES)
    for n in NEEDLES:
        assert re.escape(n).replace("\\-", "-") == n, f"{n!r} would need escaping in grep -E"


FIXTURES_WITH_FINDINGS = [p for p in snapshots.snapshotted() if snapshots.read(p).findings]


@pytest.mark.parametrize("path", FIXTURES_WITH_FINDINGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_with_findings_passes(path):
    data = path.read_bytes()
    language = language_of(str(path), data[:256])
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16")
        assert might_launch(text, language) and might_launch(text)
    else:
        assert might_launch_bytes(data, language), f"{path} has findings but the pre-filter skips it"
        assert might_launch_bytes(data)
        assert re.search(GREP_PATTERN.encode(), data)


def test_every_helper_of_the_python_frontend_is_an_entry_point():
    """The Python frontend's helper table and the pre-filter's names must not drift apart."""
    from kv4lint.files.prefilter import PY_ENTRY_WORDS
    from kv4lint.frontends.python import scanner as _pycst

    names = set(_pycst.HELPERS) | {"launch_server_cmd", "prepare_server_args", "ServerArgs", "Engine", "Runtime"}
    assert names <= set(PY_ENTRY_WORDS), sorted(names - set(PY_ENTRY_WORDS))
    for name in sorted(names):
        text = f"from tests.common import *\nproc = {name}(MODEL, URL, other_args=['--kv-cache-dtype', 'nvfp4'])\n"
        assert _both(text, "python"), name


# ---------------------------------------------------------------------------
# python_may_launch: the syntax-tree test for Python candidates


def _python_texts_with_findings():
    from kv4lint.base.settings import Settings
    from kv4lint.pipeline.runner import lint_text

    out = [(f"case{i}", text) for i, (lang, text) in enumerate(MUST_PASS) if lang == "python"]
    for p in sorted(FIXTURES.rglob("*.py")) if FIXTURES.is_dir() else []:
        text = p.read_text(encoding="utf-8", errors="replace")
        if lint_text(str(p), text, Settings(), "python").findings:
            out.append((str(p.relative_to(FIXTURES)), text))
    return out


def test_the_tree_test_passes_every_python_launch():
    texts = _python_texts_with_findings()
    assert len(texts) > 20
    for name, text in texts:
        assert python_may_launch(text), name


@pytest.mark.parametrize("text", [
    # mentions, not calls
    "from sglang.srt.server_args import ServerArgs\n\ndef pool(args: ServerArgs):\n    return args.kv_cache_dtype\n",
    "import sglang\n# Engine(kv_cache_dtype='nvfp4') would fail on ROCm\n",
    'import sglang\n"""Run `sglang.Engine(kv_cache_dtype="nvfp4")` yourself."""\n',
    # a call, but the option is only read
    "import sglang as sgl\nengine = sgl.Engine(model_path='m')\nprint(engine.server_args.kv_cache_dtype)\n",
    # definitions and comparisons of flags, SGLang's own argument parser
    "import argparse\nfrom sglang.srt.server_args import ServerArgs\np = argparse.ArgumentParser()\n"
    "p.add_argument('--kv-cache-dtype', help='--kv-cache-dtype nvfp4 needs Blackwell')\n"
    "args = ServerArgs.from_cli_args(p.parse_args())\nif '--config' in sys.argv:\n    pass\n",
    # a command call and an option, but no SGLang command
    "import subprocess\nsubprocess.run(['vllm', 'serve', 'm', '--kv-cache-dtype', 'fp8'])\nfrom sglang.srt import x\n",
    # callees the frontend does not take for SGLang's: the diffusion server's ServerArgs, a ServerArgs of
    # another package or of the file itself, a helper imported from elsewhere, a `run` that is not subprocess'
    "from sglang.multimodal_gen.runtime.server_args import ServerArgs\nServerArgs(kv_cache_dtype='nvfp4')\n",
    "import sglang\nfrom mylib import ServerArgs\nServerArgs(kv_cache_dtype='nvfp4')\n",
    "import sglang\nclass ServerArgs:\n    pass\nServerArgs(kv_cache_dtype='nvfp4')\n",
    "import sglang\nfrom .utils import popen_launch_server\n"
    "popen_launch_server('m', 'u', other_args=['--kv-cache-dtype', 'nvfp4'])\n",
    "def run(cmd):\n    pass\nrun('python -m sglang.launch_server --kv-cache-dtype nvfp4')\n",
    "from fabric import Connection\nConnection('h').run('python -m sglang.launch_server --kv-cache-dtype nvfp4')\n",
    # a command call whose arguments no SGLang command reaches, in a file that spells one elsewhere
    # (SGLang's multimodal_gen/test/unit/test_server_args.py: 167 KB that libcst parsed for nothing)
    "import subprocess, sys\nfrom unittest.mock import patch\nfrom sglang.x import y\n"
    "for module in ('sglang.a', 'sglang.b'):\n    subprocess.run([sys.executable, '-c', f'import {module}'])\n"
    "with patch.object(sys, 'argv', ['sglang', 'serve', '--config', 'c.yaml']):\n    pass\n",
    "import os\nCMD = 'sglang serve --kv-cache-dtype nvfp4'\nos.system('ls -l')\n",
])
def test_the_tree_test_rejects_mentions(text):
    assert not python_may_launch(text)


@pytest.mark.parametrize("text", [
    "import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n",
    "import sglang.srt.server_args\nsglang.srt.server_args.ServerArgs(kv_cache_dtype='nvfp4')\n",
    "from sglang.srt.server_args import ServerArgs as SA\nSA(kv_cache_dtype='nvfp4')\n",
    "from sglang.srt.server_args import ServerArgs\nServerArgs.from_cli_args(ns, kv_cache_dtype='nvfp4')\n",
    "from sglang import *\nEngine(model_path='m', kv_cache_dtype='nvfp4')\n",
    "from tests.common import *\nself.popen_launch_server('m', 'u', other_args=['--kv-cache-dtype', 'nvfp4'])\n",
    "from subprocess import Popen as P\nP(['python', '-m', 'sglang.launch_server', '--kv-cache-dtype', 'nvfp4'])\n",
    "import os\nos.system('python -m sglang.launch_server --kv-cache-dtype nvfp4')\n",
    "get_ipython().system('python -m sglang.launch_server --kv-cache-dtype nvfp4')\n",
    # a command built where the call does not show it: the frontend follows bindings in the file
    "import subprocess\ncmd = ['python', '-m']\ncmd += ['sglang.launch_server']\ncmd.append('--kv-cache-dtype')\n"
    "subprocess.run(cmd)\n",
    "import subprocess\ncmd = []\ncmd.extend(['sglang', 'serve', '--kv-cache-dtype', 'nvfp4'])\nsubprocess.run(cmd)\n",
    "import subprocess\nclass S:\n    BIN = 'sglang'\n    def run(self):\n"
    "        subprocess.Popen([self.BIN, 'serve', '--kv-cache-dtype', 'fp4_e2m1'])\n",
    "import subprocess\nclass S:\n    def __init__(self):\n        self.cmd = 'python -m sglang.launch_server'\n"
    "    def run(self):\n        subprocess.run(self.cmd + ' --kv-cache-dtype nvfp4', shell=True)\n",
    "import subprocess\nfor m in ['sglang.launch_server']:\n"
    "    subprocess.run(['python', '-m', m, '--kv-cache-dtype', 'fp4_e2m1'])\n",
    "import os\nparts = ['sglang', 'serve']\nos.system(' '.join(parts) + ' --kv-cache-dtype fp4_e2m1')\n",
    "import os\nB = 'sglang'\nos.system(f'{B} serve --kv-cache-dtype fp4_e2m1')\n",
    "import os\nos.environ['SERVE'] = 'python -m sglang.launch_server'\nos.system('$SERVE --kv-cache-dtype nvfp4')\n",
    "import os\nos.environ.update(S='sglang serve')\nos.system('$S --kv-cache-dtype nvfp4')\n",
    "import os, subprocess\nsubprocess.run('$S --kv-cache-dtype nvfp4', shell=True, env={'S': 'sglang serve'})\n",
    "import subprocess\nwith open('x') as f, subprocess.Popen(['sglang', 'serve', '--kv-cache-dtype', 'nvfp4']):\n"
    "    pass\n",
])
def test_the_tree_test_passes_calls_through_imports(text):
    assert python_may_launch(text)


def test_the_tree_test_passes_every_python_file_where_the_frontend_sees_an_option_in_a_launch():
    """A necessary condition: every fixture (and generated) file where the frontend reads a launch setting
    an option the rules read passes, findings or not."""
    from kv4lint.frontends.python import scanner as _pycst
    import libcst

    texts = [(str(p.relative_to(FIXTURES)), p.read_text(encoding="utf-8", errors="replace"))
             for p in sorted(FIXTURES.rglob("*.py"))]
    seen = 0
    for name, text in texts:
        try:
            module = libcst.parse_module(text)
        except Exception:  # noqa: BLE001 - fixtures of syntax errors
            continue
        scan = _pycst.Scanner(text, name, module, None).scan()
        words = " ".join(v.text or "" for launch in scan.launches for v in (*launch.argv, *launch.kwargs.values()))
        keys = {k for launch in scan.launches for k in launch.kwargs}
        flags = re.search(r"--kv-c|--prefill-k|--config", words)
        if keys & {"kv_cache_dtype", "prefill_kv_cache_dequant_dtype"} or flags:
            seen += 1
            assert python_may_launch(text), name
    assert seen >= 10


@pytest.mark.parametrize("path", FIXTURES_WITH_FINDINGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_tree_test_changes_no_findings(path, monkeypatch, tmp_path):
    """Every stage of the filter at once, wherever Python is scanned (files, Markdown fences, notebook cells,
    Python run from shell): with the syntax-tree screen, a fixture with findings reports exactly what it
    reports when the screen lets everything through (``kv4lint check`` with the snapshot's options)."""
    from kv4lint.cli import main
    from kv4lint.files import prefilter

    answers = []

    def screen(text, tree=None, real=prefilter.python_may_launch):
        answers.append(real(text, tree))
        return answers[-1]

    def findings():
        out = tmp_path / "out.json"
        main(["check", "--format", "json", "--isolated", "--jobs", "1", "--no-cache", "--exit-zero",
              "--output-file", str(out), *snapshots.read(path).args, str(path)])
        return [(f["line"], f["column"], f["code"], f["message"]) for f in json.loads(out.read_text())["findings"]]

    def use(fn):  # wherever the screen is bound (``from kv4lint.files.prefilter import python_may_launch``)
        for m in holders:
            monkeypatch.setattr(m, "python_may_launch", fn)

    import kv4lint.frontends.python  # noqa: F401 - loaded, so that its binding is found
    holders = [m for m in list(sys.modules.values())
               if getattr(m, "python_may_launch", None) is prefilter.python_may_launch]
    use(screen)
    with_screen = findings()
    use(lambda text, tree=None: True)
    without = findings()
    assert without, path  # the fixture's findings (its snapshot has some)
    assert with_screen == without
    if path.suffix == ".py":
        assert answers and answers[0], "a Python fixture with findings passes the screen"


def test_the_tree_test_lets_the_frontend_judge_what_ast_cannot_parse():
    assert python_may_launch("import sglang\nServerArgs(kv_cache_dtype='nvfp4'\n")  # a syntax error
    assert python_may_launch("x = '\0'")


def test_the_tree_test_takes_a_parsed_tree():
    import ast

    text = "import sglang as sgl\nsgl.Engine(model_path='m', kv_cache_dtype='nvfp4')\n"
    assert python_may_launch(text, ast.parse(text))
    assert not python_may_launch(text, ast.parse("import sglang\n"))


@given(st.one_of(test_fuzz.python_argv_launches(), test_fuzz.python_kwargs_launches(), test_fuzz.popen_launches()))
def test_the_tree_test_passes_generated_python_launches(case):
    text = case[0].text
    assert might_launch(text, "python")
    assert python_may_launch(text)
