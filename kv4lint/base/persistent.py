"""A mapping and a set whose copy costs nothing, however large they are.

A shell script's walk copies its variables at every branch, subshell, pipeline and function call, and a long
script sets thousands of them: with ``dict`` copies, a 2 MB serving script of 1,600 blocks (8,000 variables)
spent a quarter of its walk copying, and the cost grew with the square of the file. Here each holds an
``immutables.Map`` (a hash array mapped trie, PEP 603's): a copy shares it, and a write makes a new one that
shares all but one path with the old (``O(log n)``), so neither side sees the other's writes.

The ``dict``/``set`` methods the walk uses, and no more.
"""

from __future__ import annotations

from immutables import Map

_EMPTY = Map()


class _Persistent:
    """What both share: the map, and reading it (``in``, iteration, ``len``, ``==``)."""

    __slots__ = ("_m",)

    def __contains__(self, key) -> bool:
        return key in self._m

    def __iter__(self):
        return iter(self._m)

    def __len__(self) -> int:
        return len(self._m)

    def __eq__(self, other) -> bool:
        if type(other) is type(self):
            return self._m is other._m or self._m == other._m
        return NotImplemented

    __hash__ = None  # mutable, as a dict or a set


class PersistentDict(_Persistent):
    """A ``dict`` (``get``, ``[k]``, ``[k] = v``, ``pop``, ``items``, ``in``, ``len``, ``==``) with an ``O(1)``
    :meth:`copy`."""

    __slots__ = ("get",)

    def __init__(self, m: Map = _EMPTY) -> None:
        self._m = m
        self.get = m.get  # the map's own method: a read costs no Python frame

    def __setitem__(self, key, value) -> None:
        m = self._m = self._m.set(key, value)
        self.get = m.get

    def pop(self, key, default=None):
        m = self._m
        value = m.get(key, default)
        if key in m:
            m = self._m = m.delete(key)
            self.get = m.get
        return value

    def __getitem__(self, key):
        return self._m[key]

    def items(self):
        return self._m.items()

    def keys(self):
        return self._m.keys()

    def values(self):
        return self._m.values()

    def copy(self) -> "PersistentDict":
        return PersistentDict(self._m)

    def __repr__(self) -> str:
        return f"PersistentDict({dict(self._m.items())!r})"


class PersistentSet(_Persistent):
    """A ``set`` of names (``add``, ``discard``, ``update``, ``|=``, ``in``, ``len``, ``==``, ``intersection``)
    with an ``O(1)`` :meth:`copy`."""

    __slots__ = ()

    def __init__(self, items=(), *, _m: Map = _EMPTY) -> None:
        self._m = _m.update({k: None for k in items}) if items else _m

    def add(self, item) -> None:
        if item not in self._m:
            self._m = self._m.set(item, None)

    def discard(self, item) -> None:
        if item in self._m:
            self._m = self._m.delete(item)

    def update(self, items) -> None:
        new = [k for k in items if k not in self._m]
        if new:
            self._m = self._m.update({k: None for k in new})

    def __ior__(self, other) -> "PersistentSet":
        if isinstance(other, PersistentSet) and (other._m is self._m or not len(self._m)):
            self._m = other._m
        else:
            self.update(other)
        return self

    def intersection(self, other) -> set:
        return {k for k in other if k in self._m} if len(other) < len(self._m) else {k for k in self._m if k in other}

    def copy(self) -> "PersistentSet":
        return PersistentSet(_m=self._m)

    def __eq__(self, other) -> bool:
        if isinstance(other, (set, frozenset)):
            return len(other) == len(self._m) and all(k in self._m for k in other)
        return super().__eq__(other)

    __hash__ = None  # mutable, as a set

    def __repr__(self) -> str:
        return f"PersistentSet({set(self._m)!r})"
