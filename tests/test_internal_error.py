"""Internal errors are not findings (issue 20, item 4): one line naming kv4lint's version, the file being
read and where to report it; the traceback only with --verbose; exit 2, never 1."""

from __future__ import annotations

import hostile
from kv4lint import __version__
from kv4lint.base.internal_error import report_to

# Run as a user runs it (a subprocess), with a bug planted: the launcher below makes linting
# good.sh raise (kv4lint has no switch for that), then calls the CLI's main as the console script does.
LAUNCHER = """
import sys
import kv4lint.pipeline.runner as runner

real = runner.lint_text

def lint_text(path, *a, **k):
    if path.endswith("good.sh"):
        raise RuntimeError("planted bug " + "x" * 500)
    return real(path, *a, **k)

runner.lint_text = lint_text
from kv4lint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(tmp_path, *args):
    launcher = tmp_path / "launcher.py"
    launcher.write_text(LAUNCHER)
    root = hostile.good_tree(tmp_path / "t")
    cp = hostile.run([hostile.PY, str(launcher), *args, *hostile.CLI_TARGET, "--jobs", "1", "--no-cache", str(root)])
    return root, cp.returncode, *hostile.text(cp)


def test_a_crash_while_reading_a_file_exits_2_and_names_it(tmp_path):
    root, rc, out, err = _run(tmp_path, "check")
    assert rc == 2, (rc, out, err)
    lines = [ln for ln in out.splitlines() if "internal error" in ln]
    assert len(lines) == 1, out
    line = lines[0]
    assert line.startswith(f"{root / 'good.sh'}: error: internal error (RuntimeError: planted bug")
    assert f"kv4lint {__version__}" in line and report_to() in line and "--verbose" in line
    assert len(line) < 400, "the exception's text is shortened"
    assert "Traceback" not in out + err
    assert f"{root / 'good.py'}:" in out and " KV406" in out  # the other files are still checked


def test_verbose_prints_the_traceback(tmp_path):
    _, rc, out, err = _run(tmp_path, "check", "--verbose")
    assert rc == 2
    assert "Traceback (most recent call last)" in err and "planted bug" in err


def test_fix_with_a_crash_exits_2(tmp_path):
    root, rc, out, err = _run(tmp_path, "fix")
    assert rc == 2, (rc, out, err)
    assert (root / "good.py").read_text() == hostile.GOOD_PY_FIXED  # the rest is still fixed


def test_a_crash_outside_any_file_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    from kv4lint import cli
    from kv4lint.cli import check

    def boom(ns, resolver, **kwargs):
        raise ValueError("no such thing\nsecond line")

    monkeypatch.setattr(check, "collect", boom)
    root = hostile.good_tree(tmp_path / "t")
    assert cli.main(["check", "--isolated", "--no-cache", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kv4lint: internal error (ValueError: no such thing second line)")
    assert f"kv4lint {__version__}" in err and report_to() in err
    assert cli.main(["check", "--isolated", "--no-cache", "--verbose", str(root)]) == 2
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_crash_while_fixing_names_the_file(monkeypatch, capsys, tmp_path):
    from kv4lint.cli import main
    from kv4lint.pipeline import fix_engine

    def boom(*a, **k):
        raise KeyError("planted")

    monkeypatch.setattr(fix_engine, "fix_text", boom)
    root = hostile.good_tree(tmp_path / "t")
    (root / "good.py").unlink()
    assert main(["fix", *hostile.CLI_TARGET, "--no-cache", "--jobs", "1", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kv4lint: internal error while reading {root / 'good.sh'} (KeyError: 'planted')"), err
    assert (root / "good.sh").read_text() == hostile.GOOD_SH


def test_a_crash_in_one_block_of_a_document_exits_2(monkeypatch, capsys, tmp_path):
    """A frontend's own guard (one Markdown block raised): the other blocks are still read, exit 2."""
    from kv4lint.cli import main
    from kv4lint.frontends import markdown

    real = markdown._block

    def block(sub, b, path, text):
        if any("boom" in ln.text for ln in b.lines):
            raise IndexError("planted")
        return real(sub, b, path, text)

    monkeypatch.setattr(markdown, "_block", block)
    doc = hostile.write(tmp_path / "README.md",
                        f"```bash\n# boom\n{hostile.LAUNCH}\n```\n\n```bash\n{hostile.LAUNCH}\n```\n")
    assert main(["check", *hostile.CLI_TARGET, "--no-cache", "--jobs", "1", str(doc)]) == 2
    out = capsys.readouterr().out
    assert f"{doc}:2: error: internal error while scanning a bash block (IndexError: planted): a bug in kv4lint" \
        in out, out
    assert f"{doc}:7:" in out and " KV406" in out, out


def test_report_to_names_the_tracker_the_metadata_declares(monkeypatch):
    import importlib.metadata as md

    from kv4lint.base import internal_error

    class Meta:
        def get_all(self, key):
            return ["Homepage, https://example.org/kv4lint", "Issues, https://example.org/kv4lint/issues"]

    monkeypatch.setattr(md, "metadata", lambda name: Meta())
    assert internal_error.report_to() == "https://example.org/kv4lint/issues"
    monkeypatch.setattr(md, "metadata", lambda name: (_ for _ in ()).throw(md.PackageNotFoundError(name)))
    assert internal_error.report_to() == internal_error.REPORT_FALLBACK


def test_a_crash_reading_one_python_launch_prints_its_traceback_with_verbose(monkeypatch, capsys, tmp_path):
    """The Python frontend's own guard (one launch raised; issue 34, item 8: a KeyError there printed no traceback
    with --verbose): the other launches are still read, exit 2, and --verbose shows where it failed."""
    from kv4lint.base import internal_error
    from kv4lint.cli import main
    from kv4lint.frontends.python.scanner import Scanner

    real = Scanner.launch

    def launch(self, call, scope, kind):
        if "boom" in self.text[self.start(call):self.start(call) + 400]:
            raise KeyError("planted")
        return real(self, call, scope, kind)

    monkeypatch.setattr(Scanner, "launch", launch)
    monkeypatch.setattr(internal_error, "verbose", False)  # main sets it from --verbose
    src = hostile.write(tmp_path / "serve.py", "import subprocess\n" + hostile.GOOD_PY.split("\n", 2)[2].replace(
        "\"fp4_e2m1\"", "\"fp4_e2m1\", \"boom\"") + hostile.GOOD_PY.split("\n", 2)[2])
    assert main(["check", *hostile.CLI_TARGET, "--no-cache", "--jobs", "1", "--verbose", str(src)]) == 2
    out, err = capsys.readouterr()
    assert f"{src}:2: error: internal error reading this launch (KeyError: 'planted')" in out, out
    assert f"{src}:3:" in out and " KV406" in out, out
    assert "Traceback (most recent call last)" in err and "KeyError: 'planted'" in err, err
