"""The proxy's edges, each bug of issue 19 on real loopback sockets: the client cannot pick the
destination, gateway credentials never reach a capture, no pool limit, a pipelined byte is kept,
a client closing after the terminal signal is not a cut, compressed bodies, error byte counts,
SIGTERM end times, and no header the client did not send."""

from __future__ import annotations

import asyncio
import gzip
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import orjson
import pytest
from callscope.core.importers import open_input
from callscope.core.session import StreamEnd
from callscope.core.timeline import Timeline
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from callscope.net.relay import CLOSED_EARLY
from loopback import CHAT, post, serving
from test_net_proxy import Chain, chunks_of, eventually

SECRET = "gw-SECRET-5150"


class Upstream:
    """A loopback upstream that keeps what it was asked and answers with ``answer``."""

    def __init__(self, answer=None) -> None:
        self.seen: list[Request] = []
        self.answer = answer or _sse
        self.server = BackgroundServer(lambda: HTTPServer(self._handle))
        self.url = self.server.start()

    async def _handle(self, request: Request, out: Responder) -> None:
        self.seen.append(request)
        await self.answer(request, out)


async def _sse(request: Request, out: Responder) -> None:
    await out.start(200, [("content-type", "text/event-stream")])
    await out.send(b'data: {"n":1}\n\n')
    await out.end()


@pytest.fixture
def upstream():
    made: list[Upstream] = []

    def make(answer=None) -> Upstream:
        made.append(Upstream(answer))
        return made[-1]
    yield make
    for u in made:
        u.server.stop()


def raw(port: int, data: bytes, wait: float = 3.0, until: bytes | None = None) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        got = bytearray()
        try:
            while chunk := sock.recv(65536):
                got += chunk
                if until is not None and until in got:
                    break
        except TimeoutError:
            pass
    return bytes(got)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


# -- 1. the client never picks the destination ----------------------------------------------------

@pytest.mark.parametrize(("target", "status"), [
    ("@127.0.0.1:{victim}/elsewhere", b"400"), ("http://127.0.0.1:{victim}/x", b"400"),
    ("127.0.0.1:{victim}", b"501")])
def test_the_request_target_cannot_send_the_request_elsewhere(tmp_path, upstream, target, status):
    victim = upstream()
    chain = Chain(tmp_path, upstream_url=upstream().url)
    try:
        method = "CONNECT" if status == b"501" else "POST"
        line = f"{method} {target.format(victim=port_of(victim.url))} HTTP/1.1\r\n"
        answer = raw(port_of(chain.url), line.encode() + b"Host: x\r\nAuthorization: Bearer k\r\n"
                     b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    finally:
        chain.stop()
    assert answer.startswith(b"HTTP/1.1 " + status) and b"base URL" in answer
    assert b"Traceback" not in answer and b"Error(" not in answer
    assert victim.seen == []


def test_a_target_starting_with_two_slashes_is_forwarded_as_sent_and_names_no_protocol(tmp_path):
    """The proxy forwards ``upstream + target`` as before; the protocol it records is read from
    that path as sent (none: an empty segment), not from ``urlsplit``'s ``/v1/chat/completions``."""
    chain = Chain(tmp_path)
    try:
        answer = raw(port_of(chain.url), b"POST //evil.com/v1/chat/completions HTTP/1.1\r\n"
                     b"Host: x\r\nContent-Length: 16\r\nConnection: close\r\n\r\n"
                     b'{"stream": true}')
        [path] = chain.sessions()
    finally:
        chain.stop()
    assert answer.startswith(b"HTTP/1.1 404 ")  # the emulator upstream: no such endpoint
    header = open_input(str(path)).header
    assert header.protocol is None and header.status == 404
    assert header.request["url"] == chain.upstream + "//evil.com/v1/chat/completions"


# -- 2. credentials of any gateway are redacted -----------------------------------------------------

GATEWAY_HEADERS = ["Helicone-Auth", "x-portkey-api-key", "x-litellm-api-key",
                   "cf-aig-authorization", "x-amz-security-token", "x-team-passphrase"]


def test_gateway_credentials_never_reach_a_capture_or_the_log(tmp_path, upstream):
    origin = upstream()
    from callscope.net.proxy import RecordingProxy, make_server

    log: list[str] = []
    proxy = RecordingProxy(origin.url, str(tmp_path / "captures"), log=log.append,
                           redact=["x-team-passphrase", "team"])
    with BackgroundServer(lambda: make_server(proxy)) as url:
        post(url, f"/v1/chat/completions?X-Amz-Signature={SECRET}&sig={SECRET}&team={SECRET}"
             f"&n=1", headers={name: f"Bearer {SECRET}" for name in GATEWAY_HEADERS})
        assert eventually(lambda: len(log) == 1)
    [forwarded] = origin.seen  # the upstream still gets every credential
    assert all(forwarded.header(name) == f"Bearer {SECRET}" for name in GATEWAY_HEADERS)
    [path] = (tmp_path / "captures").glob("*.jsonl")
    assert SECRET.encode() not in path.read_bytes() and SECRET not in log[0]
    request = open_input(str(path)).header.request
    assert request["url"].endswith("&n=1")  # a plain parameter keeps its value
    assert request["headers"]["x-portkey-api-key"] == "[REDACTED]"


def test_rate_limit_token_counts_are_not_taken_for_credentials():
    from callscope.core.redact import secret_name

    assert not secret_name("x-ratelimit-remaining-tokens")
    assert not secret_name("anthropic-ratelimit-input-tokens-limit")
    assert not secret_name("x-callscope-session") and not secret_name("content-type")
    assert secret_name("x-amz-security-token") and secret_name("Set-Cookie")
    assert secret_name("X-Amz-Credential") and secret_name("x-team", also=["X-TEAM"])


# -- 4. no pool limit ---------------------------------------------------------------------------------

def test_the_101st_concurrent_stream_does_not_wait_for_the_others(tmp_path):
    chain = Chain(tmp_path)
    held = 101

    async def main() -> bytes:
        async with httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=None)) as c:
            async def first_bytes(fault: str) -> tuple[httpx.Response, Any, bytes]:
                request = c.build_request("POST", chain.url + "/v1/chat/completions",
                                          json={"stream": True},
                                          headers={"x-callscope-fault": fault})
                response = await c.send(request, stream=True)
                reads = response.aiter_raw()
                return response, reads, await anext(reads)
            open_streams = await asyncio.gather(*(first_bytes("stall=100,hold=30")
                                                  for _ in range(held)))
            try:  # every stream is open, stalled for 30 s: one more must still be served now
                response, reads, data = await asyncio.wait_for(first_bytes("chunk=50"), 8)
                rest = data + b"".join([d async for d in reads])
                await response.aclose()
                return rest
            finally:
                for response, _, _ in open_streams:
                    await response.aclose()
    try:
        assert asyncio.run(main()) == CHAT.read_bytes()
    finally:
        chain.stop()


