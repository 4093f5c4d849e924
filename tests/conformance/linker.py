"""Run SGLang functions that call other SGLang functions: a lazy, stub-first linker.

Each wheel module gets a namespace (a dict subclass) whose missing globals are
resolved on first use, in this order:

1. the stubs the caller gives (platform probes, views, the recorder, ...);
2. a top-level function, class-free literal or constant assignment of that
   module, compiled from the wheel's source (decorators dropped);
3. a name the module imports ``from sglang.… import name``: resolved the same
   way in that module.

Anything else is a ``NameError`` when the function touches it, which the
oracle reports as its own failure, never as an SGLang verdict. Imports inside
function bodies (``from sglang.x import y``) go through the same resolution.
Nothing of SGLang is imported; the wheel's text is compiled piece by piece.
"""

from __future__ import annotations

import __future__
import ast
import builtins
import importlib
from typing import Any, Mapping

from . import extract, wheels


# Standard-library modules whose names SGLang's code may use as they are (no I/O, no environment).
PURE_STDLIB = frozenset({"typing", "functools", "dataclasses", "enum", "collections", "abc", "itertools", "re",
                         "math", "contextlib", "types"})


class _ModuleProxy:
    """What ``from sglang.x import y`` inside an extracted function receives."""

    def __init__(self, linker: "Linker", member: str | None):
        self._linker, self._member = linker, member

    def __getattr__(self, name: str):
        try:
            value = self._linker.resolve(self._member, name)
            self.__dict__[name] = value
            return value
        except KeyError:
            raise ImportError(f"conformance linker: cannot provide {name!r} from {self._member}") from None


def module_member(version: str, module: str) -> str | None:
    path = module.replace(".", "/")
    for cand in (f"{path}.py", f"{path}/__init__.py"):
        if wheels.read_source(version, cand) is not None:
            return cand
    return None


class LazyNamespace(dict):
    def __init__(self, linker: "Linker", member: str):
        super().__init__()
        self._linker, self._member = linker, member

    def __missing__(self, name: str):
        if name.startswith("__"):
            raise KeyError(name)
        if hasattr(builtins, name):  # cached here so the next read does not miss again
            value = getattr(builtins, name)
            self[name] = value
            return value
        value = self._linker.resolve(self._member, name)
        self[name] = value
        return value


