"""Writing one HTTP/1.1 response through h11: whole, streamed, or ended by a fault on purpose.

The emulator must control the connection byte by byte (flush each chunk, end a body without its
last chunk, reset the socket, stall) and the proxy must copy a body as it arrives, so a response
is complete (``Content-Length``) or streamed (chunked for HTTP/1.1 clients, ended by closing the
connection for HTTP/1.0 ones), and every chunk is flushed when it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import socket
import struct
from collections.abc import Iterable
from typing import Any

import h11

from .http1 import Connection

RESET_GRACE = 0.05
"""Seconds between the last byte written and a reset, so that loopback delivers the bytes
before the RST (a reset discards whatever the kernel has not sent yet)."""


def _reason(status: int) -> bytes:
    if status == 529:
        return b"Overloaded"  # Anthropic's; not in the registry
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


class Responder:
    """Writes one response: :meth:`send_full`, or :meth:`start` + :meth:`send` + an ending
    (:meth:`end` for a complete body, :meth:`close` to drop the connection mid-body, :meth:`reset`
    for a TCP reset, :meth:`hold` for a stall)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.writer = connection.writer
        self.started = False
        self.reusable = False
        """True once the response ended properly and h11 allows another on the connection."""
        self.bytes_sent = 0

    def _write(self, event: Any) -> None:
        data = self.connection.h11.send(event)
        if data:
            self.writer.write(data)

    def _head(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        self.started = True
        self._write(h11.Response(status_code=status, reason=_reason(status), headers=list(headers)))

    async def send_full(self, status: int, headers: Iterable[tuple[str, str]], body: bytes,
                        *, keep_alive: bool = True, head_only: bool = False) -> None:
        """A complete response. ``head_only``: the headers as given and no body (the answer to
        HEAD, a 204 or a 304, whose Content-Length describes a body that is not sent)."""
        kept = [(k, v) for k, v in headers if k.lower() != "transfer-encoding" and (
            head_only or k.lower() != "content-length")]
        if not head_only:
            kept.append(("content-length", str(len(body))))
        if not keep_alive:
            kept.append(("connection", "close"))
        self._head(status, kept)
        if body and not head_only:
            self._write(h11.Data(data=body))
            self.bytes_sent += len(body)
        await self.end()

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Send the head of a streamed response (h11 frames it for the client's version)."""
        self._head(status, [(k, v) for k, v in headers
                            if k.lower() not in ("content-length", "transfer-encoding")])
        await self.writer.drain()

    async def send(self, data: bytes) -> None:
        """One body chunk, flushed now (an empty one is skipped: it would end the body)."""
        if data:
            self._write(h11.Data(data=data))
            await self.writer.drain()
            self.bytes_sent += len(data)

    async def end(self) -> None:
        self._write(h11.EndOfMessage())
        await self.writer.drain()
        self.reusable = self.connection.h11.our_state is h11.DONE

    def take_connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        """The socket's streams, for a protocol that is not HTTP from now on (a WebSocket
        tunnel), and the bytes the client sent after its request head; the connection then
        serves no other request."""
        self.started, self.reusable = True, False
        pending = bytes(self.connection.h11.trailing_data[0]) + bytes(self.connection.held)
        self.connection.held.clear()
        return self.connection.reader, self.writer, pending

    async def client_gone(self) -> None:
        """Returns once the client closed the connection (see :meth:`Connection.client_gone`)."""
        await self.connection.client_gone()

    async def close(self) -> None:
        """Close the connection (FIN) without ending the body: the client sees a cut."""
        self.reusable = False
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.drain()
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()

    async def hold(self, seconds: float) -> None:
        """Keep the connection open, sending nothing, for ``seconds`` or until the client
        closes it (a stall), then close it."""
        await self.writer.drain()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.client_gone()
        await self.close()

    async def reset(self) -> None:
        """Drop the connection with a TCP reset (RST) after the bytes written so far."""
        self.reusable = False
        await self.writer.drain()
        await asyncio.sleep(RESET_GRACE)
        reset_transport(self.writer.transport)


def reset_transport(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if isinstance(transport, asyncio.WriteTransport):
        transport.abort()
    else:
        transport.close()


REFUSAL_HEADERS = (("content-type", "text/plain; charset=utf-8"),
                   ("x-content-type-options", "nosniff"))
"""A refusal is our own fixed text, and is said to be nothing else."""


async def refuse(connection: Connection, status: int, message: str) -> None:
    """A one-line plain-text answer that closes the connection (h11 may not allow one: then
    nothing is sent, and the connection is closed all the same). ``message`` is ours, never
    the client's bytes."""
    with contextlib.suppress(h11.LocalProtocolError):
        await Responder(connection).send_full(status, REFUSAL_HEADERS, f"{message}\n".encode(),
                                              keep_alive=False)
