"""Value sets: what a variable may hold after branches, and the condition that selects each value.

Where paths of a script join again (after an ``if``/``elif``/``else``, a
``case``, ``a && b``, ``a || b``), a variable the paths set differently holds
one value per path.  A :class:`ChoicePoint` records the paths of one join (the
condition that selects each, in the user's terms: ``USE_FP4_KV=1``,
``MODE=fp4``); a ``CHOICE`` :class:`~kv4lint.frontends.shell.variables.Binding`
holds the variable's binding on each path, which may itself be a choice of an
earlier join (nothing is multiplied out when paths join: merging costs what the
paths changed).  Variables set at the same join are chosen together: ``KV``
and ``BACKEND`` set in the same ``if`` never mix the ``then`` value of one
with the ``else`` value of the other.  A value built from a choice
(``ARGS="$ARGS --tp 8"``) is a ``CONCAT`` that refers to it, read on the path
chosen when a command uses it.

A command that uses a choice is expanded once per consistent combination of
paths (:class:`~kv4lint.frontends.shell.branches.Branches`), so that each
launch it may run is judged on its own, with the conditions that select it --
up to :data:`MAX_READINGS` of them.  Past that (six independent knobs that
each add an option are 64 combinations), each choice is read on its own, once
per path, with the other choices unknown: a value written in one branch is
still judged (``--kv-cache-dtype nvfp4`` set when ``FP4=1``), with the
condition of its own path, at a cost that grows with the paths, not their
combinations.  A path that sets nothing keeps what the variable held before,
which may be unknown (the environment): unknown stays unknown.
"""

from __future__ import annotations

import itertools
import re

from kv4lint.base.memo import Memo
from kv4lint.frontends.shell.parse import Chars
from kv4lint.frontends.shell.variables import CHOICE, SCALAR, UNKNOWN, Alts, Assignment, Binding, Variables

MAX_READINGS = 64  # every combination of a command's choices, expanded one by one; more: one choice at a time
MAX_CANDIDATES = 1024  # readings of one command, one choice at a time; past it: a file error naming the bound

_serial = itertools.count()


class ChoicePoint:
    """One join of paths: per path, the condition that selects it and the paths of earlier joins it implies."""

    __slots__ = ("conds", "implies", "serial")

    def __init__(self):
        self.conds: list[str] = []
        self.implies: list[dict["ChoicePoint", int]] = []
        self.serial = next(_serial)  # conditions are named in the order their joins were met

    def add(self, cond: str, implies: dict["ChoicePoint", int]) -> int:
        self.conds.append(cond)
        self.implies.append(implies)
        return len(self.conds) - 1


def consistent(sel: dict[ChoicePoint, int], more: dict[ChoicePoint, int]) -> bool:
    return all(sel.get(p, k) == k for p, k in more.items())


DIFFER = object()  # agreed(): the paths disagree


def agreed(name: str, bs: list) -> "Binding | None | object":
    """The binding of ``name`` after paths that left it ``bs``, when they agree: the same binding (None: unset on
    every path) or the same text written in different places (known, not editable); else :data:`DIFFER`."""
    first = bs[0]
    if all(b is first for b in bs):
        return first
    if all(b is not None and b.kind == SCALAR and b.chars is not None for b in bs) and \
            len({b.chars.text for b in bs}) == 1:
        return Binding(SCALAR, Chars(first.chars.text), assign=Assignment(name, None))
    return DIFFER


def joined(envs: list[Variables]) -> Variables:
    """What every path agrees on (the variables none of them set), and the exported set of any of them."""
    out = envs[0].copy()
    for e in envs[1:]:
        if e.exported is not out.exported:
            out.exported = out.exported.update(e.exported)
    return out


def rebind(env: Variables, name: str, b: "Binding | None") -> None:
    if b is None:
        env.unset(name)
    else:
        env.set(name, b)


def merge_variables(envs: list[Variables], names) -> Variables:
    """The state after one of several paths ran: what the paths disagree on is unknown.

    ``names``: the variables any path may have set (what the paths did not set is the same on every path):
    merging costs what the paths changed, not every variable of the script."""
    if len(envs) == 1:
        return envs[0]
    out = joined(envs)
    for n in names:
        b = agreed(n, [e.vars.get(n) for e in envs])
        rebind(out, n, Binding(UNKNOWN, assign=Assignment(n, None)) if b is DIFFER else b)
    return out


