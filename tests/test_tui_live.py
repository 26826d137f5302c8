"""Live traffic in the debugger (pilot + loopback): ``callscope live`` and ``callscope proxy`` grow
their timelines as the bytes arrive, the cursor follows the newest step until the user moves it,
and a capture opened while it streams keeps growing."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import threading
import time

import httpx
import pytest
from callscope.core.engine import DecisionStep
from callscope.core.importers import open_input
from callscope.core.timeline import Timeline
from callscope.core.tools import ToolSet
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from callscope.net.live import STOPPED, build_request
from callscope.net.serve import Emulator, make_server
from callscope.net.serve_faults import Faults
from callscope.net.serve_sessions import load
from callscope.tui import safe
from callscope.tui.app import CallscopeApp
from callscope.tui.captures import ProxyApp
from callscope.tui.captures_screen import CapturesScreen
from callscope.tui.commands import help_rows
from callscope.tui.live import LiveApp
from callscope.tui.panes.buffers import BuffersPane
from callscope.tui.panes.decisions_pane import DecisionsPane
from callscope.tui.panes.frames import FramesPane
from callscope.tui.panes.rawbytes import whole_chars
from textual.widgets import DataTable

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CHAT = FIXTURES / "openai-chat" / "parallel_tool_calls_two_functions.sse"
DATA = CHAT.read_bytes()
TOOLS = [{"name": "GetWeatherArgs", "parameters": {"type": "object"}},
         {"name": "get_stock_price", "parameters": {"type": "object"}}]
MID_CALL = DATA.index(b'"index":1') + 200
"""A byte offset inside the second call's argument deltas."""
SIZE = (120, 34)
KEY = "sk-tui-live-SECRET-91b2"
ENV = {"OPENAI_API_KEY": KEY}
LIVE_IDS = {"callscope.follow", "callscope.captures"}


class Paced:
    """An upstream on loopback that sends the next piece of the stream only when the test says
    (so what the app has seen at each moment is known exactly)."""

    def __init__(self, data: bytes, size: int) -> None:
        self.pieces = [data[i:i + size] for i in range(0, len(data), size)]
        self.allowed = 0
        self.requests: list[Request] = []

    def release(self, n: int | None = None) -> None:
        self.allowed = len(self.pieces) if n is None else self.allowed + n

    async def handle(self, request: Request, out: Responder) -> None:
        self.requests.append(request)
        await out.start(200, [("content-type", "text/event-stream")])
        for i, piece in enumerate(self.pieces):
            while i >= self.allowed:
                await asyncio.sleep(0.005)
            await out.send(piece)
        await out.end()


@pytest.fixture
def paced():
    upstream = Paced(DATA, 400)
    with BackgroundServer(lambda: HTTPServer(upstream.handle)) as url:
        upstream.url = url
        yield upstream


@pytest.fixture
def serve():
    emulator = Emulator([load(str(CHAT))], Faults(delay=0))
    with BackgroundServer(lambda: make_server(emulator)) as url:
        yield url


def live_app(base: str, path: pathlib.Path, fault: str | None = None) -> LiveApp:
    request = build_request("openai-chat", "m", "hi", tools=TOOLS, base_url=base + "/v1", env=ENV)
    if fault:
        request.headers["x-callscope-fault"] = fault
    return LiveApp(request, str(path))


