"""How ``callscope serve`` sends a loaded session under faults: timing, cuts and endings.

Without a fault a session goes out the way it was recorded: at its recorded timing, its ending
included (a session that ended in a reset resets, one that ended in an HTTP error answers with
that status and body). A cut ends the body early and, unless an ending is given, closes the
connection there; ``rate`` paces by frames, ``delay`` and ``speed`` by the recorded pieces.
"""

from __future__ import annotations

import asyncio
import bisect
import math
from collections.abc import Iterable, Iterator

import orjson

from ..core.providers import SPECS
from ..core.replay import Chunking, TimedBytes, rechunk
from .http1_response import Responder
from .serve_faults import Faults
from .serve_sessions import Loaded

DEFAULT_HOLD = 300.0
"""Seconds a stalled stream stays open (or until the client gives up)."""
_RECORDED_ENDINGS = {"clean": "clean", "reset": "reset", "cut": "close", "timeout": "stall",
                     "error": "close", "missing": "close"}
"""How a session's recorded end is replayed (``http_error`` answers with its status instead)."""


def header_text(text: str) -> str:
    """``text`` as a header value can carry it: each character that is not printable (a
    control character would end or split the header; a lone surrogate, from a file name's
    bytes that are not text, has no encoding) written as its Python escape (``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


async def stream_session(session: Loaded, faults: Faults, out: Responder) -> str:
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
                          ("x-callscope-session", header_text(session.name))])
    pieces = _pieces(session.chunks, faults.chunk, cut)
    if faults.rate is not None:
        pieces = _paced(pieces, session.frame_ends, faults.rate)
    await _send(pieces, faults, out)
    if ending == "clean":
        await out.end()
    elif ending == "reset":
        await out.reset()
    elif ending == "stall":
        await out.hold(faults.hold if faults.hold is not None else DEFAULT_HOLD)
    else:
        await out.close()
    return f"{out.bytes_sent} B, {ending}"


async def _send(pieces: Iterable[TimedBytes], faults: Faults, out: Responder) -> None:
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
