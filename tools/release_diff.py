"""What changed between two SGLang releases in everything kv4lint models, read from the wheels.

    python tools/release_diff.py 0.5.23 0.5.24                    # the report, then the conformance grid for 0.5.24
    python tools/release_diff.py --no-conformance 0.5.22 0.5.23   # the report only
    python tools/release_diff.py --where        # docs/sglang-rules.md's table: where each step lives, per release

The first step of adding a release (docs/adding-a-release.md). Both wheels come from
tools/fetch_sglang_wheels.py's cache and are read statically (``ast``; nothing of SGLang runs). The report has
one section per thing kv4lint models that changed, each naming SGLang's function and file
(docs/sglang-rules.md describes them):

- the CLI options and their choices (tools/gen_options.py's tables);
- the resolution steps kv4lint replays: the KV4 check, the NVFP4 prefill step, the attention-backend
  compatibility handler, the default attention backend, the device handlers, the deprecated-argument aliases,
  the model-specific adjustments, deterministic inference, the mxfp8 check and the pipeline's order; each
  compared as code (the function, the module-level names and helper functions it uses), a change shown as a
  unified diff of the source;
- the defaults of the ServerArgs fields of the KV cache, the attention backends, the device and speculative
  decoding.

What did not change is listed on one line at the end. Exit status: 0 (the report, then the conformance grid's
own status), 2 on a usage error or a wheel that cannot be had.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "tools")]

from conformance import wheels  # noqa: E402

import gen_options  # noqa: E402

# The resolution steps kv4lint replays -> the names SGLang gave the function over the releases
# (0.5.19 made the ServerArgs methods ``_handle_...`` module functions ``handle_...``).
STEPS: dict[str, tuple[str, ...]] = {
    "deprecated arguments (backend aliases)": ("handle_deprecated_args", "_handle_deprecated_args"),
    "device handlers": ("handle_hpu_backends", "handle_cpu_backends", "handle_npu_backends", "handle_mps_backends",
                        "handle_xpu_backends", "_handle_hpu_backends", "_handle_cpu_backends",
                        "_handle_npu_backends", "_handle_mps_backends", "_handle_xpu_backends"),
    "model-specific adjustments": ("handle_model_specific_adjustments", "_handle_model_specific_adjustments"),
    "deterministic inference": ("handle_deterministic_inference", "_handle_deterministic_inference"),
    "NVFP4 prefill step": ("handle_nvfp4_prefill_kv_dequant_dtype",),
    "attention-backend compatibility": ("handle_attention_backend_compatibility",
                                        "_handle_attention_backend_compatibility", "_mla_kv_cache_dtype_checks"),
    "default attention backend": ("_attention_backend_default", "get_default_attn_backend",
                                  "_get_default_attn_backend"),
    "KV4 check": ("handle_kv4_compatibility", "_handle_kv4_compatibility"),
    "mxfp8 KV cache check": ("handle_mxfp8_kv_cache_compatibility", "_handle_mxfp8_kv_cache_compatibility"),
    "resolution order": ("run_resolution_pipeline", "_run_resolution_pipeline"),
}
# ServerArgs fields whose default kv4lint reads (a substring of the field's name).
DEFAULT_FIELDS = ("kv_cache", "attention_backend", "attention_mode", "device", "speculative_algorithm",
                  "speculative_eagle_topk", "page_size", "kv_cache_dtype", "dequant_dtype")


def _members(version: str) -> list[str]:
    ms = wheels.members(version)
    return ["sglang/srt/server_args.py", *sorted(m for m in ms if m.startswith("sglang/srt/arg_groups/"))]


class Code:
    """One release's functions (module level and ServerArgs methods) and module constants, by name."""

    def __init__(self, version: str):
        self.version = version
        self.functions: dict[str, tuple[str, ast.AST, str]] = {}  # name -> (member, node, source)
        self.constants: dict[tuple[str, str], str] = {}  # (member, name) -> source
        self.fields: dict[str, tuple[str, str]] = {}  # field -> (member, default's source)
        for member in _members(version):
            src = wheels.read_source(version, member)
            if src is None:
                continue
            tree = ast.parse(src)
            for node in tree.body:
                self._take(member, src, node, top=True)

    def _take(self, member: str, src: str, node: ast.AST, top: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions.setdefault(node.name, (member, node, ast.get_source_segment(src, node) or ""))
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._take(member, src, sub, top=False)
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value is not None:
                    name = sub.target.id
                    if any(f in name for f in DEFAULT_FIELDS):
                        self.fields.setdefault(name, (member, ast.unparse(sub.value)))
        elif top and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    self.constants[(member, t.id)] = ast.get_source_segment(src, node) or ast.unparse(node)

    def step(self, names: tuple[str, ...]) -> tuple[list[str], str]:
        """(where each function of the step is, the text compared): the functions, then the module-level
        constants and helper functions (one level) they name."""
        where, parts, helpers = [], [], []
        for name in names:
            if name not in self.functions:
                continue
            member, node, source = self.functions[name]
            where.append(f"{name} in {member}")
            parts.append(source)
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            used |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            for u in sorted(used):
                if (member, u) in self.constants:
                    helpers.append(self.constants[(member, u)])
                elif u in self.functions and u not in names and self.functions[u][0] == member:
                    helpers.append(self.functions[u][2])
        text = "\n\n".join(parts + sorted(set(helpers)))
        return where, text

    def mappings(self, names: tuple[str, ...]) -> list[dict]:
        """The ``{"old": "new"}`` literals of the step's functions (aliases, renames), as Python values."""
        out = []
        for name in names:
            if name in self.functions:
                for node in ast.walk(self.functions[name][1]):
                    if isinstance(node, ast.Dict) and node.keys:
                        try:
                            d = ast.literal_eval(node)
                        except ValueError:
                            continue
                        if all(isinstance(k, str) and isinstance(v, str) for k, v in d.items()):
                            out.append(d)
        return out


def locations(version: str) -> dict[str, list[str]]:
    """Where each resolution step of :data:`STEPS` lives in ``version``: ``file::function`` citations
    (``file::ServerArgs.method`` for a method of ServerArgs)."""
    out: dict[str, list[str]] = {}
    names = {n for ns in STEPS.values() for n in ns}
    found: dict[str, str] = {}
    for member in _members(version):
        src = wheels.read_source(version, member) or ""
        if not any(f"def {n}(" in src for n in names):
            continue
        for node in ast.parse(src).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
                found.setdefault(node.name, f"{member}::{node.name}")
            elif isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name in names:
                        found.setdefault(sub.name, f"{member}::{node.name}.{sub.name}")
    for section, ns in STEPS.items():
        out[section] = [found[n] for n in ns if n in found]
    return out


def where_table(releases) -> str:
    """docs/sglang-rules.md's table of where each step lives, release range by release range."""
    per = [(v, locations(v)) for v in releases]
    lines = ["| Step | Releases | SGLang's function |", "|---|---|---|"]
    for section in STEPS:
        runs: list[list] = []
        for v, loc in per:
            cell = ", ".join(f"`{c}`" for c in loc[section])
            if runs and runs[-1][2] == cell:
                runs[-1][1] = v
            else:
                runs.append([v, v, cell])
        for first, last, cell in runs:
            if cell:
                lines.append(f"| {section} | {first if first == last else f'{first}–{last}'} | {cell} |")
    return "\n".join(lines) + "\n"


def _diff(a: str, b: str, old: str, new: str) -> list[str]:
    return [line.rstrip("\n") for line in difflib.unified_diff(
        a.splitlines(), b.splitlines(), fromfile=old, tofile=new, lineterm="", n=2)]


def report(old: str, new: str) -> tuple[str, bool]:
    """The report's text, and whether anything kv4lint models changed from ``old`` to ``new``."""
    out: list[str] = [f"SGLang {old} -> {new}: what changed in what kv4lint models", ""]
    unchanged: list[str] = []

    # Options and choices
    a, b = gen_options.table_of(old), gen_options.table_of(new)
    diff = gen_options.differences(a, b)
    if diff:
        out.append(f"options and choices (tools/gen_options.py; {len(a)} -> {len(b)} options): changed")
        out += [f"  {line}" for line in diff]
        out.append("")
    else:
        unchanged.append("options and choices")

    # Resolution steps
    ca, cb = Code(old), Code(new)
    for section, names in STEPS.items():
        wa, ta = ca.step(names)
        wb, tb = cb.step(names)
        if ta == tb:
            unchanged.append(section)
            continue
        out.append(f"{section}: changed")
        out.append(f"  {old}: {', '.join(wa) or 'absent'}")
        out.append(f"  {new}: {', '.join(wb) or 'absent'}")
        ma, mb = ca.mappings(names), cb.mappings(names)
        for label, these, others in (("mappings added", mb, ma), ("mappings removed", ma, mb)):
            for m in these:
                if m not in others:
                    out.append(f"  {label}: {m!r}")
        out += [f"    {line}" for line in _diff(ta, tb, old, new)]
        out.append("")

    # Defaults
    fields = sorted(set(ca.fields) | set(cb.fields))
    changed = [(f, ca.fields.get(f, (None, None))[1], cb.fields.get(f, (None, None))[1]) for f in fields
               if ca.fields.get(f, (None, None))[1] != cb.fields.get(f, (None, None))[1]]
    if changed:
        out.append("defaults (ServerArgs fields of the KV cache, attention, device, speculative decoding): changed")
        for f, da, db in changed:
            out.append(f"  {f}: {da if da is not None else '(no field)'} -> {db if db is not None else '(no field)'}")
        out.append("")
    else:
        unchanged.append("defaults")

    anything = len(out) > 2
    out.append("unchanged: " + (", ".join(unchanged) or "nothing"))
    return "\n".join(out) + "\n", anything


def conformance_command(new: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "conformance",
            str(ROOT / "tests" / "test_conformance.py"), "-k", new]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/release_diff.py", description=__doc__.split("\n")[0])
    ap.add_argument("old", nargs="?", help="the release kv4lint knows, e.g. 0.5.23")
    ap.add_argument("new", nargs="?", help="the release to add, e.g. 0.5.24")
    ap.add_argument("--where", action="store_true",
                    help="print docs/sglang-rules.md's table of where each step lives, for every release kv4lint "
                         "knows, and stop")
    ap.add_argument("--no-conformance", action="store_true", help="the report only, no conformance run")
    try:
        ns = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if ns.where:
        from kv4lint.sglang.releases import WHEEL_RELEASES

        print(where_table(WHEEL_RELEASES), end="")
        return 0
    if ns.new is None:
        print("tools/release_diff.py: give two releases, OLD and NEW (or --where)", file=sys.stderr)
        return 2
    try:
        text, _ = report(ns.old, ns.new)
    except wheels.WheelUnavailable as e:
        print(f"tools/release_diff.py: {e}", file=sys.stderr)
        return 2
    print(text, end="", flush=True)
    if ns.no_conformance:
        return 0
    print(f"\nconformance differential for {ns.new}:", flush=True)
    return subprocess.call(conformance_command(ns.new), cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
