"""lint_many: the same reports, in the same order, with or without a process pool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kv4lint.base.settings import Settings
from kv4lint.pipeline import parallel

LAUNCH = ("#!/usr/bin/env bash\nexport HIP_VISIBLE_DEVICES=0\n"
          "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
          "--kv-cache-dtype fp4_e2m1 --attention-backend triton\n")


def _tree(tmp_path, n_plain=300, n_launch=7):
    files = []
    for i in range(n_plain):
        p = tmp_path / f"d{i % 7}" / f"mod{i}.py"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"def f{i}(x):\n    return x + {i}\n")
        files.append((str(p), "python"))
    for i in range(n_launch):
        p = tmp_path / "launch" / f"serve{i}.sh"
        p.parent.mkdir(exist_ok=True)
        p.write_text(LAUNCH)
        files.append((str(p), "shell"))
    noshebang = tmp_path / "tool"
    noshebang.write_text("#!/usr/bin/env bash\n" + LAUNCH.split("\n", 1)[1])  # language from the shebang
    files.append((str(noshebang), None))
    binary = tmp_path / "blob.sh"
    binary.write_bytes(b"sglang --kv-cache-dtype nvfp4\0\0\0")
    files.append((str(binary), "shell"))
    files.append((str(tmp_path / "missing.py"), "python"))
    return files


def _view(reports):
    return [(r.path, r.language, r.scanned, r.launches,
             [(f.code, f.start.line, f.start.column, f.message) for f in r.findings],
             [(e.message, e.line) for e in r.errors]) for r in reports]


@pytest.mark.parametrize("forked", [True, False], ids=["fork", "executor"])
def test_pool_gives_the_sequential_reports_in_order(tmp_path, monkeypatch, forked):
    if forked and not parallel._can_fork():
        pytest.skip("no fork here")
    monkeypatch.setattr(parallel, "_can_fork", lambda: forked)
    files = _tree(tmp_path)
    assert len(files) >= parallel.SEQUENTIAL_BELOW
    settings = Settings(sglang_version="0.5.23")
    seq = parallel.lint_many(files, settings, jobs=1)
    par = parallel.lint_many(files, settings, jobs=2)
    assert [r.path for r in par] == [p for p, _ in files]
    assert _view(par) == _view(seq)
    # the run did real work: findings in the launch scripts, errors for the binary and the missing file
    assert sum(len(r.findings) for r in par) >= 8
    assert any("binary" in e.message for r in par for e in r.errors)
    assert any("cannot read" in e.message for r in par for e in r.errors)
    shebang = next(r for r in par if r.path.endswith("tool"))
    assert shebang.language == "shell" and shebang.findings
    # text comes back only where the fix engine may need it
    assert all((r.text is not None) == bool(r.findings) for r in par if r.path.endswith(".sh"))


@pytest.mark.parametrize("forked", [True, False], ids=["fork", "executor"])
def test_progress_counts_every_file(tmp_path, monkeypatch, forked):
    can = parallel._can_fork()
    monkeypatch.setattr(parallel, "_can_fork", lambda: forked and can)
    files = _tree(tmp_path, n_plain=290, n_launch=3)
    for jobs in (1, 2):
        seen = []
        parallel.lint_many(files, Settings(), jobs=jobs, progress=seen.append)
        assert sum(seen) == len(files)


def test_few_files_never_start_a_pool(tmp_path, monkeypatch):
    files = _tree(tmp_path, n_plain=20, n_launch=2)

    def no_pool(*a, **k):
        raise AssertionError("a pool was started for a few files")

    monkeypatch.setattr(parallel, "_pool", no_pool)
    reports = parallel.lint_many(files, Settings(), jobs=8)
    assert len(reports) == len(files)


def test_default_jobs_is_positive():
    assert parallel.default_jobs() >= 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork to inherit the patched function")
def _waits_once_for(marker, timeout: float = 60.0):
    """A function that holds this process, the first time it is called, until ``marker`` exists: a parent that
    waits on its first file leaves the chunks to the children, so that what a test says of a child is sure to
    happen (and a child that never does it costs one timeout, not one per file)."""
    import time

    waited = []

    def wait() -> None:
        if not waited:
            waited.append(True)
            end = time.monotonic() + timeout
            while not os.path.exists(marker) and time.monotonic() < end:
                time.sleep(0.005)

    return wait


def test_a_dead_worker_does_not_lose_files(tmp_path, monkeypatch):
    files = _tree(tmp_path, n_plain=300, n_launch=4)
    parent = os.getpid()
    real = parallel.lint_file
    died = tmp_path / "died"
    wait = _waits_once_for(died)

    def dying(path, settings, language=None, walked=None):
        if os.getpid() != parent:
            died.touch()
            os._exit(3)  # as a crash or the OOM killer would: the chunk it took is not reported
        wait()
        return real(path, settings, language, walked)

    monkeypatch.setattr(parallel, "lint_file", dying)
    reports = parallel.lint_many(files, Settings(), jobs=2)
    assert died.exists()  # a child did die with a chunk
    assert [r.path for r in reports] == [p for p, _ in files]
    assert _view(reports) == _view(parallel.lint_many(files, Settings(), jobs=1))


def test_non_candidates_do_not_import_parsers(tmp_path):
    """A file without a launch costs its read: no libcst, no tree-sitter, no YAML parser, and none of the
    stages past the pre-filter (the runner, the frontends, the rules, SGLang's option tables)."""
    plain = tmp_path / "plain.py"
    plain.write_text("import sglang\n\ndef version():\n    return sglang.__version__\n")
    script = tmp_path / "plain.sh"
    script.write_text("#!/bin/sh\necho sglang is installed\n")
    code = textwrap.dedent(f"""
        import sys
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline.read import lint_file
        for path, lang in [({str(plain)!r}, "python"), ({str(script)!r}, "shell")]:
            rep = lint_file(path, Settings(), lang)
            assert not rep.findings and not rep.errors, rep
        later = ("kv4lint.pipeline.runner", "kv4lint.frontends", "kv4lint.rules", "kv4lint.sglang.options")
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in ("libcst", "tree_sitter", "tree_sitter_bash", "ruamel", "nbformat")
                       or m.startswith(later))
        print(",".join(heavy))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"imported for files without a launch: {r.stdout.strip()}"


def _append(log, line: str) -> None:
    """One line at the end of ``log``, whole, whichever process writes it."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork to inherit the patched function")
def test_forked_children_share_the_work_and_each_file_is_linted_once(tmp_path, monkeypatch):
    """The children's reports are used, not done again: every file is linted exactly once, in some process."""
    files = _tree(tmp_path, n_plain=600, n_launch=4)
    log = tmp_path / "linted.log"
    started = tmp_path / "child-started"
    wait = _waits_once_for(started)
    parent = os.getpid()
    real = parallel.lint_file

    def recording(path, settings, language=None, walked=None):
        if os.getpid() == parent:
            wait()
        else:
            started.touch()
        # A child hands a file that needs a parser it has not loaded back to the parent (it raises here, and the
        # parent lints it): logged where it was linted, whatever this interpreter had loaded before the test.
        report = real(path, settings, language, walked)
        _append(log, f"{os.getpid()} {path}")
        return report

    monkeypatch.setattr(parallel, "lint_file", recording)
    reports = parallel.lint_many(files, Settings(), jobs=2)
    assert [r.path for r in reports] == [p for p, _ in files]
    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert {pid for pid, _ in lines} - {str(parent)}  # a child did lint files
    assert sorted(path for _, path in lines) == sorted(p for p, _ in files)


def _python_launch(tmp_path, i: int) -> tuple[str, str]:
    p = tmp_path / "py" / f"launch{i}.py"
    p.parent.mkdir(exist_ok=True)
    p.write_text("from sglang.srt.server_args import ServerArgs\n\n"
                 f"args = ServerArgs(model_path='m{i}', kv_cache_dtype='fp4_e2m1', attention_backend='triton')\n")
    return str(p), "python"


def _forked_in_a_fresh_interpreter(tmp_path, files, hook: str) -> subprocess.CompletedProcess:
    """``lint_many(files, jobs=2)`` in a fresh interpreter (this one may have libcst loaded already), with
    ``parallel.lint_file`` wrapped by ``hook`` (code defining ``recording``; ``parent`` and ``real`` are set);
    its reports must be the sequential ones, and it prints how many Python files have findings."""
    listing = tmp_path / "files.json"
    listing.write_text(json.dumps(files))
    code = textwrap.dedent(f"""
        import json, os, sys, time
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline import parallel
        files = [tuple(f) for f in json.load(open({str(listing)!r}))]
        parent, real = os.getpid(), parallel.lint_file
    """) + textwrap.dedent(hook) + textwrap.dedent("""
        parallel.lint_file = recording
        par = parallel.lint_many(files, Settings(sglang_version="0.5.23"), jobs=2)
        seq = parallel.lint_many(files, Settings(sglang_version="0.5.23"), jobs=1)
        view = lambda rs: [(r.path, r.language, [(f.code, f.start.line, f.message) for f in r.findings],
                            [e.message for e in r.errors]) for r in rs]
        assert view(par) == view(seq)
        print(sum(1 for r in par if r.path.endswith(".py") and r.findings))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def _while_a_child_hands_back(tmp_path, files, loaded: str, complaint: str) -> subprocess.CompletedProcess:
    """:func:`_forked_in_a_fresh_interpreter` where the parent waits, before its first file, until a child has handed
    a file back (so that a child surely meets a launch), and a child that has ``loaded`` (an expression) after a
    file says ``complaint`` on standard error."""
    return _forked_in_a_fresh_interpreter(tmp_path, files, f"""
        handed_back, waited = {str(tmp_path / "handed-back")!r}, []
        def recording(path, settings, language=None, walked=None):
            if os.getpid() == parent and not waited:
                waited.append(True)
                end = time.monotonic() + 60
                while not os.path.exists(handed_back) and time.monotonic() < end:
                    time.sleep(0.005)
            try:
                rep = real(path, settings, language, walked)
            except BaseException:
                open(handed_back, "w").close()
                raise
            if os.getpid() != parent and ({loaded}):
                os.write(2, {(complaint + chr(10)).encode()!r})
            return rep
    """)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked children")
def test_forked_children_leave_libcst_to_the_parent(tmp_path):
    """A child that meets a file needing libcst hands it back: only the parent imports libcst, and the reports
    are the sequential ones."""
    files = _tree(tmp_path, n_plain=400, n_launch=2)
    for i in range(12):
        files.insert(37 * i, _python_launch(tmp_path, i))
    r = _while_a_child_hands_back(tmp_path, files, '"libcst" in sys.modules', "a child imported libcst")
    assert "a child imported libcst" not in r.stderr
    assert (tmp_path / "handed-back").exists()  # a child met a launch and handed it back
    assert r.stdout.strip() == "12"  # every Python launch was judged, by the parent


def test_a_child_leaves_the_runner_to_the_parent_for_a_few_files_only(monkeypatch):
    """A child refuses the stages past the pre-filter the first ``HAND_BACK`` times (the files go back to the
    parent), then loads them itself: a tree with many launches outside Python is still shared.  libcst it always
    refuses, unless loaded before the fork."""
    hook = parallel._ParentOnly(2)
    for _ in range(2):
        with pytest.raises(parallel._Deferred):
            hook.find_spec(parallel.PARENT_FIRST)
    assert hook.find_spec(parallel.PARENT_FIRST) is None
    assert hook.find_spec("kv4lint.frontends.shell") is None
    monkeypatch.setattr(parallel, "PARENT_ONLY", ("a_parser_not_loaded",))
    for _ in range(3):
        with pytest.raises(parallel._Deferred):
            hook.find_spec("a_parser_not_loaded.nodes")
    monkeypatch.setattr(parallel, "PARENT_ONLY", ("os",))  # loaded before the fork: a module of it, later
    assert hook.find_spec("os.not_loaded") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked children")
def test_a_child_without_a_python_launch_loads_no_stage_past_the_screen(tmp_path):
    """SGLang's own sources: Python files that name the options but launch nothing (the screen rules them out), a
    few launches in other languages.  A child hands those back to the parent, which loads the runner for its own
    files anyway: no child loads the runner, the frontends or a parser, and the reports are the sequential ones."""
    files = _tree(tmp_path, n_plain=400, n_launch=3)
    for i in range(6):
        p = tmp_path / "py" / f"helper{i}.py"
        p.parent.mkdir(exist_ok=True)
        p.write_text("import sglang\n\n# ServerArgs(kv_cache_dtype='fp4_e2m1') is what this stands for\n"
                     f"def version{i}():\n    return sglang.__version__\n")
        files.insert(50 * i, (str(p), "python"))
    r = _while_a_child_hands_back(tmp_path, files, 'any(m.startswith(("kv4lint.pipeline.runner", '
                                  '"kv4lint.frontends")) for m in sys.modules)', "a child loaded the runner")
    assert "a child loaded the runner" not in r.stderr
    assert (tmp_path / "handed-back").exists()  # a child met a launch and handed it back


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked children")
def test_a_file_handed_back_reaches_the_parent_before_the_childs_chunk_ends(tmp_path):
    """The parent starts on a file a child hands back (and on libcst's import, the longest piece of work of a
    run) while the child goes on with its chunk: the child sends it at once, and the parent looks for it between
    its own files.  Here every chunk starts with a Python launch; a child that handed one back waits, before
    its next file, until the parent has begun linting it (which it never would if either waited for the end of
    the chunk)."""
    files = _tree(tmp_path, n_plain=400, n_launch=0)
    assert len(parallel._chunks(len(files) + 16, 2)) == 16
    for i in range(16):  # the first file of each of the 16 chunks (files[k::16])
        files.insert(i, _python_launch(tmp_path, i))
    r = _forked_in_a_fresh_interpreter(tmp_path, files, f"""
        handed_back, taken = {str(tmp_path / "handed-back")!r}, {str(tmp_path / "taken")!r}
        state = []  # in a child: "handed" once it handed a file back, then "waited"
        def recording(path, settings, language=None, walked=None):
            if os.getpid() == parent:
                if os.path.exists(handed_back) and path in open(handed_back).read().split("\\n"):
                    open(taken, "w").close()
            elif state == ["handed"]:
                state.append("waited")
                end = time.monotonic() + 20
                while not os.path.exists(taken) and time.monotonic() < end:
                    time.sleep(0.005)
                if not os.path.exists(taken):
                    os.write(2, b"the parent did not take the file before the chunk ended\\n")
            try:
                return real(path, settings, language, walked)
            except BaseException:
                if os.getpid() != parent and not state:
                    with open(handed_back, "a") as f:
                        f.write(path + "\\n")
                    state.append("handed")
                raise
    """)
    assert (tmp_path / "handed-back").exists()  # a child met a launch and handed it back
    assert "did not take the file" not in r.stderr
    assert r.stdout.strip() == "16"


def test_chunks_deal_every_file_once_strided_and_small():
    for n_files, jobs in ((300, 2), (5419, 2), (5419, 16), (100_000, 4)):
        chunks = parallel._chunks(n_files, jobs)
        assert sorted(i for c in chunks for i in c) == list(range(n_files))
        assert len(chunks) >= jobs * parallel.CHUNKS_PER_JOB or len(chunks) == n_files
        assert max(len(c) for c in chunks) <= 64  # a few ms of plain files: the run's tail (issue 37)
        assert all(c.step == len(chunks) for c in chunks)  # strided: a directory of launches is spread


def test_a_huge_tree_is_dealt_in_as_many_chunks_as_a_pipe_holds():
    for n_files, n_chunks in ((600_000, 9375), (3_000_000, 16384)):  # past a million files, more than MAX_CHUNK
        chunks = parallel._chunks(n_files, 2, most=16384)
        assert len(chunks) == n_chunks
        # every file once: chunk k holds k, k + n, k + 2n ... below n_files
        assert all(c == range(k, n_files, len(chunks)) for k, c in enumerate(chunks))
    assert len(parallel._chunks(5419, 200, most=1024)) == 1024  # however many jobs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forked path and F_SETPIPE_SZ are Linux's")
def test_a_small_pipe_never_blocks_the_dealing(tmp_path):
    """The chunk numbers are written to a pipe before a child reads it: more than it holds would block the write
    and the run would hang.  Here every pipe holds one page (as Linux makes them where the user's pipes exceed
    their quota) and each file is a chunk of its own: 1,500 numbers, 6 KB, for a 4 KiB pipe."""
    for i in range(1500):
        (tmp_path / f"f{i:04d}.sh").write_text("echo hi\n")
    code = textwrap.dedent(f"""
        import fcntl, os
        from kv4lint.base.settings import Settings
        from kv4lint.pipeline import parallel
        real = os.pipe
        def small_pipe():
            r, w = real()
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
            return r, w
        os.pipe = small_pipe
        parallel.MAX_CHUNK = 1
        files = sorted((os.path.join({str(tmp_path)!r}, n), "shell") for n in os.listdir({str(tmp_path)!r}))
        reports = parallel.lint_many(files, Settings(), jobs=2)
        assert [r.path for r in reports] == [f for f, _ in files]
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_python_files_and_the_others_are_dealt_apart():
    files = [(f"f{i}.py", "python") if i % 3 else (f"f{i}.md", "markdown") for i in range(3000)] + [("tool", None)]
    chunks, n_python = parallel._dealt(files, 2, 16384)
    assert sorted(i for c in chunks for i in c) == list(range(len(files)))
    assert all(files[i][1] == "python" for c in chunks[:n_python] for i in c)
    assert all(files[i][1] != "python" for c in chunks[n_python:] for i in c)
    assert max(len(c) for c in chunks) <= parallel.MAX_CHUNK
    python = [i for i, f in enumerate(files) if f[1] == "python"]
    others = [i for i, f in enumerate(files) if f[1] != "python"]
    assert chunks[1] == python[1::n_python] and chunks[n_python + 1] == others[1::len(chunks) - n_python]  # strided


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork to inherit the patched function")
def test_the_children_start_with_the_python_files_and_this_process_with_the_others(tmp_path, monkeypatch):
    """A language's parser is loaded by fewer processes, and the children meet early the Python files whose
    libcst half is the parent's (issue 37)."""
    files = _tree(tmp_path, n_plain=400, n_launch=40)
    log = tmp_path / "first.log"
    real = parallel.lint_file
    firsts = set()

    def recording(path, settings, language=None, walked=None):
        if os.getpid() not in firsts:
            firsts.add(os.getpid())
            _append(log, f"{os.getpid()} {language}")
        return real(path, settings, language, walked)

    monkeypatch.setattr(parallel, "lint_file", recording)
    reports = parallel.lint_many(files, Settings(), jobs=2)
    assert [r.path for r in reports] == [p for p, _ in files]
    first = dict(line.split() for line in log.read_text().splitlines())
    assert first.pop(str(os.getpid())) != "python"
    assert list(first.values()) == ["python"]  # the child


def test_a_child_sends_each_file_it_hands_back_at_once():
    sent = []
    payloads = {0: "python", 1: parallel._DEFERRED, 2: "python", 3: "shell", 4: parallel._DEFERRED}
    parallel._child_chunk(range(5), payloads.__getitem__, sent.append)
    assert sent == [[(0, "python"), (1, parallel._DEFERRED)], [(2, "python"), (3, "shell"), (4, parallel._DEFERRED)]]
    sent.clear()
    parallel._child_chunk(range(3), {0: "a", 1: "b", 2: "c"}.__getitem__, sent.append)
    assert sent == [[(0, "a"), (1, "b"), (2, "c")]]  # one message a chunk otherwise


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked children")
def test_a_fork_that_fails_leaves_the_work_to_this_process(tmp_path, monkeypatch):
    files = _tree(tmp_path, n_plain=300, n_launch=3)

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel.os, "fork", no_fork)
    reports = parallel.lint_many(files, Settings(), jobs=2)
    assert _view(reports) == _view(parallel.lint_many(files, Settings(), jobs=1))
