"""A click on a fragment of a lane's text goes to the frame that sent it (Lane.frame_at): the
lanes are drawn without a style per frame, so the frame is found from where the click landed."""

from __future__ import annotations

import random

from callscope.core import synth
from callscope.tui.app import CallscopeApp
from callscope.tui.panes.buffers import BuffersPane
from callscope.tui.panes.lane import Lane
from callscope.tui.panes.lane_text import window


def _app(arguments: str, seed: int = 4) -> CallscopeApp:
    rng = random.Random(seed)
    turn = synth.Turn(items=(synth.ToolCall("edit_file", arguments),),
                      fragmenting=synth.Fragmenting(1, 8))
    encoded = synth.encode_turn("openai-chat", turn, rng)
    reads = synth.network_chunks(encoded.data, rng, frame_ends=encoded.frame_ends)
    return CallscopeApp(reads, source="t", protocol="openai-chat")


async def _at_the_end(app: CallscopeApp, pilot) -> tuple[BuffersPane, Lane]:
    """The buffers pane at the last step, and its (only) lane."""
    await pilot.press("end")
    await pilot.pause()
    pane = app.query_one(BuffersPane)
    return pane, next(iter(pane.lanes().values()))


def _expected(app: CallscopeApp, lane: Lane, char: int) -> int | None:
    """The frame of the fragment holding character ``char`` of the call's text (the
    definition: the call's fragment spans at the cursor)."""
    spans = app.timeline.calls[lane.call.key].spans(app.cursor)
    return next((frame for start, end, frame in spans if start <= char < end), None)


async def test_every_cell_of_a_lane_text_row_names_the_frame_of_its_fragment():
    text = '{"path":"src/app.py","patch":"' + "x" * 300 + '","dry_run":false}'
    app = _app(text)
    async with app.run_test(size=(120, 34)) as pilot:
        pane, lane = await _at_the_end(app, pilot)
        lo, shown = window(lane.call)
        assert lo == 0 and "\n" not in shown
        width, inner = pane._width, pane._width - 4
        rows = [(i, a) for i, (kind, a, _) in enumerate(lane._layout(width)) if kind == "text"]
        assert len(rows) > 2
        checked = 0
        for i, a in rows:
            for x in range(width):
                char = a * inner + x - 2
                inside = 2 <= x < 2 + inner and char < len(shown)
                assert lane.frame_at(i, x, width, pane) == (
                    _expected(app, lane, char) if inside else None), (i, x)
                checked += inside
        assert checked == len(shown)
        # elsewhere in the lane (its title, head, tail): no fragment there
        others = [i for i, row in enumerate(lane._layout(width)) if row[0] != "text"]
        assert all(lane.frame_at(i, 5, width, pane) is None for i in others)


async def test_a_click_on_a_fragment_moves_the_cursor_to_its_frame():
    text = '{"path":"src/app.py","patch":"' + "y" * 200 + '","dry_run":false}'
    app = _app(text, seed=9)
    async with app.run_test(size=(120, 34)) as pilot:
        pane, lane = await _at_the_end(app, pilot)
        index = pane.blocks.index(lane)
        row = next(i for i, (kind, _, _) in enumerate(lane._layout(pane._width))
                   if kind == "text")
        y = pane.block_top(index) + row - round(pane.scroll_y)
        for x in (2, 9, 30):
            frame = lane.frame_at(row, x, pane._width, pane)
            assert frame is not None
            # (+1 the border, +1 the padding; +1 the top border)
            assert await pilot.click(BuffersPane, offset=(2 + x, 1 + y))
            await pilot.pause()
            assert app.cursor == app.timeline.step_for_frame(frame)
            await pilot.press("end")
            await pilot.pause()
            lane = pane.blocks[index]
            assert isinstance(lane, Lane)


async def test_a_fragment_after_a_line_break_is_found_in_its_own_row():
    text = '{\n  "path": "a.py",\n  "body": "' + "z" * 90 + '"\n}'
    app = _app(text, seed=2)
    async with app.run_test(size=(120, 34)) as pilot:
        pane, lane = await _at_the_end(app, pilot)
        _, shown = window(lane.call)
        width = pane._width
        layout = lane._layout(width)
        # line 1 ("  "path": "a.py",") starts after the first newline: its first cell is the
        # character after it
        row = next(i for i, (kind, a, line) in enumerate(layout) if kind == "text" and line == 1)
        first = shown.index("\n") + 1
        assert lane.frame_at(row, 2, width, pane) == _expected(app, lane, first)
        # the ␊ drawn at the end of line 0 is the newline's own fragment
        end = layout.index(next(r for r in layout if r[0] == "text" and r[2] == 0))
        assert lane.frame_at(end, 2 + shown.index("\n"), width, pane) == _expected(
            app, lane, shown.index("\n"))
