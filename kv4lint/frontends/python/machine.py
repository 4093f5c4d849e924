"""What Python code says about the GPU its launches run on (the names mean what :mod:`kv4lint.sglang.gpus` says):

* the GPU the function or class that makes the launch asks its scheduler for: Modal
  ``@app.function(gpu="H100:8")`` / ``gpu=["H100", "A100-80GB"]`` / ``gpu=modal.gpu.H100()``, ``@app.cls(gpu=...)``;
  Ray ``@ray.remote(accelerator_type="H100")`` / ``resources={"accelerator_type:H100": 0.001}``, Ray Serve
  ``ray_actor_options``: scope ``launch``;
* branches whose condition tests the GPU: ``torch.cuda.get_device_capability()[0] >= 10``,
  ``get_device_capability() == (9, 0)``, ``"B200" in torch.cuda.get_device_name()``, SGLang's own
  ``is_sm100_supported()``/``is_blackwell()``/``get_device_sm() >= 100``, and a name assigned once from them
  (``major, _ = torch.cuda.get_device_capability()``): scope ``guard``, for a launch inside the branch (or a
  ``unittest.skipIf``/``pytest.mark.skipif`` on its function or class) and for the values a branch gives a launch
  read once per path (:mod:`kv4lint.frontends.python.paths`).

Nothing is evaluated: a value is read only where it is written (a literal, or a module name assigned one literal).
"""

from __future__ import annotations

import libcst as cst

from kv4lint.base.model import Hint
from kv4lint.frontends.hints import guard_hint, scheduler_hints, short
from kv4lint.frontends.python.index import child_nodes
from kv4lint.sglang.gpus import ArchSet, by_capability, compare_archs, match_archs

# SGLang's own tests of the GPU (sglang.srt.utils; docs/sglang-rules.md §2.1): the compute capability majors each
# holds on.
_SGLANG_TESTS: dict[str, frozenset[int]] = {
    "is_sm90_supported": frozenset({9}), "is_hopper_with_cuda_12_3": frozenset({9}),
    "is_sm100_supported": frozenset({10}), "is_sm120_supported": frozenset({12}),
    "is_blackwell": frozenset({10, 11, 12}), "is_blackwell_supported": frozenset({10, 11, 12}),
}
_OPS = {cst.GreaterThanEqual: ">=", cst.GreaterThan: ">", cst.LessThanEqual: "<=", cst.LessThan: "<",
        cst.Equal: "==", cst.NotEqual: "!="}


# What Machine's walk reads of a node, by its type: libcst's parser makes these classes, never subclasses of them, and
# an isinstance against one of libcst's abstract-based classes goes through the ABC's check and caches every other
# type it meets (objects the cyclic collector walks).
_WALKED = {cst.If: "branch", cst.IfExp: "branch", cst.Assign: "assign", cst.AnnAssign: "rebind",
           cst.AugAssign: "rebind"}


