"""The frame list: a row a frame (columns, what it carries), the selected frame's detail beside
it, one cursor for both (browsing the list moves it; home and end are followed), the filter."""

from __future__ import annotations

import pathlib

import orjson
from callscope.core.session import open_input
from callscope.tui import safe
from callscope.tui.app import CallscopeApp
from callscope.tui.panes.frame_row import EVENT_MAX, carries, row, short_event
from callscope.tui.panes.frame_view import FrameDetailPane
from callscope.tui.panes.frames import FramesPane
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tui import check_in_sync
from textual.color import Color
from textual.content import Content
from textual.style import Style
from textual.widgets import Input

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIZE = (160, 45)


def demo_app() -> CallscopeApp:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")


def row_text(app: CallscopeApp, index: int) -> str:
    """Frame ``index``'s row, whole (not cropped to the pane), gutter dropped."""
    return app.query_one(FramesPane)._frame_strips(index)[0].text[2:]


def listed(app: CallscopeApp) -> list[int]:
    pane = app.query_one(FramesPane)
    return [pane.frame_of_row(row) for row in range(pane.virtual_size.height)]


async def test_a_row_per_frame_with_its_columns_and_what_it_carries() -> None:
    app = demo_app()
    async with app.run_test(size=(300, 50)) as pilot:  # a wide pane: every column
        await pilot.pause()
        tl, pane = app.timeline, app.query_one(FramesPane)
        assert listed(app) == list(range(len(tl.frames)))  # one row each, in order
        assert pane.border_title.split()[:6] == ["#", "offset", "size", "time", "Δprev", "event"]
        fragment = next(i for i, f in enumerate(tl.frames)
                        if f.event == "response.function_call_arguments.delta")
        frame = tl.frames[fragment]
        cells = row_text(app, fragment).split()
        assert cells[:3] == [f"#{fragment}", str(frame.start), f"{frame.end - frame.start}B"]
        done, prev = tl.frame_times(fragment)[1], tl.frame_times(fragment - 1)[1]
        assert cells[3] == f"{done * 1000:.1f}ms" and cells[4] == f"+{(done - prev) * 1000:.1f}ms"
        assert cells[5] == "response.function….delta"  # its start, and its last word
        assert len(cells[5]) == EVENT_MAX
        said = [text for text, _ in carries(tl, fragment)]
        assert said[-1] == "call 1 lookup_demo_value" and said[0].startswith('"')  # the fragment
        assert "call 1 lookup_demo_value" in row_text(app, fragment)
        # the last frame was never terminated: an anomaly, marked
        last = row_text(app, len(tl.frames) - 1)
        assert "unterminated" in last and "⚠ missing_terminal" in last
        first = row_text(app, 0)
        assert first.split()[:3] == ["#0", "0", f"{tl.frames[0].end}B"]
        await pilot.resize_terminal(200, 50)  # middling: no offset and size (in the detail)
        await pilot.pause()
        assert pane.border_title.split() == ["#", "time", "Δprev", "event", "carries"]
        assert row_text(app, fragment).split()[1:3] == cells[3:5]
        await pilot.resize_terminal(80, 24)  # a narrow pane: number, event, what it carries
        await pilot.pause()
        assert pane.columns.compact and pane.border_title.split() == ["#", "event", "carries"]
        cells = row_text(app, fragment).split()
        assert cells[0] == f"#{fragment}" and cells[1] == "r.f….delta"
        assert "call 1 lookup" in row_text(app, fragment)


def test_a_long_event_keeps_its_start() -> None:
    """It was cut from the left (…lockDelta, …on_call_arguments.delta): the start shows now."""
    assert short_event("contentBlockDelta", 10) == "cont…Delta"  # (Bedrock's)
    assert short_event("content_block_delta", 10) == "con…_delta"
    assert short_event("response.output_item.added", 24) == "r.output_item.added"
    # two events of one namespace stay apart in a compact row (both were 'response.…')
    assert (short_event("response.created", 10), short_event("response.in_progress", 10)) == (
        "r.created", "r.in_prog…")
    assert short_event("response.output_text.delta", 10) == "r.o….delta"
    assert short_event("unterminated", 10) == "untermina…"
    assert short_event("message_stop", 12) == "message_stop"


