"""The variables a shell walk holds at a statement: bindings by name, and the names exported; and the bindings.

A :class:`Binding` is what a name holds: a scalar's characters, an array's elements, unset or unknown, a choice
of one binding per path of a join (:mod:`kv4lint.frontends.shell.choices`), or text joined from other bindings,
read when a path is chosen; each known value keeps the :class:`Assignment` it came from (where it is written,
and where it is used).

A walk copies them at every branch, subshell, pipeline element and function call, and a long script sets
thousands: with ``dict`` copies a 2 MB serving script of 8,000 variables spent a quarter of its walk copying,
growing with the square of its length. Each is an ``immutables.Map`` (a hash array mapped trie, PEP 603's): a
copy shares it, and a write makes a new one that shares all but one path with the old, in ``O(log n)``.
"""

from __future__ import annotations

from immutables import Map

from kv4lint.base.model import Span
from kv4lint.frontends.shell.parse import Chars

_NONE = Map()


class Variables:
    """Bindings by name (``vars``: name -> Binding) and the names exported (``exported``: name -> None); read
    them as mappings, change them with the methods."""

    __slots__ = ("vars", "exported")

    def __init__(self, vars: Map = _NONE, exported: Map = _NONE):
        self.vars = vars
        self.exported = exported

    def copy(self) -> "Variables":
        return Variables(self.vars, self.exported)

    def set(self, name: str, b) -> None:
        self.vars = self.vars.set(name, b)

    def unset(self, name: str) -> None:
        if name in self.vars:
            self.vars = self.vars.delete(name)

    def export(self, *names: str) -> None:
        self.exported = self.exported.set(names[0], None) if len(names) == 1 else \
            self.exported.update(dict.fromkeys(names))

    def unexport(self, name: str) -> None:
        if name in self.exported:
            self.exported = self.exported.delete(name)


class Assignment:
    """One assignment (or loop binding, or ``:=`` default) a value may come from."""

    __slots__ = ("name", "span", "sites", "exported", "seeded", "path")

    def __init__(self, name: str, span: Span | None, exported: bool = False, seeded: bool = False,
                 path: str | None = None):
        self.name = name
        self.path = path  # the file the value is written in, when not this one (a sourced settings file)
        self.span = span
        self.sites: set = set()
        self.exported = exported
        self.seeded = seeded

    @property
    def shared(self) -> bool:
        return self.exported or len(self.sites) > 1


# Variable bindings
SCALAR, ARRAY, UNSET, UNKNOWN = "scalar", "array", "unset", "unknown"
CHOICE = "choice"  # one binding per path of a join (kv4lint.frontends.shell.choices)
CONCAT = "concat"  # text or elements joined from other bindings, read when a path is chosen (``A="$A --x"``)


class Element:
    """One element of a bash array."""

    __slots__ = ("chars", "splat", "remove", "assign")

    def __init__(self, chars: Chars | None, splat: bool, remove: Span | None, assign: Assignment | None):
        self.chars = chars  # None: unknown
        self.splat = splat
        self.remove = remove
        self.assign = assign


class Ref:
    """A binding used inside a value that is read later, on the path chosen then (``"$ARGS --x"`` where ARGS
    differs between the paths of an earlier branch): the value is not read once per path when assigned."""

    __slots__ = ("binding",)

    def __init__(self, binding: "Binding"):
        self.binding = binding


class Alts:
    """The binding on each of ``n`` paths of a join (a CHOICE's ``alts``): ``default`` on every path but those of
    ``own`` (path -> binding). A ``case`` of 2,000 arms that each set their own variable makes 2,000 choices of
    2,000 paths, each what it was before on all but one: a list each grew with the square of the arms."""

    __slots__ = ("n", "default", "own")

    def __init__(self, n: int, default: "Binding | None", own: dict[int, "Binding | None"]):
        self.n, self.default, self.own = n, default, own

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int) -> "Binding | None":
        if not 0 <= k < self.n:
            raise IndexError(k)
        return self.own.get(k, self.default)

    def distinct(self) -> list:
        """Each binding the paths give, once, path 0's first."""
        out = [self[0]]
        seen = {id(out[0])}
        for b in (self.default, *self.own.values()) if len(self.own) < self.n else self.own.values():
            if id(b) not in seen:
                seen.add(id(b))
                out.append(b)
        return out


def alternatives(b: "Binding") -> list:
    """The bindings the paths of choice ``b`` give, path 0's first (each once where its paths are :class:`Alts`)."""
    return b.alts.distinct() if isinstance(b.alts, Alts) else b.alts


