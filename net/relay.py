"""One response of ``callscope proxy``, relayed to the client and recorded as it arrives.

Each upstream read goes to the client first, then to the session (recording adds no latency).
The client is watched while upstream is quiet (a stall), so a client that gives up ends the
recording now, not when upstream next sends something. A client that closes is not taken for a
cut at once: the upstream body is still read for :data:`CLOSE_GRACE` seconds, because SDKs stop
at the terminal signal (``[DONE]``, ``message_stop``) and may close before the body's last
chunk; if the body then ends, the stream is complete and is recorded as clean, the early close
said in the end's detail. A body the upstream compressed despite ``Accept-Encoding: identity``
is recorded as it came, and (gzip, deflate) decoded into a second session beside it, named in
the first one's header, so that what replays is the stream and not compressed bytes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from ..core.session import Chunk, SessionHeader, SessionWriter, StreamEnd
from ..core.session import redact_header as redacted_header  # what the writer puts on disk
from .capture_rules import is_stream
from .capture_rules import wants_stream as asked_for_stream
from .decoded import DecodedCopy, encoding_of, header_notes
from .http1 import Request
from .http1_response import Responder
from .live import MAX_ERROR_BODY, transport_end

if TYPE_CHECKING:
    from .proxy import RecordingProxy

CLOSE_GRACE = 0.5
"""Seconds the upstream body is still read and recorded after the client closed."""
RESPONSE_DROP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length",
                           "proxy-authenticate", "proxy-connection", "trailer", "upgrade"})
"""Response headers not relayed as they are (h11 frames the body for the client)."""
CLOSED_EARLY = ("the client closed the connection before the body's last chunk; the upstream "
                "ended the body cleanly")
STOPPED = "the proxy stopped while the response was streaming"

HeaderMaker = Callable[..., SessionHeader]


def named_in_connection(headers: list[tuple[str, str]]) -> set[str]:
    """The header names a ``Connection:`` header lists: hop-by-hop too (RFC 9110 §7.6.1)."""
    return {token.strip().lower() for name, value in headers if name.lower() == "connection"
            for token in value.split(",") if token.strip()}


def wants_stream(request: Request) -> bool:
    """Whether the client asked for a stream (so an error answer is worth a session too)."""
    return asked_for_stream(request.path, request.header("accept"), request.body)


async def settle(*tasks: asyncio.Future[Any]) -> None:
    """Wait until ``tasks`` are done, also through cancels of the waiting task (a stop can
    come twice, as a signal and as the end of standard input, and a second cancel landing in
    this wait must not skip what follows it: the session's end); a cancel is raised after."""
    cancelled = False
    while not all(task.done() for task in tasks):
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            cancelled = True
    for task in tasks:  # (their outcomes are theirs: retrieved, so none is logged as lost)
        if not task.cancelled():
            task.exception()
    if cancelled:
        raise asyncio.CancelledError


class Relay:
    """Relays ``response`` to ``out`` and records it (when it is a stream, or an HTTP error
    answering a streaming request)."""

    def __init__(self, proxy: RecordingProxy, request: Request, response: httpx.Response,
                 out: Responder, header: HeaderMaker, protocol: str | None, start: float) -> None:
        self.proxy, self.request, self.response, self.out = proxy, request, response, out
        self.header, self.protocol, self.start = header, protocol, start
        self.status = response.status_code
        self.forwarding = True
        self.writer: SessionWriter | None = None
        self.decoded: DecodedCopy | None = None
        self.error_body = bytearray()
        self.recorded = 0
        """Bytes of the body the session holds (an error body's first MAX_ERROR_BODY)."""
        self._finished = False

    def _now(self) -> float:
        return time.monotonic() - self.start

    async def run(self, shown: str) -> None:
        response, out, status = self.response, self.out, self.status
        drop = RESPONSE_DROP | named_in_connection(response.headers.multi_items())
        # The upstream's own header bytes, relayed as they came (a value need not be ASCII).
        headers: list[tuple[str | bytes, str | bytes]] = [
            (k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in drop]
        if self.request.method == "HEAD" or status in (204, 304) or status < 200:
            await out.send_full(status, [*headers, *(
                [("content-length", response.headers["content-length"])]
                if "content-length" in response.headers else [])], b"", head_only=True)
            self.proxy.log(f"{shown} -> {status}")
            return
        content_type = response.headers.get("content-type", "")
        recorded = is_stream(content_type) or (
            status >= 400 and wants_stream(self.request))
        if recorded:
            self._open(self.proxy.session_path(self.protocol))
        try:
            await out.start(status, headers)
            end = await self._copy()
        except (ConnectionError, OSError) as exc:  # the client went before the head reached it
            end = StreamEnd("cut", detail=f"the client disconnected before the response head "
                            f"({type(exc).__name__})", at=self._now())
        except Exception as exc:  # whatever failed, the session is ended, every byte kept
            self._finish(StreamEnd("cut", detail=f"the proxy failed relaying the response "
                                   f"({type(exc).__name__})", at=self._now()))
            raise
        except asyncio.CancelledError:  # stopped anywhere (the head's send too): ended as cut
            self._finish(StreamEnd("cut", detail=STOPPED, at=self._now()))
            raise
        if self.writer is not None:
            end = self._finish(end)
        where = f" -> {self.writer.path}" if self.writer is not None else ""
        self.proxy.log(f"{shown} -> {status} {content_type.split(';')[0] or '-'}, "
                       f"{self._sizes()}, {end.kind}{where}")

    def _sizes(self) -> str:
        """The bytes the log line gives: what reached the client, and what the session holds
        when that differs (after the client goes the upstream is still read and recorded for
        a moment, and an error body is kept to its first MAX_ERROR_BODY bytes)."""
        sent = self.out.bytes_sent
        if self.writer is None or self.recorded == sent:
            return f"{sent} B"
        return f"{sent} B to the client, {self.recorded} B recorded"

    def _open(self, path: str) -> None:
        encoding = encoding_of(self.response.headers) if self.status < 400 else ""
        shown = self.header(self.response, **header_notes(path, encoding))
        self.writer = SessionWriter(path, shown)
        self.decoded = DecodedCopy.open(path, shown, encoding)
        if self.decoded is not None:
            shown = self.decoded.header  # the TUI shows the stream
        if self.proxy.on_session is not None:
            self.proxy.on_session(path)
        if self.proxy.observer is not None:
            self.proxy.observer.started(path, redacted_header(shown))

    def _record(self, data: bytes) -> None:
        writer = self.writer
        if writer is None:
            return
        if self.status >= 400:
            kept = data[:MAX_ERROR_BODY - len(self.error_body)]
            self.error_body.extend(kept)
            self.recorded += len(kept)
            return
        self.recorded += len(data)
        chunk = Chunk(self._now(), data)
        writer.write(chunk)
        shown: Chunk | None = chunk
        if self.decoded is not None:
            shown = self.decoded.write(chunk)
        if self.proxy.observer is not None and shown is not None:
            self.proxy.observer.chunk(writer.path, shown)

    async def _pump(self) -> None:
        async for data in self.response.aiter_raw():
            try:
                if self.forwarding:
                    await self.out.send(data)  # the client first: recording adds no latency
            except (ConnectionError, OSError):
                self.forwarding = False
            finally:  # (also when the relay is cancelled inside the send: a read is kept)
                self._record(data)

    async def _copy(self) -> StreamEnd:
        """Copy the body; how it ended."""
        end = StreamEnd("cut", detail=STOPPED)
        stopped: StreamEnd | None = None
        copying = asyncio.ensure_future(self._pump())
        gone = asyncio.ensure_future(self.out.client_gone())
        try:
            await asyncio.wait({copying, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not copying.done():  # the client closed: the body may be all but over
                self.forwarding = False
                await asyncio.wait({copying}, timeout=CLOSE_GRACE)
            if not copying.done():
                end = StreamEnd("cut", detail="the client disconnected while the response "
                                "was streaming", at=self._now())
                self.out.writer.close()
                return end
            try:
                copying.result()
            except httpx.TransportError as exc:
                end = transport_end(exc, self._now())
                if self.forwarding:
                    await (self.out.reset() if end.kind == "reset" else self.out.close())
                return end
            if not self.forwarding:
                self.out.writer.close()
                return StreamEnd("clean", detail=CLOSED_EARLY, at=self._now())
            end = StreamEnd("clean", at=self._now())
            await self.out.end()
            return end
        except (ConnectionError, OSError) as exc:
            self.out.writer.close()
            return StreamEnd("clean" if copying.done() else "cut",
                             detail=f"the client disconnected ({exc})"[:200], at=self._now())
        except asyncio.CancelledError:
            stopped = StreamEnd("cut", detail=STOPPED, at=self._now())
            raise
        finally:
            for task in (copying, gone):
                task.cancel()
            try:
                await settle(copying, gone)
            finally:
                if stopped is not None:  # (after the pump stopped: the read it held is recorded)
                    self._finish(stopped)

    def _finish(self, end: StreamEnd) -> StreamEnd:
        """End the session(s) once (a cancelled relay ends them here, every byte kept); the
        end as recorded (an HTTP error status makes it ``http_error``)."""
        writer = self.writer
        if writer is None or self._finished:
            return end
        self._finished = True
        if self.status >= 400:
            end = StreamEnd("http_error", status=self.status, body=bytes(self.error_body),
                            detail=None if end.kind == "clean" else end.detail, at=end.at)
        writer.finish(end)
        if self.decoded is not None:
            self.decoded.finish(end)
        if self.proxy.observer is not None:  # (it shows the decoded copy when there is one)
            shown = end if self.decoded is None else self.decoded.end_for(end)
            self.proxy.observer.ended(writer.path, shown)
        return end
