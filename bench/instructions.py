#!/usr/bin/env python3
"""Instructions, not seconds: the performance table's kv4lint cases counted by ``valgrind --tool=callgrind``.

The table (bench/table.py) times every case against a baseline measured in the same run, because this machine is
shared and its speed moves.  It moves more than a run can cancel: the same code read 7.00 x grep on the cold row in
one session and 9.43 x in the next, on another machine of the same kind, where Python ran about half again slower
and grep hardly.  An instruction count does not move with the machine's load or its clock: it tells whether the code
got cheaper or only the machine faster.  It is not a time (a cache miss costs more than an add), so the table keeps
its seconds; this is its companion.

    python bench/instructions.py                        # the 2 MB script, the install script, the cold tree
    python bench/instructions.py --baseline DIR         # and the same from the sources in DIR ("before")
    python bench/run.py --only instructions --baseline DIR

Cases (the table's own commands): each large file of ``table.LARGE_FILES`` checked with ``--no-cache`` and parsed
by its parser alone (the row's floor: the ratio is kv4lint's instructions over the parser's), the 2 MB script
checked again with its parse read from the cache, and, when the bench's tree is there, the cold run over SGLang's
sources (every process it forks counted), the second run over them with the cache the first left, and flake8 with
the plugin against flake8 without it (the floor) on a 40-file sample with the flake8 row's 10 launch files.  Each
command runs once first, outside valgrind, so that Python's bytecode caches are written as an installed kv4lint has
them (and the second runs' caches are warm).  Writes
``bench/out/instructions-<timestamp>.json``.  Not part of the test suite; slow (about 50 times the run's CPU).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import table  # noqa: E402 - bench/ is not a package

OPTS = ["--isolated", "--exit-zero", "--format", "json", "--output-file", os.devnull]  # as the table's cases
_TOTAL = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.M)


def totals(path: str | Path) -> int:
    """The instruction count (the first event, ``Ir``) of one callgrind output file."""
    m = _TOTAL.search(Path(path).read_bytes())
    if m is None:
        raise ValueError(f"{path}: no summary line (not a callgrind output file?)")
    return int(m.group(1))


def callgrind(cmd: list[str], env: dict | None = None, cwd: str | None = None, ok_codes=(0, 1)) -> int:
    """The instructions ``cmd`` executes, its forked children's included.

    Callgrind writes a file per process, and a forked child starts with its parent's counts so far: summed as they
    are, what the parent did before the fork would count twice.  So the parent writes its counts out and starts
    again from zero as it calls ``fork`` (``--dump-before``: a part file, ``.out.1``), and the child starts from
    zero; every part of every process is summed."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise FileNotFoundError("valgrind is not on PATH (Debian: apt install valgrind)")
    with tempfile.TemporaryDirectory(prefix="kv4lint-cg-") as d:
        valgrind_cmd = [valgrind, "--tool=callgrind", "--dump-before=fork", f"--callgrind-out-file={d}/cg.%p.out"]
        run = subprocess.run([*valgrind_cmd, *cmd], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        if run.returncode not in ok_codes:
            tail = run.stderr.decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode} under valgrind: {' / '.join(tail)}")
        outs = sorted(Path(d).glob("cg.*.out*"))  # cg.PID.out, and cg.PID.out.1 ... for the parts dumped before
        if not outs:
            raise RuntimeError(f"{' '.join(cmd)}: callgrind wrote no output")
        return sum(totals(p) for p in outs)


