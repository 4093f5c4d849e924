#!/usr/bin/env python3
"""Measure tree-sitter's JSON, Dockerfile and Make grammars against kv4lint's hand-written scanners
(issue 37, "Parsers from the ecosystem where they win"): speed, exact offsets, error recovery, and the forms
kv4lint must read (JSON with comments and trailing commas, heredocs in ``RUN``, ``$$`` in recipes).

A measurement, not part of kv4lint: the grammars are not dependencies.  Run it with them installed::

    .venv/bin/pip install tree-sitter-json tree-sitter-dockerfile tree-sitter-make
    .venv/bin/python bench/grammars.py [--corpus DIR ...] [--reps N]

The corpus: the project's fixtures, the JSON files of the benchmark's tree (``bench/out/tree``: SGLang's
kernel tables), the standard library's ``Makefile``, and every ``DIR/{json,dockerfile,makefile}/*`` given with
``--corpus`` (e.g. files taken from public repositories that launch SGLang).  Prints a Markdown table per format.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from kv4lint.frontends import dockerfile as hand_docker  # noqa: E402
from kv4lint.frontends import json_ as hand_json  # noqa: E402
from kv4lint.frontends import makefile as hand_make  # noqa: E402

try:
    import tree_sitter
    import tree_sitter_dockerfile
    import tree_sitter_json
    import tree_sitter_make
except ImportError as e:  # pragma: no cover - a message for a venv without them
    sys.exit(f"bench/grammars.py: {e}; pip install tree-sitter-json tree-sitter-dockerfile tree-sitter-make")


def parser(mod) -> tree_sitter.Parser:
    with warnings.catch_warnings():  # grammars built for an older binding hand over an int
        warnings.simplefilter("ignore", DeprecationWarning)
        return tree_sitter.Parser(tree_sitter.Language(mod.language()))


def best(fn, reps: int) -> float:
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def walk(node) -> int:
    """Visit every node (what a frontend does with the tree at least once); the count."""
    n, cursor = 0, node.walk()
    while True:
        n += 1
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return n


class Chars:
    """tree-sitter's byte offsets as the character offsets kv4lint works in."""

    def __init__(self, text: str):
        self.ascii = text.isascii()
        if not self.ascii:
            self.map = [0] * (len(text.encode("utf-8")) + 1)
            b = 0
            for i, ch in enumerate(text):
                w = len(ch.encode("utf-8"))
                for k in range(w):
                    self.map[b + k] = i
                b += w
            self.map[b] = len(text)

    def __call__(self, byte: int) -> int:
        return byte if self.ascii else self.map[byte]


def nodes(root, types: set[str]):
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in types:
            yield n
        stack.extend(reversed(n.children))


def files(patterns: list[str]) -> list[Path]:
    out: list[Path] = []
    for pat in patterns:
        out += [Path(p) for p in sorted(glob.glob(pat, recursive=True))
                if os.path.isfile(p) and not p.endswith((".expected", ".fixed"))]
    return out


def read(p: Path) -> str | None:
    try:
        return p.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def speeds(texts: list, parse, ts: tree_sitter.Parser, reps: int) -> tuple[float, float]:
    """The hand-written ``parse`` of every text, and the grammar's parse with one walk of every node."""
    def run_hand():
        for _, t in texts:
            parse(t)

    def run_ts():
        for _, t in texts:
            walk(ts.parse(t.encode("utf-8")).root_node)

    return best(run_hand, reps), best(run_ts, reps)


