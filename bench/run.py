#!/usr/bin/env python3
"""kv4lint's speed benchmark (see bench/README.md).

    python bench/run.py            # build what it needs, 5 repetitions per case
    python bench/run.py --quick    # 2 repetitions, for a first look

Builds a large realistic tree under ``bench/out/tree`` (SGLang's own sources
from its wheel, the Python standard library, and kv4lint's fixtures, so that
there is real work), then measures in one run, with the repetitions of all
cases interleaved so that a noisy machine slows them alike:

- the floor: ``grep -rlE GREP_PATTERN`` (kv4lint.files.prefilter) over the tree;
- ``kv4lint check`` over the tree with 1 job and with all cores;
- flake8 ``--select E9`` in a venv without kv4lint and in this one (with the
  plugin), i.e. the plugin's overhead;
- for reference, ``ruff check --select E9 --no-cache`` and libcst parsing of
  every pre-filter candidate (in-process);
- ``kv4lint check`` on one launch script (the pre-commit case), start-up
  included, and ``python -X importtime`` summaries.

Prints min and median per case and the ratios of the targets, and writes
``bench/out/results-<timestamp>.json``.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import glob
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import textwrap
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREE_FORMAT = 2  # bump when the tree's recipe changes

TARGETS = {  # issue 8
    "kv4lint_j1_over_grep": 3.0,
    "kv4lint_jN_over_grep": 3.0,
    "flake8_with_over_without": 1.05,
    "single_file_wall_s": 0.3,
}

# Issue 21: the hard tree (SGLang's own sources), against grep with the issue's own pattern.
ISSUE21_PATTERN = "sglang|ServerArgs|kv_cache_dtype|kv-cache-dtype"
ISSUE21_TARGETS = {
    "cold_sglang_over_grep": 10.0,  # kv4lint check --no-cache tree/sglang-src / grep (min / min)
    "warm_sglang_over_grep": 2.0,  # the same with the cache of an earlier run
    "flake8_j1_cpu_with_over_without": 1.05,  # flake8 --select E9 -j1, child CPU (min / min), 160-file sample
    "cold_stdlib_over_grep": 2.5,  # kv4lint check --no-cache tree/stdlib / grep
    "single_file_wall_s": 0.3,
}
ISSUE21_CASES = ("grep21:sglang", "kv4lint:sglang", "kv4lint:sglang:cached", "grep21:stdlib", "kv4lint:stdlib",
                 "flake8-j1-without:sglang", "flake8-j1-with:sglang")

import table  # noqa: E402 - bench/table.py, beside this file

# Issues 34 and 37: large files, each against its parser alone (a subprocess that imports the parser and parses
# the file: what reading it at the speed of its parser costs) and, with --baseline, the same command from another
# source tree in the same rounds. The files are generated (tests/large_inputs.py, shaped like real ones).
LARGE_TARGETS = {
    "large_shell_wall_s": 1.0,  # one 2 MB shell script with launches, `kv4lint check`, wall (min)
    "large_install_cpu_s": 0.3,  # an installer shaped like RLinf's requirements/install.sh, CPU (min)
}
LARGE_FILES = {  # case -> (file name, generator, size, parser floor)
    "large:shell": ("serve-2mb.sh", "launch_script", 1600, "shell"),
    "large:install": ("install.sh", "install_script", 16, "shell"),
    "large:python": ("serve-2mb.py", "python_launches", 4500, "python"),
}
PARSE_SNIPPETS = {
    "shell": "import sys, tree_sitter, tree_sitter_bash\nlang = tree_sitter.Language(tree_sitter_bash.language())\n"
             "tree_sitter.Parser(lang).parse(open(sys.argv[1], 'rb').read())",
    "python": "import sys, libcst\nlibcst.parse_module(open(sys.argv[1], encoding='utf-8').read())",
}

try:
    import kv4lint
    from kv4lint.files.discover import DEFAULT_EXCLUDES, discover, excluded, language_of
    from kv4lint.files.prefilter import GREP_PATTERN, might_launch_bytes
except ImportError:  # pragma: no cover - message for a fresh clone
    sys.exit("bench/run.py: kv4lint is not importable; run it with the project's venv "
             "(python -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python bench/run.py)")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The tree


WHEEL_CACHE = Path(os.environ.get("KV4LINT_WHEEL_CACHE") or Path.home() / ".cache" / "kv4lint" / "sglang-wheels")


def find_wheel(version: str, out: Path, wheel_dirs: list[str]) -> Path:
    pat = f"sglang-{version}-*.whl"
    for d in wheel_dirs + [str(out / "wheels")]:
        hits = sorted(glob.glob(os.path.join(d, pat)))
        if hits:
            return Path(hits[0])
    dest = out / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    log(f"downloading sglang=={version} (no dependencies) into {dest} ...")
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                    "-d", str(dest), f"sglang=={version}"], check=True)
    hits = sorted(glob.glob(str(dest / pat)))
    if not hits:
        sys.exit(f"bench/run.py: pip download gave no {pat} in {dest}")
    return Path(hits[0])


def _keep(rel: str, head: bytes | None = None) -> bool:
    """Keep the files kv4lint itself would scan, so that every tool sees the same tree."""
    if excluded(rel, DEFAULT_EXCLUDES):
        return False
    return language_of(rel, head) is not None


def _copy_tree(src: Path, dest: Path) -> int:
    n = 0
    for dirpath, dirnames, filenames in os.walk(src):
        rel_dir = os.path.relpath(dirpath, src)
        dirnames[:] = sorted(d for d in dirnames
                             if not excluded(os.path.normpath(os.path.join(rel_dir, d)), DEFAULT_EXCLUDES))
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            head = None
            if "." not in name:
                with open(p, "rb") as f:
                    head = f.read(256)
            if not _keep(rel, head):
                continue
            d = dest / rel
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, d)
            n += 1
    return n


def build_tree(out: Path, version: str, wheel_dirs: list[str], rebuild: bool,
               held_out: str | None = None) -> tuple[Path, dict]:
    tree = out / "tree"
    stamp = out / "tree.json"
    stdlib = sysconfig.get_paths()["stdlib"]
    want = {"format": TREE_FORMAT, "sglang": version, "stdlib": stdlib, "python": platform.python_version()}
    have = None
    if stamp.exists() and tree.is_dir() and not rebuild:
        try:
            have = json.loads(stamp.read_text())
        except ValueError:
            have = None
    if have is None or {k: have.get(k) for k in want} != want:
        log(f"building the tree in {tree} ...")
        if tree.exists():
            shutil.rmtree(tree)
        tree.mkdir(parents=True)
        wheel = find_wheel(version, out, wheel_dirs)
        n_sglang = 0
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                name = info.filename
                if name.endswith("/") or ".dist-info/" in name:
                    continue
                if not _keep(name):
                    continue
                d = tree / "sglang-src" / name
                d.parent.mkdir(parents=True, exist_ok=True)
                d.write_bytes(z.read(info))
                n_sglang += 1
        n_stdlib = _copy_tree(Path(stdlib), tree / "stdlib")
        have = dict(want, wheel=wheel.name, files_sglang=n_sglang, files_stdlib=n_stdlib)
        stamp.write_text(json.dumps(have, indent=1))
    # The tree is a repository of its own (as a checkout of SGLang is): bench/out/ is ignored by kv4lint's own
    # .gitignore, and kv4lint does not walk a directory git ignores, even one named on its command line.
    (tree / ".git").mkdir(exist_ok=True)
    # Held-out cases (--held-out: real files kept out of the fixtures), copied afresh on every run.
    held = tree / "held-out"
    if held.exists():
        shutil.rmtree(held)
    if held_out:
        held.mkdir()
        have = dict(have, files_held_out=_copy_tree(Path(held_out), held))
    # The fixtures change as the project grows: copied afresh on every run.
    fx = tree / "kv4lint-fixtures"
    if fx.exists():
        shutil.rmtree(fx)
    fx.mkdir()
    n_fx = _copy_tree(ROOT / "fixtures", fx) if (ROOT / "fixtures").is_dir() else 0
    have = dict(have, files_fixtures=n_fx)
    return tree, have


def tree_roots(tree: Path) -> list[str]:
    """What kv4lint is given for ``tree``: the built tree's parts (kv4lint does not walk a directory git ignores,
    and the outer repository ignores bench/out/tree itself; its parts are inside the tree's own repository), or a
    directory given with --tree."""
    if (tree / ".git").is_dir() and (tree / "sglang-src").is_dir():
        return [str(p) for p in sorted(tree.iterdir()) if p.is_dir() and not p.name.startswith(".")]
    return [str(tree)]


def tree_stats(tree: Path) -> tuple[dict, list[str], list[str], list[str]]:
    """Files as kv4lint discovers them, their bytes, and the pre-filter candidates (timed in-process)."""
    disc = discover(tree_roots(tree))
    paths = [c.path for c in disc.files]
    langs: dict[str, int] = {}
    for c in disc.files:
        key = c.language or "shebang"
        langs[key] = langs.get(key, 0) + 1
    total = 0
    for p in paths:  # also warms the page cache
        total += os.path.getsize(p)
    langs_of = {c.path: c.language for c in disc.files}
    best = None
    candidates: list[str] = []
    for _ in range(3):
        t0 = time.perf_counter()
        cand = []
        for p in paths:
            with open(p, "rb") as f:
                data = f.read()
            lang = langs_of[p] or language_of(p, data[:256])
            if might_launch_bytes(data, lang):
                cand.append(p)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
        candidates = cand
    py_candidates = [p for p in candidates if language_of(p) == "python"]
    stats = {"files": len(paths), "bytes": total, "languages": langs, "candidates": len(candidates),
             "python_candidates": len(py_candidates), "candidate_share": len(candidates) / max(1, len(paths)),
             "prefilter_in_process_s": best}
    return stats, candidates, py_candidates, paths


def flake8_tree(out: Path, tree: Path, candidates: list[str], target: int,
                name: str = "flake8-tree") -> tuple[Path, dict]:
    """A sample of the tree's Python files for the flake8 cases (flake8 itself is ~100x slower than kv4lint).

    Every k-th pre-filter candidate and every k-th other Python file (about ``target`` files), so that the
    sample has the tree's share of files the plugin must parse; hard-linked, rebuilt on every run.
    """
    dest = out / name
    if dest.exists():
        shutil.rmtree(dest)
    py = sorted(str(p) for p in tree.rglob("*.py"))
    cand = set(candidates)
    k = max(1, round(len(py) / max(1, target)))
    in_cand = [p for p in py if p in cand]
    others = [p for p in py if p not in cand]
    chosen = in_cand[k // 2::k] + others[::k]
    for src in sorted(chosen):
        d = dest / os.path.relpath(src, tree)
        d.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, d)
        except OSError:
            shutil.copyfile(src, d)
    return dest, {"files": len(chosen), "every_kth": k, "bytes": sum(os.path.getsize(c) for c in chosen),
                  "candidates": len(in_cand[k // 2::k]),
                  "candidate_files": [os.path.relpath(c, tree) for c in in_cand[k // 2::k]]}


PLUGIN_SNIPPET = textwrap.dedent("""
    import json, os, sys, time
    from kv4lint.files.prefilter import might_launch
    from kv4lint.flake8_plugin import Plugin
    root = sys.argv[1]
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
    files = []
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            files.append((p, f.readlines()))
    total = cand = 0.0
    n_cand = findings = 0
    t_all = time.process_time()
    for p, lines in files:
        t0 = time.process_time()
        out = list(Plugin(None, lines, p).run())
        dt = time.process_time() - t0
        total += dt
        findings += len(out)
        if might_launch("".join(lines), "python"):
            n_cand += 1
            cand += dt
    print(json.dumps({"files": len(files), "plugin_cpu_s": total, "candidates": n_cand, "candidate_cpu_s": cand,
                      "non_candidate_us_per_file": 1e6 * (total - cand) / max(1, len(files) - n_cand),
                      "findings": findings}))