async def until(pilot, condition, timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def settled(app) -> bool:
    """The panes show what the timeline holds now (the follower refreshed since it grew), and
    the frames' rows fit the pane (a scrollbar appeared as the stream grew: laid out again)."""
    pane = app.query_one(FramesPane)
    return (app.follower._timer is None and pane.view is not None and pane.view.k == app.cursor
            and len(pane._widths) == len(app.timeline.frames)  # every frame measured
            and pane.show_vertical_scrollbar == (pane.virtual_size.height > pane.size.height)
            and pane._layout_width == max(pane.scrollable_content_region.width, 10))


def status(app) -> str:
    return app.query_one("#status").content.plain


def summary(app) -> str:
    return app.query_one(DecisionsPane).summary_text()


def lanes(app) -> dict[str, str]:
    pane = app.query_one(BuffersPane)
    return {key: lane.plain(pane) for key, lane in pane.lanes().items()}


def live_keys(app) -> list[str]:
    """The live-only keys listed in help now (the palette lists the same bindings)."""
    return [row[2] for row in help_rows(app) if row[2] in LIVE_IDS]


def check_final(app, timeline: Timeline) -> None:
    """The panes show the end of the stream, and it is what a replay of the session decides."""
    assert app.cursor == len(app.timeline) - 1 and app.timeline.view(app.cursor).finished
    replayed = Timeline.build([(0.0, b"".join(d for _, d in timeline.source))], "openai-chat",
                              ToolSet([{"type": "function", "function": t} for t in TOOLS]))
    decided = [s.decision for s in replayed.steps if isinstance(s, DecisionStep)]
    assert decided and [s.decision for s in app.timeline.steps
                        if isinstance(s, DecisionStep)] == decided
    text = summary(app)
    for d in decided:
        assert d.action.upper() in text
    for call in app.timeline.view(app.cursor).calls:
        assert call.text[-40:] in lanes(app)[call.key].replace("␊\n", "␊")


# -- callscope live ------------------------------------------------------------------------------

async def test_live_against_serve_shows_frames_and_the_final_decision(serve, tmp_path):
    app = live_app(serve, tmp_path / "live.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.stream.closed and settled(app))
        assert app.timeline is app.stream and app.stream.end.kind == "clean"
        assert app.stream.data() == DATA and len(app.timeline.frames) > 10
        check_final(app, app.stream)
        assert "EXECUTE" in summary(app) and "turn ENDED" in summary(app)
        assert "ended: clean" in status(app) and "LIVE" not in status(app)
        assert KEY not in status(app)
    result = app.wait(5)
    assert result is not None and result.ok
    assert b"".join(c.data for c in open_input(str(tmp_path / "live.jsonl")).chunks()) == DATA


async def test_a_cut_stream_shows_the_truncated_refusal(serve, tmp_path):
    app = live_app(serve, tmp_path / "cut.jsonl", fault=f"cut={MID_CALL}")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.stream.closed and settled(app))
        assert app.stream.end.kind == "cut" and app.stream.total_bytes == MID_CALL
        text = summary(app)
        assert "TRUNCATED" in text and text.count("REFUSE truncated") == len(TOOLS)
        assert "ended: cut" in status(app)
        check_final(app, app.stream)
    assert open_input(str(tmp_path / "cut.jsonl")).end.kind == "cut"


async def test_the_cursor_follows_until_the_user_moves_it(paced, tmp_path):
    app = live_app(paced.url, tmp_path / "paced.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        assert "waiting for the first bytes" in status(app)
        paced.release(3)
        await until(pilot, lambda: len(app.stream.chunks) == 3 and settled(app))
        first = len(app.timeline)
        assert app.follower.following and app.cursor == first - 1
        assert "LIVE following" in status(app) and not app.stream.closed
        assert live_keys(app) == ["callscope.follow"]  # in help and the palette too
        assert "turn OPEN" in summary(app)  # nothing is decided while the stream is open

        await pilot.press("left")  # the user moves: the cursor stays there from now on
        held = app.cursor
        assert held < first - 1 and not app.follower.following
        paced.release(3)
        await until(pilot, lambda: len(app.stream.chunks) == 6 and settled(app))
        assert len(app.timeline) > first and app.cursor == held
        assert "(t: follow)" in status(app)
        assert len(app.query_one(FramesPane)._widths) == len(app.timeline.frames)

        await pilot.press("t")  # follow again: to the newest step, and on with it
        assert app.follower.following and app.cursor == len(app.timeline) - 1
        await pilot.press("home")
        assert not app.follower.following and app.cursor == 0
        await pilot.press("end")  # the end of a live stream is following it
        assert app.follower.following
        paced.release(2)
        await until(pilot, lambda: len(app.stream.chunks) == 8 and settled(app))
        assert app.cursor == len(app.timeline) - 1

        await pilot.press("c")  # no rechunking while the bytes still arrive
        assert app.timeline is app.stream
        paced.release()
        await until(pilot, lambda: app.stream.closed and settled(app))
        check_final(app, app.stream)
        assert "ended: clean" in status(app)


def tail_text(pane: FramesPane) -> str:
    """The rows drawn after the last frame (the block still arriving), gutters dropped."""
    return "".join(strip.text[2:].rstrip(" ") for strip in pane._tail_strips())


async def test_growing_frames_are_laid_out_as_a_fresh_load_would_and_the_arriving_block_shows():
    # Reads of odd sizes at different times (timing appears with the second read), split
    # inside a UTF-8 character too: the rows grown read by read are the rows of one load.
    data = DATA.replace(b"Paris", "Pärïs".encode())
    stream = Timeline.live("openai-chat")
    app = CallscopeApp([], source="grown", timeline=stream)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(FramesPane)
        offset, size = 0, 1
        while offset < len(data):
            piece = data[offset:offset + size]
            stream.extend(offset / 1000, piece)
            offset, size = offset + len(piece), size * 3 % 701
            app.follower.grew(stream)
            await until(pilot, lambda: settled(app))
            start = stream.frames[-1].end if stream.frames else 0
            pending = safe.plain(whole_chars(data[start:offset]).decode())
            assert tail_text(pane).replace("┊", "").endswith(pending)  # every byte so far
            assert tail_text(pane).startswith(f"#{len(stream.frames)} arriving") == bool(
                offset > start)
            grown = (list(pane._starts), pane.virtual_size.height)
            pane.load(stream)
            assert (pane._starts, pane.virtual_size.height) == grown
        stream.finish()
        app.follower.grew(stream)
        await until(pilot, lambda: settled(app) and not pane._tail_strips())
        assert pane.virtual_size.height == pane._starts[-1]  # the block became the last frame


async def test_the_follow_key_is_remappable_by_its_id():
    stream = Timeline.live("openai-chat")
    stream.extend(0.0, DATA[:500])
    app = CallscopeApp([], source="s", timeline=stream, keymap={"callscope.follow": "ctrl+t"})
    async with app.run_test(size=SIZE) as pilot:
        assert app.follower.following
        await pilot.press("t")  # the old key is gone
        assert app.follower.following
        await pilot.press("ctrl+t")
        assert not app.follower.following
        assert ("^t", "Follow live", "callscope.follow") in help_rows(app)  # as the footer shows it


async def test_growth_keeps_the_scroll_position_unless_following(paced, tmp_path):
    app = live_app(paced.url, tmp_path / "scroll.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(FramesPane)
        paced.release(8)
        await until(pilot, lambda: len(app.stream.chunks) == 8 and settled(app))
        assert pane._tail_strips() and pane.max_scroll_y > 0  # a block is arriving, off screen
        assert pane.scroll_y == pane.max_scroll_y  # following: the newest rows are in view
        await pilot.press("left")
        pane.scroll_to(y=0, animate=False, immediate=True)  # the user looks at the start
        paced.release(4)
        await until(pilot, lambda: len(app.stream.chunks) == 12 and settled(app))
        assert pane.scroll_y == 0 and not app.follower.following
        await pilot.press("t")
        paced.release(2)
        await until(pilot, lambda: len(app.stream.chunks) == 14 and settled(app))
        assert pane.scroll_y == pane.max_scroll_y > 0


async def test_a_cut_of_a_live_stream_is_a_snapshot_and_undo_returns_to_it(paced, tmp_path):
    app = live_app(paced.url, tmp_path / "snap.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        paced.release(4)
        await until(pilot, lambda: len(app.stream.chunks) == 4 and settled(app))
        await pilot.press("p", "x")  # cut after the previous frame: a finished timeline
        cut = app.timeline
        assert cut is not app.stream and cut.closed and cut.cut is not None
        assert "LIVE continues" in status(app)
        paced.release()
        await until(pilot, lambda: app.stream.closed)
        assert app.timeline is cut  # the snapshot stays on screen
        await pilot.press("u")
        assert app.timeline is app.stream
        await until(pilot, lambda: settled(app) and "ended: clean" in status(app))


async def test_closing_during_a_stall_saves_the_session_at_once(serve, tmp_path):
    path = tmp_path / "stall.jsonl"
    app = live_app(serve, path, fault=f"stall={MID_CALL},hold=60")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.stream.total_bytes == MID_CALL)
    started = time.monotonic()
    result = app.wait(5)
    assert time.monotonic() - started < 3
    assert result is not None and result.end.kind == "cut" and result.end.detail == STOPPED
    session = open_input(str(path))
    assert session.end.kind == "cut" and b"".join(c.data for c in session.chunks()) == DATA[:MID_CALL]


def test_the_live_command_runs_the_debugger_and_reports(serve, tmp_path, monkeypatch, capsys):
    from callscope.tui import cli
    from textual.app import App

    async def watch(pilot) -> None:  # stands in for the user: quit once the stream ended
        await until(pilot, lambda: pilot.app.stream.closed)
        pilot.app.exit()

    monkeypatch.setattr(LiveApp, "run", lambda self: App.run(self, headless=True, size=SIZE,
                                                            auto_pilot=watch))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = tmp_path / "cmd.jsonl"
    code = cli.main(["live", "--provider", "openai-chat", "--model", "m", "--base-url",
                     serve + "/v1", "-o", str(path), "hi"])
    out = capsys.readouterr().out
    assert code == 0 and "-- stream: clean, 7728 B" in out and f"wrote {path}" in out
    assert "call " not in out  # the table is the headless output only
    assert KEY not in out and KEY.encode() not in path.read_bytes()


# -- callscope proxy -----------------------------------------------------------------------------

def client_through(url: str, received: list[bytes]) -> threading.Thread:
    """An agent pointed at the proxy (a key in the header and in the query string)."""
    def run() -> None:
        with httpx.Client(timeout=10) as client, client.stream(
                "POST", url + f"/v1/chat/completions?key={KEY}",
                json={"model": "m", "stream": True, "tools": [
                    {"type": "function", "function": tool} for tool in TOOLS]},
                headers={"authorization": f"Bearer {KEY}"}) as response:
            received.extend(response.iter_raw())
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def row(app: ProxyApp, n: int = 0) -> list[str]:
    table = app.list_screen.query_one(DataTable)
    return [cell.plain for cell in table.get_row_at(n)]


async def test_a_capture_opened_while_streaming_grows(paced, tmp_path):
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.url is not None)
        assert isinstance(app.screen, CapturesScreen)
        received: list[bytes] = []
        thread = client_through(app.url, received)
        paced.release(2)
        await until(pilot, lambda: app.list_screen.query_one(DataTable).row_count == 1
                    and row(app)[5] == "800")
        method, url, protocol, state = row(app)[1], row(app)[2], row(app)[3], row(app)[6]
        assert (method, protocol, state) == ("POST", "openai-chat", "● running")
        assert "[REDACTED]" in url and KEY not in " ".join(row(app))

        await pilot.press("enter")  # open it while it streams
        capture = next(iter(app.captures.values()))
        assert app.timeline is capture.timeline and not isinstance(app.screen, CapturesScreen)
        await until(pilot, lambda: settled(app))
        before = len(app.timeline)
        assert app.follower.following and app.cursor == before - 1 and "LIVE" in status(app)
        assert live_keys(app) == ["callscope.follow", "callscope.captures"]
        paced.release(3)
        await until(pilot, lambda: len(capture.timeline.chunks) == 5 and settled(app))
        assert len(app.timeline) > before and app.cursor == len(app.timeline) - 1

        paced.release()
        await until(pilot, lambda: capture.timeline.closed and settled(app))
        check_final(app, capture.timeline)
        assert "EXECUTE" in summary(app) and "ended: clean" in status(app)
        await pilot.press("l")  # back to the list: the capture ended, the gate executed
        assert isinstance(app.screen, CapturesScreen)
        await until(pilot, lambda: row(app)[6] == "clean")
        assert row(app)[7] == "2 execute" and row(app)[5] == f"{len(DATA):,}"
        await pilot.press("escape")
        assert app.timeline is capture.timeline and not isinstance(app.screen, CapturesScreen)
    thread.join(5)
    assert b"".join(received) == DATA  # the agent got every byte, unchanged
    saved = sorted((tmp_path / "captures").glob("*.jsonl"))
    assert len(saved) == 1 and KEY.encode() not in saved[0].read_bytes()


async def test_the_list_keeps_the_debugger_keys_off(paced, tmp_path):
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.url is not None)
        await pilot.press("x", "space", "escape")  # nothing is open: nothing to cut or play
        assert isinstance(app.screen, CapturesScreen) and not app.player.playing
        assert app.url in app.list_screen.query_one("#captures-info").content.plain


def test_the_proxy_command_runs_the_debugger_and_lists_what_it_captured(serve, tmp_path,
                                                                         monkeypatch, capsys):
    from callscope.tui import cli
    from textual.app import App

    async def agent(pilot) -> None:  # one request through the proxy, then quit
        app = pilot.app
        await until(pilot, lambda: app.url is not None)
        received: list[bytes] = []
        await asyncio.to_thread(lambda: client_through(app.url, received).join(5))
        await until(pilot, lambda: app.captures and all(
            c.timeline.closed for c in app.captures.values()))
        assert b"".join(received) == DATA
        app.exit()

    monkeypatch.setattr("callscope.tui.captures.SCREEN_NICENESS", 0)  # pytest keeps its priority
    monkeypatch.setattr(ProxyApp, "run", lambda self: App.run(self, headless=True, size=SIZE,
                                                             auto_pilot=agent))
    directory = tmp_path / "caps"
    assert cli.main(["proxy", "--upstream", serve, "--dir", str(directory)]) == 0
    out = capsys.readouterr().out
    saved = sorted(directory.glob("*.jsonl"))
    assert len(saved) == 1 and f"{saved[0]}: #1 POST " in out
    assert f"{len(DATA)} B, clean" in out and "1 capture(s)" in out and KEY not in out
    assert cli.main(["proxy", "--upstream", "ftp://nowhere"]) == 2  # before any screen


async def test_the_relay_runs_in_its_own_process_and_says_why_it_cannot_listen(tmp_path):
    import os
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        app = ProxyApp("http://127.0.0.1:9", str(tmp_path / "c"), port=taken.getsockname()[1])
        async with app.run_test(size=SIZE) as pilot:
            assert app._relay is not None and app._relay.pid != os.getpid()
            await until(pilot, lambda: app.error is not None)
        app.wait_relay()
    assert app.error.startswith("cannot listen on 127.0.0.1:") and "Traceback" not in app.error


async def test_closing_the_debugger_ends_a_capture_in_flight_as_cut_with_a_time(paced, tmp_path):
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.url is not None)
        def agent() -> None:  # cut by the stop: the error is what it gets
            with contextlib.suppress(httpx.TransportError):
                with httpx.stream("POST", app.url + "/v1/chat/completions", timeout=10,
                                  json={"stream": True}) as response:
                    for _ in response.iter_raw():
                        pass
        threading.Thread(target=agent, daemon=True).start()
        paced.release(1)
        await until(pilot, lambda: app.captures and next(iter(
            app.captures.values())).timeline.total_bytes > 0)
    app.wait_relay()  # the relay was stopped with the app; its last facts are applied now
    capture = next(iter(app.captures.values()))
    end = capture.timeline.end
    assert end is not None and end.kind == "cut" and end.at is not None
    [saved] = (tmp_path / "captures").glob("*.jsonl")
    assert open_input(str(saved)).end.at == pytest.approx(end.at, abs=1e-5)


