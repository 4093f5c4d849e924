"""JSON files through the CLI: launch.json, docker inspect, ECS, devcontainer, Kubernetes JSON.

Each form: the finding names the JSON path of the command and the value, ``kv4lint fix`` edits the array element
(or the command string) in place, layout and comments kept, and the file then checks clean; the variant with an
accepted KV cache stays silent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kv4lint.cli import main
from kv4lint.frontends.json_ import JSONError, parse, path_at

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "json"
ARGS = ["--isolated", "--jobs", "1", "--sglang-version", "0.5.23", "--gpu", "b200"]


def check(path: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "out.json"
    code = main(["check", "--format", "json", *ARGS, str(path), "--output-file", str(out)])
    return code, json.loads(out.read_text())


FORMS = {  # the launch's JSON path, in the detail (the span says where it is; issue 29 keeps headlines short)
    "vscode_launch.json": ("$.configurations[0].args", 13),
    "docker_inspect.json": ("$[0].Config.Cmd", 33),
    # the image's entrypoint script runs ``bash -lc "..."`` (its Cmd) as the command (issue 27)
    "docker_inspect_entrypoint_script.json": ("$[0].Config.Cmd", 24),
    "ecs_task_definition.json": ("$.containerDefinitions[0].command", 11),
    "devcontainer.json": ("$.postStartCommand.server", 8),
    "k8s_deployment.json": ("$.spec.template.spec.containers[0].command", 17),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_json_form_found_with_its_path_and_fixed_in_place(name: str, tmp_path: Path):
    where, line = FORMS[name]
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    code, doc = check(path, tmp_path)
    assert code == 1 and doc["errors"] == []
    assert [(f["line"], f["code"]) for f in doc["findings"]] == [(line, "KV401")]
    assert doc["findings"][0]["message"].startswith("--kv-cache-dtype nvfp4 ")
    assert doc["findings"][0]["detail"].startswith(f"The launch at {where}. ")
    before = path.read_text()
    (edit,) = doc["findings"][0]["fix"]["edits"]
    assert before[edit["start"]:edit["end"]] == "nvfp4" and edit["text"] == "fp8_e4m3"
    assert main(["fix", *ARGS, str(path)]) == 0
    assert path.read_text() == before[:edit["start"]] + "fp8_e4m3" + before[edit["end"]:]
    code, doc = check(path, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


@pytest.mark.parametrize("name", sorted(FORMS))
def test_json_form_with_an_accepted_kv_cache_is_silent(name: str, tmp_path: Path):
    code, doc = check(FIXTURES / f"decoy_{name[:-5]}_ok.json", tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


def test_json_found_by_discovery_and_escaped_value_not_edited(tmp_path: Path):
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    (vscode / "launch.json").write_text(
        '{"configurations": [{"module": "sglang.launch_server",\n'
        '  "args": ["--model-path", "m", "--kv-cache-dtype", "nvfp\\u0034", "--attention-backend", "triton"]}]}\n')
    code, doc = check(tmp_path, tmp_path)
    assert code == 1 and [f["line"] for f in doc["findings"]] == [2]
    fix = doc["findings"][0]["fix"]
    assert fix is None or not fix["edits"]  # written with an escape: reported, not rewritten


def test_json_syntax_error_is_a_file_error_with_its_line(tmp_path: Path):
    path = tmp_path / "task.json"
    path.write_text('{"command": ["python3", "-m", "sglang.launch_server",\n  "--kv-cache-dtype" "nvfp4"]}\n')
    code, doc = check(path, tmp_path)
    assert doc["findings"] == []
    assert doc["errors"][0]["line"] == 2 and "cannot parse JSON" in doc["errors"][0]["message"]


def test_parser_keeps_offsets_and_paths():
    text = '// c\n{"a": [1, {"b": "x\\ty"},], /* k */ "c": null,}'
    root = parse(text)
    b = root.get("a").value[1].get("b")
    assert text[b.start:b.end] == '"x\\ty"' and b.value == "x\ty"
    assert path_at(root, b.start + 1) == "$.a[1].b"
    with pytest.raises(JSONError):
        parse('{"a": }')


# JSON Lines (issue 27) and duplicate keys (issue 28 item 11)
LINES_FORMS = {
    # name: (clean twin, the launch's JSON path (in the detail), line, column of the value the fix edits)
    "serving_tasks.jsonl": ("decoy_serving_tasks_ok.jsonl", "$.shell", 2, 150),
    "job_queue_lines.json": ("decoy_job_queue_lines_ok.json", "$.cmd", 2, 142),
    "duplicate_keys.json": ("decoy_duplicate_keys_ok.json", "$.command", 7, 38),
}


@pytest.mark.parametrize("name", sorted(LINES_FORMS))
def test_json_lines_and_duplicate_keys_found_on_their_line_and_fixed(name: str, tmp_path: Path):
    twin, where, line, column = LINES_FORMS[name]
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    code, doc = check(path, tmp_path)
    assert code == 1 and doc["errors"] == []
    (f,) = doc["findings"]
    assert f["code"] == "KV401"
    assert f["message"] == "--kv-cache-dtype nvfp4 is refused with --attention-backend triton; use fp8_e4m3"
    assert f"The launch at {where}." in f["detail"]
    before = path.read_text()
    (edit,) = f["fix"]["edits"]
    assert before[edit["start"]:edit["end"]] == "nvfp4"
    assert before.count("\n", 0, edit["start"]) + 1 == line
    assert edit["start"] - before.rfind("\n", 0, edit["start"]) == column
    assert main(["fix", *ARGS, str(path)]) == 0
    assert path.read_text() == before[:edit["start"]] + "fp8_e4m3" + before[edit["end"]:]
    code, doc = check(FIXTURES / twin, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


@pytest.mark.parametrize("suffix", [".jsonl", ".ndjson"])
def test_json_lines_are_found_by_discovery(suffix: str, tmp_path: Path):
    (tmp_path / f"tasks{suffix}").write_text((FIXTURES / "serving_tasks.jsonl").read_text())
    code, doc = check(tmp_path, tmp_path)
    assert code == 1 and [(f["line"], f["code"]) for f in doc["findings"]] == [(2, "KV401")]


@pytest.mark.parametrize("name, text, line", [
    ("tasks.jsonl", '{"shell": "true"}\n{"shell": "x"} {"shell": "sglang serve --kv-cache-dtype nvfp4"}\n', 2),
    ("tasks.jsonl", '{"shell": "sglang serve --kv-cache-dtype nvfp4"}\n{"shell": \n', 3),
    ("tasks.json", '{"shell": "sglang serve --kv-cache-dtype nvfp4"}\n{"b": 2} 3\n', 2),  # nor JSON Lines
])
def test_broken_json_lines_are_a_file_error_naming_the_line(name: str, text: str, line: int, tmp_path: Path):
    path = tmp_path / name
    path.write_text(text)
    code, doc = check(path, tmp_path)
    assert code == 1 and doc["findings"] == []
    (err,) = doc["errors"]
    assert err["line"] == line and "cannot parse JSON" in err["message"]


def test_duplicate_keys_keep_the_last_value_everywhere():
    root = parse('{"a": 1, "Config": {"Cmd": ["x"]}, "a": 2, "Config": {"Cmd": ["y"]}}')
    assert root.get("a").value == "2"
    assert [k for k, _kn, _v in root.members()] == ["a", "Config"]
    assert root.get("Config").get("Cmd").value[0].value == "y"


def test_duplicate_keys_in_a_kubernetes_manifest_written_in_json_keep_the_last(tmp_path: Path):
    pod = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "s"}, "spec": {"containers": [{"name": "s",\n'
           ' "image": "lmsysorg/sglang:v0.5.23-cu129",\n'
           ' "command": ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "%s",'
           ' "--attention-backend", "triton"],\n'
           ' "command": ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "%s",'
           ' "--attention-backend", "triton"]}]}}\n')
    path = tmp_path / "pod.json"
    path.write_text(pod % ("fp8_e4m3", "nvfp4"))
    code, doc = check(path, tmp_path)
    assert code == 1 and [(f["line"], f["code"]) for f in doc["findings"]] == [(4, "KV401")]
    path.write_text(pod % ("nvfp4", "fp8_e4m3"))
    code, doc = check(path, tmp_path)
    assert (code, doc["findings"], doc["errors"]) == (0, [], [])


# ---------------------------------------------------------------------------
# The token reader (issue 37) against the reference reader it falls back to


def _tree(n) -> tuple:
    """A node as plain data: every kind, offset, value and character offset."""
    if n.kind == "obj":
        value = tuple((k, _tree(kn), _tree(v)) for k, kn, v in n.value)
    elif n.kind == "arr":
        value = tuple(_tree(v) for v in n.value)
    else:
        value = n.value
    return n.kind, n.start, n.end, value, tuple(n.outer)


def _reference(text: str) -> tuple:
    """What the reference reader makes of ``text``: its tree and end, or its error (words and offset)."""
    from kv4lint.frontends import json_

    p = json_._Parser(text)
    try:
        node, end = p.value(0, 0)
    except JSONError as e:
        return "error", str(e), e.offset
    return "tree", _tree(node), end


def _token_reader(text: str) -> tuple | None:
    """What the token reader makes of ``text`` (None: it leaves the text to the reference reader)."""
    from kv4lint.frontends import json_

    try:
        node, end = json_._value(text, 0)
    except json_._Slow:
        return None
    return "tree", _tree(node), end


_READER_CASES = [
    '{"a": [1, -2.5e+3, true, false, null, "x\\u0034y\\n", {}], "b": {"c": []}}',
    '// a comment\n{ /* here */ "args": ["--kv-cache-dtype", "fp4_e2m1",], }  // and here\n',
    '\ufeff{"a": "\\ud83d\\ude00 \\"q\\" \\\\ \\/"}',
    '[[[[[]]]]]', '"just a string"', "  42  ", "-0", "[1,]", "{}",
]


def test_the_token_reader_reads_every_json_fixture_as_the_reference_reader():
    """Every JSON fixture, and the cases above: the token reader reads them (no fallback), node for node,
    offset for offset, as the reference reader does."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.json"))] + _READER_CASES
    for text in texts:
        assert _token_reader(text) == _reference(text), text[:80]


