"""Plain records for the start-up path: what ``@dataclass`` gave those classes, without its cost.

Every ``kv4lint check`` imports the classes a run over files without launches uses (the settings, the
option table, a file's report, the run's result ...).  As dataclasses they cost ~12 ms a start:
``dataclasses`` imports ``inspect`` (``ast``, ``dis``, ``tokenize`` ...) and ``typing``, and each
``@dataclass`` compiles its generated methods anew on every start, where a hand-written class's bytecode
is cached in ``__pycache__`` (issue 21).  So such a class is written out:

- its fields are its ``__slots__``: the one list of them, which the class's ``__init__`` (written out,
  with the defaults) sets, and which every reader of the fields uses (:func:`fields`: the cache's encoder,
  the settings digest);
- :class:`Record` compares and prints records field by field, as a dataclass does; :class:`Frozen`
  also refuses assignment after ``__init__`` (``AttributeError``, as a frozen dataclass) and is hashable.

The rich model of a launch (:mod:`kv4lint.base.model`) is made of these records too: a second run loads it to
print the findings it stored, and nothing else of that run needs ``dataclasses``.  So are most classes a run that
judges a launch builds (the option tables', the rules', the frontends' partial values): as 33 dataclasses (4
remain) they compiled 14 ms of methods in the cold run's parent and in flake8's process (issue 37).
:func:`values` gives a record's field values in order; :func:`replace` copies a record with some fields changed,
as ``dataclasses.replace`` does; both take a stage's own dataclass too (the target).  A leaf: it imports only
``operator`` (and ``dataclasses`` only for such a dataclass, whose module loaded it).
"""

from operator import attrgetter

__all__ = ["Frozen", "Record", "fields", "replace", "values"]


def fields(record) -> tuple:
    """The field names of a record or record class, in order."""
    cls = record if isinstance(record, type) else type(record)
    return cls.__slots__


def values(record) -> tuple:
    """The values of a record's fields, in order; of a dataclass's too (a stage's own, such as the target: a memo
    key reads every field of either), as :func:`replace` copies both."""
    if isinstance(record, Record):
        return record._values(record)
    get = _dataclass_values.get(type(record))
    if get is None:
        import dataclasses

        names = tuple(f.name for f in dataclasses.fields(record))
        get = _dataclass_values[type(record)] = (
            attrgetter(*names) if len(names) > 1 else lambda r, names=names: tuple(getattr(r, f) for f in names))
    return get(record)


_dataclass_values: dict = {}  # a dataclass -> the getter of its fields' values (values)


def replace(record, /, **changes):
    """A copy of ``record`` with the fields ``changes`` names changed, as ``dataclasses.replace`` makes one: built
    through the class's ``__init__`` (which takes every field by name), so a frozen record's checks run again.  A
    dataclass (a stage's own records) is passed to ``dataclasses.replace``, which its module has loaded."""
    if not isinstance(record, Record):
        import dataclasses

        return dataclasses.replace(record, **changes)
    names = record.__slots__
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {unknown[0]!r}")
    return type(record)(**{f: changes[f] if f in changes else getattr(record, f) for f in names})


class Record:
    """A mutable record: equal to a record of its own class with equal fields; printed with its fields."""

    __slots__ = ()
    __hash__ = None  # mutable: unhashable, as a dataclass with eq and without frozen
    _values = staticmethod(lambda record: ())  # the fields' values, as a tuple in order (each class its own)

    def __init_subclass__(cls, **kwargs):
        # With two fields or more, operator.attrgetter gives the tuple in C: a 2 MB script hashes 180,000 spans, and
        # a generator of getattr costs three times as much.  (An attrgetter is no descriptor: self._values(self).)
        super().__init_subclass__(**kwargs)
        names = cls.__slots__
        if len(names) > 1:
            cls._values = attrgetter(*names)
        else:
            cls._values = staticmethod(lambda record, names=names: tuple(getattr(record, f) for f in names))

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values(self) == self._values(other)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self.__slots__)})"


class Frozen(Record):
    """A record that does not change after ``__init__`` (which sets its fields with :meth:`_set`, and takes
    them in the order of ``__slots__``: pickle and copy rebuild a frozen record through it)."""

    __slots__ = ()

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r} of a {type(self).__name__}")

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __reduce__(self):  # pickle and copy: rebuilt through __init__ (setattr refuses)
        return type(self), tuple(getattr(self, f) for f in self.__slots__)
