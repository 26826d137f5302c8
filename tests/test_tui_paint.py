"""Moves reuse finished rows (panes/paint.py) and defer full collections (gcpolicy.py): the
screen must stay exactly what a fresh app shows at the same step."""

from __future__ import annotations

import gc
import pathlib

from callscope.tui.app import CallscopeApp
from callscope.tui.gcpolicy import RARE_FULL
from callscope.tui.panes.buffers import BuffersPane
from callscope.tui.panes.decisions_pane import DecisionsPane
from callscope.tui.panes.frames import FramesPane
from callscope.tui.panes.paint import filtered
from callscope.tui.panes.rows import RowsView
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME
from textual.color import Color
from textual.filter import ANSIToTruecolor

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
PARALLEL = FIXTURES / "openai-chat" / "parallel_tool_calls_two_functions.sse"
SIZE = (120, 30)


def screen_lines(app: CallscopeApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def drawn_again(app: CallscopeApp, pilot) -> list[str]:
    """The screen with every finished row thrown away and the whole screen painted again."""
    for pane in (app.query_one(FramesPane), app.query_one(BuffersPane),
                 *app.query_one(DecisionsPane).query(RowsView)):
        pane._paint.clear()
        pane.refresh()
    await pilot.pause()
    return screen_lines(app)


async def test_reused_rows_are_the_rows_drawn_afresh():
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=SIZE) as pilot:
        total = len(app.timeline)
        reused = 0
        for k in [5, 6, 7, total // 2, total // 2 + 1, 3, total - 1, total // 3, total // 3 + 1]:
            app.action_goto_step(k)
            await pilot.pause()
            reused += len(app.query_one(FramesPane)._paint.rows)
            lines = screen_lines(app)
            assert lines == await drawn_again(app, pilot), f"step {k}"
        await pilot.press("left", "left", "right")
        lines = screen_lines(app)
        assert lines == await drawn_again(app, pilot)
        assert reused


async def test_full_collections_wait_for_a_pause_and_the_thresholds_come_back():
    before = gc.get_threshold()
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=SIZE) as pilot:
        assert gc.get_threshold()[2] == RARE_FULL
        policy = app.gc_policy
        assert policy.last_move == 0.0
        await pilot.press("right")
        assert policy.last_move > 0.0  # the key was noted as a move
        # From here no await: the app's own interval cannot tick between the lines (under load
        # it may have ticked since the key, more than IDLE later, and collected already).
        done = policy.collections
        policy.moved()
        policy._tick()  # just moved: not yet
        assert policy.collections == done and policy.pending
        policy.last_move -= 10
        policy._tick()
        assert policy.collections == done + 1 and not policy.pending
    assert gc.get_threshold() == before


async def test_a_young_collection_due_soon_runs_after_the_moves_paint(monkeypatch):
    """After a move's paint, the generation-1 collection runs when the next few young
    collections would start it (YOUNG_AHEAD), else generation 0's: it is never asked for
    twice before the paint."""
    from callscope.tui import gcpolicy

    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        asked: list[object] = []
        monkeypatch.setattr(app, "call_after_refresh", lambda f, *a: asked.append(f) or True)
        app.gc_policy.moved()
        app.gc_policy.moved()  # (two moves before one paint: one look after it)
        assert len(asked) == 1
        monkeypatch.undo()
        collected: list[int] = []

        def seen(phase: str, info: dict[str, int]) -> None:
            if phase == "stop":
                collected.append(info["generation"])

        gc.callbacks.append(seen)
        try:
            for ahead, expected in ((-10**6, False), (10**6, True)):  # (never due, always due)
                monkeypatch.setattr(gcpolicy, "YOUNG_AHEAD", ahead)
                collected.clear()
                app.gc_policy._young_due = False
                app.gc_policy.moved()
                for _ in range(gc.get_threshold()[1] + 1):  # (generation 1 over its threshold:
                    gc.collect(0)  # the collector, once on, would start it by itself)
                collected.clear()
                made = [[n] for n in range(3 * gc.get_threshold()[0])]  # (what a move makes)
                assert not collected  # nothing collected inside the move
                app.gc_policy._young()  # (what the paint's callback runs)
                assert collected and (1 in collected) is expected, (ahead, collected)
                del made
        finally:
            gc.callbacks.remove(seen)