""")


def plugin_in_process(python: str, root: Path, env: dict) -> dict:
    """The plugin's own CPU time over every file of ``root``, in one process (flake8's reading excluded)."""
    r = _run_quiet([python, "-c", PLUGIN_SNIPPET, str(root)], env=env)
    if r.returncode:
        return {"error": r.stdout[-600:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------
# Tool environments


def _run_quiet(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _stamped(venv: Path, want: dict) -> bool:
    """Whether ``venv`` was made for ``want`` (its ``bench.json``) and still has its Python."""
    try:
        return (venv / "bin" / "python").exists() and json.loads((venv / "bench.json").read_text()) == want
    except (OSError, ValueError):
        return False


def tools_venv(out: Path) -> tuple[Path | None, str]:
    """bench/out/venv-noplugin: this venv's flake8 (same versions), no kv4lint, plus ruff.  Cached."""
    venv = out / "venv-noplugin"
    pins = [f"{n}=={v}" for n in ("flake8", "pycodestyle", "pyflakes", "mccabe") if (v := _dist_version(n))]
    if not any(p.startswith("flake8==") for p in pins):
        return None, "flake8 is not installed in this venv"
    want = {"python": sys.version, "pins": pins + ["ruff"]}
    stamp = venv / "bench.json"
    py = venv / "bin" / "python"
    if _stamped(venv, want):
        return venv, "cached"
    log(f"creating {venv} ({', '.join(pins)}, ruff) ...")
    if venv.exists():
        shutil.rmtree(venv)
    r = _run_quiet([sys.executable, "-m", "venv", str(venv)])
    if r.returncode:
        return None, f"python -m venv failed: {r.stdout.strip()[-300:]}"
    r = _run_quiet([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins, "ruff"])
    if r.returncode:
        return None, f"pip install failed: {r.stdout.strip()[-300:]}"
    stamp.write_text(json.dumps(want))
    return venv, "created"


