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
SEND_TIMEOUT = 30.0
"""Seconds a write may wait for the client to read: a client that reads nothing for that long
has its connection dropped (:class:`ClientStalled`), so it cannot hold a connection, and the
proxy's upstream one, for ever."""
CLOSE_WAIT = 1.0
"""Seconds a closing connection waits for its last bytes to reach the client before it is
aborted: a client that stopped reading would otherwise keep the server from ever exiting."""


class ClientStalled(ConnectionError):
    """The client read nothing for :data:`SEND_TIMEOUT` seconds; the connection was dropped."""


async def drain(writer: asyncio.StreamWriter, timeout: float | None = None) -> None:
    """``writer.drain()``, but a client that does not read within ``timeout`` (by default
    :data:`SEND_TIMEOUT`) has its connection aborted and raises :class:`ClientStalled`."""
    try:
        async with asyncio.timeout(SEND_TIMEOUT if timeout is None else timeout):
            await writer.drain()
    except TimeoutError:
        writer.transport.abort()
        raise ClientStalled("the client read nothing for "
                            f"{SEND_TIMEOUT if timeout is None else timeout:g} s") from None


async def close_writer(writer: asyncio.StreamWriter) -> None:
    """Close the connection; bytes the client has not read within :data:`CLOSE_WAIT` seconds
    are dropped with it (the transport aborted), so a close never waits on the client."""
    if not writer.is_closing():
        writer.close()
    try:
        async with asyncio.timeout(CLOSE_WAIT):
            await writer.wait_closed()
    except (TimeoutError, asyncio.CancelledError):
        writer.transport.abort()
    except (ConnectionError, OSError):
        pass


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

    def _head(self, status: int, headers: Iterable[tuple[str | bytes, str | bytes]]) -> None:
        self.started = True
        # Bytes go as they are (the proxy relays an upstream's raw header bytes, obs-text
        # included); text as UTF-8, as h11 would refuse a value that is not ASCII.
        self._write(h11.Response(status_code=status, reason=_reason(status), headers=[
            (_raw(k), _raw(v)) for k, v in headers]))

    async def send_full(self, status: int, headers: Iterable[tuple[str | bytes, str | bytes]],
                        body: bytes, *, keep_alive: bool = True, head_only: bool = False) -> None:
        """A complete response. ``head_only``: the headers as given and no body (the answer to
        HEAD, a 204 or a 304, whose Content-Length describes a body that is not sent)."""
        kept = [(k, v) for k, v in headers if _name(k) != "transfer-encoding" and (
            head_only or _name(k) != "content-length")]
        if not head_only:
            kept.append(("content-length", str(len(body))))
        if not keep_alive:
            kept.append(("connection", "close"))
        self._head(status, kept)
        if body and not head_only:
            self._write(h11.Data(data=body))
            self.bytes_sent += len(body)
        await self.end()

    async def start(self, status: int, headers: Iterable[tuple[str | bytes, str | bytes]]) -> None:
        """Send the head of a streamed response (h11 frames it for the client's version)."""
        self._head(status, [(k, v) for k, v in headers if _name(k) not in _FRAMING])
        await drain(self.writer)

    async def send(self, data: bytes) -> None:
        """One body chunk, flushed now (an empty one is skipped: it would end the body)."""
        if data:
            self._write(h11.Data(data=data))
            await drain(self.writer)
            self.bytes_sent += len(data)

    async def end(self) -> None:
        self._write(h11.EndOfMessage())
        await drain(self.writer)
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
            await drain(self.writer, CLOSE_WAIT)
        await close_writer(self.writer)

    async def hold(self, seconds: float) -> None:
        """Keep the connection open, sending nothing, for ``seconds`` or until the client
        closes it (a stall), then close it."""
        await drain(self.writer)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.client_gone()
        await self.close()

    async def reset(self) -> None:
        """Drop the connection with a TCP reset (RST) after the bytes written so far."""
        self.reusable = False
        await drain(self.writer)
        await asyncio.sleep(RESET_GRACE)
        reset_transport(self.writer.transport)


_FRAMING = frozenset({"content-length", "transfer-encoding"})


def _raw(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


def _name(name: str | bytes) -> str:
    return (name.decode("latin-1") if isinstance(name, bytes) else name).lower()


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