async def test_the_list_remakes_only_the_rows_that_changed_and_none_while_hidden(
        paced, tmp_path, monkeypatch):
    from callscope.core.session_model import Chunk, SessionHeader, StreamEnd
    from callscope.tui.captures import Capture, CaptureChunk, CaptureEnded, CaptureStarted

    made: list[str] = []
    cells = Capture.cells
    monkeypatch.setattr(Capture, "cells", lambda self: made.append(self.path) or cells(self))
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    header = SessionHeader(protocol="openai-chat", request={"method": "POST", "url": "/x"})
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.url is not None)
        for n in range(30):  # a long list, as a proxy left running has
            app.take_fact(CaptureStarted(f"c{n}", header))
            app.take_fact(CaptureEnded(f"c{n}", StreamEnd("clean")))
        await until(pilot, lambda: app.list_screen.query_one(DataTable).row_count == 30)
        await pilot.pause(0.2)
        made.clear()
        app.take_fact(CaptureStarted("new", header))
        app.take_fact(CaptureChunk("new", (Chunk(0.0, DATA[:400]), Chunk(0.01, DATA[400:800]))))
        app._grew()
        await until(pilot, lambda: app.list_screen.query_one(DataTable).row_count == 31
                    and row(app, 30)[5] == "800")
        assert set(made) == {"new"}  # the thirty others were not made again

        app.open_capture("new")  # the list is hidden: its rows wait
        made.clear()
        app.take_fact(CaptureChunk("new", (Chunk(0.02, DATA[800:]),)))
        app._grew()
        app.take_fact(CaptureEnded("new", StreamEnd("clean")))
        await until(pilot, lambda: settled(app) and app.timeline.closed)
        await pilot.pause(0.2)
        assert made == []
        await pilot.press("l")  # back: the row is as the capture is now
        await until(pilot, lambda: row(app, 30)[6] == "clean")
        assert row(app, 30)[5] == f"{len(DATA):,}" and set(made) == {"new"}


