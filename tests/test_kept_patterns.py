"""kv4lint's own process makes each regular expression from the program an earlier process of the same
installation kept for it, instead of parsing and compiling it again (kv4lint.base.process.keep_patterns; issue 37:
a run over SGLang's sources compiles about 290 patterns, 24 ms, and a check of one file 60).  The patterns are the
ones ``re`` makes; a host's process (flake8) keeps its ``re`` as it is."""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

import pytest

from test_dataclass_methods import _python  # a fresh interpreter that writes bytecode under tmp_path/pycache

# Patterns of every kind the program keeps: str and bytes, flags given and inline, named and numbered groups.
PATTERNS = [("(?P<flag>--[a-z-]+)(?:=(?P<value>\\S+))?", 0), ("^kv[_-]cache[_-]dtype$", 2), ("(a)(b)?c{2,5}", 0),
            (b"sglang\\s+serve", 0), ("(?x) nv fp4 | fp4_e2m1  # a comment", 0), ("[^\\W\\d]+", 32)]
SAMPLE = "--kv-cache-dtype=nvfp4 KV_CACHE_DTYPE aabcc abcccccc sglang serve nvfp4 fp4_e2m1 étape"

# What each pattern is and does, counted: the patterns re's own compiler made (what keep_patterns did not make from a
# kept program), and whether the programs' file exists.
SHOW = f"""
    import json, re, sys
    from kv4lint.base import process
    process.claim()
    process.keep_patterns()
    made = []
    own_compile = process._Patterns.compile
    def counting(p, flags=0):
        made.append(p)
        return own_compile(p, flags)
    process._Patterns.compile = counting
    out = []
    for p, flags in {PATTERNS!r}:
        c = re.compile(p, flags)
        text = {SAMPLE!r}.encode() if isinstance(p, bytes) else {SAMPLE!r}
        out.append([repr(c.pattern), c.flags, c.groups, dict(c.groupindex), repr(c.findall(text)),
                    c == own_compile(p, flags)])
    process.store_kept()
    print(json.dumps({{"made": len(made), "patterns": out}}))
"""


def _show(tmp_path, **env: str) -> dict:
    import json

    return json.loads(_python(tmp_path, SHOW, **env)[-1])


def _kept(tmp_path) -> list[Path]:
    return sorted((tmp_path / "pycache").rglob("regex-programs.*"))


def _plain() -> list[list]:
    """What ``re`` alone makes of the patterns (this process: no program kept)."""
    import re

    out = []
    for p, flags in PATTERNS:
        c = re.compile(p, flags)
        text = SAMPLE.encode() if isinstance(p, bytes) else SAMPLE
        out.append([repr(c.pattern), c.flags, c.groups, dict(c.groupindex), repr(c.findall(text)), True])
    return out


def test_the_next_process_makes_the_patterns_from_the_kept_programs(tmp_path):
    first = _show(tmp_path)
    assert first["made"] == len(PATTERNS)
    [kept] = _kept(tmp_path)
    assert kept.name == f"regex-programs.{sys.implementation.cache_tag}.marshal"
    assert kept.parent.parts[-2:] == ("kv4lint", "base")  # where Python keeps kv4lint.base's bytecode (the prefix)
    second = _show(tmp_path)
    assert second["made"] == 0  # none compiled again
    assert first["patterns"] == second["patterns"] == _plain()  # equal to re's own: flags, code, text, groups
    assert _kept(tmp_path) == [kept] and not list(kept.parent.glob("*.tmp"))


def test_nothing_is_kept_where_python_writes_no_bytecode(tmp_path):
    assert _show(tmp_path, PYTHONDONTWRITEBYTECODE="1")["made"] == len(PATTERNS)
    assert _kept(tmp_path) == []


def test_a_check_keeps_the_programs_its_command_compiled(tmp_path):
    """The console script: hooked before the command's parser is imported, the programs kept when it ends."""
    (tmp_path / "serve.sh").write_text("python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n")
    _python(tmp_path, """
        import sys
        sys.argv = ["kv4lint", "check", "--isolated", "--no-cache", "serve.sh"]
        from kv4lint.cli import console
        console()
    """)
    [kept] = _kept(tmp_path)
    _magic, _form, table = marshal.loads(kept.read_bytes())
    assert len(table) > 20  # kv4lint's, the argument parser's


