"""``callscope live``: one real streaming request, recorded byte for byte while the engine reads it.

:func:`build_request` shapes the request for a provider (``PROTOCOLS.md`` §1-4: endpoint, auth
header, body, as the protocol's spec declares them in its ``live`` shape); :func:`record` sends
it with httpx and hands every network read to a callback as it arrives (the command line feeds
the engine and prints the table; the TUI can do the same) while a
:class:`~callscope.core.session.SessionWriter` writes it to disk. The recorded bytes are
``response.iter_raw()``'s, with ``Accept-Encoding: identity`` so that they are the SSE bytes.

Transport faults never escape as exceptions: an HTTP error status (with its body), a reset, a
read timeout, a closed connection, a refused connection each become the session's end, and the
bytes received before are kept. A request that cannot be sent at all (a URL that is not an
http(s) URL with a host and a valid port, a header httpx or h11 would refuse) is a
:class:`~callscope.core.errors.CallscopeError` when the :class:`LiveRequest` is made, before any
session is written. Header values go out as latin-1 bytes, as HTTP/1.1 carries them.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
from msgspec.structs import replace

from ..core.errors import CallscopeError
from ..core.providers import SPECS
from ..core.providers.spec import LiveShape, function_tool
from ..core.session import (
    Chunk,
    SessionHeader,
    SessionWriter,
    StreamEnd,
    redact_url,
    save_session,
)
from ..core.sse import decode_all
from .decoded import DecodedCopy, encoding_of, header_notes

MAX_ERROR_BODY = 1024 * 1024
"""The most of an HTTP error body that is kept."""
STOPPED = "stopped by the user"
"""The end detail when the caller's ``stop`` said so (the TUI closed during the stream)."""


class MissingKey(CallscopeError):
    pass


_LISTED = ("openai-responses", "openai-chat", "anthropic", "gemini-generate")
"""The order ``--provider`` has always listed protocols in; any other registered one follows."""

PROVIDERS: dict[str, LiveShape] = {
    name: SPECS[name].live
    for name in sorted(SPECS, key=lambda n: _LISTED.index(n) if n in _LISTED else len(_LISTED))}
"""Keyed by protocol name: each protocol's request shape, as its spec declares it."""

ALIASES = {"openai": "openai-responses", "gemini": "gemini-generate", "google": "gemini-generate"}
_CHAT = SPECS["openai-chat"].live
AZURE_API_VERSION = "2024-10-21"
"""The ``api-version`` an Azure request names unless ``--api-version`` or ``OPENAI_API_VERSION``
(the variable the openai SDK's ``AzureOpenAI`` reads) says another."""
VARIANTS: dict[str, tuple[str, LiveShape]] = {
    # Azure OpenAI: Chat Completions at a deployment (``--model`` names it), ``api-key`` auth,
    # the resource's endpoint from AZURE_OPENAI_ENDPOINT (as the SDK reads it).
    "azure": ("openai-chat", LiveShape(
        ("AZURE_OPENAI_API_KEY",), "AZURE_OPENAI_ENDPOINT", "",
        "/openai/deployments/{model}/chat/completions?api-version={api_version}",
        lambda key: {"api-key": key}, _CHAT.body, _CHAT.tool, system=_CHAT.system,
        tool_choice=_CHAT.tool_choice)),
}
"""Providers that speak a registered protocol with a request shape of their own."""
PROVIDER_NAMES = (*PROVIDERS, *ALIASES, *VARIANTS)


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header name (RFC 9110 5.1)."""
_NOT_IN_VALUE = re.compile(r"[\x00\r\n]")
"""What a header value never holds: it would end the header line (h11 refuses it)."""


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be sent to (one line), or None."""
    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return "it must start http:// or https://"
    try:
        parts = urlsplit(url)
    except ValueError:  # urlsplit's one refusal: a bracketed host that is not closed or valid
        return "its [IPv6 address] is not closed or not valid"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "its port is not a number from 1 to 65535"
    if not parts.hostname:
        return "it names no host"
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)[:100]
    return None


