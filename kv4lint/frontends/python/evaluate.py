"""Partial evaluation of Python expressions, never executing anything.

:class:`Evaluator` turns an expression into a value of :mod:`.values`:
literals, concatenation, f-strings, ``" ".join``, ``str.split``,
``shlex.split``, list and dict literals with their later mutations in the
same scope, subscripts, conditional expressions, names resolved to their
assignments (and class attributes), each with where it was written and how
it reached the launch.  It also converts values to
:class:`~kv4lint.base.model.Value` and computes removal spans for fixes.
"""

from __future__ import annotations

import re

import libcst as cst

from kv4lint.frontends import nested
from kv4lint.frontends.python.index import DICT_MUTATORS, LIST_MUTATORS, OPAQUE_MUTATORS, Event, Scope, ScopeTable, \
    ScopeWalk, chain_arms, child_nodes, dotted_name
from kv4lint.frontends.python.literals import decode_body, decode_literal
from kv4lint.frontends.python.paths import Paths, chain_conditions, if_conditions
from kv4lint.frontends.python.values import LITERAL, UNBOUND, ConstValue, ConvertedValue, DictValue, \
    Hole, ListItem, ListValue, Origin, Segment, StrValue, UnknownValue, add_values, as_text, \
    call_argument, chars_of, const_offsets, contiguous_span, frame_relation, from_chars, join_values, \
    joined_value, origin_of, python_word, restamped, shares_loop, splatified, split_on_whitespace, where_of
from kv4lint.base.model import ForeignString, Launch, Provenance, ScanResult, Span, Value
from kv4lint.base.record import Record, replace
from kv4lint.base.source import LineIndex, OffsetMap


# ---------------------------------------------------------------------------


class EvalEnv(Record):
    """Where an expression is evaluated: its scope, position and frames, the origin its value came through, the
    depth of the evaluation, the names overridden (``over``) and being resolved (``active``), and ``nested``: the
    use is in a scope nested inside the one being resolved."""

    __slots__ = ("scope", "pos", "frames", "org", "depth", "over", "active", "nested")

    def __init__(self, scope: Scope, pos: int, frames: tuple, org: Origin = LITERAL, depth: int = 0,
                 over: dict | None = None, active: frozenset = frozenset(), nested: bool = False) -> None:
        self.scope = scope
        self.pos = pos
        self.frames = frames
        self.org = org
        self.depth = depth
        self.over = over
        self.active = active
        self.nested = nested


MAX_LOOP_ITEMS = 1024  # a for loop over more items: the launch is a file error naming the bound


class NotALaunch(Exception):
    """The call is not a launch after all."""


