"""The / prompt takes a display filter too; navigation obeys it; the counter says where."""

from __future__ import annotations

import pathlib

from callscope.core.session import open_input
from callscope.tui.app import CallscopeApp
from textual.widgets import Input

ROOT = pathlib.Path(__file__).resolve().parent.parent


def demo_app() -> CallscopeApp:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")


async def search(app: CallscopeApp, pilot, text: str) -> None:
    await pilot.press("slash")
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_a_display_filter_from_the_search_prompt() -> None:
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "event ~ delta and call = 2")
        frames = app.timeline.frames
        assert app.matches and all("delta" in frames[i].event for i in app.matches)
        assert app.timeline.view(app.cursor).frame.index == app.matches[0]
        assert f"(1/{len(app.matches)})" in app.query_one("#status").content.plain
        await pilot.press("v", "end")
        assert app.timeline.view(app.cursor).frame.index == app.matches[-1]
        await search(app, pilot, "evnt = 1")  # a broken filter: said, the last one kept
        assert app.search_text == "event ~ delta and call = 2"


async def test_search_finds_text_split_over_fragments() -> None:
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "notes/todo")
        assert len(app.matches) >= 2


async def test_with_the_filter_on_every_navigation_key_lands_on_a_shown_frame() -> None:
    """`v` was ignored by navigation: the cursor landed on frames the list hid."""
    app = demo_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "call = 1")
        await pilot.press("v", "home")
        shown = set(app.matches)
        assert shown and len(shown) < len(app.timeline.frames)
        landed = []
        for key in ("right", "right", "j", "right", "left", "k", "end", "left", "home"):
            await pilot.press(key)
            await pilot.pause()
            frame = app.timeline.view(app.cursor).frame
            assert frame is not None and frame.index in shown, (key, frame)
            landed.append(frame.index)
        assert len(set(landed)) > 2  # (it moved)
