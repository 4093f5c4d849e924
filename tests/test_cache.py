"""The parse cache: a hit gives exactly what a scan gives, and anything a scan depends on invalidates it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint import frontends
from kv4lint.base.model import Launch, ScanResult, Span, Value
from kv4lint.base.record import fields
from kv4lint.base.source import decode
from kv4lint.cli import main
from kv4lint.files.discover import language_of
from kv4lint.pipeline import cache

from conftest import FIXTURES

FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and not p.name.endswith((".expected", ".fixed"))
                       and language_of(str(p), p.read_bytes()[:256]) is not None)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixtures_scan_survives_the_round_trip(path):
    text = decode(path.read_bytes()).text
    result = frontends.scan(str(path), text, language_of(str(path), path.read_bytes()[:256]))
    back = cache.decode(json.loads(json.dumps(cache.encode(result, ScanResult))), ScanResult)
    assert back == result
    # Fields left out of comparisons (Value.offsets) too.
    assert cache.encode(back, ScanResult) == cache.encode(result, ScanResult)


def test_only_model_records_are_encoded_and_decoded():
    """Only the records of the declared type are built: nothing a stored entry names."""
    with pytest.raises(TypeError):
        cache.encode(object(), ScanResult)
    with pytest.raises(TypeError):
        cache.encode(Span(1, 2), Value)  # of a type other than the declared one
    with pytest.raises(TypeError):
        cache.encode(subprocess.Popen, type)  # of no type the cache stores
    with pytest.raises(cache.Miss):
        cache.decode({"@": "Popen", "args": "rm -rf /"}, ScanResult)
    with pytest.raises(cache.Miss):
        cache.decode([1, 2, 3], Span)  # a field too many
    with pytest.raises(cache.Miss):
        cache.decode([1.5, 2], Span)  # a float where an int is declared
    assert cache.encode(Span(1, 2), Span) == [1, 2] and cache.decode([1, 2], Span) == Span(1, 2)


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Run the CLI in-process with a fresh cache; count the frontend scans."""
    calls = []
    real = frontends.scan

    def scan(path, text, language):
        calls.append(path)
        return real(path, text, language)

    monkeypatch.setattr(frontends, "scan", scan)
    monkeypatch.setattr(cache, "RACY_S", 0.0)  # files written by the test are seconds old at most
    cache_dir = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def run(*args: str) -> dict:
        out = tmp_path / "out.json"
        rc = main(["check", "--isolated", "-j", "1", "--format", "json", "--output-file", str(out),
                   "--cache-dir", str(cache_dir), *args])
        assert rc in (0, 1)
        return json.loads(out.read_text())

    run.calls = calls
    run.cache_dir = cache_dir
    run.work = work
    return run


LAUNCH = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype {} "
          "--attention-backend flashinfer\n")


# cfg.yaml is also checked on its own (no backend): on a B200, SGLang's default backend takes an FP4 KV cache.
B200 = ("--gpu", "b200")


def _codes(doc: dict) -> list[str]:
    return sorted(f["code"] for f in doc["findings"])


def test_a_second_run_scans_nothing_and_reports_the_same(counted):
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    (counted.work / "plain.py").write_text("print('no launch here')\n")
    first = counted()
    assert counted.calls == ["serve.sh"]
    second = counted()
    assert counted.calls == ["serve.sh"]  # no new scan
    assert second["findings"] == first["findings"] and _codes(first) == ["KV401"]


def test_a_changed_file_is_scanned_again(counted):
    p = counted.work / "serve.sh"
    p.write_text(LAUNCH.format("fp4_mx_block16"))
    assert _codes(counted()) == ["KV401"]
    p.write_text(LAUNCH.format("fp8_e4m3"))
    assert _codes(counted()) == []
    assert len(counted.calls) == 2


def test_settings_are_not_part_of_the_key_the_rules_run_again(counted):
    (counted.work / "serve.sh").write_text(LAUNCH.format("nvfp4").replace(" --attention-backend flashinfer", ""))
    assert _codes(counted("--gpu", "b200")) == []
    assert "KV404" in _codes(counted("--gpu", "h100"))
    assert len(counted.calls) == 1


