"""Span, Value and Position, the records a frontend makes by the hundred thousand, have an ``__init__`` written
out (a frozen dataclass's sets each field through ``object.__setattr__``, twice as slow): it must take the declared
fields in their order with their defaults, and leave every other behaviour to ``@dataclass`` (equality, hashing, order,
repr, immutability, ``replace``, pickling, the cache's encoding)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from kv4lint.base.model import Position, Provenance, Span, Value
from kv4lint.pipeline import cache


@pytest.mark.parametrize("cls", [Span, Value, Position])
def test_init_takes_the_declared_fields_in_order_with_their_defaults(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    declared = [(f.name, f.default) for f in dataclasses.fields(cls)]
    assert [(p.name, p.default if p.default is not inspect.Parameter.empty else dataclasses.MISSING)
            for p in params] == declared
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)


def test_every_field_is_set_as_given():
    s, u, r = Span(1, 4), Span(7, 9), Span(0, 5)
    v = Value("nvfp4", s, Provenance.RESOLVED, u, True, False, r, '"', (1, 2, 3), "env.sh")
    assert dataclasses.asdict(v) == {"text": "nvfp4", "span": {"start": 1, "end": 4}, "provenance": Provenance.RESOLVED,
                                     "use": {"start": 7, "end": 9}, "shared": True, "splat": False,
                                     "remove": {"start": 0, "end": 5}, "quote": '"', "offsets": (1, 2, 3),
                                     "path": "env.sh"}
    assert Value(text="x", path="p") == Value("x", None, Provenance.LITERAL, None, False, False, None, "", None, "p")
    w = Value("x")
    assert (w.span, w.provenance, w.use, w.shared, w.splat, w.remove, w.quote, w.offsets, w.path) == (
        None, Provenance.LITERAL, None, False, False, None, "", None, None)
    assert Value.unknown(u, splat=True) == Value(None, None, Provenance.UNKNOWN, use=u, splat=True)
    assert dataclasses.astuple(Position(3, 7)) == (3, 7) and Position(column=7, line=3) == Position(3, 7)


def test_a_bad_span_is_refused():
    with pytest.raises(ValueError, match="bad span 3..2"):
        Span(3, 2)
    with pytest.raises(ValueError, match="bad span -1..2"):
        Span(-1, 2)
    assert Span(2, 2).end == 2


def test_dataclass_behaviour_is_kept():
    a, b = Span(1, 2), Span(1, 3)
    assert a == Span(1, 2) and hash(a) == hash(Span(1, 2)) and a < b and sorted([b, a]) == [a, b]
    assert repr(a) == "Span(start=1, end=2)"
    v = Value("fp8_e4m3", a, offsets=(1,))
    assert v == Value("fp8_e4m3", a, offsets=(2,)) and hash(v) == hash(Value("fp8_e4m3", a))  # offsets: no part
    assert repr(v) == ("Value(text='fp8_e4m3', span=Span(start=1, end=2), provenance=<Provenance.LITERAL: 'literal'>, "
                       "use=None, shared=False, splat=False, remove=None, quote='', path=None)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.start = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.text = "x"
    assert dataclasses.replace(v, text="auto") == Value("auto", a, offsets=(1,))
    with pytest.raises(ValueError):
        dataclasses.replace(a, end=0)
    p = Position(2, 5)
    assert p == Position(2, 5) != Position(5, 2) and hash(p) == hash(Position(2, 5)) and repr(p) == (
        "Position(line=2, column=5)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.line = 1
    for x in (a, v, Value.unknown(b, splat=True), p):
        assert pickle.loads(pickle.dumps(x)) == x
        assert cache.decode(cache.encode(x)) == x
