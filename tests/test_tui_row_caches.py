"""The rows the panes draw a piece at a time are the rows they drew whole (the caches and
partial drawings that make a step cheap: see tui/panes/rows.py, lane_text.py, folding.py)."""

from __future__ import annotations

import random
from bisect import bisect_right

import pytest
from callscope.core import synth
from callscope.core.jsonprefix import Draft
from callscope.core.timeline import Timeline
from callscope.tui.panes.folding import soft_breaks, soft_wrap_rows
from callscope.tui.panes.lane_text import argument_lines, argument_row, fold_segments, text_widths
from callscope.tui.panes.rows import LineWrapped, Wrapped
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.style import Style


class _Styles:
    """TextStyles without a pane: a distinct style per (odd, new, escape, frame)."""

    base = Style()

    def __init__(self) -> None:
        self._made: dict[tuple[object, ...], RichStyle] = {}

    def get(self, odd: bool, new: bool, esc: bool, frame: int | None) -> RichStyle:
        key = (odd, new, esc, frame)
        if key not in self._made:
            self._made[key] = RichStyle(bold=odd, reverse=new, dim=esc,
                                        link=None if frame is None else f"#{frame}")
        return self._made[key]


def _timeline(seed: int, wide: bool) -> Timeline:
    rng = random.Random(seed)
    calls = tuple(synth.ToolCall("tool", synth.realistic_arguments(2500, rng) if wide else
                                 "".join(rng.choice("abcdefgh ,:{}") for _ in range(2500)))
                  for _ in range(3))
    turn = synth.Turn(items=calls, fragmenting=synth.Fragmenting(1, 8))
    encoded = synth.encode_turn("openai-chat", turn, rng)
    reads = synth.network_chunks(encoded.data, rng, frame_ends=encoded.frame_ends)
    return Timeline.build(reads, "openai-chat")


@pytest.mark.parametrize("wide", [False, True])
def test_a_lane_row_drawn_alone_is_the_row_cut_from_the_whole_text(wide: bool) -> None:
    timeline = _timeline(3, wide)
    rng = random.Random(1)
    st = _Styles()
    checked = 0
    for _ in range(60):
        k = rng.randrange(len(timeline))
        view = timeline.view(k, since=max(0, k - rng.randrange(1, 40)))
        for call in view.calls:
            if not call.text:
                continue
            lines = argument_lines(call, timeline, k, st)  # type: ignore[arg-type]
            widths = text_widths(call)
            for width in (7, 31, 58, 200):
                row0 = 1 if len(lines) == 2 else 0  # (after the "earlier" line)
                if len(lines) - row0 != 1:
                    assert argument_row(call, timeline, k, st, 0, width) is None  # type: ignore[arg-type]
                    continue
                whole = fold_segments(lines[row0], widths[row0], width)
                for r, (segments, size) in enumerate(whole):
                    got = argument_row(call, timeline, k, st, r, width)  # type: ignore[arg-type]
                    assert got is not None
                    assert (Segment.get_line_length(got[0]), got[1]) == (
                        Segment.get_line_length(segments), size)
                    assert got[0] == segments, (k, call.key, width, r)
                    checked += 1
    assert checked > 100


def _contents() -> list[Content]:
    rng = random.Random(2)
    words = ["a", "bb", "response.function_call_arguments.delta", "x" * 90, "数据", "🚀",
             "path/to/some/very/long/file_name.py", "  ", "Ærøskøbing", "\t"]
    out = [Content(""), Content("\n"), Content("one line"), Content("ends with a break\n")]
    for _ in range(40):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randrange(0, 12)))
                 for _ in range(rng.randrange(1, 8))]
        text = "\n".join(lines)
        content = Content(text)
        if text:  # some styled spans, across the line ends
            for _ in range(4):
                a = rng.randrange(len(text))
                content = content.stylize(rng.choice(["bold", "italic", "$text-muted"]), a,
                                          min(len(text), a + rng.randrange(1, 30)))
        out.append(content)
    return out


def test_a_line_wrapped_block_is_the_wrapped_block() -> None:
    for content in _contents():
        for width in (1, 5, 8, 13, 40, 120):
            whole = Wrapped("k", lambda content=content: content)  # type: ignore[misc]
            lazy = LineWrapped("k", lambda content=content: content)  # type: ignore[misc]
            expected = whole.lines(width)
            assert lazy.rows(width) == whole.rows(width) == len(expected), (content.plain, width)
            got = lazy.lines(width)
            assert [c.plain for c in got] == [c.plain for c in expected]
            assert [c.spans for c in got] == [c.spans for c in expected]


def test_soft_wrap_rows_counts_the_wrapped_rows() -> None:
    for content in _contents():
        for line in content.split("\n", allow_blank=True):
            for width in (1, 5, 8, 13, 40):
                assert soft_wrap_rows(line, width) == len(
                    soft_breaks(line, width).wrap(max(width, 1))), (line.plain, width)


