"""One walk of a Python module: imports, scopes, calls and name uses; positions on demand.

:class:`ModuleIndex` walks the module once and keeps the calls whose callee
may be a launch; :class:`ScopeWalk` walks a scope for the few names a launch
uses (assignments, mutations, ``os.environ`` changes) as :class:`Event` s,
each scope at most once; :class:`Positions` gives the character offsets of
nodes, computed only when a launch call exists.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Protocol

import libcst as cst

from kv4lint.base.record import Record
from kv4lint.base.source import LineIndex
from kv4lint.sglang.commands import HELPERS

# How calls treat the names passed to them (what may change a value between its assignment and a launch).
DISPLAY_CALLS = {"print", "print_highlight", "debug", "info", "warning", "warn", "error", "exception", "critical",
                 "log", "echo", "secho"}
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print", "echo",
               "write", "secho"}
LIST_MUTATORS = {"append", "extend", "insert"}
DICT_MUTATORS = {"update", "setdefault"}
OPAQUE_MUTATORS = {"pop", "remove", "clear", "sort", "reverse", "popitem", "__setitem__", "__delitem__",
                   "__iadd__"}
# Calls that read a value without keeping it: passing a list to them does not change it.
READERS = {"print", "len", "str", "repr", "list", "tuple", "sorted", "enumerate", "zip", "any", "all", "isinstance",
           "join", "format", "dumps", "quote", "debug", "info", "warning", "warn", "error", "exception", "critical",
           "log", "copy", "deepcopy", "set", "dict", "iter", "reversed", "map", "filter", "min", "max", "sum",
           "print_highlight", "write", "echo", "secho", "Path"}

# Launch calls read their arguments without keeping them.
LAUNCH_TERMS = {"run", "Popen", "call", "check_call", "check_output", "system", "popen", "getoutput",
                "getstatusoutput", "create_subprocess_exec", "create_subprocess_shell", "launch_server_cmd",
                "prepare_server_args", "ServerArgs", "Engine", "Runtime", "from_cli_args", "execv", "execvp",
                "execve", "execvpe", "spawnv", "spawnvp", "posix_spawn", "posix_spawnp", *HELPERS}


# ---------------------------------------------------------------------------
# Scopes


class Event(Record):
    """What a statement does to a name: ``kind`` (assign, aug, method, setitem, delitem, other, pass) at ``pos`` in
    ``frames``; ``node``, the value expression or the call; ``extra``, the method name, the subscript's key node or
    the statement node."""

    __slots__ = ("kind", "pos", "frames", "node", "extra", "scope")

    def __init__(self, kind: str, pos: int, frames: tuple, node: object = None, extra: object = None,
                 scope: object = None) -> None:
        self.kind = kind
        self.pos = pos
        self.frames = frames
        self.node = node
        self.extra = extra
        self.scope = scope


class ScopeTable:
    def __init__(self):
        self.events: dict[str, list[Event]] = {}
        self.bound: set[str] = set()
        self.attr_events: dict[str, list[Event]] = {}
        self.env_events: list[Event] = []
        self.loads: dict[str, int] = {}
        self.names: dict[str, int] = {}  # every Name node of the identifier in this scope's own body
        self.call_frames: dict[int, tuple] = {}
        self.load_frames: dict[int, tuple] = {}


class Scope:
    def __init__(self, node, kind: str, parent: "Scope | None"):
        self.node = node
        self.kind = kind  # module | function | class | lambda
        self.parent = parent
        self.children: list[Scope] = []
        self._table: ScopeTable | None = None
        self.counts: dict[str, int] = {}  # Name nodes of each identifier in this scope's own code
        self.bound: set[str] = set()  # identifiers this scope binds (assignments, parameters, imports ...)
        self.globals: set[str] = set()  # declared global / nonlocal here


# ---------------------------------------------------------------------------
# Walking the tree without libcst's visitors (they rebuild every node they pass)

_NO_CHILD_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorator",
                    "header", "footer", "newline", "colon", "equal", "operator", "dot", "asynchronous",
                    "trailing_whitespace", "first_line", "empty_lines")
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls) -> tuple[str, ...]:
    f = _FIELDS.get(cls)
    if f is None:
        f = tuple(fl.name for fl in dataclasses.fields(cls) if not fl.name.startswith(_NO_CHILD_FIELDS))
        _FIELDS[cls] = f
    return f


# type -> 1: a node, 2: a sequence, 0: neither (``isinstance`` of libcst's abstract ``CSTNode`` goes through the
# ABC machinery on every call; the answer depends on the type alone). Read from the type's MRO, not issubclass: for a
# type that is no node, the ABC asks every one of libcst's ~250 node classes and caches the "no" in each (a weak
# reference and its callback: 2,200 objects for str, list, tuple, None and MaybeSentinel, that the cyclic collector
# walks on each full collection of a host's process; nothing registers a virtual subclass of CSTNode).
_KINDS: dict[type, int] = {}


def _kind(t: type) -> int:
    k = _KINDS.get(t)
    if k is None:
        k = _KINDS[t] = 1 if cst.CSTNode in t.__mro__ else 2 if issubclass(t, (tuple, list)) else 0
    return k


def child_nodes(node):
    kinds = _KINDS
    for name in _child_fields(type(node)):
        v = getattr(node, name)
        k = kinds.get(type(v))
        if k is None:
            k = _kind(type(v))
        if k == 1:
            yield name, v
        elif k == 2:
            for x in v:
                if (kinds.get(type(x)) or _kind(type(x))) == 1:
                    yield name, x


# Frames: where a statement sits relative to the branches and loops of its scope.
# ("c", id, part): a conditional branch; ("l", id, "b"): a loop body. An ``if``/``elif``/``else`` chain is one
# branch point, its head's: part "b" the ``if``, 1, 2, ... the ``elif`` arms, "e" the ``else`` (or none of them):
# an arm nests no deeper than the ``if`` (480 arms are not 480 levels).
def _child_frames(node, name: str, frames: tuple, chains: dict | None = None) -> tuple:
    kind = _FRAMING.get(type(node))
    if kind is None:
        return frames
    if kind == "if":
        head, k = chains.get(id(node), (id(node), 0)) if chains is not None else (id(node), 0)
        if name == "body":
            return frames + (("c", head, "b" if k == 0 else k),)
        if name == "orelse":
            if chains is not None and type(node.orelse) is cst.If:
                chains[id(node.orelse)] = (head, k + 1)
                return frames
            return frames + (("c", head, "e"),)
        if k:
            return frames  # an elif's test: read when the arms before it failed
    elif kind == "loop":
        if name == "body":
            return frames + (("l", id(node), "b"),)
        if name == "orelse":
            return frames + (("c", id(node), "e"),)
    elif kind == "arm":
        if name == "body":
            return frames + (("c", id(node), "b"),)
    elif name == "orelse":  # a try's else
        return frames + (("c", id(node), "e"),)
    return frames


# The nodes that open a frame, by their exact type (libcst's parser makes no subclass of them; an isinstance test of
# a libcst class goes through ABCMeta, and _child_frames is asked of every node).
_FRAMING = {cst.If: "if", cst.For: "loop", cst.While: "loop", cst.ExceptHandler: "arm", cst.MatchCase: "arm",
            getattr(cst, "ExceptStarHandler", cst.ExceptHandler): "arm", cst.Try: "try",
            getattr(cst, "TryStar", cst.Try): "try"}


def chain_arms(head) -> list:
    """The tests of an ``if``/``elif`` chain, arm by arm (the ``if``'s first)."""
    tests = []
    node = head
    while type(node) is cst.If:  # the parser's own class (isinstance of libcst's ABCs caches each other type)
        tests.append(node.test)
        node = node.orelse
    return tests


# ---------------------------------------------------------------------------
# Pass 1: the index


class ModuleIndex:
    """Imports, scopes, calls and name counts of the whole module (one walk)."""

    def __init__(self, module):
        self.imports: dict[str, str] = {}
        self.star: list[str] = []
        self.defined: set[str] = set()
        self.calls: list[tuple] = []
        self.counts: dict[str, int] = {}
        self.top: dict[int, int] = {}  # id(node) -> index of the top-level statement holding it
        self.classes: list[Scope] = []
        self.module_scope = Scope(module, "module", None)
        self._walk(module)

    def _walk(self, module) -> None:
        skip: set[int] = set()
        counts = self.counts
        calls = self.calls
        top = self.top
        stack = [(stmt, self.module_scope, k) for k, stmt in enumerate(module.body)]
        pop, push = stack.pop, stack.append
        Name, Call, Attribute, Arg, Param = cst.Name, cst.Call, cst.Attribute, cst.Arg, cst.Param
        while stack:
            node, scope, k = pop()
            top[id(node)] = k
            t = type(node)
            if t is Name:
                if id(node) not in skip:
                    counts[node.value] = counts.get(node.value, 0) + 1
                    sc = scope.counts
                    sc[node.value] = sc.get(node.value, 0) + 1
                continue
            if t is Call:
                calls.append((node, scope))
            elif t is Attribute:
                skip.add(id(node.attr))
            elif t is Arg:
                if node.keyword is not None:
                    skip.add(id(node.keyword))
            elif t is Param:
                skip.add(id(node.name))
                scope.bound.add(node.name.value)
            elif t is cst.FunctionDef or t is cst.ClassDef or t is cst.Lambda:
                if t is not cst.Lambda:
                    self.defined.add(node.name.value)
                    skip.add(id(node.name))
                    scope.bound.add(node.name.value)
                s = Scope(node, {cst.FunctionDef: "function", cst.ClassDef: "class"}.get(t, "lambda"), scope)
                if t is cst.ClassDef:
                    self.classes.append(s)
                scope.children.append(s)
                scope = s
            elif t is cst.Import:
                self._import(node, scope)
                continue
            elif t is cst.ImportFrom:
                self._import_from(node, scope)
                continue
            elif t is cst.Assign:
                for tg in node.targets:
                    if isinstance(tg.target, Name) and scope is self.module_scope:
                        self.defined.add(tg.target.value)
                    _bind_names(tg.target, scope.bound)
            elif t is cst.AnnAssign or t is cst.AugAssign or t is cst.NamedExpr:
                _bind_names(node.target, scope.bound)
            elif t is cst.For or t is cst.CompFor:
                _bind_names(node.target, scope.bound)
            elif t is cst.WithItem:
                if node.asname is not None:
                    _bind_names(node.asname.name, scope.bound)
            elif t is cst.ExceptHandler:
                if node.name is not None:
                    _bind_names(node.name.name, scope.bound)
            elif t is cst.Global or t is cst.Nonlocal:
                for n in node.names:
                    scope.globals.add(n.name.value)
            for _name, child in child_nodes(node):
                push((child, scope, k))

    def _import(self, node, scope) -> None:
        for a in node.names:
            full = dotted_name(a.name)
            if full is None:
                continue
            if a.asname is not None and isinstance(a.asname.name, cst.Name):
                self.imports.setdefault(a.asname.name.value, full)
                scope.bound.add(a.asname.name.value)
            else:
                top = full.split(".")[0]
                self.imports.setdefault(top, top)
                scope.bound.add(top)

    def _import_from(self, node, scope) -> None:
        mod = ("." * len(node.relative)) + ((dotted_name(node.module) or "") if node.module is not None else "")
        if isinstance(node.names, cst.ImportStar):
            self.star.append(mod)
            return
        for a in node.names:
            name = dotted_name(a.name)
            if name is None:
                continue
            local = a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) else name
            # from . import x: ".x" (the module x beside this one); from .m import x: ".m.x"
            self.imports.setdefault(local, f"{mod}{name}" if mod.endswith(".") or not mod else f"{mod}.{name}")
            scope.bound.add(local)


