"""The libcst half of the Python frontend (imported only when a file may hold a launch).

Three steps:

1. :class:`_Index` walks the module once: imports, scopes, calls, name counts.
   Only calls whose callee resolves to a launch entry point go further.
2. Positions (libcst's ``PositionProvider``) are computed only when such a call
   exists; the scopes the launches need are then walked for the few names used
   (:class:`_ScopeWalk`), each at most once.
3. Each launch call's arguments are evaluated partially (:class:`Scanner`.ev):
   strings with per-character offsets, lists with removal spans, dicts, unknowns.

Nothing here executes or imports the scanned code.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kv4lint.frontends._embed import Word as ArgWord
from kv4lint.frontends.hints import env_hints, fact_hints
from kv4lint.frontends.python import decode_body, decode_literal
from kv4lint.model import FileError, Hint, Launch, Provenance, ScanResult, Span, Value
from kv4lint.prefilter import ASYNC_EXEC as _ASYNC_EXEC
from kv4lint.prefilter import EXEC_L as _EXEC_L
from kv4lint.prefilter import EXEC_V as _EXEC_V
from kv4lint.prefilter import SHELL_ONLY as _SHELL_ONLY
from kv4lint.prefilter import SUBPROCESS_ARGV as _SUBPROCESS_ARGV
from kv4lint.prefilter import shell_may_launch
from kv4lint.sglang.commands import CONFIG_ENTRIES, unwrap
from kv4lint.source import LineIndex, OffsetMap
from kv4lint.suppression import codes_above, file_codes, trailing_codes

# ---------------------------------------------------------------------------
# Entry points


@dataclass(frozen=True)
class _Helper:
    model: int  # positional index of the model argument
    param: str  # keyword of the server-argument list
    index: int  # its positional index
    prefix: tuple[str, ...] = ()  # tokens the helper puts before the list
    device: bool = True  # goes through popen_launch_server(device="auto")
    model_last: bool = False  # "--model-path MODEL" after the list (run_bench_one_batch)


# SGLang's test helpers (sglang/test/test_utils.py; signatures stable 0.5.6.post2-0.5.23).
HELPERS: dict[str, _Helper] = {
    "popen_launch_server": _Helper(0, "other_args", 4),
    "popen_launch_pd_server": _Helper(0, "other_args", 4, device=False),
    "run_bench_serving": _Helper(0, "other_server_args", 3),
    "run_bench_serving_multi": _Helper(0, "other_server_args", 2),
    "run_bench_one_batch_server": _Helper(0, "other_server_args", 4),
    "run_score_benchmark": _Helper(0, "other_server_args", 3),
    "run_score_benchmark_multi": _Helper(0, "other_server_args", 3),
    "run_embeddings_benchmark": _Helper(0, "other_server_args", 4, ("--is-embedding",)),
    "run_embeddings_benchmark_multi": _Helper(0, "other_server_args", 4, ("--is-embedding",)),
    "run_bench_one_batch": _Helper(0, "other_args", 1, model_last=True),
    "run_bench_offline_throughput": _Helper(0, "other_args", 1, device=False),
}
# Helper launches whose server honours --config (they run launch_server / sglang serve).
_CONFIG_HELPERS = {"popen_launch_server", "popen_launch_pd_server", "run_bench_serving", "run_bench_serving_multi",
                   "run_bench_one_batch_server", "run_score_benchmark", "run_score_benchmark_multi",
                   "run_embeddings_benchmark", "run_embeddings_benchmark_multi", "prepare_server_args"}

_DISPLAY = {"print", "print_highlight", "debug", "info", "warning", "warn", "error", "exception", "critical",
            "log", "echo", "secho"}
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print", "echo",
                "write", "secho"}
_LIST_MUTATORS = {"append", "extend", "insert"}
_DICT_MUTATORS = {"update", "setdefault"}
_OPAQUE_MUTATORS = {"pop", "remove", "clear", "sort", "reverse", "popitem", "__setitem__", "__delitem__",
                    "__iadd__"}
# Calls that read a value without keeping it: passing a list to them does not change it.
_READERS = {"print", "len", "str", "repr", "list", "tuple", "sorted", "enumerate", "zip", "any", "all", "isinstance",
            "join", "format", "dumps", "quote", "debug", "info", "warning", "warn", "error", "exception", "critical",
            "log", "copy", "deepcopy", "set", "dict", "iter", "reversed", "map", "filter", "min", "max", "sum",
            "print_highlight", "write", "echo", "secho", "Path"}

# Launch calls read their arguments without keeping them.
_LAUNCH_TERMS = {"run", "Popen", "call", "check_call", "check_output", "system", "popen", "getoutput",
                 "getstatusoutput", "create_subprocess_exec", "create_subprocess_shell", "launch_server_cmd",
                 "prepare_server_args", "ServerArgs", "Engine", "Runtime", "from_cli_args", "execv", "execvp",
                 "execve", "execvpe", "spawnv", "spawnvp", "posix_spawn", "posix_spawnp", *HELPERS}


# ---------------------------------------------------------------------------
# Abstract values


@dataclass(frozen=True)
class _Org:
    """How a value reached the launch: ``use`` is the name at the launch site it came through."""

    use: Span | None = None
    shared: bool = False


_LIT = _Org()


@dataclass
class _Seg:
    text: str
    offs: list  # per character: offset in the Python text if written verbatim, else None
    org: _Org


@dataclass
class _Hole:
    where: Span | None
    org: _Org


@dataclass
class _S:
    parts: list
    where: Span | None = None
    quote: str = ""

    @property
    def known(self) -> bool:
        return all(isinstance(p, _Seg) for p in self.parts)

    @property
    def text(self) -> str | None:
        return "".join(p.text for p in self.parts) if self.known else None


@dataclass
class _C:
    """A non-string constant: True/False/None or a number (``text`` as str() gives it)."""

    text: str
    kind: str  # "bool" | "none" | "int" | "float"
    span: Span | None
    org: _Org
    where: Span | None = None


@dataclass
class _U:
    where: Span | None = None
    org: _Org = _LIT
    splat: bool = False
    tag: str | None = None  # "python": sys.executable


@dataclass
class _Item:
    val: object
    remove: Span | None = None


@dataclass
class _L:
    items: list
    where: Span | None = None


@dataclass
class _D:
    entries: dict  # key -> _Item
    open: bool = False  # keys kivlint cannot see may be present
    where: Span | None = None
    keyspans: dict = field(default_factory=dict)  # key -> span of the key literal


@dataclass
class _Pre:
    """An already converted Value (a word from the shell frontend's splitter)."""

    value: Value
    where: Span | None = None
    org: _Org = _LIT


class _Unbound:
    pass


_UNBOUND = _Unbound()


def _where(v) -> Span | None:
    return getattr(v, "where", None)


def _org_of(v) -> _Org:
    if isinstance(v, _S):
        for p in v.parts:
            if p.org.use is not None:
                return p.org
        return v.parts[0].org if v.parts else _LIT
    return getattr(v, "org", _LIT)


def _restamp(v, org: _Org):
    """The value as seen through a name: its origin becomes ``org`` (the outermost name wins)."""
    if org is _LIT:
        return v
    if isinstance(v, _S):
        parts = [_Seg(p.text, p.offs, _merge_org(p.org, org)) if isinstance(p, _Seg)
                 else _Hole(p.where, _merge_org(p.org, org)) for p in v.parts]
        return _S(parts, v.where, v.quote)
    if isinstance(v, _C):
        return _C(v.text, v.kind, v.span, _merge_org(v.org, org), v.where)
    if isinstance(v, _U):
        return _U(v.where, _merge_org(v.org, org), v.splat, v.tag)
    if isinstance(v, _L):
        return _L([_Item(_restamp(i.val, org), i.remove) for i in v.items], v.where)
    if isinstance(v, _D):
        return _D({k: _Item(_restamp(i.val, org), i.remove) for k, i in v.entries.items()}, v.open, v.where,
                  dict(v.keyspans))
    return v


def _merge_org(inner: _Org, outer: _Org) -> _Org:
    return _Org(outer.use if outer.use is not None else inner.use, inner.shared or outer.shared)


def _same(a, b) -> bool:
    if isinstance(a, _S) and isinstance(b, _S):
        return a.known and b.known and a.text == b.text
    if isinstance(a, _C) and isinstance(b, _C):
        return a.text == b.text and a.kind == b.kind
    if isinstance(a, _L) and isinstance(b, _L):
        return len(a.items) == len(b.items) and all(_same(x.val, y.val) for x, y in zip(a.items, b.items))
    return False


def _strip_spans(v):
    """The same value, not editable in place (it has more than one source)."""
    if isinstance(v, _S):
        return _S([_Seg(p.text, [None] * len(p.text), p.org) if isinstance(p, _Seg) else p for p in v.parts],
                  v.where, v.quote)
    if isinstance(v, _C):
        return _C(v.text, v.kind, None, v.org, v.where)
    if isinstance(v, _L):
        return _L([_Item(_strip_spans(i.val), None) for i in v.items], v.where)
    return v


def _join(a, b, where: Span | None):
    """Either ``a`` or ``b`` (two paths): known only when both agree."""
    if a is _UNBOUND:
        return b
    if b is _UNBOUND:
        return a
    if _same(a, b):
        return _strip_spans(a)
    if isinstance(a, _L) or isinstance(b, _L):
        return _U(where, _org_of(a), splat=True)
    return _U(where, _org_of(a))


# ---------------------------------------------------------------------------
# Scopes


@dataclass
class _Ev:
    kind: str  # assign | aug | method | setitem | delitem | other | pass
    pos: int
    frames: tuple
    node: object = None  # the value expression / the call
    extra: object = None  # method name / subscript key node / the statement node
    scope: object = None


class _Table:
    def __init__(self):
        self.events: dict[str, list[_Ev]] = {}
        self.bound: set[str] = set()
        self.attr_events: dict[str, list[_Ev]] = {}
        self.env_events: list[_Ev] = []
        self.loads: dict[str, int] = {}
        self.names: dict[str, int] = {}  # every Name node of the identifier in this scope's own body
        self.call_frames: dict[int, tuple] = {}
        self.load_frames: dict[int, tuple] = {}


class _Scope:
    def __init__(self, node, kind: str, parent: "_Scope | None"):
        self.node = node
        self.kind = kind  # module | function | class | lambda
        self.parent = parent
        self.children: list[_Scope] = []
        self._table: _Table | None = None
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


def _children(node):
    for name in _child_fields(type(node)):
        v = getattr(node, name)
        if isinstance(v, cst.CSTNode):
            yield name, v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, cst.CSTNode):
                    yield name, x