async def test_the_captures_list_fits_80_columns_and_widens_with_the_terminal(paced, tmp_path):
    """At 80 columns every column is on screen (no sideways scrolling): short labels and sizes,
    the URL elided in the middle; at 200 the wide columns and the whole URL."""
    from callscope.core.session_model import Chunk, SessionHeader, StreamEnd
    from callscope.tui.captures import CaptureChunk, CaptureEnded, CaptureStarted

    url = "/v1/chat/completions?key=[REDACTED]&trace=abcdefghijklmnop"
    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    header = SessionHeader(protocol="openai-chat", status=200,
                           request={"method": "POST", "url": url})
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.url is not None)
        app.take_fact(CaptureStarted("c0", header))
        app.take_fact(CaptureChunk("c0", (Chunk(0.0, DATA),)))
        app.take_fact(CaptureEnded("c0", StreamEnd("clean")))
        table = app.list_screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count == 1 and row(app)[6] == "clean")
        await pilot.pause(0.1)
        assert table.virtual_size.width <= table.scrollable_content_region.width <= 80
        assert not table.show_horizontal_scrollbar
        cells = row(app)
        assert cells[2].startswith("/v1/") and "…" in cells[2] and cells[2].endswith("mnop")
        assert cells[5] == f"{len(DATA) / 1000:.1f}k" and cells[7] == "2 refuse (unk…"
        assert [c.label.plain for c in table.columns.values()] == [
            "#", "meth", "url", "protocol", "http", "size", "state", "gate"]
        await pilot.resize_terminal(200, 50)
        await until(pilot, lambda: row(app)[2] == url)
        assert row(app)[5] == f"{len(DATA):,}" and row(app)[7] == "2 refuse (unknown_tool)"
        assert not table.show_horizontal_scrollbar
        assert [c.label.plain for c in table.columns.values()] == [
            "#", "method", "url", "protocol", "status", "bytes", "state", "gate"]