def table(title: str, rows: list[tuple[str, str, str]]) -> None:
    print(f"\n### {title}\n\n| measure | hand-written scanner | tree-sitter grammar |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


# ---------------------------------------------------------------------------
# JSON


def json_report(paths: list[Path], reps: int) -> None:
    ts = parser(tree_sitter_json)
    texts = [(p, t) for p in paths if (t := read(p)) is not None]
    plain = [(p, t) for p, t in texts if not p.name.endswith((".jsonl", ".ndjson"))]
    size = sum(len(t) for _, t in plain)
    hand_ok, hand_err, ts_err, string_offsets, string_mismatch = 0, 0, 0, 0, 0
    differ = []
    for p, t in plain:
        try:
            root = hand_json.parse(t)
            hand_ok += 1
        except hand_json.JSONError as e:
            root = None
            hand_err += 1
            why = str(e)
        tree = ts.parse(t.encode("utf-8"))
        if tree.root_node.has_error:
            ts_err += 1
        if (root is None) != tree.root_node.has_error:
            try:
                json.loads(t)
                valid = "valid JSON"
            except ValueError:
                valid = "not JSON to json.loads"
            differ.append(f"{p.name}: {'hand: ' + why if root is None else 'grammar: ERROR'}; {valid}")
        if root is None:
            continue
        chars = Chars(t)
        hand_strings = sorted((n.start, n.end) for n in _json_strings(root))
        ts_strings = sorted((chars(n.start_byte), chars(n.end_byte)) for n in nodes(tree.root_node, {"string"}))
        string_offsets += len(hand_strings)
        string_mismatch += len(set(hand_strings) ^ set(ts_strings))

    def run_hand():
        for _, t in plain:
            try:
                hand_json.parse(t)
            except hand_json.JSONError:
                pass

    def run_ts():
        for _, t in plain:
            ts.parse(t.encode("utf-8"))

    def run_ts_walk():
        for _, t in plain:
            walk(ts.parse(t.encode("utf-8")).root_node)

    def run_stdlib():
        for _, t in plain:
            try:
                json.loads(t)
            except ValueError:
                pass

    h, s, w, j = best(run_hand, reps), best(run_ts, reps), best(run_ts_walk, reps), best(run_stdlib, reps)
    # JSON Lines: 20,000 lines, the hostile shape of issue 34.
    lines = "".join(json.dumps({"id": i, "cmd": f"python -m sglang.launch_server --port {30000 + i}"}) + "\n"
                    for i in range(20000))
    hl = best(lambda: hand_json.parse_lines(lines), max(1, reps // 2))
    tl = best(lambda: ts.parse(lines.encode()), max(1, reps // 2))
    jsonc = '// settings\n{"a": 1, /* x */ "b": [1, 2,],}\n'
    hand_c = _hand_json_verdict(jsonc, "read (comments and trailing commas)")
    tc = ts.parse(jsonc.encode()).root_node
    ts_c = "comments read; trailing commas are ERROR/MISSING nodes" if tc.has_error else "read"
    broken = '{"a": "python -m sglang.launch_server --kv-cache-dtype fp4_e2m1", "b": [1, 2\n"c": {"d": 3}}\n'
    hand_b = _hand_json_verdict(broken, "read")
    tb = ts.parse(broken.encode()).root_node
    ts_b = f"has_error={tb.has_error}; strings still found: {sum(1 for _ in nodes(tb, {'string'}))}"
    table(f"JSON ({len(plain)} files, {size / 1e6:.1f} MB; stdlib json.loads {j * 1e3:.0f} ms)", [
        ("parse, all files (min of %d)" % reps, f"{h * 1e3:.0f} ms",
         f"{s * 1e3:.0f} ms; with one walk of every node {w * 1e3:.0f} ms"),
        ("JSON Lines, 20,000 lines (1.7 MB)", f"{hl * 1e3:.0f} ms",
         f"{tl * 1e3:.0f} ms (one tree; no per-line values)"),
        ("files read / with errors", f"{hand_ok} / {hand_err}", f"{len(plain) - ts_err} / {ts_err} with ERROR nodes"),
        ("string spans (start, end) equal", f"{string_offsets} strings",
         f"{string_offsets - string_mismatch // 2} equal after byte -> character offsets"),
        ("escapes (\\u0034 ...)", "decoded, each character's file offset kept (fixes from bytes)",
         "escape_sequence nodes: decoding and offsets are the frontend's to write"),
        ("JSON with comments, trailing commas", hand_c, ts_c),
        ("error recovery (a missing `]`)", hand_b, ts_b),
    ])
    print("\nFiles where only one of them reports an error:\n" + "".join(f"- {d}\n" for d in differ))


def _hand_json_verdict(text: str, ok: str) -> str:
    try:
        hand_json.parse(text)
        return ok
    except hand_json.JSONError as e:
        return f"file error at offset {e.offset} ({e})"


def _json_strings(n):
    stack = [n]
    while stack:
        x = stack.pop()
        if x.kind == "str":
            yield x
        elif x.kind == "arr":
            stack.extend(x.value)
        elif x.kind == "obj":
            for _k, kn, v in x.value:
                stack += [kn, v]


# ---------------------------------------------------------------------------
# Dockerfile


def docker_report(paths: list[Path], reps: int) -> None:
    ts = parser(tree_sitter_dockerfile)
    texts = [(p, t) for p in paths if (t := read(p)) is not None]
    size = sum(len(t) for _, t in texts)
    instr = mismatch = ts_err = heredoc_files = heredoc_same = 0
    for p, t in texts:
        hand, _escape = hand_docker.parse(t)
        tree = ts.parse(t.encode("utf-8"))
        if tree.root_node.has_error:
            ts_err += 1
        chars = Chars(t)
        ts_instr = [(chars(c.start_byte), t[chars(c.start_byte):].split(None, 1)[0].upper())
                    for c in tree.root_node.children if c.type.endswith("_instruction")]
        hand_instr = [(i.start, i.keyword) for i in hand]
        instr += len(hand_instr)
        mismatch += len(set(hand_instr) ^ set(ts_instr))
        if any(i.heredocs for i in hand):
            heredoc_files += 1
            hand_bodies = [h.body for i in hand for h in i.heredocs]
            ts_bodies = ["".join(t[chars(x.start_byte):chars(x.end_byte)] + "\n"
                                 for x in b.children if x.type == "heredoc_line")
                         for b in nodes(tree.root_node, {"heredoc_block"})]
            heredoc_same += hand_bodies == ts_bodies

    h, s = speeds(texts, hand_docker.parse, ts, reps)
    escape = "# escape=`\nFROM x\nRUN echo a `\n    b\n"
    te = ts.parse(escape.encode()).root_node
    table(f"Dockerfile ({len(texts)} files, {size / 1e6:.2f} MB)", [
        ("parse, all files (min of %d)" % reps, f"{h * 1e3:.1f} ms", f"{s * 1e3:.1f} ms (parse and one walk)"),
        ("instructions (start, keyword) equal", f"{instr}", f"{instr - mismatch // 2} equal; files with ERROR "
                                                            f"nodes: {ts_err}"),
        ("heredocs in RUN/COPY", f"{heredoc_files} files with heredocs", f"bodies equal in {heredoc_same} of "
                                                                         f"{heredoc_files}"),
        ("`# escape=` directive", "honoured (continuations, words)",
         "has_error=%s: the grammar knows only `\\`" % te.has_error),
        ("shell in RUN", "handed to the shell frontend (tree-sitter-bash) with an offset map",
         "shell_fragment text: the same hand-off"),
    ])


# ---------------------------------------------------------------------------
# Makefile


def make_report(paths: list[Path], reps: int) -> None:
    ts = parser(tree_sitter_make)
    texts = [(p, t) for p in paths if (t := read(p)) is not None]
    size = sum(len(t) for _, t in texts)
    recipes = ts_recipes = ts_err = 0
    for p, t in texts:
        _vars, rec, _one = hand_make.parse(t)
        recipes += len(rec)
        tree = ts.parse(t.encode("utf-8"))
        ts_err += tree.root_node.has_error
        ts_recipes += sum(1 for _ in nodes(tree.root_node, {"recipe_line"}))

    h, s = speeds(texts, hand_make.parse, ts, reps)
    dollars = "serve:\n\tfor i in 1 2; do echo $$i; done\n\tpython -m sglang.launch_server --kv-cache-dtype $(KV)\n"
    td = ts.parse(dollars.encode()).root_node
    kinds = sorted({n.type for n in nodes(td, {"escape", "variable_reference", "shell_text"})})
    table(f"Makefile ({len(texts)} files, {size / 1e6:.2f} MB)", [
        ("parse, all files (min of %d)" % reps, f"{h * 1e3:.1f} ms", f"{s * 1e3:.1f} ms (parse and one walk)"),
        ("recipe lines", f"{recipes} logical lines", f"{ts_recipes} recipe_line nodes; files with ERROR nodes: "
                                                     f"{ts_err}"),
        ("`$$` in recipes", "`$` in the shell text, offsets kept", f"node types: {', '.join(kinds)}"),
        ("`define`, `include`, `.ONESHELL`, recipe prefix", "read (include: variables of the included file)",
         "define/include nodes; .RECIPEPREFIX: not modelled"),
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", default=[], help="a directory with json/, dockerfile/, makefile/")
    ap.add_argument("--reps", type=int, default=5)
    ns = ap.parse_args(argv)
    fx, tree = ROOT / "fixtures", HERE / "out" / "tree"
    extra = [str(Path(c).resolve()) for c in ns.corpus]
    json_report(files([f"{fx}/json/**/*.json*", f"{tree}/sglang-src/**/*.json",
                       *(f"{c}/json/*" for c in extra)]), ns.reps)
    docker_report(files([f"{fx}/dockerfile/*", *(f"{c}/dockerfile/*" for c in extra)]), ns.reps)
    make_report(files([f"{fx}/makefile/**/Makefile", f"{fx}/makefile/**/*.mk", f"{tree}/stdlib/**/Makefile",
                       *(f"{c}/makefile/*" for c in extra)]), ns.reps)
    print(f"\ntree-sitter {getattr(tree_sitter, '__version__', '?')}; Python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
