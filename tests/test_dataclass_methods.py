"""The imports of kv4lint's stages and parsers compile each method ``dataclasses`` writes once per distinct text
(kv4lint.base.process.imports_kept; issue 37: most of libcst's import is that compiling, and a third of libcst's
methods repeat another's text).  The classes are the ones ``dataclasses`` would have made, and the module is left
as it was, in any process (flake8's too)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Two modules with classes of the same fields: the same methods' texts.  One of them reads annotations lazily.
FIRST = """
from dataclasses import dataclass, field

@dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int = 0

@dataclass
class Bag:
    items: list = field(default_factory=list)
    name: str = "bag"
"""
SECOND = "from __future__ import annotations\n" + FIRST.replace("Point", "Place").replace("Bag", "Sack")


def _run(tmp_path, code: str) -> list[str]:
    (tmp_path / "first.py").write_text(FIRST)
    (tmp_path / "second.py").write_text(SECOND)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


METHODS = "__init__ __repr__ __eq__ __lt__ __le__ __gt__ __ge__ __setattr__ __delattr__ __hash__".split()


def test_the_same_methods_text_is_compiled_once_during_an_import(tmp_path):
    out = _run(tmp_path, f"""
        import dataclasses, sys
        from kv4lint.base.process import imports_kept
        with imports_kept():
            import first, second
        shared = [m for m in {METHODS!r} if m in vars(first.Point) and
                  getattr(first.Point, m).__code__ is getattr(second.Place, m).__code__]
        print(",".join(shared), first.Bag.__init__.__code__ is second.Sack.__init__.__code__)
        print("exec" in vars(dataclasses))
    """)
    assert out == ["__init__,__repr__,__eq__,__lt__,__le__,__gt__,__ge__,__setattr__,__delattr__,__hash__", "True",
                   "False"]


def test_outside_kv4lints_imports_each_class_compiles_its_own(tmp_path):
    out = _run(tmp_path, """
        import first, second
        print(first.Point.__init__.__code__ is second.Place.__init__.__code__)
    """)
    assert out == ["False"]


def test_the_classes_are_the_ones_dataclasses_makes(tmp_path):
    """Each method compiled once is the method ``dataclasses`` compiles: the same bytecode, constants, names,
    defaults and annotations; and the classes behave as dataclasses."""
    out = _run(tmp_path, f"""
        import dataclasses, importlib, sys
        from kv4lint.base.process import imports_kept

        def shape(cls):
            out = []
            for m in {METHODS!r}:
                f = vars(cls).get(m)
                if f is not None:
                    c = f.__code__
                    out.append((m, c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_filename, f.__defaults__,
                                f.__kwdefaults__, {{k: repr(v) for k, v in f.__annotations__.items()}}))
            return out

        with imports_kept():
            import first, second
        kept = [shape(c) for c in (first.Point, first.Bag, second.Place, second.Sack)]
        for name in ("first", "second"):
            del sys.modules[name]
        import first, second
        plain = [shape(c) for c in (first.Point, first.Bag, second.Place, second.Sack)]
        print(kept == plain)
        with imports_kept():
            del sys.modules["first"]
            import first
        p = first.Point(1)
        try:
            p.x = 2
        except dataclasses.FrozenInstanceError:
            frozen = True
        a, b = first.Bag(), first.Bag()
        a.items.append(1)
        print(p, p < first.Point(1, 1), hash(p) == hash(first.Point(1, 0)), frozen, b.items == [], a)
    """)
    assert out == ["True", "Point(x=1,", "y=0)", "True", "True", "True", "True", "Bag(items=[1],", "name='bag')"]


def test_the_module_is_put_back_after_a_failed_import_and_an_inner_one(tmp_path):
    out = _run(tmp_path, """
        import dataclasses
        from kv4lint.base.process import imports_kept
        try:
            with imports_kept():
                with imports_kept():  # inside another: the outer one's exec stays
                    inner = vars(dataclasses).get("exec")
                print(vars(dataclasses).get("exec") is inner is not None)
                import no_such_module_here
        except ImportError:
            pass
        print("exec" in vars(dataclasses))
    """)
    assert out == ["True", "False"]
