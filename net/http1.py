"""Reading HTTP/1.1 requests off a client connection, parsed by h11: the limits on hostile input.

h11 parses and frames (request heads, header validation, chunked and HTTP/1.0 bodies,
pipelining, keep-alive, ``100-continue``); this module owns the reading side of the socket. A
request is read whole (provider requests are small, and bounded: :data:`MAX_HEAD_BYTES`,
:data:`MAX_BODY_BYTES`). Responses are written by :mod:`.http1_response`; the serving loop is
:mod:`.http1_server`.

Network input is hostile. Only origin-form targets (``/path?query``) are served
(:func:`target_problem`): an absolute URL is refused with 400 and ``CONNECT`` with 501, since a
reverse proxy that let the target name a host would send the request, with the credentials it
carries, wherever the client said. A connection that sends nothing for :data:`IDLE_TIMEOUT`, or
takes longer than :data:`HEAD_TIMEOUT` to send a request head, stops for :data:`BODY_TIMEOUT`
inside a body or takes longer than :data:`BODY_DEADLINE` to send it whole, is closed (half-open
requests must not pile up). A server holds at most :data:`MAX_CONNECTIONS` connections, and
its connections hold at most :data:`MAX_BUFFERED_BYTES` of request bytes between them
(:class:`Budget`): a read that would pass it is refused with 503, like any other refusal.

Bytes a client pipelines while a response streams are the next request: none is dropped. They
stay in the connection's own buffer and are handed to h11 at most :data:`READ_SIZE` at a time as
it asks for more, exactly as if they came off the socket then, so h11's bound on an incomplete
head and ours on a complete one hold for a pipelined request too: h11 never holds more than
about twice :data:`READ_SIZE`, and a head of megabytes is refused after two reads, not parsed.

An error answer never quotes the client's bytes (h11's messages do): it names the problem class
(:data:`H11_PROBLEMS`). h11's message is not logged either: it quotes the offending line, which
may be a credential header sent without its colon, beyond what redaction recognises.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

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
BODY_DEADLINE = 300.0
"""Seconds from the end of a request's head to the end of its body (32 MiB at ~110 KiB/s): a
client that trickles a byte just inside :data:`BODY_TIMEOUT` is closed all the same."""
MAX_CONNECTIONS = 128
"""Connections one server holds at a time (each may buffer up to :data:`MAX_HEAD_BYTES` +
:data:`MAX_BODY_BYTES`, all of them together :data:`MAX_BUFFERED_BYTES`); one more is answered
503 and closed (:mod:`.http1_server`)."""
MAX_BUFFERED_BYTES = 256 * 1024 * 1024
"""Request bytes all the connections of one server may hold at a time (:class:`Budget`): heads
and bodies being read, and what clients pipelined. Without it :data:`MAX_CONNECTIONS` clients
each sending a body of :data:`MAX_BODY_BYTES`, slowly, held 4 GiB (and copies of it). 256 MiB is
eight bodies at the limit at once, many times what concurrent agents send (a provider request
is kilobytes to a few megabytes), and what a laptop can spare; a connection whose read would
pass it is answered 503, which SDKs retry, and closed. What is counted is the bytes read off the
sockets; a body is copied once when it is complete, uncounted, and each socket's own buffer
(about twice :data:`READ_SIZE`) is outside it too."""
BUSY = "too many request bytes held, try again"
"""The refusal (503) of a read past :data:`MAX_BUFFERED_BYTES`, or of a ``Content-Length`` that
does not fit in what is left of it."""
H11_PROBLEMS: dict[int, str] = {431: "request head too large",
                                501: "unsupported request framing"}
"""The answer to a request h11 refuses, by the status h11 suggests; any other status says
:data:`MALFORMED`."""
MALFORMED = "malformed request"


class BadRequest(Exception):
    """A request refused while it is read: ``status`` and a fixed one-line ``message``;
    ``request`` once its head was read (its body is not)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.request: Request | None = None


class Budget:
    """The request bytes the connections of one server hold between them, at most
    :data:`MAX_BUFFERED_BYTES` (read when it is asked, so a test can patch it)."""

    def __init__(self) -> None:
        self.held = 0

    def left(self) -> int:
        return MAX_BUFFERED_BYTES - self.held

    def take(self, size: int) -> bool:
        """Count ``size`` more bytes if they fit; whether they did."""
        if size > self.left():
            return False
        self.held += size
        return True

    def release(self, size: int) -> None:
        self.held -= size


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
        """The target up to its first ``?`` or ``#``, as sent. Not ``urlsplit``: it reads a
        target starting ``//`` as a host and a path (``//evil.com/v1/x`` -> ``/v1/x``)."""
        return self.target.split("#", 1)[0].split("?", 1)[0]

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(self.target.split("#", 1)[0].partition("?")[2], keep_blank_values=True)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


