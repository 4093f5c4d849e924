"""Shell functions: a call walks the function's body with the call's words as ``$1``, ``$2``, ...

:class:`Calls` (mixed into :class:`~kv4lint.frontends.shell.walk.Walker`) walks a body at each call, as bash would
run it, its ``local`` variables restored after; a function never called by name is walked once at the end (a
library, or dispatch through ``"$@"``). Past the bound on calls within calls, or on statements walked, a call is
not walked, and the file says so (a bound is never a pass).

Two memos spare walks that would go the same way. A call of a function with the same words, on the same
variables, as an earlier call that found nothing: its effect on the variables is replayed (a script that calls a
helper from many places walks it once per distinct state). A call that found nothing and changed nothing is
counted instead of walked wherever it is given the same values of the arguments it read, on the same bindings of
the variables it may read: a log function called from thousands of places with a different message each time
(``log_error "..."``, which passes ``"$@"`` on to ``log``, which echoes it) is walked once per level. What a walk
read is gathered as it goes (:class:`_Track`): the arguments whose values it read (not those it only echoed:
:meth:`Calls.read_positional`), the names in its body (less the ``local`` ones it declares first), in the bodies of
the functions it called and in the text of the inner shells it ran (``eval``), and the path chosen at each join
whose variables it read (every path chosen, and their conditions, where it read a command once per path). Neither
memo keeps a walk in which a call was not walked (recursion, the bound), nor replays one whose calls would meet a
bound or a function being walked; a replay adds to the walk what the walk would (:meth:`Calls._deps`).
"""

from __future__ import annotations

from kv4lint.base.file_error import FileError
from kv4lint.frontends.hints import NAME_WORD
from kv4lint.frontends.shell.expand import MAX_DEPTH, Field
from kv4lint.frontends.shell.variables import Element

MAX_STEPS = 300_000  # statements walked before loops and calls stop being expanded
MAX_CALL_DEPTH = 8  # functions calling functions: deeper calls are not walked (a file error says so)


class _Track:
    """What one call's walk read beyond what its memos' keys hold, gathered as it walks: the variables it may read
    (its body's names, those of the functions it calls and of the inner shells it runs), which of its arguments'
    values it read (``echo "$*"`` reads none: :meth:`Calls.read_positional`), the functions called within it and
    how many calls deep, and whether a call within it was not walked (recursion, the bounds)."""

    __slots__ = ("names", "elems", "used", "called", "below", "cut")

    def __init__(self, names: tuple[str, ...], elems: list[Element] | None):
        self.names = set(names)
        self.elems = elems
        self.used: set[int] = set()  # id() of the elements of ``elems`` whose values were read
        self.called: set[str] = set()
        self.below = 0
        self.cut = False


