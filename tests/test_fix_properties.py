"""Property tests: fix generated launch scripts (shell, and Python calls and argv lists) through the
real frontends and check that

* the output is exactly the input with the dtype value replaced and the FP4-only
  flag (with one separator) removed -- no other byte changes (an exact oracle: the
  generator knows where those characters are),
* the output re-parses without new errors and has no fixable finding left,
* fixing the output again changes nothing.

Scripts vary: flag spellings (``--kv-cache-dtype X``, ``--kv-cache-dtype=X``,
``--kv-cache X``, a whole quoted ``"--kv-cache-dtype=X"``), quoting, blanks,
backslash continuations, wrappers (``env``, ``nohup``, ``timeout``, ``exec``,
``VAR=x``), a variable holding the dtype, line endings (LF, CRLF), a BOM, a
missing final newline, and other commands around the launch.

Example counts come from the Hypothesis profile (tests/conftest.py:
``KV4LINT_HYPOTHESIS_PROFILE=dev|ci|long``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, strategies as st

from kv4lint.base.settings import Settings
from kv4lint.base.source import decode
from kv4lint.pipeline.fix_engine import fix_text, fixable
from kv4lint.pipeline.runner import lint_text


@dataclass
class Case:
    source: str  # the script
    fixed: tuple[str, ...]  # acceptable outputs (a removed flag may take the blank before or after it)
    settings: Settings


class _Builder:
    """Accumulates the script and, in parallel, the expected fixed script(s)."""

    def __init__(self):
        self.src: list[str] = []
        self.alts: list[list[str]] = [[]]

    def add(self, text: str, fixed: str | None = None) -> None:
        self.src.append(text)
        for a in self.alts:
            a.append(text if fixed is None else fixed)

    def fork_removal(self, before: str, token: str, after: str) -> None:
        """``before token after`` where ``token`` goes: either ``before`` or ``after`` goes with it."""
        self.src.append(before + token + after)
        new = []
        for a in self.alts:
            new.append(a + [after])
            if after:
                new.append(a + [before])
        self.alts = new


SEPS = st.sampled_from([" ", "  ", "\t", " \\\n  ", " \\\n\t", "\\\n    ", "   \\\n        "])
QUOTES = st.sampled_from(["", "'", '"'])
WRAPPERS = st.lists(st.sampled_from(["env A=1", "nohup", "timeout 600", "env -u FOO", "stdbuf -oL"]),
                    max_size=2, unique=True)
ENTRIES = st.sampled_from(["python -m sglang.launch_server", "python3 -m sglang.launch_server",
                           "python3 -m  sglang.launch_server", "sglang serve"])


@st.composite
def cases(draw) -> Case:
    b = _Builder()
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    if draw(st.booleans()):
        b.add("#!/bin/bash" + eol)
    for line in draw(st.lists(st.sampled_from(["set -euo pipefail", "# start the server", "echo starting",
                                               "export HF_HOME=/data/hf", "cd \"$(dirname \"$0\")\""]),
                              max_size=3)):
        b.add(line + eol)

    # The dtype and the target that makes it a fixable finding.
    kind = draw(st.sampled_from(["fp4_e2m1", "nvfp4-hopper", "nvfp4-rtx"]))
    dtype = "fp4_e2m1" if kind == "fp4_e2m1" else "nvfp4"
    cfg = Settings(gpu={"fp4_e2m1": None, "nvfp4-hopper": "h100", "nvfp4-rtx": "rtx5090"}[kind],
                   sglang_version="0.5.23")
    new = "fp8_e4m3"

    via_var = draw(st.booleans())
    var = draw(st.sampled_from(["DTYPE", "KV_DTYPE", "kv"]))
    if via_var:
        q = draw(QUOTES)
        b.add(f"{var}={q}")
        b.add(dtype, new)
        b.add(q + eol)
        value_word = draw(st.sampled_from([f"${var}", f"${{{var}}}", f'"${var}"', f'"${{{var}}}"']))
        value_fixed = value_word
    else:
        q = draw(QUOTES)
        value_word, value_fixed = f"{q}{dtype}{q}", f"{q}{new}{q}"

    # The arguments, in a random order; the dtype flag may be spelled several ways.
    spelling = draw(st.sampled_from(["--kv-cache-dtype", "--kv-cache", "--kv-cache-dt"]))
    inline = draw(st.sampled_from(["no", "eq", "quoted-eq"])) if not via_var else "no"
    if inline == "eq" and value_word[:1] in "'\"":
        inline = "no"
    args: list[tuple[str, str, str] | tuple[str]] = []  # (text, fixed text) pieces or ("REMOVE", option, value)
    if inline == "no":
        args.append(("dtype", f"{spelling}", value_word, value_fixed))
    elif inline == "eq":
        args.append(("one", f"{spelling}={value_word}", f"{spelling}={value_fixed}"))
    else:
        args.append(("one", f'"{spelling}={dtype}"', f'"{spelling}={new}"'))
    mq = draw(QUOTES)
    args.append(("one", f"--model-path {mq}meta-llama/Llama-3.1-8B-Instruct{mq}", None))
    if draw(st.booleans()):
        args.append(("one", f"--port {draw(st.integers(1024, 65535))}", None))
    if draw(st.booleans()):
        args.append(("one", "--tp 2", None))
    # nvfp4 is refused on sm120 only with the native NVFP4 prefill (the dequant flag set to nvfp4).
    dequant = "nvfp4" if kind == "nvfp4-rtx" else draw(st.sampled_from([None, "nvfp4", "fp8_e4m3", "auto"]))
    if dequant is not None:
        dq = draw(QUOTES)
        form = draw(st.sampled_from(["sep", "eq"]))
        args.append(("remove", form, f"{dq}{dequant}{dq}"))
    order = draw(st.permutations(list(range(len(args)))))

    if draw(st.booleans()):
        b.add("CUDA_VISIBLE_DEVICES=0,1 ")  # an assignment prefix comes first
    if draw(st.booleans()):
        b.add("exec ")  # exec runs a program, so it comes before the other wrappers
    for w in draw(WRAPPERS):
        b.add(w + " ")
    b.add(draw(ENTRIES))
    seps = [draw(SEPS) for _ in order]  # seps[k] precedes the k-th argument
    consumed = False
    for k, idx in enumerate(order):
        a = args[idx]
        if a[0] == "remove":
            _, form, val = a
            token = (f"--prefill-kv-cache-dequant-dtype{draw(SEPS)}{val}" if form == "sep"
                     else f"--prefill-kv-cache-dequant-dtype={val}")
            after = seps[k + 1] if k + 1 < len(order) else ""
            b.fork_removal(seps[k], token, after)
            consumed = True  # the next argument's separator went in with it
            continue
        if not consumed:
            b.add(seps[k])
        consumed = False
        if a[0] == "dtype":
            _, opt, word, fixed = a
            b.add(opt + draw(SEPS))
            b.add(word, fixed)
        else:
            _, text, fixed = a
            b.add(text, fixed)
    tail = draw(st.sampled_from(["", " &", " 2>&1 | tee server.log", " > server.log 2>&1", "; echo done"]))
    b.add(tail)
    if draw(st.booleans()):
        b.add(eol + "echo after" + eol)
    elif draw(st.booleans()):
        b.add(eol)  # else: no final newline
    src = "".join(b.src)
    fixed = tuple("".join(a) for a in b.alts)
    if eol == "\r\n":  # continuations inside the command use the same line ending
        src = src.replace("\\\n", "\\\r\n")
        fixed = tuple(f.replace("\\\n", "\\\r\n") for f in fixed)
    return Case(src, fixed, cfg)


def _fixable(findings) -> list:
    return [f for f in findings if fixable(f)]


@given(cases())
def test_fix_changes_only_the_value_and_removes_the_flag(case: Case):
    tf = fix_text("serve.sh", case.source, case.settings, "shell")
    assert tf.errors == []
    assert tf.new_text in case.fixed, (case.source, tf.new_text, case.fixed)
    assert [f.code for f in tf.fixed], "a fixable finding was expected"


@given(cases())
def test_fixed_script_reparses_and_has_nothing_fixable(case: Case):
    before = lint_text("serve.sh", case.source, case.settings, "shell")
    assert before.errors == []
    tf = fix_text("serve.sh", case.source, case.settings, "shell")
    after = lint_text("serve.sh", tf.new_text, case.settings, "shell")
    assert after.errors == []
    assert _fixable(after.findings) == []
    assert after.launches == before.launches


@given(cases())
def test_fix_is_idempotent(case: Case):
    once = fix_text("serve.sh", case.source, case.settings, "shell").new_text
    twice = fix_text("serve.sh", once, case.settings, "shell")
    assert not twice.changed and twice.fixed == []


@given(cases(), st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_bytes_round_trip_outside_the_edits(case: Case, encoding: str):
    """Through bytes: BOM and encoding come back; the bytes are the expected text's bytes."""
    data = case.source.encode(encoding)
    text = decode(data)
    tf = fix_text("serve.sh", text.text, case.settings, "shell")
    out = text.encode(tf.new_text)
    assert out in {f.encode(encoding) for f in case.fixed}


