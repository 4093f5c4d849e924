"""The performance table (issue 37; docs/performance.md quotes it): each row is a ratio, a subject over a
baseline measured in the same run, interleaved with every other case, against a target.

``bench/run.py --only table`` runs these cases alone; ``--markdown`` also prints the table as docs/performance.md
holds it (``tests/test_bench_table.py`` checks that that page's table is this function's output: its header,
its rows' labels and targets, the shape of each measured cell).

Adding a row (e.g. a 2 MB YAML file): a generator in ``bench/shapes.py`` and one :class:`LargeFile` in
``LARGE_FILES`` (its label, the parser it is measured against, its target); other kinds of rows: one
:class:`Row` in :func:`rows` and the cases it names in :func:`cases`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import shapes  # noqa: E402 - bench/ is not a package

PATTERN = "sglang|ServerArgs|kv_cache_dtype|kv-cache-dtype"  # the grep, the floor of the tree rows


class Row:
    """``subject`` / ``baseline`` (case names), both by ``metric`` (``min_s``: wall; ``cpu_min_s``: the child's
    CPU time), the minimum of the repetitions; ``target``: the ratio not to exceed (None: a reference)."""

    def __init__(self, key: str, label: str, subject: str, baseline: str, target: float | None, *,
                 metric: str = "min_s", against: str = "grep"):
        self.key, self.label, self.subject, self.baseline = key, label, subject, baseline
        self.target, self.metric, self.against = target, metric, against


class LargeFile:
    """A row for one generated file: ``kv4lint check FILE --no-cache`` against ``parser``'s own parse of the
    same file in a fresh interpreter (start-up, import and parse: what reading it at its parser's speed costs)."""

    def __init__(self, key: str, label: str, make, parser: str, target: float, *, metric: str = "min_s"):
        self.key, self.label, self.make, self.parser = key, label, make, parser
        self.target, self.metric = target, metric


# The ecosystem parser each large file is measured against: a program that parses the file named by argv[1].
PARSERS = {
    "tree-sitter-bash": "import sys, tree_sitter as t, tree_sitter_bash as b\n"
                        "t.Parser(t.Language(b.language())).parse(open(sys.argv[1], 'rb').read())\n",
}

# The seconds as ratios: tree-sitter-bash parses the 2 MB script in 0.14 s and the install script in
# 0.036 s on this project's machine (start-up included), so "<= 1 s" is 7 x and "<= 0.3 s CPU" 8 x.
LARGE_FILES = [
    LargeFile("shell_2mb", "one 2 MB shell script with launches (CLI)", shapes.shell_2mb, "tree-sitter-bash", 7.0),
    LargeFile("install_sh", "a 3,125-line `install.sh` shaped like RLinf's, naming sglang, launching nothing (CPU)",
              shapes.rlinf_install_sh, "tree-sitter-bash", 8.0, metric="cpu_min_s"),
]


def rows() -> list[Row]:
    return [
        Row("cold", "cold, SGLang 0.5.23's sources plus held-out cases", "kv4lint:cold", "grep:sglang", 6.0),
        Row("stdlib", "cold, the standard library", "kv4lint:stdlib", "grep:stdlib", 2.0),
        Row("warm", "second run, cache warm, nothing changed", "kv4lint:warm", "grep:sglang", 1.5),
        Row("flake8", "flake8 `--select E9` CPU with / without the plugin, 160 files with 10 launch files",
            "flake8-with", "flake8-without", 1.05, metric="cpu_min_s", against="flake8"),
        *(Row(f.key, f.label, f"kv4lint:{f.key}", f"parse:{f.key}", f.target, metric=f.metric, against=f.parser)
          for f in LARGE_FILES),
        Row("ruff", "reference: cold, as above, against ruff `--select E9` on the same files", "kv4lint:cold",
            "ruff", None, against="ruff"),
    ]


PREFIX = "t37/"  # the table's case names in the results, apart from the other sections'


def cases(ctx) -> tuple[list, dict]:
    """The cases of every row (``ctx``: what bench/run.py knows; ``ctx.case(name, cmd, ...)`` makes one).
    Returns them and what the run should say about them (a missing tool, the samples)."""
    tree, out = ctx.tree, ctx.out
    info: dict = {"pattern": PATTERN, "missing": {}}
    sg, std = tree / "sglang-src", tree / "stdlib"
    if not sg.is_dir():
        return [], dict(info, skipped="no tree/sglang-src (--tree given)")
    made = []

    def case(name, cmd, **kw):
        made.extend(ctx.case(PREFIX + name, cmd, **kw))

    opts = ["--isolated", "--exit-zero", "--format", "json", "--output-file", os.devnull]
    held = tree / "held-out"
    both = [str(sg)] + ([str(held)] if held.is_dir() else [])
    info["files"] = {"sglang": sum(ctx.count(Path(d)) for d in both), "stdlib": ctx.count(std),
                     "held_out": held.is_dir()}
    case("grep:sglang", ["grep", "-rlE", PATTERN, *both], env=ctx.env_c, ok_codes=(0, 1))
    case("grep:stdlib", ["grep", "-rlE", PATTERN, str(std)], env=ctx.env_c, ok_codes=(0, 1))
    case("kv4lint:cold", [*ctx.kv4, "check", *both, *opts, "--no-cache"], kv4lint=True)
    case("kv4lint:stdlib", [*ctx.kv4, "check", str(std), *opts, "--no-cache"], kv4lint=True)
    cache = out / "cache-table"
    case("kv4lint:warm", [*ctx.kv4, "check", *both, *opts, "--cache-dir", str(cache)], kv4lint=True, cache=cache)
    ruff = ctx.tool("ruff")
    if ruff is None:
        info["missing"]["ruff"] = ctx.why("ruff")
    else:
        case("ruff", [ruff, "check", "--isolated", "--no-cache", "--no-respect-gitignore", "--select", "E9",
                      "--exit-zero", "--quiet", *both])
    sample, sample_info = flake8_sample(out, sg)
    info["flake8_sample"] = sample_info
    f8 = ["-m", "flake8", "--isolated", "--select", "E9", "-j", "1", "."]
    per_rep = -(-7 // max(1, ctx.reps))  # at least 7 samples of each flake8 case
    if ctx.noplugin_python is None:
        info["missing"]["flake8 without kv4lint"] = ctx.why("flake8")
    else:
        case("flake8-without", [ctx.noplugin_python, *f8], cwd=str(sample), env=ctx.env_py, ok_codes=(0, 1),
             per_rep=per_rep)
    case("flake8-with", [sys.executable, *f8], cwd=str(sample), env=ctx.env_py, ok_codes=(0, 1), per_rep=per_rep,
         kv4lint=True)
    for f in LARGE_FILES:
        path = f.make(out)
        info.setdefault("files_made", {})[f.key] = {"path": str(path), "bytes": path.stat().st_size,
                                                    "lines": path.read_bytes().count(b"\n")}
        # Exit 1 too: a bound met in the file is a file error (what the row measures is the time to say so).
        case(f"kv4lint:{f.key}", [*ctx.kv4, "check", str(path), *opts, "--no-cache"], kv4lint=True, ok_codes=(0, 1))
        case(f"parse:{f.key}", [sys.executable, "-c", PARSERS[f.parser], str(path)], env=ctx.env_py)
    return made, info


def flake8_sample(out: Path, sg: Path, others: int = 150, launches: int = 10,
                  name: str = "flake8-sample") -> tuple[Path, dict]:
    """160 Python files: 150 of SGLang's sources (every k-th) and 10 of the project's Python fixtures that hold a
    finding (launches), hard-linked into ``out/<name>``; rebuilt on every run."""
    dest = out / name
    if dest.exists():
        shutil.rmtree(dest)
    py = sorted(sg.rglob("*.py"))
    k = max(1, len(py) // others)
    chosen = [(p, Path("sglang-src") / p.relative_to(sg)) for p in py[::k][:others]]
    fixtures = ROOT / "fixtures" / "python"
    with_findings = [p for p in sorted(fixtures.glob("*.py"))
                     if re.search(r"^\d+:\d+\S* KV4", p.with_name(p.name + ".expected").read_text(encoding="utf-8")
                                  if p.with_name(p.name + ".expected").exists() else "", re.M)]
    chosen += [(p, Path("launches") / p.name) for p in with_findings[:launches]]
    for src, rel in chosen:
        d = dest / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, d)
        except OSError:
            shutil.copyfile(src, d)
    return dest, {"path": str(dest), "files": len(chosen), "launch_files": [p.name for p in with_findings[:launches]]}


# ---------------------------------------------------------------------------
# The table


def measure(results: dict, suffix: str = "") -> list[dict]:
    """Each row's ratio (``suffix``: of the ``@baseline`` or ``@installed`` copies of the subject)."""
    out = []
    for row in rows():
        s, b = results.get(PREFIX + row.subject + suffix, {}), results.get(PREFIX + row.baseline, {})
        x, y = s.get(row.metric), b.get(row.metric)
        ratio = x / y if x and y else None
        med = row.metric.replace("min", "median")
        xm, ym = s.get(med), b.get(med)
        out.append({"key": row.key, "label": row.label, "ratio": ratio,
                    "ratio_median": xm / ym if xm and ym else None, "subject_s": x, "baseline_s": y,
                    "target": row.target, "met": None if ratio is None or row.target is None else ratio <= row.target,
                    "against": row.against, "error": s.get("error") or b.get("error")})
    return out


HEADER = "| case | kv4lint / baseline (min of N) | baseline | before, same run | target |"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} ×"


def _s(v: float | None) -> str:
    return "-" if v is None else (f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s")


def target_cell(row: Row) -> str:
    return "reference" if row.target is None else f"≤ {row.target:g} ×"


def markdown(now: list[dict], before: list[dict] | None = None) -> str:
    """The table as docs/performance.md holds it."""
    lines = [HEADER, "|---|---|---|---|---|"]
    by_key = {r.key: r for r in rows()}
    for i, r in enumerate(now):
        row = by_key[r["key"]]
        ratio = _x(r["ratio"]) + ("" if r["subject_s"] is None else f" ({_s(r['subject_s'])})")
        verdict = "" if r["met"] is None else (": met" if r["met"] else ": missed")
        b = before[i]["ratio"] if before else None
        lines.append(f"| {row.label} | {ratio} | {row.against} {_s(r['baseline_s'])} | {_x(b)} | "
                     f"{target_cell(row)}{verdict} |")
    return "\n".join(lines) + "\n"


def report(doc: dict) -> None:
    t = doc.get("table")
    if not t:
        return
    info = t["info"]
    print(f"\nthe performance table (issue 37), min of {doc['reps']} interleaved repetitions; "
          f"grep -rlE {PATTERN!r} (LC_ALL=C)")
    for name, why in info.get("missing", {}).items():
        print(f"  MISSING baseline tool: {name}: {why} (its row is not measured)")
    for r in t["rows"]:
        if r["error"]:
            print(f"  {r['label']}: error: {r['error'].splitlines()[-1][:200]}")
    print(markdown(t["rows"], t.get("before")))
    installed = [r for r in t.get("installed") or [] if r["ratio"] is not None]
    if installed:
        print("installed copy (pip install .: no editable-install finder at start-up): "
              + ", ".join(f"{r['key']} {r['ratio']:.2f} × ({_s(r['subject_s'])})" for r in installed))
    files = info.get("files", {})
    if files:
        where = "plus tree/held-out" if files.get("held_out") else "(no held-out cases: --held-out DIR)"
        made = ", ".join(f"{k} {v['bytes'] / 1e6:.2f} MB, {v['lines']} lines"
                         for k, v in info.get("files_made", {}).items())
        print(f"files: SGLang's sources {where} {files.get('sglang')}, the standard library {files.get('stdlib')}; "
              f"flake8 sample: {info.get('flake8_sample', {}).get('files')} files; made: {made}")
