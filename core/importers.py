"""Every input a session can come from: session files, raw captures, HAR exports.

:func:`open_input` looks at the content, not the name: a HAR starts with ``{"log":``, a
session file with a JSON object line, and anything else is a raw capture taken byte for byte
as one chunk, in the framing its first byte says (:func:`.framing.sniff`): SSE (``curl -N``
output), the AWS event stream (Bedrock, a zero byte first: its prelude CRC32 must hold), or
NDJSON (a first line that a protocol framed as NDJSON recognises, as Ollama's). ``FILE.har#2``
picks the second streamed response of a HAR. Nothing here executes or evaluates what it reads;
it only parses JSON and base64.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import re
from collections.abc import Iterator
from typing import Any

import orjson

from .errors import InputError
from .framing import decode_all
from .framing import sniff as sniff_framing
from .inert import nested_deeper
from .providers import SPECS
from .session import (
    Chunk,
    Session,
    SessionHeader,
    StreamEnd,
    open_session,
    redact_body,
    redact_headers,
    redact_text,
    redact_url,
)

MAX_IMPORT_BYTES = 256 * 1024 * 1024
"""The largest raw SSE or HAR file accepted: both are read whole (a raw capture is one
chunk, and a HAR is one JSON document). Read at call time, so tests may lower it."""

_SNIFF_BYTES = 4096
_BOM = b"\xef\xbb\xbf"
_HAR_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\{\s*\"log\"\s*:")
_SELECTOR = re.compile(r"\A(?P<path>.+)#(?P<n>[^#]*)\Z", re.DOTALL)
# A body "looks like SSE" when its first non-blank line is a field or a comment and some line
# is a data field: enough to find streams that a tool saved with a generic content type.
_SSE_START = re.compile(rb"\A(?:\xef\xbb\xbf)?(?:[ \t]*\r?\n)*(?:data|event|id|retry|:)")
_SSE_DATA = re.compile(rb"^data(?::|\r?$)", re.MULTILINE)

MAX_BODY_DEPTH = 250
"""Nesting of a request body kept as JSON, by every writer of a session header (the HAR
importer, the proxy's and the mitmproxy addon's request records): the header holds it two levels
down (``request.body``) and a session line nests at most 254 levels. Deeper bodies are kept as
text (``body_text``)."""


def split_selector(path: str) -> tuple[str, int | None]:
    """``FILE#N`` -> (FILE, N) when FILE exists and ``FILE#N`` itself does not."""
    match = _SELECTOR.match(path)
    if match and not os.path.exists(path) and os.path.exists(match["path"]):
        if not match["n"].isascii() or not match["n"].isdigit():
            raise InputError(path, f"#{match['n']} is not a response number: FILE#N picks the "
                                   f"N-th streamed response of a HAR, counted from 1")
        return match["path"], int(match["n"])
    return path, None


def sniff(head: bytes, path: str = "") -> str:
    """``har``, ``session`` or ``sse``, from a file's first bytes (a ``.har`` name counts for a
    JSON document whose first member is not ``log``)."""
    if _HAR_START.match(head) or path.lower().endswith(".har"):
        return "har"
    if head.removeprefix(_BOM).lstrip().startswith(b"{"):
        if path.lower().endswith(".har"):
            return "har"
        return "sse" if _ndjson_capture(head) else "session"
    return "sse"


def _ndjson_capture(head: bytes) -> bool:
    """Whether the first line is a frame of a protocol framed as NDJSON (a session file's first
    line is its header, which no protocol recognises)."""
    line = head.split(b"\n", 1)[0] + b"\n"
    frames = decode_all(line, "ndjson")
    try:
        payload = orjson.loads(frames[0].data) if frames else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(payload, dict) and any(
        spec.framing == "ndjson" and spec.recognise(frames[0], payload) for spec in SPECS.values())


