"""HTTP/1.1 on asyncio streams, parsed by h11, shared by ``serve`` (the emulator) and ``proxy``.

h11 parses and frames (request heads, header validation, chunked and HTTP/1.0 bodies,
pipelining, keep-alive, ``100-continue``); this module owns the socket, because the emulator
must control the connection byte by byte (flush each chunk, end a body without its last chunk,
reset the socket, stall) and the proxy must copy a body as it arrives. A request is read whole
(provider requests are small, and bounded); a response is complete (``Content-Length``) or
streamed (chunked for HTTP/1.1 clients, ended by closing the connection for HTTP/1.0 ones).

Network input is hostile. Only origin-form targets (``/path?query``) are served: an absolute
URL is refused with 400 and ``CONNECT`` with 501, since a reverse proxy that let the target name
a host would send the request, with the credentials it carries, wherever the client said. A
connection that sends nothing for :data:`IDLE_TIMEOUT`, or takes longer than
:data:`HEAD_TIMEOUT` to send a request head, or stops for :data:`BODY_TIMEOUT` inside a body,
is closed (half-open heads must not pile up). Bytes a client pipelines while a response streams
stay in h11's buffer and are the next request: none is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import socket
import struct
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import h11

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 32 * 1024 * 1024
READ_SIZE = 64 * 1024
IDLE_TIMEOUT = 120.0
"""Seconds a connection may wait for the first byte of its next request (a kept-alive one)."""
HEAD_TIMEOUT = 20.0
"""Seconds from a request's first byte to the end of its head."""
BODY_TIMEOUT = 60.0
"""Seconds a request body may go without a byte."""
RESET_GRACE = 0.05
"""Seconds between the last byte written and a reset, so that loopback delivers the bytes
before the RST (a reset discards whatever the kernel has not sent yet)."""


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    method: str
    target: str
    """The request target as sent (path and query; origin-form, checked)."""
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


def _reason(status: int) -> bytes:
    if status == 529:
        return b"Overloaded"  # Anthropic's; not in the registry
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