def header_problem(name: str, value: str) -> str | None:
    """Why the header ``name: value`` cannot be sent (one line, never quoting the value: it may
    be a credential), or None."""
    if not _TOKEN.fullmatch(name):
        return f"{name[:60]!r} is not a header name"
    for i, char in enumerate(value):
        if ord(char) > 0xFF:
            return (f"header {name!r}: its value has {char!r} at character {i + 1}; a header "
                    "value holds latin-1 characters only")
    if _NOT_IN_VALUE.search(value):
        return f"header {name!r}: its value has a line break or NUL"
    return None


@dataclass(frozen=True)
class LiveRequest:
    """A request :func:`record` can send: made only with an http(s) URL and sendable headers
    (:class:`~callscope.core.errors.CallscopeError` otherwise, naming what is wrong)."""

    protocol: str
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    tools: list[Any] = field(default_factory=list)
    command: str = ""

    def __post_init__(self) -> None:
        why = url_problem(self.url)
        if why is not None:
            raise CallscopeError(f"cannot send to {redact_url(self.url)[:200]!r}: {why}")
        for name, value in self.headers.items():
            why = header_problem(name, value)
            if why is not None:
                raise CallscopeError(f"cannot send the request: {why}")


def _bare(tool: Any) -> bool:
    """A provider-neutral definition ``{"name", "description"?, "parameters"?}``."""
    return isinstance(tool, dict) and "name" in tool and not (
        {"type", "function", "input_schema", "functionDeclarations"} & tool.keys())


def shape_tools(protocol: str, tools: list[Any]) -> list[Any]:
    """Tool definitions in the provider's shape. Neutral ``{name, description, parameters}``
    entries are converted; anything else is assumed to be in the provider's shape already."""
    shape = PROVIDERS.get(protocol)
    convert = shape.tool if shape is not None else function_tool
    group = shape.tool_group if shape is not None else None
    out: list[Any] = []
    grouped: list[Any] = []
    for tool in tools:
        if not _bare(tool):
            out.append(tool)
            continue
        schema = tool.get("parameters") or {"type": "object", "properties": {}}
        plain = {"name": tool["name"], **({"description": tool["description"]}
                                          if "description" in tool else {})}
        (grouped if group else out).append(convert(plain, schema))
    if group and grouped:
        out.append({group: grouped})
    return out


def provider_shape(provider: str) -> tuple[str, LiveShape]:
    """(protocol, request shape) of a ``--provider`` name."""
    if provider in VARIANTS:
        return VARIANTS[provider]
    protocol = ALIASES.get(provider, provider)
    shape = PROVIDERS.get(protocol)
    if shape is None:
        raise CallscopeError(f"unknown provider {provider!r} (one of: {', '.join(PROVIDER_NAMES)})")
    return protocol, shape


def api_key(protocol: str, shape: LiveShape, env: Mapping[str, str]) -> str:
    key = next((env[name] for name in shape.key_env if env.get(name)), None)
    if key is None:
        raise MissingKey(f"no API key for {protocol}: set {' or '.join(shape.key_env)}")
    return key


