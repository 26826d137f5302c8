"""The engine's hot path: the commonest frame read where it lies in the stream's bytes.

Nearly every frame of a tool-call stream is one argument fragment for a call already open.
For those, :class:`HotPath` reads the block straight from the SSE decoder's buffer
(:meth:`~.sse.SSEDecoder.feed_hot`): it recognises the two common block shapes
(``data: {...}`` and ``event: E`` + ``data: {...}``), parses the payload once, asks the
protocol reader whether it is its commonest frame (:meth:`~.providers.base.ProtocolReader.
hot_fragment`) and hands the fragment to the pipeline, which appends it to the call's buffer
(:meth:`~.engine.CallPipeline.hot_fragment`). No :class:`~.frame.Frame`, event or step is made.

Anything else (another shape, bytes that are not UTF-8, a payload that is not a JSON object, a
frame the reader would remark on, a detected protocol not known yet, a halted turn) is
materialized and takes the reference path, so every rule lives once, in the readers and the
accumulator. tests/test_hot_path_differential.py holds the two paths equal under random streams,
mutations and chunkings, on every protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from .engine import CallPipeline

_DATA = b"data: "
_EVENT = b"event: "
_OPEN = 0x7B  # "{"
_LF = 0x0A

MAX_NAMES = 64
"""Event names remembered decoded (a stream uses a handful; a hostile one cannot grow it)."""


class HotPath:
    """One stream's hot path: the ``take`` of :meth:`~.sse.SSEDecoder.feed_hot`."""

    __slots__ = ("pipeline", "_names", "_last")

    def __init__(self, pipeline: CallPipeline) -> None:
        self.pipeline = pipeline
        self._names: dict[bytes, str] = {}
        self._last: tuple[bytes, str | None] = (b"\n", None)
        """The last event name read, raw and decoded (a stream repeats one name for a run);
        at first a name no line can hold."""

    def take(self, data: bytes, start: int, end: int, index: int) -> bool:
        """Read the block ``data[start:end]`` (its lines, LF-separated) as frame ``index`` if
        it is an argument fragment the reader calls hot; False leaves it to the reference."""
        pipeline = self.pipeline
        reader = pipeline.reader
        if reader is None or not reader.has_hot_frame or pipeline.state.halted is not None \
                or reader.done_frame is not None or reader.ended:  # (reader.quiet(), inline)
            return False
        if data.startswith(_DATA, start):
            at = start + 6
            if data.find(_LF, at, end) >= 0:
                return False
            event = None
        elif data.startswith(_EVENT, start):
            nl = data.find(_LF, start, end)
            if nl < 0 or not data.startswith(_DATA, nl + 1) or data.find(_LF, nl + 1, end) >= 0:
                return False
            last, event = self._last
            if nl - start - 7 != len(last) or not data.startswith(last, start + 7):
                name = data[start + 7:nl]  # (another name than the last frame's)
                event = self._names.get(name)
                if event is None:
                    try:
                        event = name.decode()
                    except UnicodeDecodeError:
                        return False  # (the reference decodes it with replacement characters)
                    if len(self._names) < MAX_NAMES:
                        self._names[name] = event
                self._last = (name, event)
            at = nl + 7
        else:
            return False
        if data[at] != _OPEN:
            return False
        try:
            payload = orjson.loads(data[at:end])
        except orjson.JSONDecodeError:
            return False  # (not UTF-8, or not JSON: the reference says which)
        hit = reader.hot_fragment(event, payload, index)
        if hit is None:
            return False
        pipeline.hot_fragment(index, hit[0], hit[1])
        return True
