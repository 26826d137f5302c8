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

import itertools
import os
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx
import orjson

from ..core.redact import redact_headers
from ..core.session import Chunk, SessionHeader, StreamEnd, redact_url, save_session
from ..core.session import redact_header as redacted_header  # what the writer puts on disk
from .capture_rules import protocol_for_path, request_record
from .http1 import Request
from .http1_response import REFUSAL_HEADERS, Responder
from .http1_server import HTTPServer
from .live import transport_end
from .relay import Relay, named_in_connection, wants_stream
from .tunnel import tunnel, wants_upgrade

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
    "accept-encoding",
})
"""Request headers not forwarded as they are (httpx sets Host and Content-Length itself; the
proxy asks for ``Accept-Encoding: identity``, so the recorded bytes are the stream itself)."""
_INVENTED = ("user-agent", "accept", "connection")
"""Headers httpx adds to every request; the upstream sees them only if the client sent them."""
_SEGMENT_BREAK = re.compile(r"/|\\|%2f|%5c", re.IGNORECASE)
"""What ends a path segment for some server: ``/``, and ``\\`` or an escaped ``/`` or ``\\`` for
those that read them as ``/``."""
_DOT = re.compile(r"%2e", re.IGNORECASE)


def has_dot_segment(path: str) -> bool:
    """Whether ``path`` has a ``.`` or ``..`` segment as any server may read it: dots raw or
    escaped (``%2e``, any case), segments ended by ``/``, ``\\``, ``%2F`` or ``%5C``, a
    ``;name=value`` path parameter dropped. A server that removes dot segments moves such a
    request outside the upstream's path prefix (``/prefix/v1/../../admin`` is ``/admin``), and
    httpx removes raw ones itself before it sends."""
    return any(_DOT.sub(".", segment.split(";", 1)[0]) in (".", "..")
               for segment in _SEGMENT_BREAK.split(path))


class CaptureObserver(Protocol):
    """What a UI hears about each capture, from the proxy's event loop, in order: ``started``
    once (with the header as it is written to disk, secrets redacted), ``chunk`` for each read
    recorded (after the client got it), ``ended`` once. The calls must return quickly and never
    raise (hand the facts to another thread, e.g. as messages)."""

    def started(self, path: str, header: SessionHeader) -> None: ...

    def chunk(self, path: str, chunk: Chunk) -> None: ...

    def ended(self, path: str, end: StreamEnd) -> None: ...


def check_upstream(upstream: str) -> str:
    """The upstream base URL without its trailing slash; refused unless http(s), and if it has
    a query or a fragment (the request's path and query are appended to the URL as text, so
    they would land inside it)."""
    from ..core.errors import CallscopeError

    if not upstream.startswith(("http://", "https://")):
        raise CallscopeError(f"--upstream must be an http:// or https:// URL, not {upstream!r}")
    if "?" in upstream or "#" in upstream:  # not quoted: a query may carry a key
        raise CallscopeError("--upstream must have no query or fragment (no ? or #): each "
                             "request's path and query are appended to it")
    return upstream.rstrip("/")


class RecordingProxy:
    """The request handler of ``callscope proxy``."""

    def __init__(self, upstream: str, directory: str, *, timeout: float = 600.0,
                 log: Callable[[str], object] | None = None,
                 on_session: Callable[[str], None] | None = None,
                 observer: CaptureObserver | None = None, redact: Iterable[str] = ()) -> None:
        self.upstream = check_upstream(upstream)
        self._origin = httpx.URL(self.upstream)
        self.directory = directory
        self.timeout = timeout
        self.redact = tuple(redact)
        """Header and query parameter names redacted besides the built-in pattern."""
        self.log = log or (lambda line: None)
        self.on_session = on_session
        """Called with a session's path when its recording starts."""
        self.observer = observer
        """Told about every capture as it happens (the TUI lists and shows them live)."""
        # Made now, not on the first request: building its TLS context takes a noticeable
        # fraction of a second, which would delay the first response. No connection limit and
        # no pool wait: the 101st concurrent stream must not queue behind the first hundred.
        self._client: httpx.AsyncClient | None = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=10.0, pool=None), follow_redirects=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=100))
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

    def session_path(self, protocol: str | None) -> str:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        name = f"{next(self._numbers):04d}-{stamp}-{protocol or 'stream'}.jsonl"
        return os.path.join(self.directory, name)

    def upstream_url(self, request: Request) -> str | None:
        """The upstream base joined with the (origin-form) target; None if the result would
        leave the upstream's scheme, host or port (the client never picks the destination)."""
        if not request.target.startswith("/"):
            return None
        url = self.upstream + request.target
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:
            return None
        same = (parsed.scheme, parsed.host, parsed.port, parsed.userinfo) == (
            self._origin.scheme, self._origin.host, self._origin.port, self._origin.userinfo)
        return url if same else None

    def upstream_headers(self, request: Request) -> list[tuple[bytes, bytes]]:
        """The client's headers less hop-by-hop ones (and those its ``Connection:`` names), as
        the bytes the client sent: :class:`~.http1.Request` holds them decoded as latin-1, which
        maps every byte to one character, so encoding back is exact for any value h11 accepts
        (httpx would encode a ``str`` as ASCII, which fails on ``é``)."""
        drop = HOP_BY_HOP | named_in_connection(request.headers)
        return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in request.headers
                if k.lower() not in drop] + [(b"accept-encoding", b"identity")]

    async def handle(self, request: Request, out: Responder) -> None:
        shown = f"{request.method} {redact_url(request.target, self.redact)}"
        if has_dot_segment(request.path):
            self.log(f"{shown} -> 400 (a dot segment in the path)")
            await out.send_full(400, REFUSAL_HEADERS,
                                b"callscope proxy: the request path must not have a . or .. "
                                b"segment\n", keep_alive=False)
            return
        url = self.upstream_url(request)
        if url is None:
            self.log(f"{shown} -> 400 (the target would leave the upstream)")
            await out.send_full(400, REFUSAL_HEADERS,
                                b"callscope proxy: the request target must be a path on the "
                                b"upstream\n", keep_alive=False)
            return
        if wants_upgrade(request):
            await tunnel(url, request, out, self.log, shown)
            return
        protocol = protocol_for_path(request.path)
        recorded_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        start = time.monotonic()

        def header(response: httpx.Response | None, **extra: Any) -> SessionHeader:
            return SessionHeader(
                protocol=protocol, source="proxy", recorded_at=recorded_at,
                provenance=f"callscope proxy, upstream {redact_url(self.upstream)}",
                request=request_record(request.method, url, request.headers, request.body,
                                       self.redact),
                status=response.status_code if response is not None else None,
                response_headers=redact_headers(response.headers.multi_items(), self.redact)
                if response is not None else None, extra=extra)

        upstream_request = self.client.build_request(request.method, url,
                                                      headers=self.upstream_headers(request),
                                                      content=request.body)
        for name in _INVENTED:
            if request.header(name) is None:
                upstream_request.headers.pop(name, None)
        try:
            response = await self.client.send(upstream_request, stream=True)
        except httpx.TransportError as exc:
            end = transport_end(exc, time.monotonic() - start)
            note = ""
            if wants_stream(request):
                path = self.session_path(protocol)
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
            await Relay(self, request, response, out, header, protocol, start).run(shown)
        finally:
            await response.aclose()


def make_server(proxy: RecordingProxy, port: int = 0) -> HTTPServer:
    return HTTPServer(proxy.handle, port=port, on_close=proxy.aclose, log=proxy.log)
