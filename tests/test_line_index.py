"""``LineIndex.line``: the line of an offset without making its Position (asked for every launch and finding) must
be :meth:`LineIndex.position`'s line for every offset, whatever ends the lines, and clamp as it does."""

from __future__ import annotations

import pytest

from kv4lint.base.source import LineIndex


@pytest.mark.parametrize("text", ["", "x", "a\nbb\n\nccc",
                                  "a\r\nbb\r\n\r\nc\n", "a\rb\r\rc", "\n\n", "mixed\r\nends\rhere\n"])
def test_line_is_the_line_of_position_for_every_offset(text):
    index = LineIndex(text)
    for offset in range(-2, len(text) + 3):
        assert index.line(offset) == index.position(offset).line, (text, offset)


def test_line_counts_from_one_and_names_the_last_line_past_the_end():
    index = LineIndex("one\ntwo\nthree")
    assert [index.line(o) for o in (0, 3, 4, 8, 13, 99)] == [1, 1, 2, 3, 3, 3]
