"""The first paints of a recording still being indexed show its rows as laid out at the panes'
real width, or no rows at all: never rows laid out before the screen had its size (they were,
8 cells wide, until each pane handled its Resize: up to a second on a loaded machine)."""

from __future__ import annotations

import asyncio
import pathlib
import re

import pytest
from callscope.tui import app as app_module
from callscope.tui import indexer
from callscope.tui.app import CallscopeApp
from callscope.tui.status import FIGURE_SPACE
from textual.screen import Screen

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARALLEL = ROOT / "tests/fixtures/openai-chat/parallel_tool_calls_two_functions.sse"
NO_CALL = "No tool call yet at this step."


def screen_text(screen: Screen) -> str:  # type: ignore[type-arg]
    """The screen's rows, the status line's counters without their pads (``step 0 of``)."""
    return "\n".join(strip.text.replace(FIGURE_SPACE, "")
                     for strip in screen._compositor.render_strips())


def panes_text(screen: Screen) -> str:  # type: ignore[type-arg]
    """The screen but its last row (the footer, which fits its keys to the width later)."""
    return screen_text(screen).rsplit("\n", 1)[0]


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
async def test_every_paint_while_indexing_shows_the_rows_laid_out_at_their_width(
        monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> None:
    monkeypatch.setattr(app_module, "BACKGROUND_BYTES", 0)  # indexed while the app runs
    monkeypatch.setattr(indexer, "FIRST_STEPS", 10)
    resume = asyncio.Event()
    run = indexer.Indexer.run

    async def paused(self: indexer.Indexer) -> None:  # the worker waits: a partial state stays
        await resume.wait()
        await run(self)

    monkeypatch.setattr(indexer.Indexer, "run", paused)
    paints: list[str] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:  # type: ignore[type-arg]
        refresh(screen)
        if screen is app.screen:
            paints.append(panes_text(screen))

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    async with app.run_test(size=size) as pilot:
        for _ in range(5):  # every Resize handled, every refresh painted
            await pilot.pause()
        assert app.building and len(app.timeline) == 10
        settled = panes_text(app.screen)
        assert "indexing" in settled and NO_CALL in settled  # rows and the progress, partial
        # A paint shows the frame rows as they are once laid out at the panes' width, and the
        # buffers' sentence whole (it was wrapped 8 cells wide), or no rows at all. (A pane may
        # still rewrap by a cell when its scrollbar comes: that is not this.)
        rows = [line for line in settled.splitlines() if re.search(r"│  #\d", line)]
        shown = [text.splitlines() for text in paints if "#0" in text]
        assert rows and shown
        for lines in shown:
            assert [line for line in lines if re.search(r"│  #\d", line)] == rows
            assert any(NO_CALL in line for line in lines)
        assert all("indexing" in text for text in paints)  # each says the rest is coming
        resume.set()
        while app.building:
            await pilot.pause(0.01)
        await pilot.pause()
        assert "indexing" not in screen_text(app.screen)
