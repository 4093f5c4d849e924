"""Branches of a shell script: where paths part and join again, and commands expanded once per path.

:class:`Branches` is the part of :class:`~kv4lint.frontends.shell.walk.Walker` that walks ``if``/``elif``/``else``,
``case`` and ``a && b || c``: each branch runs on its own copy of the variables, the copies are joined by
:func:`~kv4lint.frontends.shell.choices.merge_choices` with the condition of each path (a branch that ends with
``exit`` or ``return`` is left out), and a command that uses a variable set differently on different paths is
expanded once per path (:meth:`Branches._per_path`).
"""

from __future__ import annotations

from typing import Callable

from kv4lint.frontends.shell.choices import case_subject, combinations, describe, merge_choices
from kv4lint.frontends.shell.expand import Variables


class Branches:
    """Mixed into the Walker: needs ``env``, ``scan``, ``src``, ``run`` and ``stmt``."""

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
            self.env = merge_choices([pre, self.env], conds)
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
        ends = []
        self.env = pre.copy()
        gpu = self._gpu_test(cur_cond[0], cur_cond[-1]) if cur_cond else None
        with self.scan.machine.guarding(gpu[0] if gpu else []):
            self.run(cur_body)
        ends.append(self.env)
        ok, fails = describe(self._text(cur_cond[0], cur_cond[-1])) if cur_cond else ("", "")
        self._name_paths(gpu, ok, fails)
        paths = [ok]
        failed = [fails]
        otherwise = list(gpu[1]) if gpu else []  # the guards of "every condition so far failed"
        left = [self._leaves(cur_body)]
        for (clause,) in branches:
            self.env = pre.copy()
            cond, body, gpu = self._clause(clause, otherwise)
            ends.append(self.env)
            left.append(self._leaves(body))
            if cond is None:
                paths.append(" and ".join(failed))
            else:
                c_ok, c_fails = describe(cond)
                self._name_paths(gpu, c_ok, c_fails)
                otherwise += gpu[1] if gpu else []
                paths.append(" and ".join(failed + [c_ok]))
                failed.append(c_fails)
        if not has_else:
            ends.append(pre)
            paths.append(" and ".join(failed))
            left.append(False)
        self.env = self._join(pre, ends, paths, left)

    def _join(self, pre: Variables, ends: list[Variables], paths: list[str], left: list[bool]) -> Variables:
        """The variables after branches, those that ``exit`` or ``return`` left out (no later command sees them)."""
        kept = [(e, c) for e, c, gone in zip(ends, paths, left) if not gone]
        if not kept:
            return pre
        return merge_choices([e for e, _ in kept], [c for _, c in kept])

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
        ends = []
        conds = []
        left: list[bool] = []
        earlier: list[str] = []
        default = False
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
            with self.scan.machine.guarding(gpu):
                self.run(body)
            ends.append(self.env)
            left.append(self._leaves(body))
        if not default:
            ends.append(pre)
            conds.append(f"{subject} is none of {', '.join(earlier)}" if earlier else f"{subject} is any")
            self.scan.machine.name(conds[-1], self.scan.machine.case(self.src.nt(value) if value is not None else "",
                                                                     ["*"], earlier, self.src.fanchor(*self.src.ns(n))))
            left.append(False)
        self.env = self._join(pre, ends, conds, left)

    def _per_path(self, expand: Callable, act: Callable) -> None:
        """``act(expand())``; when the expansion used a variable set differently on different paths, once per path.

        Each path runs on its own copy of the variables, with the conditions that
        select it (a launch records them); the copies are joined again after.
        """
        scan = self.scan
        outer, scan.seen = scan.seen, []
        try:
            first = expand()
            points = scan.seen
        finally:
            scan.seen = outer
        paths = combinations(points, scan.selection) if points else []
        if not paths:
            act(first)
            return
        pre = self.env
        ends, conds = [], []
        for sel, cond in paths:
            self.env = pre.copy()
            saved = scan.selection
            scan.selection = {**saved, **sel}
            scan.conds.append(cond)
            try:
                act(expand())
            finally:
                scan.selection = saved
                scan.conds.pop()
            ends.append(self.env)
            conds.append(cond)
        self.env = merge_choices(ends, conds)


_ALWAYS_SUCCEEDS = {"variable_assignment", "variable_assignments", "declaration_command"}


def _status_of(node) -> tuple:
    """The statements whose exit status ``node``'s status is: ``A && X=1`` succeeds exactly when ``A`` does."""
    while node.type == "list" and len(node.children) == 3 and node.children[1].type == "&&" and \
            node.children[2].type in _ALWAYS_SUCCEEDS:
        node = node.children[0]
    return node, node
