"""Serving HTTP/1.1 on 127.0.0.1: one request and its response at a time per connection,
kept alive while both ends allow it, and the server run on a thread of its own for synchronous
callers.

A request refused while it is read (:class:`.http1.BadRequest`), or for its target, is answered
with one fixed line and the connection closed, and logged: the status and the problem, and a
refused target redacted and escaped. A handler must write a response; if it leaves the body
unfinished the connection is closed, and an exception in it answers 500 naming only its type.

A server holds at most :data:`.http1.MAX_CONNECTIONS` connections; one more is answered 503
(``Connection: close``) at once and closed, without reading it. Refused rather than held back:
asyncio accepts every connection, so holding one until a slot frees would keep its socket open
with no answer (the client waits for its own timeout, and each still costs a descriptor),
whereas a 503 is an answer SDKs retry on, and frees the socket at once.

The server's connections share one :class:`.http1.Budget` of :data:`.http1.MAX_BUFFERED_BYTES`
request bytes: a connection whose read would pass it is refused the same way, 503
(``Connection: close``), and what a connection counts is given back when its request has been
handled and when it closes, however it ends (a refusal, an error, a cancel, the client gone).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import h11

from ..core.inert import plain, preview
from ..core.redact import redact_url
from . import http1
from .http1 import READ_SIZE, BadRequest, Budget, Connection, Request, target_problem
from .http1_response import Responder, close_writer, refuse

Handler = Callable[[Request, Responder], Awaitable[None]]


class HTTPServer:
    """Serves ``handler(request, responder)`` on 127.0.0.1. The handler must write a response;
    if it leaves the body unfinished the connection is closed."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0,
                 on_close: Callable[[], Awaitable[None]] | None = None,
                 log: Callable[[str], object] | None = None) -> None:
        self.handler = handler
        self.on_close = on_close
        self.log = log or (lambda line: None)
        self._open = 0
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.budget = Budget()
        """The request bytes its connections hold between them."""

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
        connection = Connection(reader, writer, self.budget)
        full = self._open >= http1.MAX_CONNECTIONS
        self._open += not full
        try:
            if full:
                self.log(f"refused a connection: {self._open} open (503)")
                await refuse(connection, 503, "callscope: too many connections, try again")
                return
            while await self._one_cycle(connection):
                connection.h11.start_next_cycle()
        except (ConnectionError, OSError, h11.LocalProtocolError):
            pass  # the client went away (or broke the exchange); nothing to answer
        except asyncio.CancelledError:
            pass  # the server is closing (a stalled stream); ending quietly is the point
        finally:
            connection.release()
            self._open -= not full
            self._tasks.discard(task)
            await close_writer(writer)

    async def _one_cycle(self, connection: Connection) -> bool:
        """Serve one request; whether the connection may serve another."""
        try:
            request = await connection.next_request()
        except BadRequest as exc:
            self.log(f"refused {_shown(exc.request)}: {exc.status} {exc}")
            await refuse(connection, exc.status, f"callscope: {exc}")
            return False
        if request is None:
            return False
        problem = target_problem(request, self.url)
        if problem is not None:
            self.log(f"refused {_shown(request)}: {problem[0]}")
            await refuse(connection, *problem)
            return False
        responder = Responder(connection)
        try:
            await self.handler(request, responder)
        except (ConnectionError, OSError):
            raise
        except Exception as exc:  # a handler bug must not kill the server, nor show its text
            self.log(f"internal error answering {_shown(request)}: {type(exc).__name__}")
            if not responder.started:
                await refuse(connection, 500, f"callscope: internal error ({type(exc).__name__})")
            return False
        return responder.reusable and not connection.writer.is_closing() and (
            connection.h11.their_state is h11.DONE)


def _shown(request: Request | None) -> str:
    """A request in a log line: its method and its target redacted and escaped."""
    if request is None:  # refused before its head was read
        return "a request"
    return (f"{preview(plain(request.method), 20)} "
            f"{preview(plain(redact_url(request.target)), 200)}")


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
