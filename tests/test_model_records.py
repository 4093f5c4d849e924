"""The rich model's records (kv4lint.base.model) are plain records (kv4lint.base.record), not dataclasses: a second
run loads them to print the findings it stored, without ``dataclasses`` and ``inspect``.  They keep what they had as
dataclasses: the declared fields in order with their defaults (fresh lists and dicts), equality, hashing for the
frozen ones, Span's order, the printed form, immutability, ``replace``, pickling and the cache's encoding."""

from __future__ import annotations

import copy
import json
import inspect
import pickle
import subprocess
import sys

import pytest

from kv4lint.base.model import Edit, Finding, Fix, Hint, Launch, Position, Provenance, ScanResult, Severity, Span, \
    Value
from kv4lint.base.record import Frozen, fields, replace
from kv4lint.pipeline import cache

FROZEN = (Span, Value, Hint, Edit, Fix, Position)
MUTABLE = (Launch, Finding, ScanResult)


@pytest.mark.parametrize("cls", FROZEN + MUTABLE)
def test_init_takes_the_fields_in_order_by_name(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == list(fields(cls))
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
    assert issubclass(cls, Frozen) == (cls in FROZEN)


def test_every_field_is_set_as_given():
    s, u, r = Span(1, 4), Span(7, 9), Span(0, 5)
    v = Value("nvfp4", s, Provenance.RESOLVED, u, True, False, r, '"', (1, 2, 3), "env.sh")
    assert [getattr(v, f) for f in fields(v)] == ["nvfp4", s, Provenance.RESOLVED, u, True, False, r, '"', (1, 2, 3),
                                                  "env.sh"]
    assert Value(text="x", path="p") == Value("x", None, Provenance.LITERAL, None, False, False, None, "", None, "p")
    w = Value("x")
    assert (w.span, w.provenance, w.use, w.shared, w.splat, w.remove, w.quote, w.offsets, w.path) == (
        None, Provenance.LITERAL, None, False, False, None, "", None, None)
    assert Value.unknown(u, splat=True) == Value(None, None, Provenance.UNKNOWN, use=u, splat=True)
    assert (Position(3, 7).line, Position(3, 7).column) == (3, 7) and Position(column=7, line=3) == Position(3, 7)
    h = Hint("gpu", "sm100", "heading '### B200'", s, "section")
    assert [getattr(h, f) for f in fields(h)] == ["gpu", "sm100", "heading '### B200'", s, "section"]
    assert Hint("gpu", "sm90", "x").scope == "launch" and Edit(s, "fp8_e4m3").path is None


def test_list_and_dict_fields_default_to_new_empty_ones():
    a, b = Launch("a.sh", "argv", "sglang serve", Span(0, 1), Span(0, 1)), ScanResult()
    assert (a.argv, a.kwargs, a.positional, a.hints, a.config_argv, a.disabled, a.language) == (
        [], {}, [], [], [], frozenset(), "shell")
    a.argv.append(Value("x"))
    assert Launch("b.sh", "argv", "e", Span(0, 1), Span(0, 1)).argv == []
    b.launches.append(a)
    assert ScanResult().launches == [] and (b.errors, b.copies, b.sources) == ([], [], [])
    f = Fix("use fp8_e4m3")
    assert (f.set, f.remove, f.edits, f.applicability) == ({}, (), (), "safe") and Fix("x").set is not f.set
    g = Finding("KV401", Severity.ERROR, "m")
    assert (g.path, g.span, g.start, g.fix, g.fingerprint) == ("<argv>", None, None, None, None)


def test_a_bad_span_is_refused():
    with pytest.raises(ValueError, match="bad span 3..2"):
        Span(3, 2)
    with pytest.raises(ValueError, match="bad span -1..2"):
        Span(-1, 2)
    assert Span(2, 2).end == 2


def test_the_behaviour_of_the_dataclasses_is_kept():
    a, b = Span(1, 2), Span(1, 3)
    assert a == Span(1, 2) and hash(a) == hash(Span(1, 2)) and a < b <= b and b > a >= a
    assert sorted([b, Span(0, 9), a]) == [Span(0, 9), a, b] and not (a < a) and max(a, b) is b
    with pytest.raises(TypeError):
        a < (1, 2)  # noqa: B015 - only spans order
    assert a != (1, 2) and a != Position(1, 2)
    assert repr(a) == "Span(start=1, end=2)"
    v = Value("fp8_e4m3", a, offsets=(1,))
    assert v == Value("fp8_e4m3", a, offsets=(2,)) and hash(v) == hash(Value("fp8_e4m3", a))  # offsets: no part
    assert v != Value("fp8_e4m3", a, path="env.sh") and v != Value("fp8_e4m3", b, offsets=(1,))
    assert repr(v) == ("Value(text='fp8_e4m3', span=Span(start=1, end=2), provenance=<Provenance.LITERAL: 'literal'>, "
                       "use=None, shared=False, splat=False, remove=None, quote='', path=None)")
    for frozen, name in ((a, "start"), (v, "text"), (Position(1, 1), "line"), (Hint("gpu", "sm90", "x"), "value"),
                         (Edit(a, "x"), "text"), (Fix("x"), "applicability")):
        with pytest.raises(AttributeError):
            setattr(frozen, name, 0)
        with pytest.raises(AttributeError):
            delattr(frozen, name)
    assert replace(v, text="auto") == Value("auto", a, offsets=(1,)) and replace(v, text="auto").offsets == (1,)
    with pytest.raises(ValueError):
        replace(a, end=0)  # built through __init__: its checks run
    with pytest.raises(TypeError, match="no field 'txt'"):
        replace(v, txt="auto")
    p = Position(2, 5)
    assert p == Position(2, 5) != Position(5, 2) and hash(p) == hash(Position(2, 5)) and repr(p) == (
        "Position(line=2, column=5)")
    launch = Launch("a.sh", "argv", "sglang serve", a, a, argv=[v])
    assert launch == Launch("a.sh", "argv", "sglang serve", a, a, argv=[v]) != replace(launch, condition="X=1")
    with pytest.raises(TypeError):
        hash(launch)  # mutable: unhashable, as a dataclass with eq
    with pytest.raises(AttributeError):
        launch.no_such_field = 1  # slots: a misspelt field is an error


def test_records_survive_pickle_copy_and_the_cache():
    a = Span(1, 2)
    v = Value.unknown(Span(3, 4), splat=True)
    fix = Fix("use fp8_e4m3", {"kv_cache_dtype": "fp8_e4m3"}, ("x",), (Edit(a, "fp8_e4m3"),), "unsafe")
    finding = Finding("KV401", Severity.ERROR, "refused", "a.sh", a, Position(1, 2), Position(1, 3), fix,
                      {"gpu": "sm90"}, "kv_cache_dtype", (1, 2), "detail", "abc")
    launch = Launch("a.sh", "argv", "sglang serve", a, a, argv=[v, Value("nvfp4", a, offsets=(1, 2))],
                    hints=[Hint("gpu", "sm100", "x", a, "file")], disabled=frozenset({"KV401"}))
    for x in (a, v, Position(1, 2), fix, finding, launch, ScanResult([launch], copies=[("a", "b")])):
        assert pickle.loads(pickle.dumps(x)) == x
        assert copy.copy(x) == x and copy.deepcopy(x) == x
        assert cache.decode(json.loads(json.dumps(cache.encode(x, type(x)))), type(x)) == x  # the annotations resolve
    assert cache.decode(cache.encode(launch, Launch), Launch).argv[1].offsets == (1, 2)


def test_the_model_loads_without_dataclasses():
    """What a second run that prints stored findings loads with the model (it used to cost ~13 ms)."""
    code = ("import sys, kv4lint.base.model, kv4lint.pipeline.cache as c\n"
            "V = kv4lint.base.model.Value\n"
            "c.decode(c.encode(V('x'), V), V)\n"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'ast') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
