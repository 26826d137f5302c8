"""Cutting a large recording indexes in the background; keys answer while it does, and each
key refreshes the panes once and paints the views it resizes once."""

from __future__ import annotations

import asyncio
import pathlib

from callscope.core.engine import DecisionStep
from callscope.tui import app_rebuild, indexer
from callscope.tui.app import CallscopeApp
from callscope.tui.panes.decisions_pane import DecisionsPane
from callscope.tui.panes.rows import RowsView
from textual.geometry import Region
from textual.screen import Screen

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
        assert f"of {len(data):,} B recorded" in app.query_one("#status").content.plain


# -- a key's paints ------------------------------------------------------------------------------


async def _decision_paints(move: str, monkeypatch, at: float = 0.5) -> tuple[
        list[int], list[int], dict]:
    """Per decisions view (summary, log): how many paints drew it after ``move`` (``c`` at the
    last step, or ``x`` halfway), its sizes after, and its rows as last
    painted next to its rows drawn afresh once settled."""
    async def held(self: indexer.Indexer) -> None:  # (the rest of a rebuild is never indexed:
        return None                                   #  the key's own paints are all there are)

    monkeypatch.setattr(app_rebuild, "BACKGROUND_BYTES", 0)
    monkeypatch.setattr(indexer.Indexer, "run", held)
    paints = [0]
    drawn: dict[int, dict[int, str]] = {}  # view -> its row -> text last drawn
    painted: dict[int, set[int]] = {}  # view -> the paints that drew it
    refresh, render_lines = Screen._compositor_refresh, RowsView.render_lines

    def counted(screen: Screen) -> None:  # type: ignore[type-arg]
        paints[0] += 1
        refresh(screen)

    def recorded(view: RowsView, crop: Region) -> list:
        strips = render_lines(view, crop)
        rows = drawn.setdefault(id(view), {})
        for i, strip in enumerate(strips):
            rows[crop.y + i] = strip.text
        painted.setdefault(id(view), set()).add(paints[0])
        return strips

    monkeypatch.setattr(Screen, "_compositor_refresh", counted)
    monkeypatch.setattr(RowsView, "render_lines", recorded)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    async with app.run_test(size=(160, 45)) as pilot:
        app.action_goto_step(len(app.timeline) - 1 if move == "c" else int(len(app.timeline) * at))
        await _calm(pilot, paints)
        pane = app.query_one(DecisionsPane)
        views = (pane.summary_view, pane.log_view)
        before = [v.size.height for v in views]
        drawn.clear()
        painted.clear()
        await pilot.press(move)
        await _calm(pilot, paints)
        after = [v.size.height for v in views]
        counts = [len(painted.get(id(v), ())) for v in views]
        rows = {}
        for name, view in zip(("summary", "log"), views, strict=True):
            height = view.size.height
            afresh = [s.text for s in render_lines(view, Region(0, 0, view.size.width, height))]
            last = [drawn.get(id(view), {}).get(y) for y in range(height)]
            rows[name] = (last, afresh)
        assert before != after, "the move does not resize the decisions views"
        return counts, after, rows


async def _calm(pilot, paints: list[int], calm: int = 4) -> None:
    last, same = paints[0], 0
    for _ in range(100):
        await pilot.pause()
        same = same + 1 if paints[0] == last else 0
        last = paints[0]
        if same >= calm:
            return
    raise AssertionError("the paints never stopped")


async def test_a_rechunk_paints_its_resized_decision_views_once_with_their_rows(monkeypatch):
    counts, _, rows = await _decision_paints("c", monkeypatch)
    assert counts == [1, 1]
    for last, afresh in rows.values():
        assert last == afresh


async def test_a_cut_paints_its_resized_decision_views_with_their_rows(monkeypatch):
    # (a cut's refreshes reach the screen over two of its updates, each a layout and a paint
    # of the views: one paint of them is the rechunk's test)
    counts, _, rows = await _decision_paints("x", monkeypatch, 0.3)  # (a cut that resizes them)
    assert all(counts)
    for last, afresh in rows.values():
        assert last == afresh


async def test_a_rebuild_key_refreshes_the_panes_once(monkeypatch):
    monkeypatch.setattr(app_rebuild, "BACKGROUND_BYTES", 0)
    app = CallscopeApp([(0.0, PARALLEL.read_bytes())], source="p")
    shown: list[int] = []
    refresh_view = CallscopeApp.refresh_view

    def counted(self: CallscopeApp) -> None:
        shown.append(self.cursor)
        refresh_view(self)

    monkeypatch.setattr(CallscopeApp, "refresh_view", counted)
    async with app.run_test(size=(160, 45)) as pilot:
        for key in ("c", "x"):
            while app.building:
                await asyncio.sleep(0)
            app.action_goto_step(len(app.timeline) // 2)
            await pilot.pause()
            shown.clear()
            getattr(app, "action_cycle_chunking" if key == "c" else "action_cut")()
            assert app.building and shown == [0]
