"""``callscope serve``: a provider emulator that streams recorded sessions, with faults on request.

Each request to a provider endpoint gets the bytes of a loaded session whose protocol matches
the endpoint, at their recorded timing (scaled by ``speed``) or with a fixed ``delay`` between
chunks. Faults come from the command line (the defaults) and per request from the
``x-callscope-fault`` header or the ``callscope-fault`` query parameter, as a spec such as
``cut=120,end=reset`` (``docs/live.md`` lists the keys). Without a fault, a session replays the
way it was recorded, its ending included: a session that ended in a reset resets, one that ended
in an HTTP error answers with that status and body.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import orjson

from ..core.engine import Engine
from ..core.errors import CallscopeError
from ..core.framing import decode_all, framing_of
from ..core.providers import SPECS
from ..core.replay import Chunking, TimedBytes, rechunk
from ..core.session import Session, StreamEnd, redact_url
from .capture_rules import protocol_for_path
from .http1 import Request
from .http1_response import Responder
from .http1_server import HTTPServer
from .serve_quirks import QuirkError, known_quirk, quirked

FAULT_HEADER = "x-callscope-fault"
FAULT_PARAM = "callscope-fault"
SESSION_HEADER = "x-callscope-session"
SESSION_PARAM = "callscope-session"
DEFAULT_HOLD = 300.0
"""Seconds a stalled stream stays open (or until the client gives up)."""

ENDINGS = frozenset({"clean", "close", "reset", "stall"})
_RECORDED_ENDINGS = {"clean": "clean", "reset": "reset", "cut": "close", "timeout": "stall",
                     "error": "close", "missing": "close"}
"""How a session's recorded end is replayed (``http_error`` answers with its status instead)."""

class FaultError(CallscopeError):
    """A fault spec that cannot be applied."""


@dataclass(frozen=True)
class Faults:
    """What to do to a stream. Every field None means "as recorded"."""

    cut: int | None = None
    """End the body after this many bytes."""
    frames: int | None = None
    """End the body after this many SSE frames (blocks)."""
    end: str | None = None
    """How the body ends: clean, close (connection closed mid-body), reset, stall."""
    hold: float | None = None
    """Seconds a stall lasts before the connection is closed."""
    chunk: int | None = None
    """Re-chunk the body into pieces of this many bytes."""
    delay: float | None = None
    """Seconds between chunks (replaces the recorded timing)."""
    speed: float | None = None
    """Recorded timing divided by this (``inf``: no waiting)."""
    rate: float | None = None
    """SSE frames (events) per second: replaces the recorded timing, ``delay`` and ``speed``
    (a provider pouring events out at a steady rate, however the bytes were recorded)."""
    status: int | None = None
    """Answer with this HTTP status instead of a stream."""
    body: str | None = None
    """The body of that answer (default: a provider-shaped error JSON)."""
    session: str | None = None
    """Which loaded session to stream (index, file name or stem)."""
    quirk: str | None = None
    """A quirk profile the stream is rewritten by first (:mod:`.serve_quirks`)."""

    def merged(self, other: Faults) -> Faults:
        """These faults with every field ``other`` sets overriding them."""
        return replace(self, **{f.name: getattr(other, f.name) for f in fields(other)
                                if getattr(other, f.name) is not None})


_INT_KEYS = {"cut": "cut", "frames": "frames", "cut_frame": "frames", "chunk": "chunk",
             "status": "status"}
_FLOAT_KEYS = {"delay": "delay", "speed": "speed", "hold": "hold", "rate": "rate", "eps": "rate"}


