import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def run_cli(tmp_path, monkeypatch):
    """Run ``kv4lint`` in-process; returns (exit code, stdout text)."""
    from kv4lint.cli import main

    def run(*args, cwd=None):
        out = tmp_path / f"out-{os.getpid()}-{len(list(tmp_path.iterdir()))}.txt"
        if cwd:
            monkeypatch.chdir(cwd)
        code = main([*args, "--output-file", str(out)] if args and args[0] in ("check",) else list(args))
        return code, out.read_text() if out.exists() else ""

    return run