def test_a_changed_config_file_is_seen(counted):
    (counted.work / "serve.sh").write_text(
        "python -m sglang.launch_server --config cfg.yaml --attention-backend flashinfer\n")
    cfg = counted.work / "cfg.yaml"
    cfg.write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp8_e4m3\n")
    assert _codes(counted(*B200)) == []
    cfg.write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp4_mx_block16\n")
    assert _codes(counted(*B200)) == ["KV401"]


def test_a_config_file_that_appears_later_is_seen(counted):
    (counted.work / "run.py").write_text(
        "import subprocess\nsubprocess.run(['python', '-m', 'sglang.launch_server', '--config', 'cfg.yaml',\n"
        "                '--attention-backend', 'flashinfer'])\n")
    assert _codes(counted(*B200)) == []
    (counted.work / "cfg.yaml").write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp4_mx_block16\n")
    assert _codes(counted(*B200)) == ["KV401"]
    # --config files are read after the cache (kv4lint.pipeline.launch_configs): run.py's entry, keyed on its text,
    # is reused.
    assert counted.calls.count("run.py") == 1


def test_a_scan_entry_depends_on_its_file_alone(counted, monkeypatch):
    monkeypatch.setattr(cache, "RACY_S", 3600.0)
    # Frontends read only the text they are given: the --config file a launch names is no dependency of its entry.
    (counted.work / "run.py").write_text(
        "import subprocess\nsubprocess.run(['python', '-m', 'sglang.launch_server', '--config', 'cfg.yaml',\n"
        "                '--attention-backend', 'flashinfer'])\n")
    cfg = counted.work / "cfg.yaml"
    cfg.write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp8_e4m3\n")
    assert _codes(counted(*B200)) == []
    cfg.write_text("model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp4_mx_block16\n")
    assert _codes(counted(*B200)) == ["KV401"]
    assert counted.calls.count("run.py") == 1
    entries = [json.loads(p.read_text()) for p in counted.cache_dir.rglob("*.json")
               if p.parent != counted.cache_dir and p.parent.name != "index"]  # the parse cache's entries
    assert entries and all(set(e) == {"format", "result"} for e in entries)  # no recorded dependency


def test_other_code_does_not_reuse_an_entry(counted, monkeypatch):
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    counted()
    monkeypatch.setattr(cache, "_fingerprint", "another kv4lint")
    counted()
    assert len(counted.calls) == 2


def test_a_corrupt_entry_is_ignored(counted):
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    counted("serve.sh")  # named: the parse cache only, no file index
    entries = [p for p in counted.cache_dir.rglob("*.json")]
    assert len(entries) == 1
    entries[0].write_text('{"format": 1, "depends": [], "result": {"@": "ScanResult", "launches": [')
    assert _codes(counted("serve.sh")) == ["KV401"]
    entries[0].write_text('{"format": 1, "depends": [], "result": {"@": "NotAModelClass"}}')
    assert _codes(counted("serve.sh")) == ["KV401"]
    assert len(counted.calls) == 3


