"""SVG snapshots of the real app on real recordings (pytest-textual-snapshot).

Each recording is loaded as ONE chunk, as stored. Nothing on screen depends on the clock (no
header clock, timing only when the recording has some); notifications are cleared before the
picture is taken. Update with ``pytest tests/test_snapshots.py --snapshot-update`` and look at
the report before committing.
"""

from __future__ import annotations

import pathlib
import shutil
from collections.abc import Awaitable, Callable

import pytest
from callscope.core.tools import ToolSet
from callscope.tui.app import CallscopeApp
from callscope.tui.cli import LoadedInput, protocol_for, toolset_for
from callscope.tui.folder import FolderApp
from textual.pilot import Pilot
from textual.widgets import Input

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


# -- each feature of the debugger (issue 17), on the bundled demo as `callscope` opens it --------

ROOT = FIXTURES.parent.parent
NARROW = (80, 24)


def demo(name: str = "sessions/demo.jsonl") -> CallscopeApp:
    """A bundled session as the command line opens it (times, recorded end, header; no note:
    the demo's names a directory of this machine)."""
    loaded = LoadedInput(str(ROOT / name))
    return CallscopeApp(loaded.held(10**8), source=name, protocol=protocol_for(loaded, None),
                        tools=toolset_for(loaded, None), end=loaded.session.end,
                        header=loaded.session.header)


def then(*keys: str, frame: int | None = None) -> Callable[[Pilot], Awaitable[None]]:
    """Go to ``frame`` (if given), press ``keys``, let every worker finish, clear notices."""
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, CallscopeApp)
        if frame is not None:
            app.cursor = app.timeline.step_for_frame(frame)
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()

    return run_before


class TestFeatures:
    def test_frame_list_and_detail_at_80x24(self, snap_compare):
        """Two by two: the list (compact rows: number, event, what it carries) and the cursor's
        frame in detail under it, the buffers over the decisions."""
        assert snap_compare(demo(), terminal_size=NARROW, run_before=then(frame=3))

    def test_frame_list_and_detail_wide(self, snap_compare):
        assert snap_compare(demo(), terminal_size=(200, 50), run_before=then(frame=8))

    def test_the_headline_says_the_ending_at_80x24(self, snap_compare):
        """The demo's last step: refused, and how the stream ended (the decisions zoomed)."""
        assert snap_compare(demo(), terminal_size=NARROW,
                            run_before=then("end", "tab", "tab", "tab", "z"))

    def test_expert_info(self, snap_compare):
        assert snap_compare(demo(), terminal_size=SIZE, run_before=then("home", "e"))

    def test_request_view(self, snap_compare):
        assert snap_compare(demo(), terminal_size=SIZE, run_before=then("i"))

    def test_a_filter_with_its_match_counter(self, snap_compare):
        async def filtered(pilot: Pilot) -> None:
            await pilot.press("slash")
            pilot.app.screen.query_one(Input).value = "event ~ delta and call = 2"
            await then("enter", "v", "home", "f")(pilot)

        assert snap_compare(demo(), terminal_size=SIZE, run_before=filtered)

    def test_a_zoomed_frame_detail(self, snap_compare):
        assert snap_compare(demo(), terminal_size=NARROW, run_before=then("tab", "z", frame=20))

    def test_the_export_prompt(self, snap_compare, monkeypatch):
        monkeypatch.chdir("/")  # (the default path is in the working directory; nothing written)

        async def prompted(pilot: Pilot) -> None:
            await then("end", "S")(pilot)
            field = pilot.app.screen.query_one(Input)
            field.cursor_blink = False  # (a blinking cursor is drawn or not, by the clock)
            await pilot.pause()

        assert snap_compare(demo(), terminal_size=SIZE, run_before=prompted)

    def test_an_event_stream_frame_in_detail(self, snap_compare):
        """Bedrock's AWS event stream: a message's prelude, headers and checksums over the
        usual fields (its event type; no SSE id, retry or comments)."""
        assert snap_compare(demo("sessions/bedrock-converse/parallel_calls.jsonl"),
                            terminal_size=SIZE, run_before=then(frame=3))

    def test_an_invoke_payload_decoded_at_80x24(self, snap_compare):
        """InvokeModel's base64 ``bytes``, decoded: the Anthropic event inside (zoomed)."""
        assert snap_compare(demo("sessions/bedrock-invoke/single_call.jsonl"),
                            terminal_size=NARROW, run_before=then("tab", "z", "pagedown", frame=3))

    def test_invoke_frames_name_the_event_inside_at_80x24(self, snap_compare):
        """Every InvokeModel frame is a ``chunk``: each row names the Anthropic event inside."""
        assert snap_compare(demo("sessions/bedrock-invoke/parallel_calls.jsonl"),
                            terminal_size=NARROW, run_before=then(frame=8))

    def test_an_ndjson_stream_cut_mid_line_at_80x24(self, snap_compare):
        """Ollama's NDJSON, reset inside its last line: the headline says so in its terms."""
        assert snap_compare(demo("sessions/ollama-chat/truncated_mid_arguments.jsonl"),
                            terminal_size=NARROW, run_before=then("end"))

    def test_the_folder_list_at_80x24(self, snap_compare, monkeypatch, tmp_path):
        """Every column on screen at 80 cells: a long name elided in the middle."""
        for name in ("demo.jsonl", "bedrock-converse/truncated_mid_arguments.jsonl",
                     "ollama-chat/parallel_calls.jsonl"):
            target = tmp_path / name
            target.parent.mkdir(exist_ok=True)
            shutil.copy(ROOT / "sessions" / name, target)
        monkeypatch.chdir(tmp_path)
        assert snap_compare(FolderApp("."), terminal_size=NARROW, run_before=self._listed)

    @staticmethod
    async def _listed(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, FolderApp)
        for _ in range(200):
            await pilot.pause(0.05)
            if app.read == len(app.paths):
                break
        await app.workers.wait_for_complete()
        await pilot.pause()

    def test_the_folder_list(self, snap_compare, monkeypatch, tmp_path):
        for name in ("demo.jsonl", "demo_complete.jsonl", "anthropic/max_tokens.jsonl"):
            shutil.copy(ROOT / "sessions" / name, tmp_path / pathlib.Path(name).name)
        (tmp_path / "broken.sse").write_bytes(b"\x00\x01 not a stream")
        monkeypatch.chdir(tmp_path)
        assert snap_compare(FolderApp("."), terminal_size=SIZE, run_before=self._listed)