def merge_choices(envs: list[Variables], conds: list[str], names, implies: list[dict] | None = None,
                  base: Variables | None = None, written: list[set] | None = None) -> Variables:
    """The state after one of ``envs`` ran, path ``k`` selected by ``conds[k]``: what differs becomes a choice.

    ``names``: the variables any path may have set (the others are the same on every path); ``implies``: per
    path, the paths of earlier joins it stands for (a command expanded once per path). ``base`` and ``written``:
    the state every path began from, and the names each path set (the others it left as in ``base``): a choice
    then holds only what differs from ``base`` (:class:`Alts`), and a join costs what its paths set, not the
    product of its paths and their names (a ``case`` whose arms each set their own variable)."""
    if len(envs) == 1:
        return envs[0]
    out = joined(envs)
    point = None
    writers: dict[str, list[int]] = {}
    for k, names_k in enumerate(written or ()):
        for n in names_k:
            writers.setdefault(n, []).append(k)
    for n in sorted(names):
        if written is None:
            bs = alts = [e.vars.get(n) for e in envs]
        else:
            default = base.vars.get(n)
            own = {k: b for k in writers.get(n, ()) if (b := envs[k].vars.get(n)) is not default}
            alts = Alts(len(envs), default, own)
            bs = alts.distinct()
        b = agreed(n, bs)
        if b is not DIFFER:
            rebind(out, n, b)
        elif not any(b is not None and (b.known if b.lazy else b.kind != UNKNOWN and (
                b.kind != SCALAR or b.chars is not None)) for b in bs):
            out.set(n, Binding(UNKNOWN, assign=Assignment(n, None)))  # unknown on every path
        else:
            if point is None:
                point = ChoicePoint()
                for k, c in enumerate(conds):
                    point.add(c, implies[k] if implies else {})
            out.set(n, Binding(CHOICE, assign=Assignment(n, None), alts=alts, point=point))
    return out


# ---------------------------------------------------------------------------
# Conditions in the user's terms

_VAR = re.compile(r'^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}?"?$')
_WORD = re.compile(r"""^(?:"([^"$`\\]*)"|'([^']*)'|([^\s"'$`\\]+))$""")
_NEGATE = {"=": "!=", "==": "!=", "!=": "="}


def _unquote(s: str) -> str | None:
    m = _WORD.match(s)
    if not m:
        return None
    return next(g for g in m.groups() if g is not None)


def _var(s: str) -> str | None:
    m = _VAR.match(s)
    return m.group(1) if m else None


def test_condition(text: str) -> tuple[str, str] | None:
    """``[ "${X:-0}" = 1 ]`` -> ("X=1", "X!=1"); ``[[ -n $X ]]`` -> ("X is set", "X is empty"); else None."""
    t = text.strip()
    neg = False
    if t.startswith("! "):
        neg, t = True, t[2:].strip()
    if t.startswith("[[") and t.endswith("]]"):
        inner = t[2:-2]
    elif t.startswith("[") and t.endswith("]"):
        inner = t[1:-1]
    elif t.startswith("test "):
        inner = t[5:]
    else:
        return None
    words = inner.split()
    out = None
    if len(words) == 3 and words[1] in _NEGATE:
        a, op, b = words
        name, value = _var(a), _unquote(b)
        if name is None:
            name, value = _var(b), _unquote(a)
        if name is not None and value is not None:
            if any(c.isspace() for c in value) or "|" in value:
                value = f"'{value}'" if "'" not in value else f'"{value}"'  # one atom (kv4lint.base.conditions)
            eq = "=" if op != "!=" else "!="
            out = (f"{name}{eq}{value}", f"{name}{_NEGATE[eq]}{value}")
    elif len(words) == 2 and words[0] in ("-n", "-z") and _var(words[1]):
        name = _var(words[1])
        out = (f"{name} is not empty", f"{name} is empty")
        if words[0] == "-z":
            out = out[::-1]
    elif len(words) == 1 and _var(words[0]):
        name = _var(words[0])
        out = (f"{name} is not empty", f"{name} is empty")
    if out is None:
        return None
    return out[::-1] if neg else out


def describe(text: str) -> tuple[str, str]:
    """(when ``text`` succeeds, when it fails), in the user's terms where the test is a simple comparison."""
    said = _DESCRIBED.get(text)
    return said if said is not None else _DESCRIBED.keep(text, _describe(text))


_DESCRIBED = Memo(4096)  # a script repeats its tests (``[ "${DRY_RUN:-0}" = 1 ]`` in every block)


def _describe(text: str) -> tuple[str, str]:
    stated = test_condition(text)
    if stated is not None:
        return stated
    one = " ".join(text.split()).replace("`", "'")  # one backtick span (kv4lint.base.conditions)
    if len(one) > 50:
        # A pipeline's last command decides its status (``nvidia-smi ... | grep -q H100``): it stays whole.
        first, _, last = one.partition(" | ")
        last = last.rsplit(" | ", 1)[-1]
        head = first.split(" ", 1)[0]
        one = f"{head} ... | {last}" if last and len(head) + len(last) <= 41 else one[:47] + "..."
    return f"`{one}` succeeds", f"`{one}` fails"


def case_subject(text: str) -> str:
    name = _var(text.strip())
    return name if name is not None else " ".join(text.split())