# What a file holds instead of what kv4lint writes, made from what the first run wrote.
OTHER_SHAPES = {
    "not-marshal": lambda magic, form, table: b"not marshal at all",
    "other-interpreter": lambda magic, form, table: marshal.dumps((b"\0\0\r\n", form, table)),
    "other-sre": lambda magic, form, table: marshal.dumps((magic, (form[0], form[1] + 1, *form[2:]), table)),
    "other-format": lambda magic, form, table: marshal.dumps((magic, (form[0] + 1, *form[1:]), table)),
    "not-programs": lambda magic, form, table: marshal.dumps((magic, form, {k: k for k in table})),
    "bad-group-names": lambda magic, form, table: marshal.dumps(
        (magic, form, {k: (*v[:3], {1: 1}, v[4]) for k, v in table.items()})),
}


@pytest.mark.parametrize("shape", OTHER_SHAPES)
def test_a_file_of_another_shape_is_compiled_past_and_written_again(tmp_path, shape):
    _show(tmp_path)
    [kept] = _kept(tmp_path)
    kept.write_bytes(OTHER_SHAPES[shape](*marshal.loads(kept.read_bytes())))
    again = _show(tmp_path)
    assert again["made"] == len(PATTERNS) and again["patterns"] == _plain()
    assert _show(tmp_path)["made"] == 0  # written whole again by the run that compiled past it


def test_a_program_sre_refuses_is_compiled_and_kept_again(tmp_path):
    _show(tmp_path)
    [kept] = _kept(tmp_path)
    magic, form, table = marshal.loads(kept.read_bytes())
    key = next(k for k in table if k[0] == PATTERNS[0][0])
    table[key] = (table[key][0], b"\xff\xff\xff\xff" * 3, *table[key][2:])  # not an SRE program
    kept.write_bytes(marshal.dumps((magic, form, table)))
    again = _show(tmp_path)
    assert again["made"] == 1 and again["patterns"] == _plain()
    assert _show(tmp_path)["made"] == 0


def test_a_folder_that_cannot_be_written_leaves_no_file_and_no_error(tmp_path):
    _show(tmp_path)
    [kept] = _kept(tmp_path)
    kept.unlink()
    kept.mkdir()  # the rename over it fails, whoever runs the tests (root too)
    assert _show(tmp_path)["made"] == len(PATTERNS)
    assert not [p for p in (tmp_path / "pycache").rglob("*") if p.suffix == ".tmp"]


def test_a_pattern_made_of_a_sets_items_is_kept_once_and_not_written_again(tmp_path):
    """``"[" + "".join(a_set) + "]"`` is another string in each process (str hashes are salted): its first order is
    kept, the others are compiled, and a run that met only another order writes nothing."""
    code = """
        import os, re
        from kv4lint.base import process
        process.claim()
        process.keep_patterns()
        writes, reads = [], []
        store, load = process._store_table, process._load_table
        process._store_table = lambda *a: (writes.append(1), store(*a))
        process._load_table = lambda *a: (reads.append(1), load(*a))[1]
        re.compile("[" + "".join({"!", "#", "$", "%", "&", "*", "+", "-", ":", "@", "^", "_", "~"}) + "]")
        process.store_kept()
        print(len(writes), len(reads))
    """
    runs = [_python(tmp_path, code, PYTHONHASHSEED=str(seed))[-1] for seed in (1, 2, 3)]
    assert runs == ["1 2", "0 1", "0 1"]  # the next runs read the file once (to load it), and write nothing
    _magic, _form, table = marshal.loads(_kept(tmp_path)[0].read_bytes())
    assert len(table) == 1


