"""The plain records of the start-up path (kv4lint.base.record) behave as the dataclasses they replaced: equal field by
field, printed with their fields, frozen ones unchangeable and hashable, and all of them survive pickling (a
process pool's workers send reports back, with their decoded text) and the cache's JSON."""

from __future__ import annotations

import copy
import pickle

import pytest

from kv4lint.base.file_error import FileError
from kv4lint.base.file_report import FileReport
from kv4lint.base.record import Frozen, Record, fields
from kv4lint.base.settings import Settings
from kv4lint.base.source import Text
from kv4lint.pipeline import cache
from kv4lint.settings.options import BY_NAME
from kv4lint.settings.project import Pin


def test_records_compare_and_print_field_by_field():
    assert FileError("a.sh", "bad", 3) == FileError("a.sh", "bad", 3, internal=False)
    assert FileError("a.sh", "bad", 3) != FileError("a.sh", "bad", 4)
    assert FileError("a.sh", "bad") != ("a.sh", "bad", None, False)
    assert repr(FileError("a.sh", "bad")) == "FileError(path='a.sh', message='bad', line=None, internal=False)"
    assert Settings(gpu="h100") == Settings(gpu="h100") != Settings(gpu="b200")


def test_mutable_records_get_fresh_defaults_and_no_hash():
    a, b = FileReport("a.py"), FileReport("b.py")
    a.findings.append("x")
    assert b.findings == [] and Settings().exclude is not Settings().exclude
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(AttributeError):
        a.no_such_field = 1  # slots: a misspelt field is an error, not a new attribute


def test_frozen_records_refuse_assignment_and_hash():
    t = Text("x = 1\n", "latin-1", b"")
    with pytest.raises(AttributeError):
        t.text = "y"
    with pytest.raises(AttributeError):
        del t.bom
    assert hash(t) == hash(Text("x = 1\n", "latin-1")) and {Pin("0.5.23", "r.txt"), Pin("0.5.23", "r.txt")} == {
        Pin("0.5.23", "r.txt")}
    assert BY_NAME["gpu"].key == "gpu" and hash(BY_NAME["gpu"])


@pytest.mark.parametrize("record", [Text("é\n", "utf-16-le", b"\xff\xfe"), Pin("0.5.23", "r.txt", exact=False),
                                    FileReport("a.py", "python", errors=[FileError("a.py", "bad", 2)], launches=1,
                                               text=Text("x\n")),
                                    Settings(gpu="h100", exclude=["build"], sources={"gpu": "--gpu"})])
def test_records_survive_pickle_and_copy(record):
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.copy(record) == record and copy.deepcopy(record) == record


def test_the_cache_reads_each_records_fields_from_its_one_list():
    err = FileError("a.sh", "bad", 2, internal=True)
    doc = cache.encode(err, FileError)
    assert doc == ["a.sh", "bad", 2, True]  # the fields' values, in the order fields() gives
    assert cache.decode(doc, FileError) == err
    key = cache.settings_key(Settings(gpu="h100"))
    assert key == cache.settings_key(Settings(gpu="h100", cache_dir="/elsewhere"))  # where the cache is: no part
    assert key != cache.settings_key(Settings(gpu="b200"))


def _records(cls):
    for sub in cls.__subclasses__():
        if sub is not Frozen:
            yield sub
        yield from _records(sub)


def test_every_records_init_takes_its_fields_in_order():
    """The cache decodes a record by its field names and pickle rebuilds a frozen one from its fields in order:
    both through ``__init__``."""
    import importlib
    import inspect

    for module in ("settings.config", "files.discover", "base.file_report", "settings.project", "reporters.result",
                   "base.settings", "base.source", "fixes.writer", "settings.options", "base.model"):
        importlib.import_module(f"kv4lint.{module}")
    found = {c.__name__: c for c in _records(Record)}
    assert {"FileError", "FileReport", "Settings", "Option", "Overrides", "Pin", "ConfigFile", "Candidate",
            "Discovery", "RunResult", "Text", "Snapshot", "Span", "Value", "Hint", "Launch", "Edit", "Fix",
            "Position", "Finding", "ScanResult"} <= set(found)
    for name, cls in found.items():
        assert list(inspect.signature(cls.__init__).parameters)[1:] == list(fields(cls)), name


def test_records_of_one_field_or_none_compare_and_hash_by_their_values():
    """Records compare and hash by a tuple of their fields' values (``_values``: in C from two fields up)."""
    class One(Frozen):
        __slots__ = ("a",)

        def __init__(self, a):
            self._set("a", a)

    class Two(Frozen):
        __slots__ = ("a", "b")

        def __init__(self, a, b):
            self._set("a", a)
            self._set("b", b)

    assert One(1) == One(1) != One(2) and hash(One(1)) == hash((1,)) and One._values(One(1)) == (1,)
    assert Two(1, 2) == Two(1, 2) != Two(2, 1) and hash(Two(1, 2)) == hash((1, 2)) and One(1) != Two(1, 2)
    assert Frozen() == Frozen() and hash(Frozen()) == hash(())


def test_values_reads_a_records_fields_and_a_dataclasss_in_order():
    """``values``: what a memo key reads of a record, a kv4lint record or a stage's own dataclass (the target),
    whatever its number of fields."""
    import dataclasses

    from kv4lint.base.record import values
    from kv4lint.target import Target

    @dataclasses.dataclass
    class Pair:
        a: int
        b: list

    @dataclasses.dataclass
    class Single:
        a: int

    @dataclasses.dataclass
    class Empty:
        pass

    assert values(FileError("a.sh", "bad", 3)) == ("a.sh", "bad", 3, False)
    assert values(Pair(1, [2])) == (1, [2]) and values(Single(5)) == (5,) and values(Empty()) == ()
    target = Target(sglang_version="0.5.23")
    assert values(target) == tuple(getattr(target, f.name) for f in dataclasses.fields(Target))