async def test_what_a_frame_carries_fills_the_row() -> None:
    """At 200 columns a row stopped at 40 characters of a text, ~25 cells short of the pane;
    a row longer than the pane ends in … at its edge."""
    path = ROOT / "tests/fixtures/anthropic/tool_use_text_then_tool.sse"
    app = CallscopeApp([(0.0, path.read_bytes())], source=path.name)
    async with app.run_test(size=(300, 50)) as pilot:
        await pilot.pause()
        text = row_text(app, 4)
        assert "'ll check the current weather in Paris for you." in text  # 47 characters, whole
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        pane = app.query_one(FramesPane)
        cells = pane.scrollable_content_region.width
        usage = row_text(app, 0)
        assert len(usage) == cells - 2 and usage.endswith("…")  # (the gutter: 2)
        assert "usage input_tokens=377 cache_creation_input_to…" in usage  # (40 chars: "t…")


async def test_browsing_the_list_moves_the_cursor_and_every_pane_follows() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        pane = app.query_one(FramesPane)
        for index in (5, 12, 2):
            row = pane.row_of_frame(index) - round(pane.scroll_y)
            assert await pilot.click(FramesPane, offset=(10, 1 + row))  # +1: the border
            await pilot.pause()
            assert app.cursor == app.timeline.step_for_frame(index)
            check_in_sync(app)  # the list, the lanes and the decisions: at the cursor
            detail = app.query_one(FrameDetailPane)
            assert detail.index == index and detail.border_title == f"frame #{index}"
            # the cursor's row is highlighted: the bar in the gutter
            assert pane._frame_strips(index)[0].text[0] == "▌"
            assert all(pane._frame_strips(i)[0].text[0] == " " for i in (0, 1, 3) if i != index)


async def test_the_detail_beside_the_list_follows_the_cursor() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        detail = app.query_one(FrameDetailPane)
        assert detail.index is None and "No frame yet" in detail.plain()
        for _ in range(4):
            await pilot.press("right")
            await pilot.pause()
            frame = app.timeline.view(app.cursor).frame
            text = detail.plain()
            assert detail.index == frame.index
            assert f"bytes {frame.start}–{frame.end}" in text
            assert "Data (parsed JSON, pretty)" in text and '\n  "type": ' in text
            assert f"event: {frame.event}".replace("\n", "") in text.replace("┊", "")
            assert "␊" in text  # line ends shown
        # chunk boundaries inside the frame are marked
        split = next(i for i, f in enumerate(app.timeline.frames) if f.first_chunk != f.last_chunk)
        app.action_goto_frame(split)
        await pilot.pause()
        assert "┊" in detail.plain().split("Raw bytes")[1]
        app.theme = "textual-light"  # drawn again in the new theme's colours, where it was
        await pilot.pause()
        assert detail._shown == (id(app.timeline), split, "textual-light")