def installed_venv(out: Path) -> tuple[Path | None, str]:
    """bench/out/venv-kv4lint: this working tree installed as a user installs it (``pip install .``, not
    editable), so that a run starts as a user's does: an editable install makes every start import
    setuptools' path finder (pathlib, urllib ...), about 12 ms here.  Reinstalled when the sources change."""
    venv = out / "venv-kv4lint"
    py = venv / "bin" / "python"
    h = hashlib.sha256(sys.version.encode())
    for f in sorted([ROOT / "pyproject.toml", *(ROOT / "kv4lint").rglob("*")]):
        if f.is_file() and "__pycache__" not in f.parts:
            st = f.stat()
            h.update(f"{f.relative_to(ROOT)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    want = {"python": sys.version, "sources": h.hexdigest()}
    stamp = venv / "bench.json"
    if _stamped(venv, want):
        return venv, "cached"
    if not py.exists():
        log(f"creating {venv} (pip install . with its dependencies) ...")
        r = _run_quiet([sys.executable, "-m", "venv", str(venv)])
        if r.returncode:
            return None, f"python -m venv failed: {r.stdout.strip()[-300:]}"
        extra: list[str] = []
    else:
        log(f"reinstalling this tree in {venv} ...")
        extra = ["--no-deps", "--force-reinstall"]
    r = _run_quiet([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *extra, str(ROOT)])
    if r.returncode:
        return None, f"pip install failed: {r.stdout.strip()[-300:]}"
    stamp.write_text(json.dumps(want))
    return venv, "installed"


def flake8_plugins(python: str) -> str:
    r = _run_quiet([python, "-m", "flake8", "--version"])
    return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else f"error: {r.stdout[-400:]}"


# ---------------------------------------------------------------------------
# Measuring


class Case:
    def __init__(self, name: str, cmd: list[str], *, cwd: str | None = None, env: dict | None = None,
                 ok_codes=(0,), note: str = "", files: int | None = None, per_rep: int = 1):
        self.name, self.cmd, self.cwd, self.env, self.ok_codes, self.note = name, cmd, cwd, env, ok_codes, note
        self.files = files
        self.per_rep = per_rep  # runs per repetition (cheap or noisy cases: more samples)
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.error: str | None = None

    def run_once(self, timeout: float) -> None:
        if self.error:
            return
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            r = subprocess.run(self.cmd, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.error = f"timed out after {timeout:.0f} s"
            return
        except OSError as e:
            self.error = str(e)
            return
        dt = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode not in self.ok_codes:
            tail = r.stderr.decode("utf-8", "replace").strip()[-600:]
            self.error = f"exit {r.returncode}: {tail}"
            return
        self.wall.append(dt)
        self.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))

    def summary(self) -> dict:
        d = {"cmd": " ".join(self.cmd), "note": self.note}
        if self.cwd:
            d["cwd"] = self.cwd
        if self.error:
            d["error"] = self.error
        if self.wall:
            d.update(min_s=min(self.wall), median_s=statistics.median(self.wall), wall_s=self.wall,
                     cpu_min_s=min(self.cpu), cpu_median_s=statistics.median(self.cpu))
            if self.files:
                d["files"] = self.files
                d["files_per_s"] = self.files / min(self.wall)
        return d


LIBCST_SNIPPET = textwrap.dedent("""
    import json, sys, time
    import libcst
    paths = [p for p in open(sys.argv[1], encoding="utf-8").read().splitlines() if p]
    datas = []
    for p in paths:
        with open(p, "rb") as f:
            datas.append(f.read())
    errors = 0
    t0 = time.perf_counter()
    for d in datas:
        try:
            libcst.parse_module(d)
        except Exception:
            errors += 1
    print(json.dumps({"parse_s": time.perf_counter() - t0, "files": len(datas), "errors": errors}))
""")


def libcst_parse(python: str, list_file: Path, reps: int, env: dict | None = None) -> dict:
    times, last = [], {}
    for _ in range(reps):
        r = _run_quiet([python, "-c", LIBCST_SNIPPET, str(list_file)], env=env)
        if r.returncode:
            return {"error": r.stdout[-600:]}
        last = json.loads(r.stdout.strip().splitlines()[-1])
        times.append(last["parse_s"])
    return {"files": last["files"], "parse_errors": last["errors"], "min_s": min(times),
            "median_s": statistics.median(times), "wall_s": times,
            "files_per_s": last["files"] / min(times) if min(times) else None}


_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)")


def importtime(cmd: list[str], cwd: str | None = None, env: dict | None = None) -> dict:
    """Summarise ``python -X importtime``: total, by top-level package (self times), slowest modules."""
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    by_pkg: dict[str, int] = {}
    cumulative: list[tuple[int, str]] = []
    total = 0
    for line in r.stderr.splitlines():
        m = _IMPORTTIME.match(line)
        if not m:
            continue
        self_us, cum_us, name = int(m.group(1)), int(m.group(2)), m.group(4)
        total += self_us
        top = name.split(".")[0]
        by_pkg[top] = by_pkg.get(top, 0) + self_us
        cumulative.append((cum_us, name))
    top_pkgs = sorted(by_pkg.items(), key=lambda kv: -kv[1])[:12]
    third_party = [p for p in ("libcst", "tree_sitter", "tree_sitter_bash", "ruamel", "nbformat", "pathspec",
                               "packaging", "jsonschema", "yaml") if p in by_pkg]
    return {"cmd": " ".join(cmd), "exit": r.returncode, "total_ms": total / 1000,
            "by_package_ms": {k: v / 1000 for k, v in top_pkgs},
            "slowest_cumulative_ms": {n: c / 1000 for c, n in sorted(cumulative, reverse=True)[:10]},
            "third_party_imported": third_party}


def pick_launch_script(out: Path) -> Path:
    """A fixture shell launch script with a finding (the pre-commit case), else a written one."""
    best = None
    for p in sorted((ROOT / "fixtures").glob("shell/*.sh")) if (ROOT / "fixtures").is_dir() else []:
        exp = p.with_name(p.name + ".expected")
        if exp.exists() and any(re.match(r"^\d+:\d+\S* KV", ln) for ln in exp.read_text().splitlines()):
            best = p
            break
    if best is not None:
        return best
    p = out / "launch.sh"
    p.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        # Serve Llama with an FP4 KV cache on ROCm.
        set -euo pipefail
        MODEL=meta-llama/Llama-3.1-8B-Instruct
        export HIP_VISIBLE_DEVICES=0,1
        python3 -m sglang.launch_server --model-path "$MODEL" \\
            --tp 2 --kv-cache-dtype fp4_e2m1 --attention-backend triton --port 30000
        """))
    return p


# ---------------------------------------------------------------------------


def fmt_s(x: float | None) -> str:
    return "-" if x is None else (f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s")


# What the venv's ``kv4lint`` script does, for a source tree: its entry point as that tree names it (``console``;
# an older tree's ``main``, whose status the script passed to ``sys.exit``).
_SCRIPT = ("import sys; import kv4lint.cli as cli; sys.argv[0] = 'kv4lint'; "
           "sys.exit(cli.console() if hasattr(cli, 'console') else cli.main())")


def from_source(cmd: list[str], cache: Path | None = None) -> list[str]:
    """``cmd`` run from a source tree (``--baseline``) as the venv's ``kv4lint`` script would run it, had it been
    installed from that tree: the script names this tree's entry point, which an older tree may not have.
    ``-P``: nothing of the working directory first on the path (``-m`` would run this tree's kv4lint from its root).
    ``cache``: the ``--cache-dir`` of ``cmd``, swapped for its ``-baseline`` twin (an index made by other code is not
    read: a shared one would make each run a first run)."""
    if cache is not None:
        cmd = [f"{x}-baseline" if x == str(cache) else x for x in cmd]
    script = Path(sys.executable).parent / "kv4lint"
    return [sys.executable, "-P", "-c", _SCRIPT, *cmd[1:]] if cmd and cmd[0] == str(script) else cmd


def with_path_first(env: dict, source: str | Path) -> dict:
    """``env`` with the source tree ``source`` first on ``PYTHONPATH`` (``--baseline``, ``--src``)."""
    return dict(env, PYTHONPATH=os.pathsep.join([str(Path(source).resolve())]
                                                + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])))


def kv4lint_command() -> list[str]:
    """This venv's ``kv4lint`` script (else ``python -m kv4lint``): how every kv4lint case is run."""
    script = Path(sys.executable).parent / "kv4lint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kv4lint"]