async def test_a_lane_drawn_a_row_at_a_time_is_the_lane_drawn_whole() -> None:
    """Every row of a lane drawn alone (TextRows, the "earlier" line, head and tail) equals the
    row drawn from the lane's whole text, fresh text and border included, at two widths."""
    from callscope.tui.app import CallscopeApp
    from callscope.tui.panes.buffers import BuffersPane
    from callscope.tui.panes.lane import Lane

    timeline = _timeline(5, True)
    app = CallscopeApp([], source="test", timeline=timeline)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        pane = app.query_one(BuffersPane)
        rng = random.Random(4)
        earlier = 0
        for _ in range(25):
            k = rng.randrange(len(timeline))
            view = timeline.view(k, since=max(0, k - rng.randrange(1, 30)))
            for call in view.calls:
                for width in (40, 61):
                    alone = Lane(call, timeline, k, call.order == 1)
                    rows = alone.rows(width)
                    pane.__dict__.pop("_inner_rows", None)  # (the pane's drawn rows: none)
                    drawn = [alone.render_row(r, width, pane) for r in range(rows)]
                    pane.__dict__.pop("_inner_rows", None)
                    whole = Lane(call, timeline, k, call.order == 1)
                    whole._text_rows(width, pane)  # (drawn whole first: rows are cut from it)
                    assert drawn == [whole.render_row(r, width, pane) for r in range(rows)], (
                        k, call.key, width)
                    earlier += alone._text_source.lo > 0
        assert earlier  # (some lanes show "… n earlier characters …" first)


def test_the_frame_details_rows_are_keyed_by_what_they_show() -> None:
    """Equal lines in two blocks (two frames' details) have equal keys, at the same width only;
    a line wrapped in rows is keyed by its block and position; every row has a key."""
    a = LineWrapped(("frame", 1), lambda: Content("event —\nid 7\n" + "x" * 30))
    b = LineWrapped(("frame", 2), lambda: Content("event —\nid 8\n" + "x" * 30))
    for width in (12, 40):
        keys_a, keys_b = a.row_keys(width), b.row_keys(width)
        assert len(keys_a) == a.rows(width) and len(keys_b) == b.rows(width)
        assert keys_a[0] == keys_b[0] and keys_a[1] != keys_b[1]
    assert a.row_keys(12)[0] != a.row_keys(40)[0]  # (a key holds its width)
    wrapped = a.row_keys(12)[2:]  # the 30 x's: three rows at 12, keyed by block and row
    assert len(wrapped) == 3 and all(("frame", 1) in key for key in wrapped)
    assert a.row_keys(40)[2] == b.row_keys(40)[2]  # (at 40 the line fits: keyed by content)
    styled = LineWrapped("s", lambda: Content("event —").stylize("bold", 0, 5))
    assert styled.row_keys(40)[0] != a.row_keys(40)[0]  # (spans are part of the look)


def test_cells_and_characters_of_a_lane_row_are_those_of_the_prefix_sums() -> None:
    """A lane row drawn alone finds its characters by cells from the non-ASCII characters
    alone; the definition is every character's cells summed (wide ones two, combining ones
    none), the character at a cell the last one starting at or before it."""
    from itertools import accumulate

    from callscope.core.lanes import CallView
    from callscope.tui.panes.lane_text import TextRows
    from callscope.tui.panes.rawbytes import cells
    from rich.cells import cell_len

    rng = random.Random(8)
    alphabet = ["a", "b", "{", '"', "é", "数", "🚀", "\u0301", "Æ", "—"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        call = CallView(key="k", order=0, id=None, call_id=None, name=None, kind="function",
                        text=text, byte_length=0, fragments=0, fresh=None, draft=Draft.EMPTY,
                        origin="raw", closed=False, closed_frame=None, opened_step=0,
                        last_frame=None, pieces=0, anomalies=(), disputed=None, wait=None,
                        decision=None)
        rows = TextRows(call, None, 0)
        offsets = [0, *accumulate(cell_len(c) for c in text)]
        assert rows.cells == offsets[-1] == cells(text)
        for char in range(len(text) + 1):
            assert rows._cell_of(char) == offsets[char], (text, char)
        for cell in range(offsets[-1] + 1):
            assert rows._char_at(cell) == bisect_right(offsets, cell) - 1, (text, cell)


async def test_a_lane_turning_fresh_changes_its_top_edge_and_text_only() -> None:
    """The lane a step writes to is marked on its top edge (and its new text): its other rows
    keep their keys and look, so a step from a step that added no text (a read, another
    frame) to one that does draws a row or two of the lane, not all of it."""
    import msgspec.structs
    from callscope.tui.app import CallscopeApp
    from callscope.tui.panes.buffers import BuffersPane
    from callscope.tui.panes.lane import Lane

    timeline = _timeline(6, True)
    app = CallscopeApp([], source="test", timeline=timeline)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        pane = app.query_one(BuffersPane)
        checked = 0
        for k in range(len(timeline) // 2, len(timeline), 97):
            for call in timeline.view(k).calls:
                if call.fresh is None:
                    continue
                width = 61
                fresh = Lane(call, timeline, k, False)
                stale = Lane(msgspec.structs.replace(call, fresh=None), timeline, k, False)
                keys, before = fresh.row_keys(width), stale.row_keys(width)
                assert keys[0] != before[0]  # the top edge says which lane grew
                drawn = [fresh.render_row(r, width, pane) for r in range(fresh.rows(width))]
                plain = [stale.render_row(r, width, pane) for r in range(stale.rows(width))]
                assert drawn[0].text == plain[0].text and list(drawn[0]) != list(plain[0])
                head = next(i for i, row in enumerate(fresh._layout(width)) if row[0] == "text")
                for r in range(1, head):  # (the head: above the text, the same rows)
                    assert keys[r] == before[r] and list(drawn[r]) == list(plain[r]), r
                for r in range(1, len(drawn)):  # the sides: the same segments either way
                    assert drawn[r][0] == plain[r][0] and list(drawn[r])[-1] == list(plain[r])[-1]
                checked += 1
        assert checked >= 3
