"""The linear-cost harness can fail: a quadratic route fails it however often it measures again, a linear one
passes even when its first n is too small to measure (the harness doubles n)."""

from __future__ import annotations

import pytest
from linear_cost import assert_linear


def _quadratic(text: str) -> None:
    for i in range(len(text)):  # a prefix copied per character: the square of the length
        text[:i].count("y")


def _linear(text: str) -> None:
    for _ in range(len(text)):
        sum(range(200))


def test_a_quadratic_route_fails():
    with pytest.raises(AssertionError, match="CPU time grows"):
        assert_linear(lambda n: "x" * n, _quadratic, 16000, what="quadratic")


def test_a_linear_route_passes_and_a_too_small_n_is_raised():
    assert_linear(lambda n: "x" * n, _linear, 4000, what="linear")  # about 4 ms: under the floor at first