def with_headers(headers: dict[str, str], extra: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``headers`` with each of ``extra`` set (replacing a header of the same name, any case)."""
    out = dict(headers)
    for name, value in extra:
        for old in [k for k in out if k.lower() == name.lower()]:
            del out[old]
        out[name] = value
    return out


def build_request(provider: str, model: str, prompt: str, *, tools: list[Any] | None = None,
                  base_url: str | None = None, env: Mapping[str, str] | None = None,
                  max_tokens: int = 1024, system: str | None = None,
                  tool_choice: str | None = None, headers: Iterable[tuple[str, str]] = (),
                  api_version: str | None = None) -> LiveRequest:
    """The streaming request for ``provider`` (a protocol name, an alias or a variant such as
    ``azure``). ``headers`` are added last (gateways, fault headers). Raises
    :class:`MissingKey` when no API key variable is set."""
    env = os.environ if env is None else env
    protocol, shape = provider_shape(provider)
    key = api_key(protocol, shape, env)
    base = (base_url or env.get(shape.base_env) or shape.default_base).rstrip("/")
    if not base:
        raise CallscopeError(f"no base URL for {provider}: set {shape.base_env} or --base-url")
    shaped = shape_tools(protocol, list(tools or []))
    sent = with_headers({**shape.auth(key), "content-type": "application/json",
                         "accept": "text/event-stream", "accept-encoding": "identity"}, headers)
    body = {**shape.body(model, prompt, max_tokens), **({"tools": shaped} if shaped else {})}
    if system is not None:
        if shape.system is None:
            raise CallscopeError(f"--system is not offered for {provider}")
        shape.system(body, system)
    if tool_choice is not None:
        if shape.tool_choice is None:
            raise CallscopeError(f"--tool-choice is not offered for {provider}")
        member, value = shape.tool_choice(tool_choice)
        body[member] = value
    version = api_version or env.get("OPENAI_API_VERSION") or AZURE_API_VERSION
    path = shape.path.replace("{model}", model).replace("{api_version}", version)
    return LiveRequest(protocol, base + path, sent, body, shaped,
                       f"callscope live --provider {provider} --model {model}")


# -- recording ---------------------------------------------------------------------------------

@dataclass
class LiveResult:
    path: str
    end: StreamEnd
    """How the stream the engine read ended: with a decoded copy, that copy's end (an error
    where the body stopped decoding), which may differ from the raw session's transport end."""
    status: int | None = None
    size: int = 0
    chunks: int = 0
    content_type: str = ""
    content_encoding: str = ""
    """Set when the server compressed the body despite ``Accept-Encoding: identity``: the
    recorded bytes are then the compressed ones (and ``decoded_path`` the stream)."""
    decoded_path: str | None = None
    """The decoded session beside the raw one (gzip, deflate; ``net/decoded.py``)."""
    disagreements: list[str] = field(default_factory=list)
    """Where httpx-sse read the recorded bytes differently from the engine's decoder."""

    @property
    def ok(self) -> bool:
        return self.end.kind == "clean"


def _is_reset(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionResetError) or getattr(seen, "errno", None) in (
                errno.ECONNRESET, errno.EPIPE):
            return True
        seen = seen.__cause__ or seen.__context__
    return "reset by peer" in str(exc).lower()


def transport_end(exc: BaseException, at: float) -> StreamEnd:
    """The session end for a transport exception (the exception never escapes)."""
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")[:300]
    if isinstance(exc, httpx.ConnectTimeout):
        return StreamEnd("timeout", detail=f"connect timeout: {text}", at=at)
    if isinstance(exc, httpx.TimeoutException):
        return StreamEnd("timeout", detail=text, at=at)
    if isinstance(exc, httpx.ConnectError):
        return StreamEnd("error", detail=f"cannot connect: {text}", at=at)
    if _is_reset(exc):
        return StreamEnd("reset", detail=text, at=at)
    if isinstance(exc, httpx.RemoteProtocolError):
        return StreamEnd("cut", detail=text, at=at)
    return StreamEnd("error", detail=text, at=at)


def _header(request: LiveRequest, recorded_at: str, response: httpx.Response | None) -> SessionHeader:
    return SessionHeader(
        protocol=request.protocol, source="live", recorded_at=recorded_at,
        provenance=request.command or None, tools=request.tools or None,
        request={"method": "POST", "url": request.url, "headers": dict(request.headers),
                 "body": request.body},
        status=response.status_code if response is not None else None,
        response_headers=dict(response.headers.multi_items()) if response is not None else None)