def parse_faults(spec: str) -> Faults:
    """``key=value`` items separated by commas (``key:value`` works too). ``body=`` takes the
    rest of the spec, commas included, so it must come last. ``reset[=N]``, ``stall[=N]``,
    ``close[=N]`` and ``clean[=N]`` are short for ``end=...`` (with ``cut=N``)."""
    values: dict[str, Any] = {}
    rest = spec.strip()
    while rest:
        item, _, after = rest.partition(",")
        match = re.match(r"\s*([A-Za-z_-]+)\s*(?:[=:]\s*(.*))?\Z", item, re.DOTALL)
        if match is None:
            raise FaultError(f"bad fault item {item.strip()[:40]!r} (key=value)")
        key, value = match[1].lower().replace("-", "_"), (match[2] or "").strip()
        if key == "body":
            values["body"] = re.sub(r"\A\s*body\s*[=:]?", "", rest, count=1, flags=re.I)
            break
        rest = after.strip()
        if key in ENDINGS:
            values["end"] = key
            if value:
                values["cut"] = _number(key, value, int)
        elif key == "end":
            if value not in ENDINGS:
                raise FaultError(f"end={value!r}: one of {', '.join(sorted(ENDINGS))}")
            values["end"] = value
        elif key in _INT_KEYS:
            values[_INT_KEYS[key]] = _number(key, value, int)
        elif key in _FLOAT_KEYS:
            values[_FLOAT_KEYS[key]] = _number(key, value, float)
        elif key in ("session", "quirk"):
            values[key] = value
        else:
            raise FaultError(f"unknown fault {key!r} (cut, frames, end, reset, stall, hold, "
                             "chunk, delay, speed, rate, status, body, session, quirk)")
    return check_faults(Faults(**values))


def _number(key: str, text: str, kind: type[int] | type[float]) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise FaultError(f"{key}={text[:20]!r}: not a number") from None
    if isinstance(value, float) and math.isnan(value):
        raise FaultError(f"{key}: not a number")
    return value


def check_faults(faults: Faults) -> Faults:
    for name in ("cut", "frames", "delay", "hold"):
        value = getattr(faults, name)
        if value is not None and value < 0:
            raise FaultError(f"{name} must be >= 0")
    if faults.chunk is not None and faults.chunk < 1:
        raise FaultError("chunk must be >= 1")
    if faults.speed is not None and not faults.speed > 0:
        raise FaultError("speed must be > 0 (inf: no waiting)")
    if faults.rate is not None and not 0 < faults.rate < math.inf:
        raise FaultError("rate must be a number of events per second > 0")
    if faults.status is not None and not 400 <= faults.status <= 599:
        raise FaultError("status must be an HTTP error status (4xx/5xx)")
    if faults.end is not None and faults.end not in ENDINGS:
        raise FaultError(f"end: one of {', '.join(sorted(ENDINGS))}")
    if faults.quirk is not None and (why := known_quirk(faults.quirk)):
        raise FaultError(why)
    return faults


# -- sessions ----------------------------------------------------------------------------------

@dataclass
class Loaded:
    """A session held in memory, ready to be streamed again and again."""

    name: str
    protocol: str
    chunks: list[TimedBytes]
    end: StreamEnd
    content_type: str = "text/event-stream"
    _frame_ends: list[int] | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.chunks)

    @property
    def frame_ends(self) -> list[int]:
        """The byte offset just past each SSE frame (block) of the session, computed once."""
        if self._frame_ends is None:
            data = b"".join(d for _, d in self.chunks)
            self._frame_ends = [f.end for f in decode_all(data, framing_of(self.protocol))]
        return self._frame_ends

    def frame_end(self, count: int) -> int:
        """The byte offset just past the first ``count`` frames."""
        ends = self.frame_ends
        if count == 0:
            return 0
        return ends[min(count, len(ends)) - 1] if ends else 0


def load(path: str, session: Session | None = None) -> Loaded:
    """Read a session (any input ``open_input`` accepts) into memory; its protocol comes from
    its header, else from detection over its bytes."""
    if session is None:
        from ..core.importers import open_input

        session = open_input(path)
    chunks: list[TimedBytes] = [(c.t, c.data) for c in session.chunks()]
    protocol = session.header.protocol
    if not protocol:
        engine = Engine()
        for _, data in chunks:
            engine.feed(data)
        protocol = engine.state.protocol
    # The protocol's stream type (its spec says), with the parameters the recording had.
    content_type = SPECS[protocol].content_type if protocol in SPECS else "text/event-stream"
    for name, value in (session.header.response_headers or {}).items():
        if name.lower() == "content-type" and value.lower().startswith(content_type):
            content_type = value
    return Loaded(os.path.basename(path), protocol, chunks, session.end, content_type)


def _stem(name: str) -> str:
    return name.split(".", 1)[0]


# -- the emulator ------------------------------------------------------------------------------

