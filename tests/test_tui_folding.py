"""The folding module's fast measures, held equal to rich's own (``cell_len``) and to the cut
they replace (the word re-measured whole at each cut), on text of every kind of width."""

from __future__ import annotations

from callscope.tui.panes import folding
from callscope.tui.panes.folding import _LONG_WORD, BREAK_AFTER, cells, soft_wrap_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from rich._wrap import divide_line
from rich.cells import cell_len, chop_cells
from textual.content import Content

CHARS = st.sampled_from([
    "a", "Z", "0", " ", "\t", ".", "_", "/", "-", ",", ":", ";", '"', "{", "\x00", "\x1b", "\x7f",
    "\x85", "\xa0", "ó", "é", "—", "…", "中", "文", "ｱ", "😀", "👍", "\u200d", "\ufe0f", "\u0301",
    "\u200b"])
TEXT = st.lists(st.one_of(CHARS, st.text(alphabet="abcdefgh.:/_", min_size=1, max_size=40)),
                max_size=400).map("".join)


def reference_cuts(plain: str, width: int) -> list[int]:
    """The cuts as made before: the rest of the word measured whole before each cut."""
    if width < 8 or cell_len(plain) <= width:
        return []
    cuts: list[int] = []
    for match in _LONG_WORD.finditer(plain):
        start, end = match.span()
        while cell_len(plain[start:end]) > width:
            size = width
            while cell_len(plain[start:start + size]) > width:
                size -= 1
            piece = plain[start:start + size]
            at = max(piece.rfind(c) for c in BREAK_AFTER) + 1
            if at <= 0:
                break
            cuts.append(start + at)
            start += at
    return cuts


@settings(max_examples=400, deadline=None)
@given(TEXT, st.integers(0, 3))
def test_cells_is_rich_cell_len(text: str, copies: int) -> None:
    text = text * (1 + copies * 3)  # (long ones too: under 512 characters it is cell_len)
    assert cells(text) == cell_len(text)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(1, 120))
def test_soft_cuts_are_the_reference_cuts(text: str, width: int) -> None:
    assert folding._soft_cuts(text, width) == reference_cuts(text, width)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(CHARS, st.text(alphabet="abc", min_size=1, max_size=30)),
                min_size=1, max_size=60).map("".join), st.integers(2, 40))
def test_a_word_folded_by_arithmetic_is_rich_s_chop(word: str, width: int) -> None:
    folded = folding._folded(word, width)
    if folded is not None:
        chopped = chop_cells(word, width)
        assert folded == (len(chopped), cell_len(chopped[-1]))
    if not any(c in word for c in "\u200d\ufe0f\u0301\u200b\x00\x1b\x7f\x85\t"):
        assert folded is not None  # (one- and two-cell characters only: always by arithmetic)


@settings(max_examples=400, deadline=None)
@given(TEXT.map(lambda t: t.replace("\n", " ")), st.integers(1, 120))
def test_divided_rows_are_rich_s_divided_lines(text: str, width: int) -> None:
    assert folding.divided_rows(text, width) == len(divide_line(text, width, fold=True)) + 1


@settings(max_examples=200, deadline=None)
@given(TEXT.map(lambda t: t.replace("\n", " ")), st.integers(1, 120))
def test_soft_wrap_rows_count_the_soft_wrapped_rows(text: str, width: int) -> None:
    line = Content(text)
    assert soft_wrap_rows(line, width) == len(folding.soft_breaks(line, width).wrap(width))


def test_a_long_word_is_cut_in_linear_time() -> None:
    """A 60,000-character word (a frame's raw JSON line) is measured once, not once per cut:
    cell_len is called on pieces of at most the width, and on the word once."""
    word = ('{"type":"response.output_item.done","item":{"arguments":"m\u00f3dulo_8.py"},' * 800)
    measured: list[int] = []

    def counting(text: str) -> int:
        measured.append(len(text))
        return cell_len(text)

    original = folding.cell_len
    folding.cell_len = counting
    try:
        cuts = folding._soft_cuts(word, 90)
    finally:
        folding.cell_len = original
    assert cuts == reference_cuts(word, 90) and len(cuts) > 500
    assert sum(measured) < 4 * len(word)