def _bind_names(t, out: set) -> None:
    if isinstance(t, cst.Name):
        out.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            _bind_names(e.value, out)
    elif isinstance(t, cst.StarredElement):
        _bind_names(t.value, out)


def dotted_name(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


# ---------------------------------------------------------------------------
# Pass 2: one scope's bindings, mutations and uses


def _term(func) -> str | None:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


class Starts(Protocol):
    """What a scope walk asks of the evaluator that runs it (kv4lint.frontends.python.evaluate): where a node
    starts in the file.  The evaluator builds on this module, never the reverse."""

    def start(self, node: cst.CSTNode) -> int: ...


class ScopeWalk:
    def __init__(self, scanner: Starts, scope: Scope):
        self.sc = scanner
        self.scope = scope
        self.t = ScopeTable()
        self.frames: tuple = ()
        self._skip: set[int] = set()
        self._noname: set[int] = set()
        self._chains: dict[int, tuple[int, int]] = {}  # an elif's If -> (the chain's head, its arm)
        node = scope.node
        roots = []
        if scope.kind == "module":
            roots = list(node.body)
        elif scope.kind == "class":
            roots = [node.body]
        else:  # function, lambda: parameters are bindings of unknown value
            self._params(node.params)
            roots = [node.body]
        self._walk(roots)

    def _params(self, params) -> None:
        for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self._other(p.name.value, p)
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                self._other(p.name.value, p)

    def _walk(self, roots) -> None:
        stack = [(r, (), False) for r in roots]
        pop, push = stack.pop, stack.append
        Name = cst.Name
        while stack:
            node, frames, display = pop()
            self.frames = frames
            t = type(node)
            if t is Name:
                self._name(node, display)
                continue
            h = _HANDLERS.get(t)
            if h is not None:
                r = h(self, node)
                if r is False:
                    continue
            if t is cst.Call:
                display = display or _term(node.func) in DISPLAY_CALLS
            for name, child in child_nodes(node):
                push((child, _child_frames(node, name, frames, self._chains), display))

    # -- events
    def _ev(self, name: str, kind: str, node, value=None, extra=None):
        if kind in ("assign", "aug", "other"):
            self.t.bound.add(name)
        self.t.events.setdefault(name, []).append(
            Event(kind, self.sc.start(node), self.frames, value, extra, self.scope))

    def _other(self, name: str, node):
        self._ev(name, "other", node)

    def _attr_ev(self, attr: str, kind: str, node, value=None):
        self.t.attr_events.setdefault(attr, []).append(
            Event(kind, self.sc.start(node), self.frames, value, node, self.scope))

    def _name(self, node, display: bool) -> None:
        n = node.value
        i = id(node)
        if i not in self._noname:
            self.t.names[n] = self.t.names.get(n, 0) + 1
        if i in self._skip or display:
            return
        self.t.loads[n] = self.t.loads.get(n, 0) + 1

    def _target(self, t, value, stmt) -> None:
        if isinstance(t, cst.Name):
            self._skip.add(id(t))
            if value is None:
                self._other(t.value, stmt)
            else:
                self._ev(t.value, "assign", stmt, value, stmt)
                # `x = x + [...]`: the name on the right is the same list, not another use of it.
                for n in _names_in(value, t.value):
                    self._skip.add(id(n))
            return
        if isinstance(t, (cst.Tuple, cst.List)):
            elems = t.elements
            vals = None
            if value is not None and isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elems) \
                    and not any(isinstance(e, cst.StarredElement) for e in (*elems, *value.elements)):
                vals = [e.value for e in value.elements]
            for k, e in enumerate(elems):
                self._target(e.value, vals[k] if vals else None, stmt)
            return
        if isinstance(t, cst.StarredElement):
            self._target(t.value, None, stmt)
            return
        if isinstance(t, cst.Attribute):
            if isinstance(t.value, cst.Name) and t.value.value in ("self", "cls"):
                self._attr_ev(t.attr.value, "assign" if value is not None else "other", stmt, value)
            return
        if isinstance(t, cst.Subscript):
            base = t.value
            key = _single_index(t)
            if isinstance(base, cst.Name):
                self._skip.add(id(base))
                if key is not None and value is not None:
                    self._ev(base.value, "setitem", stmt, value, (key, stmt))
                else:
                    self._ev(base.value, "other", stmt)
            elif key is not None and value is not None:
                self.t.env_events.append(Event("setitem", self.sc.start(stmt), self.frames, value, (base, key, stmt),
                                               self.scope))
            elif isinstance(base, cst.Attribute) and isinstance(base.value, cst.Name) \
                    and base.value.value in ("self", "cls"):
                self._attr_ev(base.attr.value, "other", stmt)

    def _bind_all(self, t, stmt) -> None:
        if isinstance(t, cst.Name):
            self._skip.add(id(t))
            self._other(t.value, stmt)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                self._bind_all(e.value, stmt)
        elif isinstance(t, cst.StarredElement):
            self._bind_all(t.value, stmt)

    # -- handlers (return False: do not walk the children)
    def on_FunctionDef(self, node):
        self._other(node.name.value, node)
        self._skip.add(id(node.name))
        self._noname.add(id(node.name))
        return False

    on_ClassDef = on_FunctionDef

    def on_Lambda(self, node):
        return False

    def on_Assign(self, node):
        for t in node.targets:
            self._target(t.target, node.value, node)

    def on_AnnAssign(self, node):
        if node.value is not None:
            self._target(node.target, node.value, node)
        elif isinstance(node.target, cst.Name):
            self._skip.add(id(node.target))

    def on_AugAssign(self, node):
        t = node.target
        if isinstance(t, cst.Name):
            self._skip.add(id(t))
            self._ev(t.value, "aug" if isinstance(node.operator, cst.AddAssign) else "other", node, node.value, node)
        elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value in ("self", "cls"):
            self._attr_ev(t.attr.value, "other", node)
        elif isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name):
            self._skip.add(id(t.value))
            self._ev(t.value.value, "other", node)

    def on_For(self, node):
        self._bind_all(node.target, node)

    on_CompFor = on_For

    def on_WithItem(self, node):
        if node.asname is not None:
            self._bind_all(node.asname.name, node)

    def on_ExceptHandler(self, node):
        if node.name is not None:
            self._bind_all(node.name.name, node)

    def on_NamedExpr(self, node):
        self._bind_all(node.target, node)

    def on_Import(self, node):
        for a in node.names:
            if a.asname is not None:
                self._bind_all(a.asname.name, node)
            else:
                d = dotted_name(a.name)
                if d:
                    self._other(d.split(".")[0], node)
        return False

    def on_ImportFrom(self, node):
        if not isinstance(node.names, cst.ImportStar):
            for a in node.names:
                if a.asname is not None:
                    self._bind_all(a.asname.name, node)
                elif isinstance(a.name, cst.Name):
                    self._other(a.name.value, node)
        return False

    def on_Global(self, node):
        for n in node.names:
            self._other(n.name.value, node)
            self._skip.add(id(n.name))

    on_Nonlocal = on_Global

    def on_Del(self, node):
        t = node.target
        targets = t.elements if isinstance(t, (cst.Tuple, cst.List)) else [t]
        for e in targets:
            e = getattr(e, "value", e) if not isinstance(e, (cst.Name, cst.Subscript)) else e
            if isinstance(e, cst.Name):
                self._skip.add(id(e))
                self._other(e.value, node)
            elif isinstance(e, cst.Subscript) and isinstance(e.value, cst.Name):
                self._skip.add(id(e.value))
                key = _single_index(e)
                self._ev(e.value.value, "delitem" if key is not None else "other", node, None, (key, node))

    def on_MatchAs(self, node):
        if node.name is not None:
            self._bind_all(node.name, node)

    on_MatchStar = on_MatchAs

    def on_Attribute(self, node):
        self._skip.add(id(node.attr))
        self._noname.add(id(node.attr))

    def on_Param(self, node):
        self._skip.add(id(node.name))
        self._noname.add(id(node.name))

    def on_Arg(self, node):
        if node.keyword is not None:
            self._skip.add(id(node.keyword))
            self._noname.add(id(node.keyword))

    def on_Call(self, node):
        self.t.call_frames[id(node)] = self.frames
        f = node.func
        term = _term(f)
        if isinstance(f, cst.Attribute):
            recv = f.value
            meth = f.attr.value
            mut = meth in LIST_MUTATORS or meth in DICT_MUTATORS or meth in OPAQUE_MUTATORS
            if isinstance(recv, cst.Name):
                if mut:
                    self._skip.add(id(recv))
                    self._ev(recv.value, "method", node, node, meth)
            elif isinstance(recv, cst.Attribute) and isinstance(recv.value, cst.Name) \
                    and recv.value.value in ("self", "cls") and mut:
                self._attr_ev(recv.attr.value, "other", node)
            if meth in ("update", "setdefault", "pop", "__setitem__") or (
                    meth == "putenv" and dotted_name(recv) == "os"):
                self.t.env_events.append(Event("method", self.sc.start(node), self.frames, node, (recv, meth),
                                               self.scope))
        # A name handed to another function may be changed there (a list or dict).
        launch = term in LAUNCH_TERMS  # reads its arguments; a real use of them
        reader = term in READERS or term in DISPLAY_CALLS
        for a in node.args:
            v = a.value
            if isinstance(v, cst.Name):
                if reader and not launch:
                    self._skip.add(id(v))
                elif not launch:
                    self._ev(v.value, "pass", node, node, None)


