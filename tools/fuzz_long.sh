#!/usr/bin/env bash
# The long fuzz run of issue 9: every property test in tests/test_fuzz.py with N examples each
# (CI runs the same tests with a small fixed set of examples; this explores, with a random seed).
#
#   tools/fuzz_long.sh            # 20000 examples per test
#   tools/fuzz_long.sh 5000       # fewer
#   JOBS=4 tools/fuzz_long.sh     # pytest-xdist workers (default: auto)
#   tools/fuzz_long.sh 20000 -k shell   # extra pytest arguments after N
#
# A failure prints the shrunk example and a @reproduce_failure blob; Hypothesis also keeps it in
# .hypothesis/ (git-ignored), so the next run (long or CI-sized) tries it first.
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-${KV4LINT_FUZZ_EXAMPLES:-20000}}"
shift || true
PY="${PYTHON:-.venv/bin/python}"
export KV4LINT_FUZZ_EXAMPLES="$N"
exec "$PY" -m pytest tests/test_fuzz.py -p no:cacheprovider -q -n "${JOBS:-auto}" --hypothesis-show-statistics "$@"
