"""Value sets in Python: the paths a launch's values depend on, and the condition of each.

A launch's arguments may depend on a choice the code makes before it: an
``if``/``elif``/``else`` that assigns a name differently
(``if args.fp4: kv = "nvfp4"``), a conditional expression
(``"nvfp4" if args.fp4 else "fp8_e4m3"``), a preset picked from a dict
(``PRESETS[args.preset]``).  The evaluator first reads the launch with every
such choice unknown, noting the choice points it met; the launch is then read
again once per consistent selection of a path at each point (:func:`selections`),
each reading a launch of its own with the condition that selects it
(``args.fp4``, ``not args.fp4``, ``args.preset == 'fp4'``).  Names set in the
same ``if`` follow the same path.  Unknown stays unknown: a choice is only ever
between values written in the file.
"""

from __future__ import annotations

import itertools

from kv4lint.base.conditions import contradictory, split_top

MAX_SELECTIONS = 64  # readings of one launch, every combination; more: one choice at a time
MAX_CANDIDATES = 1024  # readings one choice at a time; more: the launch is a file error naming the bound
MAX_NAMED_TESTS = 3  # earlier tests an elif's condition names; more are counted


class Paths:
    """The choice points of one module: their paths and conditions; the selection being read."""

    def __init__(self):
        self.parts: dict[int, list] = {}  # point -> its paths, in order
        self.conds: dict[tuple, str] = {}  # (point, path) -> condition in the user's terms
        self.selection: dict[int, object] = {}
        self.seen: list[int] = []  # points met while the current reading ran with them unselected
        self.used: list[int] = []  # points whose selection decided something in the current reading

    def point(self, point: int, conds: dict) -> None:
        if point not in self.parts:
            self.parts[point] = list(conds)
            for part, cond in conds.items():
                self.conds[(point, part)] = cond

    def chosen(self, point: int):
        """The selected path at ``point``, or None (the point is noted: the launch is read again per path)."""
        part = self.selection.get(point)
        if part is None:
            self.seen.append(point)
        else:
            self.used.append(point)
        return part


def selections(paths: Paths, points: list[int]) -> list[dict] | None:
    """Every selection of one path at each point; past :data:`MAX_SELECTIONS`, one point at a time (the others
    unknown: a value written on one path is still read, with that path's condition); None past
    :data:`MAX_CANDIDATES` of those."""
    points = list(dict.fromkeys(p for p in points if p in paths.parts))
    total = 1
    for p in points:
        total *= len(paths.parts[p])
        if total > MAX_SELECTIONS:
            one = [{p: k} for p in points for k in paths.parts[p]]
            return one if len(one) <= MAX_CANDIDATES else None
    out = []
    for ks in itertools.product(*(paths.parts[p] for p in points)):
        conds = [paths.conds[(p, k)] for p, k in zip(points, ks)]
        if not contradictory(a for c in conds for a in split_top(c, " and ") if a):  # no run takes both
            out.append(dict(zip(points, ks)))
    return out


def condition(paths: Paths, used: list[int], selection: dict) -> str | None:
    conds = [paths.conds[(p, selection[p])] for p in dict.fromkeys(used) if p in selection]
    return " and ".join(c for c in dict.fromkeys(conds) if c) or None  # "": a loop item, which always runs


def if_conditions(test_text: str) -> dict:
    """``b``: the body runs; ``e``: it does not (the else branch, or nothing)."""
    t = _atom(test_text)
    return {"b": t, "e": _negate(t)}


def chain_conditions(tests: list[str]) -> dict:
    """The arms of an ``if``/``elif`` chain: ``b`` the ``if`` (its test), 1, 2, ... each ``elif`` (its test, after
    the tests before it failed: the first few named, the others counted), ``e`` none of them."""
    if len(tests) == 1:
        return if_conditions(tests[0])
    atoms = [_atom(t) for t in tests]
    failed = [_negate(a) for a in atoms]

    def none_of(k: int) -> str:
        named = " and ".join(failed[:min(k, MAX_NAMED_TESTS)])
        return named + (f" and the {k - MAX_NAMED_TESTS} other tests before fail" if k > MAX_NAMED_TESTS else "")

    out: dict = {"b": atoms[0]}
    for k in range(1, len(atoms)):
        out[k] = f"{none_of(k)} and {atoms[k]}"
    out["e"] = none_of(len(atoms))
    return out


def _atom(test_text: str) -> str:
    """A test as one atom of a condition (kv4lint.base.conditions): ``a or b`` in parentheses."""
    t = " ".join(test_text.split())
    return f"({t})" if len(split_top(t, " or ")) > 1 else t


def _negate(t: str) -> str:
    if t.startswith("(") and t.endswith(")") and len(split_top(t[1:-1], ")")) == 1:
        return f"not {t}"
    if t.startswith("not ") and "(" not in t[4:] and " and " not in t and " or " not in t:
        return t[4:]
    for a, b in ((" == ", " != "), (" != ", " == "), (" is not ", " is "), (" is ", " is not ")):
        if t.count(a) == 1 and not any(x in t for x in (" and ", " or ", "not ")):
            return t.replace(a, b)
    if " " in t:
        return f"not ({t})"
    return f"not {t}"
