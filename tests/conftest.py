from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


def pytest_terminal_summary(terminalreporter):
    """Print the conformance counts (per release: configurations compared, differences), also under xdist."""
    lines = sorted(v for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])
                   for k, v in getattr(r, "user_properties", ()) if k == "conformance")
    if lines:
        terminalreporter.section("SGLang conformance")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_configure(config):
    """kv4lint's parse cache (on by default in the CLI) goes to a directory of this test session, never to the
    user's ~/.cache; subprocesses inherit it.  Tests of the cache itself use their own directories."""
    import os
    import tempfile

    if "KV4LINT_CACHE_DIR" not in os.environ:
        os.environ["KV4LINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kv4lint-test-cache-")
