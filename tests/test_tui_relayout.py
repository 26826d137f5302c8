"""Layout fixes: the decisions summary's height after a resize, the buffers pane's lane after
the re-layout its first scrollbar brings, and the panes keeping where the user scrolled them.
Each state is compared once the layout has settled (the values polled until they stop
changing), never after a fixed number of pauses."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Hashable

from callscope.tui.app import CallscopeApp
from callscope.tui.cli import LoadedInput, protocol_for, toolset_for
from callscope.tui.panes.buffers import BuffersPane
from callscope.tui.panes.decisions import summary_blocks
from callscope.tui.panes.decisions_pane import DecisionsPane
from callscope.tui.panes.frames import FramesPane
from callscope.tui.panes.lane import Lane

SESSIONS = pathlib.Path(__file__).resolve().parent.parent / "sessions"


def open_session(path: pathlib.Path) -> CallscopeApp:
    loaded = LoadedInput(str(path))
    return CallscopeApp(loaded.held(10**9), source=str(path), protocol=protocol_for(loaded, None),
                        tools=toolset_for(loaded, None))


async def settled(pilot, probe: Callable[[], Hashable], *, calm: int = 4,
                  bound: int = 100) -> Hashable:
    """``probe()`` once it has returned the same value ``calm`` pauses in a row (a layout, a
    scrollbar coming or going and the re-layout that follows each wait for a refresh)."""
    last, same = probe(), 0
    for _ in range(bound):
        await pilot.pause()
        now = probe()
        same = same + 1 if now == last else 0
        last = now
        if same >= calm:
            return now
    raise AssertionError(f"the layout never settled: last {last!r}")


# -- the decisions summary after a resize ---------------------------------------------------

PARALLEL = SESSIONS / "openai-responses" / "parallel_calls.jsonl"


def summary_state(app: CallscopeApp) -> tuple[object, ...]:
    summary = app.query_one(DecisionsPane).summary_view
    return (summary.size.height, summary._width, summary.show_vertical_scrollbar,
            str(summary.styles.overflow_y), summary.virtual_size.height,
            app.timeline.closed, app.timeline.indexing_pending)


async def summary_after(sizes: list[tuple[int, int]], step: int = 5) -> tuple[object, ...]:
    """The summary's (height, row width, bar shown, overflow, rows) once settled, in an app
    opened at ``sizes[0]`` at ``step`` and then resized to each of the others in turn."""
    app = open_session(PARALLEL)
    async with app.run_test(size=sizes[0]) as pilot:
        app.action_goto_step(step)
        await settled(pilot, lambda: summary_state(app))
        for size in sizes[1:]:
            await pilot.resize_terminal(*size)
            await settled(pilot, lambda: summary_state(app))
        return summary_state(app)[:5]


async def test_a_widened_pane_sizes_its_summary_as_a_fresh_one():
    """Opened at 100 columns the summary has a scrollbar; widened to 260 it fits without one,
    and must be exactly as tall as in a pane opened at 260 (counted at the old width with the
    bar, it stayed a row too tall with an empty track)."""
    wide = await summary_after([(260, 40)])
    assert wide[2] is False and wide[3] == "hidden"  # (the case that matters: no bar when wide)
    assert await summary_after([(100, 40), (260, 40)]) == wide


async def test_a_narrowed_pane_sizes_its_summary_as_a_fresh_one():
    narrow = await summary_after([(100, 40)])
    assert narrow[2] is True  # (narrow, the summary needs its bar)
    assert await summary_after([(260, 40), (100, 40)]) == narrow
    assert await summary_after([(260, 40), (100, 40), (260, 40), (100, 40)]) == narrow


async def test_a_pane_too_short_for_a_verdict_shows_the_compact_summary_as_a_fresh_one():
    compact = await summary_after([(90, 24)])
    assert compact[2] is False and compact[0] == 4  # (the turn and a row per call, no bar)
    assert await summary_after([(260, 40), (90, 24)]) == compact
    assert await summary_after([(90, 24), (260, 40), (90, 24)]) == compact
    assert await summary_after([(90, 24), (260, 40)]) == await summary_after([(260, 40)])


async def test_a_summary_without_a_bar_is_exactly_as_tall_as_its_tallest_rows():
    """Wide enough to fit its share, the summary has no bar and is exactly as tall as the
    tallest summary known (this step's, the session's last) at the width it has, however the
    pane got to that width: never a blank row more."""
    for sizes in ([(260, 40)], [(100, 40), (260, 40)], [(230, 50)], [(100, 50), (230, 50)],
                  [(90, 40), (300, 40), (120, 40), (280, 40)]):
        app = open_session(PARALLEL)
        async with app.run_test(size=sizes[0]) as pilot:
            app.action_goto_step(5)
            for size in sizes[1:]:
                await settled(pilot, lambda app=app: summary_state(app))
                await pilot.resize_terminal(*size)
            await settled(pilot, lambda app=app: summary_state(app))
            summary, timeline = app.query_one(DecisionsPane).summary_view, app.timeline
            assert not summary.show_vertical_scrollbar, sizes
            width = summary.scrollable_content_region.width
            assert summary._width == width, sizes
            end = summary_blocks(timeline.view(len(timeline) - 1), timeline)
            tallest = max(sum(b.rows(width) for b in end),
                          sum(b.rows(width) for b in summary.blocks))
            assert summary.size.height == tallest, sizes


# -- the buffers pane's lane on the step that first brings its scrollbar --------------------


def buffers_state(app: CallscopeApp) -> tuple[object, ...]:
    pane = app.query_one(BuffersPane)
    return (app.cursor, round(pane.scroll_y), pane._width, pane.show_vertical_scrollbar,
            pane.virtual_size.height)


def screen_lines(app: CallscopeApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def followed_lane(app: CallscopeApp) -> int:
    """The block the pane shows at this step, as BuffersPane.show picks it: the selected lane,
    else the lane the step wrote to, else the lane written to last."""
    blocks = app.query_one(BuffersPane).blocks
    lanes = [(i, b) for i, b in enumerate(blocks) if isinstance(b, Lane)]
    for pick in (lambda b: b.selected, lambda b: b.fresh):
        found = [i for i, b in lanes if pick(b)]
        if found:
            return found[0]
    return max((b.call.last_frame, i) for i, b in lanes if b.call.last_frame is not None)[1]


async def check_lane_in_view(app: CallscopeApp, pilot) -> None:
    """The followed lane is in view (its top, when taller than the view), and showing the same
    step again changes nothing on screen."""
    pane = app.query_one(BuffersPane)
    state = await settled(pilot, lambda: buffers_state(app))
    assert pane._width == pane.scrollable_content_region.width
    i = followed_lane(app)
    top, bottom = pane.block_top(i), pane.block_top(i) + pane.block_height(i)
    y, height = round(pane.scroll_y), pane.scrollable_content_region.height
    if bottom - top >= height:
        assert y == top, (state, top, bottom, height)
    else:
        assert y <= top and bottom <= y + height, (state, top, bottom, height)
    before = screen_lines(app)
    app.refresh_view()
    assert await settled(pilot, lambda: buffers_state(app)) == state
    assert screen_lines(app) == before


FIRST_BAR = [(SESSIONS / "demo.jsonl", (100, 30)),
             (SESSIONS / "anthropic" / "parallel_calls.jsonl", (120, 30)),
             (SESSIONS / "demo_complete.jsonl", (120, 24))]
"""Sessions and sizes whose lanes come to overflow the pane (ids on one row each: at 120x34
these two fit whole)."""


FIRST_BAR_STEP: dict[tuple[pathlib.Path, tuple[int, int]], int] = {}
"""The step of each session and size that first_bar_by_steps found (it takes a while)."""


async def first_bar_by_steps(path: pathlib.Path, size: tuple[int, int], check: bool = True) -> int:
    """Step right from the start until the buffers pane first overflows; check the lane there
    (unless not ``check``); the step it happened at. (Each step settles a little: the bar
    comes with the step.)"""
    app = open_session(path)
    async with app.run_test(size=size) as pilot:
        pane = app.query_one(BuffersPane)
        await settled(pilot, lambda: buffers_state(app))
        assert not pane.show_vertical_scrollbar
        while not pane._stuck:
            assert app.cursor < len(app.timeline) - 1, "the lanes never overflow"
            await pilot.press("right")
            await settled(pilot, lambda: buffers_state(app), calm=1)
        if check:
            await check_lane_in_view(app, pilot)
        assert pane.show_vertical_scrollbar
        FIRST_BAR_STEP[path, size] = app.cursor
        return app.cursor


async def test_the_lane_is_in_view_on_the_step_that_first_brings_the_scrollbar():
    """The bar comes, the lanes are laid out again narrower (taller): the pane shows its lane
    again (it stayed where the wider layout put it, the lane 1-3 rows out of view)."""
    for path, size in FIRST_BAR:
        await first_bar_by_steps(path, size)


async def test_the_lane_is_in_view_on_the_seek_that_first_brings_the_scrollbar():
    for path, size in FIRST_BAR:
        k = FIRST_BAR_STEP.get((path, size)) or await first_bar_by_steps(path, size, False)
        for target in (k, None):  # (None: the last step, overflowing or not)
            app = open_session(path)
            async with app.run_test(size=size) as pilot:
                pane = app.query_one(BuffersPane)
                await settled(pilot, lambda app=app: buffers_state(app))
                assert not pane.show_vertical_scrollbar
                app.action_goto_step(len(app.timeline) - 1 if target is None else target)
                await check_lane_in_view(app, pilot)
                assert pane.show_vertical_scrollbar or target is None


async def scrolled_up_then_resized(sizes: list[tuple[int, int]]) -> tuple[int, int]:
    """(the lane's scroll after the move, the scroll after the user's scroll and a resize)."""
    app = open_session(SESSIONS / "demo.jsonl")
    async with app.run_test(size=sizes[0]) as pilot:
        pane = app.query_one(BuffersPane)
        app.action_goto_step(len(app.timeline) - 1)
        await settled(pilot, lambda: buffers_state(app))
        moved = round(pane.scroll_y)
        pane.scroll_to(y=0, animate=False, immediate=True)  # the user scrolls up
        await settled(pilot, lambda: buffers_state(app))
        await pilot.resize_terminal(*sizes[1])
        await settled(pilot, lambda: buffers_state(app))
        return moved, round(pane.scroll_y)


async def test_a_resize_keeps_where_the_user_scrolled_the_buffers_pane():
    """The lane a move showed is shown again after a re-layout, unless the user scrolled away
    from it since: then the view stays where they put it (found by review: the pane jumped
    back to the lane on the next resize)."""
    for sizes in ([(100, 16), (90, 16)], [(80, 20), (70, 20)], [(100, 16), (110, 16)]):
        moved, after = await scrolled_up_then_resized(sizes)
        assert moved > 0, sizes  # (the lane is below the first screenful)
        assert after == 0, sizes


# -- the frames pane keeps where the user scrolled it ------------------------------------------

def frames_state(app: CallscopeApp) -> tuple[object, ...]:
    pane = app.query_one(FramesPane)
    return (app.cursor, round(pane.scroll_y), pane._layout_width, pane.show_vertical_scrollbar,
            pane.virtual_size.height)


async def test_a_resize_keeps_the_frame_the_user_scrolled_to_on_top():
    """The frames pane follows the cursor's frame, but a resize (or the scrollbar coming or
    going) used to bring the cursor's frame back even when the user had scrolled away from it.
    Now the frame the user scrolled to stays on top, until the cursor moves to another frame."""
    app = open_session(PARALLEL)
    async with app.run_test(size=(120, 24)) as pilot:
        pane = app.query_one(FramesPane)
        app.action_goto_step(len(app.timeline) - 1)
        await settled(pilot, lambda: frames_state(app))
        cursor_frame = app.timeline.view(app.cursor).frame.index
        assert pane.frame_of_row(round(pane.scroll_y)) > 2  # (the move scrolled down)
        pane.scroll_to(y=pane.row_of_frame(2), animate=False, immediate=True)  # the user
        await settled(pilot, lambda: frames_state(app))
        for size in ((100, 24), (140, 20), (120, 30)):
            await pilot.resize_terminal(*size)
            await settled(pilot, lambda: frames_state(app))
            top = round(pane.scroll_y)
            assert pane.frame_of_row(top) == 2, size
            assert top == pane.row_of_frame(2), size  # (a row per frame)
        app.action_goto_frame(cursor_frame - 1)  # a move to another frame: followed again
        await settled(pilot, lambda: frames_state(app))
        top, height = round(pane.scroll_y), pane.scrollable_content_region.height
        assert top <= pane.row_of_frame(cursor_frame - 1) < top + height
