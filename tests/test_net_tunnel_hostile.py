"""Hostile upgrade requests through ``callscope proxy``: one that carries a body is refused with
400 and a one-line reason, and nothing of it reaches the upstream (the body's bytes would be
read there as a request of their own: a smuggled request). Real sockets on loopback."""

from __future__ import annotations

import asyncio
import socket

import pytest
from loopback import SocketUpstream
from test_net_proxy import Chain, eventually

UPGRADE = (b"GET /v1/realtime?model=m HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\n")
SMUGGLED = b"GET /admin HTTP/1.1\r\nHost: internal\r\n\r\n"


class RecordingUpstream(SocketUpstream):
    """A loopback upstream on bare sockets: keeps every byte each connection sends, and answers
    an upgrade head with 101 (then reads on until the client closes)."""

    def __init__(self) -> None:
        self.received: list[bytearray] = []
        super().__init__()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got = bytearray()
        self.received.append(got)
        answered = False
        try:
            while data := await reader.read(65536):
                got += data
                if not answered and b"\r\n\r\n" in got:
                    answered = True
                    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                 b"Connection: Upgrade\r\n\r\n")
                    await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


@pytest.fixture
def upstream():
    server = RecordingUpstream()
    yield server
    server.stop()


def _exchange(chain: Chain, raw: bytes, until: bytes = b"\r\n\r\n") -> bytes:
    """Send ``raw`` to the proxy; what it answers, up to the end of the answer's head or of the
    connection."""
    port = int(chain.url.rsplit(":", 1)[1])
    got = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        while until not in got:
            data = sock.recv(65536)
            if not data:
                break
            got += data
        if got.startswith(b"HTTP/1.1 400"):  # a refusal: read it to the close
            while data := sock.recv(65536):
                got += data
    return bytes(got)


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


@pytest.mark.parametrize("framing, body, reason", [
    (b"Content-Length: %d\r\n" % len(SMUGGLED), SMUGGLED,
     b"an upgrade request must not have a body"),
    # Decoded by the proxy, then framed chunked again by the upstream: the smuggled request.
    (b"Transfer-Encoding: chunked\r\n", _chunked(b"0\r\n\r\n" + SMUGGLED),
     b"an upgrade request must not have a Transfer-Encoding"),
    (b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n",
     b"an upgrade request must not have a Transfer-Encoding"),
], ids=["content-length", "chunked", "chunked-empty"])
def test_an_upgrade_with_a_body_is_refused_and_never_reaches_the_upstream(
        tmp_path, upstream, framing, body, reason):
    chain = Chain(tmp_path, upstream_url=f"http://127.0.0.1:{upstream.port}")
    try:
        answer = _exchange(chain, UPGRADE + framing + b"\r\n" + body)
        head, _, text = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ")
        assert text == b"callscope proxy: " + reason + b"\n"  # one line, naming the problem
        assert eventually(lambda: any(f"-> 400 ({reason.decode()})" in line
                                      for line in chain.log))
        assert upstream.received == []  # not a byte went upstream: no connection was made
    finally:
        chain.stop()


def test_an_upgrade_with_content_length_zero_is_still_tunnelled(tmp_path, upstream):
    chain = Chain(tmp_path, upstream_url=f"http://127.0.0.1:{upstream.port}")
    try:
        answer = _exchange(chain, UPGRADE + b"Content-Length: 0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 101 Switching Protocols")
        assert eventually(lambda: len(upstream.received) == 1)
        assert b"/admin" not in upstream.received[0]
    finally:
        chain.stop()
