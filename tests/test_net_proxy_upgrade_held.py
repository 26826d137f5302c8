"""A protocol upgrade pipelined behind a stream: the bytes a client sends after its upgrade
request's head reach the upstream whole and in order, wherever the proxy held them (inside
h11's buffer, in the connection's ``held`` bytes read while the first response streamed, or
still on the socket)."""

from __future__ import annotations

import asyncio
import hashlib
import socket

import pytest
from callscope.net.http1_response import Responder
from loopback import SocketUpstream
from test_net_proxy import Chain, eventually

STREAM = b'data: {"n":1}\n\ndata: [DONE]\n\n'


class RawUpstream(SocketUpstream):
    """A loopback upstream on bare sockets: a POST gets a short SSE answer after a pause (so
    that the client's pipelined bytes arrive while it streams); an upgrade gets 101, then the
    digest of the next ``expect`` bytes once they all came."""

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.upgraded: list[bytes] = []
        super().__init__()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if b"upgrade: websocket" in head.lower():
                    self.upgraded.append(head)
                    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                 b"Connection: Upgrade\r\n\r\n")
                    data = await reader.readexactly(self.expect)
                    writer.write(b"GOT %d %s\n" % (len(data), hashlib.sha256(data).hexdigest()
                                                   .encode()))
                    await writer.drain()
                    return
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                await asyncio.sleep(0.3)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(STREAM), STREAM))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def _read_until(sock: socket.socket, marker: bytes, got: bytearray) -> bytearray:
    while marker not in got.partition(b"GOT ")[2 if marker == b"\n" else 0]:
        data = sock.recv(65536)
        if not data:
            break
        got += data
    return got


# 5 bytes arrive in the first read, beside both heads: all in h11's buffer. 64 KiB less 300: the
# first read (64 KiB) ends inside them, the rest is read by the tunnel. 300 kB: most are read
# into ``held`` while the first answer waits upstream.
@pytest.mark.parametrize("size", [5, 64 * 1024 - 300, 300_000])
def test_bytes_pipelined_after_an_upgrade_reach_the_upstream_whole(tmp_path, monkeypatch, size):
    where: list[tuple[int, int]] = []  # (bytes in h11's buffer, bytes held) at the switch
    take = Responder.take_connection

    def spy(self: Responder) -> tuple[object, object, bytes]:
        where.append((len(self.connection.h11.trailing_data[0]), len(self.connection.held)))
        return take(self)

    monkeypatch.setattr(Responder, "take_connection", spy)
    payload = bytes(range(256)) * (size // 256) + b"\x81\x05hello"[: size % 256]
    upstream = RawUpstream(expect=len(payload))
    chain = Chain(tmp_path, upstream_url=f"http://127.0.0.1:{upstream.port}")
    body = b'{"model":"m","stream":true,"messages":[]}'
    first = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json"
             b"\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
    upgrade = (b"GET /v1/realtime?model=m HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
               b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               b"Sec-WebSocket-Version: 13\r\n\r\n")
    try:
        port = int(chain.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(first + upgrade + payload)  # all of it before any answer
            got = _read_until(sock, b"\n", _read_until(sock, b"GOT ", bytearray()))
        before, _, answer = got.partition(b"GOT ")
        assert b'data: {"n":1}' in before  # the stream was answered first, then the switch
        assert b"101 Switching Protocols" in before
        assert answer.rstrip(b"\n") == b"%d %s" % (
            len(payload), hashlib.sha256(payload).hexdigest().encode())
        assert len(upstream.upgraded) == 1
        [(in_h11, held)] = where
        assert in_h11 + held <= len(payload)
        if size == 5:
            assert (in_h11, held) == (5, 0)
        elif size < 100_000:
            assert in_h11 < size
        else:
            assert held > 0
        assert eventually(lambda: any("101 websocket" in line for line in chain.log))
    finally:
        chain.stop()
        upstream.stop()
