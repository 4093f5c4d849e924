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