async def test_the_collector_is_off_from_a_move_to_its_paint_and_never_stays_off(monkeypatch):
    """A move turns the collector off until its paint, which turns it on again; a move that
    never paints gets it back at the tick after PAUSE_LIMIT, and so does the app's exit."""
    from callscope.tui import gcpolicy

    assert gc.isenabled()
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right")
        await pilot.pause()
        assert gc.isenabled()  # painted: on again
        asked: list[object] = []
        monkeypatch.setattr(app, "call_after_refresh", lambda f, *a: asked.append(f) or True)
        app.gc_policy._young_due = False
        app.gc_policy.moved()  # (a move whose paint never comes)
        assert not gc.isenabled() and len(asked) == 1
        app.gc_policy._tick()
        assert not gc.isenabled()  # not yet
        monkeypatch.setattr(gcpolicy, "PAUSE_LIMIT", 0.0)
        app.gc_policy._tick()
        assert gc.isenabled()
        app.gc_policy._young_due = False
        app.gc_policy.moved()
        assert not gc.isenabled()
    assert gc.isenabled()  # the app's exit turned it on


async def test_finished_rows_are_what_textual_draws():
    """Each pane's rows, finished by paint.py, equal Textual's own styles-cache rendering
    (segments and styles), at a few steps, for the border rows and the content rows."""
    from textual.widget import Widget

    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=SIZE) as pilot:
        total = len(app.timeline)
        for k in [4, total // 2, total - 1]:
            app.action_goto_step(k)
            await pilot.pause()
            for pane in (app.query_one(FramesPane), app.query_one(BuffersPane),
                         *app.query_one(DecisionsPane).query(RowsView)):
                crop = pane.size.region
                ours = pane.render_lines(crop)
                pane._styles_cache.clear()
                theirs = Widget.render_lines(pane, crop)
                assert [s.text for s in ours] == [s.text for s in theirs]
                assert ours == theirs, (k, type(pane).__name__)


def test_counted_wrap_rows_equal_the_wrapped_lines():
    """A lane's height is counted (folding.wrap_rows) and its lines wrapped (folding.wrap) only when
    drawn: both must agree, or the rows below a lane would be drawn one row off."""
    import random

    from callscope.tui.panes.folding import wrap, wrap_rows
    from textual.content import Content

    rng = random.Random(4)
    alphabet = 'abcdefgh ,:{}"[]0123      é漢🎯…→␊\t\n'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 260)))
        if rng.random() < 0.5:
            text = text.encode("ascii", "ignore").decode().replace("\t", " ")
        width = rng.randrange(1, 70)
        lines = [Content(text), Content.styled(text[:40], "bold")]
        counted = wrap_rows(lines, width)
        assert counted == sum(len(line.wrap(width)) for line in lines), (text, width)
        if "\n" not in text and "\t" not in text:  # (folding.wrap keeps a short line whole:
            # it differs from Content.wrap on newlines and tabs, which lanes never hold)
            assert counted == len(wrap(lines, width)), (text, width)


