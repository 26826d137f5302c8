"""Clients that stop reading, go before the answer, or meet a header that is not ASCII, on real
loopback sockets: the server still exits at once, a write has a time limit, a read the proxy took
is recorded whatever stops the relay, and a relay that fails still ends its session and says so
in the log (each was a fault a crash hunt found)."""

from __future__ import annotations

import asyncio
import socket
import struct
import time

import httpx
from callscope.core.importers import open_input
from callscope.net import http1_response
from callscope.net.http1 import Request
from callscope.net.http1_response import ClientStalled, Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer
from test_net_proxy import Chain, chunks_of, eventually
from test_net_proxy_edges import Upstream, port_of, raw

EVENT = b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":' \
        b'{"content":"' + b"a" * 4000 + b'"}}]}\n\n'
REQUEST = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: 15\r\nConnection: close\r\n\r\n{\"stream\":true}")


async def _endless(request: Request, out: Responder) -> None:
    await out.start(200, [("content-type", "text/event-stream")])
    while True:
        await out.send(EVENT)


def _not_reading(port: int) -> socket.socket:
    """A client that sends its request and then reads nothing (a small receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(REQUEST)
    return sock


def test_the_server_stops_at_once_while_a_client_reads_nothing():
    server = BackgroundServer(lambda: HTTPServer(_endless))
    sock = _not_reading(port_of(server.start()))
    try:
        time.sleep(0.5)  # the server's buffers fill: its writes wait for the client
        started = time.monotonic()
        server.stop()
        assert not server._thread.is_alive()
        assert time.monotonic() - started < 5
    finally:
        sock.close()


def test_a_client_that_reads_nothing_has_its_connection_dropped(monkeypatch):
    monkeypatch.setattr(http1_response, "SEND_TIMEOUT", 0.3)
    raised: list[BaseException] = []

    async def handler(request: Request, out: Responder) -> None:
        try:
            await _endless(request, out)
        except ConnectionError as exc:
            raised.append(exc)
            raise

    server = BackgroundServer(lambda: HTTPServer(handler))
    sock = _not_reading(port_of(server.start()))
    try:
        assert eventually(lambda: bool(raised), wait=5)
        assert isinstance(raised[0], ClientStalled)
    finally:
        sock.close()
        server.stop()


def test_a_read_held_by_a_waiting_send_is_recorded_when_the_proxy_stops(tmp_path, monkeypatch):
    read = [0]
    original = httpx.Response.aiter_raw

    async def counted(self: httpx.Response, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        async for data in original(self, *args, **kwargs):  # type: ignore[arg-type]
            read[0] += len(data)
            yield data

    monkeypatch.setattr(httpx.Response, "aiter_raw", counted)
    origin = Upstream(_endless)
    chain = Chain(tmp_path, upstream_url=origin.url)
    sock = _not_reading(port_of(chain.url))
    try:
        time.sleep(1.0)  # the relay waits in a send, a read from upstream in its hands
        chain.stop()
        [path] = chain.sessions()
        assert open_input(str(path)).end.kind == "cut"
        assert read[0] > 0 and len(chunks_of(path)) == read[0]  # every byte read is kept
    finally:
        sock.close()
        origin.server.stop()


def test_an_upstream_header_that_is_not_ascii_is_relayed_as_its_bytes(tmp_path):
    async def answer(request: Request, out: Responder) -> None:
        await out.start(200, [("content-type", "text/event-stream"), ("x-note", "café")])
        await out.send(b"data: [DONE]\n\n")
        await out.end()

    origin = Upstream(answer)
    chain = Chain(tmp_path, upstream_url=origin.url)
    try:
        got = raw(port_of(chain.url), REQUEST, until=b"0\r\n\r\n")
        [path] = chain.sessions()
    finally:
        chain.stop()
        origin.server.stop()
    assert got.startswith(b"HTTP/1.1 200 ") and b"caf\xc3\xa9\r\n" in got
    assert open_input(str(path)).end.kind == "clean"


def test_a_client_gone_before_the_answer_still_ends_its_session_and_the_log_says(tmp_path):
    async def late(request: Request, out: Responder) -> None:
        await asyncio.sleep(0.5)  # the client resets meanwhile
        await _endless(request, out)

    origin = Upstream(late)
    chain = Chain(tmp_path, upstream_url=origin.url)
    try:
        sock = socket.create_connection(("127.0.0.1", port_of(chain.url)))
        sock.sendall(REQUEST)
        time.sleep(0.1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset
        assert eventually(lambda: bool(chain.log), wait=5)
        [path] = chain.sessions()
    finally:
        chain.stop()
        origin.server.stop()
    assert not list(chain.dir.glob(".*"))  # no hidden, unfinished capture is left behind
    assert open_input(str(path)).end.kind == "cut"
    assert "cut" in chain.log[0]


def test_a_handler_that_fails_is_answered_500_and_logged():
    log: list[str] = []

    async def broken(request: Request, out: Responder) -> None:
        raise ValueError("a bug")

    server = BackgroundServer(lambda: HTTPServer(broken, log=log.append))
    try:
        got = raw(port_of(server.start()), REQUEST)
    finally:
        server.stop()
    assert got.startswith(b"HTTP/1.1 500 ") and b"a bug" not in got
    assert log == ["internal error answering 'POST' '/v1/chat/completions': ValueError"]