def _set(doc, path: tuple, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _at(cls, name: str) -> int:
    """Where a record's field is in its stored list."""
    return fields(cls).index(name)


LAUNCHES = ("result", _at(ScanResult, "launches"))
LAUNCH0 = (*LAUNCHES, 0)
WORD0 = (*LAUNCH0, _at(Launch, "argv"), 0)


# Valid JSON of the wrong shape, each a real entry with one part changed (issue 28 item 8: exit 2 before).
@pytest.mark.parametrize("path, value", [
    (LAUNCHES, [5]),
    (LAUNCHES, "abc"),
    ((*WORD0, _at(Value, "span")), "oops"),
    ((*WORD0, _at(Value, "span")), [5, 1]),  # ends before it starts
    ((*WORD0, _at(Value, "text")), 5),
    ((*WORD0, _at(Value, "provenance")), "guessed"),
    ((*LAUNCH0, _at(Launch, "span")), ["x", 1]),
    ((*LAUNCH0, _at(Launch, "span")), [1.5, 2]),  # a float where an int is declared
    ((*LAUNCH0, _at(Launch, "span")), [1, 2, 3]),  # a field too many
    ((*LAUNCH0, _at(Launch, "form")), "neither"),
    ((*LAUNCH0, _at(Launch, "disabled")), [1]),
    (("result", _at(ScanResult, "errors")), [[1, "x", None, False]]),
    (("result",), {"launches": 5}),
    (("result",), []),
])
def test_an_entry_of_the_wrong_shape_is_a_miss(counted, path, value):
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    counted("serve.sh")  # named: the parse cache only, no file index
    (entry,) = counted.cache_dir.rglob("*.json")
    doc = json.loads(entry.read_text())
    _set(doc, path, value)
    entry.write_text(json.dumps(doc))
    assert _codes(counted("serve.sh")) == ["KV401"]  # counted() asserts exit 0 or 1: no internal error
    assert len(counted.calls) == 2  # scanned again


@pytest.mark.parametrize("field, value", [
    ("findings", [5]),
    ("findings", "abc"),
    ("launches", "many"),
    ("targets", [5]),
    ("errors", [{"@": "FileError"}]),
    ("not_a_field", 1),
])
def test_an_index_report_of_the_wrong_shape_is_a_miss(reads, field, value):
    (reads.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    first = reads(".")
    del reads.reads[:]
    assert reads(".") == first and reads.reads == []  # the second run: the index's report
    (index,) = (reads.cache_dir / "index").iterdir()
    doc = json.loads(index.read_text())
    doc["reports"]["serve.sh"][3][field] = value
    index.write_text(json.dumps(doc))
    del reads.reads[:]
    assert reads(".") == first and reads.reads == ["serve.sh"]  # read again


def test_an_unwritable_cache_is_no_error(counted, tmp_path):
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    counted.cache_dir.write_text("a file where the directory should be")
    assert _codes(counted()) == ["KV401"]
    assert _codes(counted()) == ["KV401"]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_cache(tmp_path, monkeypatch, how):
    cache_dir = tmp_path / "cache"
    (tmp_path / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    args = ["check", "--isolated", "-q", "--cache-dir", str(cache_dir), str(tmp_path / "serve.sh")]
    if how == "flag":
        args.append("--no-cache")
    else:
        monkeypatch.setenv("KV4LINT_NO_CACHE", "1")
    assert main(args) == 1
    assert not cache_dir.exists()


def test_the_cache_dir_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KV4LINT_CACHE_DIR", str(tmp_path / "env-cache"))
    (tmp_path / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    assert main(["check", "--isolated", "-q", str(tmp_path / "serve.sh")]) == 1
    assert list((tmp_path / "env-cache").rglob("*.json"))


def test_fix_then_check_with_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "RACY_S", 0.0)
    p = tmp_path / "serve.sh"
    p.write_text(LAUNCH.format("fp4_mx_block16"))
    opts = ["--isolated", "-q", "--cache-dir", str(tmp_path / "cache"), str(p)]
    assert main(["check", *opts]) == 1
    assert main(["fix", *opts]) == 0
    assert "--kv-cache-dtype fp8_e4m3" in p.read_text()
    assert main(["check", *opts]) == 0


def test_the_default_directory_is_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.default_dir() == os.path.join(str(tmp_path), "kv4lint", "scan")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert Path(cache.default_dir()).parts[-3:] == (".cache", "kv4lint", "scan")


# ---------------------------------------------------------------------------
# The file index: a walk does not read again the unchanged files that held nothing


@pytest.fixture
def reads(counted, monkeypatch):
    """``counted``, also counting the files read."""
    from kv4lint.pipeline import read as reading

    got = []
    real = reading.open_regular  # every file read is opened here first

    def read(path, *walked):
        got.append(os.path.relpath(path, counted.work))
        return real(path, *walked)

    monkeypatch.setattr(reading, "open_regular", read)
    counted.reads = got
    return counted


def _tree(work: Path) -> None:
    (work / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    (work / "plain.py").write_text("print('no launch here')\n")
    (work / "docs").mkdir()
    (work / "docs" / "notes.md").write_text("# Notes\n\nNothing about serving.\n")
    (work / "docs" / "mentions.md").write_text("sglang takes `--kv-cache-dtype`; see its docs.\n")  # parsed, empty
    (work / "tools").mkdir()
    (work / "tools" / "run").write_text("#!/bin/sh\necho hello\n")  # a shell script by its shebang
    (work / "tools" / "data").write_text("no shebang: of no language\n")


def test_a_second_walk_reads_only_the_files_with_something_to_report(reads):
    _tree(reads.work)
    first = reads(".")
    assert sorted(reads.reads) == sorted(["serve.sh", "plain.py", "docs/notes.md", "docs/mentions.md",
                                          "tools/run", "tools/data"])
    assert sorted(reads.calls) == ["docs/mentions.md", "serve.sh"]
    del reads.reads[:]
    second = reads(".")
    assert reads.reads == []  # serve.sh's report (its finding) comes from the index too
    assert second == first and _codes(first) == ["KV401"]
    assert first["files_scanned"] == 5  # tools/data: of no language
    del reads.reads[:]
    third = reads(".", "--sglang-version", "0.5.22")  # other settings: the files with launches are read again
    assert reads.reads == ["serve.sh"] and _codes(third) == ["KV401"]


def test_a_report_read_from_the_index_is_kept_for_the_next_run(reads):
    """A run that reads serve.sh's report (its finding) from the index and reads another file again writes the
    index anew, serve.sh's report as it read it: the third run reads serve.sh from the index still."""
    _tree(reads.work)
    reads(".")
    (reads.work / "plain.py").write_text("print('changed')\n")
    del reads.reads[:]
    second = reads(".")
    assert reads.reads == ["plain.py"] and _codes(second) == ["KV401"]
    del reads.reads[:]
    third = reads(".")
    assert reads.reads == [] and third == second


def test_a_report_json_cannot_write_loses_only_itself(tmp_path):
    """Values of JSON's own types are written as they are and checked only when read: a report holding something
    else (a bug) is left out of the index, which keeps everything else."""
    index = cache.FileIndex(str(tmp_path), ["."], reuse_reports=True)
    index.new["plain.py"] = "33188 6 1 1 1 1 python"
    report = [[33188, 6, 1, 1, 1, 1], "shell", [], {"findings": None, "launches": 1, "targets": []}, "key"]
    index.new_reports["good.sh"] = report
    index.new_reports["bad.sh"] = [*report[:3], dict(report[3], targets=[{"gpu": object()}]), "key"]
    index.save()
    again = cache.FileIndex(str(tmp_path), ["."], reuse_reports=True)
    assert again.old == index.new and again.old_reports == {"good.sh": report}


def test_a_second_walk_opens_no_file_and_imports_no_parser(tmp_path):
    """An unchanged tree: a walk, a stat per file and one read of the index (issue 21)."""
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    _tree(work)
    (work / "run.py").write_text("import subprocess\nsubprocess.run(['python', '-m', 'sglang.launch_server', "
                                 "'--model-path', 'Qwen/Qwen3-8B', '--kv-cache-dtype', 'fp4_e2m1'])\n")
    (work / "notes.md").write_text("```bash\n" + LAUNCH.format("fp8_e4m3") + "```\n")
    script = (
        "import builtins, io, json, os, sys\n"
        "from kv4lint.pipeline import cache, runner\n"
        "cache.RACY_S = 0.0\n"  # ctime cannot be aged: trust every signature
        "from kv4lint.cli import main\n"
        "args = ['check', '.', '--isolated', '-j', '1', '--format', 'json', '--output-file', sys.argv[2],\n"
        "        '--cache-dir', sys.argv[1]]\n"
        "if sys.argv[3] == 'second':\n"
        "    opened = []\n"
        "    def _open(path, *a, real=os.open, **k):\n"
        "        opened.append(str(path))\n"
        "        return real(path, *a, **k)\n"
        "    os.open = _open\n"
        "    io_open = io.open\n"
        "    def _io_open(path, *a, **k):\n"
        "        opened.append(str(path))\n"
        "        return io_open(path, *a, **k)\n"
        "    builtins.open = _io_open\n"
        "main(args)\n"
        "if sys.argv[3] == 'second':\n"
        "    parsers = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "                     ('libcst', 'tree_sitter', 'tree_sitter_bash', 'ruamel', 'markdown_it', 'nbformat'))\n"
        "    here = os.path.abspath('.') + os.sep\n"
        "    print(json.dumps({'parsers': parsers, 'opened': [p for p in opened  # .gitignore: part of the walk\n"
        "                      if os.path.abspath(p).startswith(here) and os.path.basename(p) != '.gitignore'\n"
        "                      and not os.path.isdir(p)]}))\n"  # a directory, to stat its files by name
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("KV4LINT")}
    outs = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        cp = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache"), str(out), run], cwd=work,
                            capture_output=True, text=True, env=env, timeout=300)
        assert cp.returncode == 0, cp.stderr
        outs.append(json.loads(out.read_text()))
    seen = json.loads(cp.stdout.strip().splitlines()[-1])
    assert seen == {"parsers": [], "opened": []}
    assert outs[1] == outs[0]
    assert sorted({f["path"] for f in outs[0]["findings"]}) == ["run.py", "serve.sh"]  # notes.md: a launch, no finding


@pytest.mark.parametrize("sourced, launch", [
    ("env.sh", 'source ./env.sh\npython -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype "$KV" '
               '--attention-backend flashinfer\n'),
    ("settings.py", "import subprocess\nfrom settings import KV\nsubprocess.run(['python', '-m', "
                    "'sglang.launch_server', '--model-path', 'Qwen/Qwen3-8B', '--kv-cache-dtype', KV, "
                    "'--attention-backend', 'flashinfer'])\n"),
])
def test_a_reported_launch_is_judged_again_when_a_file_it_reads_settings_from_changes(counted, sourced, launch):
    """kv4lint.pipeline.sourced reads settings from other files (``source``, sibling modules): the index's report of
    the launching file depends on them."""
    (counted.work / ".git").mkdir()  # the repository root: sourced files are read inside it only
    (counted.work / ("serve.sh" if sourced == "env.sh" else "serve.py")).write_text(launch)
    value = "KV=fp4_mx_block16\n" if sourced == "env.sh" else "KV = 'fp4_mx_block16'\n"
    (counted.work / sourced).write_text(value)
    assert _codes(counted(".")) == ["KV401"]
    assert _codes(counted(".")) == ["KV401"]  # from the index
    (counted.work / sourced).write_text(value.replace("fp4_mx_block16", "fp8_e4m3"))
    assert _codes(counted(".")) == []


def test_a_reported_launch_is_judged_again_when_its_model_config_changes(counted):
    model = counted.work / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    (counted.work / "serve.sh").write_text(
        "python -m sglang.launch_server --model-path ./model --kv-cache-dtype nvfp4\n")
    assert _codes(counted(".", "--gpu", "b200")) == []  # an MHA model: nvfp4 works on Blackwell
    assert _codes(counted(".", "--gpu", "b200")) == []  # the launch's report, from the index
    (model / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
    assert _codes(counted(".", "--gpu", "b200")) == ["KV401"]  # MLA: trtllm_mla refuses it


def test_a_reported_launch_is_judged_again_when_its_checkpoint_quantization_appears(counted):
    """Issue 35: a local model's hf_quant_config.json says where its weights load; the report depends on it
    (absent too: one that appears changes the GPU candidates)."""
    model = counted.work / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
    (counted.work / "serve.sh").write_text("python -m sglang.launch_server --model-path ./model "
                                           "--attention-backend trtllm_mla --kv-cache-dtype fp4_e2m1\n")
    assert _codes(counted(".", "--sglang-version", "0.5.9")) == ["KV407"]  # trtllm_mla on Ampere/Ada and Hopper
    assert _codes(counted(".", "--sglang-version", "0.5.9")) == ["KV407"]  # from the index
    (model / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}))
    assert _codes(counted(".", "--sglang-version", "0.5.9")) == []  # NVFP4 weights load on sm100 and newer only


def test_an_edited_file_is_read_again_even_with_its_old_size_and_time(reads):
    _tree(reads.work)
    p = reads.work / "plain.py"
    new = "import os\nos.system(%r)\n" % LAUNCH.format("fp4_mx_block16").strip()
    p.write_text("#" * (len(new) - 1) + "\n")
    reads(".")
    st = p.stat()
    p.write_text(new)  # same size, same inode
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # and its old time, as `touch -r` leaves it: only ctime moved
    assert p.stat().st_size == st.st_size and p.stat().st_ino == st.st_ino
    del reads.reads[:]
    doc = reads(".")
    assert sorted(reads.reads) == ["plain.py"]
    assert sorted(f["path"] for f in doc["findings"]) == ["plain.py", "serve.sh"]


def test_files_changed_just_before_the_walk_are_not_recorded(reads, monkeypatch):
    monkeypatch.setattr(cache, "RACY_S", 3600.0)
    _tree(reads.work)
    reads(".")
    del reads.reads[:]
    reads(".")
    assert len(reads.reads) == 6


def test_files_named_one_by_one_use_no_index(reads):
    _tree(reads.work)
    reads("serve.sh", "plain.py", "docs/notes.md")
    reads("serve.sh", "plain.py", "docs/notes.md")
    assert sorted(reads.reads) == sorted(["serve.sh", "plain.py", "docs/notes.md"] * 2)
    assert not (reads.cache_dir / "index").exists()


def test_an_index_of_other_code_or_corrupt_is_ignored(reads, monkeypatch):
    _tree(reads.work)
    first = reads(".")
    (index,) = (reads.cache_dir / "index").iterdir()
    monkeypatch.setattr(cache, "_fingerprint", "another kv4lint")
    del reads.reads[:]
    assert reads(".") == first and len(reads.reads) == 6
    monkeypatch.setattr(cache, "_fingerprint", None)  # this code again: the index's records are read
    code = cache.code_fingerprint()
    st = os.stat(reads.work / "plain.py")
    sig = f"{st.st_mode} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"
    for junk in ("{", "[]", "null", '{"files": []}', json.dumps({"code": code, "files": {"plain.py": 5}}),
                 json.dumps({"code": code, "files": {"plain.py": [1]}}),
                 json.dumps({"code": code, "files": {"plain.py": [*map(int, sig.split()), "python"]}}),  # format 2
                 json.dumps({"code": code, "files": {"plain.py": "python"}}),
                 json.dumps({"code": code, "files": {"plain.py": f"{sig}1 python"}}),
                 json.dumps({"code": code, "files": {"plain.py": f"{sig} shell"}})):
        index.write_text(junk)
        del reads.reads[:]
        assert reads(".") == first and len(reads.reads) == 6
    index.write_text(json.dumps({"code": code, "files": {"plain.py": f"{sig} python"}}))  # the well-formed record
    del reads.reads[:]
    assert reads(".") == first and len(reads.reads) == 5 and "plain.py" not in reads.reads


def test_the_code_fingerprint_covers_every_source_file_of_the_package(monkeypatch):
    """An editable install changes without a new version: a change to any of kv4lint's modules, in whichever
    folder, makes the stored entries another code's."""
    import kv4lint

    package = Path(kv4lint.__file__).resolve().parent
    stated = set()
    real = os.stat

    def stat(p, *a, **k):
        stated.add(str(p))
        return real(p, *a, **k)

    monkeypatch.setattr(cache, "_fingerprint", None)
    monkeypatch.setattr(os, "stat", stat)
    cache.code_fingerprint()
    monkeypatch.undo()
    stated = {Path(p).resolve() for p in stated}
    assert sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py") if p not in stated) == []


def test_a_file_grown_past_the_size_limit_is_reported(tmp_path, monkeypatch):
    from kv4lint.base.settings import Settings
    from kv4lint.cli.check import lint_files as _lint
    from kv4lint.files.discover import discover

    monkeypatch.setattr(cache, "RACY_S", 0.0)
    monkeypatch.chdir(tmp_path)
    Path("big.py").write_text("x = 1\n" * 100)
    files = discover(["."]).files

    def run(limit):
        index = cache.FileIndex(str(tmp_path / "cache"), ["."])
        return _lint(files, Settings(max_file_bytes=limit, cache_dir=str(tmp_path / "cache")), index, 1,
                     lambda n: None)

    (rep,) = run(10_000)
    assert not rep.errors and rep.scanned
    (rep,) = run(100)
    assert not rep.scanned and "larger than" in rep.errors[0].message


def test_a_reported_launch_is_judged_again_when_the_repositorys_pin_changes(counted):
    """Pins are read with the settings on every run; a report from the index is used under the same settings only."""
    (counted.work / ".git").mkdir()
    (counted.work / "serve.sh").write_text(LAUNCH.format("fp4_e2m1"))
    (counted.work / "requirements.txt").write_text("sglang==0.5.10\n")
    assert _codes(counted(".")) == ["KV401"]
    assert _codes(counted(".")) == ["KV401"]  # from the index
    (counted.work / "requirements.txt").write_text("sglang==0.5.23\n")
    assert _codes(counted(".")) == ["KV406"]  # fp4_e2m1 is no choice in 0.5.23


def test_a_reported_launch_is_judged_again_when_the_env_file_beside_its_compose_file_changes(counted):
    (counted.work / ".git").mkdir()
    (counted.work / "compose.yaml").write_text(
        "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.23-cu129\n"
        "    command: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype ${KV}"
        " --attention-backend flashinfer\n")
    (counted.work / ".env").write_text("KV=fp4_mx_block16\n")
    assert _codes(counted(".")) == ["KV401"]
    assert _codes(counted(".")) == ["KV401"]  # from the index
    (counted.work / ".env").write_text("KV=fp8_e4m3\n")
    assert _codes(counted(".")) == []


def test_an_edited_exclude_is_seen_by_the_walk_the_index_keeps(tmp_path, monkeypatch):
    """The configuration's excludes prune the walk: a walk kept under other excludes is not reused (editing
    kv4lint.toml changes no directory's modification time)."""
    monkeypatch.setattr(cache, "RACY_S", 0.0)
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / "gen").mkdir()
    (work / "gen" / "serve.sh").write_text(LAUNCH.format("fp4_mx_block16"))
    config = work / "kv4lint.toml"
    config.write_text('extend-exclude = ["gen"]\n')
    monkeypatch.chdir(work)
    out = tmp_path / "out.json"

    def run() -> list[str]:
        assert main(["check", ".", "-j", "1", "--format", "json", "--output-file", str(out),
                     "--cache-dir", str(tmp_path / "cache")]) in (0, 1)
        return _codes(json.loads(out.read_text()))

    assert run() == [] and run() == []
    config.write_text("extend-exclude = []\n")
    assert run() == ["KV401"]