_HANDLERS = {getattr(cst, name[3:]): fn for name, fn in vars(ScopeWalk).items()
             if name.startswith("on_") and hasattr(cst, name[3:])}
for _cls in ("ExceptStarHandler",):
    if hasattr(cst, _cls):
        _HANDLERS[getattr(cst, _cls)] = ScopeWalk.on_ExceptHandler


def _names_in(node, name: str) -> list:
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            if n.value == name:
                out.append(n)
            continue
        if isinstance(n, cst.Attribute):
            stack.append(n.value)
            continue
        stack.extend(c for _f, c in child_nodes(n))
    return out


def _single_index(sub) -> object | None:
    sl = sub.slice
    if len(sl) != 1 or not isinstance(sl[0].slice, cst.Index):
        return None
    return sl[0].slice.value


# ---------------------------------------------------------------------------
# Positions: one code generation pass that records character offsets


_CODEGEN_FRAMES = 4 * 1000 + 1000  # 1000: kv4lint.frontends.python.MAX_ELIF (a leaf cannot import it)


def node_offsets(module, node=None) -> tuple[dict[int, tuple[int, int]], str]:
    """id(n) -> (start, end) character offsets (syntactic: without the whitespace a node owns) of
    ``node`` (default: the module) and everything in it, counted from the start of its code; and the code."""
    state = _offsets_state()(module)
    # libcst generates an elif inside the one before it (two frames an arm): room for the longest chain the
    # frontend reads (MAX_ELIF) above what the caller already uses.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + _CODEGEN_FRAMES)
    try:
        (module if node is None else node)._codegen(state)
    finally:
        sys.setrecursionlimit(limit)
    return state.spans, "".join(state.tokens)


