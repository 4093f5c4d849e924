"""YAML frontend: scalar offset maps, compose/Kubernetes/CI/task formats, SGLang --config files."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from kv4lint.base.model import Span
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex
from kv4lint.frontends import sglang_config
from kv4lint.frontends.yaml import compose, items, scalar_map, scan_yaml
from kv4lint.frontends.yaml_nodes import get, key_node
from kv4lint.pipeline import launch_configs
from kv4lint.pipeline.runner import lint_text
from kv4lint.sglang.options import in_any_release, known_releases, table

S23 = Settings(sglang_version="0.5.23")


def at(text: str, span: Span | None) -> str | None:
    return None if span is None else text[span.start:span.end]


def dtype(launch):
    toks = launch.config_argv + launch.argv
    k = [v.text for v in toks].index("--kv-cache-dtype")
    return toks[k + 1]


def values(text: str):
    docs, errors = compose(text, "f.yaml")
    assert errors == []
    return {k.value: v for k, v in items(docs[0])}


def lint(text: str, path: str = "f.yaml", settings: Settings = S23):
    rep = lint_text(path, text, settings, language="yaml")
    assert rep.errors == []
    idx = LineIndex(text)
    return [(f.code, text[idx.offset(f.start.line, f.start.column):][:12]) for f in rep.findings], rep


# ---------------------------------------------------------------------------
# Scalars


@pytest.mark.parametrize("doc,editable", [
    ("k: nvfp4\n", True),
    ("k: nvfp4   # comment\n", True),
    ("k: 'nvfp4'\n", True),
    ('k: "nvfp4"\n', True),
    ("k: |\n  --kv-cache-dtype nvfp4\n  --tp 2\n", True),
    ("k: |-\n    a\n      --kv-cache-dtype nvfp4\n", True),
    ("k: >\n  --model m\n  --kv-cache-dtype nvfp4\n\n  --tp 2\n", True),
    ("k: plain\n  --kv-cache-dtype nvfp4\n", True),
    ("k: 'it''s --kv-cache-dtype nvfp4'\n", True),
    ('k: "a\\tb --kv-cache-dtype nvfp4 \\u00e9"\n', True),
    ('k: "two\n  lines --kv-cache-dtype nvfp4"\n', True),
    ('k: "nv\\x66p4 --kv-cache-dtype nvfp4"\n', True),
    ("k: - x\n", None),
])
def test_scalar_maps_point_at_the_characters(doc, editable):
    if editable is None:
        docs, errors = compose(doc, "f.yaml")
        assert errors and errors[0].line == 1
        return
    node = values(doc)["k"]
    sm = scalar_map(doc, node)
    assert sm.value == node.value
    k = sm.value.rindex("nvfp4")
    assert at(doc, sm.omap.span(Span(k, k + 5))) == "nvfp4"
    assert sm.omap.span(Span(k, k + 5)).start == doc.rindex("nvfp4")


def test_folded_joints_and_escapes_are_not_editable():
    doc = 'a: >\n  x\n  y\nb: "p\\tq"\n'
    v = values(doc)
    sm = scalar_map(doc, v["a"])
    assert sm.value == "x y\n"
    assert sm.omap.span(Span(0, 3)) is None  # "x y" is "x\n  y" in the file
    sm = scalar_map(doc, v["b"])
    assert sm.value == "p\tq" and sm.verbatim is None and sm.omap.span(Span(0, 3)) is None


_PLAIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./", min_size=1, max_size=12)


@given(words=st.lists(_PLAIN, min_size=1, max_size=8), style=st.sampled_from(["plain", "'", '"', "|", ">"]),
       indent=st.integers(min_value=1, max_value=6))
def test_every_word_of_a_scalar_maps_to_itself(words, style, indent):
    words = [w for w in words if not w.startswith(("-", "."))] or ["x"]
    pad = " " * indent
    if style == "plain":
        body = " ".join(words)
        if body[:1].isdigit() or body in ("true", "false", "null", "yes", "no", "on", "off", "y", "n"):
            body = "v" + body
            words[0] = "v" + words[0]
        doc = f"k: {body}\n"
    elif style in ("'", '"'):
        doc = f"k: {style}{' '.join(words)}{style}\n"
    else:
        doc = f"k: {style}\n" + "".join(f"{pad}{w}\n" for w in words)
    docs, errors = compose(doc, "f.yaml")
    if errors:
        return  # a scalar YAML reads otherwise (e.g. a tag or anchor): not this test's concern
    node = items(docs[0])[0][1]
    sm = scalar_map(doc, node)
    pos = 0
    for w in words:
        k = sm.value.index(w, pos)
        span = sm.omap.span(Span(k, k + len(w)))
        assert at(doc, span) == w
        pos = k + len(w)


# ---------------------------------------------------------------------------
# Formats


COMPOSE = """\
services:
  a:
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    command: python3 -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4
  b:
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    entrypoint: [python3, -m, sglang.launch_server]
    command: [--model-path, m, --kv-cache-dtype, fp4_mx_block16]
  c:
    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x
    command: ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "${KV:-nvfp4}"]
