"""docs/performance.md's table is bench/run.py's (``--markdown``): the same rows, labels, baselines and
targets, and measured cells of the shape the bench prints; the README quotes the same table.  No timing here: the
bench measures, this test only checks that the pages quote it (re-run ``bench/run.py --only table --markdown``
and paste when a row changes, in both)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = Path("docs") / "performance.md"  # where the table is quoted, from the repository's root
sys.path.insert(0, str(ROOT / "bench"))

import table  # noqa: E402 - bench/table.py

START, END = "<!-- bench:table -->", "<!-- /bench:table -->"
RATIO = r"(?:-|\d+\.\d\d ×(?: \(\d+ ms\)| \(\d+\.\d\d s\))?)"
SECONDS = r"(?:-|\d+ ms|\d+\.\d\d s)"


def _quoted_table(page: Path = PAGE) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert START in text and END in text, f"{page} has no {START} ... {END} section"
    block = text[text.index(START) + len(START):text.index(END)]
    return [ln for ln in block.splitlines() if ln.startswith("|")]


def test_the_performance_page_quotes_the_benchs_table():
    lines = _quoted_table()
    assert lines[0] == table.HEADER
    assert lines[1] == "|---|---|---|---|---|"
    body = lines[2:]
    rows = table.rows()
    assert [ln.split(" | ")[0].removeprefix("| ") for ln in body] == [r.label for r in rows]
    for ln, row in zip(body, rows):
        cells = [c.strip() for c in ln.strip().strip("|").split(" | ")]
        assert len(cells) == 5, ln
        label, ratio, baseline, before, target = cells
        assert re.fullmatch(RATIO, ratio), ln
        assert re.fullmatch(re.escape(row.against) + " " + SECONDS, baseline), ln
        assert re.fullmatch(RATIO, before), ln
        assert re.fullmatch(re.escape(table.target_cell(row)) + r"(?:: met|: missed)?", target), ln


def test_the_readme_quotes_the_same_table():
    assert _quoted_table(Path("README.md")) == _quoted_table()


def test_the_markdown_the_bench_prints_passes_the_same_check(monkeypatch, tmp_path):
    """What ``--markdown`` prints for a run is what the test above accepts (so a paste is enough)."""
    rows = table.rows()
    now = [{"key": r.key, "ratio": 1.234, "subject_s": 0.5, "baseline_s": 0.05,
            "met": None if r.target is None else True} for r in rows]
    before = [dict(x, ratio=2.5) for x in now]
    page = f"# x\n\n{START}\n{table.markdown(now, before)}{END}\n"
    (tmp_path / PAGE).parent.mkdir()
    (tmp_path / PAGE).write_text(page, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    test_the_performance_page_quotes_the_benchs_table()


def test_the_installed_copy_runs_kv4lint_and_flake8_from_the_installed_venv(tmp_path):
    """A case with kv4lint (its command, or flake8 run by this venv's Python) gets an ``@installed`` twin from the
    venv kv4lint is installed in as users install it; a case without kv4lint does not."""
    import types

    import run  # bench/run.py, beside table.py

    ctx = object.__new__(run.TableContext)
    ctx.ns = types.SimpleNamespace(baseline=None)
    ctx.kv4 = [str(Path(sys.executable).parent / "kv4lint")]
    ctx.env_py = {"PYTHONPATH": "x", "HOME": "h"}
    ctx.installed = tmp_path / "venv-kv4lint"
    f8 = ["-m", "flake8", "--isolated", "--select", "E9", "-j", "1", "."]
    made = ctx.case("flake8-with", [sys.executable, *f8], kv4lint=True, cwd="sample")
    assert [(c.name, c.cmd) for c in made] == [("flake8-with", [sys.executable, *f8]),
                                               ("flake8-with@installed", [str(ctx.installed / "bin" / "python"),
                                                                          *f8])]
    assert made[1].env == {"HOME": "h"}
    made = ctx.case("kv4lint:cold", [*ctx.kv4, "check", "t"], kv4lint=True)
    assert made[1].cmd == [str(ctx.installed / "bin" / "kv4lint"), "check", "t"]
    assert [c.name for c in ctx.case("flake8-without", ["/other/python", *f8])] == ["flake8-without"]


def test_the_2mb_script_is_a_script_that_parses(tmp_path):
    """The 2 MB row's file is whole fixtures repeated: cut inside one (a ``for`` without its ``done``), the rest
    of the file was one syntax error, read by tree-sitter's recovery rather than as the script it stands for."""
    import shapes
    import tree_sitter
    import tree_sitter_bash

    path = shapes.shell_2mb(tmp_path)
    data = path.read_bytes()
    assert shapes.MB2 * 0.99 < len(data) <= shapes.MB2
    tree = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())).parse(data)
    assert not tree.root_node.has_error
