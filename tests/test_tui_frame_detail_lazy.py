"""The frame detail made a line at a time (tui/panes/line_source.py, line_wrapped.py) is the
detail made whole: the same lines, the same rows at every width, before its long lines are
counted (on the rows it measured at once) and after, in the pane and on its own."""

from __future__ import annotations

import random

import pytest
from callscope.core import synth
from callscope.core.timeline import Timeline
from callscope.tui.panes.frame_view import LONG_LINE, FrameDetailPane, field_indent
from callscope.tui.panes.line_source import StitchedLines, assemble, text_lines
from callscope.tui.panes.line_wrapped import LineWrapped
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.content import Content
from textual.strip import Strip
from textual.style import Style


class _View:
    """What a block's rows are drawn with (a pane's base style)."""

    visual_style = Style()


def _segments(strip: Strip) -> list[tuple[str, object]]:
    return [(seg.text, seg.style) for seg in strip]


_line = st.lists(st.sampled_from([*"ab .:_/-,\t\x1bé日{}\"", "x" * 9, "path/to.file_"]),
                 max_size=40).map("".join)
_long = st.integers(0, 400).map(lambda n: ("word " * n) + "k" * (n // 3))
_plain_part = st.one_of(
    _line.map(lambda text: text + "\n"),
    st.tuples(_line.map(lambda text: f"\n{text}\n"), st.sampled_from(["bold", "$text-muted"])),
    st.builds(lambda label, value: f"{label:>11} {value}\n", st.sampled_from(["event", "id"]),
              _line | _long),
)
_joined = st.lists(_line | _long, min_size=1, max_size=12).map(
    lambda lines: text_lines("\n".join(lines)))
_parts = st.lists(_plain_part | _joined, min_size=1, max_size=10)


def _whole_lines(parts: list[object]) -> list[Content]:
    content = assemble(parts)  # type: ignore[arg-type]
    return content.split("\n", allow_blank=True) if content.plain else []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=_parts)
def test_stitched_lines_are_the_lines_of_the_whole_text(parts: list[object]) -> None:
    lines = StitchedLines(parts)  # type: ignore[arg-type]
    whole = _whole_lines(parts)
    assert len(lines) == len(whole)
    for j, line in enumerate(whole):
        assert lines.plain(j) == line.plain
        assert _segments(Strip(lines.line(j).render_segments(Style()))) == _segments(
            Strip(line.render_segments(Style())))
        assert lines.size(j) == len(line.plain)


def _rows(block: LineWrapped, width: int, rows: range) -> list[list[tuple[str, object]]]:
    return [_segments(block.render_row(row, width, _View())) for row in rows]  # type: ignore[arg-type]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=_parts, width=st.sampled_from([1, 7, 12, 30, 61]), exact=st.integers(0, 12),
       defer=st.integers(0, 80), budget=st.sampled_from([0.0, float("inf")]))
def test_a_block_that_counts_its_long_lines_later_draws_the_whole_blocks_rows(
        parts: list[object], width: int, exact: int, defer: int, budget: float) -> None:
    content = assemble(parts)  # type: ignore[arg-type]
    whole = LineWrapped(("whole",), lambda: content, hang=field_indent)
    lazy = LineWrapped(("lazy",), hang=field_indent, defer=defer, exact=exact,
                       lines=lambda: StitchedLines(parts))  # type: ignore[arg-type]
    total = whole.rows(width)
    # Before: the rows down to the first estimated line are the whole block's.
    tops = lazy.tops(width)
    pending = lazy._pending[width]
    measured = tops[pending[-1]] if pending else total
    assert list(tops[:len(pending) and pending[-1] + 1 or None]) == list(
        whole.tops(width))[:len(pending) and pending[-1] + 1 or None]
    assert _rows(lazy, width, range(measured)) == _rows(whole, width, range(measured))
    while not lazy.settle(width, budget):
        pass
    assert lazy.settled(width)
    assert lazy.rows(width) == total
    assert list(lazy.tops(width)) == list(whole.tops(width))
    assert _rows(lazy, width, range(total)) == _rows(whole, width, range(total))
    assert list(lazy.row_keys(width)) == [
        key if key[0] != "line-row" else ("line-row", ("lazy",), *key[2:])
        for key in whole.row_keys(width)]
    assert lazy.content.plain == content.plain


def _timeline() -> tuple[Timeline, int]:
    """A Responses stream whose last frame (response.completed) carries three long calls
    whole: long JSON lines, and a 13 kB data: line cut by many network chunks."""
    rng = random.Random(2)
    calls = tuple(synth.ToolCall("edit_file", synth.realistic_arguments(4000, rng))
                  for _ in range(3))
    turn = synth.Turn(items=calls, fragmenting=synth.Fragmenting(1, 8))
    encoded = synth.encode_turn("openai-responses", turn, rng)
    reads = synth.network_chunks(encoded.data, rng, frame_ends=encoded.frame_ends)
    timeline = Timeline.build(reads, "openai-responses")
    return timeline, max(range(len(timeline.frames)), key=lambda i: len(timeline.frames[i].raw))


async def _pause_until(pilot: object, done: object) -> None:
    for _ in range(200):
        if done():  # type: ignore[operator]
            return
        await pilot.pause(0.01)  # type: ignore[attr-defined]
    raise AssertionError("not settled")


