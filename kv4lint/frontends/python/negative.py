"""Negative tests: launches the code builds to see SGLang refuse them.

A test that expects a refusal wraps the launch (or its use) in ``with self.assertRaises(...)``,
``self.assertRaisesRegex``, ``pytest.raises`` (as a context manager or with the callable and its arguments),
or a ``try`` whose body ends in ``self.fail(...)``/``pytest.fail(...)``.  Such a launch is not one to judge:
:class:`Refusals` says why, for each launch call, and the runner shows the reason in ``--show-target``
instead of judging it.  Two shapes count:

* the launch call itself is inside such a context (``with pytest.raises(ValueError): ServerArgs(...)``, a
  ``lambda: Engine(...)`` given to ``assertRaises``);
* the launch is assigned to a name in a function and that name is used inside such a context after it,
  in the same function (``server_args = ServerArgs(...)`` then
  ``with self.assertRaisesRegex(ValueError, ...): server_args._validate_...()``).

One walk per function (or module) body, on demand: the cost stays linear in the file.
"""

from __future__ import annotations

import bisect

import libcst as cst

from kv4lint.frontends.python.index import child_nodes, dotted_name

# unittest.TestCase's methods that expect an exception (any receiver: ``self``, a test case object).
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
# Functions that expect an exception, by qualified name.
RAISES_FUNCTIONS = frozenset({"pytest.raises"})
# Calls that fail a test: a ``try`` whose body ends in one expects its body to raise.
FAIL_CALLS = frozenset({"fail"})
FAIL_FUNCTIONS = frozenset({"pytest.fail"})

# By type, not isinstance (libcst's parser makes these classes, never subclasses of them; an isinstance against one of
# libcst's abstract-based classes goes through the ABC's check, which caches every other type it meets).
_NESTED = frozenset({cst.FunctionDef, cst.ClassDef})


class Refusals:
    """Where a scanned module expects SGLang to refuse a launch: ``reason(call, scope)``."""

    def __init__(self, qualify, start, line_of) -> None:
        self._qualify = qualify  # (func node, scope) -> qualified name, through the module's imports
        self._start = start  # node -> its first character's offset
        self._line_of = line_of  # offset -> 1-based line
        self._walked: dict[int, tuple[dict, dict, dict]] = {}

    def reason(self, call, scope) -> str | None:
        """Why the launch ``call`` (in ``scope``) is a negative test, in the user's terms; None: it is not."""
        while scope.kind in ("lambda", "class") and scope.parent is not None:
            scope = scope.parent  # a lambda's call is read in the function that holds it
        inside, assigned, used = self._walk(scope)
        why = inside.get(id(call))
        if why is not None:
            return f"a negative test: built inside {why}, where the code expects SGLang to refuse it"
        name = assigned.get(id(call))
        uses = used.get(name, ()) if name is not None else ()
        k = bisect.bisect_right(uses, (self._start(call), "\uffff"))  # the first use after the launch
        if k < len(uses):
            pos, w = uses[k]
            return (f"a negative test: `{name}` is used inside {w} (line {self._line_of(pos)}), where the code "
                    "expects SGLang to refuse it")
        return None

    def _walk(self, scope) -> tuple[dict, dict, dict]:
        key = id(scope.node)
        done = self._walked.get(key)
        if done is not None:
            return done
        inside: dict[int, str] = {}  # id(call) -> the context it is built in
        assigned: dict[int, str] = {}  # id(call) -> the name it is assigned to
        used: dict[str, list[tuple[int, str]]] = {}  # name -> (offset, context) of its uses inside a context
        root = scope.node
        stack: list[tuple[object, str | None]] = [(s, None) for s in root.body] if isinstance(root, cst.Module) \
            else [(root.body, None)]
        while stack:
            node, ctx = stack.pop()
            t = type(node)
            if t in _NESTED:
                continue  # a nested function or class: a scope of its own
            if ctx is not None:
                if t is cst.Call:
                    inside.setdefault(id(node), ctx)
                elif t is cst.Name:
                    used.setdefault(node.value, []).append((self._start(node), ctx))
            if t is cst.Assign and isinstance(node.value, cst.Call) and len(node.targets) == 1 \
                    and isinstance(node.targets[0].target, cst.Name):
                assigned[id(node.value)] = node.targets[0].target.value
            inner = self._contexts(node, scope)
            for _, child in child_nodes(node):
                stack.append((child, inner.get(id(child), ctx)))
        for uses in used.values():
            uses.sort()
        self._walked[key] = (inside, assigned, used)
        return self._walked[key]

    def _contexts(self, node, scope) -> dict[int, str]:
        """The children of ``node`` that run where an exception is expected, and how to name that context."""
        out: dict[int, str] = {}
        t = type(node)  # by type, as _walk reads it
        if t is cst.With:
            why = next((self._raises(item.item, scope) for item in node.items
                        if isinstance(item.item, cst.Call) and self._raises(item.item, scope)), None)
            if why is not None:
                out[id(node.body)] = f"`with {why}`"
        elif t is cst.Call:
            why = self._raises(node, scope)
            positional = [a for a in node.args if a.keyword is None]
            if why is not None and len(positional) > 1:  # assertRaises(Exc, callable, *args, **kwargs)
                for a in node.args:
                    if a is not positional[0]:
                        out[id(a)] = f"`{why}`"
        elif t is cst.Try and node.handlers and self._ends_in_fail(node.body, scope):
            out[id(node.body)] = "a `try` whose body ends in a failed test"
        return out

    def _raises(self, call, scope) -> str | None:
        """``call`` as written when it expects an exception (``self.assertRaises(ValueError)``), else None."""
        if not isinstance(call, cst.Call):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in RAISES_METHODS:
            pass
        elif self._qualify(func, scope) not in RAISES_FUNCTIONS:
            return None
        first = next((a.value for a in call.args if a.keyword is None), None)
        what = dotted_name(first) if first is not None else None
        return f"{dotted_name(func) or 'raises'}({what or '...'}{', ...' if len(call.args) > 1 else ''})"

    def _ends_in_fail(self, body, scope) -> bool:
        stmts = getattr(body, "body", ())
        last = stmts[-1] if stmts else None
        if not isinstance(last, cst.SimpleStatementLine) or not last.body:
            return False
        expr = last.body[-1]
        if isinstance(expr, cst.Assert):
            return isinstance(expr.test, cst.Name) and expr.test.value == "False"
        if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)):
            return False
        func = expr.value.func
        return (isinstance(func, cst.Attribute) and func.attr.value in FAIL_CALLS
                and isinstance(func.value, cst.Name) and func.value.value == "self") \
            or self._qualify(func, scope) in FAIL_FUNCTIONS