_BROKEN = ['[1: ]', '{"a" 1}', '{"a": 1 "b": 2}', '[1 2]', '{1: 2}', '[,]', '{,}', '["a",,]', '{"a":}', '[}', '{]',
           '"unterminated', '[tru]', '{"a": 1,, }', '/* x', '[-]', '{"a": 1]', '{"a": [1}', '{"a"}', '[{]', '{{}: 1}']


@pytest.mark.parametrize("text", _BROKEN)
def test_the_token_reader_leaves_broken_json_to_the_reference(text: str):
    """Broken text: the token reader gives up, and parse() says what the reference reader says."""
    ref = _reference(text)
    assert _token_reader(text) is None
    with pytest.raises(JSONError) as e:
        parse(text)
    if ref[0] == "error":
        assert (str(e.value), e.value.offset) == ref[1:]


def test_the_token_reader_agrees_with_the_reference_on_broken_json():
    """Mutants of the fixtures (a character deleted, doubled or replaced by a JSON metacharacter): where the token
    reader reads one, it reads what the reference reads; where it gives up, parse() says the reference's error."""
    import random

    rnd = random.Random(37)
    seeds = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.json"))] + _READER_CASES
    read = 0
    for _ in range(1500):
        text = rnd.choice(seeds)
        k = rnd.randrange(len(text))
        op = rnd.randrange(3)
        if op == 0:
            text = text[:k] + text[k + 1:]
        elif op == 1:
            text = text[:k] + text[k] + text[k:]
        else:
            text = text[:k] + rnd.choice('{}[]:,"\\/* \n0e-tn') + text[k + 1:]
        ref, mine = _reference(text), _token_reader(text)
        if mine is not None:
            read += 1
            assert mine == ref, text
        elif ref[0] == "error":
            with pytest.raises(JSONError) as e:
                parse(text)
            assert (str(e.value), e.value.offset) == ref[1:], text
    assert read > 300  # most mutants are still JSON (inside a string, a blank): the fast path is exercised


def test_the_token_reader_leaves_the_depth_bound_to_the_reference():
    deep = "[" * 202 + "]" * 202  # the 202nd is past the bound (depth 201)
    assert _token_reader(deep) is None
    with pytest.raises(JSONError, match="nested too deeply") as e:
        parse(deep)
    assert e.value.offset == _reference(deep)[2]
    assert _token_reader("[" * 150 + "]" * 150) == _reference("[" * 150 + "]" * 150)