def record(request: LiveRequest, path: str, *, on_chunk: Callable[[Chunk], None] | None = None,
           timeout: float = 120.0, connect_timeout: float = 10.0,
           client: httpx.Client | None = None,
           stop: Callable[[], bool] | None = None) -> LiveResult:
    """Send ``request``, write the session to ``path`` as the bytes arrive, call ``on_chunk``
    for each read. Returns how it ended; a transport fault is a result, not an exception
    (KeyboardInterrupt is re-raised once the session is saved).

    ``stop`` lets another thread end the recording: it is asked after each read, and when a
    read fails (the caller may shut the socket down to wake a stalled read); once it returns
    True the session ends as ``cut`` (:data:`STOPPED`), every byte so far kept."""
    recorded_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    own = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(timeout, connect=connect_timeout))
    start = time.monotonic()
    result = LiveResult(path, StreamEnd("missing"))
    received = bytearray()  # for the httpx-sse cross-check
    try:
        with http.stream("POST", request.url, headers=[
                (k.encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
                json=request.body) as response:
            result.status = response.status_code
            result.content_type = response.headers.get("content-type", "")
            result.content_encoding = encoding_of(response.headers)
            notes = header_notes(path, result.content_encoding) if (
                response.status_code < 400) else {}
            header = replace(_header(request, recorded_at, response), extra=notes)
            decoded = DecodedCopy.open(path, header, result.content_encoding) if notes else None
            result.decoded_path = decoded.writer.path if decoded is not None else None
            with SessionWriter(path, header) as writer:
                interrupted: BaseException | None = None
                try:
                    if response.status_code >= 400:
                        result.end = _error_end(response, start)
                    else:
                        for data in response.iter_raw():
                            chunk = Chunk(time.monotonic() - start, data)
                            writer.write(chunk)
                            result.size += len(data)
                            result.chunks += 1
                            plain = decoded.write(chunk) if decoded is not None else chunk
                            if plain is not None:  # the engine reads the stream, decoded
                                received += plain.data
                                if on_chunk is not None:
                                    on_chunk(plain)
                            if stop is not None and stop():
                                result.end = StreamEnd("cut", detail=STOPPED,
                                                       at=time.monotonic() - start)
                                break
                        else:
                            result.end = StreamEnd("clean", at=time.monotonic() - start)
                except httpx.TransportError as exc:
                    stopped = stop is not None and stop()
                    result.end = StreamEnd("cut", detail=STOPPED, at=time.monotonic() - start) if (
                        stopped) else transport_end(exc, time.monotonic() - start)
                except KeyboardInterrupt as exc:
                    result.end = StreamEnd("cut", detail="interrupted by the user",
                                           at=time.monotonic() - start)
                    interrupted = exc
                writer.finish(result.end)
                if decoded is not None:
                    decoded.finish(result.end)
                    # What is reported is the stream the engine read: the decoded copy's end
                    # (an error naming where decoding failed), as that session records it.
                    result.end = decoded.end_for(result.end)
                if interrupted is not None:
                    raise interrupted
    except httpx.TransportError as exc:  # before any response: nothing but the fact
        result.end = transport_end(exc, time.monotonic() - start)
        save_session(path, _header(request, recorded_at, None), (), result.end)
    finally:
        if own:
            http.close()
    if result.status is not None and result.status < 400:
        result.disagreements = cross_check(bytes(received))
    return result


def _error_end(response: httpx.Response, start: float) -> StreamEnd:
    body = bytearray()
    detail = None
    try:
        for data in response.iter_raw():
            body += data[:MAX_ERROR_BODY - len(body)]
            if len(body) >= MAX_ERROR_BODY:
                detail = f"body cut at {MAX_ERROR_BODY} bytes"
                break
    except httpx.TransportError as exc:
        detail = f"body incomplete: {type(exc).__name__}: {exc}"[:300]
    return StreamEnd("http_error", status=response.status_code, body=bytes(body), detail=detail,
                     at=time.monotonic() - start)


def cross_check(data: bytes, limit: int = 5) -> list[str]:
    """Compare httpx-sse's reading of the bytes with the engine's SSE decoder: the dispatched
    events (type, data) in order. Events with empty data are left out on both sides (httpx-sse
    dispatches an ``event:``-only block, which the standard does not). Returns differences."""
    import httpx_sse

    if not data:
        return []
    fake = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=data)
    try:
        theirs = [(e.event, e.data) for e in httpx_sse.EventSource(fake).iter_sse() if e.data]
    except Exception as exc:  # a third-party reader failing is itself the disagreement
        return [f"httpx-sse failed: {type(exc).__name__}: {exc}"[:200]]
    ours = [(f.event_type, f.data) for f in decode_all(data) if f.dispatch and f.data]
    found: list[str] = []
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b and len(found) < limit:
            found.append(f"event {i}: engine {a[0]!r} {a[1][:60]!r}, httpx-sse {b[0]!r} "
                         f"{b[1][:60]!r}")
    if len(ours) != len(theirs):
        found.append(f"engine dispatched {len(ours)} events, httpx-sse {len(theirs)}")
    return found


def default_path(protocol: str, directory: str = ".") -> str:
    """``live-PROTOCOL-TIME.jsonl``, numbered when that name is taken."""
    stem = os.path.join(directory, f"live-{protocol}-{datetime.now():%Y%m%d-%H%M%S}")
    path, n = f"{stem}.jsonl", 1
    while os.path.exists(path):
        n += 1
        path = f"{stem}-{n}.jsonl"
    return path
