"""Conditions in the user's terms: the paths of a script that run a launch, and how they combine.

A frontend names each path of a branch in the user's words: shell tests (``FP4=1``, ``MODE=fp4|nvfp4``,
``MODE is none of fp8, auto``, ``X is empty``, ```grep -q B200 /etc/gpu` succeeds``) and Python tests
(``args.fp4``, ``not args.fp4``, ``mode == 'fp4'``). One reading of a launch runs under a conjunction of such
*atoms* (``FP4=1 and MODE=fp4``); a launch that several readings share, under a disjunction of them
(``FP4=1 and MODE=fp4 or FP4=1 and MODE=fp8``). This module is the one model of that grammar, a leaf every
reader imports:

- :func:`terms` splits a condition into its terms and atoms, never inside backticks, quotes or brackets;
- :func:`conflict` says when two atoms exclude each other (``FP4=1`` and ``FP4!=1``, ``MODE=fp4`` and
  ``MODE=fp8``, a test and its negation): no run meets both;
- :func:`decisive` gives the condition of a finding that names only the atoms deciding it, from the readings
  that have it and those that do not;
- :func:`brief` shortens a condition for a headline, at a word boundary outside backtick spans.
"""

from __future__ import annotations

import re

AND, OR = " and ", " or "
_OPEN, _CLOSE = "([{", ")]}"


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` where it stands outside backticks, quotes and brackets."""
    if sep not in text:
        return [text]
    out: list[str] = []
    depth = 0
    quote = ""
    start = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "`\"'":
            # An apostrophe inside a word (``don't``) opens nothing: only one that starts a token does.
            if c != "'" or i == 0 or not text[i - 1].isalnum():
                quote = c
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(sep, i):
            out.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(text[start:])
    return out


def terms(condition: str | None) -> list[tuple[str, ...]]:
    """The terms of ``condition`` (a disjunction), each a tuple of atoms (a conjunction); ``[()]`` for none."""
    if not condition:
        return [()]
    return [tuple(dict.fromkeys(a.strip() for a in split_top(t, AND) if a.strip())) for t in split_top(condition, OR)]


def join_terms(ts) -> str:
    return OR.join(AND.join(t) for t in ts)


# ---------------------------------------------------------------------------
# Atoms that exclude each other

_SHELL_EQ = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(!?=)(.*)$", re.S)
_SHELL_NONE_OF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) is none of (.*)$", re.S)
_SHELL_EMPTY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) is (not )?empty$")
_SUCCEEDS = re.compile(r"^(`.*`) (succeeds|fails)$", re.S)
_LITERAL = re.compile(r"""^(?:'[^'\\]*'|"[^"\\]*"|-?\d+(?:\.\d+)?|True|False|None)$""")
_PY_OPS = (" == ", " != ", " is not ", " is ")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


_parsed: dict[str, tuple] = {}


def _parse(atom: str) -> tuple:
    """``(subject, "in", values)``, ``(subject, "out", values)`` (the subject's value is / is not one of
    ``values``) or ``(subject, "true" | "false")`` (a test that holds or fails); ``()``: nothing known."""
    got = _parsed.get(atom)
    if got is not None:
        return got
    out: tuple = ()
    m = _SUCCEEDS.match(atom)
    if m:
        out = (m.group(1), "true" if m.group(2) == "succeeds" else "false")
    elif (m := _SHELL_EMPTY.match(atom)) is not None:
        out = ("$" + m.group(1), "out" if m.group(2) else "in", frozenset({""}))
    elif (m := _SHELL_NONE_OF.match(atom)) is not None:
        out = ("$" + m.group(1), "out", frozenset(v.strip() for v in m.group(2).split(", ")))
    elif (m := _SHELL_EQ.match(atom)) is not None and " " not in m.group(1):
        values = frozenset(_unquote(v) for v in m.group(3).split("|")) if m.group(2) == "=" else \
            frozenset({_unquote(m.group(3))})
        out = ("$" + m.group(1), "in" if m.group(2) == "=" else "out", values)
    else:
        out = _parse_python(atom)
    if len(_parsed) < 4096:
        _parsed[atom] = out
    return out


