"""Chars (kv4lint.frontends.shell.parse): a run of a text's own characters kept as its first offset gives the same
offsets, provenance and span as the per-character lists it stands for, through every slice and join."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kv4lint.frontends.shell.parse import Chars, CharsBuilder, ShellText, contiguous_span

_TEXT = "0123456789abcdefghijklmnopqrstuvwxyz" * 2
_SRC = ShellText(_TEXT)  # the file itself: its characters are runs
_RES = object()


@st.composite
def pieces(draw):
    """A Chars and the lists it stands for: a run of the file's text, or one with lists given."""
    s = draw(st.integers(0, len(_TEXT)))
    e = draw(st.integers(s, min(len(_TEXT), s + 12)))
    kind = draw(st.sampled_from(["run", "lists", "bare", "resolved"]))
    text = _TEXT[s:e]
    if kind == "run":
        return _SRC.chars(s, e), list(range(s, e)), [None] * (e - s)
    if kind == "bare":  # made-up characters: written nowhere
        return Chars(text), [None] * len(text), [None] * len(text)
    pos = draw(st.lists(st.one_of(st.none(), st.integers(0, 200)), min_size=len(text), max_size=len(text)))
    res = [None] * len(text) if kind == "lists" else draw(
        st.lists(st.sampled_from([None, _RES]), min_size=len(text), max_size=len(text)))
    return Chars(text, pos, res), pos, res


def same(c: Chars, text: str, pos: list, res: list) -> None:
    assert c.text == text
    assert c.pos == pos
    assert c.res == res
    assert c.span() == contiguous_span(pos)
    assert c.plain() == all(r is None for r in res)
    assert len(c) == len(text)


@given(st.lists(pieces(), max_size=6), st.integers(-3, 40), st.integers(-3, 40))
def test_runs_read_as_their_lists(ps, a, b):
    text, pos, res = "", [], []
    joined = Chars()
    built = CharsBuilder()
    for c, p, r in ps:
        same(c, c.text, p, r)
        same(c[a:b], c.text[a:b], p[a:b], r[a:b])
        text, pos, res = text + c.text, pos + p, res + r
        joined = joined + c
        built.add(c)
        same(joined, text, pos, res)
    whole = built.build()
    same(whole, text, pos, res)
    same(whole[a:b], text[a:b], pos[a:b], res[a:b])
    same(whole.with_res([_RES] * len(text)), text, pos, [_RES] * len(text))


def test_adjacent_runs_stay_one_run():
    """Words of the file that follow each other join without per-character lists (what makes them cheap)."""
    b = CharsBuilder()
    b.add(_SRC.chars(3, 6))
    b.add(_SRC.chars(6, 9))
    c = b.build()
    assert (c.at, c._pos, c._res) == (3, None, None)
    c = _SRC.chars(3, 6) + _SRC.chars(6, 9)
    assert (c.at, c._pos, c._res) == (3, None, None)
    assert c[2:5].at == 5 and c[2:5]._pos is None
    assert (_SRC.chars(3, 6) + _SRC.chars(7, 9)).at is None  # not adjacent: lists


def test_runs_apart_join_as_lists():
    assert (_SRC.chars(3, 5) + _SRC.chars(7, 9)).pos == [3, 4, 7, 8]
    assert _built(_SRC.chars(3, 5), _SRC.chars(7, 9)).pos == [3, 4, 7, 8]
    assert _built(_SRC.chars(3, 5), _SRC.chars(7, 9)).span() is None
    assert _built(Chars("x"), _SRC.chars(7, 9)).pos == [None, 7, 8]
    assert _built(_SRC.chars(3, 5), Chars("x"), _SRC.chars(5, 6)).pos == [3, 4, None, 5]
    assert _built(_SRC.chars(3, 5), Chars("x", res=[_RES])).res == [None, None, _RES]


def _built(*cs: Chars) -> Chars:
    b = CharsBuilder()
    for c in cs:
        b.add(c)
    return b.build()


def test_a_value_made_of_pieces_keeps_each_characters_offset():
    """A value written in two places is edited character by character (Value.offsets); one written in one place
    by its span alone."""
    from kv4lint.frontends.shell import scan_shell

    text = 'V=nvfp\npython -m sglang.launch_server --kv-cache-dtype "$V"4\n'
    v = scan_shell(text, "t.sh").launches[0].argv[1]
    assert (v.text, v.span, v.offsets) == ("nvfp4", None, (2, 3, 4, 5, text.index('4\n')))
    text = 'V=nvfp4\npython -m sglang.launch_server --kv-cache-dtype "$V"\n'
    v = scan_shell(text, "t.sh").launches[0].argv[1]
    assert (v.text, v.span.start, v.span.end, v.offsets) == ("nvfp4", 2, 7, None)


@given(st.text(alphabet="ab \n\r\t#", max_size=40), st.data())
def test_a_texts_line_of_an_offset_is_the_line_index_s(text, data):
    """ShellText.line counts lines as LineIndex.position does (\\n, \\r\\n, a lone \\r; offsets clamped to the text),
    without making the Position."""
    from kv4lint.base.source import LineIndex

    offset = data.draw(st.integers(-3, len(text) + 3))
    assert ShellText(text).line(offset) == LineIndex(text).position(offset).line


def test_line_and_spans_read_a_non_ascii_text_by_characters():
    src = ShellText("é x\nñ y\n")
    root_kids = [type("N", (), {"start_byte": 3, "end_byte": 4})(), type("N", (), {"start_byte": 7, "end_byte": 8})()]
    assert src.spans(root_kids) == [(2, 3), (5, 6)]
    assert [src.line(src.c(k.start_byte)) for k in root_kids] == [1, 2]