def test_another_order_kept_meanwhile_by_another_process_is_not_written_again(tmp_path, monkeypatch):
    from kv4lint.base import process

    path = tmp_path / "programs.marshal"
    monkeypatch.setattr(process, "_patterns_file", lambda: str(path))
    monkeypatch.setattr(process.sys, "dont_write_bytecode", False)
    program = (0, b"\0\0\0\0", 0, {}, (None,))
    process._store_table(str(path), process._program_form(), {("[ab]", 0): program}, 10)  # the other process's
    monkeypatch.setattr(process._Patterns, "table", {("[ba]", 0): program})  # loaded before it was written
    monkeypatch.setattr(process._Patterns, "added", [("[ba]", 0)])
    process.store_kept()
    assert marshal.loads(path.read_bytes())[2] == {("[ab]", 0): program}


def test_a_locale_pattern_is_not_kept_and_debug_is_left_to_re(tmp_path):
    out = _python(tmp_path, """
        import io, re, contextlib
        from kv4lint.base import process
        process.claim()
        process.keep_patterns()
        re.compile(b"[a-z]+", re.LOCALE)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            re.compile("debug-me", re.DEBUG)
        print(len(process._Patterns.table), "LITERAL" in printed.getvalue())
    """)
    assert out == ["0 True"]


def test_a_forked_child_keeps_only_what_it_compiled(tmp_path):
    out = _python(tmp_path, """
        import os, re
        from kv4lint.base import process
        process.claim()
        process.keep_patterns()
        re.compile("before the fork")
        pid = os.fork()
        if pid == 0:
            print("child", list(process._Patterns.added), flush=True)
            re.compile("in the child")
            process.store_kept()
            os._exit(0)
        os.waitpid(pid, 0)
        process.store_kept()
        import marshal
        _m, _f, table = marshal.loads(open(process._patterns_file(), "rb").read())
        print(sorted(k[0] for k in table))
    """)
    assert out == ["child []", "['before the fork', 'in the child']"]


def test_a_hosts_re_is_left_as_it_is(tmp_path):
    """flake8 with the plugin, the API: kv4lint's imports and keep_patterns leave the host's re's compiler alone
    (its own patterns would cost it the table's reading for the few kv4lint's imports compile)."""
    (tmp_path / "mod.py").write_text("import re\nPATTERN = re.compile('--kv-cache-dtype[= ](\\\\S+)')\n")
    assert _python(tmp_path, """
        import re
        from kv4lint.base import process
        own = re._compiler.compile
        with process.imports_kept():
            import mod
        process.keep_patterns()
        print(re._compiler.compile is own, process._Patterns.table)
    """) == ["True None"]


def test_no_more_patterns_are_kept_or_read_than_the_bound(tmp_path, monkeypatch):
    from kv4lint.base import process

    path = tmp_path / "programs.marshal"
    monkeypatch.setattr(process, "_patterns_file", lambda: str(path))
    monkeypatch.setattr(process.sys, "dont_write_bytecode", False)
    monkeypatch.setattr(process, "_MAX_PATTERNS", 2)
    program = (0, b"\0\0\0\0", 0, {}, (None,))
    monkeypatch.setattr(process._Patterns, "table", {("a", 0): program, ("b", 0): program, ("c", 0): program})
    monkeypatch.setattr(process._Patterns, "added", [("a", 0), ("b", 0), ("c", 0)])
    process.store_kept()
    _magic, _form, table = marshal.loads(path.read_bytes())
    assert sorted(table) == [("a", 0), ("b", 0)]  # the first two: no more
    assert process._load_patterns() == {("a", 0): program, ("b", 0): program}
    monkeypatch.setattr(process, "_MAX_PATTERNS", 1)
    assert process._load_patterns() == {}


def test_keeping_the_programs_is_never_an_error(monkeypatch):
    """It runs as a process ends (a forked child's ``finally`` before ``os._exit``): whatever goes wrong, nothing
    is kept and nothing is raised."""
    from kv4lint.base import process

    def broken(*a):
        raise RuntimeError("a disk that fails in a new way")

    monkeypatch.setattr(process, "_load_table", broken)
    monkeypatch.setattr(process._Patterns, "table", {("[ab]", 0): (0, b"\0\0\0\0", 0, {}, (None,))})
    monkeypatch.setattr(process._Patterns, "added", [("[ab]", 0)])
    process.store_kept()
    assert process._Patterns.added == []