"""


def test_compose_forms():
    launches = scan_yaml(COMPOSE, "compose.yaml").launches
    assert len(launches) == 3
    a, b, c = launches
    assert at(COMPOSE, dtype(a).span) == "nvfp4" and COMPOSE.index("nvfp4") == dtype(a).span.start
    assert at(COMPOSE, dtype(b).span) == "fp4_mx_block16"
    assert dtype(c).text is None  # compose interpolation from the host: unknown
    assert all(("platform", "rocm") in [(h.kind, h.value) for h in x.hints] for x in launches)
    got, rep = lint(COMPOSE)
    assert [c for c, _ in got] == ["KV402", "KV402"]
    assert [t[:5] for _, t in got] == ["nvfp4", "fp4_m"]


def test_compose_removal_of_a_list_item_keeps_valid_yaml(tmp_path):
    doc = ("services:\n  s:\n    image: lmsysorg/sglang:v0.5.23-cu129-b200\n"
           "    command:\n      - python3\n      - -m\n      - sglang.launch_server\n"
           "      - --kv-cache-dtype\n      - nvfp4\n      - --prefill-kv-cache-dequant-dtype\n"
           "      - fp8_e4m3   # for the NVFP4 recipe\n      - --model-path\n      - m\n")
    (launch,) = scan_yaml(doc, "c.yaml").launches
    removes = [at(doc, v.remove) for v in launch.argv]
    assert removes[2] == "      - --prefill-kv-cache-dequant-dtype\n"
    # The comment stays, on its own line (issue 28: fixes keep comments; test_fix_keeps_comments.py).
    assert removes[3] == "- fp8_e4m3   "


K8S = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: s
    image: lmsysorg/sglang:latest
    command: ["python3", "-m", "sglang.launch_server"]
    args: ["--kv-cache-dtype", "$(KV)", "--model-path", "$(MODEL)", "--tp", "$$(TP)"]
    env:
    - {name: KV, value: nvfp4}
    - name: MODEL
      valueFrom: {configMapKeyRef: {name: c, key: m}}
    resources:
      limits: {amd.com/gpu: 1}
"""


def test_kubernetes_variable_expansion():
    (launch,) = scan_yaml(K8S, "pod.yaml").launches
    v = dtype(launch)
    assert v.text == "nvfp4" and at(K8S, v.span) == "nvfp4" and at(K8S, v.use) == '$(KV)'
    assert K8S.index("nvfp4") == v.span.start
    model = launch.argv[3]
    assert model.text is None  # valueFrom: not known statically
    assert launch.argv[5].text == "$(TP)"  # $$ escapes
    assert ("platform", "rocm") in [(h.kind, h.value) for h in launch.hints]


