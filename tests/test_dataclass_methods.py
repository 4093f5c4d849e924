"""The imports of kv4lint's stages and parsers compile each method ``dataclasses`` writes once per distinct text
(kv4lint.base.process.imports_kept; issue 37: most of libcst's import is that compiling, and a third of libcst's
methods repeat another's text).  The classes are the ones ``dataclasses`` would have made, and the module is left
as it was, in any process (flake8's too)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


# -- the methods kept for the next process (kv4lint.base.process._methods_file) -----------------------------------

# The number of texts the process compiles for Point and Bag while kv4lint imports ``first``, and the shape of
# their methods (to compare with what dataclasses alone makes).
COUNTED = """
    import builtins, dataclasses  # (kv4lint's stages load it before their imports)
    from kv4lint.base import process
    compiled = []
    def counting(source, *a, **kw):
        compiled.append(source)
        return builtins.compile(source, *a, **kw)
    process.compile = counting  # the module's own name for the builtin: what exec_compiled_once calls
    with process.imports_kept():
        import first
    p = first.Point(1)
    print(len(compiled), p, p < first.Point(1, 1), first.Bag(), process._methods_file() is not None)
"""


def _python(tmp_path, code: str, **env: str) -> list[str]:
    """The lines ``code`` prints, run where Python writes bytecode, under ``tmp_path/pycache``: the kept methods go
    there, not beside the checkout's bytecode."""
    full = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    full.update(env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path, env=full)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def _counted(tmp_path, **env: str) -> list[str]:
    (tmp_path / "first.py").write_text(FIRST)
    return _python(tmp_path, COUNTED, **env)


def _kept(tmp_path) -> list[Path]:
    return sorted((tmp_path / "pycache").rglob("dataclass-methods.*"))


def test_the_next_process_loads_the_methods_instead_of_compiling_them(tmp_path):
    first = _counted(tmp_path)
    assert first[0] == "13 Point(x=1, y=0) True Bag(items=[], name='bag') True"
    [kept] = _kept(tmp_path)
    assert kept.name == f"dataclass-methods.{sys.implementation.cache_tag}.marshal"
    assert kept.parent.parts[-2:] == ("kv4lint", "base")  # where Python keeps kv4lint.base's bytecode (the prefix)
    second = _counted(tmp_path)
    assert second[0] == "0 Point(x=1, y=0) True Bag(items=[], name='bag') True"  # nothing compiled again
    assert _kept(tmp_path) == [kept] and not list(kept.parent.glob("*.tmp"))


def test_the_loaded_methods_are_the_ones_dataclasses_makes(tmp_path):
    """The same bytecode, names and constants as the classes dataclasses alone makes, read back from the file."""
    _counted(tmp_path)
    out = _python(tmp_path, f"""
        import sys
        from kv4lint.base import process
        def shape(cls):
            return [(m, f.__code__.co_code, f.__code__.co_consts, f.__code__.co_names, f.__code__.co_varnames,
                     f.__code__.co_filename, f.__defaults__) for m in {METHODS!r} if (f := vars(cls).get(m))]
        process.compile = None  # any text not read back from the file would fail here
        with process.imports_kept():
            import first
        kept = [shape(first.Point), shape(first.Bag)]
        del sys.modules["first"]
        import first
        print(kept == [shape(first.Point), shape(first.Bag)], len(kept[0]), len(kept[1]))
    """)
    assert out == ["True 10 3"]


def test_nothing_is_kept_where_python_writes_no_bytecode(tmp_path):
    assert _counted(tmp_path, PYTHONDONTWRITEBYTECODE="1")[0].startswith("13 ")
    assert _kept(tmp_path) == []


# What a file holds instead of what kv4lint writes, made from what the first run wrote.
OTHER_SHAPES = {
    "not-marshal": lambda magic, form, methods: b"not marshal at all",
    "other-interpreter": lambda magic, form, methods: marshal.dumps((b"\0\0\r\n", form, methods)),
    "other-format": lambda magic, form, methods: marshal.dumps((magic, form + 1, methods)),
    "not-a-tuple": lambda magic, form, methods: marshal.dumps(methods),
    "not-code": lambda magic, form, methods: marshal.dumps((magic, form, {text: text for text in methods})),
}


@pytest.mark.parametrize("shape", OTHER_SHAPES)
def test_a_file_of_another_shape_is_compiled_past_and_written_again(tmp_path, shape):
    _counted(tmp_path)
    [kept] = _kept(tmp_path)
    kept.write_bytes(OTHER_SHAPES[shape](*marshal.loads(kept.read_bytes())))
    assert _counted(tmp_path)[0] == "13 Point(x=1, y=0) True Bag(items=[], name='bag') True"
    assert _counted(tmp_path)[0].startswith("0 ")  # written whole again by the run that compiled past it


def test_a_folder_that_cannot_be_written_leaves_no_file_and_no_error(tmp_path):
    folder = tmp_path / "pycache"
    _counted(tmp_path)
    [kept] = _kept(tmp_path)
    kept.unlink()
    kept.mkdir()  # the rename over it fails, whoever runs the tests (root too)
    assert _counted(tmp_path)[0].startswith("13 ")
    assert not [p for p in folder.rglob("*") if p.suffix == ".tmp"]


def test_imports_that_define_no_class_read_no_kept_methods(tmp_path):
    """The shell frontend's and tree-sitter's imports define no dataclass: they do not pay for reading the file."""
    _counted(tmp_path)
    (tmp_path / "plain.py").write_text("X = 1\n")
    assert _python(tmp_path, """
        import dataclasses
        from kv4lint.base import process
        with process.imports_kept():
            import plain
        print(process._Methods.table is None)
        with process.imports_kept():
            import first
        print(len(process._Methods.table))
    """) == ["True", "13"]


def test_no_more_methods_are_kept_or_read_than_the_bound(tmp_path, monkeypatch):
    """A host's own classes, defined while kv4lint imports, could grow the file without end: past the bound it is
    neither written nor read."""
    from kv4lint.base import process

    path = tmp_path / "methods.marshal"
    monkeypatch.setattr(process, "_methods_file", lambda: str(path))
    monkeypatch.setattr(process.sys, "dont_write_bytecode", False)
    monkeypatch.setattr(process, "_MAX_METHODS", 2)
    code = compile("pass", "<string>", "exec")
    process._store_methods({"a": code, "b": code, "c": code})
    assert not path.exists()
    process._store_methods({"a": code, "b": code})
    assert process._load_methods() == {"a": code, "b": code}
    monkeypatch.setattr(process, "_MAX_METHODS", 1)
    assert process._load_methods() == {}