class Evaluator:
    """The values of expressions in one module (see the module docstring); :class:`~.scanner.Scanner` builds on it."""

    MAX_DEPTH = 40
    # Expressions evaluated for one launch, all its paths together: the fixtures need at most 145; assignments
    # that alias each other in both branches of 22 ifs needed 2 ** 22 readings (43 s) before this bound.
    MAX_STEPS = 20_000

    def __init__(self, text: str, path: str, module, origin: OffsetMap | None,
                 imported: dict[str, dict[str, object]] | None = None, *, top_lines: list[int] | None = None):
        self.top_lines = top_lines  # the line of each top-level statement, from CPython's parse (Positions)
        # Module-level constants of sibling modules this one imports, read by kv4lint.pipeline.sourced:
        # module name as written ("presets", ".presets") -> name -> a Python literal.
        self.imported = dict(imported or {})
        self.text = text
        self.path = path
        self.module = module
        self.origin = origin
        self.result = ScanResult()
        self.pos = None
        self.lines: LineIndex | None = None
        self._spans: dict[int, Span] = {}
        self._regions: list[tuple[Span, Span, bool]] = []
        self._shared: dict[tuple, bool] = {}
        self.paths = Paths()  # value sets: the choice points met and the selection being read
        self._ifs: dict[int, object] | None = None
        self._by_start: dict[type, dict[int, object]] = {}
        # Past a bound (MAX_DEPTH, MAX_STEPS) a value is unknown, and the launch being read reports a file error
        # naming the bound: never "clean" for a value that was not read.
        self.unresolved: str | None = None
        self.steps = 0  # expressions evaluated for the launch being read
        # The class a launch in a method is read as (``cls.other_args`` of a test subclass); None: the method's own.
        self.bound_class: Scope | None = None
        # The environment a service declares, while its command is read (``os.environ.get`` gives these values).
        self.declared_env: dict[str, object] | None = None
        # The module's classes: method resolution orders and subclasses, computed once (mro, subclasses).
        self._mro: dict[int, list[Scope]] = {}
        self._class_names: dict[str, Scope] | None = None
        self._subclasses: dict[int, list[Scope]] | None = None

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

    # -- converting abstract values ----------------------------------------
    def value(self, v, remove: Span | None = None) -> Value:
        if isinstance(v, ConvertedValue):
            return v.value
        org = origin_of(v)
        use = self.fanchor(org.use)
        prov = Provenance.RESOLVED if org.use is not None else Provenance.LITERAL
        rm = self.fspan(remove) if remove is not None else None
        if isinstance(v, StrValue):
            if not v.known:
                return Value.unknown(self.fanchor(org.use or v.where))
            offs = [o for p in v.parts for o in p.offs]
            text = v.text
            span = contiguous_span(offs)
            span = self.fspan(span) if span is not None else None
            return Value(text, span, prov, use=use, shared=org.shared, remove=rm, quote=v.quote)
        if isinstance(v, ConstValue):
            return Value(v.text, self.fspan(v.span), prov, use=use, shared=org.shared, remove=rm)
        if isinstance(v, UnknownValue):
            val = Value.unknown(self.fanchor(org.use or v.where), splat=v.splat)
            if rm is not None and not v.splat:
                val = replace(val, remove=rm)
            return val
        where = where_of(v)
        return Value.unknown(self.fanchor(org.use or where))

    def embed(self, v: StrValue) -> tuple[str, OffsetMap, dict[str, Span | None]]:
        """A string value as text for the shell frontend, with its offset map and its holes.

        Characters that came through a name (an f-string hole resolved to a
        constant) are remembered in ``self._regions`` so that the shell's
        values written there get the name's use, provenance and sharing.
        """
        out: list[str] = []
        outer: list[int | None] = []  # None: an escape, not written verbatim (OffsetMap)
        holes: dict[str, Span | None] = {}
        last = (v.where.start if v.where is not None else 0)
        for p in v.parts:
            if isinstance(p, Segment):
                known = [o for o in p.offs if o is not None]
                if p.org.use is not None and known:
                    a, b = self.fanchor(Span(min(known), max(known) + 1)), self.fanchor(p.org.use)
                    self._regions.append((a, b, p.org.shared))
                for ch, o in zip(p.text, p.offs):
                    out.append(ch)
                    outer.append(o)
                if known:
                    last = known[-1]
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
                return replace(val, provenance=Provenance.RESOLVED, use=use,
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
                return replace(val, use=self._hole_at(holes, val.use.start))
            return self._through_name(val)

        launch.argv = [fix(x) for x in launch.argv]
        launch.kwargs = {k: fix(x) for k, x in launch.kwargs.items()}

    def _word_remove(self, w, nxt) -> Span | None:
        """A whitespace-separated word, with the blanks up to the next word (verbatim text only)."""
        if not isinstance(w, StrValue) or not w.known:
            return None
        sp = contiguous_span([o for p in w.parts for o in p.offs])
        if sp is None:
            return None
        if isinstance(nxt, StrValue) and nxt.known:
            nsp = contiguous_span([o for p in nxt.parts for o in p.offs])
            if nsp is not None and nsp.start >= sp.end and set(self.text[sp.end:nsp.start]) <= set(" \t\r\n\\"):
                return Span(sp.start, nsp.start)
        return sp

    # -- removal spans -------------------------------------------------------
    def _line_start(self, off: int) -> int:
        # Only blanks are searched back over: a long line costs nothing per element (no rfind to its start).
        i = off
        while i > 0 and self.text[i - 1] in " \t\f":
            i -= 1
        if i == 0 or self.text[i - 1] in "\r\n":
            return i
        return max(self.text.rfind("\n", 0, off), self.text.rfind("\r", 0, off)) + 1

    def _alone_before(self, off: int) -> bool:
        i = off
        while i > 0 and self.text[i - 1] in " \t\f":
            i -= 1
        return i == 0 or self.text[i - 1] in "\r\n"

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
        if nl is not None and nl <= target:
            # A comment at the end of the line stays (on its own line when the elements before it go).
            hash_at = self.text.find("#", end_with_comma, nl)
            if hash_at >= 0:
                return Span(start, hash_at)
            if self._alone_before(start):
                return Span(self._line_start(start), nl)
            return Span(start, nl)
        if next_start is None:
            return Span(start, end_with_comma)
        return Span(start, target)

    def merge_dict_args(self, d: DictValue, args, env, removable=None) -> None:
        """Add ``dict(...)`` / ``.update(...)`` arguments to ``d``: keywords as entries (removable from the call
        ``removable``, when given), positional dicts merged, anything else leaves ``d`` open."""
        for i, a in enumerate(args):
            if a.keyword is not None:
                removal = self.remove_arg(removable, i) if removable is not None else None
                d.entries[a.keyword.value] = ListItem(self.ev(a.value, env), removal)
                d.keyspans[a.keyword.value] = self.span(a.keyword)
            else:
                v = self.ev(a.value, env)
                if isinstance(v, DictValue):
                    d.entries.update(v.entries)
                    d.keyspans.update(v.keyspans)
                    d.open = d.open or v.open
                else:
                    d.open = True

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
    def table(self, scope: Scope) -> ScopeTable:
        if scope._table is None:
            scope._table = ScopeWalk(self, scope).t
        return scope._table

    def binding_scope(self, name: str, scope: Scope) -> Scope | None:
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

    def is_shared(self, name: str, scope: Scope) -> bool:
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

    def assigned_expr(self, name_node, env: EvalEnv):
        """The one expression a name is assigned (and the env at that assignment), else None."""
        s = self.binding_scope(name_node.value, env.scope)
        if s is None:
            return None
        evs = [e for e in self.table(s).events[name_node.value] if e.kind != "pass"]
        if len(evs) != 1 or evs[0].kind != "assign":
            return None
        e = evs[0]
        return e.node, EvalEnv(s, e.pos, e.frames, env.org, env.depth + 1)

    # -- evaluation ----------------------------------------------------------
    def ev(self, node, env: EvalEnv):
        self.steps += 1
        if env.depth > self.MAX_DEPTH or self.steps > self.MAX_STEPS:
            self.unresolved = self.unresolved or (
                f"is nested more than {self.MAX_DEPTH} levels deep in names, calls and operations"
                if env.depth > self.MAX_DEPTH else f"needs more than {self.MAX_STEPS} expressions evaluated")
            # Tagged: an unknown past a bound is no disagreement of branches to read again per path (each level
            # would read twice: 2 ** depth readings).
            return UnknownValue(self.span(node), env.org, tag="bound")
        m = getattr(self, "ev_" + type(node).__name__, None)
        if m is None:
            return UnknownValue(self.span(node), env.org)
        return m(node, env)

    def ev_SimpleString(self, node, env):
        sp = self.span(node)
        r = decode_literal(node.value, sp.start)
        if r is None:
            return UnknownValue(sp, env.org)
        text, offs, q = r
        return StrValue([Segment(text, offs, env.org)], sp, q)

    def ev_ConcatenatedString(self, node, env):
        a = self.ev(node.left, env)
        b = self.ev(node.right, env)
        if isinstance(a, StrValue) and isinstance(b, StrValue):
            return StrValue(a.parts + b.parts, self.span(node), a.quote)
        return UnknownValue(self.span(node), env.org)

    def ev_FormattedString(self, node, env):
        sp = self.span(node)
        raw = "r" in node.start.lower()
        parts = []
        for p in node.parts:
            if isinstance(p, cst.FormattedStringText):
                ps = self.span(p)
                r = decode_body(p.value, ps.start, raw=raw, fstring=True)
                if r is None:
                    parts.append(Hole(ps, env.org))
                else:
                    parts.append(Segment(r[0], r[1], env.org))
            elif isinstance(p, cst.FormattedStringExpression):
                parts.extend(self._fhole(p, env))
            else:
                parts.append(Hole(self.span(p), env.org))
        q = node.start.lstrip("rRbBfFuUtT")
        return StrValue(parts or [Segment("", [], env.org)], sp, q)

    def _fhole(self, p, env):
        ps = self.span(p)
        equal = getattr(p, "equal", None)
        debug = equal is not None and not isinstance(equal, cst.MaybeSentinel)  # f"{x=}"
        if p.format_spec or p.conversion not in (None, "s") or debug:
            return [Hole(ps, env.org)]
        v = as_text(self.ev(p.expression, env))
        if isinstance(v, StrValue):
            return list(v.parts)
        if isinstance(v, ConstValue):
            return [Segment(v.text, const_offsets(v), v.org)]
        if isinstance(v, UnknownValue) and v.tag == "python":
            return [python_word(v)]
        return [Hole(ps, origin_of(v) if origin_of(v).use else env.org)]

    def ev_Integer(self, node, env):
        raw = node.value
        try:
            n = int(raw.replace("_", ""), 0)
        except ValueError:
            try:
                n = int(raw.replace("_", ""))
            except ValueError:
                return UnknownValue(self.span(node), env.org)
        sp = self.span(node)
        return ConstValue(str(n), "int", sp if str(n) == raw else None, env.org, sp)

    def ev_Float(self, node, env):
        sp = self.span(node)
        try:
            t = str(float(node.value.replace("_", "")))
        except ValueError:
            return UnknownValue(sp, env.org)
        return ConstValue(t, "float", sp if t == node.value else None, env.org, sp)

    def ev_Name(self, node, env):
        n = node.value
        sp = self.span(node)
        if n in ("True", "False"):
            return ConstValue(n, "bool", sp, env.org, sp)
        if n == "None":
            return ConstValue("None", "none", sp, env.org, sp)
        if env.over is not None and n in env.over:
            return env.over[n]
        s = self.binding_scope(n, env.scope)
        if s is None:
            return UnknownValue(sp, env.org)
        if s.kind == "module" and "." in self.idx.imports.get(n, "") and \
                all(e.kind == "other" for e in self.table(s).events.get(n, [])):
            return self.imported_value(self.idx.imports[n], sp, env)
        key = (id(s), n)
        if key in env.active:
            return UnknownValue(sp, env.org)
        org = env.org if env.org.use is not None else Origin(sp, False)
        org = Origin(org.use, org.shared or self.is_shared(n, s))
        return self.resolve(n, s, env, org, sp)

    def resolve(self, n: str, s: Scope, env: EvalEnv, org: Origin, use_span: Span):
        evs = self.table(s).events.get(n, [])
        if len(evs) == 1 and evs[0].kind == "other" and s is env.scope:
            item = self._loop_item(n, evs[0], env, org)
            if item is not None:
                return item
        if any(e.kind == "other" for e in evs):
            return UnknownValue(use_span, org)
        same = s is env.scope and not env.nested
        ufr = env.frames if same else ()
        evs = sorted(evs, key=lambda e: e.pos)
        paths = self.paths
        if paths.selection:  # a reading of some paths: on those paths first (one arm of 480, not all of them)
            seen = len(paths.seen)
            state = self._fold(n, s, env, org, use_span, evs, same, ufr, True)
            if len(paths.seen) == seen:
                return UnknownValue(use_span, org) if state is UNBOUND else restamped(state, org)
            del paths.seen[seen:]
        state = self._fold(n, s, env, org, use_span, evs, same, ufr, False)
        if isinstance(state, UnknownValue) and not state.tag:
            # Branches disagree: read the value on each path of the ifs that assign it (paths.py).
            state = self._fold(n, s, env, org, use_span, evs, same, ufr, True)
        if state is UNBOUND:
            return UnknownValue(use_span, org)
        return restamped(state, org)

    def _loop_item(self, n: str, e: Event, env: EvalEnv, org: Origin):
        """``for n in [...]:`` used in the loop's body: every item runs, so each is read as a path of its own
        (with no condition: an item is reported like a literal); None when the loop is not one of those."""
        loop = self._nodes(cst.For).get(e.pos)
        if loop is None or not isinstance(loop.target, cst.Name) or loop.target.value != n or \
                ("l", id(loop), "b") not in env.frames:
            return None
        items = self.ev(loop.iter, EvalEnv(env.scope, e.pos, e.frames, org, env.depth + 1, None, env.active))
        if not isinstance(items, ListValue) or not 1 < len(items.items) or \
                any(isinstance(it.val, UnknownValue) and it.val.splat for it in items.items):
            return None
        if len(items.items) > MAX_LOOP_ITEMS:  # a bound is never a pass: the launch is a file error naming it
            self.unresolved = self.unresolved or f"is a loop variable over more than {MAX_LOOP_ITEMS} items"
            return UnknownValue(self.span(loop.target), org, tag="bound")
        self.paths.point(id(loop), {k: "" for k in range(len(items.items))})
        k = self.paths.chosen(id(loop))
        return UnknownValue(self.span(loop.target), org) if k is None else restamped(items.items[k].val, org)

    def _nodes(self, kind) -> dict[int, object]:
        """The module's nodes of one class by their start offset (built once per class)."""
        cache = self._by_start.get(kind)
        if cache is None:
            cache = self._by_start[kind] = {}
            stack = [self.module]
            while stack:
                node = stack.pop()
                if type(node) is kind:  # the parser's own class (isinstance of libcst's ABCs is slow)
                    cache[self.start(node)] = node
                stack.extend(c for _f, c in child_nodes(node))
        return cache

    def _fold(self, n: str, s: Scope, env: EvalEnv, org: Origin, use_span: Span, evs: list, same: bool, ufr: tuple,
              by_path: bool):
        """The value of ``n`` at the use, assignment by assignment; ``by_path``: on the selected paths only."""
        state = UNBOUND
        active = env.active | {(id(s), n)}
        for e in evs:
            if same and e.pos >= env.pos:
                rel = "after-loop" if shares_loop(e.frames, ufr) else None
                if rel is None:
                    continue
            else:
                rel = frame_relation(e.frames, ufr)
                if rel == "cond" and by_path:
                    runs = self._runs(e.frames, ufr)
                    if runs is False:
                        continue  # on a path the reading did not select
                    if runs:
                        rel = "certain"
            eenv = EvalEnv(s, e.pos, e.frames, org, env.depth + 1, {n: state} if state is not UNBOUND else None,
                           active)
            state = self.step(state, e, rel, eenv, use_span, org)
        return state

    def _runs(self, ev_frames: tuple, use_frames: tuple) -> bool | None:
        """Whether an assignment in branches of ``if`` statements runs on the selected paths (None: not selected)."""
        k = 0
        while k < len(ev_frames) and k < len(use_frames) and ev_frames[k] == use_frames[k]:
            k += 1
        rest = ev_frames[k:]
        if self._ifs is None:
            self._ifs = {}
            stack = [self.module]
            while stack:
                n = stack.pop()
                if type(n) is cst.If:  # by type, as _nodes reads it
                    self._ifs[id(n)] = n
                stack.extend(c for _f, c in child_nodes(n))
        if not rest or any(f[0] != "c" or f[1] not in self._ifs for f in rest):
            return None
        for _c, point, _part in rest:
            if point not in self.paths.parts:
                self.paths.point(point, chain_conditions([self._source(t) for t in chain_arms(self._ifs[point])]))
        if any(self.paths.selection.get(f[1]) is None for f in rest):
            for f in rest:
                self.paths.chosen(f[1])  # noted: the launch is read again once per path
            return None
        for _c, point, part in rest:
            if self.paths.chosen(point) != part:
                return False
        return True

    def _source(self, node) -> str:
        sp = self.span(node)
        return self.text[sp.start:sp.end]

    def step(self, state, e: Event, rel: str, eenv: EvalEnv, where: Span, org: Origin):
        repeated = rel in ("loop", "after-loop")
        if e.kind == "assign":
            new = self.ev(e.node, eenv)
            if rel == "certain":
                return new
            return join_values(state, new, where)
        if e.kind == "pass":
            if isinstance(state, ListValue):
                return ListValue(state.items + [ListItem(UnknownValue(where, org, splat=True))], state.where)
            if isinstance(state, DictValue):
                return DictValue(dict(state.entries), True, state.where, dict(state.keyspans))
            return state
        if state is UNBOUND or isinstance(state, UnknownValue):
            return state if isinstance(state, UnknownValue) else UnknownValue(where, org)
        if e.kind == "aug":
            add = self.ev(e.node, eenv)
            if repeated:
                add = splatified(add, where, org)
            return add_values(state, add, where, org)
        if e.kind == "method":
            call, meth = e.node, e.extra
            if isinstance(state, ListValue) and meth in LIST_MUTATORS:
                if meth == "append":
                    a = call_argument(call, 0, None)
                    if a is None:
                        return UnknownValue(where, org)
                    items = [ListItem(self.ev(a, eenv), self.remove_stmt_of(call))]
                elif meth == "extend":
                    a = call_argument(call, 0, None)
                    v = self.ev(a, eenv) if a is not None else UnknownValue(where, org)
                    items = v.items if isinstance(v, ListValue) else [ListItem(UnknownValue(where, org, splat=True))]
                else:  # insert(i, x)
                    i_node, a = call_argument(call, 0, None), call_argument(call, 1, None)
                    iv = self.ev(i_node, eenv) if i_node is not None else None
                    if not (isinstance(iv, ConstValue) and iv.kind == "int") or a is None:
                        return UnknownValue(where, org, splat=True)
                    k = int(iv.text)
                    lst = list(state.items)
                    lst.insert(k if k >= 0 else len(lst) + k, ListItem(self.ev(a, eenv), self.remove_stmt_of(call)))
                    if repeated:
                        return UnknownValue(where, org, splat=True)
                    return ListValue(lst, state.where)
                if repeated:
                    items = [ListItem(UnknownValue(where, org, splat=True))]
                return ListValue(state.items + items, state.where)
            if isinstance(state, DictValue) and meth in DICT_MUTATORS:
                new = DictValue(dict(state.entries), state.open or repeated, state.where, dict(state.keyspans))
                if meth == "update":
                    self.merge_dict_args(new, call.args, eenv)
                    return new
                k_node, v_node = call_argument(call, 0, None), call_argument(call, 1, None)
                k = self.ev(k_node, eenv) if k_node is not None else None
                if not (isinstance(k, StrValue) and k.known):
                    new.open = True
                    return new
                if k.text not in new.entries:
                    new.entries[k.text] = ListItem(self.ev(v_node, eenv) if v_node is not None else ConstValue(
                        "None", "none", None, org), None)
                    new.keyspans[k.text] = k.where
                return new
            if meth in OPAQUE_MUTATORS or meth in LIST_MUTATORS or meth in DICT_MUTATORS:
                return UnknownValue(where, org, splat=isinstance(state, ListValue))
            return state
        if e.kind == "setitem":
            key_node, stmt = e.extra
            if isinstance(state, DictValue):
                k = self.ev(key_node, eenv)
                new = DictValue(dict(state.entries), state.open or repeated, state.where, dict(state.keyspans))
                if isinstance(k, StrValue) and k.known:
                    new.entries[k.text] = ListItem(self.ev(e.node, eenv), self.remove_stmt(stmt))
                    new.keyspans[k.text] = k.where
                else:
                    new.open = True
                return new
            return UnknownValue(where, org, splat=isinstance(state, ListValue))
        if e.kind == "delitem":
            key_node, stmt = e.extra
            if isinstance(state, DictValue) and key_node is not None:
                k = self.ev(key_node, eenv)
                new = DictValue(dict(state.entries), state.open, state.where, dict(state.keyspans))
                if isinstance(k, StrValue) and k.known and rel == "certain":
                    new.entries.pop(k.text, None)
                else:
                    new.open = True
                return new
            return UnknownValue(where, org, splat=isinstance(state, ListValue))
        return UnknownValue(where, org)

    def remove_stmt_of(self, call) -> Span | None:
        # The statement is the Expr holding the call: same span as the call when it is alone.
        return self.remove_stmt(call)

    def ev_Attribute(self, node, env):
        sp = self.span(node)
        q = self.qualify(node, env.scope)
        if q == "sys.executable":
            return UnknownValue(sp, env.org, tag="python")
        if q == "os.environ":
            return DictValue({}, True, sp)
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            return self.class_attr(node, env)
        if isinstance(node.value, cst.Name) and q is not None and not q.startswith("<") and \
                self.idx.imports.get(node.value.value) == q.rsplit(".", 1)[0]:
            return self.imported_value(q, sp, env)  # presets.KV_DTYPE after import presets
        return UnknownValue(sp, env.org)

    def imported_value(self, qualified: str, sp: Span, env: EvalEnv):
        """``NAME`` imported from a sibling module (``from presets import NAME``): its literal value when the
        pipeline read the module, reported at the use here (it is written, and edited, there)."""
        module, _, name = qualified.rpartition(".")
        ref = f"pyimport:{module}"
        if ref not in self.result.sources:
            self.result.sources.append(ref)
        values = self.imported.get(module)
        if values is None or name not in values:
            return UnknownValue(sp, env.org)
        org = env.org if env.org.use is not None else Origin(sp, True)
        return literal_value(values[name], org)

    def class_attr(self, node, env):
        sp = self.span(node)
        s = env.scope
        while s is not None and s.kind not in ("function",):
            s = s.parent
        cls = s.parent if s is not None else None
        if cls is None or cls.kind != "class":
            return UnknownValue(sp, env.org)
        attr = node.attr.value
        bound = self.bound_class
        if bound is not None and bound is not cls and cls in self.mro(bound):
            # Read as the subclass a launch runs as (a test class that sets ``other_args``): the first class of its
            # method resolution order that sets the attribute gives it.
            owner = next((c for c in self.mro(bound) if self.sets_attr(c, attr)), None)
            if owner is None:
                return UnknownValue(sp, env.org)
            return self.attr_value(owner, attr, sp, env, inherited=self.inherited(owner, attr), at_value=True)
        if self._overridden(cls, attr):
            return UnknownValue(sp, env.org)
        return self.attr_value(cls, attr, sp, env, shared=self._attr_shared(cls, attr))

    def attr_value(self, cls: Scope, attr: str, sp: Span, env: EvalEnv, *, shared: bool = False,
                   inherited: bool = False, at_value: bool = False):
        """The value class ``cls`` gives ``attr`` (its class body, and assignments to ``self.attr`` in its methods),
        used at ``sp``; unknown where something else than an assignment sets it.  ``at_value``: reported where the
        value is written (the subclass's ``other_args`` list), not at the use (the base class's launch call)."""
        evs = []
        body = self.table(cls).events.get(attr, [])
        evs.extend(body)
        for m in cls.children:
            if m.kind == "function":
                evs.extend(self.table(m).attr_events.get(attr, []))
        evs = [e for e in evs if e.kind != "pass"]
        if not evs or any(e.kind != "assign" for e in evs):
            return UnknownValue(sp, env.org)
        key = (id(cls), "." + attr)
        if key in env.active:
            return UnknownValue(sp, env.org)
        org = env.org if env.org.use is not None else Origin(None if at_value else sp, len(evs) > 1)
        org = Origin(org.use, org.shared or shared or inherited)
        state = UNBOUND
        for e in evs:
            eenv = EvalEnv(e.scope, e.pos, e.frames, org, env.depth + 1, None, env.active | {key})
            state = join_values(state, self.ev(e.node, eenv), sp)
        return restamped(state, org)

    # -- classes of this module: bases, method resolution, attributes ----------

    MAX_MRO = 32  # classes of one method resolution order; past them an attribute is unknown (cost: linear)

    def mro(self, cls: Scope) -> list[Scope]:
        """``cls`` and the classes of this module it derives from, in Python's order for single-file hierarchies
        (depth first, left to right, each once); a base from elsewhere ends its branch.  At most :data:`MAX_MRO`."""
        out = self._mro.get(id(cls))
        if out is not None:
            return out
        if self._class_names is None:
            self._class_names = {c.node.name.value: c for c in self.idx.classes}
        by_name = self._class_names
        out, seen = [], set()
        stack = [cls]
        while stack and len(out) < self.MAX_MRO:
            c = stack.pop()
            if id(c) in seen:
                continue
            seen.add(id(c))
            out.append(c)
            bases = [by_name.get(dotted_name(b.value) or "") for b in c.node.bases]
            stack.extend(b for b in reversed(bases) if b is not None and b is not c)
        self._mro[id(cls)] = out
        return out

    def subclasses(self, cls: Scope) -> list[Scope]:
        """The classes of this module whose method resolution order holds ``cls`` (itself left out), in the order
        they are written."""
        if self._subclasses is None:
            self._subclasses = {}
            for c in self.idx.classes:
                for base in self.mro(c)[1:]:
                    self._subclasses.setdefault(id(base), []).append(c)
            for v in self._subclasses.values():
                v.sort(key=lambda c: self.start(c.node))
        return self._subclasses.get(id(cls), [])

    def sets_attr(self, cls: Scope, attr: str) -> bool:
        """Whether the class body of ``cls`` assigns ``attr`` (``other_args = [...]``, ``model: str = ...``)."""
        return any(e.kind != "pass" for e in self.table(cls).events.get(attr, ()))

    def inherited(self, owner: Scope, attr: str) -> bool:
        """Whether another class of this module takes ``attr`` from ``owner`` (a subclass that does not set it):
        its value then feeds more than one launch, and a fix there changes them all."""
        return any(next((x for x in self.mro(c) if self.sets_attr(x, attr)), None) is owner
                   for c in self.subclasses(owner))

    def _overridden(self, cls: Scope, attr: str) -> bool:
        """Whether a subclass in this file sets ``attr`` (``cls.attr`` then depends on the class running)."""
        names = {cls.node.name.value}
        subs = []
        changed = True
        while changed:
            changed = False
            for c in self.idx.classes:
                if c in subs or c is cls:
                    continue
                bases = {dotted_name(b.value) for b in c.node.bases}
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

    def _attr_shared(self, cls: Scope, attr: str) -> bool:
        n = 0
        stack = [cls.node]
        while stack:
            a = stack.pop()
            if isinstance(a, cst.Attribute) and a.attr.value == attr and isinstance(a.value, cst.Name) \
                    and a.value.value in ("self", "cls"):
                n += 1
            stack.extend(c for _f, c in child_nodes(a))
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
                if isinstance(v, ListValue):
                    items.extend(v.items)
                else:
                    org = origin_of(v)
                    items.append(ListItem(UnknownValue(org.use or self.span(e.value), org, splat=True)))
            else:
                items.append(ListItem(self.ev(e.value, env), self.remove_elem(node, i)))
        return ListValue(items, self.span(node))

    def ev_Dict(self, node, env):
        d = DictValue({}, False, self.span(node))
        for i, e in enumerate(node.elements):
            if isinstance(e, cst.StarredDictElement):
                v = self.ev(e.value, env)
                if isinstance(v, DictValue):
                    d.entries.update(v.entries)
                    d.keyspans.update(v.keyspans)
                    d.open = d.open or v.open
                else:
                    d.open = True
                continue
            k = self.ev(e.key, env)
            if isinstance(k, StrValue) and k.known:
                d.entries.pop(k.text, None)
                d.entries[k.text] = ListItem(self.ev(e.value, env), self.remove_elem(node, i))
                d.keyspans[k.text] = self.span(e.key)
            else:
                d.open = True
        return d

    def ev_BinaryOperation(self, node, env):
        sp = self.span(node)
        if not isinstance(node.operator, cst.Add):
            if isinstance(node.operator, cst.Modulo):
                return StrValue([Hole(sp, env.org)], sp)
            return UnknownValue(sp, env.org)
        a = self.ev(node.left, env)
        b = self.ev(node.right, env)
        return add_values(a, b, sp, env.org)

    def ev_IfExp(self, node, env):
        a = self.ev(node.body, env)
        b = self.ev(node.orelse, env)
        joined = join_values(a, b, self.span(node))
        if not isinstance(joined, UnknownValue):
            return joined
        test = self.span(node.test)
        self.paths.point(id(node), if_conditions(self.text[test.start:test.end]))
        part = self.paths.chosen(id(node))
        return joined if part is None else a if part == "b" else b

    def ev_Subscript(self, node, env):
        sp = self.span(node)
        base = self.ev(node.value, env)
        if len(node.slice) != 1:
            return UnknownValue(sp, env.org)
        sl = node.slice[0].slice
        if isinstance(sl, cst.Index):
            k = self.ev(sl.value, env)
            if isinstance(base, ListValue) and isinstance(k, ConstValue) and k.kind == "int":
                i = int(k.text)
                known = all(not (isinstance(it.val, UnknownValue) and it.val.splat) for it in base.items)
                if known and -len(base.items) <= i < len(base.items):
                    return base.items[i].val
            if isinstance(base, DictValue) and isinstance(k, StrValue) and k.known and k.text in base.entries:
                return base.entries[k.text].val
            if isinstance(base, DictValue) and not base.open and len(base.entries) > 1 and \
                    not (isinstance(k, StrValue) and k.known):
                # A preset picked by a name the code does not know: one reading per preset.
                ks = self.span(sl.value)
                key = " ".join(self.text[ks.start:ks.end].split())
                self.paths.point(id(node), {name: f"{key} == {name!r}" for name in base.entries})
                part = self.paths.chosen(id(node))
                if part is not None:
                    return base.entries[part].val
            return UnknownValue(sp, env.org)
        if isinstance(sl, cst.Slice) and isinstance(base, ListValue) and sl.step is None:
            if any(isinstance(it.val, UnknownValue) and it.val.splat for it in base.items):
                return UnknownValue(sp, env.org, splat=True)
            lo = self.ev(sl.lower, env) if sl.lower is not None else ConstValue("0", "int", None, env.org)
            hi = self.ev(sl.upper, env) if sl.upper is not None else ConstValue(
                str(len(base.items)), "int", None, env.org)
            if isinstance(lo, ConstValue) and lo.kind == "int" and isinstance(hi, ConstValue) and hi.kind == "int":
                return ListValue(base.items[int(lo.text):int(hi.text)], sp)
        return UnknownValue(sp, env.org, splat=isinstance(base, ListValue))

    def declared_value(self, node, env: EvalEnv, sp: Span):
        """``os.environ.get("NAME")`` where the service declares its environment (a BentoML service's ``envs``): the
        declared value, edited where it is declared; else unknown (the deployment may set it)."""
        a = call_argument(node, 0, "key")
        k = self.ev(a, env) if a is not None else None
        if isinstance(k, StrValue) and k.known and k.text in self.declared_env:
            return self.declared_env[k.text]
        return UnknownValue(sp, env.org)

    def ev_Call(self, node, env):
        sp = self.span(node)
        f = node.func
        q = self.qualify(f, env.scope)
        if q in ("os.environ.get", "os.getenv") and self.declared_env is not None:
            return self.declared_value(node, env, sp)
        if isinstance(f, cst.Attribute):
            meth = f.attr.value
            if q == "shlex.split":
                a = call_argument(node, 0, "s")
                v = self.ev(a, env) if a is not None else None
                if isinstance(v, StrValue):
                    return self.shlex_split(v, sp, env)
                return UnknownValue(sp, env.org, splat=True)
            if q in ("os.environ.copy",):
                return DictValue({}, True, sp)
            if q in ("copy.copy", "copy.deepcopy"):
                a = call_argument(node, 0, None)
                return self.ev(a, env) if a is not None else UnknownValue(sp, env.org)
            recv = None if q and q.startswith(("os.", "sys.", "subprocess.", "shlex.")) else f.value
            if recv is not None and meth == "join" and len(node.args) == 1:
                sep = self.ev(recv, env)
                lst = self.ev(node.args[0].value, env)
                if isinstance(sep, StrValue) and sep.known and isinstance(lst, ListValue):
                    return joined_value(sep.text, lst, sp, env.org)
                return StrValue([Hole(sp, env.org)], sp)
            if recv is not None and meth == "split":
                s = self.ev(recv, env)
                sep = self.ev(node.args[0].value, env) if len(node.args) == 1 else None
                if isinstance(s, StrValue) and (not node.args or (isinstance(sep, ConstValue) and sep.kind == "none")):
                    return ListValue([ListItem(w) for w in split_on_whitespace(chars_of(s))], sp)
                return UnknownValue(sp, env.org, splat=True)
            if recv is not None and meth in ("strip", "lstrip", "rstrip") and not node.args:
                s = self.ev(recv, env)
                if isinstance(s, StrValue) and s.known:
                    ch = chars_of(s)
                    a, b = 0, len(ch)
                    if meth in ("strip", "lstrip"):
                        while a < b and ch[a][0].isspace():
                            a += 1
                    if meth in ("strip", "rstrip"):
                        while b > a and ch[b - 1][0].isspace():
                            b -= 1
                    return from_chars(ch[a:b], sp, s.quote)
                return UnknownValue(sp, env.org)
            if recv is not None and meth == "format":
                return self._format(recv, node, env, sp)
            if recv is not None and meth == "copy" and not node.args:
                return self.ev(recv, env)
            return UnknownValue(sp, env.org)
        if isinstance(f, cst.Name):
            name = f.value
            if name not in self.idx.imports and name not in self.idx.defined:
                if name == "str" and len(node.args) == 1:
                    v = self.ev(node.args[0].value, env)
                    if isinstance(v, StrValue):
                        return v
                    if isinstance(v, ConstValue):
                        return StrValue([Segment(v.text, const_offsets(v), v.org)], sp)
                    return StrValue([Hole(where_of(v) or sp, origin_of(v))], sp)
                if name in ("list", "tuple") and len(node.args) == 1:
                    v = self.ev(node.args[0].value, env)
                    return v if isinstance(v, ListValue) else UnknownValue(sp, env.org, splat=True)
                if name == "dict":
                    d = DictValue({}, False, sp)
                    self.merge_dict_args(d, node.args, env, removable=node)
                    return d
        return UnknownValue(sp, env.org)

    def _format(self, recv, node, env, sp):
        s = self.ev(recv, env)
        if not (isinstance(s, StrValue) and s.known):
            return StrValue([Hole(sp, env.org)], sp)
        ch = chars_of(s)
        text = "".join(c[0] for c in ch)
        pos_args = [a for a in node.args if a.keyword is None and not a.star]
        kw_args = {a.keyword.value: a for a in node.args if a.keyword is not None}
        if any(a.star for a in node.args):
            return StrValue([Hole(sp, env.org)], sp)
        parts: list = []
        i = 0
        auto = 0
        buf: list = []

        def flush():
            if buf:
                parts.append(Segment("".join(c[0] for c in buf), [c[1] for c in buf], buf[0][2]))
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
                    return StrValue([Hole(sp, env.org)], sp)
                field_ = text[i + 1:j]
                flush()
                if ":" in field_ or "!" in field_ or "[" in field_ or "." in field_:
                    parts.append(Hole(sp, env.org))
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
                    if isinstance(v, StrValue):
                        parts.extend(v.parts)
                    elif isinstance(v, ConstValue):
                        parts.append(Segment(v.text, const_offsets(v), v.org))
                    else:
                        parts.append(Hole(where_of(v) if v is not None else sp, env.org))
                i = j + 1
                continue
            buf.append(ch[i])
            i += 1
        flush()
        return StrValue(parts or [Segment("", [], env.org)], sp, s.quote)

    def shlex_split(self, v: StrValue, sp: Span, env: EvalEnv):
        text, omap, holes = self.embed(v)
        words = nested("shell words")(text, origin=omap)
        items = []
        for w in words:
            if w.text is not None and "__KV4LINT_HOLE_" in w.text:
                name = re.search(r"__KV4LINT_HOLE_\d+__", w.text).group(0)
                h = holes.get(name)
                items.append(ListItem(ConvertedValue(Value.unknown(
                    h or w.span or w.use, splat=w.text.strip("${}") == name))))
            else:
                items.append(ListItem(ConvertedValue(stamped(w, origin_of(v), self))))
        return ListValue(items, sp)


def literal_value(v, org: Origin):
    """A Python literal (from another module) as an abstract value without spans in this file; a string
    written verbatim there is edited there (an unsafe fix: every module importing it sees the edit)."""
    if isinstance(v, ForeignString):
        if v.path is not None:
            return ConvertedValue(Value(str(v), v.span(), Provenance.RESOLVED, use=org.use, shared=True,
                                        path=v.path), None, org)
        v = str(v)
    if isinstance(v, str):
        return StrValue([Segment(v, [None] * len(v), org)], None, '"')
    if isinstance(v, bool) or v is None:
        return ConstValue(str(v), "bool" if v is not None else "none", None, org)
    if isinstance(v, (int, float)):
        return ConstValue(str(v), "int" if isinstance(v, int) else "float", None, org)
    if isinstance(v, (list, tuple)):
        return ListValue([ListItem(literal_value(x, org)) for x in v])
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return DictValue({k: ListItem(literal_value(x, org)) for k, x in v.items()})
    return UnknownValue(None, org)


def stamped(w: Value, org: Origin, sc: "Evaluator") -> Value:
    if org.use is None:
        return w
    return replace(w, provenance=Provenance.RESOLVED, use=sc.fanchor(org.use),
                   shared=w.shared or org.shared)