# The configuration files a run read, kept in the file index by their signature (FileIndex.config): a second run
# over an unchanged tree parses no TOML.


@pytest.fixture
def configured(monkeypatch, tmp_path):
    """A repository with a pyproject.toml without kv4lint's table, a kv4lint.toml that sets the GPU (a B200 takes
    the nvfp4 KV cache that a Hopper refuses), and one below it that ignores KV404; each configuration file read
    is counted."""
    from kv4lint.settings import config

    monkeypatch.setattr(cache, "RACY_S", 0.0)
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / "pyproject.toml").write_text('[project]\nname = "svc"\n')
    (work / "kv4lint.toml").write_text('gpu = "b200"\n')
    (work / "hopper").mkdir()
    (work / "hopper" / "pyproject.toml").write_text('[tool.kv4lint]\ngpu = "h100"\n')
    launch = LAUNCH.format("nvfp4").replace(" --attention-backend flashinfer", "")
    (work / "serve.sh").write_text(launch)
    (work / "hopper" / "serve.sh").write_text(launch)
    monkeypatch.chdir(work)
    reads = []
    real = config._read_config

    def counted_read(path, named):
        reads.append(os.path.relpath(path, work))
        return real(path, named)

    monkeypatch.setattr(config, "_read_config", counted_read)
    out = tmp_path / "out.json"

    def run() -> list[tuple[str, str]]:
        assert main(["check", ".", "-j", "1", "--sglang-version", "0.5.23", "--format", "json", "--output-file",
                     str(out), "--cache-dir", str(tmp_path / "cache")]) in (0, 1)
        return sorted((f["path"], f["code"]) for f in json.loads(out.read_text())["findings"])

    run.reads = reads
    run.work = work
    return run