class Emulator:
    """The request handler of ``callscope serve``. Sessions of one protocol are served in turn
    (round robin), so an agent loop gets its recorded turns in order."""

    def __init__(self, sessions: Sequence[Loaded], defaults: Faults = Faults(),
                 log: Callable[[str], None] | None = None) -> None:
        if not sessions:
            raise CallscopeError("serve needs at least one session")
        self.sessions = list(sessions)
        self.defaults = check_faults(defaults)
        self.log = log or (lambda line: None)
        self._turns: dict[str, int] = {}

    def named(self, name: str, protocol: str | None) -> list[Loaded]:
        """The sessions ``name`` (an index, a file name or a stem) names, those of the
        endpoint's ``protocol`` first: names are unique per protocol, not across them."""
        found = [s for i, s in enumerate(self.sessions, 1) if name in (str(i), s.name, _stem(s.name))]
        return sorted(found, key=lambda s: s.protocol != protocol)

    def pick(self, protocol: str | None, name: str | None) -> Loaded | None:
        """The session to serve at an endpoint of ``protocol``: the one named (of that
        protocol only), or the next of that protocol in turn."""
        if name:
            return next((s for s in self.named(name, protocol) if s.protocol == protocol), None)
        matching = [s for s in self.sessions if s.protocol == protocol]
        if not matching:
            return None
        turn = self._turns.get(protocol or "", 0)
        self._turns[protocol or ""] = turn + 1
        return matching[turn % len(matching)]

    async def handle(self, request: Request, out: Responder) -> None:
        where = f"{request.method} {redact_url(request.target)}"
        if request.method == "GET" and request.path in ("/", "/callscope"):
            await self._index(out)
            return
        protocol = protocol_for_path(request.path)
        if protocol is None:
            self.log(f"{where} -> 404")
            await _json(out, 404, {"error": {"message": f"callscope serve: no endpoint "
                                             f"{request.path[:80]!r}", "type": "not_found"}})
            return
        try:
            faults = self.defaults
            for spec in (request.header(FAULT_HEADER), *request.query.get(FAULT_PARAM, ())):
                if spec:
                    faults = faults.merged(parse_faults(spec))
        except FaultError as exc:
            self.log(f"{where} -> 400 ({exc})")
            await _json(out, 400, {"error": {"message": f"callscope serve: {exc}",
                                             "type": "invalid_request_error"}})
            return
        problem = _not_streaming(request, protocol)
        if problem:
            self.log(f"{where} -> 400 ({problem})")
            await _json(out, 400, {"error": {"message": f"callscope serve: {problem}",
                                             "type": "invalid_request_error"}})
            return
        name = (request.header(SESSION_HEADER) or next(iter(request.query.get(SESSION_PARAM, ())),
                                                        None) or faults.session)
        session = self.pick(protocol, name)
        if session is None:
            await self._no_session(out, where, protocol, name)
            return
        try:
            session = quirked(session, faults.quirk)
        except QuirkError as exc:
            self.log(f"{where} -> 400 ({exc})")
            await _json(out, 400, {"error": {"message": f"callscope serve: {exc}",
                                             "type": "invalid_request_error"}})
            return
        result = "stopped"  # what the log says if the server is closed mid-stream
        try:
            result = await self.stream(session, faults, out)
        except (ConnectionError, OSError):
            result = f"the client went away after {out.bytes_sent} B"
            raise
        finally:
            self.log(f"{where} -> {session.name} ({session.protocol}): {result}")

    async def _no_session(self, out: Responder, where: str, protocol: str,
                          name: str | None) -> None:
        others = self.named(name, protocol) if name else []
        if others:  # named, but of another protocol: serving it here would mislead the client
            other = others[0]
            message = (f"session {name!r} is {other.protocol}, not {protocol}: this endpoint "
                       f"serves {protocol} sessions only")
            self.log(f"{where} -> 409 ({message})")
            await _json(out, 409, {"error": {"message": f"callscope serve: {message}",
                                             "type": "invalid_request_error"}})
            return
        loaded = ", ".join(f"{s.name} ({s.protocol})" for s in self.sessions)
        what = f"{protocol} session {name!r}" if name else f"{protocol} session"
        self.log(f"{where} -> 404 (no {what})")
        await _json(out, 404, {"error": {"message": f"callscope serve: no {what}; loaded: "
                                         f"{loaded}", "type": "not_found"}})

    async def stream(self, session: Loaded, faults: Faults, out: Responder) -> str:
        """Answer with ``session`` under ``faults``; returns a short description of what was sent."""
        status, body = faults.status, faults.body
        if status is None and faults.cut is None and faults.frames is None and (
                session.end.kind == "http_error"):
            status = session.end.status or 500
            body = (session.end.body or b"").decode("utf-8", "replace") if body is None else body
        if status is not None:
            spec = SPECS.get(session.protocol, SPECS["openai-chat"])
            shaped = spec.error_body(status)
            payload = body.encode() if body is not None else orjson.dumps(shaped)
            await out.send_full(status, [("content-type", "application/json"),
                                         *spec.error_headers(status, shaped)], payload)
            return f"HTTP {status}"
        cut = faults.cut
        if faults.frames is not None:
            at = session.frame_end(faults.frames)
            cut = at if cut is None else min(cut, at)
        ending = faults.end or (_RECORDED_ENDINGS[session.end.kind] if cut is None else "close")
        await out.start(200, [("content-type", session.content_type),
                              ("cache-control", "no-cache"),
                              ("x-callscope-session", session.name)])
        pieces = _pieces(session.chunks, faults.chunk, cut)
        if faults.rate is not None:
            pieces = _paced(pieces, session.frame_ends, faults.rate)
        await self._send(pieces, faults, out)
        if ending == "clean":
            await out.end()
        elif ending == "reset":
            await out.reset()
        elif ending == "stall":
            await out.hold(faults.hold if faults.hold is not None else DEFAULT_HOLD)
        else:
            await out.close()
        return f"{out.bytes_sent} B, {ending}"

    async def _send(self, pieces: Iterable[TimedBytes], faults: Faults, out: Responder) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        speed = 1.0 if faults.rate is not None else faults.speed or 1.0
        for i, (t, data) in enumerate(pieces):
            if faults.delay is not None and faults.rate is None:
                if i and faults.delay:
                    await asyncio.sleep(faults.delay)
            elif t is not None and math.isfinite(speed):
                wait = start + t / speed - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
            await out.send(data)

    async def _index(self, out: Responder) -> None:
        lines = ["callscope serve: sessions", *(
            f"{i}. {s.name}  {s.protocol}  {s.size} B  end={s.end.kind}"
            for i, s in enumerate(self.sessions, 1))]
        await out.send_full(200, [("content-type", "text/plain; charset=utf-8")],
                            ("\n".join(lines) + "\n").encode())


