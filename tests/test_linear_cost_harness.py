"""The linear-cost harness can fail: a quadratic route fails it however often it measures again, a linear one
passes even when its first n is too small to measure (the harness doubles n)."""

from __future__ import annotations

from itertools import repeat

import pytest
from linear_cost import assert_linear


def _quadratic(text: str) -> None:
    # interpreter steps, not memory copies: a copy-bound square (a prefix sliced per character) measured 2.5x
    # under a busy neighbour's memory traffic on CI's 2 cores, where this stays near 4x
    for i in range(len(text)):
        for _ in repeat(None, i):  # no int objects: tracemalloc's run stays as fast as the timed ones
            pass


def _linear(text: str) -> None:
    for _ in range(len(text)):
        sum(range(200))


def test_a_quadratic_route_fails():
    with pytest.raises(AssertionError, match="CPU time grows"):
        assert_linear(lambda n: "x" * n, _quadratic, 3000, what="quadratic")  # about 35 ms


def test_a_linear_route_passes_and_a_too_small_n_is_raised():
    assert_linear(lambda n: "x" * n, _linear, 4000, what="linear")  # about 4 ms: under the floor at first
