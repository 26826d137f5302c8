"""A long search runs in slices (tui/search_scan.py): keys are answered between two slices, the
matches found so far are the app's, a new search or a reload cancels it, and at its end it has
found what the search run at once finds.

The demo session is searched a frame or two per slice (the search's batches made small, every
search sliced); the slices wait for the test's go between two (the event loop runs meanwhile),
so what the app has searched at each moment is known exactly.
"""

from __future__ import annotations

import asyncio
import pathlib

import pytest
from callscope.core import frame_query, frame_scan
from callscope.core.session import open_input
from callscope.core.timeline import Timeline
from callscope.tui import indexer, search_scan
from callscope.tui.app import CallscopeApp
from textual.widgets import Input

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHUNKS = [(c.t, c.data) for c in open_input(str(ROOT / "sessions/demo.jsonl")).chunks()]
TEXTS = ["event ~ delta", "call = 2 or anomaly ~ a", "tool = delete_demo_file", "notes/todo",
         "delta", "zz-none", "bytes = 2000-6000"]


class Slices:
    """Every search in slices of one item, each waiting for :meth:`go` after it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(search_scan, "SYNC_FRAMES", 0)
        monkeypatch.setattr(search_scan, "FIRST_SLICE", 0.0)
        monkeypatch.setattr(search_scan, "PROGRESS", 0.0)
        monkeypatch.setattr(indexer, "SLICE", 0.0)
        monkeypatch.setattr(frame_scan, "BATCH", 2)
        monkeypatch.setattr(frame_query, "STEPS_BATCH", 5)
        self.done = 0
        self.gate = asyncio.Event()
        slices = self

        async def breathe(run: search_scan.SearchRun) -> None:
            slices.done += 1
            slices.gate.clear()
            await slices.gate.wait()

        monkeypatch.setattr(search_scan.SearchRun, "breathe", breathe)

    async def go(self, app: CallscopeApp) -> None:
        """Let the running search do one more slice (or end)."""
        done = self.done
        self.gate.set()
        for _ in range(1000):
            await asyncio.sleep(0.001)
            if self.done > done or app.search_progress() is None:
                return
        raise AssertionError("the search did not go on")

    async def to_the_end(self, app: CallscopeApp) -> int:
        slices = 0
        while app.search_progress() is not None:
            await self.go(app)
            slices += 1
        return slices


def status(app: CallscopeApp) -> str:
    return app.query_one("#status").content.plain


async def search(app: CallscopeApp, pilot, text: str) -> None:
    await pilot.press("slash")
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


def shown_frame(app: CallscopeApp) -> int | None:
    frame = app.timeline.view(app.cursor).frame
    return frame.index if frame is not None else None


async def test_a_long_search_runs_in_slices_and_keys_are_answered_meanwhile(monkeypatch) -> None:
    slices = Slices(monkeypatch)
    app = CallscopeApp(CHUNKS, source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        text = "event ~ delta"
        expected = frame_scan.search_all(app.timeline, text)
        await search(app, pilot, text)
        assert app.search_progress() is not None and "searching 0%" in status(app)
        assert app.matches == [] and app.search_text == text
        cursor = app.cursor
        await pilot.press("down")  # a key between two slices: answered
        assert app.cursor == cursor + 1 and app.search_progress() is not None
        while not app.matches:
            await slices.go(app)
        partial = list(app.matches)
        assert partial == expected[:len(partial)] and len(partial) < len(expected)
        assert f"({len(partial)} matches)" in status(app) and "searching" in status(app)
        await pilot.press("f")  # navigation: the matches found so far
        assert shown_frame(app) == partial[0] and app.search_progress() is not None
        await pilot.press("v", "end")  # the filter shows, and goes to, what is found so far
        await pilot.pause()
        assert shown_frame(app) == app.matches[-1] and app.search_progress() is not None
        assert await slices.to_the_end(app) > 3
        assert app.matches == expected and "searching" not in status(app)
        await pilot.press("end")
        assert shown_frame(app) == expected[-1]


async def test_the_search_asked_for_goes_to_its_first_match_as_it_is_found(monkeypatch) -> None:
    slices = Slices(monkeypatch)
    app = CallscopeApp(CHUNKS, source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "tool = delete_demo_file")
        while not app.matches:
            await slices.go(app)
        await pilot.pause()
        assert app.search_progress() is not None and shown_frame(app) == app.matches[0]
        await slices.to_the_end(app)
        assert shown_frame(app) == app.matches[0]
        await search(app, pilot, "zz-none")
        assert not app._notifications or "No frame matches" not in str(list(app._notifications))
        await slices.to_the_end(app)
        await pilot.pause()
        assert any("No frame matches zz-none" in n.message for n in app._notifications)


@pytest.mark.parametrize("text", TEXTS)
async def test_a_search_in_slices_finds_what_the_search_at_once_finds(monkeypatch, text) -> None:
    at_once = CallscopeApp(CHUNKS, source="demo")
    async with at_once.run_test(size=(160, 45)):
        at_once._find(text)
        assert at_once.search_progress() is None  # (run at once: the demo is short)
        expected = list(at_once.matches)
    assert expected == frame_scan.search_all(at_once.timeline, text)
    slices = Slices(monkeypatch)
    app = CallscopeApp(CHUNKS, source="demo")
    async with app.run_test(size=(160, 45)):
        app._find(text)
        assert app.search_progress() is not None
        assert await slices.to_the_end(app) > 1
        assert app.matches == expected and app._searched == len(app.timeline.frames)


async def test_a_new_search_or_a_reload_cancels_the_running_one(monkeypatch) -> None:
    slices = Slices(monkeypatch)
    app = CallscopeApp(CHUNKS, source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "delta")
        for _ in range(8):
            await slices.go(app)
        first = app._scan
        assert first is not None and app.matches
        await search(app, pilot, "call = 1")
        assert first.cancelled and app._scan is not first and app.search_text == "call = 1"
        assert app.matches == []  # (the earlier search's matches are not this one's)
        second = app._scan
        await slices.go(app)
        app._load()  # the timeline shown again (a capture picked, an undo): searched again
        assert second is not None and second.cancelled and app._scan not in (first, second)
        await slices.to_the_end(app)
        assert app.matches == frame_scan.search_all(app.timeline, "call = 1")
        for _ in range(3):  # (the cancelled searches' slices, let go: they change nothing)
            slices.gate.set()
            await pilot.pause()
        assert app.matches == frame_scan.search_all(app.timeline, "call = 1")


async def test_a_filter_that_cannot_be_read_is_one_line_and_the_running_search_goes_on(
        monkeypatch) -> None:
    slices = Slices(monkeypatch)
    app = CallscopeApp(CHUNKS, source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "event ~ delta")
        running = app._scan
        await search(app, pilot, "evnt = 1")
        notes = [n.message for n in app._notifications if n.message.startswith("Filter:")]
        assert len(notes) == 1 and "unknown field 'evnt' at character 1" in notes[0]
        assert "\n" not in notes[0]
        assert app._scan is running and not running.cancelled and app.search_text == "event ~ delta"
        await slices.to_the_end(app)
        assert app.matches == frame_scan.search_all(app.timeline, "event ~ delta")


async def test_a_live_timeline_growing_while_it_is_searched_has_its_new_frames_searched(
        monkeypatch) -> None:
    slices = Slices(monkeypatch)
    live = Timeline.live()
    half = len(CHUNKS) // 2
    for t, data in CHUNKS[:half]:
        live.extend(t, data)
    app = CallscopeApp([], source="live", timeline=live)
    async with app.run_test(size=(160, 45)) as pilot:
        await search(app, pilot, "delta")
        searching = app._scan
        assert searching is not None and searching.stop == len(live.frames)
        await slices.go(app)
        for t, data in CHUNKS[half:]:  # the stream goes on meanwhile, and ends
            live.extend(t, data)
        live.finish()
        app.find_new_frames()  # (what the follower does as it shows them)
        assert app._scan is searching
        await slices.to_the_end(app)
        assert app._searched == len(live.frames) > searching.stop
        whole = Timeline.build(CHUNKS)
        assert len(whole.frames) == len(live.frames)
        assert app.matches == frame_scan.search_all(whole, "delta")