def open_input(path: str) -> Session:
    """Open anything accepted where a session is: a session file, a HAR (``FILE#N`` for its
    N-th streamed response, 1-based), or a raw SSE capture. Raises :class:`InputError`."""
    real, selector = split_selector(path)
    try:
        with open(real, "rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if not head and real.lower().endswith((".jsonl", ".har")):
        raise InputError(real, "empty file")
    kind = sniff(head, real)  # (an empty capture is a stream that sent nothing: zero bytes)
    if kind == "har":
        return open_har(real, 1 if selector is None else selector)
    if selector is not None:
        raise InputError(path, f"#{selector} picks a response of a HAR file, and {real} is "
                         f"a {'session file' if kind == 'session' else 'raw SSE capture'}")
    return open_session(real) if kind == "session" else open_sse(real)


def _read_limited(path: str, *, empty: bool = False) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise InputError(path, f"larger than the import limit of {MAX_IMPORT_BYTES} bytes")
    if not data and not empty:
        raise InputError(path, "empty file")
    return data


# -- raw SSE -----------------------------------------------------------------------------------

SSE_SNIFF_BYTES = 64 * 1024
"""How far into a raw capture :func:`not_sse` looks for an event stream."""


_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def _cut_at_start(head: bytes) -> bool:
    """A stream cut inside its BOM or its first field name (a cut sweep reads every prefix)."""
    if len(head) < len(_BOM) and _BOM.startswith(head):
        return True
    rest = head.removeprefix(_BOM).lstrip(b"\r\n")
    return not rest or (b"\n" not in rest and b"\r" not in rest
                        and any(name.startswith(rest) for name in _FIELDS))


def not_sse(head: bytes) -> tuple[int, str] | None:
    """Why bytes that should start an event stream do not, with the byte offset; None when they
    do. Anything with an SSE field where the stream starts, or a ``data`` line anywhere in
    ``head`` (after a proxy's status line and headers, say), is taken exactly as it is, invalid
    UTF-8 and all: a hostile stream is for showing, not refusing."""
    if not head or _SSE_START.match(head) or _SSE_DATA.search(head) or _cut_at_start(head):
        return None
    framing = sniff_framing(head)
    if framing == "ndjson" and _ndjson_capture(head):
        return None
    if framing == "aws-eventstream":
        problem = _not_eventstream(head)
        if problem is None:
            return None
        return 0, f"binary data at byte 0: not an event stream (nor an AWS event stream: {problem})"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return 0, "not UTF-8 at byte 0 (a UTF-16 byte-order mark): an event stream is UTF-8"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":  # (a cut tail is not a wrong encoding)
            return exc.start, f"not UTF-8 at byte {exc.start}: not an event stream"
    nul = head.find(b"\0")
    if nul >= 0:
        return nul, f"binary data at byte {nul}: not an event stream"
    return 0, (f"no SSE field (data:, event:, id:, retry: or a ':' comment) in the first "
               f"{len(head)} bytes: not an event stream")

def _not_eventstream(head: bytes) -> str | None:
    """Why bytes with a zero byte first are not an AWS event stream (its first prelude, whole
    and checked); None when they are, or when they end inside that prelude (a cut)."""
    from .aws_eventstream import PRELUDE, EventStreamDecoder  # (SSE inputs need not load it)

    if len(head) < PRELUDE:
        return None
    frames = EventStreamDecoder().feed(head[:PRELUDE])
    if frames and frames[0].fault is not None:
        return frames[0].fault[1]
    return None


RAW_KINDS = {"sse": "raw SSE capture", "aws-eventstream": "raw AWS event-stream capture",
             "ndjson": "raw NDJSON capture"}
"""A raw capture's framing -> how its provenance names it."""


def open_sse(path: str) -> Session:
    """A raw capture (SSE, AWS event stream or NDJSON): the whole file is one chunk at t=0,
    exactly (BOM, CR, invalid UTF-8 and all), and the stream ended cleanly. The file is re-read
    each time chunks are iterated."""
    data = _read_limited(path, empty=True)  # fail now, not at the first iteration
    refusal = not_sse(data[:SSE_SNIFF_BYTES])
    if refusal is not None:
        raise InputError(path, refusal[1], offset=refusal[0])

    def chunks() -> Iterator[Chunk]:
        data = _read_limited(path, empty=True)
        if data:
            yield Chunk(0.0, data)

    framing = sniff_framing(data[:1])
    header = SessionHeader(source="import:sse" if framing == "sse" else f"import:{framing}",
                           provenance=f"{RAW_KINDS[framing]} {os.path.basename(path)}")
    return Session(header, chunks, StreamEnd("clean"), path=path)


# -- HAR ---------------------------------------------------------------------------------------

def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _content_type(response: dict[str, Any]) -> str:
    mime = _obj(response.get("content")).get("mimeType")
    if isinstance(mime, str) and mime:
        return mime.lower()
    for h in _list(response.get("headers")):
        if isinstance(h, dict) and str(h.get("name", "")).lower() == "content-type":
            return str(h.get("value", "")).lower()
    return ""


def _stream_body(path: str, number: int, entry: dict[str, Any]) -> bytes | None:
    """The body of an entry whose response is an event stream, else None. A declared event
    stream with undecodable base64 is an error; any other entry that does not decode is just
    not a stream."""
    response = _obj(entry.get("response"))
    content = _obj(response.get("content"))
    declared = _content_type(response).startswith("text/event-stream")
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            body = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            if declared:
                raise InputError(path, f"entry {number}: response.content.text is not valid "
                                 f"base64: {exc}") from None
            return None
    else:
        # HAR keeps decoded text: bytes are exact only when the tool used base64.
        body = text.encode("utf-8")
    if declared or (_SSE_START.match(body) and _SSE_DATA.search(body)):
        return body
    return None


def _describe(entry: dict[str, Any]) -> str:
    request = _obj(entry.get("request"))
    return f"{request.get('method', '?')} {redact_url(str(request.get('url', '?')))}"[:120]


def _har_request(entry: dict[str, Any]) -> tuple[dict[str, Any], list[Any] | None]:
    """The request as a session stores it, and the tools its JSON body declares."""
    request = _obj(entry.get("request"))
    # HTTP/2 pseudo-headers (":path" ...) repeat the method and URL, unredacted.
    headers = [h for h in _list(request.get("headers"))
               if isinstance(h, dict) and not str(h.get("name", "")).startswith(":")]
    out: dict[str, Any] = {"method": request.get("method"),
                           "url": redact_url(str(request.get("url", ""))),
                           "headers": redact_headers(headers)}
    text = _obj(request.get("postData")).get("text")
    tools = None
    if isinstance(text, str):
        try:
            body = orjson.loads(text)
        except orjson.JSONDecodeError:
            out["body_text"] = redact_text(text)
        else:
            if nested_deeper(text.encode("utf-8", "surrogatepass"), body, MAX_BODY_DEPTH):
                # kept whole, as text: a session header could not hold it
                out["body_text"] = redact_text(text)
            else:
                out["body"] = redact_body(body)
                if isinstance(body, dict) and isinstance(body.get("tools"), list):
                    tools = body["tools"]
    return out, tools


def _ms(timings: dict[str, Any], *names: str) -> float | None:
    """The sum of HAR timings in seconds, or None when one is unknown (HAR writes -1) or the
    sum is not a finite time (``1e308`` twice is infinity: no chunk can be placed there)."""
    values = [timings.get(n) for n in names]
    if all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values):
        total = sum(values) / 1000  # type: ignore[arg-type]  # checked just above
        return total if math.isfinite(total) else None
    return None