# Frames: where a statement sits relative to the branches and loops of its scope.
# ("c", id, part): a conditional branch; ("l", id, "b"): a loop body.
def _child_frames(node, name: str, frames: tuple) -> tuple:
    if isinstance(node, cst.If):
        if name == "body":
            return frames + (("c", id(node), "b"),)
        if name == "orelse":
            return frames + (("c", id(node), "e"),)
    elif isinstance(node, (cst.For, cst.While)):
        if name == "body":
            return frames + (("l", id(node), "b"),)
        if name == "orelse":
            return frames + (("c", id(node), "e"),)
    elif isinstance(node, (cst.ExceptHandler, getattr(cst, "ExceptStarHandler", cst.ExceptHandler), cst.MatchCase)):
        if name == "body":
            return frames + (("c", id(node), "b"),)
    elif isinstance(node, (cst.Try, getattr(cst, "TryStar", cst.Try))):
        if name == "orelse":
            return frames + (("c", id(node), "e"),)
    return frames


# ---------------------------------------------------------------------------
# Pass 1: the index


class _Index:
    """Imports, scopes, calls and name counts of the whole module (one walk)."""

    def __init__(self, module):
        self.imports: dict[str, str] = {}
        self.star: list[str] = []
        self.defined: set[str] = set()
        self.calls: list[tuple] = []
        self.counts: dict[str, int] = {}
        self.top: dict[int, int] = {}  # id(node) -> index of the top-level statement holding it
        self.classes: list[_Scope] = []
        self.module_scope = _Scope(module, "module", None)
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
                s = _Scope(node, {cst.FunctionDef: "function", cst.ClassDef: "class"}.get(t, "lambda"), scope)
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
            for _name, child in _children(node):
                push((child, scope, k))

    def _import(self, node, scope) -> None:
        for a in node.names:
            full = _dotted(a.name)
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
        mod = ("." * len(node.relative)) + ((_dotted(node.module) or "") if node.module is not None else "")
        if isinstance(node.names, cst.ImportStar):
            self.star.append(mod)
            return
        for a in node.names:
            name = _dotted(a.name)
            if name is None:
                continue
            local = a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) else name
            self.imports.setdefault(local, f"{mod}.{name}")
            scope.bound.add(local)


def _bind_names(t, out: set) -> None:
    if isinstance(t, cst.Name):
        out.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            _bind_names(e.value, out)
    elif isinstance(t, cst.StarredElement):
        _bind_names(t.value, out)


