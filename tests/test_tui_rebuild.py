"""Cutting a large recording indexes in the background; keys answer while it does."""

from __future__ import annotations

import asyncio
import pathlib

from callscope.core.engine import DecisionStep
from callscope.tui import app_rebuild, indexer
from callscope.tui.app import CallscopeApp

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARALLEL = ROOT / "tests/fixtures/openai-chat/parallel_tool_calls_two_functions.sse"


async def test_a_large_cut_is_indexed_while_keys_answer(monkeypatch) -> None:
    monkeypatch.setattr(app_rebuild, "BACKGROUND_BYTES", 0)
    monkeypatch.setattr(indexer, "FIRST_STEPS", 10)
    monkeypatch.setattr(indexer, "BATCH", 5)
    monkeypatch.setattr(indexer, "SLICE", 0.0)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    async with app.run_test(size=(160, 45)) as pilot:
        original = app.timeline
        end = original.frames[12].end
        app._cut(end)
        assert app.building and app.timeline.cut == end
        moves = 0
        while app.building:
            app.action_first()
            moves += app.cursor == 0
            await asyncio.sleep(0)
        await pilot.pause()
        assert moves > 2 and app.cursor == len(app.timeline) - 1
        decisions = [s.decision for s in app.timeline.steps if isinstance(s, DecisionStep)]
        assert decisions and all(d.action == "refuse" for d in decisions)
        await pilot.press("u")
        await pilot.pause()
        assert app.timeline is original


async def test_a_rebuild_indexes_only_its_first_screenful_in_the_key(monkeypatch) -> None:
    monkeypatch.setattr(app_rebuild, "BACKGROUND_BYTES", 0)
    monkeypatch.setattr(indexer, "REBUILD_FIRST_STEPS", 5)
    data = PARALLEL.read_bytes()
    app = CallscopeApp([(0.0, data)], source="p")
    async with app.run_test(size=(160, 45)) as pilot:
        steps = len(app.timeline)
        assert steps > 5
        app.action_cycle_chunking()  # the c key: the rest is indexed in slices, after the key
        assert app.building and len(app.timeline) == 5
        assert app.indexer is not None and app.indexer.total == len(data)
        while app.building:
            await asyncio.sleep(0)
        await pilot.pause()
        app._cut(app.timeline.frames[12].end)
        assert app.building and len(app.timeline) == 5
        assert f"of {len(data)} B recorded" in app.query_one("#status").content.plain
