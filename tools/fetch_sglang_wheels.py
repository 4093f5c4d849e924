"""Fill the conformance test's wheel cache ahead of time (e.g. in a CI cache step).

    python tools/fetch_sglang_wheels.py            # every release the conformance test reads
    python tools/fetch_sglang_wheels.py 0.5.23     # just these

The cache is ``$KV4LINT_WHEEL_CACHE`` or ``~/.cache/kv4lint/sglang-wheels``; the
test downloads whatever is missing on first use anyway (tests/conformance/wheels.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from conformance import wheels  # noqa: E402
from kv4lint.sglang.releases import WHEEL_RELEASES  # noqa: E402

RELEASES = list(WHEEL_RELEASES)


def main(argv: list[str]) -> int:
    for version in argv or RELEASES:
        path = wheels.wheel_path(version)
        print(f"sglang=={version}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
