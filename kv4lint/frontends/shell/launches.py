"""The launches a shell walk found, as the model's records: each argv token a Value with its span and provenance.

The walker (:mod:`kv4lint.frontends.shell.walk`) collects the launches it meets with their words (Fields: the
characters bash would produce, where each was written and which variables it came through); once the walk is over
(so that every use of a variable has been counted, for ``shared``) they become :class:`~kv4lint.base.model.Launch`
records here, the same launch on several paths of the script one record that runs when any of them does.
"""

from __future__ import annotations

from operator import attrgetter

from kv4lint.base.model import Launch, Provenance, Span, Value
from kv4lint.base.record import replace
from kv4lint.frontends.shell.expand import HOLE, Field
from kv4lint.frontends.shell.parse import Chars


def to_value(f: Field) -> Value:
    """An argv token as a model Value: text, span, provenance, use, shared, remove."""
    if f.unknown:
        use = None
        if f.src.fspan(f.s, f.e) is None:  # in a re-parsed text: report at the unknown part itself
            use = next((r.use for c, r in zip(f.full.text, f.full.res) if c == HOLE and r is not None), None)
        return Value(None, None, Provenance.UNKNOWN, use=use or f.anchor(), splat=f.splat, remove=f.rm)
    chars = f.chars
    span = chars.span()  # (a word written verbatim: a run of the script's characters, its span at hand)
    if not chars.plain():
        res = chars.res
        assigns: set = set()
        uses = set()
        distinct = dict.fromkeys(res)  # (the characters of one expansion share their provenance; by identity)
        for r in distinct:
            if r is not None:
                assigns |= r.assigns
                uses.add(r.use)
            else:
                uses.add(None)
        use = next(iter(uses)) if len(uses) == 1 and None not in uses else f.anchor()
        shared = any(a.shared for a in assigns)
        paths = {next((a.path for a in r.assigns if a.path), None) if r is not None else None for r in distinct}
        if paths != {None}:  # written (in part) in a sourced file: editable there only when all of it is
            path = next(iter(paths)) if len(paths) == 1 else None
            return Value(chars.text, span if path else None, Provenance.RESOLVED, use=use, shared=True,
                         remove=f.rm, quote=f.quote, path=path)
        return Value(chars.text, span, Provenance.RESOLVED, use=use, shared=shared, remove=f.rm, quote=f.quote,
                     offsets=_offsets(chars, span))
    if span is not None:  # (most words: written verbatim; by position: a class called with keywords makes a dict)
        return Value(chars.text, span, Provenance.LITERAL, None, False, False, f.rm, f.quote)
    # Not written verbatim (an escape of the outer format): reported where it is written, never edited.
    return Value(chars.text, None, Provenance.LITERAL, use=f.anchor(), remove=f.rm, quote=f.quote,
                 offsets=_offsets(chars, None))


def _offsets(chars: Chars, span: Span | None) -> tuple[int, ...] | None:
    """Per-character file offsets, for editing part of a word (``--flag="value"``); ``span``: ``chars.span()``."""
    if span is not None:
        return None
    pos = chars.pos
    return None if None in pos else tuple(pos)


def _through(v: Value, through: dict) -> Value:
    """A Python frontend's value whose characters this shell expanded from a variable: mark it resolved."""
    if v.span is None or v.span.start == v.span.end:
        return v
    rs = [through.get(p) for p in range(v.span.start, v.span.end)]
    if any(r is None for r in rs) or len({id(r.use) if r.use is None else r.use for r in rs}) != 1:
        return v
    assigns = set().union(*(r.assigns for r in rs))
    return replace(v, provenance=Provenance.RESOLVED, use=rs[0].use or v.use,
                   shared=v.shared or any(a.shared for a in assigns))


def _mark_resolved(launch: Launch, through: dict) -> None:
    launch.argv = [_through(v, through) for v in launch.argv]
    launch.positional = [_through(v, through) for v in launch.positional]
    launch.kwargs = {k: _through(v, through) for k, v in launch.kwargs.items()}


# What makes two paths' launches of one command one launch: each word's text, where it is written and used, its
# provenance and whether it is shared.
_SAME = attrgetter("text", "span", "use", "provenance", "shared")


def _same(argv: list[Value]) -> tuple:
    return tuple(map(_SAME, argv))


def build_launches(pending: list, other: list, path: str) -> list[Launch]:
    out: list[Launch] = []
    # a command (its span and entry point) -> its launches so far: [their words (_same: read once a second path has
    # the command, as most commands are on one), the launch, the conditions of the paths it is on]
    seen: dict = {}
    made: dict[int, Value] = {}  # a word the readings of a command on several paths share (Walker._command_words)
    for p in pending:
        argv = []
        for f in p.argv:
            v = made.get(id(f))
            if v is None:
                v = made[id(f)] = to_value(f)
            argv.append(v)
        command = (p.span, p.entry)
        held = seen.get(command)
        got = None
        if held is not None:
            words = _same(argv)
            for one in held:
                if one[0] is None:
                    one[0] = _same(one[1].argv)
                if one[0] == words:
                    got = one
                    break
        if got is not None:
            # The same launch on several paths: it runs when any of them does (and only the guards all share hold).
            _, launch, conds = got
            launch.hints = [h for h in launch.hints if h.scope != "guard" or h in p.hints]
            if launch.condition is not None:
                conds.append(p.condition)
                launch.condition = None if None in conds else " or ".join(dict.fromkeys(conds))
            continue
        launch = Launch(path=path, form="argv", entry=p.entry, span=p.span, anchor=p.anchor, argv=argv,
                        hints=p.hints, language="shell", disabled=p.disabled, condition=p.condition)
        seen.setdefault(command, []).append([None if held is None else words, launch, [p.condition]])
        out.append(launch)
    for launch, through in other:
        if through:
            _mark_resolved(launch, through)
        out.append(launch)
    out.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return out
