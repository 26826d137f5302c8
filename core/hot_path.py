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

A reader may also declare its hot frame's exact bytes (:attr:`~.providers.base.ProtocolReader.
hot_shape`, made by :func:`block_shape`): the block as the provider writes it, fixed bytes with
JSON values between. A block that is exactly that is read without parsing its payload into
objects: the values alone are parsed (by orjson, as the payload would be) and handed to the
reader's :meth:`~.providers.base.ProtocolReader.hot_values`, the same question its
:meth:`~.providers.base.ProtocolReader.hot_fragment` asks once it has found them in a payload.
Any other block is read as above. Such a block is usually one of a long run (a call's text
streams as thousands of them in a row), so the whole blocks of that shape after it in the same
bytes are read with it: their values parsed by one call, each asked of the reader in turn, the
fragments for one call in a row appended together (:meth:`HotPath._run`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

if TYPE_CHECKING:
    from .engine import CallPipeline

_DATA = b"data: "
_EVENT = b"event: "
_OPEN = 0x7B  # "{"
_LF = 0x0A

MAX_NAMES = 64
"""Event names remembered decoded (a stream uses a handful; a hostile one cannot grow it)."""

INT = rb"(-?[0-9]{1,18})"
"""A :func:`block_shape` slot for a JSON integer (orjson refuses what JSON does: ``01``, ...).
At most 18 digits, so every match is one orjson reads as an ``int``: past 64 bits it reads a
float, which compares and hashes equal to an int (a block opened at -2**63 would be found by
-2**63-1); a longer number goes to the reference, which refuses a float index."""
STRING = rb'("[^"\\\n]*(?:\\[^\n][^"\\\n]*)*")'
"""A :func:`block_shape` slot for a JSON string: quotes around anything but a quote, a backslash
or a line end, or a backslash and the next byte (orjson then refuses what JSON does: control
characters, bad escapes, bytes that are not UTF-8)."""

_values = orjson.loads
_join = b",".join


class BlockShape(NamedTuple):
    """A hot frame's exact block (:func:`block_shape`): its fixed first bytes, compared as bytes
    (a regular expression matches a long literal a byte at a time), and the rest."""

    head: bytes
    size: int
    """``len(head)``."""
    rest: re.Pattern[bytes]
    """What follows the head, to the block's end: matched whole."""
    block: re.Pattern[bytes]
    """The whole block and the blank line that ends it, matched where a block starts: the next
    blocks of a run (:meth:`HotPath.take`). The block holds one LF, inside its head, so the
    first blank line after its start is the one this matches."""
    slots: int
    """Values per block."""


def block_shape(*parts: bytes) -> BlockShape:
    """A hot frame's exact block: ``parts`` are its bytes in order, fixed ones and slots
    (:data:`INT`, :data:`STRING`), each slot a JSON value the reader is handed. A block matches
    only as a whole (one ``event:`` line and one ``data:`` line, as written). The first part is
    fixed (the event line)."""
    slots = (INT, STRING)
    head, *rest = parts
    assert head not in slots and head.count(b"\n") == 1 and b"\n" not in b"".join(rest)
    pattern = b"".join(p if p in slots else re.escape(p) for p in rest)
    return BlockShape(head, len(head), re.compile(pattern),
                      re.compile(re.escape(head) + pattern + b"\n\n"),
                      sum(p in slots for p in rest))


RUN = 256
"""Blocks of one shape read at most by one :meth:`HotPath.take` (their values parsed at once)."""


class HotPath:
    """One stream's hot path: the :class:`~.sse_fast.Taker` of :meth:`~.sse.SSEDecoder.
    feed_hot`."""

    __slots__ = ("pipeline", "run_end", "_max_block", "_names", "_last")

    def __init__(self, pipeline: CallPipeline, max_block: int) -> None:
        self.pipeline = pipeline
        self.run_end = 0
        self._max_block = max_block
        """The decoder's limit: a block this long or longer is the decoder's (it overflows)."""
        self._names: dict[bytes, str] = {}
        self._last: tuple[bytes, str | None] = (b"\n", None)
        """The last event name read, raw and decoded (a stream repeats one name for a run);
        at first a name no line can hold."""

    def take(self, data: bytes, start: int, end: int, index: int) -> int:
        """Read the block ``data[start:end]`` (its lines, LF-separated) as frame ``index`` if
        it is an argument fragment the reader calls hot, and then the blocks after it as long
        as they are too (:meth:`_run`); how many it read (0 leaves the block to the
        reference)."""
        pipeline = self.pipeline
        reader = pipeline.reader
        if not pipeline.hot_ready:  # (what only the reference path changes: see hot_ready)
            if reader is None or not reader.has_hot_frame or pipeline.state.halted is not None \
                    or reader.done_frame is not None or reader.ended:  # (reader.quiet(), inline)
                return 0
            pipeline.hot_ready = True
        assert reader is not None
        shape = reader.hot_shape
        if shape is not None and data.startswith(shape.head, start):
            match = shape.rest.fullmatch(data, start + shape.size, end)
            if match is not None:
                return self._run(data, end + 2, match.groups(), index)
        if data.startswith(_DATA, start):
            at = start + 6
            if data.find(_LF, at, end) >= 0:
                return 0
            event = None
        elif data.startswith(_EVENT, start):
            nl = data.find(_LF, start, end)
            if nl < 0 or not data.startswith(_DATA, nl + 1) or data.find(_LF, nl + 1, end) >= 0:
                return 0
            last, event = self._last
            if nl - start - 7 != len(last) or not data.startswith(last, start + 7):
                name = data[start + 7:nl]  # (another name than the last frame's)
                event = self._names.get(name)
                if event is None:
                    try:
                        event = name.decode()
                    except UnicodeDecodeError:
                        return 0  # (the reference decodes it with replacement characters)
                    if len(self._names) < MAX_NAMES:
                        self._names[name] = event
                self._last = (name, event)
            at = nl + 7
        else:
            return 0
        if data[at] != _OPEN:
            return 0
        try:
            payload = orjson.loads(data[at:end])
        except orjson.JSONDecodeError:
            return 0  # (not UTF-8, or not JSON: the reference says which)
        hit = reader.hot_fragment(event, payload, index)
        if hit is None:
            return 0
        pipeline.hot_fragment(index, hit[0], hit[1])
        return 1

    def _run(self, data: bytes, pos: int, values: tuple[bytes, ...], index: int) -> int:
        """Frame ``index``, whose block (its slots' bytes ``values``) ends at ``pos``, and the
        blocks of the same shape that follow it whole in ``data``: their values parsed at once,
        as the items of one array, then each asked of the reader as :meth:`take` asks, until
        one is not hot or the reference path has been asked (which may change what is hot: the
        next block is offered again), the fragments for one call in a row appended together.
        Sets :attr:`run_end` past the last block read."""
        pipeline = self.pipeline
        reader = pipeline.reader
        assert reader is not None and reader.hot_shape is not None
        shape = reader.hot_shape
        match, limit = shape.block.match, self._max_block
        slots: list[bytes] = list(values)
        ends = [pos]
        while len(ends) < RUN and (found := match(data, pos)) is not None:
            end = found.end()
            if end - 2 - pos >= limit:
                break  # (the decoder's to overflow)
            slots += found.groups()
            ends.append(end)
            pos = end
        try:
            parsed = _values(b"[" + _join(slots) + b"]")
        except orjson.JSONDecodeError:
            parsed = _each(slots, shape.slots)  # (up to the block that fails: the reference's)
        k = shape.slots
        hot_room, flush = pipeline.state.hot_room, pipeline.hot_fragments
        # Consecutive fragments for one call are appended together; a fragment for a call
        # with no room for it is the reference's (hot_fragment hands it over), and ends the
        # run before the reader reads the next block (the reference may halt the turn).
        group: list[str] = []
        group_key = ""  # (with no room: a first key equal to it is handed over, never grouped)
        room, first, read = -1, index, 0
        for at in range(0, len(parsed), k):
            hit = reader.hot_values(parsed[at:at + k])
            if hit is None:
                break
            key, fragment = hit
            if key != group_key:
                if group:
                    flush(first, group_key, group)
                    group = []
                room = hot_room(key)
                group_key, first = key, index + read
            room -= len(fragment)
            if room < 0:
                if group:
                    flush(first, group_key, group)
                pipeline.hot_fragment(index + read, key, fragment)
                read += 1
                group = []
                break
            group.append(fragment)
            read += 1
        if group:
            flush(first, group_key, group)
        if read:
            self.run_end = ends[read - 1]
        return read


def _each(slots: list[bytes], k: int) -> list[Any]:
    """The values of the blocks whose slots parse, each block's alone, up to the first that does
    not."""
    parsed: list[Any] = []
    for at in range(0, len(slots), k):
        try:
            parsed += _values(b"[" + _join(slots[at:at + k]) + b"]")
        except orjson.JSONDecodeError:
            break
    return parsed
