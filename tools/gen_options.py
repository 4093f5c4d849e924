"""Generate kv4lint/sglang/data/options.json.gz, SGLang's CLI option tables, from SGLang's own wheels.

    python tools/gen_options.py              # every release of releases.WHEEL_RELEASES + the older inspected ones
    python tools/gen_options.py --check      # write nothing; report the releases whose table differs
    python tools/gen_options.py 0.5.24       # add (or redo) these releases, keep the others' tables

The wheels come from tools/fetch_sglang_wheels.py's cache (downloaded on first use). Each release's
``sglang/srt/server_args.py`` (and, from 0.5.16, the dataclass fields it collects from
``sglang/srt/arg_groups/``) is read statically, with :mod:`ast`: nothing of SGLang is imported or run.
What argparse would register is reconstructed from

- ``parser.add_argument("--flag", ..., action=, nargs=, choices=, dest=)`` calls (``ServerArgs.add_cli_args``);
- fields annotated ``A[T, Arg(...)]`` / ``Annotated[T, "help"]``, registered by SGLang's
  ``arg_groups/arg_utils.py::add_cli_args_from_dataclass`` (the flag is the field name in kebab case unless
  ``cli_name``; ``aliases``; ``bool`` -> a flag; ``list[...]`` -> ``nargs`` or ``+``; ``Literal[...]`` -> choices).

Each table maps an option string to ``[dest field, arity, choices or None]``; arity is ``flag`` (no value),
``value``, ``list+``, ``list*`` or ``optional-value`` (``nargs='?'``). Choices SGLang computes when it runs
(a parser registry, installed plugins) cannot be read statically and are stored as ``"<dynamic>"``. The file
holds each distinct ``[dest, arity, choices]`` once, and each release as what changed from the release before it
(``kv4lint.sglang.options.pack_tables``, which kv4lint reads back).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from conformance import wheels  # noqa: E402
from kv4lint.sglang.options import pack_tables, stored_tables  # noqa: E402
from kv4lint.sglang.releases import WHEEL_RELEASES  # noqa: E402

DEST = ROOT / "kv4lint" / "sglang" / "data" / "options.json.gz"
DYNAMIC = "<dynamic>"
# The inspected releases before the first KV4 release's predecessor, kept in the tables (older pins use them).
OLDER = ("0.5.5.post3", "0.5.6", "0.5.6.post1")


def _releases_with_posts() -> list[str]:
    """Every release the tables cover: WHEEL_RELEASES and the .postN releases between them."""
    from packaging.version import Version

    found = set(OLDER) | set(WHEEL_RELEASES)
    for p in wheels.cache_dir().glob("sglang-*.whl"):
        v = p.name.split("-")[1]
        if ".post" in v and Version(v) >= Version(OLDER[0]) and Version(v).release[:3] <= Version(
                WHEEL_RELEASES[-1]).release[:3]:
            found.add(v)
    return sorted(found, key=Version)


# ---------------------------------------------------------------------------
# A wheel's modules, and the values of their module-level constants


class Wheel:
    def __init__(self, version: str):
        self.version = version
        self.members = set(wheels.members(version))
        self._trees: dict[str, ast.Module | None] = {}
        self._consts: dict[str, dict[str, ast.expr]] = {}
        self._imports: dict[str, dict[str, tuple[str, str]]] = {}

    def tree(self, member: str) -> ast.Module | None:
        if member not in self._trees:
            src = wheels.read_source(self.version, member)
            self._trees[member] = ast.parse(src) if src is not None else None
        return self._trees[member]

    def module_member(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if cand in self.members:
                return cand
        return None

    def _scan(self, member: str) -> None:
        if member in self._consts:
            return
        consts: dict[str, ast.expr] = {}
        imports: dict[str, tuple[str, str]] = {}
        tree = self.tree(member)
        pkg = member.rsplit("/", 1)[0].replace("/", ".")
        for node in (tree.body if tree else []):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                consts[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                consts[node.target.id] = node.value
            elif isinstance(node, ast.ImportFrom) and node.module is not None or (
                    isinstance(node, ast.ImportFrom) and node.level):
                mod = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    mod = ".".join(parts[:len(parts) - node.level + 1] + ([mod] if mod else []))
                for a in node.names:
                    imports[a.asname or a.name] = (mod, a.name)
        self._consts[member] = consts
        self._imports[member] = imports

    def value(self, member: str, node: ast.expr, depth: int = 0):
        """A constant expression's value (str, number, bool, None, list/tuple of them), or DYNAMIC."""
        if depth > 20:
            return DYNAMIC
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    v = self.value(member, e.value, depth + 1)
                    if not isinstance(v, list):
                        return DYNAMIC
                    out.extend(v)
                else:
                    v = self.value(member, e, depth + 1)
                    if v is DYNAMIC or v == DYNAMIC:
                        return DYNAMIC
                    out.append(v)
            return sorted(out, key=str) if isinstance(node, ast.Set) else out
        if isinstance(node, ast.Dict):
            keys = [self.value(member, k, depth + 1) if k is not None else DYNAMIC for k in node.keys]
            return DYNAMIC if DYNAMIC in keys else {"__dict_keys__": keys}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.value(member, node.left, depth + 1), self.value(member, node.right, depth + 1)
            if isinstance(a, list) and isinstance(b, list):
                return a + b
            return DYNAMIC
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "list", "tuple", "sorted") and len(node.args) == 1 and not node.keywords:
            v = self.value(member, node.args[0], depth + 1)
            if isinstance(v, dict):
                v = v["__dict_keys__"]
            if isinstance(v, list):
                return sorted(v) if node.func.id == "sorted" else v
            return DYNAMIC
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" \
                and not node.args:
            v = self.value(member, node.func.value, depth + 1)
            return v["__dict_keys__"] if isinstance(v, dict) else DYNAMIC
        if isinstance(node, ast.Name):
            return self.name(member, node.id, depth + 1)
        return DYNAMIC

    def name(self, member: str, name: str, depth: int = 0):
        self._scan(member)
        if name in self._consts[member]:
            return self.value(member, self._consts[member][name], depth + 1)
        if name in self._imports[member]:
            mod, orig = self._imports[member][name]
            other = self.module_member(mod)
            if other is not None:
                return self.name(other, orig, depth + 1)
        return DYNAMIC