async def test_moves_keep_the_layout_still():
    """Seeking between a short state (the start) and a long one (the end) moves no pane:
    the summary is sized for the session, a scrollbar once needed stays."""
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=(120, 24)) as pilot:
        decisions = app.query_one(DecisionsPane)
        views = [app.query_one(BuffersPane), decisions.summary_view, decisions.log_view]

        def shape() -> list[tuple[int, int, bool]]:
            return [(v.region.y, v.size.height, v.show_vertical_scrollbar) for v in views]

        places = [len(app.timeline) - 1, 0, 3, len(app.timeline) // 2, len(app.timeline) - 1]
        for k in places:  # once round: a scrollbar may come (and then stays)
            app.action_goto_step(k)
            await pilot.pause()
        settled = shape()
        assert any(bar for _, _, bar in settled)  # (this size: something overflows)
        for k in [0, *places, 0]:
            app.action_goto_step(k)
            await pilot.pause()
            assert shape() == settled, k
        # the summary is as tall as the one at the last step, its last rows blank earlier
        assert decisions.summary_view.size.height >= decisions.summary_view.virtual_size.height


async def test_lane_rows_kept_across_steps_are_the_rows_drawn_afresh():
    """A lane is drawn a row at a time, rows keyed by what they show (panes/buffers.py): rows
    settled before the fresh text, and the insides of rows whose border turned fresh, are
    reused from earlier steps. Each must equal the row drawn from nothing at that step
    (segments and styles), with wide and escaped characters and a window past the text's start."""
    from callscope.core.tools import ToolSet
    from callscope.tui.panes.lane import Lane
    from callscope.tui.panes.lane_text import window

    from bench.streams import Spec, build

    stream = build(Spec("openai-chat", calls=3, events=2500), 3)
    chunks = list(zip(stream.times, stream.chunks, strict=True))
    app = CallscopeApp(chunks, source="s", protocol=stream.protocol, tools=ToolSet(stream.tools))
    async with app.run_test(size=(100, 60)) as pilot:
        pane = app.query_one(BuffersPane)
        total = len(app.timeline)
        starts = [total // 3, total // 2, total - 40]
        reused = windows = 0
        for start in starts:
            app.action_goto_step(start)
            await pilot.pause()
            for _ in range(12):
                await pilot.press("right")
                rows = pane.render_lines(pane.size.region)  # through every cache
                reused += sum(1 for rows in pane.__dict__["_inner_rows"].values()
                              for key in rows if key[0] == "lane-text")
                for y, strip in enumerate(rows[1:-1]):
                    row = y + round(pane.scroll_y)
                    i = pane.block_at(row)
                    block = pane.blocks[i] if i is not None else None
                    if not isinstance(block, Lane):
                        continue
                    windows += window(block.call)[0] > 0
                    fresh = Lane(block.call, block.timeline, block.k, block.selected)
                    held = pane.__dict__.pop("_inner_rows")  # (drawn from nothing)
                    again = fresh.render(pane._width, pane)[row - pane.block_top(i)]
                    pane.__dict__["_inner_rows"] = held
                    left = pane.styles.gutter.left  # (the pane's border and padding)
                    inside = strip.crop(left, left + pane._width)
                    assert inside.text == again.text, (start, row)
                    assert list(inside) == list(again.simplify()) or \
                        inside.simplify() == again.simplify(), (start, row)
        assert reused and windows, (reused, windows)


def _pane_cells(app: CallscopeApp, pane: BuffersPane) -> list[tuple]:
    """The pane's rows as (text, style) segments: a stale row drawn in another theme differs in
    its styles only."""
    from rich.segment import Segment

    region = pane.region
    rows = app.screen._compositor.render_strips()
    return [tuple((s.text, s.style) for s in Segment.simplify(list(rows[y].crop(region.x, region.right))))
            for y in range(region.y, region.bottom)]


async def _buffers_after(theme_first: bool, select: bool) -> list[tuple]:
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p", protocol="openai-chat")
    async with app.run_test(size=(120, 34)) as pilot:
        keys = ["end", "right_square_bracket"] if select else ["end"]
        if not theme_first:
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
        app.theme = "nord"
        await pilot.pause()
        await pilot.pause()  # the repaint in the new theme
        if theme_first:
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
        await pilot.press("left")
        await pilot.pause()
        return _pane_cells(app, app.query_one(BuffersPane))


async def test_a_theme_change_redraws_every_lane_in_the_new_theme():
    """Lanes keep their looks, folded text and row insides; a theme change repaints the same
    lanes, which must drop what they drew in the old styles (review: 18 of 32 rows stale)."""
    for select in (False, True):
        assert await _buffers_after(False, select) == await _buffers_after(True, select)


_STYLES = [None, Style(color="#c0c0c0", bgcolor="#1e1e1e"), Style(color="red"),
           Style(bgcolor="blue"), Style(color="#a0a0a0", dim=True), Style(color="default"),
           Style(bold=True), Style(color="#e0c060", meta={"@click": "app.goto_frame(3)"}),
           Style(color="bright_green", bgcolor="#000000", dim=True)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.text(max_size=3), st.sampled_from(_STYLES)),
                         max_size=6), min_size=1, max_size=4),
       st.sampled_from([Color(30, 30, 30), Color(250, 250, 250)]))
def test_the_truecolor_filter_skipped_only_where_it_changes_nothing(rows, background):
    """paint.filtered gives what the filter's own apply gives, row after row with what it
    remembered of the rows before (the same styles, ANSI colours and dim made truecolor), and
    the row itself when it changes nothing."""
    line_filter = ANSIToTruecolor(DEFAULT_TERMINAL_THEME)
    unchanged: set[Style] = set()
    for row in rows:
        segments = [Segment(text, style) for text, style in row]
        ours = filtered(line_filter, segments, background, unchanged)
        theirs = line_filter.apply(segments, background)
        assert [(s.text, s.style) for s in ours] == [(s.text, s.style) for s in theirs]
        if ours is segments:  # (skipped: every style was seen unchanged)
            assert all(s.style is None or s.style in unchanged for s in segments)
        if all(s.style is None or s.style == t.style for s, t in zip(segments, theirs,
                                                                     strict=True)):
            assert filtered(line_filter, segments, background, unchanged) is segments
