"""A small HTTP/1.1 server on asyncio streams, shared by ``serve`` (the emulator) and ``proxy``.

Why not ``http.server`` or an ASGI server: the emulator must control the connection byte by
byte (flush each chunk, end a body without its last chunk, reset the socket, stall), and the
proxy must copy a body as it arrives. A request is read whole (provider requests are small); a
response is either complete (``Content-Length``) or streamed with chunked transfer coding.
Keep-alive is supported, so SDK connection pools reuse connections as they would with a provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 32 * 1024 * 1024
RESET_GRACE = 0.05
"""Seconds between the last byte written and a reset, so that loopback delivers the bytes
before the RST (a reset discards whatever the kernel has not sent yet)."""

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large",
            429: "Too Many Requests", 431: "Request Header Fields Too Large",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 529: "Overloaded"}


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    target: str
    """The request target as sent (path and query)."""
    headers: list[tuple[str, str]]
    """In order, names as sent."""
    body: bytes
    version: str = "HTTP/1.1"

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query, keep_blank_values=True)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    @property
    def keep_alive(self) -> bool:
        connection = (self.header("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


async def read_request(reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter | None = None) -> Request | None:
    """The next request on the connection, or None when the client closed it. With ``writer``,
    a client that sent ``Expect: 100-continue`` is told to go on."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise BadRequest(400, "connection closed inside the request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "request head too large") from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1.x request line")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise BadRequest(400, "malformed header line")
        headers.append((name, value.strip()))
    request = Request(parts[0], parts[1], headers, b"", parts[2])
    if (request.header("expect") or "").lower() == "100-continue" and writer is not None:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in (request.header("transfer-encoding") or "").lower():
        request.body = await _read_chunked(reader)
    else:
        length = request.header("content-length")
        if length is not None:
            if not length.isdigit():
                raise BadRequest(400, "bad Content-Length")
            if int(length) > MAX_BODY_BYTES:
                raise BadRequest(413, "request body too large")
            try:
                request.body = await reader.readexactly(int(length))
            except asyncio.IncompleteReadError:
                raise BadRequest(400, "connection closed inside the request body") from None
    return request


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    try:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip() or b"x", 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pass
                return bytes(body)
            if len(body) + size > MAX_BODY_BYTES:
                raise BadRequest(413, "request body too large")
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        raise BadRequest(400, "malformed chunked request body") from None


class Responder:
    """Writes one response: :meth:`send_full`, or :meth:`start` + :meth:`send` + an ending
    (:meth:`end` for a complete body, :meth:`close` to drop the connection mid-body, :meth:`reset`
    for a TCP reset)."""

    def __init__(self, writer: asyncio.StreamWriter,
                 reader: asyncio.StreamReader | None = None) -> None:
        self.writer = writer
        self.reader = reader
        self.started = False
        self.reusable = False
        """True once the response ended properly, so the connection may serve another."""
        self.bytes_sent = 0

    def _head(self, status: int, headers: Iterable[tuple[str, str]]) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        lines += [f"{name}: {value}" for name, value in headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

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
        self.started = True
        self.writer.write(self._head(status, kept) + body)
        await self.writer.drain()
        self.bytes_sent += len(body)
        self.reusable = keep_alive

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Send the head of a streamed (chunked) response."""
        kept = [(k, v) for k, v in headers if k.lower() not in ("content-length",
                                                                   "transfer-encoding")]
        kept.append(("transfer-encoding", "chunked"))
        self.started = True
        self.writer.write(self._head(status, kept))
        await self.writer.drain()

    async def send(self, data: bytes) -> None:
        """One body chunk, flushed now (an empty one is skipped: it would end the body)."""
        if data:
            self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await self.writer.drain()
            self.bytes_sent += len(data)

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()
        self.reusable = True

    async def close(self) -> None:
        """Close the connection (FIN) without ending the body: the client sees a cut."""
        await self.writer.drain()
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()

    async def hold(self, seconds: float) -> None:
        """Keep the connection open, sending nothing, for ``seconds`` or until the client
        closes it (a stall), then close it."""
        await self.writer.drain()
        try:
            async with asyncio.timeout(seconds):
                while self.reader is not None and await self.reader.read(4096):
                    pass  # whatever the client sends during a stall is ignored
                if self.reader is None:
                    await asyncio.sleep(seconds)
        except TimeoutError:
            pass
        await self.close()

    async def reset(self) -> None:
        """Drop the connection with a TCP reset (RST) after the bytes written so far."""
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


Handler = Callable[[Request, Responder], Awaitable[None]]


class HTTPServer:
    """Serves ``handler(request, responder)`` on 127.0.0.1. The handler must write a response;
    if it leaves the body unfinished the connection is closed."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0,
                 on_close: Callable[[], Awaitable[None]] | None = None) -> None:
        self.handler = handler
        self.on_close = on_close
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port,
                                                  limit=MAX_HEAD_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        try:
            await self._server.serve_forever()
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):  # stalled streams would otherwise hold the loop open
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        if self.on_close is not None:
            on_close, self.on_close = self.on_close, None
            await on_close()

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                responder = Responder(writer, reader)
                try:
                    request = await read_request(reader, writer)
                except BadRequest as exc:
                    await responder.send_full(exc.status, [("content-type", "text/plain")],
                                              f"{exc}\n".encode(), keep_alive=False)
                    break
                if request is None:
                    break
                try:
                    await self.handler(request, responder)
                except (ConnectionError, OSError):
                    raise
                except Exception as exc:  # a handler bug must not kill the server
                    if not responder.started:
                        await responder.send_full(500, [("content-type", "text/plain")],
                                                  f"callscope: {exc!r}\n".encode(),
                                                  keep_alive=False)
                    break
                if not (responder.reusable and request.keep_alive) or writer.is_closing():
                    break
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass  # the client went away; nothing to answer
        except asyncio.CancelledError:
            pass  # the server is closing (a stalled stream); ending quietly is the point
        finally:
            self._tasks.discard(task)
            if not writer.is_closing():
                writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()


class BackgroundServer:
    """Runs an :class:`HTTPServer` on its own event loop in a daemon thread (for tests, and for
    synchronous callers such as SDK clients)::

        with BackgroundServer(handler_factory) as url: ...
    """

    def __init__(self, make_server: Callable[[], HTTPServer]) -> None:
        self._make_server = make_server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="callscope-http", daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.server: HTTPServer | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.server = self._make_server()
            self._loop.run_until_complete(self.server.start())
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.close())
        left = asyncio.all_tasks(self._loop)  # e.g. a connection accepted during the close
        for task in left:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        self._loop.close()

    def start(self) -> str:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        assert self.server is not None
        return self.server.url

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
