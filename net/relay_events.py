"""The proxy's capture facts as JSON lines on a pipe: how the relay, in its own process, feeds
the debugger.

With the debugger in the same interpreter, the relay waited for the screen's share of the
interpreter lock: 20 concurrent streams had their first byte three times later than headless
(``python -m bench.proxy_bench``). So ``callscope proxy`` in the debugger runs the relay as a
child process (``callscope proxy --headless --events``) that writes every fact to its standard
output through :class:`EventPipe`, and the debugger reads them (:func:`read_event`) in a thread
of its own. The relay never waits for the debugger: facts are queued and written by a writer
thread (the pipe may be full while the screen is busy; the network is not slowed by it).

One line per fact: ``{"e": "url"|"log"|"started"|"chunk"|"ended", ...}``; bytes in base64.
"""

from __future__ import annotations

import base64
import queue
import threading
from dataclasses import dataclass
from typing import IO, Any

import orjson

from ..core.session import Chunk, SessionHeader, StreamEnd

_HEADER_FIELDS = ("protocol", "request", "tools", "source", "recorded_at", "provenance",
                  "status", "response_headers", "extra")
_STOP = b""


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
    """A :class:`~callscope.net.proxy.CaptureObserver` (and log) writing lines to ``out``."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="callscope-events", daemon=True)
        self._thread.start()

    def _put(self, obj: dict[str, Any]) -> None:
        self._queue.put(orjson.dumps(obj) + b"\n")

    def _write(self) -> None:
        while True:
            lines = [self._queue.get()]
            while not self._queue.empty() and len(lines) < 1000:  # a burst in one write
                lines.append(self._queue.get())
            stop = _STOP in lines
            try:
                self._out.write(b"".join(lines))
                self._out.flush()
            except (OSError, ValueError):
                return  # the debugger went away: the sessions are on disk all the same
            if stop:
                return

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued, then stop the writer."""
        self._queue.put(_STOP)
        self._thread.join(timeout)

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