_OffsetsState = None


def _offsets_state():
    """The code generator's state that records each node's offsets: one class, made with the first ask (a class
    made per ask is a cycle the collector alone frees, and held the module's tree with it until then)."""
    global _OffsetsState
    if _OffsetsState is not None:
        return _OffsetsState
    from libcst._nodes.internal import CodegenState

    class OffsetsState(CodegenState):
        def __init__(self, module):
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.off = 0
            self.starts: list[int] = []
            self.spans: dict[int, tuple[int, int]] = {}

        def add_indent_tokens(self):
            for tok in self.indent_tokens:
                self.tokens.append(tok)
                self.off += len(tok)

        def add_token(self, value):
            self.tokens.append(value)
            self.off += len(value)

        def before_codegen(self, node):
            self.starts.append(self.off)

        def after_codegen(self, node):
            start = self.starts.pop()
            self.spans.setdefault(id(node), (start, self.off))

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _Syntactic(self, node, start_node, end_node)

    _OffsetsState = OffsetsState
    return OffsetsState


class _Syntactic:
    """What :func:`_offsets_state`'s ``record_syntactic_position`` returns: records ``node``'s syntactic offsets
    when the code inside it is generated (not on an exception: the code generation stops there, and so does
    this). A class, not a ``contextmanager``: libcst enters one for most nodes, and a generator's context costs
    three times as much (about 1,500 a launch file)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.off

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            return
        start, end = self.start, self.state.off
        spans = self.state.spans
        if self.start_node is not None:
            start = spans[id(self.start_node)][0]
        if self.end_node is not None:
            end = spans[id(self.end_node)][1]
        spans[id(self.node)] = (start, end)


class ProvidedPositions:
    def __init__(self, spans):
        self.spans = spans

    def get(self, node):
        return self.spans[id(node)]

    def start(self, node):
        return self.spans[id(node)][0]


class Positions:
    """Offsets computed one top-level statement at a time, when a node in it is first asked for.

    Where each top-level statement starts comes from CPython's parser (fast); the
    statement's code is generated to find the offsets inside it and checked against
    the text.  Anything unexpected falls back to generating the whole module.
    """

    def __init__(self, text: str, module, top: dict[int, int], top_lines: list[int] | None = None):
        from libcst._nodes.internal import CodegenState  # noqa: F401 - fail here, not midway

        self.text = text
        self.module = module
        self.top = top
        self.spans: dict[int, tuple[int, int]] = {id(module): (0, len(text))}
        self.starts = self._starts(top_lines)
        self.done: set[int] = set()
        # Where top-level statements (and the first small statement of each line) start: enough to
        # order the module's assignments without generating their code.
        self.first: dict[int, int] = {}
        if self.starts is not None:
            for k, st in enumerate(module.body):
                self.first[id(st)] = self.starts[k]
                if isinstance(st, cst.SimpleStatementLine) and st.body:
                    self.first[id(st.body[0])] = self.starts[k]

    def _starts(self, top_lines: list[int] | None) -> list[int] | None:
        """Where each top-level statement of the module starts, from the line of each top-level statement of
        CPython's parse (``top_lines``: the caller's, else parsed here)."""
        if top_lines is None:
            import ast

            try:
                top_lines = [st.lineno for st in ast.parse(self.text).body]
            except Exception:  # noqa: BLE001 - syntax this Python does not know, too deep, ...
                return None
        lines = LineIndex(self.text)
        starts = []
        j = 0
        for st in self.module.body:
            if j >= len(top_lines):
                return None
            starts.append(lines.offset(top_lines[j], 1))
            j += len(st.body) if isinstance(st, cst.SimpleStatementLine) else 1
        return starts if j == len(top_lines) else None

    def get(self, node) -> tuple[int, int]:
        r = self.spans.get(id(node))
        if r is not None:
            return r
        k = self.top.get(id(node))
        if k is None or self.starts is None or k in self.done or not self._statement(k):
            self._all()
        return self.spans[id(node)]

    def _statement(self, k: int) -> bool:
        stmt = self.module.body[k]
        local, code = node_offsets(self.module, stmt)
        base = self.starts[k] - local[id(stmt)][0]
        if base < 0 or self.text[base:base + len(code)] != code:
            return False
        spans = self.spans
        for i, (a, b) in local.items():
            spans[i] = (a + base, b + base)
        self.done.add(k)
        return True

    def start(self, node) -> int:
        r = self.spans.get(id(node))
        if r is not None:
            return r[0]
        f = self.first.get(id(node))
        return f if f is not None else self.get(node)[0]

    def _all(self) -> None:
        spans, _code = node_offsets(self.module)
        self.spans.update(spans)
        self.starts = None
        self.first = {}