def python_env() -> dict:
    """Python as installed: with its bytecode caches (the warm-up run writes them)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="repetitions per case (default 5)")
    ap.add_argument("--quick", action="store_true", help="2 repetitions (and 3 for the single-file case)")
    ap.add_argument("--out", default=str(HERE / "out"), help="cache and results directory (default bench/out)")
    ap.add_argument("--tree", help="benchmark this directory instead of building the default tree")
    ap.add_argument("--sglang-version", default="0.5.23", help="whose wheel's sources go in the tree")
    ap.add_argument("--wheel-dir", action="append", default=[str(WHEEL_CACHE)],
                    help="where to look for a cached SGLang wheel before downloading (repeatable; default: the "
                         "conformance tests' cache, $KV4LINT_WHEEL_CACHE or ~/.cache/kv4lint/sglang-wheels)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the tree")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="'all cores' (default: os.cpu_count())")
    ap.add_argument("--only", help="comma-separated case names to run (table: the performance table's rows; "
                    "issue21; grep, kv4lint-j1, kv4lint-jN, stdlib, cached, flake8-without, flake8-with, ruff, libcst, "
                    "single-file; big: large files, bench/big_files.py; large: the 2 MB shell and Python files and "
                    "the installer; instructions: the table's kv4lint cases counted by callgrind, "
                    "bench/instructions.py)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per command (default 1800)")
    ap.add_argument("--flake8-files", type=int, default=600,
                    help="Python files in the flake8 sample (default 600; flake8 is slow); 0: the whole tree")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also run issue 21's kv4lint and flake8-with cases from this source directory (e.g. "
                         "`git archive main kv4lint | tar -x -C DIR`), interleaved with the others: before/after "
                         "in one run")
    ap.add_argument("--no-installed", action="store_true",
                    help="issue 21's cases: do not also measure this tree installed with `pip install .` in "
                         "bench/out/venv-kv4lint (as users install it; the project's venv is an editable install)")
    ap.add_argument("--src", help="run kv4lint from this source directory (prepended to PYTHONPATH), e.g. to "
                    "compare a patched copy with the installed one")
    ap.add_argument("--held-out", metavar="DIR", help="real files kept out of the fixtures, copied into tree/held-out: "
                    "the table's tree rows measure SGLang's sources plus them")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the performance table (issue 37) as Markdown, as docs/performance.md quotes it")
    ns = ap.parse_args(argv)
    reps = 2 if ns.quick else max(1, ns.reps)
    out = Path(ns.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    only = set(ns.only.split(",")) if ns.only else None
    if only and "issue21" in only:
        only |= {*ISSUE21_CASES, "single-file"}
    if only and "instructions" in only:  # instruction counts under callgrind (bench/instructions.py)
        sys.path.insert(0, str(HERE))
        import instructions

        instructions.report(instructions.measure(out, ns.baseline, Path(ns.tree).resolve() if ns.tree else out / "tree",
                                                 log=log))
        only.discard("instructions")
        if not only:
            return 0
    if only and "big" in only:  # large files, one at a time (bench/big_files.py): no tree needed
        sys.path.insert(0, str(HERE))
        import big_files

        big_files.report(big_files.measure(out, reps))
        only.discard("big")
        if not only:
            return 0

    def wanted(name: str) -> bool:
        return only is None or name in only or name.replace("-j" + str(ns.jobs), "-jN") in only

    large_only = only is not None and only <= {"large", *LARGE_FILES}
    if large_only:  # the large files alone need no tree: an empty one stands for it
        tree, tree_info = out / "empty-tree", {"skipped": "--only large"}
        tree.mkdir(parents=True, exist_ok=True)
    elif ns.tree:
        tree, tree_info = Path(ns.tree).resolve(), {"given": ns.tree}
    else:
        tree, tree_info = build_tree(out, ns.sglang_version, ns.wheel_dir, ns.rebuild, ns.held_out)
    log("counting files and pre-filter candidates ...")
    stats, candidates, py_candidates, stats_paths = tree_stats(tree)
    log(f"tree: {stats['files']} files, {stats['bytes'] / 1e6:.1f} MB, {stats['candidates']} pre-filter "
        f"candidates ({100 * stats['candidate_share']:.2f} %), {stats['python_candidates']} of them Python")
    (out / "candidates.txt").write_text("\n".join(candidates) + "\n")
    (out / "python-candidates.txt").write_text("\n".join(py_candidates) + "\n")

    kv4 = kv4lint_command()
    env_py = python_env()
    if ns.src:
        env_py = with_path_first(env_py, ns.src)
    env_c = dict(os.environ, LC_ALL="C")
    jobs = max(1, ns.jobs)
    # Cold: every candidate parsed (--no-cache).  Cached: the parse cache as a second run leaves it (the warm-up
    # round fills bench/out/cache, emptied first): what a developer's repeated runs cost.
    opts = ["--isolated", "--exit-zero", "--format", "json", "--output-file", os.devnull]
    check_opts = ["check", *tree_roots(tree), *opts]
    cold = ["--no-cache"]
    cache_dir = out / "cache"
    shutil.rmtree(cache_dir, ignore_errors=True)
    cached = ["--cache-dir", str(cache_dir)]

    cases: list[Case] = []
    if wanted("grep"):
        cases.append(Case("grep", ["grep", "-rlE", GREP_PATTERN, str(tree)], env=env_c, ok_codes=(0, 1),
                          note="the floor: every byte read once (LC_ALL=C)", files=stats["files"]))
    if wanted("kv4lint-j1"):
        cases.append(Case("kv4lint-j1", kv4 + check_opts + cold + ["-j", "1"], env=env_py, files=stats["files"],
                          note="no cache"))
    if jobs > 1 and wanted(f"kv4lint-j{jobs}"):
        cases.append(Case(f"kv4lint-j{jobs}", kv4 + check_opts + cold + ["-j", str(jobs)], env=env_py,
                          files=stats["files"], note="no cache"))
    if wanted("cached"):
        for j in sorted({1, jobs}):
            cases.append(Case(f"kv4lint-j{j}:cached", kv4 + check_opts + cached + ["-j", str(j)], env=env_py,
                              files=stats["files"], note="parse cache of an earlier run"))
    # The same on the standard library alone: a tree without SGLang, where the pipeline's own cost shows.
    sub = tree / "stdlib"
    if sub.is_dir() and not ns.tree and wanted("stdlib"):
        n_sub = sum(1 for p in stats_paths if p.startswith(str(sub) + os.sep))
        sub_opts = ["check", str(sub), *opts]
        cases.append(Case("grep:stdlib", ["grep", "-rlE", GREP_PATTERN, str(sub)], env=env_c, ok_codes=(0, 1),
                          note="tree/stdlib only (no SGLang)", files=n_sub))
        cases.append(Case("kv4lint-j1:stdlib", kv4 + sub_opts + cold + ["-j", "1"], env=env_py, files=n_sub))
        if jobs > 1:
            cases.append(Case(f"kv4lint-j{jobs}:stdlib", kv4 + sub_opts + cold + ["-j", str(jobs)], env=env_py,
                              files=n_sub))

    issue21 = issue21_cases(ns, out, tree, candidates, kv4, check_opts, env_py, env_c, wanted)
    cases.extend(issue21["cases"])
    table_info = None
    if only is None or "table" in only:
        if ns.tree:
            table_info = {"skipped": "--tree given: the table's rows need the built tree"}
        else:
            made, table_info = table.cases(TableContext(ns, out, tree, kv4, env_py, env_c, reps, stats_paths))
            cases.extend(made)
    large = large_cases(ns, out, kv4, env_py, wanted)
    cases.extend(large["cases"])

    venv_info = {}
    if only is None or only & {"flake8-without", "flake8-with", "ruff"}:
        venv, why = tools_venv(out)
        venv_info = {"venv_noplugin": str(venv) if venv else None, "status": why}
        f8 = ["--isolated", "--select", "E9", "--jobs", str(jobs), "."]
        if ns.flake8_files:
            f8_tree, f8_info = flake8_tree(out, tree, candidates, ns.flake8_files)
        else:
            f8_tree, f8_info = tree, {"files": sum(1 for _ in tree.rglob("*.py")), "whole_tree": True}
        venv_info["flake8_tree"] = {"path": str(f8_tree), **f8_info}
        log(f"flake8 sample: {f8_info['files']} Python files in {f8_tree}")
        if venv is not None:
            vpy = str(venv / "bin" / "python")
            venv_info["flake8_without"] = flake8_plugins(vpy)
            venv_info["flake8_with"] = flake8_plugins(sys.executable)
            if wanted("flake8-without"):
                cases.append(Case("flake8-without", [vpy, "-m", "flake8", *f8], cwd=str(f8_tree), env=env_py,
                                  ok_codes=(0, 1),
                                  note="flake8 --select E9, venv without kv4lint"))
            if wanted("ruff"):
                cases.append(Case("ruff", [str(venv / "bin" / "ruff"), "check", "--isolated", "--no-cache",
                                           "--no-respect-gitignore", "--select", "E9", "--exit-zero", "--quiet",
                                           "."], cwd=str(tree), note="reference"))
        else:
            log(f"no flake8-without-kv4lint venv: {why}")
        if wanted("flake8-with"):
            cases.append(Case("flake8-with", [sys.executable, "-m", "flake8", *f8], cwd=str(f8_tree), env=env_py,
                              ok_codes=(0, 1),
                              note="flake8 --select E9, this venv (kv4lint's plugin runs on every file)"))

    launch = pick_launch_script(out)
    single = None
    if wanted("single-file"):
        single = Case("single-file", kv4 + ["check", str(launch), "--exit-zero", "--no-cache"], cwd=str(ROOT),
                      env=env_py, per_rep=3,
                      note=f"pre-commit case, no cache: "
                           f"{launch.relative_to(ROOT) if launch.is_relative_to(ROOT) else launch}")
        cases.append(single)
        python_floor = Case("python-startup", [sys.executable, "-c", "pass"], env=env_py, note="python -c pass")
        cases.append(python_floor)

    # Warm-up (page cache, .pyc files), then interleaved repetitions.
    log(f"warming up {len(cases)} cases ...")
    for c in cases:
        c.run_once(ns.timeout)
        c.wall.clear()
        c.cpu.clear()
        if c.error:
            log(f"  {c.name}: {c.error}")
    for i in range(reps):
        log(f"repetition {i + 1}/{reps} ...")
        for c in cases:
            for _ in range(c.per_rep):
                c.run_once(ns.timeout)

    plugin = None
    if wanted("flake8-with"):
        log("kv4lint's flake8 plugin in-process over the flake8 sample and over the whole tree ...")
        plugin = {"flake8_sample": plugin_in_process(sys.executable, Path(venv_info["flake8_tree"]["path"]), env_py),
                  "whole_tree": plugin_in_process(sys.executable, tree, env_py)}
    lib = None
    if wanted("libcst"):
        log("libcst parse of the Python candidates ...")
        lib = libcst_parse(sys.executable, out / "python-candidates.txt", min(reps, 3), env_py)
    imports = {}
    if wanted("single-file"):
        log("python -X importtime ...")
        imports = {
            "version": importtime([sys.executable, "-X", "importtime", "-m", "kv4lint", "--version"], str(ROOT),
                                  env_py),
            "check_one_file": importtime([sys.executable, "-X", "importtime", "-m", "kv4lint", "check", str(launch),
                                          "--exit-zero", "--no-cache"], str(ROOT), env_py),
            "import_kv4lint": importtime([sys.executable, "-X", "importtime", "-c", "import kv4lint"], str(ROOT),
                                         env_py),
        }

    results = {c.name: c.summary() for c in cases}
    if plugin is not None:
        results["plugin-in-process"] = dict(plugin, note="Plugin.run on every .py file, CPU time, in one process")
    if lib is not None:
        results["libcst-parse"] = dict(lib, note="libcst.parse_module on every Python pre-filter candidate, "
                                                 "in-process, import excluded")

    def r(a: str, b: str, key: str = "min_s") -> float | None:
        x, y = results.get(a, {}).get(key), results.get(b, {}).get(key)
        return x / y if x and y else None

    jn = f"kv4lint-j{jobs}"
    ratios = {
        "kv4lint_j1_over_grep": r("kv4lint-j1", "grep"),
        "kv4lint_jN_over_grep": r(jn, "grep"),
        "kv4lint_j1_over_grep_median": r("kv4lint-j1", "grep", "median_s"),
        "kv4lint_jN_over_grep_median": r(jn, "grep", "median_s"),
        "flake8_with_over_without": r("flake8-with", "flake8-without"),
        "flake8_with_over_without_median": r("flake8-with", "flake8-without", "median_s"),
        "flake8_with_over_without_cpu": r("flake8-with", "flake8-without", "cpu_median_s"),
        "flake8_plugin_estimate": _plugin_estimate(results),
        "kv4lint_j1_over_ruff": r("kv4lint-j1", "ruff"),
        "cached_kv4lint_j1_over_grep": r("kv4lint-j1:cached", "grep"),
        "cached_kv4lint_jN_over_grep": r(f"{jn}:cached", "grep"),
        "stdlib_kv4lint_j1_over_grep": r("kv4lint-j1:stdlib", "grep:stdlib"),
        "stdlib_kv4lint_jN_over_grep": r(f"{jn}:stdlib", "grep:stdlib"),
        "single_file_wall_s": results.get("single-file", {}).get("median_s"),
        "single_file_wall_min_s": results.get("single-file", {}).get("min_s"),
    }
    verdict = {k: (None if ratios.get(k) is None else ratios[k] <= v) for k, v in TARGETS.items()}
    ratios21 = issue21_ratios(results)

    doc = {
        "when": _dt.datetime.now().isoformat(timespec="seconds"),
        "kv4lint": kv4lint.__version__,
        "git": _git_rev(),
        "python": sys.version.split()[0],
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "loadavg": os.getloadavg()},
        "reps": reps, "jobs": jobs,
        "tree": {"path": str(tree), **tree_info, **stats},
        "tools": venv_info,
        "grep_pattern": GREP_PATTERN,
        "cases": results,
        "importtime": imports,
        "ratios": ratios,
        "targets": TARGETS,
        "targets_met": verdict,
        "large": {"info": large["info"], "ratios": large_ratios(results), "targets": LARGE_TARGETS,
                  "baseline_ratios": large_ratios(results, "@baseline") if ns.baseline else None},
        "issue21": {"info": issue21["info"], "ratios": ratios21, "targets": ISSUE21_TARGETS,
                    "baseline_ratios": issue21_ratios(results, "@baseline") if ns.baseline else None,
                    "installed_ratios": issue21_ratios(results, "@installed"),
                    "targets_met": {k: (None if ratios21.get(k) is None else ratios21[k] <= v)
                                    for k, v in ISSUE21_TARGETS.items()}},
    }
    if table_info is not None:
        doc["table"] = {"info": table_info, "rows": table.measure(results),
                        "before": table.measure(results, "@baseline") if ns.baseline else None,
                        "installed": table.measure(results, "@installed")}
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    res_path = out / f"results-{stamp}.json"
    res_path.write_text(json.dumps(doc, indent=1))
    if only is None or only - {"table"}:
        report(doc, jn)
    table.report(doc)
    if ns.markdown and doc.get("table"):
        print("\n<!-- bench/run.py --markdown: paste between docs/performance.md's bench:table markers -->")
        print(table.markdown(doc["table"]["rows"], doc["table"]["before"]), end="")
    print(f"\nresults: {res_path}")
    return 0


class TableContext:
    """What the table's cases need of this run (bench/table.py): the tree, how kv4lint and the tools are run,
    and copies of kv4lint's cases from ``--baseline`` (``@baseline``) and the installed venv (``@installed``)."""

    def __init__(self, ns, out: Path, tree: Path, kv4: list[str], env_py: dict, env_c: dict, reps: int,
                 paths: list[str]):
        self.ns, self.out, self.tree, self.kv4, self.env_py, self.env_c, self.reps = \
            ns, out, tree, kv4, env_py, env_c, reps
        self.paths = paths
        self.venv, self.venv_why = tools_venv(out)
        self.noplugin_python = str(self.venv / "bin" / "python") if self.venv else None
        self.installed = None
        if not ns.no_installed and not ns.src:
            self.installed, _why = installed_venv(out)

    def count(self, d: Path) -> int:
        return sum(1 for p in self.paths if p.startswith(str(d) + os.sep))

    def tool(self, name: str) -> str | None:
        """A baseline tool: from bench/out/venv-noplugin, this venv, or PATH; None when it is nowhere."""
        for d in ([self.venv / "bin"] if self.venv else []) + [Path(sys.executable).parent]:
            if (d / name).exists():
                return str(d / name)
        return shutil.which(name)

    def why(self, name: str) -> str:
        return (f"not in {self.venv / 'bin'} nor on PATH (pip install {name})" if self.venv
                else f"no venv without kv4lint ({self.venv_why})")

    def case(self, name: str, cmd: list[str], *, kv4lint: bool = False, cache: Path | None = None,
             env: dict | None = None, **kw) -> list:
        env = self.env_py if env is None else env
        made = [Case(name, cmd, env=env, **kw)]
        caches = [cache] if cache else []
        if kv4lint and self.ns.baseline:
            caches += [Path(str(cache) + "-baseline")] if cache else []
            made.append(Case(name + "@baseline", from_source(cmd, cache), env=with_path_first(env, self.ns.baseline),
                             **kw))
        # The installed copy: kv4lint's command from that venv, or a command of this venv's Python (flake8 with
        # the plugin) from that venv's Python, which has kv4lint and its dependencies as a user's has them.
        if kv4lint and self.installed is not None and cmd[:len(self.kv4)] == self.kv4:
            i_cmd = [str(self.installed / "bin" / "kv4lint"), *cmd[len(self.kv4):]]
        elif kv4lint and self.installed is not None and cmd[:1] == [sys.executable]:
            i_cmd = [str(self.installed / "bin" / "python"), *cmd[1:]]
        else:
            i_cmd = None
        if i_cmd is not None:
            i_cmd = [str(x) + "-installed" if cache and x == str(cache) else x for x in i_cmd]
            caches += [Path(str(cache) + "-installed")] if cache else []
            made.append(Case(name + "@installed", i_cmd, env={k: v for k, v in env.items() if k != "PYTHONPATH"},
                             **kw))
        for d in caches:  # a warm case's cache: as the warm-up round leaves it
            shutil.rmtree(d, ignore_errors=True)
        return made