# -- 5. a pipelined request keeps its first byte ---------------------------------------------------

async def _slow_sse(request: Request, out: Responder) -> None:
    await out.start(200, [("content-type", "text/event-stream")])
    await out.send(b'data: {"n":1}\n\n')
    await asyncio.sleep(0.3)  # the client pipelines its next request meanwhile
    await out.send(b"data: [DONE]\n\n")
    await out.end()


def test_a_request_pipelined_during_a_stream_is_forwarded_whole(tmp_path, upstream):
    origin = upstream(_slow_sse)
    chain = Chain(tmp_path, upstream_url=origin.url)
    try:
        with socket.create_connection(("127.0.0.1", port_of(chain.url)), timeout=5) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 16\r\n\r\n{\"stream\": true}")
            time.sleep(0.1)  # the first response is streaming now
            sock.sendall(b"POST /v1/chat/completions?second=1 HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 16\r\nConnection: close\r\n\r\n{\"stream\": true}")
            got = bytearray()
            while chunk := sock.recv(65536):
                got += chunk
    finally:
        chain.stop()
    assert [r.method for r in origin.seen] == ["POST", "POST"]
    assert origin.seen[1].target == "/v1/chat/completions?second=1"
    assert got.count(b"HTTP/1.1 200 ") == 2 and got.count(b"[DONE]") == 2


# -- 7. a client that closes after the terminal signal -------------------------------------------

async def _done_then_late_end(request: Request, out: Responder) -> None:
    await out.start(200, [("content-type", "text/event-stream")])
    await out.send(b'data: {"choices":[]}\n\ndata: [DONE]\n\n')
    await asyncio.sleep(0.15)  # the body's last chunk comes after the client stopped reading
    await out.end()


