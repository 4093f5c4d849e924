"""Branches of a shell script: where paths part and join again, and commands expanded once per path.

:class:`Branches` is the part of :class:`~kv4lint.frontends.shell.walk.Walker` that walks ``if``/``elif``/``else``,
``case`` and ``a && b || c``: each branch runs on its own copy of the variables, the copies are joined by
:func:`~kv4lint.frontends.shell.choices.merge_choices` with the condition of each path (a branch that ends with
``exit`` or ``return`` is left out), and a command that uses a variable set differently on different paths is
expanded once per path (:meth:`Branches._per_path`).

Merging costs what the branches changed: every variable written is noted in the walk's journal
(``_Scan.journal``), and a join compares only the names written since its branches began.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from kv4lint.base.conditions import AND, conflict, split_top
from kv4lint.frontends.shell.choices import MAX_CANDIDATES, MAX_READINGS, case_subject, consistent, describe, \
    merge_choices
from kv4lint.base.file_error import FileError
from kv4lint.frontends.shell.variables import Variables

MAX_NAMED_TESTS = 3  # earlier tests an elif's condition names; more are counted ("the 12 tests before it fail")


class Branches:
    """Mixed into the Walker: needs ``env``, ``scan``, ``src``, ``run`` and ``stmt``."""

    # -- joins -----------------------------------------------------------------------
    def _mark(self) -> int:
        """Where the journal of written variables stands: a join merges only what was written after it."""
        return len(self.scan.journal)

    def _merge(self, ends: list[Variables], conds: list[str], mark: int, implies: list | None = None) -> Variables:
        return merge_choices(ends, conds, set(self.scan.journal[mark:]), implies)

    def _list(self, n) -> None:
        # a && b || c: left-nested; walk iteratively.  What follows && / || may not run.
        chain = []
        while n.type == "list":
            kids = n.children
            chain.append(kids[1:])
            n = kids[0]
        self.stmt(n)
        before = n
        for rest in reversed(chain):
            mark = self._mark()
            pre = self.env.copy()
            runs_on_success = any(not k.is_named and k.type == "&&" for k in rest)
            status = _status_of(before)
            gpu = self._gpu_test(*status)
            with self.scan.machine.guarding(gpu[0 if runs_on_success else 1] if gpu else []):
                for k in rest:
                    if k.is_named:
                        self.stmt(k)
            ok, fails = describe(self._text(*status))
            self._name_paths(gpu, ok, fails)
            conds = [fails, ok] if runs_on_success else [ok, fails]
            self.env = self._merge([pre, self.env], conds, mark)
            before = rest[-1].parent if rest and rest[-1].parent is not None else before

    def _if(self, n) -> None:
        branches: list[list] = []  # each: (conditions, body)
        cur_cond: list = []
        cur_body: list = []
        in_body = False
        has_else = False
        for ch in n.children:
            t = ch.type
            if t == "then":
                in_body = True
            elif t in ("elif_clause", "else_clause"):
                if t == "else_clause":
                    has_else = True
                branches.append((ch,))
            elif ch.is_named and t != "comment":
                (cur_body if in_body else cur_cond).append(ch)
        self.run(cur_cond)
        pre = self.env
        mark = self._mark()
        ends = []
        spans = []  # where in the journal each branch wrote (_join)
        self.env = pre.copy()
        gpu = self._gpu_test(cur_cond[0], cur_cond[-1]) if cur_cond else None
        with self.scan.machine.guarding(gpu[0] if gpu else []):
            self.run(cur_body)
        ends.append(self.env)
        spans.append((mark, self._mark()))
        ok, fails = describe(self._text(cur_cond[0], cur_cond[-1])) if cur_cond else ("", "")
        self._name_paths(gpu, ok, fails)
        paths = [ok]
        failed = [fails]
        otherwise = list(gpu[1]) if gpu else []  # the guards of "every condition so far failed"
        left = [self._leaves(cur_body)]
        for (clause,) in branches:
            self.env = pre.copy()
            start = self._mark()
            cond, body, gpu = self._clause(clause, otherwise)
            ends.append(self.env)
            spans.append((start, self._mark()))
            left.append(self._leaves(body))
            if cond is None:
                paths.append(_none_of(failed))
            else:
                c_ok, c_fails = describe(cond)
                self._name_paths(gpu, c_ok, c_fails)
                otherwise += gpu[1] if gpu else []
                paths.append(AND.join(c for c in (_none_of(failed), c_ok) if c))
                failed.append(c_fails)
        if not has_else:
            ends.append(pre)
            spans.append((0, 0))
            paths.append(_none_of(failed))
            left.append(False)
        self.env = self._join(pre, ends, paths, left, mark, spans)

    def _join(self, pre: Variables, ends: list[Variables], paths: list[str], left: list[bool], mark: int,
              spans: list[tuple[int, int]]) -> Variables:
        """The variables after branches, those that ``exit`` or ``return`` left out (no later command sees them);
        each branch began from ``pre`` and wrote what the journal holds within its span."""
        kept = [k for k, gone in enumerate(left) if not gone]
        if not kept:
            return pre
        journal = self.scan.journal
        return merge_choices([ends[k] for k in kept], [paths[k] for k in kept], set(journal[mark:]), base=pre,
                             written=[set(journal[spans[k][0]:spans[k][1]]) for k in kept])

    def _leaves(self, body: list) -> bool:
        """Whether a branch ends with ``exit`` or ``return``."""
        last = next((k for k in reversed(body) if k.type != "comment"), None)
        if last is None or last.type != "command":
            return False
        name = last.child_by_field_name("name")
        return name is not None and self.src.nt(name) in ("exit", "return")

    def _clause(self, c, otherwise: list) -> tuple[str | None, list, tuple | None]:
        """Walk ``elif COND; then BODY`` / ``else BODY`` (where every earlier condition failed: ``otherwise``,
        their GPU guards); the condition's text (None: else), the body and the condition's GPU guards."""
        conds, body, in_body = [], [], c.type == "else_clause"
        for ch in c.children:
            if ch.type == "then":
                in_body = True
            elif ch.is_named and ch.type != "comment":
                (body if in_body else conds).append(ch)
        self.run(conds)
        gpu = self._gpu_test(conds[0], conds[-1]) if conds else None
        with self.scan.machine.guarding(otherwise + (gpu[0] if gpu else [])):
            self.run(body)
        return (self._text(conds[0], conds[-1]) if conds else None), body, gpu

    def _gpu_test(self, first, last) -> tuple | None:
        """The GPU guards of a condition (statements ``first``..``last``): (where it succeeds, where it fails)."""
        s, e = self.src.ns(first)[0], self.src.ns(last)[1]
        return self.scan.machine.test(self._text(first, last), self.src.fanchor(s, e))

    def _name_paths(self, gpu: tuple | None, ok: str, fails: str) -> None:
        """The path conditions ``ok``/``fails`` stand for the GPU guards ``gpu`` (the values a branch sets)."""
        if gpu is not None:
            self.scan.machine.name(ok, gpu[0])
            self.scan.machine.name(fails, gpu[1])

    def _text(self, first, last) -> str:
        """The source of statements ``first``..``last``, without the ``;`` that ends them."""
        return self.src.text[self.src.ns(first)[0]:self.src.ns(last)[1]].strip().rstrip(";").strip()

    def _case(self, n) -> None:
        value = n.child_by_field_name("value")
        if value is not None:
            self.touch(value)
        subject = case_subject(self.src.nt(value)) if value is not None else "the case word"
        pre = self.env
        mark = self._mark()
        ends = []
        conds = []
        left: list[bool] = []
        earlier: list[str] = []
        default = False
        spans: list[tuple[int, int]] = []
        for item in n.children:
            if item.type != "case_item":
                continue
            pats = item.children_by_field_name("value")
            words = [self.src.nt(p).strip().strip("\"'") for p in pats]
            gpu = self.scan.machine.case(self.src.nt(value) if value is not None else "", words, earlier,
                                         self.src.fanchor(*self.src.ns(item)))
            if "*" in words:
                default = True
                conds.append(f"{subject} is none of {', '.join(earlier)}" if earlier else f"{subject} is any")
            else:
                conds.append(f"{subject}={'|'.join(words)}")
                earlier.extend(words)
            self.scan.machine.name(conds[-1], gpu)
            pat_ids = {p.id for p in pats}
            self.env = pre.copy()
            body = [c for c in item.named_children if c.id not in pat_ids and c.type != "comment"]
            start = self._mark()
            with self.scan.machine.guarding(gpu):
                self.run(body)
            ends.append(self.env)
            spans.append((start, self._mark()))
            left.append(self._leaves(body))
        if not default:
            ends.append(pre)
            spans.append((0, 0))
            conds.append(f"{subject} is none of {', '.join(earlier)}" if earlier else f"{subject} is any")
            self.scan.machine.name(conds[-1], self.scan.machine.case(self.src.nt(value) if value is not None else "",
                                                                     ["*"], earlier, self.src.fanchor(*self.src.ns(n))))
            left.append(False)
        self.env = self._join(pre, ends, conds, left, mark, spans)

    # -- commands expanded once per path ------------------------------------------------
    def _per_path(self, expand: Callable, act: Callable, node=None, varies: Callable | None = None) -> None:
        """``act(expand())``; when the expansion used a variable set differently on different paths, once per path.

        Each path runs on its own copy of the variables, with the conditions that select it (a launch records
        them); the copies are joined again after.  Every consistent combination of the paths is read when there
        are at most :data:`MAX_READINGS` (fewer inside a command that is itself read per path); past that, each
        choice is read on its own with the others unknown (:meth:`_one_choice_at_a_time`).
        """
        scan = self.scan
        saved = scan.save()
        outer, scan.seen = scan.seen, []
        try:
            first = expand()
            points = scan.seen
        finally:
            scan.seen = outer
        fresh = [p for p in dict.fromkeys(points) if p not in scan.selection]
        if not fresh or (varies is not None and scan.save()[:2] == saved[:2] and not varies(first)):
            act(first)  # also when no path could make the command do more (a launch in its words reads per path)
            return
        # The expansions per path record what the words run (command substitutions), each with its path.
        scan.per_path += 1
        scan.restore(saved)
        pre = self.env
        mark = self._mark()
        ends: list[tuple] = []
        outside = [a for c in scan.conds for a in split_top(c, AND) if a]
        try:
            done = not scan.partial and self._every_combination(expand, act, fresh, pre, ends, outside)
            if not done:
                scan.restore(saved)
                ends.clear()
                self._one_choice_at_a_time(expand, act, fresh, pre, ends, outside, saved, node)
        finally:
            self.env = pre
        if not ends:  # no path is possible here: read it once, what the choices give unknown
            act(first)
            return
        self.env = self._merge([e for e, _, _ in ends], [c for _, c, _ in ends], mark, [s for _, _, s in ends])

    def _reading(self, expand: Callable, base: dict, sel: dict, pre: Variables, cond: str):
        """Expand once on the paths ``sel`` (on a copy of ``pre``): the words, and the choices met unselected."""
        scan = self.scan
        self.env = pre.copy()
        scan.selection = {**base, **sel}
        outer, scan.seen = scan.seen, []
        scan.conds.append(cond)
        try:
            words = expand()
        finally:
            new = [p for p in dict.fromkeys(scan.seen) if p not in scan.selection]
            scan.seen = outer
            scan.conds.pop()
        return words, new

    def _act(self, act: Callable, words, base: dict, sel: dict, cond: str) -> None:
        scan = self.scan
        scan.selection = {**base, **sel}
        scan.conds.append(cond)
        scan.levels += 1
        try:
            act(words)
        finally:
            scan.levels -= 1
            scan.conds.pop()

    def _paths(self, base: dict, sel: dict, atoms: tuple, p, outside: list[str]) -> list[tuple]:
        """The selections that add a path of ``p`` to ``sel`` (whose conditions are ``atoms``: (order, atom)
        pairs), each with its atoms and condition; impossible ones (``FP4=1`` and ``FP4!=1``) left out."""
        out = []
        have = [a for _, a in atoms]
        for k in range(len(p.conds)):
            more = {p: k, **p.implies[k]}
            if not consistent(sel, more) or not consistent(base, more):
                continue
            new = [a for a in split_top(p.conds[k], AND) if a and a not in have]
            if any(conflict(a, b) for i, a in enumerate(new) for b in [*new[i + 1:], *have, *outside]):
                continue  # no run takes both paths
            grown = tuple(sorted(atoms + tuple((p.serial, a) for a in new), key=lambda x: x[0]))
            out.append(({**sel, **more}, grown, AND.join(a for _, a in grown)))
        return out

    def _every_combination(self, expand, act, fresh, pre, ends, outside) -> bool:
        """Every consistent combination of the choices the command uses (also those met only on some path), one
        reading each; False (nothing kept) when there are more than the budget."""
        scan = self.scan
        budget = MAX_READINGS >> (3 * scan.levels)  # inside a command read per path: fewer
        if budget < 2:
            return False
        base = scan.selection
        stack = list(reversed(self._paths(base, {}, (), fresh[0], outside)))
        leaves = expansions = 0
        try:
            while stack:
                sel, atoms, cond = stack.pop()
                saved = scan.save()
                words, new = self._reading(expand, base, sel, pre, cond)
                if new:
                    scan.restore(saved)
                    expansions += 1
                    if expansions > 4 * budget:
                        return False
                    stack.extend(reversed(self._paths(base, sel, atoms, new[0], outside)))
                    continue
                leaves += 1
                if leaves > budget:
                    return False
                self._act(act, words, base, sel, cond)
                ends.append((self.env, cond, sel))
            return True
        finally:
            scan.selection = base

    def _one_choice_at_a_time(self, expand, act, fresh, pre, ends, outside, saved, node) -> None:
        """Each choice on its own: one reading per path of each choice the command uses, the other choices
        unknown except for what all their paths share (``scan.partial``); a choice met only on some path is read
        on that path. The readings grow with the paths, not with their combinations."""
        scan = self.scan
        base = scan.selection
        partial, scan.partial = scan.partial, True
        try:
            # The choices reached whatever is chosen (through what their paths share): each read on its own
            # path alone; one met only inside a path of another is read with that path.
            probe = scan.save()
            _, everywhere = self._reading(expand, base, {}, pre, "")
            scan.restore(probe)
            queue = deque(({}, (), p) for p in dict.fromkeys([*fresh, *everywhere]))
            done = set(base)
            count = 0
            while queue:
                ctx, ctx_atoms, p = queue.popleft()
                if p in done:
                    continue
                done.add(p)
                for sel, atoms, cond in self._paths(base, ctx, ctx_atoms, p, outside):
                    count += 1
                    if count > MAX_CANDIDATES:
                        self._too_many_readings(saved, node)
                        return
                    words, new = self._reading(expand, base, sel, pre, cond)
                    queue.extend((sel, atoms, q) for q in new if q not in done)
                    self._act(act, words, base, sel, cond)
                    ends.append((self.env, cond, sel))
        finally:
            scan.partial = partial
            scan.selection = base

    def _too_many_readings(self, saved: tuple, node) -> None:
        """A bound is never a pass: past MAX_CANDIDATES readings of a command that launches, a file error."""
        scan = self.scan
        if scan.too_many_readings or (len(scan.pending), len(scan.other)) == saved[:2]:
            return
        scan.too_many_readings = True
        line = self.src.line(self.src.c(node.start_byte)) if node is not None else None
        where = f" at line {line}" if line else ""
        scan.errors.append(FileError(scan.path, f"a command whose values take more than {MAX_CANDIDATES} readings, "
                                                f"one choice at a time (the limit kv4lint reads){where}: the "
                                                "other values are not judged", line=line))


def _none_of(failed: list[str]) -> str:
    """The condition that every earlier test of an ``if``/``elif`` chain failed (the first few named)."""
    if len(failed) <= MAX_NAMED_TESTS:
        return AND.join(c for c in failed if c)
    return AND.join(c for c in failed[:MAX_NAMED_TESTS] if c) + \
        f" and the {len(failed) - MAX_NAMED_TESTS} other tests before fail"


_ALWAYS_SUCCEEDS = {"variable_assignment", "variable_assignments", "declaration_command"}


def _status_of(node) -> tuple:
    """The statements whose exit status ``node``'s status is: ``A && X=1`` succeeds exactly when ``A`` does."""
    while node.type == "list" and len(node.children) == 3 and node.children[1].type == "&&" and \
            node.children[2].type in _ALWAYS_SUCCEEDS:
        node = node.children[0]
    return node, node
