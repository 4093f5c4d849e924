"""What kv4lint does with the cyclic collector in its own process (issue 37): the imports of its stages and parsers
are frozen out of the collector's way when they happen (kv4lint.base.process.imports_kept), so is what a run holds
when it forks its workers, and the Python screen's tree is freed before the collector runs again.  A host's process
(flake8, a script using the API) is left as it is."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

LAUNCH_MD = ("# Serve\n\n```bash\npython3 -m sglang.launch_server --model-path m --kv-cache-dtype fp4_e2m1\n```\n")
CONFIG_YAML = "model-path: m\nkv-cache-dtype: fp4_e2m1\n"
ARGV_JSON = '{"args": ["-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", "fp4_e2m1"]}\n'


def _run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("own", [True, False], ids=["kv4lint", "host"])
def test_the_stages_and_parsers_a_file_loads_are_frozen_in_kv4lints_process(tmp_path, own):
    """The runner with a frontend (JSON's, which loads no parser; this argv holds no launch it reads), then
    Markdown's parser, then YAML's: each frozen when a file first needs it, so that no collection after the file
    walks them; in a host's process nothing is frozen."""
    (tmp_path / "launch.json").write_text(ARGV_JSON)
    (tmp_path / "README.md").write_text(LAUNCH_MD)
    (tmp_path / "serve.yaml").write_text(CONFIG_YAML)
    out = _run(f"""
        import gc, sys
        from kv4lint.base import process
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline.read import lint_file
        if {own}:
            process.claim()
        def walked(name):  # the collector's generations, not the frozen objects
            mod, _, attr = name.rpartition(".")
            return any(o is getattr(sys.modules[mod], attr) for o in gc.get_objects())
        for name, lang, loaded in (("launch.json", "json", "kv4lint.pipeline.runner.lint_text"),
                                   ("README.md", "markdown", "markdown_it.MarkdownIt"),
                                   ("serve.yaml", "yaml", "ruamel.yaml.YAML")):
            rep = lint_file({str(tmp_path)!r} + "/" + name, Settings(), lang)
            assert rep.text is not None and not rep.errors, (name, rep)  # past the pre-filter
            print(name, walked(loaded))
        print(gc.get_freeze_count() > 0)
    """)
    assert out.split("\n") == [f"{name} {not own}" for name in ("launch.json", "README.md", "serve.yaml")] + [str(own)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked children")
@pytest.mark.parametrize("own", [True, False], ids=["kv4lint", "host"])
def test_what_a_run_holds_when_it_forks_is_frozen(tmp_path, own):
    for i in range(300):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    out = _run(f"""
        import gc
        from kv4lint.base import process
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline import parallel
        if {own}:
            process.claim()
        files = [({str(tmp_path)!r} + f"/m{{i}}.py", "python") for i in range(300)]
        held = object.__new__(type("Held", (), {{}}))  # made before the run: frozen with the rest
        reports = parallel.lint_many(files, Settings(), jobs=2)
        assert len(reports) == 300 and not any(r.errors for r in reports)
        print(any(o is held for o in gc.get_objects()), gc.get_freeze_count() > 0)
    """)
    assert out == ("False True" if own else "True False")


def test_the_screens_tree_is_freed_before_the_collector_runs_again(tmp_path):
    """A large Python file the screen rules out: its ``ast`` tree (a hundred thousand objects) is made and freed
    while the collector is paused, so that no collection walks it."""
    body = "".join(f"def f{i}(a, b):\n    return [a + {i}, b * {i}, (a, b)]\n" for i in range(6000))
    (tmp_path / "big.py").write_text("import sglang\n# ServerArgs(kv_cache_dtype='fp4_e2m1')\n" + body)
    out = _run(f"""
        import gc
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline.read import lint_file
        young = []
        gc.callbacks.append(lambda phase, info: phase == "start" and young.append(len(gc.get_objects(0))))
        rep = lint_file({str(tmp_path / "big.py")!r}, Settings(), "python")
        assert not rep.launches and not rep.errors, rep
        gc.collect(0)
        print(max(young))
    """)
    assert int(out) < 20_000
