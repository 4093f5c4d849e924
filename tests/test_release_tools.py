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