def test_kubernetes_sh_c_args_block():
    doc = ("kind: Job\nspec:\n  template:\n    spec:\n      containers:\n      - name: x\n"
           "        image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "        command: [/bin/bash, -c]\n"
           "        args:\n        - |\n          export KV=nvfp4\n"
           "          python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    (launch,) = scan_yaml(doc, "job.yaml").launches
    assert at(doc, dtype(launch).span) == "nvfp4"
    got, _ = lint(doc)
    assert got == [("KV402", "$KV\n")]


def test_github_actions_expressions_are_unknown_and_env_is_mapped():
    doc = ("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
           "    container: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "    env:\n      KV: fp4_mx_block16\n"
           "    steps:\n    - run: python3 -m sglang.launch_server --kv-cache-dtype ${{ matrix.kv }}\n"
           "    - run: python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n"
           "    - shell: pwsh\n      run: python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n")
    launches = scan_yaml(doc, "ci.yml").launches
    assert len(launches) == 2
    assert dtype(launches[0]).text is None
    v = dtype(launches[1])
    assert at(doc, v.span) == "fp4_mx_block16" and at(doc, v.use) == "$KV"


def test_a_step_is_given_the_settings_it_reads_and_the_platform_ones():
    """A step is given what it may read (kv4lint.frontends.embedded.names_read), not every setting: what it names
    reaches the launch as before, with its span at its definition (GitHub does not expand ``$KV`` in another
    setting's value); a platform variable the step never names still says where it runs."""
    doc = ("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n"
           "      HIP_VISIBLE_DEVICES: '0'\n      UNUSED: x\n      KV: fp4_e2m1\n      ARGS: --kv-cache-dtype $KV\n"
           "    steps:\n    - run: python3 -m sglang.launch_server --model-path m $ARGS\n"
           "    - run: python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    first, second = scan_yaml(doc, "ci.yml").launches
    assert [v.text for v in first.argv[-2:]] == ["--kv-cache-dtype", "$KV"]
    assert dtype(second).text == "fp4_e2m1" and at(doc, dtype(second).span) == "fp4_e2m1"
    for launch in (first, second):
        assert [(h.value, h.reason) for h in launch.hints] == [("rocm", "HIP_VISIBLE_DEVICES=0"),
                                                               ("rocm", "env: HIP_VISIBLE_DEVICES=0")]


def test_a_step_looks_its_settings_up_by_name_never_through_all_of_them():
    """What a step may read and the platform settings that say where it runs are looked up by name, and a step's
    own settings lie over its job's: a job of n settings and n steps used to look through every setting at each
    step, and copy them where the step had an ``env:`` (8,000 of each: 6.3 s, 1.4 s now)."""
    from kv4lint.frontends.yaml import Env, EnvVar

    class NoScan(dict):
        def values(self):
            raise AssertionError("looked through every setting")

        items = keys = __iter__ = values

    env = Env()
    for name, value in [("HIP_VISIBLE_DEVICES", "0"), ("UNUSED", "x"), ("KV", "fp4_e2m1"),
                        ("ARGS", "--kv-cache-dtype $KV")]:
        env.add(EnvVar(name, value))
    env.vars = NoScan(env.vars)
    assert [d.name for d in env.defs("python3 -m sglang.launch_server $ARGS")] == ["HIP_VISIBLE_DEVICES", "KV", "ARGS"]
    assert [h.reason for h in env.hints("env:")] == ["env: HIP_VISIBLE_DEVICES=0"]
    step = env.copy()  # a step's own env: over its job's, not a copy of them
    step.add(EnvVar("KV", "fp8_e4m3"))
    step.add(EnvVar("STEP", "1"))
    assert [(d.name, d.value) for d in step.defs("python3 -m sglang.launch_server $ARGS $STEP")] == [
        ("HIP_VISIBLE_DEVICES", "0"), ("KV", "fp8_e4m3"), ("ARGS", "--kv-cache-dtype $KV"), ("STEP", "1")]
    assert env.vars["KV"].value == "fp4_e2m1"


def test_names_read_follows_values_and_keeps_the_platform_ones():
    from kv4lint.frontends.embedded import names_read

    defined = {"ARGS": "--kv-cache-dtype $KV", "KV": "fp4_e2m1", "OTHER": "x", "HIP_VISIBLE_DEVICES": "0",
               "UNREAD": "$OTHER"}
    assert names_read("python -m sglang.launch_server $ARGS", defined) == {"ARGS", "KV", "HIP_VISIBLE_DEVICES"}
    assert names_read('os.environ["OTHER"]', defined) == {"OTHER", "HIP_VISIBLE_DEVICES"}


def test_gitlab_script_lines_share_one_shell():
    doc = ("serve:\n  image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n  script:\n"
           "    - KV=nvfp4\n    - python3 -m sglang.launch_server --model-path m --kv-cache-dtype $KV\n")
    (launch,) = scan_yaml(doc, ".gitlab-ci.yml").launches
    assert at(doc, dtype(launch).span) == "nvfp4"


def test_skypilot_accelerators_hint():
    doc = "resources:\n  accelerators: {MI300X: 8}\nrun: python -m sglang.launch_server --kv-cache-dtype nvfp4\n"
    (launch,) = scan_yaml(doc, "task.yaml").launches
    assert [(h.kind, h.value) for h in launch.hints] == [("platform", "rocm")]


# ---------------------------------------------------------------------------
# SGLang config files


CONFIG = """\
# server
model-path: Qwen/Qwen3-8B
kv-cache-dtype: "nvfp4"
enable-metrics: yes          # PyYAML reads yes as true
disable-radix-cache: false
mem-fraction-static: 0.850
cuda-graph-bs: [1, 2, 4]
dp: ~
"""


def test_config_tokens_as_sglang_builds_them():
    docs, _ = compose(CONFIG, "c.yaml")
    toks = sglang_config.config_tokens(CONFIG, docs[0])
    assert [t.text for t in toks] == ["--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "nvfp4",
                                      "--enable-metrics", "--mem-fraction-static", "0.85",
                                      "--cuda-graph-bs", "1", "2", "4", "--dp", "None"]
    assert at(CONFIG, toks[3].span) == "nvfp4"
    assert toks[6].span is None  # 0.850 is read as 0.85: not the written text
    assert at(CONFIG, toks[2].remove) == 'kv-cache-dtype: "nvfp4"\n'
    assert at(CONFIG, toks[2].use) == "kv-cache-dtype"


@pytest.mark.parametrize("doc,is_config", [
    (CONFIG, True),
    ("kv-cache-dtype: nvfp4\nattention-backend: triton\n", True),
    ("kv-cache-dtype: fp8\nattention-backend: FLASH_ATTN\n", False),  # vLLM's values
    ("model: m\nkv-cache-dtype: fp8\nattention_backend: FLASH_ATTN\n", False),
    ("kv_cache_dtype: nvfp4\n", False),  # SGLang would build --kv_cache_dtype: not its config
    ("kv-cache-dtype:\n  help: nvfp4\n", False),
    ("tp: 2\nport: 30000\n", False),  # no KV/attention key: nothing to check, not claimed
    ("- kv-cache-dtype\n- nvfp4\n", False),
    ("services:\n  s: {image: x}\n", False),
])
def test_config_detection(doc, is_config):
    docs, _ = compose(doc, "c.yaml")
    assert sglang_config.looks_like_config(docs[0]) is is_config


def test_an_options_union_over_the_releases_is_read_from_their_tables():
    # in_any_release reads the releases one option at a time; here the same union from every whole table.
    union: dict[str, tuple[str, frozenset | None]] = {}
    for rel in known_releases():
        for opt, spec in table(rel).items():
            arity, choices = union.get(opt, (spec.arity, None))
            if spec.choices is not None:
                choices = (choices or frozenset()) | frozenset(spec.choices)
            union[opt] = (arity, choices)
    assert {opt: in_any_release(opt) for opt in union} == union
    assert union["--kv-cache-dtype"][1] >= {"fp4_e2m1", "nvfp4", "fp8_e4m3"}
    assert in_any_release("--no-such-option") is None


def test_config_file_is_a_launch_and_its_fix_edits_in_place():
    doc = "model-path: m\nkv-cache-dtype: nvfp4   # FP4\nprefill-kv-cache-dequant-dtype: fp8_e4m3\ntp: 2\n"
    got, rep = lint(doc, "serve.yaml", Settings(sglang_version="0.5.23", gpu="h100"))
    assert got == [("KV404", "nvfp4   # FP")]
    (f,) = rep.findings
    from kv4lint.fixes.edits import apply_edits

    fixed, skipped = apply_edits(doc, list(f.fix.edits))
    assert skipped == []
    assert fixed == "model-path: m\nkv-cache-dtype: fp8_e4m3   # FP4\ntp: 2\n"


def test_config_merged_into_a_launch(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    cfg = "kv-cache-dtype: fp4_mx_block16\nmodel-path: m\n"
    (tmp_path / "configs" / "x.yaml").write_text(cfg)
    (tmp_path / "deploy").mkdir()
    doc = ("services:\n  s:\n    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "    command: python3 -m sglang.launch_server --config configs/x.yaml --port 1\n")
    path = str(tmp_path / "deploy" / "compose.yaml")
    res = scan_yaml(doc, path)
    launch_configs.attach_configs(res, path)  # the pipeline stage after the frontend (and its cache)
    (launch,) = res.launches
    assert launch.config_path == str(tmp_path / "configs" / "x.yaml")  # found in a parent directory
    v = dtype(launch)
    assert at(cfg, v.span) == "fp4_mx_block16" and at(doc, v.use) == "configs/x.yaml"
    got, rep = lint(doc, path)
    assert got == [("KV402", "configs/x.ya")]
    (e,) = rep.findings[0].fix.edits
    assert e.path == launch.config_path and rep.findings[0].fix.applicability == "unsafe"


def test_config_not_merged_for_bench_scripts_or_abbreviations(tmp_path):
    (tmp_path / "x.yaml").write_text("kv-cache-dtype: nvfp4\n")
    doc = ("a: {image: x, command: python3 -m sglang.bench_one_batch --config x.yaml}\n"
           "b: {image: x, command: python3 -m sglang.launch_server --config=x.yaml}\n"
           "c: {image: x, command: python3 -m sglang.launch_server --config x.yaml --config x.yaml}\n")
    res = scan_yaml("services:\n" + "".join("  " + line + "\n" for line in doc.splitlines()),
                    str(tmp_path / "compose.yaml"))
    launch_configs.attach_configs(res, str(tmp_path / "compose.yaml"))
    assert len(res.launches) == 3
    assert all(launch.config_argv == [] for launch in res.launches)


def test_load_config_argv_refuses_non_yaml_and_bad_files(tmp_path):
    (tmp_path / "x.json").write_text('{"kv-cache-dtype": "nvfp4"}')
    (tmp_path / "bad.yaml").write_text("a: [\n")
    (tmp_path / "list.yaml").write_text("- a\n")
    assert launch_configs.load_config_argv("x.json", str(tmp_path)) is None
    assert launch_configs.load_config_argv("bad.yaml", str(tmp_path)) is None
    assert launch_configs.load_config_argv("list.yaml", str(tmp_path)) is None
    assert launch_configs.load_config_argv("missing.yaml", str(tmp_path)) is None
    assert launch_configs.load_config_argv("$CFG.yaml", str(tmp_path)) is None


# ---------------------------------------------------------------------------
# Errors


def test_bad_yaml_is_a_file_error_with_its_line():
    doc = "services:\n  s:\n    command: [python3 -m sglang.launch_server\n"
    res = scan_yaml(doc, "c.yaml")
    assert res.launches == []
    (err,) = res.errors
    assert err.line == 4 and "cannot parse YAML" in err.message


def test_documents_before_an_error_are_still_scanned():
    doc = ("services:\n  s:\n    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "    command: python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n---\n: : :\n  - [\n")
    res = scan_yaml(doc, "c.yaml")
    assert len(res.launches) == 1 and len(res.errors) == 1


@given(st.text(max_size=300))
def test_never_raises(text):
    res = scan_yaml("sglang: x\n" + text, "f.yaml")
    assert isinstance(res.errors, list)


def test_unsafe_tags_are_never_constructed():
    doc = ("!!python/object/apply:os.system ['echo pwned']\n")
    res = scan_yaml(doc, "f.yaml")
    assert res.launches == []


def test_suppression_comment_above_a_key():
    doc = ("services:\n  s:\n    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "    # kv4lint: disable=KV402\n"
           "    command:\n      - python3\n      - -m\n      - sglang.launch_server\n"
           "      - --kv-cache-dtype\n      - nvfp4\n"
           "  t:\n    image: lmsysorg/sglang:v0.5.23-rocm700-mi30x\n"
           "    command: python3 -m sglang.launch_server --kv-cache-dtype nvfp4  # kv4lint: disable\n")
    assert lint(doc)[0] == []


# ---------------------------------------------------------------------------
# Aliases anywhere (issue 28 item 4): an alias is its anchor's value, reported where the launch uses it.

ANCHORS = ("x-sglang:\n  kv: &kv fp4_e2m1\n  flag: &flag --kv-cache-dtype\n"
           "  cmd: &cmd [python3, -m, sglang.launch_server]\n")


@pytest.mark.parametrize("command", [
    # the issue's shape: an alias inside a flow sequence (an internal error, exit 2, before)
    "command: [python3, -m, sglang.launch_server, --kv-cache-dtype, *kv]",
    "command: [python3, -m, sglang.launch_server, *flag, *kv]",
    "command: [python3, -m, sglang.launch_server,\n      --kv-cache-dtype,  # the KV cache\n      *kv]",
    "command: &svc [python3, -m, sglang.launch_server, --kv-cache-dtype, *kv]",
    "command:\n      - python3\n      - -m\n      - sglang.launch_server\n      - --kv-cache-dtype\n      - *kv",
    "entrypoint: *cmd\n    command: [--kv-cache-dtype, *kv]",
])
def test_an_alias_in_a_command_is_its_anchors_value(command):
    text = ANCHORS + "services:\n  sglang:\n    image: lmsysorg/sglang:v0.5.23\n    " + command + "\n"
    got, rep = lint(text, "compose.yaml")
    assert [code for code, _ in got] == ["KV406"]
    # reported at the alias in the launch, not at the anchor other launches share; its fix would edit the
    # anchor, shared by every alias: not a safe fix from here
    assert got[0][1].startswith("*kv")
    assert rep.findings[0].fix is None or rep.findings[0].fix.applicability != "safe"


def test_aliases_in_kubernetes_args():
    text = ("x-args: &dtype fp4_e2m1\napiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n"
            "    - name: s\n      image: lmsysorg/sglang:v0.5.23\n      command: [python3, -m, sglang.launch_server]\n"
            "      args: [--model-path, meta-llama/Llama-3.1-8B-Instruct, --kv-cache-dtype, *dtype]\n")
    got, _ = lint(text, "pod.yaml")
    assert got == [("KV406", "*dtype]\n")]


_ITEMS = ["python3", "-m", "sglang.launch_server", "--kv-cache-dtype", "fp4_e2m1", "*kv", "*flag", "*cmd",
          "'*kv'", "!!str nvfp4", "&x nvfp4", "*kv  # note"]


@given(st.lists(st.sampled_from(_ITEMS), min_size=1, max_size=8), st.booleans(), st.sampled_from(["", "&s ", "!!seq "]),
       st.sampled_from(["command", "args", "entrypoint"]))
def test_fuzz_aliases_never_raise_and_spans_stay_in_the_text(items_, flow, opener, key):
    if flow:
        body = f"    {key}: {opener}[" + ", ".join(items_) + "]\n"
    else:
        body = f"    {key}:\n" + "".join(f"      - {e}\n" for e in items_)
    text = ANCHORS + "services:\n  s:\n    image: lmsysorg/sglang:v0.5.19\n" + body
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns of a reused anchor (&x twice)
        r = scan_yaml(text, "c.yaml")
    assert not [e for e in r.errors if "internal" in e.message], r.errors
    for launch in r.launches:
        for v in launch.argv:
            for s in (v.span, v.use, v.remove):
                assert s is None or 0 <= s.start <= s.end <= len(text)


def test_an_alias_in_an_environment_mapping_is_its_anchors_value():
    # an internal error ("bad span": the alias is written after its key, its node before) before
    text = ("x-kv: &kv fp4_e2m1\napiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n"
            "    - name: s\n      image: lmsysorg/sglang:v0.5.23\n      env:\n        - {name: KV, value: *kv}\n"
            "      command: [python3, -m, sglang.launch_server, --kv-cache-dtype, $(KV)]\n")
    got, _ = lint(text, "pod.yaml")
    assert [code for code, _ in got] == ["KV406"]
    compose_text = ("x-kv: &kv fp4_e2m1\nservices:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n    environment:\n"
                    "      KV: *kv\n    entrypoint: [/bin/sh, -c]\n"
                    "    command: [\"python3 -m sglang.launch_server --kv-cache-dtype $$KV\"]\n")
    got, _ = lint(compose_text, "compose.yaml")
    assert [code for code, _ in got] == ["KV406"]


def test_an_alias_in_an_sglang_config_file(tmp_path):
    (tmp_path / "sgl.yaml").write_text("x-kv: &kv fp4_e2m1\nkv-cache-dtype: *kv\n")
    run = tmp_path / "run.sh"
    run.write_text("python -m sglang.launch_server --model-path m --config sgl.yaml\n")
    rep = lint_text(str(run), run.read_text(), S23, language="shell")
    assert not [e for e in rep.errors if "internal" in e.message], rep.errors
    assert "KV406" in [f.code for f in rep.findings]


def test_an_anchor_defined_twice_prints_nothing_and_the_alias_names_the_latest(capsys):
    import warnings

    text = ("x-a: &kv nvfp4\nx-b: &kv fp4_e2m1\nservices:\n  s:\n    image: lmsysorg/sglang:v0.5.23\n"
            "    command: [python3, -m, sglang.launch_server, --kv-cache-dtype, *kv]\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, _ = lint(text, "compose.yaml")
    assert [str(w.message) for w in caught] == []  # ruamel's ReusedAnchorWarning quoted the file's lines
    assert got == [("KV406", "*kv]\n")]  # fp4_e2m1: YAML's alias refers to the latest anchor of its name


def test_merge_keys_as_pyyaml_merges_them():
    """Own keys win over merged ones, of the sources the first that has a key; a chain of ``<<`` aliases is
    expanded once per mapping (issue 34: ``<<: [*a, *a]`` chained was exponential), a mapping that merges
    itself merges nothing from itself.  A lookup (``get``, ``key_node``) answers what the pairs say, of a key
    written twice the last."""
    text = ("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc: &c\n  <<: [*a, *b]\n  x: 3\n"
            "d: &d\n  <<: *c\n  w: 4\ne: &e\n  <<: *e\n  v: 5\nf: {<<: *a, x: 6, x: 7}\ng: {x: 8, x: 9}\n")
    (doc,), errors = compose(text, "x.yaml")
    assert errors == []
    got = {k.value: dict((kk.value, vv.value) for kk, vv in items(v)) for k, v in items(doc)}
    assert got["c"] == {"x": "3", "y": "1", "z": "2"}
    assert got["d"] == {"x": "3", "y": "1", "z": "2", "w": "4"}
    assert got["e"] == {"v": "5"}
    assert got["f"] == {"x": "7", "y": "1"} and got["g"] == {"x": "9"}
    for k, v in items(doc):
        assert {key: get(v, key).value for key in got[k.value]} == got[k.value]
        assert get(v, "<<") is None and get(v, "nope") is None and key_node(v, "nope") is None
    for name, pair in [("d", "x: 3"), ("d", "w: 4"), ("f", "x: 7"), ("f", "y: 1"), ("g", "x: 9")]:
        at = key_node(get(doc, name), pair[0]).start_mark.index
        assert text[at:at + 4] == pair  # where the key is written: in ``a`` for f's merged ``y``


def test_merge_keys_past_the_bound_are_a_file_error(monkeypatch):
    from kv4lint.frontends import yaml_nodes

    monkeypatch.setattr(yaml_nodes, "MAX_YAML_MERGED", 50)
    links = "".join(f"x{i}: &x{i} {{<<: *x{i - 1}, k{i}: v}}\n" for i in range(1, 12))
    docs, errors = compose("x0: &x0 {k0: v}\n" + links, "m.yaml")
    assert docs == [] and [e.message for e in errors] == [
        "YAML merge keys (<<) expanding to more than 50 pairs (the limit kv4lint reads): not scanned"]
    docs, errors = compose("x0: &x0 {k0: v}\n" + links[:links.index("x9:")], "m.yaml")
    assert docs and errors == []
