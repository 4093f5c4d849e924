"""The variables a shell walk holds at a statement: bindings by name, and the names exported.

A walk copies them at every branch, subshell, pipeline element and function call, and a long script sets
thousands: with ``dict`` copies a 2 MB serving script of 8,000 variables spent a quarter of its walk copying,
growing with the square of its length. Each is an ``immutables.Map`` (a hash array mapped trie, PEP 603's): a
copy shares it, and a write makes a new one that shares all but one path with the old, in ``O(log n)``.
"""

from __future__ import annotations

from immutables import Map

_NONE = Map()


class Variables:
    """Bindings by name (``vars``: name -> Binding) and the names exported (``exported``: name -> None); read
    them as mappings, change them with the methods."""

    __slots__ = ("vars", "exported")

    def __init__(self, vars: Map = _NONE, exported: Map = _NONE):
        self.vars = vars
        self.exported = exported

    def copy(self) -> "Variables":
        return Variables(self.vars, self.exported)

    def set(self, name: str, b) -> None:
        self.vars = self.vars.set(name, b)

    def unset(self, name: str) -> None:
        if name in self.vars:
            self.vars = self.vars.delete(name)

    def export(self, *names: str) -> None:
        self.exported = self.exported.set(names[0], None) if len(names) == 1 else \
            self.exported.update(dict.fromkeys(names))

    def unexport(self, name: str) -> None:
        if name in self.exported:
            self.exported = self.exported.delete(name)
