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

MAX_SELECTIONS = 32  # readings of one launch; more: the launch is read once, the choices unknown


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


def selections(paths: Paths, points: list[int]) -> list[dict]:
    """Every selection of one path at each point, or [] when there are too many."""
    points = list(dict.fromkeys(p for p in points if p in paths.parts))
    total = 1
    for p in points:
        total *= len(paths.parts[p])
        if total > MAX_SELECTIONS:
            return []
    out = []
    for ks in itertools.product(*(paths.parts[p] for p in points)):
        conds = {paths.conds[(p, k)] for p, k in zip(points, ks)}
        if not any(_negate(c) in conds for c in conds):  # the same test taken both ways: no run does that
            out.append(dict(zip(points, ks)))
    return out


def condition(paths: Paths, used: list[int], selection: dict) -> str | None:
    conds = [paths.conds[(p, selection[p])] for p in dict.fromkeys(used) if p in selection]
    return " and ".join(c for c in dict.fromkeys(conds) if c) or None  # "": a loop item, which always runs


def if_conditions(test_text: str) -> dict:
    """``b``: the body runs; ``e``: it does not (the else branch, or nothing)."""
    t = " ".join(test_text.split())
    return {"b": t, "e": _negate(t)}


def _negate(t: str) -> str:
    if t.startswith("not ") and "(" not in t[4:] and " and " not in t and " or " not in t:
        return t[4:]
    for a, b in ((" == ", " != "), (" != ", " == "), (" is not ", " is "), (" is ", " is not ")):
        if t.count(a) == 1 and not any(x in t for x in (" and ", " or ", "not ")):
            return t.replace(a, b)
    if " " in t:
        return f"not ({t})"
    return f"not {t}"
