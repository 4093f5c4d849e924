"""Take single functions and constants out of an SGLang wheel's source with ``ast``.

A function is compiled from its own AST (original line numbers kept, so a
traceback points at SGLang's line) into a namespace the caller builds. Every
global name the function reads must be supplied: by the caller's stubs, by a
literal constant of the same module, or by a builtin. A name nobody supplies is
an error (``ExtractError``), so a new dependency in a future SGLang release
fails loudly instead of being silently mis-modelled.
"""

from __future__ import annotations

import __future__
import ast
import builtins
import functools
import types
import typing
from typing import Any, Callable, Iterable, Mapping

from . import wheels


TYPING_NAMES = frozenset({"Any", "Optional", "Dict", "List", "Tuple", "Union", "Callable", "Iterable", "Sequence"})


class ExtractError(RuntimeError):
    pass


@functools.lru_cache(maxsize=None)
def module_ast(version: str, member: str) -> ast.Module | None:
    src = wheels.read_source(version, member)
    return None if src is None else ast.parse(src, filename=member)


def find_def(version: str, member: str, name: str, cls: str | None = None) -> ast.FunctionDef | None:
    """A top-level function ``name`` or, with ``cls``, the method ``cls.name``."""
    tree = module_ast(version, member)
    if tree is None:
        return None
    body: Iterable[ast.stmt] = tree.body
    if cls is not None:
        klass = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if klass is None:
            return None
        body = klass.body
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def find_assign(version: str, member: str, name: str) -> ast.stmt | None:
    tree = module_ast(version, member)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node
    return None


def module_literal(version: str, member: str, name: str) -> tuple[bool, Any]:
    """(found, value) of a module-level ``name = <literal>``."""
    node = find_assign(version, member, name)
    if node is None or node.value is None:
        return False, None
    try:
        return True, ast.literal_eval(node.value)
    except ValueError:
        return False, None


def free_names(func: ast.FunctionDef, *, lazy_annotations: bool = False) -> set[str]:
    """Global names a function reads (loads that are not parameters or locals)."""
    local: set[str] = set()
    args = func.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            local.add(a.arg)
    loads: set[str] = set()
    for node in ast.walk(func):
        if node is func:
            continue
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else local).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
        elif isinstance(node, ast.alias):
            local.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            local.add(node.name)
    # annotations are evaluated at definition time, unless the module defers them
    if lazy_annotations:
        return loads - local - _annotation_only_names(func)
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if a.annotation is not None:
            loads |= {n.id for n in ast.walk(a.annotation) if isinstance(n, ast.Name)}
    if func.returns is not None:
        loads |= {n.id for n in ast.walk(func.returns) if isinstance(n, ast.Name)}
    return loads - local


def _annotation_only_names(func: ast.FunctionDef) -> set[str]:
    ann: set[str] = set()
    args = func.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None and a.annotation is not None:
            ann |= {n.id for n in ast.walk(a.annotation) if isinstance(n, ast.Name)}
    if func.returns is not None:
        ann |= {n.id for n in ast.walk(func.returns) if isinstance(n, ast.Name)}
    body_loads = {
        n.id for stmt in func.body for n in ast.walk(stmt) if isinstance(n, ast.Name)
    }
    return ann - body_loads


def has_future_annotations(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )


def string_literals(func: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(func) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def make_import(stub_modules: Mapping[str, Any]) -> Callable[..., Any]:
    """An ``__import__`` that serves ``sglang.*`` (and other named modules) from stubs.

    ``from sglang.x import y`` inside an extracted function then binds the stub
    ``y``; any real import of SGLang is impossible.
    """

    real_import = builtins.__import__
    served: dict[tuple, Any] = {}

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        hit = served.get((name, tuple(fromlist or ())))
        if hit is not None:
            return hit
        if name == "sglang" or name.startswith("sglang.") or name in stub_modules:
            mod = stub_modules.get(name) or stub_modules.get("sglang.*")
            if mod is None:
                raise ImportError(f"conformance oracle: no stub for module {name!r}")
            for item in fromlist or ():
                if not hasattr(mod, item):
                    raise ImportError(f"conformance oracle: no stub for {name}.{item}")
            served[(name, tuple(fromlist or ()))] = mod
            return mod
        return real_import(name, globals, locals, fromlist, level)

    return _import


def compile_defs(
    version: str,
    member: str,
    nodes: list[ast.stmt],
    stubs: Mapping[str, Any],
    *,
    import_stubs: Mapping[str, Any] | None = None,
    namespace: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Execute function definitions/assignments taken from ``member`` in a new namespace.

    Decorators are dropped (SGLang uses them to register hooks and caches; they
    do not change what the function body decides).
    """
    ns: dict[str, Any] = {} if namespace is None else namespace
    bdict = dict(builtins.__dict__)
    bdict["__import__"] = make_import(import_stubs or {"sglang.*": types.SimpleNamespace(**stubs)})
    ns["__builtins__"] = bdict
    ns["__name__"] = f"sglang_{version}_conformance"
    tree = module_ast(version, member)
    lazy = tree is not None and has_future_annotations(tree)
    needed: set[str] = set()
    body: list[ast.stmt] = []
    defined: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.FunctionDef):
            node = _strip_decorators(node)
            needed |= free_names(node, lazy_annotations=lazy)
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            needed |= _expr_needs(node.value)
            defined |= {t.id for tgt in node.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
        body.append(node)
    # Resolve every free name; module constants built from other constants
    # (e.g. a dict inverted by a comprehension) are taken over as statements.
    prelude: list[ast.stmt] = []
    pending = sorted(needed - defined)
    while pending:
        name = pending.pop(0)
        if name in ns or name in defined:
            continue
        if name in TYPING_NAMES and name not in stubs:
            ns[name] = getattr(typing, name)
            continue
        if name in stubs:
            ns[name] = stubs[name]
            continue
        found, value = module_literal(version, member, name)
        if found:
            ns[name] = value
            continue
        node = find_assign(version, member, name)
        if isinstance(node, ast.Assign) and not any(isinstance(n, ast.Call) for n in ast.walk(node.value)) \
                or isinstance(node, ast.Assign) and _only_safe_calls(node.value):
            prelude.insert(0, node)
            defined |= {t.id for tgt in node.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
            pending.extend(sorted(_expr_needs(node.value) - defined))
            continue
        if hasattr(builtins, name):
            continue
        raise ExtractError(f"sglang {version} {member}: no value for global {name!r}")
    body = prelude + body
    flags = __future__.annotations.compiler_flag if lazy else 0
    code = compile(ast.Module(body=body, type_ignores=[]), f"<sglang {version}>/{member}", "exec", flags=flags, dont_inherit=True)
    exec(code, ns)
    return ns


_SAFE_CALLS = frozenset({"dict", "list", "tuple", "set", "frozenset", "sorted"})


def _expr_needs(expr: ast.AST) -> set[str]:
    loads = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    stores = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return loads - stores


def _only_safe_calls(expr: ast.AST) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in _SAFE_CALLS:
                continue
            if isinstance(f, ast.Attribute) and f.attr in ("items", "keys", "values"):
                continue
            return False
    return True


def _strip_decorators(node: ast.FunctionDef) -> ast.FunctionDef:
    if not node.decorator_list:
        return node
    clone = ast.FunctionDef(
        name=node.name, args=node.args, body=node.body, decorator_list=[],
        returns=node.returns, type_comment=node.type_comment,
        **({"type_params": node.type_params} if hasattr(node, "type_params") else {}),
    )
    return ast.copy_location(clone, node)