HOPPER = [(os.path.join("hopper", "serve.sh"), "KV404")]


def test_a_second_run_reads_no_unchanged_configuration_file(configured):
    assert configured() == HOPPER
    assert sorted(configured.reads) == [os.path.join("hopper", "pyproject.toml"), "kv4lint.toml"]
    configured.reads.clear()
    assert configured() == HOPPER and configured() == HOPPER
    assert configured.reads == []


def test_an_edited_configuration_file_is_read_again(configured):
    assert configured() == HOPPER
    hopper = configured.work / "hopper" / "pyproject.toml"
    st = hopper.stat()
    hopper.write_text('[tool.kv4lint]\ngpu = "b200"\n')  # the same size: told by its times
    os.utime(hopper, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    configured.reads.clear()
    assert configured() == []
    assert configured.reads == [os.path.join("hopper", "pyproject.toml")]
    (configured.work / "kv4lint.toml").write_text('gpu = "h100"\n\n')
    assert configured() == [("serve.sh", "KV404")]


def test_a_pyproject_without_kv4lint_settings_is_remembered_as_none(configured):
    (configured.work / "kv4lint.toml").unlink()  # the root's pyproject.toml, without [tool.kv4lint], is next
    assert configured() == [*HOPPER, ("serve.sh", "KV404")]  # no GPU set: refused on some of every candidate
    assert "pyproject.toml" in configured.reads
    configured.reads.clear()
    assert configured() == [*HOPPER, ("serve.sh", "KV404")] and configured.reads == []
    (configured.work / "pyproject.toml").write_text('[project]\nname = "svc"\n\n[tool.kv4lint]\ngpu = "b200"\n')
    assert configured() == HOPPER and configured.reads == ["pyproject.toml"]


def test_a_configuration_file_changed_just_now_is_not_remembered(configured, monkeypatch):
    monkeypatch.setattr(cache, "RACY_S", 3600.0)  # every file is younger than this
    assert configured() == HOPPER and configured() == HOPPER
    assert len(configured.reads) == 4  # both, both times


def test_a_damaged_or_unusual_configuration_record_is_a_miss(tmp_path):
    import datetime

    (tmp_path / "kv4lint.toml").write_text('gpu = "b200"\n')
    st = os.stat(tmp_path / "kv4lint.toml")
    index = cache.FileIndex(str(tmp_path / "cache"), [str(tmp_path)])
    index.started += 10 ** 12  # the file is old enough
    path = str(tmp_path / "kv4lint.toml")
    index.add_config(path, st, {"when": datetime.date(2026, 12, 7)}, False)  # not JSON: not recorded
    index.add_config(path, st, {"ratio": float("nan")}, False)
    assert index.new_configs == {}
    index.add_config(path, st, {"gpu": "b200", "exclude": ["gen"], "strict": True}, False)
    index.save()
    again = cache.FileIndex(str(tmp_path / "cache"), [str(tmp_path)])
    assert again.config(path, st) == ({"gpu": "b200", "exclude": ["gen"], "strict": True}, False)
    for damaged in ([None, {"gpu": "b200"}, False], [again.old_configs[path][0], ["gpu"], False],
                    [again.old_configs[path][0], {"gpu": "b200"}, "no"], "b200", [again.old_configs[path][0]]):
        again.old_configs[path] = damaged
        assert again.config(path, st) is None, damaged


def test_a_stored_report_without_findings_loads_no_model():
    """A second run's reports of files without findings (most of a tree's) are read without the model or typing:
    the model's records in a report's annotations are stand-ins until a value needs one."""
    code = ("import sys, kv4lint.pipeline.cache as c, kv4lint.base.file_report as r\n"
            "h = c._hints(r.FileReport)\n"
            "assert c.decode([], h['findings']) == [] and c.decode(None, h['findings']) is None\n"
            "assert c.decode([{'gpu': 'sm90'}], h['targets']) == [{'gpu': 'sm90'}]\n"
            "assert c.decode(3, h['launches']) == 3\n"
            "print(sorted(m for m in ('kv4lint.base.model', 'typing') if m in sys.modules))\n"
            "c.decode([['KV401', 'error', 'm', 'a.sh'] + [None] * 9], h['findings'])\n"
            "print(sorted(m for m in ('kv4lint.base.model', 'typing') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['kv4lint.base.model', 'typing']"]