class Connection:
    """One client connection: the socket's streams and h11's state of it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 budget: Budget | None = None) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.closed_by_client = False
        self.held = bytearray()
        """Bytes read off the socket by :meth:`client_gone` and not yet handed to h11."""
        self.budget = budget if budget is not None else Budget()
        """The server's (shared by its connections); a connection alone has one of its own."""
        self.charged = 0
        """The bytes this connection counts in :attr:`budget`: what it read off the socket
        since the request before was handled, or since :meth:`settle` kept it (the next
        request's bytes, pipelined). :meth:`release` gives it all back when it closes."""

    async def _read(self, timeout: float) -> bytes:
        if self.held:  # as if read now; the loop is let go between pieces as between reads
            data = bytes(self.held[:READ_SIZE])  # (counted when read off the socket)
            del self.held[:READ_SIZE]
            await asyncio.sleep(0)
        else:
            async with asyncio.timeout(timeout):
                data = await self.reader.read(READ_SIZE)
            if not data:
                self.closed_by_client = True
            elif not self.budget.take(len(data)):
                raise BadRequest(503, BUSY)  # (what was read goes with the connection)
            self.charged += len(data)
        self.h11.receive_data(data)
        return data

    def settle(self) -> None:
        """Between requests: the request before has been handled, so only what the
        connection still holds stays counted (bytes pipelined after it)."""
        keep = min(self.charged, len(self.held) + len(self.h11.trailing_data[0]))
        self.budget.release(self.charged - keep)
        self.charged = keep

    def release(self) -> None:
        """The connection is closed (however it ended): nothing of it is counted any more."""
        self.budget.release(self.charged)
        self.charged = 0

    def _event(self) -> Any:
        try:
            return self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            raise BadRequest(status, H11_PROBLEMS.get(status, MALFORMED)) from None

    async def next_request(self) -> Request | None:
        """The next request, its body read; None when the client closed or went idle."""
        self.settle()
        event = self._event()
        if event is h11.NEED_DATA and not self.held and not self.h11.trailing_data[0]:
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
        try:
            request.body = await self._body_of(request)
        except BadRequest as exc:
            exc.request = request
            raise
        return request

    async def _body_of(self, request: Request) -> bytes:
        length = request.header("content-length")
        if length is not None and int(length) > MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
        # What of the body arrived with the head is counted already (and what was pipelined
        # after it is let off: its reads are counted as they come).
        if length is not None and (int(length) - len(self.held)
                                   - len(self.h11.trailing_data[0])) > self.budget.left():
            raise BadRequest(503, BUSY)
        if self.h11.they_are_waiting_for_100_continue:
            self.writer.write(self.h11.send(h11.InformationalResponse(status_code=100,
                                                                      headers=[])) or b"")
        return await self._body()

    async def _body(self) -> bytes:
        try:
            async with asyncio.timeout(BODY_DEADLINE):
                return await self._body_reads()
        except TimeoutError:
            raise BadRequest(408, "the request body took too long") from None

    async def _body_reads(self) -> bytes:
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
        request) is kept in :attr:`held` for the next cycle, not given to h11, up to
        :data:`MAX_HEAD_BYTES` + :data:`MAX_BODY_BYTES`, and counted in :attr:`budget`; past
        either the socket is no longer read (TCP slows the client) while the response lasts: a
        response cannot be refused halfway, the next request's reads are refused if the budget
        is still full."""
        if self.closed_by_client:
            return
        # What h11 already holds counts too (read once: trailing_data copies the buffer).
        bound = MAX_HEAD_BYTES + MAX_BODY_BYTES - len(self.h11.trailing_data[0])
        # A read is counted whole before it is made (other connections read meanwhile), and
        # what it did not fill given back; cancelled inside it, :meth:`settle` gives it back.
        while len(self.held) <= bound and self.budget.take(READ_SIZE):
            self.charged += READ_SIZE
            try:
                data = await self.reader.read(READ_SIZE)
            except (ConnectionError, OSError):
                data = b""
            self.budget.release(READ_SIZE - len(data))
            self.charged -= READ_SIZE - len(data)
            if not data:  # h11 is told at the next cycle, after what is held
                self.closed_by_client = True
                return
            self.held += data
        await asyncio.Event().wait()  # a flood, or the budget is full: stop reading it


def target_problem(request: Request, url: str) -> tuple[int, str] | None:
    """Why the request target is not served (status, one line), or None for origin-form."""
    if request.method == "CONNECT":
        return 501, (f"callscope is a reverse proxy, not a forward one: set your SDK's base URL "
                     f"to {url} instead of a proxy")
    if not request.target.startswith("/"):
        return 400, (f"only origin-form request targets (/path?query) are served: set your "
                     f"SDK's base URL to {url}")
    return None
