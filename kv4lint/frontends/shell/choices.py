"""Value sets: what a variable may hold after branches, and the condition that selects each value.

Where paths of a script join again (after an ``if``/``elif``/``else``, a
``case``, ``a && b``, ``a || b``), a variable the paths set differently holds
one value per path.  A :class:`ChoicePoint` records the paths of one join (the
condition that selects each, in the user's terms: ``USE_FP4_KV=1``,
``MODE=fp4``); a ``CHOICE`` :class:`~kv4lint.frontends.shell.expand.Binding`
holds the variable's binding on each path.  Variables set at the same join are
chosen together: ``KV`` and ``BACKEND`` set in the same ``if`` never mix the
``then`` value of one with the ``else`` value of the other.

A command that uses a choice is expanded once per consistent combination of
paths (:func:`combinations`), so that each launch it may run is judged on its
own, with the conditions that select it.  A path that sets nothing keeps what
the variable held before, which may be unknown (the environment): unknown
stays unknown.
"""

from __future__ import annotations

import itertools
import re

from kv4lint.frontends.shell.expand import CHOICE, Assignment, Binding, Variables, merge_variables

MAX_PATHS = 16  # paths of one join kept as a choice; more: the variable is unknown, as before
MAX_COMBINATIONS = 32  # expansions of one command


class ChoicePoint:
    """One join of paths: per path, the condition that selects it and the paths of earlier joins it implies."""

    __slots__ = ("conds", "implies")

    def __init__(self):
        self.conds: list[str] = []
        self.implies: list[dict["ChoicePoint", int]] = []

    def add(self, cond: str, implies: dict["ChoicePoint", int]) -> int:
        self.conds.append(cond)
        self.implies.append(implies)
        return len(self.conds) - 1


def resolve(b: Binding | None, selection: dict[ChoicePoint, int]) -> tuple[Binding | None, bool]:
    """The binding ``b`` stands for under ``selection``: (binding, True), or (None, False) when not selected."""
    while b is not None and b.kind == CHOICE:
        k = selection.get(b.point)
        if k is None:
            return None, False
        b = b.alts[k]
    return b, True


def _points_of(b: Binding | None) -> list[ChoicePoint]:
    return [b.point] if b is not None and b.kind == CHOICE else []


def consistent(sel: dict[ChoicePoint, int], more: dict[ChoicePoint, int]) -> bool:
    return all(sel.get(p, k) == k for p, k in more.items())


def _expand_selection(points: list[ChoicePoint]) -> list[tuple[dict[ChoicePoint, int], list[str]]]:
    """Every consistent selection of a path at each point: (selection with what it implies, conditions);
    [] when there are more than ``MAX_COMBINATIONS`` (or more than 8 times as many to try)."""
    total = 1
    for p in points:
        total *= len(p.conds)
        if total > 8 * MAX_COMBINATIONS:
            return []
    out = []
    for ks in itertools.product(*(range(len(p.conds)) for p in points)):
        sel: dict[ChoicePoint, int] = {}
        conds: list[str] = []
        ok = True
        for p, k in zip(points, ks):
            more = {p: k, **p.implies[k]}
            if not consistent(sel, more):
                ok = False
                break
            sel.update(more)
            if p.conds[k] not in conds:
                conds.append(p.conds[k])
        if ok and not contradictory(conds):
            out.append((sel, conds))
        if len(out) > MAX_COMBINATIONS:
            return []
    return out


def contradictory(conds: list[str]) -> bool:
    """Conditions no run meets at once (``FP4=1`` and ``FP4!=1``): such a path never runs."""
    parts = {c for cond in conds for c in cond.split(" and ")}
    return any(f"{c.replace('!=', '=', 1)}" in parts for c in parts if "!=" in c) or \
        any(c.replace(" is not empty", " is empty") in parts for c in parts if c.endswith(" is not empty")) or \
        any(c[:-len(" succeeds")] + " fails" in parts for c in parts if c.endswith("` succeeds"))


def combinations(points, selection: dict[ChoicePoint, int]) -> list[tuple[dict[ChoicePoint, int], str]]:
    """The selections under which a command that met ``points`` is expanded again, each with its condition."""
    fresh = [p for p in dict.fromkeys(points) if p not in selection]
    out = []
    for sel, conds in _expand_selection(fresh):
        if consistent(selection, sel):
            out.append((sel, " and ".join(dict.fromkeys(c for cond in conds for c in cond.split(" and ")))))
    return out


def merge_choices(envs: list[Variables], conds: list[str]) -> Variables:
    """The state after one of ``envs`` ran, path ``k`` selected by ``conds[k]``: what differs becomes a choice."""
    if len(envs) == 1:
        return envs[0]
    names: set[str] = set()
    for e in envs:
        names.update(e.vars)
    differ = [n for n in sorted(names) if not all(e.vars.get(n) is envs[0].vars.get(n) for e in envs)]
    # A path that itself ended in a choice (an if inside the then-branch) counts once per path of that choice.
    point = ChoicePoint()
    paths: list[tuple[int, dict[ChoicePoint, int]]] = []
    for k, e in enumerate(envs):
        inner = list(dict.fromkeys(p for n in differ for p in _points_of(e.vars.get(n))))
        for sel, inner_conds in _expand_selection(inner) if inner else [({}, [])]:
            parts = [conds[k]] + [c for c in inner_conds if c != conds[k]]
            if contradictory(parts):
                continue
            cond = " and ".join(dict.fromkeys(c for part in parts for c in part.split(" and ") if c))
            point.add(cond, sel)
            paths.append((k, sel))
    if not paths or len(paths) > MAX_PATHS:
        return merge_variables(envs)
    out = merge_variables(envs)  # what every path agrees on, and the exported set
    for n in differ:
        alts = [resolve(envs[k].vars.get(n), sel)[0] for k, sel in paths]
        first = alts[0]
        if all(a is first for a in alts):
            out.vars[n] = first
            continue
        if all(a is not None and a.kind == "scalar" and a.chars is not None for a in alts) and \
                len({a.chars.text for a in alts}) == 1:
            continue  # the same text on every path: merge_variables made it known (not editable)
        out.vars[n] = Binding(CHOICE, assign=Assignment(n, None), alts=alts, point=point)
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
    stated = test_condition(text)
    if stated is not None:
        return stated
    one = " ".join(text.split())
    if len(one) > 50:
        one = one[:47] + "..."
    return f"`{one}` succeeds", f"`{one}` fails"


def case_subject(text: str) -> str:
    name = _var(text.strip())
    return name if name is not None else " ".join(text.split())
