"""Shell functions: a call walks the function's body with the call's words as ``$1``, ``$2``, ...

:class:`Calls` (mixed into :class:`~kv4lint.frontends.shell.walk.Walker`) walks a body at each call, as bash would
run it, its ``local`` variables restored after; a function never called by name is walked once at the end (a
library, or dispatch through ``"$@"``). A call of a function with the same words, on the same variables, as an
earlier call that found nothing walks the same way: its effect on the variables is replayed instead (a script
that calls a helper from many places walks it once per distinct state); one that also changed nothing, ran nothing
and read only the variables its body names is counted instead of walked wherever the same values are passed and
those variables hold the same bindings (``$(version_of "$PLATFORM" "$V")`` from hundreds of places). Past the
bound on calls within calls, or on statements walked, a call is not walked, and the file says so (a bound is never
a pass).
"""

from __future__ import annotations

from kv4lint.base.file_error import FileError
from kv4lint.frontends.hints import NAME_WORD
from kv4lint.frontends.shell.expand import MAX_DEPTH, Field, elements

MAX_STEPS = 300_000  # statements walked before loops and calls stop being expanded
MAX_CALL_DEPTH = 8  # functions calling functions: deeper calls are not walked (a file error says so)


class Calls:
    """Mixed into the Walker: needs ``scan``, ``env``, ``src``, ``stmt``, ``functions``, ``called``,
    ``call_stack``, ``frames``, ``positional`` and ``_memo``."""

    def call(self, name: str, args: list[Field] | None = None) -> None:
        body = self.functions[name]
        if name in self.call_stack:  # recursion: the body is being walked
            return
        if len(self.call_stack) > MAX_CALL_DEPTH or (self.scan.steps > MAX_STEPS and name in self.called):
            self._skipped_call(body)  # walked at the end if never walked (finish_functions), with a file error
            return
        self.called.add(name)
        self.calls_begun += 1
        key = self._call_key(name, args)
        if key is not None and self._replay(key):
            return
        alike = self._alike_key(name, body, args)
        if alike is not None and self._replay_alike(alike):
            return
        quiet = self._quiet(body) if alike is not None else None
        before = (self.env.vars, self.env.exported, self.scan.save(), self.scan.steps, len(self.functions),
                  self._mark()) if key is not None else None
        self.call_stack.append(name)
        self.frames.append({})
        saved_positional = self.positional
        self.positional = None if args is None else elements(args)
        try:
            self.stmt(body)
        finally:
            self.positional = saved_positional
            frame = self.frames.pop()
            for k, old in frame.items():
                if old is None:
                    self.env.unset(k)
                else:
                    self.env.set(k, old)
                self.scan.journal.append(k)
            self.call_stack.pop()
        if before is not None:
            self._remember(key, before)
        if quiet is not None:
            self._remember_alike(alike, quiet)

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
            vars_before, exported_before, vars_after, exported_after, changed, steps = entry
            if self.env.vars == vars_before and self.env.exported == exported_before:
                self.env.vars = vars_after
                self.env.exported = exported_after
                self.scan.journal.extend(changed)
                self.scan.steps += steps
                return True
        return False

    def _remember(self, key, before) -> None:
        vars_before, exported_before, saved, steps, functions, mark = before
        scan = self.scan
        if scan.save() != saved or len(self.functions) != functions:
            return  # it found something (or defined functions): walk it again next time
        entries = self._memo.setdefault(key, [])
        if len(entries) < 4:
            entries.append((vars_before, exported_before, self.env.vars, self.env.exported,
                            list(dict.fromkeys(scan.journal[mark:])), scan.steps - steps))

    # A call that read only the variables its body names, ran nothing and changed nothing (a helper that echoes a
    # version for ``$(...)``) walks the same way wherever the same values are passed, on the same values of those
    # variables: it is counted (its statements, the names it wrote and restored) instead of walked again, where
    # the walk could meet no bound the first walk did not (as deep below the call within MAX_DEPTH, no further past
    # MAX_STEPS).
    def _alike_key(self, name: str, body, args: list[Field] | None):
        scan = self.scan
        if scan.partial:
            return None
        words = None if args is None else tuple((None if a.unknown else a.chars.text, a.splat) for a in args)
        return (name, body.id, id(self.src), words, tuple(scan.selection.items()), tuple(scan.conds), scan.levels,
                scan.loop_mult, self.defined, tuple(scan.machine.gpu_vars.items()))

    def _quiet(self, body) -> tuple:
        """What a call's walk may read (the variables its body names, which of them are exported) and what would
        tell that it did more than read them, as the call begins."""
        names = self._names.get(body.id)
        if names is None or names[0] is not body or names[1] is not self.src:
            names = self._names[body.id] = (body, self.src, tuple(sorted(set(NAME_WORD.findall(self.src.nt(body))))))
        scan = self.scan
        env = self.env
        deepest, self.deepest = self.deepest, self.depth
        return ([(n, env.vars.get(n)) for n in names[2]], env.exported, scan.save(), scan.steps, deepest,
                self._mark(), (self.defined, self.calls_begun, self.escapes, scan.machine.changes, len(scan.sources),
                               len(scan.seen), self.x.lazy_reads))

    def _remember_alike(self, key, quiet: tuple) -> None:
        read, exported, saved, steps, deepest, mark, marks = quiet
        scan = self.scan
        env = self.env
        below = self.deepest - self.depth  # how much deeper than the call its walk went
        self.deepest = max(deepest, self.deepest)
        if scan.save() != saved or scan.steps > MAX_STEPS or scan.too_deep or marks != (
                self.defined, self.calls_begun, self.escapes, scan.machine.changes, len(scan.sources), len(scan.seen),
                self.x.lazy_reads) or env.exported != exported or any(env.vars.get(n) is not b for n, b in read):
            return
        written = list(dict.fromkeys(scan.journal[mark:]))
        if not set(written) <= {n for n, _ in read}:
            return
        entries = self._alike.setdefault(key, [])
        if len(entries) < 4:
            entries.append((self.src, read, exported, written, scan.steps - steps, below))

    def _replay_alike(self, key) -> bool:
        scan = self.scan
        env = self.env
        for _src, read, exported, written, steps, below in self._alike.get(key, ()):
            if self.depth + below <= MAX_DEPTH and scan.steps + steps <= MAX_STEPS and env.exported == exported and \
                    all(env.vars.get(n) is b for n, b in read):
                scan.journal.extend(written)
                scan.steps += steps
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
