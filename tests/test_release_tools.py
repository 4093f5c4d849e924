"""The tools a maintainer adds a release with (docs/adding-a-release.md), on SGLang's real wheels.

tools/gen_options.py must reproduce the option data from the wheels, and tools/release_diff.py must name,
for 0.5.22 -> 0.5.23, the changes that kv4lint/sglang/releases.py's 0.5.23 gates encode. Both read the wheels
(tools/fetch_sglang_wheels.py's cache, downloaded on first use): marked ``conformance`` like the other tests
that need them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from kv4lint.sglang import releases

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(f"kv4lint_tools_{name}", ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gen_options_reproduces_the_data_from_the_wheels():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_options.py"), "--check"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.strip().endswith("0 differ from options.json.gz")


# Each 0.5.23 gate of releases.py -> (the report's section, what that section must name).
GATES_0_5_23 = {
    "BACKEND_ALIASES": ("deprecated arguments (backend aliases): changed",
                        ["'tokenspeed_mla': 'cutedsl_mla'", "'compressed': 'dsv4'",
                         "tokenspeed_mla required FP8 KV; setting --kv-cache-dtype=fp8_e4m3."]),
    "DFLASH_TRTLLM_MHA_DEFAULT": ("default attention backend: changed", ["_forces_eagle_topk_one", "DFLASH"]),
}


def _sections(text: str) -> dict[str, str]:
    """The report's sections: a heading line (``NAME: changed``) and the indented lines under it."""
    out, head = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and ": " in line:
            head = line
            out[head] = ""
        elif head is not None:
            out[head] += line + "\n"
    return out


def test_release_diff_names_what_the_0_5_23_gates_encode():
    gates = {name for name, value in vars(releases).items()
             if name.isupper() and isinstance(value, int) and not isinstance(value, bool) and value == 23
             and name != "NEWEST"}
    assert gates == set(GATES_0_5_23), "a 0.5.23 gate without an expectation here (or one gone)"
    text, changed = _tool("release_diff").report("0.5.22", "0.5.23")
    assert changed
    sections = _sections(text)
    for gate, (section, wanted) in GATES_0_5_23.items():
        assert section in sections, f"{gate}: no {section!r} in the report:\n{text}"
        for w in wanted:
            assert w in sections[section], f"{gate}: {w!r} not under {section!r}:\n{sections[section]}"
    # what did not change is not reported: the KV4 check itself is the same in both releases
    assert not any(s.startswith("KV4 check") for s in sections)
    assert "KV4 check" in text.splitlines()[-1] and text.splitlines()[-1].startswith("unchanged: ")
    assert "~ --kv-cache-dtype" not in text


def test_release_diff_runs_the_conformance_differential(monkeypatch, capsys):
    tool = _tool("release_diff")
    calls = []
    monkeypatch.setattr(tool.subprocess, "call", lambda cmd, cwd=None: calls.append(cmd) or 0)
    assert tool.main(["0.5.22", "0.5.23"]) == 0
    assert len(calls) == 1 and calls[0][-3:] == [str(ROOT / "tests" / "test_conformance.py"), "-k", "0.5.23"]
    assert "-m" in calls[0] and "conformance" in calls[0]
    assert tool.main(["0.5.22"]) == 2