# ---------------------------------------------------------------------------
# What argparse registers


def _kw(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def _action_name(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return "?"


def _action_nargs(w: Wheel, action: str | None):
    """The ``nargs`` an SGLang action class defaults to (``DeprecatedAction``: 0), or None."""
    if action is None:
        return None
    for member in ("sglang/srt/server_args.py", "sglang/srt/arg_groups/argparse_actions.py"):
        tree = w.tree(member) if member in w.members else None
        for node in (tree.body if tree else []):
            if isinstance(node, ast.ClassDef) and node.name == action:
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                        args = f.args.args + f.args.kwonlyargs
                        defaults = [None] * (len(f.args.args) - len(f.args.defaults)) + list(f.args.defaults) + \
                            list(f.args.kw_defaults)
                        for a, d in zip(args, defaults):
                            if a.arg == "nargs" and d is not None:
                                return w.value(member, d)
                        for call in ast.walk(f):  # super().__init__(..., nargs=0, ...)
                            if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "__init__":
                                kw = _kw(call)
                                if "nargs" in kw and isinstance(kw["nargs"], ast.Constant):
                                    return kw["nargs"].value
                return None
    return None


def _arity(action: str | None, nargs) -> str:
    if nargs == "+":
        return "list+"
    if nargs == "*":
        return "list*"
    if nargs == "?":
        return "optional-value"
    if nargs == 0:
        return "flag"
    if isinstance(nargs, int) and nargs > 1:
        return "list+"
    if action in ("store_true", "store_false", "store_const", "count", "BooleanOptionalAction", "help",
                  "version"):
        return "flag"
    return "value"


def _choices(w: Wheel, member: str, node: ast.expr | None):
    if node is None:
        return None
    v = w.value(member, node)
    if isinstance(v, dict):
        v = v["__dict_keys__"]
    return v if isinstance(v, list) else DYNAMIC


def _register(table: dict, names: list[str], dest: str, arity: str, choices, action: str | None) -> None:
    for n in names:
        table[n] = [dest, arity, choices]
    if action == "BooleanOptionalAction":
        for n in names:
            if n.startswith("--"):
                table["--no-" + n[2:]] = [dest, "flag", None]


def _add_argument_calls(w: Wheel, member: str, table: dict) -> None:
    tree = w.tree(member)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names or not names[0].startswith("-"):
            continue
        kw = _kw(node)
        dest = w.value(member, kw["dest"]) if "dest" in kw else None
        if not isinstance(dest, str):
            first = next((n for n in names if n.startswith("--")), names[0])
            dest = first.lstrip("-").replace("-", "_")
        action = _action_name(kw.get("action"))
        nargs = w.value(member, kw["nargs"]) if "nargs" in kw else _action_nargs(w, action)
        _register(table, names, dest, _arity(action, nargs), _choices(w, member, kw.get("choices")), action)


def _subscript_parts(node: ast.expr) -> tuple[str | None, list[ast.expr]]:
    if isinstance(node, ast.Subscript):
        head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
        sl = node.slice
        return head, list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
    return None, []


def _unwrap_optional(node: ast.expr) -> ast.expr:
    head, parts = _subscript_parts(node)
    if head == "Optional":
        return parts[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(sides) == 1:
            return sides[0]
    if head == "Union":
        rest = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
        if len(rest) == 1:
            return rest[0]
    return node


def _annotated_fields(w: Wheel, member: str, table: dict) -> None:
    tree = w.tree(member)
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in cls.body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            head, parts = _subscript_parts(node.annotation)
            if head not in ("A", "Annotated") or len(parts) < 2:
                continue
            inner = parts[0]
            meta = next((p for p in parts[1:] if isinstance(p, ast.Call) and getattr(p.func, "id", None) == "Arg"),
                        None)
            if meta is None and not any(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts[1:]):
                continue
            kw = _kw(meta) if meta is not None else {}
            if "no_cli" in kw and w.value(member, kw["no_cli"]) is True:
                continue
            field = node.target.id
            cli = w.value(member, kw["cli_name"]) if "cli_name" in kw else None
            cli = cli if isinstance(cli, str) else "--" + field.replace("_", "-")
            aliases = w.value(member, kw["aliases"]) if "aliases" in kw else []
            names = [cli] + (aliases if isinstance(aliases, list) else [])
            choices = _choices(w, member, kw.get("choices"))
            nargs = w.value(member, kw["nargs"]) if "nargs" in kw else None
            if "action" in kw:
                action = _action_name(kw["action"])
                if nargs is None:
                    nargs = _action_nargs(w, action)
                akw = kw.get("action_kwargs")
                akw_v = w.value(member, akw) if akw is not None else None
                if isinstance(akw_v, dict):  # a literal dict: its nargs, if any
                    akw_node = {w.value(member, k): v for k, v in zip(akw.keys, akw.values)}
                    if "nargs" in akw_node:
                        nargs = w.value(member, akw_node["nargs"])
                _register(table, names, field, _arity(action, nargs), choices, action)
                continue
            typ = _unwrap_optional(inner)
            t_head, t_parts = _subscript_parts(typ)
            if t_head == "Literal":
                lit = [w.value(member, p) for p in t_parts]
                _register(table, names, field, _arity(None, nargs), choices if choices is not None else lit, None)
                continue
            if t_head in ("List", "list") and "type_parser" not in kw:
                _register(table, names, field, _arity(None, nargs or "+"), choices, None)
                continue
            if isinstance(typ, ast.Name) and typ.id == "bool" or \
                    (isinstance(typ, ast.Constant) and typ.value == "bool"):
                _register(table, names, field, "flag", None, "store_true")
                continue
            _register(table, names, field, _arity(None, nargs), choices, None)


def table_of(version: str) -> dict[str, list]:
    """Release ``version``'s options, read from its wheel."""
    w = Wheel(version)
    table: dict[str, list] = {}
    members = ["sglang/srt/server_args.py"]
    members += sorted(m for m in w.members if m.startswith("sglang/srt/arg_groups/") and m.endswith(".py")
                      and not m.endswith("arg_utils.py"))
    for m in members:
        if w.tree(m) is None:
            continue
        _annotated_fields(w, m, table)
        if m == "sglang/srt/server_args.py":
            _add_argument_calls(w, m, table)
    return dict(sorted(table.items()))


# ---------------------------------------------------------------------------
# The data file


def write_data(tables: dict[str, dict]) -> None:
    DEST.write_bytes(gzip.compress(json.dumps(pack_tables(tables), separators=(",", ":")).encode(), mtime=0))


def differences(old: dict[str, list], new: dict[str, list]) -> list[str]:
    lines = []
    for opt in sorted(set(old) | set(new)):
        a, b = old.get(opt), new.get(opt)
        if a == b:
            continue
        if a is None:
            lines.append(f"+ {opt} {b}")
        elif b is None:
            lines.append(f"- {opt} {a}")
        else:
            lines.append(f"~ {opt} {a} -> {b}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("releases", nargs="*", help="only these releases (default: every one the tables cover)")
    ap.add_argument("--check", action="store_true", help="write nothing; report the tables that differ")
    ns = ap.parse_args(argv)
    stored = stored_tables()
    releases = ns.releases or _releases_with_posts()
    tables = dict(stored)
    differ = 0
    for version in releases:
        try:
            table = table_of(version)
        except wheels.WheelUnavailable as e:
            print(f"sglang=={version}: {e}", file=sys.stderr)
            return 2
        tables[version] = table
        diff = differences(stored.get(version, {}), table)
        if diff:
            differ += 1
            print(f"{version}: {len(table)} options, {len(diff)} differ from options.json.gz")
            for line in diff:
                print(f"  {line}")
        else:
            print(f"{version}: {len(table)} options, as stored")
    if ns.check:
        print(f"{len(releases)} releases read, {differ} differ from options.json.gz")
        return 1 if differ else 0
    write_data(tables)
    print(f"{DEST.relative_to(ROOT)}: {len(tables)} releases, {DEST.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