def _parse_python(atom: str) -> tuple:
    text = atom.strip()
    if text.startswith("not "):
        inner = text[4:].strip()
        if inner.startswith("(") and inner.endswith(")") and len(split_top(inner[1:-1], ")")) == 1:
            inner = inner[1:-1].strip()
        return (inner, "false")
    for op in _PY_OPS:
        parts = split_top(text, op)
        if len(parts) == 2:
            left, right = parts[0].strip(), parts[1].strip()
            if _LITERAL.match(right):
                kind = "in" if op in (" == ", " is ") else "out"
                return ("py:" + left, kind, frozenset({_unquote(right)}))
            return (text if op in (" == ", " is ") else f"{left}{' == ' if op == ' != ' else ' is '}{right}",
                    "true" if op in (" == ", " is ") else "false")
    if text.startswith("(") and text.endswith(")") and len(split_top(text[1:-1], ")")) == 1:
        text = text[1:-1].strip()
    return (text, "true")


def conflict(a: str, b: str) -> bool:
    """Whether no run meets atoms ``a`` and ``b`` together."""
    if a == b:
        return False
    pa, pb = _parse(a), _parse(b)
    if not pa or not pb or pa[0] != pb[0]:
        return False
    if len(pa) == 2 or len(pb) == 2:
        return len(pa) == len(pb) == 2 and pa[1] != pb[1]
    (_, ka, va), (_, kb, vb) = pa, pb
    if ka == "in" and kb == "in":
        return not (va & vb)
    if ka == "in" and kb == "out":
        return va <= vb
    if ka == "out" and kb == "in":
        return vb <= va
    return False


def contradictory(atoms) -> bool:
    """Whether some two of ``atoms`` exclude each other: no run takes that path."""
    atoms = list(dict.fromkeys(atoms))
    return any(conflict(a, b) for i, a in enumerate(atoms) for b in atoms[i + 1:])


def _compatible(term, other) -> bool:
    return not any(conflict(a, b) for a in term for b in other)


# ---------------------------------------------------------------------------
# The condition that decides a finding

MAX_TERMS = 256  # readings compared when a condition is made decisive; more: the conditions as they are


def decisive(hits: list[str], misses: list[str]) -> str | None:
    """The condition under which a finding holds, naming only the atoms that decide it.

    ``hits``: the conditions of the readings of one command that have the finding; ``misses``: those of its
    other readings. Each atom is dropped from a reading's condition when the rest still excludes every reading
    without the finding (``FP4=1 and BIG=1`` and ``FP4=1 and BIG!=1`` have it, ``FP4!=1 and ...`` does not:
    ``FP4=1``). None: the finding holds whatever the conditions say (no reading without it)."""
    hit_terms = list(dict.fromkeys(t for c in hits for t in terms(c)))
    miss_terms = [t for t in dict.fromkeys(t for c in misses for t in terms(c)) if t not in hit_terms]
    if not miss_terms:
        return None
    if len(hit_terms) * len(miss_terms) > MAX_TERMS * MAX_TERMS // 4:
        return join_terms(hit_terms)
    out: list[tuple[str, ...]] = []
    for t in hit_terms:
        keep = list(t)
        for a in t:
            trial = [x for x in keep if x != a]
            if all(not _compatible(trial, m) for m in miss_terms):
                keep = trial
        term = tuple(keep)
        if not term:
            return None
        if term not in out:
            out.append(term)
    # A term that holds another's atoms and more says nothing the other does not.
    kept = [t for t in out if not any(o != t and set(o) <= set(t) for o in out)]
    return join_terms(kept)


# ---------------------------------------------------------------------------
# Headlines

def brief(condition: str, limit: int) -> str:
    """``condition`` whole up to ``limit`` characters, else cut after the last atom that fits and marked ``...``:
    at a word boundary, never inside a backtick span, a quoted value or an atom (``X=1 and Y=2...``). A first atom
    longer than the limit is kept whole."""
    if len(condition) <= limit:
        return condition
    out = ""
    for i, term in enumerate(split_top(condition, OR)):
        for j, atom in enumerate(split_top(term, AND)):
            joined = out + ((OR if j == 0 else AND) if (i or j) else "") + atom
            if len(joined) > limit - 3 and out:
                return out + "..."
            out = joined
    return out
