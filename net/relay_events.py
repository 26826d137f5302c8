"""The proxy's capture facts as JSON lines on a pipe: how the relay, in its own process, feeds
the debugger.

With the debugger in the same interpreter, the relay waited for the screen's share of the
interpreter lock: 20 concurrent streams had their first byte three times later than headless
(``python -m bench.proxy_bench``). So ``callscope proxy`` in the debugger runs the relay as a
child process (``callscope proxy --headless --events``) that writes every fact to its standard
output through :class:`EventPipe`, and the debugger reads them (:func:`read_event`) in a thread
of its own. The relay never waits for the debugger: a full pipe (the screen is busy) holds
the facts in memory, not the network.

A capture's start and end (and log lines) are written on the relay loop's next turn; its reads
are gathered and written at most every :data:`PROGRESS` seconds, one line per capture for all
the reads since (written at once before the capture's end, or when :data:`PROGRESS_BYTES` wait).
20 streams read 10 ms apart were 2,000 lines and pipe writes a second, each waking the
debugger's reader; gathered, they are a few dozen (measured: ``python -m bench.proxy_bench``).

One line per fact: ``{"e": "url"|"log"|"started"|"chunks"|"ended", ...}``; bytes in base64
(a ``chunks`` line: ``t`` and ``n``, the time and size of each read, and ``b64``, their bytes
one after the other).
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.session import Chunk, SessionHeader, StreamEnd

PROGRESS = 0.025
"""Seconds the reads of a capture may wait before they are written (the debugger refreshes a
followed capture every 50 ms: what it shows is no later for it)."""
PROGRESS_BYTES = 256 * 1024
"""Bytes of reads waiting that are written without waiting for :data:`PROGRESS`."""
MAX_LINE = 64 * 1024 * 1024
"""The longest line :func:`read_event` decodes (a ``chunks`` line holds at most
:data:`PROGRESS_BYTES` and one read: anything longer is not the relay's)."""

_HEADER_FIELDS = ("protocol", "request", "tools", "source", "recorded_at", "provenance",
                  "status", "response_headers", "extra")


@dataclass(frozen=True, slots=True)
class Event:
    """One fact read from the pipe; the fields that are not the fact's are None."""

    kind: str
    path: str | None = None
    header: SessionHeader | None = None
    chunks: tuple[Chunk, ...] = ()
    """The reads of a ``chunks`` fact, in order."""
    end: StreamEnd | None = None
    text: str | None = None
    """The URL (``url``) or the log line (``log``)."""


class EventPipe:
    """A :class:`~callscope.net.proxy.CaptureObserver` (and log) writing lines to the file
    descriptor ``fd`` from the relay's event loop, never blocking it: the descriptor is made
    non-blocking, lines are gathered and written once per loop iteration (reads: once per
    :data:`PROGRESS`), and while the pipe is full (the debugger is busy) they wait in memory
    until the loop sees it writable. No thread: a writer thread would take the interpreter lock
    from the relay at every wake-up."""

    def __init__(self, fd: int, *, progress: float = PROGRESS) -> None:
        self._fd = fd
        self._progress = progress
        self._buffer = bytearray()
        self._reads: dict[str, list[Chunk]] = {}
        """Reads not yet written, by capture (in the order the captures first had one)."""
        self._read_bytes = 0
        self._soon: asyncio.Handle | None = None
        """A flush on the loop's next turn (a start, an end, a log line, or many reads)."""
        self._later: asyncio.TimerHandle | None = None
        """The flush of the reads, at most :data:`PROGRESS` after the first one waiting."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """Set while the loop watches the descriptor for room."""
        self._broken = False
        os.set_blocking(fd, False)

    def _running_loop(self) -> asyncio.AbstractEventLoop | None:
        try:
            return asyncio.get_running_loop()
        except RuntimeError:  # no loop (a fact after it closed)
            return None

    def _put(self, obj: dict[str, Any]) -> None:
        if self._broken:
            return
        self._buffer += orjson.dumps(obj) + b"\n"
        self._flush_soon()

    def _flush_soon(self) -> None:
        if self._soon is not None or self._loop is not None:
            return  # a flush is due, or the pipe is full: the loop writes when it has room
        loop = self._running_loop()
        if loop is None:
            self._flush()
        else:
            self._soon = loop.call_soon(self._flush)

    def _gather(self, path: str | None = None) -> None:
        """The reads waiting (of ``path`` only, or all) into the buffer, a line per capture."""
        paths = list(self._reads) if path is None else [path] if path in self._reads else []
        for name in paths:
            chunks = self._reads.pop(name)
            self._read_bytes -= sum(len(c.data) for c in chunks)
            self._buffer += orjson.dumps({
                "e": "chunks", "path": name, "t": [c.t for c in chunks],
                "n": [len(c.data) for c in chunks],
                "b64": base64.b64encode(b"".join(c.data for c in chunks)).decode("ascii"),
            }) + b"\n"

    def _flush(self) -> None:
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        if self._later is not None:
            self._later.cancel()
            self._later = None
        self._gather()
        while self._buffer:
            try:
                written = os.write(self._fd, self._buffer)
            except BlockingIOError:
                if self._loop is None:
                    self._loop = self._running_loop()  # none: close() writes it, blocking
                    if self._loop is not None:
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
        for handle in (self._soon, self._later):
            if handle is not None:
                handle.cancel()
        self._soon = self._later = None
        if self._broken:
            return
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
        if self._broken:
            return
        self._reads.setdefault(path, []).append(chunk)
        self._read_bytes += len(chunk.data)
        if self._read_bytes >= PROGRESS_BYTES:
            self._flush_soon()
        elif self._later is None and self._soon is None and self._loop is None:
            loop = self._running_loop()
            if loop is None:
                self._flush()
            else:
                self._later = loop.call_later(self._progress, self._flush)

    def ended(self, path: str, end: StreamEnd) -> None:
        if self._broken:
            return
        self._gather(path)  # its reads first, in order
        self._put({"e": "ended", "path": path, "kind": end.kind, "status": end.status,
                   "detail": end.detail, "at": end.at,
                   "body": base64.b64encode(end.body).decode("ascii") if end.body is not None
                   else None})


def read_event(line: bytes) -> Event | None:
    """The fact on one line, or None for a line that is none (the child's own output, or a
    line that does not hold together)."""
    if len(line) > MAX_LINE:
        return None
    try:
        return _event(orjson.loads(line))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):  # binascii.Error too
        return None


def _event(obj: Any) -> Event | None:
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
    if kind == "chunks":
        times, sizes = obj["t"], obj["n"]
        data = base64.b64decode(obj["b64"], validate=True)
        if not (isinstance(times, list) and isinstance(sizes, list) and len(times) == len(sizes)
                and all(isinstance(n, int) and n >= 0 for n in sizes) and sum(sizes) == len(data)):
            return None
        chunks, at = [], 0
        for t, n in zip(times, sizes, strict=True):
            chunks.append(Chunk(float(t), data[at:at + n]))
            at += n
        return Event(kind, path, chunks=tuple(chunks))
    if kind == "ended":
        body = obj.get("body")
        return Event(kind, path, end=StreamEnd(
            obj["kind"], status=obj.get("status"), detail=obj.get("detail"), at=obj.get("at"),
            body=base64.b64decode(body) if body is not None else None))
    return None