def test_a_client_closing_after_done_is_recorded_as_what_happened(tmp_path, upstream):
    chain = Chain(tmp_path, upstream_url=upstream(_done_then_late_end).url)
    try:
        answer = raw(port_of(chain.url), b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 16\r\n\r\n{\"stream\": true}", until=b"[DONE]")
        assert b"[DONE]" in answer
        [path] = chain.sessions()
    finally:
        chain.stop()
    end = open_input(str(path)).end
    assert end.kind == "clean" and end.detail == CLOSED_EARLY and end.at is not None
    assert chunks_of(path) == b'data: {"choices":[]}\n\ndata: [DONE]\n\n'


# -- also: compressed bodies, error byte counts, SIGTERM, invented headers --------------------------

PLAIN = b'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n'


async def _gzipped(request: Request, out: Responder) -> None:
    packed = gzip.compress(PLAIN)
    await out.start(200, [("content-type", "text/event-stream"), ("content-encoding", "gzip")])
    await out.send(packed[:20])
    await out.send(packed[20:])
    await out.end()


def test_a_compressed_body_is_said_and_decoded_beside_the_raw_bytes(tmp_path, upstream):
    chain = Chain(tmp_path, upstream_url=upstream(_gzipped).url)
    try:
        response, data, _ = post(chain.url, "/v1/chat/completions")
        sessions = chain.sessions(count=2)
    finally:
        chain.stop()
    assert response.headers["content-encoding"] == "gzip" and gzip.decompress(data) == PLAIN
    raw_path = next(p for p in sessions if not p.name.endswith(".decoded.jsonl"))
    decoded = next(p for p in sessions if p.name.endswith(".decoded.jsonl"))
    header = orjson.loads(raw_path.read_bytes().splitlines()[0])
    assert header["content_encoding"] == "gzip" and header["decoded"] == decoded.name
    assert chunks_of(raw_path) == data  # the bytes as they came
    assert chunks_of(decoded) == PLAIN
    assert "content-encoding" not in open_input(str(decoded)).header.response_headers


def test_an_http_error_capture_counts_its_body():
    from callscope.core.session import SessionHeader
    from callscope.tui.captures import Capture

    body = b'{"error":{"type":"rate_limit_error","message":"slow down, over the limit now."}}xx'
    timeline = Timeline.live("anthropic")
    timeline.finish(StreamEnd("http_error", status=429, body=body))
    capture = Capture(1, "x.jsonl", SessionHeader(status=429), timeline)
    assert capture.size == len(body) and f"{len(body):,}" in str(capture.cells()[5])


def test_a_proxy_stopped_by_sigterm_ends_its_sessions_with_a_time(tmp_path):
    with serving(CHAT) as origin:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "callscope.tui.cli", "proxy", "--headless", "--upstream",
             origin, "--dir", str(tmp_path / "c")], stdout=subprocess.PIPE, text=True, env=env)
        try:
            url = proc.stdout.readline().split(" on ", 1)[1].split(" ->")[0].strip()
            with httpx.Client(timeout=5) as client, client.stream(
                    "POST", url + "/v1/chat/completions", json={"stream": True},
                    headers={"x-callscope-fault": "stall=300,hold=30"}) as response:
                next(response.iter_raw())
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=10) == 0
        finally:
            proc.kill()
            proc.wait()
    [path] = (tmp_path / "c").glob("*.jsonl")
    end = open_input(str(path)).end
    assert end.kind == "cut" and end.at is not None and end.at > 0


def test_httpx_adds_no_header_the_client_did_not_send(tmp_path, upstream):
    origin = upstream()
    chain = Chain(tmp_path, upstream_url=origin.url)
    try:
        raw(port_of(chain.url), b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Connection: close, x-hop\r\nx-hop: 1\r\nx-kept: 2\r\nContent-Length: 2\r\n\r\n{}")
    finally:
        chain.stop()
    [seen] = origin.seen
    names = {name.lower() for name, _ in seen.headers}
    assert not names & {"user-agent", "accept", "x-hop"}, names
    assert seen.header("x-kept") == "2" and seen.header("accept-encoding") == "identity"



def test_the_debuggers_relay_speaks_json_lines_and_stops_when_its_parent_is_gone(tmp_path):
    from callscope.net.relay_events import read_event

    with serving(CHAT) as origin:
        proc = subprocess.Popen(
            [sys.executable, "-m", "callscope.tui.cli", "proxy", "--headless", "--events",
             "--upstream", origin, "--dir", str(tmp_path / "c")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            first = read_event(proc.stdout.readline())
            assert first is not None and first.kind == "url"
            response, data, _ = post(first.text, "/v1/chat/completions")
            events = []
            while not any(e.kind == "ended" for e in events):
                event = read_event(proc.stdout.readline())
                if event is not None:
                    events.append(event)
            proc.stdin.close()  # the debugger died: nothing keeps the relay alive
            assert proc.wait(timeout=10) == 0
        finally:
            proc.kill()
            proc.wait()
    started = next(e for e in events if e.kind == "started")
    assert started.header.protocol == "openai-chat"
    assert b"".join(c.data for e in events if e.kind == "chunks" for c in e.chunks) == data
    assert next(e for e in events if e.kind == "ended").end.kind == "clean"


def test_a_websocket_upgrade_passes_through_untouched(tmp_path):
    websockets = pytest.importorskip("websockets")
    import threading

    from websockets.asyncio.server import serve
    from websockets.sync.client import connect

    ready, stop = threading.Event(), threading.Event()
    where: list[int] = []
    paths: list[str] = []

    async def echo(ws) -> None:
        paths.append(ws.request.path)
        async for message in ws:
            await ws.send(message)

    def run() -> None:
        async def main() -> None:
            async with serve(echo, "127.0.0.1", 0) as server:
                where.append(server.sockets[0].getsockname()[1])
                ready.set()
                while not stop.is_set():
                    await asyncio.sleep(0.02)
        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(5)
    chain = Chain(tmp_path, upstream_url=f"http://127.0.0.1:{where[0]}")
    try:
        with connect(chain.url.replace("http", "ws") + "/v1/realtime?model=m") as ws:
            ws.send("hello")
            assert ws.recv(timeout=5) == "hello"
            ws.send(b"\x00\x01binary")
            assert ws.recv(timeout=5) == b"\x00\x01binary"
        assert eventually(lambda: any("101 websocket" in line for line in chain.log))
    finally:
        chain.stop()
        stop.set()
        thread.join(5)
    assert paths == ["/v1/realtime?model=m"]
    assert chain.sessions(wait=0.2) == []  # a WebSocket is not an HTTP stream: not recorded
    del websockets
