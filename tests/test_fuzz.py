"""Property-based tests: generated launch scripts with known ground truth.

Hypothesis draws the server arguments of one SGLang launch (``known_argv``: the
words argparse would see, with random flag spellings -- ``--flag value``,
``--flag=value``, unique prefixes, aliases, repeats -- and order), a target (GPU,
SGLang release), and then a file that launches exactly those arguments: a shell
script (quoting, spacing, continuations, wrappers, variable indirection, decoy
commands that are not launches), or Python (``subprocess`` argv lists, list
concatenation, variables, ``ServerArgs``/``Engine`` keyword arguments,
``popen_launch_server(..., other_args=[...])``).

The ground truth is the public API on the known arguments
(``kv4lint.check_argv`` / ``kv4lint.check_server_args``); the file's findings
must carry the same codes.  Then ``fix`` (the engine ``kv4lint fix`` runs) must
be idempotent, leave a file that parses as before (no rolled-back fix, no new
file error), leave no fixable finding, and change no character outside the
dtype values it sets (and the FP4-only flags it removes).

Example counts come from the Hypothesis profile (tests/conftest.py:
``KV4LINT_HYPOTHESIS_PROFILE=dev|ci|long``); ``tools/fuzz_long.sh`` is the documented long run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kv4lint
from kv4lint.base.settings import Settings
from kv4lint.pipeline.fix_engine import fix_text, fixable
from kv4lint.pipeline.runner import lint_text

VERSIONS = ["0.5.7", "0.5.12", "0.5.15", "0.5.16", "0.5.19", "0.5.20", "0.5.21", "0.5.23"]
GPUS = [None, "h100", "b200", "rtx5090", "a100", "gb10"]
MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V2-Lite",
          "Qwen/Qwen2.5-7B-Instruct"]
DTYPES = ["nvfp4", "fp4_mx_block16", "fp4_e2m1", "fp8_e4m3", "auto", "bf16", "mxfp8"]
FP4 = ("nvfp4", "fp4_mx_block16", "fp4_e2m1")
BACKENDS = ["triton", "flashinfer", "fa3", "fa4", "trtllm_mha", "trtllm_mla", "torch_native", "flex_attention",
            "cutlass_mla", "flashmla"]
FIX_DTYPE = "fp8_e4m3"

# (field, spellings argparse resolves to it in every release used, values or None for a flag)
OPTIONS = [
    ("model_path", ["--model-path", "--model"], MODELS),
    ("kv_cache_dtype", ["--kv-cache-dtype", "--kv-cache", "--kv-cache-d", "--kv-cache-dtyp"], DTYPES),
    ("attention_backend", ["--attention-backend"], BACKENDS),
    ("prefill_attention_backend", ["--prefill-attention-backend"], BACKENDS),
    ("decode_attention_backend", ["--decode-attention-backend"], BACKENDS),
    ("tp_size", ["--tp-size"], ["1", "2", "8"]),
    ("port", ["--port"], ["30000", "8080"]),
    ("host", ["--host"], ["0.0.0.0", "127.0.0.1"]),
    ("mem_fraction_static", ["--mem-fraction-static"], ["0.8", "0.85"]),
    ("enable_unified_memory", ["--enable-unified-memory"], None),
    ("enable_hierarchical_cache", ["--enable-hierarchical-cache"], None),
    ("trust_remote_code", ["--trust-remote-code"], None),
    ("speculative_algorithm", ["--speculative-algorithm"], ["EAGLE", "NGRAM", "DFLASH"]),
    ("device", ["--device"], ["cuda", "cpu", "xpu"]),
    ("prefill_kv_cache_dequant_dtype", ["--prefill-kv-cache-dequant-dtype"], ["auto", "nvfp4", "fp8_e4m3"]),
    ("disaggregation_mode", ["--disaggregation-mode"], ["null", "prefill"]),
]
_BY_FIELD = {o[0]: o for o in OPTIONS}
REMOVED_BY_FIX = {"prefill_kv_cache_dequant_dtype"}  # FP4-only: the fix to fp8 removes it


@dataclass
class Arg:
    """One option as argparse sees it: one word (``--flag=value``/a flag) or two."""

    field: str
    flag: str
    value: str | None
    inline: bool = False

    @property
    def words(self) -> list[str]:
        if self.value is None:
            return [self.flag]
        if self.inline:
            return [f"{self.flag}={self.value}"]
        return [self.flag, self.value]


@st.composite
def arg_for(draw, fld: str) -> Arg:
    _, spellings, values = _BY_FIELD[fld]
    flag = draw(st.sampled_from(spellings))
    if values is None:
        return Arg(fld, flag, None)
    return Arg(fld, flag, draw(st.sampled_from(values)), inline=draw(st.booleans()))


@st.composite
def launches(draw) -> list[Arg]:
    """Server arguments with at least one --kv-cache-dtype (the prefilter's needle), in random order."""
    others = draw(st.lists(st.sampled_from([o[0] for o in OPTIONS if o[0] != "kv_cache_dtype"]),
                           max_size=7, unique=True))
    n_dtype = draw(st.integers(1, 2))
    fields = others + ["kv_cache_dtype"] * n_dtype
    args = [draw(arg_for(f)) for f in fields]
    return draw(st.permutations(args))


@st.composite
def targets(draw) -> dict:
    return {"sglang_version": draw(st.sampled_from(VERSIONS)), "gpu": draw(st.sampled_from(GPUS))}


def truth_argv(argv: list[str], target: dict) -> list[str]:
    return sorted(f.code for f in kv4lint.check_argv(argv, **target))


def file_codes(text: str, path: str, language: str, target: dict):
    rep = lint_text(path, text, Settings(**target), language)
    return rep, sorted(f.code for f in rep.findings)


# ---------------------------------------------------------------------------
# Rendering with regions: the characters a fix may change


@dataclass
class Doc:
    parts: list[str] = field(default_factory=list)
    regions: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, kind): "dtype" | "remove"

    @property
    def pos(self) -> int:
        return sum(map(len, self.parts))

    def add(self, s: str, kind: str | None = None) -> None:
        start = self.pos
        self.parts.append(s)
        if kind:
            self.regions.append((start, start + len(s), kind))

    @property
    def text(self) -> str:
        return "".join(self.parts)