class Calls:
    """Mixed into the Walker: needs ``scan``, ``env``, ``src``, ``stmt``, ``functions``, ``called``,
    ``call_stack``, ``frames``, ``positional``, ``x``, ``_memo``, ``_alike``, ``_names`` and ``_tracks``."""

    def call(self, name: str, args: list[Field] | None = None) -> None:
        body = self.functions[name]
        if name in self.call_stack:  # recursion: the body is being walked
            self._depend((), (), 0, True)
            return
        if len(self.call_stack) > MAX_CALL_DEPTH or (self.scan.steps > MAX_STEPS and name in self.called):
            self._depend((), (), 0, True)
            self._skipped_call(body)  # walked at the end if never walked (finish_functions), with a file error
            return
        self.called.add(name)
        names = self._body_names(body)
        self._depend(names, (name,), 0, False)
        key = self._call_key(name, args)
        if key is not None and self._replay(key):
            return
        alike = self._alike_key(name, body, args)
        if alike is not None and self._replay_alike(alike, args):
            return
        scan = self.scan
        quiet = self._quiet() if alike is not None else None
        walk = (len(scan.seen), len(scan.consulted), scan.per_path, scan.steps)  # (_deps)
        before = (self.env.vars, self.env.exported, scan.save(), len(self.functions), self._mark()) \
            if key is not None else None
        track = _Track(names, None if args is None else elements(args))
        deepest, self.deepest = self.deepest, self.depth
        self.call_stack.append(name)
        self.frames.append({})
        self._tracks.append(track)
        saved_positional, self.positional = self.positional, track.elems
        touching, self.x.touching = self.x.touching, 0
        try:
            self.stmt(body)
        finally:
            self.positional = saved_positional
            self.x.touching = touching
            self._tracks.pop()
            frame = self.frames.pop()
            for k, old in frame.items():
                if old is None:
                    self.env.unset(k)
                else:
                    self.env.set(k, old)
                self.scan.journal.append(k)
            self.call_stack.pop()
        below = self.deepest - self.depth  # how much deeper than the call its walk went
        self.deepest = max(deepest, self.deepest)
        if track.cut:  # a call within it was not walked: elsewhere it may be
            return
        deps = self._deps(track, walk, below)
        if before is not None:
            self._remember(key, before, deps)
        if quiet is not None:
            self._remember_alike(alike, quiet, track, deps, args)

    def _set_positional(self, words: list[Field]) -> None:
        """``shift [n]`` and ``set -- args``."""
        if words[0].text == "set":
            self.positional = elements(words[2:])
            return
        if self.positional is None:
            return
        n = words[1].text if len(words) > 1 else "1"
        if n is None or not n.isdigit() or any(el.splat for el in self.positional[:int(n)]):
            self.positional = None
        else:
            self.positional = self.positional[int(n):]

    def read_positional(self, elems) -> None:
        """The values of these positional parameters were read (a word built of them, a test, an assignment),
        not only passed to a command that does nothing with them: a call's memo tells its calls apart by them."""
        if self._tracks:
            self._tracks[-1].used.update(map(id, elems))

    def reads(self, names) -> None:
        """An inner shell run within the calls being walked may read these variables (its text's names)."""
        if self._tracks:
            self._depend(names, (), 0, False)

    def _depend(self, names, called, below: int, cut: bool) -> None:
        """Each call being walked may read ``names``, calls ``called`` (``below`` calls deeper than a call made
        now), and, with ``cut``, met a call it did not walk."""
        tracks = self._tracks
        n = len(tracks)
        for i, t in enumerate(tracks):
            t.names.update(names)
            t.called.update(called)
            if n - i + below > t.below:
                t.below = n - i + below
            t.cut = t.cut or cut

    def _body_names(self, body) -> tuple[str, ...]:
        """The variables a call's walk of ``body`` may read as they were before the call: the names its text
        holds, less those it makes ``local`` before anything could read them (:func:`_locals_first`)."""
        names = self._names.get(body.id)
        if names is None or names[0] is not body or names[1] is not self.src:
            free = set(NAME_WORD.findall(self.src.nt(body))) - _locals_first(self.src, body)
            names = self._names[body.id] = (body, self.src, tuple(sorted(free)))
        return names[2]

    def _fits(self, called: frozenset, calls_below: int) -> bool:
        """Whether a call whose walk called ``called``, ``calls_below`` calls deep, would walk them all here too:
        none of them is being walked around it (recursion is not walked), and the calls stay within the bound."""
        return len(self.call_stack) + calls_below <= MAX_CALL_DEPTH and called.isdisjoint(self.call_stack)

    def _deps(self, track: _Track, walk: tuple, below: int) -> tuple:
        """What a call's walk adds to the walk around it, to replay: the variables it may read, the functions it
        called and how many calls deep, the choices it met unselected, the joins whose bindings it read and whether
        it read a command once per path, its statements, and how deep it went below the call."""
        seen, consulted, per_path, steps = walk
        scan = self.scan
        return (frozenset(track.names), frozenset(track.called), track.below, tuple(scan.seen[seen:]),
                tuple(dict.fromkeys(scan.consulted[consulted:])), scan.per_path != per_path, scan.steps - steps, below)

    def _replayed(self, names, called, calls_below: int, met: tuple, points: tuple, per_path: bool, steps: int,
                  below: int) -> None:
        """What a call counted instead of walked adds to the walk (:meth:`_deps`): the command around it reads per
        path the choices it met, and the calls around it depend on what it read."""
        scan = self.scan
        scan.seen.extend(met)
        scan.consulted.extend(points)
        scan.per_path += per_path
        scan.steps += steps
        self.deepest = max(self.deepest, self.depth + below)
        self._depend(names, called, calls_below, False)

    # A call of a function with the same words, on the same variables, as an earlier call that found nothing walks
    # the same way: its effect on the variables is replayed instead (a script that calls a helper from many
    # places walks it once per distinct state).
    def _call_key(self, name: str, args: list[Field] | None):
        scan = self.scan
        if scan.partial or (args is not None and any(a.unknown for a in args)):
            return None
        # The words as written where they are written: the values a body assigns from them keep their places.
        words = None if args is None else tuple((a.text, id(a.src), a.s, a.e, a.chars.span()) for a in args)
        return (name, words, tuple(scan.selection.items()), tuple(scan.conds))

    def _replay(self, key) -> bool:
        for entry in self._memo.get(key, ()):
            vars_before, exported_before, vars_after, exported_after, changed, deps = entry
            if self.env.vars == vars_before and self.env.exported == exported_before and self._fits(*deps[1:3]):
                self.env.vars = vars_after
                self.env.exported = exported_after
                self.scan.journal.extend(changed)
                self._replayed(*deps)
                return True
        return False

    def _remember(self, key, before, deps: tuple) -> None:
        vars_before, exported_before, saved, functions, mark = before
        scan = self.scan
        if scan.save() != saved or len(self.functions) != functions:
            return  # it found something (or defined functions): walk it again next time
        entries = self._memo.setdefault(key, [])
        if len(entries) < 4:
            entries.append((vars_before, exported_before, self.env.vars, self.env.exported,
                            list(dict.fromkeys(scan.journal[mark:])), deps))

    # A call that ran nothing and changed nothing (a helper that echoes a version for ``$(...)``, a log function
    # called from thousands of places) walks the same way wherever it is given the same values of the arguments it
    # read (not those it only passed to ``echo``), on the same bindings of the variables it may read (its body's
    # names, those of the functions it called and the inner shells it ran): it is counted (its statements, the
    # names it wrote and restored) instead of walked again, where the walk could meet no bound the first walk did
    # not (as deep below the call within MAX_DEPTH and MAX_CALL_DEPTH, no further past MAX_STEPS, no function it
    # called being walked around it).
    def _alike_key(self, name: str, body, args: list[Field] | None):
        scan = self.scan
        if scan.partial:
            return None
        shape = None if args is None else tuple(a.splat for a in args)  # $#, and which $N a splat hides
        return (name, body.id, id(self.src), shape, scan.loop_mult, self.defined, tuple(scan.machine.gpu_vars.items()))

    def _paths_chosen(self, points: tuple, per_path: bool) -> tuple:
        """What a walk that read bindings of the joins ``points`` depends on of the paths chosen around it: the
        path chosen at each (none: read as unknown); where it read a command once per path (``per_path``), every
        path chosen and their conditions, and how many commands around it are read per path (Branches)."""
        scan = self.scan
        if per_path:
            return tuple(scan.selection.items()), tuple(scan.conds), scan.levels
        return tuple(scan.selection.get(p) for p in points)

    def _quiet(self) -> tuple:
        """What would tell that a call's walk did more than read, as the call begins (its variables kept whole:
        the bindings its walk may read are looked up in them after, when the walk has told which)."""
        scan = self.scan
        env = self.env
        if not self._tracks:
            scan.consulted.clear()  # (kept for the calls being walked only)
        return (env.vars, env.exported, scan.save(), self._mark(), (self.defined, scan.machine.changes,
                                                                    len(scan.sources)))

    def _remember_alike(self, key, quiet: tuple, track: _Track, deps: tuple, args: list[Field] | None) -> None:
        vars_before, exported, saved, mark, marks = quiet
        scan = self.scan
        env = self.env
        if scan.save() != saved or scan.steps > MAX_STEPS or scan.too_deep or marks != (
                self.defined, scan.machine.changes, len(scan.sources)) or env.exported != exported:
            return
        written = list(dict.fromkeys(scan.journal[mark:]))  # its locals, restored: changed nothing
        if any(env.vars.get(n) is not vars_before.get(n) for n in written):
            return
        read = [(n, vars_before.get(n)) for n in track.names]
        if any(env.vars.get(n) is not b for n, b in read):
            return
        used = tuple(i for i, el in enumerate(track.elems or ()) if id(el) in track.used)
        pattern = (*deps[4:6], used)  # what of the state around it the walk read: paths chosen, arguments
        patterns = self._alike.setdefault(key, {})
        if pattern not in patterns and len(patterns) >= 8:
            return
        entries = patterns.setdefault(pattern, {}).setdefault(
            (self._paths_chosen(*pattern[:2]), _values(args, used)), [])
        if len(entries) < 4:
            entries.append((read, exported, written, deps))

    def _replay_alike(self, key, args: list[Field] | None) -> bool:
        scan = self.scan
        env = self.env
        for (points, per_path, used), by_state in self._alike.get(key, {}).items():
            for read, exported, written, deps in by_state.get((self._paths_chosen(points, per_path),
                                                               _values(args, used)), ()):
                steps, below = deps[-2:]
                if self.depth + below <= MAX_DEPTH and scan.steps + steps <= MAX_STEPS and env.exported == exported \
                        and self._fits(*deps[1:3]) and all(env.vars.get(n) is b for n, b in read):
                    scan.journal.extend(written)
                    self._replayed(*deps)
                    return True
        return False

    def _skipped_call(self, body) -> None:
        """A bound is never a pass: past the bounds on statements walked and on calls within calls a call is not
        walked (a function never walked is walked once at the end), and the file says so."""
        scan = self.scan
        if scan.past_steps:
            return
        scan.past_steps = True
        line = self.src.line(self.src.c(body.start_byte))
        why = f"more than {MAX_STEPS} statements walked (loops and function calls expanded)" \
            if scan.steps > MAX_STEPS else f"function calls nested more than {MAX_CALL_DEPTH} deep"
        scan.errors.append(FileError(scan.path, f"a shell script of {why} (the limit kv4lint reads), near line "
                                                f"{line}: later calls are not walked", line=line))

    def finish_functions(self) -> None:
        """Functions never called by name (dispatched through "$@", or a library): walk them once."""
        for name in list(self.functions):
            if name not in self.called:
                self.call(name)


