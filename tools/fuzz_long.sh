#!/usr/bin/env bash
# The long fuzz run of issue 9: every property test in tests/test_fuzz.py under the Hypothesis profile "long"
# (tests/conftest.py: many random examples per test; CI runs the same tests under "ci", a fixed set).
#
#   tools/fuzz_long.sh                        # tests/test_fuzz.py
#   tools/fuzz_long.sh tests/test_fix_properties.py -k crlf   # other pytest arguments instead
#   JOBS=4 tools/fuzz_long.sh                 # pytest-xdist workers (default: auto)
#
# A failure prints the shrunk example and a @reproduce_failure blob; Hypothesis also keeps it in
# .hypothesis/ (git-ignored), so the next run (long or CI-sized) tries it first.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
export KV4LINT_HYPOTHESIS_PROFILE=long
[ "$#" -gt 0 ] || set -- tests/test_fuzz.py
exec "$PY" -m pytest -p no:cacheprovider -q -n "${JOBS:-auto}" --hypothesis-show-statistics "$@"
