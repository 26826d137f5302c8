"""The byte budget one server's connections share (net/http1.py MAX_BUFFERED_BYTES), on real
loopback sockets: many connections sending large bodies slowly hold at most the budget between
them, one more read is a 503, and every byte is given back when a request is handled or its
connection ends, however it ends. The budget is patched small (256 KiB, four reads)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable, Iterator

import pytest
from callscope.net import http1
from callscope.net.http1 import Request
from callscope.net.http1_response import Responder
from callscope.net.http1_server import BackgroundServer, HTTPServer

BUDGET = 4 * http1.READ_SIZE


async def _sizes(request: Request, out: Responder) -> None:
    """Answers with the size of the body it was sent."""
    await out.send_full(200, [("content-type", "text/plain")], b"got %d" % len(request.body))


class Served:
    """A server on loopback, with the most its budget ever counted (``peak``)."""

    def __init__(self, server: HTTPServer, peak: list[int]) -> None:
        self.server, self._peak = server, peak
        self.port = server.port

    @property
    def held(self) -> int:
        return self.server.budget.held

    @property
    def peak(self) -> int:
        return self._peak[0]

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, list[str]]]:
    monkeypatch.setattr(http1, "MAX_BUFFERED_BYTES", BUDGET)
    peak = [0]
    take = http1.Budget.take

    def counted(self: http1.Budget, size: int) -> bool:
        taken = take(self, size)
        peak[0] = max(peak[0], self.held)
        return taken

    monkeypatch.setattr(http1.Budget, "take", counted)
    log: list[str] = []
    background = BackgroundServer(lambda: HTTPServer(_sizes, log=log.append))
    with background:
        assert background.server is not None
        yield Served(background.server, peak), log


def until(condition: Callable[[], bool], wait: float = 5.0) -> bool:
    """Whether ``condition`` came true within ``wait`` seconds (the server runs on its thread)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def steady(served: Served) -> int:
    """The budget's count once it stopped moving for a while (the server read what it will)."""
    last, since = served.held, time.monotonic()
    while time.monotonic() - since < 0.2:
        time.sleep(0.02)
        if served.held != last:
            last, since = served.held, time.monotonic()
    return last


def answer(sock: socket.socket, wait: float = 5.0) -> bytes:
    """What the server sends until it closes the connection (or ``wait``)."""
    sock.settimeout(wait)
    received = bytearray()
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while got := sock.recv(65536):
            received += got
    return bytes(received)


def response(sock: socket.socket) -> bytes:
    """One response with a short Content-Length body, the connection left open."""
    sock.settimeout(5)
    received = bytearray()
    while b"\r\n\r\n" not in received or not received.split(b"\r\n\r\n", 1)[1]:
        got = sock.recv(65536)
        assert got, bytes(received)
        received += got
    return bytes(received)


