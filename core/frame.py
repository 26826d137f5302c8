"""The record of one Server-Sent Events block, as received and as interpreted: what
:class:`~.sse.SSEDecoder` produces and every protocol reader, the timeline and the panes read."""

from __future__ import annotations

from typing import NamedTuple

import orjson


class Frame(NamedTuple):
    """One block of the event stream, as received and as interpreted.

    Immutable. A named tuple rather than a frozen dataclass because the engine makes one per SSE
    event and a frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) cost more
    than parsing the event's JSON.
    """

    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose: the frame number
    start: int
    """Offset of the block's first byte in the stream."""
    end: int
    """Offset just past the block's last byte (its blank line included)."""
    raw: bytes
    """The exact bytes of the block, line ends included."""
    lines: tuple[str, ...]
    """Decoded lines, without their line ends; the unterminated tail of a cut stream included."""
    first_chunk: int
    last_chunk: int
    event: str | None
    """The value an ``event:`` field set in this block, else None."""
    data: str
    """``data`` values joined with LF (the final LF removed, as the standard says)."""
    last_event_id: str
    """The last event id in force when the block ended (it persists across blocks)."""
    retry: int | None
    comments: tuple[str, ...]
    dispatch: bool
    """Whether a browser would dispatch this block as an event."""
    terminated: bool
    """False when the stream ended before the block's blank line."""
    overflow: bool = False
    """The block outgrew the decoder's limit: framing stopped here (see :mod:`.limits`).
    ``raw`` then holds the bytes up to the limit; later bytes are counted, not kept."""
    headers: tuple[tuple[str, str], ...] = ()
    """A binary framing's typed headers (the AWS event stream's ``:event-type``,
    ``:message-type``, ...), each value rendered as text; SSE and NDJSON frames have none."""
    fault: tuple[str, str] | None = None
    """What the framing found wrong with the frame: (an anomaly code of :mod:`.gate.codes`, one
    line on what and where), e.g. a failed checksum; None when it read cleanly. The readers
    report it, and its code makes the turn unreadable for the gate."""

    @property
    def event_type(self) -> str:
        """The type a browser would dispatch: the event name, or ``message``."""
        return self.event or "message"


def event_name(frame: Frame) -> str:
    """What a reader calls the frame's event: its ``event:`` line, else its payload's ``type``
    (or Interactions' ``event_type``), ``[DONE]`` for the sentinel, else "" (also for data cut
    before it could be read)."""
    if frame.event:
        return frame.event
    data = frame.data
    if data[:1] == "{":
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            return ""
        if isinstance(payload, dict):
            kind = payload.get("type", payload.get("event_type"))
            return kind if isinstance(kind, str) else ""
        return ""
    return "[DONE]" if data.strip().startswith("[DONE]") else ""
