"""``callscope live`` in the debugger: the request runs in a worker, the panes grow as it arrives.

:class:`LiveApp` is the debugger over a growing timeline. A Textual thread worker sends the
request with :func:`callscope.net.live.record`, which writes the session file as the bytes
arrive and hands each read to a callback; the callback puts it in the app's :class:`~.inbox.Inbox`
(never blocks, so the UI never slows the network read), which the app's thread empties a slice
at a time: the timeline is extended in the app's thread and the engine never sees a socket.

Quitting while the stream is still arriving stops the recording: the worker is told (the
``stop`` hook of ``record``) and the socket is shut down so that a stalled read returns at once;
the session then ends as ``cut`` ("stopped by the user"), every byte received kept.
"""

from __future__ import annotations

import contextlib
import gc
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx
from textual.message import Message

from ..core.session_model import Chunk, StreamEnd
from ..core.timeline import Timeline
from ..core.tools import ToolSet
from ..net.live import LiveRequest, LiveResult, record
from . import safe
from .app import CallscopeApp
from .inbox import Inbox

CONNECT_TIMEOUT = 10.0
MAX_WAITING_READS = 1000
"""Reads waiting for the app before the recording thread waits too (about 0.2 s of a stream at
5,000 reads a second): past it the socket is read slower and TCP slows the sender, so what the
screen shows stays close behind what arrived. Nothing is dropped: every byte is still read."""
FREEZE = 0.5
"""Seconds between two ``gc.freeze()`` of what the live timeline indexed (see ``tui/indexer.py``)."""
WAIT_AT_EXIT = 15.0
"""Seconds the command waits, after the app closed, for the recording to be saved."""


class StreamEnded(Message):
    def __init__(self, result: LiveResult | None, failure: str | None) -> None:
        super().__init__()
        self.result, self.failure = result, failure


def _shutdown(stream: Any) -> None:
    """Wake a read blocked on this response's socket (its reader then sees the end)."""
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def end_notice(end: StreamEnd) -> str:
    """One line about how a stream ended, for a notification (terminal-safe)."""
    text = f"Stream ended: {end.kind}"
    if end.status is not None:
        text += f" (HTTP {end.status})"
    if end.detail:
        text += f": {safe.short(end.detail, 120)}"
    if end.body:
        text += f"\n{safe.short(end.body.decode('utf-8', 'replace'), 200)}"
    return text


class LiveApp(CallscopeApp):
    """The debugger on one live request; the session is written to ``path`` as it arrives."""

    def __init__(self, request: LiveRequest, path: str, *, timeout: float = 120.0,
                 note: str | None = None, keymap: Mapping[str, str] | None = None) -> None:
        """``keymap``: the keys remapped (the one an earlier ``--keymap`` saved)."""
        tools = ToolSet(request.tools, request=request.body)
        stream = Timeline.live(request.protocol, tools)
        super().__init__([], source=path, protocol=request.protocol, tools=tools, note=note,
                         timeline=stream, keymap=keymap)
        self.stream = stream
        self.request, self.path, self.timeout = request, path, timeout
        self.result: LiveResult | None = None
        self.failure: str | None = None
        """Why the recording itself failed (the session file could not be written, ...)."""
        self._stop = threading.Event()
        self._done = threading.Event()
        self._streams: list[Any] = []
        self.inbox: Inbox[Chunk] = Inbox(self.call_later, self.take_chunk,
                                         resume=self.call_after_refresh, after=self._grew,
                                         max_waiting=MAX_WAITING_READS)
        self._frozen_at = 0.0

    def on_mount(self) -> None:  # runs before CallscopeApp.on_mount (Textual calls both)
        self.run_worker(self._record, thread=True, name="live", exit_on_error=False)

    # -- the worker thread -------------------------------------------------------------------

    def _record(self) -> None:
        def hold(response: httpx.Response) -> None:  # keep the socket, to wake a stalled read
            stream = response.extensions.get("network_stream")
            self._streams.append(stream)
            if self._stop.is_set():
                _shutdown(stream)

        client = httpx.Client(timeout=httpx.Timeout(self.timeout, connect=CONNECT_TIMEOUT),
                              event_hooks={"response": [hold]})
        result, failure = None, None
        try:
            result = record(self.request, self.path, client=client, stop=self._stop.is_set,
                            on_chunk=self.inbox.put)
        except Exception as exc:  # the recording failed (not the transport: that is a result)
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            client.close()
            self.result, self.failure = result, failure
            self._done.set()
        self.post_message(StreamEnded(result, failure))

    def stop_recording(self) -> None:
        """Stop the request now (from the app's thread); the worker saves the session."""
        self._stop.set()
        self.inbox.close()  # a worker waiting for room in the inbox goes on
        for stream in list(self._streams):
            _shutdown(stream)

    def wait(self, timeout: float = WAIT_AT_EXIT) -> LiveResult | None:
        """The recording's result once the worker is done (after the app closed)."""
        self._done.wait(timeout)
        return self.result

    def on_unmount(self) -> None:
        self.stop_recording()

    # -- the app's thread --------------------------------------------------------------------

    def _grew(self) -> None:
        """After each slice of reads: the panes refresh soon; the timeline's new objects (long
        lived: the stream's index) leave the collector's sight at most every FREEZE seconds, so
        full collections do not walk the whole stream in the middle of a key press."""
        self.follower.grew(self.stream)
        now = time.perf_counter()
        if now - self._frozen_at > FREEZE:
            gc.freeze()
            self._frozen_at = now

    def take_chunk(self, chunk: Chunk) -> None:
        """One network read, in the app's thread (from the inbox)."""
        if not self.stream.closed:
            self.stream.extend(chunk.t, chunk.data)

    def on_stream_ended(self, message: StreamEnded) -> None:
        self.inbox.drain(everything=True)  # every read before the end
        result = message.result
        end = result.end if result is not None else StreamEnd(
            "error", detail=message.failure or "the recording failed")
        self.stream.finish(end)
        self.follower.grew(self.stream)
        if result is None:
            self.notify(f"Recording failed: {safe.short(message.failure or '?', 200)}",
                        severity="error", markup=False, timeout=10)
            return
        self.notify(end_notice(end) + f"\nSession written to {safe.short(self.path, 120)}",
                    severity="information" if result.ok else "error", markup=False,
                    timeout=6 if result.ok else 12)
