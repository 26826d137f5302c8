"""A session opened from a list (``callscope DIR``, the proxy's captures) is painted right from
its first frame: every paint of the panes' screen, from the one that replaces the list on, is
the screen as it settles (the panes laid out at their width, the decisions' summary at its
height, the footer with the debugger's keys), never a frame of what was shown before."""

from __future__ import annotations

import pathlib
import shutil

import pytest
from callscope.core.session_model import Chunk, SessionHeader, StreamEnd
from callscope.tui.captures import CaptureChunk, CaptureEnded, CaptureStarted, ProxyApp
from callscope.tui.folder import FolderApp
from test_tui_first_paint import screen_text
from test_tui_folder import all_read
from test_tui_live import DATA, TOOLS, Paced, until
from test_tui_live import paced as paced  # (the fixture: a paced upstream for the relay)
from textual.screen import Screen
from textual.widgets import DataTable

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def paints(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every paint of the panes' screen (the app's default screen) while it is on top."""
    painted: list[str] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:  # type: ignore[type-arg]
        refresh(screen)
        if screen is screen.app.screen and screen is screen.app.default_screen:
            painted.append(screen_text(screen))

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    return painted


@pytest.mark.parametrize("size", [(200, 50), (120, 30), (80, 24)])
async def test_a_session_opened_from_the_folder_is_painted_right_from_its_first_frame(
        paints: list[str], tmp_path: pathlib.Path, size: tuple[int, int]) -> None:
    for name in ("demo.jsonl", "demo_complete.jsonl"):
        shutil.copy(ROOT / "sessions" / name, tmp_path / name)
    app = FolderApp(str(tmp_path))
    async with app.run_test(size=size) as pilot:
        await all_read(app, pilot, 2)
        for keys in (("enter",), ("l", "down", "enter")):  # the first opened, then another
            paints.clear()
            await pilot.press(*keys)
            for _ in range(8):
                await pilot.pause()
            assert app.screen is app.default_screen and paints
            settled = screen_text(app.screen)
            assert "step 0 of" in settled and "#0" in settled
            for paint in paints:
                assert paint == settled


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
async def test_a_capture_opened_from_the_proxy_list_is_painted_right_from_its_first_frame(
        paints: list[str], tmp_path: pathlib.Path, paced: Paced, size: tuple[int, int]) -> None:
    """A capture that ended, opened from the list (the facts the relay would write, given)."""
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    body = {"stream": True, "tools": [{"type": "function", "function": t} for t in TOOLS]}
    header = SessionHeader(protocol="openai-chat",
                           request={"method": "POST", "url": "/v1/chat/completions", "body": body})
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.url is not None)
        app.take_fact(CaptureStarted("one", header))
        app.take_fact(CaptureChunk("one", tuple(Chunk(i * 0.01, DATA[i:i + 500])
                                                for i in range(0, len(DATA), 500))))
        app.take_fact(CaptureEnded("one", StreamEnd("clean", at=1.0)))
        await until(pilot, lambda: app.list_screen.query_one(DataTable).row_count == 1)
        paints.clear()
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is app.default_screen)
        for _ in range(8):
            await pilot.pause()
        settled = screen_text(app.screen)
        assert paints and "Captures" in settled and "#0" in settled
        for paint in paints:
            assert paint == settled