def issue21_cases(ns, out: Path, tree: Path, candidates: list[str], kv4: list[str], check_opts: list[str],
                  env_py: dict, env_c: dict, wanted) -> dict:
    """The cases of issue 21's four ratios: SGLang's own sources (``tree/sglang-src``) cold and warm, and the
    standard library cold, each against ``grep -rlE ISSUE21_PATTERN`` on the same directory; flake8
    ``--select E9 -j1`` with and without kv4lint on a 160-file sample of SGLang's sources (child CPU time)."""
    sg, std = tree / "sglang-src", tree / "stdlib"
    cases: list[Case] = []
    info: dict = {"pattern": ISSUE21_PATTERN}
    if ns.tree or not sg.is_dir():
        return {"cases": cases, "info": dict(info, skipped="no tree/sglang-src (--tree given)")}
    # kv4lint as a user types it: default jobs (all cores).
    opts = ["--isolated", "--exit-zero", "--format", "json", "--output-file", os.devnull]
    cache_dir = out / "cache-issue21"
    for d in (cache_dir, Path(str(cache_dir) + "-installed"), Path(str(cache_dir) + "-baseline")):
        shutil.rmtree(d, ignore_errors=True)
    for sub, tag in ((sg, "sglang"), (std, "stdlib")):
        if not sub.is_dir():
            continue
        if wanted(f"grep21:{tag}"):
            cases.append(Case(f"grep21:{tag}", ["grep", "-rlE", ISSUE21_PATTERN, str(sub)], env=env_c,
                              ok_codes=(0, 1), note=f"tree/{sub.name}, the issue's pattern (LC_ALL=C)"))
        if wanted(f"kv4lint:{tag}"):
            cases.append(Case(f"kv4lint:{tag}", kv4 + ["check", str(sub), *opts, "--no-cache"], env=env_py,
                              note=f"tree/{sub.name}, no cache, default jobs"))
    if wanted("kv4lint:sglang:cached"):
        cases.append(Case("kv4lint:sglang:cached", kv4 + ["check", str(sg), *opts, "--cache-dir", str(cache_dir)],
                          env=env_py, note="tree/sglang-src, the cache of an earlier run (the warm-up round)"))
    if wanted("flake8-j1-without:sglang") or wanted("flake8-j1-with:sglang"):
        venv, why = tools_venv(out)
        sg_cands = [c for c in candidates if c.startswith(str(sg) + os.sep)]
        f8_tree, f8_info = flake8_tree(out, sg, sg_cands, 160, name="flake8-tree-sglang")
        info["flake8_sample"] = {"path": str(f8_tree), **f8_info}
        f8 = ["-m", "flake8", "--isolated", "--select", "E9", "-j", "1", "."]
        per_rep = -(-7 // max(1, ns.reps if not ns.quick else 2))  # at least 7 samples: CPU min of 7
        if venv is None:
            info["flake8_without"] = f"no venv without kv4lint: {why}"
        elif wanted("flake8-j1-without:sglang"):
            cases.append(Case("flake8-j1-without:sglang", [str(venv / "bin" / "python"), *f8], cwd=str(f8_tree),
                              env=env_py, ok_codes=(0, 1), per_rep=per_rep,
                              note="flake8 --select E9 -j1, venv without kv4lint"))
        if wanted("flake8-j1-with:sglang"):
            cases.append(Case("flake8-j1-with:sglang", [sys.executable, *f8], cwd=str(f8_tree), env=env_py,
                              ok_codes=(0, 1), per_rep=per_rep, note="flake8 --select E9 -j1, with kv4lint"))
    if not ns.no_installed and not ns.src:
        venv, why = installed_venv(out)
        info["installed"] = str(venv) if venv else f"not measured: {why}"
        if venv is not None:
            inst_env = {k: v for k, v in env_py.items() if k != "PYTHONPATH"}
            for c in list(cases):
                if c.name.startswith("kv4lint:"):
                    cmd = [str(venv / "bin" / "kv4lint"), *c.cmd[len(kv4):]]
                    if c.name == "kv4lint:sglang:cached":
                        cmd = [x if x != str(cache_dir) else str(cache_dir) + "-installed" for x in cmd]
                    cases.append(Case(c.name + "@installed", cmd, cwd=c.cwd, env=inst_env, ok_codes=c.ok_codes,
                                      per_rep=c.per_rep, note=c.note + ", installed copy (pip install .)"))
    if ns.baseline:
        base_env = with_path_first(env_py, ns.baseline)
        info["baseline"] = str(Path(ns.baseline).resolve())
        for c in list(cases):
            if "@" not in c.name and c.name.startswith(("kv4lint:", "flake8-j1-with:")):
                cmd = from_source(c.cmd, cache_dir if c.name == "kv4lint:sglang:cached" else None)
                cases.append(Case(c.name + "@baseline", cmd, cwd=c.cwd, env=base_env, ok_codes=c.ok_codes,
                                  per_rep=c.per_rep, note=c.note + ", baseline source"))
    return {"cases": cases, "info": info}


def large_cases(ns, out: Path, kv4: list[str], env_py: dict, wanted) -> dict:
    """Issues 34 and 37's large files: `kv4lint check` on each (one file, no cache, the release stated), its
    parser alone on it, and with --baseline the same check from the baseline source."""
    cases: list[Case] = []
    info: dict = {}
    names = [name for name in LARGE_FILES if wanted(name) or wanted("large")]
    if not names:
        return {"cases": cases, "info": info}
    sys.path.insert(0, str(ROOT / "tests"))
    import large_inputs

    d = out / "large"
    d.mkdir(parents=True, exist_ok=True)
    base_env = None
    if ns.baseline:
        base_env = with_path_first(env_py, ns.baseline)
    floors = set()
    for name in names:
        file_name, gen, n, parser = LARGE_FILES[name]
        path = d / file_name
        text = getattr(large_inputs, gen)(n)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        info[name] = {"path": str(path), "bytes": len(text.encode()), "lines": text.count("\n"),
                      "generator": f"tests/large_inputs.py:{gen}({n})"}
        cmd = kv4 + ["check", str(path), "--isolated", "--no-cache", "--exit-zero", "--format", "json",
                     "--output-file", os.devnull, "--sglang-version", "0.5.23", "--jobs", "1"]
        cases.append(Case(name, cmd, env=env_py, note=f"{file_name}, one file, no cache"))
        if base_env is not None:
            cases.append(Case(name + "@baseline", from_source(cmd), env=base_env, note=f"{file_name}, baseline source"))
        floor = f"parse:{parser}:{file_name}"
        if floor not in floors:
            floors.add(floor)
            cases.append(Case(floor, [sys.executable, "-c", PARSE_SNIPPETS[parser], str(path)], env=env_py,
                              note=f"the {parser} parser alone on {file_name}, start-up included"))
    return {"cases": cases, "info": info}


def large_ratios(results: dict, suffix: str = "") -> dict:
    out: dict = {}
    for name, (file_name, _gen, _n, parser) in LARGE_FILES.items():
        got, floor = results.get(name + suffix, {}), results.get(f"parse:{parser}:{file_name}", {})
        key = name.split(":")[1]
        out[f"large_{key}_wall_s"] = got.get("min_s")
        out[f"large_{key}_cpu_s"] = got.get("cpu_min_s")
        out[f"large_{key}_over_parser_cpu"] = (got["cpu_min_s"] / floor["cpu_min_s"]
                                               if got.get("cpu_min_s") and floor.get("cpu_min_s") else None)
    return out


def report_large(doc: dict) -> None:
    large = doc.get("large") or {}
    ra = large.get("ratios") or {}
    if not any(v is not None for v in ra.values()):
        return
    base = large.get("baseline_ratios") or {}
    print("\nlarge files (issues 34, 37): kv4lint check of one file (no cache, --jobs 1), min; CPU against its "
          "parser alone on the same file (a subprocess, start-up included)")
    for name, (file_name, _gen, _n, _parser) in LARGE_FILES.items():
        key = name.split(":")[1]
        wall, cpu, over = (ra.get(f"large_{key}_{x}") for x in ("wall_s", "cpu_s", "over_parser_cpu"))
        if wall is None:
            continue
        line = f"  {file_name:14} wall {wall:.2f} s, CPU {cpu:.2f} s, {over:.1f} x its parser" if over else \
            f"  {file_name:14} wall {wall:.2f} s, CPU {cpu:.2f} s"
        for tkey, t in LARGE_TARGETS.items():
            if tkey.startswith(f"large_{key}_"):
                x = ra.get(tkey)
                line += f"   target <= {t} s: {'met' if x is not None and x <= t else 'MISSED'}"
        b_wall, b_cpu = base.get(f"large_{key}_wall_s"), base.get(f"large_{key}_cpu_s")
        if b_wall:
            line += f"   baseline wall {b_wall:.2f} s, CPU {b_cpu:.2f} s (this / baseline: CPU {cpu / b_cpu:.2f})"
        print(line)


def issue21_ratios(results: dict, suffix: str = "") -> dict:
    def r(a: str, b: str, key: str = "min_s") -> float | None:
        x, y = results.get(a, {}).get(key), results.get(b, {}).get(key)
        return x / y if x and y else None

    x = suffix
    return {
        "cold_sglang_over_grep": r("kv4lint:sglang" + x, "grep21:sglang"),
        "cold_sglang_over_grep_median": r("kv4lint:sglang" + x, "grep21:sglang", "median_s"),
        "warm_sglang_over_grep": r("kv4lint:sglang:cached" + x, "grep21:sglang"),
        "warm_sglang_over_grep_median": r("kv4lint:sglang:cached" + x, "grep21:sglang", "median_s"),
        "flake8_j1_cpu_with_over_without": r("flake8-j1-with:sglang" + x, "flake8-j1-without:sglang", "cpu_min_s"),
        "flake8_j1_cpu_with_over_without_median": r("flake8-j1-with:sglang" + x, "flake8-j1-without:sglang",
                                                    "cpu_median_s"),
        "cold_stdlib_over_grep": r("kv4lint:stdlib" + x, "grep21:stdlib"),
        "cold_stdlib_over_grep_median": r("kv4lint:stdlib" + x, "grep21:stdlib", "median_s"),
        "single_file_wall_s": None if x else results.get("single-file", {}).get("median_s"),
    }


def report_issue21(doc: dict) -> None:
    ra = doc.get("issue21", {}).get("ratios")
    if not ra or all(v is None for v in ra.values()):
        return
    info = doc["issue21"]["info"]
    print(f"\nissue 21 (grep -rlE {info['pattern']!r}, LC_ALL=C, on the same directory; min / min, "
          f"median / median in brackets)")
    names = {
        "cold_sglang_over_grep": "cold, SGLang sources / grep",
        "warm_sglang_over_grep": "warm (second run) / grep",
        "flake8_j1_cpu_with_over_without": "flake8 -j1 CPU with / without",
        "cold_stdlib_over_grep": "cold, stdlib / grep",
        "single_file_wall_s": "single launch script (s, median)",
    }
    base = doc["issue21"].get("baseline_ratios")
    inst = doc["issue21"].get("installed_ratios") or {}
    if any(inst.values()):
        print("  (this venv, an editable install; then the same tree installed with `pip install .`)")
    for key, label in names.items():
        x, m = ra.get(key), ra.get(key + "_median")
        t = ISSUE21_TARGETS[key]
        verdict = "-" if x is None else ("met" if x <= t else "MISSED")
        b = (base or {}).get(key)
        i = inst.get(key)
        print(f"  {label:36} {'-' if x is None else f'{x:.2f}'}"
              f"{'' if m is None else f' ({m:.2f})'}   target <= {t}: {verdict}"
              + ("" if i is None else f"   installed {i:.2f} ({inst.get(key + '_median') or 0:.2f}): "
                                      f"{'met' if i <= t else 'MISSED'}")
              + ("" if b is None else f"   baseline {b:.2f} ({base.get(key + '_median') or 0:.2f})"))
    f8 = info.get("flake8_sample")
    if f8:
        print(f"  flake8 sample: {f8['files']} files of tree/sglang-src (every {f8['every_kth']}th), pre-filter "
              f"candidates in it: {', '.join(f8['candidate_files']) or 'none'}")


def _plugin_estimate(results: dict) -> float | None:
    """1 + the plugin's in-process CPU time on the flake8 sample / flake8-without's CPU time on it."""
    p = results.get("plugin-in-process", {}).get("flake8_sample", {}).get("plugin_cpu_s")
    f = results.get("flake8-without", {}).get("cpu_median_s")
    return 1 + p / f if p is not None and f else None


def _git_rev() -> str | None:
    r = _run_quiet(["git", "-C", str(ROOT), "describe", "--always", "--dirty"])
    return r.stdout.strip() if r.returncode == 0 else None


def report(doc: dict, jn: str) -> None:
    t = doc["tree"]
    print(f"\nkv4lint {doc['kv4lint']} ({doc['git']}), Python {doc['python']}, {doc['machine']['cpus']} CPUs, "
          f"load {', '.join(f'{x:.1f}' for x in doc['machine']['loadavg'])}; {doc['reps']} repetitions")
    print(f"tree {t['path']}: {t['files']} files, {t['bytes'] / 1e6:.1f} MB; pre-filter candidates {t['candidates']} "
          f"({100 * t['candidate_share']:.2f} %), Python {t['python_candidates']}; in-process read + pre-filter of "
          f"every file {fmt_s(t['prefilter_in_process_s'])}")
    f8 = doc.get("tools", {}).get("flake8_tree")
    if f8:
        print(f"flake8 sample {f8['path']}: {f8['files']} Python files ({f8.get('candidates', '?')} pre-filter "
              f"candidates)")
    print(f"\n{'case':18} {'min':>9} {'median':>9} {'cpu':>9} {'files/s':>9}  note")
    for name, c in doc["cases"].items():
        if name == "plugin-in-process":
            for k, v in c.items():
                if isinstance(v, dict) and "plugin_cpu_s" in v:
                    print(f"{'plugin ' + k:18} {fmt_s(v['plugin_cpu_s']):>9} {'':>9} {'':>9} {'':>9}  {v['files']} "
                          f"files, {v['candidates']} candidates ({fmt_s(v['candidate_cpu_s'])}), "
                          f"{v['non_candidate_us_per_file']:.0f} us per other file, CPU")
                elif isinstance(v, dict) and "error" in v:
                    print(f"{'plugin ' + k:18} {'error':>9}  {v['error'].strip().splitlines()[-1][:150]}")
            continue
        if "error" in c:
            print(f"{name:18} {'error':>9}  {c['error'].splitlines()[-1][:150] if c['error'] else ''}")
            continue
        fps = f"{c['files_per_s']:.0f}" if c.get("files_per_s") else ""
        cpu = fmt_s(c.get("cpu_min_s")) if "cpu_min_s" in c else ""
        print(f"{name:18} {fmt_s(c.get('min_s')):>9} {fmt_s(c.get('median_s')):>9} {cpu:>9} {fps:>9}  "
              f"{c.get('note', '')}"
              + (f" ({c['files']} files, {c.get('parse_errors', 0)} not parsed)" if name == "libcst-parse" else ""))
    ra = doc["ratios"]

    def show(x, unit=""):
        return "-" if x is None else f"{x:.2f}{unit}"

    print("\nratios (min / min; median / median in brackets)")
    print(f"  kv4lint -j1 / grep          {show(ra['kv4lint_j1_over_grep'])} "
          f"({show(ra['kv4lint_j1_over_grep_median'])})"
          f"   target <= {TARGETS['kv4lint_j1_over_grep']}")
    print(f"  kv4lint -{jn.split('-')[-1]} / grep          {show(ra['kv4lint_jN_over_grep'])} "
          f"({show(ra['kv4lint_jN_over_grep_median'])})   target <= {TARGETS['kv4lint_jN_over_grep']}")
    print(f"  flake8 with / without       {show(ra['flake8_with_over_without'])} "
          f"({show(ra['flake8_with_over_without_median'])}); CPU {show(ra['flake8_with_over_without_cpu'])}; "
          f"1 + plugin in-process / flake8 CPU {show(ra['flake8_plugin_estimate'], '')}   "
          f"target <= {TARGETS['flake8_with_over_without']}")
    print(f"  kv4lint -j1 / ruff          {show(ra['kv4lint_j1_over_ruff'])}")
    print(f"  with the parse cache of an earlier run: "
          f"kv4lint -j1 / grep {show(ra.get('cached_kv4lint_j1_over_grep'))}, "
          f"-{jn.split('-')[-1]} / grep {show(ra.get('cached_kv4lint_jN_over_grep'))}")
    print(f"  stdlib only: kv4lint -j1 / grep {show(ra.get('stdlib_kv4lint_j1_over_grep'))}, "
          f"-{jn.split('-')[-1]} / grep {show(ra.get('stdlib_kv4lint_jN_over_grep'))}")
    print(f"  single launch script        {show(ra['single_file_wall_s'], ' s')} median "
          f"({show(ra['single_file_wall_min_s'], ' s')} min)   target < {TARGETS['single_file_wall_s']} s")
    for key, imp in doc.get("importtime", {}).items():
        pk = ", ".join(f"{k} {v:.0f}" for k, v in list(imp["by_package_ms"].items())[:8])
        print(f"  importtime {key}: {imp['total_ms']:.0f} ms of imports; by package (ms): {pk}; "
              f"third-party: {', '.join(imp['third_party_imported']) or 'none'}")
    report_issue21(doc)
    report_large(doc)
    met = doc["targets_met"]
    print("\ntargets (issue 8): " + ", ".join(
        f"{k} {'met' if v else ('MISSED' if v is False else 'not measured')}" for k, v in met.items()))


if __name__ == "__main__":
    sys.exit(main())