class Binding:
    __slots__ = ("kind", "chars", "elems", "assign", "alts", "point", "parts", "size", "known")

    def __init__(self, kind: str, chars: Chars | None = None, elems: list | None = None,
                 assign: Assignment | None = None, alts: "list | Alts | None" = None, point=None,
                 parts: list | None = None):
        self.kind = kind
        self.chars = chars
        self.elems = elems
        self.assign = assign
        self.alts = alts  # CHOICE: the binding on each path of ``point`` (None: never assigned there)
        self.point = point
        # CONCAT: the pieces in order -- Chars (scalar) or Element (array) written here, Ref to another binding,
        # None for an unknown piece; ``elems`` is [] (not None) for an array.
        self.parts = parts
        self.size = _size_of(self) if kind in (CHOICE, CONCAT) else 0  # a bound on its characters or elements
        # CHOICE, CONCAT: whether any path gives some known text (a choice of unknowns is just unknown)
        self.known = _known_of(self) if kind in (CHOICE, CONCAT) else True

    @property
    def lazy(self) -> bool:
        """A value that depends on the path chosen (read when a command is expanded per path)."""
        return self.kind == CHOICE or self.kind == CONCAT


def _size(b: "Binding | None") -> int:
    if b is None:
        return 0
    if b.kind == SCALAR:
        return len(b.chars.text) if b.chars is not None else 0
    if b.kind == ARRAY:
        return len(b.elems or ())
    return b.size


def _known(b: "Binding | None") -> bool:
    if b is None or b.kind == UNKNOWN:
        return False
    if b.kind == SCALAR:
        return b.chars is not None
    if b.kind == ARRAY:
        return any(el.chars is not None for el in b.elems or ())
    return b.known


def _known_of(b: Binding) -> bool:
    if b.kind == CHOICE:
        return any(_known(a) for a in alternatives(b))
    return any(_known(p.binding) if isinstance(p, Ref) else p is not None and (
        p.chars is not None if isinstance(p, Element) else bool(p.text)) for p in b.parts)


def _size_of(b: Binding) -> int:
    if b.kind == CHOICE:
        return max((_size(a) for a in alternatives(b)), default=0)
    n = 0
    for p in b.parts:
        if isinstance(p, Ref):
            n += _size(p.binding)
        elif isinstance(p, Chars):
            n += len(p.text)
        else:
            n += 1
    return n


ALLEXPORT = "-a"  # in Variables.exported: ``set -a`` is on, every variable set is exported (no variable's name)


def used_on_every_path(b: Binding, key, known: dict | None = None) -> None:
    """A use of a value that depends on the path: a use of the value of every path (each edit of one must know
    of it). ``known``: the assignments each binding's paths come from, found so far in this walk (a binding
    never changes: id -> (binding, assignments))."""
    got = known.get(id(b)) if known is not None else None
    if got is None:
        got = (b, _every_path_assignments(b))
        if known is not None:
            known[id(b)] = got
    for a in got[1]:
        a.sites.add(key)


def _every_path_assignments(b: Binding) -> list:
    out = []
    stack = [b]
    seen: set[int] = set()
    while stack:
        alt = stack.pop()
        if alt is None or id(alt) in seen:
            continue
        seen.add(id(alt))
        if alt.kind == CHOICE:
            stack.extend(alternatives(alt))
            continue
        for a in [alt.assign] + [el.assign for el in alt.elems or ()]:
            if a is not None:
                out.append(a)
    return out


def shared_parts(b: Binding) -> tuple[list, list]:
    """What every path of choice ``b`` starts and ends with: the pieces its values share (``A`` before an ``if``
    that sets ``A="$A --x"``: every path starts with the ``A`` of before), as (head, tail)."""
    alts = alternatives(b)
    lists = [a.parts if a is not None and a.kind == CONCAT else [a] for a in alts]
    if any(a is None for a in alts):
        return [], []

    def ident(p):
        return p.binding if isinstance(p, Ref) else p

    head = 0
    shortest = min(len(p) for p in lists)
    while head < shortest and all(ident(p[head]) is ident(lists[0][head]) for p in lists):
        head += 1
    tail = 0
    while tail < shortest - head and all(ident(p[-1 - tail]) is ident(lists[0][-1 - tail]) for p in lists):
        tail += 1
    return lists[0][:head], lists[0][len(lists[0]) - tail:]
