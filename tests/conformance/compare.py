"""Put SGLang's outcomes and kv4lint's events side by side in one comparable form.

A normalised outcome is a tuple ``(kind, step, text, detail)``:

* ``("error", step, message, exception type)``
* ``("warning", step, message, ())``
* ``("rewrite", step, message, fields)``: SGLang logs the reason of a rewrite
  next to its ``declare_resolution`` call, before it (a warning) or after it
  (an info line); kv4lint reports the pair as one ``rewrite`` event whose text
  is that line. ``fields`` is the sorted tuple of the fields declared.

Info lines not attached to a rewrite are not outcomes (kv4lint reports no info
lines). Nothing else is dropped: order, texts, exception types and the fields
rewritten are all compared.
"""

from __future__ import annotations

from typing import Iterable

from .oracle import Outcome

Norm = tuple[str, str, str, object]


def normalise_sglang(outcomes: Iterable[Outcome]) -> list[Norm]:
    items = list(outcomes)
    out: list[Norm] = []
    i = 0
    while i < len(items):
        o = items[i]
        nxt = items[i + 1] if i + 1 < len(items) else None
        if o.kind == "warning" and nxt is not None and nxt.kind == "rewrite" and nxt.step == o.step:
            out.append(("rewrite", o.step, o.message, tuple(sorted(k for k, _ in nxt.fields))))
            i += 2
            continue
        if o.kind == "rewrite":
            text = ""
            if nxt is not None and nxt.kind == "info" and nxt.step == o.step:
                text = nxt.message
                i += 1
            out.append(("rewrite", o.step, text, tuple(sorted(k for k, _ in o.fields))))
            i += 1
            continue
        if o.kind == "warning":
            out.append(("warning", o.step, o.message, ()))
        elif o.kind == "error":
            out.append(("error", o.step, o.message, o.exc_type))
        # lone info lines are not outcomes
        i += 1
    return out


def normalise_kv4lint(events) -> list[Norm]:
    out: list[Norm] = []
    for e in events:
        if e.kind == "error":
            out.append(("error", e.step, e.sglang, e.exc))
        elif e.kind == "warning":
            out.append(("warning", e.step, e.sglang, ()))
        elif e.kind == "rewrite":
            out.append(("rewrite", e.step, e.sglang, tuple(sorted(e.fields))))
        else:
            out.append((e.kind, e.step, e.sglang, tuple(e.fields)))
    return out


def where_of(outcomes: Iterable[Outcome]) -> str:
    """SGLang's line for the last outcome (the error, if any)."""
    items = [o for o in outcomes if o.kind != "info"]
    return items[-1].where if items else ""