def open_har(path: str, pick: int = 1) -> Session:
    """The ``pick``-th (1-based) entry of a HAR whose response is an event stream (by content
    type, or by a body that looks like SSE): its body as one chunk at the time of the first
    byte, the request (redacted, body parsed when JSON), the status and response headers."""
    data = _read_limited(path)
    try:
        doc = orjson.loads(data.removeprefix(_BOM))
    except orjson.JSONDecodeError as exc:
        raise InputError(path, f"not a HAR file: bad JSON at column {exc.colno}: {exc.msg}",
                         line=exc.lineno) from None
    entries = _obj(_obj(doc).get("log")).get("entries")
    if not isinstance(entries, list):
        raise InputError(path, "not a HAR file: no log.entries list")
    streams = [(number, entry, body) for number, entry in enumerate(entries, 1)
               if isinstance(entry, dict)
               and (body := _stream_body(path, number, entry)) is not None]
    if not streams:
        raise InputError(path, f"no streamed response in this HAR: none of its {len(entries)} "
                         "entries has a text/event-stream body (or a body that looks like SSE)")
    if not 1 <= pick <= len(streams):
        listed = "; ".join(f"#{i} {_describe(e)}" for i, (_, e, _) in enumerate(streams, 1))
        raise InputError(path, f"#{pick}: this HAR has {len(streams)} streamed "
                         f"response(s): {listed[:400]}")
    number, entry, body = streams[pick - 1]
    response = _obj(entry.get("response"))
    request, tools = _har_request(entry)
    status = response.get("status")
    provenance = f"HAR {os.path.basename(path)}: entry {number} of {len(entries)}"
    if len(streams) > 1:
        provenance += f", streamed response #{pick} of {len(streams)} (FILE#N picks another)"
    started = entry.get("startedDateTime")
    header = SessionHeader(
        source="import:har",
        request=request,
        tools=tools,
        recorded_at=started if isinstance(started, str) else None,
        provenance=provenance,
        status=status if type(status) is int and status > 0 else None,  # HAR: 0 = no response
        response_headers=redact_headers([h for h in _list(response.get("headers"))
                                         if isinstance(h, dict)]),
    )
    timings = _obj(entry.get("timings"))
    first_byte = _ms(timings, "send", "wait")
    last_byte = _ms(timings, "send", "wait", "receive")
    chunks = [Chunk(first_byte or 0.0, body)] if body else []
    error = response.get("_error")  # Chrome's failure text, e.g. net::ERR_CONNECTION_RESET
    if isinstance(error, str) and error:
        end = StreamEnd("error", detail=f"the HAR says: {error}", at=last_byte)
    else:
        end = StreamEnd("clean", at=last_byte)
    return Session.from_chunks(header, chunks, end, path=path)