# ---------------------------------------------------------------------------
# Python: ServerArgs / Engine keywords and argv lists, through the real Python frontend


@st.composite
def py_cases(draw) -> Case:
    kind = draw(st.sampled_from(["fp4_e2m1", "nvfp4-hopper", "nvfp4-rtx"]))
    dtype = "fp4_e2m1" if kind == "fp4_e2m1" else "nvfp4"
    cfg = Settings(gpu={"fp4_e2m1": None, "nvfp4-hopper": "h100", "nvfp4-rtx": "rtx5090"}[kind],
                   sglang_version="0.5.23")
    new = "fp8_e4m3"
    q = draw(st.sampled_from(['"', "'"]))
    dequant = "nvfp4" if kind == "nvfp4-rtx" else draw(st.sampled_from([None, "nvfp4", "fp8_e4m3"]))
    head = draw(st.sampled_from(["from sglang.srt.server_args import ServerArgs\n", "import sglang as sgl\n",
                                 "import subprocess\n"]))
    eq = draw(st.sampled_from(["=", " = ", "= "]))
    if head.startswith("import subprocess"):
        # An argv list on one line.
        items = [(f'{q}python{q}', None), (f'{q}-m{q}', None), (f'{q}sglang.launch_server{q}', None)]
        pieces: list[tuple[str, str | None, bool]] = []  # (text, fixed, removable)
        inline = draw(st.booleans())
        pieces.append((f'{q}--kv-cache-dtype={dtype}{q}', f'{q}--kv-cache-dtype={new}{q}', False) if inline else
                      (f'{q}--kv-cache-dtype{q}, {q}{dtype}{q}', f'{q}--kv-cache-dtype{q}, {q}{new}{q}', False))
        if draw(st.booleans()):
            pieces.append((f'{q}--model-path{q}, {q}meta-llama/Llama-3.1-8B-Instruct{q}', None, False))
        if dequant:
            pieces.append((f'{q}--prefill-kv-cache-dequant-dtype{q}, {q}{dequant}{q}', "", True))
        order = draw(st.permutations(pieces))
        allitems = [(t, f, False) for t, f in items] + list(order)
        seps = [draw(st.sampled_from([", ", ",  ", ","])) for _ in allitems[1:]]
        open_, close = "subprocess.Popen([", "])\n"
    else:
        call = "ServerArgs(" if "ServerArgs" in head else draw(st.sampled_from(["sgl.Engine(", "sgl.ServerArgs("]))
        pieces = [(f"kv_cache_dtype{eq}{q}{dtype}{q}", f"kv_cache_dtype{eq}{q}{new}{q}", False),
                  (f"model_path{eq}{q}meta-llama/Llama-3.1-8B-Instruct{q}", None, False)]
        if draw(st.booleans()):
            pieces.append((f"tp_size{eq}2", None, False))
        if dequant:
            pieces.append((f"prefill_kv_cache_dequant_dtype{eq}{q}{dequant}{q}", "", True))
        allitems = list(draw(st.permutations(pieces)))
        multiline = draw(st.booleans())
        if multiline:
            ind = draw(st.sampled_from(["    ", "        ", "\t"]))
            comments = [draw(st.sampled_from(["", "  # note"])) if not r else "" for _, _, r in allitems]
            src = [f"x = {call}\n"]
            alt = [f"x = {call}\n"]
            for (t, f, r), c in zip(allitems, comments):
                src.append(f"{ind}{t},{c}\n")
                if not r:
                    alt.append(f"{ind}{t if f is None else f},{c}\n")
            src.append(")\n")
            alt.append(")\n")
            return Case(head + "".join(src), (head + "".join(alt),), cfg)
        seps = [draw(st.sampled_from([", ", ",  ", ",", " , "])) for _ in allitems[1:]]
        open_, close = f"x = {call}", ")\n"
    # One line: the removable item goes with the separator before or after it.
    texts = [t for t, _, _ in allitems]
    fixed = [t if f is None else f for t, f, _ in allitems]
    src = open_ + texts[0] + "".join(s + t for s, t in zip(seps, texts[1:])) + close
    alts = []
    k = next((i for i, (_, _, r) in enumerate(allitems) if r), None)
    if k is None:
        alts.append(open_ + fixed[0] + "".join(s + t for s, t in zip(seps, fixed[1:])) + close)
    else:
        for drop_before in (True, False):
            if drop_before and k == 0 or not drop_before and k == len(allitems) - 1:
                continue
            out = [fixed[0]] if k != 0 else []
            for i in range(1, len(allitems)):
                if i == k:
                    continue
                if out:
                    sep = seps[i - 1]
                    if not drop_before and i == k + 1:
                        sep = seps[k - 1] if k > 0 else ""
                    out.append(sep + fixed[i])
                else:
                    out.append(fixed[i])
            alts.append(open_ + "".join(out) + close)
        if k == len(allitems) - 1 and open_.startswith("subprocess"):
            # A list's last two items (option, value) removed one by one: the option takes the
            # separator after it, the value has none, so the one before stays: `[..., "x", ]`.
            # Valid Python and no byte outside the removed items changes; accepted.
            alts.append(open_ + fixed[0] + "".join(s + t for s, t in zip(seps[: k - 1], fixed[1:k])) + seps[k - 1]
                        + close)
    return Case(head + src, tuple(head + a for a in alts), cfg)


@given(py_cases())
def test_python_fix_exact_idempotent_and_clean(case: Case):
    tf = fix_text("serve.py", case.source, case.settings, "python")
    assert tf.errors == []
    assert tf.new_text in case.fixed, (case.source, tf.new_text, case.fixed)
    compile(tf.new_text, "serve.py", "exec")
    after = lint_text("serve.py", tf.new_text, case.settings, "python")
    assert after.errors == [] and _fixable(after.findings) == []
    assert not fix_text("serve.py", tf.new_text, case.settings, "python").changed