class Machine:
    """The GPU evidence of one module: its names assigned once, its branches by id, what each test means."""

    def __init__(self, scanner):
        self.sc = scanner
        self.nodes: dict[int, object] = {}  # id -> If / IfExp node
        self.names: dict[str, object | None] = {}  # name -> (value, tuple index) assigned once (None: more)
        stack = [scanner.module]
        while stack:
            n = stack.pop()
            k = _WALKED.get(type(n))  # the parser's own classes: by type (isinstance of libcst's ABCs is slow)
            if k == "branch":
                self.nodes[id(n)] = n
            elif k == "assign" and len(n.targets) == 1:
                self._bind(n.targets[0].target, n.value)
            elif k == "rebind" and isinstance(n.target, cst.Name):
                self.names[n.target.value] = None
            stack.extend(c for _f, c in child_nodes(n))

    def _bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.names[target.value] = None if target.value in self.names else (value, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for k, el in enumerate(target.elements):
                if isinstance(el.value, cst.Name):
                    name = el.value.value
                    self.names[name] = None if name in self.names else (value, k)

    # -- the scheduler the function or class asks ------------------------------
    def scheduler(self, scope) -> list[Hint]:
        """The GPU the nearest enclosing function or class that asks for one requests (Modal, Ray)."""
        s = scope
        while s is not None:
            node = s.node
            for dec in getattr(node, "decorators", ()) or ():
                found = self._decorator(dec.decorator)
                if found:
                    return found
            s = s.parent
        return []

    def _decorator(self, d) -> list[Hint]:
        if not isinstance(d, cst.Call):
            return []
        attr = d.func.attr.value if isinstance(d.func, cst.Attribute) else \
            d.func.value if isinstance(d.func, cst.Name) else ""
        for arg in d.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key == "gpu" and attr in ("function", "cls", "web_server", "asgi_app"):
                names = self._gpu_names(arg.value)
                if names:
                    code = self._code(arg.value)
                    said = "" if isinstance(arg.value, (cst.SimpleString, cst.List, cst.Tuple)) else \
                        f" = {', '.join(names)}"
                    return scheduler_hints(names, f"Modal {attr}(gpu={short(code, 40)}){said}", self._span(arg))
            if attr in ("remote", "deployment", "options") or key in ("ray_actor_options",):
                found = self._ray(key, arg.value, arg)
                if found:
                    return found
        return []

    def _ray(self, key: str | None, value, arg) -> list[Hint]:
        if key == "accelerator_type":
            text = self._literal(value)
            if text is None and isinstance(value, (cst.Name, cst.Attribute)):
                text = value.value if isinstance(value, cst.Name) else value.attr.value  # NVIDIA_TESLA_V100
            return scheduler_hints([text], f"Ray accelerator_type={short(self._code(value), 40)}",
                                   self._span(arg)) if text else []
        if key in ("resources", "ray_actor_options") and isinstance(value, cst.Dict):
            for el in value.elements:
                k = self._literal(el.key) if isinstance(el, cst.DictElement) else None
                if k is None:
                    continue
                if k.startswith("accelerator_type:") and len(k) > len("accelerator_type:"):
                    return scheduler_hints([k.split(":", 1)[1]], f"Ray resources {{'{short(k, 40)}': ...}}",
                                           self._span(el))
                if k in ("accelerator_type", "resources"):
                    found = self._ray(k, el.value, el)
                    if found:
                        return found
        return []

    def _gpu_names(self, value) -> list[str]:
        """Modal's ``gpu=``: ``"H100:8"``, ``["H100", "A100-80GB"]`` (any of them), ``modal.gpu.H100(count=8)``."""
        if isinstance(value, (cst.List, cst.Tuple)):
            out = [self._one_gpu(el.value) for el in value.elements]
            return out if out and all(out) else []
        one = self._one_gpu(value)
        return [one] if one else []

    def _one_gpu(self, value) -> str | None:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):  # modal.gpu.H100(...)
            base = value.func.value
            if isinstance(base, cst.Attribute) and base.attr.value == "gpu" or \
                    isinstance(base, cst.Name) and base.value == "gpu":
                return value.func.attr.value
            return None
        text = self._literal(value)
        if text is None or text.strip().lower() in ("any", ""):
            return None
        return text

    def _literal(self, node, depth: int = 0) -> str | None:
        """A string written as a literal, or a module name assigned one (an f-string's literal head)."""
        if isinstance(node, cst.SimpleString):
            try:
                v = node.evaluated_value
            except Exception:  # noqa: BLE001 - a malformed literal reads as unknown
                return None
            return v if isinstance(v, str) else None
        if isinstance(node, cst.FormattedString):
            parts = node.parts
            head = parts[0] if parts else None
            if isinstance(head, cst.FormattedStringText) and ":" in head.value:  # f"H100:{N}"
                return head.value
            return None
        if isinstance(node, cst.Name) and depth < 4:
            bound = self.names.get(node.value)
            if bound is not None and bound[1] is None:
                return self._literal(bound[0], depth + 1)
        return None

    # -- guards ------------------------------------------------------------------
    def frame_guards(self, frames: tuple) -> list[Hint]:
        """The guards of the ``if`` branches a statement sits in (``("c", id, "b"|"e")`` frames)."""
        out: list[Hint] = []
        for kind, point, part in frames:
            node = self.nodes.get(point) if kind == "c" else None
            if type(node) is cst.If:  # by type, as the walk above reads it
                out += self.branch(node, part)
        return out

    def path_guards(self, selection: dict, used: list) -> list[Hint]:
        """The guards of the choices a launch read once per path was read with."""
        out: list[Hint] = []
        for point in dict.fromkeys(used):
            node = self.nodes.get(point)
            part = selection.get(point)
            if node is not None and part in ("b", "e"):
                out += self.branch(node, part)
        return out

    def skips(self, scope) -> list[Hint]:
        """``@unittest.skipIf(not is_sm100_supported(), ...)`` / ``skipUnless`` / ``pytest.mark.skipif`` on the
        function or class a launch is in: it runs only where the test lets it."""
        out: list[Hint] = []
        s = scope
        while s is not None:
            for dec in getattr(s.node, "decorators", ()) or ():
                d = dec.decorator
                if not isinstance(d, cst.Call) or not d.args:
                    continue
                name = d.func.attr.value if isinstance(d.func, cst.Attribute) else \
                    d.func.value if isinstance(d.func, cst.Name) else ""
                if name not in ("skipIf", "skipUnless", "skipif"):
                    continue
                found = self.test(d.args[0].value)
                if found is not None:
                    runs = found[0] if name == "skipUnless" else found[1]
                    out += guard_hint(runs, f"{name}({short(self._code(d.args[0].value), 50)})", self._span(d))
            s = s.parent
        return out

    def branch(self, node, part: str) -> list[Hint]:
        found = self.test(node.test)
        if found is None:
            return []
        text = short(self._code(node.test), 50)
        return guard_hint(found[0] if part == "b" else found[1],
                          f"branch where `{text}` is {'true' if part == 'b' else 'false'}", self._span(node.test))

    def test(self, node, depth: int = 0) -> tuple[ArchSet, ArchSet] | None:
        """(where the expression is true, where it is false), None when it does not test the GPU alone."""
        if depth > 8:
            return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            found = self.test(node.expression, depth + 1)
            return found[::-1] if found else None
        if isinstance(node, cst.BooleanOperation):
            a, b = self.test(node.left, depth + 1), self.test(node.right, depth + 1)
            if a is None or b is None:
                return None
            if isinstance(node.operator, cst.And):
                return a[0] & b[0], a[1] | b[1]
            return a[0] | b[0], a[1] & b[1]
        if isinstance(node, cst.Name):
            bound = self.names.get(node.value)
            return self.test(bound[0], depth + 1) if bound is not None and bound[1] is None else None
        if isinstance(node, cst.Call):
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
                node.func.value if isinstance(node.func, cst.Name) else ""
            majors = _SGLANG_TESTS.get(name)
            if majors is None:
                return None
            on = by_capability(lambda major, minor: major in majors)
            return on, on.complement()
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            return self._compare(node.left, node.comparisons[0])
        return None

    def _compare(self, left, target) -> tuple[ArchSet, ArchSet] | None:
        op, right = target.operator, target.comparator
        if isinstance(op, (cst.In, cst.NotIn)):  # "B200" in torch.cuda.get_device_name()
            text = self._literal(left)
            lower = isinstance(right, cst.Call) and isinstance(right.func, cst.Attribute) and \
                right.func.attr.value == "lower"
            if lower:
                right = right.func.value
            if text is None or self._reading(right) != "name":
                return None
            found = match_archs(text, ignore_case=lower)
            return found[::-1] if found and isinstance(op, cst.NotIn) else found
        symbol = _OPS.get(type(op))
        kind = self._reading(left)
        if symbol is None or kind is None or kind == "name":
            return None
        if kind == "cc":  # get_device_capability() >= (10, 0)
            pair = _pair(right)
            if pair is None:
                return None
            tests = {">=": lambda a: a >= pair, ">": lambda a: a > pair, "<=": lambda a: a <= pair,
                     "<": lambda a: a < pair, "==": lambda a: a == pair, "!=": lambda a: a != pair}
            on = by_capability(lambda major, minor: tests[symbol]((major, minor)))
            if not on.archs or on.negated:
                return None
            return on, on.complement()
        if not isinstance(right, cst.Integer):
            return None
        return compare_archs(kind, symbol, float(right.value))

    def _reading(self, node, depth: int = 0) -> str | None:
        """How an expression reads the GPU: ``name``, ``cc`` (a (major, minor) pair), ``major``, ``sm``."""
        if depth > 4:
            return None
        if isinstance(node, cst.Name):
            bound = self.names.get(node.value)
            if bound is None:
                return None
            value, index = bound
            kind = self._reading(value, depth + 1)
            if index is None:
                return kind
            return {0: "major"}.get(index) if kind == "cc" else None
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            sl = node.slice[0].slice
            if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Integer) and sl.value.value == "0":
                return "major" if self._reading(node.value, depth + 1) == "cc" else None
            return None
        if isinstance(node, cst.Call):
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
                node.func.value if isinstance(node.func, cst.Name) else ""
            return {"get_device_capability": "cc", "get_device_name": "name", "get_device_sm": "sm"}.get(name)
        return None

    # -- positions -------------------------------------------------------------
    def _span(self, node):
        try:
            return self.sc.fanchor(self.sc.span(node))
        except Exception:  # noqa: BLE001 - a node without a position: the hint has none
            return None

    def _code(self, node) -> str:
        try:
            s = self.sc.span(node)
            return " ".join(self.sc.text[s.start:s.end].split())
        except Exception:  # noqa: BLE001
            return "..."


def _pair(node) -> tuple[int, int] | None:
    if isinstance(node, cst.Tuple) and len(node.elements) == 2 and \
            all(isinstance(e.value, cst.Integer) for e in node.elements):
        return int(node.elements[0].value.value), int(node.elements[1].value.value)
    return None