def _pieces(chunks: list[TimedBytes], size: int | None, cut: int | None) -> Iterator[TimedBytes]:
    chunking = Chunking("bytes", size=size) if size else Chunking("recorded")
    return rechunk(chunks, chunking, cut)


def _paced(pieces: Iterable[TimedBytes], frame_ends: list[int], rate: float) -> Iterator[TimedBytes]:
    """The pieces re-timed for ``rate`` frames a second: a piece goes out once every frame that
    ends before its first byte is due (frame k at k / rate), so N frames take (N - 1) / rate
    seconds however the bytes are cut. Pieces that fall due together are sent back to back
    (``_send`` sleeps only when the next one is not due yet), so the pace holds at tens of
    thousands of events a second, where one sleep per piece would not."""
    offset = 0
    for _, data in pieces:
        yield bisect.bisect_right(frame_ends, offset) / rate, data
        offset += len(data)


def _not_streaming(request: Request, protocol: str) -> str | None:
    """Why the request does not ask for a stream (the emulator only streams), or None. How a
    request asks is the protocol's spec's: a query switch, a route that always streams or a
    ``"stream"`` member that defaults to true, else ``"stream": true``."""
    if request.method != "POST":
        return f"{request.method} is not supported here; POST a streaming request"
    spec = SPECS.get(protocol)
    switch = spec.stream_query if spec is not None else None
    if switch is not None:
        name, value = switch
        return None if value in request.query.get(name, []) else \
            f"add ?{name}={value} (the emulator streams SSE only)"
    try:
        body = orjson.loads(request.body) if request.body else {}
    except orjson.JSONDecodeError:
        return "the request body is not JSON"
    if isinstance(body, dict) and body.get("stream", spec is not None and spec.stream_default) \
            is not True:
        return 'the emulator only streams: set "stream": true'
    return None


async def _json(out: Responder, status: int, obj: Any) -> None:
    await out.send_full(status, [("content-type", "application/json")], orjson.dumps(obj))


def make_server(emulator: Emulator, port: int = 0) -> HTTPServer:
    return HTTPServer(emulator.handle, port=port)
