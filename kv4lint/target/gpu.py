"""The GPU axis of the target: the candidate set of archs, and the evidence that chose it.

Precedence: what the user states (``--gpu``, ``gpu`` in the configuration, ``--platform auto`` on a host with a GPU)
> what the file itself says (its ``"gpu"`` hints: :class:`kv4lint.base.model.Hint`) > every arch kv4lint knows.
Among the file's hints the GPUs named within one scope together are a candidate set (a list ``In [H100, H200]``, or two
comments above one launch), and a nearer scope (``launch`` > ``section`` > ``file``) narrows the set of a farther
one where they agree (a lead-in naming "Blackwell" under a "B200" tab: the B200) and overrides it where they do not
(a comment naming an H100 in a file named for a B200: the H100). Every ``guard`` hint around the launch (a branch
that tests the GPU) then narrows the set, whichever rung chose it: the launch inside ``if ... grep -q B200`` runs
only on a B200, whatever else is said. A set a guard empties is a launch that never runs on the target: nothing GPU-
dependent is judged, and ``--show-target`` says why. A GPU the file names that kv4lint cannot map (an empty value)
is no evidence; ``--show-target`` says so.
"""

from __future__ import annotations

from typing import Callable, Iterable

from kv4lint.base.model import Hint
from kv4lint.sglang.gpus import ARCHS, arch_set, describe, normalise_gpu, ordered

SCOPES = ("launch", "section", "file")  # nearest first


class GpuChoice:
    """The GPU candidates (``archs``), the rung of the precedence that chose them (``level``: ``stated``,
    ``file``, ``every``) and the evidence, as ``--show-target`` says it (``source``)."""

    __slots__ = ("archs", "level", "source")

    def __init__(self, archs: tuple[str, ...], level: str, source: str) -> None:
        self.archs, self.level, self.source = archs, level, source


def candidates(value: str) -> frozenset[str] | None:
    """A ``"gpu"`` hint's value as a set of archs: ``"sm90 sm100"``; ``"!sm100"`` is every arch but these; None
    for a GPU kv4lint cannot map (an empty value, or words that are no GPU)."""
    written = arch_set(value.strip())
    archs = set()
    for word in written.archs:
        try:
            archs.add(normalise_gpu(word))
        except ValueError:
            continue
    if not archs:
        return None
    return frozenset(set(ARCHS) - archs) if written.negated else frozenset(archs)


def _said(h: Hint, where: Callable[[Hint], str], archs: Iterable[str] | None) -> str:
    said = f"{where(h)}{h.reason}"
    return f"{said}: not mapped, no evidence" if archs is None else f"{said} = {describe(archs)}"


def choose(stated: tuple[str, str] | None, hints: Iterable[Hint], *,
           where: Callable[[Hint], str] = lambda h: "") -> GpuChoice:
    """The GPU candidates of a CUDA launch: ``stated`` (the arch and where it was stated) or the file's own
    ``"gpu"`` hints, else every arch; narrowed by the guards. ``where`` names a hint's place (``line 3: ``)."""
    gpu = [h for h in hints if h.kind == "gpu"]
    unmapped = [_said(h, where, None) for h in gpu if candidates(h.value) is None]
    if stated is not None:
        archs, level, why = frozenset({stated[0]}), "stated", [stated[1]]
    else:
        archs, level, why = frozenset(ARCHS), "every", []
        for scope in reversed(SCOPES):  # the farthest first: a nearer scope narrows what it says, or overrides it
            named = [(h, candidates(h.value)) for h in gpu if h.scope == scope]
            named = [(h, s) for h, s in named if s is not None]
            if named:
                near = frozenset().union(*(s for _, s in named))
                said = [_said(h, where, s) for h, s in named]
                if level == "file" and archs & near:  # "Blackwell" under a "B200" tab: the B200
                    archs, why = archs & near, why + said
                else:
                    archs, why = near, said
                level = "file"
    guards = [(h, candidates(h.value)) for h in gpu if h.scope == "guard"]
    narrowed = []
    for h, s in guards:
        if s is None:
            continue
        # "!x": every arch but x, whatever the set holds (a stated sm75 stays in the else branch of a B200 test)
        archs = archs - (set(ARCHS) - s) if h.value.strip().startswith("!") else archs & s
        narrowed.append(_said(h, where, s))
    if level == "every" and not narrowed:
        why.append(f"not stated: every GPU kv4lint knows, judged once per kind SGLang tells apart: "
                   f"{describe(archs)}")
    elif level == "every":
        why.append("not stated")
    if narrowed:
        why.append("inside the branch " + " and ".join(narrowed))
    if not archs:
        why.append("the launch never runs on the GPU the target is: nothing that depends on the GPU is judged")
    why += unmapped
    return GpuChoice(ordered(archs), level, "; ".join(dict.fromkeys(why)))  # a form read twice is said once
