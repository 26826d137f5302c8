"""The argument buffers pane measures, in idle slices, the lanes most steps show (each call once
its text is whole, once closed, once decided), so that a seek lays them out from known heights
and measures only lanes that look as no settled call does (the one growing at that step)."""

from __future__ import annotations

import random

import pytest
from callscope.core import synth
from callscope.core.timeline import Timeline
from callscope.tui.app import CallscopeApp
from callscope.tui.panes.buffers import BuffersPane, _settled_lanes
from callscope.tui.panes.lane import Lane


def _app(protocol: str, calls: int = 8) -> CallscopeApp:
    rng = random.Random(7)
    items = tuple(synth.ToolCall(f"tool_{i}", synth.realistic_arguments(700, rng))
                  for i in range(calls))
    encoded = synth.encode_turn(protocol, synth.Turn(items=items,
                                                     fragmenting=synth.Fragmenting(1, 8)), rng)
    reads = synth.network_chunks(encoded.data, rng, frame_ends=encoded.frame_ends)
    return CallscopeApp(reads, source="t", protocol=protocol)


@pytest.mark.parametrize("protocol", ["openai-chat", "openai-responses", "anthropic",
                                      "gemini-interactions", "bedrock-converse"])
async def test_a_seek_measures_only_the_lane_that_grows_there(protocol, monkeypatch) -> None:
    app = _app(protocol)
    async with app.run_test(size=(200, 50)) as pilot:
        pane = app.query_one(BuffersPane)
        for _ in range(500):  # (idle slices: 5 ms each)
            if pane._ahead is None:
                break
            await pilot.pause(0.01)
        assert pane._ahead is None
        measured: list[str] = []
        original = Lane.rows

        def rows(self: Lane, width: int) -> int:
            measured.append(self.call.key)
            return original(self, width)

        monkeypatch.setattr(Lane, "rows", rows)
        timeline = app.timeline
        growing = [key for key in timeline.call_order if len(timeline.calls[key].frag_steps) > 2]
        assert len(growing) == len(timeline.call_order) == 8
        for key in growing[1:]:
            frags = timeline.calls[key].frag_steps
            for k in (frags[len(frags) // 2], len(timeline) - 1):  # mid-call, and the end
                measured.clear()
                app.action_goto_step(k)
                await pilot.pause()
                view = app.timeline.view(k)
                assert len(view.calls) >= 2
                # (at the end every lane is decided: all of them known)
                assert set(measured) <= ({key} if k < len(timeline) - 1 else set()), (k, measured)


async def test_a_timeline_still_growing_is_not_measured_ahead_and_stops_the_old_one() -> None:
    app = _app("openai-chat", calls=4)
    async with app.run_test(size=(200, 50)) as pilot:
        pane = app.query_one(BuffersPane)
        pane.measure_ahead(Lane(call, app.timeline, 0, False) for call in app.timeline.view(
            len(app.timeline) - 1).calls)
        assert pane._ahead is not None
        live = Timeline.live("openai-chat")
        app.show_timeline(live, "live")
        await pilot.pause()
        assert pane._ahead is None  # (its lanes change with every read: none settled yet)


async def test_a_followed_stream_is_measured_ahead_once_it_ends() -> None:
    source = _app("anthropic", calls=3)
    app = _app("anthropic", calls=1)
    async with app.run_test(size=(200, 50)) as pilot:
        pane = app.query_one(BuffersPane)
        live = Timeline.live("anthropic")
        app.show_timeline(live, "live")
        for t, data in source.timeline.source:
            live.extend(t, data)
        app.follower.grew(live)
        await pilot.pause(0.3)
        assert pane._ahead is None and app.cursor == len(live) - 1  # (followed, not settled)
        live.finish()
        app.follower.grew(live)
        for _ in range(100):
            await pilot.pause(0.02)
            if pane._ahead is None and any(key[2] == "call:2" for key, _ in pane._heights
                                           if isinstance(key, tuple) and key[:1] == ("lane",)):
                break
        settled = [lane.key for lane in _settled_lanes(live)]
        assert all((key, pane._width) in pane._heights for key in settled)
