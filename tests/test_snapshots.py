"""SVG snapshots of the real app on real recordings (pytest-textual-snapshot).

Each recording is loaded as ONE chunk, as stored. Nothing on screen depends on the clock (no
header clock, timing only when the recording has some); notifications are cleared before the
picture is taken. Update with ``pytest tests/test_snapshots.py --snapshot-update`` and look at
the report before committing.
"""

from __future__ import annotations

import pathlib
from collections.abc import Awaitable, Callable

import pytest
from callscope.core.tools import ToolSet
from callscope.tui.app import CallscopeApp
from textual.pilot import Pilot

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
SIZE = (130, 36)
PARALLEL = "openai-chat/parallel_tool_calls_two_functions.sse"


def app(name: str, *, permissive: bool = True) -> CallscopeApp:
    """The app on a recording; with every call name a known tool, so complete calls execute."""
    data = (FIXTURES / name).read_bytes()
    probe = CallscopeApp([(0.0, data)], source=name)
    names = sorted({c.name for c in probe.timeline.state.calls.values() if c.name})
    tools = ToolSet([{"name": n, "parameters": {"type": "object"}} for n in names]) \
        if permissive else None
    return CallscopeApp([(0.0, data)], source=name, tools=tools)


def at(where: Callable[[CallscopeApp], int]) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, CallscopeApp)
        app.cursor = where(app)
        await pilot.pause()
        app.clear_notifications()

    return run_before


def end(app: CallscopeApp) -> int:
    return len(app.timeline) - 1


class TestSteps:
    def test_start(self, snap_compare):
        assert snap_compare(app(PARALLEL), terminal_size=SIZE)

    def test_mid_call(self, snap_compare):
        assert snap_compare(app(PARALLEL), terminal_size=SIZE,
                            run_before=at(lambda a: a.timeline.step_for_frame(6)))

    def test_turn_end_executes(self, snap_compare):
        assert snap_compare(app(PARALLEL), terminal_size=SIZE, run_before=at(end))

    def test_parallel_calls(self, snap_compare):
        assert snap_compare(app(PARALLEL), terminal_size=SIZE,
                            run_before=at(lambda a: a.timeline.step_for_frame(17)))

    def test_after_a_cut(self, snap_compare):
        async def cut(pilot: Pilot) -> None:
            app = pilot.app
            assert isinstance(app, CallscopeApp)
            app.cursor = app.timeline.step_for_frame(8)
            await pilot.press("x")
            await pilot.pause()
            app.clear_notifications()
            await pilot.pause()

        assert snap_compare(app(PARALLEL), terminal_size=SIZE, run_before=cut)


PROTOCOLS = {
    "openai-responses": "openai-responses/single_function_call_gpt-5_with_reasoning.sse",
    "anthropic": "anthropic/max_tokens_mid_tool_input.sse",
    "gemini-interactions": "gemini-interactions/docs_streaming_google_search_plus_function_call.sse",
    "gemini-generate": "gemini-generatecontent/vertex_streamFunctionCallArguments_partialArgs"
                       ".reconstructed.sse",
    "openai-chat-gateway": "openai-chat/openai_compat_gateway_anthropic_index_starts_at_1.sse",
}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_protocol_turn_end(snap_compare, protocol):
    assert snap_compare(app(PROTOCOLS[protocol]), terminal_size=SIZE, run_before=at(end))


class TestScreens:
    def test_frame_detail(self, snap_compare):
        async def detail(pilot: Pilot) -> None:
            await at(lambda a: a.timeline.step_for_frame(2))(pilot)
            await pilot.press("enter")

        assert snap_compare(app(PARALLEL), terminal_size=SIZE, run_before=detail)

    def test_help(self, snap_compare):
        assert snap_compare(app(PARALLEL), terminal_size=SIZE, press=["f1"])