def _dotted(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
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


class _ScopeWalk:
    def __init__(self, scanner: "Scanner", scope: _Scope):
        self.sc = scanner
        self.scope = scope
        self.t = _Table()
        self.frames: tuple = ()
        self._skip: set[int] = set()
        self._noname: set[int] = set()
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
                display = display or _term(node.func) in _DISPLAY
            for name, child in _children(node):
                push((child, _child_frames(node, name, frames), display))

    # -- events
    def _ev(self, name: str, kind: str, node, value=None, extra=None):
        if kind in ("assign", "aug", "other"):
            self.t.bound.add(name)
        self.t.events.setdefault(name, []).append(_Ev(kind, self.sc.start(node), self.frames, value, extra, self.scope))

    def _other(self, name: str, node):
        self._ev(name, "other", node)

    def _attr_ev(self, attr: str, kind: str, node, value=None):
        self.t.attr_events.setdefault(attr, []).append(
            _Ev(kind, self.sc.start(node), self.frames, value, node, self.scope))

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
                self.t.env_events.append(_Ev("setitem", self.sc.start(stmt), self.frames, value, (base, key, stmt),
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
                d = _dotted(a.name)
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
            mut = meth in _LIST_MUTATORS or meth in _DICT_MUTATORS or meth in _OPAQUE_MUTATORS
            if isinstance(recv, cst.Name):
                if mut:
                    self._skip.add(id(recv))
                    self._ev(recv.value, "method", node, node, meth)
            elif isinstance(recv, cst.Attribute) and isinstance(recv.value, cst.Name) \
                    and recv.value.value in ("self", "cls") and mut:
                self._attr_ev(recv.attr.value, "other", node)
            if meth in ("update", "setdefault", "pop", "__setitem__") or (meth == "putenv" and _dotted(recv) == "os"):
                self.t.env_events.append(_Ev("method", self.sc.start(node), self.frames, node, (recv, meth),
                                             self.scope))
        # A name handed to another function may be changed there (a list or dict).
        launch = term in _LAUNCH_TERMS  # reads its arguments; a real use of them
        reader = term in _READERS or term in _DISPLAY
        for a in node.args:
            v = a.value
            if isinstance(v, cst.Name):
                if reader and not launch:
                    self._skip.add(id(v))
                elif not launch:
                    self._ev(v.value, "pass", node, node, None)


_HANDLERS = {getattr(cst, name[3:]): fn for name, fn in vars(_ScopeWalk).items()
             if name.startswith("on_") and hasattr(cst, name[3:])}
for _cls in ("ExceptStarHandler",):
    if hasattr(cst, _cls):
        _HANDLERS[getattr(cst, _cls)] = _ScopeWalk.on_ExceptHandler


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
        stack.extend(c for _f, c in _children(n))
    return out


def _single_index(sub) -> object | None:
    sl = sub.slice
    if len(sl) != 1 or not isinstance(sl[0].slice, cst.Index):
        return None
    return sl[0].slice.value


# ---------------------------------------------------------------------------
# Positions: one code generation pass that records character offsets


def _offsets(module, node=None) -> tuple[dict[int, tuple[int, int]], str]:
    """id(n) -> (start, end) character offsets (syntactic: without the whitespace a node owns) of
    ``node`` (default: the module) and everything in it, counted from the start of its code; and the code."""
    from contextlib import contextmanager

    from libcst._nodes.internal import CodegenState

    spans: dict[int, tuple[int, int]] = {}

    class _State(CodegenState):
        def __init__(self):
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.off = 0
            self.starts: list[int] = []

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
            spans.setdefault(id(node), (start, self.off))

        @contextmanager
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            start = self.off
            try:
                yield
            finally:
                end = self.off
                if start_node is not None:
                    start = spans[id(start_node)][0]
                if end_node is not None:
                    end = spans[id(end_node)][1]
                spans[id(node)] = (start, end)

    state = _State()
    (module if node is None else node)._codegen(state)
    return spans, "".join(state.tokens)


class _Provided:
    def __init__(self, spans):
        self.spans = spans

    def get(self, node):
        return self.spans[id(node)]

    def start(self, node):
        return self.spans[id(node)][0]


class _Positions:
    """Offsets computed one top-level statement at a time, when a node in it is first asked for.

    Where each top-level statement starts comes from CPython's parser (fast); the
    statement's code is generated to find the offsets inside it and checked against
    the text.  Anything unexpected falls back to generating the whole module.
    """

    def __init__(self, text: str, module, top: dict[int, int]):
        from libcst._nodes.internal import CodegenState  # noqa: F401 - fail here, not midway

        self.text = text
        self.module = module
        self.top = top
        self.spans: dict[int, tuple[int, int]] = {id(module): (0, len(text))}
        self.starts = self._starts()
        self.done: set[int] = set()
        # Where top-level statements (and the first small statement of each line) start: enough to
        # order the module's assignments without generating their code.
        self.first: dict[int, int] = {}
        if self.starts is not None:
            for k, st in enumerate(module.body):
                self.first[id(st)] = self.starts[k]
                if isinstance(st, cst.SimpleStatementLine) and st.body:
                    self.first[id(st.body[0])] = self.starts[k]

    def _starts(self) -> list[int] | None:
        import ast

        try:
            body = ast.parse(self.text).body
        except Exception:  # noqa: BLE001 - syntax this Python does not know, too deep, ...
            return None
        lines = LineIndex(self.text)
        starts = []
        j = 0
        for st in self.module.body:
            if j >= len(body):
                return None
            starts.append(lines.offset(body[j].lineno, 1))
            j += len(st.body) if isinstance(st, cst.SimpleStatementLine) else 1
        return starts if j == len(body) else None

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
        local, code = _offsets(self.module, stmt)
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
        spans, _code = _offsets(self.module)
        self.spans.update(spans)
        self.starts = None
        self.first = {}


# ---------------------------------------------------------------------------


@dataclass
class _Env:
    scope: _Scope
    pos: int
    frames: tuple
    org: _Org = _LIT
    depth: int = 0
    over: dict | None = None
    active: frozenset = frozenset()
    nested: bool = False  # the use is in a scope nested inside the one being resolved


class _Skip(Exception):
    """The call is not a launch after all."""


class Scanner:
    MAX_DEPTH = 40

    def __init__(self, text: str, path: str, module, origin: OffsetMap | None):
        self.text = text
        self.path = path
        self.module = module
        self.origin = origin
        self.result = ScanResult()
        self.pos = None
        self.lines: LineIndex | None = None
        self._spans: dict[int, Span] = {}
        self._config_entry: dict[int, str] = {}
        self._regions: list[tuple[Span, Span, bool]] = []
        self._shared: dict[tuple, bool] = {}

    # -- positions ---------------------------------------------------------
    def span(self, node) -> Span:
        s = self._spans.get(id(node))
        if s is None:
            a, b = self.pos.get(node)
            s = self._spans[id(node)] = Span(a, b)
        return s

    def start(self, node) -> int:
        s = self._spans.get(id(node))
        return s.start if s is not None else self.pos.start(node)

    def fspan(self, s: Span | None) -> Span | None:
        """An editable span in file offsets (None where the embedding is not verbatim)."""
        if s is None or self.origin is None:
            return s
        return self.origin.span(s)

    def fanchor(self, s: Span | None) -> Span | None:
        if s is None or self.origin is None:
            return s
        return self.origin.anchor(s)

    # -- driver ------------------------------------------------------------
    def scan(self) -> ScanResult:
        self.result.disabled = file_codes(self.text)
        idx = _Index(self.module)
        self.idx = idx
        cands = []
        for call, scope in idx.calls:
            kind = self.classify(call.func, scope)
            if kind is not None:
                cands.append((call, scope, kind))
        if not cands:
            return self.result
        self.pos = self._positions()
        # Calls nested in an Engine(server_args=...) are launches of their own.
        cands.sort(key=lambda c: self.start(c[0]))
        lines = LineIndex(self.text)
        for call, scope, kind in cands:
            before = len(self.result.launches)
            try:
                self.launch(call, scope, kind)
            except _Skip:
                continue
            except RecursionError:
                self._launch_error(call, "a launch's arguments are nested too deeply to read")
            except Exception as e:  # noqa: BLE001 - one launch must not hide the others
                self._launch_error(call, f"internal error reading this launch ({type(e).__name__}: {e})")
            self._mark_disabled(self.result.launches[before:], lines, self.start(call))
        self._attach_configs()
        return self.result

    @staticmethod
    def _mark_disabled(launches: list[Launch], lines: LineIndex, offset: int) -> None:
        """``# kv4lint: disable=...`` right above the call's line or at its end (in this text: a notebook
        cell, a Markdown block)."""
        line = lines.position(offset).line
        codes = codes_above(lines.line_text, line) | trailing_codes(lines.line_text(line))
        if codes:
            for launch in launches:
                launch.disabled = frozenset(launch.disabled) | codes

    def _launch_error(self, call, message: str) -> None:
        line = None
        try:
            line = LineIndex(self.text).position(self.start(call)).line
        except Exception:  # noqa: BLE001
            pass
        if self.origin is not None:
            message = f"embedded Python: {message}" + (f" (line {line} of the block)" if line else "")
            line = None
        self.result.errors.append(FileError(self.path, message, line))

    def _positions(self):
        try:
            return _Positions(self.text, self.module, self.idx.top)
        except ImportError:  # pragma: no cover - libcst internals moved: use its public provider
            lines = LineIndex(self.text)
            ranges = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
            return _Provided({id(n): (lines.offset(r.start.line, r.start.column + 1),
                                      lines.offset(r.end.line, r.end.column + 1)) for n, r in ranges.items()})

    def _attach_configs(self) -> None:
        """Read the --config file of launches whose entry honours it (spec §5.3)."""
        todo = []
        for launch in self.result.launches:
            if launch.form != "argv" or launch.config_argv:
                continue
            entry = self._config_entry.get(id(launch), launch.entry)
            if entry in CONFIG_ENTRIES and any(v.text == "--config" for v in launch.argv):
                todo.append((launch, entry))
        if not todo:
            return
        from kv4lint.frontends import sglang_config

        for launch, entry in todo:
            proxy = ScanResult(launches=[dataclasses.replace(launch, entry=entry)])
            sglang_config.attach_configs(proxy, self.path)
            launch.config_argv = proxy.launches[0].config_argv
            launch.config_path = proxy.launches[0].config_path
            self.result.errors.extend(proxy.errors)

    # -- callee classification -------------------------------------------
    def qualify(self, func, scope) -> str | None:
        """The qualified name a callee refers to: imported names resolved, local ones prefixed ``<local>``."""
        parts = []
        node = func
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        base = node.value
        if base in self.idx.imports and not (base in self.idx.defined and base not in ("sglang", "subprocess", "os")):
            head = self.idx.imports[base]
        elif base in self.idx.defined:
            head = f"<local>.{base}"
        else:
            star = next((m for m in self.idx.star if m.startswith("sglang")), None)
            head = f"{star}.{base}" if star and not parts else f"<unbound>.{base}"
        return ".".join([head, *reversed(parts)])

    def classify(self, func, scope) -> tuple[str, str] | None:
        # nbconvert's spelling of `!cmd` and `%%bash` cells: get_ipython().system("cmd")
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "get_ipython":
            if func.attr.value in ("system", "getoutput"):
                return ("ipython", "system")
            if func.attr.value == "run_cell_magic":
                return ("ipython", "cell")
            return None
        if isinstance(func, cst.Name):
            term = func.value
        elif isinstance(func, cst.Attribute):
            term = func.attr.value
        else:
            return None
        q = self.qualify(func, scope)
        if q is None:
            return None
        term = q.rsplit(".", 1)[-1]  # through import aliases
        # sglang.multimodal_gen (diffusion) has its own ServerArgs and helpers: not the LLM server's.
        sgl = (q.startswith("sglang.") or q == "sglang") and not q.startswith("sglang.multimodal_gen")
        if term == "from_cli_args" and sgl and q.endswith(".ServerArgs.from_cli_args"):
            return ("from_cli_args", q)
        if sgl and term in ("ServerArgs", "Engine", "Runtime"):
            return ("kwargs", term)
        if sgl and term == "prepare_server_args":
            return ("prepare", q)
        if term in HELPERS and (sgl or q.startswith("<unbound>.")):
            return ("helper", term)
        if term == "launch_server_cmd" and (sgl or q.startswith("<unbound>.")):
            return ("cmd", q)
        if q in _SUBPROCESS_ARGV:
            return ("subprocess", q)
        if q in _SHELL_ONLY:
            return ("shell", q)
        if q in _ASYNC_EXEC:
            return ("async_exec", q)
        if q in _EXEC_V:
            return ("exec_v", q)
        if q in _EXEC_L:
            return ("exec_l", q)
        return None

    # -- launches ----------------------------------------------------------
    def env_at(self, call, scope: _Scope) -> _Env:
        frames = self.table(scope).call_frames.get(id(call), ())
        return _Env(scope, self.start(call), frames)

    def launch(self, call, scope: _Scope, kind: tuple[str, str]) -> None:
        what, name = kind
        env = self.env_at(call, scope)
        if what == "kwargs":
            self.kwargs_launch(call, env, name)
        elif what == "from_cli_args":
            self.from_cli_args(call, env)
        elif what == "prepare":
            arg = _arg(call, 0, "argv")
            if arg is None:
                raise _Skip
            self.argv_launch(call, env, "prepare_server_args", self.ev(arg, env), config="prepare_server_args")
        elif what == "helper":
            self.helper_launch(call, env, name)
        elif what == "cmd":
            self.cmd_launch(call, env)
        elif what == "subprocess":
            self.subprocess_launch(call, env)
        elif what == "shell":
            arg = _arg(call, 0, "command") or _arg(call, 0, "cmd")
            if arg is None:
                raise _Skip
            self.shell_launch(call, env, self.ev(arg, env), _arg(call, None, "env"))
        elif what == "ipython":
            if name == "system":
                arg = _arg(call, 0, "cmd")
            else:
                magic = _arg(call, 0, "magic_name")
                m = self.ev(magic, env) if magic is not None else None
                if not (isinstance(m, _S) and m.text in ("bash", "sh", "script")):
                    raise _Skip
                arg = _arg(call, 2, "cell")
            if arg is None:
                raise _Skip
            v = self.ev(arg, env)
            if isinstance(v, _S) and name == "system":
                v = _ipython_expand(v)  # IPython substitutes {expr} in ! commands before the shell runs
            self.shell_launch(call, env, v)
        elif what == "async_exec":
            items = []
            for a in call.args:
                if a.keyword is not None:
                    continue
                v = self.ev(a.value, env)
                if a.star == "*":
                    items.extend(v.items if isinstance(v, _L) else [_Item(_U(self.span(a.value), splat=True))])
                else:
                    items.append(_Item(v))
            self.words_launch(call, env, _L(items))
        elif what == "exec_v":
            arg = _arg(call, _EXEC_V[name], "argv")
            if arg is None:
                raise _Skip
            self.words_launch(call, env, self.ev(arg, env), envarg=_arg(call, _EXEC_V[name] + 1, "env"))
        elif what == "exec_l":
            first, has_env = _EXEC_L[name]
            pos = [a for a in call.args if a.keyword is None]
            if has_env and pos:
                envarg, pos = pos[-1].value, pos[:-1]
            else:
                envarg = None
            items = []
            for a in pos[first:]:
                v = self.ev(a.value, env)
                if a.star == "*":
                    items.extend(v.items if isinstance(v, _L) else [_Item(_U(self.span(a.value), splat=True))])
                else:
                    items.append(_Item(v))
            self.words_launch(call, env, _L(items), envarg=envarg)

    def _new_launch(self, call, form: str, entry: str, **kw) -> Launch:
        return Launch(path=self.path, form=form, entry=entry, span=self.fanchor(self.span(call)),
                      anchor=self.fanchor(self.span(call.func)), language="python", **kw)

    def kwargs_launch(self, call, env: _Env, entry: str) -> None:
        if entry in ("Engine", "Runtime") and any(
                a.keyword is not None and a.keyword.value == "server_args" for a in call.args):
            raise _Skip  # the ServerArgs(...) it is given is the launch
        kwargs: dict[str, Value] = {}
        positional: list[Value] = []
        unknown = False
        for i, a in enumerate(call.args):
            rm = self.remove_arg(call, i)
            if a.star == "**":
                d = self.ev(a.value, env)
                if isinstance(d, _D):
                    for k, item in d.entries.items():
                        self._set_kwarg(kwargs, k, item.val, item.remove)
                    unknown = unknown or d.open
                else:
                    unknown = True
            elif a.star == "*":
                v = self.ev(a.value, env)
                if isinstance(v, _L):
                    positional.extend(self.value(i2.val, i2.remove) for i2 in v.items)
                else:
                    positional.append(Value.unknown(self.fanchor(self.span(a.value)), splat=True))
                    unknown = True
            elif a.keyword is not None:
                self._set_kwarg(kwargs, a.keyword.value, self.ev(a.value, env), rm)
            else:
                positional.append(self.value(self.ev(a.value, env), rm))
        launch = self._new_launch(call, "kwargs", entry, kwargs=kwargs, positional=positional,
                                  unknown_kwargs=unknown)
        launch.hints.extend(self.env_hints(env))
        self.result.launches.append(launch)

    def _set_kwarg(self, kwargs: dict, key: str, val, rm: Span | None) -> None:
        if isinstance(val, _C) and val.kind == "none":
            kwargs.pop(key, None)  # None is every optional field's default
            return
        kwargs.pop(key, None)
        kwargs[key] = self.value(val, rm)

    def from_cli_args(self, call, env: _Env) -> None:
        arg = _arg(call, 0, "args")
        if arg is None:
            raise _Skip
        target, tenv = arg, env
        if isinstance(arg, cst.Name):
            found = self.assigned_expr(arg, env)
            if found is None:
                raise _Skip
            target, tenv = found
        if not (isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute)
                and target.func.attr.value == "parse_args"):
            raise _Skip
        lst = _arg(target, 0, "args")
        if lst is None:
            raise _Skip  # parses sys.argv: nothing to see here
        self.argv_launch(call, env, "ServerArgs.from_cli_args", self.ev(lst, tenv))

    def helper_launch(self, call, env: _Env, name: str) -> None:
        h = HELPERS[name]
        model = _arg(call, h.model, "model")
        lst = _arg(call, h.index, h.param)
        synth = Value("--model-path")
        head: list[Value] = []
        tail: list[Value] = []
        mv = self.words(_L([_Item(self.ev(model, env))]), None)[0] if model is not None else \
            Value.unknown(self.fanchor(self.span(call)))
        if h.model_last:
            tail = [synth, mv]
        else:
            head = [synth, mv]
        head.extend(Value(t) for t in h.prefix)
        items = self.ev(lst, env) if lst is not None else _L([])
        other = self.words(items, lst)
        if h.device and self._device_auto(call, env) and any(
                (w.text is None and w.splat) or (w.text or "").split("=", 1)[0] == "--device" for w in other):
            # device="auto": popen_launch_server appends --device <detected> after other_args,
            # overriding theirs (spec §6); without one in other_args the server detects the same.
            other = [*other, Value("--device"), Value.unknown()]
        argv = [*head, *other, *tail]
        launch = self._new_launch(call, "argv", name, argv=argv)
        envarg = _arg(call, None, "env")
        launch.hints.extend(self.env_hints(env, envarg))
        if name in _CONFIG_HELPERS:
            self._config_entry[id(launch)] = "sglang.launch_server"
        self.result.launches.append(launch)

    def _device_auto(self, call, env: _Env) -> bool:
        d = _arg(call, None, "device")
        if d is None:
            return True
        v = self.ev(d, env)
        return not (isinstance(v, _S) and v.known and v.text != "auto")

    def cmd_launch(self, call, env: _Env) -> None:
        arg = _arg(call, 0, "command")
        if arg is None:
            raise _Skip
        v = self.ev(arg, env)
        if not isinstance(v, _S):
            raise _Skip
        # sglang.utils.execute_shell_command: backslash-newlines and backslashes become
        # spaces, then str.split() (no shell quoting); leading KEY=VALUE words are env vars.
        chars = _chars(v)
        norm = []
        k = 0
        while k < len(chars):
            c = chars[k]
            if c[0] == "\\" and k + 1 < len(chars) and chars[k + 1][0] == "\n":
                norm.append((" ", None, c[2]))
                k += 2
                continue
            norm.append((" ", None, c[2]) if c[0] == "\\" else c)
            k += 1
        words = _split_ws_values(norm)
        hints: list[Hint] = []
        i = 0
        while i < len(words):
            w = words[i]
            t = w.text if isinstance(w, _S) else None
            if t is not None and "=" in t and not t.startswith("-") and not t.startswith("/"):
                key, _, val = t.partition("=")
                if key and key.replace("_", "").isalnum():
                    hints.extend(env_hints(key, val, self.fanchor(_contig([o for p in w.parts for o in p.offs]))))
                    i += 1
                    continue
            break
        words = words[i:]
        vals = []
        for k, w in enumerate(words):
            vals.append(self.value(w, self._word_remove(w, words[k + 1] if k + 1 < len(words) else None)))
        cmd = unwrap([ArgWord(v_) for v_ in vals])
        m = cmd.match if cmd is not None else None
        if m is None:
            raise _Skip
        launch = self._new_launch(call, "argv", "launch_server_cmd", argv=[w.value for w in cmd.words[m.start:]])
        launch.hints.extend(hints)
        launch.hints.extend(fact_hints(cmd.facts, ArgWord.anchor))
        launch.hints.extend(self.env_hints(env))
        if m.entry in CONFIG_ENTRIES:
            self._config_entry[id(launch)] = m.entry
        self.result.launches.append(launch)

    def subprocess_launch(self, call, env: _Env) -> None:
        arg = _arg(call, 0, "args")
        if arg is None:
            raise _Skip
        shell = _arg(call, None, "shell")
        shell_v = self.ev(shell, env) if shell is not None else None
        truth = _truth(shell_v) if shell is not None else False
        is_shell = truth is True
        not_shell = truth is False
        v = self.ev(arg, env)
        envarg = _arg(call, None, "env")
        if isinstance(v, _S):
            if not_shell:
                raise _Skip  # a program name, not a command line
            self.shell_launch(call, env, v, envarg)
        elif isinstance(v, _L):
            if is_shell:
                if v.items and isinstance(v.items[0].val, _S):
                    self.shell_launch(call, env, v.items[0].val, envarg)
                    return
                raise _Skip
            self.words_launch(call, env, v, envarg=envarg)
        else:
            raise _Skip

    def words_launch(self, call, env: _Env, lst, *, envarg=None) -> None:
        if not isinstance(lst, _L):
            raise _Skip
        words = [ArgWord(self.value(it.val, it.remove), item=it.val,
                         key="sys.executable" if isinstance(it.val, _U) and it.val.tag == "python" else None)
                 for it in lst.items]
        cmd = unwrap(words)
        if cmd is None:
            raise _Skip
        hints = fact_hints(cmd.facts, ArgWord.anchor)
        inner = cmd.shell_code
        if inner is not None:
            if not isinstance(inner.item, _S):
                raise _Skip
            self.shell_launch(call, env, inner.item, envarg, extra_hints=hints)
            return
        m = cmd.match
        if m is None:
            raise _Skip
        launch = self._new_launch(call, "argv", m.entry, argv=[w.value for w in cmd.words[m.start:]])
        launch.hints.extend(hints)
        launch.hints.extend(self.env_hints(env, envarg))
        self.result.launches.append(launch)

    def argv_launch(self, call, env: _Env, entry: str, lst, *, config: str | None = None) -> None:
        if not isinstance(lst, _L):
            raise _Skip
        argv = self.words(lst, None)
        launch = self._new_launch(call, "argv", entry, argv=argv)
        launch.hints.extend(self.env_hints(env))
        if config:
            self._config_entry[id(launch)] = "sglang.launch_server"
        self.result.launches.append(launch)

    def shell_launch(self, call, env: _Env, v, envarg=None, *, extra_hints: list[Hint] | None = None) -> None:
        if not isinstance(v, _S):
            raise _Skip
        text, omap, holes = self.embed(v)
        if "sglang" not in text:
            raise _Skip
        from kv4lint.frontends.shell import scan_shell

        hints = list(extra_hints or []) + self.env_hints(env, envarg)
        seed = {}
        if envarg is not None:
            d = self.ev(envarg, env)
            if isinstance(d, _D):
                for k, item in d.entries.items():
                    if isinstance(item.val, _S) and item.val.known:
                        seed[k] = item.val.text
        if not shell_may_launch(text, seed):
            raise _Skip  # no KV cache option or --config: nothing to check, and maybe not meant as shell
        res = scan_shell(text, self.path, origin=omap, env=seed or None, hints=hints or None,
                         file_text=self.text if self.origin is None else None)
        for launch in res.launches:
            self._unhole(launch, holes)
            self.result.launches.append(launch)
        self.result.errors.extend(res.errors)

    # -- argv helpers ------------------------------------------------------
    def words(self, lst, node) -> list[Value]:
        if isinstance(lst, _L):
            out = []
            for item in lst.items:
                v = item.val
                if isinstance(v, _C) and v.kind == "none":
                    # None in an argv list: an error at run time, or a value set elsewhere (a subclass's).
                    out.append(Value.unknown(self.fanchor(v.org.use or v.where)))
                    continue
                out.append(self.value(v, item.remove))
            return out
        where = _where(lst) or (self.span(node) if node is not None else None)
        return [Value.unknown(self.fanchor(_org_of(lst).use or where), splat=True)]

    # -- converting abstract values ----------------------------------------
    def value(self, v, remove: Span | None = None) -> Value:
        if isinstance(v, _Pre):
            return v.value
        org = _org_of(v)
        use = self.fanchor(org.use)
        prov = Provenance.RESOLVED if org.use is not None else Provenance.LITERAL
        rm = self.fspan(remove) if remove is not None else None
        if isinstance(v, _S):
            if not v.known:
                return Value.unknown(self.fanchor(org.use or v.where))
            offs = [o for p in v.parts for o in p.offs]
            text = v.text
            span = _contig(offs)
            span = self.fspan(span) if span is not None else None
            return Value(text, span, prov, use=use, shared=org.shared, remove=rm, quote=v.quote)
        if isinstance(v, _C):
            return Value(v.text, self.fspan(v.span), prov, use=use, shared=org.shared, remove=rm)
        if isinstance(v, _U):
            val = Value.unknown(self.fanchor(org.use or v.where), splat=v.splat)
            if rm is not None and not v.splat:
                val = dataclasses.replace(val, remove=rm)
            return val
        where = _where(v)
        return Value.unknown(self.fanchor(org.use or where))

    def embed(self, v: _S) -> tuple[str, OffsetMap, dict[str, Span | None]]:
        """A string value as text for the shell frontend, with its offset map and its holes.

        Characters that came through a name (an f-string hole resolved to a
        constant) are remembered in ``self._regions`` so that the shell's
        values written there get the name's use, provenance and sharing.
        """
        out: list[str] = []
        outer: list[int] = []
        holes: dict[str, Span | None] = {}
        last = (v.where.start if v.where is not None else 0)
        for p in v.parts:
            if isinstance(p, _Seg):
                known = [o for o in p.offs if o is not None]
                if p.org.use is not None and known:
                    a, b = self.fanchor(Span(min(known), max(known) + 1)), self.fanchor(p.org.use)
                    self._regions.append((a, b, p.org.shared))
                for ch, o in zip(p.text, p.offs):
                    out.append(ch)
                    if o is None:
                        outer.append(last)
                    else:
                        outer.append(o)
                        last = o
            else:
                name = f"__KV4LINT_HOLE_{len(holes)}__"
                holes[name] = self.fanchor(p.org.use or p.where)
                ph = "${" + name + "}"
                at = p.where.start if p.where is not None else last
                holes[at] = holes[name]
                out.extend(ph)
                outer.extend([at] * len(ph))
        outer.append(last + 1)
        omap = OffsetMap(outer)
        if self.origin is not None:
            omap = self.origin.compose(omap)
        return "".join(out), omap, holes

    def _hole_at(self, holes: dict, file_offset: int) -> Span | None:
        for k, sp in holes.items():
            if isinstance(k, int) and self.fanchor(Span(k, k + 1)).start == file_offset:
                return sp
        return None

    def _through_name(self, val: Value) -> Value:
        """A shell value written inside a constant an f-string hole named: reported at the name."""
        if val.span is None or not self._regions:
            return val
        for region, use, shared in self._regions:
            if region.start <= val.span.start and val.span.end <= region.end:
                return dataclasses.replace(val, provenance=Provenance.RESOLVED, use=use,
                                           shared=val.shared or shared, remove=None)
        return val

    def _unhole(self, launch: Launch, holes: dict) -> None:
        if not holes and not self._regions:
            return

        def fix(val: Value) -> Value:
            if val.text is not None and "__KV4LINT_HOLE_" in val.text:
                name = re.search(r"__KV4LINT_HOLE_\d+__", val.text).group(0)
                return Value.unknown(holes.get(name) or val.use or val.span, splat=val.splat)
            if val.text is None and val.use is not None and self._hole_at(holes, val.use.start) is not None:
                return dataclasses.replace(val, use=self._hole_at(holes, val.use.start))
            return self._through_name(val)

        launch.argv = [fix(x) for x in launch.argv]
        launch.kwargs = {k: fix(x) for k, x in launch.kwargs.items()}

    def _word_remove(self, w, nxt) -> Span | None:
        """A whitespace-separated word, with the blanks up to the next word (verbatim text only)."""
        if not isinstance(w, _S) or not w.known:
            return None
        sp = _contig([o for p in w.parts for o in p.offs])
        if sp is None:
            return None
        if isinstance(nxt, _S) and nxt.known:
            nsp = _contig([o for p in nxt.parts for o in p.offs])
            if nsp is not None and nsp.start >= sp.end and set(self.text[sp.end:nsp.start]) <= set(" \t\r\n\\"):
                return Span(sp.start, nsp.start)
        return sp

    # -- hints ---------------------------------------------------------------
    def env_hints(self, env: _Env, envarg=None) -> list[Hint]:
        out: list[Hint] = []
        if envarg is not None:
            d = self.ev(envarg, env)
            if isinstance(d, _D):
                for k, item in d.entries.items():
                    t = item.val.text if isinstance(item.val, _S) else (
                        item.val.text if isinstance(item.val, _C) else None)
                    out.extend(env_hints(k, t, self.fanchor(d.keyspans.get(k) or _where(item.val))))
        # os.environ[...] = ... before the launch, in its scope and the module's.
        scopes = []
        s = env.scope
        while s is not None:
            scopes.append(s)
            s = s.parent
        for s in scopes:
            for ev in self.table(s).env_events:
                if s is env.scope and ev.pos > env.pos:
                    continue
                out.extend(self._env_event_hints(ev))
        return out

    def _env_event_hints(self, ev: _Ev) -> list[Hint]:
        eenv = _Env(ev.scope, ev.pos, ev.frames)
        if ev.kind == "setitem":
            base, key, stmt = ev.extra
            if self.qualify(base, ev.scope) != "os.environ":
                return []
            k = self.ev(key, eenv)
            if not (isinstance(k, _S) and k.known):
                return []
            val = self.ev(ev.node, eenv)
            t = val.text if isinstance(val, (_S, _C)) else None
            return env_hints(k.text, t, self.fanchor(self.span(key)))
        recv, meth = ev.extra
        call = ev.node
        if meth == "putenv":
            pairs = [(_arg(call, 0, "key"), _arg(call, 1, "value"))]
        elif self.qualify(recv, ev.scope) != "os.environ":
            return []
        elif meth in ("setdefault", "__setitem__"):
            pairs = [(_arg(call, 0, "key"), _arg(call, 1, "default"))]
        elif meth == "update":
            out = []
            for a in call.args:
                if a.keyword is not None:
                    val = self.ev(a.value, eenv)
                    out.extend(env_hints(a.keyword.value, val.text if isinstance(val, (_S, _C)) else None,
                                          self.fanchor(self.span(a.keyword))))
                else:
                    d = self.ev(a.value, eenv)
                    if isinstance(d, _D):
                        for k, item in d.entries.items():
                            t = item.val.text if isinstance(item.val, (_S, _C)) else None
                            out.extend(env_hints(k, t, self.fanchor(d.keyspans.get(k))))
            return out
        else:
            return []
        out = []
        for k_node, v_node in pairs:
            if k_node is None:
                continue
            k = self.ev(k_node, eenv)
            if isinstance(k, _S) and k.known:
                val = self.ev(v_node, eenv) if v_node is not None else None
                out.extend(env_hints(k.text, val.text if isinstance(val, (_S, _C)) else None,
                                      self.fanchor(self.span(k_node))))
        return out

    # -- removal spans -------------------------------------------------------
    def _line_start(self, off: int) -> int:
        return max(self.text.rfind("\n", 0, off), self.text.rfind("\r", 0, off)) + 1

    def _alone_before(self, off: int) -> bool:
        ls = self._line_start(off)
        return self.text[ls:off].strip(" \t\f") == ""

    def _next_line_start(self, off: int) -> int | None:
        """If only whitespace (or a comment) follows ``off`` on its line: the start of the next line."""
        m = re.compile(r"[ \t\f]*(?:#[^\r\n]*)?(\r\n|\r|\n)").match(self.text, off)
        return m.end() if m else None

    def _remove(self, start: int, end_with_comma: int, next_start: int | None, close: int,
                prev_end: int | None, backward_ok: bool) -> Span:
        """The span to delete to take one element out of a bracketed, comma-separated list."""
        if next_start is None and not (end_with_comma > start and self.text[end_with_comma - 1] == ","):
            # The last element without a trailing comma.
            if backward_ok and prev_end is not None:
                return Span(prev_end, end_with_comma)
            return Span(start, end_with_comma)
        target = next_start if next_start is not None else close
        nl = self._next_line_start(end_with_comma)
        if self._alone_before(start) and nl is not None and nl <= target:
            return Span(self._line_start(start), nl)
        if nl is not None and nl <= target:
            return Span(start, nl)
        if next_start is None:
            return Span(start, end_with_comma)
        return Span(start, target)

    def remove_arg(self, call, i: int) -> Span | None:
        args = call.args
        a = args[i]
        s = self.span(a)
        end = self.span(a.comma).end if isinstance(a.comma, cst.Comma) else s.end
        nxt = self.start(args[i + 1]) if i + 1 < len(args) else None
        prev = self.span(args[i - 1]).end if i > 0 else None
        return self._remove(s.start, end, nxt, self.span(call).end - 1, prev, True)

    def remove_elem(self, seq, i: int) -> Span | None:
        elems = seq.elements
        e = elems[i]
        s = self.span(e)
        end = self.span(e.comma).end if isinstance(e.comma, cst.Comma) else s.end
        nxt = self.start(elems[i + 1]) if i + 1 < len(elems) else None
        prev = self.span(elems[i - 1]).end if i > 0 else None
        close = self.span(seq).end - 1
        return self._remove(s.start, end, nxt, close, prev, isinstance(seq, cst.Dict))

    def remove_stmt(self, stmt) -> Span | None:
        """A statement (``cmd.append(...)``) alone on its line(s): the whole lines."""
        s = self.span(stmt)
        if not self._alone_before(s.start):
            return None
        nl = self._next_line_start(s.end)
        if nl is None:
            return None
        return Span(self._line_start(s.start), nl)

    # -- scopes --------------------------------------------------------------
    def table(self, scope: _Scope) -> _Table:
        if scope._table is None:
            scope._table = _ScopeWalk(self, scope).t
        return scope._table

    def binding_scope(self, name: str, scope: _Scope) -> _Scope | None:
        s = scope
        first = True
        while s is not None:
            if s.kind == "class" and not first:
                s = s.parent
                continue
            t = self.table(s)
            if name in t.bound:
                return s
            s = s.parent
            first = False
        return None

    def is_shared(self, name: str, scope: _Scope) -> bool:
        """Whether the value bound to ``name`` in ``scope`` is read more than once (by this launch and others)."""
        key = (id(scope), name)
        cached = self._shared.get(key)
        if cached is not None:
            return cached
        n = self.table(scope).loads.get(name, 0)
        # Nested scopes that see this binding (they do not bind the name themselves).
        stack = [c for c in scope.children if not (scope.kind == "class" and c.kind == "function")]
        while stack and n <= 1:
            c = stack.pop()
            if name in c.bound and name not in c.globals:
                continue
            n += c.counts.get(name, 0)
            stack.extend(c.children)
        self._shared[key] = n > 1
        return n > 1

    def assigned_expr(self, name_node, env: _Env):
        """The one expression a name is assigned (and the env at that assignment), else None."""
        s = self.binding_scope(name_node.value, env.scope)
        if s is None:
            return None
        evs = [e for e in self.table(s).events[name_node.value] if e.kind != "pass"]
        if len(evs) != 1 or evs[0].kind != "assign":
            return None
        e = evs[0]
        return e.node, _Env(s, e.pos, e.frames, env.org, env.depth + 1)

    # -- evaluation ----------------------------------------------------------
    def ev(self, node, env: _Env):
        if env.depth > self.MAX_DEPTH:
            return _U(self.span(node), env.org)
        m = getattr(self, "ev_" + type(node).__name__, None)
        if m is None:
            return _U(self.span(node), env.org)
        return m(node, env)

    def ev_SimpleString(self, node, env):
        sp = self.span(node)
        r = decode_literal(node.value, sp.start)
        if r is None:
            return _U(sp, env.org)
        text, offs, q = r
        return _S([_Seg(text, offs, env.org)], sp, q)

    def ev_ConcatenatedString(self, node, env):
        a = self.ev(node.left, env)
        b = self.ev(node.right, env)
        if isinstance(a, _S) and isinstance(b, _S):
            return _S(a.parts + b.parts, self.span(node), a.quote)
        return _U(self.span(node), env.org)

    def ev_FormattedString(self, node, env):
        sp = self.span(node)
        raw = "r" in node.start.lower()
        parts = []
        for p in node.parts:
            if isinstance(p, cst.FormattedStringText):
                ps = self.span(p)
                r = decode_body(p.value, ps.start, raw=raw, fstring=True)
                if r is None:
                    parts.append(_Hole(ps, env.org))
                else:
                    parts.append(_Seg(r[0], r[1], env.org))
            elif isinstance(p, cst.FormattedStringExpression):
                parts.extend(self._fhole(p, env))
            else:
                parts.append(_Hole(self.span(p), env.org))
        q = node.start.lstrip("rRbBfFuUtT")
        return _S(parts or [_Seg("", [], env.org)], sp, q)

    def _fhole(self, p, env):
        ps = self.span(p)
        equal = getattr(p, "equal", None)
        debug = equal is not None and not isinstance(equal, cst.MaybeSentinel)  # f"{x=}"
        if p.format_spec or p.conversion not in (None, "s") or debug:
            return [_Hole(ps, env.org)]
        v = self.ev(p.expression, env)
        if isinstance(v, _S):
            return list(v.parts)
        if isinstance(v, _C):
            return [_Seg(v.text, _const_offs(v), v.org)]
        if isinstance(v, _U) and v.tag == "python":
            return [_python_word(v)]
        return [_Hole(ps, _org_of(v) if _org_of(v).use else env.org)]

    def ev_Integer(self, node, env):
        raw = node.value
        try:
            n = int(raw.replace("_", ""), 0)
        except ValueError:
            try:
                n = int(raw.replace("_", ""))
            except ValueError:
                return _U(self.span(node), env.org)
        sp = self.span(node)
        return _C(str(n), "int", sp if str(n) == raw else None, env.org, sp)

    def ev_Float(self, node, env):
        sp = self.span(node)
        try:
            t = str(float(node.value.replace("_", "")))
        except ValueError:
            return _U(sp, env.org)
        return _C(t, "float", sp if t == node.value else None, env.org, sp)

    def ev_Name(self, node, env):
        n = node.value
        sp = self.span(node)
        if n in ("True", "False"):
            return _C(n, "bool", sp, env.org, sp)
        if n == "None":
            return _C("None", "none", sp, env.org, sp)
        if env.over is not None and n in env.over:
            return env.over[n]
        s = self.binding_scope(n, env.scope)
        if s is None:
            return _U(sp, env.org)
        key = (id(s), n)
        if key in env.active:
            return _U(sp, env.org)
        org = env.org if env.org.use is not None else _Org(sp, False)
        org = _Org(org.use, org.shared or self.is_shared(n, s))
        return self.resolve(n, s, env, org, sp)

    def resolve(self, n: str, s: _Scope, env: _Env, org: _Org, use_span: Span):
        evs = self.table(s).events.get(n, [])
        if any(e.kind == "other" for e in evs):
            return _U(use_span, org)
        same = s is env.scope and not env.nested
        ufr = env.frames if same else ()
        state = _UNBOUND
        active = env.active | {(id(s), n)}
        for e in sorted(evs, key=lambda e: e.pos):
            if same and e.pos >= env.pos:
                rel = "after-loop" if _shares_loop(e.frames, ufr) else None
                if rel is None:
                    continue
            else:
                rel = _relation(e.frames, ufr)
            eenv = _Env(s, e.pos, e.frames, org, env.depth + 1, {n: state} if state is not _UNBOUND else None,
                        active)
            state = self.step(state, e, rel, eenv, use_span, org)
        if state is _UNBOUND:
            return _U(use_span, org)
        return _restamp(state, org)

    def step(self, state, e: _Ev, rel: str, eenv: _Env, where: Span, org: _Org):
        repeated = rel in ("loop", "after-loop")
        if e.kind == "assign":
            new = self.ev(e.node, eenv)
            if rel == "certain":
                return new
            return _join(state, new, where)
        if e.kind == "pass":
            if isinstance(state, _L):
                return _L(state.items + [_Item(_U(where, org, splat=True))], state.where)
            if isinstance(state, _D):
                return _D(dict(state.entries), True, state.where, dict(state.keyspans))
            return state
        if state is _UNBOUND or isinstance(state, _U):
            return state if isinstance(state, _U) else _U(where, org)
        if e.kind == "aug":
            add = self.ev(e.node, eenv)
            if repeated:
                add = _splatify(add, where, org)
            return _add(state, add, where, org)
        if e.kind == "method":
            call, meth = e.node, e.extra
            if isinstance(state, _L) and meth in _LIST_MUTATORS:
                if meth == "append":
                    a = _arg(call, 0, None)
                    if a is None:
                        return _U(where, org)
                    items = [_Item(self.ev(a, eenv), self.remove_stmt_of(call))]
                elif meth == "extend":
                    a = _arg(call, 0, None)
                    v = self.ev(a, eenv) if a is not None else _U(where, org)
                    items = v.items if isinstance(v, _L) else [_Item(_U(where, org, splat=True))]
                else:  # insert(i, x)
                    i_node, a = _arg(call, 0, None), _arg(call, 1, None)
                    iv = self.ev(i_node, eenv) if i_node is not None else None
                    if not (isinstance(iv, _C) and iv.kind == "int") or a is None:
                        return _U(where, org, splat=True)
                    k = int(iv.text)
                    lst = list(state.items)
                    lst.insert(k if k >= 0 else len(lst) + k, _Item(self.ev(a, eenv), self.remove_stmt_of(call)))
                    if repeated:
                        return _U(where, org, splat=True)
                    return _L(lst, state.where)
                if repeated:
                    items = [_Item(_U(where, org, splat=True))]
                return _L(state.items + items, state.where)
            if isinstance(state, _D) and meth in _DICT_MUTATORS:
                new = _D(dict(state.entries), state.open or repeated, state.where, dict(state.keyspans))
                if meth == "update":
                    for a in call.args:
                        if a.keyword is not None:
                            new.entries[a.keyword.value] = _Item(self.ev(a.value, eenv), None)
                            new.keyspans[a.keyword.value] = self.span(a.keyword)
                        else:
                            d = self.ev(a.value, eenv)
                            if isinstance(d, _D):
                                new.entries.update(d.entries)
                                new.keyspans.update(d.keyspans)
                                new.open = new.open or d.open
                            else:
                                new.open = True
                    return new
                k_node, v_node = _arg(call, 0, None), _arg(call, 1, None)
                k = self.ev(k_node, eenv) if k_node is not None else None
                if not (isinstance(k, _S) and k.known):
                    new.open = True
                    return new
                if k.text not in new.entries:
                    new.entries[k.text] = _Item(self.ev(v_node, eenv) if v_node is not None else _C(
                        "None", "none", None, org), None)
                    new.keyspans[k.text] = k.where
                return new
            if meth in _OPAQUE_MUTATORS or meth in _LIST_MUTATORS or meth in _DICT_MUTATORS:
                return _U(where, org, splat=isinstance(state, _L))
            return state
        if e.kind == "setitem":
            key_node, stmt = e.extra
            if isinstance(state, _D):
                k = self.ev(key_node, eenv)
                new = _D(dict(state.entries), state.open or repeated, state.where, dict(state.keyspans))
                if isinstance(k, _S) and k.known:
                    new.entries[k.text] = _Item(self.ev(e.node, eenv), self.remove_stmt(stmt))
                    new.keyspans[k.text] = k.where
                else:
                    new.open = True
                return new
            return _U(where, org, splat=isinstance(state, _L))
        if e.kind == "delitem":
            key_node, stmt = e.extra
            if isinstance(state, _D) and key_node is not None:
                k = self.ev(key_node, eenv)
                new = _D(dict(state.entries), state.open, state.where, dict(state.keyspans))
                if isinstance(k, _S) and k.known and rel == "certain":
                    new.entries.pop(k.text, None)
                else:
                    new.open = True
                return new
            return _U(where, org, splat=isinstance(state, _L))
        return _U(where, org)

    def remove_stmt_of(self, call) -> Span | None:
        # The statement is the Expr holding the call: same span as the call when it is alone.
        return self.remove_stmt(call)

    def ev_Attribute(self, node, env):
        sp = self.span(node)
        q = self.qualify(node, env.scope)
        if q == "sys.executable":
            return _U(sp, env.org, tag="python")
        if q == "os.environ":
            return _D({}, True, sp)
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            return self.class_attr(node, env)
        return _U(sp, env.org)

    def class_attr(self, node, env):
        sp = self.span(node)
        s = env.scope
        while s is not None and s.kind not in ("function",):
            s = s.parent
        cls = s.parent if s is not None else None
        if cls is None or cls.kind != "class":
            return _U(sp, env.org)
        attr = node.attr.value
        evs = []
        body = self.table(cls).events.get(attr, [])
        evs.extend(body)
        for m in cls.children:
            if m.kind == "function":
                evs.extend(self.table(m).attr_events.get(attr, []))
        evs = [e for e in evs if e.kind != "pass"]
        if not evs or any(e.kind != "assign" for e in evs) or self._overridden(cls, attr):
            return _U(sp, env.org)
        key = (id(cls), "." + attr)
        if key in env.active:
            return _U(sp, env.org)
        org = env.org if env.org.use is not None else _Org(sp, len(evs) > 1)
        org = _Org(org.use, org.shared or self._attr_shared(cls, attr))
        state = _UNBOUND
        for e in evs:
            eenv = _Env(e.scope, e.pos, e.frames, org, env.depth + 1, None, env.active | {key})
            state = _join(state, self.ev(e.node, eenv), sp)
        return _restamp(state, org)

    def _overridden(self, cls: _Scope, attr: str) -> bool:
        """Whether a subclass in this file sets ``attr`` (``cls.attr`` then depends on the class running)."""
        names = {cls.node.name.value}
        subs = []
        changed = True
        while changed:
            changed = False
            for c in self.idx.classes:
                if c in subs or c is cls:
                    continue
                bases = {_dotted(b.value) for b in c.node.bases}
                if bases & names:
                    subs.append(c)
                    names.add(c.node.name.value)
                    changed = True
        for c in subs:
            if attr in self.table(c).bound:
                return True
            for m in c.children:
                if m.kind == "function" and attr in self.table(m).attr_events:
                    return True
        return False

    def _attr_shared(self, cls: _Scope, attr: str) -> bool:
        n = 0
        stack = [cls.node]
        while stack:
            a = stack.pop()
            if isinstance(a, cst.Attribute) and a.attr.value == attr and isinstance(a.value, cst.Name) \
                    and a.value.value in ("self", "cls"):
                n += 1
            stack.extend(c for _f, c in _children(a))
        return n > 2  # the assignment and one use

    def ev_List(self, node, env):
        return self._seq(node, env)

    def ev_Tuple(self, node, env):
        return self._seq(node, env)

    def _seq(self, node, env):
        items = []
        for i, e in enumerate(node.elements):
            if isinstance(e, cst.StarredElement):
                v = self.ev(e.value, env)
                if isinstance(v, _L):
                    items.extend(v.items)
                else:
                    items.append(_Item(_U(_org_of(v).use or self.span(e.value), _org_of(v), splat=True)))
            else:
                items.append(_Item(self.ev(e.value, env), self.remove_elem(node, i)))
        return _L(items, self.span(node))

    def ev_Dict(self, node, env):
        d = _D({}, False, self.span(node))
        for i, e in enumerate(node.elements):
            if isinstance(e, cst.StarredDictElement):
                v = self.ev(e.value, env)
                if isinstance(v, _D):
                    d.entries.update(v.entries)
                    d.keyspans.update(v.keyspans)
                    d.open = d.open or v.open
                else:
                    d.open = True
                continue
            k = self.ev(e.key, env)
            if isinstance(k, _S) and k.known:
                d.entries.pop(k.text, None)
                d.entries[k.text] = _Item(self.ev(e.value, env), self.remove_elem(node, i))
                d.keyspans[k.text] = self.span(e.key)
            else:
                d.open = True
        return d

    def ev_BinaryOperation(self, node, env):
        sp = self.span(node)
        if not isinstance(node.operator, cst.Add):
            if isinstance(node.operator, cst.Modulo):
                return _S([_Hole(sp, env.org)], sp)
            return _U(sp, env.org)
        a = self.ev(node.left, env)
        b = self.ev(node.right, env)
        return _add(a, b, sp, env.org)

    def ev_IfExp(self, node, env):
        a = self.ev(node.body, env)
        b = self.ev(node.orelse, env)
        return _join(a, b, self.span(node))

    def ev_Subscript(self, node, env):
        sp = self.span(node)
        base = self.ev(node.value, env)
        if len(node.slice) != 1:
            return _U(sp, env.org)
        sl = node.slice[0].slice
        if isinstance(sl, cst.Index):
            k = self.ev(sl.value, env)
            if isinstance(base, _L) and isinstance(k, _C) and k.kind == "int":
                i = int(k.text)
                known = all(not (isinstance(it.val, _U) and it.val.splat) for it in base.items)
                if known and -len(base.items) <= i < len(base.items):
                    return base.items[i].val
            if isinstance(base, _D) and isinstance(k, _S) and k.known and k.text in base.entries:
                return base.entries[k.text].val
            return _U(sp, env.org)
        if isinstance(sl, cst.Slice) and isinstance(base, _L) and sl.step is None:
            if any(isinstance(it.val, _U) and it.val.splat for it in base.items):
                return _U(sp, env.org, splat=True)
            lo = self.ev(sl.lower, env) if sl.lower is not None else _C("0", "int", None, env.org)
            hi = self.ev(sl.upper, env) if sl.upper is not None else _C(str(len(base.items)), "int", None, env.org)
            if isinstance(lo, _C) and lo.kind == "int" and isinstance(hi, _C) and hi.kind == "int":
                return _L(base.items[int(lo.text):int(hi.text)], sp)
        return _U(sp, env.org, splat=isinstance(base, _L))

    def ev_Call(self, node, env):
        sp = self.span(node)
        f = node.func
        q = self.qualify(f, env.scope)
        if isinstance(f, cst.Attribute):
            meth = f.attr.value
            if q == "shlex.split":
                a = _arg(node, 0, "s")
                v = self.ev(a, env) if a is not None else None
                if isinstance(v, _S):
                    return self.shlex_split(v, sp, env)
                return _U(sp, env.org, splat=True)
            if q in ("os.environ.copy",):
                return _D({}, True, sp)
            if q in ("copy.copy", "copy.deepcopy"):
                a = _arg(node, 0, None)
                return self.ev(a, env) if a is not None else _U(sp, env.org)
            recv = None if q and q.startswith(("os.", "sys.", "subprocess.", "shlex.")) else f.value
            if recv is not None and meth == "join" and len(node.args) == 1:
                sep = self.ev(recv, env)
                lst = self.ev(node.args[0].value, env)
                if isinstance(sep, _S) and sep.known and isinstance(lst, _L):
                    return _joined(sep.text, lst, sp, env.org)
                return _S([_Hole(sp, env.org)], sp)
            if recv is not None and meth == "split":
                s = self.ev(recv, env)
                if isinstance(s, _S) and (not node.args or (len(node.args) == 1 and isinstance(
                        self.ev(node.args[0].value, env), _C) and self.ev(node.args[0].value, env).kind == "none")):
                    return _L([_Item(w) for w in _split_ws_values(_chars(s))], sp)
                return _U(sp, env.org, splat=True)
            if recv is not None and meth in ("strip", "lstrip", "rstrip") and not node.args:
                s = self.ev(recv, env)
                if isinstance(s, _S) and s.known:
                    ch = _chars(s)
                    a, b = 0, len(ch)
                    if meth in ("strip", "lstrip"):
                        while a < b and ch[a][0].isspace():
                            a += 1
                    if meth in ("strip", "rstrip"):
                        while b > a and ch[b - 1][0].isspace():
                            b -= 1
                    return _from_chars(ch[a:b], sp, s.quote)
                return _U(sp, env.org)
            if recv is not None and meth == "format":
                return self._format(recv, node, env, sp)
            if recv is not None and meth == "copy" and not node.args:
                return self.ev(recv, env)
            return _U(sp, env.org)
        if isinstance(f, cst.Name):
            name = f.value
            if name not in self.idx.imports and name not in self.idx.defined:
                if name == "str" and len(node.args) == 1:
                    v = self.ev(node.args[0].value, env)
                    if isinstance(v, _S):
                        return v
                    if isinstance(v, _C):
                        return _S([_Seg(v.text, _const_offs(v), v.org)], sp)
                    return _S([_Hole(_where(v) or sp, _org_of(v))], sp)
                if name in ("list", "tuple") and len(node.args) == 1:
                    v = self.ev(node.args[0].value, env)
                    return v if isinstance(v, _L) else _U(sp, env.org, splat=True)
                if name == "dict":
                    d = _D({}, False, sp)
                    for i, a in enumerate(node.args):
                        if a.keyword is not None:
                            d.entries[a.keyword.value] = _Item(self.ev(a.value, env), self.remove_arg(node, i))
                            d.keyspans[a.keyword.value] = self.span(a.keyword)
                        else:
                            v = self.ev(a.value, env)
                            if isinstance(v, _D):
                                d.entries.update(v.entries)
                                d.keyspans.update(v.keyspans)
                                d.open = d.open or v.open
                            else:
                                d.open = True
                    return d
        return _U(sp, env.org)

    def _format(self, recv, node, env, sp):
        s = self.ev(recv, env)
        if not (isinstance(s, _S) and s.known):
            return _S([_Hole(sp, env.org)], sp)
        ch = _chars(s)
        text = "".join(c[0] for c in ch)
        pos_args = [a for a in node.args if a.keyword is None and not a.star]
        kw_args = {a.keyword.value: a for a in node.args if a.keyword is not None}
        if any(a.star for a in node.args):
            return _S([_Hole(sp, env.org)], sp)
        parts: list = []
        i = 0
        auto = 0
        buf: list = []

        def flush():
            if buf:
                parts.append(_Seg("".join(c[0] for c in buf), [c[1] for c in buf], buf[0][2]))
                buf.clear()

        while i < len(text):
            c = text[i]
            if c in "{}" and text[i + 1:i + 2] == c:
                buf.append((c, None, ch[i][2]))
                i += 2
                continue
            if c == "{":
                j = text.find("}", i)
                if j < 0:
                    return _S([_Hole(sp, env.org)], sp)
                field_ = text[i + 1:j]
                flush()
                if ":" in field_ or "!" in field_ or "[" in field_ or "." in field_:
                    parts.append(_Hole(sp, env.org))
                else:
                    if field_ == "":
                        arg = pos_args[auto].value if auto < len(pos_args) else None
                        auto += 1
                    elif field_.isdigit():
                        k = int(field_)
                        arg = pos_args[k].value if k < len(pos_args) else None
                    else:
                        arg = kw_args[field_].value if field_ in kw_args else None
                    v = self.ev(arg, env) if arg is not None else None
                    if isinstance(v, _S):
                        parts.extend(v.parts)
                    elif isinstance(v, _C):
                        parts.append(_Seg(v.text, _const_offs(v), v.org))
                    else:
                        parts.append(_Hole(_where(v) if v is not None else sp, env.org))
                i = j + 1
                continue
            buf.append(ch[i])
            i += 1
        flush()
        return _S(parts or [_Seg("", [], env.org)], sp, s.quote)

    def shlex_split(self, v: _S, sp: Span, env: _Env):
        from kv4lint.frontends.shell import split_words

        text, omap, holes = self.embed(v)
        words = split_words(text, origin=omap)
        items = []
        for w in words:
            if w.text is not None and "__KV4LINT_HOLE_" in w.text:
                name = re.search(r"__KV4LINT_HOLE_\d+__", w.text).group(0)
                h = holes.get(name)
                items.append(_Item(_Pre(Value.unknown(h or w.span or w.use, splat=w.text.strip("${}") == name))))
            else:
                items.append(_Item(_Pre(_stamp(w, _org_of(v), self))))
        return _L(items, sp)


def _stamp(w: Value, org: _Org, sc: "Scanner") -> Value:
    if org.use is None:
        return w
    return dataclasses.replace(w, provenance=Provenance.RESOLVED, use=sc.fanchor(org.use),
                               shared=w.shared or org.shared)


# ---------------------------------------------------------------------------
# Small helpers


def _arg(call, index: int | None, keyword: str | None):
    """The expression passed as positional ``index`` or as ``keyword=`` (None if absent or behind a star)."""
    k = 0
    for a in call.args:
        if a.star:
            if a.keyword is None and index is not None and k <= index and a.star == "*":
                return None
            continue
        if a.keyword is not None:
            if keyword is not None and a.keyword.value == keyword:
                return a.value
            continue
        if index is not None and k == index:
            return a.value
        k += 1
    return None


def _contig(offs: list) -> Span | None:
    if not offs or any(o is None for o in offs):
        return None
    first = offs[0]
    for k, o in enumerate(offs):
        if o != first + k:
            return None
    return Span(first, offs[-1] + 1)


def _const_offs(c: _C) -> list:
    if c.span is not None and c.span.end - c.span.start == len(c.text):
        return list(range(c.span.start, c.span.end))
    return [None] * len(c.text)


def _chars(s: _S) -> list:
    """(char, offset|None, org) per character; a hole is one ``("\\0", None, org, hole)`` entry."""
    out = []
    for p in s.parts:
        if isinstance(p, _Seg):
            for ch, o in zip(p.text, p.offs):
                out.append((ch, o, p.org))
        else:
            out.append(("\0", None, p.org, p))
    return out


def _from_chars(chars: list, where: Span | None, quote: str = "") -> _S:
    parts: list = []
    buf: list = []
    for c in chars:
        if len(c) == 4:
            if buf:
                parts.append(_Seg("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
                buf = []
            parts.append(c[3])
        else:
            if buf and buf[-1][2] != c[2]:
                parts.append(_Seg("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
                buf = []
            buf.append(c)
    if buf:
        parts.append(_Seg("".join(x[0] for x in buf), [x[1] for x in buf], buf[0][2]))
    return _S(parts or [_Seg("", [], _LIT)], where, quote)


def _split_ws_values(chars: list) -> list:
    """``str.split()`` of a partly known string: words as _S; a word that is only a hole may be several."""
    out = []
    word: list = []

    def flush():
        if word:
            if len(word) == 1 and len(word[0]) == 4:
                h = word[0][3]
                out.append(_U(h.where, h.org, splat=True))
            else:
                out.append(_from_chars(list(word), None))
            word.clear()

    for c in chars:
        if len(c) == 3 and c[0].isspace():
            flush()
        else:
            word.append(c)
    flush()
    return out


def _joined(sep: str, lst: _L, where: Span, org: _Org) -> _S:
    parts: list = []
    for k, it in enumerate(lst.items):
        if k:
            parts.append(_Seg(sep, [None] * len(sep), org))
        v = it.val
        if isinstance(v, _S):
            parts.extend(v.parts)
        elif isinstance(v, _Pre):
            if v.value.known:
                parts.append(_Seg(v.value.text, [None] * len(v.value.text), org))
            else:
                parts.append(_Hole(v.value.use or v.value.span, org))
        elif isinstance(v, _C):
            parts.append(_Seg(v.text, _const_offs(v), v.org))
        else:
            parts.append(_Hole(_where(v), _org_of(v)))
    return _S(parts or [_Seg("", [], org)], where)


def _ipython_expand(s: _S) -> _S:
    """``{expr}`` in an IPython ``!`` command is a Python value: a hole (``{{``/``}}`` are braces)."""
    ch = _chars(s)
    out: list = []
    i = 0
    while i < len(ch):
        c = ch[i]
        if len(c) == 3 and c[0] in "{}" and i + 1 < len(ch) and len(ch[i + 1]) == 3 and ch[i + 1][0] == c[0]:
            out.append((c[0], None, c[2]))
            i += 2
            continue
        if len(c) == 3 and c[0] == "{":
            j = i + 1
            while j < len(ch) and not (len(ch[j]) == 3 and ch[j][0] == "}"):
                j += 1
            if j < len(ch):
                offs = [x[1] for x in ch[i:j + 1] if x[1] is not None]
                where = Span(min(offs), max(offs) + 1) if offs else s.where
                out.append(("\0", None, c[2], _Hole(where, c[2])))
                i = j + 1
                continue
        out.append(c)
        i += 1
    return _from_chars(out, s.where, s.quote)


def _python_word(v: "_U") -> "_Seg":
    """``sys.executable`` inside a command string: some Python interpreter (not editable)."""
    return _Seg("python3", [None] * 7, v.org)


_MAX_PARTS = 10_000  # pieces of one string value; past that it is unknown (x = x + x ...)
_MAX_ITEMS = 100_000  # items of one list value


def _add(a, b, where: Span, org: _Org):
    if len(getattr(a, "parts", ())) + len(getattr(b, "parts", ())) > _MAX_PARTS:
        return _U(where, org)
    if len(getattr(a, "items", ())) + len(getattr(b, "items", ())) > _MAX_ITEMS:
        return _U(where, org, splat=True)
    if isinstance(a, _U) and a.tag == "python" and isinstance(b, _S):
        a = _S([_python_word(a)], a.where)
    if isinstance(b, _U) and b.tag == "python" and isinstance(a, _S):
        b = _S([_python_word(b)], b.where)
    if isinstance(a, _S) and isinstance(b, _S):
        return _S(a.parts + b.parts, where, a.quote)
    if isinstance(a, _L) and isinstance(b, _L):
        return _L(a.items + b.items, where)
    if isinstance(a, _L):
        return _L(a.items + [_Item(_U(_where(b), _org_of(b), splat=True))], where)
    if isinstance(b, _L):
        return _L([_Item(_U(_where(a), _org_of(a), splat=True))] + b.items, where)
    if isinstance(a, _S):
        return _S(a.parts + [_Hole(_where(b), _org_of(b))], where, a.quote)
    if isinstance(b, _S):
        return _S([_Hole(_where(a), _org_of(a))] + b.parts, where, b.quote)
    return _U(where, org)


def _splatify(v, where, org):
    if isinstance(v, _L):
        return _L([_Item(_U(where, org, splat=True))], where)
    if isinstance(v, _S):
        return _S([_Hole(where, org)], where)
    return _U(where, org, splat=True)


def _relation(ev_frames: tuple, use_frames: tuple) -> str:
    """How an event before the use relates to it: certain, cond(itional) or loop (repeated)."""
    k = 0
    while k < len(ev_frames) and k < len(use_frames) and ev_frames[k] == use_frames[k]:
        k += 1
    rest = ev_frames[k:]
    if any(f[0] == "l" for f in rest):
        return "loop"
    if rest:
        return "cond"
    return "certain"


def _shares_loop(ev_frames: tuple, use_frames: tuple) -> bool:
    k = 0
    while k < len(ev_frames) and k < len(use_frames) and ev_frames[k] == use_frames[k]:
        if ev_frames[k][0] == "l":
            return True
        k += 1
    return False


def _truth(v) -> bool | None:
    """Python truthiness of a constant, None when unknown."""
    if isinstance(v, _C):
        if v.kind in ("bool", "none"):
            return v.text == "True"
        try:
            return float(v.text) != 0
        except ValueError:
            return None
    if isinstance(v, _S) and v.known:
        return v.text != ""
    return None