def merged(regions: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    out: list[list] = []
    for s, e, k in sorted(regions):
        if out and s <= out[-1][1]:  # overlapping or adjacent: one region (a regex cannot split them)
            out[-1][1] = max(out[-1][1], e)
            out[-1][2] = k if k == out[-1][2] else "mixed"
        else:
            out.append([s, e, k])
    return [tuple(r) for r in out]


def check_only_regions_changed(before: str, after: str, regions) -> None:
    """``after`` is ``before`` with only the regions' contents replaced; dtype regions hold fp8 or are unchanged.

    Two sound ways to show it (either suffices): a regular expression that keeps every character
    outside the regions in order (it also checks what each region became), or difflib's alignment
    with every changed block inside one region.  Lazy groups next to repeated text can align a
    regular expression wrongly, hence the second way.
    """
    if before == after:
        return
    regions = merged(regions)
    if _regex_explains(before, after, regions) or _difflib_explains(before, after, regions):
        return
    raise AssertionError(f"the fix changed characters outside the dtype values:\n--- before\n{before}\n"
                         f"--- after\n{after}\n--- regions\n{[before[s:e] for s, e, _ in regions]}")


def _regex_explains(before: str, after: str, regions) -> bool:
    pattern, last = [], 0
    for s, e, _ in regions:
        pattern.append(re.escape(before[last:s]))
        pattern.append("(.*?)")
        last = e
    pattern.append(re.escape(before[last:]))
    m = re.fullmatch("".join(pattern), after, re.S)
    if m is None:
        return False
    for (s, e, kind), new in zip(regions, m.groups()):
        old = before[s:e]
        if new == old:
            continue
        if kind == "dtype" and FIX_DTYPE not in new:
            return False
        if kind == "mixed" and FIX_DTYPE not in new and "dequant" in new:
            return False
        if kind == "remove" and "dequant" in new:
            return False
    return True


def _difflib_explains(before: str, after: str, regions) -> bool:
    import difflib

    ops = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    for tag, i1, i2, _, _ in ops:
        if tag == "equal":
            continue
        if not any(s <= i1 and i2 <= e for s, e, _ in regions):
            return False
    return True


# ---------------------------------------------------------------------------
# Shell


SH_ENTRIES = ["python -m sglang.launch_server", "python3 -m sglang.launch_server", "python3.11 -m sglang.launch_server",
              "/usr/bin/python3 -m sglang.launch_server", "python -u -m sglang.launch_server",
              "python -msglang.launch_server", "$PYTHON -m sglang.launch_server"]
SH_WRAPPERS = ["", "env A=1 ", "env A=1 B='x y' ", "nohup ", "timeout 10 ", "timeout -s INT 5m ", "exec ",
               "FOO=bar ", "nice -n 5 ", "env -u HOME ", "time ", "numactl --interleave=all ", "stdbuf -oL "]
SH_SEPS = [" ", "  ", "\t", " \\\n  ", " \\\n\t", " \\\n"]
SH_DECOYS = [
    "# python -m sglang.launch_server --kv-cache-dtype nvfp4\n",
    "echo \"python -m sglang.launch_server --kv-cache-dtype nvfp4\"\n",
    "echo '--kv-cache-dtype fp4_mx_block16'\n",
    "vllm serve m --kv-cache-dtype fp8\n",
    ": python -m sglang.launch_server --kv-cache-dtype nvfp4\n",
    "printf '%s\\n' --kv-cache-dtype=nvfp4\n",
    # Only comments suppress (issue 28 item 9): a string or here-document line that looks like one is data.
    "USAGE=\"serve.sh\n# kv4lint: disable-file\n\"\n",
    "cat > NOTES <<'EOF'\n# kv4lint: disable-file=KV4\nEOF\n",
    # Valid bash tree-sitter-bash cannot parse (issue 28): never a syntax error that hides the launch.
    'echo "serving ${MODEL:+(model: $MODEL)}"\n',
    "<<'EOF' cat\n--kv-cache-dtype nvfp4 in a here-document\nEOF\n",
    "ls `# the models` -l \\\n  `# all of them` -a\n",
]


def sh_quote(draw, word: str, *, split: bool = True) -> str:
    styles = ["plain", "plain", "single", "double", "ansi"] + (["split"] if split else [])
    style = draw(st.sampled_from(styles))
    if style == "single":
        return f"'{word}'"
    if style == "double":
        return f'"{word}"'
    if style == "split" and len(word) > 1:
        k = draw(st.integers(1, len(word) - 1))
        return f"{word[:k]}\"{word[k:]}\""
    if style == "ansi":
        return f"$'{word}'"
    return word


@st.composite
def shell_scripts(draw):
    args = draw(launches())
    target = draw(targets())
    doc = Doc()
    doc.add("#!/bin/bash\nset -euo pipefail\n")
    if draw(st.booleans()):
        doc.add(draw(st.sampled_from(SH_DECOYS)))
    # Variable indirection: values (never flags) moved to assignments before the command.
    indirect = [draw(st.booleans()) and a.value is not None and not a.inline for a in args]
    names = {}
    for i, (a, ind) in enumerate(zip(args, indirect)):
        if ind:
            name = f"V{i}"
            names[i] = name
            doc.add(draw(st.sampled_from(["", "export ", "readonly ", "declare "])) + f"{name}=")
            doc.add(sh_quote(draw, a.value), "dtype" if a.field == "kv_cache_dtype" else None)
            doc.add("\n")
    if draw(st.booleans()):
        doc.add(draw(st.sampled_from(SH_DECOYS)))
    doc.add(draw(st.sampled_from(SH_WRAPPERS)) + draw(st.sampled_from(SH_ENTRIES)))
    for i, a in enumerate(args):
        sep_before = draw(st.sampled_from(SH_SEPS))
        start_region = doc.pos
        doc.add(sep_before)
        flag_word = a.words[0]
        kind = "dtype" if a.field == "kv_cache_dtype" and a.inline else None
        # A flag quoted part-way (--kv-"cache-dtype") is pinned by test_flag_quoted_part_way (bug R2).
        doc.add(sh_quote(draw, flag_word, split=False), kind)
        if a.value is not None and not a.inline:
            doc.add(draw(st.sampled_from(SH_SEPS)))
            if i in names:
                ref = draw(st.sampled_from(["$", "${}", "\"$\"", "\"${}\""]))
                word = ref.replace("{}", "{" + names[i] + "}") if "{}" in ref else ref.replace("$", "$" + names[i])
                doc.add(word)
            else:
                doc.add(sh_quote(draw, a.value), "dtype" if a.field == "kv_cache_dtype" else None)
        if a.field in REMOVED_BY_FIX:
            doc.regions.append((start_region, doc.pos, "remove"))
    doc.add(draw(st.sampled_from(["", " &", " > server.log 2>&1", " 2>&1 | tee log", " &\nwait"])))
    doc.add(draw(st.sampled_from(["\n", "\n\necho done\n", ""])))
    # A removal may take the blanks after the removed words instead of those before them.
    doc.regions = [(s, _widen_sh(doc.text, e), k) if k == "remove" else (s, e, k) for s, e, k in doc.regions]
    argv = [w for a in args for w in a.words]
    return doc, argv, target


def _widen_sh(text: str, end: int) -> int:
    m = re.match(r"(?:[ \t]|\\\n)*", text[end:])
    return end + m.end()


def _check_file(text: str, path: str, language: str, target: dict, truth: list[str], regions) -> None:
    rep, codes = file_codes(text, path, language, target)
    assert codes == truth, f"file findings {codes} != check_argv {truth}\n{text}\nerrors: {rep.errors}"
    s = Settings(**target)
    tf = fix_text(path, text, s, language, report=rep)
    assert not tf.errors, tf.errors
    assert not [f for f in tf.remaining if fixable(f)], [f.code for f in tf.remaining if fixable(f)]
    new = tf.new_text
    check_only_regions_changed(text, new, regions)
    again = fix_text(path, new, s, language)
    assert again.new_text == new, "fix is not idempotent"
    after = lint_text(path, new, s, language)
    assert [e.message for e in after.errors] == [e.message for e in rep.errors] or \
        len(after.errors) <= len(rep.errors), f"the fix added file errors: {after.errors}"
    if any(fixable(f) for f in rep.findings):
        assert new != text, "a fixable finding was not fixed"


@pytest.mark.parametrize("word", ['--kv-"cache-dtype" nvfp4', '-"-kv-cache-dtype=nvfp4"', "--kv-cache'-dtype' nvfp4"])
def test_flag_quoted_part_way(word):
    """The shell removes quotes inside a word: the flag is --kv-cache-dtype all the same (bug R2: the prefilter)."""
    text = f"#!/bin/bash\npython -m sglang.launch_server {word}\n"
    target = {"sglang_version": "0.5.7", "gpu": None}
    _, codes = file_codes(text, "<fuzz>.sh", "shell", target)
    assert codes == ["KV406"]


@given(shell_scripts())
def test_shell_launches(case):
    doc, argv, target = case
    text = doc.text
    _check_file(text, "<fuzz>.sh", "shell", target, truth_argv(argv, target), doc.regions)


# ---------------------------------------------------------------------------
# Python


def py_str(draw, s: str) -> str:
    q = draw(st.sampled_from(["'", '"', "r'", 'r"', "'''", "u'"]))
    end = q.lstrip("ru")
    return f"{q}{s}{end}"


@st.composite
def python_argv_launches(draw):
    args = draw(launches())
    target = draw(targets())
    doc = Doc()
    doc.add(draw(st.sampled_from(["import subprocess\n", "import subprocess\nimport sys\n",
                                  "#!/usr/bin/env python3\n\"\"\"Start the server.\"\"\"\nimport subprocess\n"])))
    names = {}
    for i, a in enumerate(args):
        if a.value is not None and not a.inline and draw(st.integers(0, 3)) == 0:
            names[i] = f"VALUE_{i}"
            doc.add(f"{names[i]} = ")
            doc.add(py_str(draw, a.value), "dtype" if a.field == "kv_cache_dtype" else None)
            doc.add("\n")
    if draw(st.booleans()):
        doc.add("# python -m sglang.launch_server --kv-cache-dtype nvfp4\nprint('--kv-cache-dtype nvfp4')\n")
    head = draw(st.sampled_from(['"python", "-m", "sglang.launch_server"', "'python3', '-m', 'sglang.launch_server'",
                                 'sys.executable, "-m", "sglang.launch_server"']))
    if "sys." in head:
        doc.add("import sys\n")
    split_base = draw(st.booleans())
    call = draw(st.sampled_from(["subprocess.run", "subprocess.Popen", "subprocess.check_call"]))
    seps = [", ", ",\n    ", ",\n        "]
    if split_base:
        doc.add(f"BASE = [{head}]\ncmd = BASE + [")
    else:
        doc.add(f"cmd = [{head}, ")
    first = True
    for i, a in enumerate(args):
        start_region = doc.pos
        if not first:
            doc.add(draw(st.sampled_from(seps)))
        first = False
        kind = "dtype" if a.field == "kv_cache_dtype" and a.inline else None
        doc.add(py_str(draw, a.words[0]), kind)
        if a.value is not None and not a.inline:
            doc.add(draw(st.sampled_from(seps)))
            if i in names:
                doc.add(names[i])
            else:
                doc.add(py_str(draw, a.value), "dtype" if a.field == "kv_cache_dtype" else None)
        if a.field in REMOVED_BY_FIX:
            doc.regions.append((start_region, doc.pos, "remove"))
    doc.add("]\n")
    doc.add(f"{call}(cmd{draw(st.sampled_from(['', ', check=True', ', env=None']))})\n")
    # A removal of the first list element takes the separator after it: widen such regions to the next element.
    doc.regions = [(s, _widen(doc.text, e), k) if k == "remove" else (s, e, k) for s, e, k in doc.regions]
    argv = [w for a in args for w in a.words]
    return doc, argv, target


def _widen(text: str, end: int) -> int:
    m = re.match(r"\s*,\s*", text[end:])
    return end + m.end() if m else end


@given(python_argv_launches())
def test_python_argv_launches(case):
    doc, argv, target = case
    text = doc.text
    ast.parse(text)  # the generator writes valid Python
    _check_file(text, "<fuzz>.py", "python", target, truth_argv(argv, target), doc.regions)


@st.composite
def python_kwargs_launches(draw):
    target = draw(targets())
    fields = draw(st.lists(st.sampled_from([
        "attention_backend", "prefill_attention_backend", "decode_attention_backend", "tp_size",
        "enable_unified_memory", "speculative_algorithm", "prefill_kv_cache_dequant_dtype", "mem_fraction_static"]),
        max_size=5, unique=True))
    mapping: dict[str, object] = {"model_path": draw(st.sampled_from(MODELS)),
                                  "kv_cache_dtype": draw(st.sampled_from(DTYPES))}
    for f in fields:
        if f == "tp_size":
            mapping[f] = draw(st.sampled_from([1, 2, 8]))
        elif f == "enable_unified_memory":
            mapping[f] = draw(st.booleans())
        elif f == "mem_fraction_static":
            mapping[f] = 0.8
        else:
            mapping[f] = draw(st.sampled_from(_BY_FIELD[f][2]))
    order = draw(st.permutations(list(mapping)))
    ctor, imp = draw(st.sampled_from([
        ("ServerArgs", "from sglang.srt.server_args import ServerArgs\n"),
        ("sgl.Engine", "import sglang as sgl\n"),
        ("Engine", "from sglang import Engine\n"),
    ]))
    doc = Doc()
    doc.add(imp)
    via_var = draw(st.booleans())
    if via_var:
        doc.add("DTYPE = ")
        doc.add(py_str(draw, str(mapping["kv_cache_dtype"])), "dtype")
        doc.add("\n")
    doc.add(f"server = {ctor}(")
    seps = [", ", ",\n    "]
    for k, name in enumerate(order):
        start = doc.pos
        if k:
            doc.add(draw(st.sampled_from(seps)))
        v = mapping[name]
        doc.add(f"{name}=")
        if name == "kv_cache_dtype" and via_var:
            doc.add("DTYPE")
        elif isinstance(v, str):
            doc.add(py_str(draw, v), "dtype" if name == "kv_cache_dtype" else None)
        else:
            doc.add(repr(v))
        if name in REMOVED_BY_FIX:
            doc.regions.append((start, doc.pos, "remove"))
    doc.add(")\n")
    doc.regions = [(s, _widen(doc.text, e), k) if k == "remove" else (s, e, k) for s, e, k in doc.regions]
    return doc, mapping, target


@given(python_kwargs_launches())
def test_python_server_args(case):
    doc, mapping, target = case
    text = doc.text
    ast.parse(text)
    truth = sorted(f.code for f in kv4lint.check_server_args(mapping, **target))
    _check_file(text, "<fuzz>.py", "python", target, truth, doc.regions)


@st.composite
def popen_launches(draw):
    args = [a for a in draw(launches()) if a.field not in ("model_path", "device", "host", "port")]
    if not any(a.field == "kv_cache_dtype" for a in args):
        args.append(draw(arg_for("kv_cache_dtype")))
    target = draw(targets())
    model = draw(st.sampled_from(MODELS))
    doc = Doc()
    doc.add("from sglang.test.test_utils import DEFAULT_URL_FOR_TEST, popen_launch_server\n\n"
            "process = popen_launch_server(\n")
    doc.add(f"    {py_str(draw, model)},\n    DEFAULT_URL_FOR_TEST,\n    timeout=600,\n    device=\"cuda\",\n"
            "    other_args=[")
    for i, a in enumerate(args):
        start = doc.pos
        if i:
            doc.add(", ")
        doc.add(py_str(draw, a.words[0]), "dtype" if a.field == "kv_cache_dtype" and a.inline else None)
        if a.value is not None and not a.inline:
            doc.add(", ")
            doc.add(py_str(draw, a.value), "dtype" if a.field == "kv_cache_dtype" else None)
        if a.field in REMOVED_BY_FIX:
            doc.regions.append((start, doc.pos, "remove"))
    doc.add("],\n)\n")
    doc.regions = [(s, _widen(doc.text, e), k) if k == "remove" else (s, e, k) for s, e, k in doc.regions]
    argv = ["--model-path", model, *[w for a in args for w in a.words], "--device", "cuda"]
    return doc, argv, target


@given(popen_launches())
def test_popen_launch_server(case):
    doc, argv, target = case
    text = doc.text
    ast.parse(text)
    _check_file(text, "<fuzz>.py", "python", target, truth_argv(argv, target), doc.regions)


# ---------------------------------------------------------------------------
# The raw fuzz: arbitrary text through every frontend never raises


@given(st.sampled_from(["shell", "python", "dockerfile", "yaml", "markdown", "notebook", "makefile"]),
       st.lists(st.sampled_from([
           "python -m sglang.launch_server", " --kv-cache-dtype", " nvfp4", "=", "'", '"', "\\\n", "\n", "$(",
           ")", "`", "${X", "}", "<<EOF\n", "EOF\n", "[", "]", "{", ",", ":", "- ", "```bash\n", "```\n",
           "RUN ", "CMD [", "\"cells\": [", "ServerArgs(", "kv_cache_dtype=", "subprocess.run([", "#", "\t",
           "X=fp4_e2m1\n", "$X", "sglang serve", "\r\n", "\0", "\ufeff", "é", "\\",
           # issue 28: YAML aliases in lists, block quotes, look-alike suppressions
           "&kv fp4_e2m1\n", "*kv", "> ", "# kv4lint: disable-file\n", '"""', "# flake8: noqa\n",
       ]), max_size=40))
def test_arbitrary_text_never_raises(language, pieces):
    text = "".join(pieces)
    rep = lint_text(f"<fuzz>.{language}", text, Settings(), language)
    for e in rep.errors:
        assert "internal error" not in e.message, e.message
    tf = fix_text(f"<fuzz>.{language}", text, Settings(), language, report=rep)
    assert not tf.errors or all("rolled back" in e.message or "rounds" in e.message for e in tf.errors)


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