def test_the_debugger_yields_the_cpu_in_every_thread_the_relay_does_not(tmp_path):
    """``yield_cpu``: the screen's thread and the relay reader's thread (Linux keeps a nice value
    per thread) are lowered; the relay's process is not. In a process of its own, as the
    priority cannot be raised back."""
    import os
    import subprocess
    import sys

    if not os.path.isdir("/proc/self/task"):
        pytest.skip("per-thread priorities are read from /proc")
    script = f"""
import asyncio, os
from callscope.tui.captures import ProxyApp, SCREEN_NICENESS

def nice(path):
    return int(open(path).read().rsplit(")", 1)[1].split()[16])

app = ProxyApp("http://127.0.0.1:9", {str(tmp_path / "c")!r}, yield_cpu=True)

async def pilot(driver):
    while app.url is None:
        await asyncio.sleep(0.02)
    me = {{t: nice(f"/proc/self/task/{{t}}/stat") for t in os.listdir("/proc/self/task")}}
    reader = app._reader.native_id
    print(SCREEN_NICENESS, me[str(reader)], me[str(os.getpid())],
          nice(f"/proc/{{app._relay.pid}}/stat"))
    app.exit()

app.run(headless=True, size=(80, 24), auto_pilot=pilot)
app.wait_relay()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    wanted, reader, screen, relay = map(int, done.stdout.split()[-4:])
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert wanted > 0 and reader == screen == min(base + wanted, 19) and relay == base


async def test_a_capture_nobody_looks_at_waits_and_is_caught_up_when_shown(paced, tmp_path):
    """The engine runs on the capture open (followed) as its reads come; another one's reads
    wait while the list is hidden, and are caught up when the list shows it, as a replay
    decides."""
    from callscope.core.session_model import Chunk, SessionHeader, StreamEnd
    from callscope.tui.captures import CaptureChunk, CaptureEnded, CaptureStarted

    app = ProxyApp(paced.url, str(tmp_path / "captures"))
    body = {"stream": True, "tools": [{"type": "function", "function": t} for t in TOOLS]}
    header = SessionHeader(protocol="openai-chat",
                           request={"method": "POST", "url": "/v1/chat/completions", "body": body})
    pieces = [Chunk(i * 0.01, DATA[i:i + 500]) for i in range(0, len(DATA), 500)]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.url is not None)
        for path in ("open", "other"):
            app.take_fact(CaptureStarted(path, header))
        app.open_capture("open")
        for piece in pieces:
            app.take_fact(CaptureChunk("open", (piece,)))
            app.take_fact(CaptureChunk("other", (piece,)))
        app.take_fact(CaptureEnded("other", StreamEnd("clean", at=1.0)))
        opened, other = app.captures["open"], app.captures["other"]
        assert len(opened.timeline.source) == len(pieces)  # followed: fed as it came
        assert not other.timeline.source and not other.timeline.closed  # nobody looks: waits
        assert other.waiting == pieces and other.ending is not None
        await pilot.press("l")
        await until(pilot, lambda: row(app, 1)[6] == "clean")
        assert row(app, 1)[5] == f"{len(DATA):,}" and row(app, 1)[7] == "2 execute"
        assert other.timeline.closed and not other.waiting and other.ending is None
        check_final_of(other.timeline)
        assert row(app, 0)[6] == "● running"


def check_final_of(timeline: Timeline) -> None:
    """The timeline decides what a replay of its bytes decides."""
    replayed = Timeline.build([(0.0, b"".join(d for _, d in timeline.source))], "openai-chat",
                              ToolSet([{"type": "function", "function": t} for t in TOOLS]))
    decided = [s.decision for s in replayed.steps if isinstance(s, DecisionStep)]
    assert decided and [s.decision for s in timeline.steps
                        if isinstance(s, DecisionStep)] == decided


async def test_a_relay_that_writes_much_on_stderr_is_never_blocked_by_it(tmp_path):
    """The relay's standard error is read all along (a full pipe would stop it at its next
    warning); its last line is the error when it stops before listening."""
    import sys

    flood = ("import sys, orjson\n"
             "for _ in range(2000): sys.stderr.write('warning: ' + 'x' * 200 + '\\n')\n"
             "sys.stderr.flush()\n"
             "print(orjson.dumps({'e': 'url', 'text': 'http://127.0.0.1:1'}).decode(), flush=True)\n"
             "print(orjson.dumps({'e': 'log', 'text': 'after the flood'}).decode(), flush=True)\n"
             "sys.stdin.read()\n")
    app = ProxyApp("http://127.0.0.1:9", str(tmp_path / "c"))
    app.command = [sys.executable, "-c", flood]  # 400 KB on stderr before it says anything
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "after the flood" in app.log_lines)
        assert app.url == "http://127.0.0.1:1" and app.error is None
    app.wait_relay()

    app = ProxyApp("http://127.0.0.1:9", str(tmp_path / "c"))
    app.command = [sys.executable, "-c", "import sys\nfor _ in range(2000): "
                   "sys.stderr.write('noise\\n')\nsys.exit('callscope: the last word')"]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.error is not None)
    app.wait_relay()
    assert app.error == "the last word"