class Linker:
    def __init__(self, version: str, stubs: Mapping[str, Any], module_stubs: Mapping[str, Any] | None = None):
        self.version = version
        self.stubs = dict(stubs)
        self.module_stubs = dict(module_stubs or {})
        self._ns: dict[str, LazyNamespace] = {}
        self.linked: list[tuple[str, str]] = []  # (member, name) compiled from the wheel, for reports
        self._fns: dict[tuple, Any] = {}
        self._absent: set[tuple] = set()
        self._proxies: dict[str, Any] = {}

    def namespace(self, member: str) -> LazyNamespace:
        ns = self._ns.get(member)
        if ns is None:
            ns = self._ns[member] = LazyNamespace(self, member)
            b = dict(builtins.__dict__)
            b["__import__"] = self._import
            dict.__setitem__(ns, "__builtins__", b)
            dict.__setitem__(ns, "__name__", member[:-3].replace("/", "."))
        return ns

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        hit = self._proxies.get(name)
        if hit is not None and fromlist:
            return hit
        if name in self.module_stubs:
            return self.module_stubs[name]
        if name.split(".")[0] in PURE_STDLIB:
            return builtins.__import__(name, globals, locals, fromlist, level)
        if name == "sglang" or name.startswith("sglang."):
            if not fromlist:
                raise ImportError(f"conformance linker: plain 'import {name}' is not supported")
            proxy = self._proxies[name] = _ModuleProxy(self, module_member(self.version, name))
            return proxy
        raise ImportError(f"conformance linker: import of {name!r} is not modelled")

    def resolve(self, member: str | None, name: str) -> Any:
        if name in self.stubs:
            return self.stubs[name]
        if member is None:
            raise KeyError(name)
        ns = self.namespace(member)
        if dict.__contains__(ns, name):
            return dict.__getitem__(ns, name)
        value = self._resolve(member, name)
        dict.__setitem__(ns, name, value)
        return value

    def _resolve(self, member: str, name: str) -> Any:
        tree = extract.module_ast(self.version, member)
        if tree is None:
            raise KeyError(name)
        for node in _top_level(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return self._compile(member, node, name)
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
                    try:
                        return ast.literal_eval(node.value)
                    except ValueError:
                        return self._compile(member, node, name)
        for node in _top_level(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if (alias.asname or alias.name) == name and node.module.split(".")[0] in PURE_STDLIB:
                        return getattr(importlib.import_module(node.module), alias.name)
                    if (alias.asname or alias.name) == name and node.module.startswith("sglang"):
                        target = module_member(self.version, node.module)
                        if target is None:  # a submodule imported by name
                            target = module_member(self.version, f"{node.module}.{alias.name}")
                            if target is not None:
                                return _ModuleProxy(self, target)
                            raise KeyError(name)
                        return self.resolve(target, alias.name)
        raise KeyError(name)

    def _compile(self, member: str, node: ast.stmt, name: str, bind: bool = True) -> Any:
        if isinstance(node, ast.FunctionDef):
            node = extract._strip_decorators(node)
        ns = self.namespace(member)
        if isinstance(node, ast.ClassDef):
            # A class body looks its globals up without __missing__: link what it names first.
            # (only the class-level code: method bodies read their globals lazily)
            outer = [*node.bases, *node.keywords, *node.decorator_list,
                     *(st for st in node.body if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)))]
            outer += [a.annotation for st in node.body if isinstance(st, ast.FunctionDef)
                      for a in st.args.args if a.annotation is not None and not extract.has_future_annotations(
                          extract.module_ast(self.version, member))]
            for n in (x for o in outer for x in ast.walk(o)):
                if isinstance(n, ast.Name) and n.id not in ns:
                    try:
                        ns[n.id]
                    except Exception:
                        pass
        tree = extract.module_ast(self.version, member)
        flags = __future__.annotations.compiler_flag if extract.has_future_annotations(tree) else 0
        code = compile(ast.Module(body=[node], type_ignores=[]), f"<sglang {self.version}>/{member}", "exec",
                       flags=flags, dont_inherit=True)
        if bind:
            exec(code, ns)
            self.linked.append((member, name))
            return dict.__getitem__(ns, name)
        # compile into the module namespace without taking over a module-level name of the same spelling
        saved = dict.get(ns, name, _MISSING)
        exec(code, ns)
        value = dict.__getitem__(ns, name)
        if saved is _MISSING:
            dict.__delitem__(ns, name)
        else:
            dict.__setitem__(ns, name, saved)
        self.linked.append((member, f"<method> {name}"))
        return value

    def function(self, member: str, name: str, cls: str | None = None):
        """Compile ``name`` (or method ``cls.name``) of ``member`` in its module namespace."""
        key = (member, name, cls)
        fn = self._fns.get(key)
        if fn is None:
            if key in self._absent:
                raise KeyError(f"{cls}.{name}")
            if cls is None:
                fn = self.resolve(member, name)
            else:
                node = extract.find_def(self.version, member, name, cls)
                if node is None:
                    self._absent.add(key)
                    raise KeyError(f"{cls}.{name}")
                # a method is compiled on its own: it must not take the module-level name
                fn = self._compile(member, node, name, bind=False)
            self._fns[key] = fn
        return fn

    def statements(self, member: str, fname: str, params: list[str], body: list[ast.stmt]):
        """A function made of selected statements of an SGLang function (kept verbatim, line numbers too)."""
        key = (member, fname, "<statements>")
        if key in self._fns:
            return self._fns[key]
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], kwonlyargs=[],
                             kw_defaults=[], defaults=[])
        fn = ast.FunctionDef(name=fname, args=args, body=body, decorator_list=[], returns=None)
        ast.copy_location(fn, body[0])
        ast.fix_missing_locations(fn)
        self._fns[key] = self._compile(member, fn, fname)
        return self._fns[key]


_MISSING = object()


def _top_level(tree: ast.Module):
    """Top-level statements, looking into ``if``/``try`` blocks (TYPE_CHECKING, optional imports)."""
    for node in tree.body:
        yield node
        if isinstance(node, ast.If):
            yield from node.body
            yield from node.orelse
        elif isinstance(node, ast.Try):
            yield from node.body