def _painted(pane: FrameDetailPane) -> list[list[tuple[str, object]]]:
    return [_segments(pane.render_line(y)) for y in range(pane.size.height)]


def _expected(pane: FrameDetailPane, whole: LineWrapped) -> list[list[tuple[str, object]]]:
    """The pane's lines as the whole detail's rows draw them, from the pane's top row."""
    top, rows, blank = round(pane.scroll_y), whole.rows(pane._width), pane.visual_style.rich_style
    return [_segments((whole.render_row(top + y, pane._width, pane) if top + y < rows
                       else Strip.blank(0)).crop_extend(0, pane.size.width, blank))
            for y in range(pane.size.height)]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_detail_pane_shows_the_rows_of_the_detail_made_whole(
        size: tuple[int, int]) -> None:
    """A large frame (its long lines counted after the paint) and small ones, shown, then
    scrolled: every line on screen is the whole detail's."""
    from callscope.tui.app import CallscopeApp

    timeline, big = _timeline()
    assert len(timeline.frames[big].raw) > 4 * LONG_LINE
    app = CallscopeApp([], source="test", timeline=timeline)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        pane = app.query_one(FrameDetailPane)
        deferred = 0
        for index in (big, 3, big - 1, big):
            app.action_goto_step(timeline.step_for_frame(index))
            block = pane.blocks[0]
            assert isinstance(block, LineWrapped) and pane.index == index
            deferred += not block.settled(pane._width)  # (as laid out by the move)
            await pilot.pause()
            whole = LineWrapped(("whole",), lambda index=index: assemble(  # type: ignore[misc]
                pane._parts(index)), hang=field_indent)
            assert _painted(pane) == _expected(pane, whole)
            await _pause_until(pilot, lambda block=block: block.settled(pane._width))
            await pilot.pause()
            rows = whole.rows(pane._width)
            assert pane.block_height(0) == rows <= pane.virtual_size.height
            for top in (0, rows // 3, rows // 2, rows - pane.size.height):
                pane.scroll_to(y=top, animate=False, immediate=True)
                await pilot.pause()
                assert _painted(pane) == _expected(pane, whole), (index, top)
        assert deferred  # (the large frame's long lines were counted after its paint)


async def test_the_next_frames_detail_is_made_after_the_paint_and_drawn_as_if_made_then() -> None:
    """After a frame is shown, the next one's detail is built and measured while the user
    reads; a step onto it shows that very block, drawn as the detail made whole, the large
    frame's long lines still counted after its paint."""
    from callscope.tui.app import CallscopeApp

    timeline, big = _timeline()
    app = CallscopeApp([], source="test", timeline=timeline)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pane = app.query_one(FrameDetailPane)
        for index in (3, big - 1):
            app.action_goto_step(timeline.step_for_frame(index))
            await pilot.pause()
            key = ("frame", id(timeline), index + 1, app.theme)
            prepared = pane._blocks.get(key)
            assert prepared is not None and prepared._tops  # (built and measured)
            app.action_goto_step(timeline.step_for_frame(index + 1))
            assert pane.blocks[0] is prepared and pane.index == index + 1
            await pilot.pause()
            whole = LineWrapped(("whole",), lambda i=index + 1: assemble(  # type: ignore[misc]
                pane._parts(i)), hang=field_indent)
            assert _painted(pane) == _expected(pane, whole)
            await _pause_until(pilot, lambda b=prepared: b.settled(pane._width))
            await pilot.pause()
            assert pane.block_height(0) == whole.rows(pane._width)
        # The last frame has no next: nothing is made.
        app.action_goto_step(timeline.step_for_frame(len(timeline.frames) - 1))
        await pilot.pause()
        assert all(k[2] < len(timeline.frames) for k in pane._blocks)


async def test_a_growing_streams_next_frame_is_not_made_ahead() -> None:
    """A live frame's detail may change (its times, its effects): none is made ahead."""
    from callscope.tui.app import CallscopeApp

    closed, _ = _timeline()
    timeline = Timeline.live("openai-responses")
    for t, data in closed.source:
        timeline.extend(t, data)
    app = CallscopeApp([], source="test", timeline=timeline)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        pane = app.query_one(FrameDetailPane)
        app.action_goto_step(timeline.step_for_frame(3))
        await pilot.pause()
        assert pane.index == 3 and not pane._blocks


def test_a_raw_lines_plain_text_is_the_plain_text_of_the_line_drawn() -> None:
    """FrameText.plain (what the detail counts a raw line's rows by) is FrameText.line's
    text, chunk marks and escapes included, on every line of every frame."""
    from callscope.tui.panes.frame_text import FrameText
    from callscope.tui.panes.rawbytes import line_spans

    timeline, _ = _timeline()
    text = FrameText()
    text.load(timeline)
    styles = {name: Style() for name in ("escape", "chunk", "split", "dim", "future")}
    marked = 0
    for frame in timeline.frames:
        for start, end in line_spans(frame.raw):
            line = text.line(frame.raw, frame.start, start, end, None, None, styles)
            assert text.plain(frame.raw, frame.start, start, end) == line.plain
            marked += "┊" in line.plain
    assert marked  # (lines with chunk marks among them)
