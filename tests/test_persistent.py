"""kv4lint.base.persistent: a copy shares its map, and neither side sees the other's writes (the walk's branches
and subshells rely on it)."""

from __future__ import annotations

from kv4lint.base.persistent import PersistentDict, PersistentSet


def test_a_dict_copy_does_not_see_the_other_sides_writes():
    d = PersistentDict()
    d["A"] = 1
    d["B"] = 2
    c = d.copy()
    c["A"] = 10
    c["C"] = 3
    assert c.pop("B") == 2 and c.pop("B") is None and c.pop("B", "gone") == "gone"
    d["D"] = 4
    assert dict(d.items()) == {"A": 1, "B": 2, "D": 4}
    assert dict(c.items()) == {"A": 10, "C": 3}
    assert d.get("A") == 1 and c.get("A") == 10 and c.get("B") is None and "B" not in c and "B" in d
    assert d["A"] == 1 and len(d) == 3 and sorted(d) == ["A", "B", "D"]


def test_dicts_are_equal_by_contents():
    a, b = PersistentDict(), PersistentDict()
    a["X"] = b["X"] = 1
    assert a == b and a == a.copy()
    b["X"] = 2
    assert a != b


def test_a_set_copy_does_not_see_the_other_sides_writes():
    s = PersistentSet(["A"])
    c = s.copy()
    c.add("B")
    c.discard("A")
    s.update(["C", "A"])
    assert set(s) == {"A", "C"} and set(c) == {"B"}
    assert "A" in s and "A" not in c and len(s) == 2
    c |= s
    assert set(c) == {"A", "B", "C"} and set(s) == {"A", "C"}
    s.add("Z")
    assert "Z" not in c
    assert s == {"A", "C", "Z"} and s != {"A"} and s == s.copy()
    assert s.intersection({"A": 1, "Q": 2}) == {"A"} and s.intersection(["Z", "C", "Y", "W", "V"]) == {"Z", "C"}


def test_or_into_an_empty_set_shares_and_stays_apart():
    s = PersistentSet(["A"])
    e = PersistentSet()
    e |= s
    e.add("B")
    assert set(s) == {"A"} and set(e) == {"A", "B"}
