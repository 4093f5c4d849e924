"""bench/instructions.py counts the performance table's kv4lint cases with callgrind: what it reads of callgrind's
files, that a forked process's instructions are counted with its parent's, and that it counts the table's own
commands.  It measures nothing here but one tiny command (the bench measures; tests check shapes)."""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import instructions  # noqa: E402 - bench/instructions.py
import table  # noqa: E402 - bench/table.py

CALLGRIND_FILE = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  python -c pass
part: 1

desc: I1 cache:
positions: line
events: Ir
summary: {n}

fl=(1) ???
fn=(1) 0x000000000001c090
0 3
totals: {n}
"""


def test_totals_reads_the_summary_line(tmp_path):
    p = tmp_path / "cg.out"
    p.write_text(CALLGRIND_FILE.format(n=123456789))
    assert instructions.totals(p) == 123456789


def test_totals_refuses_a_file_that_is_not_callgrinds(tmp_path):
    p = tmp_path / "cg.out"
    p.write_text("events: Ir\n0 3\n")
    with pytest.raises(ValueError, match="no summary line"):
        instructions.totals(p)


def _fake_valgrind(tmp_path: Path, counts: list[tuple[int, str, str]], code: int = 0) -> Path:
    """A ``valgrind`` that writes one callgrind file per count, as callgrind does for a process and the children it
    forks (``%p``: each one's pid; a part dumped before the fork: ``.1``)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    files = "\n".join(f"write({n}, {pid!r}, {part!r})" for n, pid, part in counts)
    script = bindir / "valgrind"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        pattern = next(a for a in sys.argv if a.startswith("--callgrind-out-file=")).split("=", 1)[1]
        def write(n, pid, part):
            open(pattern.replace("%p", pid) + part, "w").write({CALLGRIND_FILE!r}.format(n=n))
        """) + files + f"\nsys.exit({code})\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bindir


def test_every_part_of_every_process_is_counted(tmp_path, monkeypatch):
    # the parent before its fork (a part), the parent after it, its child
    files = [(1000, "4000", ".1"), (250, "4000", ""), (5, "4001", "")]
    monkeypatch.setenv("PATH", str(_fake_valgrind(tmp_path, files)) + os.pathsep + os.environ["PATH"])
    assert instructions.callgrind(["true"]) == 1255


def test_a_command_that_fails_under_valgrind_is_an_error_not_a_count(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_valgrind(tmp_path, [(1000, "4000", "")], code=2)) + os.pathsep
                       + os.environ["PATH"])
    with pytest.raises(RuntimeError, match="exited 2 under valgrind"):
        instructions.callgrind(["false"])


def test_the_cases_are_the_tables_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # set here, so that the cases' dropping it is seen
    (tmp_path / "tree" / "sglang-src").mkdir(parents=True)
    got = {c["key"]: c for c in instructions.cases(tmp_path, str(tmp_path / "before"), tmp_path / "tree")}
    assert list(got) == ["shell_2mb", "shell_2mb_cached", *[f.key for f in table.LARGE_FILES[1:]], "cold", "warm"]
    # the 2 MB script again: its parse read from the cache the first, uncounted run stores (the baseline's its own)
    again = got["shell_2mb_cached"]
    cache = str(tmp_path / "cache-instructions-2mb")
    assert again["cmd"][-len(instructions.OPTS) - 4:] == [
        "check", str(table.LARGE_FILES[0].make(tmp_path)), *instructions.OPTS, "--cache-dir", cache]
    assert again["before_cmd"][-2:] == ["--cache-dir", cache + "-baseline"]
    assert again["floor"] == got["shell_2mb"]["floor"]
    (tmp_path / "tree" / "kv4lint-fixtures").mkdir()  # the fixtures too: their second run
    fixtures = {c["key"]: c for c in instructions.cases(tmp_path, None, tmp_path / "tree")}["warm_fixtures"]
    assert fixtures["cmd"][-len(instructions.OPTS) - 4:] == [
        "check", str(tmp_path / "tree" / "sglang-src"), str(tmp_path / "tree" / "kv4lint-fixtures"),
        *[o for o in instructions.OPTS if o != "--isolated"], "--cache-dir",
        str(tmp_path / "cache-instructions-fixtures")]
    for f in table.LARGE_FILES:
        c = got[f.key]
        path = str(f.make(tmp_path))
        assert c["cmd"][-len(instructions.OPTS) - 3:] == ["check", path, *instructions.OPTS, "--no-cache"]
        assert c["floor"] == [sys.executable, "-c", table.PARSERS[f.parser], path]
        # "before": the same command from the baseline's sources, as bench/run.py --baseline runs them
        assert c["before_cmd"][:3] == [sys.executable, "-P", "-c"] and c["before_cmd"][4:] == c["cmd"][1:]
        assert c["before_env"]["PYTHONPATH"].split(os.pathsep)[0] == str((tmp_path / "before").resolve())
        assert "PYTHONDONTWRITEBYTECODE" not in c["env"]
        assert c["env"]["PYTHONHASHSEED"] == c["before_env"]["PYTHONHASHSEED"] == "0"  # the same code counts the same
    assert got["cold"]["cmd"][-len(instructions.OPTS) - 3:] == [
        "check", str(tmp_path / "tree" / "sglang-src"), *instructions.OPTS, "--no-cache"]
    assert got["cold"]["floor"] is None
    # the second run: the cache its first, uncounted run fills; the baseline's its own (an index made by other code
    # is not read)
    cache = str(tmp_path / "cache-instructions")
    assert got["warm"]["cmd"][-2:] == ["--cache-dir", cache] and "--no-cache" not in got["warm"]["cmd"]
    assert got["warm"]["before_cmd"][-2:] == ["--cache-dir", cache + "-baseline"]


def test_flake8_is_counted_with_the_plugin_against_the_venv_without_it(tmp_path):
    """Where bench/run.py made its venv without kv4lint: flake8 -j1 from this venv (the plugin; the baseline's from
    its sources, first on the path) over a sample with the flake8 row's launch files, its floor the same flake8
    without the plugin."""
    (tmp_path / "tree" / "sglang-src" / "sglang").mkdir(parents=True)
    for i in range(90):
        (tmp_path / "tree" / "sglang-src" / "sglang" / f"m{i:02}.py").write_text("x = 1\n")
    without = tmp_path / "venv-noplugin" / "bin" / "python"
    without.parent.mkdir(parents=True)
    without.write_text("")
    got = {c["key"]: c for c in instructions.cases(tmp_path, str(tmp_path / "before"), tmp_path / "tree")}["flake8"]
    f8 = ["-m", "flake8", "--isolated", "--select", "E9", "-j", "1", "."]
    assert got["cmd"] == [sys.executable, *f8] and got["floor"] == [str(without), *f8]
    assert got["before_cmd"] == got["cmd"]
    assert got["before_env"]["PYTHONPATH"].split(os.pathsep)[0] == str((tmp_path / "before").resolve())
    sample = Path(got["cwd"])
    assert sample == tmp_path / "flake8-sample-instructions"
    launches = sorted(p.name for p in (sample / "launches").iterdir())
    assert launches == table.flake8_sample(tmp_path, tmp_path / "tree" / "sglang-src")[1]["launch_files"]
    assert len(launches) == 10 and len(list((sample / "sglang-src").rglob("*.py"))) == 30


def test_the_markdown_table_says_the_ratio_to_the_floor_and_the_change():
    rows = [{"key": "shell_2mb", "label": "one 2 MB shell script", "against": "tree-sitter-bash",
             "now": 16_540_000_000, "floor": 1_000_000_000, "before": 19_720_000_000},
            {"key": "cold", "label": "cold", "against": None, "now": 2_000_000_000}]
    assert instructions.markdown(rows).splitlines()[2:] == [
        "| one 2 MB shell script | 16.54e9 | tree-sitter-bash 1.000e9 | 16.54 × | 19.72e9 | -16.1 % |",
        "| cold | 2.00e9 | - | - | - | - |",
    ]


@pytest.mark.slow
def test_a_forked_child_is_counted_once_with_its_parent():
    # Not skipped without valgrind: what the fake above cannot show is callgrind's own handling of a fork (the tool
    # is on every machine of this project's kind; elsewhere this fails with "valgrind is not on PATH").
    work = "sum(range(500_000))"
    alone = instructions.callgrind([sys.executable, "-S", "-c", f"import os\n{work}"])
    # the work before the fork: a child that starts with its parent's counts would count it twice
    before = instructions.callgrind([sys.executable, "-S", "-c",
                                     f"import os\n{work}\nif os.fork() == 0:\n    os._exit(0)\nos.wait()"])
    # the work in the child: counted with the parent
    after = instructions.callgrind([sys.executable, "-S", "-c",
                                    f"import os\nif os.fork() == 0:\n    {work}\n    os._exit(0)\nos.wait()"])
    assert alone > 50_000_000
    assert alone * 0.95 < before < alone * 1.1
    assert alone * 0.95 < after < alone * 1.1
