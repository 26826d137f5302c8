"""``callscope proxy``: a recording reverse proxy in front of a provider.

A user points their agent's base URL at the proxy. Every request goes upstream as it came
(hop-by-hop headers aside, and ``Accept-Encoding: identity`` so that the recorded bytes are the
event stream itself); every response comes back unchanged and unbuffered: each network read is
forwarded to the client before it is written to the session. Each ``text/event-stream``
response, and each HTTP error answering a streaming request, becomes a session file in the
capture directory, written while it streams (a hidden ``.NAME.*.partial`` file, renamed when the
stream ends). An upstream fault reaches the client as the same fault (a reset as a reset, a cut
as a cut), and the session records it. Credentials are forwarded upstream but never written:
the session header is redacted, and log lines show redacted URLs only.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx
import orjson

from ..core.session import Chunk, SessionHeader, SessionWriter, StreamEnd, redact_url, save_session
from ..core.session import redact_header as redacted_header  # what the writer puts on disk
from .http1 import HTTPServer, Request, Responder
from .live import MAX_ERROR_BODY, transport_end
from .serve import protocol_for_path

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "trailers", "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
})
"""Request headers not forwarded as they are (httpx sets Host and Content-Length itself)."""
_RESPONSE_DROP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length",
                            "proxy-authenticate", "trailer", "upgrade"})


def wants_stream(request: Request) -> bool:
    """Whether the client asked for a stream (so an error answer is worth a session too)."""
    if ":streamGenerateContent" in request.path or "text/event-stream" in (
            request.header("accept") or ""):
        return True
    try:
        body = orjson.loads(request.body) if request.body else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _request_record(request: Request, url: str) -> dict[str, Any]:
    record: dict[str, Any] = {"method": request.method, "url": url,
                              "headers": list(request.headers)}
    if request.body:
        try:
            record["body"] = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            record["body_text"] = request.body.decode("utf-8", "replace")
    return record


class CaptureObserver(Protocol):
    """What a UI hears about each capture, from the proxy's event loop, in order: ``started``
    once (with the header as it is written to disk, secrets redacted), ``chunk`` for each read
    recorded (after the client got it), ``ended`` once. The calls must return quickly and never
    raise (hand the facts to another thread, e.g. as messages)."""

    def started(self, path: str, header: SessionHeader) -> None: ...

    def chunk(self, path: str, chunk: Chunk) -> None: ...

    def ended(self, path: str, end: StreamEnd) -> None: ...


class RecordingProxy:
    """The request handler of ``callscope proxy``."""

    def __init__(self, upstream: str, directory: str, *, timeout: float = 600.0,
                 log: Callable[[str], object] | None = None,
                 on_session: Callable[[str], None] | None = None,
                 observer: CaptureObserver | None = None) -> None:
        if not upstream.startswith(("http://", "https://")):
            from ..core.errors import CallscopeError

            raise CallscopeError(f"--upstream must be an http:// or https:// URL, not {upstream!r}")
        self.upstream = upstream.rstrip("/")
        self.directory = directory
        self.timeout = timeout
        self.log = log or (lambda line: None)
        self.on_session = on_session
        """Called with a session's path when its recording starts."""
        self.observer = observer
        """Told about every capture as it happens (the TUI lists and shows them live)."""
        # Made now, not on the first request: building its TLS context takes a noticeable
        # fraction of a second, which would delay the first response.
        self._client: httpx.AsyncClient | None = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=10.0, pool=None), follow_redirects=False)
        self._numbers = itertools.count(1)
        os.makedirs(directory, exist_ok=True)

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError("the proxy is closed")
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def _session_path(self, protocol: str | None) -> str:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        name = f"{next(self._numbers):04d}-{stamp}-{protocol or 'stream'}.jsonl"
        return os.path.join(self.directory, name)

    async def handle(self, request: Request, out: Responder) -> None:
        url = self.upstream + request.target
        shown = f"{request.method} {redact_url(request.target)}"
        headers = [(k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP]
        headers.append(("accept-encoding", "identity"))
        protocol = protocol_for_path(request.path)
        recorded_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        start = time.monotonic()

        def header(response: httpx.Response | None) -> SessionHeader:
            return SessionHeader(
                protocol=protocol, source="proxy", recorded_at=recorded_at,
                provenance=f"callscope proxy, upstream {redact_url(self.upstream)}",
                request=_request_record(request, url),
                status=response.status_code if response is not None else None,
                response_headers=dict(response.headers.multi_items()) if response else None)

        upstream_request = self.client.build_request(request.method, url, headers=headers,
                                                     content=request.body)
        try:
            response = await self.client.send(upstream_request, stream=True)
        except httpx.TransportError as exc:
            end = transport_end(exc, time.monotonic() - start)
            note = ""
            if wants_stream(request):
                path = self._session_path(protocol)
                save_session(path, header(None), (), end)
                note = f" -> {path}"
                if self.observer is not None:
                    self.observer.started(path, redacted_header(header(None)))
                    self.observer.ended(path, end)
            self.log(f"{shown} -> upstream failed ({end.kind}: {end.detail}){note}")
            await out.send_full(502, [("content-type", "application/json")], orjson.dumps(
                {"error": {"message": f"callscope proxy: upstream failed: {end.detail}",
                           "type": "bad_gateway"}}))
            return
        try:
            await self._relay(request, response, out, header(response), protocol, shown, start)
        finally:
            await response.aclose()

    async def _relay(self, request: Request, response: httpx.Response, out: Responder,
                     header: SessionHeader, protocol: str | None, shown: str,
                     start: float) -> None:
        status = response.status_code
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in _RESPONSE_DROP]
        if request.method == "HEAD" or status in (204, 304) or status < 200:
            await out.send_full(status, [*headers, *(
                [("content-length", response.headers["content-length"])]
                if "content-length" in response.headers else [])], b"", head_only=True)
            self.log(f"{shown} -> {status}")
            return
        content_type = response.headers.get("content-type", "")
        streamed = content_type.lower().startswith("text/event-stream")
        recorded = streamed or (status >= 400 and wants_stream(request))
        writer = SessionWriter(self._session_path(protocol), header) if recorded else None
        observer = self.observer if writer is not None else None
        if writer is not None and self.on_session is not None:
            self.on_session(writer.path)
        if observer is not None:
            assert writer is not None
            observer.started(writer.path, redacted_header(header))
        await out.start(status, headers)
        body = bytearray()  # only an error body is kept (bounded)
        end = StreamEnd("cut", detail="the proxy stopped while the response was streaming")
        finished = False

        async def pump() -> None:
            async for data in response.aiter_raw():
                await out.send(data)  # the client first: recording adds no latency
                if writer is not None and status < 400:
                    chunk = Chunk(time.monotonic() - start, data)
                    writer.write(chunk)
                    if observer is not None:
                        observer.chunk(writer.path, chunk)
                elif writer is not None:
                    body.extend(data[:MAX_ERROR_BODY - len(body)])

        try:
            # The client is watched while upstream is quiet (a stall), so a client that gives
            # up ends the recording now, not when upstream next sends something.
            copying = asyncio.ensure_future(pump())
            gone = asyncio.ensure_future(_client_gone(out))
            pipelined = False
            try:
                await asyncio.wait({copying, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not copying.done() and gone.result():  # bytes from the client, not its end
                    pipelined = True
                    await asyncio.wait({copying})
            finally:
                for task in (copying, gone):
                    task.cancel()
                await asyncio.gather(copying, gone, return_exceptions=True)
            try:
                if not copying.done() or copying.cancelled():
                    raise ConnectionResetError("the client closed the connection")
                copying.result()
            except httpx.TransportError as exc:
                end = transport_end(exc, time.monotonic() - start)
                await (out.reset() if end.kind == "reset" else out.close())
            except (ConnectionError, OSError) as exc:
                end = StreamEnd("cut", detail=f"the client disconnected ({exc})"[:200],
                                at=time.monotonic() - start)
                out.writer.close()
            else:
                end = StreamEnd("clean", at=time.monotonic() - start)
                await out.end()
                if pipelined:
                    out.reusable = False  # the client's next request was read: start afresh
            if writer is not None:
                if status >= 400:
                    end = StreamEnd("http_error", status=status, body=bytes(body),
                                    detail=None if end.kind == "clean" else end.detail, at=end.at)
                finished = True
                writer.finish(end)
                if observer is not None:
                    observer.ended(writer.path, end)
        finally:
            if writer is not None and not finished:  # cancelled: keep what was received
                writer.finish(end)
                if observer is not None:
                    observer.ended(writer.path, end)
        where = f" -> {writer.path}" if writer is not None else ""
        self.log(f"{shown} -> {status} {content_type.split(';')[0] or '-'}, "
                 f"{out.bytes_sent} B, {end.kind}{where}")


async def _client_gone(out: Responder) -> bool:
    """Returns once the client closed its side (False), or once it sent something while the
    response was streaming (True: a pipelined request, which this proxy does not serve)."""
    if out.reader is None:
        await asyncio.Event().wait()  # cannot tell: wait for ever (cancelled by the caller)
        return False
    try:
        return bool(await out.reader.read(1))
    except (ConnectionError, OSError):
        return False


def make_server(proxy: RecordingProxy, port: int = 0) -> HTTPServer:
    return HTTPServer(proxy.handle, port=port, on_close=proxy.aclose)