def elements(fields: list[Field]) -> list[Element]:
    """Positional parameters (``$1`` ...) from a call's words."""
    return [Element(None if f.unknown else f.chars, f.splat, f.rm, None) for f in fields]


def _values(args: list[Field] | None, used: tuple[int, ...]) -> tuple:
    """The values of the arguments ``used`` (their indexes) as a call's memo compares them; None: unknown."""
    return tuple(None if args[i].unknown else args[i].chars.text for i in used) if used else ()


_LOCAL_OPTIONS = set("raAilu")  # local/declare options that neither export, nor make a global, nor refer


def _locals_first(src, body) -> set[str]:
    """The variables a function body makes local before anything in it could read them: in the declarations it
    begins with (``local level="$1"``, ``local -a out``; a ``shift`` between them), those not named earlier nor
    in their own value. A call reads no value they had before it (its walk binds them, and restores them after);
    the run ends at the first other statement, or a value with a command or process substitution (which runs
    before the variable becomes local)."""
    out: set[str] = set()
    named: set[str] = set()  # read from outside the call so far
    for stmt in body.named_children if body.type == "compound_statement" else ():
        t = stmt.type
        if t == "comment":
            continue
        if t == "command":
            words = src.nt(stmt).split()
            if words[:1] == ["shift"] and len(words) <= 2 and all(w.isdigit() for w in words[1:]):
                continue
            break
        if t != "declaration_command" or not stmt.children or stmt.children[0].type not in (
                "local", "declare", "typeset"):
            break
        text = src.nt(stmt)
        if "$(" in text or "`" in text or "<(" in text or ">(" in text:
            break
        items = []
        for k in stmt.children[1:]:
            if k.type == "word" and src.nt(k).startswith("-") and set(src.nt(k)[1:]) <= _LOCAL_OPTIONS:
                continue
            if k.type == "variable_name":
                items.append((src.nt(k), ()))
            elif k.type == "variable_assignment" and (nm := k.child_by_field_name("name")) is not None and \
                    nm.type == "variable_name" and not any(c.type == "+=" for c in k.children if not c.is_named):
                value = k.child_by_field_name("value")
                items.append((src.nt(nm), NAME_WORD.findall(src.nt(value)) if value is not None else ()))
            else:
                items = None
                break
        if items is None:
            break
        for name, reads in items:
            named.update(r for r in reads if r not in out)
            if name not in named:
                out.add(name)
    return out