def chunked_head(target: str = "/x") -> bytes:
    return (f"POST {target} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            f"Connection: close\r\n\r\n").encode()


SLOW_BODY, SLOW_SENT = 80_000, 70_000
"""A slow client's chunked body, and what of it it sends before it stops: three are held
(210,000 bytes), a fourth does not fit, the three bodies whole (240,000) do."""


def test_slow_bodies_hold_at_most_the_budget_and_one_more_read_is_a_503(served):
    """Clients each send most of a chunked body and stop: three are counted, a fourth client's
    read would pass the budget, so it is answered 503 and closed and its bytes given back; the
    three held ones still complete when they send the rest."""
    server, log = served
    chunk = b"%x\r\n" % SLOW_BODY + b"a" * SLOW_SENT  # one chunk, not all of it sent
    slow = []
    for _ in range(3):
        sock = server.connect()
        sock.sendall(chunked_head() + chunk)
        slow.append(sock)
        counted = steady(server)
    assert 3 * SLOW_SENT < counted < BUDGET < counted + SLOW_SENT

    # The fourth sends its head first (refused inside the body: the log names the target), a
    # fifth its head and body at once (refused at its first read, before any head is read).
    refused = server.connect()
    refused.sendall(chunked_head("/fourth?key=SECRET"))
    assert until(lambda: server.held > counted) and steady(server) < BUDGET
    refused.sendall(chunk)
    fifth = server.connect()
    fifth.sendall(chunked_head("/fifth") + chunk)
    for sock in (refused, fifth):
        head, _, body = answer(sock).partition(b"\r\n\r\n")
        sock.close()
        assert head.startswith(b"HTTP/1.1 503 ") and b"connection: close" in head.lower()
        assert b"text/plain" in head
        assert body == b"callscope: too many request bytes held, try again\n"
    assert until(lambda: server.held == counted)  # the refused ones' bytes are given back
    assert server.peak <= BUDGET
    assert log == ["refused 'POST' '/fourth?key=[REDACTED]': 503 too many request bytes held, "
                   "try again",
                   "refused a request: 503 too many request bytes held, try again"]

    for sock in slow:  # the rest of each body, then the last chunk
        sock.sendall(b"b" * (SLOW_BODY - SLOW_SENT) + b"\r\n0\r\n\r\n")
    for sock in slow:
        done = answer(sock)
        sock.close()
        assert done.startswith(b"HTTP/1.1 200 ") and done.endswith(b"got %d" % SLOW_BODY)
    assert until(lambda: server.held == 0) and server.peak <= BUDGET


PART = 100_000


def test_a_content_length_past_what_is_left_is_refused_before_its_body(served):
    """A Content-Length that cannot fit in what is left is a 503 after its head, before any
    body byte is asked for (the client waiting for 100-continue gets the 503 instead)."""
    server, log = served
    slow = server.connect()
    slow.sendall(chunked_head() + b"%x\r\n" % (2 * PART) + b"a" * PART)
    counted = steady(server)
    assert counted > PART

    with server.connect() as sock:
        sock.sendall(b"POST /big HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % (BUDGET - PART))
        refused = answer(sock)
    assert refused.startswith(b"HTTP/1.1 503 ") and b"100 Continue" not in refused
    assert log == ["refused 'POST' '/big': 503 too many request bytes held, try again"]
    with server.connect() as sock:  # what is left still takes a body that fits
        sock.sendall(b"POST /fits HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % PART + b"c" * PART)
        assert answer(sock).endswith(b"got %d" % PART)
    slow.close()
    assert until(lambda: server.held == 0) and server.peak <= BUDGET


def test_bytes_are_given_back_when_a_request_is_handled_and_when_a_client_vanishes(served):
    """A kept-alive connection counts nothing once its request has been answered; a client
    that closes, or resets, in the middle of a body is counted no more; after all of it the
    budget is back at 0 and an ordinary request is served."""
    server, _ = served
    kept = server.connect()
    kept.sendall(b"POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % PART
                 + b"a" * PART)
    assert response(kept).endswith(b"got %d" % PART)
    assert until(lambda: server.held == 0)  # handled, the connection still open

    # Pipelined: the second request's bytes are counted until it has been handled too.
    kept.sendall(b"GET /two HTTP/1.1\r\nHost: x\r\n\r\n"
                 b"POST /three HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf")
    assert b"got 0" in response(kept)
    assert until(lambda: server.held > 0) and steady(server) > 0  # /three, half sent

    closing, resetting = server.connect(), server.connect()
    for sock in (closing, resetting):
        sock.sendall(b"POST /gone HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % PART
                     + b"a" * (PART // 2))
    assert steady(server) > PART
    closing.close()  # FIN inside the body
    resetting.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    resetting.close()  # RST inside the body
    kept.close()  # inside the pipelined request's body
    assert until(lambda: server.held == 0)

    with server.connect() as sock:
        sock.sendall(b"POST /after HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                     b"Connection: close\r\n\r\nhello")
        assert answer(sock).startswith(b"HTTP/1.1 200 ")
    assert until(lambda: server.held == 0) and server.peak <= BUDGET


def test_what_a_client_pipelines_during_a_stream_is_counted_and_stops_at_the_budget(
        monkeypatch):
    """While a response streams the server reads what the client pipelines (to see it go):
    that is counted too, and reading stops at the budget, not at the per-connection bound of
    32 MiB; the stream still ends, the pipelined request is then refused (its Content-Length
    does not fit) and every byte is given back."""
    monkeypatch.setattr(http1, "MAX_BUFFERED_BYTES", BUDGET)
    peak = [0]
    release = http1.Budget.release

    def watched(self: http1.Budget, size: int) -> None:
        peak[0] = max(peak[0], self.held)
        release(self, size)

    monkeypatch.setattr(http1.Budget, "release", watched)

    async def stream(request: Request, out: Responder) -> None:
        await out.start(200, [("content-type", "text/event-stream")])
        await out.send(b"data: 1\n\n")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.5):  # reads what the client pipelines meanwhile
                await out.client_gone()
        await out.send(b"data: 2\n\n")
        await out.end()

    flood = (b"POST /next HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
             + b"a" * 1_000_000)
    background = BackgroundServer(lambda: HTTPServer(stream))
    with background as url:
        server = background.server
        assert server is not None
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])),
                                      timeout=5) as sock:
            sock.sendall(b"POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
            sock.sendall(flood)  # (the kernel's buffers take what the server leaves)
            assert until(lambda: server.budget.held > BUDGET - http1.READ_SIZE)
            streamed = answer(sock)
        assert b"data: 2\n\n\r\n0\r\n\r\n" in streamed  # the stream ended whole
        assert until(lambda: server.budget.held == 0)
    assert BUDGET - http1.READ_SIZE < peak[0] <= BUDGET
