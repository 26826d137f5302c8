"""The proxy's capture facts as JSON lines on a pipe: how the relay, in its own process, feeds
the debugger.

With the debugger in the same interpreter, the relay waited for the screen's share of the
interpreter lock: 20 concurrent streams had their first byte three times later than headless
(``python -m bench.proxy_bench``). So ``callscope proxy`` in the debugger runs the relay as a
child process (``callscope proxy --headless --events``) that writes every fact to its standard
output through :class:`EventPipe`, and the debugger reads them (:func:`read_event`) in a thread
of its own. The relay never waits for the debugger: a full pipe (the screen is busy) holds
the facts in memory, not the network.

One line per fact: ``{"e": "url"|"log"|"started"|"chunk"|"ended", ...}``; bytes in base64.
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.session import Chunk, SessionHeader, StreamEnd

_HEADER_FIELDS = ("protocol", "request", "tools", "source", "recorded_at", "provenance",
                  "status", "response_headers", "extra")


@dataclass(frozen=True, slots=True)
class Event:
    """One fact read from the pipe; the fields that are not the fact's are None."""

    kind: str
    path: str | None = None
    header: SessionHeader | None = None
    chunk: Chunk | None = None
    end: StreamEnd | None = None
    text: str | None = None
    """The URL (``url``) or the log line (``log``)."""


class EventPipe:
    """A :class:`~callscope.net.proxy.CaptureObserver` (and log) writing lines to the file
    descriptor ``fd`` from the relay's event loop, never blocking it: the descriptor is made
    non-blocking, lines are gathered and written once per loop iteration, and while the pipe is
    full (the debugger is busy) they wait in memory until the loop sees it writable. No thread:
    a writer thread would take the interpreter lock from the relay at every wake-up."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        """Set while the loop watches the descriptor for room."""
        self._broken = False
        os.set_blocking(fd, False)

    def _put(self, obj: dict[str, Any]) -> None:
        if self._broken:
            return
        self._buffer += orjson.dumps(obj) + b"\n"
        if self._scheduled or self._loop is not None:
            return
        try:
            asyncio.get_running_loop().call_soon(self._flush)
            self._scheduled = True
        except RuntimeError:  # no loop (a fact after it closed): write now
            self._flush()

    def _flush(self) -> None:
        self._scheduled = False
        while self._buffer:
            try:
                written = os.write(self._fd, self._buffer)
            except BlockingIOError:
                if self._loop is None:
                    self._loop = asyncio.get_running_loop()
                    self._loop.add_writer(self._fd, self._writable)
                return
            except OSError:  # the debugger went away: the sessions are on disk all the same
                self._broken = True
                self._buffer.clear()
                return
            del self._buffer[:written]

    def _writable(self) -> None:
        if self._loop is not None:
            self._loop.remove_writer(self._fd)
            self._loop = None
        self._flush()

    def close(self) -> None:
        """Write what is left, blocking (the loop has ended: the last facts are the ends of
        the streams the stop cut)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_writer(self._fd)
        self._loop = None
        os.set_blocking(self._fd, True)
        self._flush()

    def listening(self, url: str) -> None:
        self._put({"e": "url", "text": url})

    def log(self, line: str) -> None:
        self._put({"e": "log", "text": line})

    def started(self, path: str, header: SessionHeader) -> None:
        self._put({"e": "started", "path": path,
                   "header": {name: getattr(header, name) for name in _HEADER_FIELDS}})

    def chunk(self, path: str, chunk: Chunk) -> None:
        self._put({"e": "chunk", "path": path, "t": chunk.t,
                   "b64": base64.b64encode(chunk.data).decode("ascii")})

    def ended(self, path: str, end: StreamEnd) -> None:
        self._put({"e": "ended", "path": path, "kind": end.kind, "status": end.status,
                   "detail": end.detail, "at": end.at,
                   "body": base64.b64encode(end.body).decode("ascii") if end.body is not None
                   else None})


def read_event(line: bytes) -> Event | None:
    """The fact on one line, or None for a line that is none (the child's own output)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("e"), str):
        return None
    kind, path = obj["e"], obj.get("path")
    if kind in ("url", "log"):
        return Event(kind, text=str(obj.get("text", "")))
    if not isinstance(path, str):
        return None
    if kind == "started":
        fields = obj.get("header") or {}
        return Event(kind, path, header=SessionHeader(**{
            name: fields[name] for name in _HEADER_FIELDS if fields.get(name) is not None}))
    if kind == "chunk":
        return Event(kind, path, chunk=Chunk(float(obj["t"]), base64.b64decode(obj["b64"])))
    if kind == "ended":
        body = obj.get("body")
        return Event(kind, path, end=StreamEnd(
            obj["kind"], status=obj.get("status"), detail=obj.get("detail"), at=obj.get("at"),
            body=base64.b64decode(body) if body is not None else None))
    return None
