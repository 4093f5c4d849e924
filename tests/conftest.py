import os
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

# Hypothesis: three profiles, registered here once, chosen by KV4LINT_HYPOTHESIS_PROFILE (default: "ci" when the
# CI environment variable is set, as CI systems do, else "dev").  The property tests set no example counts of
# their own.
#   dev  -- the edit-test loop: few examples, the same ones every run;
#   ci   -- what CI runs: more examples, still the same ones every run (a red CI is reproducible);
#   long -- exploration (tools/fuzz_long.sh): many random examples; failures are kept in .hypothesis/.
HYPOTHESIS_PROFILE_ENV = "KV4LINT_HYPOTHESIS_PROFILE"
_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=30, derandomize=True, **_COMMON)
settings.register_profile("ci", max_examples=200, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=20000, derandomize=False, **_COMMON)


def hypothesis_profile() -> str:
    chosen = os.environ.get(HYPOTHESIS_PROFILE_ENV)
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


settings.load_profile(hypothesis_profile())


def pytest_addoption(parser):
    parser.addoption("--update-snapshots", action="store_true",
                     help="rewrite each fixture's .expected file from kv4lint's output instead of comparing")


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
    import tempfile

    if "KV4LINT_CACHE_DIR" not in os.environ:
        os.environ["KV4LINT_CACHE_DIR"] = config._kv4lint_cache_dir = tempfile.mkdtemp(prefix="kv4lint-test-cache-")


def pytest_unconfigure(config):
    """The session's cache directory goes with the session (xdist's workers inherit it and leave it be)."""
    import shutil

    made = getattr(config, "_kv4lint_cache_dir", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        if os.environ.get("KV4LINT_CACHE_DIR") == made:
            del os.environ["KV4LINT_CACHE_DIR"]