def cases(out: Path, baseline: str | None, tree: Path | None) -> list[dict]:
    """The commands counted: ``{"key", "label", "cmd", "env", "floor"}`` (``floor``: the parser's command, for the
    large files), and with ``baseline`` each kv4lint command again from those sources (``"before"``)."""
    from run import from_source, kv4lint_command, python_env, with_path_first  # bench/run.py's, as it runs them

    kv4 = kv4lint_command()
    # One hash seed for every count: Python's sets and dicts of strings are walked in the seed's order, and the same
    # code counted under two seeds differs by up to about 0.3 % (the cold run read +0.3 % and -0.1 % for one change).
    env = {**python_env(), "PYTHONHASHSEED": "0"}
    out_cases = []
    for f in table.LARGE_FILES:
        path = f.make(out)
        out_cases.append({"key": f.key, "label": f.label, "cmd": [*kv4, "check", str(path), *OPTS, "--no-cache"],
                          "floor": [sys.executable, "-c", table.PARSERS[f.parser], str(path)],
                          "against": f.parser})
        if f.key == "shell_2mb":
            # Not a row of the table: the same script checked again, its parse read from the cache the first,
            # uncounted run stored (a second `kv4lint check FILE`, as pre-commit runs it); against the same floor.
            again = _second_run(kv4, out / "cache-instructions-2mb", "shell_2mb_cached",
                                "the 2 MB script again, its parse from the cache", [str(path)], OPTS)
            out_cases.append(dict(again, floor=out_cases[-1]["floor"], against=f.parser))
    sg = tree / "sglang-src" if tree is not None else None
    if sg is not None and sg.is_dir():
        out_cases.append({"key": "cold", "label": "cold, SGLang's sources (every forked process)",
                          "cmd": [*kv4, "check", str(sg), *OPTS, "--no-cache"], "floor": None, "against": None})
        out_cases.append(_second_run(kv4, out / "cache-instructions", "warm", "second run, cache warm, nothing changed",
                                     [str(sg)], OPTS))
        # Not a row of the table: the same second run over a tree that also holds findings to print and
        # configuration files (the project's fixtures, not --isolated): what a repository with launches costs.
        fx = tree / "kv4lint-fixtures"
        if fx.is_dir():
            out_cases.append(_second_run(kv4, out / "cache-instructions-fixtures", "warm_fixtures",
                                         "second run over them and the fixtures (findings, configuration files)",
                                         [str(sg), str(fx)], [o for o in OPTS if o != "--isolated"]))
        # The flake8 row's plugin: flake8 -j1 with it against flake8 without it (the venv bench/run.py made, when
        # it is there), on a sample a quarter of the row's: the same 10 launch files and 30 of SGLang's (under
        # callgrind the row's 160 take minutes a count).
        without = out / "venv-noplugin" / "bin" / "python"
        if without.exists():
            sample, _info = table.flake8_sample(out, sg, others=30, name="flake8-sample-instructions")
            f8 = ["-m", "flake8", "--isolated", "--select", "E9", "-j", "1", "."]
            out_cases.append({"key": "flake8", "label": "flake8 `--select E9` -j1 with / without the plugin, 40 files"
                              " with 10 launch files", "cmd": [sys.executable, *f8], "cwd": str(sample),
                              "floor": [str(without), *f8], "against": "flake8"})
    for c in out_cases:
        c["env"] = env
        if baseline:
            c["before_cmd"] = from_source(c["cmd"], c.get("cache"))
            c["before_env"] = with_path_first(env, baseline)
    return out_cases


def _second_run(kv4: list[str], cache: Path, key: str, label: str, roots: list[str], opts: list[str]) -> dict:
    """A second run's case over ``roots`` with ``cache``, emptied, as the baseline's (its ``-baseline`` twin:
    run.from_source) is: the run before it (measure's first, uncounted run) fills it as a first run does."""
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(f"{cache}-baseline", ignore_errors=True)
    return {"key": key, "label": label, "cmd": [*kv4, "check", *roots, *opts, "--cache-dir", str(cache)],
            "floor": None, "against": None, "cache": cache}


def measure(out: Path, baseline: str | None = None, tree: Path | None = None, log=print) -> dict:
    """Count every case (kv4lint, its floor, its baseline); the results as written to ``out``."""
    rows = []
    for c in cases(out, baseline, tree):
        row = {"key": c["key"], "label": c["label"], "against": c["against"]}
        for name, cmd, env in (("now", c["cmd"], c["env"]), ("floor", c.get("floor"), c["env"]),
                               ("before", c.get("before_cmd"), c.get("before_env"))):
            if cmd is None:
                continue
            subprocess.run(cmd, env=env, cwd=c.get("cwd"), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # bytecode caches
            log(f"counting {c['key']} ({name}) under callgrind ...")
            row[name] = callgrind(cmd, env=env, cwd=c.get("cwd"))
        rows.append(row)
    doc = {"when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "baseline": baseline,
           "rows": rows}
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"instructions-{stamp}.json").write_text(json.dumps(doc, indent=1) + "\n")
    doc["path"] = str(out / f"instructions-{stamp}.json")
    return doc


def markdown(rows: list[dict]) -> str:
    """The counts as a Markdown table: instructions (billions), over the floor, before, and the change."""
    lines = ["| case | kv4lint (instructions) | floor | kv4lint / floor | before | change |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        now, floor, before = r.get("now"), r.get("floor"), r.get("before")
        lines.append("| " + " | ".join([
            r["label"],
            f"{now / 1e9:.2f}e9",
            f"{r['against']} {floor / 1e9:.3f}e9" if floor else "-",
            f"{now / floor:.2f} ×" if floor else "-",
            f"{before / 1e9:.2f}e9" if before else "-",
            f"{100 * (now - before) / before:+.1f} %" if before else "-",
        ]) + " |")
    return "\n".join(lines)


def report(doc: dict) -> None:
    print(markdown(doc["rows"]))
    print(f"\nresults: {doc['path']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "out"), help="where the files are made and the results written")
    ap.add_argument("--baseline", metavar="DIR", help="also count every kv4lint case from the sources in DIR")
    ap.add_argument("--tree", help="the bench's tree (default: OUT/tree, when bench/run.py has built it)")
    ns = ap.parse_args(argv)
    out = Path(ns.out).resolve()
    tree = Path(ns.tree).resolve() if ns.tree else out / "tree"
    report(measure(out, ns.baseline, tree, log=lambda m: print(m, file=sys.stderr)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