class Connection:
    """One client connection: the socket's streams and h11's state of it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.closed_by_client = False
        self._probing = False

    async def _read(self, timeout: float) -> bytes:
        async with asyncio.timeout(timeout):
            data = await self.reader.read(READ_SIZE)
        if not data:
            self.closed_by_client = True
        self.h11.receive_data(data)
        return data

    def _event(self) -> Any:
        try:
            return self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise BadRequest(exc.error_status_hint, str(exc) or "malformed request") from None

    async def next_request(self) -> Request | None:
        """The next request, its body read; None when the client closed or went idle."""
        event = self._event()
        if event is h11.NEED_DATA and not self.h11.trailing_data[0]:
            try:
                await self._read(IDLE_TIMEOUT)
            except TimeoutError:
                return None
            event = self._event()
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                while event is h11.NEED_DATA:
                    await self._read(HEAD_TIMEOUT)
                    event = self._event()
        except TimeoutError:
            raise BadRequest(408, "the request head took too long") from None
        if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None
        if not isinstance(event, h11.Request):
            raise BadRequest(400, "not an HTTP request")
        # h11 bounds a head that is still incomplete; one that arrived whole is bounded here.
        if len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers) > MAX_HEAD_BYTES:
            raise BadRequest(431, "request head too large")
        request = Request(event.method.decode("ascii", "replace"),
                          event.target.decode("ascii", "replace"),
                          [(k.decode("latin-1"), v.decode("latin-1"))
                           for k, v in event.headers.raw_items()],
                          b"", "HTTP/" + event.http_version.decode("ascii", "replace"))
        length = request.header("content-length")
        if length is not None and int(length) > MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
        if self.h11.they_are_waiting_for_100_continue:
            self.writer.write(self.h11.send(h11.InformationalResponse(status_code=100,
                                                                      headers=[])) or b"")
        request.body = await self._body()
        return request

    async def _body(self) -> bytes:
        body = bytearray()
        while True:
            event = self._event()
            if event is h11.NEED_DATA:
                try:
                    await self._read(BODY_TIMEOUT)
                except TimeoutError:
                    raise BadRequest(408, "the request body stopped") from None
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY_BYTES:
                    raise BadRequest(413, "request body too large")
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            else:  # ConnectionClosed inside the body
                raise BadRequest(400, "connection closed inside the request body")

    async def client_gone(self) -> None:
        """Returns once the client closed its side. Whatever it sends before (a pipelined
        request) is kept in h11's buffer for the next cycle, up to :data:`MAX_HEAD_BYTES` +
        :data:`MAX_BODY_BYTES`; past that the socket is no longer read (TCP slows the client)."""
        if self.closed_by_client:
            return
        self._probing = True
        try:
            while len(self.h11.trailing_data[0]) <= MAX_HEAD_BYTES + MAX_BODY_BYTES:
                try:
                    data = await self.reader.read(READ_SIZE)
                except (ConnectionError, OSError):
                    data = b""
                if not data:
                    self.closed_by_client = True
                    with contextlib.suppress(RuntimeError):
                        self.h11.receive_data(b"")
                    return
                self.h11.receive_data(data)
            await asyncio.Event().wait()  # the client is pipelining a flood: stop reading it
        finally:
            self._probing = False

    async def refuse(self, status: int, message: str) -> None:
        """A one-line plain-text answer, then the connection closes."""
        body = f"{message}\n".encode()
        with contextlib.suppress(h11.LocalProtocolError):
            self.writer.write(self.h11.send(h11.Response(
                status_code=status, reason=_reason(status),
                headers=[("content-type", "text/plain; charset=utf-8"),
                         ("content-length", str(len(body))), ("connection", "close")])) or b"")
            self.writer.write(self.h11.send(h11.Data(data=body)) or b"")
            self.writer.write(self.h11.send(h11.EndOfMessage()) or b"")
        await self.writer.drain()


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
        pending = bytes(self.connection.h11.trailing_data[0])
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


Handler = Callable[[Request, Responder], Awaitable[None]]


def target_problem(request: Request, url: str) -> tuple[int, str] | None:
    """Why the request target is not served (status, one line), or None for origin-form."""
    if request.method == "CONNECT":
        return 501, (f"callscope is a reverse proxy, not a forward one: set your SDK's base URL "
                     f"to {url} instead of a proxy")
    if not request.target.startswith("/"):
        return 400, (f"only origin-form request targets (/path?query) are served, not "
                     f"{request.target[:80]!r}: set your SDK's base URL to {url}")
    return None


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
                                                  limit=READ_SIZE)
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
        connection = Connection(reader, writer)
        try:
            while await self._one_cycle(connection):
                connection.h11.start_next_cycle()
        except (ConnectionError, OSError, h11.LocalProtocolError):
            pass  # the client went away (or broke the exchange); nothing to answer
        except asyncio.CancelledError:
            pass  # the server is closing (a stalled stream); ending quietly is the point
        finally:
            self._tasks.discard(task)
            if not writer.is_closing():
                writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _one_cycle(self, connection: Connection) -> bool:
        """Serve one request; whether the connection may serve another."""
        try:
            request = await connection.next_request()
        except BadRequest as exc:
            await connection.refuse(exc.status, f"callscope: {exc}")
            return False
        if request is None:
            return False
        problem = target_problem(request, self.url)
        if problem is not None:
            await connection.refuse(*problem)
            return False
        responder = Responder(connection)
        try:
            await self.handler(request, responder)
        except (ConnectionError, OSError):
            raise
        except Exception as exc:  # a handler bug must not kill the server, nor show its text
            if not responder.started:
                await connection.refuse(500, f"callscope: internal error ({type(exc).__name__})")
            return False
        return responder.reusable and not connection.writer.is_closing() and (
            connection.h11.their_state is h11.DONE)


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
