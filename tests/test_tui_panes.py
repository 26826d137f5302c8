"""Panes you can work in: tab focuses one, z zooms it, page keys scroll it, < > resize it."""

from __future__ import annotations

import pathlib

from callscope.core.session import open_input
from callscope.tui.app import CallscopeApp

ROOT = pathlib.Path(__file__).resolve().parent.parent


def demo() -> CallscopeApp:
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    return CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")


async def test_focus_zoom_page_and_resize_act_on_the_focused_pane() -> None:
    app = demo()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("end", "tab")
        await pilot.pause()
        focused = app.focused_pane()
        assert focused.id == "buffers" and focused.has_class("-pane-focused")
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.maximized is focused
        await pilot.press("tab")  # the zoom follows the focus
        await pilot.pause()
        assert app.screen.maximized is app.focused_pane() and app.focused_pane().id == "decisions"
        await pilot.press("z")
        await pilot.pause()
        assert app.screen.maximized is None
        before = app.focused_pane().size.width
        await pilot.press("greater_than_sign", "greater_than_sign")
        await pilot.pause()
        assert app.focused_pane().size.width > before
        await pilot.press("shift+tab", "shift+tab")
        await pilot.pause()
        assert app.focused_pane().id == "left"
        cursor = app.cursor
        await pilot.press("pageup")
        assert app.cursor == cursor  # scrolling moves no cursor
