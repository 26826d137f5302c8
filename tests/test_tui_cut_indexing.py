"""A cut indexed in the background: its key lays the status line out once (its height kept
while the cut is indexed), the indexing starts after the key's paint, and an undo drops it."""

from __future__ import annotations

import asyncio
import pathlib

from callscope.tui import app_rebuild, indexer
from callscope.tui.app import CallscopeApp

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARALLEL = ROOT / "tests/fixtures/openai-chat/parallel_tool_calls_two_functions.sse"


def _slow_slices(monkeypatch) -> None:
    monkeypatch.setattr(app_rebuild, "BACKGROUND_BYTES", 0)
    monkeypatch.setattr(indexer, "REBUILD_FIRST_STEPS", 5)
    monkeypatch.setattr(indexer, "BATCH", 1)
    monkeypatch.setattr(indexer, "SLICE", 0.0)


async def test_the_status_line_keeps_its_height_while_a_cut_is_indexed(monkeypatch) -> None:
    _slow_slices(monkeypatch)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p" * 30)
    # (a width where the line fits one row, and no longer with the progress in it)
    async with app.run_test(size=(150, 45)) as pilot:
        status = app.query_one("#status")
        assert status.styles.height.value == 1
        app._cut(app.timeline.frames[12].end)
        assert app.building and "indexing" in status.content.plain
        heights = set()
        while app.building:
            heights.add(status.styles.height.value)
            await asyncio.sleep(0)
        await pilot.pause()
        assert heights == {1}
        assert "CUT at" in status.content.plain


async def test_a_cuts_indexing_starts_after_the_keys_paint(monkeypatch) -> None:
    _slow_slices(monkeypatch)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    async with app.run_test(size=(160, 45)) as pilot:
        app._cut(app.timeline.frames[12].end)
        assert app.building and len(app.timeline) == 5
        assert not [w for w in app.workers if w.name == "index"]  # (not in the key)
        await pilot.pause()
        assert [w for w in app.workers if w.name == "index"] or not app.building


async def test_an_undo_while_a_cut_is_indexed_drops_its_indexing(monkeypatch) -> None:
    _slow_slices(monkeypatch)
    monkeypatch.setattr(indexer, "BREATHE", 0.05)  # (a step each 50 ms: still indexing at the u)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    async with app.run_test(size=(160, 45)) as pilot:
        original = app.timeline
        app._cut(app.timeline.frames[12].end)
        await pilot.pause()
        assert app.building
        await pilot.press("u")
        await pilot.pause()
        assert app.timeline is original and not app.building
        assert "indexing" not in app.query_one("#status").content.plain
        monkeypatch.setattr(indexer, "BREATHE", 0.0)
        end = original.frames[8].end
        app._cut(end)  # a cut again at once: not refused as "still being indexed"
        assert app.timeline.cut == end and app.building
        while app.building:
            await asyncio.sleep(0)
        await pilot.pause()
        assert app.timeline.cut == end and app.cursor == len(app.timeline) - 1


async def test_a_rebuild_of_many_reads_is_indexed_in_the_background_whatever_its_size(
        monkeypatch) -> None:
    """A cut or a re-chunk is built in its key only when it is small in bytes *and* in reads:
    the demo's 8 KB are 81 recorded reads (at once), or 8,329 read a byte at a time (each read
    costs the engine as much as a larger one: in slices)."""
    monkeypatch.setattr(app_rebuild, "BACKGROUND_READS", 1000)
    from callscope.core.session import open_input
    session = open_input(str(ROOT / "sessions/demo.jsonl"))
    app = CallscopeApp([(c.t, c.data) for c in session.chunks()], source="demo")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app._cut(5000)  # (recorded: 48 reads hold the first 5000 bytes)
        assert not app.building and app.timeline.cut == 5000
        app.action_undo_cut()
        app.action_cycle_chunking()  # recorded -> bytes:1: 8329 reads
        assert app.building and str(app.timeline.chunking) == "bytes:1"
        while app.building:
            await pilot.pause()
        app._cut(5000)  # (5000 reads)
        assert app.building and app.timeline.cut == 5000
        while app.building:
            await pilot.pause()
        assert len(app.timeline.chunks) == 5000
        app.action_cycle_chunking()  # bytes:1 -> random:7, reads of 1-64 bytes: ~155 of them
        assert not app.building and str(app.timeline.chunking) == "random:7"


def _screen(app: CallscopeApp) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def _drawn_afresh(app: CallscopeApp, pilot) -> list[str]:
    """The screen after every pane is loaded again with the timeline, at the same cursor."""
    app._load(cursor=app.cursor)
    await pilot.pause()
    return _screen(app)


async def test_a_rebuild_indexed_in_the_background_ends_without_reloading_the_panes(
        monkeypatch) -> None:
    # The panes take in a background rebuild's steps as it grows; at its end they show what a
    # reload would, so none is made (on a 4 MB session it held a key ~180 ms).
    _slow_slices(monkeypatch)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    loads = []
    load = CallscopeApp._load

    def counted(self: CallscopeApp, cursor: int | None = None) -> None:
        loads.append(cursor)
        load(self, cursor)

    monkeypatch.setattr(CallscopeApp, "_load", counted)
    async with app.run_test(size=(160, 45)) as pilot:
        for rebuild in (app.action_cycle_chunking, lambda: app._cut(app.timeline.frames[12].end)):
            app.action_goto_step(len(app.timeline) // 2)
            await pilot.pause()
            loads.clear()
            rebuild()
            assert app.building and loads == [0]  # (the key's own load, of the first steps)
            while app.building:
                await asyncio.sleep(0)
            for _ in range(3):
                await pilot.pause()
            assert loads == [0]
            shown = _screen(app)
            assert shown == await _drawn_afresh(app, pilot)