async def test_home_after_end_brings_the_list_back_to_the_top() -> None:
    """Regression: at step 0 no frame is complete yet, and the list did not follow the cursor
    there: after end, home left it scrolled to the last frames."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane = app.query_one(FramesPane)
        assert pane.max_scroll_y > 0  # (the list is taller than its pane)
        await pilot.press("end")
        await pilot.pause()
        last = len(app.timeline.frames) - 1
        top = round(pane.scroll_y)
        assert top > 0 and top <= pane.row_of_frame(last) < top + pane.scrollable_content_region.height
        await pilot.press("home")
        await pilot.pause()
        assert app.cursor == 0 and round(pane.scroll_y) == 0
        assert "No frame yet" in app.query_one(FrameDetailPane).plain()
        await pilot.press("end", "home", "end")
        await pilot.pause()
        assert round(pane.scroll_y) == top


async def test_the_filter_lists_only_the_matching_frames() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        app.screen.query_one(Input).value = "call = 2"
        await pilot.press("enter")
        await pilot.pause()
        matches = list(app.matches)
        assert 0 < len(matches) < len(app.timeline.frames)
        assert listed(app) == list(range(len(app.timeline.frames)))  # marked, not yet hidden
        await pilot.press("v")
        await pilot.pause()
        assert listed(app) == matches
        pane = app.query_one(FramesPane)
        assert await pilot.click(FramesPane, offset=(10, 1 + 1))  # the second row listed
        await pilot.pause()
        assert app.timeline.view(app.cursor).frame.index == matches[1]
        assert app.query_one(FrameDetailPane).index == matches[1]
        await pilot.press("v")
        await pilot.pause()
        assert listed(app) == list(range(len(app.timeline.frames)))
        assert pane.virtual_size.height == len(app.timeline.frames)


async def test_at_80_columns_a_row_shows_the_fragment_and_the_call_it_goes_to() -> None:
    """A narrow terminal lays the panes out two by two: the list takes more than half the width,
    and a compact row's number and event columns leave the rest to what the frame carries."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", *"#3", "enter")
        await pilot.pause()
        pane = app.query_one(FramesPane)
        assert pane.outer_size.width > 40 and pane.columns.compact
        row = next(strip.text for strip in app.screen._compositor.render_strips()
                   if "#3 " in strip.text and "delta" in strip.text)
        cropped = row[:pane.outer_size.width]
        assert '#3  r.f….delta "{\\"" call 1 lookup_demo…' in cropped, cropped  # (… at the edge)
        summary = cropped.split("delta ", 1)[1]
        assert len(summary.rstrip("│▇ ")) >= 25, summary


def test_a_fragment_is_quoted_as_a_json_string_spells_it() -> None:
    """A fragment of JSON is mostly quotes: shown between bare quotes, ``""Owne"`` could be the
    fragment ``"Owne``, ``Owne`` in two pairs, or an empty string and ``Owne"``. Its own quotes
    and backslashes are escaped, as the raw bytes spell them."""
    from callscope.core.timeline import Timeline

    frames = [{"type": "response.function_call_arguments.delta", "item_id": "fc_1",
               "output_index": 0, "delta": d} for d in ['"Owne', 'r\\', '"}']]
    opened = {"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": ""}}
    data = b"".join(b"data: " + orjson.dumps(f) + b"\n\n" for f in [opened, *frames])
    timeline = Timeline.build([(0.0, data)], "openai-responses")
    shown = [next(text for text, style in carries(timeline, i) if style == "text")
             for i in (1, 2, 3)]
    assert shown == ['"\\"Owne"', '"r\\\\"', '"\\"}"']


_PIECE_STYLES = ["", "bold", Style(foreground=Color(200, 100, 0)), Style(bold=True, dim=True)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.sampled_from(
    ["a", " ", "\x1b", "\n", "\u202e", "\u200b", "日", "é", "\x00", "["]), max_size=6),
    st.sampled_from(_PIECE_STYLES)), max_size=8))
def test_a_line_assembled_is_the_pieces_made_safe_and_assembled(pieces):
    """safe.Line gives what Content.assemble of each piece's safe.content gives: the same
    text, the same spans (so the same segments drawn)."""
    line = safe.Line("italic")
    for text, style in pieces:
        line.add(text, style)
    built = line.content()
    expected = Content.assemble(*(safe.content(text, style, "italic") for text, style in pieces))
    assert built.plain == expected.plain
    assert built.spans == expected.spans


async def test_a_row_with_its_gutter_is_the_gutter_then_the_row_cut_alone() -> None:
    """frame_row.row with a gutter: the gutter, then the row as drawn (and cut) without it,
    for every frame of the demo at widths that cut some rows and not others."""
    app = demo_app()
    async with app.run_test(size=SIZE):
        pane = app.query_one(FramesPane)
        st_ = pane._styles()
        gutter = (("▌", st_["bar"]), ("◆", st_["match"]))
        for cells in (0, 30, 57, 200):
            for i in range(len(app.timeline.frames)):
                for base in (Style(), st_["current"], st_["future"]):
                    alone = row(app.timeline, i, pane.columns, base, i % 3 == 0, st_, cells)
                    joined = row(app.timeline, i, pane.columns, base, i % 3 == 0, st_, cells,
                                 gutter)
                    expected = Content.assemble(*gutter, alone)
                    assert joined.plain == expected.plain, (cells, i)
                    assert joined.spans == expected.spans, (cells, i)
